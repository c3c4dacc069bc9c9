"""Tenant and scope isolation as a property every index backend must hold (hypothesis).

Random tenants (some with a single chunk, some sharing text with another tenant), random scopes per
document, and queries built from the other tenants' distinctive tokens and vectors: every hit belongs
to the querying tenant and to a scope it holds, and a foreign chunk id resolves to nothing.
"""

import uuid

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.model import SearchFilters, visible_scopes
from tests.conformance.index_suite import DIM, MODEL_ID, chunk, meta

SCOPES = ("public", "hr", "finance", "legal")
TALLY = {"cases": 0, "queries": 0, "leaks": 0}
SHARED = "the refund policy covers annual plans and invoices"


@st.composite
def worlds(draw):
    """{tenant: [(doc id, scopes, [(body, vector)])]} with tenant-distinctive tokens and shared text."""
    run = uuid.uuid4().hex[:8]
    tenants = [f"t{run}x{i}" for i in range(draw(st.integers(2, 4)))]
    world = {}
    for t_index, tenant in enumerate(tenants):
        docs = []
        for d in range(draw(st.integers(1, 2))):
            scopes = draw(st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True))
            bodies = []
            for c in range(draw(st.integers(1, 2))):
                body = f"zq{t_index}k{d}{c} marker for {tenant}"
                if draw(st.booleans()):
                    body += " " + SHARED  # text another tenant may hold too
                seed = draw(st.integers(0, 2**31 - 1))
                vector = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
                bodies.append((body, vector / np.linalg.norm(vector)))
            docs.append((f"doc-{d}", scopes, bodies))
        world[tenant] = docs
    return world


def check_isolation(index, world, held_scopes: list[str]) -> tuple[int, int]:
    """(queries run, leaks found) for one generated world."""
    written = {}
    for tenant, docs in world.items():
        for doc_id, scopes, bodies in docs:
            m = meta(tenant=tenant, doc=doc_id, scopes=scopes)
            chunks = [chunk(m, i, body) for i, (body, _) in enumerate(bodies)]
            index.replace_document_version(
                m, chunks, {c.chunk_id: v for c, (_, v) in zip(chunks, bodies, strict=True)}, MODEL_ID
            )
            written.update({c.chunk_id: (tenant, scopes, v) for c, (_, v) in zip(chunks, bodies, strict=True)})
    visible = set(visible_scopes(held_scopes))
    filters = SearchFilters(access_scopes=held_scopes)
    queries = leaks = 0
    for tenant in world:
        foreign = [(cid, v) for cid, (owner, _, v) in written.items() if owner != tenant]
        foreign_tokens = " ".join(f"zq{i}k{d}{c}" for i in range(len(world)) for d in range(2) for c in range(2))
        hits = index.bm25(tenant, f"{foreign_tokens} {SHARED}", filters, 50)
        for _, vector in foreign:
            hits += index.knn(tenant, vector, MODEL_ID, filters, 50)
        queries += 1 + len(foreign)
        for hit in hits:
            owner, scopes, _ = written.get(
                hit.chunk.chunk_id, (hit.chunk.meta.tenant_id, hit.chunk.meta.access_scopes, None)
            )
            if owner != tenant or hit.chunk.meta.tenant_id != tenant or not visible & set(scopes):
                leaks += 1
        for chunk_id, _ in foreign:
            queries += 1
            if index.get_chunk(tenant, chunk_id, list(SCOPES)) is not None:
                leaks += 1
    return queries, leaks


class IsolationConformance:
    # differing_executors: every backend's class runs this one property with its own `index` fixture, and
    # each example builds its world in that index, so no example depends on which class ran it.
    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.differing_executors,
        ],
    )
    @given(world=worlds(), held=st.lists(st.sampled_from(SCOPES[1:]), max_size=2, unique=True))
    def test_no_query_reaches_another_tenant_or_an_unheld_scope(self, index, world, held):
        queries, leaks = check_isolation(index, world, held)
        TALLY["cases"] += 1
        TALLY["queries"] += queries
        TALLY["leaks"] += leaks
        print(
            f"isolation ({type(index).__name__}): {TALLY['cases']} generated cases, {TALLY['queries']} queries, "
            f"{TALLY['leaks']} leaks"
        )
        assert queries > 0 and leaks == 0
