"""The `ragmesh` command: a RAG mesh of six gRPC services, run and queried from the shell.

exit status: 0 success; 1 error (a failed call, a missing file, a mesh that cannot start or be kept
running); 2 usage error, or some documents of an ingest failed; 3 `eval --gate`: a headline metric
regressed; 4 `ask`: no answer (the system abstained; like grep's "no match"); 141 stdout closed early
(e.g. piped into head)."""

import argparse
import importlib.metadata
import json
import logging
import os
import shutil
import sys
import tempfile

import grpc
from google.protobuf.json_format import MessageToDict

from ragmesh.client import Filters, RagmeshClient
from services.cli import certs, copy_index, erase, feedback, keys, sync
from services.cli.ingest import ingest
from services.cli.mesh import (
    DEFAULT_HTTP_PORT,
    HTTP,
    REPLICABLE,
    Mesh,
    MeshError,
    free_port,
    parse_replicas,
    stop_on_sigterm,
)
from services.cli.render import render_answer, render_chunk_view, render_documents, render_results
from services.cli.supervisor import Supervisor
from services.evaluation import command as eval_command
from services.evaluation import compare
from services.generator import reading_training, selector_training, support_training
from services.reranker.training import command as train_command
from shared import config, convert
from shared.config import DEFAULT_PORTS, STAGES, stage_address
from shared.credentials import DEFAULT_TENANT, find_api_key
from shared.keys import LOCAL_KEYS_DIR
from shared.model import RETRIEVAL_MODES
from shared.observability.metrics import start_metrics_server
from shared.stopping import stop_on_signals
from shared.stubs import gateway_pb2

DEMO_QUESTIONS = (
    "whats E-4412",
    "how much is the Team plan per month",
    "what is the parental leave policy",
)
DEFAULT_LAUNCHER_METRICS_PORT = 9476  # after the stages' 9470-9475
EXIT_ABSTAINED = 4  # `ask` got no answer: documented in the help and README, like grep's 1 for no match
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def _client(args) -> RagmeshClient:
    """The gateway's client, authenticated with RAGMESH_API_KEY, else the local key for the request's tenant."""
    return RagmeshClient(args.gateway, api_key=find_api_key, timeout=args.timeout)


def _filters(args) -> Filters:
    return Filters(access_scopes=args.scope or [], as_of=args.as_of or "", include_superseded=args.include_superseded)


def _json(message) -> str:
    """Every field under its proto name, false booleans, zeros and empty lists included."""
    return json.dumps(
        MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True), indent=2
    )


def cmd_up(args) -> int:
    http = not args.no_http
    try:
        replicas = parse_replicas(args.replicas)
    except MeshError as err:
        print(f"ragmesh up: {err}", file=sys.stderr)
        return 2
    if args.free_ports:
        mesh = Mesh.on_free_ports(args.data_dir, http=http, replicas=replicas)
    else:
        ports = {**DEFAULT_PORTS, HTTP: args.http_port} if http else None
        mesh = Mesh(args.data_dir, ports=ports, http=http, replicas=replicas)
    metrics_port = args.metrics_port
    if metrics_port is None:
        metrics_port = free_port() if args.free_ports else DEFAULT_LAUNCHER_METRICS_PORT
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    stop = stop_on_signals()  # a flag, since a handler must take no lock
    if metrics_port > 0:
        try:
            start_metrics_server("launcher", mesh.host, metrics_port)
        except OSError as err:
            print(
                f"ragmesh up failed: the launcher's metrics port {mesh.host}:{metrics_port}: {err} "
                "(--metrics-port PORT, or 0 for none)",
                file=sys.stderr,
            )
            return 1
    try:
        mesh.start(timeout=args.start_timeout)
    except MeshError as err:
        print(f"ragmesh up failed: {err}", file=sys.stderr)
        return 1
    for stage in mesh.stage_names():
        print(
            f"{stage:<11} {mesh.address(stage):<22} pid {mesh.processes[stage].pid:<8} "
            f"metrics {mesh.host}:{mesh.metrics_ports[stage]:<6} {mesh.health(stage)}"
        )
    if http:
        print(
            f"{HTTP:<11} {mesh.http_url():<22} pid {mesh.processes[HTTP].pid:<8} {'':<21} {mesh.health(HTTP)} "
            f"(reviewer page {mesh.http_url()}/review, API {mesh.http_url()}/openapi.json)"
        )
    if metrics_port > 0:
        print(
            f"{'launcher':<11} {'':<22} pid {os.getpid():<8} metrics {mesh.host}:{metrics_port:<6} "
            "(ragmesh_stage_restarts_total)"
        )
    targets = mesh.write_scrape_targets(max(metrics_port, 0))
    print(f"Prometheus targets of every process: {targets} (file_sd; deploy/observability/prometheus.yml)")
    print(
        f"API key for tenant {DEFAULT_TENANT!r}: {os.path.join(mesh.data_dir, LOCAL_KEYS_DIR, DEFAULT_TENANT)} "
        "(mode 0600; the CLI reads it there with RAGMESH_DATA_DIR set, or set RAGMESH_API_KEY)"
    )
    print(
        f"export RAGMESH_GATEWAY_ADDR={mesh.address('gateway')} RAGMESH_DATA_DIR={mesh.data_dir}"
        "   # Ctrl-C stops the mesh",
        flush=True,
    )
    supervisor = Supervisor(
        mesh,
        max_restarts=args.max_restarts,
        window=args.restart_window,
        log_max_bytes=int(args.log_max_mb * 1024 * 1024),
        log_backups=args.log_backups,
        unresponsive_after=args.unresponsive_after,
        start_timeout=args.start_timeout,
    )
    code = supervisor.run(stop)
    if code:
        print(
            f"ragmesh up: {supervisor.failed_stage or 'a stage'} cannot be kept running; stopping the mesh",
            file=sys.stderr,
        )
    mesh.stop()
    return code


def cmd_ingest(args) -> int:
    ok, failed = ingest(_client(args), args.paths, args.tenant, args.timeout)
    print(f"{ok} documents ingested, {failed} failed")
    return 0 if failed == 0 else 2


def cmd_ask(args) -> int:
    client = _client(args)
    response = client.ask(args.question, filters=_filters(args), tenant=args.tenant)
    exit_code = EXIT_ABSTAINED if response.answer.abstained else 0
    if args.json:
        print(_json(response))
        return exit_code
    print(render_answer(response))
    print(f"(answer {response.answer_id}, trace {response.trace_id})")
    if args.open and response.answer.citations:
        view = client.get_chunk(
            response.answer.citations[0].chunk_id, access_scopes=args.scope or [], tenant=args.tenant
        )
        print("\n" + render_chunk_view(view, response.answer.citations[0]))
    return exit_code


def cmd_search(args) -> int:
    response = _client(args).search(
        args.query,
        filters=_filters(args),
        top_k=args.top_k,
        mode=convert.mode_to_pb(args.mode),
        rerank=args.rerank,
        tenant=args.tenant,
    )
    if args.json:
        print(_json(response))
    else:
        if response.read_as:
            print(f"(read as: {response.read_as})")
        print(render_results(response.results))
    return 0


def cmd_delete(args) -> int:
    response = _client(args).delete_document(args.document_id, tenant=args.tenant)
    if not response.chunks_removed:
        # A mistyped id must not read as success; `ragmesh documents` shows the ids there are.
        print(
            f"ragmesh delete: no document {args.document_id!r} is stored for the tenant; nothing was removed. "
            "`ragmesh documents` lists the ids",
            file=sys.stderr,
        )
        return 1
    print(f"{response.chunks_removed} chunks removed")
    return 0


def cmd_documents(args) -> int:
    documents = _client(args).list_documents(tenant=args.tenant)
    if args.json:
        print(_json(gateway_pb2.ListDocumentsResponse(documents=documents)))
    else:
        print(render_documents(documents))
    return 0


def cmd_demo(args) -> int:
    # A folder the demo makes is its own to remove (the index, the answer log and an API key's secret); one given
    # with --data-dir is kept.
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="ragmesh-demo-")
    made = not args.data_dir
    print(f"Starting the mesh (six processes on 127.0.0.1, data in {data_dir}) ...", flush=True)
    mesh = Mesh.on_free_ports(data_dir)
    try:
        mesh.start(timeout=args.start_timeout)
        for stage in STAGES:
            print(f"  {stage:<10} {mesh.address(stage):<22} pid {mesh.processes[stage].pid}  {mesh.health(stage)}")
        client = RagmeshClient(mesh.address("gateway"), api_key=mesh.key_for, timeout=args.timeout)
        print(f"\nIngesting {args.corpus}/ for tenant {args.tenant!r} ...", flush=True)
        ok, failed = ingest(client, [args.corpus], args.tenant, args.timeout)
        print(f"{ok} documents ingested, {failed} failed")
        for question in DEMO_QUESTIONS:
            response = client.ask(question, tenant=args.tenant)
            print(f"\nQ: {question}\n{render_answer(response)}", flush=True)
        return 0 if failed == 0 else 2
    except (MeshError, grpc.RpcError) as err:
        print(f"demo failed: {err}", file=sys.stderr)
        return 1
    finally:
        print("\nStopping the mesh" + (" and removing its data (--data-dir keeps it)." if made else "."))
        mesh.stop()
        if made:
            shutil.rmtree(data_dir, ignore_errors=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragmesh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    _global_options(parser, defaults=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    up = sub.add_parser("up", help="start the six stages and the HTTP front door on loopback until Ctrl-C")
    up.add_argument(
        "--data-dir",
        default=config.mesh().data_dir,
        help=f"data folder (RAGMESH_DATA_DIR; default {config.DEFAULT_DATA_DIR})",
    )
    up.add_argument("--free-ports", action="store_true", help="pick free ports instead of 7070-7075")
    up.add_argument("--no-http", action="store_true", help="do not start the HTTP front door (services/http)")
    up.add_argument(
        "--replicas",
        action="append",
        default=[],
        metavar="STAGE=N",
        help=f"run N processes of a stage ({', '.join(REPLICABLE)}), called round robin by the gateway; "
        "repeatable, e.g. --replicas retriever=2 (default 1 each)",
    )
    up.add_argument(
        "--http-port",
        type=int,
        default=DEFAULT_HTTP_PORT,
        help=f"the HTTP front door's port (default {DEFAULT_HTTP_PORT})",
    )
    up.add_argument("--start-timeout", type=float, default=180.0, help="seconds for every stage to be SERVING")
    up.add_argument(
        "--max-restarts",
        type=int,
        default=5,
        help="a stage that exits is restarted with backoff; more exits than this within "
        "--restart-window stop the mesh and exit 1 (default 5)",
    )
    up.add_argument("--restart-window", type=float, default=60.0, help="seconds (default 60)")
    up.add_argument(
        "--unresponsive-after",
        type=float,
        default=30.0,
        help="a stage that answers no health check for this many seconds (hung, stopped) is killed and "
        "restarted like a crash; 0 = never (default 30)",
    )
    up.add_argument(
        "--log-max-mb",
        type=float,
        default=50.0,
        help="a stage log (DATA_DIR/logs/<stage>.log) over this size is copied to <stage>.log.1 and emptied "
        "(default 50)",
    )
    up.add_argument("--log-backups", type=int, default=3, help="rotated copies kept per stage (default 3)")
    up.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help=f"the launcher's own Prometheus metrics (restarts); default {DEFAULT_LAUNCHER_METRICS_PORT}, "
        "a free one with --free-ports, 0 = off",
    )
    up.set_defaults(func=cmd_up)

    ing = sub.add_parser("ingest", help="ingest files or folders")
    ing.add_argument("paths", nargs="+", metavar="PATH", help="a file, or a folder read recursively")
    ing.add_argument("--tenant", default="", help="default: the API key's tenant")
    ing.set_defaults(func=cmd_ingest)

    def query_options(p):
        p.add_argument("--tenant", default="", help="default: the API key's tenant")
        p.add_argument("--scope", action="append", help="access scope the caller holds (repeatable)")
        p.add_argument("--as-of", help="search the versions effective at this date")
        p.add_argument("--include-superseded", action="store_true", help="search superseded versions too")
        p.add_argument("--json", action="store_true", help="the whole response as JSON, every field included")

    ask = sub.add_parser(
        "ask",
        help="answer a question with citations, or abstain (exit 4)",
        description="Answer a question with citations from the corpus. Exit status 0 with an "
        "answer, 4 when the system abstains (no answer; suggested reading is "
        "printed), 1 on an error.",
    )
    ask.add_argument("question", help="the question, quoted")
    ask.add_argument("--open", action="store_true", help="show the first citation in its section")
    query_options(ask)
    ask.set_defaults(func=cmd_ask)

    search = sub.add_parser("search", help="ranked passages with every stage's scores")
    search.add_argument("query", help="the query, quoted")
    search.add_argument("--top-k", type=int, default=10, help="passages to return (default 10)")
    search.add_argument(
        "--mode",
        choices=sorted(RETRIEVAL_MODES),
        default="hybrid",
        help="first stage: BM25, dense, or both fused by RRF (default hybrid)",
    )
    search.add_argument("--rerank", action="store_true", help="rerank the candidates too")
    query_options(search)
    search.set_defaults(func=cmd_search)

    delete = sub.add_parser("delete", help="delete a document and everything derived from it")
    delete.add_argument("document_id", help="the document's id (front matter doc_id, else its path)")
    delete.add_argument("--tenant", default="", help="default: the API key's tenant")
    delete.set_defaults(func=cmd_delete)

    documents = sub.add_parser(
        "documents", help="the tenant's stored document versions: id, version, source, chunks, validity, scopes"
    )
    documents.add_argument("--tenant", default="", help="default: the API key's tenant")
    documents.add_argument("--json", action="store_true", help="every field, as JSON")
    documents.set_defaults(func=cmd_documents)

    keys.add_parser(sub)
    certs.add_parser(sub)
    eval_command.add_parser(sub)
    eval_command.add_calibrate_parser(sub)
    feedback.add_parsers(sub, 120.0)
    erase.add_parser(sub)
    sync.add_parser(sub)
    copy_index.add_parser(sub)
    train_command.add_parser(sub)
    selector_training.add_parser(sub)
    support_training.add_parser(sub)
    reading_training.add_parser(sub)
    compare.add_parser(sub)

    demo = sub.add_parser("demo", help="start the mesh, ingest a corpus, ask three questions, stop")
    demo.add_argument("--corpus", default="examples", help="folder to ingest (default examples)")
    demo.add_argument("--tenant", default="demo", help="tenant to ingest as and ask for (default demo)")
    demo.add_argument("--data-dir", help="kept afterwards; default: a new temporary folder, removed at the end")
    demo.add_argument("--start-timeout", type=float, default=300.0, help="seconds for every stage to be SERVING")
    demo.set_defaults(func=cmd_demo)
    _accept_global_options_after(sub)
    return parser


def _version() -> str:
    try:
        return importlib.metadata.version("ragmesh")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _global_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    """--gateway and --timeout. On the top-level parser they carry the defaults; on each subcommand they
    default to SUPPRESS, so a value given after the subcommand wins and none given leaves the top level's."""
    options = (
        (("--gateway",), dict(default=stage_address("gateway"), help="gateway address (RAGMESH_GATEWAY_ADDR)")),
        (
            ("--timeout",),
            dict(
                type=float,
                default=120.0,
                help="deadline per call, seconds (default 120); for ingest and sync, per document "
                "(plus 0.3 s per KiB of it)",
            ),
        ),
    )
    for flags, kwargs in options:
        if not defaults:
            if any(flag in parser._option_string_actions for flag in flags):
                continue  # the subcommand has its own option of that name
            kwargs = {**kwargs, "default": argparse.SUPPRESS}
        parser.add_argument(*flags, **kwargs)


def _accept_global_options_after(sub) -> None:
    """`ragmesh ask "..." --timeout 5` as well as `ragmesh --timeout 5 ask "..."`, at every level."""
    for subparser in sub.choices.values():
        _global_options(subparser, defaults=False)
        for action in subparser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_global_options_after(action)


def main(argv: list[str] | None = None) -> int | str | None:
    try:
        try:
            code: int | str | None = _run(argv)
        except SystemExit as done:  # --help, --version, usage errors: their output is flushed here too
            code = done.code
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        # The reader went away (`ragmesh search ... | head`): stop quietly, as Unix tools do. Python would
        # flush stdout again at exit and complain, so stdout points at /dev/null from here on.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _unreachable_hint(args, err: grpc.RpcError) -> str:
    """What to do when no gateway answers at all. A stage the gateway cannot reach is not this: the gateway
    answers, naming the stage ("generator stage at ... failed")."""
    gateway, details = getattr(args, "gateway", ""), (err.details() or "").lower()
    if not gateway or err.code() != grpc.StatusCode.UNAVAILABLE or "connect" not in details or " stage" in details:
        return ""
    return (
        f"\nnothing answers at {gateway}: start the mesh with `ragmesh up` (it prints the export line to paste), "
        "or point --gateway / RAGMESH_GATEWAY_ADDR at a running gateway"
    )


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    stop_on_sigterm()  # a command that spawned a mesh stops it (by pid) on the way out
    try:
        if args.func in feedback.CLIENT_COMMANDS:
            return feedback.CLIENT_COMMANDS[args.func](args, _client(args))
        return args.func(args)
    except grpc.RpcError as err:
        print(
            f"ragmesh {args.command}: {err.code().name}: {err.details()}{_unreachable_hint(args, err)}", file=sys.stderr
        )
        return 1
    except FileNotFoundError as err:
        print(f"ragmesh {args.command}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
