"""A stop request that a signal handler may set (the launcher's and every stage server's)."""

import signal
import time


class StopRequest:
    """Asked to stop by a signal handler: a plain flag. A threading.Event must not be set from a handler: the
    handler runs in the main thread between two bytecodes, and when those are inside the Event's own wait (its
    condition's lock held) Event.set waits for that lock forever; `ragmesh up` then ignored every Ctrl-C and
    SIGTERM (seen: the main thread in Event.wait -> Condition.__exit__ -> handler -> Event.set ->
    Condition.__enter__), and a stage's server could miss its own. Setting a flag takes no lock; wait() sleeps in
    short steps and reads it."""

    def __init__(self, step: float = 0.05):
        self.requested = False
        self.step = step

    def set(self) -> None:
        self.requested = True

    def is_set(self) -> bool:
        return self.requested

    def wait(self, timeout: float) -> bool:
        """True as soon as a stop is requested, else False after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self.requested:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(self.step, left))
        return True


def stop_on_signals() -> StopRequest:
    """A stop request that SIGTERM and SIGINT set; the caller's main thread waits on it and does the stopping (a
    handler that does more can run inside the very shutdown it starts, when a second signal follows the first)."""
    stop = StopRequest()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    return stop
