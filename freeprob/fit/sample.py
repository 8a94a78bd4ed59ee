r"""A sample spectrum: the input checks, sample moments, the float moment–cumulant map and
the covariance of the sample moments under the two error models of :mod:`freeprob.fit`.

Error models (``errors=``):

* ``"iid"``: the eigenvalues are treated as ``n`` independent draws from the law.  The
  covariance of the sample moments ``m̂_i = (1/n) Σ λ^i`` is
  ``(m_{i+j} − m_i m_j)/n``, estimated from the sample itself (the delta method;
  [BS10]_ §9 for the contrast below).  This is the right error for an i.i.d. sample.  For
  the eigenvalues of **one** random matrix it overstates the error: eigenvalues repel, and
  a linear statistic ``Σ f(λ_i)`` fluctuates by ``O(1)``, not ``O(√n)`` ([JOH98]_), so
  the ``"iid"`` interval is conservative there (coverage above its level; measured in
  docs/guide/fitting.md).
* ``"matrix"``: the eigenvalues of one ``n × n`` matrix of a one-cut β-ensemble (GOE
  ``β = 1``, GUE ``β = 2``, real or complex Wishart with ratio ≤ 1, …) with support
  ``[a, b]``.  Johansson's central limit theorem ([JOH98]_ Thm. 2.4; [BS10]_ Thm. 9.10 for
  Wishart) gives, with ``f(x) = Σ_k c_k T_k((2x − a − b)/(b − a))`` (Chebyshev),

  ``E Σ f(λ_i) − n ∫ f dμ → (2/β − 1) [(f(a) + f(b))/4 − c_0/2]`` and
  ``Cov(Σ f(λ_i), Σ g(λ_i)) → (1/(2β)) Σ_{k≥1} k c_k(f) c_k(g)``.

  The sample moments are corrected by that mean (a bias of order ``1/n``) and get that
  covariance over ``n²``.  The edges ``[a, b]`` are extrapolated from the sample's extremes
  (:func:`soft_edges`).  It does not hold for laws with several intervals or atoms, nor for
  Wigner matrices whose entries have a non-zero fourth cumulant (an extra term).

Moments and free cumulants here are float64 (the sample is); the map between them is the
functional relation ``M(z) = 1 + Σ_s κ_s z^s M(z)^s`` ([NS06]_ Lecture 16;
[MS17]_ §2.4).
"""
from __future__ import annotations

import numpy as np

from freeprob._checks import check_choice, check_int, check_real
from freeprob.errors import FreeprobValueError

__all__ = ["spectrum", "sample_moments", "cumulants_from_moments", "cumulant_jacobian",
           "moment_covariance", "ERRORS", "MIN_EIGENVALUES", "MAX_CUMULANT_ORDER", "check_level",
           "check_beta_index", "check_order", "soft_edges", "finite_or_raise", "z_value"]

#: the error models of :mod:`freeprob.fit`
ERRORS = ("iid", "matrix")
#: the fewest eigenvalues a fit accepts (a covariance from fewer is meaningless)
MIN_EIGENVALUES = 10


def spectrum(eigenvalues, who, *, minimum=MIN_EIGENVALUES) -> np.ndarray:
    """The eigenvalues as a sorted 1-d float64 array, checked.

    Parameters
    ----------
    eigenvalues : sequence or array of real numbers, shape ``(n,)`` (a 2-d array is refused:
        pass the eigenvalues, not the matrix)
    who : str
        The caller's name, for the messages.
    minimum : int
        The fewest eigenvalues accepted.

    Raises
    ------
    FreeprobValueError
        Not a 1-d array of real numbers; NaN or infinite entries (their positions are
        named); fewer than ``minimum`` eigenvalues; all eigenvalues equal (no spread to fit).

    Source: this project's input rules.
    """
    try:
        arr = np.asarray(eigenvalues)
    except (TypeError, ValueError) as exc:
        raise FreeprobValueError(f"{who}: eigenvalues must be a 1-d array of real numbers ({exc})") from exc
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        if arr.dtype.kind == "c":
            raise FreeprobValueError(f"{who}: eigenvalues must be real; got complex values "
                                     "(a Hermitian matrix has real eigenvalues: use numpy.linalg.eigvalsh)")
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            raise FreeprobValueError(f"{who}: eigenvalues must be real numbers ({exc})") from exc
    if arr.ndim != 1:
        raise FreeprobValueError(f"{who}: eigenvalues must be a 1-d array; got shape {arr.shape} "
                                 "(pass the eigenvalues, e.g. numpy.linalg.eigvalsh(matrix))")
    arr = arr.astype(float)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        show = ", ".join(f"{i} ({arr[i]})" for i in bad[:5])
        raise FreeprobValueError(f"{who}: eigenvalues must be finite; {bad.size} are not, at "
                                 f"positions {show}{' …' if bad.size > 5 else ''}")
    if arr.size < minimum:
        raise FreeprobValueError(f"{who}: need at least {minimum} eigenvalues; got {arr.size}")
    arr = np.sort(arr)
    if arr[-1] - arr[0] <= 1e-12 * max(1.0, abs(arr[0])):
        raise FreeprobValueError(f"{who}: all {arr.size} eigenvalues are equal ({arr[0]}); "
                                 "a point mass has nothing to fit (freeprob.Dirac)")
    return arr


def check_level(level, who) -> float:
    """``level`` as a float in ``(0, 1)``, else :class:`FreeprobValueError`.  Source: this module."""
    lv = check_real(level, who, "level")
    if not 0 < lv < 1:
        raise FreeprobValueError(f"{who}: level must lie in (0, 1); got {level!r}")
    return lv


def z_value(level) -> float:
    """The two-sided normal quantile of ``level`` (1.96 at 0.95).  Raises nothing for a
    level in ``(0, 1)``.  Source: :func:`scipy.stats.norm.ppf`."""
    from scipy.stats import norm
    return float(norm.ppf(0.5 + level / 2))


def sample_moments(x, order) -> np.ndarray:
    """``[1, m̂_1, …, m̂_order]``, ``m̂_j = mean(x^j)`` (float64).  Raises nothing.
    Source: the definition."""
    out = np.empty(order + 1)
    p = np.ones_like(x)
    out[0] = 1.0
    for j in range(1, order + 1):
        p = p * x
        out[j] = p.mean()
    return out


def cumulants_from_moments(m):
    """``[0, κ_1, …, κ_k]`` from ``[1, m_1, …, m_k]`` (float or complex numpy arrays).

    The functional relation ``M(z) = 1 + Σ_s κ_s z^s M(z)^s`` solved order by order
    ([NS06]_ Lecture 16): ``[z^n]`` of the right side is ``κ_n`` plus terms in ``κ_s``,
    ``s < n``.  Polynomial in the moments, so complex steps differentiate it exactly
    (:func:`cumulant_jacobian`).  Raises nothing.
    """
    m = np.asarray(m)
    k = len(m) - 1
    kappa = np.zeros(k + 1, dtype=m.dtype)
    for n in range(1, k + 1):
        # [z^n] Σ_{s<n} κ_s z^s M^s: powers of M truncated at degree n
        total = 0
        power = np.zeros(n + 1, dtype=m.dtype)
        power[0] = 1
        for s in range(1, n):
            power = np.convolve(power, m[:n + 1])[:n + 1]           # M^s mod z^{n+1}
            total = total + kappa[s] * power[n - s]
        kappa[n] = m[n] - total
    return kappa


def cumulant_jacobian(m) -> np.ndarray:
    """``J[i−1, j−1] = ∂κ_i/∂m_j`` (``i, j = 1..k``) at the moments ``m = [1, m_1..m_k]``,
    by complex steps (exact to rounding: the map is a polynomial).  Raises nothing.
    Source: Squire & Trapp (1998), complex-step differentiation."""
    m = np.asarray(m, dtype=float)
    k = len(m) - 1
    h = 1e-30
    J = np.empty((k, k))
    for j in range(1, k + 1):
        mc = m.astype(complex)
        mc[j] += 1j * h
        J[:, j - 1] = cumulants_from_moments(mc)[1:].imag / h
    return J


def _chebyshev_coefficients(j, a, b):
    """Chebyshev coefficients ``c_0..c_j`` of ``x^j`` on ``[a, b]`` (``x = c + r t``)."""
    from numpy.polynomial import chebyshev, polynomial
    c, r = (a + b) / 2, (b - a) / 2
    poly = polynomial.polypow([c, r], j) if j else np.array([1.0])
    out = np.zeros(j + 1)
    cheb = chebyshev.poly2cheb(poly)
    out[:len(cheb)] = cheb
    return out


def moment_covariance(x, order, errors="iid", beta=1):
    """The sample moments ``m̂_1..m̂_order`` of the sorted sample ``x`` (bias-corrected under
    ``errors="matrix"``) and their covariance matrix, shape ``(order, order)``.

    Parameters
    ----------
    x : sorted float64 array, shape ``(n,)`` (:func:`spectrum`)
    order : int ≥ 1
    errors : {"iid", "matrix"}
        The error model of this module's docstring.
    beta : {1, 2, 4}
        Dyson's index for ``errors="matrix"`` (real, complex, quaternion matrices).

    Returns
    -------
    (m, cov) : ``m = [1, m̂_1, …]`` (length ``order + 1``), ``cov`` of ``m̂_1..m̂_order``.

    Raises
    ------
    FreeprobValueError
        An unknown error model or ``beta``.

    Source: the delta method on sample moments; [JOH98]_ Thm. 2.4 and [BS10]_ §9 for
    ``errors="matrix"``.
    """
    errors = check_choice(errors, ERRORS, "fit", "errors")
    n = x.size
    if errors == "iid":
        m2 = sample_moments(x, 2 * order)
        idx = np.arange(1, order + 1)
        cov = (m2[idx[:, None] + idx[None, :]] - np.outer(m2[idx], m2[idx])) / n
        return m2[:order + 1], cov
    beta = check_beta_index(beta)
    a, b = soft_edges(x)
    m = sample_moments(x, order)
    coef = [_chebyshev_coefficients(j, a, b) for j in range(order + 1)]
    for j in range(1, order + 1):
        bias = (2 / beta - 1) * ((a ** j + b ** j) / 4 - coef[j][0] / 2)
        m[j] -= bias / n
    cov = np.zeros((order, order))
    for i in range(1, order + 1):
        for j in range(1, order + 1):
            kk = min(i, j)
            cov[i - 1, j - 1] = sum(k * coef[i][k] * coef[j][k] for k in range(1, kk + 1))
    cov /= 2 * beta * n ** 2
    return m, cov


def soft_edges(x, count=None):
    r"""The edges ``(a, b)`` of a one-cut law with square-root (soft) edges, estimated from
    the sorted sample ``x``: near an edge the ``j``-th extreme eigenvalue sits where
    ``n ∫ ρ ≈ j − 1/2``, i.e. ``λ_(j) ≈ b − A (j − 1/2)^{2/3}``; ``(b, A)`` is the least-squares
    line through the ``count`` extremes (default ``clip(n^{1/2}/2, 3, 10)``), and the edge is
    never inside the sample.  The sample's extremes alone sit ``~n^{−2/3}`` inside the
    support, which shrinks the covariance of high moments (as ``r^{2j}``).  Raises nothing.
    Source: the square-root edge of one-cut laws ([JOH98]_; [BS10]_ §5)."""
    n = x.size
    count = count or int(min(10, max(3, n ** 0.5 / 2)))
    t = (np.arange(1, count + 1) - 0.5) ** (2 / 3)
    design = np.stack([np.ones(count), t], axis=1)
    top = np.linalg.lstsq(design, x[::-1][:count], rcond=None)[0][0]
    bottom = np.linalg.lstsq(design, x[:count], rcond=None)[0][0]
    return min(float(bottom), float(x[0])), max(float(top), float(x[-1]))


def check_beta_index(beta, who="fit") -> int:
    """Dyson's index ``β`` as the integer 1, 2 or 4, else :class:`FreeprobValueError`.
    Source: this module."""
    if isinstance(beta, bool) or beta not in (1, 2, 4):
        raise FreeprobValueError(f"{who}: beta (Dyson's index) must be 1 (real), 2 (complex) or "
                                 f"4 (quaternion) matrices; got {beta!r}")
    return int(beta)


def check_order(k, who, n=None) -> int:
    """``k`` as an integer from 1 to 12; with ``n`` (the sample size) also at most ``n − 2``.

    Raises
    ------
    FreeprobValueError
        ``k`` not an integer in range.  Source: this module (sample moments of order
        ``2k`` beyond 24 are dominated by the largest eigenvalues and rounding).
    """
    k = check_int(k, who, "k", minimum=1, maximum=MAX_CUMULANT_ORDER,
                  limit="freeprob.fit.sample.MAX_CUMULANT_ORDER")
    if n is not None and k > n - 2:
        raise FreeprobValueError(f"{who}: k = {k} needs at least {k + 2} eigenvalues; got {n}")
    return k


#: the highest cumulant order fitted (the iid errors use moments up to twice this)
MAX_CUMULANT_ORDER = 12


def finite_or_raise(values, who, what):
    """Raise :class:`FreeprobValueError` if any of ``values`` is not finite (an overflow of
    high moments).  Source: this module."""
    if not np.all(np.isfinite(values)):
        raise FreeprobValueError(f"{who}: the {what} overflowed float64 (eigenvalues too large "
                                 "for this order); rescale the eigenvalues or lower the order")
    return values
