"""Issue 15, "numbers a user can trust": command-line consistency, limits, figures and
dependency floors.

Bounded integer options name their real limit; sizes that would sit without progress for
long are refused up front with the estimate and ``--force``; one policy for files written
by request (existing files refused unless ``--force``; ``-`` is standard output); both
spellings of ``--no-figures``; no empty or stale figures; figures whose title and legend
fit; pooled QQ plots that say so; custom configurations cannot take a built-in name; the
README's and the documentation's verify examples are accepted; pyproject's floors are the pinned CI floors.
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

from freeprob.experiments import cost
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
    (["moments", "Semicircle(0, 1)", "--dps", "100000"], "from 1 to 50000 (freeprob.laws.law.MAX_DPS)"),
    (["density", "Semicircle(0, 1)", "--grid", "0:1:3", "--dps", "100000"], "freeprob.laws.law.MAX_DPS"),
    (["support", "Semicircle(0, 1)", "--dps", "0"], "from 1 to 50000 (freeprob.laws.law.MAX_DPS); got 0"),
    (["table", "--dps", "100000"], "--dps: expected an integer from 1 to 50000 (freeprob.laws.law.MAX_DPS)"),
    (["moments", "Semicircle(0, 1)", "--order", "30000"], "from 0 to 20000 (freeprob.laws.law.MAX_ORDER)"),
    (["table", "--order", "30000"], "argument --order: expected an integer from 0 to 20000"),
    (["verify", "--workers", "100000"], "use --scheduler for more"),
    (["density", "Semicircle(0, 1)", "--grid", "0:1:100001"], "and 100000 (freeprob.cli.law_commands.MAX_GRID_POINTS)"),
    (["verify", "--seeds", "0"], "expected an integer ≥ 1; got 0"),
    (["readout", "head-count", "--seeds", "1"], "expected an integer ≥ 2; got 1"),
])
def test_bounded_integer_options_name_the_limit(capsys, argv, limit):
    status, out, err = _run(capsys, *argv)
    assert status == 2 and out == ""
    assert limit in err and "positive integer" not in err


@pytest.mark.parametrize("argv, says", [
    (["verify", "--n", "128,abc"], "argument --n: item 2 of '128,abc': expected an integer ≥ 2; got 'abc'"),
    (["verify", "--n", "128,256,1"], "item 3 of '128,256,1': expected an integer ≥ 2; got 1"),
    (["verify", "--beta", "1,abc"], "argument --beta: item 2 of '1,abc': beta must be a number in [1/100, 5]"),
    (["verify", "--beta", "0.5,9"], "item 2 of '0.5,9': beta must satisfy 1/100 ≤ β ≤ 5"),
    (["explore", "beta-growth", "--ns", "128,abc"], "argument --ns: item 2 of '128,abc': expected an integer ≥ 64"),
])
def test_a_bad_item_of_a_list_option_is_named(capsys, tmp_path, argv, says):
    """Issue 26: a list flag names the bad item by its place and value, before anything runs."""
    status, out, err = _run(capsys, *argv, "--out", str(tmp_path / "o"))
    assert status == 2 and out == "" and says in err
    assert not (tmp_path / "o").exists()


def test_verify_settings_name_the_bad_size(tmp_path):
    from freeprob.experiments.verify import VerifySettings
    with pytest.raises(FreeprobValueError, match="item 2 of n must be an integer ≥ 2; got 'x'"):
        VerifySettings(n="128,x", out=tmp_path)
    with pytest.raises(FreeprobValueError, match="item 3 of n must be an integer ≥ 2; got 1"):
        VerifySettings(n=(128, 256, 1), out=tmp_path)
    assert VerifySettings(n="128, 256", out=tmp_path).sizes == (128, 256)


def test_the_dps_limit_is_read_when_parsing(capsys, monkeypatch):
    import freeprob.laws.law
    monkeypatch.setattr(freeprob.laws.law, "MAX_DPS", 40)
    status, _, err = _run(capsys, "moments", "Semicircle(0, 1)", "--dps", "41")
    assert status == 2 and "from 1 to 40 (freeprob.laws.law.MAX_DPS); got 41" in err


# -- 2. sizes: answered, shown with progress, or refused up front ---------------------------------
def test_verify_points_refused_up_front(capsys, tmp_path):
    t = time.monotonic()
    status, out, err = _run(capsys, "verify", "--points", "1000000", "--out", str(tmp_path / "v"))
    assert status == 2 and time.monotonic() - t < 30
    assert f"the limit is {cost.MAX_POINTS}" in err and "--force" in err and "33 min per law" in err
    assert not (tmp_path / "v").exists()                 # nothing written, nothing computed


def test_verify_cell_limits(capsys, tmp_path):
    from freeprob.experiments.verify import VerifySettings, check_cost
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
    from freeprob.experiments.comparisons._common import measure
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


def test_no_figures_both_spellings_no_empty_or_stale_figures(tmp_path, capsys):
    parser = build_parser()
    for cmd in (["verify"], ["readout", "list"]):
        for flag in ("--no-figures", "--no-figure"):
            assert parser.parse_args([*cmd, flag]).no_figures is True
    out = tmp_path / "v"
    assert _tiny_verify(out, "--no-figures") == 0
    assert not (out / "figures").exists()                        # no empty figures/
    assert _tiny_verify(out) == 0
    figures = {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    assert sorted(figures) == ["histograms.png", "qq.png"]
    capsys.readouterr()
    # issue 26: a rerun with --no-figures removed the earlier run's figures without a word.  Of the
    # same settings and code, they show these results: kept, and said so
    assert _tiny_verify(out, "--no-figure") == 0
    assert {p.name: p.read_bytes() for p in (out / "figures").iterdir()} == figures
    assert "figures/histograms.png is kept: it shows these results" in capsys.readouterr().err
    # of other settings (3 seeds): moved aside under a name that says so, nothing removed or mixed
    assert _tiny_verify(out, "--no-figures", "--seeds", "3") == 0
    err = capsys.readouterr().err
    moved = {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    assert sorted(moved.values()) == sorted(figures.values()) and not set(moved) & set(figures)
    assert all(re.fullmatch(r"(histograms|qq)\.earlier-[0-9a-f]{10}\.png", n) for n in moved)
    assert "showed the results of other settings or code, and this run writes none: moved to" in err
    assert "figures/" not in (out / "table.txt").read_text(encoding="utf-8")
    assert _tiny_verify(out, "--seeds", "3") == 0                 # figures of 3 seeds; the earlier ones stay
    assert sorted(p.name for p in (out / "figures").iterdir()) == sorted([*moved, "histograms.png", "qq.png"])


def test_a_report_a_run_does_not_rewrite_is_never_removed(tmp_path):
    """The rule behind readout's and verify's --no-figures (ReportDir.begin): a report of this
    kind that the run does not write stays if the manifest says it shows this run's results,
    else is moved aside (an earlier manifest without run identities counts as other results),
    never onto a file of the user's."""
    import json
    from freeprob.experiments.reports import MANIFEST, ReportDir
    out, store = tmp_path / "r", tmp_path / "r" / "results.sqlite"
    with ReportDir(out, store, who="readout") as rd:
        rd.check(["c.txt", "c.png"])
        rd.open()
        rd.begin(["c.txt", "c.png"], run="aaaaaaaaaa")
        for f in ("c.txt", "c.png"):
            rd.target(f).write_text(f"{f} of run a")
    with ReportDir(out, store, who="readout") as rd:            # the same settings, no figure
        rd.check(["c.txt"])
        assert rd.begin(["c.txt"], keep=["c.png"], run="aaaaaaaaaa") == [
            f"readout: {out / 'c.png'} is kept: it shows these results (an earlier run of the same settings and "
            "code wrote it)"]
        rd.target("c.txt").write_text("c.txt of run a again")
    assert (out / "c.png").read_text() == "c.png of run a"
    (out / "c.earlier-bbbbbbbbbb.png").write_text("the user's own")
    with ReportDir(out, store, who="readout") as rd:            # other settings, no figure
        rd.check(["c.txt"])
        (note,) = rd.begin(["c.txt"], keep=["c.png"], run="bbbbbbbbbb")
        rd.target("c.txt").write_text("c.txt of run b")
    assert "moved to" in note and not (out / "c.png").exists()
    assert (out / "c.earlier-aaaaaaaaaa.png").read_text() == "c.png of run a"
    assert (out / "c.earlier-bbbbbbbbbb.png").read_text() == "the user's own"
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["runs"] == {"c.earlier-aaaaaaaaaa.png": "aaaaaaaaaa", "c.txt": "bbbbbbbbbb"}
    del manifest["runs"]                                         # a manifest of an earlier freeprob
    manifest["files"].append("c.png")
    (out / MANIFEST).write_text(json.dumps(manifest))
    (out / "c.png").write_text("c.png of an unknown run")
    (out / "c.earlier-unknown.png").write_text("the user's too")
    with ReportDir(out, store, who="readout") as rd:
        rd.check(["c.txt"])
        rd.begin(["c.txt"], keep=["c.png"], run="bbbbbbbbbb")
    assert (out / "c.earlier-unknown-2.png").read_text() == "c.png of an unknown run"
    assert (out / "c.earlier-unknown.png").read_text() == "the user's too"


def _panels(seeds=3, n=64):
    from freeprob.attention import Architecture, output_law
    from freeprob.experiments.compare import TabulatedLaw
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
    from freeprob.experiments.figures import _verify_figure
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
    from freeprob.experiments.configs import model_config
    with pytest.raises(FreeprobValueError, match="'gpt2-small' is the name of a built-in configuration"):
        model_config("gpt2-small:d=512,heads=8,d_head=64")
    with pytest.raises(FreeprobValueError, match="built-in"):
        model_config("BERT-base:d=512,heads=8,d_head=64")
    assert model_config("mine:d=512,heads=8,d_head=64").name == "mine"


def test_readme_verify_examples_are_accepted(monkeypatch):
    """Every ``freeprob verify`` line of the command blocks of the README and of the
    documentation pages (docs/**/*.md) parses and plans."""
    import freeprob.experiments.verify as verify_mod
    from freeprob.experiments.verify import plan_cells
    pages = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
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


# -- 5. newcomer review: files written by request, grid bounds, CLI wording, duplicates, pipes -----
SEMI_CSV = ["x,density", "0,0.318309886183791", "0.5,0.30820222203075", "1,0.275664447710896"]


def _density_to(capsys, path, *extra):
    return _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", str(path), *extra)


def test_a_fifo_is_written_through_not_replaced(capsys, tmp_path):
    import os
    import stat
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    status, _, err = _density_to(capsys, fifo)               # no reader: refused at once, no wait
    assert status == 2 and "no process is reading the FIFO" in err and str(fifo) in err
    for extra in ((), ("--force",)):                          # nothing is replaced: --force changes nothing
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # a reader holds the FIFO open
        try:
            status, out, err = _density_to(capsys, fifo, *extra)
            data = os.read(reader, 1 << 16).decode()
        finally:
            os.close(reader)
        assert status == 0 and f"wrote {fifo}" in out and err == ""
        assert data.splitlines() == SEMI_CSV
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)           # still the FIFO, not a plain file
        assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.csv"]       # no temporary file left


def test_a_symbolic_link_is_followed(capsys, tmp_path):
    target, link = tmp_path / "real.csv", tmp_path / "link.csv"
    target.write_text("keep me", encoding="utf-8")
    target.chmod(0o640)
    link.symlink_to(target.name)
    status, _, err = _density_to(capsys, link)
    assert status == 2 and "(a symbolic link to" in err and "exists; --force overwrites it" in err
    status, _, _ = _density_to(capsys, link, "--force")
    assert status == 0 and link.is_symlink() and link.readlink() == Path("real.csv")
    assert target.read_text(encoding="utf-8").splitlines() == SEMI_CSV          # the file it points to
    assert target.stat().st_mode & 0o777 == 0o640                                # keeps its permissions
    dangling = tmp_path / "new-link.csv"
    dangling.symlink_to("created.csv")                        # nothing to overwrite: no --force needed
    assert _density_to(capsys, dangling)[0] == 0 and dangling.is_symlink()
    assert (tmp_path / "created.csv").read_text(encoding="utf-8").splitlines() == SEMI_CSV
    loop = tmp_path / "loop.csv"
    loop.symlink_to("loop.csv")
    status, _, err = _run(capsys, "sweep", "export", str(tmp_path), "--csv", str(loop), "--force")
    assert status == 2 and "is a loop of symbolic links" in err and "Traceback" not in err
    status, _, err = _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", str(target),
                          "--plot", str(link), "--force")
    assert status == 2 and "--csv and --plot name the same file" in err


def test_a_failed_rename_names_the_users_path_and_leaves_no_temporary_file(capsys, tmp_path, monkeypatch):
    import errno
    import freeprob.cli.files as cliutil

    def refuse(src, dst):
        raise OSError(errno.EROFS, "Read-only file system", str(src))

    monkeypatch.setattr(cliutil.os, "replace", refuse)
    status, _, err = _density_to(capsys, tmp_path / "d.csv")
    assert status == 2 and err == f"freeprob: error: cannot write {tmp_path / 'd.csv'}: Read-only file system\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
def test_a_directory_that_takes_no_files_is_refused_saying_why(capsys, tmp_path):
    """Issue 26: /proc/version is a regular file, but /proc takes no new file, so it cannot
    be replaced: refused before anything is computed, saying so (not "No such file or
    directory"); the same for the output directories of verify, readout and explore."""
    status, out, err = _run(capsys, "density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", "/proc/version",
                            "--force")
    assert status == 2 and out == "" and "No such file" not in err
    assert ("density: cannot write --csv '/proc/version': no file can be created in '/proc' (a special file "
            "system: /proc takes no new files)") in err
    for argv in (["verify", "--quick"], ["readout", "head-count", "--quick"], ["explore", "inputs", "--quick"]):
        status, out, err = _run(capsys, *argv, "--out", "/proc/freeprob-out")
        assert status == 2, argv
        assert "cannot write to the output directory '/proc/freeprob-out' (no file can be created in '/proc'" in err


def test_a_file_that_cannot_be_created_at_write_time_says_why(capsys, tmp_path, monkeypatch):
    """The directory stops taking files between the check and the write: the error says that
    no file can be created there (the temporary file of the atomic replace), for the user's path."""
    import errno
    import freeprob._files as files
    real_open = files.os.open

    def no_new_file(path, flags, *args):
        if ".d.csv." in str(path):               # the temporary file beside d.csv
            raise OSError(errno.ENOENT, "No such file or directory", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(files.os, "open", no_new_file)
    status, _, err = _density_to(capsys, tmp_path / "d.csv")
    assert status == 2 and err == (f"freeprob: error: cannot write {tmp_path / 'd.csv'}: no file can be created in "
                                   f"'{tmp_path}' to write it (a special file system: {tmp_path} takes no new "
                                   "files)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not (Path("/dev/full").is_char_device() and __import__("os").access("/dev/full", 2)),
                    reason="needs a writable /dev/full")
def test_a_device_is_written_through_and_its_error_names_the_path(capsys):
    status, out, err = _density_to(capsys, "/dev/full")      # a device: no --force needed, nothing replaced
    assert status == 2 and out == ""
    assert err == "freeprob: error: cannot write /dev/full: No space left on device\n"
    assert Path("/dev/full").is_char_device()


def test_dev_stdout_is_standard_output(tmp_path):
    import subprocess
    with open(tmp_path / "out.csv", "w") as fh:               # a file behind /dev/stdout is not "existing"
        proc = subprocess.run([sys.executable, "-m", "freeprob.cli", "density", "Semicircle(0, 1)", "--grid",
                               "0:1:3", "--csv", "/dev/stdout"], stdout=fh, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert proc.returncode == 0 and "wrote /dev/stdout" in proc.stderr
    assert (tmp_path / "out.csv").read_text().splitlines() == SEMI_CSV


@pytest.mark.parametrize("grid, message", [
    ("1e308:1e309:3", "b = 10000000000000000000...000000000000 (310 characters) is beyond the "
                      "double-precision range ±1.798e+308"),
    ("nan:2:4", "'nan' is not a number: values must be finite real numbers"),
    ("-inf:2:4", "'inf' is not a finite number"),
    ("1:1.0000000000000000001:3", "is below the resolution of double-precision numbers at 1"),
    ("t:2:3", "a = t contains the symbol t; the ends must be numbers"),
])
def test_grid_bounds_are_validated_up_front(capsys, grid, message):
    status, out, err = _run(capsys, "density", "free_mul(FreePoisson(1/2), FreePoisson(1/3))",
                            f"--grid={grid}")
    assert status == 2 and out == "" and message in err and "Traceback" not in err
    assert "choose another symbol name" not in err


def test_huge_grids_print_in_scientific_notation_and_plot_limit(capsys, tmp_path):
    status, out, _ = _run(capsys, "density", "free_mul(FreePoisson(1/2), FreePoisson(1/3))",
                          "--grid=1e300:1e301:3")
    assert status == 0 and out.splitlines()[1:] == ["       x  density", "1.0e+300  0.0", "5.5e+300  0.0",
                                                    "1.0e+301  0.0"]
    status, out, _ = _run(capsys, "density", "Semicircle(0, 1)", "--grid=0.5:0.500001:3", "--dps", "3")
    assert status == 0 and [r.split()[0] for r in out.splitlines()[2:]] == ["0.5", "0.5000005", "0.500001"]
    status, _, err = _run(capsys, "density", "Semicircle(0, 1)", "--grid=1e307:1.7e308:3", "--plot",
                          str(tmp_path / "x.png"))
    assert status == 2 and "--plot draws x up to ±1e+306 (freeprob.cli.law_commands.MAX_PLOT_X" in err
    assert "use --csv" in err and not (tmp_path / "x.png").exists()


def test_points_beyond_doubles_and_huge_beta_exponents_are_refused():
    import sympy as sp
    from freeprob import Semicircle
    from freeprob.experiments.verify import VerifySettings
    beyond = r"`xs` must lie within the double-precision range ±1.798e\+308"
    with pytest.raises(FreeprobValueError, match=beyond):
        Semicircle(0, 1).density([sp.Integer(10) ** 400])
    t = time.monotonic()
    with pytest.raises(FreeprobValueError, match="decimal exponent of more than 4 digits"):
        VerifySettings(beta="1e999999999")
    assert time.monotonic() - t < 1


@pytest.mark.parametrize("argv", [
    ["density", "FreePoisson(t)", "--grid", "0:1:3"],
    ["support", "free_add(Semicircle(s, t), Semicircle(0, 1))"],
    ["moments", "FreePoisson(t)", "--dps", "10"],
])
def test_symbol_messages_speak_the_command_line(capsys, argv):
    status, _, err = _run(capsys, *argv)
    assert status == 2 and "law.subs" not in err and "in place of" in err and "in the expression" in err
    wanted = "write numbers in place of s, t" if argv[0] == "support" else "write a number in place of t"
    assert wanted in err


@pytest.mark.parametrize("argv, message", [
    (["--configs", "gpt2-small,GPT2-small"],
     "argument --configs: lists 'gpt2-small' and 'GPT2-small', the same configuration name (compared "
     "ignoring case); give each value once"),
    (["--configs", "a:d=64,heads=2,d_head=16,a:d=128,heads=2,d_head=32"],
     "lists 'a:d=64,heads=2,d_head=16' and 'a:d=128,heads=2,d_head=32', the same configuration name"),
    (["--configs", "a:d=64,d=128,heads=2,d_head=16"],
     "d is given twice (d=64 and d=128); give each key once"),
    (["--configs", "a:d=64,heads=4,d_head=16,scheme=gqa:2,kv_groups=4"], "kv_groups is given twice"),
    (["--configs", "a:d=64,heads=2,d_head=16", "--schemes", "independent,gqa:2"],
     "schemes lists 'independent' and 'gqa:2', the same sharing for the configuration 'a' (2 heads); "
     "give each value once"),
    (["--configs", "a:d=64,heads=1,d_head=16", "--schemes", "mqa,shared_keys"], "the same sharing"),
])
def test_duplicate_configurations_and_schemes_by_identity(capsys, tmp_path, argv, message):
    status, out, err = _run(capsys, "verify", *argv, "--seeds", "1", "--no-progress",
                            "--out", str(tmp_path / "v"))
    assert status == 2 and message in err and "cell keys" not in err
    assert not (tmp_path / "v").exists()                                     # refused before anything


def test_duplicates_in_verify_settings():
    from freeprob.experiments.verify import VerifySettings
    with pytest.raises(FreeprobValueError,
                       match="lists 'gpt2-small' and 'GPT2-small', the same configuration name"):
        VerifySettings(configs=("gpt2-small", "GPT2-small"))
    with pytest.raises(FreeprobValueError, match="the same sharing for the configuration 'gpt2-small'"):
        VerifySettings(configs=("gpt2-small",), schemes=("independent", "gqa:12"))
    assert VerifySettings(configs=("gpt2-small",), schemes=("independent", "gqa:6")).schemes == (
        "independent", "gqa:6")


def test_a_reader_that_goes_away_ends_every_command_quietly(tmp_path):
    import subprocess
    assert _tiny_verify(tmp_path / "v", "--no-figures") == 0
    db = str(tmp_path / "v")
    commands = [["sweep", "show", db], ["sweep", "export", db, "--csv", "-"],
                ["moments", "Semicircle(0, 1)", "--order", "3"], ["table", "--order", "3"],
                ["density", "Semicircle(0, 1)", "--grid", "0:1:3", "--csv", "-"]]
    procs = [subprocess.Popen([sys.executable, "-m", "freeprob.cli", *c], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for c in commands]
    for p in procs:
        p.stdout.close()                               # the reader is gone before anything is printed
    for c, p in zip(commands, procs):
        assert p.wait(timeout=120) == 0, c
        assert p.stderr.read() == b"", c
        p.stderr.close()
