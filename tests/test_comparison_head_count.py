"""Comparison 1 (head count) through the ``freeprob readout`` command: one quick run,
checked against closed forms (zero masses), docs/theory.md §5.5 (an independent computation
of the same predictions) and the sampled softmax features; then the stored-result reuse,
the files written and bad input."""
import json

import pytest

from freeprob.cli import main
from freeprob.experiments.comparisons import COMPARISONS, run_comparison
from freeprob.experiments.comparisons.head_count import HEADS, THEORY_NOTE, TIMES
from freeprob.errors import FreeprobValueError


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("readout")
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["readout", "head-count", "--quick", "--out", str(out)])
    assert rc == 0
    rec = json.loads((out / "head-count.json").read_text())
    return out, buf.getvalue(), rec


def test_zero_masses_are_the_plateaus(quick):
    _, _, rec = quick
    # μ({0}) = max(0, 1 − γ_V, 1 − γ_O) with γ_V = h/64, γ_O = 2 (docs/theory.md §4)
    assert [rec["data"]["heads"][str(h)]["zero_mass"] for h in HEADS] == ["1/2", "0", "0"]
    # the loss tends to the zero mass: at t = 30 the h = 32 curve is within 1e-3 of 1/2
    assert abs(rec["data"]["heads"]["32"]["predicted"][-1] - 0.5) < 1e-3


def test_predictions_match_theory_note(quick):
    _, _, rec = quick
    idx = [TIMES.index(t) for t in (0.3, 3.0, 30.0)]
    for h in HEADS:
        pred = rec["data"]["heads"][str(h)]["predicted"]
        assert [round(pred[k], 4) for k in idx] == list(THEORY_NOTE[h])


def test_decay_ordering(quick):
    _, _, rec = quick
    # more heads, faster decay at every positive time (γ_V = 1/2 < 1 < 2)
    p = [rec["data"]["heads"][str(h)]["predicted"] for h in HEADS]
    assert all(p[0][k] > p[1][k] > p[2][k] for k in range(len(TIMES)))


def test_softmax_within_stated_band(quick):
    _, _, rec = quick
    # n = 256, d_K = 4: the small-d_K offset of docs/theory.md §7 F1 is ≈ 0.02 at d_K = 8 and
    # grows like 1/d_K (≈ 0.04 here); per-initialisation fluctuations ±0.01–0.02
    assert rec["data"]["worst_spectral"] < 0.06
    assert rec["data"]["worst_fixed"] < 0.08


def test_output_table_and_files(quick):
    out, text, rec = quick
    assert "paper" in text and "< 0.003" in text and "largest |measured − predicted|" in text
    assert (out / "head-count.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert rec["key"] == "head-count" and len(rec["rows"]) == len(HEADS) * len(TIMES)
    # measured entries are intervals from the seeds
    assert all(set(r[5]) == {"mean", "half", "n", "level"} and r[5]["n"] == 2 for r in rec["rows"])
    # the finite-width and finite-n columns exist and are not computed in --quick
    assert rec["columns"][-3:] == ["finite-width predicted", "finite-n pred., fixed y", "finite-n pred., tr/n"]
    assert all(r[-3:] == ["—", "—", "—"] for r in rec["rows"])


def test_stored_result_is_reused(quick, capsys):
    out, text, _ = quick
    before = (out / "head-count.json").stat().st_mtime_ns
    assert main(["readout", "head-count", "--quick", "--out", str(out)]) == 0
    assert "stored result" in capsys.readouterr().out
    assert (out / "head-count.json").stat().st_mtime_ns == before


def test_bad_input(capsys):
    with pytest.raises(FreeprobValueError, match="multiple of 64"):
        run_comparison("head-count", n=200)
    with pytest.raises(FreeprobValueError, match="seeds"):
        run_comparison("head-count", seeds=1)
    # without quick the finite-width prediction needs d_K = n/64 > 4: refused before sampling
    with pytest.raises(FreeprobValueError, match="at least 320 without quick"):
        run_comparison("head-count", n=256)
    with pytest.raises(FreeprobValueError, match="known: " + ", ".join(COMPARISONS)):
        run_comparison("nope")
    assert main(["readout", "head-count", "--out", " "]) == 2
    assert "--out must name a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["readout", "head-count", "--seeds", "1"])
