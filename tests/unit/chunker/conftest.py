import pytest

from services.chunker.service import DocumentChunker
from tests.conftest import MODEL


def make_chunker(**kwargs) -> DocumentChunker:
    chunker = DocumentChunker(MODEL, **kwargs)
    chunker.warm_up()
    return chunker


@pytest.fixture(scope="session")
def chunker():
    return make_chunker()


@pytest.fixture(scope="session")
def small_chunker():
    """A 64-token budget makes short generated documents exercise every splitting path."""
    return make_chunker(max_tokens=64)


@pytest.fixture(scope="session")
def fixed_chunker():
    return make_chunker(strategy="fixed")
