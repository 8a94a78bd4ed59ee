r"""The bulk scale of softmax attention at finite ``n`` and ``d_K`` under the empirical
row normaliser (issue 29; theory.md §7 "The finite-d_K bulk scale").

The limit laws take the coordinate variance of ``n A⊥`` (``A`` = the row-softmax of
``S = β Q Kᵀ/√d_K``, ``n A⊥_ab = n A_ab − 1``) to be ``θ1 = e^{β²} − 1``.  At finite
``d_K`` the query norm ``r = |q|²/d_K ~ χ²_{d_K}/d_K`` scales the scores of a row and the
variance with the *expected* normaliser is ``θ1^{fw} = (1 − 2β²/d_K)^{−d_K/2} − 1``
(:func:`freeprob.attention.finite_width.finite_width_theta1`).  Softmax divides by the
*empirical* row mean of ``e^S`` over the ``n`` keys, which cuts the heavy tail that makes
``θ1^{fw}`` large.  This module computes the exact value.

**Exact row variance.**  Given the query, the scores ``β√r g_b`` (``g_b = q·k_b/|q|``) are
i.i.d. ``N(0, β²r)`` over the keys, so with ``X_b = e^{σ g_b}``, ``σ = β√r``,

.. math:: V = E(nA_{ab} − 1)^2 = E_r\,f(β\sqrt r, n) − 1,\qquad
          f(σ, n) = E\Bigl[\frac{n \sum_b X_b^2}{(\sum_b X_b)^2}\Bigr]
                 = n^2\!\int_0^∞\! t\,E[X^2 e^{−tX}]\,L(t)^{n−1}\,dt,

``L(t) = E e^{−tX}`` (from ``1/S² = ∫_0^∞ t e^{−tS} dt`` and the independence of the
``X_b``).  ``f ≤ n``, so ``V`` is finite for every ``d_K`` and ``β`` (unlike ``θ1^{fw}``,
which needs ``d_K > 2β²``): the empirical normaliser truncates the tail at the scale of
the largest of ``n`` scores.  :func:`empirical_row_variance` evaluates the three integrals
by quadrature (trapezoid rules in ``g`` and ``log t``, generalised Gauss–Laguerre in
``r``; 10⁻¹⁰ relative, checked against the closed form at ``n = 2``).

**1/n expansion.**  With ``Y = X/E X``, ``a = E Y² = e^{σ²}``, ``T = mean Y²``,
``U = mean Y``: ``f = E[T/U²] = a + (3a² − a − 2e^{3σ²})/n + O(n^{−2})``, and averaged over
``r`` (``E_r e^{kβ²r} = E_k := (1 − 2kβ²/d_K)^{−d_K/2}``):
``V = θ1^{fw} + (3E_2 − E_1 − 2E_3)/n + O(n^{−2})`` (:func:`normaliser_expansion`),
which needs ``d_K > 6β²`` (the normaliser's own variance needs ``E_2``: ``d_K > 4β²``, the
paper's §B.7.1 condition).  Each further order needs a higher moment of ``e^{β²r}``, so at
fixed ``d_K`` the expansion stops; at ``n = 512``, ``d_K = 8``, ``β = 1`` its first term
already overshoots (``V`` = 1.986 exact, 2.16 + (−0.91) = 1.25 expanded); the law uses
the quadrature.

**What sets the bulk.**  Given the keys, the rows of ``n A⊥`` have a common mean ``μ``
(the key-norm term, theory.md §7 F2) that leaves the bulk as a rank-one outlier.  The
bulk's scale is the trace of the row covariance, ``tr Σ/n = V − M`` with
``M = E‖μ‖²/n = (1 − β⁴/d_K²)^{−d_K/2} − 1`` (:func:`key_norm_variance`, the same as
:func:`freeprob.attention.spikes.key_norm_spike` ``/n``).  :func:`empirical_theta1`
``= V − M`` is the mean of the finite-width row covariance law by default.

References: theory.md §7; the paper's §B.7.1 (finite-size normaliser identity, exact mean
and variance of the normaliser for ``d_K > 4β²``) ([HK26]_).
"""
from __future__ import annotations

import math
import numpy as np
import sympy as sp

from freeprob.errors import FreeprobValueError

__all__ = ["empirical_row_variance", "key_norm_variance", "empirical_theta1", "empirical_scale",
           "normaliser_expansion", "row_variance_state", "adopt_row_variances", "EmpiricalTheta1", "EmpiricalScale", "THETA1_DIGITS"]

#: significant digits of :func:`empirical_theta1` and :func:`empirical_scale` (short rationals)
THETA1_DIGITS = 4

# quadrature: g-grid step and half-width, log t step, Laguerre nodes (10⁻¹⁰ relative, see
# tests/test_normaliser.py and derivations/normaliser.py)
_GH, _GMAX, _DU, _NODES = 0.04, 9.0, 0.2, 48


def _g_step(sig):
    """The step of the ``g`` grid at ``σ``: :data:`_GH`, resolving ``e^{σg}`` up to
    :data:`_SIGMA_MAX`, and 2 or 4 times it where ``σ ≤ 5`` or ``≤ 2.5`` (the same values
    to ~10⁻¹⁴ relative, the rounding of the sums, for ``n`` from 2 to 4096; issue 27:
    the quadrature is most of a finite-width law's set-up)."""
    return _GH * (4 if sig <= 2.5 else 2 if sig <= 5.0 else 1)


def _int(v, owner, name):
    if isinstance(v, sp.Integer):
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise FreeprobValueError(f"{owner}: {name} must be a positive integer; got {v!r}")
    return v


def _beta(beta, owner):
    b = sp.sympify(beta)
    if not b.is_number or not b.is_real or b < 0 or not b.is_finite:
        raise FreeprobValueError(f"{owner}: beta must be a finite real number >= 0; got {beta!r}")
    return b


def _f(sig, n):
    """``f(σ, n) = E[n Σ X_b²/(Σ X_b)²]``, ``X = e^{σg}`` (module docstring), by quadrature.

    One exponential over the ``(log t, g)`` grid: ``tX = e^{u_i} e^{σ g_j}`` is an outer
    product (``u + σg ≤ 18σ + 12 ≤ 552`` for ``σ ≤`` :data:`_SIGMA_MAX`: no overflow), then
    ``e^{−tX}`` once; ``t²E[X²e^{−tX}] = E[(tX)² e^{−tX}]`` from it, and ``1 − e^{−tX}``
    by ``expm1`` only where ``tX < 1`` (cancellation).  The same values as forming each
    product in logarithms (the formula before, 4 exponentials; agreement ~10⁻¹⁵ relative,
    tests/test_normaliser.py), in half the time."""
    if sig == 0.0 or n == 1:
        return 1.0
    gh = _g_step(sig)
    g = np.arange(-_GMAX, _GMAX + gh / 2, gh)
    w = np.exp(-g * g / 2)
    w /= w.sum()
    u = np.arange(-math.log(n) - sig * _GMAX - 12.0, sig * _GMAX + 12.0, _DU)
    tx = np.multiply.outer(np.exp(u), np.exp(sig * g))       # t x  (≤ e^552)
    e = np.exp(-tx)
    om = 1.0 - e
    low = tx < 1.0
    om[low] = -np.expm1(-tx[low])
    one_minus_l = om @ w
    small = one_minus_l < 0.5
    with np.errstate(divide="ignore"):
        log_l = np.where(small, np.log1p(-np.where(small, one_minus_l, 0.0)),
                         np.log(np.maximum(e @ w, 1e-300)))
    # t² E[X² e^{−tX}] = E[(tX)² e^{−tX}]  (e = 0 where tX > 745: the product is 0 there)
    t2ex2 = (np.where(tx < 1e150, tx, 0.0) ** 2 * e) @ w
    return float(n * n * np.sum(t2ex2 * np.exp((n - 1) * log_l)) * _DU)


#: largest σ = β√r (at the last quadrature node that counts) the quadrature is used for;
#: beyond it the trapezoid rule in g no longer resolves e^{σg} (checked to σ = 30 against
#: Monte Carlo in tests/test_normaliser.py)
_SIGMA_MAX = 30.0
#: below this β², V = β²(1 − 1/n) (the first term of the small-σ series; relative error
#: O(β²), under the 4 digits kept) instead of a quadrature whose absolute error is ~10⁻¹⁰
_SMALL_B2 = 1e-5


def _r_nodes(d_k):
    """Nodes ``r_i`` and weights ``w_i`` (sum 1) of ``E_r h(r)``, ``r ~ χ²_{d_K}/d_K``:
    generalised Gauss–Laguerre for ``d_K ≤ 300`` (whose weights overflow beyond), else
    Gauss–Hermite in the standardised variable with the exact density ratio (logarithms)."""
    from scipy.special import gammaln, roots_genlaguerre, roots_hermitenorm
    if d_k <= 300:
        xs, ws = roots_genlaguerre(_NODES, d_k / 2 - 1)
        return 2 * xs / d_k, ws / ws.sum()
    s, ws = roots_hermitenorm(2 * _NODES)
    sd = math.sqrt(2 / d_k)
    r = 1 + sd * s
    keep = r > 0
    s, ws, r = s[keep], ws[keep], r[keep]
    k = d_k / 2
    log_p = (k - 1) * np.log(r) - k * r + k * math.log(k) - gammaln(k)    # density of r
    ratio = np.exp(log_p + s * s / 2) * sd * math.sqrt(2 * math.pi)
    w = ws * ratio
    return r, w / w.sum()


#: ``(β, d_K, n) → V`` computed (or adopted) in this process (:func:`row_variance_state`)
_ROW_VARIANCES = {}
_MAX_CACHED = 4096


def _row_variance(b, d_k, n):
    key = (b, d_k, n)
    hit = _ROW_VARIANCES.get(key)
    if hit is None:
        hit = _row_variance_uncached(b, d_k, n)
        if len(_ROW_VARIANCES) >= _MAX_CACHED:
            _ROW_VARIANCES.pop(next(iter(_ROW_VARIANCES)))
        _ROW_VARIANCES[key] = hit
    return hit


def row_variance_state():
    r"""The row variances ``V`` (:func:`empirical_row_variance`) computed so far in this
    process, as a picklable dict ``{(β, d_K, n): V}`` (floats and ints), for
    :func:`adopt_row_variances` in another process of the same run: ``freeprob verify``'s
    theory jobs hand them back with the finite-width law's set-up, so the main process,
    which builds the same laws again, does not redo the quadratures (0.1 s each).
    Raises nothing.  Source: this project's design (issue 27).
    """
    return dict(_ROW_VARIANCES)


def adopt_row_variances(state):
    r"""Take over the row variances of :func:`row_variance_state` (from a process running
    the same code; entries already computed here are kept).  Returns the number of entries
    adopted.

    Raises ``FreeprobValueError`` unless ``state`` is a dict of ``(β, d_K, n)`` (a float
    ``β ≥ 0``, positive integers) to a finite float ``V`` with ``0 ≤ V ≤ n − 1``.
    Source: this project's design (issue 27).
    """
    own = "adopt_row_variances"
    if not isinstance(state, dict):
        raise FreeprobValueError(f"{own}: expected the dict of row_variance_state(); got {type(state).__name__}")
    for key, v in state.items():
        ok = (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], float) and key[0] >= 0
              and all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in key[1:])
              and isinstance(v, float) and math.isfinite(v) and 0.0 <= v <= key[2] - 1)
        if not ok:
            raise FreeprobValueError(f"{own}: expected (beta, d_k, n) -> V entries of row_variance_state(); "
                                     f"got {key!r}: {v!r}")
    before = len(_ROW_VARIANCES)
    for key, v in state.items():
        _ROW_VARIANCES.setdefault(key, v)
    return len(_ROW_VARIANCES) - before


def _row_variance_uncached(b, d_k, n):
    if b == 0.0 or n == 1:
        return 0.0
    if b * b < _SMALL_B2:
        return b * b * (1 - 1 / n)
    from freeprob.errors import NotAvailable
    rs, ws = _r_nodes(d_k)
    keep = n * ws > 1e-16 * n          # a dropped node changes V by at most n·w (1 ≤ f ≤ n)
    rs, ws = rs[keep], ws[keep]
    sig = b * np.sqrt(rs)
    if sig.max() > _SIGMA_MAX:
        raise NotAvailable(
            f"empirical_row_variance: beta = {b:g} with d_K = {d_k} puts the scores' scale beta*sqrt(r) at "
            f"{sig.max():.3g} > {_SIGMA_MAX:g}, beyond the quadrature's checked range (one key takes almost "
            "all of each row there); allowed: beta^2 * r <= 900 at the quadrature's nodes (e.g. beta <= 4 for d_K >= 8)")
    vals = np.array([_f(float(si), n) for si in sig])
    v = float(ws @ vals) - 1.0
    if not (math.isfinite(v) and -1e-9 <= v <= n - 1 + 1e-9):
        raise NotAvailable(f"empirical_row_variance: the quadrature failed at beta = {b:g}, d_K = {d_k}, n = {n} "
                           f"(got {v!r}, outside [0, n - 1])")
    return min(max(v, 0.0), n - 1.0)


def empirical_row_variance(beta, d_k, n):
    r"""``V = E(n A_ab − 1)²``: the exact coordinate variance of one softmax head's
    centred attention ``n A⊥`` at ``n`` keys and key width ``d_K`` (Gaussian queries and
    keys, the empirical row normaliser), a float.

    ``V = E_r f(β√r, n) − 1`` with ``r ~ χ²_{d_K}/d_K`` and
    ``f(σ, n) = n²∫_0^∞ t E[X²e^{−tX}] (E e^{−tX})^{n−1} dt``, ``X = e^{σg}``,
    ``g ~ N(0, 1)`` (module docstring), by quadrature (relative error ≈ 10⁻¹⁰; 0.1 s).
    ``0 ≤ V ≤ n − 1``; ``V → θ1^{fw}`` as ``n → ∞`` when ``d_K > 2β²`` and ``→ e^{β²} − 1``
    as also ``d_K → ∞``.  E.g. ``n = 512``, ``d_K = 8``, ``β = 1``: 1.9863 (limit
    1.7183, expected normaliser 2.1605).  Cached.

    Raises ``FreeprobValueError`` unless ``d_k`` and ``n`` are positive integers and
    ``beta`` a finite real number ≥ 0.  Source: theory.md §7 (the finite-d_K bulk scale).
    """
    own = "empirical_row_variance"
    b = _beta(beta, own)
    return _row_variance(float(b), _int(d_k, own, "d_k"), _int(n, own, "n"))


def key_norm_variance(beta, d_k):
    r"""``M = (1 − β⁴/d_K²)^{−d_K/2} − 1``: the mean square of the key-norm row mean
    ``μ_b`` of ``n A⊥`` (``‖μ‖²/n`` of theory.md §7 F2, the normaliser replaced by its mean;
    ``≈ β⁴/(2d_K)``), the part of ``E(nA_ab − 1)²`` that leaves the bulk as the rank-one
    key-norm outlier.

    Exact (sympy); equals :func:`freeprob.attention.spikes.key_norm_spike` ``/n``
    (``((d_K − β²)/(d_K + β²))^{−d_K/2}(d_K/(d_K + β²))^{d_K} − 1``, rewritten).  A
    symbolic ``β`` or ``d_K`` (positive symbol) gives an expression.  Raises
    ``FreeprobValueError`` for ``β < 0``, a bad ``d_k``, or numbers with ``d_K ≤ β²``
    (the query average diverges).  Source: theory.md §7 F2.
    """
    own = "key_norm_variance"
    b = sp.sympify(beta)
    if b.is_number:
        b = _beta(b, own)
    d = sp.sympify(d_k)
    if d.is_number:
        d = sp.Integer(_int(d_k, own, "d_k"))
        if b.is_number and not b**2 < d:
            raise FreeprobValueError(f"{own}: needs d_K > beta^2; got d_K={d_k}, beta={beta}")
    elif d.is_positive is not True:
        raise FreeprobValueError(f"{own}: a symbolic d_k must be a positive sympy symbol; got {d_k!r}")
    return (1 - b**4 / d**2) ** (-d / 2) - 1


def _short(v):
    """``v > 0`` rounded to :data:`THETA1_DIGITS` significant digits, a short rational."""
    if v <= 0:
        return sp.Integer(0)
    e = THETA1_DIGITS - 1 - math.floor(math.log10(v))
    return sp.Rational(round(v * 10**e), 10**e) if e >= 0 else sp.Integer(round(v))


def _empirical_theta1(b, d_k, n, own):
    if b.is_zero:
        return sp.Integer(0)
    m = float(key_norm_variance(b, d_k))
    v = _row_variance(float(b), d_k, n)
    if not m < v:
        from freeprob.errors import NotAvailable
        raise NotAvailable(
            f"{own}: the key-norm term M = {m:.4g} (its leading-order formula, the normaliser replaced by "
            f"its mean) is not below the row variance V = {v:.4g} at beta = {b}, d_K = {d_k}, n = {n}: the "
            "bulk-scale model needs d_K well above beta^2 (M << V); use the finite-width law's "
            "variance='limit' or 'expected' there")
    return _short(v - m)


def _symbolic_args(beta, d_k, n, own):
    """``(β, d_K, n)`` as sympy objects: numbers (checked by the caller) or positive symbols
    (expressions); strings, booleans and symbols without a sign are refused."""
    out = []
    for v, name in ((beta, "beta"), (d_k, "d_k"), (n, "n")):
        if isinstance(v, (bool, str)):
            raise FreeprobValueError(f"{own}: {name} must be a number or a positive sympy symbol; got {v!r}")
        e = sp.sympify(v)
        if not e.is_number and (e.is_positive is not True and not (name == "beta" and e.is_nonnegative)):
            raise FreeprobValueError(f"{own}: a symbolic {name} must be a positive sympy symbol "
                                     f"(sympy.Symbol('{name}', positive=True)); got {v!r}")
        out.append(e)
    return tuple(out)


def empirical_theta1(beta, d_k, n):
    r"""``θ1^{emp} = V − M``: the bulk coordinate variance of one softmax head at ``n``
    and ``d_K`` under the empirical row normaliser, i.e. the expected trace of the row
    covariance ``Σ`` of ``n A⊥`` given the keys, ``E tr Σ/n``; the mean of the
    finite-width row covariance law by default
    (:func:`freeprob.attention.finite_width.chaos_weights`).

    ``V`` = :func:`empirical_row_variance`, ``M`` = :func:`key_norm_variance` (the
    key-norm mean, which leaves the bulk as an outlier).  Rounded to
    :data:`THETA1_DIGITS` = 4 significant digits, an exact rational (its digits enter the
    height of the laws' Cauchy equations; the model error of ``M``, measured ≲ 2·10⁻³
    relative, is larger).  E.g. ``n = 512``, ``β = 1``: ``d_K = 8`` 1.921, ``d_K = 32``
    1.737 (``θ1 = 1.718``).  For a symbolic ``n``, ``d_K`` or ``β``: the unevaluated
    :class:`EmpiricalTheta1` ``(d_K, n, β)``, which becomes this rational when numbers are
    substituted.

    Raises ``FreeprobValueError`` for a ``d_k`` or ``n`` not a positive integer (or
    positive symbol), ``β < 0``, or ``d_K ≤ β²`` (:func:`key_norm_variance`).  Source:
    theory.md §7 (the finite-d_K bulk scale); the paper's §B.7.1.
    """
    own = "empirical_theta1"
    b, d, nn = _symbolic_args(beta, d_k, n, own)
    if b.is_number:
        b = _beta(b, own)
    if not (b.is_number and d.is_number and nn.is_number):
        if d.is_number:
            _int(d_k, own, "d_k")
        if nn.is_number:
            _int(n, own, "n")
        return EmpiricalTheta1(d, nn, b)
    return _empirical_theta1(b, _int(d_k, own, "d_k"), _int(n, own, "n"), own)


class _SizeFunction(sp.Function):
    """A real sympy function of ``(d_K, n, β)`` that stays unevaluated until all three are
    numbers, then becomes ``_value(β, d_K, n)`` (checked as the public functions check);
    a transcendental generator of the exact core (``_freeprob_generator``)."""

    nargs = 3
    _freeprob_generator = True

    @classmethod
    def eval(cls, d_k, n, beta):
        """``_value`` once ``d_K``, ``n`` and ``β`` are numbers; ``None`` (unevaluated) otherwise."""
        if d_k.is_number and n.is_number and beta.is_number:
            own = cls.__name__
            return cls._value(_beta(beta, own), _int(d_k, own, "d_k"), _int(n, own, "n"))
        return None

    def _eval_is_real(self):
        return True


class EmpiricalTheta1(_SizeFunction):
    r"""``EmpiricalTheta1(d_K, n, β)``: :func:`empirical_theta1` as a sympy function for a
    symbolic ``d_K``, ``n`` or ``β``; unevaluated until all three are numbers, then the
    rational of the numeric layer (so ``law.subs({d_K: 32})`` is exactly the law at
    ``d_K = 32``).  A transcendental generator of the exact core
    (``_freeprob_generator``).  Raises ``FreeprobValueError`` as :func:`empirical_theta1`
    when evaluated.  Source: theory.md §7 (the finite-d_K bulk scale).
    """

    _value = staticmethod(lambda b, d_k, n: _empirical_theta1(b, d_k, n, "EmpiricalTheta1"))

    def _eval_is_nonnegative(self):
        return True


def _empirical_scale(b, d_k, n):
    if b.is_zero:
        return sp.Integer(1)
    return _short(float(_empirical_theta1(b, d_k, n, "empirical_scale")) / math.expm1(float(b) ** 2))


def empirical_scale(beta, d_k, n):
    r"""``c = θ1^{emp}/θ1``: the factor by which the finite-width laws scale every chaos
    piece of the row covariance (theory.md §7, the finite-d_K bulk scale), ``θ1^{emp}`` =
    :func:`empirical_theta1`, ``θ1 = e^{β²} − 1``; so their mean is ``c θ1``.

    Rounded to :data:`THETA1_DIGITS` = 4 significant digits, an exact rational: a rational
    factor keeps the laws' coefficients in the field of the limit law (``θ1/θ1`` with its
    ``e`` made every piece transcendental and the tabulation 2.5× slower); the mean then
    differs from ``θ1^{emp}`` by less than 5·10⁻⁴ relative.  E.g. ``n = 512``, ``d_K = 8``,
    ``β = 1``: 559/500 = 1.118.  1 for ``β = 0``.  For a symbolic ``n``, ``d_K`` or ``β``:
    the unevaluated :class:`EmpiricalScale` ``(d_K, n, β)``.

    Raises ``FreeprobValueError`` as :func:`empirical_theta1`.  Source: theory.md §7 (the
    finite-d_K bulk scale).
    """
    own = "empirical_scale"
    val = empirical_theta1(beta, d_k, n)          # checks the input; symbolic: unevaluated
    if isinstance(val, EmpiricalTheta1):
        return EmpiricalScale(*val.args)
    return _empirical_scale(_beta(beta, own), _int(d_k, own, "d_k"), _int(n, own, "n"))


class EmpiricalScale(_SizeFunction):
    r"""``EmpiricalScale(d_K, n, β)``: :func:`empirical_scale` as a sympy function for a
    symbolic ``d_K``, ``n`` or ``β``; unevaluated until all three are numbers, then the
    rational of the numeric layer (``law.subs({d_K: 32})`` is exactly the law at
    ``d_K = 32``).  A transcendental generator of the exact core (``_freeprob_generator``).
    Raises ``FreeprobValueError`` as :func:`empirical_theta1` when evaluated.  Source:
    theory.md §7 (the finite-d_K bulk scale).
    """

    _value = staticmethod(_empirical_scale)

    def _eval_is_positive(self):
        return True


def normaliser_expansion(beta, d_k, n):
    r"""The first two terms of ``V = E(nA_ab − 1)²`` in ``1/n``:
    ``θ1^{fw} + (3E_2 − E_1 − 2E_3)/n``, ``E_k = E_r e^{kβ²r} = (1 − 2kβ²/d_K)^{−d_K/2}``
    (module docstring: ``E[T/U²] = a − 2E[tu] + 3aE[u²] + O(n^{−2})`` for the sums of
    ``Y = X/EX``, ``E[u²] = (a − 1)/n``, ``E[tu] = (e^{3σ²} − a)/n``, ``a = e^{σ²}``).

    Exact (sympy; symbolic ``β``, ``d_K``, ``n`` allowed).  An asymptotic expansion: each
    further order needs a higher moment of ``e^{β²r}``; use
    :func:`empirical_row_variance` for the value (e.g. ``n = 512``, ``d_K = 8``,
    ``β = 1``: 1.25 here against 1.986).  Raises ``FreeprobValueError`` for numbers with
    ``d_K ≤ 6β²`` (``E_3`` diverges), or bad ``d_k``, ``n``, ``β``.  Source: theory.md §7
    (the finite-d_K bulk scale); the paper's §B.7.1 (the normaliser's mean and variance).
    """
    own = "normaliser_expansion"
    b, d, nn = _symbolic_args(beta, d_k, n, own)
    if b.is_number:
        b = _beta(b, own)
    if d.is_number:
        d = sp.Integer(_int(d_k, own, "d_k"))
    if nn.is_number:
        nn = sp.Integer(_int(n, own, "n"))
    if b.is_number and d.is_number and not 6 * b**2 < d:
        raise FreeprobValueError(f"{own}: needs d_K > 6 beta^2 (E e^(3 beta^2 r) diverges otherwise; use "
                                 f"empirical_row_variance); got d_K={d_k}, beta={beta}")
    floats = any(isinstance(v, sp.Float) for v in (b, d, nn))
    if floats:                  # exact in the float's binary value, then rounded: no cancellation
        b = sp.Rational(b) if isinstance(b, sp.Float) else b
    ek = [(1 - 2 * k * b**2 / d) ** (-d / 2) for k in (1, 2, 3)]
    out = ek[0] - 1 + (3 * ek[1] - ek[0] - 2 * ek[2]) / nn
    return sp.Float(sp.N(out, 30), 15) if floats and out.is_number else out
