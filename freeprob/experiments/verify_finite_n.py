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

Source: docs/theory.md §13.7; :mod:`freeprob.experiments.compare` (the distances),
:mod:`freeprob.experiments.stats` (the intervals).
"""
from __future__ import annotations

import numpy as np

from freeprob.experiments.compare import law_distances, snap_to_atoms

__all__ = ["finite_n_distances", "pooled_distances", "finite_n_summary", "FN_DEFINITION"]

#: the table's definitions of the finite-n columns
FN_DEFINITION = (
    " fn = the GE model's expected law at the row's own n to order 1/n (freeprob.attention.finite_n, "
    "docs/theory.md §13): GE–fn, SM–fn per seed; pooled = the spectra of all seeds of the row pooled "
    "(the bias of a law, without the draw-to-draw fluctuation that no law removes)")


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


def pooled_distances(spectra, laws, outlier=None) -> dict:
    r"""Row metrics of the pooled spectra: ``spectra`` maps ``"sm"``/``"ge"`` to the list of
    per-seed spectra, ``laws`` maps ``"th"``/``"fn"``/``"fw"`` to tabulated laws (or
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


def finite_n_summary(rows) -> list:
    r"""Lines of the text report: per row, the pooled relW1 of GE and softmax against the
    limit and the finite-n law (ratio finite-n/limit), and the paired per-seed difference
    with its 95% t-interval ("not significant" when it contains 0).  Empty without
    finite-n metrics."""
    lines = []
    for r in rows:
        m = r["metrics"]
        if "ge_fn_relW1" not in m:
            continue
        parts = []
        for tag, name in (("ge", "GE"), ("sm", "SM")):
            th = (m.get(f"{tag}_th_pooled_relW1") or {}).get("mean")
            fn = (m.get(f"{tag}_fn_pooled_relW1") or {}).get("mean")
            if th and fn is not None:
                parts.append(f"{name} pooled relW1 limit {100 * th:.2f}% → finite-n {100 * fn:.2f}% "
                             f"(×{fn / th:.2f}); per seed limit − finite-n {_paired(m, f'{tag}_th_minus_fn_relW1')}")
        fw = (m.get("sm_fw_pooled_relW1") or {}).get("mean")
        if fw is not None:
            parts.append(f"SM pooled relW1 finite-width law {100 * fw:.2f}%")
        lines.append(f"finite n, {r['config']} [{r['object']}, n={r['n']}, β={r['beta']}]: " + "; ".join(parts))
    return lines + ([""] if lines else [])
