r"""Figures of ``freeprob verify`` (matplotlib's object API: ``Figure`` and
``FigureCanvasAgg``, never pyplot's global state; PNG files).

* ``figures/histograms.png``: per configuration, the histogram of the softmax spectrum
  (all initialisations pooled; eigenvalues at an atom of the law are left out and the
  histogram is scaled to the continuous mass) against our density, with the GE histogram
  as an outline and the top eigenvalues marked.
* ``figures/qq.png``: per configuration, softmax and GE eigenvalues (all initialisations
  pooled, as the titles say) against the law's quantiles at ``(i − ½)/N``, with the
  diagonal.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from freeprob._extras import require

__all__ = ["FIGURE_FILES", "verify_figures", "histogram_panel", "qq_panel"]

#: the files :func:`verify_figures` writes, relative to the report directory
FIGURE_FILES = ("figures/histograms.png", "figures/qq.png")


def _grid(k):
    cols = min(4, k)
    return math.ceil(k / cols), cols


def histogram_panel(ax, softmax, ge, law, title=""):
    r"""Draw one histogram-vs-density panel on ``ax``.

    ``softmax``, ``ge``: 1-d arrays of eigenvalues (pooled); ``law``: a
    :class:`~freeprob.experiments.compare.TabulatedLaw` or ``None``.  The histogram is a density of the
    continuous part (eigenvalues at an atom of the law left out, heights scaled to the
    continuous mass; "at an atom" means within ``1e-9·max|λ|`` of it, as in the distances:
    :func:`freeprob.experiments.compare.snap_to_atoms`).  Raises nothing of its own (matplotlib errors
    propagate).  Source: docs/theory.md §5 (what the paper's figures compare).
    """
    sm, g = np.sort(softmax), np.sort(ge)
    keep = np.ones(sm.size, bool)
    keep_g = np.ones(g.size, bool)
    cont_mass = 1.0
    if law is not None and law.atoms.size:
        from freeprob.experiments.compare import snap_to_atoms
        locs = law.atom_locations
        keep = ~np.isin(snap_to_atoms(sm, locs), locs)
        keep_g = ~np.isin(snap_to_atoms(g, locs), locs)
        cont_mass = 1.0 - float(law.atoms[:, 1].sum())
    hi = law.upper_edge if law is not None else float(np.quantile(sm, 0.995))
    lo = min(0.0, float(sm.min()))
    bins = np.linspace(lo, hi * 1.05, 60)
    w = np.full(int(keep.sum()), cont_mass / max(1, keep.sum()))
    ax.hist(sm[keep], bins=bins, weights=w / np.diff(bins)[0], color="C0", alpha=0.45, label="softmax")
    wg = np.full(int(keep_g.sum()), cont_mass / max(1, keep_g.sum()))
    ax.hist(g[keep_g], bins=bins, weights=wg / np.diff(bins)[0], histtype="step", color="C1", lw=1.2, label="GE")
    if law is not None:
        x = np.linspace(lo, hi * 1.05, 800)
        y = law.density(x)
        top = np.quantile(y[y > 0], 0.98) * 1.6 if np.any(y > 0) else 1.0
        ax.plot(x, y, color="k", lw=1.2, label="theory density")
        ax.set_ylim(0, top)
        atoms = ", ".join(f"{m:.3g} at {loc:.3g}" for loc, m in law.atoms)
        if atoms:
            ax.text(0.98, 0.95, f"atom {atoms}", transform=ax.transAxes, ha="right", va="top", fontsize=7)
    ax.axvline(sm[-1], color="C0", ls=":", lw=1, label="softmax top eigenvalue")
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("eigenvalue", fontsize=7)
    ax.set_ylabel("density", fontsize=7)
    ax.tick_params(labelsize=7)


def qq_panel(ax, softmax, ge, law, title=""):
    r"""Draw one QQ panel: sorted eigenvalues (1-d arrays ``softmax``, ``ge``) against
    ``law.quantile((i − ½)/n)`` of a :class:`~freeprob.experiments.compare.TabulatedLaw`, with the
    diagonal; eigenvalues within ``1e-9·max|λ|`` of an atom of the law are drawn on it
    (:func:`freeprob.experiments.compare.snap_to_atoms`).  Source: docs/theory.md §5."""
    from freeprob.experiments.compare import snap_to_atoms
    for lam, color, name in ((softmax, "C0", "softmax"), (ge, "C1", "GE")):
        lam = np.sort(snap_to_atoms(lam, law.atom_locations))
        p = (np.arange(lam.size) + 0.5) / lam.size
        ax.plot(law.quantile(p), lam, ".", ms=2, color=color, label=name)
    top = max(float(np.max(softmax)), float(np.max(ge)), law.upper_edge)
    ax.plot([0, top], [0, top], "k-", lw=0.8)
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("theory quantile", fontsize=7)
    ax.set_ylabel("eigenvalue", fontsize=7)
    ax.tick_params(labelsize=7)


def verify_figures(panels, obj, reports):
    r"""Write ``figures/histograms.png`` and ``figures/qq.png`` of a verify run from its
    panels.

    Parameters
    ----------
    panels : list of tuple
        ``(title, [softmax spectra], [GE spectra], law or None)`` per cell, the law a
        :class:`~freeprob.experiments.compare.TabulatedLaw`: :func:`freeprob.experiments.verify.figure_panels`
        (the first object and first β of the run, read from its store).
    obj : str
        The sampler object the spectra are of (for the titles).
    reports : freeprob.experiments.reports.ReportDir
        The report directory; each figure is recorded in its manifest, and ``figures/``
        created, right before the figure is written (no ``figures/`` without a figure).

    Returns
    -------
    list of str
        The written paths, relative to the report directory (empty when ``panels`` is).

    Raises
    ------
    OSError
        A figure cannot be written.

    Source: docs/theory.md §5 (what the paper's figures compare).
    """
    written = []
    for rel in FIGURE_FILES if panels else ():
        fig = _verify_figure(Path(rel).stem, panels, obj)
        fig.savefig(reports.target(rel), dpi=110)
        written.append(rel)
    return written


def _verify_figure(kind, panels, obj):
    """The ``histograms`` or ``qq`` figure of :func:`verify_figures` from its panels
    ``(title, [softmax spectra], [GE spectra], law or None)`` (all spectra pooled)."""
    FigureCanvasAgg = require("matplotlib.backends.backend_agg", "plot").FigureCanvasAgg
    Figure = require("matplotlib.figure", "plot").Figure

    seeds = sorted({len(sm) for _, sm, _, _ in panels})
    pooled = (f"{seeds[0]} initialisation{'s' if seeds[0] != 1 else ''}" if len(seeds) == 1
              else f"{seeds[0]}–{seeds[-1]} initialisations") + (" pooled" if seeds[-1] > 1 else "")
    rows, cols = _grid(len(panels))
    # constrained layout keeps the title and the legend inside the canvas, and a single
    # panel gets a canvas wide enough for both
    fig = Figure(figsize=(max(3.4 * cols, 6.4), 2.9 * rows + 0.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, (title, sm, ge, law) in zip(axes.ravel(), panels):
        if kind == "histograms":
            histogram_panel(ax, np.concatenate(sm), np.concatenate(ge), law, title)
        elif law is not None:
            qq_panel(ax, np.concatenate(sm), np.concatenate(ge), law, title)
        else:
            ax.set_title(title + "\n(no exact law)", fontsize=8)
    spare = axes.ravel()[len(panels):]
    for ax in spare:
        ax.axis("off")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if handles and len(spare):
        spare[0].legend(handles, labels, fontsize=8, loc="center")
    elif handles:
        fig.legend(handles, labels, fontsize=7, loc="outside lower center",
                   ncol=len(handles) if cols > 1 else 2)
    what = "spectral density" if kind == "histograms" else "QQ against the exact law"
    fig.suptitle(f"freeprob verify: {obj}, softmax vs GE vs theory\n({what}; {pooled})", fontsize=10)
    return fig
