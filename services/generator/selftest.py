"""Start-up self-test of the llama.cpp runtime: one long prompt, evaluated in a child process.

A llama-cpp-python wheel compiled for another CPU (llama.cpp builds -march=native by default; one built on an
AVX-512/AMX machine segfaulted on any prompt past a few dozen tokens) does not fail on import or on a short
prompt: it kills the process on the first real request. Running a prompt of several hundred tokens in a child
turns that crash into an error that names the cause and the fix, before the generator serves anything.

`python -m services.generator.selftest [GGUF]` runs it and prints llama.cpp's system info (the instruction
sets the build uses).
"""

import json
import signal
import subprocess
import sys
from collections.abc import Iterator

from shared.errors import FailedPrecondition

# A realistic passage, repeated to several hundred tokens: prompt evaluation is where the bad builds crashed.
_PASSAGE = (
    "Customers on the Team plan may cancel at any time; the refund covers the unused part of the billing "
    "period and is paid within fourteen days to the original payment method. "
)
PROMPT_REPEATS = 24
FIX = (
    "rebuild it for a portable CPU baseline with `make llm` (deploy/llm/install.sh compiles with "
    "CMAKE_ARGS=-DGGML_NATIVE=OFF and installs only that wheel, never a natively built one from pip's cache)"
)


def _child(model_path: str, threads: int) -> None:
    import llama_cpp

    llm = llama_cpp.Llama(model_path=model_path, n_ctx=2048, n_threads=threads, seed=0, verbose=False)
    prompt = "Read the policy and answer.\n\n" + _PASSAGE * PROMPT_REPEATS + "\nQuestion: how long does a refund take?"
    tokens = len(llm.tokenize(prompt.encode()))
    reply = llm.create_completion(prompt, max_tokens=4, temperature=0.0)
    assert not isinstance(reply, Iterator)  # not streamed
    print(
        json.dumps(
            {
                "prompt_tokens": tokens,
                "completion": reply["choices"][0]["text"],
                "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
            }
        )
    )


def explain_failure(returncode: int, stderr: str, model_path: str) -> str:
    """What a failed self-test child means, with the fix when the build is at fault."""
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return (
            f"llama.cpp self-test: the process died with {name} evaluating a long prompt with {model_path}. "
            f"The installed llama-cpp-python was most likely compiled for another CPU (-march=native, e.g. with "
            f"AVX-512/AMX); {FIX}"
        )
    tail = " | ".join(stderr.strip().splitlines()[-3:])
    return f"llama.cpp self-test failed (exit {returncode}) with {model_path}: {tail}"


def check_llama_cpp(model_path: str, threads: int = 2, timeout: float = 120.0) -> dict:
    """Evaluates a long prompt in a child process; returns its report or raises FailedPrecondition saying why."""
    command = [sys.executable, "-m", "services.generator.selftest", "--child", model_path, str(threads)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FailedPrecondition(
            f"llama.cpp self-test: a long prompt took over {timeout:.0f} s with {model_path}; "
            "the build or the machine is far too slow for the llamacpp backend"
        ) from None
    if done.returncode != 0:
        raise FailedPrecondition(explain_failure(done.returncode, done.stderr, model_path))
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]))
        return
    from services.generator.llm import packaged_gguf

    model_path = sys.argv[1] if len(sys.argv) > 1 else packaged_gguf()
    try:
        report = check_llama_cpp(model_path)
    except FailedPrecondition as err:
        raise SystemExit(str(err)) from None
    print(f"llama.cpp self-test passed: {report['prompt_tokens']}-token prompt evaluated with {model_path}")
    print(f"llama.cpp system info: {report['system_info']}")


if __name__ == "__main__":
    main()
