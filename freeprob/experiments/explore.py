r"""``freeprob explore``: the paper's open questions (§6.2) answered numerically (issue 19).

* :func:`run_inputs` (``explore inputs``): softmax attention with general inputs (Gram
  ``XXᵀ/d`` ≠ I: Gaussian tokens with ``n ≤ d`` and ``n > d``, AR(1)-correlated tokens,
  low-rank-plus-noise tokens) against the orthonormal-input law (:mod:`freeprob.attention.laws`)
  and the input-Gram law (:mod:`freeprob.attention.input_gram`; ``out``:
  :mod:`freeprob.attention.input_gram_out`), and an architecture
  comparison (GQA vs within-head tying) under those inputs.
* :func:`run_beta_growth` (``explore beta-growth``, :mod:`freeprob.experiments.explore_beta`):
  the frontier ``β*(n, ε)``.

Every sampled cell is a :class:`~freeprob.experiments.sweep.SweepCell` stored in
``OUT/results.sqlite`` as it finishes (resumable; local Dask workers or a ``--scheduler``
cluster as ``freeprob verify``).  Distances: relative W1 and KS against a tabulated law
(:func:`freeprob.experiments.compare.law_distances`), or two-sample.

Source: docs/theory.md §10–§11; paper §6.2.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

from freeprob.errors import FreeprobValueError
from freeprob.experiments.compare import TabulatedLaw, law_distances, two_sample_distances
from freeprob.experiments.stats import paired_comparison

__all__ = ["INPUT_CASES", "inputs_cases", "run_inputs", "input_law_table", "run_sweep", "cell_key", "set_aside"]

#: (label, kind, d/n, options) of ``explore inputs``
INPUT_CASES = (
    ("orthonormal", "orthonormal", 1.0, {}),
    ("gaussian_d2n", "gaussian", 2.0, {}),
    ("gaussian_dn2", "gaussian", 0.5, {}),
    ("ar1_rho0.5", "ar1", 2.0, {"rho": 0.5}),
    ("lowrank_r4_s0.5", "lowrank", 2.0, {"rank": 4, "spike": 0.5}),
)

_ORTHO_LAWS = {"single": "attention_law", "concat": "concatenated_attention_law", "out": "output_law"}
#: density points per support piece of a tabulated orthonormal-input law (fourth-order rule:
#: mass defect ≤ 1e-8 at 400; 1500 cost 4× the CPU for nothing a sampled spectrum can see)
_LAW_POINTS = 400


def inputs_cases(names=None):
    """The cases of :data:`INPUT_CASES` named in ``names`` (all by default).

    Raises ``FreeprobValueError`` for an unknown name.  Source: theory.md §10."""
    if names is None:
        return INPUT_CASES
    known = {c[0]: c for c in INPUT_CASES}
    bad = [n for n in names if n not in known]
    if bad:
        raise FreeprobValueError(f"explore inputs: unknown input case(s) {bad}; known: {sorted(known)}")
    return tuple(known[n] for n in names)


def cell_key(base, **payload):
    r"""The store key of an explore cell: ``base`` (readable) and the SHA-1 of everything that
    changes its numbers (``payload``: sizes, β, the input case with its options, the
    objects, seeds/ε/grid of a frontier) and of :func:`freeprob.experiments.store.code_version`, so a
    rerun with other settings or other code computes afresh and is never mixed with stored
    cells (as ``freeprob verify``'s keys).

    Returns ``str``.  Raises ``TypeError`` for a payload that is not JSON-serialisable.
    Source: this project's sweep design (docs/guide/sweeps.md)."""
    import hashlib
    from freeprob.experiments.store import code_version
    text = json.dumps(dict(payload, code=code_version()), sort_keys=True, default=repr)
    return f"{base}-" + hashlib.sha1(text.encode()).hexdigest()[:10]


def _dims(n, heads, d_k, d_o, scheme="independent", kv_groups=None):
    from freeprob.sampler import Dimensions
    return Dimensions(n=n, heads=heads, d_k=d_k, d_v=d_k, d_o=d_o, scheme=scheme, kv_groups=kv_groups)


def _inputs_job(case, n, heads, d_k, beta, entropy, objects, schemes):
    """Worker: spectra (softmax, GE) of every object and scheme for one draw of the inputs."""
    from freeprob.sampler import spectra
    from freeprob.sampler.inputs import input_matrix, weights_from_inputs
    label, kind, d_ratio, opts = case
    rng = np.random.default_rng(entropy)
    d = max(1, int(round(d_ratio * n)))
    x = input_matrix(kind, n, d, rng=rng, **opts)
    arrays, q = {}, {}
    for scheme in schemes:
        kw = dict(scheme="gqa", kv_groups=max(1, heads // 2)) if scheme == "gqa" else dict(scheme=scheme)
        dims = _dims(n, heads, d_k, n, **kw)
        w = weights_from_inputs(dims, x, rng=rng)
        objs = objects if scheme == "independent" else ("out",)
        sp = spectra(dims, beta, rng=rng, models=("softmax", "ge"), objects=objs, weights=w)
        for (m, o), v in sp.items():
            arrays[f"{scheme}/{m}/{o}"] = v
        for o in objs:
            dd = two_sample_distances(sp["softmax", o], sp["ge", o])
            q[f"{scheme}/{o}/sm_ge_relW1"], q[f"{scheme}/{o}/sm_ge_KS"] = dd["relW1"], dd["KS"]
    return dict(quantities=q, arrays=arrays)


def _ortho_law_job(n, heads, d_k, beta, obj):
    """Worker: the orthonormal-input (paper) law of ``obj``, tabulated."""
    from freeprob.attention import laws as attention
    arch = attention.Architecture.from_dimensions(n=n, heads=heads, d_k=d_k, d_v=d_k, d_o=n).with_beta(str(beta))
    return TabulatedLaw.from_law(getattr(attention, _ORTHO_LAWS[obj])(arch), points=_LAW_POINTS).to_dict()


def _input_law_job(case, n, heads, d_k, beta, obj):
    """Worker: the input-Gram law of ``obj`` (theory.md §10), tabulated."""
    from freeprob.attention.input_gram import input_gram_law
    label, kind, d_ratio, opts = case
    d = max(1, int(round(d_ratio * n)))
    r = input_gram_law(obj, n=n, heads=heads, d_k=d_k, beta=float(beta), kind=kind, d=d,
                       rho=opts.get("rho", 0.5), spike=opts.get("spike", 0.5), rank=opts.get("rank"))
    return input_law_table(r).to_dict()


def _tied_law_job(case, n, heads, d_k, beta):
    """Worker: the tied (``V_i = K_i``) input-Gram law of ``out`` (theory.md §10), tabulated."""
    from freeprob.attention.input_gram import input_gram_measure
    from freeprob.attention.input_gram_tied import tied_input_gram_output_law
    label, kind, d_ratio, opts = case
    d = max(1, int(round(d_ratio * n)))
    extra = dict(n=n, rank=opts["rank"]) if "rank" in opts else {}
    nu_x = input_gram_measure(kind, n / d, rho=opts.get("rho", 0.5), spike=opts.get("spike", 0.5), points=200,
                              **extra)
    r = tied_input_gram_output_law("out", nu_x, n=n, heads=heads, d_k=d_k, beta=float(beta),
                                   kind=None if extra else kind, n_over_d=n / d, spike=opts.get("spike", 0.5),
                                   points=200)          # as input_gram_law's (the GQA law's) ν_X
    return input_law_table(r).to_dict()


def input_law_table(result):
    """A :class:`TabulatedLaw` from the dict of :func:`freeprob.attention.input_gram.input_gram_law`
    (the continuous part's cdf at its knots, the support intervals, the moments, and the atom
    ``atom0`` at 0).  Source: theory.md §10."""
    atom0 = float(result.get("atom0", 0.0))
    atoms = np.array([[0.0, atom0]]) if atom0 > 0 else np.zeros((0, 2))
    return TabulatedLaw(result["knots"], result["cdf"], atoms, result["moments"],
                        [tuple(ab) for ab in result["support"]], result["x"], result["density"],
                        float(result.get("mass_defect", 0.0)), "input-Gram law")


def run_sweep(cells, out, name, settings, *, workers=None, scheduler=None, progress=False):
    r"""Run ``cells`` (SweepCells) into ``out/results.sqlite`` (sweep ``name``); returns the
    store path and the run statistics.  Already stored cells are reused (resume).

    Raises the errors of :class:`~freeprob.experiments.sweep.Executor` and
    :class:`~freeprob.experiments.store.ResultStore`.  Source: :mod:`freeprob.experiments.sweep`."""
    from freeprob.experiments.store import ResultStore, check_creatable, check_out_name
    from freeprob.experiments.sweep import Executor, check_executor, run_cells
    check_executor(workers, scheduler)
    check_out_name(out, who="explore", database=False)
    check_creatable(out)                         # a directory that takes no files: refused, saying why
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.sqlite"
    with Executor(workers=workers if workers is not None else 1, scheduler=scheduler) as ex, \
            ResultStore(path) as store:
        store.begin_sweep(name, "explore", settings)
        stats = run_cells(cells, store, name, ex, progress=progress, desc=name)
    return path, stats


def run_inputs(out, *, quick=False, n=None, beta=1.0, seeds=None, cases=None, workers=None,
               scheduler=None, figures=True, progress=False):
    r"""``freeprob explore inputs``: softmax vs the orthonormal-input law and the input-Gram law.

    Layer: ``h = 4`` heads, ``d_K = d_V = n/8``, ``d_O = n``, ``β`` (default 1); inputs of
    :data:`INPUT_CASES`.  Objects ``single``, ``concat`` and ``out``, each against both laws
    (the input-Gram law of ``out``: :mod:`freeprob.attention.input_gram_out`, theory.md §10).
    Architecture comparison: GQA (``h/2`` groups) vs tied ``V_i = K_i`` on the ``out``
    Gram, under each input; the preferred scheme is the one with the smaller normalised
    second moment ``m2/m1²`` (the better-conditioned features, as the paper's C.4) **of the
    laws** (GQA: the untied input-Gram law, which sharing does not change; tied:
    :mod:`freeprob.attention.input_gram_tied`; theory.md §10), and the samples are the
    check (a relative difference of the laws below ``10⁻³``, their numerical accuracy, is
    ``"tie"``): a paired t-test over the seeds (the same input draw for both schemes) gives
    ``samples`` = the scheme when the difference is significant at 95 %, else
    ``"not significant"`` (:func:`freeprob.experiments.stats.paired_comparison`), and
    ``agree`` says whether it is the law's answer (``None`` when not significant or a tie).

    Writes ``inputs.csv`` (``inputs,object,n,relW1_orthonormal_law,relW1_input_law,
    KS_orthonormal_law,KS_input_law``: means over seeds; ``input_minus_ortho_relW1,ci95_lo,
    ci95_hi,p,verdict``: the paired test of the two relW1 over the seeds; ``p_KS,verdict_KS`` the same
    for KS), ``inputs_ge_sample.csv``
    (softmax vs the GE sample with the same inputs), ``inputs_architecture.csv``
    (``inputs,scheme,n,normalised_m2,sd,law_normalised_m2``: sampled mean and sd over the
    seeds, and the law's ``m2/m1²``),
    ``inputs_summary.json`` and ``inputs.png`` (an earlier ``inputs.png`` that a
    ``figures=False`` run does not rewrite is moved aside, not removed: :func:`set_aside`).

    Returns
    -------
    dict with ``rows``, ``architecture``, ``ge_sample`` and ``files``.

    Raises
    ------
    FreeprobValueError
        Bad ``n`` (< 64 or not a multiple of 8), ``beta``, ``seeds`` or case names.
    """
    from freeprob.experiments.sweep import SweepCell, cell_seed
    n = n if n is not None else (256 if quick else 512)
    seeds = seeds if seeds is not None else (2 if quick else 4)
    if not isinstance(n, int) or n < 64 or n % 8:
        raise FreeprobValueError(f"explore inputs: n must be an integer ≥ 64, a multiple of 8; got {n!r}")
    if not isinstance(seeds, int) or seeds < 1:
        raise FreeprobValueError(f"explore inputs: seeds must be an integer ≥ 1; got {seeds!r}")
    if not (isinstance(beta, (int, float)) and 0 < beta <= 3):
        raise FreeprobValueError(f"explore inputs: beta must be a number in (0, 3]; got {beta!r}")
    cases = inputs_cases(cases)
    heads, d_k = 4, n // 8
    objects = ("single", "concat", "out")
    schemes = ("independent", "gqa", "tied")
    cells = []
    law_key = {("ortho", obj): cell_key(f"law/ortho/{obj}/n{n}/b{beta}", n=n, heads=heads, d_k=d_k, beta=beta,
                                        obj=obj) for obj in objects}
    law_key |= {(case[0], obj): cell_key(f"law/input/{case[0]}/{obj}/n{n}/b{beta}", case=case, n=n,
                                         heads=heads, d_k=d_k, beta=beta, obj=obj)
                for case in cases for obj in objects}
    law_key |= {(case[0], "tied_out"): cell_key(f"law/input/{case[0]}/tied_out/n{n}/b{beta}", case=case, n=n,
                                                heads=heads, d_k=d_k, beta=beta, obj="tied_out")
                for case in cases}
    sample_key = {(case[0], seed): cell_key(f"inputs/{case[0]}/n{n}/b{beta}/s{seed}", case=case, n=n,
                                            heads=heads, d_k=d_k, beta=beta, seed=seed, objects=objects,
                                            schemes=schemes)
                  for case in cases for seed in range(seeds)}
    for obj in objects:
        cells.append(SweepCell(key=law_key["ortho", obj], params=dict(n=n, beta=str(beta), object=obj),
                               fn=_ortho_law_job, kwargs=dict(n=n, heads=heads, d_k=d_k, beta=beta, obj=obj),
                               kind="object", priority=10))
    for case in cases:
        for obj in objects:
            cells.append(SweepCell(key=law_key[case[0], obj],
                                   params=dict(n=n, beta=str(beta), object=obj, config=case[0]),
                                   fn=_input_law_job, kwargs=dict(case=case, n=n, heads=heads, d_k=d_k,
                                                                  beta=beta, obj=obj),
                                   kind="object", priority=5))
        cells.append(SweepCell(key=law_key[case[0], "tied_out"],
                               params=dict(n=n, beta=str(beta), object="tied_out", config=case[0]),
                               fn=_tied_law_job, kwargs=dict(case=case, n=n, heads=heads, d_k=d_k, beta=beta),
                               kind="object", priority=5))
        for seed in range(seeds):
            key = sample_key[case[0], seed]
            cells.append(SweepCell(key=key, params=dict(config=case[0], n=n, beta=str(beta), seed=seed),
                                   fn=_inputs_job,
                                   kwargs=dict(case=case, n=n, heads=heads, d_k=d_k, beta=beta,
                                               entropy=cell_seed(2026, key.rpartition("-")[0]),
                                               objects=objects, schemes=schemes)))
    settings = dict(n=n, beta=beta, seeds=seeds, cases=[c[0] for c in cases])
    path, stats = run_sweep(cells, out, f"explore-inputs-n{n}-b{beta}", settings, workers=workers,
                            scheduler=scheduler, progress=progress)
    from freeprob.experiments.store import ResultStore
    rows, ge_rows, arch_rows, prefer = [], [], [], {}
    with ResultStore(path, readonly=True) as store:
        if any(law_key["ortho", o] in stats.failed for o in objects):
            cases = ()              # no orthonormal law: no row can be made (the failures are reported)
        else:
            ortho = {o: TabulatedLaw.from_dict(store.get_object(law_key["ortho", o])) for o in objects}
        done = store.done_keys()
        for case in cases:
            keys = [sample_key[case[0], s] for s in range(seeds)]
            if any(law_key[case[0], o] in stats.failed for o in objects + ("tied_out",)) or not set(keys) <= done:
                continue            # a failed law or draw: the case gets no row (listed in ``failed``)
            ilaw = {o: TabulatedLaw.from_dict(store.get_object(law_key[case[0], o]))
                    for o in objects + ("tied_out",)}
            for obj in objects:
                acc = {k: [] for k in ("rwo", "rwi", "kso", "ksi", "rwg", "ksg")}
                for key in keys:
                    sm = store.array(key, f"independent/softmax/{obj}")
                    do = law_distances(sm, ortho[obj])
                    acc["rwo"].append(do["relW1"])
                    acc["kso"].append(do["KS"])
                    if obj in ilaw:
                        di = law_distances(sm, ilaw[obj])
                        acc["rwi"].append(di["relW1"])
                        acc["ksi"].append(di["KS"])
                    qd = store.cell_quantities(key)
                    acc["rwg"].append(qd[f"independent/{obj}/sm_ge_relW1"])
                    acc["ksg"].append(qd[f"independent/{obj}/sm_ge_KS"])
                mean = {k: (float(np.mean(v)) if v else float("nan")) for k, v in acc.items()}
                rows.append(dict(inputs=case[0], object=obj, n=n, relW1_orthonormal_law=mean["rwo"],
                                 relW1_input_law=mean["rwi"], KS_orthonormal_law=mean["kso"],
                                 KS_input_law=mean["ksi"], **_law_test(acc)))
                ge_rows.append(dict(inputs=case[0], object=obj, n=n, relW1_softmax_ge=mean["rwg"],
                                    KS_softmax_ge=mean["ksg"]))
            # the laws answer (GQA: the untied law, theory.md §10; tied: input_gram_tied), the
            # samples check: the same input draw per seed for both schemes, a paired comparison
            v2, law_m2 = {}, {}
            for scheme, lname in (("gqa", "out"), ("tied", "tied_out")):
                mom = ilaw[lname].moments
                law_m2[scheme] = float(mom[2] / mom[1] ** 2)
                v2[scheme] = []
                for key in keys:
                    ev = store.array(key, f"{scheme}/softmax/out")
                    v2[scheme].append(float(np.mean(ev**2) / np.mean(ev)**2))
                arch_rows.append(dict(inputs=case[0], scheme=scheme, n=n, normalised_m2=float(np.mean(v2[scheme])),
                                      sd=float(np.std(v2[scheme])), law_normalised_m2=law_m2[scheme]))
            cmp_ = paired_comparison(v2["gqa"], v2["tied"], lower="gqa", higher="tied")
            by_samples = ("gqa" if cmp_.mean < 0 else "tied") if cmp_.significant else "not significant"
            # a relative difference below 10⁻³ is within the laws' numerical accuracy (the
            # discretised ν_X and ν_X ⊠ π_cK, ≈ 10⁻⁴ relative in the moments): a tie
            gap = law_m2["gqa"] - law_m2["tied"]
            by_law = "tie" if abs(gap) < 1e-3 * law_m2["tied"] else ("gqa" if gap < 0 else "tied")
            prefer[case[0]] = dict(preferred=by_law, law_gqa=law_m2["gqa"], law_tied=law_m2["tied"],
                                   samples=by_samples,
                                   agree=(by_samples == by_law) if cmp_.significant and by_law != "tie" else None,
                                   gqa_minus_tied=cmp_.mean, ci95_lo=cmp_.lo, ci95_hi=cmp_.hi, p=cmp_.p, seeds=cmp_.n)
    out = Path(out)
    files = [_write_csv(out / "inputs.csv", rows), _write_csv(out / "inputs_ge_sample.csv", ge_rows),
             _write_csv(out / "inputs_architecture.csv", arch_rows)]
    summary = dict(settings=settings, rows=rows, ge_sample=ge_rows, architecture=arch_rows, preferred=prefer,
                   computed=stats.computed, resumed=stats.resumed, failed=stats.failed)
    (out / "inputs_summary.json").write_text(json.dumps(summary, indent=1))
    files.append(str(out / "inputs_summary.json"))
    if figures:
        files.append(_inputs_figure(out / "inputs.png", rows, cases))
    summary["files"] = files
    summary["set_aside"] = set_aside(out, ("inputs.png",), files)
    return summary


def set_aside(out, names, written):
    r"""Outputs of this kind in ``out`` that this run does not write (the figure under
    ``--no-figures``; ``beta_diagnostics.csv`` when there are none) would sit beside the new
    results, describing an earlier run: each is moved to ``NAME.earlier-K.ext`` (the first
    free ``K``), never removed or overwritten.

    Parameters
    ----------
    out : path
    names : iterable of str
        The file names this kind of run may write.
    written : iterable of str
        The paths this run wrote.

    Returns
    -------
    list of str
        One note per file moved, for the user.

    Raises
    ------
    OSError
        A file cannot be moved.

    Source: this project's rule that nothing computed is lost or silently mixed (issue 26).
    """
    import os
    out, done = Path(out), {Path(w).name for w in written}
    notes = []
    for name in names:
        path = out / name
        if name in done or not path.is_file():
            continue
        k = 1
        while (new := path.with_name(f"{path.stem}.earlier-{k}{path.suffix}")).exists():
            k += 1
        os.replace(path, new)
        notes.append(f"{path} is from an earlier run and this one does not rewrite it: moved to {new} (nothing "
                     "removed)")
    return notes


def _law_test(acc):
    """The paired tests over the seeds of relW1 (and KS) of softmax against the input-Gram
    law minus against the orthonormal law: ``input_minus_ortho_relW1`` (mean), its 95 %
    interval ``ci95_lo``/``ci95_hi``, ``p`` and ``verdict`` (``input law closer
    (significant)``, ``… farther …``, ``not significant``; ``"no input law"`` without one),
    and ``verdict_KS`` with its ``p_KS``."""
    nan = float("nan")
    if not acc["rwi"]:
        return dict(input_minus_ortho_relW1=nan, ci95_lo=nan, ci95_hi=nan, p=nan, verdict="no input law",
                    p_KS=nan, verdict_KS="no input law")
    c = paired_comparison(acc["rwi"], acc["rwo"], lower="input law closer", higher="input law farther")
    k = paired_comparison(acc["ksi"], acc["kso"], lower="input law closer", higher="input law farther")
    return dict(input_minus_ortho_relW1=c.mean, ci95_lo=nan if c.lo is None else c.lo,
                ci95_hi=nan if c.hi is None else c.hi, p=nan if c.p is None else c.p, verdict=c.verdict,
                p_KS=nan if k.p is None else k.p, verdict_KS=k.verdict)


def _write_csv(path, rows, fields=None):
    """Write ``rows`` (dicts) as CSV; ``fields`` names the columns when there may be no row
    (every cell failed: a header alone, not an IndexError)."""
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else list(fields or ()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return str(path)


def _inputs_figure(path, rows, cases):
    """Bars: relW1 of softmax against the orthonormal and the input-Gram law per input."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(9, 3.2))
    objs = ("single", "concat", "out")
    for j, obj in enumerate(objs):
        ax = fig.add_subplot(1, 3, j + 1)
        sel = [r for r in rows if r["object"] == obj]
        pos = np.arange(len(sel))
        ax.bar(pos - 0.2, [100 * r["relW1_orthonormal_law"] for r in sel], 0.4, label="orthonormal law")
        ax.bar(pos + 0.2, [100 * (0 if math.isnan(r["relW1_input_law"]) else r["relW1_input_law"]) for r in sel],
               0.4, label="input-Gram law")
        ax.set_xticks(pos, [r["inputs"] for r in sel], rotation=60, fontsize=6)
        ax.set_title(obj, fontsize=9)
        ax.set_yscale("log")            # the orthonormal law is off by 1-3000 %, the input law by 1-30 %
        ax.set_ylabel("relative W1 (%, log scale)", fontsize=8)
        if j == 0:
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return str(path)
