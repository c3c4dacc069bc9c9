"""`ragmesh erase`: a document (every version) or a whole tenant out of every store, with a report that
proves it (the gateway's Erase RPC; see services/gateway/erasure.py)."""

import difflib
import json
import os
import sys

from services.gateway.erasure import found_nothing, report_markdown
from shared.credentials import gateway_channel
from shared.stubs import gateway_pb2, gateway_pb2_grpc

EXIT_SURVIVED = 5  # the erasure ran, but its verification found something of the subject in some store


def erase(stub, tenant: str, document_id: str, whole_tenant: bool, request_id: str, timeout: float):
    return stub.Erase(
        gateway_pb2.EraseRequest(
            tenant_id=tenant, document_id=document_id, whole_tenant=whole_tenant, request_id=request_id
        ),
        timeout=timeout,
    )


def cmd_erase(args) -> int:
    if not args.doc and not args.tenant:
        print("ragmesh erase: name a document (--doc ID) or a whole tenant (--tenant T --yes)", file=sys.stderr)
        return 2
    whole = not args.doc
    if whole and not args.yes:
        print(
            f"ragmesh erase: this erases ALL data of tenant {args.tenant!r} (documents, answer log, feedback); "
            "add --yes to confirm",
            file=sys.stderr,
        )
        return 2
    stub = gateway_pb2_grpc.GatewayStub(gateway_channel(args.gateway))
    response = erase(stub, args.tenant or "", args.doc or "", whole, args.request_id or "", args.timeout)
    report = json.loads(response.report_json)
    if args.report_dir:
        os.makedirs(args.report_dir, exist_ok=True)
        base = os.path.join(args.report_dir, response.request_id)
        with open(base + ".json", "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
        with open(base + ".md", "w", encoding="utf-8") as out:
            out.write(report_markdown(report))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(report_markdown(report))
        print(f"(report stored by the gateway at {response.report_path})")
    if found_nothing(report):
        _warn_nothing_found(stub, args.tenant or "", args.doc, args.timeout)
    return 0 if response.verified else EXIT_SURVIVED


def _warn_nothing_found(stub, tenant: str, document_id: str, timeout: float) -> None:
    """A mistyped id erases nothing and still verifies: say so on stderr, with the stored ids it resembles."""
    listed = stub.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=timeout)
    close = difflib.get_close_matches(document_id, sorted({d.document_id for d in listed.documents}), n=3)
    hint = f"; stored ids like it: {', '.join(close)}" if close else ""
    print(
        f"ragmesh erase: warning: nothing was stored under {document_id!r} (already erased, or a mistyped id){hint}",
        file=sys.stderr,
    )


def add_parser(sub) -> None:
    p = sub.add_parser(
        "erase",
        help="erase a document or a whole tenant from every store, verified, with a report (exit 5: not verified)",
    )
    p.add_argument("--doc", help="the document id to erase (every version)")
    p.add_argument("--tenant", default="", help="the tenant (default: the API key's); alone, erases ALL of it")
    p.add_argument("--yes", action="store_true", help="confirm erasing a whole tenant")
    p.add_argument("--request-id", help="your reference for the request (a ticket number); names the report")
    p.add_argument("--report-dir", help="also write the report (JSON and Markdown) here")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_erase)
