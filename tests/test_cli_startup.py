"""What a law command of ``freeprob`` loads, and ``freeprob table`` as the output of ``moments``
and ``cumulants`` (:mod:`freeprob.cli.main`, :mod:`freeprob.cli.law_commands`).

A law command (``moments``, ``cumulants``, ``equation``, ``support``, ``table``) imports
neither the experiments layer nor scipy, matplotlib, dask or numpy, and only the commands
that need them the numeric layer and the Cauchy-equation algebra: the parsers of ``verify`` and
``readout`` get their arguments on first use, ``sweep`` reads the store's columns on first use,
and SIGTERM handling imports :mod:`freeprob.experiments.sweep` only when the signal arrives.
"""
import json
import os
import subprocess
import sys

import pytest

from freeprob.cli import PRESET_LAWS, main

#: loaded by a law command: none of these
HEAVY = ("scipy", "matplotlib", "dask", "distributed", "numpy")
#: loaded only by the commands that need them (issue 27: startup): the numeric layer (numbers
#: from a Cauchy equation), the attention laws (named in the expression) and the exact
#: polynomial layer of the Cauchy equations
ON_DEMAND = ("freeprob.numeric", "freeprob.attention.laws", "freeprob.core.exactpoly")

_PROBE = """
import contextlib, io, sys
from freeprob.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    status = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules
                if m.split('.')[0] in {heavy!r} or m.startswith('freeprob.experiments')
                or m in {on_demand!r})
print(status, out.getvalue().count('\\n'), ' '.join(loaded))
""".format(heavy=HEAVY, on_demand=ON_DEMAND)


def _fresh(*argv):
    """``main(argv)`` in a new interpreter: (status, lines printed, heavy modules loaded)."""
    # in process: what the computation itself loads (with the worker of freeprob._interruptible
    # the parent would load even less)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", FREEPROB_IN_PROCESS="1")
    env.pop("FREEPROB_MAX_ORDER", None)
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, lines, *loaded = proc.stdout.split()
    return int(status), int(lines), loaded


@pytest.mark.parametrize("argv, needs", [
    (["moments", "FreePoisson(1)", "--order", "3"], []),
    (["cumulants", "free_mul(FreePoisson(1/2), Semicircle(0, 1))", "--kind", "all", "--order", "12"], []),
    (["equation", "MarchenkoPastur(2)"], ["freeprob.core.exactpoly"]),
    (["support", "free_add(Bernoulli(), Bernoulli())"], ["freeprob.core.exactpoly", "freeprob.numeric"]),
    (["table", "--law", "arcsine", "--order", "4"], []),
], ids=["moments", "cumulants-all", "equation", "support", "table"])
def test_law_commands_load_only_what_they_need(argv, needs):
    """No experiments layer, scipy, matplotlib, dask or numpy; exact moments and cumulants
    load neither the numeric layer nor the Cauchy-equation algebra nor the attention laws."""
    status, lines, loaded = _fresh(*argv)
    assert status == 0 and lines > 0
    assert loaded == needs, f"freeprob {argv[0]} loaded {loaded}"


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_table_is_moments_and_cumulants(capsys, fmt):
    """``freeprob table`` prints what ``moments`` and ``cumulants --kind all`` print for the
    preset's expression: the same law line and header, the same values in the same columns."""
    expr = PRESET_LAWS["mp-product"][0]
    table = _run(capsys, "table", "--law", "mp-product", "--order", "7", "--format", fmt).splitlines()
    moments = _run(capsys, "moments", expr, "--order", "7", "--format", fmt).splitlines()
    cumulants = _run(capsys, "cumulants", expr, "--order", "7", "--kind", "all", "--format", fmt).splitlines()
    skip = 1 if fmt == "table" else 0                       # the "law: ..." line
    if fmt == "table":
        assert table[0] == moments[0] == cumulants[0] == f"law: {expr}   (exact)"
        split = str.split
    else:
        split = lambda line: line.split(",")  # noqa: E731
    assert len(table) == len(moments) == len(cumulants) == 8 + 1 + skip
    for t, m, c in zip(table[skip:], moments[skip:], cumulants[skip:]):
        assert split(t) == split(m) + split(c)[1:]
    if fmt == "table":                                      # one printer: aligned the same way
        assert table[1].split() == ["n", "m_n", "free", "κ_n", "boolean", "b_n", "classical", "c_n", "monotone",
                                    "h_n"]


def test_table_json_digits(capsys):
    rec = json.loads(_run(capsys, "table", "--law", "semicircle", "--order", "4", "--dps", "5",
                          "--format", "json"))
    assert rec["law"] == PRESET_LAWS["semicircle"][0] and rec["dps"] == 5
    assert list(rec["values"]) == ["moments", "free", "boolean", "classical", "monotone"]
    assert rec["values"]["moments"] == ["1.0", "0.0", "1.0", "0.0", "2.0"]


def test_density_plot_without_matplotlib_names_the_extra(capsys, monkeypatch, tmp_path):
    """A missing matplotlib: one line naming the ``plot`` extra, exit status 2, nothing written."""
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)           # as if not installed
    target = tmp_path / "d.png"
    status = main(["density", "Semicircle(0, 1)", "--grid", "0:1:3", "--plot", str(target)])
    out, err = capsys.readouterr()
    assert status == 2 and not target.exists() and out == ""
    assert err.count("\n") == 1 and "freeprob[plot]" in err and "Traceback" not in err


def test_python_dash_m_freeprob_is_the_command():
    """``python -m freeprob`` runs the same command as ``freeprob`` (freeprob/__main__.py)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "freeprob", "moments", "Semicircle(0, 1)", "--order", "4"],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == _moments_lines()
    bad = subprocess.run([sys.executable, "-m", "freeprob", "no-such-command"], env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def _moments_lines():
    """What ``freeprob moments Semicircle(0, 1) --order 4`` prints, in this process."""
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["moments", "Semicircle(0, 1)", "--order", "4"]) == 0
    return out.getvalue().split()
