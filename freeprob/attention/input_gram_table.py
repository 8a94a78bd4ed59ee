r"""Tabulating a law known only through its Stieltjes transform (the input-Gram laws of
:mod:`freeprob.attention.input_gram` and :mod:`freeprob.attention.input_gram_out`; issues 26
and 27).

A *solver* gives ``m(z) = ∫ dμ(x)/(x − z)`` at points ``z`` with ``Im z > 0`` (Newton on
the law's equations from a start state, vectorised over the points).  :func:`tabulate`
turns it into the law as one object — support, density, cdf and moments — with no
Lorentzian smoothing left: the final ``η`` is ``10⁻¹⁰`` of the scale ``S`` (8 × the range
searched), not a fraction of ``x`` (a relative ``η = 2·10⁻³ x`` put up to 5 % into ``m_4``
through the Lorentzian tails, and with a leaky ``ν_D`` far more: issue 26).

1. **coarse pass**: ``m`` at ``coarse`` nodes ``top·u²`` of ``[0, top]`` (``top`` from the
   law's moments, widened to the norm bound ``B`` when the density does not vanish there,
   narrowed while the support ends below ``top/4``); a node is in the support when
   ``Im m(x + iη) > ½ Im m(x + 10iη)`` (inside the support ``Im m`` does not depend on a
   small ``η``, outside it is proportional to it);
2. **edges**: every support edge by 6 rounds of 9-section between a node in the support
   and its neighbour outside (a support reaching 0 is a hard edge there);
3. **fine pass**: on each support interval, ``x = Q(u(t))`` at the cell midpoints
   (``u(t) = t³/(t³ + (1 − t)³)`` clusters at both edges, so that square-root edges and an
   ``x^{-1/2}`` hard edge at 0 are smooth in ``t``; ``Q`` places the nodes by the coarse
   mass, its ``x⁴``-weighted mass and a uniform part), cell masses by the midpoint rule;
   a gap the fine pass finds inside an interval splits it (and the pass is redone);
4. **check**: the tabulated measure's moments against the law's own (plane trees or the
   Cauchy integral); the fine pass is redone with 2 and 4 times the nodes before the law
   is refused (:func:`check_moments`).

Points are reached by continuation in ``η`` from ``S`` (the solver's ``levels`` geometric
steps, a step refined where Newton fails), and later passes start Newton from the states of
earlier ones interpolated in ``x`` (falling back to continuation where that fails).  An atom
at 0 of known mass is subtracted from ``Im m/π``.  The products are thin (points × nodes by
nodes × 3), so BLAS runs on one thread here (threadpoolctl, when installed).

Source: Stieltjes inversion (``dμ/dx = lim_{η↓0} Im m(x + iη)/π``; Mingo & Speicher,
ch. 3); theory.md §10.
"""
from __future__ import annotations

import math

import numpy as np

from freeprob.errors import FreeprobValueError

__all__ = ["tabulate", "check_moments", "law_result", "MOMENT_RTOL"]

#: accuracy claimed for the moments of a tabulated input-Gram law: ``|m_k(table) − m_k| ≤
#: MOMENT_RTOL · m_k`` for ``k = 1 … 4`` (checked by :func:`check_moments` on every law)
MOMENT_RTOL = 2e-3

_ETA = 1e-10                 # final η relative to the scale B
_P = 3                       # edge clustering exponent


def _edge_map(t):
    """``u(t) = t^p/(t^p + (1 − t)^p)`` and ``u'(t)``."""
    a, b = t**_P, (1 - t) ** _P
    return a / (a + b), _P * (t * (1 - t)) ** (_P - 1) / (a + b) ** 2


def _step(solver, x, e_from, e_to, state, depth, tol):
    """Newton at ``x + i e_to`` from the solution ``state`` at ``x + i e_from``; the points
    where it fails are retried through 4 intermediate ``η`` (geometric), ``depth`` times over."""
    m, new, ok = solver.solve(x + 1j * e_to, state, tol=tol)
    bad = np.flatnonzero(~ok)
    if bad.size and depth > 0:
        sub, e_prev = state[:, bad], e_from[bad]
        for e in np.geomspace(e_from[bad], e_to[bad], 5)[1:]:
            mb, sub, okb = _step(solver, x[bad], e_prev, e, sub, depth - 1, tol)
            e_prev = e
        m[bad], new[:, bad], ok[bad] = mb, sub, okb
    return m, new, ok


def _continued(solver, x, eta, scale):
    """``m(x + iη)``, the solver state and its convergence mask at real ``x`` and final ``η``
    (arrays), by continuation in ``η`` from ``scale`` (well above the support) down to ``η``
    (``levels`` geometric steps, each refined where Newton fails)."""
    steps = np.geomspace(1.0, _ETA, getattr(solver, "levels", 11)) * scale
    e_prev = np.maximum(eta, steps[0])
    state = solver.start(x + 1j * e_prev)
    for f in steps:
        e = np.maximum(eta, f)
        m, state, ok = _step(solver, x, e_prev, e, state, 2, 1e-6)
        e_prev = e
    return _step(solver, x, e_prev, eta, state, 0, None)   # (a point at an edge may converge slowly)


def _im(m, x, eta, atom0):
    """``π ×`` the density of the continuous part: ``Im m`` less the atom's Lorentzian."""
    return m.imag - atom0 * eta / (x * x + eta * eta)


def _probe(solver, x, scale, atom0, known=None):
    """At real ``x``: the density, whether ``x`` is in the support (``Im m`` at ``η = 10⁻¹⁰
    scale`` and ``10η``, the test of the module docstring), the solver state at ``η`` and the
    convergence mask; warm-started from ``known`` states (:func:`_warm`) when given."""
    eta = np.full(x.size, _ETA * scale)
    if known is None:
        m, state, ok = _continued(solver, x, eta, scale)
    else:
        m, state, ok = _warm(solver, x, eta, scale, atom0, known)
    m10, _st, ok10 = solver.solve(x + 10j * eta, state)
    lo, hi = _im(m, x, eta, atom0), _im(m10, x, 10 * eta, atom0)
    ok = ok & ok10
    return lo / np.pi, (lo > 0.5 * hi) & (lo > 0) & ok, state, ok


def _runs(marked):
    """Maximal runs ``(j, k)`` of True in ``marked``."""
    idx = np.flatnonzero(marked)
    if idx.size == 0:
        return []
    cut = np.flatnonzero(np.diff(idx) > 1)
    return list(zip(idx[np.r_[0, cut + 1]].tolist(), idx[np.r_[cut, idx.size - 1]].tolist()))


def _edges(solver, inside, outside, scale, atom0, known, steps=6, split=8):
    """Edges of the support bracketed by ``inside`` (in it) and ``outside`` (arrays), each
    bracket cut ``split + 1`` ways per step (warm starts from the ``known`` states)."""
    a_in, a_out = np.array(inside, dtype=float), np.array(outside, dtype=float)
    if a_in.size == 0:
        return a_in
    frac = np.arange(1, split + 1) / (split + 1)
    for _ in range(steps):
        pts = a_in[:, None] + (a_out - a_in)[:, None] * frac[None, :]          # from inside outwards
        ins = _probe(solver, pts.ravel(), scale, atom0, known)[1].reshape(pts.shape)
        # the last inside point before the first outside one
        first_out = np.where(~ins.all(axis=1), np.argmin(ins, axis=1), split)
        j = first_out - 1
        new_in = np.where(j >= 0, pts[np.arange(pts.shape[0]), np.maximum(j, 0)], a_in)
        rows = np.arange(pts.shape[0])
        new_out = np.where(first_out < split, pts[rows, np.minimum(first_out, split - 1)], a_out)
        a_in, a_out = new_in, new_out
    return 0.5 * (a_in + a_out)


def _support(solver, bound, atom0, coarse, top, who):
    """Support pieces of the continuous part within ``[0, bound]``: per interval the coarse
    nodes inside it with their density (edges included), and the coarse nodes and states."""
    u = (np.arange(coarse) + 0.5) / coarse
    top = bound if top is None else min(top, bound)
    scale = min(bound, 8 * top)         # continuation from well above the support: 8 × the range
    for _ in range(4):              # zoom in while the support ends below a quarter of the range
        x = top * u**2
        dens, marked, state, ok = _probe(solver, x, scale, atom0)
        if not np.any(marked):
            if top < bound:
                top = scale = bound
                continue
            return [], (x, state, ok), scale
        last = int(np.flatnonzero(marked)[-1])
        if marked[-1]:
            if top < bound:
                top = scale = bound
                continue
            raise FreeprobValueError(f"{who}: the density does not vanish at the norm bound {bound:g} "
                                     "(the equations did not converge)")
        if x[last + 1] > top / 4:
            break
        top = 2 * float(x[last + 1])
    runs = _runs(marked)
    # left edges in (x[j−1], x[j]] (in (0, x[0]] when j = 0), right edges in [x[k], x[k+1])
    known = (x, state, ok)
    lefts = _edges(solver, x[[j for j, _ in runs]], np.array([x[j - 1] if j else 0.0 for j, _ in runs]),
                   scale, atom0, known)
    rights = _edges(solver, x[[k for _, k in runs]], x[[k + 1 for _, k in runs]], scale, atom0, known)
    pieces = []
    for i, (j, k) in enumerate(runs):
        a = float(lefts[i])
        hard = j == 0 and a < 1e-3 * x[0]       # the support reaches 0: a hard edge there
        a = 0.0 if hard else a
        xx = np.concatenate([[a], x[j:k + 1], [rights[i]]])
        yy = np.concatenate([[dens[j] if hard else 0.0], dens[j:k + 1], [0.0]])
        pieces.append((xx, yy))
    return pieces, (x, state, ok), scale


def _warm(solver, x, eta, scale, atom0, known):
    """``m(x + iη)``, states and convergence mask by Newton from the states ``known = (x_k,
    states, ok)`` of a previous pass interpolated in ``x``; points where that fails (no
    convergence, a negative or non-finite density) by continuation."""
    xc, sc, okc = known
    xc, sc = xc[okc], sc[:, okc]
    if xc.size < 2:
        return _continued(solver, x, eta, scale)
    start = np.array([np.interp(x, xc, v.real) + 1j * np.interp(x, xc, v.imag) for v in sc])
    m, state, ok = solver.solve(x + 1j * eta, start)
    im = _im(m, x, eta, atom0)
    big = float(np.max(np.abs(im[ok]))) if np.any(ok) else 1.0
    bad = ~ok | ~np.isfinite(im) | (im < -1e-9 * big)
    if np.any(bad):
        m[bad], state[:, bad], ok[bad] = _continued(solver, x[bad], eta[bad], scale)
    return m, state, ok


def _warm_density(solver, x, eta, scale, atom0, known):
    """The density at ``x`` (:func:`_warm`) and the states ``(x, states, ok)``."""
    m, state, ok = _warm(solver, x, eta, scale, atom0, known)
    return _im(m, x, eta, atom0) / np.pi, (x, state, ok)


def _nodes(xx, yy, g):
    """``g`` cells on ``[xx[0], xx[-1]]``: knots and midpoints ``Q(u(t))``, ``u`` the edge map,
    ``Q`` the quantile function of a reference measure: the coarse density ``yy``, two thirds
    as mass and one third as its ``x⁴``-weighted mass, plus a uniform fifth (nodes follow the mass
    and the moments, and stay spread where the coarse pass saw little)."""
    a, b = float(xx[0]), float(xx[-1])
    cell = 0.5 * (yy[1:] + yy[:-1]) * np.diff(xx)
    if cell.sum() > 0:              # two thirds of the nodes by mass, one third by the m_4 contribution
        x4 = 0.5 * (xx[1:] ** 4 + xx[:-1] ** 4)
        cell = cell / cell.sum() + 0.5 * cell * x4 / max(float(np.sum(cell * x4)), 1e-300)
    floor = 0.25 * float(cell.sum()) / (b - a) if cell.sum() > 0 else 1.0
    ref = np.concatenate([[0.0], np.cumsum(cell + floor * np.diff(xx))])
    ref = ref / ref[-1]
    keep = np.append(np.diff(ref) > 0, True)
    def q(v):
        return np.interp(v, ref[keep], xx[keep])
    t = np.arange(2 * g + 1) / (2 * g)                # knots (even) and midpoints (odd)
    pts = q(_edge_map(t)[0])
    pts[0], pts[-1] = a, b
    return pts[::2], pts[1::2]


def _fine(solver, pieces, grid, scale, atom0, states):
    """The fine pass over ``pieces``: nodes, cell widths and knots (per piece), the density
    and the solver states (warm-started from ``states``)."""
    # nodes by the share of the mass and of m_4 (a far interval of small mass carries the moments)
    mass = np.array([float(np.sum(0.5 * (yy[1:] + yy[:-1]) * np.diff(xx))) for xx, yy in pieces])
    m4 = np.array([float(np.sum(0.5 * (yy[1:] * xx[1:]**4 + yy[:-1] * xx[:-1]**4) * np.diff(xx)))
                   for xx, yy in pieces])
    share = 0.5 * (mass / max(mass.sum(), 1e-300) + m4 / max(m4.sum(), 1e-300))
    xs, ws, ks = [], [], []
    for (xx, yy), q in zip(pieces, share):
        g = max(min(grid, 40), int(round(grid * q)))
        knots, mids = _nodes(xx, yy, g)
        xs.append(mids)
        ws.append(np.diff(knots))
        ks.append(knots)
    x = np.concatenate(xs)
    dens, states = _warm_density(solver, x, np.full(x.size, _ETA * scale), scale, atom0, states)
    return x, ws, ks, np.clip(dens, 0.0, None), states


def _split_at_gaps(solver, pieces, ks, x, dens, scale, atom0, known):
    """Pieces cut at the gaps the fine pass found inside them (runs of nodes outside the
    support, by the test of :func:`_probe`), or None when there are none."""
    cand = np.flatnonzero(dens < 1e-6 * dens.max())
    if cand.size == 0:
        return None
    outside = np.zeros(x.size, dtype=bool)
    outside[cand] = ~_probe(solver, x[cand], scale, atom0, known)[1]
    new, j, found = [], 0, False
    for (xx, yy), k in zip(pieces, ks):
        g = k.size - 1
        xi, di, oi = x[j:j + g], dens[j:j + g], outside[j:j + g]
        j += g
        runs = _runs(~oi)
        if len(runs) <= 1:
            new.append((xx, yy))
            continue
        found = True
        # gaps between consecutive inside runs: edges by k-section between the nodes around them
        ins_r = [xi[k1] for _, k1 in runs[:-1]]
        out_r = [xi[k1 + 1] for _, k1 in runs[:-1]]
        ins_l = [xi[j0] for j0, _ in runs[1:]]
        out_l = [xi[j0 - 1] for j0, _ in runs[1:]]
        right = _edges(solver, np.array(ins_r), np.array(out_r), scale, atom0, known)
        left = _edges(solver, np.array(ins_l), np.array(out_l), scale, atom0, known)
        lo = [float(k[0])] + left.tolist()
        hi = right.tolist() + [float(k[-1])]
        for r_i, ((j0, k1), a, b) in enumerate(zip(runs, lo, hi)):
            sel = slice(j0, k1 + 1)
            y0 = yy[0] if (r_i == 0 and a == 0.0) else 0.0
            new.append((np.concatenate([[a], xi[sel], [b]]), np.concatenate([[y0], di[sel], [0.0]])))
    return new if found else None


def _one_blas_thread():
    """One BLAS thread while tabulating, if threadpoolctl is installed: the products here are
    thin (``points × nodes`` by ``nodes × 3``), where BLAS threads only add CPU time."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                 # pragma: no cover - the sweep extra is not installed
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def tabulate(solver, bound, *, atom0=0.0, grid=400, coarse=160, top=None, moments=None, rtol=MOMENT_RTOL,
             who="tabulate"):
    r"""Tabulate the law whose Stieltjes transform ``solver`` computes (module docstring).

    Parameters
    ----------
    solver : object with ``start(z) -> state`` (the large-``|z|`` start, an array whose
        last axis runs over the points), ``solve(z, state, tol=None) -> (m, state, ok)``
        (Newton from ``state`` at the points ``z``, ``Im z > 0``; ``ok`` the points that
        converged) and optionally ``levels`` (continuation steps in ``η``, default 11)
    bound : float > 0
        A bound of the support (the density must vanish beyond it).
    atom0 : float in [0, 1)
        The known atom at 0.
    grid : int ≥ 20
        Fine nodes, shared among the support intervals by their mass (at least 40 each).
    coarse : int ≥ 20
        Nodes of the coarse pass that locates the support.
    top : float, optional
        Where the coarse pass starts looking (e.g. a few ``(m_6/(1 − atom0))^{1/6}``); it
        moves to ``bound`` when the density does not vanish there.
    moments : sequence, optional
        The law's own moments ``m_0 … m_4`` (or more): the tabulated measure must match
        them to ``rtol`` (:func:`check_moments`); the fine pass is redone with 2 and 4 times
        ``grid`` nodes before the law is refused.
    rtol : float
        The accuracy claimed for the moments (default :data:`MOMENT_RTOL`).
    who : str
        The caller's name for error messages.

    Returns
    -------
    dict
        ``x`` (fine nodes, the cell midpoints, increasing), ``density`` (continuous part, as
        evaluated), ``weights`` (the cell masses, density × cell width, renormalised to
        ``1 − atom0``), ``knots`` and ``cdf`` (the cdf of the continuous part at the cell
        boundaries, atom excluded; flat across gaps),
        ``support`` (the intervals), ``atom0``, ``mass`` (continuous mass as tabulated,
        before renormalisation to ``1 − atom0``), ``moments`` (``m_0 … m_6`` of the
        tabulated measure, atom included, after renormalisation) and, with ``moments``,
        ``moment_error`` (:func:`check_moments`).

    Raises
    ------
    FreeprobValueError
        Bad ``bound``, ``atom0``, ``grid`` or ``coarse``; no continuous part found although
        ``atom0 < 1``; the density does not vanish at ``bound``; the tabulated moments
        differ from ``moments`` by more than ``rtol`` with ``4 grid`` nodes.

    Source: module docstring.
    """
    if not (isinstance(bound, float) and math.isfinite(bound) and bound > 0):
        raise FreeprobValueError(f"{who}: the norm bound must be a finite number > 0; got {bound!r}")
    if not 0 <= atom0 < 1:
        raise FreeprobValueError(f"{who}: atom0 must lie in [0, 1); got {atom0!r}")
    for name, v in (("grid", grid), ("coarse", coarse)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 20:
            raise FreeprobValueError(f"{who}: {name} must be an integer ≥ 20; got {v!r}")
    with _one_blas_thread():
        pieces, states, scale = _support(solver, bound, atom0, coarse, top, who)
        if not pieces:
            raise FreeprobValueError(f"{who}: no continuous part found on [0, {bound:g}]")
        for attempt in range(3):        # grid, then twice and four times that if the moments say so
            for _cut in range(3):
                x, ws, ks, dens, states = _fine(solver, pieces, grid << attempt, scale, atom0, states)
                split = _split_at_gaps(solver, pieces, ks, x, dens, scale, atom0, states)
                if split is None:
                    break
                pieces = split
            table = _table(x, ws, ks, dens, atom0, who)
            if moments is None:
                return table
            err = _moment_error(table, moments)
            if err <= rtol:
                break
        table["moment_error"] = check_moments(table, moments, who, rtol=rtol)
    return table


def _table(x, ws, ks, dens, atom0, who):
    w = dens * np.concatenate(ws)
    mass = float(w.sum())
    if not mass > 0:
        raise FreeprobValueError(f"{who}: no continuous part found")
    w = w * ((1 - atom0) / mass)         # the cdf ends at 1 − atom0; the density stays as evaluated
    cdf, acc, j = [], 0.0, 0
    for k in ks:
        g = k.size - 1
        c = acc + np.concatenate([[0.0], np.cumsum(w[j:j + g])])
        cdf.append(c)
        acc, j = float(c[-1]), j + g
    mom = [1.0] + [float(np.sum(w * x**k)) for k in range(1, 7)]
    support = [(float(k[0]), float(k[-1])) for k in ks]
    return dict(x=x, density=dens, weights=w, knots=np.concatenate(ks), cdf=np.concatenate(cdf),
                support=support, atom0=float(atom0), mass=mass, moments=mom)


def _moment_error(table, moments, order=4):
    got = table["moments"]
    return max(abs(got[k] - float(moments[k])) / abs(float(moments[k])) for k in range(1, order + 1))


def check_moments(table, moments, who, *, order=4, rtol=MOMENT_RTOL):
    r"""The largest relative difference ``|m_k(table) − m_k|/m_k`` over ``k = 1 … order``
    between a tabulated law (:func:`tabulate`) and its own moments ``[m_0, m_1, …]``
    (plane trees or the Cauchy integral): a law is one object, its printed moments are those
    of its density.

    Raises ``FreeprobValueError`` when it exceeds ``rtol`` (the law is then not returned:
    the tabulation missed part of the law).  Source: issue 26; module docstring."""
    got = table["moments"]
    err = _moment_error(table, moments, order)
    if not err <= rtol:
        raise FreeprobValueError(f"{who}: the tabulated law's moments differ from the law's moments by "
                                 f"{err:.2g} (relative; allowed {rtol:g}): "
                                 f"table {[f'{v:.6g}' for v in got[1:order + 1]]}, "
                                 f"law {[f'{float(v):.6g}' for v in moments[1:order + 1]]}")
    return float(err)


def law_result(table, moments, alpha):
    r"""The result of :func:`freeprob.attention.input_gram.input_gram_law` from a checked
    table (:func:`tabulate` with ``moments``): ``x``, ``density``, ``knots``, ``cdf``,
    ``support``, ``atom0``, ``moments`` (``m_0 … m_4``), ``moment_error``, ``mass_defect``
    (tabulated continuous mass + atom − 1, before renormalisation), ``upper`` (the top of
    the support) and ``alpha``.  Source: issue 26 (one dict for every object)."""
    return dict(x=table["x"], density=table["density"], knots=table["knots"], cdf=table["cdf"],
                support=table["support"], atom0=table["atom0"], moments=[float(v) for v in moments[:5]],
                moment_error=table["moment_error"], mass_defect=table["mass"] + table["atom0"] - 1.0,
                upper=table["support"][-1][1], alpha=alpha)
