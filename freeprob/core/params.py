r"""Parameter conversion and three-valued domain checks.

Every law parameter is stored as an exact sympy expression.

* int, :class:`fractions.Fraction`, python-flint ``fmpq``, sympy numbers and
  expressions (symbols allowed) are taken as they are.
* **Floats are converted to the exact rational they print as** (Python's shortest
  round-trip ``repr``): ``0.1`` becomes ``1/10``, ``2.5`` becomes ``5/2``; sympy
  ``Float`` atoms inside expressions are converted the same way, and so are mpmath
  numbers (from their ``str``).  This is the documented choice of freeprob: no
  binary-fraction surprises such as ``3602879701896397/36028797018963968``.  To get
  an irrational constant, pass a sympy expression (``sympy.E - 1``).
* Strings are accepted only as exact rational literals (``"1/3"``, ``"0.25"``);
  they are never evaluated as code.

Domain checks follow sympy's three-valued logic (``sympy/stats/rv.py``
``_value_check``): a check raises only when the condition is *provably* false, so a
plain ``Symbol('t')`` passes ``rate > 0`` and is recorded as a symbolic parameter.
"""
from __future__ import annotations

import decimal
import numbers
from fractions import Fraction

import flint
import mpmath
import sympy as sp

from freeprob._checks import DECIMAL, RATIONAL, as_fraction, check_int
from freeprob.errors import FreeprobValueError

__all__ = ["MAX_DPS", "MAX_ORDER", "as_exact", "check", "check_dps", "check_order", "check_unique"]

#: largest order accepted by the sequence and series methods of a law (raise it if you
#: need more).  Public name ``freeprob.laws.law.MAX_ORDER``: reading or setting it there reads
#: or sets this constant.
MAX_ORDER = 20_000
#: largest number of digits accepted by ``dps=`` (public name ``freeprob.laws.law.MAX_DPS``)
MAX_DPS = 50_000


def check_order(k, who: str) -> int:
    """Validate an order ``k``: an integer with ``0 <= k <= MAX_ORDER`` (bool rejected).

    Raises
    ------
    FreeprobValueError
        ``<who>: the order must be an integer from 0 to 20000 (freeprob.laws.law.MAX_ORDER);
        got -1``.
    """
    return check_int(k, who, "the order", minimum=0, maximum=MAX_ORDER, limit="freeprob.laws.law.MAX_ORDER")


def check_dps(dps, who: str):
    """Validate ``dps``: ``None`` (exact) or an integer with ``1 <= dps <= MAX_DPS``.

    Raises
    ------
    FreeprobValueError
        ``<who>: dps (decimal digits; None for exact) must be an integer from 1 to 50000
        (freeprob.laws.law.MAX_DPS); got 0``.
    """
    if dps is None:
        return None
    return check_int(dps, who, "dps (decimal digits; None for exact)", minimum=1, maximum=MAX_DPS,
                     limit="freeprob.laws.law.MAX_DPS")


def dps_or_default(dps, who: str) -> int:
    """``dps`` checked by :func:`check_dps`, or ``mpmath.mp.dps`` for ``None`` (the numeric
    entry points: ``None`` means the working precision there, not "exact").

    Raises
    ------
    FreeprobValueError
        As :func:`check_dps`.
    """
    import mpmath
    return mpmath.mp.dps if dps is None else check_dps(dps, who)


_RATIONAL, _DECIMAL = RATIONAL, DECIMAL      # the literals freeprob._checks.as_fraction reads


def as_exact(value, owner: str, name: str) -> sp.Expr:
    """Convert ``value`` to an exact sympy expression (see the module docstring).

    Raises
    ------
    FreeprobValueError
        For booleans, non-finite floats, complex Python numbers, strings that are not
        rational literals, and objects sympy cannot represent.
    """
    where = f"Parameter `{name}` of `{owner}`"
    if isinstance(value, bool):
        raise FreeprobValueError(f"{where} must be a number; got the boolean {value!r}")
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise FreeprobValueError(f"{where} must be finite; got {value!r}")
        return sp.Rational(str(value))
    if isinstance(value, flint.fmpq):
        return sp.Rational(int(value.p), int(value.q))
    if isinstance(value, flint.fmpz):
        return sp.Integer(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, sp.Basic):
        if not mpmath.isfinite(float(value)):
            raise FreeprobValueError(f"{where} must be finite; got {value!r}")
        f = as_fraction(value)          # the one float rule: the decimal it prints as
        return sp.Rational(f.numerator, f.denominator)
    if isinstance(value, mpmath.mpf):
        if not mpmath.isfinite(value):
            raise FreeprobValueError(f"{where} must be finite; got {value!r}")
        return sp.Rational(str(value))
    if isinstance(value, complex | mpmath.mpc):
        raise FreeprobValueError(f"{where} must be real; got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if not (_RATIONAL.fullmatch(text) or _DECIMAL.fullmatch(text)):
            raise FreeprobValueError(
                f"{where}: strings must be exact rational literals such as '1/3' or '0.25' "
                f"(exponent at most 4 digits); got {value!r} (pass sympy objects for symbols "
                "and constants)"
            )
        f = as_fraction(text)
        if f is None:
            raise FreeprobValueError(f"{where}: {value!r} is not a valid rational number")
        return sp.Rational(f.numerator, f.denominator)
    if isinstance(value, sp.Basic):
        expr = value
        if expr.has(sp.Float):
            expr = expr.xreplace({f: sp.Rational(str(f)) if f.is_finite else f
                                  for f in expr.atoms(sp.Float)})
        if expr.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
            raise FreeprobValueError(f"{where} must be finite; got {value!r}")
        if not isinstance(expr, sp.Expr) or isinstance(expr, sp.MatrixBase):
            raise FreeprobValueError(f"{where} must be a number or sympy expression; got {value!r}")
        return expr
    raise FreeprobValueError(
        f"{where} must be a number or sympy expression; got {type(value).__name__} {value!r}"
    )


def sign(expr):
    """Sign of a real sympy expression: +1, -1, 0, or ``None`` when undecidable.

    Numbers without symbols are decided numerically at 60 digits (never by sympy's
    unbounded ``evalf`` loop on cancelling expressions); a value within 1e-50 of zero
    is decided only if it is structurally zero.  Symbolic expressions use sympy's
    assumptions.
    """
    expr = sp.sympify(expr)
    if expr.is_Rational:
        return 1 if expr > 0 else (-1 if expr < 0 else 0)
    if expr.is_number:
        val = expr.evalf(60, maxn=200, strict=False)
        if val.is_real is False or not val.is_Number:
            return None
        if abs(val) > sp.Float("1e-50"):
            return 1 if val > 0 else -1
        return 0 if expr.is_zero else None
    if expr.is_positive:
        return 1
    if expr.is_negative:
        return -1
    if expr.is_zero:
        return 0
    return None


def _nonzero(e):
    s = sign(e)
    if s is None:
        return None
    return s != 0


_RULES = {
    "positive": ("must be positive", lambda e: None if sign(e) is None else sign(e) > 0),
    "nonnegative": ("must be non-negative", lambda e: None if sign(e) is None else sign(e) >= 0),
    "nonzero": ("must be non-zero", _nonzero),
    "real": ("must be real", lambda e: e.is_real),
}


def check(expr: sp.Expr, rule: str, owner: str, name: str) -> sp.Expr:
    """Raise if ``expr`` provably violates ``rule``; return it otherwise.

    ``rule`` is one of ``positive``, ``nonnegative``, ``nonzero``, ``real``.  A
    non-real value always fails.  Undecidable (symbolic) values pass.
    """
    text, predicate = _RULES[rule]
    if expr.is_real is False:
        raise FreeprobValueError(f"Parameter `{name}` of `{owner}` must be real; got {expr}")
    if predicate(expr) is False:
        raise FreeprobValueError(f"Parameter `{name}` of `{owner}` {text}; got {expr}")
    return expr


def check_unique(items, what, key=None, same="the same value"):
    r"""Refuse a list of settings that names one value twice (one message everywhere:
    the ``--configs``, ``--schemes``, ``--objects``, ``--n``, ``--beta`` flags and
    :class:`freeprob.experiments.verify.VerifySettings`).

    Parameters
    ----------
    items : sequence
        The values as given.
    what : str
        What the list is, for the message (``"--configs"``, ``"configs"``); empty for
        argparse, which names the flag itself.
    key : callable, optional
        Normal form of an item (``"mqa"`` and ``"gqa:1"`` are one scheme; ``0.5`` and
        ``1/2`` one β; ``"GPT2-small"`` is ``"gpt2-small"``); default the item itself.
    same : str
        What two items with one normal form are, for the message (default ``"the same
        value"``; e.g. ``"the same sharing for 'tiny' (2 heads)"``).

    Returns
    -------
    tuple
        ``items`` as a tuple.

    Raises
    ------
    FreeprobValueError
        Two items with the same normal form: ``configs lists 'gpt2-small' twice; give
        each value once`` (or ``lists 'mqa' and 'gqa:1', the same value``).

    Source: this project's input rules (docs/guide/verify.md).
    """
    items = tuple(items)
    seen = {}
    for item in items:
        k = item if key is None else key(item)
        if k in seen:
            first = seen[k]
            both = f"{item!r} twice" if first == item else f"{first!r} and {item!r}, {same}"
            raise FreeprobValueError(f"{what + ' ' if what else ''}lists {both}; give each value once")
        seen[k] = item
    return items
