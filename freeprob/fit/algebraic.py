r"""An algebraic law fitted to a sample spectrum: ``fit_algebraic(eigenvalues, degrees)``.

The eigenvalues are standardized, ``t = (λ − c)/s`` (``c``, ``s`` the sample mean and
standard deviation rounded to 7 digits).  In ``t`` the unknown polynomial
``P(G, z) = Σ_{a ≤ d_G, b ≤ d_z} c_{ab} G^a z^b`` is normalized and constrained exactly
(rationals) so that its branch at infinity is ``G = 1/z + 0/z² + 1/z³ + O(z^{−4})``:

* ``c_{1,d_z} = −1`` and ``c_{0,d_z} = 0`` (a simple branch ``G ~ 1/z``,
  :class:`~freeprob.fit.equation.EquationLaw`);
* the coefficients of ``ζ^1, ζ^2, ζ^3`` in ``ζ^{d_z} P(G(1/ζ), 1/ζ)`` vanish with
  ``m_0 = 1``, ``m_1 = 0``, ``m_2 = 1`` (mass 1, the sample's mean and variance).

The remaining coefficients minimize, by linear least squares, the residual
``|P(G_n(z_j), z_j)|`` (each row scaled to unit norm) at points ``z_j`` off the real axis,
where ``G_n(z) = (1/n) Σ 1/(z − t_i)`` is the sample's Stieltjes transform: three lines
``Im z = 0.3, 0.6, 1.2`` over the sample's range and a circle of radius ``2 max|t|``
([RE08]_, the polynomial method; the same idea as freealg's algebraic fit).  The fitted
coefficients are rounded to rationals (8 digits), so the result is an exact
:class:`~freeprob.fit.equation.EquationLaw`, mapped back to the eigenvalues' scale, whose
equation is then checked to define a probability law (:func:`~freeprob.fit.equation.check_law`:
support, atoms, density ``≥ 0``, mass 1, ``Im G < 0`` above the axis).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp

from freeprob._checks import check_int
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z
from freeprob.errors import FreeprobValueError
from freeprob.fit.equation import EquationLaw, NotALaw, check_law
from freeprob.fit.sample import spectrum

__all__ = ["AlgebraicFit", "fit_algebraic", "MAX_DEGREE"]

#: the largest degree in G and in z accepted by :func:`fit_algebraic`
MAX_DEGREE = 6
#: the heights of the lines of fitting points, in units of the sample's standard deviation
HEIGHTS = (0.3, 0.6, 1.2)
#: points per line, and on the circle
POINTS = 60


def _rational(x, digits=8) -> sp.Rational:
    """``x`` (float) rounded to ``digits`` significant digits, as an exact Rational."""
    return sp.Rational(Fraction(f"{x:.{digits}g}"))


def _monomials(dG, dz):
    return [(a, b) for a in range(dG + 1) for b in range(dz + 1)]


def _constraints(dG, dz):
    """Exact rows ``B c = e`` (sympy) of the normalization and the first three moments."""
    mons = _monomials(dG, dz)
    m = [sp.Integer(1), sp.Integer(0), sp.Integer(1)]          # standardized m_0, m_1, m_2
    # series of G^a in ζ up to ζ^3: G = ζ(1 + m1 ζ + m2 ζ²)
    Gs = [sp.Integer(0)] + m                                  # coefficients of ζ^0..ζ^3
    powers = [[sp.Integer(1), 0, 0, 0]]
    for _ in range(dG):
        p = powers[-1]
        powers.append([sum(p[i] * Gs[j - i] for i in range(j + 1)) for j in range(4)])
    rows, rhs = [], []
    for j in range(4):                                        # coefficient of ζ^j
        row = []
        for a, b in mons:
            s = j - (dz - b)
            row.append(powers[a][s] if 0 <= s < 4 else sp.Integer(0))
        rows.append(row)
        rhs.append(sp.Integer(0))
    lead = [sp.Integer(1) if (a, b) == (1, dz) else sp.Integer(0) for a, b in mons]
    rows.append(lead)
    rhs.append(sp.Integer(-1))
    return sp.Matrix(rows), sp.Matrix(rhs)


def _points(t):
    lo, hi = float(t[0]), float(t[-1])
    xs = np.linspace(lo - 0.5, hi + 0.5, POINTS)
    pts = [xs + 1j * h for h in HEIGHTS]
    radius = 2 * max(abs(lo), abs(hi), 1.0)
    angles = np.linspace(0, np.pi, POINTS + 2)[1:-1]
    pts.append(radius * np.exp(1j * angles))
    z = np.concatenate(pts)
    return np.concatenate([z, z.conj()])


def _stieltjes(t, z):
    """``G_n(z) = mean(1/(z − t))`` at each point of ``z`` (chunked)."""
    out = np.empty(z.shape, dtype=complex)
    for i in range(0, z.size, 64):
        out[i:i + 64] = np.mean(1.0 / (z[i:i + 64, None] - t[None, :]), axis=1)
    return out


def _transform(law_t, c, s):
    """The equation of ``c + s·T`` from that of ``T``: ``P(s G, (z − c)/s)·s^{d_z}``."""
    P = law_t.poly()
    dz = P.degree(_z)
    expr = sp.expand(P.as_expr().xreplace({_G: s * _G, _z: (_z - c) / s}) * s ** dz)
    return EquationLaw.from_poly(sp.Poly(expr, _G, _z))


@dataclass(frozen=True)
class AlgebraicFit:
    """The result of :func:`fit_algebraic`.

    Attributes
    ----------
    law : EquationLaw, the fitted law on the eigenvalues' scale
    degrees : (d_G, d_z)
    residual : float, the root mean square of ``P(G_n(z_j), z_j)`` over the fitting points
        (rows of unit norm; 0 for an exact fit)
    check : dict, what :func:`~freeprob.fit.equation.check_law` found (support, atoms, mass)
    n : int, the number of eigenvalues
    center, scale : the standardization ``t = (λ − center)/scale`` (exact Rationals)
    """

    law: EquationLaw
    degrees: tuple
    residual: float
    check: dict
    n: int
    center: object
    scale: object

    def equation(self) -> sp.Poly:
        """The fitted Cauchy equation ``P(G, z)`` (sympy Poly, irreducible, integer
        coefficients: :meth:`~freeprob.laws.law.Law.cauchy_equation`).  Raises nothing."""
        return self.law.cauchy_equation()

    def rounded_equation(self, digits=6) -> str:
        """``P(G, z)`` with its coefficients scaled to a largest of 1 and rounded to
        ``digits`` significant digits, for display (the law keeps the exact one).
        Raises nothing."""
        P = self.law.poly()
        top = max(abs(c) for c in P.coeffs())
        return str(sp.Poly({m: sp.Float(c / top, digits) for m, c in P.terms()}, _G, _z).as_expr())

    def __str__(self):
        sup = ", ".join(f"[{a:.6g}, {b:.6g}]" for a, b in self.check["support"]) or "none"
        atoms = ", ".join(f"{w:.4g} at {x:.6g}" for x, w in self.check["atoms"]) or "none"
        return (f"algebraic law of degrees (G, z) = {self.degrees} fitted to {self.n} eigenvalues\n"
                f"  P(G, z) ≈ {self.rounded_equation()}\n"
                f"  support {sup}; atoms {atoms}; mass {self.check['mass']:.6f}; "
                f"residual {self.residual:.3g}")


def fit_algebraic(eigenvalues, degrees=(2, 1)) -> AlgebraicFit:
    r"""Fit an algebraic law to a sample spectrum: a :class:`EquationLaw` whose Cauchy
    equation ``P(G, z) = 0`` fits the sample's Stieltjes transform off the real axis.

    The method is in this module's docstring: exact constraints for the branch ``G ~ 1/z``
    and the sample's mean and variance, least squares on ``P(G_n(z_j), z_j)`` for the rest,
    rational rounding, and a check that the equation defines a probability law.

    Parameters
    ----------
    eigenvalues : real array, shape ``(n,)``, ``n ≥ 10``, any scale
    degrees : (d_G, d_z), integers with ``1 ≤ d_G ≤ 6``, ``1 ≤ d_z ≤ 6`` and ``d_G + d_z ≥ 3``
        (``(2, 1)`` holds the semicircle and the free Poisson laws, shifted and dilated;
        higher degrees hold more shapes and need more eigenvalues).

    Returns
    -------
    AlgebraicFit
        ``.law`` (a :class:`~freeprob.laws.law.Law`: density, support, moments, free
        convolutions all work), ``.equation()``, ``.residual``, ``.check``.

    Raises
    ------
    FreeprobValueError
        Bad eigenvalues (empty, NaN/inf, not 1-d, fewer than 10, all equal); bad degrees;
        more unknowns than the sample supports (``(d_G + 1)(d_z + 1) > n/4``); and, with
        a message that says which check failed, a fitted equation that defines no
        probability law (try other degrees).

    Source: [RE08]_ (algebraic Cauchy equations of random-matrix laws); [MS17]_ §2.1.
    """
    who = "fit_algebraic"
    x = spectrum(eigenvalues, who)
    try:
        dG, dz = degrees
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: degrees must be a pair (d_G, d_z) of integers; got {degrees!r}") from None
    dG = check_int(dG, who, "d_G (degree in G)", minimum=1, maximum=MAX_DEGREE,
                   limit="freeprob.fit.algebraic.MAX_DEGREE")
    dz = check_int(dz, who, "d_z (degree in z)", minimum=1, maximum=MAX_DEGREE,
                   limit="freeprob.fit.algebraic.MAX_DEGREE")
    if dG + dz < 3:
        raise FreeprobValueError(f"{who}: degrees (1, 1) hold only a point mass; use d_G + d_z ≥ 3, "
                                 "e.g. (2, 1) for the semicircle and free Poisson shapes")
    K = (dG + 1) * (dz + 1)
    if 4 * K > x.size:
        raise FreeprobValueError(f"{who}: degrees {(dG, dz)} have {K} coefficients; that needs at "
                                 f"least {4 * K} eigenvalues, got {x.size}")
    c, s = _rational(x.mean(), 7), _rational(x.std(), 7)
    t = (x - float(c)) / float(s)
    B, e = _constraints(dG, dz)
    try:
        part, params = B.gauss_jordan_solve(e)
    except ValueError:  # pragma: no cover - the constraints are consistent for dG + dz ≥ 3
        raise FreeprobValueError(f"{who}: degrees {(dG, dz)} cannot hold mass 1, mean and variance") from None
    free = list(params)
    base = part.xreplace({p: 0 for p in free})
    N = [part.xreplace({p: int(p == q) for p in free}) - base for q in free]
    z = _points(t)
    Gn = _stieltjes(t, z)
    A = np.stack([Gn ** a * z ** b for a, b in _monomials(dG, dz)], axis=1)
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    c0 = np.array([float(v) for v in base])
    if free:
        Nm = np.array([[float(v) for v in col] for col in N]).T            # K × f
        M = A @ Nm
        rhs = -(A @ c0)
        Mr = np.concatenate([M.real, M.imag])
        rr = np.concatenate([rhs.real, rhs.imag])
        y, *_ = np.linalg.lstsq(Mr, rr, rcond=None)
        ys = [_rational(v) for v in y]
        coeffs = base + sum((ys[i] * N[i] for i in range(len(free))), sp.zeros(K, 1))
    else:
        coeffs = base
    cf = np.array([float(v) for v in coeffs])
    residual = float(np.sqrt(np.mean(np.abs(A @ cf) ** 2)))
    table = [[sp.Integer(0)] * (dz + 1) for _ in range(dG + 1)]
    for (a, b), v in zip(_monomials(dG, dz), coeffs):
        table[a][b] = sp.Rational(v)
    law = _transform(EquationLaw(tuple(tuple(r) for r in table)), c, s)
    try:
        info = check_law(law)
    except NotALaw as exc:
        raise FreeprobValueError(
            f"{who}: the equation fitted with degrees (d_G, d_z) = {(dG, dz)} gives no valid law: "
            f"{exc}. Try other degrees (e.g. (2, 1) for one interval; higher d_z for several "
            "intervals or atoms) or more eigenvalues") from exc
    return AlgebraicFit(law, (dG, dz), residual, info, int(x.size), c, s)
