r"""The finite-n columns of ``freeprob verify`` (issue 29): the GE model's expected law at a
cell's own ``n`` (:mod:`freeprob.attention.finite_n`) against the sampled spectra.

Two parts of the distance between a finite-n sample and a law are kept apart:

* the **bias** of the expected law, which the ``1/n`` term can remove: measured on the
  spectra **pooled over the seeds** of a row (``{ge,sm}_{th,fn}_pooled_relW1``: the pooled
  sample's relative W1 to the limit law and to the finite-n law);
* the **draw-to-draw fluctuation**, which no law removes: it dominates the per-seed
  distances (``ge_fn_relW1``, ``sm_fn_relW1``, beside ``ge_th_relW1``, ``sm_th_relW1``).

A row's comparison of the two laws is paired over its seeds: the per-seed difference
``relW1(limit) − relW1(finite n)`` (``{ge,sm}_th_minus_fn_relW1``) with its mean and 95%
t-interval; :func:`finite_n_summary` says "not significant" when the interval contains 0.

With the finite-width columns on, the finite-width law plus the GE model's finite-n shift
(``fw+fn``, :mod:`freeprob.attention.finite_n_width`) is compared with softmax too: per seed
(``sm_fwfn_relW1``), pooled (``sm_fwfn_pooled_relW1``) and paired against the finite-width
law alone (``fw_minus_fwfn_relW1``: relW1(SM, fw) − relW1(SM, fw+fn) per seed, mean, 95%
t-interval and p of the paired t-test, :func:`freeprob.experiments.stats.paired_comparison`);
the summary line of a row says which effect carries what (pooled limit → fw → fw+fn).

Source: docs/theory.md §13.7; :mod:`freeprob.experiments.compare` (the distances),
:mod:`freeprob.experiments.stats` (the intervals).
"""
from __future__ import annotations

import numpy as np

from freeprob.errors import FreeprobValueError
from freeprob.experiments.compare import law_distances, snap_to_atoms
from freeprob.experiments.stats import paired_comparison

__all__ = ["finite_n_distances", "combined_distances", "combined_paired", "pooled_distances", "finite_n_summary",
           "FN_DEFINITION"]

#: the table's definitions of the finite-n columns
FN_DEFINITION = (
    " fn = the GE model's expected law at the row's own n to order 1/n (freeprob.attention.finite_n, "
    "docs/theory.md §13): GE–fn, SM–fn per seed; pooled = the spectra of all seeds of the row pooled "
    "(the bias of a law, without the draw-to-draw fluctuation that no law removes); fw+fn = the "
    "finite-width law plus the GE model's finite-n shift (fn − the limit law dilated by the mean factor "
    "(n−1)/n that the finite-width law's bulk scale already carries), first order in both "
    "(freeprob.attention.finite_n_width, docs/theory.md §13.8); fw − (fw+fn) = relW1(SM, fw) − "
    "relW1(SM, fw+fn) per seed, paired t-test")


def _bulk(lam, law, outlier):
    lam = snap_to_atoms(lam, law.atom_locations)
    return lam[:-1] if outlier is not None else lam


def finite_n_distances(softmax, ge, fn_law, th_extra, outlier=None) -> dict:
    r"""Per-seed distances to the finite-n law ``fn_law`` (a
    :class:`~freeprob.experiments.compare.TabulatedLaw`) of one cell's softmax and GE
    spectra (the top eigenvalue left out when the row has an ``outlier``), and the paired
    differences against the limit law's distances ``th_extra`` (``sm_th_relW1``,
    ``ge_th_relW1``).  Raises as :func:`freeprob.experiments.compare.law_distances`."""
    out = {}
    for tag, lam in (("sm", softmax), ("ge", ge)):
        dd = law_distances(_bulk(lam, fn_law, outlier), fn_law)
        out[f"{tag}_fn_relW1"], out[f"{tag}_fn_KS"] = dd["relW1"], dd["KS"]
        out[f"{tag}_th_minus_fn_relW1"] = th_extra[f"{tag}_th_relW1"] - dd["relW1"]
    return out


def combined_distances(softmax, fwfn_law, fw_extra, outlier=None) -> dict:
    r"""Per-seed distance of one cell's softmax spectrum to the combined law ``fwfn_law``
    (finite width + finite n, a :class:`~freeprob.experiments.compare.TabulatedLaw`; the top
    eigenvalue left out when the row has an ``outlier``): ``sm_fwfn_relW1``, ``sm_fwfn_KS``
    and, when ``fw_extra`` holds ``sm_fw_relW1``, the difference
    ``sm_fw_minus_fwfn_relW1`` (positive: the combined law is closer).  Raises as
    :func:`freeprob.experiments.compare.law_distances`.  Source: docs/theory.md §13.8."""
    dd = law_distances(_bulk(softmax, fwfn_law, outlier), fwfn_law)
    out = {"sm_fwfn_relW1": dd["relW1"], "sm_fwfn_KS": dd["KS"]}
    if fw_extra.get("sm_fw_relW1") is not None:
        out["sm_fw_minus_fwfn_relW1"] = fw_extra["sm_fw_relW1"] - dd["relW1"]
    return out


def combined_paired(recs) -> dict:
    r"""``{"fw_minus_fwfn_relW1": {mean, lo, hi, n, p, verdict, relative}}``: relW1(SM, fw) −
    relW1(SM, fw+fn) paired over the seeds of a row (``recs``, one dict per seed; verdict
    ``"fw+fn closer (significant)"``, ``"fw closer (significant)"`` or ``"not significant"``,
    :func:`freeprob.experiments.stats.paired_comparison`); empty without the two distances.
    Raises nothing.  Source: docs/theory.md §13.8."""
    try:
        pc = paired_comparison([r.get("sm_fw_relW1") for r in recs], [r.get("sm_fwfn_relW1") for r in recs],
                               lower="fw closer", higher="fw+fn closer")
    except FreeprobValueError:          # no seed with both distances
        return {}
    return {"fw_minus_fwfn_relW1": pc.as_dict()}


def pooled_distances(spectra, laws, outlier=None) -> dict:
    r"""Row metrics of the pooled spectra: ``spectra`` maps ``"sm"``/``"ge"`` to the list of
    per-seed spectra, ``laws`` maps ``"th"``/``"fn"``/``"fw"``/``"fwfn"`` to tabulated laws (or
    ``None``); returns ``{model}_{law}_pooled_relW1`` as ``{mean, lo=None, hi=None, n}``
    (one pooled value, no interval)."""
    out = {}
    for tag, arrays in spectra.items():
        if not arrays:
            continue
        for name, law in laws.items():
            if law is None:
                continue
            lam = np.concatenate([_bulk(a, law, outlier) for a in arrays])
            out[f"{tag}_{name}_pooled_relW1"] = dict(mean=law_distances(lam, law)["relW1"], lo=None, hi=None,
                                                      n=len(arrays))
    return out


def _paired(m, key):
    r = m.get(key)
    if not r or r.get("lo") is None:
        return "n/a (one seed)"
    text = f"{100 * r['mean']:+.2f}% [{100 * r['lo']:+.2f}, {100 * r['hi']:+.2f}]"
    if r["lo"] <= 0 <= r["hi"]:
        return text + " not significant"
    return text + (" (finite-n closer)" if r["lo"] > 0 else " (limit closer)")


def _pooled(m, tag, name):
    return (m.get(f"{tag}_{name}_pooled_relW1") or {}).get("mean")


def _change(before, after):
    """``"lowers it by 1.23 points"`` / ``"raises it by 0.40 points"`` (relW1, in %)."""
    d = 100 * (after - before)
    return f"{'raises' if d > 0 else 'lowers'} it by {abs(d):.2f} points"


def _carries(m):
    """The pooled softmax distances limit → fw → fw+fn (and fn alone), the points of relW1
    each effect removes, and the paired per-seed test fw vs fw+fn."""
    th, fw, fn, c = (_pooled(m, "sm", k) for k in ("th", "fw", "fn", "fwfn"))
    if None in (th, fw, c):
        return ""
    text = (f"SM pooled relW1 limit {100 * th:.2f}% → fw {100 * fw:.2f}% → fw+fn {100 * c:.2f}%"
            + (f" (fn alone {100 * fn:.2f}%)" if fn is not None else "")
            + f": finite width {_change(th, fw)}, the 1/n term on top of it {_change(fw, c)}")
    t = m.get("fw_minus_fwfn_relW1")
    if t and t.get("lo") is not None:
        text += (f"; per seed fw − (fw+fn) {100 * t['mean']:+.2f}% [{100 * t['lo']:+.2f}, {100 * t['hi']:+.2f}], "
                 f"p = {t['p']:.2g}, {t['verdict']}")
    elif t:
        text += f"; per seed fw − (fw+fn) {100 * t['mean']:+.2f}% (one seed: no test)"
    return text


def finite_n_summary(rows) -> list:
    r"""Lines of the text report: per row, the pooled relW1 of GE and softmax against the
    limit and the finite-n law (ratio finite-n/limit), and the paired per-seed difference
    with its 95% t-interval ("not significant" when it contains 0); with the combined law,
    the pooled softmax distances limit → fw → fw+fn (which effect carries what) and the
    paired test fw vs fw+fn, and a last line counting the rows where fw+fn is below fw
    (pooled) and where the paired test says so.  Empty without finite-n metrics."""
    lines, tests, below = [], [], []
    for r in rows:
        m = r["metrics"]
        if "ge_fn_relW1" not in m and "sm_fwfn_relW1" not in m:
            continue
        parts = []
        for tag, name in (("ge", "GE"), ("sm", "SM")):
            th, fn = _pooled(m, tag, "th"), _pooled(m, tag, "fn")
            if th and fn is not None:
                parts.append(f"{name} pooled relW1 limit {100 * th:.2f}% → finite-n {100 * fn:.2f}% "
                             f"(×{fn / th:.2f}); per seed limit − finite-n {_paired(m, f'{tag}_th_minus_fn_relW1')}")
        carries = _carries(m)
        if carries:
            parts.append(carries)
            below.append(_pooled(m, "sm", "fwfn") < _pooled(m, "sm", "fw"))
            if m.get("fw_minus_fwfn_relW1"):
                tests.append(m["fw_minus_fwfn_relW1"]["verdict"])
        elif _pooled(m, "sm", "fw") is not None:
            parts.append(f"SM pooled relW1 finite-width law {100 * _pooled(m, 'sm', 'fw'):.2f}%")
        lines.append(f"finite n, {r['config']} [{r['object']}, n={r['n']}, β={r['beta']}]: " + "; ".join(parts))
    if below:
        lines.append(f"fw+fn vs fw against softmax: pooled fw+fn below fw in {sum(below)} of {len(below)} rows; "
                     f"paired per seed (95% t-interval): fw+fn closer (significant) in "
                     f"{tests.count('fw+fn closer (significant)')}, fw closer (significant) in "
                     f"{tests.count('fw closer (significant)')}, not significant in "
                     f"{tests.count('not significant')} of {len(tests)} rows")
    return lines + ([""] if lines else [])
