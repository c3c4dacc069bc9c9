"""How many Asks and Searches run the funnel at once (RAGMESH_GATEWAY_MAX_IN_FLIGHT); the rest wait their turn.

When every stage shares one machine's CPUs, more funnels at once do not finish more work: each stage only gets
slower, and its latency budget breaks where the requests queue (the retriever, the longest stage). Waiting
at the gateway instead keeps each stage's latency what one request costs, and the queue shows up where an SRE
can see it: its own histogram, ragmesh_gateway_admission_wait_seconds. A caller whose deadline passes while
waiting gets DEADLINE_EXCEEDED, and its worker thread is free again.
"""

import collections
import contextlib
import threading
import time
from collections.abc import Iterator

from shared.errors import DeadlineExceeded
from shared.observability import metrics


class FairSlots:
    """A semaphore that serves its waiters first come, first served. threading.Semaphore lets a newcomer take a
    slot that has just been freed ahead of a caller already waiting, and under a steady load the unlucky waiter
    waits on and on: at concurrency 16 on this machine p99 grew by a sixth against no limit at all."""

    def __init__(self, slots: int):
        self._free = slots
        self._lock = threading.Lock()
        self._waiting: collections.deque[threading.Event] = collections.deque()

    def acquire(self, timeout: float | None) -> bool:
        """True once a slot is held; False when `timeout` seconds pass first (None, or more than a thread can be
        told to wait, such as the ~9.2e18 s gRPC reports for a call without a deadline: no limit)."""
        if timeout is not None and timeout > threading.TIMEOUT_MAX:
            timeout = None
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return True
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(timeout):
            return True
        with self._lock:
            if turn.is_set():  # handed the slot just as the wait ran out
                return True
            self._waiting.remove(turn)
            return False

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()  # the slot passes straight to the longest waiter
            else:
                self._free += 1


class Admission:
    def __init__(self, max_in_flight: int):
        if max_in_flight < 0:
            raise ValueError(f"max_in_flight must not be negative (got {max_in_flight}); 0 = no limit")
        self.max_in_flight = max_in_flight
        self._slots = FairSlots(max_in_flight) if max_in_flight else None

    @contextlib.contextmanager
    def slot(self, rpc: str, context) -> Iterator[None]:
        """Holds one of the slots while the block runs; waits for one at most until the call's deadline."""
        if self._slots is None:
            yield
            return
        started = time.perf_counter()
        acquired = self._slots.acquire(timeout=context.time_remaining() if context is not None else None)
        metrics.ADMISSION_WAIT.labels(rpc).observe(time.perf_counter() - started)
        if not acquired:
            raise DeadlineExceeded(
                f"{rpc}: the deadline passed while waiting for one of the gateway's {self.max_in_flight} in-flight "
                "slots (RAGMESH_GATEWAY_MAX_IN_FLIGHT)"
            )
        try:
            yield
        finally:
            self._slots.release()
