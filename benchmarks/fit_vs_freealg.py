"""freeprob.fit against freealg (PyPI 0.12.2) on the same sampled eigenvalues (issue 30).

freealg is not a dependency: install it in a scratch environment and run three steps::

    python benchmarks/fit_vs_freealg.py data OUT                 # freeprob's venv: the samples and true laws
    /tmp/freealg-venv/bin/python benchmarks/fit_vs_freealg.py freealg OUT   # freealg's venv
    python benchmarks/fit_vs_freealg.py freeprob OUT             # freeprob's fits, and the table

Samples: ``mp``, 2000 eigenvalues of a real Wishart matrix with ratio 1/2 (law MP(1/2));
``attn``, the 256 eigenvalues of the sampled softmax MHA output (gpt2-small widths scaled
to n = 256, β = 1; reference: its GE law, freeprob.attention.laws.output_law).  Both tools
fit an algebraic law of degrees (2, 1) in (G, z) (freealg: ``AlgebraicForm.fit(2, 1)``,
its ``density`` plus its ``atoms``), ``attn`` also with degrees (3, 1), and
(``mp`` only) decompress the 1000 × 1000 corner of the 2000 × 2000 Wishart matrix back to
size 2000.  The distance is the relative W1 (``∫|F − F_ref| dx / mean``) of each result
from the reference law, on the same grid; times are wall-clock, cold (first call: numba
and FLINT set-up included) and warm (a second fit of the same data), on the same machine in
one session.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

GRID = np.linspace(0, 1, 4001)
#: (sample@degrees, degrees) fitted by both tools
CASES = (("mp", (2, 1)), ("attn", (2, 1)), ("attn@3,1", (3, 1)))


def _data(out):
    from freeprob.attention import laws as attention
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.experiments.configs import model_config
    import freeprob as fp
    from freeprob.sampler import spectra
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((4000, 2000))
    w = x.T @ x / 4000
    np.save(out / "mp.npy", np.linalg.eigvalsh(w))
    np.save(out / "mp_corner.npy", np.linalg.eigvalsh(w[:1000, :1000]))
    dims = model_config("gpt2-small").dimensions(256)
    sm = spectra(dims, 1.0, rng=np.random.default_rng(0), models=("softmax",), objects=("out",))
    np.save(out / "attn.npy", sm[("softmax", "out")])
    refs = {"mp": fp.MarchenkoPastur(fp.Rational(1, 2)),
            "attn": attention.output_law(attention.Architecture.from_dict(dims.to_dict()).with_beta(1))}
    meta = {}
    for name, law in refs.items():
        t = TabulatedLaw.from_law(law, points=1000)
        lo, hi = t.fine_nodes()[0], t.fine_nodes()[-1]
        xs = lo - 0.05 * (hi - lo) + 1.1 * (hi - lo) * GRID
        np.savez(out / f"ref_{name}.npz", x=xs, cdf=t.cdf(xs), mean=t.mean)
        meta[name] = dict(lo=float(lo), hi=float(hi))
    (out / "meta.json").write_text(json.dumps(meta))


def _freealg(out):
    import freealg
    res = {}
    for name, deg in CASES:
        ev = np.load(out / f"{name.split('@')[0]}.npy")
        xs = np.load(out / f"ref_{name.split('@')[0]}.npz")["x"]
        times = []
        for _ in range(2):
            t = time.perf_counter()
            try:
                af = freealg.AlgebraicForm(ev)
                af.fit(*deg)
                rho = np.real(af.density(xs))
                atoms = [(float(np.real(a)), float(np.real(w))) for a, w in af.atoms()]
                err = None
            except Exception as exc:  # noqa: BLE001 - report what freealg raised
                rho, err = None, f"{type(exc).__name__}: {exc}"
            times.append(time.perf_counter() - t)
        res[name] = dict(times=times, error=err, atoms=atoms if rho is not None else [])
        if rho is not None:
            np.save(out / f"freealg_{name}.npy", rho)
    ev = np.load(out / "mp_corner.npy")
    xs = np.load(out / "ref_mp.npz")["x"]
    t = time.perf_counter()
    try:
        af = freealg.AlgebraicForm(ev)
        af.fit(2, 1)
        rho = np.real(af.decompress(2000, x=xs))
        np.save(out / "freealg_decompress.npy", rho)
        err = None
    except Exception as exc:  # noqa: BLE001
        err = f"{type(exc).__name__}: {exc}"
    res["decompress"] = dict(times=[time.perf_counter() - t], error=err)
    (out / "freealg.json").write_text(json.dumps(res))


def _w1_density(xs, rho, ref, atoms=()):
    """relW1 of freealg's result (density on the grid plus its atoms) and its total mass."""
    cdf = np.concatenate([[0], np.cumsum((rho[1:] + rho[:-1]) / 2 * np.diff(xs))])
    for a, w in atoms:
        cdf = cdf + w * (xs >= a)
    return float(np.sum(np.abs(cdf - ref["cdf"])[:-1] * np.diff(xs))) / float(ref["mean"]), float(cdf[-1])


def _w1_table(xs, table, ref):
    return float(np.sum(np.abs(table.cdf(xs) - ref["cdf"])[:-1] * np.diff(xs))) / float(ref["mean"])


def _freeprob(out):
    from freeprob.experiments.compare import TabulatedLaw
    from freeprob.fit import decompress, fit_algebraic
    fa = json.loads((out / "freealg.json").read_text())
    rows = []
    for name, deg in CASES:
        ev = np.load(out / f"{name.split('@')[0]}.npy")
        ref = np.load(out / f"ref_{name.split('@')[0]}.npz")
        xs = ref["x"]
        times, w1, err = [], None, None
        for _ in range(2):
            t = time.perf_counter()
            try:
                fit = fit_algebraic(ev, deg)
                table = TabulatedLaw.from_law(fit.law, points=400)
                w1 = _w1_table(xs, table, ref)
            except Exception as exc:  # noqa: BLE001
                err = f"{type(exc).__name__}: {exc}"
            times.append(time.perf_counter() - t)
        sample = float(np.mean(np.abs(np.searchsorted(np.sort(ev), xs[:-1], side="right") / ev.size
                                      - ref["cdf"][:-1]) * np.diff(xs))) * (xs.size - 1) / float(ref["mean"])
        f_w1 = f_mass = None
        if (out / f"freealg_{name}.npy").is_file():
            f_w1, f_mass = _w1_density(xs, np.load(out / f"freealg_{name}.npy"), ref, fa[name]["atoms"])
        rows.append((name.split("@")[0], f"fit {deg}", w1, err, times, f_w1, f_mass, fa[name]["error"], fa[name]["times"],
                     sample))
    ev = np.load(out / "mp_corner.npy")
    ref = np.load(out / "ref_mp.npz")
    xs = ref["x"]
    t = time.perf_counter()
    try:
        big = decompress(ev, 2)
        w1, err = _w1_table(xs, TabulatedLaw.from_law(big, points=400), ref), None
    except Exception as exc:  # noqa: BLE001
        w1, err = None, f"{type(exc).__name__}: {exc}"
    times = [time.perf_counter() - t]
    f_w1 = f_mass = None
    if (out / "freealg_decompress.npy").is_file():
        f_w1, f_mass = _w1_density(xs, np.load(out / "freealg_decompress.npy"), ref)
    rows.append(("mp corner ×2", "decompress", w1, err, times, f_w1, f_mass, fa["decompress"]["error"],
                 fa["decompress"]["times"], None))
    pct = lambda v: "—" if v is None else f"{100 * v:.2f}%"  # noqa: E731
    print("| sample | task | relW1 freeprob | relW1 freealg (its mass) | relW1 of the sample itself "
          "| time freeprob cold / warm (s) | time freealg cold / warm (s) |")
    print("|---|---|---|---|---|---|---|")
    for name, task, w1, err, t, fw1, fmass, ferr, ft, sample in rows:
        ours = pct(w1) if err is None else f"refused: {err[:80]}"
        theirs = (f"{pct(fw1)} ({fmass:.4f})" if fw1 is not None else f"failed: {(ferr or '')[:80]}")
        print(f"| {name} | {task} | {ours} | {theirs} | {pct(sample)} | "
              f"{' / '.join(f'{v:.1f}' for v in t)} | {' / '.join(f'{v:.1f}' for v in ft)} |")


if __name__ == "__main__":
    step, folder = sys.argv[1], Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    {"data": _data, "freealg": _freealg, "freeprob": _freeprob}[step](folder)
