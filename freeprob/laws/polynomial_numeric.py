r"""The numeric path of polynomial laws: density, cdf, quantiles, support without an exact
equation.

:class:`PolynomialNumeric` is a mixin of :class:`~freeprob.laws.polynomial.PolynomialLaw`.
Its numeric methods (``cauchy``, ``density``, ``cdf``, ``quantile``, ``support``, ``atoms``,
``cut_points``) take ``method=``:

* ``"auto"`` (default): the exact algebraic Cauchy equation when it can be derived
  (:mod:`freeprob.laws.polynomial_equation`), else the numeric path;
* ``"exact"``: the exact equation only (:class:`~freeprob.errors.NotAvailable` if none);
* ``"numeric"``: M_k-valued subordination on the linearization
  (:class:`~freeprob.numeric.ovcauchy.OperatorValuedCauchy`: Newton with an analytic
  Jacobian, continuation to the real axis, Krawczyk's a-posteriori bound; [BMS17]_,
  [HRS07]_, [AND13]_).

The numeric path needs every variable's algebraic Cauchy equation (all families and
operations of freeprob have one) and numeric parameters; it refuses ``ball=True`` (the
bound certifies the equation's solution, not the branch).  The spectrum of ``p`` lies in
``c_∅ ± Σ_{w ≠ ∅} |c_w| Π_{x ∈ w} ‖x‖`` (``‖x‖`` from the extent of each variable's law),
which sets the scales of the paths and of the support scan.

Source: [AND13]_, [BMS17]_, [HRS07]_, [MS17]_ ch. 9–10.
"""
from __future__ import annotations

import sympy as sp

from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.laws.law import Law, _no_raw_convergence_errors

__all__ = ["METHODS", "PolynomialNumeric"]

#: the accepted values of ``method=``
METHODS = ("auto", "exact", "numeric")


def _check_method(method, who):
    if method not in METHODS:
        raise FreeprobValueError(f"{who}: method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    return method


class PolynomialNumeric:
    """Mixin of :class:`~freeprob.laws.polynomial.PolynomialLaw`: the routes of the module
    docstring."""

    def _exact_or_none(self):
        """The exact equation, or the :class:`NotAvailable` it raised (cached: elimination is
        not retried)."""
        key = "cauchy_equation_failure"
        if key in self._cache:
            return self._cache[key]
        try:
            return Law.cauchy_equation(self)
        except NotAvailable as exc:
            self._cache[key] = exc
            return exc

    def cauchy_equation(self):
        r"""The irreducible algebraic Cauchy equation (as :meth:`Law.cauchy_equation`); the
        failure of the elimination is remembered, so that a second call fails at once.

        Raises
        ------
        NotAvailable
            No equation derived (the message says why; the numeric path needs none).
        """
        out = self._exact_or_none()
        if isinstance(out, NotAvailable):
            raise out
        return out

    def route(self) -> str:
        r"""``"exact"`` when the exact Cauchy equation is derived (``method="auto"`` uses it),
        else ``"numeric"``."""
        return "numeric" if isinstance(self._exact_or_none(), NotAvailable) else "exact"

    def _route(self, who, method):
        """The evaluator of ``method``: an :class:`~freeprob.numeric.cauchy.AlgebraicCauchy`
        or an :class:`~freeprob.numeric.ovcauchy.OperatorValuedCauchy`."""
        _check_method(method, f"{type(self).__name__}.{who}")
        self.check_numeric(who)
        if method != "numeric":
            eq = self._exact_or_none()
            if not isinstance(eq, NotAvailable):
                return Law._evaluator(self, who)
            if method == "exact":
                raise eq
        return self.numeric_evaluator()

    def _evaluator(self, who):
        return self._route(who, "auto")

    def spectrum_bounds(self):
        r"""``(lo, hi)`` (floats) containing the spectrum of ``p``: ``c_∅ ± Σ_{w≠∅} |c_w|
        Π ‖x‖`` with ``‖x‖ = max(|a|, |b|)`` over the extent ``[a, b]`` of each variable's
        law, widened by 1 %.

        Raises
        ------
        FreeprobValueError
            Free symbols.
        NotAvailable
            A variable whose extent is not available (no algebraic equation).
        """
        self.check_numeric("spectrum_bounds")
        norms = {}
        for name, law in self.variables:
            lo, hi = law._evaluator("spectrum_bounds").extent(dps=15)
            norms[name] = float(max(abs(lo), abs(hi)))
        c0 = complex(sp.N(self.polynomial.constant(), 20)).real
        total = 0.0
        for w, c in self.terms:
            if not w:
                continue
            term = abs(complex(sp.N(c, 20)))
            for letter in w:
                term *= norms[letter]
            total += term
        total = total * 1.01 + 1e-9 * (1 + abs(c0))
        return c0 - total, c0 + total

    def numeric_evaluator(self):
        r"""The :class:`~freeprob.numeric.ovcauchy.OperatorValuedCauchy` of this law
        (cached): the linearization with the variables' algebraic Cauchy evaluators.

        Raises
        ------
        FreeprobValueError
            Free symbols.
        NotAvailable
            A variable without an algebraic Cauchy equation (e.g. a polynomial law whose
            own equation was not derived: write the composite polynomial instead).
        """
        self.check_numeric("numeric_evaluator")
        hit = self._cache.get("numeric_evaluator")
        if hit is not None:
            return hit
        from freeprob.numeric.cauchy import AlgebraicCauchy
        from freeprob.numeric.ovcauchy import OperatorValuedCauchy
        evs = []
        for name, law in self.variables:
            try:
                ev = law._evaluator("numeric_evaluator")
            except NotAvailable as exc:
                raise NotAvailable(f"polynomial_law: the numeric path needs the algebraic Cauchy "
                                   f"equation of the variable {name!r} ({exc})") from None
            if not isinstance(ev, AlgebraicCauchy):
                raise NotAvailable(
                    f"polynomial_law: the variable {name!r} is itself a polynomial law without an "
                    "exact equation; write the composite polynomial in its variables instead")
            evs.append(ev)
        lin = self._lin()
        m = [complex(sp.N(v, 20)).real for v in self.moments(2)]
        sd = max(m[2] - m[1] ** 2, 0.0) ** 0.5
        lo, hi = self.spectrum_bounds()
        hit = OperatorValuedCauchy(lin.b0, lin.bs, evs, bounds=(lo, hi),
                                   scale=(m[1], sd if sd > 0 else (hi - lo) / 4))
        self._cache["numeric_evaluator"] = hit
        return hit

    # -- the numeric methods with method= ------------------------------------------------
    @_no_raw_convergence_errors
    def cauchy(self, z, *, dps=None, ball=False, method="auto"):
        r"""As :meth:`Law.cauchy <freeprob.laws.law.Law.cauchy>`, with ``method`` (module
        docstring); the numeric path refuses ``ball=True``."""
        dps = self._dps(dps, "cauchy")
        return self._route("cauchy", method).cauchy(z, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def density(self, x, *, dps=None, ball=False, rtol=None, method="auto"):
        r"""As :meth:`Law.density <freeprob.laws.law.Law.density>`, with ``method``; ``rtol``
        (a sorted sequence, no balls) takes the float fast path on the exact route and 15
        certified digits on the numeric one."""
        dps = self._dps(dps, "density")
        ev = self._route("density", method)
        if getattr(x, "ndim", None) == 1 and hasattr(x, "tolist"):
            x = x.tolist()          # a 1-D array (numpy's): the sequence of its points
        if rtol is not None:
            if not isinstance(x, list | tuple) or ball is not False:
                raise FreeprobValueError("density: rtol= takes a sorted sequence of points, without ball=True")
            from freeprob.numeric.cauchy import AlgebraicCauchy
            if isinstance(ev, AlgebraicCauchy):         # the exact route: its float fast path
                return ev.density_float(list(x), rtol=rtol)
            return ev.density_grid(list(x), dps=15)     # the numeric route: 15 certified digits
        if isinstance(x, list | tuple):
            return ev.density_grid(list(x), dps=dps, ball=ball)
        return ev.density(x, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def cdf(self, x, *, dps=None, ball=False, method="auto"):
        r"""As :meth:`Law.cdf <freeprob.laws.law.Law.cdf>`, with ``method``."""
        dps = self._dps(dps, "cdf")
        return self._route("cdf", method).cdf(x, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def quantile(self, p, *, dps=None, ball=False, method="auto"):
        r"""As :meth:`Law.quantile <freeprob.laws.law.Law.quantile>`, with ``method``."""
        dps = self._dps(dps, "quantile")
        return self._route("quantile", method).quantile(p, dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def support(self, *, dps=None, ball=False, method="auto"):
        r"""As :meth:`Law.support <freeprob.laws.law.Law.support>`, with ``method``; numeric
        edges are mpf."""
        dps = self._dps(dps, "support")
        return self._route("support", method).support(dps=dps, ball=ball)

    @_no_raw_convergence_errors
    def cut_points(self, *, dps=None, method="auto"):
        r"""As :meth:`Law.cut_points <freeprob.laws.law.Law.cut_points>`, with ``method``
        (the numeric path has none: :class:`NotAvailable`)."""
        dps = self._dps(dps, "cut_points")
        return self._route("cut_points", method).cut_points(dps=dps)

    @_no_raw_convergence_errors
    def atoms(self, *, dps=None, ball=False, method="auto"):
        r"""As :meth:`Law.atoms <freeprob.laws.law.Law.atoms>`, with ``method``.  The numeric
        path returns ``()`` when no variable has atoms ([MSW17]_: then ``p`` has none) and
        raises :class:`NotAvailable` otherwise."""
        dps = self._dps(dps, "atoms")
        ev = self._route("atoms", method)
        if ev is self._cache.get("numeric_evaluator"):
            return ev.atoms(dps=dps, ball=ball)
        return Law.atoms(self, dps=dps, ball=ball)
