"""QueryBatcher over the real bge-small encoder: concurrent queries share runs and get the vectors each would
get alone; a failed run fails each of its callers and the next run works."""

import threading

import numpy as np
import pytest

from shared.embedding import build_embedder
from shared.embedding.batching import QueryBatcher

QUESTIONS = [
    "whats E-4412",
    "how long do we keep invoices",
    "can indian customers pay by UPI",
    "refund over 5k who signs off",
    "P1 ack time",
    "webhook retries how long",
    "nonprofit discount how much and can it stack",
    "does the volume discount apply to add-ons too",
    "which court for disputes under the msa",
    "min tls version for data in transit",
    "E-3050 keeps coming back behind our corporate proxy",
    "after termination how long to export and when is personal data wiped",
]


@pytest.fixture(scope="module")
def encoder():
    embedder = build_embedder("BAAI/bge-small-en-v1.5", threads=1)
    embedder.warm_up()
    return embedder


def _ask_at_once(batcher: QueryBatcher, questions: list[str]) -> list[np.ndarray]:
    """Every question from its own thread, released together."""
    start = threading.Barrier(len(questions))
    vectors: list[np.ndarray | None] = [None] * len(questions)

    def ask(i: int) -> None:
        start.wait()
        vectors[i] = batcher.embed_queries([questions[i]])[0]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(questions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(v is not None for v in vectors), "a caller got no vector"
    return [v for v in vectors if v is not None]


def test_concurrent_queries_share_runs_and_get_their_own_vectors(encoder):
    batcher = QueryBatcher(encoder, max_batch=4, runs_at_once=1)
    vectors = _ask_at_once(batcher, QUESTIONS)
    alone = np.vstack([encoder.embed_queries([q]) for q in QUESTIONS])
    cosines = np.sum(np.vstack(vectors) * alone, axis=1)
    assert cosines.min() > 0.9999, f"a batched query's vector differs from its own: {cosines.min():.6f}"
    assert batcher.queries == len(QUESTIONS)
    # While the first run encodes, the other eleven queue: they go in runs of at most four.
    assert batcher.runs < len(QUESTIONS)
    assert 1 < batcher.largest_batch <= 4


def test_a_lone_query_runs_at_once_by_itself(encoder):
    batcher = QueryBatcher(encoder, max_batch=8)
    vector = batcher.embed_queries(["E-4421 how to fix"])
    assert vector.shape == (1, encoder.spec.dimension)
    assert (batcher.runs, batcher.queries, batcher.largest_batch) == (1, 1, 1)


def test_a_callers_own_batch_passes_through(encoder):
    batcher = QueryBatcher(encoder)
    assert batcher.embed_queries(QUESTIONS[:3]).shape == (3, encoder.spec.dimension)
    assert batcher.runs == 0  # not queued: it is one run already


def test_a_failed_run_fails_each_caller_and_the_next_run_works():
    cold = build_embedder("BAAI/bge-small-en-v1.5", threads=1)  # not warmed up: encoding raises
    batcher = QueryBatcher(cold, max_batch=4, runs_at_once=1)
    errors: list[BaseException] = []

    def ask(question: str) -> None:
        try:
            batcher.embed_queries([question])
        except RuntimeError as err:
            errors.append(err)

    threads = [threading.Thread(target=ask, args=(q,)) for q in QUESTIONS[:6]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(errors) == 6 and all("warm_up" in str(e) for e in errors)
    batcher.warm_up()
    assert batcher.embed_queries(["P1 ack time"]).shape == (1, cold.spec.dimension)


def test_a_batch_or_run_limit_below_one_is_refused(encoder):
    with pytest.raises(ValueError, match="at least 1"):
        QueryBatcher(encoder, max_batch=0)
    with pytest.raises(ValueError, match="at least 1"):
        QueryBatcher(encoder, runs_at_once=0)
