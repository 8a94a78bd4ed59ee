r"""The argument checks shared by every layer: integers in a range, finite reals, a choice
from a list, the inverse temperature ``β``, and exact fractions from the standard library.

Standard library only, and it imports nothing from freeprob but :mod:`freeprob.errors`, so
the sampler (numpy only) uses it as well as the exact layers.  One wording everywhere:

* ``<who>: <name> must be an integer ≥ 1; got 0`` (a lower bound only), or ``… must be an
  integer from 0 to 20000 (freeprob.laws.law.MAX_ORDER); got 30000`` (a range; the limit's
  home is named so that it can be raised), the same phrase as the command line's
  ``expected an integer from 1 to 50000 (freeprob.laws.law.MAX_DPS)``;
* ``<who>: <name> must be a finite real number ≥ 0; got -1``;
* ``<who>: <name> must be one of ('a', 'b'); got 'c'``;
* in a list, the bad item by its place and value: ``<who>: item 2 of <name> must be an
  integer ≥ 64; got 'abc'`` (:func:`check_ints`, :func:`check_reals`).

``who`` is the function or class the caller called; ``name`` the argument.  Either may be
empty, and ``name`` may carry its own wording (``"`n` of `Dimensions`"``).

Source: this project's input rules (issue #16: one validator per job).
"""
from __future__ import annotations

import math
import numbers
import re
from fractions import Fraction

from freeprob.errors import FreeprobValueError

__all__ = ["as_fraction", "check_beta", "check_choice", "check_int", "check_ints", "check_real",
           "check_reals", "describe_int", "parse_beta", "subject"]

#: decimal and rational literals accepted as exact numbers (exponent at most 4 digits, so
#: that no literal builds a huge integer)
DECIMAL = re.compile(r"[+-]?(\d{1,4000}(\.\d{0,4000})?|\.\d{1,4000})([eE][+-]?\d{1,4})?")
RATIONAL = re.compile(r"[+-]?\d{1,4000}(/\d{1,4000})?")


def subject(who, name) -> str:
    """How a message names the argument: ``"who: name"``, or whichever of the two is given.

    Raises nothing.  Source: this module.
    """
    if who and name:
        return f"{who}: {name}"
    return who or name or "value"


def describe_int(minimum=None, maximum=None, limit=None) -> str:
    """The allowed integers in words: ``an integer ≥ 1``, ``an integer from 1 to 50000
    (freeprob.laws.law.MAX_DPS)`` (``limit`` names where the maximum lives), ``an integer``.

    Raises nothing.  Source: this module.
    """
    if maximum is not None:
        low = "" if minimum is None else f"from {minimum} "
        text = f"an integer {low}to {maximum}" if low else f"an integer ≤ {maximum}"
        return text + (f" ({limit})" if limit else "")
    return "an integer" if minimum is None else f"an integer ≥ {minimum}"


def check_int(value, who, name, *, minimum=None, maximum=None, limit=None) -> int:
    """``value`` as an ``int`` if it is an integer (``numbers.Integral``, bool refused) with
    ``minimum ≤ value ≤ maximum`` (either bound optional).

    Raises
    ------
    FreeprobValueError
        ``<who>: <name> must be <describe_int(...)>; got <value>``.  Above a maximum that
        has a ``limit`` name, the message adds how to raise it.

    Source: this module (the one integer check of every layer).
    """
    ok = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return int(value)
    text = f"{subject(who, name)} must be {describe_int(minimum, maximum, limit)}; got {value!r}"
    if ok and maximum is not None and value > maximum and limit:
        text += f" (raise {limit} explicitly if you really need more)"
    raise FreeprobValueError(text)


def _bound(minimum, maximum, strict):
    lo = "" if minimum is None else f" {'>' if strict else '≥'} {minimum}"
    hi = "" if maximum is None else (f" and ≤ {maximum}" if lo else f" ≤ {maximum}")
    return lo + hi


def check_real(value, who, name, *, minimum=None, maximum=None, strict=False) -> float:
    """``value`` as a finite ``float`` (bool and complex refused; strings of numbers
    accepted) with ``minimum ≤ value ≤ maximum`` (``minimum < value`` if ``strict``).

    Raises
    ------
    FreeprobValueError
        ``<who>: <name> must be a finite real number ≥ 0; got -1``.

    Source: this module.
    """
    text = f"{subject(who, name)} must be a finite real number{_bound(minimum, maximum, strict)}"
    if isinstance(value, bool) or (isinstance(value, numbers.Complex)
                                   and not isinstance(value, numbers.Real)):
        raise FreeprobValueError(f"{text}; got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise FreeprobValueError(f"{text}; got {value!r}") from None
    if not math.isfinite(v) or (minimum is not None and (v <= minimum if strict else v < minimum)) \
            or (maximum is not None and v > maximum):
        raise FreeprobValueError(f"{text}; got {value!r}")
    return v


def _items(value):
    """The items of a list setting: a comma-separated string (items stripped; an empty item
    stays, to be refused by its check), a list/tuple, or one value alone."""
    if isinstance(value, str):
        return [t.strip() for t in value.split(",")]
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def _item_name(name, i, count):
    return f"item {i} of {name}" if count > 1 else name


def check_ints(value, who, name, *, minimum=None, maximum=None, limit=None) -> tuple:
    """Every item of a list of integers (:func:`check_int`), named by its place when one is
    bad: ``explore beta-growth: item 2 of --ns must be an integer ≥ 64; got 'abc'``.

    ``value`` is a comma-separated string (``"256,512"``; decimal integer items), a list or
    tuple, or one integer.

    Raises
    ------
    FreeprobValueError
        An empty list, or the first bad item (its place, the allowed values, the item).

    Source: this module (the one list check of every layer and of the command line).
    """
    items = _items(value)
    if not items:
        raise FreeprobValueError(f"{subject(who, name)} must list at least one {describe_int(minimum, maximum)}; "
                                 "got none")
    out = []
    for i, v in enumerate(items, 1):
        if isinstance(v, str) and re.fullmatch(r"[+-]?\d{1,100}", v):
            v = int(v)
        out.append(check_int(v, who, _item_name(name, i, len(items)), minimum=minimum, maximum=maximum,
                             limit=limit))
    return tuple(out)


def check_reals(value, who, name, *, minimum=None, maximum=None, strict=False) -> tuple:
    """Every item of a list of finite reals (:func:`check_real`), named by its place when
    one is bad: ``item 2 of epsilons must be a finite real number > 0 and ≤ 1; got 'x'``.

    ``value`` is a comma-separated string, a list or tuple, or one number.

    Raises
    ------
    FreeprobValueError
        An empty list, or the first bad item.

    Source: this module.
    """
    items = _items(value)
    if not items:
        raise FreeprobValueError(f"{subject(who, name)} must list at least one number; got none")
    return tuple(check_real(v, who, _item_name(name, i, len(items)), minimum=minimum, maximum=maximum,
                            strict=strict) for i, v in enumerate(items, 1))


def check_choice(value, allowed, who, name, *, hint=""):
    """``value`` if it is one of ``allowed`` (strings compared exactly).

    Raises
    ------
    FreeprobValueError
        ``<who>: <name> must be one of ('a', 'b'); got 'c'`` (plus ``hint``).

    Source: this module.
    """
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        raise FreeprobValueError(f"{subject(who, name)} must be one of {allowed}; got {value!r}{hint}")
    return value


def as_fraction(value):
    """``int``/``Fraction`` for an exact rational given without sympy, else ``None``.

    Integers, fractions, floats (the decimal they print as: ``0.1`` is ``1/10``, the
    rule of :func:`freeprob.core.params.as_exact`) and strings that are rational or decimal
    literals (``"1/3"``, ``"0.25"``, exponent at most 4 digits).  Booleans, non-finite
    floats, sympy objects and anything else give ``None``.

    Raises nothing (``None`` for anything else).  Source: the float rule of
    :func:`freeprob.core.params.as_exact`.
    """
    if isinstance(value, bool) or type(value).__module__.split(".")[0] == "sympy":
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Real):
        if not math.isfinite(float(value)):
            return None
        text = str(value)   # e.g. numpy.float32(0.1) prints as 0.1
        if DECIMAL.fullmatch(text) and float(type(value)(text)) == float(value):
            return Fraction(text)
        return Fraction(repr(float(value)))
    if isinstance(value, str):
        text = value.strip()
        if RATIONAL.fullmatch(text) or DECIMAL.fullmatch(text):
            try:
                return Fraction(text)
            except (ValueError, ZeroDivisionError):
                return None
    return None


def check_beta(beta, who, name="beta") -> float:
    """A float inverse temperature ``β``: finite and ``≥ 0`` (the sampler's rule; exact
    and symbolic ``β`` are checked by :class:`freeprob.attention.architecture.Architecture`).

    Raises ``FreeprobValueError`` (non-real, non-finite or negative ``β``).  Source: [HK26]_ §2.
    """
    return check_real(beta, who, name, minimum=0)


def parse_beta(beta, who, *, minimum, maximum, why="") -> Fraction:
    """An exact ``β`` (:func:`as_fraction`) with ``minimum ≤ β ≤ maximum``.

    Raises
    ------
    FreeprobValueError
        Not a number (``e.g. 1, 0.5 or 1/2``; a decimal exponent of more than 4 digits is
        named as such), or outside the range (``why`` says where the range comes from).

    Source: [HK26]_ §2 (β), this module.
    """
    where = subject(who, "beta")
    b = as_fraction(beta)
    if b is None and type(beta).__module__.split(".")[0] == "sympy":
        b = as_fraction(str(beta))                       # a sympy Rational such as 1/2
    if b is None:
        text = str(beta)
        exponent = re.search(r"[eE][+-]?0*(\d+)", text)
        more = (" with a decimal exponent of more than 4 digits"
                if isinstance(beta, str | float) and exponent and len(exponent.group(1)) > 4 else "")
        raise FreeprobValueError(f"{where} must be a number in [{minimum}, {maximum}] (e.g. 1, 0.5 or 1/2); "
                                 f"got {text[:40]!r}{more}")
    if not minimum <= b <= maximum:
        raise FreeprobValueError(f"{where} must satisfy {minimum} ≤ β ≤ {maximum}{why}; got {beta!r}")
    return Fraction(b)
