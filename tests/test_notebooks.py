"""Every notebook under notebooks/ (jupytext percent format, so a plain script) runs to the
end at its built-in small sizes and writes its figure."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 5


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    head = path.read_text(encoding="utf-8").splitlines()[:6]
    assert "format_name: percent" in "\n".join(head), "not a jupytext percent notebook"
    env = dict(os.environ, MPLBACKEND="Agg", FREEPROB_NOTEBOOK_OUT=str(tmp_path),
               OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pngs = list(tmp_path.glob("*.png"))
    assert pngs and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
