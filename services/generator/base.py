"""The contract every generator meets (extractive, trained selector, LLM behind llama.cpp or an
OpenAI-compatible endpoint)."""

from typing import Protocol

from shared.model import Answer, ScoredChunk


class Generator(Protocol):
    @property
    def generator_id(self) -> str:
        """What produced the answer (reported with it and on the generate span)."""
        ...

    def warm_up(self) -> None:
        """Load models and check endpoints before the server takes requests."""
        ...

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        """An answer quoting or citing only these passages, or an abstention with its reason."""
        ...


def empty_question(generator_id: str) -> Answer:
    """The abstention for a question with nothing to look for (`shared.text.names_nothing`), whichever generator."""
    return Answer(
        "", [], True, missing="a question with content words", reason="empty_question", generator_id=generator_id
    )
