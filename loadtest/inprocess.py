"""The Ask pipeline without the mesh: the retriever, reranker and generator classes the stages serve, built from
the same configuration (the mesh's environment), over the same index, called directly in this process in the
funnel's order (retrieve the candidates, rerank them all, abstain below the threshold, else generate from the top
passages). What the mesh adds on top of this, per percentile, is the cost of the microservice design."""

import time

import numpy as np

from services.gateway.context import context_for
from services.gateway.funnel import UNCALIBRATED_RERANKERS
from services.gateway.policy import should_abstain
from services.gateway.server import GatewayConfig
from services.generator.server import GeneratorConfig, build_generator
from services.reranker.server import RerankerConfig, build_reranker
from services.reranker.service import MaxSimReranker
from services.retriever.server import RetrieverConfig
from services.retriever.service import HybridRetriever
from shared import calibration, config
from shared.calibration import AnswerDecision
from shared.embedding import build_query_embedder
from shared.index.factory import open_index
from shared.model import SearchFilters

STAGES = ("retrieve", "rerank", "generate")


class InProcessPipeline:
    def __init__(self, env: dict[str, str]):
        retriever_cfg = config.load(RetrieverConfig, "retriever", env)
        self.retriever = HybridRetriever(
            open_index(retriever_cfg.index, retriever_cfg.data_dir, env=env, embed_model=retriever_cfg.embed_model),
            build_query_embedder(
                retriever_cfg.embed_model, retriever_cfg.embed_query_variant, threads=retriever_cfg.embed_threads
            ),
            rrf_k=retriever_cfg.rrf_k,
            per_retriever_k=retriever_cfg.per_retriever_k,
            default_top_k=retriever_cfg.top_k,
        )
        self.reranker = build_reranker(config.load(RerankerConfig, "reranker", env))
        self.generator = build_generator(config.load(GeneratorConfig, "generator", env))
        gateway_cfg = config.load(GatewayConfig, "gateway", env)
        self.candidates, self.top_n = gateway_cfg.candidates, gateway_cfg.rerank_top_n
        self.context_passages = gateway_cfg.context_passages
        self.decision = self._decision(gateway_cfg)
        for part in (self.retriever, self.reranker, self.generator):
            part.warm_up()

    def _decision(self, cfg: GatewayConfig) -> AnswerDecision:
        """The gateway's: the calibrated decision (both levels) when the calibration is for this reranker."""
        try:
            calibrated = calibration.load(cfg.calibration_file)
        except OSError:
            return AnswerDecision(cfg.abstain_threshold)
        if calibrated.reranker_model_id != self.reranker.model_id:
            return AnswerDecision(cfg.abstain_threshold)
        return calibrated.decision()

    def _rerank(self, question: str, candidates: list, query_vector) -> list:
        """As the reranker stage does: the maxsim reranker scores with the retriever's query vector when it is of
        its own model (the mesh passes it along in RerankRequest.query_embedding), so the query is embedded once."""
        if (
            isinstance(self.reranker, MaxSimReranker)
            and query_vector is not None
            and self.retriever.query_encoder == self.reranker.query_model_id
        ):
            return self.reranker.run(question, candidates, len(candidates), query_vector=query_vector)
        return self.reranker.run(question, candidates, len(candidates))

    def ask(self, tenant_id: str, question: str) -> dict[str, float]:
        """Seconds per stage and in all for one question."""
        started = time.perf_counter()
        candidates, query_vector = self.retriever.search(
            tenant_id, question, SearchFilters(), "hybrid", self.candidates
        )
        retrieved = time.perf_counter()
        every = self._rerank(question, candidates, query_vector) if candidates else []
        ranked = every[: self.top_n]
        reranked = time.perf_counter()
        top = max((c.scores.rerank_score for c in ranked), default=None)
        calibrated = bool(self.reranker.model_id) and not self.reranker.model_id.startswith(UNCALIBRATED_RERANKERS)
        # As the funnel: within the second level the generator runs too (its answer's coverage decides).
        if not should_abstain(top, self.decision, calibrated).abstain:
            self.generator.run(question, context_for(question, every, self.context_passages, self.top_n))
        done = time.perf_counter()
        return {
            "retrieve": retrieved - started,
            "rerank": reranked - retrieved,
            "generate": done - reranked,
            "total": done - started,
        }

    def run(self, tenant_id: str, questions: list[str]) -> dict:
        """The questions once untimed (caches filled as the mesh's are), then once timed, one at a time (as a
        concurrency-1 load): percentiles in all and per stage, and the CPU seconds a question took (this process's,
        every thread)."""
        for question in questions:
            self.ask(tenant_id, question)
        cpu_started = time.process_time()
        timings = [self.ask(tenant_id, q) for q in questions]
        out: dict = {"cpu_mean": (time.process_time() - cpu_started) / len(questions) if questions else None}
        for part in ("total", *STAGES):
            values = np.array([t[part] for t in timings])
            out[part] = {f"p{q}": float(np.percentile(values, q)) for q in (50, 95, 99)}
        out["mean"] = {part: float(np.mean([t[part] for t in timings])) for part in ("total", *STAGES)}
        out["latencies"] = [t["total"] for t in timings]
        return out
