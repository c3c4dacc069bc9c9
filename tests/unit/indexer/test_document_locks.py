import threading

from services.indexer.service import DocumentLocks


def _hold_in_thread(locks: DocumentLocks, document_id: str, release: threading.Event) -> tuple:
    """A thread that holds the document's lock until `release` is set; (thread, event set once it holds it)."""
    held = threading.Event()

    def run():
        with locks.hold("t", document_id):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, held


def test_a_document_waits_only_for_writes_of_itself():
    locks = DocumentLocks()
    release = threading.Event()
    first, first_holds = _hold_in_thread(locks, "manual.md", release)
    assert first_holds.wait(5)
    # Any other document goes ahead while the first is held (with striped locks one in 64 waited).
    others = [_hold_in_thread(locks, f"doc-{n}.md", release) for n in range(200)]
    for _, holds in others:
        assert holds.wait(5)
    # The same document waits until the first write is done.
    same, same_holds = _hold_in_thread(locks, "manual.md", release)
    assert not same_holds.wait(0.3)
    release.set()
    assert same_holds.wait(5)
    for thread, _ in [(first, None), (same, None), *others]:
        thread.join(5)
    assert len(locks) == 0


def test_locks_are_dropped_once_no_one_holds_or_waits():
    locks = DocumentLocks()
    for _ in range(3):
        with locks.hold("t", "a"), locks.hold("t", "b"):
            assert len(locks) == 2
    assert len(locks) == 0
