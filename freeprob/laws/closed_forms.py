r"""Closed-form transforms of a law: R-, S-, χ- and Cauchy transforms as sympy expressions.

The four functions here are methods of :class:`~freeprob.laws.law.Law` (``law.py`` binds
them in its class body; this module imports only the core, so there is no cycle).  Each
reads the law's own closed form (``_r_closed``, ``_s_closed``, ``_cauchy_closed``, set by
the families and operations that know one) and refuses with ``NotAvailable`` otherwise,
naming the series method that always works.  Conventions: Mingo & Speicher, ch. 2–3
(R- and S-transforms), Nica & Speicher, Lecture 18 (S-transform).
"""
from __future__ import annotations

import sympy as sp

from freeprob.core.symbols import u as _u
from freeprob.errors import NotAvailable

__all__ = []          # the functions are documented as methods of freeprob.laws.law.Law


def r_transform(self):
    r"""Closed-form R-transform ``R(w)`` (sympy, in :data:`freeprob.core.symbols.w`).

    Raises
    ------
    NotAvailable
        If no closed form is known for this law (use :meth:`r_series`).
    """
    r = self._r_closed()
    if r is None:
        raise NotAvailable(f"{type(self).__name__}: no closed-form R-transform; use r_series(order)")
    return r


def s_transform(self):
    r"""Closed-form S-transform ``S(u)`` (sympy, in :data:`freeprob.core.symbols.u`).

    Raises
    ------
    NotAvailable
        If no closed form is known (use :meth:`s_series`).
    """
    s = self._s_closed()
    if s is None:
        raise NotAvailable(f"{type(self).__name__}: no closed-form S-transform; use s_series(order)")
    return s


def chi_transform(self):
    r"""Closed-form χ-transform ``χ(u) = S(u) u/(1+u)`` (from :meth:`s_transform`)."""
    return sp.simplify(self.s_transform() * _u / (1 + _u))


def cauchy_transform(self):
    r"""Closed-form Cauchy transform ``G(z) = ∫ dμ(x)/(z − x)`` (sympy, in ``z``).

    Square roots are written so that the principal branch gives ``G(z) ~ 1/z``
    for large real ``z``.

    Raises
    ------
    NotAvailable
        If no closed form is known (use :meth:`cauchy_series`).
    """
    g = self._cauchy_closed()
    if g is None:
        raise NotAvailable(f"{type(self).__name__}: no closed-form Cauchy transform; use cauchy_series(order)")
    return g
