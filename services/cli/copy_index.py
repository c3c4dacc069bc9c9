"""`ragmesh copy-index`: move a tenant from the embedded index to OpenSearch without re-embedding
(the vectors and their model id travel with the chunks)."""

from shared import config
from shared.index.factory import open_index


def cmd_copy_index(args) -> int:
    source = open_index("embedded", args.data_dir, embed_model=args.embed_model)
    source.warm_up()
    target = open_index("opensearch", args.data_dir, embed_model=args.embed_model)
    target.warm_up()
    copied = 0
    for tenant in args.tenant:
        model_ids = source.stats(tenant)["model_ids"]
        if len(model_ids) != 1:
            raise SystemExit(f"copy-index: tenant {tenant!r} holds vectors of {model_ids or 'no model'}")
        copied += target.bulk_add(source.export(tenant), model_ids[0])
    target.refresh()
    print(f"{copied} chunks copied to {target.name}")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("copy-index", help="copy tenants from the embedded index to OpenSearch (no re-embedding)")
    p.add_argument(
        "--data-dir",
        default=config.mesh().data_dir,
        help=f"data folder (RAGMESH_DATA_DIR; default {config.DEFAULT_DATA_DIR})",
    )
    p.add_argument("--tenant", action="append", required=True, help="tenant to copy (repeatable)")
    p.add_argument(
        "--embed-model",
        default=config.mesh().embed_model,
        help="whose index generation to copy (the vectors stay this model's)",
    )
    p.set_defaults(func=cmd_copy_index)
