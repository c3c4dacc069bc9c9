"""Front matter is YAML, read fail-closed: nothing a writer states is silently dropped or misread."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.chunker.frontmatter import split_front_matter
from services.chunker.parsing import content_type_for
from shared.errors import InvalidArgument
from shared.model import DocumentMeta
from tests.support.chunker import make_chunker

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BODY = "# Salaries\n\nThe engineering bands are confidential.\n"


def doc(front: str) -> bytes:
    return f"---\n{front.strip(chr(10))}\n---\n{BODY}".encode()


def run(chunker, content: bytes, uri="hr/salaries.md", **meta):
    fields = {"document_id": "", "version": "", "access_scopes": [], **meta}
    return chunker.run(content, DocumentMeta(tenant_id="t", source_uri=uri, **fields))


@pytest.mark.parametrize(
    "front, scopes",
    [
        ("access_scopes:\n  - hr-confidential\n  - finance", ["hr-confidential", "finance"]),  # block list
        ("access_scopes: [hr, finance]", ["hr", "finance"]),  # flow list
        ("access_scopes: ['hr', \"finance\"]", ["hr", "finance"]),  # quoted items
        ('access_scopes: "hr-confidential"', ["hr-confidential"]),  # a quoted single scope
        ("access_scopes: public, finance", ["public", "finance"]),  # the comma form examples/ always used
        ("access_scopes: [hr, hr]", ["hr"]),
    ],
)
def test_scope_lists_in_every_yaml_style(chunker, front, scopes):
    meta, _ = run(chunker, doc(f"doc_id: hr/salaries\n{front}"))
    assert meta.access_scopes == scopes


def test_quoted_strings_and_dates(chunker):
    meta, _ = run(
        chunker,
        doc(
            'doc_id: "hr/salaries"\ntitle: \'Salary: bands\'\nversion: "1.10"\n'
            "effective_from: 2025-04-01\neffective_to: '2026-04-01T00:00:00Z'\n"
            "access_scopes: [hr]"
        ),
    )
    assert (meta.document_id, meta.title, meta.version) == ("hr/salaries", "Salary: bands", "1.10")
    assert (meta.effective_from, meta.effective_to) == ("2025-04-01", "2026-04-01T00:00:00Z")


def test_versions_keep_the_text_written_not_a_yaml_number(chunker):
    meta, _ = run(chunker, doc("version: 1.10\naccess_scopes: [hr]"))
    assert meta.version == "1.10"


# Every way a governance key can be present but unusable: (front matter, the key the error names).
UNUSABLE = [
    ("access_scopes:", "access_scopes"),  # empty
    ("access_scopes: []", "access_scopes"),  # empty list
    ("access_scopes: ''", "access_scopes"),
    ("access_scopes: null", "access_scopes"),
    ("access_scopes:\n  -", "access_scopes"),  # a list holding nothing
    ("access_scopes: [[hr]]", "access_scopes"),  # non-string item
    ("access_scopes: {hr: true}", "access_scopes"),  # a mapping
    ("access_scopes: hr, ", "access_scopes"),  # a trailing empty name
    ("access_scopes: '[hr'", "access_scopes"),  # what the old reader made of a flow list
    ("acess_scopes: [hr]", "acess_scopes"),  # misspelled
    ("access_scope: hr", "access_scope"),  # singular
    ("Access-Scopes: hr", "Access-Scopes"),
    ("access_scopes: hr\naccess_scopes: public", "access_scopes"),  # stated twice
    ("access_scopes: [hr", "front_matter"),  # not YAML
    ("access_scopes hr-confidential", "front_matter"),  # no colon: a scalar, not a mapping
    ("access_scopes: [hr]\neffective_from: 2025-13-01", "effective_from"),  # unparseable date
    ("access_scopes: [hr]\neffective_from: next monday", "effective_from"),
    ("access_scopes: [hr]\neffective_from:", "effective_from"),
    ("access_scopes: [hr]\neffective_from: 2026-01-01\neffective_to: 2025-01-01", "effective_to"),  # before
    ("access_scopes: [hr]\neffectve_to: 2025-01-01", "effectve_to"),
    ("access_scopes: [hr]\ndoc_id: [a, b]", "doc_id"),
    ("access_scopes: [hr]\ndoc_id:", "doc_id"),
    ("access_scopes: [hr]\nversion:", "version"),
]


@pytest.mark.parametrize("front, key", UNUSABLE)
def test_unusable_governance_refuses_the_document_naming_it_and_the_key(chunker, front, key):
    with pytest.raises(InvalidArgument) as err:
        run(chunker, doc(front))
    assert key in err.value.field and "hr/salaries.md" in err.value.message


def test_a_misspelling_says_what_was_meant(chunker):
    with pytest.raises(InvalidArgument, match="did you mean 'access_scopes'"):
        run(chunker, doc("acess_scopes: [hr]"))


def test_unrelated_keys_are_ignored(chunker):
    meta, _ = run(chunker, doc("author: Jane\ntags: [pay]\naccess_scopes: [hr]"))
    assert meta.access_scopes == ["hr"]


def test_no_document_is_public_by_accident(chunker):
    """Every attempt to state a non-public scope, well or badly written, either files the document
    under exactly the scopes meant or refuses it; none ends up readable as public."""
    attempts = [front for front, _ in UNUSABLE] + [
        "access_scopes:\n  - hr-confidential",
        "access_scopes: [hr-confidential]",
        "access_scopes: 'hr-confidential'",
        "access_scopes:\n- hr-confidential\neffective_from: '2025-01-01'",
        "ACCESS_SCOPES: hr-confidential",
        "access_scopes: !!str hr-confidential",
    ]
    for front in attempts:
        try:
            meta, chunks = run(chunker, doc(front))
        except InvalidArgument:
            continue
        assert "public" not in meta.access_scopes, front
        assert all("public" not in c.meta.access_scopes for c in chunks), front


@pytest.mark.parametrize(
    "frame",
    [
        "---\n{front}\n---\n",
        "\n\n---\n{front}\n---\n",  # blank lines first: it was read as text, and the document filed public
        "---\n{front}\n...\n",  # YAML's end marker (Pandoc): the same
        "---\r\n{front}\r\n---\r\n",
        "\ufeff---\n{front}\n---\n",
        "--- \n{front}\n---\t\n",
        "---\n{front}\n",  # never closed: the same, with the key shown as text
        "+++\n{front}\n+++\n",  # Hugo's TOML fences: the same
    ],
)
def test_however_front_matter_is_fenced_a_scoped_document_is_never_public(chunker, frame):
    content = (frame.format(front="access_scopes: [hr]") + BODY).encode()
    try:
        meta, chunks = run(chunker, content)
    except InvalidArgument as err:
        assert "closes" in err.message or "TOML" in err.message  # refused, saying why
        return
    assert meta.access_scopes == ["hr"] and all(c.meta.access_scopes == ["hr"] for c in chunks)
    assert not any("access_scopes" in c.body for c in chunks)


@pytest.mark.parametrize("key", ["scopes", "scope", "Access", "acl", "visibility", "audience", "allowed-groups"])
def test_a_key_other_tools_use_for_access_refuses_a_document_without_access_scopes(chunker, key):
    """`scopes: [hr]` was ignored as unknown, and the document filed public."""
    with pytest.raises(InvalidArgument, match="reads like access control") as err:
        run(chunker, doc(f"{key}: [hr]"))
    assert err.value.field == f"front_matter.{key}"
    meta, _ = run(chunker, doc(f"{key}: developers\naccess_scopes: public"))  # stated: the other key is metadata
    assert meta.access_scopes == ["public"]
    meta, _ = run(chunker, doc(f"{key}: developers"), access_scopes=["support"])  # given by the caller: the same
    assert meta.access_scopes == ["support"]


@pytest.mark.parametrize(
    "front, path",
    [
        ("governance:\n  access_scopes: [hr]", "governance.access_scopes"),
        ("params:\n  scopes: hr\ntitle: Salaries", "params.scopes"),
        ("meta:\n  - visibility: internal", "meta.0.visibility"),
    ],
)
def test_access_stated_below_the_top_level_refuses_the_document(chunker, front, path):
    """`params: {access_scopes: [hr]}` (Hugo nests its own keys so) was read as an unknown key: public."""
    with pytest.raises(InvalidArgument, match="top-level 'access_scopes'") as err:
        run(chunker, doc(front))
    assert err.value.field == f"front_matter.{path}"


def test_ordinary_metadata_keys_are_still_ignored(chunker):
    meta, _ = run(chunker, doc("tags: [billing]\ncategory: policies\nauthor: Ines"))
    assert meta.access_scopes == ["public"]


def test_a_document_may_start_with_empty_front_matter(chunker):
    meta, chunks = run(chunker, ("---\n---\n" + BODY).encode())
    assert meta.access_scopes == ["public"] and chunks[0].body.startswith("# Salaries")


def test_caller_supplied_metadata_is_checked_too(chunker):
    with pytest.raises(InvalidArgument, match="document.meta.access_scopes"):
        run(chunker, doc("doc_id: x"), access_scopes=[" "])
    with pytest.raises(InvalidArgument, match="document.meta.effective_from"):
        run(chunker, doc("doc_id: x"), effective_from="soon")


def test_no_scope_key_is_public_by_default_and_refused_when_the_deployment_says_so(chunker):
    meta, _ = run(chunker, doc("doc_id: x"))
    assert meta.access_scopes == ["public"]
    strict = make_chunker(missing_scopes="refuse")
    with pytest.raises(InvalidArgument, match="states no access scopes"):
        run(strict, doc("doc_id: x"))
    with pytest.raises(InvalidArgument, match="states no access scopes"):
        run(strict, BODY.encode())  # no front matter at all
    assert run(strict, doc("access_scopes: public"))[0].access_scopes == ["public"]


def _legacy_fields(text: str) -> dict[str, str]:
    """The line-based reader front matter had before YAML, kept here to prove examples/ reads the same."""
    match = re.match(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", text, re.DOTALL)
    fields = {}
    for line in match.group(1).splitlines() if match else []:
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in (
            "doc_id",
            "title",
            "version",
            "effective_from",
            "effective_to",
            "access_scopes",
            "content_type",
        ):
            fields[key.strip().lower()] = value.strip()
    return fields


def test_examples_front_matter_reads_as_it_always_did(chunker):
    checked = 0
    for path in sorted(EXAMPLES.rglob("*")):
        if content_type_for("", path.name) not in ("text/markdown", "text/plain"):
            continue
        text = path.read_text()
        legacy = _legacy_fields(text)
        fields = split_front_matter(text, path.name).fields
        assert {k: str(v) for k, v in fields.items()} == legacy, path
        meta, _ = run(chunker, path.read_bytes(), uri=path.relative_to(EXAMPLES).as_posix())
        legacy_scopes = [s.strip() for s in legacy.get("access_scopes", "").split(",") if s.strip()] or ["public"]
        assert meta.access_scopes == legacy_scopes, path
        assert (meta.document_id, meta.version) == (legacy.get("doc_id", meta.document_id), legacy.get("version", "1"))
        checked += 1
    assert checked >= 20


_scope = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True).filter(lambda s: s != "public")
_letters = "abcdefghijklmnopqrstuvwxyz_-"


@st.composite
def _scope_key(draw):
    """`access_scopes` as written, in another case, or with one typo (deleted, doubled, swapped or wrong letter)."""
    key = draw(st.sampled_from(["access_scopes", "ACCESS_SCOPES", "Access_Scopes"]))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(key) - 1))
        edit = draw(st.sampled_from(["delete", "double", "swap", "replace"]))
        if edit == "delete":
            key = key[:i] + key[i + 1 :]
        elif edit == "double":
            key = key[:i] + key[i] + key[i:]
        elif edit == "swap" and i + 1 < len(key):
            key = key[:i] + key[i + 1] + key[i] + key[i + 2 :]
        else:
            key = key[:i] + draw(st.sampled_from(_letters)) + key[i + 1 :]
    return key


@st.composite
def _scope_value(draw):
    scopes = draw(st.lists(_scope, max_size=3))
    style = draw(st.sampled_from(["block", "flow", "quoted-flow", "comma", "single-quoted", "nested", "null"]))
    if style == "block":
        return "".join(f"\n  - {s}" for s in scopes)
    if style == "flow":
        return " [" + ", ".join(scopes) + "]"
    if style == "quoted-flow":
        return " [" + ", ".join(f'"{s}"' for s in scopes) + "]"
    if style == "comma":
        return " " + ", ".join(scopes)
    if style == "single-quoted":
        return f" '{', '.join(scopes)}'"
    if style == "nested":
        return f" [[{', '.join(scopes)}]]"
    return " null"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=_scope_key(),
    value=_scope_value(),
    extra=st.sampled_from(["", "effective_from: 2025-01-01\n", "effective_from: 2025-99-01\n", "title: x\n"]),
)
def test_generated_attempts_to_scope_a_document_never_make_it_public(chunker, key, value, extra):
    try:
        meta, _ = run(chunker, doc(f"{extra}{key}:{value}"))
    except InvalidArgument:
        return
    assert meta.access_scopes and "public" not in meta.access_scopes


THREAD = [
    {"from": "Ana <ana@x.example>", "date": "2025-03-01", "body": "The export fails with E-2410."},
    {"from": "Support <s@y.example>", "date": "2025-03-02", "body": "Internal: the customer owes two invoices."},
]


def test_a_json_thread_states_governance_as_front_matter_does(chunker):
    thread = {"doc_id": "tickets/20001", "version": "2", "access_scopes": ["support"], "messages": THREAD}
    meta, _ = run(chunker, json.dumps(thread).encode(), uri="t.json")
    assert (meta.document_id, meta.version, meta.access_scopes) == ("tickets/20001", "2", ["support"])


def test_an_internal_note_refuses_a_thread_nobody_gave_scopes(chunker):
    """A help desk marks internal notes `public: false`: the thread was filed public, notes and all."""
    internal = [THREAD[0], {**THREAD[1], "public": False}]
    with pytest.raises(InvalidArgument, match="reads like access control") as err:
        run(chunker, json.dumps(internal).encode(), uri="t.json")
    assert err.value.field == "front_matter.1.public"
    meta, _ = run(chunker, json.dumps(internal).encode(), uri="t.json", access_scopes=["support"])
    assert meta.access_scopes == ["support"]
    meta, _ = run(chunker, json.dumps(THREAD).encode(), uri="t.json")  # nothing said about access: as before
    assert meta.access_scopes == ["public"]
