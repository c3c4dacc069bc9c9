"""The llama.cpp self-test's verdicts (the child process itself runs in tests/integration/test_llm_generation.py)."""

import signal

from services.generator.selftest import explain_failure


def test_a_crash_names_the_signal_the_cause_and_the_fix():
    message = explain_failure(-signal.SIGSEGV, "", "/models/x.gguf")
    assert "SIGSEGV" in message and "/models/x.gguf" in message
    assert "another CPU" in message
    assert "make llm" in message and "GGML_NATIVE=OFF" in message


def test_an_ordinary_failure_keeps_the_last_lines_of_its_error():
    stderr = "Traceback (most recent call last):\n  ...\nValueError: Failed to load model from file: /m.gguf\n"
    message = explain_failure(1, stderr, "/m.gguf")
    assert "exit 1" in message and "Failed to load model" in message
    assert "another CPU" not in message


def test_the_llamacpp_backend_without_llama_cpp_installed_says_how_to_install_it(monkeypatch):
    import sys

    import pytest

    from services.generator.llm import LlamaCppBackend
    from shared.errors import FailedPrecondition

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what `import llama_cpp` sees when it is not installed
    with pytest.raises(FailedPrecondition, match="make llm"):
        LlamaCppBackend().warm_up()
