"""Every notebook under notebooks/ (jupytext percent format) runs as a Jupyter notebook to the
end at its built-in small sizes and writes its figure.

Each ``notebooks/*.py`` is read by jupytext into an nbformat notebook and executed by nbclient
in a fresh IPython kernel.  The kernel is this interpreter (``sys.executable``): a kernelspec
pointing at it is written to a temporary directory put first on ``JUPYTER_PATH``, so no
``ipykernel install`` is needed and a kernel of another environment is never picked up.
"""
import json
import os
import re
import sys
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "_ext"))
import freeprob_docs  # noqa: E402  (the recorded tutorial outputs)

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))
KERNEL = "freeprob-notebook-test"
CELL_TIMEOUT = 600          # seconds per cell (the notebooks take < 60 s each)


def test_notebooks_exist():
    names = {p.stem for p in NOTEBOOKS}
    assert len(NOTEBOOKS) >= 8
    assert {"quickstart", "new_law", "paper_table"} <= names


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A kernelspec for this interpreter with the notebooks' environment, on JUPYTER_PATH."""
    out = tmp_path / "out"
    out.mkdir()
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    env = {"MPLBACKEND": "Agg", "FREEPROB_NOTEBOOK_OUT": str(out), "OPENBLAS_NUM_THREADS": "1",
           "PYTHONWARNINGS": os.environ.get("PYTHONWARNINGS", "")}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "freeprob tests", "language": "python", "env": env}))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(
        [str(tmp_path / "jupyter")] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]))
    # nbclient itself does not need a user config/runtime dir; keep them out of $HOME
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, kernel_env):
    head = path.read_text(encoding="utf-8").splitlines()[:6]
    assert "format_name: percent" in "\n".join(head), "not a jupytext percent notebook"
    nb = jupytext.read(path, fmt="py:percent")
    assert any(c.cell_type == "markdown" for c in nb.cells) and any(c.cell_type == "code" for c in nb.cells)
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(kernel_env)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:       # the traceback of the failing cell
        pytest.fail(f"{path.name}: {str(exc)[-4000:]}")
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "Traceback" not in outputs
    pngs = list(kernel_env.glob("*.png"))
    assert pngs, f"{path.name} wrote no figure to FREEPROB_NOTEBOOK_OUT"
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    if path.stem in freeprob_docs.RECORDED:      # the docs show recorded outputs: still what it prints
        recorded = nbformat.read(freeprob_docs.OUTPUTS / f"{path.stem}.ipynb", as_version=4)
        got = [_text(c, kernel_env) for c in nb.cells if c.cell_type == "code"]
        want = [_text(c, None) for c in recorded.cells if c.cell_type == "code"]
        assert len(got) == len(want) and all(_same_printout(a, b) for a, b in zip(got, want)), \
            f"{path.name} prints other outputs than docs/tutorials/outputs/{path.stem}.ipynb records: run " \
            f"`python docs/_ext/freeprob_docs.py record {path.stem}`"


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ELAPSED = re.compile(r"\(\d+(?:\.\d+)? ?s\)")      # "(4.3s)", "(20.1 s)": wall time of a step


def _text(cell, out):
    """The printed text of a code cell, the figure folder written as the recording writes it."""
    text = "".join(o.get("text", "") for o in cell.get("outputs", []))
    return text.replace(str(out) + "/", "") if out is not None else text


def _ulp(token):
    """One unit in the last printed digit of a number token."""
    mant, _, exp = token.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10.0 ** (int(exp or 0) - decimals)


def _same_printout(a, b):
    """Equal texts, numbers allowed to differ by one unit in their last printed digit (a float
    rounding the other way on another BLAS); elapsed times such as "(4.3 s)" are not compared."""
    a, b = _ELAPSED.sub("(elapsed)", a), _ELAPSED.sub("(elapsed)", b)
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    return all(x == y or abs(float(x) - float(y)) <= 1.01 * max(_ulp(x), _ulp(y))
               for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)))


def test_kernel_is_this_interpreter(kernel_env):
    """The kernelspec used above starts ``sys.executable``, with the notebooks' environment."""
    nb = jupytext.reads("# %%\nimport os, sys\nprint(sys.executable)\nprint(os.environ['MPLBACKEND'])\n",
                        fmt="py:percent")
    nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=120).execute()
    text = nb.cells[0].outputs[0]["text"].split()
    assert Path(text[0]).resolve() == Path(sys.executable).resolve()
    assert text[1] == "Agg"
