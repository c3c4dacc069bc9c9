"""Faults under load: while a bounded Ask load runs (ghz), one part of the mesh is killed or stopped and brought
back, and what callers saw is read from ghz's per-request record and the gateway's counters.

Each drill checks the expectation that applies to it:
  reranker (kill -9) / triton (SIGSTOP)  no failed Ask: every one answered, degraded, within its deadline
  generator / retriever (kill -9)         failures are UNAVAILABLE naming the stage; Asks succeed again within
                                          RECOVERY_LIMIT_S of the restart, the gateway never restarted; with
                                          replicas (--replicas), the first is killed and no Ask fails
  opensearch (stop/start)                 failures name the retriever; recovery after the node is back
  indexer (kill -9 mid-ingest)            re-ingesting the folder leaves exactly the chunks a clean ingest does
and for all: no request runs past its deadline, and the load corpus keeps every chunk.
"""

import dataclasses
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from loadtest import corpus, ghz, metrics
from loadtest.harness import TENANT, LoadMesh, log
from loadtest.scenario import FaultPlan
from services.cli.documents import collect_files, to_source_document
from shared.stubs import gateway_pb2, gateway_pb2_grpc

RECOVERY_LIMIT_S = 5.0
# A request is hung when it ran to its deadline (ghz cancels it there) or close to it.
HANG_MARGIN_S = 0.25
# Asks one at a time before a reranker drill's load: are answers reranked at all without the fault?
BASELINE_ASKS = 3


class DrillError(RuntimeError):
    """A drill could not be carried out (not a finding about the mesh's behaviour under the fault)."""


@dataclasses.dataclass
class FaultResult:
    fault: str
    action: str
    requests: int
    failed: dict[str, int]
    degraded: int
    hung: int
    max_latency_s: float
    down_s: float
    restart_s: float | None
    recovery_s: float | None
    chunks_lost: int
    chunks_extra: int
    expectation: str
    met: bool
    problems: list[str]
    first_error: str = ""
    # Seconds from the fault: when the part was brought back and when it served again, and every request's
    # (start, latency, status) for the timeline plot.
    restart_at: float = 0.0
    serving_at: float = 0.0
    calls: list[tuple[float, float, str]] = dataclasses.field(default_factory=list)
    # A few Asks one at a time before the load (reranker drills): how many, and how many came back degraded.
    baseline_asks: int = 0
    baseline_degraded: int = 0


@dataclasses.dataclass
class Timeline:
    """Unix times of what the drill did."""

    fault: float = 0.0
    restart: float = 0.0
    serving: float = 0.0
    # Asks one at a time before the drill's load, and how many were degraded: a reranker drill whose Asks are
    # degraded without any fault (the reranker too slow for its share of the deadline) cannot show what the
    # fault costs.
    baseline_asks: int = 0
    baseline_degraded: float = 0.0


class Drill:
    def __init__(self, harness: LoadMesh, plan: FaultPlan, deadline_s: float):
        self.harness, self.plan, self.deadline_s = harness, plan, deadline_s

    def _under_load(self, act: Callable[[Timeline], None], baseline: int = 0) -> tuple[ghz.LoadResult, Timeline, float]:
        """Start an open-ended Ask load, wait lead_s, run `act` (fault and recovery), keep the load tail_s more.
        Returns the load, the timeline and the degraded answers the gateway counted meanwhile. With `baseline`,
        that many Asks go one at a time first, and the timeline says how many of them were degraded."""
        gateway = self.harness.metrics_urls(("gateway",))
        timeline = Timeline()
        if baseline:
            before = metrics.scrape(gateway)
            messages = self.harness.messages("Ask")
            ghz.run(
                self.harness.address,
                "Ask",
                messages,
                self.harness.api_key,
                1,
                requests=baseline,
                deadline_s=self.deadline_s,
            )
            timeline.baseline_asks = baseline
            timeline.baseline_degraded = metrics.total(metrics.delta(before, metrics.scrape(gateway)), metrics.DEGRADED)
        before = metrics.scrape(gateway)
        load = ghz.GhzLoad(
            self.harness.address,
            "Ask",
            self.harness.messages("Ask"),
            self.harness.api_key,
            self.plan.concurrency,
            duration_s=600,
            deadline_s=self.deadline_s,
        )
        try:
            time.sleep(self.plan.lead_s)
            act(timeline)
            time.sleep(self.plan.tail_s)
        finally:
            load.stop()
        result = load.result()
        degraded = metrics.total(metrics.delta(before, metrics.scrape(gateway)), metrics.DEGRADED)
        return result, timeline, degraded

    def _kill_restart(self, stage: str) -> Callable[[Timeline], None]:
        def act(timeline: Timeline) -> None:
            timeline.fault = time.time()
            self.harness.mesh.signal_stage(stage, signal.SIGKILL)
            time.sleep(self.plan.down_s)
            timeline.restart = time.time()
            self.harness.mesh.restart_stage(stage)
            timeline.serving = time.time()

        return act

    def _triton_stall(self, timeline: Timeline) -> None:
        process = self.harness.triton.process
        timeline.fault = time.time()
        process.send_signal(signal.SIGSTOP)
        try:
            time.sleep(self.plan.down_s)
        finally:
            timeline.restart = time.time()
            process.send_signal(signal.SIGCONT)
        timeline.serving = time.time()

    def _opensearch_restart(self, timeline: Timeline) -> None:
        timeline.fault = time.time()
        self.harness.private_opensearch.down()
        time.sleep(self.plan.down_s)
        timeline.restart = time.time()
        self.harness.private_opensearch.up()
        timeline.serving = time.time()

    def run(self, fault: str) -> FaultResult:
        log(f"fault drill: {fault}")
        corpus_before = self.harness.chunk_set(TENANT)
        if fault == "indexer":
            return self.indexer(corpus_before)
        if fault == "opensearch-node":
            return self.opensearch_node(corpus_before)
        act, action = {
            "reranker": (self._kill_restart("reranker"), "kill -9 reranker, restart"),
            "generator": (self._kill_restart("generator"), "kill -9 generator, restart"),
            "retriever": (self._kill_restart("retriever"), "kill -9 retriever, restart"),
            "triton": (self._triton_stall, "SIGSTOP tritonserver, SIGCONT"),
            "opensearch": (self._opensearch_restart, "stop OpenSearch, start"),
        }[fault]
        load, timeline, degraded = self._under_load(act, BASELINE_ASKS if fault in ("reranker", "triton") else 0)
        corpus_after = self.harness.chunk_set(TENANT)
        return self.judge(fault, action, load, timeline, degraded, corpus_before, corpus_after)

    def judge(
        self,
        fault: str,
        action: str,
        load: ghz.LoadResult,
        timeline: Timeline,
        degraded: float,
        corpus_before: set,
        corpus_after: set,
    ) -> FaultResult:
        calls = load.calls
        failed = {s: n for s, n in load.statuses().items() if s != "OK"}
        hung = sum(c.latency >= self.deadline_s - HANG_MARGIN_S or c.status == "DEADLINE_EXCEEDED" for c in calls)
        # Recovery: from the part being back (SERVING, or SIGCONT) to the start of the first successful Ask after
        # the last failed one (start times: an Ask's own length, seconds on a busy machine, is not recovery).
        since_fault = [c for c in calls if c.start >= timeline.fault]
        last_failure = max((c.start for c in since_fault if not c.ok), default=timeline.fault)
        recovered = [c.start for c in since_fault if c.ok and c.start >= last_failure]
        recovery = max(0.0, min(recovered) - timeline.serving) if recovered else None
        errors = [c for c in calls if not c.ok]
        late_failures = [c for c in errors if c.start > timeline.serving + RECOVERY_LIMIT_S]
        problems = []
        if hung:
            problems.append(f"{hung} request(s) ran to their {self.deadline_s:g}s deadline")
        lost, extra = len(corpus_before - corpus_after), len(corpus_after - corpus_before)
        if lost or extra:
            problems.append(f"load corpus changed: {lost} chunk(s) lost, {extra} new")
        if fault in ("reranker", "triton"):
            expectation = "no failed Ask; degraded answers within the deadline"
            if errors:
                problems.append(f"{len(errors)} Ask(s) failed: {failed}")
            if not degraded:
                problems.append("no answer was marked degraded: the fault did not reach any request")
            if timeline.baseline_asks and timeline.baseline_degraded >= timeline.baseline_asks:
                problems.append(
                    f"all {timeline.baseline_asks} Asks before the drill (no fault yet) were degraded already: the "
                    "reranker is too slow for its share of the deadline, so the drill cannot show what the fault costs"
                )
        elif fault == "indexer":
            expectation = "re-ingest after the kill holds exactly a clean ingest's chunks; Asks unaffected"
            if errors:
                problems.append(f"{len(errors)} Ask(s) failed while the indexer was down: {failed}")
        elif fault in ("generator", "retriever") and self.harness.mesh.replicas[fault] > 1:
            # One replica of several killed: the gateway's round robin sends every Ask to the others.
            others = self.harness.mesh.replicas[fault] - 1
            expectation = f"no failed Ask: {others} other {fault} replica(s) answer while one is down"
            if errors:
                problems.append(f"{len(errors)} Ask(s) failed: {failed}")
        else:
            stage = "retriever" if fault.startswith("opensearch") else fault
            expectation = f"UNAVAILABLE naming the {stage}; Asks succeed within {RECOVERY_LIMIT_S:g}s of the restart"
            unnamed = [c for c in errors if c.status != "UNAVAILABLE" or stage not in c.error]
            if unnamed:
                problems.append(f"{len(unnamed)} failure(s) not UNAVAILABLE naming {stage}: {unnamed[0].error[:200]}")
            if recovery is None or recovery > RECOVERY_LIMIT_S:
                problems.append(f"no successful Ask within {RECOVERY_LIMIT_S:g}s of the restart ({recovery})")
            if late_failures:
                problems.append(f"{len(late_failures)} Ask(s) failed more than {RECOVERY_LIMIT_S:g}s after the restart")
            if not errors:
                problems.append(f"no Ask failed while the {stage} was down: the fault did not reach any request")
        return FaultResult(
            fault=fault,
            action=action,
            requests=len(calls),
            failed=failed,
            degraded=int(degraded),
            hung=hung,
            max_latency_s=max((c.latency for c in calls), default=0.0),
            down_s=timeline.restart - timeline.fault,
            restart_s=timeline.serving - timeline.restart,
            recovery_s=recovery,
            chunks_lost=lost,
            chunks_extra=extra,
            expectation=expectation,
            met=not problems,
            problems=problems,
            first_error=errors[0].error[:300] if errors else "",
            restart_at=timeline.restart - timeline.fault,
            serving_at=timeline.serving - timeline.fault,
            calls=[(c.start - timeline.fault, c.latency, c.status) for c in calls],
            baseline_asks=timeline.baseline_asks,
            baseline_degraded=int(timeline.baseline_degraded),
        )

    # ---- the indexer, mid-ingest --------------------------------------------------------------------

    def _clean_ingest(self) -> tuple[list, str]:
        """A fresh folder of abstracts the load corpus does not hold, ingested into the reference tenant that a
        drill's faulted ingest is compared with; its documents and that tenant."""
        folder = Path(tempfile.mkdtemp(prefix="folder-", dir=self.harness.mesh.data_dir))
        self._write_folder(folder)
        documents = [to_source_document(path, uri) for path, uri in collect_files([str(folder)])]
        clean_tenant = f"{TENANT}-clean"
        clean = self.harness.ingest(documents, clean_tenant)
        if not all(r.ok for r in clean):
            raise DrillError(f"the clean ingest of {folder} failed: {[r.error for r in clean if not r.ok][:3]}")
        return documents, clean_tenant

    def indexer(self, corpus_before: set) -> FaultResult:
        """A folder of SciFact abstracts the load corpus does not hold: a clean ingest into one tenant; then,
        under the Ask load, an ingest into another tenant whose indexer is killed a third of the way through,
        the indexer restarted and the folder ingested again. Both tenants must hold the same chunks."""
        documents, clean_tenant = self._clean_ingest()
        faulted_tenant = f"{TENANT}-faulted"
        first_pass: list = []
        retried: list[str] = []

        def act(timeline: Timeline) -> None:
            ingest = threading.Thread(target=self._stream_ingest, args=(documents, faulted_tenant, first_pass))
            ingest.start()
            while len(first_pass) < max(1, len(documents) // 3) and ingest.is_alive():
                time.sleep(0.05)
            timeline.fault = time.time()
            self.harness.mesh.signal_stage("indexer", signal.SIGKILL)
            ingest.join()
            timeline.restart = time.time()
            self.harness.mesh.restart_stage("indexer")
            timeline.serving = time.time()
            retried.append(self._ingest_until_ok(documents, faulted_tenant, timeline.serving))

        load, timeline, degraded = self._under_load(act)
        wanted, got = self.harness.chunk_set(clean_tenant), self.harness.chunk_set(faulted_tenant)
        result = self.judge(
            "indexer", "kill -9 indexer mid-ingest, restart, ingest again", load, timeline, degraded, set(), set()
        )
        corpus_after = self.harness.chunk_set(TENANT)
        interrupted = len(documents) - sum(r.ok for r in first_pass)
        if not interrupted:
            result.problems.append("the kill interrupted no document: it came after the ingest")
        result.chunks_lost, result.chunks_extra = len(wanted - got), len(got - wanted)
        if result.chunks_lost or result.chunks_extra:
            result.problems.append(
                f"re-ingested tenant differs from a clean ingest: {result.chunks_lost} chunk(s) missing, "
                f"{result.chunks_extra} extra (of {len(wanted)})"
            )
        if corpus_before != corpus_after:
            result.problems.append("the load corpus changed during the indexer drill")
        result.action += (
            f" ({interrupted}/{len(documents)} documents interrupted; {len(wanted)} chunks compared; "
            f"{', '.join(retried)})"
        )
        result.met = not result.problems
        return result

    # ---- one node of the two-node OpenSearch cluster, under Ask and ingest load ------------------------

    def opensearch_node(self, corpus_before: set) -> FaultResult:
        """kill -9 the second node (data only; the first holds the cluster state) while Asks and an ingest of a
        folder run, start it again and wait for green. Ingest results that failed are ingested again once the
        cluster is green (the caller's retry); then the folder's chunks must equal a clean ingest's, and no
        Ask may fail once the cluster has noticed the lost node."""
        documents, clean_tenant = self._clean_ingest()
        loaded_tenant = f"{TENANT}-nodeloss"
        during: list = []

        def act(timeline: Timeline) -> None:
            ingest = threading.Thread(target=self._batched_ingest, args=(documents, loaded_tenant, during))
            ingest.start()
            timeline.fault = time.time()
            self.harness.private_opensearch.node("kill", 2)
            time.sleep(self.plan.down_s)
            timeline.restart = time.time()
            self.harness.private_opensearch.node("start", 2)
            timeline.serving = time.time()
            ingest.join()
            retry = [d for d, r in zip(documents, during, strict=False) if not r.ok] + documents[len(during) :]
            if retry:
                log(f"opensearch-node: ingesting {len(retry)} document(s) again after green")
                self._ingest_until_ok(retry, loaded_tenant, timeline.serving)

        load, timeline, degraded = self._under_load(act)
        result = self.judge(
            "opensearch-node", "kill -9 OpenSearch node 2 of 2, restart", load, timeline, degraded, set(), set()
        )
        # The cluster notices a killed node at once (its connections close); Asks may fail until then.
        result.problems = [p for p in result.problems if "within" not in p and "did not reach" not in p]
        late = [c for c in load.calls if not c.ok and c.start > timeline.fault + RECOVERY_LIMIT_S]
        if late:
            result.problems.append(f"{len(late)} Ask(s) failed more than {RECOVERY_LIMIT_S:g}s after the node loss")
        wanted, got = self.harness.chunk_set(clean_tenant), self.harness.chunk_set(loaded_tenant)
        result.chunks_lost, result.chunks_extra = len(wanted - got), len(got - wanted)
        if result.chunks_lost or result.chunks_extra:
            result.problems.append(
                f"ingested under node loss differs from a clean ingest: {result.chunks_lost} chunk(s) missing, "
                f"{result.chunks_extra} extra (of {len(wanted)})"
            )
        if corpus_before != self.harness.chunk_set(TENANT):
            result.problems.append("the load corpus changed during the node drill")
        failed_docs = sum(not r.ok for r in during)
        result.expectation = (
            f"Asks fail only in the first {RECOVERY_LIMIT_S:g}s; no document lost; green again "
            "(restart s = until green)"
        )
        result.action += f" ({failed_docs}/{len(documents)} documents failed during the loss and were retried)"
        result.met = not result.problems
        return result

    def _ingest_until_ok(self, documents: list, tenant: str, since: float, tries: int = 5) -> str:
        """Ingest as a caller does after an outage: documents refused UNAVAILABLE (the gateway's channel to a
        restarted stage reconnects within its 2 s backoff) are sent again a second later; anything else fails the
        drill. Says how many tries it took and how long after `since` the last document was accepted."""
        pending = documents
        for attempt in range(1, tries + 1):
            results = self.harness.ingest(pending, tenant)
            refused = [r for r in results if not r.ok]
            wrong = [r for r in refused if r.error_code != "UNAVAILABLE"]
            if wrong:
                raise DrillError(f"ingest refused {wrong[0].document_id}: {wrong[0].error_code} {wrong[0].error}")
            if not refused:
                return f"ingest again took {attempt} tries, done {time.time() - since:.1f}s after the restart"
            failed = {r.document_id or r.source_uri for r in refused}
            pending = [d for d in pending if (d.meta.document_id or d.meta.source_uri) in failed] or pending
            time.sleep(1.0)
        raise DrillError(f"{len(pending)} document(s) still refused after {tries} tries: {refused[0].error}")

    def _batched_ingest(self, documents: list, tenant: str, results: list, batch: int = 4) -> None:
        """The folder a few documents per request, as a client feeding a stream of documents does."""
        for i in range(0, len(documents), batch):
            try:
                results += self.harness.ingest(documents[i : i + batch], tenant)
            except Exception as err:  # noqa: BLE001 - a failed request is retried after green, like a caller
                log(f"ingest request failed during the node loss: {err}")
                return

    def _write_folder(self, folder: Path) -> None:
        """ingest_documents SciFact abstracts from past the load corpus's slice, one text file each."""
        scifact = self.harness.scifact
        if not (scifact / "corpus.jsonl").is_file():
            raise DrillError(
                f"the indexer drill ingests SciFact abstracts: no corpus.jsonl in {scifact} (make SCIFACT=DIR)"
            )
        skip = self.harness.scenario.scifact_documents
        rows = list(corpus.beir_documents(str(scifact)))[skip + 500 : skip + 500 + self.plan.ingest_documents]
        for doc_id, title, text in rows:
            (folder / f"{doc_id}.txt").write_text(f"{title}\n\n{text}\n")

    def _stream_ingest(self, documents: list, tenant: str, results: list) -> None:
        """One streaming Ingest of the whole folder; results are appended as they arrive (a failure of the
        stream itself ends it: the documents after it are simply not ingested)."""
        try:
            with self.harness.mesh.gateway_channel() as channel:
                stub = gateway_pb2_grpc.GatewayStub(channel)
                request = gateway_pb2.IngestRequest(tenant_id=tenant, documents=documents)
                for result in stub.Ingest(request, timeout=300):
                    results.append(result)
        except Exception as err:  # noqa: BLE001 - the kill may end the stream; what arrived is what counts
            log(f"interrupted ingest stream ended: {err}")


def run_faults(harness: LoadMesh, plan: FaultPlan, deadline_s: float) -> list[FaultResult]:
    drill = Drill(harness, plan, deadline_s)
    results = []
    for fault in plan.faults:
        if fault == "triton" and harness.triton is None:
            log("triton: skipped (the Triton reranker is not configured: --reranker triton)")
            continue
        if fault == "opensearch" and harness.backend != "opensearch":
            log("opensearch: skipped (the index is embedded: --backend opensearch)")
            continue
        if fault == "opensearch-node" and harness.backend != "opensearch":
            log("opensearch-node: skipped (the index is embedded: --backend opensearch)")
            continue
        try:
            results.append(drill.run(fault))
        except (DrillError, subprocess.CalledProcessError, grpc.RpcError) as err:
            log(f"{fault}: the drill failed: {err}")
            results.append(
                FaultResult(
                    fault=fault,
                    action=fault,
                    requests=0,
                    failed={},
                    degraded=0,
                    hung=0,
                    max_latency_s=0.0,
                    down_s=0.0,
                    restart_s=None,
                    recovery_s=None,
                    chunks_lost=0,
                    chunks_extra=0,
                    expectation="the drill runs to its end",
                    met=False,
                    problems=[f"the drill failed: {err}"],
                )
            )
            continue
        log(f"{fault}: {'met' if results[-1].met else 'FAILED: ' + '; '.join(results[-1].problems)}")
    return results
