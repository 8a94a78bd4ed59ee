r"""Path tracking and a-posteriori bounds for the M_k-valued equation of
:mod:`freeprob.numeric.ovsystem`.

* :func:`newton` — Newton's method with the analytic Jacobian in ``complex128``.
* :func:`track` — predictor–corrector continuation of the solution along a segment
  ``z_a → z_b`` (Euler predictor on ``du/dz = −J^{-1} ∂F/∂z``, Newton corrector).  A step is
  accepted when the first Newton correction is at most a tenth of the predicted move and
  the corrections contract; the step length is further capped by half the estimated
  distance to the nearest singularity of the solution, ``|u′|/|u″|`` from two consecutive
  tangents (a square-root branch point at distance ``d`` gives ``|u′|/|u″| ≈ 2d``, a pole
  ``d/2``).  Started at infinity (:meth:`~freeprob.numeric.ovsystem.OVSystem.far_start`)
  and continued in ``z`` through the upper half-plane, where ``G`` is analytic, this selects
  the branch of the Cauchy transform; the last step lands on the real axis (``ε = 0``: the
  equation is used at ``Λ(x)`` itself, the limit ``Λ_ε → Λ`` of [BMS17]_ being analytic
  where the Jacobian is invertible).
* :func:`certify` — the double-precision solution polished by simplified Newton steps in
  python-flint ``acb`` arithmetic at ``prec`` bits, then Krawczyk's test on the box of
  radius ``r`` (max norm) about it: with ``C ≈ J(ũ)^{-1}``,
  ``‖C F(ũ)‖ + sup_{u ∈ X} ‖I − C J(u)‖ · r < r`` (``J`` evaluated on the ball box ``X``)
  proves a unique solution of the system within ``r`` of ``ũ`` in every entry
  ([RUM10]_ §8).  The test certifies the solution of the equation, not that the
  continuation stayed on the Cauchy transform's branch.

Source: [BMS17]_ (the equation), [RUM10]_ §8 (Krawczyk); the predictor–corrector step
rules are the project's design.
"""
from __future__ import annotations

import contextlib
import functools

import flint
import mpmath
import numpy as np

from freeprob.errors import PrecisionError
from freeprob.numeric.ovinterval import IA

__all__ = ["NO_BALL", "TrackFailure", "arb_mpf", "certify", "newton", "one_blas_thread", "single_blas", "track"]

#: why ``ball=True`` is refused on the numeric path
NO_BALL = ("the numeric path (M_k-valued subordination) proves the solution of the "
           "equation at each point by Krawczyk's test, but not that the continuation "
           "stayed on the branch of the Cauchy transform; ball=True needs the exact "
           "Cauchy equation")


def arb_mpf(a):
    """The midpoint of a python-flint ``arb`` as an mpmath number (exact)."""
    man, exp = a.mid().man_exp()
    return mpmath.mpf((int(man), int(exp)))


class TrackFailure(ArithmeticError):
    """Internal: the continuation could not proceed (step below the minimum, singular
    Jacobian); the caller turns it into a :class:`~freeprob.errors.PrecisionError`."""


def _norm(v):
    return float(np.max(np.abs(v))) if len(v) else 0.0


def newton(S, u, z, *, maxit=12, first=None, tol=1e-13):
    r"""Newton's method for ``F(·, z) = 0`` from ``u`` (``complex128``): chord steps with
    the Jacobian at ``u`` (inverted once), a fresh Jacobian when they contract slowly.

    Returns ``(u, J, steps)`` with ``J`` the last Jacobian used (at a point within the first
    correction of ``u``: good for tangents, not for :func:`certify`), or raises
    :class:`TrackFailure` (singular Jacobian, no contraction, or ``first`` given and the
    first correction larger than it).  Converged: a correction below ``tol`` times the scale
    ``1 + max|u|``, or one that stops shrinking below ``1e-9`` of it (the rounding level
    of an ill-conditioned Jacobian)."""
    prev = None
    J = S.jacobian(u, z)
    Ji = _inv(J)
    for it in range(maxit):
        d = Ji @ S.residual(u, z)
        nd = _norm(d)
        if not np.isfinite(nd):
            raise TrackFailure("non-finite Newton step")
        scale = 1.0 + _norm(u)
        if it == 0 and first is not None and nd > first:
            raise TrackFailure("predictor too far from the solution")
        if prev is not None and nd > 0.5 * prev and nd > 1e-9 * scale:
            raise TrackFailure("Newton does not contract")
        u = u - d
        if nd <= tol * scale or (prev is not None and nd > 0.5 * prev):
            return u, J, it + 1
        if prev is not None and nd > 0.1 * prev:          # slow chord: refresh the Jacobian
            J = S.jacobian(u, z)
            Ji = _inv(J)
        prev = nd
    if prev is not None and prev <= 1e-9 * (1.0 + _norm(u)):
        return u, J, maxit
    raise TrackFailure("Newton did not converge")


def _inv(J):
    if not np.all(np.isfinite(J)):
        raise TrackFailure("non-finite Jacobian")
    try:
        Ji = np.linalg.inv(J)
    except np.linalg.LinAlgError as exc:
        raise TrackFailure("singular Jacobian") from exc
    if not np.all(np.isfinite(Ji)):
        raise TrackFailure("singular Jacobian")
    return Ji


_BLAS = []


def single_blas():
    """A context in which the BLAS runs on one thread (threadpoolctl, when installed: the
    ``sweep`` extra), else a no-op.  The matrices here are small (``n`` up to a few
    hundred): a multi-threaded BLAS only adds synchronisation, and on a loaded machine it
    slowed the solves of ``n = 261`` fifty-fold (measured)."""
    if not _BLAS:
        try:
            from threadpoolctl import ThreadpoolController
            _BLAS.append(ThreadpoolController())
        except ImportError:                                  # pragma: no cover - optional
            _BLAS.append(None)
    ctl = _BLAS[0]
    return contextlib.nullcontext() if ctl is None else ctl.limit(limits=1, user_api="blas")


def one_blas_thread(method):
    """Decorator: run ``method`` inside :func:`single_blas`."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with single_blas():
            return method(*args, **kwargs)
    return wrapper


def _tangent(S, u, J):
    try:
        return -np.linalg.solve(J, S.dz(u))
    except np.linalg.LinAlgError as exc:
        raise TrackFailure("singular Jacobian") from exc


def track(S, u, J, za, zb, *, hmax=None, min_step=1e-13, max_steps=1000):
    r"""Continue the solution ``u`` at ``za`` (Jacobian ``J`` there) to ``zb``.

    Parameters
    ----------
    S : OVSystem
    u, J : complex128 arrays
        A converged solution at ``za`` and its Jacobian.
    za, zb : complex
    hmax : float, optional
        Largest step ``|Δz|`` (default: the whole segment).

    Returns ``(u, J)`` at ``zb``.  Raises :class:`TrackFailure` when the step falls below
    ``min_step`` times the segment length (a singularity on the path) or after
    ``max_steps`` steps.
    """
    za, zb = complex(za), complex(zb)
    length = abs(zb - za)
    if length == 0:
        return u, J
    direction = (zb - za) / length
    s = 0.0
    h = length if hmax is None else min(length, hmax)
    if za.imag > 0:
        h = min(h, 0.5 * za.imag)          # the first step, before a curvature estimate
    t_prev = s_prev = None
    for _ in range(max_steps):
        if s >= length:
            return u, S.jacobian(u, zb)
        t = _tangent(S, u, J) * direction          # du/ds along the segment
        if t_prev is not None and s_prev != s:
            curv = _norm(t - t_prev) / (s - s_prev)
            if curv > 0:
                h = min(h, 0.4 * _norm(t) / curv)
        rest = length - s
        h = max(min(h, rest), 0.0)
        if rest - h < 1e-9 * rest:
            h = rest
        s1 = s + h
        z1 = zb if s1 >= length else za + s1 * direction
        move = h * t
        try:
            u1, J1, steps = newton(S, u + move, z1, maxit=8, tol=1e-13 if s1 >= length else 1e-9,
                                   first=0.3 * _norm(move) + 1e-10 * (1.0 + _norm(u)))
        except TrackFailure:
            h *= 0.5
            if h < min_step * length:
                raise TrackFailure(f"continuation step below {min_step:g} of the path near z = {z1}") from None
            continue
        t_prev, s_prev = t, s
        u, J, s = u1, J1, s1
        if steps <= 3:
            h *= 2.0
        if hmax is not None:
            h = min(h, hmax)
    raise TrackFailure("too many continuation steps")


def _acb_vec(u):
    out = np.empty(len(u), dtype=object)
    for i, v in enumerate(u.tolist()):
        out[i] = flint.acb(v.real, v.imag)
    return out


def _mid(v):
    out = np.empty(len(v), dtype=object)
    for i, a in enumerate(v):
        out[i] = a.mid()
    return out


def _float_parts(F):
    """``(mid, rad)`` numpy arrays enclosing an object vector of acb balls (the midpoint
    rounded to doubles, its rounding added to the radius)."""
    mid = np.array([complex(float(a.real.mid()), float(a.imag.mid())) for a in F])
    rad = np.array([float(a.rad()) for a in F]) + 4 * _U * np.abs(mid)
    return mid, rad


_U = 2.0 ** -53


def certify(S, u, J, z, prec, *, maxit=12, krawczyk=True):
    r"""Polish the ``complex128`` solution ``u`` (Jacobian ``J``) at the point ``z`` (an
    ``acb``, exact or a small ball) to ``prec`` bits and bound its error.

    Returns ``(ũ, r)``: ``ũ`` an object array of exact ``acb`` midpoints, ``r`` (a float)
    such that the system has exactly one solution ``u*`` with ``max_i |u*_i − ũ_i| ≤ r``.
    The residual ``F(ũ)`` is enclosed in python-flint balls at ``prec`` bits; with
    ``C = J^{-1}`` (doubles), Krawczyk's condition ``‖C F(ũ)‖ + ‖I − C J(X)‖·r < r`` is
    checked with ``J(X)`` over the box ``X = ũ ± r`` enclosed in midpoint–radius double
    intervals (:mod:`freeprob.numeric.ovinterval`; module docstring).  Raises
    :class:`~freeprob.errors.PrecisionError` when the test fails for every radius tried (a
    singular or ill-conditioned point).  With ``krawczyk=False`` (quadrature nodes, whose
    error the quadrature's estimate dominates) ``r`` is twice the last Newton correction:
    an estimate, not a bound.
    """
    try:
        C = np.linalg.inv(J)
    except np.linalg.LinAlgError as exc:
        raise PrecisionError("the M_k-valued equation is singular at this point") from exc
    absC = np.abs(C)
    n = len(u)
    with flint.ctx.workprec(prec):
        v = _acb_vec(u)
        scale = 1.0 + _norm(u)
        tiny = scale * 2.0 ** (8 - prec)
        last = None
        for _ in range(maxit):
            Fm, Fr = _float_parts(S.residual(v, z))
            d = C @ Fm
            nd = _norm(d)
            v = _mid(v - _acb_vec(d))
            if nd <= tiny or (last is not None and nd > 0.5 * last):
                break
            last = nd
        Fm, Fr = _float_parts(S.residual(v, z))
        cf = np.abs(C @ Fm) + absC @ Fr + (n + 2) * 8 * _U * (absC @ np.abs(Fm))
        r0 = float(np.max(cf)) * (1 + 2.0 ** -40)
        if not krawczyk:
            return v, max(2 * r0, tiny)
        vd = np.array([complex(float(a.real.mid()), float(a.imag.mid())) for a in v])
        shift = 4 * _U * np.abs(vd)            # |ũ − fl(ũ)|
        zi = IA(np.array(complex(float(z.real.mid()), float(z.imag.mid()))),
                np.array(float(z.rad()) + 4 * _U * abs(complex(float(z.real.mid()), float(z.imag.mid())))))
        for factor in (2.0, 4.0, 16.0, 256.0):
            r = max(factor * r0, tiny)
            JX = S.jacobian(IA(vd, shift + r), zi)
            K = IA(np.eye(n)) - IA(C) @ JX
            worst = float(np.max(np.sum(np.abs(K.mid) + K.rad, axis=1))) * (1 + 2.0 ** -40)
            if r0 + worst * r < r:
                return v, r
        raise PrecisionError(
            "the Krawczyk test of the M_k-valued equation failed (an ill-conditioned point: "
            "a support edge, an atom or a singular linearization)")
