"""Issue 15, "numbers a user can trust": command-line consistency, limits, figures and
dependency floors.

Bounded integer options name their real limit; sizes that would sit without progress for
long are refused up front with the estimate and ``--force``; one policy for files written
by request (existing files refused unless ``--force``; ``-`` is standard output); both
spellings of ``--no-figures``; no empty or stale figures; figures whose title and legend
fit; pooled QQ plots that say so; custom configurations cannot take a built-in name; the
README's verify examples are accepted; pyproject's floors are the pinned CI floors.
"""
import csv
import io
import re
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from freeprob import cost
from freeprob.cli import build_parser, main
from freeprob.errors import FreeprobValueError

ROOT = Path(__file__).resolve().parent.parent
TINY = "tiny:d=64,heads=4,d_head=16"


def _run(capsys, *argv):
    """``main(argv)`` in process: (status, stdout, stderr); argparse errors give status 2."""
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    cap = capsys.readouterr()
    return status, cap.out, cap.err


def _tiny_verify(out, *extra):
    return main(["verify", "--configs", TINY, "--seeds", "2", "--points", "200", "--workers", "1",
                 "--no-progress", "--out", str(out), *extra])


# -- 1. bounded integer options name their limit -------------------------------------------------
@pytest.mark.parametrize("argv, limit", [
    (["moments", "Semicircle(0, 1)", "--dps", "100000"], "from 1 to 50000 (freeprob.law.MAX_DPS)"),
    (["density", "Semicircle(0, 1)", "--grid", "0:1:3", "--dps", "100000"], "freeprob.law.MAX_DPS"),
    (["support", "Semicircle(0, 1)", "--dps", "0"], "from 1 to 50000 (freeprob.law.MAX_DPS); got 0"),
    (["table", "--dps", "100000"], "--dps: expected an integer from 1 to 50000 (freeprob.law.MAX_DPS)"),
    (["moments", "Semicircle(0, 1)", "--order", "30000"], "from 0 to 20000 (freeprob.law.MAX_ORDER)"),
    (["table", "--order", "30000"], "argument --order: expected an integer from 0 to 20000"),
    (["verify", "--workers", "100000"], "use --scheduler for more"),
    (["density", "Semicircle(0, 1)", "--grid", "0:1:100001"], "and 100000 (freeprob.cli_laws.MAX_GRID_POINTS)"),
    (["verify", "--seeds", "0"], "expected an integer ≥ 1; got 0"),
    (["readout", "head-count", "--seeds", "1"], "expected an integer ≥ 2; got 1"),
])
def test_bounded_integer_options_name_the_limit(capsys, argv, limit):
    status, out, err = _run(capsys, *argv)
    assert status == 2 and out == ""
    assert limit in err and "positive integer" not in err


def test_the_dps_limit_is_read_when_parsing(capsys, monkeypatch):
    import freeprob.law
    monkeypatch.setattr(freeprob.law, "MAX_DPS", 40)
    status, _, err = _run(capsys, "moments", "Semicircle(0, 1)", "--dps", "41")
    assert status == 2 and "from 1 to 40 (freeprob.law.MAX_DPS); got 41" in err


# -- 2. sizes: answered, shown with progress, or refused up front ---------------------------------
def test_verify_points_refused_up_front(capsys, tmp_path):
    t = time.monotonic()
    status, out, err = _run(capsys, "verify", "--points", "1000000", "--out", str(tmp_path / "v"))
    assert status == 2 and time.monotonic() - t < 30
    assert f"the limit is {cost.MAX_POINTS}" in err and "--force" in err and "33 min per law" in err
    assert not (tmp_path / "v").exists()                 # nothing written, nothing computed


def test_verify_cell_limits(capsys, tmp_path):
    from freeprob.verify import VerifySettings, check_cost
    status, _, err = _run(capsys, "verify", "--seeds", "1000000", "--out", str(tmp_path / "v"))
    assert status == 2 and "7000000 cells" in err and "--force" in err
    big = VerifySettings(configs=("big:d=16384,heads=64,d_head=128",), n=16384, widths="real", out=tmp_path)
    with pytest.raises(FreeprobValueError, match=r"one initialisation would take about \d+ min.*--force"):
        check_cost(big, workers=1)
    check_cost(big, workers=1, force=True)             # --force lifts it
    wide = VerifySettings(configs=("wide:d=65536,heads=64,d_head=128",), n=4096, widths="real", out=tmp_path)
    with pytest.raises(FreeprobValueError, match=r"GiB of memory.*--force"):
        check_cost(wide, workers=1)
    check_cost(VerifySettings(out=tmp_path))            # the default run passes


def test_cell_cost_estimate_is_within_a_factor_of_the_measured_cell():
    from freeprob.sampler import Dimensions
    # README, Benchmarks: 6.5 s idle and 12 s under load, 0.76 GiB peak on the 2-core box
    seconds, nbytes = cost.cell_cost(Dimensions(n=2048, heads=32, d_k=128, d_v=128, d_o=4096, d=4096))
    assert 6.5 <= seconds <= 4 * 6.5
    assert 0.5 * 2 ** 30 <= nbytes <= 2 * 2 ** 30


def _dummy_measurement(dims, seed):
    return {"x": float(seed)}


def test_readout_measurements_refused_before_sampling():
    from freeprob.comparisons._common import measure
    from freeprob.sampler import Dimensions
    dims = Dimensions(n=16384, heads=32, d_k=256, d_v=256, d_o=32768)
    calls = [dict(dims=dims, seed=s) for s in range(2)]
    with pytest.raises(FreeprobValueError, match=r"n=16384\).*would take about.*--force"):
        measure(_dummy_measurement, calls, label="head-count big")
    with cost.allow_large():                            # what readout --force does
        assert measure(_dummy_measurement, calls, label="head-count big") == [{"x": 0.0}, {"x": 1.0}]


def test_long_density_grid_shows_progress_with_the_same_digits(capsys, monkeypatch):
    argv = ("density", "free_mul(FreePoisson(1/2), FreePoisson(1/3))", "--grid", "0.5:2:250", "--dps", "20")
    status, plain, err = _run(capsys, *argv)
    assert status == 0 and "density:" not in err
    monkeypatch.setattr(cost, "PROGRESS_AFTER", 0)       # as if the grid were estimated to take long
    status, chunked, err = _run(capsys, *argv)
    assert status == 0 and chunked == plain and "density: 100%" in err and "250/250" in err
    assert cost.density_seconds(100_000, 50_000) > 3600 > cost.density_seconds(1000, 15)


# -- 3. one policy for files written by request -------------------------------------------------
def test_density_refuses_an_existing_file_unless_force(capsys, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("keep me", encoding="utf-8")
    status, _, err = _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", str(path))
    assert status == 2 and "exists; --force overwrites it" in err
    assert path.read_text(encoding="utf-8") == "keep me"
    status, _, _ = _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", str(path),
                        "--force")
    assert status == 0 and path.read_text(encoding="utf-8").splitlines()[1] == "0,0.318309886183791"


def test_dash_is_standard_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", "-")
    assert status == 0 and not (tmp_path / "-").exists()
    assert out.splitlines() == ["x,density", "0,0.318309886183791", "0.5,0.30820222203075",
                                "1,0.275664447710896"]
    assert "wrote standard output" in err
    status, _, err = _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", "-",
                          "--plot", "-")
    assert status == 2 and "cannot both write to standard output" in err
    status, _, err = _run(capsys, "verify", "--out", "-")
    assert status == 2 and "'-' (standard output) is not one" in err


def test_sweep_export_to_standard_output(capsys, tmp_path, monkeypatch):
    assert _tiny_verify(tmp_path / "v", "--no-figures") == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(capsys, "sweep", "export", str(tmp_path / "v"), "--csv", "-")
    rows = list(csv.reader(io.StringIO(out)))
    assert status == 0 and not (tmp_path / "-").exists()
    assert rows[0][:3] == ["sweep", "cell_key", "config"] and {r[2] for r in rows[1:]} == {"tiny"}
    assert f"wrote {len(rows) - 1} rows to standard output" in err


def test_no_figures_both_spellings_no_empty_or_stale_figures(tmp_path):
    parser = build_parser()
    for cmd in (["verify"], ["readout", "list"]):
        for flag in ("--no-figures", "--no-figure"):
            assert parser.parse_args([*cmd, flag]).no_figures is True
    out = tmp_path / "v"
    assert _tiny_verify(out, "--no-figures") == 0
    assert not (out / "figures").exists()                        # no empty figures/
    assert _tiny_verify(out) == 0
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["histograms.png", "qq.png"]
    assert _tiny_verify(out, "--no-figure") == 0                 # the earlier run's figures are removed
    assert not (out / "figures").exists()
    assert "figures/" not in (out / "table.txt").read_text(encoding="utf-8")


def _panels(seeds=3, n=64):
    from freeprob.attention import Architecture, output_law
    from freeprob.compare import TabulatedLaw
    from freeprob.sampler import Dimensions, spectra
    dims = Dimensions(n=n, heads=4, d_k=16, d_v=16, d_o=n)
    law = TabulatedLaw.from_law(output_law(Architecture.from_dimensions(
        n=n, heads=4, d_k=16, d_v=16, d_o=n, beta=1)), points=200)
    sm, ge = [], []
    for s in range(seeds):
        sp = spectra(dims, 1.0, rng=np.random.default_rng(s), models=("softmax", "ge"), objects=("out",))
        sm.append(sp["softmax", "out"])
        ge.append(sp["ge", "out"])
    return [("Custom tiny\nn=64,h=4,dK=16,dV=16,dO=64, β=1", sm, ge, law)]


def test_one_configuration_figure_keeps_title_and_legend_and_pools_the_qq_plot():
    from freeprob.figures import _verify_figure
    panels = _panels()
    for kind in ("histograms", "qq"):
        fig = _verify_figure(kind, panels, "out")
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        width, height = fig.bbox.width, fig.bbox.height
        for artist in (fig._suptitle, *fig.legends):
            box = artist.get_window_extent(renderer)
            assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, (kind, box)
        assert "3 initialisations pooled" in fig._suptitle.get_text()
        ax = fig.axes[0]
        if kind == "histograms":
            assert ax.get_ylabel() == "density"
        else:                                            # every initialisation's eigenvalues are drawn
            assert [line.get_xdata().size for line in ax.lines[:2]] == [3 * 64, 3 * 64]


def test_custom_configuration_cannot_take_a_built_in_name():
    from freeprob.configs import model_config
    with pytest.raises(FreeprobValueError, match="'gpt2-small' is the name of a built-in configuration"):
        model_config("gpt2-small:d=512,heads=8,d_head=64")
    with pytest.raises(FreeprobValueError, match="built-in"):
        model_config("BERT-base:d=512,heads=8,d_head=64")
    assert model_config("mine:d=512,heads=8,d_head=64").name == "mine"


def test_readme_verify_examples_are_accepted(monkeypatch):
    """Every ``freeprob verify`` line of the README's command blocks parses and plans."""
    import freeprob.verify as verify_mod
    from freeprob.verify import plan_cells
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines, fenced = [], False
    for ln in text.splitlines():
        if ln.startswith("```"):
            fenced = not fenced
        elif fenced and re.match(r"freeprob verify( --|$)", ln):
            lines.append(ln.split("  #", 1)[0].strip())
    assert any("--n 384,768" in ln for ln in lines)
    planned = []

    def fake_verify(settings, **kw):
        planned.append(plan_cells(settings))
        return {"rows": []}

    monkeypatch.setattr(verify_mod, "verify", fake_verify)
    for ln in lines:
        assert main(shlex.split(ln)[1:]) == 0, ln
    assert len(planned) == len(lines) >= 8


# -- 4. dependency floors -------------------------------------------------------------------------
def test_pyproject_floors_are_the_pinned_ci_floors():
    sys.path.insert(0, str(ROOT / ".ci"))
    try:
        import check_floors
    finally:
        sys.path.pop(0)
    assert check_floors.main() == 0
    pins = dict(line.split("==") for line in (ROOT / ".ci" / "floors.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert pins["python-flint"] == "0.7.0" and pins["sympy"] == "1.13.0"   # 0.6 and 1.12 fail the tests
    run = (ROOT / ".ci" / "run").read_text()
    assert run.index('bash -c "$cmd"') < run.index("-c .ci/floors.txt") and "set -euo pipefail" in run
