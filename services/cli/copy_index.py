"""`ragmesh copy-index`: copy tenants from one index backend to another (embedded <-> OpenSearch) without
re-embedding: the vectors and their model id travel with the chunks, through the backends' export and
bulk_add (shared/index/base.py), and so do the maxsim reranker's view vectors (Chunk.views)."""

import argparse

from shared import config
from shared.index.base import IndexBackend
from shared.index.factory import BACKENDS, open_index


def copy_tenants(source: IndexBackend, target: IndexBackend, tenants: list[str]) -> int:
    """Every stored document version of each tenant, source -> target; returns the chunks stored."""
    copied = 0
    for tenant in tenants:
        model_ids = source.stats(tenant)["model_ids"]
        if len(model_ids) != 1:
            raise SystemExit(
                f"copy-index: tenant {tenant!r} holds vectors of {model_ids or 'no model'} in {source.name}; "
                "a copy needs exactly one"
            )
        copied += target.bulk_add(source.export(tenant), model_ids[0])
    target.refresh()
    return copied


def cmd_copy_index(args: argparse.Namespace) -> int:
    if args.source == args.target:
        raise SystemExit(f"copy-index: --from and --to are both {args.source!r} (the same index)")
    source = open_index(args.source, args.data_dir, embed_model=args.embed_model)
    source.warm_up()
    target = open_index(args.target, args.data_dir, embed_model=args.embed_model)
    target.warm_up()
    copied = copy_tenants(source, target, args.tenant)
    print(f"{copied} chunks copied from {source.name} to {target.name}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "copy-index", help="copy tenants from one index backend to another (embedded <-> opensearch; no re-embedding)"
    )
    p.add_argument(
        "--from", dest="source", choices=BACKENDS, default="embedded", help="backend to read (default embedded)"
    )
    p.add_argument(
        "--to", dest="target", choices=BACKENDS, default="opensearch", help="backend to write (default opensearch)"
    )
    p.add_argument(
        "--data-dir",
        default=config.mesh().data_dir,
        help=f"data folder of the embedded index (RAGMESH_DATA_DIR; default {config.DEFAULT_DATA_DIR})",
    )
    p.add_argument("--tenant", action="append", required=True, help="tenant to copy (repeatable)")
    p.add_argument(
        "--embed-model",
        default=config.mesh().embed_model,
        help="whose index generation to copy (the vectors stay this model's)",
    )
    p.set_defaults(func=cmd_copy_index)
