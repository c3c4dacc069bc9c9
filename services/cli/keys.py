"""`ragmesh keys create|list|revoke`: API keys in the gateway's data dir (an admin's local task)."""

import argparse
import os
import sys
from datetime import UTC, datetime, timedelta

from shared import config
from shared.errors import InvalidArgument
from shared.keys import KEYS_FILE, ROLES, KeyStore
from shared.names import ALL_SCOPES


def _store(args) -> KeyStore:
    return KeyStore(args.keys_file or os.path.join(args.data_dir, KEYS_FILE))


# A century: beyond it (or `inf`) the date cannot be written; no expiry at all is the option left out.
MAX_EXPIRY_DAYS = 36500


def _positive_days(text: str) -> float:
    """--expires-in-days: a number of days above 0 (0 used to make a key that never expires)."""
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not 0 < days <= MAX_EXPIRY_DAYS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: a key must expire after more than 0 and at most "
            f"{MAX_EXPIRY_DAYS} days (leave the option out for a key that never does)"
        )
    return days


def cmd_create(args) -> int:
    scopes = [s for s in (args.scopes or "").split(",") if s.strip()]
    expires = ""
    if args.expires_in_days is not None:
        expires = (datetime.now(UTC) + timedelta(days=args.expires_in_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        key, secret = _store(args).create(
            args.tenant, scopes, args.role, expires_at=args.expires_at or expires, label=args.label or ""
        )
    except (ValueError, InvalidArgument) as err:
        print(f"ragmesh keys create: {err}", file=sys.stderr)
        return 1
    print(
        f"key {key.key_id}: tenant {key.tenant_id!r}, role {key.role}, scopes {','.join(key.scopes) or '(public)'}"
        + (f", expires {key.expires_at}" if key.expires_at else ""),
        file=sys.stderr,
    )
    print("the secret is shown only now; send it as `authorization: Bearer <key>` or RAGMESH_API_KEY:", file=sys.stderr)
    print(secret)
    return 0


def cmd_list(args) -> int:
    print(f"{'id':<18} {'tenant':<16} {'role':<7} {'status':<8} {'created':<21} {'expires':<21} scopes")
    for key in _store(args).list():
        print(
            f"{key.key_id:<18} {key.tenant_id:<16} {key.role:<7} {key.status():<8} {key.created_at:<21} "
            f"{key.expires_at or '-':<21} {','.join(key.scopes) or '(public)'}"
        )
    return 0


def cmd_revoke(args) -> int:
    store = _store(args)
    if store.get(args.key_id) is None:
        print(f"ragmesh keys revoke: no key {args.key_id!r} in {store.path}", file=sys.stderr)
        return 1
    print(f"key {args.key_id} " + ("revoked" if store.revoke(args.key_id) else "was already revoked"))
    return 0


def add_parser(sub) -> None:
    keys = sub.add_parser("keys", help="API keys for the gateway: create, list, revoke")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)

    def common(p):
        p.add_argument(
            "--data-dir",
            default=config.mesh().data_dir,
            help=f"data folder (RAGMESH_DATA_DIR; default {config.DEFAULT_DATA_DIR})",
        )
        p.add_argument(
            "--keys-file",
            default=config.GatewayConfig.from_env().keys_file,
            help="default: keys.sqlite in the data dir",
        )

    create = keys_sub.add_parser("create", help="make a key and print its secret once")
    create.add_argument("--tenant", required=True, help="the one tenant the key acts for")
    create.add_argument(
        "--scopes",
        default="",
        help=f"comma-separated access scopes ('{ALL_SCOPES}' = all of the tenant's); public is always readable",
    )
    create.add_argument(
        "--role",
        choices=ROLES,
        default="reader",
        help="reader: search, ask, feedback; writer: also ingest, delete; admin: all (default reader)",
    )
    expiry = create.add_mutually_exclusive_group()
    expiry.add_argument("--expires-in-days", type=_positive_days, help="default: never expires")
    expiry.add_argument("--expires-at", help="ISO-8601 date or timestamp, in the future")
    create.add_argument("--label", help="a note shown by `keys list`")
    common(create)
    create.set_defaults(func=cmd_create)

    listing = keys_sub.add_parser("list", help="every key: id, tenant, role, status, scopes (never secrets)")
    common(listing)
    listing.set_defaults(func=cmd_list)

    revoke = keys_sub.add_parser("revoke", help="revoke a key by id (takes effect on the next call)")
    revoke.add_argument("key_id", help="the id `keys list` shows")
    common(revoke)
    revoke.set_defaults(func=cmd_revoke)
