"""MaxSim's identifier bonus with each chunk's identifiers cached by chunk id (the real bi-encoder scores the
rest): the same scores on a first and a repeated query, and an erasure's forget drops the cached identifiers."""

import numpy as np
import pytest

from services.reranker.service import (
    IDENTIFIER_IN_BODY_BONUS,
    IDENTIFIER_IN_HEADING_BONUS,
    OTHER_RECORD_PENALTY,
    MaxSimReranker,
)
from shared.config import DEFAULT_EMBED_MODEL
from shared.embedding import build_embedder
from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores

QUERY = "what does error E-4412 mean"


@pytest.fixture(scope="module")
def reranker() -> MaxSimReranker:
    ranker = MaxSimReranker(build_embedder(DEFAULT_EMBED_MODEL, threads=1), rescore_k=3)
    ranker.warm_up()
    return ranker


def _candidates() -> list[ScoredChunk]:
    meta = DocumentMeta(tenant_id="t", document_id="errors")
    texts = [
        (["Errors", "E-4412"], "The sync token expired. Sign in again."),
        (["Errors"], "E-4412 appears when the sync token expired."),
        (["Errors"], "E-4421 appears when the disk is full."),
    ]
    return [
        ScoredChunk(Chunk(f"c{i}", meta, heading, body, body, 0, len(body), "", 0, i), StageScores(fused_rank=i + 1))
        for i, (heading, body) in enumerate(texts)
    ]


def test_the_identifier_bonus_is_the_same_from_the_cache(reranker):
    reranker.forget(["c0", "c1", "c2"])
    first = reranker.score(QUERY, _candidates())  # identifiers computed
    again = reranker.score(QUERY, _candidates())  # identifiers from the cache
    np.testing.assert_array_equal(first, again)
    # Each score is the best view similarity plus the bonus: the heading's identifier earns the larger one, the
    # body's the smaller, a near miss (E-4421) none.
    query = reranker.embedder.embed_queries([QUERY])[0]
    similarity = np.array([np.max(vectors @ query) for vectors, _ in reranker._unit_vectors(_candidates())])
    bonus = np.array([IDENTIFIER_IN_HEADING_BONUS, IDENTIFIER_IN_BODY_BONUS, 0.0], dtype=np.float32)
    np.testing.assert_allclose(first, similarity + bonus, atol=1e-6)


def test_forget_drops_the_cached_identifiers(reranker):
    reranker.score(QUERY, _candidates())
    removed, remaining, before, after = reranker.forget(["c0", "c1", "c2", "never-seen"])
    assert (removed, remaining) == (3, 0)
    assert before - after == 6  # each chunk's view vectors (embedded here) and identifiers
    assert reranker.forget(["c0"])[:2] == (0, 0)


def test_another_record_s_document_is_scored_down(reranker):
    """Train q145 "what did the dental clinic end up buying (ticket 10611)": the other tickets' record headers shared
    its words and kept 10611's resolution, which names the ticket only by its document's title, out of the top 5."""
    query = "what did the clinic end up buying (ticket 10611)"
    documents = [
        ("Ticket 10611 - Storage warning", "Ticket #10611\nStatus: Solved\nPlan: Team"),
        ("Ticket 10231 - Sync keeps failing", "Ticket #10231\nStatus: Solved\nPlan: Team"),
        ("Service Outage Runbook", "Update the status page every 30 minutes."),
    ]
    chunks = [
        ScoredChunk(
            Chunk(f"r{i}", DocumentMeta("t", f"d{i}", title=title), [], body, body, 0, len(body), "", 0, 0),
            StageScores(fused_rank=i + 1),
        )
        for i, (title, body) in enumerate(documents)
    ]
    scores = reranker.score(query, chunks)
    query_vector = reranker.embedder.embed_queries([query])[0]
    similarity = np.array([np.max(vectors @ query_vector) for vectors, _ in reranker._unit_vectors(chunks)])
    np.testing.assert_allclose(scores - similarity, [IDENTIFIER_IN_BODY_BONUS, -OTHER_RECORD_PENALTY, 0.0], atol=1e-6)
