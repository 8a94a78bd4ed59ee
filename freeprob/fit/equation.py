r"""A law given by its algebraic Cauchy equation ``P(G, z) = 0`` (the result of a fit).

:class:`EquationLaw` holds a polynomial ``P`` with rational coefficients, normalized so
that ``G(z) ~ 1/z`` is a simple branch at infinity: in ``P = Σ c_{ab} G^a z^b`` with
``deg_z P = d``, ``c_{0,d} = 0`` and ``c_{1,d} ≠ 0``.  Then ``ζ^d P(G, 1/ζ) = 0`` has one
power-series solution ``G = ζ + m_1 ζ² + m_2 ζ³ + …`` in ``ζ = 1/z`` (the coefficient of
``ζ^{n+1}`` is linear in ``m_n`` with the factor ``c_{1,d}``), provided ``c_{0,d−1} =
−c_{1,d}`` (``m_0 = 1``): its coefficients are the moments (:meth:`_moment_formula`, exact
over the rationals).  Everything else — density, support, atoms, cdf, free convolutions —
is the :class:`~freeprob.laws.law.Law` machinery on that equation ([RE08]_; [MS17]_ §2.1).

Whether ``P`` is the equation of a probability law (a branch with ``Im G < 0`` on the upper
half-plane, density ``≥ 0``, mass 1) is not implied by the normalization:
:func:`check_law` checks it numerically and :func:`freeprob.fit.fit_algebraic` refuses
an equation that fails.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy as sp

from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z
from freeprob.errors import FreeprobValueError, NotAvailable, PrecisionError
from freeprob.laws.algebraic import raw_cauchy_equation
from freeprob.laws.law import Law

__all__ = ["EquationLaw", "check_law", "NotALaw"]


class NotALaw(FreeprobValueError):
    """The equation has no branch that is the Cauchy transform of a probability law."""


def _coefficient_rows(poly):
    """``rows[a][b] = c_{ab}`` (sympy Rationals) of a Poly in ``(G, z)``."""
    dG, dz = poly.degree(_G), poly.degree(_z)
    rows = [[sp.Integer(0)] * (dz + 1) for _ in range(dG + 1)]
    for (a, b), c in poly.terms():
        rows[a][b] = sp.Rational(c)
    return rows


@dataclass(frozen=True)
class EquationLaw(Law):
    r"""The law whose Cauchy transform ``G`` solves ``P(G, z) = 0`` on the branch
    ``G ~ 1/z`` at infinity.

    Parameters
    ----------
    coefficients : tuple of tuples of rationals, ``coefficients[a][b] = c_{ab}``, the
        coefficient of ``G^a z^b``; shape ``(deg_G + 1, deg_z + 1)``.  Build one from a
        sympy Poly with :meth:`from_poly`.

    Raises
    ------
    FreeprobValueError
        A coefficient that is not a rational number; ``deg_G < 1``; no simple branch
        ``G ~ 1/z`` at infinity (``c_{0,d} ≠ 0``, ``c_{1,d} = 0`` or ``c_{0,d−1} ≠
        −c_{1,d}`` with ``d = deg_z``).

    Notes
    -----
    The moments are the coefficients of the series branch at infinity, so the law is
    determined by ``P``.  That it is a probability law is checked by :func:`check_law`
    (numerically: density, mass and the sign of ``Im G``).  Source: [RE08]_ (the polynomial
    method); [MS17]_ §2.1 (``G`` at infinity).
    """

    coefficients: tuple

    def __post_init__(self):
        try:
            rows = tuple(tuple(sp.Rational(Fraction(c)) if not isinstance(c, sp.Rational) else c
                               for c in row) for row in self.coefficients)
        except (TypeError, ValueError) as exc:
            raise FreeprobValueError(
                f"EquationLaw: coefficients must be rational numbers ({exc})") from exc
        if len(rows) < 2 or len({len(r) for r in rows}) != 1 or not rows[0]:
            raise FreeprobValueError(
                "EquationLaw: coefficients must be a rectangular table with at least 2 rows "
                "(degree ≥ 1 in G)")
        # trim trailing zero rows and columns
        while len(rows) > 2 and not any(rows[-1]):
            rows = rows[:-1]
        while len(rows[0]) > 1 and not any(r[-1] for r in rows):
            rows = tuple(r[:-1] for r in rows)
        object.__setattr__(self, "coefficients", rows)
        d = len(rows[0]) - 1
        c1d = rows[1][d]
        if rows[0][d] != 0 or c1d == 0 or d < 1 or rows[0][d - 1] != -c1d:
            raise FreeprobValueError(
                "EquationLaw: P(G, z) has no simple branch G ~ 1/z at infinity: need, with "
                f"d = deg_z P = {d}, the coefficient of z^d equal to 0 (got {rows[0][d]}), of "
                f"G z^d non-zero (got {c1d}) and of z^(d−1) equal to minus it "
                f"(got {rows[0][d - 1] if d >= 1 else 'none'})")

    @classmethod
    def from_poly(cls, poly) -> "EquationLaw":
        """The law of a sympy Poly (or expression) in ``(G, z)`` of
        :mod:`freeprob.core.symbols` with rational coefficients.

        Raises
        ------
        FreeprobValueError
            Other generators or non-rational coefficients; no simple branch at infinity.
        """
        try:
            poly = sp.Poly(poly, _G, _z)
        except sp.PolynomialError as exc:
            raise FreeprobValueError(f"EquationLaw.from_poly: not a polynomial in (G, z): {exc}") from exc
        if not (poly.domain.is_ZZ or poly.domain.is_QQ):
            raise FreeprobValueError(
                f"EquationLaw.from_poly: coefficients must be rational; got domain {poly.domain}")
        return cls(tuple(tuple(r) for r in _coefficient_rows(poly)))

    def poly(self) -> sp.Poly:
        """``P`` as a sympy Poly in ``(G, z)``.  Raises nothing."""
        return sp.Poly(sp.Add(*[c * _G ** a * _z ** b for a, row in enumerate(self.coefficients)
                                for b, c in enumerate(row)]), _G, _z)

    def _parameters(self):
        return tuple(c for row in self.coefficients for c in row)

    def _moment_formula(self, ring, k):
        # ζ^d P(G, 1/ζ) = Σ c_ab G^a ζ^(d−b); G = Σ_{n≥0} m_n ζ^(n+1).  The coefficient of
        # ζ^(n+1) is c_{1,d} m_n + (terms in m_0..m_{n−1}): solve for m_n in turn.
        rows = [[ring.convert(c) for c in row] for row in self.coefficients]
        d = len(rows[0]) - 1
        dG = len(rows) - 1
        N = k + 2                                    # series in ζ modulo ζ^N
        g = [ring.zero] * N                          # G, coefficients of ζ^0..ζ^(N−1)
        lead = rows[1][d]
        m = []
        for n in range(k + 1):
            # residual coefficient of ζ^(n+1) with m_n = 0
            powers = [[ring.one] + [ring.zero] * (N - 1)]
            for _a in range(dG):
                p = powers[-1]
                powers.append([sum((p[i] * g[j - i] for i in range(j + 1)), ring.zero)
                               for j in range(N)])
            r = ring.zero
            j = n + 1
            for a in range(dG + 1):
                for b in range(d + 1):
                    c = rows[a][b]
                    s = j - (d - b)
                    if c != ring.zero and 0 <= s < N:
                        r = r + c * powers[a][s]
            m.append(-r / lead)
            g[n + 1] = m[-1]
        return m

    def _zero_mass(self):
        return None


@raw_cauchy_equation.register
def _(law: EquationLaw):
    return law.poly()


def check_law(law, *, grid=400, tol=1e-6):
    r"""Check numerically that ``law``'s Cauchy equation defines a probability law.

    Checks (at ``dps = 15``): the support and atoms are found; atom masses lie in
    ``(0, 1]``; the density on ``grid`` points of each support interval is ``≥ −tol``
    (relative to its maximum); the total mass (integrated density plus atoms, by Gauss–
    Legendre quadrature in ``θ`` with ``x = (a+b)/2 − (b−a)/2·cos θ``, or where that misses an
    inverse-square-root edge the law's certified cdf above its support) is ``1 ± 1e-4``;
    and ``Im G(x + iy) < 0`` at ``y`` = 1/10 and 1 of the support's width above the grid
    (the branch continued from infinity is a Nevanlinna function there).

    Returns
    -------
    dict
        ``support`` (list of ``(a, b)`` floats), ``atoms`` (list of ``(x, mass)``),
        ``mass`` (float), ``min_density`` (float).

    Raises
    ------
    NotALaw
        A check fails; the message says which and where.

    Source: a Cauchy transform is a Nevanlinna function with ``G ~ 1/z`` whose boundary
    values give a non-negative density ([MS17]_ §2.1, Stieltjes inversion).
    """
    import numpy as np
    try:
        support = [(float(a), float(b)) for a, b in law.support(dps=15)]
        atoms = [(float(x), float(w)) for x, w in law.atoms(dps=15)]
    except (NotAvailable, PrecisionError, mpmath.libmp.libhyper.NoConvergence, ZeroDivisionError,
            sp.polys.polyerrors.CoercionFailed) as exc:      # CoercionFailed: special points sympy cannot place
        raise NotALaw(f"the equation's support or atoms could not be found ({type(exc).__name__}: {exc})") from exc
    for x, w in atoms:
        if not 0 < w <= 1 + 1e-9:
            raise NotALaw(f"an atom at {x:.6g} has mass {w:.6g}, outside (0, 1]")
    if not support and not atoms:
        raise NotALaw("the equation's branch at infinity has neither a density nor atoms on the real axis")
    mass = sum(w for _, w in atoms)
    lowest = 0.0
    nodes, weights = np.polynomial.legendre.leggauss(grid)
    theta = (nodes + 1) * np.pi / 2
    for a, b in support:
        xs = (a + b) / 2 - (b - a) / 2 * np.cos(theta)
        try:
            dens = np.array([float(v) for v in law.density(sorted(float(v) for v in xs), dps=15)])
        except (PrecisionError, ZeroDivisionError, ValueError) as exc:
            raise NotALaw(f"the density on [{a:.6g}, {b:.6g}] could not be evaluated ({exc})") from exc
        top = float(np.max(np.abs(dens))) or 1.0
        worst = int(np.argmin(dens))
        if dens[worst] < -tol * top:
            raise NotALaw(f"the density is negative ({dens[worst]:.3g}) at x = {xs[worst]:.6g}")
        lowest = min(lowest, float(dens[worst]))
        mass += float(np.sum(weights * dens * (b - a) / 2 * np.sin(theta)) * np.pi / 2)
        width = b - a
        for y in (width / 10, width):
            for x in xs[::max(1, grid // 20)]:
                g = law.cauchy(complex(x, y), dps=15)
                if float(mpmath.im(g)) >= 0:
                    raise NotALaw(f"the branch continued from infinity has Im G ≥ 0 at z = "
                                  f"{x:.6g} + {y:.3g}i: it is not a Cauchy transform")
    if abs(mass - 1) > 1e-4 and support:
        # Gauss–Legendre misses an inverse-square-root edge: the law's own certified cdf
        # above the support decides (the mass is 1 for a Cauchy transform with G ~ 1/z)
        top = max(b for _, b in support + [(x, x) for x, _ in atoms])
        try:
            mass = float(law.cdf(top + 1e-9 * (1 + abs(top)), dps=15))
        except (NotAvailable, PrecisionError, ZeroDivisionError, ValueError):
            pass
    if abs(mass - 1) > 1e-4:
        raise NotALaw(f"the total mass (density plus atoms) is {mass:.6g}, not 1")
    return dict(support=support, atoms=atoms, mass=mass, min_density=lowest)
