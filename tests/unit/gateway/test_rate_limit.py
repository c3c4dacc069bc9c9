"""Per-key token buckets: a burst, then RESOURCE_EXHAUSTED with the delay; other keys unaffected."""

import pytest

from services.gateway.auth import Authenticator
from shared.errors import ResourceExhausted
from shared.keys import KEYS_FILE, KeyStore
from shared.ratelimit import TokenBuckets
from shared.stubs import gateway_pb2


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_buckets_allow_a_burst_then_say_how_long_to_wait():
    clock = _Clock()
    buckets = TokenBuckets(rate=2.0, burst=3.0, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") == 0.0  # another key has its own bucket
    clock.now += 0.5
    assert buckets.take("a") == 0.0
    assert TokenBuckets(rate=0, burst=0).take("a") == 0.0  # off


class _Context:
    def __init__(self, token):
        self.token = token

    def invocation_metadata(self):
        return (("authorization", f"Bearer {self.token}"),)

    def peer(self):
        return "ipv4:127.0.0.1:1"


def test_a_key_over_its_rate_gets_resource_exhausted_with_the_retry_delay(tmp_path):
    store = KeyStore(tmp_path / KEYS_FILE)
    _, token = store.create("acme", [], "reader")
    clock = _Clock()
    auth = Authenticator(store, TokenBuckets(rate=1.0, burst=2.0, clock=clock))
    for _ in range(2):
        auth.check("Search", gateway_pb2.SearchRequest(query="q"), _Context(token))
    with pytest.raises(ResourceExhausted, match=r"rate limit of 1 requests/s .*retry in 1.00s"):
        auth.check("Search", gateway_pb2.SearchRequest(query="q"), _Context(token))
