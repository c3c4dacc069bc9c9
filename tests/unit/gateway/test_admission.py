"""The gateway's in-flight limit: at most N Asks and Searches in the funnel, the rest waiting up to their deadline."""

import threading
import time

import pytest

from services.gateway.admission import Admission, FairSlots
from shared.errors import DeadlineExceeded
from shared.observability import metrics


class Deadline:
    """What the limit reads of a gRPC call's context: the seconds left (None = no deadline)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds

    def time_remaining(self):
        return self.seconds


def waits(rpc: str) -> float:
    return metrics.ADMISSION_WAIT.labels(rpc)._sum.get()


def test_no_limit_lets_every_call_in_at_once():
    admission = Admission(0)
    with admission.slot("Ask", Deadline(None)), admission.slot("Ask", Deadline(None)):
        pass


def test_a_call_over_the_limit_starts_when_a_slot_frees_and_its_wait_is_recorded():
    admission = Admission(1)
    order: list[str] = []

    def second():
        with admission.slot("Search", Deadline(5.0)):
            order.append("second")

    before = waits("Search")
    with admission.slot("Search", Deadline(5.0)):
        waiter = threading.Thread(target=second)
        waiter.start()
        waiter.join(timeout=0.3)
        assert waiter.is_alive() and order == []  # still waiting for the slot
        order.append("first")
    waiter.join(timeout=5.0)
    assert order == ["first", "second"]
    assert waits("Search") - before >= 0.3


def test_a_call_without_a_deadline_waits_as_long_as_it_takes():
    # What gRPC's time_remaining() says for a call with no deadline (checked on a real server): far past the
    # longest wait a thread accepts, which raised OverflowError before.
    no_deadline = Deadline(9.223372035058473e18)
    admission = Admission(1)
    served = threading.Event()

    def second():
        with admission.slot("Ask", no_deadline):
            served.set()

    with admission.slot("Ask", no_deadline):
        waiter = threading.Thread(target=second)
        waiter.start()
        assert not served.wait(0.2)  # waiting, not failed
    assert served.wait(5.0)
    waiter.join(timeout=5.0)


def test_a_call_whose_deadline_passes_while_waiting_is_refused_naming_the_setting():
    admission = Admission(1)
    with admission.slot("Ask", Deadline(None)):
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="RAGMESH_GATEWAY_MAX_IN_FLIGHT") as caught:
            with admission.slot("Ask", Deadline(0.2)):
                pytest.fail("entered without a free slot")
        assert 0.15 < time.monotonic() - started < 2.0
    assert "1 in-flight slots" in caught.value.message
    with admission.slot("Ask", Deadline(0.2)):  # the refused call took no slot with it
        pass


def test_a_slot_is_given_back_when_the_call_fails():
    admission = Admission(1)
    with pytest.raises(RuntimeError):
        with admission.slot("Ask", Deadline(1.0)):
            raise RuntimeError("stage failed")
    with admission.slot("Ask", Deadline(0.1)):
        pass


def test_a_negative_limit_is_refused():
    with pytest.raises(ValueError, match="max_in_flight"):
        Admission(-1)


def test_slots_go_to_waiters_in_the_order_they_came_and_a_newcomer_does_not_jump_the_queue():
    slots = FairSlots(1)
    assert slots.acquire(None)
    served: list[str] = []
    waiters = []
    for name in ("first", "second", "third"):

        def wait(name=name):
            assert slots.acquire(5.0)
            served.append(name)
            slots.release()

        waiter = threading.Thread(target=wait)
        waiter.start()
        deadline = time.monotonic() + 5.0
        while len(slots._waiting) < len(waiters) + 1 and time.monotonic() < deadline:
            time.sleep(0.005)  # queued before the next one comes
        waiters.append(waiter)
    assert not slots.acquire(0.05)  # a newcomer waits behind them, never takes a freed slot first
    slots.release()
    for waiter in waiters:
        waiter.join(timeout=5.0)
    assert served == ["first", "second", "third"]
    assert slots.acquire(0.0)  # every slot came back


def test_a_waiter_that_gives_up_leaves_the_queue():
    slots = FairSlots(1)
    assert slots.acquire(None)
    assert not slots.acquire(0.05)
    assert not slots._waiting
    slots.release()
    assert slots.acquire(0.0)
