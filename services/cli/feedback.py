"""`ragmesh feedback` and `ragmesh triage`: feedback sent, reviewed and exported through the gateway's API
(Feedback, ListFeedback, RecordFeedbackExport), so they work against a remote mesh."""

import os
import sys
import time

from ragmesh.client import RagmeshClient
from ragmesh.v1 import gateway_pb2

PILES = (
    "never_retrieved",
    "ranked_low",
    "gate_abstained",
    "generator_abstained",
    "wrong_citation",
    "poor_answer",
    "answered_when_it_should_abstain",
    "unattributed",
)


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


def cmd_feedback_export(args, client: RagmeshClient) -> int:
    """Thumbs-down and should-abstain feedback that names its evidence, as evaluation cases (JSON lines)."""
    entries = [
        e
        for e in client.list_feedback(tenant=args.tenant).entries
        if (e.rating == gateway_pb2.RATING_THUMBS_DOWN or e.should_abstain) and e.eval_case_json
    ]
    if not args.out:
        for entry in entries:
            sys.stdout.write(entry.eval_case_json + "\n")
        return 0
    path = os.path.abspath(args.out)
    with open(path, "w") as out:
        for entry in entries:
            out.write(entry.eval_case_json + "\n")
    if entries:
        # The gateway notes the file, so that an erasure rewrites it without the cases of what it erases.
        client.record_feedback_export(path, [e.feedback_id for e in entries], tenant=args.tenant)
    print(f"{len(entries)} evaluation cases written to {args.out}")
    return 0


def cmd_triage(args, client: RagmeshClient) -> int:
    since = time.time() - args.days * 86400
    entries = client.list_feedback(since=since, rating="down", tenant=args.tenant).entries
    piles: dict[str, list] = {p: [] for p in PILES}
    for entry in entries:
        if entry.triage_pile in piles:  # "ok": nothing failed
            piles[entry.triage_pile].append(entry)
    for pile in PILES:
        print(f"== {pile.replace('_', ' ')} ({len(piles[pile])})")
        for entry in piles[pile]:
            print(
                f"  {entry.answer_id[:12]}  trace {entry.trace_id[:16]}  {entry.question!r}"
                f"  expected {entry.expected_document_id or '?'}  {entry.comment}"
            )
    return 0


# Commands that talk to the gateway: main builds the client (address, key, timeout) and passes it.
CLIENT_COMMANDS = {
    "feedback_send": cmd_feedback_send,
    "feedback_export": cmd_feedback_export,
    "triage": cmd_triage,
}


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
    export.add_argument("--tenant", default="", help="default: the API key's tenant")
    export.add_argument("--out", help="cases file to write (default: stdout)")
    export.set_defaults(func="feedback_export")

    triage = sub.add_parser(
        "triage",
        help="thumbs-down answers in piles by the stage that failed: never retrieved, ranked low, "
        "abstained at the gate or by the generator, cited something else, a poor answer from the right document",
    )
    triage.add_argument("--tenant", default="", help="default: the API key's tenant")
    triage.add_argument("--days", type=float, default=30.0, help="feedback of the last N days (default 30)")
    triage.set_defaults(func="triage")
