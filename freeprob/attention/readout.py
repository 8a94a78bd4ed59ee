r"""Readout predictions from spectral laws: gradient-flow loss, ridge error, degrees of freedom.

A frozen-feature readout ``w`` on features ``F`` (``n`` tokens × ``d_O`` features) is
governed by the spectrum of the Gram ``F Fᵀ`` (token side, ``n × n``) or ``Fᵀ F`` (feature
side, ``d_O × d_O``).  The functions here take the **token-side** law ``μ`` of ``F Fᵀ`` (e.g.
``mean_normalized(output_law(arch))`` of :mod:`freeprob.attention`, whose atom at 0 is
included) and return the limits of docs/theory.md §4 ([HK26]_ §4–5):

* gradient flow on ``L(w) = ½|Fw − y|²`` from ``w(0) = 0`` with ``dw/dt = −∇L`` (unit
  learning rate, continuous time ``t``), target ``y ⟂ 1`` generic:
  ``L(t)/L(0) = ∫ e^{−2tx} dμ(x)`` (:func:`gradient_flow_loss`), its plateau ``μ({0})``,
  and the time to reach ``L/L(0) = ε`` (:func:`time_to_loss`);
* ridge ``ŵ = (FᵀF + λI)^{−1}Fᵀy`` with an isotropic teacher ``y = Fw* + σε``,
  ``w* ~ N(0, I_{d_O})``, ``ε ~ N(0, I_n)``: ``E|ŵ − w*|²/d_O = ∫ (λ² + σ²x)/(x + λ)²
  dμ_feat(x)`` (:func:`ridge_error`) and ``df(λ) = ∫ x/(x + λ) dμ_feat`` (fraction of
  ``d_O``, :func:`effective_dof`), with the feature-side law
  ``μ_feat = γ_O⁻¹ μ + (1 − γ_O⁻¹) δ_0``, ``γ_O = d_O/n``.

Evaluation (exact layer, mpmath at ``dps`` digits): the ridge quantities from the Cauchy
transform at ``z = −λ`` and its derivative (implicit differentiation of the Cauchy
equation), both certified, with the working precision raised by ``log10(1/λ)`` digits for
the cancellation at small ``λ``; the gradient-flow integral from the atoms and the
certified density integrated against ``e^{−2tx}`` (edge-adapted quadrature cut on ``1/t``
scales), or as the contour integral ``(2πi)⁻¹ ∮ e^{−2tz} G(z) dz`` on an ellipse around the
support (``method="contour"``, an independent route).  All functions need a law supported
on ``[0, ∞)`` (a Gram law); ``γ_O < 1`` needs a zero mass ``μ({0}) ≥ 1 − γ_O`` (the token
Gram of ``d_O < n`` features has rank ``≤ d_O``).
"""
from __future__ import annotations

import math

import mpmath

from freeprob.errors import FreeprobValueError, PrecisionError
from freeprob.core.params import dps_or_default
from freeprob.numeric.rootkernel import _bracketed_root
from freeprob.laws.law import Law
from freeprob.core.symbols import G as _G
from freeprob.core.symbols import z as _z

__all__ = ["gradient_flow_loss", "time_to_loss", "ridge_error", "ridge_error_terms", "effective_dof"]


def _check_law(law, who):
    if not isinstance(law, Law):
        raise FreeprobValueError(f"{who}: expected a freeprob Law (the token-side law of F Fᵀ); got "
                                 f"{type(law).__name__}")
    law.check_numeric(who, "a readout prediction")


def _real(value, who, name, *, positive=False, nonnegative=False, dps=None):
    """``value`` as an mpf read at ``max(mp.dps, dps) + 30`` digits (exact inputs such as
    ``Rational(1, 3)`` were rounded to the global 15 digits before a ``dps=40`` computation);
    a float as the decimal it prints as (``0.3`` is ``3/10``), as the laws read it."""
    import fractions
    import sympy as sp
    with mpmath.workdps(max(mpmath.mp.dps, dps or 0) + 30):
        return _read_real(value, who, name, positive, nonnegative, sp, fractions)


def _read_real(value, who, name, positive, nonnegative, sp, fractions):
    try:
        if isinstance(value, bool):
            raise TypeError
        if isinstance(value, fractions.Fraction):
            v = mpmath.mpf(value.numerator) / value.denominator
        elif isinstance(value, float):
            # the decimal it prints as, as the laws read a float (freeprob.core.params)
            v = mpmath.mpf(repr(value))
        elif isinstance(value, sp.Basic):
            if not (value.is_number and value.is_real):
                raise TypeError
            v = mpmath.mpf(sp.N(value, mpmath.mp.dps))
        else:
            v = mpmath.mpf(value) if not isinstance(value, mpmath.mpf) else value
    except (TypeError, ValueError):
        raise FreeprobValueError(f"{who}: `{name}` must be a real number; got {value!r}") from None
    if not mpmath.isfinite(v):
        raise FreeprobValueError(f"{who}: `{name}` must be finite; got {value!r}")
    if positive and not v > 0:
        raise FreeprobValueError(f"{who}: `{name}` must be > 0; got {value!r}")
    if nonnegative and v < 0:
        raise FreeprobValueError(f"{who}: `{name}` must be ≥ 0; got {value!r}")
    return v


_dps = dps_or_default          # the one dps policy (freeprob.core.params)


def _mp(v, dps=30):
    """An mpf from a sympy number (exact edges/atoms of rational laws) or an mpf."""
    import sympy as sp
    return mpmath.mpf(sp.N(v, dps)) if isinstance(v, sp.Basic) else mpmath.mpf(v)


def _support_hull(law, who):
    """``[a, b]`` containing the support and every atom, as mpf."""
    pts = []
    for a, b in law.support(dps=20):
        pts += [_mp(a), _mp(b)]
    pts += [_mp(loc) for loc, _ in law.atoms(dps=20)]
    if not pts or not all(mpmath.isfinite(p) for p in pts):
        raise FreeprobValueError(f"{who}: the law must have a bounded support")
    return min(pts), max(pts)


def _check_gram_law(law, who):
    """The support hull, refusing a law with mass on ``(−∞, 0)`` (not a Gram law)."""
    a, b = _support_hull(law, who)
    if a < -mpmath.mpf(10) ** -12 * (1 + abs(b)):
        raise FreeprobValueError(f"{who}: the law must be supported on [0, ∞) (the spectral law of a Gram "
                                 f"matrix F Fᵀ); its support starts at {mpmath.nstr(a, 8)}")
    return a, b


def _zero_mass(law, dps):
    return sum((_mp(m, dps) for loc, m in law.atoms(dps=dps) if _mp(loc) == 0), mpmath.mpf(0))


def _check_gamma_o(law, go, who):
    """``γ_O < 1`` needs ``μ({0}) ≥ 1 − γ_O`` (else ``μ_feat`` has a negative weight at 0)."""
    if go < 1:
        m0 = _zero_mass(law, 20)
        if m0 < 1 - go - mpmath.mpf(10) ** -12:
            raise FreeprobValueError(
                f"{who}: gamma_o = {mpmath.nstr(go, 8)} < 1 needs a zero mass μ({{0}}) ≥ 1 − gamma_o = "
                f"{mpmath.nstr(1 - go, 8)} (the n × n Gram of d_O = gamma_o·n features has rank ≤ d_O); "
                f"this law has μ({{0}}) = {mpmath.nstr(m0, 8)}")


def _extra_digits(lam):
    """Digits lost to the cancellation of the ``1/λ`` terms at small ``λ``."""
    return max(0, int(math.ceil(-float(mpmath.log10(lam))))) + 2 if lam < 1 else 0


def _g_and_derivative(law, zv, dps):
    """``G(z)`` and ``G'(z) = −P_z/P_G`` at a real ``z`` off the support (certified ``G``;
    the partial derivatives of the exact Cauchy equation evaluated at ``dps + 10`` digits)."""
    import sympy as sp
    g = mpmath.re(law.cauchy(zv, dps=dps + 10))
    P = law.cauchy_equation()
    gi, zi = P.gens.index(_G), P.gens.index(_z)

    def value(poly):
        total = mpmath.mpf(0)
        for mon, c in poly.terms():
            total += mpmath.mpf(sp.N(c, dps + 15)) * g ** mon[gi] * zv ** mon[zi]
        return total
    with mpmath.workdps(dps + 10):
        pg, pz = value(P.diff(_G)), value(P.diff(_z))
        if pg == 0:
            raise PrecisionError("ridge/effective_dof: ∂P/∂G vanishes at z = −penalty")
        return g, -pz / pg


# ---------------------------------------------------------------------- ridge

def _feature_integrals(law, penalty, gamma_o, dps):
    r"""``(∫ 1/(x+λ) dμ_feat, ∫ 1/(x+λ)² dμ_feat)``."""
    lam = penalty
    with mpmath.workdps(dps + 10):
        g, dg = _g_and_derivative(law, -lam, dps)
        # ∫ 1/(x+λ) dμ = −G(−λ);  ∫ 1/(x+λ)² dμ = −G'(−λ)
        i1, i2 = -g, -dg
        w = 1 / gamma_o
        return w * i1 + (1 - w) / lam, w * i2 + (1 - w) / lam ** 2


def _checked_feature_integrals(law, penalty, gamma_o, dps, who):
    """Validate the shared ridge/dof inputs; return ``(λ, dps, working digits, (∫ 1/(x+λ) dμ_feat,
    ∫ 1/(x+λ)² dμ_feat))`` with ``log10(1/λ)`` extra digits for the small-``λ`` cancellation."""
    _check_law(law, who)
    dps = _dps(dps, who)
    lam = _real(penalty, who, "penalty", positive=True, dps=dps)
    go = _real(gamma_o, who, "gamma_o", positive=True, dps=dps)
    _check_gram_law(law, who)
    _check_gamma_o(law, go, who)
    work = dps + _extra_digits(lam)
    with mpmath.workdps(work + 10):
        return lam, dps, work, _feature_integrals(law, lam, go, work)


def ridge_error_terms(law, penalty, noise, *, gamma_o, dps=None):
    r"""Bias and noise parts of the ridge coefficient error, ``(∫ λ²/(x+λ)² dμ_feat,
    σ² ∫ x/(x+λ)² dμ_feat)``.

    Parameters
    ----------
    law : Law
        Token-side law of ``F Fᵀ`` (numeric coefficients, bounded support).
    penalty : real ``λ > 0``
        Ridge penalty in the normalisation of ``law`` (``ŵ = (FᵀF + λI)^{−1}Fᵀy``).
    noise : real ``σ ≥ 0``
        Label-noise standard deviation.
    gamma_o : real ``> 0``
        ``d_O/n`` (feature-side law ``γ_O⁻¹ μ + (1 − γ_O⁻¹) δ_0``).
    dps : int, optional

    Returns
    -------
    (mpf, mpf)

    Raises
    ------
    FreeprobValueError
        ``λ ≤ 0``, ``σ < 0``, ``γ_O ≤ 0``, ``γ_O < 1`` with ``μ({0}) < 1 − γ_O``,
        non-numeric input, a law with free symbols or with mass below 0.
    PrecisionError
        The Cauchy transform could not be certified.

    Source: docs/theory.md §4; the deterministic equivalent of ridge regression (e.g.
    [DW18]_) written with the Cauchy transform.
    """
    who = "ridge_error"
    sig = _real(noise, who, "noise", nonnegative=True, dps=_dps(dps, who))
    lam, dps, work, (i1, i2) = _checked_feature_integrals(law, penalty, gamma_o, dps, who)
    with mpmath.workdps(work + 10):
        bias = lam ** 2 * i2
        var = sig ** 2 * (i1 - lam * i2)          # x/(x+λ)² = 1/(x+λ) − λ/(x+λ)²
    with mpmath.workdps(dps):
        return +bias, +var


def ridge_error(law, penalty, noise, *, gamma_o, dps=None):
    r"""Ridge coefficient error ``E|ŵ − w*|²/d_O → ∫ (λ² + σ²x)/(x+λ)² dμ_feat(x)``.

    See :func:`ridge_error_terms` for the parameters, normalisation and errors; this is
    the sum of its two terms.

    Source: docs/theory.md §4.
    """
    b, v = ridge_error_terms(law, penalty, noise, gamma_o=gamma_o, dps=dps)
    with mpmath.workdps(_dps(dps, "ridge_error")):
        return +(b + v)


def effective_dof(law, penalty, *, gamma_o=1, dps=None):
    r"""Effective degrees of freedom per feature, ``df(λ)/d_O = ∫ x/(x+λ) dμ_feat(x)``
    (in ``[0, 1]``; multiply by ``d_O`` for the count).

    Parameters and errors as :func:`ridge_error_terms` (no ``noise``); ``gamma_o``
    defaults to 1 (``d_O = n``).  Source: docs/theory.md §4.
    """
    lam, dps, work, (i1, _) = _checked_feature_integrals(law, penalty, gamma_o, dps, "effective_dof")
    with mpmath.workdps(work + 10):
        val = 1 - lam * i1
    with mpmath.workdps(dps):
        return +val


# ---------------------------------------------------------------------- gradient flow

#: the contour route refuses a rule above this many nodes (each a Cauchy-transform value;
#: about 2 ms each at 15 digits): the node count grows like t·(width of the support)
MAX_CONTOUR_NODES = 40000
#: ... and above this many digits lost to the cancellation e^{2t·overshoot} (each node then
#: costs a Cauchy value at that many more digits)
MAX_CONTOUR_DIGITS = 300


class _ContourRule:
    r"""Trapezoid nodes ``(z_k, w_k)`` on one ellipse around ``hull`` such that
    ``∫ f dμ ≈ Re Σ_k f(z_k) w_k / N`` for ``f(x) = e^{−2tx}`` (and ``x e^{−2tx}``) with
    ``0 ≤ t ≤ tmax``.

    The ellipse is the Joukowski image ``z = c + r(w + 1/w)/2`` of ``|w| = ρ``, ``[c − r,
    c + r]`` the support hull: the trapezoid rule in ``θ = arg w`` converges like ``ρ^{−N}``
    while the contour overshoots the hull on the left only by ``r(ρ + 1/ρ − 2)/2`` (a circle
    of the same ``ρ`` by ``r(ρ − 1)``), which keeps the cancellation ``e^{2t·overshoot}``
    small for large ``t``.  ``ρ`` is chosen for ``tmax``; the node count is doubled until
    two successive rules agree to ``dps + 2`` digits at ``tmax`` and at ``tmax/2, …,
    tmax/64``.  The Cauchy transform is computed once per node, so any number of times
    ``t ≤ tmax`` costs one exponential per node (what :func:`time_to_loss` iterates on)."""

    def __init__(self, law, tmax, dps, hull):
        a, b = hull
        c = (a + b) / 2
        r = max((b - a) / 2, mpmath.mpf(10) ** -3 * (1 + abs(c)))
        best = None
        for rho in (1.2, 1.35, 1.5, 2.0, 3.0, 4.0, 6.0):
            left = c - r * (rho + 1 / rho) / 2                       # leftmost point of the ellipse
            # digits lost: the terms reach e^{−2t·left}, the result is of the order of
            # e^{−2t·a} or below (it was measured against 1, so a loss of 10⁻⁴⁶ looked like
            # 15 correct digits of a value 10⁻⁶⁴)
            canc = float(2 * tmax * (a - left)) / math.log(10)
            n = int((dps + 5 + canc) / math.log10(rho)) + 8
            if best is None or n < best[0]:
                best = (n, rho, canc)
        n, rho, canc = best
        if n > MAX_CONTOUR_NODES or canc > MAX_CONTOUR_DIGITS:
            # refuse up front (t = 10⁵: 25 000 Cauchy values at 2000 digits, an hour with no output)
            raise PrecisionError(
                f"gradient_flow_loss: t = {mpmath.nstr(tmax, 6)} is too large for the contour route "
                f"(about {n:.3g} Cauchy-transform values at {dps + canc + 15:.3g} digits; the limits are "
                f"{MAX_CONTOUR_NODES} values and {MAX_CONTOUR_DIGITS} digits lost to cancellation) and "
                "the density route did not reach the requested digits; use a smaller t")
        self.work, self.dps, self.tmax = dps + int(canc) + 15, dps, tmax
        checks = [tmax / 2 ** k for k in range(7)] if tmax > 0 else [mpmath.mpf(0)]

        def node(k, n):
            w = rho * mpmath.expj(2 * mpmath.pi * k / n)
            zk = c + r * (w + 1 / w) / 2
            # dz = r(1 − w⁻²)/2 dw, dw = i w dθ; the i cancels the 1/(2πi)
            return zk, law.cauchy(zk, dps=self.work) * r * (w - 1 / w) / 2

        def terms(p):
            # the terms of laplace(checks) at one node, computed once (an old node's are
            # reused when the rule is doubled: the same numbers, summed in the same order)
            zk, w = p
            return [mpmath.exp(-2 * t * zk) * w for t in checks]

        def sums(tms):
            return [mpmath.re(mpmath.fsum(tm[j] for tm in tms) / len(tms)) for j in range(len(checks))]

        with mpmath.workdps(self.work):
            self.pts = [node(k, n) for k in range(n)]
            tms = [terms(p) for p in self.pts]
            prev = sums(tms)
            for _ in range(5):
                n *= 2                            # the old nodes are the even nodes of the new rule
                odd = [node(2 * k + 1, n) for k in range(n // 2)]
                self.pts = [p for k in range(n // 2) for p in (self.pts[k], odd[k])]
                tms = [tm for k in range(n // 2) for tm in (tms[k], terms(odd[k]))]
                cur = sums(tms)
                # relative agreement: the values are tiny for large t (e^{−2t·a})
                if all(abs(x - y) <= mpmath.mpf(10) ** (-dps - 2) * abs(x)
                       for x, y in zip(cur, prev)):
                    return
                prev = cur
        raise PrecisionError(f"gradient_flow_loss: contour quadrature did not converge to {dps} digits "
                             f"(t up to {mpmath.nstr(tmax, 6)})")

    def laplace(self, ts, moment=0):
        """``[∫ x^moment e^{−2tx} dμ for t in ts]`` (``moment`` 0 or 1), ``t ≤ tmax``."""
        with mpmath.workdps(self.work):
            n = len(self.pts)
            return [mpmath.re(mpmath.fsum(mpmath.exp(-2 * t * zk) * zk ** moment * w
                                          for zk, w in self.pts) / n) for t in ts]


def _laplace_many(law, ts, dps, hull):
    r"""``[∫ e^{−2tx} dμ for t in ts]`` on one :class:`_ContourRule` for ``max(ts)``."""
    return _ContourRule(law, max(ts), dps, hull).laplace(ts)


def _laplace_density(law, ts, dps, who, grid_t=None):
    r"""``[∫ e^{−2tx} dμ(x) for t in ts]`` (``t ≥ 0``): the atoms exactly plus the certified
    density integrated against ``e^{−2tx}`` (:meth:`AlgebraicCauchy.expectation
    <freeprob.numeric.AlgebraicCauchy.expectation>`).

    For large ``t`` the weight lives within ``~1/t`` of the left end ``x_0`` of the support:
    each support interval is cut at ``x_0 + c/(2t)``, ``c = 1, 8, 64, …``, and the pieces
    where ``e^{−2t(x − x_0)} < 10^{−dps−4}`` are left out (their mass times that weight is
    added to the error).  The cost grows like ``log t`` (a contour integral needs
    ``~t·width`` nodes).

    Raises
    ------
    PrecisionError
        If the error estimate exceeds ``10^{−dps}`` relative to ``e^{−2t x_0}``.
    NotAvailable
        If the support is unbounded.

    Source: docs/theory.md §4 (gradient-flow loss as a Laplace transform of the law).
    """
    ev = law._evaluator(who)
    prec = ev.working_prec(dps)
    x0, x1 = ev.extent(dps=dps)
    out = []
    with mpmath.workprec(prec):
        width = max(x1 - x0, mpmath.mpf(10) ** -6)
        # cuts on one grid x0 + width·8^{−j} (shared edges and cached density values
        # across t, e.g. in a root finder), finest just below 1/(2t) for the largest t: every
        # t of one call is integrated over the same pieces, so the density at the nodes of a
        # piece is computed once for all of them
        tmax = max([mpmath.mpf(t) for t in ts] + ([mpmath.mpf(grid_t)] if grid_t is not None else []),
                   default=mpmath.mpf(0))
        grid = []
        j = 0
        while tmax > 0 and width * mpmath.mpf(8) ** (-j) > 1 / (16 * tmax) and j < 60:
            grid.append(x0 + width * mpmath.mpf(8) ** (-j))
            j += 1
        for t in ts:
            t = mpmath.mpf(t)
            ref = mpmath.exp(-2 * t * x0)
            far = None
            if t > 0:
                need = x0 + (dps + 4) * mpmath.log(10) / (2 * t)
                far = min((g for g in grid if g >= need), default=None)
            # the weight over its largest value on the support, e^{−2t(x − x_0)} ≤ 1: the sums
            # are of order 1, so mpmath.quad's absolute target (2^{−bits}) is a relative one (with
            # e^{−2tx}, 10^{−60} at t = 400 for FreePoisson(2), it stopped at its first degree,
            # 10^{−5} relative, and every such t fell back to the contour route)
            total, err = ev.expectation(lambda x, t=t: mpmath.exp(-2 * t * (x - x0)), dps=dps,
                                        tol=mpmath.mpf(10) ** (-dps - 3), cuts=grid, tail=far)
            total, err = total * ref, err * ref
            if err > 10 * mpmath.mpf(10) ** (-dps) * ref:
                raise PrecisionError(f"{who}: quadrature error {mpmath.nstr(err, 3)} exceeds 10^-{dps} "
                                     f"at t = {mpmath.nstr(t, 6)}")
            with mpmath.workdps(dps):
                out.append(+total)
    return out


def _laplace(law, ts, dps, method, who, grid_t=None):
    """``[∫ e^{−2tx} dμ for t in ts]`` (``ts`` positive mpf) by ``method``; ``grid_t``: the
    density route cuts the support as for this time too (a root finder's calls in one
    bracket then share their pieces and the density at their nodes)."""
    if method == "density":
        try:
            return _laplace_density(law, ts, dps, who, grid_t)
        except PrecisionError:
            pass                                  # the contour route is independent
    return _laplace_many(law, ts, dps, _support_hull(law, who))


_METHODS = ("density", "contour")


def gradient_flow_loss(law, t, *, dps=None, method="density"):
    r"""Relative training loss ``L(t)/L(0) = ∫ e^{−2tx} dμ(x)`` of gradient flow.

    Parameters
    ----------
    law : Law
        Token-side law of ``F Fᵀ`` (atoms included), numeric coefficients, bounded support.
    t : real ``≥ 0`` or a 1-d sequence (list, tuple, numpy array) of them
        Continuous time of ``dw/dt = −∇L``, ``L(w) = ½|Fw − y|²`` (unit learning rate, in
        the normalisation of ``law``: dividing ``F Fᵀ`` by ``c`` multiplies times by ``c``).
    dps : int, optional
    method : {"density", "contour"}
        ``"density"`` (default): the atoms exactly plus the certified density integrated
        against ``e^{−2tx}`` (edge-adapted tanh-sinh, cut at ``~1/t`` scales; cost grows like
        ``log t``).  ``"contour"``: ``(2πi)⁻¹ ∮ e^{−2tz} G(z) dz`` on an ellipse around the
        support (trapezoid; ``~t·width`` nodes, fine for small ``t``), an independent route.
        The density route falls back to the contour if its error estimate fails.

    Returns
    -------
    mpf, or list of mpf for a sequence ``t``.  ``L(0)/L(0) = 1``; ``L(∞)/L(0) = μ({0})``.

    Raises
    ------
    FreeprobValueError
        ``t < 0`` or not real, bad law (symbols, unbounded support, mass below 0), unknown
        method.
    PrecisionError
        The quadrature did not converge.

    Source: docs/theory.md §4; the contour representation ``∫ f dμ = (2πi)⁻¹ ∮ f G dz``
    and the density from Stieltjes inversion ([MS17]_ §3.1).
    """
    who = "gradient_flow_loss"
    _check_law(law, who)
    dps = _dps(dps, who)
    if method not in _METHODS:
        raise FreeprobValueError(f"{who}: `method` must be one of {_METHODS}; got {method!r}")
    if hasattr(t, "tolist") and not isinstance(t, mpmath.mpf):   # numpy scalar or array
        t = t.tolist()
    many = isinstance(t, list | tuple)
    if many and any(isinstance(v, list | tuple) for v in t):
        raise FreeprobValueError(f"{who}: `t` must be a number or a 1-d sequence of numbers")
    ts = [_real(v, who, "t", nonnegative=True, dps=dps) for v in (t if many else [t])]
    _check_gram_law(law, who)
    pos = [tv for tv in ts if tv > 0]
    vals = iter(_laplace(law, pos, dps, method, who) if pos else [])
    out = []
    for tv in ts:
        v = next(vals) if tv > 0 else mpmath.mpf(1)
        with mpmath.workdps(dps):
            out.append(+v)
    return out if many else out[0]


def time_to_loss(law, eps, *, dps=None):
    r"""The time ``t`` at which ``L(t)/L(0) = ε`` under gradient flow
    (:func:`gradient_flow_loss`, same time normalisation).

    Parameters
    ----------
    law : Law
    eps : real in ``(0, 1)``
    dps : int, optional

    Returns
    -------
    mpf

    Raises
    ------
    FreeprobValueError
        ``ε`` outside ``(0, 1)``; ``ε ≤ μ({0})``, the plateau the loss never goes below
        (the message gives it).
    PrecisionError
        Evaluation failed, or ``L(t)/L(0)`` is still above ``ε`` at ``t = 10⁶``.

    Method: quadrupling ``t`` until ``L(t) < ε``, then the Illinois (bracketing regula falsi)
    root finder of ``mpmath.findroot`` on ``log L(t) − log ε`` (relative digits of ``L``,
    whatever the size of ``ε``) with :func:`gradient_flow_loss`
    (density route) at ``dps + 5`` digits; ``L`` is strictly decreasing, so the root is
    unique.  A root below ``t = 1`` (``ε`` near 1) is bracketed from below by Jensen's
    ``t₀ = −log ε/(2 m₁)`` and found in ``log t`` for ``(log L − log ε)/|log ε|``, with
    ``L`` at ``log10(1/|log ε|)`` more digits, so that it has relative digits however small.

    Source: docs/theory.md §4.
    """
    who = "time_to_loss"
    _check_law(law, who)
    dps = _dps(dps, who)
    e = _real(eps, who, "eps", dps=dps)
    if not 0 < e < 1:
        raise FreeprobValueError(f"{who}: `eps` must lie in (0, 1); got {eps!r}")
    _check_gram_law(law, who)
    plateau = _zero_mass(law, dps + 5)
    if e <= plateau:
        raise FreeprobValueError(f"{who}: the loss never goes below the plateau μ({{0}}) = "
                                 f"{mpmath.nstr(plateau, 6)}; got eps={eps!r}")
    work = dps + 5

    def f(tt, digits=work):
        """``log L(tt) − log ε``: the root finder's value test (``|f| < tol``) is then
        relative to ε, not absolute (at ``ε = 10^{-20}`` any ``t`` with ``L(t) < 10^{-17}``
        passed it: ``t`` came out 256 for ``MarchenkoPastur(1/2)``, ``L(t) = 4·10^{-23}``)."""
        v = _laplace(law, [tt], digits, "density", who, grid_t[0])[0]
        if not v > 0:
            raise PrecisionError(f"{who}: L(t) = {mpmath.nstr(v, 5)} at t = {mpmath.nstr(tt, 8)} "
                                 "is not positive")
        return mpmath.log(v) - mpmath.log(e)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    grid_t = [None]
    with mpmath.workdps(work):
        flo, fhi = -mpmath.log(e), f(hi)         # L(0) = 1
        while fhi > 0:
            lo, flo, hi = hi, fhi, 4 * hi
            if hi > 10 ** 6:
                raise PrecisionError(f"{who}: L(t)/L(0) is still above {eps} at t = 1e6")
            fhi = f(hi)
        grid_t[0] = hi                           # every step below: the cuts of the bracket's end
        if lo == 0:
            # the root is in (0, 1]; for ε near 1 it is near −log ε/(2 m₁), where tolerances
            # absolute in t and in log L lost digits (ε = 1 − 10⁻¹⁵: t ≈ 10⁻¹⁵, 3·10⁻⁷ relative
            # error).  Jensen, L(t) ≥ e^{−2 m₁ t}, makes t₀ = −log ε/(2 m₁) a lower bracket; the
            # root is found in s = log t for f/|log ε|, so both tests are relative
            scale = -mpmath.log(e)
            # L ≈ 1 to relative digits: log L to 10^{-dps} of |log ε| needs that many more
            fine = work + max(0, int(-mpmath.log10(scale)) + 1)
            t0 = scale / (2 * law.moments(1, dps=work)[1])
            fhi = f(hi, fine)
            f0 = f(t0, fine)
            if f0 <= 0:                          # (a law whose L is e^{−2 m₁ t}: t₀ itself)
                t = t0
            else:
                s = _bracketed_root(lambda s_: f(mpmath.exp(s_), fine) / scale, mpmath.log(t0), mpmath.mpf(0),
                                    mpmath.mpf(10) ** (-dps - 2), known=((mpmath.log(t0), f0 / scale),
                                                                         (mpmath.mpf(0), fhi / scale)))
                t = None if s is None else mpmath.exp(s)
        else:
            t = _bracketed_root(f, lo, hi, mpmath.mpf(10) ** (-dps - 2) * min(1, hi),
                                known=((lo, flo), (hi, fhi)))
        if t is None:
            raise PrecisionError(f"{who}: the root finder did not converge")
    with mpmath.workdps(dps):
        return +t
