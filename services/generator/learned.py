"""The extractive generators that a trained model decides for: the answer selector (extractive-v2, a learned score
per unit) and the support reader (extractive-v3, a cross-encoder over every unit). Both quote units as the coverage
rule does (services/generator/extractive.py) and abstain below their card's calibrated threshold."""

import logging

from services.generator import reading, selection, support
from services.generator.base import empty_question
from services.generator.quoting import below_threshold, quoted_answer
from shared.model import Answer, ScoredChunk
from shared.text import content_terms, names_nothing

log = logging.getLogger("ragmesh.generator")


class SelectingGenerator:
    """Answers with the units a learned selector scores highest, when the best clears its threshold."""

    def __init__(self, card_path: str, max_units: int = 3):
        self.card_path = card_path
        self.max_units = max_units
        self.card: selection.SelectorCard | None = None
        self.generator_id = "extractive-v2"

    def warm_up(self) -> None:
        self.card = selection.SelectorCard.load(self.card_path)
        self.generator_id = f"extractive-v2/{self.card.model_id}"
        log.info("answer selector %s (threshold %.4f) from %s", self.card.model_id, self.card.threshold, self.card_path)

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        wanted = content_terms(query)
        if names_nothing(wanted):
            return empty_question(self.generator_id)
        if self.card is None:
            raise RuntimeError(f"{self.card_path}: the selector is not loaded (warm_up() first)")
        card = self.card
        units = selection.candidates(query, passages)
        chosen, probability = card.decide(units, self.max_units)
        if not chosen:
            return below_threshold(query, wanted, passages, probability, card.threshold, self.generator_id)
        picked = [(passages[units[i].passage], units[i].start, units[i].end) for i in chosen]
        return quoted_answer(picked, self.generator_id)


class ReadingGenerator:
    """Answers with the units the support reader (a cross-encoder) finds best supported, when one calibrated
    probability over the reader's and the passages' evidence clears the card's threshold."""

    def __init__(self, card_path: str, max_units: int = 3, threads: int = 2):
        self.card_path, self.max_units, self.threads = card_path, max_units, threads
        self.card: reading.ReaderCard | None = None
        self.reader: support.SupportReader | None = None
        self.generator_id = "extractive-v3"

    def warm_up(self) -> None:
        card = reading.ReaderCard.load(self.card_path)
        folder = support.resolve(card.reader)
        if folder is None:
            raise RuntimeError(
                f"{self.card_path}: support reader {card.reader!r} is not in {support.cache_root()}; "
                "train it with `make support-reader`"
            )
        reader = support.SupportReader(folder, self.threads)
        if reader.model_id != card.reader_model_id:
            raise RuntimeError(
                f"{self.card_path} was fitted on reader {card.reader_model_id}, but {folder} holds "
                f"{reader.model_id}; refit the card with `ragmesh fit-reader-decision`"
            )
        reader.warm_up()
        self.card, self.reader = card, reader
        self.generator_id = f"extractive-v3/{card.model_id}"
        log.info("answer decision %s (threshold %.4f) over %s", card.model_id, card.threshold, reader.model_id)

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        if names_nothing(content_terms(query)):
            return empty_question(self.generator_id)
        if self.card is None or self.reader is None:
            raise RuntimeError(f"{self.card_path}: the reader is not loaded (warm_up() first)")
        units = selection.candidates(query, passages)
        scores = self.reader.score(query, [u.text for u in units])  # one batch: every unit of the context
        chosen, probability = self.card.decide(units, scores, self.max_units)
        if not chosen:
            return below_threshold(
                query, content_terms(query), passages, probability, self.card.threshold, self.generator_id
            )
        return quoted_answer(
            [(passages[units[i].passage], units[i].start, units[i].end) for i in chosen], self.generator_id
        )
