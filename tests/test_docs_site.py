"""The documentation site works offline: MathJax is served from the site itself (issue 26).

The real build is checked by ``.ci/run`` (``python docs/_ext/freeprob_docs.py offline DIR``
after ``sphinx-build``); here a one-page site built with the same setup
(:func:`freeprob_docs.use_local_mathjax`) loads nothing from another host, and the checker
itself finds a CDN script, a remote stylesheet and a CSS import.
"""
import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import freeprob_docs  # noqa: E402


def test_remote_assets_finds_what_a_page_would_fetch(tmp_path):
    (tmp_path / "a.html").write_text(
        '<script defer src="https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/x.css">'
        '<link rel="canonical" href="https://example.org/a.html">'       # not loaded
        '<a href="https://www.sqlite.org/wal.html">wal</a>'               # a link, not a load
        '<script src="_static/local.js"></script>', encoding="utf-8")
    (tmp_path / "s.css").write_text('@import "https://fonts.example.org/f.css"; b {background: url(x.png)}',
                                    encoding="utf-8")
    assert freeprob_docs.remote_assets(tmp_path) == [
        ("a.html", "https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js"),
        ("a.html", "//fonts.example.org/x.css"),
        ("s.css", "https://fonts.example.org/f.css")]


def test_a_page_with_math_loads_mathjax_from_the_site(tmp_path):
    pytest.importorskip("sphinx")
    try:
        freeprob_docs.mathjax_root()
    except RuntimeError as exc:                 # the docs extra is not installed
        pytest.skip(str(exc))
    from sphinx.cmd.build import build_main
    src, out = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\nimport freeprob_docs\n"
        "extensions = ['sphinx.ext.mathjax']\n"
        f"def setup(app):\n    freeprob_docs.use_local_mathjax(app, {str(tmp_path / 'tmp')!r})\n",
        encoding="utf-8")
    (src / "index.rst").write_text("Math\n====\n\n:math:`\\int_0^1 x^2\\,dx = 1/3`\n", encoding="utf-8")
    assert build_main(["-W", "-q", "-b", "html", str(src), str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert re.search(rf'<script[^>]* src="_static/{re.escape(freeprob_docs.MATHJAX_PATH)}(\?[^"/]*)?"', page)
    assert freeprob_docs.remote_assets(out) == []
    mj = out / "_static" / "mathjax"
    assert (mj / "tex-mml-chtml.js").stat().st_size > 500_000          # the real MathJax, not a stub
    assert list((mj / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert "Apache License" in (mj / "LICENSE").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", freeprob_docs.RECORDED)
def test_recorded_tutorial_outputs_are_current(name):
    """Issue 26: the five readout tutorials rendered without outputs.  They are shown with
    outputs recorded by ``python docs/_ext/freeprob_docs.py record`` (too slow to run at every
    build); the recording is of the current source (its SHA-256 stamp and its code cells) and
    every code cell that prints has its output, none an error.  That the outputs are those the
    current library prints is checked where the notebooks run (tests/test_notebooks.py)."""
    jupytext = pytest.importorskip("jupytext")
    nbformat = pytest.importorskip("nbformat")
    assert freeprob_docs.recorded_state(name) == "current", \
        f"notebooks/{name}.py changed: run `python docs/_ext/freeprob_docs.py record {name}`"
    recorded = nbformat.read(freeprob_docs.OUTPUTS / f"{name}.ipynb", as_version=4)
    source = jupytext.read(freeprob_docs.ROOT / "notebooks" / f"{name}.py", fmt="py:percent")
    code = [c for c in recorded.cells if c.cell_type == "code"]
    assert [c.source for c in code] == [c.source for c in source.cells if c.cell_type == "code"]
    for cell in code:
        assert all(o.output_type != "error" for o in cell.outputs)
        text = "".join(o.get("text", "") for o in cell.outputs)
        if "print(" in cell.source:
            assert text.strip()
        assert "/tmp" not in text                        # no machine's paths


def test_the_recorded_notebooks_are_the_readout_ones():
    readout = {p.stem for p in (freeprob_docs.ROOT / "notebooks").glob("readout_*.py")}
    assert set(freeprob_docs.RECORDED) == readout


def test_a_stale_recording_warns_and_shows_no_outputs(tmp_path, monkeypatch):
    """The build (conf.py passes Sphinx's logger: a warning, an error under -W) says which
    recording is stale and shows that notebook without outputs rather than old ones."""
    pytest.importorskip("jupytext")
    nbformat = pytest.importorskip("nbformat")
    warnings = []
    freeprob_docs.write_notebooks(tmp_path, warn=warnings.append)
    assert warnings == []
    shown = nbformat.read(tmp_path / "readout_head_count.ipynb", as_version=4)
    assert any(c.get("outputs") for c in shown.cells if c.cell_type == "code")
    monkeypatch.setattr(freeprob_docs, "source_hash", lambda path: "0" * 64)     # every source "changed"
    freeprob_docs.write_notebooks(tmp_path, warn=warnings.append)
    assert len(warnings) == len(freeprob_docs.RECORDED)
    assert "notebooks/readout_head_count.py: its recorded outputs are stale" in " ".join(warnings)
    shown = nbformat.read(tmp_path / "readout_head_count.ipynb", as_version=4)
    assert not any(c.get("outputs") for c in shown.cells if c.cell_type == "code")
