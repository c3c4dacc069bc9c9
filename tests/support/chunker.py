"""A warmed-up chunker with the tests' model."""

from services.chunker.service import DocumentChunker
from tests.support.models import MODEL


def make_chunker(**kwargs) -> DocumentChunker:
    chunker = DocumentChunker(MODEL, **kwargs)
    chunker.warm_up()
    return chunker
