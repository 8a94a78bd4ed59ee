"""The README's Python examples run as written (doctest) and its commands exist."""
import doctest
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_readme_examples_run():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python examples"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README block {i}", "README.md", 0)
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} README example(s) failed"


def test_ci_runs_the_readme_test_command():
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- test-command -->\n```bash\n(.*)\n```", text)
    assert m and "pytest" in m.group(1)
    assert "test-command" in (ROOT / ".ci" / "run").read_text()
