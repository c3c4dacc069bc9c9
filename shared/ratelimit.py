"""Token buckets per key: per API key at the gateway (one tenant cannot starve the others), and per
key id for slow secret checks (shared/keys.py)."""

import threading
import time

import grpc


class TokenBuckets:
    """`rate` requests per second per key, bursts up to `burst`; rate <= 0 turns limiting off."""

    def __init__(self, rate: float, burst: float, clock=time.monotonic):
        self.rate = rate
        self.burst = max(burst, 1.0)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when the request may go ahead (a token is spent), else the seconds until one is free."""
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        with self._lock:
            tokens, at = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate


# The project's own tools that drive a gateway in a loop (evaluation, reranker and selector training) meet these
# buckets as RESOURCE_EXHAUSTED ("retry in ..."): on an idle machine the sample set's serial Asks ran past 50/s and
# a quarter of the evaluation's cases were refused and counted as failures. They wait and ask again.
RATE_LIMIT_ATTEMPTS = 10
RATE_LIMIT_FIRST_WAIT = 0.02
RATE_LIMIT_MAX_WAIT = 2.0


def within_rate_limit(call):
    """call()'s response and the seconds the call that answered took; RESOURCE_EXHAUSTED is waited out with
    exponential backoff, RATE_LIMIT_ATTEMPTS times at most; any other error is raised."""
    wait = RATE_LIMIT_FIRST_WAIT
    for attempt in range(1, RATE_LIMIT_ATTEMPTS + 1):
        started = time.perf_counter()
        try:
            return call(), time.perf_counter() - started
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or attempt == RATE_LIMIT_ATTEMPTS:
                raise
        time.sleep(wait)
        wait = min(wait * 2, RATE_LIMIT_MAX_WAIT)
    raise AssertionError("unreachable")
