"""Token buckets per key: per API key at the gateway (one tenant cannot starve the others), and per
key id for slow secret checks (shared/keys.py)."""

import threading
import time


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
