"""`ragmesh certs --out DIR`: a local CA and one certificate per stage for mutual TLS in the mesh."""

import os

from shared.tls import NAMES, TLS_ENV, make_certs


def cmd_certs(args) -> int:
    folder = make_certs(args.out, args.host or None, args.days)
    print(f"CA and certificates for {', '.join(NAMES)} in {folder} (keys mode 0600)")
    print(f"export {TLS_ENV}={os.path.abspath(folder)}   # every stage and launcher of the mesh")
    return 0


def add_parser(sub) -> None:
    certs = sub.add_parser("certs", help="make a CA and per-stage certificates for mutual TLS behind the gateway")
    certs.add_argument("--out", required=True, help="folder to write the CA and certificates to (keys 0600)")
    certs.add_argument(
        "--host",
        action="append",
        help="name or IP the stages are reached at (repeatable; default localhost and 127.0.0.1)",
    )
    certs.add_argument("--days", type=int, default=365, help="validity (default 365)")
    certs.set_defaults(func=cmd_certs)
