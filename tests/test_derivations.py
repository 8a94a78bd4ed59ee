"""Run every derivation script in ``derivations/`` (except the shared helpers).

Each script derives a law of the attention paper and ends in assertions that an
independent route gives the same result; a passed check prints a line with ``[ok]``.
A script passes when it runs to its end (or exits with code 0) and printed at least one
``[ok]``.  The scripts run in this process (``runpy``, as ``__main__``, from their folder,
with one BLAS thread): a fresh interpreter per script cost its imports (~2 s of CPU each)
and recomputed exact laws that the rest of the suite has already cached (the head-count
laws of tests/test_comparison_head_count.py depend on the width ratios only).
"""
import pathlib
import runpy
import sys

import pytest
from threadpoolctl import threadpool_limits

DERIVATIONS = pathlib.Path(__file__).resolve().parent.parent / "derivations"
SCRIPTS = sorted(p.name for p in DERIVATIONS.glob("*.py") if not p.name.startswith("_"))


def test_scripts_found():
    assert SCRIPTS, f"no derivation scripts in {DERIVATIONS}"


@pytest.mark.parametrize("script", SCRIPTS)
def test_derivation(script, monkeypatch, capsys):
    monkeypatch.chdir(DERIVATIONS)
    monkeypatch.syspath_prepend(str(DERIVATIONS))          # the scripts import _common, _threads
    monkeypatch.setattr(sys, "argv", [script])
    code = 0
    # the sampled matrices are small: one BLAS thread (a multi-threaded OpenBLAS made the
    # sampler checks ~50x slower on a busy machine); the scripts' _threads does this for a
    # fresh interpreter only
    with threadpool_limits(limits=1):
        try:
            runpy.run_path(str(DERIVATIONS / script), run_name="__main__")
        except SystemExit as exc:
            code = exc.code or 0
    out = capsys.readouterr().out
    tail = "\n".join(out.splitlines()[-30:])
    assert code == 0, f"{script} exited with {code}:\n{tail}"
    assert "[ok]" in out, f"{script} printed no [ok] line:\n{tail}"
