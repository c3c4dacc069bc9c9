import pytest

from tests.support.chunker import make_chunker


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
