"""The project's loops over a gateway (evaluation, reranker and selector training) wait out its rate limit
instead of counting refused calls as failures; any other error still ends the call at once."""

import grpc
import pytest

from shared import ratelimit


class _Refused(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode):
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return f"{self._code.name} from the test"


def _answers_after(refusals: int, code=grpc.StatusCode.RESOURCE_EXHAUSTED):
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= refusals:
            raise _Refused(code)
        return "answer"

    return call, calls


def test_a_refusal_is_waited_out_and_the_call_asked_again(monkeypatch):
    waits = []
    monkeypatch.setattr(ratelimit.time, "sleep", waits.append)
    call, calls = _answers_after(3)
    response, seconds = ratelimit.within_rate_limit(call)
    assert response == "answer" and len(calls) == 4 and seconds >= 0
    assert waits == [0.02, 0.04, 0.08]  # exponential backoff between the attempts


def test_other_errors_are_raised_at_once_and_refusals_only_so_many_times(monkeypatch):
    monkeypatch.setattr(ratelimit.time, "sleep", lambda _: None)
    call, calls = _answers_after(1, grpc.StatusCode.UNAVAILABLE)
    with pytest.raises(grpc.RpcError):
        ratelimit.within_rate_limit(call)
    assert len(calls) == 1
    call, calls = _answers_after(ratelimit.RATE_LIMIT_ATTEMPTS)
    with pytest.raises(grpc.RpcError):
        ratelimit.within_rate_limit(call)
    assert len(calls) == ratelimit.RATE_LIMIT_ATTEMPTS
