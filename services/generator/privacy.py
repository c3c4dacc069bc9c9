"""Strict privacy in front of a generator backend that sends text out of the process (`openai`): the question
and the passages reach it with names, e-mail addresses and phone numbers replaced by the tenant's stable
pseudonyms (shared/privacy.py), and the answer and its quotes come back with the originals restored, so
the caller, and the gateway's citation check, see the real text."""

import dataclasses

from services.generator.base import Generator
from shared.model import Answer, ScoredChunk
from shared.privacy import Pseudonymiser, restore


class PseudonymisingGenerator:
    def __init__(self, inner: Generator, pseudonymiser: Pseudonymiser):
        self.inner = inner
        self.pseudonymiser = pseudonymiser

    @property
    def generator_id(self) -> str:
        return self.inner.generator_id

    @property
    def backend(self):  # the provider name on spans is the inner backend's
        return getattr(self.inner, "backend", None)

    def warm_up(self) -> None:
        self.pseudonymiser.warm_up()
        self.inner.warm_up()

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        tenant = passages[0].chunk.meta.tenant_id if passages else ""
        if not tenant:  # nothing to answer from: the inner generator abstains without text leaving
            return self.inner.run(query, passages)
        texts = [query]
        for p in passages:
            texts += [p.chunk.body, p.chunk.section_text, p.chunk.meta.title, *p.chunk.heading_path]
        masked, reverse = self.pseudonymiser.pseudonymise(tenant, texts)
        it = iter(masked[1:])
        hidden = []
        for p in passages:
            body, section, title = next(it), next(it), next(it)
            headings = [next(it) for _ in p.chunk.heading_path]
            meta = dataclasses.replace(p.chunk.meta, title=title)
            chunk = dataclasses.replace(p.chunk, body=body, section_text=section, heading_path=headings, meta=meta)
            hidden.append(dataclasses.replace(p, chunk=chunk))
        answer = self.inner.run(masked[0], hidden)
        originals = {p.chunk.chunk_id: p.chunk for p in passages}
        citations = []
        for c in answer.citations:
            quote = restore(c.quote, reverse)
            cited = originals.get(c.chunk_id)
            start, end = c.char_start, c.char_end
            at = cited.body.find(quote) if cited and quote else -1
            if cited is not None and at >= 0:  # offsets into the original text, not the pseudonymised one
                start, end = cited.char_start + at, cited.char_start + at + len(quote)
            headings = [restore(h, reverse) for h in c.heading_path]
            citations.append(dataclasses.replace(c, quote=quote, char_start=start, char_end=end, heading_path=headings))
        return dataclasses.replace(
            answer, text=restore(answer.text, reverse), missing=restore(answer.missing, reverse), citations=citations
        )
