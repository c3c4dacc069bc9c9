"""`ragmesh feedback` and `ragmesh triage`: the answer log, read locally, and feedback sent over gRPC."""

import json
import os
import sys
import time

from ragmesh.client import RagmeshClient
from services.gateway.answer_log import AnswerLog, feedback_to_case, triage_pile
from shared import config

PILES = ("never_retrieved", "ranked_low", "generation_failure", "answered_when_it_should_abstain", "unattributed")


def open_log(data_dir: str) -> AnswerLog:
    path = os.path.join(data_dir, "answers.sqlite")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no answer log at {path} (is --data-dir the gateway's RAGMESH_DATA_DIR?)")
    log = AnswerLog(path)
    log.warm_up()
    return log


def cmd_feedback_send(args, client: RagmeshClient) -> int:
    reply = client.feedback(
        args.answer_id,
        args.rating,
        comment=args.comment or "",
        expected_document_id=args.expected_document or "",
        expected_version=args.expected_version or "",
        expected_evidence=args.expected_evidence or "",
        should_abstain=args.should_abstain,
        tenant=args.tenant,
    )
    print(f"feedback {reply.feedback_id} stored (trace {reply.trace_id})")
    return 0


def cmd_feedback_export(args) -> int:
    log = open_log(args.data_dir)
    pairs = [
        (c, r)
        for c, r in (
            (feedback_to_case(r), r)
            for r in log.feedback_rows()
            if r["rating"] == "RATING_THUMBS_DOWN" or r["should_abstain"]
        )
        if c
    ]
    out = open(args.out, "w") if args.out else sys.stdout
    for case, _ in pairs:
        out.write(json.dumps(case) + "\n")
    if args.out:
        out.close()
        # An erasure rewrites this file without the cases of what it erases (services/gateway/answer_log.py).
        log.record_export(args.out, pairs)
        print(f"{len(pairs)} evaluation cases written to {args.out}")
    return 0


def cmd_triage(args) -> int:
    since = time.time() - args.days * 86400
    rows = [r for r in open_log(args.data_dir).feedback_rows(since) if r["rating"] == "RATING_THUMBS_DOWN"]
    piles: dict[str, list] = {p: [] for p in PILES}
    for row in rows:
        pile = triage_pile(row)
        if pile != "ok":
            piles[pile].append(row)
    for pile in PILES:
        print(f"== {pile.replace('_', ' ')} ({len(piles[pile])})")
        for row in piles[pile]:
            print(
                f"  {row['answer_id'][:12]}  trace {row['trace_id'][:16]}  {row['query']!r}"
                f"  expected {row['expected_document_id'] or '?'}  {row['comment']}"
            )
    return 0


def add_parsers(sub, query_timeout_default: float) -> None:
    fb = sub.add_parser("feedback", help="send feedback on an answer, or export reviewed feedback as eval cases")
    fb_sub = fb.add_subparsers(dest="feedback_command", required=True)
    send = fb_sub.add_parser("send", help="a verdict on an answer, stored with its trace id")
    send.add_argument("answer_id", help="the id `ragmesh ask` printed")
    send.add_argument("rating", choices=("up", "down"), help="thumbs up or down")
    send.add_argument("--tenant", default="", help="default: the API key's tenant")
    send.add_argument("--comment", help="free text")
    send.add_argument("--expected-document", help="id of the document that answers it")
    send.add_argument("--expected-version", help="that document's version")
    send.add_argument("--expected-evidence", help="the exact text that answers it")
    send.add_argument("--should-abstain", action="store_true", help="the corpus does not answer it")
    send.set_defaults(func="feedback_send")
    export = fb_sub.add_parser("export", help="reviewed thumbs-down feedback as evaluation cases (JSON lines)")
    export.add_argument(
        "--data-dir",
        default=config.mesh().data_dir,
        help=f"data folder (RAGMESH_DATA_DIR; default {config.DEFAULT_DATA_DIR})",
    )
    export.add_argument("--out", help="cases file to write (default: stdout)")
    export.set_defaults(func=cmd_feedback_export)

    triage = sub.add_parser(
        "triage", help="thumbs-down answers in three piles: never retrieved, ranked low, generation failure"
    )
    triage.add_argument(
        "--data-dir",
        default=config.mesh().data_dir,
        help=f"data folder (RAGMESH_DATA_DIR; default {config.DEFAULT_DATA_DIR})",
    )
    triage.add_argument("--days", type=float, default=30.0, help="feedback of the last N days (default 30)")
    triage.set_defaults(func=cmd_triage)
