"""Per-stage footprint: resident memory and CPU seconds of each stage process of a real mesh.

Starts the six stages on free loopback ports (embedded index, default models), reads each process's memory
after start-up, ingests a corpus through the gateway, asks questions, and prints one table: RSS after
start-up, peak RSS (VmHWM), CPU seconds spent starting, per ingested document and per question. The Helm
chart's resource requests (deploy/helm/ragmesh/values.yaml) are sized from these figures.

    python -m loadtest.bench_footprint [--corpus examples] [--questions 20]
"""

import argparse
import os
import tempfile
import time
from dataclasses import dataclass

from services.cli.documents import collect_files, to_source_document
from services.cli.mesh import Mesh, stop_on_sigterm
from shared.config import STAGES
from shared.stubs import gateway_pb2, gateway_pb2_grpc

TENANT = "demo"
QUESTIONS = (
    "What does error E-4412 mean?",
    "How do I reset the controller?",
    "What is the refund policy for annual plans?",
    "Which release fixed the login timeout?",
    "How many vacation days do new employees get?",
)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Sample:
    rss_mib: float
    peak_mib: float
    cpu_s: float


def sample(pid: int) -> Sample:
    """Resident and peak resident memory (/proc/PID/status) and user+system CPU time (/proc/PID/stat)."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    with open(f"/proc/{pid}/stat") as stat:
        after_name = stat.read().rpartition(")")[2].split()
    utime, stime = int(after_name[11]), int(after_name[12])  # fields 14 and 15 of proc(5)
    return Sample(int(fields["VmRSS"][0]) / 1024, int(fields["VmHWM"][0]) / 1024, (utime + stime) / CLOCK_TICKS)


def snapshot(mesh: Mesh) -> dict[str, Sample]:
    return {stage: sample(mesh.processes[stage].pid) for stage in STAGES}


def run(corpus: str, questions: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ragmesh-footprint-") as data_dir:
        mesh = Mesh.on_free_ports(data_dir)
        started = time.monotonic()
        mesh.start(timeout=600)
        print(f"mesh SERVING after {time.monotonic() - started:.1f}s")
        time.sleep(5)  # background warm-up (the retriever's vector views) settles
        at_start = snapshot(mesh)
        try:
            channel = mesh.gateway_channel()
            gateway = gateway_pb2_grpc.GatewayStub(channel)
            docs = [to_source_document(path, uri) for path, uri in collect_files([corpus])]
            results = list(gateway.Ingest(gateway_pb2.IngestRequest(tenant_id=TENANT, documents=docs), timeout=900))
            failed = [r.error for r in results if not r.ok]
            if failed:
                raise SystemExit(f"ingest failed: {failed[:3]}")
            after_ingest = snapshot(mesh)
            asked = time.monotonic()
            for i in range(questions):
                gateway.Ask(
                    gateway_pb2.AskRequest(tenant_id=TENANT, question=QUESTIONS[i % len(QUESTIONS)]), timeout=300
                )
            ask_seconds = time.monotonic() - asked
            after_asks = snapshot(mesh)
            channel.close()
        finally:
            mesh.stop()
    print(f"{len(docs)} documents ingested, {questions} questions asked ({ask_seconds / questions * 1000:.0f} ms each)")
    print(
        f"{'stage':<10} {'RSS start MiB':>14} {'peak RSS MiB':>13} {'CPU s start':>12} "
        f"{'CPU ms/doc':>11} {'CPU ms/ask':>11}"
    )
    for stage in STAGES:
        ingest_cpu = after_ingest[stage].cpu_s - at_start[stage].cpu_s
        ask_cpu = after_asks[stage].cpu_s - after_ingest[stage].cpu_s
        print(
            f"{stage:<10} {at_start[stage].rss_mib:>14.0f} {after_asks[stage].peak_mib:>13.0f} "
            f"{at_start[stage].cpu_s:>12.1f} {ingest_cpu / len(docs) * 1000:>11.0f} {ask_cpu / questions * 1000:>11.0f}"
        )


def main() -> None:
    stop_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="examples", help="folder to ingest (default examples)")
    parser.add_argument("--questions", type=int, default=20, help="questions to ask (default 20)")
    args = parser.parse_args()
    run(args.corpus, args.questions)


if __name__ == "__main__":
    main()
