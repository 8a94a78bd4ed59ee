"""Every notebook under notebooks/ (jupytext percent format) runs as a Jupyter notebook to the
end at its built-in small sizes and writes its figure.

Each ``notebooks/*.py`` is read by jupytext into an nbformat notebook and executed by nbclient
in an IPython kernel.  The kernel is this interpreter (``sys.executable``): a kernelspec
pointing at it is written to a temporary directory put first on ``JUPYTER_PATH``, so no
``ipykernel install`` is needed and a kernel of another environment is never picked up.

The notebooks share one kernel (started once per module: a kernel's start and freeprob's
imports cost about 1.5 s of CPU each time, and the laws the notebooks have in common are
cached across them, as in the test process itself).  Before each notebook the kernel's
namespace is cleared (``%reset -f``), its figures closed, and its working directory and
``FREEPROB_NOTEBOOK_OUT`` set to a folder of that notebook's own, so that a notebook that
used a name another one defined, or wrote no figure, still fails.
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


def _kernelspec(root, out):
    """A kernelspec for this interpreter with the notebooks' environment under ``root``."""
    spec = root / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    env = {"MPLBACKEND": "Agg", "FREEPROB_NOTEBOOK_OUT": str(out), "OPENBLAS_NUM_THREADS": "1",
           "PYTHONWARNINGS": os.environ.get("PYTHONWARNINGS", "")}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "freeprob tests", "language": "python", "env": env}))


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """The kernelspec on JUPYTER_PATH (nbclient's user config/runtime dirs kept out of
    $HOME), and the one kernel manager the notebooks share (its kernel started by the first
    notebook, in ``root``; shut down at the end)."""
    root = tmp_path_factory.mktemp("notebooks")
    _kernelspec(root, root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", os.pathsep.join(
            [str(root / "jupyter")] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]))
        mp.setenv("JUPYTER_RUNTIME_DIR", str(root / "runtime"))
        mp.setenv("JUPYTER_CONFIG_DIR", str(root / "config"))
        mp.setenv("IPYTHONDIR", str(root / "ipython"))
        km = nbclient.NotebookClient(nbformat.v4.new_notebook(), kernel_name=KERNEL).create_kernel_manager()
        yield root, km
        if km.has_kernel:
            from jupyter_core.utils import run_sync
            run_sync(km.shutdown_kernel)(now=True)


def _fresh(out):
    """The cell run before each notebook in the shared kernel (not part of its outputs)."""
    return nbformat.v4.new_code_cell(
        "%reset -f\n"
        "__spec__ = None\n"          # (reset removes it; multiprocessing's spawn reads it: Dask's workers)
        "import os as _os, matplotlib.pyplot as _plt\n"
        f"_plt.close('all'); _os.environ['FREEPROB_NOTEBOOK_OUT'] = {str(out)!r}; _os.chdir({str(out)!r})\n"
        "del _os, _plt")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, kernel_env):
    root, km = kernel_env
    out = root / path.stem
    out.mkdir()
    head = path.read_text(encoding="utf-8").splitlines()[:6]
    assert "format_name: percent" in "\n".join(head), "not a jupytext percent notebook"
    nb = jupytext.read(path, fmt="py:percent")
    assert any(c.cell_type == "markdown" for c in nb.cells) and any(c.cell_type == "code" for c in nb.cells)
    nb.cells.insert(0, _fresh(out))
    client = nbclient.NotebookClient(nb, km=km, kernel_name=KERNEL, timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(root)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:       # the traceback of the failing cell
        pytest.fail(f"{path.name}: {str(exc)[-4000:]}")
    finally:
        del nb.cells[0]
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "Traceback" not in outputs
    pngs = list(out.glob("*.png"))
    assert pngs, f"{path.name} wrote no figure to FREEPROB_NOTEBOOK_OUT"
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    if path.stem in freeprob_docs.RECORDED:      # the docs show recorded outputs: still what it prints
        recorded = nbformat.read(freeprob_docs.OUTPUTS / f"{path.stem}.ipynb", as_version=4)
        got = [_text(c, out) for c in nb.cells if c.cell_type == "code"]
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


def test_a_notebook_starts_from_a_cleared_namespace(kernel_env):
    """In the shared kernel a notebook does not see the names of the one before."""
    root, km = kernel_env
    for k, src in enumerate(("# %%\nleft_over = 1\n", "# %%\nprint('left_over' in dir())\n")):
        nb = jupytext.reads(src, fmt="py:percent")
        out = root / f"fresh{k}"
        out.mkdir()
        nb.cells.insert(0, _fresh(out))
        nbclient.NotebookClient(nb, km=km, kernel_name=KERNEL, timeout=120,
                                resources={"metadata": {"path": str(root)}}).execute()
    assert nb.cells[1].outputs[0]["text"] == "False\n"
