"""One bibliography: :mod:`freeprob.references` defines every reference, docstrings cite
its keys (``[HK26]_``), and the README's "References" section lists the same entries."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from freeprob.references import REFERENCES, cite

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "freeprob"
BIBLIOGRAPHY = PKG / "references.py"
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


def _readme_entries():
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## References\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, "README has no '## References' section"
    entries, current = [], None
    for line in m.group(1).splitlines():
        if line.startswith("* "):
            current = [line[2:]]
            entries.append(current)
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line)
        else:
            current = None
    out = {}
    for lines in entries:
        e = re.fullmatch(r"\*\*\[([^\]]+)\]\*\*\s+(.*)", _norm(" ".join(lines)))
        assert e, f"README reference entry not of the form '* **[KEY]** text': {lines[0]!r}"
        assert e.group(1) not in out, f"README lists [{e.group(1)}] twice"
        out[e.group(1)] = e.group(2)
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


def test_readme_lists_exactly_the_bibliography():
    readme = _readme_entries()
    assert list(readme) == list(REFERENCES), "README References keys (and order) differ"
    for key, text in REFERENCES.items():
        assert readme[key] == text, f"[{key}]: README {readme[key]!r} != {text!r}"


def test_hayase_karakida_is_one_reference_with_the_right_initials():
    assert REFERENCES["HK26"].startswith("T. Hayase, R. Karakida, ")
    assert "T. Hayase" in REFERENCES["HCK25"]
    drifted = [_rel(p) for p in _sources() + [ROOT / "README.md"]
               if re.search(r"\b[A-SU-Z]\. Hayase", p.read_text())]
    assert not drifted, f"another spelling of T. Hayase in {drifted}"
