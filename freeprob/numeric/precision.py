"""The precision escalation shared by the certified evaluations of :mod:`freeprob.numeric`.

A value is computed twice, at ``dps + guard`` and at ``dps + 2·guard`` digits, and accepted
when the two agree to ``dps`` digits; on disagreement the guard is doubled, from
``GUARD_DPS`` up to ``MAX_GUARD_DPS``, then :class:`~freeprob.errors.PrecisionError`.
"""
from __future__ import annotations

from freeprob.errors import PrecisionError
from freeprob.numeric.rootkernel import GUARD_DPS, MAX_GUARD_DPS, _bits


def escalate(dps, attempt, failure, *, extra_bits=0):
    """The first result other than ``None`` of ``attempt(p1, p2)`` for the guards
    ``g = GUARD_DPS, 2·GUARD_DPS, 4·GUARD_DPS, … ≤ MAX_GUARD_DPS``, with
    ``p1 = bits(dps + g) + extra_bits`` and ``p2 = bits(dps + 2g) + extra_bits``.

    ``attempt`` computes the value at ``p1`` and at ``p2`` bits and returns it when the two
    agree to ``dps`` digits, else ``None``.  Raises :class:`PrecisionError` with the message
    ``failure()`` when no guard gives agreement.

    >>> escalate(10, lambda p1, p2: (p1, p2) if p1 > 100 else None, lambda: "no")
    (107, 174)

    Source: this project's design (two evaluations at rising guard digits).
    """
    guard = GUARD_DPS
    while guard <= MAX_GUARD_DPS:
        out = attempt(_bits(dps + guard) + extra_bits, _bits(dps + 2 * guard) + extra_bits)
        if out is not None:
            return out
        guard *= 2
    raise PrecisionError(failure())
