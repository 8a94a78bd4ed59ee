"""The Python examples of the README and of every documentation page (``docs/**/*.md``) run
as written (doctest, each block in its own namespace), the README's commands exist, the
README stays a landing page, and the documentation site is wired up (pages, API entries)."""
import doctest
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def _run_blocks(path):
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    name = path.relative_to(ROOT).as_posix()
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"{name} block {i}", name, 0)
        runner.run(test)
    return blocks, runner.failures


def test_readme_examples_run():
    blocks, failures = _run_blocks(ROOT / "README.md")
    assert blocks, "README has no python examples"
    assert failures == 0, f"{failures} README example(s) failed"


@pytest.mark.parametrize("path", [p for p in PAGES if "```python" in p.read_text(encoding="utf-8")],
                         ids=lambda p: p.relative_to(DOCS).as_posix())
def test_docs_examples_run(path):
    blocks, failures = _run_blocks(path)
    assert blocks
    assert failures == 0, f"{failures} example(s) of {path.relative_to(ROOT)} failed"


def test_ci_runs_the_readme_test_command():
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- test-command -->\n```bash\n(.*)\n```", text)
    assert m and "pytest" in m.group(1)
    assert "test-command" in (ROOT / ".ci" / "run").read_text()


def test_readme_is_a_landing_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 20_000
    assert 'pip install ".[all]" && freeprob verify --quick' in text
    assert "sphinx-build -W --keep-going -b html docs docs/_build/html" in text
    assert "sphinx-build -W --keep-going -b html docs " in (ROOT / ".ci" / "run").read_text()
    for link in re.findall(r"\]\(((?:docs|derivations)/[^)#]+)", text):
        assert (ROOT / link).exists(), f"README links to a missing file {link}"


def test_every_page_is_in_a_toctree():
    """Every Markdown page of docs/ is reachable from the index (Sphinx would warn too)."""
    listed = set()
    for page in PAGES:
        for block in re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for entry in block.splitlines():
                if entry.strip() and not entry.startswith(":"):
                    listed.add((page.parent / entry.strip()).relative_to(DOCS).as_posix())
    pages = {p.relative_to(DOCS).with_suffix("").as_posix() for p in PAGES} - {"index"}
    assert pages <= listed, f"pages outside every toctree: {sorted(pages - listed)}"
    assert len(pages) + len(list((ROOT / "notebooks").glob("*.py"))) >= 15


def test_every_public_name_has_one_api_entry():
    """The generated API pages document every name of every public module's ``__all__``
    once, at its home (docs/_ext/freeprob_docs.py), and link there from re-exports."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import freeprob_docs
    finally:
        sys.path.pop(0)
    plan = freeprob_docs.api_plan()
    assert {"freeprob", "freeprob.laws.law", "freeprob.core.series", "freeprob.cli.expr",
            "freeprob.experiments.verify", "freeprob.sampler.spectra"} <= set(plan)
    homes = {}
    for module, entry in plan.items():
        for name, _ in entry["own"]:
            assert f"{module}.{name}" not in homes
            homes[f"{module}.{name}"] = module
    for module, entry in plan.items():
        for name, target in entry["elsewhere"]:
            assert target is None or target in homes, f"{module}.{name} -> {target}: not documented"
            if target is None:
                obj = getattr(__import__(module, fromlist=[name]), name)
                assert not getattr(obj, "__module__", "").startswith("freeprob"), (module, name)
    assert "freeprob.laws.law.Law" in homes and "freeprob.laws.families.Semicircle" in homes
