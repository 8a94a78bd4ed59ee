r"""Distances between sampled spectra and between a spectrum and an exact law.

The comparison layer of ``freeprob verify`` (above the exact core and the sampler; float64).

Definitions (theory.md §5; the paper's exact definitions are not stated, so these are
ours and every output says so):

* **relative W1, two samples** ``a`` (e.g. softmax) and ``b`` (e.g. GE) of equal size:
  ``W1(a, b)/mean(b)`` over **all** eigenvalues (top ones included); ``W1`` from
  :func:`scipy.stats.wasserstein_distance`.
* **KS, two samples**: :func:`scipy.stats.ks_2samp` statistic ``sup_x |F_a − F_b|``.
* **relative W1, sample vs law**: ``∫ |F_emp(x) − F(x)| dx / m1`` with ``m1`` the law's
  exact mean; integrated exactly with ``F`` linear between the merged sample points and a
  fine grid of the tabulated ``F`` (below).
* **KS, sample vs law**: ``sup_x |F_emp(x) − F(x)|``, evaluated on both sides of every
  sample point and every atom (so atoms, e.g. the zero eigenvalues of a low-rank Gram
  against an atom of the law at 0, are handled; :func:`scipy.stats.kstest` assumes a
  continuous ``F``).
* **a sampled eigenvalue on an atom**: every distance first applies
  :func:`snap_to_atoms`: an eigenvalue within ``ATOM_RTOL·max|λ|`` (``1e-9·max|λ|``) of
  an atom location of the law (two samples: of 0) is set exactly onto it, since a float64
  eigensolver returns the structural zeros of a rank-deficient Gram as 0 ± ~n·eps·max|λ|
  (docs/theory.md §9).
* **relative moment error**: ``(m̂_k − m_k)/m_k``, ``m̂_k = mean(λ^k)``.

:class:`TabulatedLaw` tabulates an exact :class:`~freeprob.laws.law.Law` once (density on a
grid clustered at every support edge, cumulative integral, exact atoms) to an absolute
cdf accuracy far below the distances being measured (checked: total mass ``= 1 ± 10⁻⁶``).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from freeprob._extras import require
from freeprob._progress import report

interpolate = require("scipy.interpolate", "sampler")
stats = require("scipy.stats", "sampler")

from freeprob._checks import check_int
from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.sampler.arrays import real_array
from freeprob.sampler.spectra import empirical_moments

__all__ = ["TabulatedLaw", "two_sample_distances", "law_distances", "relative_moment_errors",
           "spectrum_moments", "snap_to_atoms", "MASS_TOLERANCE", "ATOM_RTOL", "DENSITY_RTOL"]

#: Largest accepted ``|continuous mass + atoms − 1|`` of a tabulated law.
MASS_TOLERANCE = 1e-6
#: density chunks in :meth:`TabulatedLaw.from_law`, each reported
#: (:func:`freeprob._progress.report`: a sweep's bar moves within a law cell)
_CHUNKS = 8
#: Relative accuracy of the tabulated density values (float64 continuation where it reaches
#: this, certified digits elsewhere: :meth:`freeprob.laws.law.Law.density` with ``rtol``).
DENSITY_RTOL = 1e-10
#: A sampled eigenvalue within ``ATOM_RTOL·max|λ|`` of an atom location sits on the atom
#: (:func:`snap_to_atoms`).
ATOM_RTOL = 1e-9
#: A quadrature node within ``_END_EPS·|e|`` of a nonzero piece end ``e`` gets no weight in
#: :meth:`TabulatedLaw.from_law` (it rounds onto the end, where a signed law is singular).
_END_EPS = 4 * np.finfo(float).eps


def _spectrum(values, what="eigenvalues"):
    return np.sort(real_array(values, what, ndim=1))


def snap_to_atoms(eigenvalues, locations=(0.0,)):
    r"""Sampled eigenvalues that sit on an atom of a law, set exactly onto it.

    The one place where a sampled spectrum meets an atom (every distance of this module
    and the figures of ``freeprob verify`` go through it): an eigenvalue ``λ_i`` with
    ``|λ_i − a| ≤ ATOM_RTOL · max_j |λ_j|`` (``ATOM_RTOL = 1e-9``) for an atom location
    ``a`` becomes exactly ``a``.

    Why this tolerance: a backward-stable float64 symmetric eigensolver (LAPACK
    ``syevd``) returns every eigenvalue of an ``n × n`` Gram ``G`` with absolute error
    ``≲ n·eps·‖G‖₂ = n·eps·max|λ|`` (``eps = 2.2·10⁻¹⁶``), so the structural zeros of a
    rank-deficient Gram come out as a mix of ``0.0`` (:mod:`freeprob.sampler` clips the
    negative ones) and ``±10⁻¹⁵``-ish values; ``1e-9`` is above that bound for every
    ``n ≤ 4·10⁶``.  A genuine eigenvalue of the continuous part so close to the atom is
    moved by at most ``1e-9·max|λ|``, which changes KS by at most the law's mass within
    that window (of order ``√(1e-9) ≈ 3·10⁻⁵`` even at an inverse-square-root hard edge,
    far below the ``1/n`` resolution of an empirical cdf) and W1 by at most
    ``1e-9·max|λ|``.  docs/theory.md §9 states the same rule.

    Parameters
    ----------
    eigenvalues : array_like, 1-d, finite
        A sampled spectrum (any order; the order is kept).  The scale ``max|λ|`` is taken
        over this array: pass the whole spectrum when a part of it (e.g. the bulk without
        an outlier) is compared afterwards.
    locations : sequence of finite floats
        Atom locations of the law (default ``(0.0,)``, the structural zeros; empty: the
        spectrum is returned unchanged).

    Returns
    -------
    ndarray, shape ``(n,)``, float64
        A copy; values on an atom are exactly the location (``+0.0`` for 0).

    Raises
    ------
    FreeprobValueError
        ``eigenvalues`` not a non-empty finite 1-d array; a non-finite location.

    Examples
    --------
    >>> snap_to_atoms([-2e-16, 0.0, 3e-15, 0.25, 1.0]).tolist()
    [0.0, 0.0, 0.0, 0.25, 1.0]
    """
    lam = real_array(eigenvalues, "snap_to_atoms: eigenvalues", ndim=1, copy=True)
    locs = real_array(locations, "snap_to_atoms: atom locations", nonempty=False).ravel()
    tol = ATOM_RTOL * float(np.max(np.abs(lam)))
    for a in locs:
        lam[np.abs(lam - a) <= tol] = a + 0.0       # + 0.0: −0.0 becomes +0.0
    return lam


_P = 6


def _edge_map(t):
    """``u(t) = t^p/(t^p + (1 − t)^p)`` and ``u'(t)``, ``p = 6`` (clusters points at 0 and 1)."""
    a, b = t ** _P, (1 - t) ** _P
    s = a + b
    return a / s, _P * (t * (1 - t)) ** (_P - 1) / (s * s)


def _cut(support, cuts):
    """The support intervals ``(a, b)`` cut at the points of ``cuts`` inside
    (:meth:`~freeprob.laws.law.Law.cut_points`), as a list of pieces; a cut within
    ``1e-9·(b − a)`` of an end or of the previous cut is dropped (two special points that
    nearly coincide, as just before a gap closes: float64 nodes between them would all
    round to a few values, and the neighbouring pieces cluster their nodes there anyway)."""
    out = []
    for a, b in support:
        tol = 1e-9 * (b - a)
        ends = [a]
        for c in sorted(c for c in cuts if a + tol < c < b - tol):
            if c - ends[-1] > tol:
                ends.append(c)
        ends.append(b)
        out += list(zip(ends, ends[1:]))
    return out


class TabulatedLaw:
    r"""A law's distribution function, quantile function and density as float64 tables.

    Built by :meth:`from_law` from an exact :class:`~freeprob.laws.law.Law` with numeric
    coefficients.  Each support interval is first cut at the law's
    :meth:`~freeprob.laws.law.Law.cut_points` (a closed gap, an atom inside, the dip next to a
    near-real branch point just after a gap closed), and on each piece ``(a, b)`` the
    density is evaluated at the midpoints of ``x(t) = a + (b − a) u(t)``, ``u(t) = t^p/(t^p + (1 − t)^p)``, ``p = 6``,
    ``t ∈ (0, 1)`` (points clustered at both edges: an edge singularity ``(x − a)^{-α}``
    becomes ``t^{5 − 6α}`` in ``t``, integrable and smooth enough for the midpoint rule for
    every ``α ≤ 4/5``, which covers square-root edges and the ``x^{-1/2}``, ``x^{-2/3}``
    hard edges of products of Marchenko–Pastur laws), and integrated by the midpoint rule
    with its second-difference correction (fourth order where the integrand is smooth);
    the continuous cdf is the monotone cubic (PCHIP) through the nodes ``x(j/N)``.  Atoms are exact
    (:meth:`~freeprob.laws.law.Law.atoms`).  The density values are accurate to
    :data:`DENSITY_RTOL` (relative; float64 continuation of the root along the nodes, the
    certified path next to edges and special points), far below the quadrature error.

    Attributes
    ----------
    nodes, cdf_nodes : ndarray
        Knots of the continuous part of the cdf (increasing) and its values there.
    atoms : ndarray, shape (k, 2)
        ``(location, mass)`` rows.
    moments : ndarray
        Exact moments ``m_0 … m_K`` (as floats).
    support : list of (a, b)
    mass_defect : float
        ``continuous mass + Σ atoms − 1`` as tabulated.
    flat_levels : list of (x0, x1, level, exact)
        The law's cdf on its flat stretches ``[x0, x1)`` from
        :meth:`~freeprob.laws.law.Law.flat_levels` (a law with several support intervals):
        ``level`` a text, the exact rational ``"p/q"`` when ``exact``, else a decimal good to
        ``10^{-30}``; what :meth:`quantile` decides with within :attr:`cdf_tolerance` of a
        tabulated level.  Empty for one interval (the levels next to atoms come from their
        masses) and for a table not built by :meth:`from_law`.  A table of :meth:`from_law`
        computes them from its law when they are first read (pickled and :meth:`to_dict`
        tables carry them).
    """

    #: digits of the flat levels stored by :meth:`from_law`
    LEVEL_DPS = 30

    def __init__(self, nodes, cdf_nodes, atoms, moments, support, density_x, density_y,
                 mass_defect=0.0, label="", flat_levels=(), signed=False):
        self.nodes = np.asarray(nodes, dtype=float)
        self.cdf_nodes = np.asarray(cdf_nodes, dtype=float)
        self.signed = bool(signed)
        if self.nodes.size > 1:     # edge-clustered nodes can coincide in float64: keep the last
            keep = np.append(np.diff(self.nodes) > 0, True)
            self.nodes, self.cdf_nodes = self.nodes[keep], self.cdf_nodes[keep]
            if not self.signed:     # a probability law: rounding only can make it dip
                self.cdf_nodes = np.maximum.accumulate(self.cdf_nodes)
        self.atoms = np.asarray(atoms, dtype=float).reshape(-1, 2)
        self.moments = np.asarray(moments, dtype=float)
        self.support = [tuple(map(float, ab)) for ab in support]
        self.density_x = np.asarray(density_x, dtype=float)
        self.density_y = np.asarray(density_y, dtype=float)
        self.mass_defect = float(mass_defect)
        self.label = label
        self.flat_levels = flat_levels
        self._pchip = None

    @property
    def flat_levels(self):
        # documented in the class docstring (Attributes); a table of from_law computes them
        # from its law when first read (by quantile, to_dict or pickling: ~0.3–1 s of CPU a
        # gap at LEVEL_DPS digits, which the cdf, density and distances never need)
        if self._levels_law is not None:
            self.flat_levels = _flat_levels(self._levels_law, self.LEVEL_DPS)
        return self._flat_levels

    @flat_levels.setter
    def flat_levels(self, rows):
        self._levels_law = None
        self._flat_levels = [(float(x0), float(x1), str(lev), bool(ex)) for x0, x1, lev, ex in rows]

    def __getstate__(self):
        self.flat_levels            # noqa: B018  (a pickled table carries its levels, not its law)
        return self.__dict__

    def __setstate__(self, state):
        state = dict(state)
        if "flat_levels" in state:  # pickled before the levels were computed when first read
            state["_flat_levels"] = state.pop("flat_levels")
        state.setdefault("_levels_law", None)
        self.__dict__.update(state)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_law(cls, law, *, points=2000, moments=4, label=""):
        r"""Tabulate ``law`` (numeric coefficients, e.g. the attention laws at a numeric β).

        ``law`` may also be a finite-n law (:class:`freeprob.laws.finite_n.FiniteNLaw`, from
        ``law.finite_n(n)``): its corrected density ``ρ + ρ₁/n``, its atoms (with the
        ``O(1/n)`` atoms of the correction at the edges) and its corrected moments are
        tabulated the same way.  That measure is signed: its cdf dips below its running
        maximum within ``O(1/n)`` of an edge, and it is kept as it is (``signed = True``; no
        monotone clipping; :meth:`quantile` is refused).  Its density costs about 1–40 ms a
        point (the upper end for operations with a deterministic operand, which need the
        subordination points), so pass fewer ``points`` for a quick table.  A node within
        ``4·eps·|e|`` of a nonzero piece end ``e`` rounds onto it in float64, where a signed law's
        density is singular (``ρ₁ ~ |x − e|^{-1/2}``); such nodes get no weight (their cells' true
        mass is ``O(√eps)``).

        Parameters
        ----------
        law : freeprob.laws.law.Law or freeprob.laws.finite_n.FiniteNLaw
        points : int ≥ 50
            Density evaluations per piece (support interval, cut at the cut points;
            quadrupled once if the mass check fails).
        moments : int ≥ 1
            Highest exact moment stored.

        Raises
        ------
        FreeprobValueError
            ``law`` has free symbols, bad ``points``/``moments``, or an unbounded support.
        PrecisionError
            The tabulated mass differs from one by more than :data:`MASS_TOLERANCE`.
        """
        from freeprob.laws.finite_n import FiniteNLaw
        from freeprob.laws.law import Law
        if not isinstance(law, Law | FiniteNLaw):
            raise FreeprobValueError(f"TabulatedLaw.from_law: expected a freeprob Law or a finite-n law "
                                     f"(law.finite_n(n)); got {type(law).__name__}")
        signed = isinstance(law, FiniteNLaw) and law.field == "real"
        points = check_int(points, "TabulatedLaw.from_law", "points", minimum=50)
        moments = check_int(moments, "TabulatedLaw.from_law", "moments", minimum=1)
        law.check_numeric("TabulatedLaw.from_law", "tabulating")
        report(0, 1, "the law's equation, support and atoms")
        support = [(float(a), float(b)) for a, b in law.support(dps=15)]
        for a, b in support:
            if not (math.isfinite(a) and math.isfinite(b)):
                raise FreeprobValueError("TabulatedLaw.from_law: unbounded support is not tabulated")
        pieces = _cut(support, [float(c) for c in law.cut_points(dps=15)])
        atoms = [(float(x), float(m)) for x, m in law.atoms(dps=15)]
        mom = [float(m) for m in law.moments(moments, dps=17)]
        for attempt in range(2):
            n_pts = points * (4 ** attempt)
            nodes, cdf, dx, dy, mass = [], [], [], [], 0.0
            t_mid = (np.arange(n_pts) + 0.5) / n_pts
            u, du = _edge_map(t_mid)
            # every piece in sorted calls: the root is continued from node to node (and piece
            # to piece), and a node that rounds onto a cut point is reached from its own side;
            # in reported chunks (freeprob._progress: the bar moves, Ctrl-C is seen)
            x_all = np.concatenate([a + (b - a) * u for a, b in pieces]) if pieces else np.zeros(0)
            order = np.argsort(x_all, kind="stable")
            xs_sorted = x_all[order].tolist()
            d_sorted, step = [], max(1, -(-len(xs_sorted) // _CHUNKS))
            for j in range(0, len(xs_sorted), step):
                report(j, len(xs_sorted), "tabulating the law")
                d_sorted += [float(v) for v in law.density(xs_sorted[j:j + step], rtol=DENSITY_RTOL)]
            d_all = np.empty_like(x_all)
            d_all[order] = d_sorted
            for k, (a, b) in enumerate(pieces):
                x_mid = x_all[k * n_pts:(k + 1) * n_pts]
                dens = d_all[k * n_pts:(k + 1) * n_pts]
                w = dens * (b - a) * du / n_pts
                # a node within rounding distance of a (nonzero) piece end sits *at* the end in
                # float64, where a signed law's density has its edge singularity (ρ₁ ~ |x − e|^{-1/2}):
                # evaluated there it is ~10¹¹ instead of the value at the node's true distance
                # (~10⁻²⁰), and its weight was 3·10⁻⁵ of spurious mass (finite-n single head,
                # d_K = 64, n = 768).  The true mass of those cells is O(√eps): no weight.
                at_end = (((x_mid - a <= _END_EPS * abs(a)) & (a != 0))
                          | ((b - x_mid <= _END_EPS * abs(b)) & (b != 0)))
                w[at_end] = 0.0
                # corrected midpoint rule: ∫_cell g ≈ h (g_i + (g_{i−1} − 2 g_i + g_{i+1})/24)
                w[1:-1] += (w[:-2] - 2 * w[1:-1] + w[2:]) / 24
                w[at_end] = 0.0
                x_knot = a + (b - a) * _edge_map(np.arange(n_pts + 1) / n_pts)[0]
                c = mass + np.concatenate([[0.0], np.cumsum(w)])
                if nodes and x_knot[0] <= nodes[-1][-1]:
                    x_knot, c = x_knot[1:], c[1:]
                nodes.append(x_knot)
                cdf.append(c)
                dx.append(x_mid)
                dy.append(dens)
                mass = float(c[-1]) if len(c) else mass
            defect = mass + sum(m for _, m in atoms) - 1.0
            if abs(defect) <= MASS_TOLERANCE:
                break
        else:
            raise PrecisionError(
                f"TabulatedLaw.from_law: tabulated mass differs from 1 by {defect:.3g} "
                f"(> {MASS_TOLERANCE}) with {n_pts} points per piece{' for ' + label if label else ''}")
        if not nodes:
            nodes, cdf, dx, dy = [np.zeros(0)], [np.zeros(0)], [np.zeros(0)], [np.zeros(0)]
        table = cls(np.concatenate(nodes), np.concatenate(cdf), atoms, mom, support,
                    np.concatenate(dx), np.concatenate(dy), defect, label, (), signed)
        if len(support) > 1 and not signed:
            table._levels_law = law         # flat levels: computed when first read
        return table

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        """A JSON-serialisable dict (see :meth:`from_dict`; ``signed`` only when true, so that
        the tables of ordinary laws are stored as before)."""
        out = dict(nodes=self.nodes.tolist(), cdf_nodes=self.cdf_nodes.tolist(),
                   atoms=self.atoms.tolist(), moments=self.moments.tolist(), support=self.support,
                   density_x=self.density_x.tolist(), density_y=self.density_y.tolist(),
                   mass_defect=self.mass_defect, label=self.label,
                   flat_levels=[list(t) for t in self.flat_levels])
        if self.signed:
            out["signed"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "TabulatedLaw":
        """Inverse of :meth:`to_dict`."""
        return cls(**data)

    # ------------------------------------------------------------------ evaluation
    @property
    def mean(self) -> float:
        """The exact first moment ``m1``."""
        return float(self.moments[1])

    @property
    def upper_edge(self) -> float:
        """Largest point of the support or atom locations (the predicted top of the bulk)."""
        cands = [b for _, b in self.support] + [x for x, m in self.atoms if m > 0]
        return max(cands) if cands else float("nan")

    @property
    def atom_locations(self):
        """Locations of the atoms of positive mass (1-d array; what :func:`snap_to_atoms`
        snaps a sampled spectrum onto)."""
        return self.atoms[self.atoms[:, 1] > 0, 0]

    def _continuous(self, x):
        if self.nodes.size < 2:
            return np.zeros_like(x)
        if self._pchip is None:
            self._pchip = interpolate.PchipInterpolator(self.nodes, self.cdf_nodes, extrapolate=False)
        f = self._pchip(np.clip(x, self.nodes[0], self.nodes[-1]))
        return np.where(x < self.nodes[0], 0.0, np.where(x > self.nodes[-1], self.cdf_nodes[-1], f))

    def fine_nodes(self):
        """The cdf nodes with 3 equally spaced points added in each cell (the grid on
        which the cubic cdf is treated as piecewise linear by :meth:`quantile` and
        :func:`law_distances`)."""
        fine = self.nodes
        if fine.size > 1:
            fine = np.concatenate([(fine[:-1, None] + np.diff(fine)[:, None] * np.arange(4) / 4).ravel(),
                                   fine[-1:]])
        return fine

    def cdf(self, x, *, left=False):
        r"""``F(x) = μ((−∞, x])`` (``left=True``: ``μ((−∞, x))``), vectorised.

        Raises ``FreeprobValueError`` for NaN arguments (``±inf`` give 0 and 1)."""
        x = np.asarray(x, dtype=float)
        if np.any(np.isnan(x)):
            raise FreeprobValueError("TabulatedLaw.cdf: x contains NaN")
        f = self._continuous(x)
        for loc, mass in self.atoms:
            f = f + mass * ((x > loc) if left else (x >= loc))
        return f

    @property
    def cdf_tolerance(self) -> float:
        """Accuracy claimed for the tabulated cdf: ``|mass_defect| + 10⁻¹²`` (the float64
        rounding of the cumulative sums)."""
        return abs(self.mass_defect) + 1e-12

    def quantile(self, p):
        r"""``Q(p) = inf{x : F(x) ≥ p}`` (the generalized inverse, as scipy's ``ppf``) for
        ``p`` in ``[0, 1]``, vectorised.

        ``F`` is inverted linearly on :meth:`fine_nodes`; an atom is returned for every
        ``p`` in its jump; ``Q(0)`` is the lowest point of the support or atom (exactly
        ``0.0`` when that is 0), ``Q(1)`` the highest.  Where ``F`` is flat (a gap between
        support intervals, the stretch before or after an atom) ``Q`` is its left end ``x₀``
        for ``p`` up to the level and its right end ``x₁`` (or past it) above: within
        :attr:`cdf_tolerance` of the tabulated level, where the table cannot tell the two
        sides apart, the side is decided against the law's own level (the atom masses when
        only atoms lie below or above, else :attr:`flat_levels`).

        Raises
        ------
        FreeprobValueError
            ``p`` outside ``[0, 1]`` or NaN.
        PrecisionError
            A ``p`` within :attr:`cdf_tolerance` of a tabulated level that the table does
            not know precisely (a table not built by :meth:`from_law`), or within
            ``10^{-28}`` of a level known to 30 digits only.
        """
        if self.signed:
            raise FreeprobValueError(
                "TabulatedLaw.quantile: this table is a finite-n law, a signed measure whose cdf "
                "is not monotone near the edges; its quantile is not defined (tabulate the limit "
                "law for quantiles)")
        p = np.asarray(p, dtype=float)
        if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
            raise FreeprobValueError("TabulatedLaw.quantile: p must lie in [0, 1]")
        fine = self.fine_nodes()
        xs = np.union1d(fine, self.atoms[:, 0]) if self.atoms.size else fine
        lo, hi = self.cdf(xs, left=True), self.cdf(xs)
        pp = np.column_stack([lo, hi]).ravel()
        xx = np.repeat(xs, 2)
        pp = np.maximum.accumulate(pp)
        i = np.clip(np.searchsorted(pp, p, side="left"), 1, pp.size - 1)   # first pp[i] ≥ p
        p0, p1, x0, x1 = pp[i - 1], pp[i], xx[i - 1], xx[i]
        frac = np.where(p1 > p0, (p - p0) / np.where(p1 > p0, p1 - p0, 1.0), 1.0)
        q = np.where(p1 <= p, x1, x0 + np.clip(frac, 0.0, 1.0) * (x1 - x0))
        q = np.where(p <= pp[0], xx[0], q)
        tau = self.cdf_tolerance
        for start, end, c, level in self._stretches():
            near = np.abs(p - c) <= tau
            if not np.any(near):
                continue
            if level is None and start == end:
                q[near] = start         # an atom with the next support interval starting at it
                continue
            if level is None:
                raise PrecisionError(
                    f"TabulatedLaw.quantile: p = {p[near][0]!r} lies within {tau:.3g} of the tabulated "
                    f"cdf level {c!r} of the flat stretch [{start!r}, {end!r}], which this table does "
                    "not know precisely: the side (left end or past the right end) cannot be "
                    "decided; tabulate the law with TabulatedLaw.from_law")
            for k in np.flatnonzero(near):
                side = _side(p[k], level)
                if side is None:
                    raise PrecisionError(
                        f"TabulatedLaw.quantile: p = {p[k]!r} equals the level {level[0]} of the flat "
                        f"stretch [{start!r}, {end!r}] to the 30 digits it is known to")
                q[k] = start if side <= 0 else max(q[k], end)
        return q

    def _stretches(self):
        """``(x0, x1, tabulated level, law's level)`` of each flat stretch ``[x0, x1)`` of
        ``F`` (and ``x0 = x1``: an atom with a support interval starting at it, where the
        table cannot tell the top of the jump from a point just past it): the law's level as
        ``(text, exact)`` from :attr:`flat_levels`, or from the atom masses when only atoms
        lie below (or above) the stretch, else ``None``."""
        items = sorted([(a, b, False) for a, b in self.support] +
                       [(x, x, True) for x in self.atom_locations], key=lambda t: (t[0], not t[2]))
        out = []
        top, below_atoms_only = None, True
        for k, (a, b, is_atom) in enumerate(items):
            if top is not None and a == top and not is_atom and items[k - 1][2]:
                out.append((a, a, float(self.cdf(np.array([a]))[0]), None))
            if top is not None and a > top:
                rest = items[k:]
                c = float(self.cdf(np.array([top]))[0])
                level = None
                for x0, x1, lev, ex in self.flat_levels:
                    if math.isclose(x0, top, rel_tol=1e-9, abs_tol=1e-300) and \
                            math.isclose(x1, a, rel_tol=1e-9, abs_tol=1e-300):
                        level = (lev, ex)
                if level is None and below_atoms_only:
                    level = (_fraction_text(sum((_frac(m) for x, m in self.atoms if x <= top and m > 0),
                                                _frac(0.0))), True)
                elif level is None and all(r[2] for r in rest):
                    level = (_fraction_text(1 - sum((_frac(m) for x, m in self.atoms if x >= a and m > 0),
                                                    _frac(0.0))), True)
                out.append((top, a, c, level))
            below_atoms_only = below_atoms_only and is_atom
            top = b if top is None else max(top, b)
        return out

    def density(self, x):
        """The density of the continuous part, interpolated linearly from the tabulated
        values (for figures).  Raises ``FreeprobValueError`` for NaN arguments."""
        x = np.asarray(x, dtype=float)
        if np.any(np.isnan(x)):
            raise FreeprobValueError("TabulatedLaw.density: x contains NaN")
        if self.density_x.size == 0:
            return np.zeros_like(x)
        out = np.interp(x, self.density_x, self.density_y, left=0.0, right=0.0)
        inside = np.zeros(x.shape, dtype=bool)
        for a, b in self.support:
            inside |= (x >= a) & (x <= b)
        return np.where(inside, out, 0.0)


# ---------------------------------------------------------------------- distances

def spectrum_moments(eigenvalues, order=4):
    r"""``[mean(λ^0), …, mean(λ^order)]`` of a spectrum (float64)."""
    return np.concatenate([[1.0], empirical_moments(_spectrum(eigenvalues), order)])


def relative_moment_errors(eigenvalues, reference, order=4):
    r"""``(m̂_k − m_k)/m_k`` for ``k = 1 … order``; ``reference`` is either exact moments
    ``m_0 … m_order`` (a sequence) or another spectrum (1-d array of eigenvalues of the
    same length as ``eigenvalues``)."""
    got = spectrum_moments(eigenvalues, order)
    ref = np.asarray(reference, dtype=float)
    if ref.shape == np.shape(eigenvalues) and ref.size != order + 1:
        ref = spectrum_moments(ref, order)
    if ref.size < order + 1:
        raise FreeprobValueError(f"relative_moment_errors: need reference moments up to order {order}")
    return (got[1:order + 1] - ref[1:order + 1]) / ref[1:order + 1]


def two_sample_distances(a, b):
    r"""Relative W1 (``W1(a, b)/mean(b)``) and KS distance between two spectra.

    In each sample the eigenvalues within ``1e-9·max|λ|`` of 0 are first set to exactly 0
    (:func:`snap_to_atoms`), so that the structural zeros of rank-deficient Grams, which a
    float64 eigensolver returns as a mix of ``0.0`` and ``±10⁻¹⁵``, meet as one atom in both.

    Parameters
    ----------
    a, b : 1-d arrays of eigenvalues (any lengths; all eigenvalues are used)

    Returns
    -------
    dict with ``relW1``, ``KS`` (fractions, not percent)

    Raises
    ------
    FreeprobValueError
        Empty or non-finite input, or ``mean(b) ≤ 0``.
    """
    a, b = (np.sort(snap_to_atoms(_spectrum(v))) for v in (a, b))
    mb = float(np.mean(b))
    if not mb > 0:
        raise FreeprobValueError("two_sample_distances: the reference spectrum b must have a positive mean")
    return dict(relW1=float(stats.wasserstein_distance(a, b)) / mb,
                KS=float(stats.ks_2samp(a, b, method="asymp").statistic))


def law_distances(eigenvalues, law: TabulatedLaw):
    r"""Relative W1 and KS distance between a spectrum and a tabulated law.

    ``relW1 = ∫|F_emp − F| dx / m1`` (``m1`` the law's exact mean), integrated exactly
    between the merged sample points and :meth:`TabulatedLaw.fine_nodes` (``F_emp``
    constant, ``F`` linear on each piece; the pieces are at most a quarter of a cdf cell).
    ``KS = sup_x |F_emp(x) − F(x)|`` over both one-sided limits at every sample point and
    atom.  Eigenvalues within ``1e-9·max|λ|`` of an atom of the law are first set exactly
    onto it (:func:`snap_to_atoms`; the structural zeros of a rank-deficient Gram come out
    of a float64 eigensolver as ``0.0`` and ``±10⁻¹⁵``, and only exact equality counts in
    ``F_emp`` at the atom).

    Returns
    -------
    dict with ``relW1``, ``KS`` (fractions)

    Raises
    ------
    FreeprobValueError
        Empty or non-finite eigenvalues; a law with non-positive mean.
    """
    lam = _spectrum(eigenvalues)
    if not isinstance(law, TabulatedLaw):
        raise FreeprobValueError(f"law_distances: expected a TabulatedLaw (TabulatedLaw.from_law(law)); got "
                                 f"{type(law).__name__}")
    lam = np.sort(snap_to_atoms(lam, law.atom_locations))
    if not law.mean > 0:
        raise FreeprobValueError("law_distances: the law must have a positive mean")
    n = lam.size
    # KS: both one-sided limits at every sample point and atom
    pts = np.union1d(lam, law.atoms[:, 0]) if law.atoms.size else np.unique(lam)
    emp_r = np.searchsorted(lam, pts, side="right") / n
    emp_l = np.searchsorted(lam, pts, side="left") / n
    ks = float(max(np.max(np.abs(emp_r - law.cdf(pts))), np.max(np.abs(emp_l - law.cdf(pts, left=True)))))
    # W1: F_emp is constant and F linear between consecutive merged points
    xs = np.union1d(pts, law.fine_nodes())
    f0 = law.cdf(xs)                                  # value just right of xs[j]
    f1 = law.cdf(xs[1:], left=True)                   # value just left of xs[j+1]
    c = np.searchsorted(lam, xs[:-1], side="right") / n
    d0, d1 = f0[:-1] - c, f1 - c
    h = np.diff(xs)
    same = d0 * d1 >= 0
    area = np.where(same, h * (np.abs(d0) + np.abs(d1)) / 2,
                    h * (d0 * d0 + d1 * d1) / (2 * np.where(same, 1.0, np.abs(d0) + np.abs(d1))))
    w1 = float(np.sum(area))
    return dict(relW1=w1 / law.mean, KS=ks)


def _frac(v):
    """The exact value of a float, or of a text ``"p/q"`` or decimal, as a Fraction."""
    return Fraction(v)


def _fraction_text(f):
    return f"{f.numerator}/{f.denominator}"


def _side(p, level):
    """Sign of ``p − level`` for the float ``p`` (its exact binary value) and a level
    ``(text, exact)``; ``None`` when an inexact level (30 digits) is within ``10^{-28}``."""
    text, exact = level
    d = _frac(float(p)) - _frac(text)
    if exact:
        return (d > 0) - (d < 0)
    if abs(d) <= _frac("1e-28"):
        return None
    return 1 if d > 0 else -1


def _flat_levels(law, dps):
    """:meth:`~freeprob.laws.law.Law.flat_levels` of ``law`` as ``(x0, x1, text, exact)``
    rows for :attr:`TabulatedLaw.flat_levels` (exact rationals as ``"p/q"``, other exact
    numbers and numeric levels as decimals to ``dps + 10`` and ``dps`` digits).  Called only
    for several support intervals: a stretch next to atoms alone has its level from the
    atom masses (:meth:`TabulatedLaw._stretches`)."""
    import mpmath
    import sympy as sp
    out = []
    for x0, x1, lev in law.flat_levels(dps=dps):
        if isinstance(lev, sp.Rational):
            text, exact = f"{lev.p}/{lev.q}", True
        elif isinstance(lev, sp.Basic):
            text, exact = str(sp.N(lev, dps + 10)), False
        else:
            text, exact = mpmath.nstr(lev, dps, min_fixed=-math.inf, max_fixed=math.inf), False
        out.append((float(x0), float(x1), text, exact))
    return out
