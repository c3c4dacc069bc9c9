"""The client's retry policy as gRPC reads it: UNAVAILABLE only, for the calls safe to repeat, never Feedback."""

import json

import pytest

from ragmesh.client import RetryPolicy
from ragmesh.client.retry import NOT_RETRIED_METHODS, RETRIED_METHODS
from ragmesh.v1 import gateway_pb2


def test_every_gateway_method_is_either_retried_or_not():
    methods = {m.name for m in gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].methods}
    assert methods <= set(RETRIED_METHODS) | set(NOT_RETRIED_METHODS), "a new Gateway RPC: is it safe to retry?"
    assert not set(RETRIED_METHODS) & set(NOT_RETRIED_METHODS)


def test_service_config_retries_unavailable_for_safe_calls_only():
    config = json.loads(RetryPolicy(max_attempts=5, initial_backoff=0.1, max_backoff=1.0).service_config())
    [method_config] = config["methodConfig"]
    names = {(n["service"], n["method"]) for n in method_config["name"]}
    assert names == {("ragmesh.v1.Gateway", m) for m in RETRIED_METHODS}
    assert ("ragmesh.v1.Gateway", "Feedback") not in names
    policy = method_config["retryPolicy"]
    assert policy["retryableStatusCodes"] == ["UNAVAILABLE"]
    assert (policy["maxAttempts"], policy["initialBackoff"], policy["maxBackoff"]) == (5, "0.1s", "1.0s")


@pytest.mark.parametrize(
    "kwargs", [{"max_attempts": 1}, {"max_attempts": 6}, {"initial_backoff": 0}, {"initial_backoff": 3.0}]
)
def test_a_policy_grpc_would_refuse_is_refused_here(kwargs):
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)
