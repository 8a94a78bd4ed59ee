r"""Shared pieces of the paper's readout comparisons (Hayase & Karakida 2026, §5, appendix D).

Every comparison predicts a readout quantity from the exact token-side law of the MHA
output (:func:`feature_law`, docs/theory.md §4) and measures the same quantity on
sampled finite-n softmax features (:func:`sampled_features`), over several
initialisations with 95% t-intervals (:func:`freeprob.readout_sampled.mean_interval`).
The result is a :class:`Comparison`: a table printed next to the paper's numbers, a JSON
record and a figure.

Conventions (docs/theory.md §4, §8 item 4, the natural choices where the paper is
silent): features ``F = O_full/√m1`` (uncentred output, centred part scaled to mean
squared row norm 1, so the token-side law has mean 1); gradient flow on ``½|Fw − y|²``
with unit learning rate; ridge ``ŵ = (FᵀF + λI)^{−1}Fᵀy`` with penalty ``λ`` in that
normalisation, teacher ``w* ~ N(0, I_{d_O})`` and label noise ``σ``; input width
``d = n`` (orthogonal token rows) and projection parameter count
``2·d·h·d_K + d·h·d_V + h·d_V·d_O`` (Q, K, V, O; fewer with sharing, see
:func:`projection_parameters`).
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

from ..attention import Architecture, mean_normalized, output_law
from ..errors import FreeprobValueError
from ..readout import ridge_error
from ..readout_sampled import MeanInterval, measured_ridge_error
from ..sampler import Dimensions, sample_objects

__all__ = ["Comparison", "feature_law", "sampled_features", "predicted_ridge_error",
           "measured_ridge_errors", "projection_parameters", "check_size", "RIDGE_PENALTY",
           "RIDGE_NOISE", "DPS"]

#: default ridge penalty λ and label-noise standard deviation σ (docs/theory.md §8 item 4:
#: the paper does not give them; every comparison states the values it uses)
RIDGE_PENALTY = 0.1
RIDGE_NOISE = 0.5
#: digits of the exact predictions (far beyond the sampling error)
DPS = 8


def _key(dims: Dimensions):
    """The law depends on the ratios, ``h`` and the scheme only (not on ``n``)."""
    return (dims.heads, dims.gamma_k, dims.gamma_v, dims.gamma_o, dims.scheme, dims.kv_groups)


@functools.lru_cache(maxsize=256)
def _law_cached(key, beta):
    h, gk, gv, go, scheme, groups = key
    frac = lambda q: sp.Rational(q.numerator, q.denominator)  # noqa: E731
    arch = Architecture(heads=h, gamma_k=frac(gk), gamma_v=frac(gv), gamma_o=frac(go), beta=beta,
                        scheme=scheme, kv_groups=groups)
    law = output_law(arch)
    return mean_normalized(law), float(law.moments(1)[1])


def feature_law(dims: Dimensions, beta):
    r"""The token-side law of ``F Fᵀ`` for ``F = O_full/√m1`` and the scale ``m1``.

    Parameters
    ----------
    dims : freeprob.sampler.Dimensions
        Sizes and sharing scheme (only the ratios ``γ_K, γ_V, γ_O``, ``h`` and the scheme
        enter the law).
    beta : number or str
        Inverse temperature (exact: ``"0.559"`` is 559/1000).

    Returns
    -------
    (Law, float)
        ``mean_normalized(output_law(arch))`` (mean 1, atom at 0 included) and the mean
        ``m1`` of the unnormalised ``out`` law (the feature scale).  Cached by the
        ratios, ``h``, the scheme and ``β`` (the same ratios at another ``n`` reuse it).

    Raises
    ------
    FreeprobValueError
        Bad sizes or ``β``.

    Source: docs/theory.md §3.2 (output law), §4 (normalisation).
    """
    if not isinstance(dims, Dimensions):
        raise FreeprobValueError(f"feature_law: expected freeprob.sampler.Dimensions, got {dims!r}")
    return _law_cached(_key(dims), str(beta))


def sampled_features(dims: Dimensions, beta, seed, *, model="softmax"):
    r"""Features ``F = O_full/√m1`` (``n × d_O`` float64) of one initialisation.

    ``seed`` (int ≥ 0) seeds ``numpy.random.default_rng``; ``model`` is ``"softmax"`` or
    ``"ge"`` (:func:`freeprob.sampler.sample_objects`).  Raises ``FreeprobValueError``
    for bad sizes, ``β`` or model.  Source: docs/theory.md §1, §4.
    """
    _, m1 = feature_law(dims, beta)
    rng = np.random.default_rng(seed)
    f = sample_objects(dims, float(beta), rng=rng, model=model, objects=("out_full",))["out_full"]
    return f / math.sqrt(m1)


def predicted_ridge_error(dims: Dimensions, beta, penalty=RIDGE_PENALTY, noise=RIDGE_NOISE, *,
                          dps=DPS):
    r"""Limit of ``E|ŵ − w*|²/d_O`` (:func:`freeprob.readout.ridge_error`) for the features of
    ``dims`` at ``β`` (float).  Source: docs/theory.md §4."""
    law, _ = feature_law(dims, beta)
    return float(ridge_error(law, penalty, noise, gamma_o=dims.gamma_o, dps=dps))


def measured_ridge_errors(dims: Dimensions, beta, seeds, penalty=RIDGE_PENALTY,
                          noise=RIDGE_NOISE, *, model="softmax", base_seed=0):
    r"""``E_{w*,ε}|ŵ − w*|²/d_O`` on sampled features, one value per initialisation
    ``base_seed + s`` for ``s < seeds`` (list of float; closed form in ``w*, ε``,
    :func:`freeprob.readout_sampled.measured_ridge_error`).  Source: docs/theory.md §4."""
    return [measured_ridge_error(sampled_features(dims, beta, base_seed + s, model=model),
                                 penalty, noise) for s in range(seeds)]


def projection_parameters(dims: Dimensions, d=None):
    r"""Number of projection weights ``W_Q, W_K, W_V, W_O`` for input width ``d``
    (default ``n``): ``d·h·d_K`` (queries) + ``d·g_K·d_K`` (keys) + ``d·g_V·d_V`` (values,
    ``0`` when tied to the keys) + ``h·d_V·d_O`` (output), with ``g_K, g_V`` the numbers of
    distinct key and value matrices (``h`` without sharing, the group count for GQA).
    Source: paper §5.2–5.3 (fixed projection budget)."""
    d = dims.n if d is None else int(d)
    h = dims.heads
    keys = d * dims.key_groups * dims.d_k
    values = 0 if dims.scheme == "tied" else d * dims.value_groups * dims.d_v
    return d * h * dims.d_k + keys + values + h * dims.d_v * dims.d_o


def check_size(name, value, *, minimum=1):
    """An integer ``≥ minimum`` or ``FreeprobValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise FreeprobValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _cell(v):
    if isinstance(v, MeanInterval):
        return format(v, ".4f")
    if isinstance(v, float):
        return f"{v:.4g}" if (v != 0 and (abs(v) >= 1e4 or abs(v) < 1e-3)) else f"{v:.4f}"
    return str(v)


def _jsonable(v):
    if isinstance(v, MeanInterval):
        return dict(mean=v.mean, half=v.half, n=v.n, level=v.level)
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass
class Comparison:
    r"""One comparison of paper §5 / appendix D: what was run and what came out.

    Attributes
    ----------
    key : str
        Command name (``freeprob readout KEY``).
    title : str
    setup : str
        The setup in words (sizes, β, λ, σ, seeds), including the choices the paper
        leaves open.
    columns : list of str
    rows : list of list
        Table body; entries are str, float or :class:`MeanInterval`.
    paper : list of (str, str, str)
        ``(quantity, the paper's figure, ours)``.
    notes : list of str
    data : dict
        Raw numbers (JSON-able after :meth:`to_dict`).
    plot : callable, optional
        ``plot(comparison, fig)`` draws the figure on a matplotlib Figure.
    """

    key: str
    title: str
    setup: str
    columns: list
    rows: list
    paper: list
    notes: list = field(default_factory=list)
    data: dict = field(default_factory=dict)
    plot: object = None

    def table(self) -> str:
        """The printed report: setup, table, ours next to the paper, notes."""
        body = [[_cell(v) for v in r] for r in self.rows]
        widths = [max(len(str(c)), *(len(r[i]) for r in body)) if body else len(str(c))
                  for i, c in enumerate(self.columns)]
        line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
        out = [f"== {self.title}", "", *_wrap(self.setup), "", line(self.columns),
               line(["-" * w for w in widths]), *(line(r) for r in body)]
        if self.paper:
            q = max(len(p[0]) for p in self.paper)
            pw = max(len(p[1]) for p in self.paper)
            out += ["", f"{'quantity'.ljust(q)}  {'paper'.ljust(pw)}  ours"]
            out += [f"{a.ljust(q)}  {b.ljust(pw)}  {c}" for a, b, c in self.paper]
        if self.notes:
            out += [""] + [ln for n in self.notes for ln in _wrap("* " + n)]
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict:
        """JSON-able record (intervals as ``{mean, half, n, level}``)."""
        return _jsonable(dict(key=self.key, title=self.title, setup=self.setup,
                              columns=self.columns, rows=self.rows,
                              paper=[list(p) for p in self.paper], notes=self.notes,
                              data=self.data))

    def save_figure(self, path):
        """Write the figure (PNG/PDF/SVG by suffix) with matplotlib's Agg backend.
        Raises ``FreeprobValueError`` if the comparison has no figure."""
        if self.plot is None:
            raise FreeprobValueError(f"comparison {self.key!r} has no figure")
        from matplotlib.figure import Figure
        fig = Figure(figsize=(7.5, 4.5), layout="constrained")
        self.plot(self, fig)
        fig.savefig(path, dpi=130)
        return Path(path)

    def write(self, directory):
        """Write ``KEY.txt``, ``KEY.json`` and (with a plot) ``KEY.png`` into
        ``directory`` (created); returns the paths written."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        paths = [d / f"{self.key}.txt", d / f"{self.key}.json"]
        paths[0].write_text(self.table(), encoding="utf-8")
        paths[1].write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")
        if self.plot is not None:
            paths.append(self.save_figure(d / f"{self.key}.png"))
        return paths


def _wrap(text, width=100):
    import textwrap
    return [ln for para in text.split("\n") for ln in (textwrap.wrap(para, width) or [""])]
