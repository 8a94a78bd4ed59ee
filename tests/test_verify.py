"""``freeprob verify`` and its parts: model configurations, distances, the run itself.

Reference values: the Marchenko–Pastur closed form (Mingo & Speicher §2.5; density
√((b−x)(x−a))/(2πx), atom 1−t at 0 for rate t < 1) integrated with scipy.integrate.quad;
scipy.stats for two-sample distances; the output-law mean θ1 γ_O (theory.md §3.3).
"""
import json
import math
import os
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats
from sympy import Rational

from freeprob import FreePoisson, Semicircle
from freeprob.cli import main
from freeprob.experiments.compare import (TabulatedLaw, law_distances, relative_moment_errors, spectrum_moments,
                              two_sample_distances)
from freeprob.experiments.configs import DEFAULT_CONFIGS, MODEL_CONFIGS, ModelConfig, model_config, parse_scheme
from freeprob.errors import FreeprobValueError
from freeprob.experiments.store import ResultStore
from freeprob.experiments.verify import VerifySettings, plan_cells, plan_sweep, verify


def mp_density(t):
    a, b = (1 - math.sqrt(t)) ** 2, (1 + math.sqrt(t)) ** 2
    return (lambda x: math.sqrt(max(0.0, (b - x) * (x - a))) / (2 * math.pi * x)), a, b


@pytest.fixture(scope="module")
def mp_half():
    return TabulatedLaw.from_law(FreePoisson(Rational(1, 2)), points=400)


@pytest.fixture(scope="module")
def mp_one():
    return TabulatedLaw.from_law(FreePoisson(1), points=400)


# ---------------------------------------------------------------------- tabulated laws

def test_tabulated_mp_cdf_matches_closed_form(mp_half):
    f, a, b = mp_density(0.5)
    assert mp_half.atoms.tolist() == [[0.0, 0.5]]
    assert abs(mp_half.mass_defect) < 1e-6
    for x in (a + 0.01, 0.5, 1.0, 2.0, b - 0.01):
        want = 0.5 + integrate.quad(f, a, x, limit=200)[0]
        assert mp_half.cdf(x) == pytest.approx(want, abs=2e-6)
    assert mp_half.cdf(-1e-12) == 0.0 and mp_half.cdf(0.0) == 0.5 and mp_half.cdf(0.0, left=True) == 0.0
    assert mp_half.cdf(b + 1) == pytest.approx(1.0, abs=1e-6)
    assert mp_half.mean == 0.5 and mp_half.moments[2] == pytest.approx(0.75)   # t, t + t²
    assert mp_half.upper_edge == pytest.approx(b, rel=1e-12)


def test_tabulated_hard_edge_and_quantile(mp_one):
    # MP(1): density x^{-1/2}-singular at the hard edge 0
    f, a, b = mp_density(1.0)
    for x in (1e-4, 0.01, 0.3, 3.9):
        assert mp_one.cdf(x) == pytest.approx(integrate.quad(f, 0, x, limit=200)[0], abs=5e-6)
    p = np.array([0.001, 0.1, 0.5, 0.9, 0.999])
    assert np.allclose(mp_one.cdf(mp_one.quantile(p)), p, atol=1e-6)
    # the density table is for figures: linear interpolation between the evaluation points
    assert mp_one.density(np.array([1.0]))[0] == pytest.approx(f(1.0), rel=1e-3)
    with pytest.raises(FreeprobValueError, match=r"\[0, 1\]"):
        mp_one.quantile([1.5])
    with pytest.raises(FreeprobValueError, match="NaN"):
        mp_one.cdf([0.5, float("nan")])
    assert mp_one.cdf([-np.inf, np.inf]).tolist() == [0.0, pytest.approx(1.0, abs=1e-6)]


def test_quantile_inside_an_atom(mp_half):
    assert np.all(mp_half.quantile([0.0, 0.2, 0.5]) == 0.0)
    assert mp_half.quantile([0.5 + 1e-9])[0] == pytest.approx((1 - math.sqrt(0.5)) ** 2, abs=1e-6)


def test_tabulated_round_trip(mp_half):
    back = TabulatedLaw.from_dict(json.loads(json.dumps(mp_half.to_dict())))
    x = np.linspace(-1, 4, 101)
    assert np.array_equal(back.cdf(x), mp_half.cdf(x))


def test_tabulated_bad_input():
    with pytest.raises(FreeprobValueError, match="points"):
        TabulatedLaw.from_law(FreePoisson(1), points=3)
    from freeprob.attention import Architecture, output_law
    with pytest.raises(FreeprobValueError, match="free symbols"):
        TabulatedLaw.from_law(output_law(Architecture(heads=2, gamma_k=1, gamma_v=1, gamma_o=1)))


# ---------------------------------------------------------------------- distances

def test_law_distances_of_a_point_mass(mp_one):
    # all eigenvalues at c: W1 = E|X − c|, KS = max(F(c−), 1 − F(c))
    f, a, b = mp_density(1.0)
    c = 1.3
    e_abs = integrate.quad(lambda x: abs(x - c) * f(x), 0, b, points=[c], limit=200)[0]
    d = law_distances(np.full(50, c), mp_one)
    assert d["relW1"] == pytest.approx(e_abs / 1.0, rel=1e-5)
    fc = integrate.quad(f, 0, c)[0]
    assert d["KS"] == pytest.approx(max(fc, 1 - fc), abs=1e-5)


def test_law_distances_of_the_laws_own_quantiles(mp_half):
    n = 4000
    lam = mp_half.quantile((np.arange(n) + 0.5) / n)
    d = law_distances(lam, mp_half)
    assert d["KS"] <= 0.5 / n + 5e-6          # 1/(2n) away in KS, up to the table error
    assert d["relW1"] < 2e-3
    # exact zeros against the atom at 0 count as agreement, not as a jump of 1/2
    assert lam[: n // 2].max() == 0.0


def test_law_distance_detects_a_wrong_law(mp_half, mp_one):
    lam = mp_one.quantile((np.arange(2000) + 0.5) / 2000)
    d = law_distances(lam, mp_half)
    assert d["KS"] > 0.4


def test_two_sample_distances_equal_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.gamma(2.0, size=300), rng.gamma(2.1, size=300)
    d = two_sample_distances(a, b)
    assert d["relW1"] == pytest.approx(stats.wasserstein_distance(a, b) / b.mean(), rel=1e-12)
    assert d["KS"] == pytest.approx(stats.ks_2samp(a, b).statistic, rel=1e-12)
    assert d["relW1"] == pytest.approx(np.mean(np.abs(np.sort(a) - np.sort(b))) / b.mean(), rel=1e-12)
    with pytest.raises(FreeprobValueError, match="NaN"):
        two_sample_distances([1.0, float("nan")], b)
    with pytest.raises(FreeprobValueError, match="TabulatedLaw"):
        law_distances(a, None)
    with pytest.raises(FreeprobValueError, match="expected a freeprob Law"):
        TabulatedLaw.from_law("x")
    with pytest.raises(FreeprobValueError, match="positive mean"):
        two_sample_distances(a, np.zeros(3))


def test_moment_errors():
    lam = np.array([1.0, 2.0, 3.0])
    assert np.allclose(spectrum_moments(lam, 2), [1, 2, 14 / 3])
    err = relative_moment_errors(lam, [1, 2, 4, 10, 20], 2)
    assert np.allclose(err, [0.0, (14 / 3 - 4) / 4])


def test_semicircle_tabulation_has_symmetric_quantiles():
    t = TabulatedLaw.from_law(Semicircle(0, 1), points=300)
    assert t.quantile([0.5])[0] == pytest.approx(0.0, abs=1e-9)
    assert t.quantile([0.1])[0] == pytest.approx(-t.quantile([0.9])[0], abs=1e-9)


# ---------------------------------------------------------------------- configurations

def test_public_configurations_and_sources():
    assert len(DEFAULT_CONFIGS) == 7
    schemes = {MODEL_CONFIGS[c].scheme_label() for c in DEFAULT_CONFIGS}
    assert {"independent", "gqa(8)", "mqa", "tied"} <= schemes
    llama = MODEL_CONFIGS["llama2-7b"]
    assert (llama.d, llama.heads, llama.d_head) == (4096, 32, 128)
    for c in MODEL_CONFIGS.values():
        assert "huggingface.co" in c.source
        assert c.n <= c.d and c.d_head * c.heads == c.d
    assert MODEL_CONFIGS["bert-base"].n == 512          # BERT's context caps n


def test_scaling_keeps_ratios_exactly():
    cfg = MODEL_CONFIGS["llama2-7b"]
    nom, small = cfg.dimensions(), cfg.dimensions(cfg.scaled_n(1024))
    assert small.n == 1024 and small.d_k == 64 and small.d_o == 2048
    assert (nom.gamma_k, nom.gamma_v, nom.gamma_o) == (small.gamma_k, small.gamma_v, small.gamma_o)
    real = cfg.dimensions(1024, widths="real")
    assert real.d_k == 128 and real.d_o == 4096
    assert MODEL_CONFIGS["gpt2-small"].scaled_n(256) == 192          # 768/4: widths stay integers


def test_configuration_errors():
    with pytest.raises(FreeprobValueError, match="known: gpt2-small, gpt2-medium"):
        model_config("gpt5")
    with pytest.raises(FreeprobValueError, match="n ≤ d"):
        MODEL_CONFIGS["gpt2-small"].dimensions(1000, widths="real")
    with pytest.raises(FreeprobValueError, match="nominal"):
        MODEL_CONFIGS["gpt2-small"].dimensions(1000)
    with pytest.raises(FreeprobValueError, match="divis|divide"):
        model_config("x:d=512,heads=8,d_head=64,scheme=gqa:3")
    with pytest.raises(FreeprobValueError, match="positive integer"):
        model_config("x:d=512,heads=0,d_head=64")
    with pytest.raises(FreeprobValueError, match="`d` must be an integer ≥ 1"):
        model_config("x:d=-5,heads=2,d_head=64")
    with pytest.raises(FreeprobValueError, match="missing d_head"):
        model_config("x:d=512,heads=8")
    with pytest.raises(FreeprobValueError, match="allowed keys"):
        model_config("x:d=512,heads=8,d_head=64,width=3")
    with pytest.raises(FreeprobValueError, match="unknown scheme"):
        parse_scheme("grouped")
    assert parse_scheme("mqa") == ("gqa", 1) and parse_scheme("gqa:8") == ("gqa", 8)
    custom = model_config("tiny:d=64,heads=4,d_head=16,scheme=mqa")
    assert custom.kv_groups == 1 and custom.n == 64 and isinstance(custom, ModelConfig)


def test_settings_errors(tmp_path):
    with pytest.raises(FreeprobValueError, match="unknown configuration 'nope'; known"):
        plan_cells(VerifySettings(configs=("nope",), out=tmp_path))
    with pytest.raises(FreeprobValueError, match="0 < β ≤ 5"):
        VerifySettings(beta=30)
    with pytest.raises(FreeprobValueError, match="centred attention vanishes"):
        VerifySettings(beta=0)
    for tiny in ("1e-400", "1e-10", "0.009"):        # used to hang / end in PrecisionError
        with pytest.raises(FreeprobValueError, match="1/100 ≤ β ≤ 5"):
            VerifySettings(beta=tiny)
    with pytest.raises(FreeprobValueError, match="1/100 ≤ β ≤ 5"):
        VerifySettings(beta="1,1e-400")
    assert VerifySettings(beta="0.01").beta_exact == Fraction(1, 100)
    assert VerifySettings(beta="1/2").beta_exact == Fraction(1, 2)
    with pytest.raises(FreeprobValueError, match="integer ≥ 2.*nominal"):
        plan_cells(VerifySettings(configs=("m:d=512,heads=8,d_head=64,context=1",), out=tmp_path))
    for bad in ("-1", "nan", "abc"):
        with pytest.raises(FreeprobValueError, match="beta"):
            VerifySettings(beta=bad)
    with pytest.raises(FreeprobValueError, match="seeds"):
        VerifySettings(seeds=0)
    with pytest.raises(FreeprobValueError, match="unknown object"):
        VerifySettings(objects=("out", "spam"))
    with pytest.raises(FreeprobValueError, match="exceeds"):
        plan_cells(VerifySettings(configs=("gpt2-small",), n=4096, out=tmp_path))
    with pytest.raises(FreeprobValueError, match="configuration 'x/gqa.3.'.*must divide heads=2"):
        plan_cells(VerifySettings(configs=("x:d=64,heads=2,d_head=16",), schemes=("gqa:3",), out=tmp_path))


# ---------------------------------------------------------------------- the run

TINY = ("tiny:d=64,heads=4,d_head=16", "tinymqa:d=64,heads=4,d_head=16,scheme=mqa")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    # a real LocalCluster of 2 worker processes (the default executor on a 2-core machine)
    out = tmp_path_factory.mktemp("verify")
    st = VerifySettings(configs=TINY, seeds=3, points=200, out=out)
    return out, st, verify(st, progress=False, stream=None, workers=2)


def _done_cells(path):
    with ResultStore(path, readonly=True) as st:
        return {k for k in st.done_keys() if not k.startswith("theory-")}


def test_verify_writes_everything(tiny_run):
    out, st, res = tiny_run
    for name in ("summary.csv", "summary.json", "per_seed.csv", "table.txt", "results.sqlite",
                 "figures/histograms.png", "figures/qq.png"):
        assert (out / name).stat().st_size > 0, name
    assert len(_done_cells(out)) == 6
    # GE and finite width, each once: the MQA layer's output law is the independent one's
    # (sharing changes only the head sum), so both configurations share one tabulated law
    assert res["computed"] == 6 and res["resumed"] == 0 and res["laws_computed"] == 2
    assert "LocalCluster, 2 worker processes" in res["executor"]
    text = (out / "table.txt").read_text()
    assert "paper (Table 2, seven configurations): 0.24%–2.82%" in text and "tinymqa" in text
    assert "over 2 configurations;" in text
    json.loads((out / "summary.json").read_text())
    # one row per (configuration, n, β, seed, quantity), with the code version and the time
    with ResultStore(out, readonly=True) as db:
        rows = db.rows()
        (sweep,) = db.sweeps()
    assert sweep["cells"] == 6 and "SM–GE relW1" in sweep["report"]
    by = {(r[2], r[5], r[6]): r for r in rows}
    assert {r[3] for r in rows} == {64} and {r[4] for r in rows} == {"1"}
    assert len({(r[2], r[5]) for r in rows}) == 6
    for row in res["rows"]:
        vals = [by[(row["config"], s, "out/sm_ge_relW1")][7] for s in range(3)]
        assert float(np.mean(vals)) == pytest.approx(row["metrics"]["sm_ge_relW1"]["mean"], rel=1e-12)
    assert all(r[8].startswith("freeprob 0.") and r[9].endswith("Z") for r in rows)


def test_local_cluster_gives_the_sequential_numbers(tiny_run, tmp_path):
    out, st, res = tiny_run
    seq = verify(VerifySettings(configs=TINY, seeds=3, points=200, out=tmp_path, figures=False),
                 progress=False, stream=None, workers=1)
    assert seq["executor"] == "this process (1 worker)"
    assert seq["rows"] == res["rows"]


def test_verify_numbers_are_sane(tiny_run):
    out, st, res = tiny_run
    for row in res["rows"]:
        m = row["metrics"]
        assert row["seeds"] == 3 and row["theory_error"] is None
        # n = 64, h = 4, d_K = 16, β = 1: GE against its own limit law within a few percent,
        # far below what a wrong law gives (test_law_distance_detects_a_wrong_law)
        assert m["ge_th_KS"]["mean"] < 0.08
        assert m["ge_th_relW1"]["mean"] < 0.1
        assert abs(m["m2_err_ge"]["mean"]) < 0.15
        assert m["sm_ge_relW1"]["lo"] <= m["sm_ge_relW1"]["mean"] <= m["sm_ge_relW1"]["hi"]
    # the exact mean of the output law is θ1 γ_O = (e − 1)·1 (theory.md §3.3)
    with ResultStore(out, readonly=True) as db:
        laws = [db.get_object(c.key) for c in plan_sweep(st) if c.kind == "object" and "-fw-" not in c.key]
    assert len(laws) == 1                  # tiny and tinymqa share their output law (sharing: head sum only)
    assert laws[0]["moments"][1] == pytest.approx(math.e - 1, rel=1e-14)


def test_verify_resumes_without_recomputing(tiny_run):
    out, st, res = tiny_run
    again = verify(st, progress=False, stream=None, workers=1)
    assert again["computed"] == 0 and again["resumed"] == 6 and again["laws_computed"] == 0
    assert again["rows"] == res["rows"]
    more = verify(VerifySettings(configs=TINY, seeds=4, points=200, out=out, figures=False),
                  progress=False, stream=None, workers=1)
    assert more["computed"] == 2 and more["resumed"] == 6


def test_unwritable_output_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep me")
    with pytest.raises(FreeprobValueError, match="cannot write to the output directory"):
        verify(VerifySettings(configs=TINY[:1], seeds=1, out=blocker / "sub"), progress=False, stream=None)
    with pytest.raises(FreeprobValueError, match="exists and is not a directory"):
        verify(VerifySettings(configs=TINY[:1], seeds=1, out=blocker), progress=False, stream=None)
    assert blocker.read_text() == "keep me"


def test_write_failure_mid_run_is_reported_and_cells_are_kept(tmp_path, capsys, monkeypatch):
    import errno

    from freeprob.experiments import verify as verify_mod
    (tmp_path / "table.txt").mkdir()           # the final table cannot be written: refused before computing
    args = ["verify", "--configs", TINY[0], "--seeds", "1", "--points", "200", "--no-progress", "--no-figures",
            "--out", str(tmp_path)]
    assert main(args) == 2
    assert "cannot write" in capsys.readouterr().err and not (tmp_path / "results.sqlite").exists()
    (tmp_path / "table.txt").rmdir()

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(verify_mod, "_atomic_write", full)      # a disk that fills up at the end
    assert main(args) == 2
    assert "cannot write" in capsys.readouterr().err
    assert len(_done_cells(tmp_path)) == 1
    monkeypatch.undo()
    assert main(args) == 0
    assert "0 cells computed, 1 reused" in capsys.readouterr().out


def test_cli_errors(capsys, tmp_path):
    assert main(["verify", "--configs", "gpt5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown configuration 'gpt5'" in err and "falcon-7b" in err
    (tmp_path / "f").write_text("")
    assert main(["verify", "--configs", TINY[0], "--seeds", "1", "--out", str(tmp_path / "f" / "x")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main(["verify", "--configs", "gpt2-small", "--n", "5000", "--widths", "real",
                 "--out", str(tmp_path)]) == 2
    assert "n ≤ d" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["verify", "--seeds", "0"])


def test_cli_custom_configs_keep_their_commas(capsys, tmp_path):
    from freeprob.cli import _config_list
    assert _config_list("gpt2-small,mine:d=512,heads=8,d_head=64,scheme=gqa:4,context=600,bert-base") == (
        "gpt2-small", "mine:d=512,heads=8,d_head=64,scheme=gqa:4,context=600", "bert-base")
    cfg = model_config(_config_list("mine:d=512,heads=8,d_head=64,scheme=gqa:4")[0])
    assert (cfg.scheme, cfg.kv_groups) == ("gqa", 4)


def test_rounded_widths_are_labelled(tmp_path):
    cells = plan_cells(VerifySettings(configs=("gpt2-small",), n=128, out=tmp_path))
    assert not cells[0].exact_ratios and "rounded" in cells[0].describe()
    cells = plan_cells(VerifySettings(configs=("gpt2-small",), n=384, out=tmp_path))
    assert cells[0].exact_ratios and "rounded" not in cells[0].describe()


def test_cli_runs_a_tiny_verify(capsys, tmp_path):
    code = main(["verify", "--configs", TINY[0], "--seeds", "2", "--points", "200", "--no-progress",
                 "--no-figures", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "tiny" in out and "SM–GE relW1" in out and "paper (Table 2, seven" in out


def test_verify_out_full_refinements_and_uncoupled(tmp_path):
    from freeprob.attention import Architecture, common_row_spike
    st = VerifySettings(configs=TINY[:1], seeds=2, points=200, out=tmp_path, figures=False,
                        objects=("out", "out_full"), refinements=True)
    res = verify(st, progress=False, stream=None)
    rows = {r["object"]: r["metrics"] for r in res["rows"]}
    spike = float(common_row_spike(Architecture.from_dimensions(n=64, heads=4, d_k=16, d_v=16, d_o=64,
                                                                beta=1), 64))
    full = rows["out_full"]
    assert full["edge_th"]["mean"] == pytest.approx(spike, rel=1e-12)
    # the O(n) spike is predicted to within its draw-to-draw spread √(2/(h d_V) + 2/d_O) ≈ 0.25
    assert full["top_softmax"]["mean"] == pytest.approx(spike, rel=0.5)
    assert full["ge_th_KS"]["mean"] < 0.1                # bulk without the spike vs the output law
    for key in ("sm_ge2_relW1", "sm_gekn_relW1", "top_ge2", "top_ge+kn"):
        assert rows["out"][key]["n"] == 2
    assert "gap closed" in (tmp_path / "table.txt").read_text()
    # GE is drawn first, so the plain GE spectra equal those of a run without refinements
    plain = verify(VerifySettings(configs=TINY[:1], seeds=2, points=200, out=tmp_path / "plain", figures=False),
                   progress=False, stream=None)
    assert plain["rows"][0]["metrics"]["sm_ge_relW1"] == rows["out"]["sm_ge_relW1"]
    with pytest.raises(FreeprobValueError, match="coupled"):
        VerifySettings(refinements=True, coupled=False)
    un = verify(VerifySettings(configs=TINY[:1], seeds=2, points=200, out=tmp_path, figures=False,
                               coupled=False, weights="rademacher"), progress=False, stream=None)
    assert un["computed"] == 2 and un["rows"][0]["metrics"]["ge_th_KS"]["mean"] < 0.1
    with pytest.raises(FreeprobValueError, match="weights"):
        VerifySettings(weights="uniform")


def test_coinciding_nodes_are_merged():
    t = TabulatedLaw([0.0, 0.0, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 1.0, 1.0], [], [1, 0.5], [(0, 1)], [], [])
    assert t.nodes.tolist() == [0.0, 0.5, 1.0]
    assert t.cdf(0.25) == pytest.approx(0.25)


def _run_and_interrupt(tmp_path, sig, workers, seeds=6, stop_after=2):
    """Start `freeprob verify` in a subprocess, send ``sig`` once ``stop_after`` cells are
    stored; returns (returncode, stderr, cells stored at the end).

    The signal is sent while this process holds the store's write lock, taken before the
    stored cells are counted: the run cannot store another cell between the count and the
    signal, so the signal always arrives in the middle of the cells, however fast they are
    and however late this process gets the CPU (polling without the lock, a loaded machine
    let the run store all its cells, summarise and exit 0 before the signal).  The lock is
    released after the signal: a cell the run was about to store is stored (at most one
    more), and the interrupt is raised right after."""
    import signal
    import sqlite3
    import subprocess
    import sys
    import time
    db = tmp_path / "run.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "freeprob.cli", "verify", "--configs", TINY[0], "--n", "64", "--seeds", str(seeds),
         "--points", "200", "--no-progress", "--no-figures", "--no-finite-width", "--workers", str(workers),
         "--out", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # a test run started in the background of a non-interactive shell inherits an ignored
        # SIGINT, and so would the run: give it the default disposition a terminal gives
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 240
    done = None
    while done is None:               # the store is created by the run: only read it until then
        assert time.time() < deadline and proc.poll() is None, "the sweep did not create its store"
        time.sleep(0.02)
        try:
            done = _done_cells(db)
        except Exception:            # the store is being created
            done = None
    lock = sqlite3.connect(db, timeout=30, isolation_level=None)
    try:
        while True:
            assert time.time() < deadline and proc.poll() is None, "the sweep did not store cells"
            lock.execute("BEGIN IMMEDIATE")                 # the run's next cell waits for this
            try:
                done = _done_cells(db)
            except Exception:
                done = set()
            if len(done) >= stop_after:
                # Ctrl-C as the terminal sends it, to the whole process group (the Dask
                # workers too), pressed three times (the clean-up must not be cut, nor the
                # exit status changed); SIGKILL to the run alone
                (os.killpg if sig == signal.SIGINT else os.kill)(proc.pid, sig)
                for _ in range(2 if sig == signal.SIGINT else 0):
                    time.sleep(0.1)
                    os.killpg(proc.pid, sig)
                # the run cannot store another cell while the lock is held: hold it until the
                # run has ended or for 5 s, so that a loaded machine delivering the signal late
                # cannot let the run finish every cell first
                end = time.time() + 5
                while proc.poll() is None and time.time() < end:
                    time.sleep(0.05)
                lock.execute("ROLLBACK")
                break
            lock.execute("ROLLBACK")
            time.sleep(0.02)
    finally:
        lock.close()
    _, err = proc.communicate(timeout=120)                 # no hang
    return proc.returncode, err, _done_cells(db), db


@pytest.mark.parametrize("workers", [1, 2])
def test_interrupted_sweep_resumes_with_only_the_missing_cells(tmp_path, workers):
    import signal
    for seeds in (12, 48):
        # the run keeps every cell finished when the signal arrives: on an idle machine two
        # Dask workers can finish all 12 tiny cells while the run waits to store its third
        # (it then has nothing to resume); a second run with 48 cells is interrupted mid-way
        (tmp_path / f"s{seeds}").mkdir()
        code, err, kept, db = _run_and_interrupt(tmp_path / f"s{seeds}", signal.SIGINT, workers, seeds=seeds)
        if len(kept) < seeds:
            break
    assert code == 130, err
    # one line, nothing else (no traceback, none from a worker, no "Port 8787 is already in
    # use" from Dask: freeprob.experiments.sweep.LOCAL_CLUSTER_OPTIONS)
    lines = [ln for ln in err.splitlines() if ln.strip() and "warn" not in ln.lower()]
    assert lines == ["freeprob: interrupted; finished cells are kept and a rerun resumes"], err
    assert 2 <= len(kept) < seeds, "the run finished before the interrupt"
    # (no finite-width law: what is interrupted and resumed is the same for every law; the
    # finite-width columns' resumption is tested with tiny_run)
    st = VerifySettings(configs=TINY[:1], n=64, seeds=seeds, points=200, out=db, figures=False,
                        finite_width=False)
    laws = [c for c in plan_sweep(st) if c.kind == "object"]           # the GE law
    assert len(laws) == 1
    with ResultStore(db, readonly=True) as before:
        law_missing = sum(before.get_object(law.key) is None for law in laws)
    rest = verify(st, progress=False, stream=None, workers=1)
    assert rest["computed"] == seeds - len(kept)                      # only the missing cells
    assert rest["resumed"] == len(kept) and rest["laws_computed"] == law_missing
    whole = verify(VerifySettings(configs=TINY[:1], n=64, seeds=seeds, points=200, out=tmp_path / "whole",
                                  figures=False, finite_width=False), progress=False, stream=None, workers=1)
    assert rest["rows"] == whole["rows"]


def test_killed_sweep_loses_nothing(tmp_path):
    import signal
    seeds = 12
    code, err, kept, db = _run_and_interrupt(tmp_path, signal.SIGKILL, 1, seeds=seeds)
    assert code == -signal.SIGKILL
    assert 2 <= len(kept) < seeds
    st = VerifySettings(configs=TINY[:1], n=64, seeds=seeds, points=200, out=db, figures=False,
                        finite_width=False)
    rest = verify(st, progress=False, stream=None, workers=1)
    assert rest["computed"] == seeds - len(kept)
    assert len(_done_cells(db)) == seeds


def test_unguarded_script_fails_fast(tmp_path):
    # a script calling verify() at top level (no __main__ guard) makes the spawned workers
    # re-run it and die; the pool used to restart them forever
    import subprocess
    import sys
    script = tmp_path / "unguarded.py"
    script.write_text("from freeprob.experiments.verify import VerifySettings, verify\n"
                      f"verify(VerifySettings(configs=('gpt2-small',), max_n=64, seeds=1, figures=False, "
                      f"out={str(tmp_path / 'out')!r}), progress=False)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode != 0 and "__name__ == \"__main__\"" in proc.stderr


def test_density_accepts_numpy_scalars():
    import numpy as np
    from freeprob import FreePoisson
    law = FreePoisson(1)
    assert law.density(np.float64(1.0), dps=15) == law.density(1.0, dps=15)


def test_cli_refuses_an_unreachable_scheduler_and_a_foreign_store(capsys, tmp_path):
    import sqlite3
    import time
    t = time.monotonic()
    args = ["verify", "--configs", TINY[0], "--seeds", "1", "--no-progress", "--no-figures"]
    assert main([*args, "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "a")]) == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in capsys.readouterr().err
    assert time.monotonic() - t < 30                       # fails fast (a guard, not a speed target)
    # a store of another format: refused before anything is computed, never mixed
    db = tmp_path / "old.sqlite"
    assert main([*args, "--points", "200", "--workers", "1", "--out", str(db)]) == 0
    capsys.readouterr()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = '0' WHERE key = 'store_format'")
        before = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert main([*args, "--seeds", "2", "--workers", "1", "--out", str(db)]) == 2
    err = capsys.readouterr().err
    assert "store format 0" in err and "not mixed" in err
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == before
    # not a database at all
    bad = tmp_path / "notes.db"
    bad.write_text("my notes")
    assert main([*args, "--out", str(bad)]) == 2
    assert "is not a SQLite database" in capsys.readouterr().err
    assert bad.read_text() == "my notes"


# ---------------------------------------------------------------------- finite-width columns (issue 18)

def test_finite_width_columns_are_reported_and_stored(tiny_run):
    out, st, res = tiny_run
    assert st.finite_width                                              # the default
    for row in res["rows"]:
        m = row["metrics"]
        assert row["fw_error"] is None
        for k in ("sm_fw_relW1", "sm_fw_KS", "top_pred_fw"):
            assert math.isfinite(m[k]["mean"]) and m[k]["n"] == 3, k
        # n = 64, h = 4, d_K = 16, β = 1, seeds 0-2 of base seed 2026: the finite-width law is
        # closer to softmax than the GE law in KS (measured 3.7% vs 6.7%); in relW1 three seeds
        # at n = 64 are noise (per seed 6–31%): 13.9% vs 12.8% here since the bulk scale of issue
        # 29 (θ1^emp = 1.506 at n = 64; 8.7% before), and over 20 seeds 13.4% vs 16.8%, paired
        # −3.4 ± 3.1 points (p = 0.03; the fw law before issue 29: 14.9%, −1.5 ± 3.8 against it)
        assert m["sm_fw_relW1"]["mean"] < 1.2 * m["sm_th_relW1"]["mean"]
        assert m["sm_fw_KS"]["mean"] < 0.8 * m["sm_th_KS"]["mean"]
    text = (out / "table.txt").read_text()
    assert "SM–fw relW1" in text and "top pred fw" in text
    assert ("finite-width law (at each row's own n and widths) vs the GE law, against softmax (relW1, paired over "
            "the seeds, 95% t-interval): closer (significant) in ") in text
    for row in res["rows"]:        # the paired difference of the per-seed distances, with its test
        d, m = row["metrics"]["fw_minus_th_relW1"], row["metrics"]
        assert d["n"] == 3 and d["mean"] == pytest.approx(m["sm_fw_relW1"]["mean"] - m["sm_th_relW1"]["mean"])
        assert d["verdict"] == ("closer (significant)" if d["hi"] < 0 else "not significant")
        assert (d["p"] < 0.05) == (d["hi"] < 0)
        assert row["metrics"]["top_fw_draw_in_band"]["n"] == 3
    assert "sm_fw_relW1_mean" in (out / "summary.csv").read_text().splitlines()[0]
    with ResultStore(out, readonly=True) as db:
        names = {r[6] for r in db.rows()}
        kinds = [c.key for c in plan_sweep(st) if c.kind == "object"]
        fw = [db.get_object(k) for k in kinds if k.startswith("theory-fw-")]
    assert {"out/sm_fw_relW1", "out/sm_fw_KS", "out/top_pred_fw"} <= names
    assert len(fw) == 1 and all(math.isfinite(d["predicted_top"]) for d in fw)     # shared by tiny, tinymqa
    # the top-eigenvalue columns of issue 18: s.e. of the seeds' mean, conditional prediction
    assert {"out/theta_sq_draw", "out/top_spread_fw", "out/top_pred_fw_draw"} <= names
    assert "± s.e. fw" in text and "top pred fw|draw" in text
    assert "top pred fw: unconditional prediction" in text
    assert "softmax top eigenvalue vs the conditional prediction (top pred fw|draw): mean of the draws within 5% in" \
        in text and "single draws within 5%: " in text
    head = (out / "summary.csv").read_text().splitlines()[0]
    assert "top_pred_fw_draw_mean" in head and "top_pred_fw_se_mean" in head
    for row in res["rows"]:
        m = row["metrics"]
        # n = 64, d_K = 16: the spike is below the threshold, every prediction is the bulk edge
        assert m["top_pred_fw_draw"]["mean"] == pytest.approx(m["top_pred_fw"]["mean"], rel=1e-12)
        assert m["top_pred_fw_se"]["n"] == 3 and m["top_pred_fw_se"]["lo"] is None


def test_conditional_top_prediction_is_the_direct_call(tmp_path):
    """``top pred fw|draw`` of a cell is ``predicted_top_eigenvalue(arch, obj, True,
    theta_sq=realised_spike_strength(K, V, W_O, β), bulk_law=law)`` for the weights that
    cell drew (redrawn here from its seed), and ``± s.e. fw`` is
    ``predicted_top_spread/√seeds``.  MQA head sum at ``n = 64``, ``h = 8``, ``d_K = 8``:
    an outlier (predicted 37.6 against the bulk edge 22.4) whose strength scatters by
    draw, so the conditional predictions of the two seeds differ."""
    from freeprob.attention import Architecture, head_sum_law
    from freeprob.attention.spikes import (predicted_top_eigenvalue, predicted_top_spread,
                                           realised_spike_strength)
    from freeprob.sampler import draw_weights
    st = VerifySettings(configs=("mqa8:d=64,heads=8,d_head=8,scheme=mqa",), objects=("sum",), seeds=2,
                        points=100, out=tmp_path, figures=False)
    res = verify(st, progress=False, stream=None, workers=1)
    m = res["rows"][0]["metrics"]
    cells = [c for c in plan_sweep(st) if c.kind == "cell"]
    dims = cells[0].kwargs["dims"]
    arch = Architecture.from_dict(dims.to_dict()).with_beta(1)
    law = head_sum_law(arch, finite_width=True)
    direct = []
    for c in cells:
        w = draw_weights(dims, rng=np.random.default_rng(c.kwargs["entropy"]))
        theta = realised_spike_strength(w.k, w.v, w.w_o, 1.0, "sum")
        direct.append(predicted_top_eigenvalue(arch, "sum", True, theta_sq=theta, bulk_law=law))
        with ResultStore(tmp_path, readonly=True) as db:
            stored = db.cell_quantities(c.key)
        assert stored["sum/theta_sq_draw"] == pytest.approx(theta, rel=1e-12)
        assert stored["sum/top_pred_fw_draw"] == pytest.approx(direct[-1], rel=1e-9)
    assert abs(direct[0] / direct[1] - 1) > 0.01, direct
    assert m["top_pred_fw_draw"]["mean"] == pytest.approx(np.mean(direct), rel=1e-9)
    spread = predicted_top_spread(arch, "sum", True, bulk_law=law)
    assert m["top_pred_fw_se"]["mean"] == pytest.approx(spread / math.sqrt(2), rel=1e-9)
    unconditional = predicted_top_eigenvalue(arch, "sum", True, bulk_law=law)
    assert m["top_pred_fw"]["mean"] == pytest.approx(unconditional, rel=1e-9)
    assert m["top_pred_fw"]["mean"] > 1.3 * max(float(b) for _, b in law.support(dps=15))


def test_finite_width_can_be_switched_off(capsys, tmp_path):
    assert main(["verify", "--configs", TINY[0], "--n", "32", "--seeds", "1", "--points", "60", "--workers", "1",
                 "--no-progress", "--no-figures", "--no-finite-width", "--out", str(tmp_path / "v")]) == 0
    text = capsys.readouterr().out
    assert "SM–fw" not in text and "top pred fw" not in text and "1 exact law tabulated" in text
    with pytest.raises(FreeprobValueError, match="finite_width must be True or False"):
        VerifySettings(finite_width="yes", out=tmp_path)


def test_finite_width_summary_line():
    """Each claim of the summary carries its test: a row whose paired difference is within the
    noise prints "not significant" (named, with its interval and p-value); "within 5 %" is
    given for the means of the draws (with the interval) and per draw (with its Wilson
    interval, the rows with misses named)."""
    from freeprob.experiments.stats import mean_interval
    from freeprob.experiments.summary import finite_width_summary, paired_metrics

    def row(name, fw, th, top=None, pred=None, pred_draw=None):
        recs = [dict(sm_fw_relW1=a, sm_th_relW1=b) for a, b in zip(fw, th)]
        if top:
            for r, t, c in zip(recs, top, pred_draw):
                r |= dict(top_softmax=t, top_pred_fw=pred, top_pred_fw_draw=c, edge_th=9.0)
        m = {k: (lambda i: dict(mean=i.mean, lo=i.lo, hi=i.hi, n=i.n))(mean_interval([r[k] for r in recs]))
             for k in recs[0]}
        return dict(config=name, metrics=m | paired_metrics(recs))

    clear = row("clear", [0.010, 0.011, 0.012, 0.009], [0.020, 0.021, 0.019, 0.022], [10.0, 10.1, 9.9, 10.2], 10.0,
                [10.0] * 4)
    noise = row("noise", [0.010, 0.013, 0.012, 0.010], [0.011, 0.012, 0.011, 0.010], [10.0, 11.0, 9.0, 10.2], 10.0,
                [10.0, 10.8, 9.2, 10.1])
    worse = row("worse", [0.020, 0.021, 0.022, 0.0205], [0.010, 0.011, 0.0105, 0.010])
    lines = finite_width_summary([clear, noise, worse])
    assert lines[0].startswith("finite-width law (at each row's own n and widths) vs the GE law, against softmax "
                               "(relW1, paired over the seeds, 95% t-interval): closer (significant) in 1 of 3 rows "
                               "(relW1 lower by 49% of the GE law's; largest p 0.0038, clear); "
                               "farther (significant) in 1 (worse: +1.05 ± 0.11 points, p = 8.4e-05); ")
    assert clear["metrics"]["fw_minus_th_relW1"]["relative"] == pytest.approx(-0.01 / 0.0205)
    d = noise["metrics"]["fw_minus_th_relW1"]
    assert d["mean"] == pytest.approx(0.00025) and d["lo"] < 0 < d["hi"] and d["verdict"] == "not significant"
    assert f"not significant in 1 (noise: +0.03 ± {100 * (d['hi'] - d['mean']):.2f} points, p = {d['p']:.2g})" \
        in lines[0] and d["p"] > 0.05
    assert lines[0].endswith("median ratio relW1(SM–fw)/relW1(SM–th) 1.02 (range 0.51–2.01)")
    assert lines[1].startswith("top eigenvalue vs softmax (means of the draws): finite-width prediction")
    assert lines[2] == ("softmax top eigenvalue vs the conditional prediction (top pred fw|draw): mean of the draws "
                        "within 5% in 2 of 2 rows (its 95% interval inside ±5% in 2); single draws within 5%: 8 of 8 "
                        "(100%, 95% interval 68–100%)")
    assert "(its 95% interval inside ±5% in 1; noise: +0.50% ± 13.09, not significant)" in lines[3]
    assert lines[3].endswith("single draws within 5%: 6 of 8 (75%, 95% interval 41–93%) — noise 2 of 4 (50%, "
                             "95% interval 15–85%)")
    # a summary without per-seed pairs says that it has no test
    bare = [dict(config="x", metrics=dict(sm_fw_relW1=dict(mean=0.01), sm_th_relW1=dict(mean=0.02)))]
    assert "means only, no paired test): closer in 1 of 1 rows" in finite_width_summary(bare)[0]
    assert finite_width_summary([dict(metrics={})]) == []


def test_uncoupled_cell_keeps_its_random_stream():
    """An uncoupled cell draws the softmax weights itself (for ``theta_sq_draw``) and then
    the GE model's own: the spectra equal one ``spectra(coupled=False)`` call on the same
    seed (softmax consumes no random numbers), and ``theta_sq_draw`` is the realised
    strength of the softmax weights."""
    from freeprob.attention.spikes import realised_spike_strength
    from freeprob.experiments.verify import _sample_job
    from freeprob.sampler import Dimensions, draw_weights, spectra
    dims = Dimensions(n=32, heads=4, d_k=8, d_v=8, d_o=32)
    job = _sample_job(dims, "1", 7, ("out", "sum"), False, False, "rademacher")
    kinds = dict(value_weights="rademacher", output_weights="rademacher")
    ref = spectra(dims, 1.0, rng=np.random.default_rng(7), models=("softmax", "ge"), objects=("out", "sum"),
                  coupled=False, **kinds)
    assert all(np.array_equal(job["arrays"][f"{m}/{o}"], v) for (m, o), v in ref.items())
    w = draw_weights(dims, rng=np.random.default_rng(7), **kinds)
    assert job["quantities"]["sum/theta_sq_draw"] == realised_spike_strength(w.k, w.v, w.w_o, 1.0, "sum")


def test_top_spread_uses_each_rows_sharing_scheme(tmp_path):
    """The out law (and its unconditional prediction) is shared by independent heads and
    multi-query, but the spread of one initialisation's top eigenvalue is not: each row's
    ``top_pred_fw_se`` is ``predicted_top_spread`` of its own scheme over √seeds."""
    from freeprob.attention import Architecture, output_law
    from freeprob.attention.spikes import predicted_top_spread
    cfgs = ("ind8:d=64,heads=8,d_head=8", "mqa8:d=64,heads=8,d_head=8,scheme=mqa")
    st = VerifySettings(configs=cfgs, objects=("out",), seeds=1, points=100, out=tmp_path, figures=False)
    res = verify(st, progress=False, stream=None, workers=1)
    cells = {c.kwargs["dims"].scheme: c.kwargs["dims"] for c in plan_sweep(st) if c.kind == "cell"}
    got = {}
    for row in res["rows"]:
        dims = cells["independent" if row["config"] == "ind8" else "gqa"]
        arch = Architecture.from_dict(dims.to_dict()).with_beta(1)
        law = output_law(arch, finite_width=True)
        got[row["config"]] = row["metrics"]["top_pred_fw_se"]["mean"]
        assert got[row["config"]] == pytest.approx(predicted_top_spread(arch, "out", True, bulk_law=law), rel=1e-9)
    assert got["mqa8"] > 1.5 * got["ind8"], got      # one key and value matrix: coherent spikes


def test_conditional_top_takes_over_a_workers_setup():
    # the set-up of a finite-width law computed in a worker (Cauchy equation, special
    # points, support), pickled and adopted in the main process: the same predictions as
    # a law built there, without deriving the equation or the discriminant again
    import pickle
    from freeprob.attention import Architecture, head_sum_law
    from freeprob.attention.spikes import predicted_top_eigenvalue
    from freeprob.experiments.verify_laws import OBJECT_LAWS, law_dims
    from freeprob.experiments.verify_top import ConditionalTop
    from freeprob.laws.numeric_state import adopt_numeric_state, numeric_state
    from freeprob.errors import FreeprobValueError
    dims = dict(n=64, heads=8, d_k=8, d_v=8, d_o=64, d=64, scheme="gqa", kv_groups=1)
    arch = Architecture.from_dict(dims).with_beta("1")
    worker = head_sum_law(arch, finite_width=True)
    expected = [predicted_top_eigenvalue(arch, "sum", True, theta_sq=t, bulk_law=worker) for t in (0.5, 2.0)]
    state = pickle.loads(pickle.dumps(numeric_state(worker)))
    top = ConditionalTop(OBJECT_LAWS, law_dims)
    top.adopt(dims, "1", "sum", state)
    assert [top(dims, "1", "sum", t) for t in (0.5, 2.0)] == pytest.approx(expected, rel=1e-12)
    _, law = top._law(dims, "1", "sum")
    # the law is c·X (the bulk scale as an outer dilation): X's set-up travels
    assert set(state) == {"dilated"} and "cauchy_equation" not in law._cache
    assert law.law._cache["cauchy_equation"] == worker.law._cache["cauchy_equation"]
    assert "disc" not in law._evaluator("test").inner._cache          # nothing derived again
    with pytest.raises(FreeprobValueError, match="numeric_state"):
        adopt_numeric_state(head_sum_law(arch, finite_width=True), {"evaluator": {}})
    with pytest.raises(FreeprobValueError, match="not one"):
        adopt_numeric_state(head_sum_law(arch), state)


def test_theory_job_hands_back_the_row_variances(monkeypatch):
    # a worker's row variances (the normaliser's quadratures) reach the main process with
    # the law's set-up: building the same law there does no quadrature
    import pickle
    from freeprob.attention import normaliser as nz
    from freeprob.experiments import verify_laws
    from freeprob.experiments.sweep import TRANSIENT
    from freeprob.experiments.verify_laws import OBJECT_LAWS, adopt_transient, law_dims
    from freeprob.experiments.verify_top import ConditionalTop
    from freeprob.errors import FreeprobValueError
    dims = dict(n=64, heads=2, d_k=8, d_v=8, d_o=16, d=64, scheme="independent", kv_groups=None)
    data = verify_laws.theory_job(dims, "0.9", "single", 50, finite_width=True)
    state = pickle.loads(data[TRANSIENT])
    assert set(state) == {"law", "normaliser", "top_cauchy"} and (0.9, 8, 64) in state["normaliser"]
    assert len(state["top_cauchy"]) >= 1     # G at the points of the worker's top search
    v = state["normaliser"][(0.9, 8, 64)]
    monkeypatch.setattr(nz, "_ROW_VARIANCES", {})
    monkeypatch.setattr(nz, "_row_variance_uncached", lambda *a: pytest.fail("quadrature redone"))

    class Cell:
        kind, kwargs = "object", dict(dims=dims, beta="0.9", obj="single")
    top = ConditionalTop(OBJECT_LAWS, law_dims)
    adopt_transient(top, Cell, data)
    assert nz.empirical_row_variance(0.9, 8, 64) == v
    assert top(dims, "0.9", "single", 1.0) is not None
    # the main process's searches start from the worker's values of G (not evaluated
    # again), and the search at the mean strength gives the worker's prediction exactly
    from freeprob.attention import Architecture
    from freeprob.attention.spikes import spike_strength
    _, law = top._law(dims, "0.9", "single")
    known = law._cache[("top_cauchy", 15)]
    assert all(known[lam] == g for lam, g in state["top_cauchy"].items())
    mean = float(spike_strength(Architecture.from_dict(dims).with_beta("0.9"), "single"))
    assert top(dims, "0.9", "single", mean) == data["predicted_top"]
    with pytest.raises(FreeprobValueError, match="row_variance_state"):
        nz.adopt_row_variances({(0.9, 8, 64): -1.0})
    with pytest.raises(FreeprobValueError, match="row_variance_state"):
        nz.adopt_row_variances([1])
