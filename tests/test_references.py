"""One bibliography: :mod:`freeprob.references` defines every reference, docstrings cite
its keys (``[HK26]_``), and the documentation's references page (docs/references.md, the
citation targets Sphinx resolves every ``[KEY]_`` of the API pages against) lists the same
entries; the README links to that page."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from freeprob.references import REFERENCES, cite

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "freeprob"
BIBLIOGRAPHY = PKG / "references.py"
DOC_PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)
#: modules still defining their own ``.. [KEY]`` entries while another change rewrites them;
#: remove each entry as soon as its module cites by key (then the test holds it to that)
PENDING = set()

CITED = re.compile(r"\[([A-Z][A-Z0-9]*)\]_")               # an RST citation, [HK26]_
BARE = re.compile(r"\[([A-Z]+[0-9]{2})\](?!_)")            # a bare key, [NS06] Lecture 12
DEFINED = re.compile(r"^\s*\.\. \[([^\]]+)\]", re.M)      # a citation target, .. [HK26]


def _sources():
    return sorted(PKG.rglob("*.py"))


def _rel(path):
    return path.relative_to(ROOT).as_posix()


def _norm(text):
    return " ".join(text.split())


def _page_entries():
    text = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    m = re.search(r"^```\{eval-rst\}\n(.*?)^```", text, flags=re.M | re.S)
    assert m, "docs/references.md has no eval-rst block of citation targets"
    out = {}
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        e = re.fullmatch(r"\.\. \[([^\]]+)\] (.*)", line)
        assert e, f"docs/references.md: not of the form '.. [KEY] text' on one line: {line!r}"
        assert e.group(1) not in out, f"docs/references.md lists [{e.group(1)}] twice"
        out[e.group(1)] = re.sub(r"^\\([A-Z]\. )", r"\1", e.group(2))   # \T. Hayase: not a list label
    return out


def test_the_bibliography_parses_every_entry_of_its_docstring():
    import freeprob.references as refs
    keys = DEFINED.findall(refs.__doc__)
    assert keys == list(REFERENCES), "REFERENCES does not match the .. [KEY] entries"
    assert len(set(keys)) == len(keys), "a key is defined twice"
    for key, text in REFERENCES.items():
        assert re.fullmatch(r"[A-Z][A-Z0-9]*", key), key
        assert text and text == _norm(text) and not text.startswith("["), (key, text)
        assert cite(key) == text
    with pytest.raises(KeyError):
        cite("NOPE99")


@pytest.mark.parametrize("path", _sources(), ids=_rel)
def test_every_cited_key_is_in_the_bibliography(path):
    text = path.read_text()
    unknown = sorted({k for k in CITED.findall(text) + BARE.findall(text)} - set(REFERENCES))
    assert not unknown, f"{_rel(path)} cites {unknown}, not in freeprob/references.py"


@pytest.mark.parametrize("path", _sources(), ids=_rel)
def test_only_the_bibliography_defines_references(path):
    if path == BIBLIOGRAPHY or _rel(path) in PENDING:
        return
    defined = DEFINED.findall(path.read_text())
    assert not defined, (f"{_rel(path)} defines {defined}: cite them by key "
                         f"(freeprob/references.py holds the entries)")


def test_references_page_lists_exactly_the_bibliography():
    page = _page_entries()
    assert list(page) == list(REFERENCES), "docs/references.md keys (and order) differ"
    for key, text in REFERENCES.items():
        assert page[key] == text, f"[{key}]: docs/references.md {page[key]!r} != {text!r}"


def test_readme_links_to_the_references_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/references.md)" in text
    entries = re.findall(r"^\* \*\*\[([^\]]+)\]\*\*", text, flags=re.M)
    assert not entries, f"README lists references {entries}: the one list is docs/references.md"


@pytest.mark.parametrize("path", DOC_PAGES, ids=_rel)
def test_docs_pages_cite_known_keys(path):
    text = path.read_text(encoding="utf-8")
    unknown = sorted({k for k in CITED.findall(text) + re.findall(r"\[([A-Z]+[0-9]{2})\]", text)}
                     - set(REFERENCES))
    assert not unknown, f"{_rel(path)} cites {unknown}, not in freeprob/references.py"


def test_hayase_karakida_is_one_reference_with_the_right_initials():
    assert REFERENCES["HK26"].startswith("T. Hayase, R. Karakida, ")
    assert "T. Hayase" in REFERENCES["HCK25"]
    drifted = [_rel(p) for p in _sources() + [ROOT / "README.md", *DOC_PAGES]
               if re.search(r"\b[A-SU-Z]\. Hayase", p.read_text())]
    assert not drifted, f"another spelling of T. Hayase in {drifted}"
