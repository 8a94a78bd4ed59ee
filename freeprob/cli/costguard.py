r"""The cost of exact sequences with symbolic coefficients, measured before it is paid.

Exact moments and cumulants of laws with rational (or algebraic, ``√2``) parameters run
in FLINT and take milliseconds at order 200.  With free symbols (``t``, ``θ1``) or
transcendental constants (``e``, ``pi``) the coefficients are rational functions (FLINT
multivariate polynomials, :class:`~freeprob.core.coefficients.MpolyRing`) whose size grows
with the order, so the cost grows like ``order^3`` to ``order^7`` and depends on the law far
more than on the number of symbols (exact moments, measured 2026-12-02 on 2 cores shared
with other jobs, load average 16; a quiet machine is about 3–5 times faster):

=====================================================  ======  ======  ======  ======
law                                                    30      40      50      80
=====================================================  ======  ======  ======  ======
``FreePoisson(t)`` (``FreePoisson(E)`` the same)       0.08 s          0.13 s  0.31 s
``free_add(Semicircle(0, s), FreePoisson(t))``         0.21 s  0.40 s
``free_mul(FreePoisson(t1), FreePoisson(t2))``         0.22 s          2.3 s   24 s
``attention_law(heads=1, gamma_k=c, …)`` (c, θ1, θ2)   7.0 s
``free_mul(FreePoisson(t), Semicircle(0, 1))``         19 s
=====================================================  ======  ======  ======  ======

(``FreePoisson(t)`` at order 120: 0.95 s; at 200: 3.4 s.)  A fixed order limit
per number of symbols would be wrong by a factor 100 either way, so :func:`guard_exact_cost`
measures: it computes the requested sequences at order 8, then 16, …, while each step
is cheap, extrapolates the measured growth to the requested order and refuses up front
when that exceeds :data:`SYMBOLIC_BUDGET_SECONDS` (naming the estimate, the measurements
and the options that force it); otherwise, or when the user forced it, it announces an
estimate above a few seconds on stderr before computing.  The measured orders cost a
small fraction of the whole (the cost grows about 20-fold per doubling of the order).
Python callers compute what they ask for (``Law.moments`` has only the order limit
``freeprob.laws.law.MAX_ORDER``); this guard serves the command line.
"""
from __future__ import annotations

import math
import sys
import time

from freeprob.core.coefficients import SymbolicRing
from freeprob.experiments.cost import human_time, large_allowed
from freeprob.errors import FreeprobValueError

__all__ = ["SYMBOLIC_BUDGET_SECONDS", "symbolic_coefficients", "guard_exact_cost"]

#: exact symbolic sequences projected to take longer than this (seconds) need --force
SYMBOLIC_BUDGET_SECONDS = 60.0
#: the first order measured (orders up to it are never guarded); low, since a law with
#: several symbols can take minutes at order 24 (a four-parameter output law: order 12 in
#: 4 s, order 18 in 41 s), and the measured orders are cached on the law, so probing costs
#: little
PROBE_ORDER = 8
#: estimates above this (seconds) are announced on stderr
_ANNOUNCE_SECONDS = 5.0


def symbolic_coefficients(law):
    """The generators of the exact coefficients of ``law`` when its sequences run in sympy's
    generic rational-function arithmetic (free symbols, ``e``, ``pi``), as a list of sympy
    objects; ``None`` when they run in FLINT or an algebraic number field (rational or
    ``√2``-type parameters: fast)."""
    ring = law._exact_ring()
    if not isinstance(ring, SymbolicRing) or ring.domain.is_AlgebraicField:
        return None
    gens = getattr(ring.domain, "symbols", None) or getattr(ring.domain, "gens", ())
    return [ring._backward.get(g, g) for g in gens] or None


def guard_exact_cost(law, methods, order, *, who, forced=False, stream=None,
                     budget=None):
    r"""Refuse, before computing, an exact symbolic sequence that would take too long.

    Parameters
    ----------
    law : Law
    methods : sequence of str
        The :class:`~freeprob.laws.law.Law` methods to be called with ``order`` (``"moments"``,
        ``"free_cumulants"``, …).
    order : int
        The requested order.
    who : str
        The command, for the message (``"freeprob moments"``).
    forced : bool, keyword-only
        The user accepted any cost (``--force`` or an explicit ``--max-order``; also inside
        :func:`freeprob.experiments.cost.allow_large`): only announce the estimate.
    stream : file, optional
        Where the estimate is announced (default ``sys.stderr``).
    budget : float, optional
        Seconds (default :data:`SYMBOLIC_BUDGET_SECONDS`).

    Returns
    -------
    None
        The computation may go ahead (the measured orders are cached on ``law``).

    Raises
    ------
    FreeprobValueError
        If the coefficients are symbolic and the cost extrapolated from measurements at
        orders 8, 16, 32, … exceeds ``budget``; the message gives the estimate, the
        measurements and the options (``--force``, ``--max-order``, a lower ``--order``,
        ``--dps`` with numeric parameters).

    Notes
    -----
    With ``t_n`` the time at order ``n``, the exponent is ``p = log2(t_{2n}/t_n)`` clipped
    to ``[4.5, 8]``, or ``4 + (number of generators)`` (at most 7) after one measurement
    (the terms of a coefficient grow like ``order^{generators}``), and the estimate
    ``t_n (order/n)^p``.  A next step is measured only while it is itself cheap
    (``t_n 2^p ≤ budget/8``).  Source: the measurements in this module's docstring; the
    estimates were within a factor 5 of them (mostly above).
    """
    gens = symbolic_coefficients(law)
    if gens is None or order <= PROBE_ORDER:
        return
    forced = forced or large_allowed()
    budget = SYMBOLIC_BUDGET_SECONDS if budget is None else budget
    stream = sys.stderr if stream is None else stream
    names = ", ".join(map(str, gens))
    seen = []
    n, p = PROBE_ORDER, min(7.0, 4.0 + len(gens))
    while True:
        t0 = time.perf_counter()
        for m in methods:
            getattr(law, m)(n)
        dt = max(time.perf_counter() - t0, 1e-3)
        if seen:
            p = min(8.0, max(4.5, math.log2(dt / seen[-1][1])))
        seen.append((n, dt))
        estimate = dt * (order / n) ** p
        if estimate <= budget or forced:
            break
        if 2 * n >= order or dt * 2**p > budget / 8:
            measured = ", ".join(f"order {k} in {t:.2f} s" for k, t in seen)
            numeric = ("substitute numbers for the symbols and use --dps N" if law.free_symbols
                       else "use --dps N for certified digits")
            raise FreeprobValueError(
                f"{who}: exact values to order {order} with symbolic coefficients ({names}) "
                f"would take about {human_time(estimate)} (measured: {measured}; the cost "
                f"grows like order^{p:.1f} in exact rational-function arithmetic), beyond the "
                f"{budget:.0f} s allowed without confirmation; pass --force (or --max-order "
                f"{order}) to compute anyway, ask for a lower --order, or {numeric}")
        n *= 2
    if estimate > _ANNOUNCE_SECONDS:
        print(f"{who}: exact values to order {order} with symbolic coefficients ({names}): "
              f"about {human_time(estimate)} (measured order {seen[-1][0]} in "
              f"{seen[-1][1]:.2f} s)", file=stream, flush=True)
