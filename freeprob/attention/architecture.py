r"""One multi-head attention layer: heads, widths and the key/value sharing scheme.

:class:`Architecture` is the one class for a layer, used by the exact laws
(:mod:`freeprob.attention.laws`), the float64 sampler (:mod:`freeprob.sampler`) and the
experiments (``ModelConfig`` is a named catalogue entry around one).  It holds the
number of heads, the total width ratios ``γ_K = h d_K/n``, ``γ_V = h d_V/n``,
``γ_O = d_O/n``, the inverse temperature ``β`` (optional) and the sharing scheme, and,
when built from sizes, the sizes ``n, d_K, d_V, d_O, d`` themselves.  The sharing rules
(schemes, ``kv_groups``, tying) are written here once.

:class:`Dimensions` is the sampler's name for a layer built from integer sizes: a thin
subclass whose constructor takes ``(n, heads, d_k, d_v, d_o, d=None, scheme=...,
kv_groups=None)``.

This module imports only the standard library and :mod:`freeprob.errors`, so that the
sampler can use it without the exact stack.  Exact rational numbers are stored as
``int`` or :class:`fractions.Fraction` (equal to the sympy rationals they stand for);
sympy is imported only, inside functions, for symbolic values and for ``θ1``, ``θ2``.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from freeprob._checks import as_fraction
from freeprob.errors import FreeprobValueError

__all__ = ["Architecture", "Dimensions", "SCHEMES"]

#: key/value sharing schemes of :class:`Architecture` (theory.md §3.4–3.5)
SCHEMES = ("independent", "gqa", "shared_keys", "tied")

_SIZES = ("n", "d_k", "d_v", "d_o")
# ``int``/``Fraction`` for an exact rational given without sympy, else ``None`` (the one rule)
_plain = as_fraction


def exact(value, owner, name):
    """``value`` as an exact number: ``int``/``Fraction`` for rationals, else a sympy
    expression (:func:`freeprob.core.params.as_exact`, imported only then).

    Raises ``FreeprobValueError`` for a value that is not a number or expression (as
    :func:`freeprob.core.params.as_exact`).  Source: this module (the rule of ``as_exact``).
    """
    plain = _plain(value)
    if plain is not None:
        return plain
    from freeprob.core.params import as_exact
    v = as_exact(value, owner, name)
    if v.is_Integer:
        return int(v)
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    return v


def _symbolic(v):
    return not isinstance(v, int | Fraction)


def _ratio(a, b):
    """``a/b`` exactly: a Fraction for numbers, a simplified sympy expression otherwise."""
    if _symbolic(a) or _symbolic(b):
        import sympy as sp
        r = sp.simplify(sp.sympify(a) / sp.sympify(b))
        return Fraction(int(r.p), int(r.q)) if r.is_Rational else r
    return Fraction(a) / b


def _text(v):
    return str(v)


@dataclass(frozen=True, repr=False)
class Architecture:
    r"""A multi-head attention layer in the proportional limit, shared by laws, samplers
    and experiments.

    Parameters
    ----------
    heads : int or positive sympy symbol
        Number of heads ``h``.
    gamma_k, gamma_v, gamma_o : number or positive sympy expression
        Total width ratios ``γ_K = h d_K/n`` (queries/keys), ``γ_V = h d_V/n`` (values),
        ``γ_O = d_O/n`` (output), ``n`` the number of tokens.  Exact (floats are read
        as the decimal they print as) or symbolic.  Rationals are stored as ``int`` or
        :class:`fractions.Fraction`, other values as sympy expressions.
    beta : number, sympy expression or None
        Softmax inverse temperature ``β ≥ 0``; ``None`` leaves ``θ1``, ``θ2`` as the
        free symbols ``theta1``, ``theta2`` (moments are then polynomials in them).
    scheme : {"independent", "gqa", "shared_keys", "tied"}
        ``"independent"`` heads; ``"gqa"``, grouped-query attention with ``kv_groups``
        groups of consecutive heads sharing ``K`` and ``V`` (multi-query attention is
        ``kv_groups=1``); ``"shared_keys"``, one key matrix for all heads (values
        independent); ``"tied"``, within-head tying ``W_V = W_K`` (needs ``d_V = d_K``,
        i.e. ``γ_V = γ_K``).
    kv_groups : int, optional
        ``h_KV`` for ``scheme="gqa"``; must divide ``h``.  For the other schemes omit it
        (or give the value the scheme implies).
    n, d_k, d_v, d_o, d : int or positive sympy symbol, optional
        Sizes, present when the layer is built from them (:meth:`from_dimensions`,
        :class:`Dimensions`): tokens, per-head key and value widths, output width and
        input width (``d ≥ n``, default ``n``).  The ratios are then ``h d_K/n`` etc.
        (sympy expressions when a size is a symbol; :class:`Dimensions` takes integers).

    Attributes
    ----------
    theta1, theta2 : sympy expressions
        The GE constants (:func:`freeprob.attention.ge_coefficients`), or the free symbols.
    c_k, c_v
        Per-head ratios ``d_K/n = γ_K/h`` and ``d_V/n = γ_V/h``.
    key_groups, value_groups
        Number of distinct key / value matrices.

    Raises
    ------
    FreeprobValueError
        For ``β < 0`` or non-real, ratios ``≤ 0``, ``h`` not a positive integer, an
        unknown scheme, ``h`` not divisible by ``h_KV``, ``kv_groups`` given for another
        scheme, tying with ``γ_V ≠ γ_K``, or sizes that are not positive integers.

    Source: theory.md §1 (notation), [HK26]_ §2.

    >>> arch = Architecture(heads=12, gamma_k=1, gamma_v=1, gamma_o=1, beta=1)
    >>> arch.c_k, arch.theta1
    (Fraction(1, 12), -1 + E)
    >>> Architecture.from_dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32).label()
    'h=4 dK=8 dV=8 dO=32'
    """

    heads: object
    gamma_k: object
    gamma_v: object
    gamma_o: object
    beta: object = None
    scheme: str = "independent"
    kv_groups: object = None
    n: int | None = None
    d_k: int | None = None
    d_v: int | None = None
    d_o: int | None = None
    d: int | None = None

    #: how an error message names a parameter (:class:`Dimensions` words it its own way)
    _MESSAGE = "{owner}: {name} {text}"

    # -- validation (the rules of a layer, written once) ---------------------------------
    @classmethod
    def _fail(cls, owner, name, text):
        raise FreeprobValueError(cls._MESSAGE.format(owner=owner, name=name, text=text))

    @classmethod
    def _size(cls, value, owner, name, *, symbolic=False):
        if symbolic and type(value).__module__.split(".")[0] == "sympy" and not value.is_number:
            # a symbolic size (finite-width laws exact in d_K, n, ...): declared positive
            if value.is_positive is not True:
                cls._fail(owner, name, f"must be declared positive when symbolic, e.g. "
                          f"sympy.Symbol('{name}', positive=True); got {value!r}")
            return value
        if type(value).__module__.split(".")[0] == "sympy" and getattr(value, "is_Integer", False):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
            allowed = " or a positive sympy symbol" if symbolic else ""
            cls._fail(owner, name, f"must be a positive integer{allowed}; got {value!r}")
        return int(value)

    @classmethod
    def _positive(cls, value, owner, name, *, integer=False):
        if isinstance(value, bool):
            cls._fail(owner, name, f"must be a {'positive integer' if integer else 'real number > 0'}"
                      f"; got the boolean {value!r}")
        if integer and not (isinstance(value, numbers.Integral)
                            or type(value).__module__.split(".")[0] == "sympy"):
            # counts are integers as given (2.0 was accepted for kv_groups, refused for d_k)
            cls._fail(owner, name, f"must be a positive integer; got {value!r}")
        v = exact(value, owner, name)
        if not _symbolic(v):
            if integer and not (isinstance(v, int) or v.denominator == 1) or v <= 0:
                cls._fail(owner, name, f"must be a {'positive integer' if integer else 'real number > 0'}"
                          f"; got {value!r}")
            return int(v) if integer else v
        from freeprob.core.params import sign
        if v.is_number:
            if integer or not v.is_real or sign(v) <= 0:
                cls._fail(owner, name, f"must be a {'positive integer' if integer else 'real number > 0'}"
                          f"; got {value!r}")
        elif v.is_positive is not True:
            cls._fail(owner, name, f"must be declared positive when symbolic, e.g. "
                      f"sympy.Symbol('{name}', positive=True); got {value!r}")
        return v

    def __post_init__(self):
        own = type(self).__name__
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        set_("heads", self._positive(self.heads, own, "heads", integer=True))
        sizes = [getattr(self, k) for k in _SIZES]
        if any(s is not None for s in sizes):
            if any(s is None for s in sizes):
                self._fail(own, "n, d_k, d_v, d_o", "are given together or not at all")
            if _symbolic(self.heads):
                self._fail(own, "heads", f"must be an integer when sizes are given; got {self.heads!r}")
            for k in _SIZES:
                set_(k, self._size(getattr(self, k), own, k, symbolic=True))
            d = self.n if self.d is None else self._size(self.d, own, "d", symbolic=True)
            if not (_symbolic(d) or _symbolic(self.n)) and d < self.n:
                self._fail(own, "d", f"must be >= n (X has n orthogonal rows in R^d); got d={d}, n={self.n}")
            set_("d", d)
            ratios = dict(gamma_k=_ratio(self.heads * self.d_k, self.n),
                          gamma_v=_ratio(self.heads * self.d_v, self.n),
                          gamma_o=_ratio(self.d_o, self.n))
            for k, r in ratios.items():
                given = getattr(self, k)
                if given is not None and _simplify_difference(self._positive(given, own, k), r) != 0:
                    self._fail(own, k, f"is {given} but the sizes give {r}")
                set_(k, r)
        elif self.d is not None:
            self._fail(own, "d", "is only given with the sizes n, d_k, d_v, d_o")
        else:
            for k in ("gamma_k", "gamma_v", "gamma_o"):
                set_(k, self._positive(getattr(self, k), own, k))
        if self.scheme not in SCHEMES:
            self._fail(own, "scheme", f"must be one of the known schemes (allowed: {', '.join(SCHEMES)}); "
                       f"got {self.scheme!r} (multi-query attention is scheme='gqa', kv_groups=1)")
        if self.scheme == "gqa":
            if self.kv_groups is None:
                self._fail(own, "kv_groups", "is required: scheme='gqa' needs kv_groups (h_KV, a positive "
                           "divisor of heads; kv_groups=1 is multi-query attention)")
            g = self._positive(self.kv_groups, own, "kv_groups", integer=True)
            groups = _ratio(self.heads, g)
            if not _symbolic(groups) and groups.denominator != 1:
                self._fail(own, "kv_groups", f"must divide heads={self.heads}; got {g} ({self.heads} is not "
                           f"divisible by kv_groups={g})")
            set_("kv_groups", g)
        elif self.kv_groups is not None:
            implied = None if self.scheme == "shared_keys" else self.heads
            if implied is None or self.kv_groups != implied:
                self._fail(own, "kv_groups", f"is only used with scheme='gqa'; got kv_groups="
                           f"{self.kv_groups!r} with scheme={self.scheme!r}")
            set_("kv_groups", None)
        if self.scheme == "tied":
            diff = (self.gamma_v - self.gamma_k if not (_symbolic(self.gamma_v) or _symbolic(self.gamma_k))
                    else _simplify_difference(self.gamma_v, self.gamma_k))
            if diff != 0:
                sizes = f", d_k={self.d_k}, d_v={self.d_v}" if self.n is not None else ""
                self._fail(own, "scheme", "= 'tied' (within-head tying W_V = W_K) needs d_V = d_K: d_v == d_k, "
                           f"i.e. gamma_v == gamma_k; got gamma_k={self.gamma_k}, gamma_v={self.gamma_v}{sizes}")
        if self.beta is not None:
            b = exact(self.beta, own, "beta")
            if _symbolic(b):
                from freeprob.attention.ge import ge_coefficients
                ge_coefficients(b)              # raises for a negative or non-real β
            elif b < 0:
                self._fail(own, "beta", f"must be >= 0; got {self.beta!r}")
            set_("beta", b)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_dimensions(cls, *, n, heads, d_k, d_v, d_o, d=None, beta=None, scheme="independent",
                        kv_groups=None) -> "Architecture":
        """The layer of ``n`` tokens and integer widths (``γ_K = h d_K/n`` ...).

        The sizes ``n, d_k, d_v, d_o, d`` may also be positive sympy symbols (e.g.
        ``sympy.Symbol('d_K', positive=True)``): the ratios are then sympy expressions and
        the finite-width laws (:mod:`freeprob.attention.finite_width`) are exact in them
        (numerics need numbers: ``law.subs({...})``).  The sampler needs integers.

        Raises ``FreeprobValueError`` for non-positive or non-integer sizes, or a symbolic
        size not declared positive; ``heads`` must be an integer.

        Source: [THEORY]_ §1 (ratios from sizes).
        """
        own = "Architecture.from_dimensions"
        vals = {k: Architecture._size(v, own, k, symbolic=k != "heads")
                for k, v in dict(n=n, heads=heads, d_k=d_k, d_v=d_v, d_o=d_o).items()}
        if d is not None:
            Architecture._size(d, own, "d", symbolic=True)
        return Architecture(heads=vals["heads"], gamma_k=None, gamma_v=None, gamma_o=None, beta=beta,
                            scheme=scheme, kv_groups=kv_groups, n=vals["n"], d_k=vals["d_k"],
                            d_v=vals["d_v"], d_o=vals["d_o"], d=d)

    @classmethod
    def from_dict(cls, data) -> "Architecture":
        """The layer of :meth:`to_dict` (sizes or ratios; ``beta`` optional).

        Raises ``FreeprobValueError`` as the constructor does.  Source: this module.
        """
        data = dict(data)
        allowed = {"heads", "gamma_k", "gamma_v", "gamma_o", "beta", "scheme", "kv_groups",
                   "n", "d_k", "d_v", "d_o", "d"}
        need = {"heads", "n", "d_k", "d_v", "d_o"} if "n" in data else {"heads", "gamma_k", "gamma_v", "gamma_o"}
        if set(data) - allowed or need - set(data):
            raise FreeprobValueError(
                f"Architecture.from_dict: needs {sorted(need)} (optional: beta, scheme, kv_groups"
                f"{', d' if 'n' in data else ''}); got keys {sorted(data)}")
        if "n" not in data:
            return Architecture(**data)
        if cls is Dimensions and data.get("beta") is None:
            data.pop("beta", None)
            return Dimensions(**data)
        return Architecture.from_dimensions(**data)

    def to_dict(self) -> dict:
        """JSON-able fields: the sizes when built from them (``n, heads, d_k, d_v, d_o, d,
        scheme, kv_groups``), else ``heads`` and the ratios (as text); ``beta`` when set.

        Raises nothing.  Source: this module (the ``dims`` record of verify and the comparisons).
        """
        if self.sized:
            out = dict(n=_json(self.n), heads=self.heads, d_k=_json(self.d_k), d_v=_json(self.d_v),
                       d_o=_json(self.d_o), d=_json(self.d), scheme=self.scheme, kv_groups=self.kv_groups)
        else:
            out = dict(heads=_json(self.heads), gamma_k=_json(self.gamma_k), gamma_v=_json(self.gamma_v),
                       gamma_o=_json(self.gamma_o), scheme=self.scheme, kv_groups=_json(self.kv_groups))
        if self.beta is not None:
            out["beta"] = _json(self.beta)
        return out

    def replace(self, **changes) -> "Architecture":
        """A copy with some fields changed (``heads``, ``gamma_k``, ``scheme``, ``n``, ...).

        A layer built from sizes keeps its sizes (changing ``heads`` keeps the per-head
        widths) unless a ratio ``gamma_*`` is changed; then, as for a layer given by its
        ratios, the result has ratios only.  Changing the scheme away from ``"gqa"``
        drops ``kv_groups``.

        Raises ``FreeprobValueError`` as the constructor does.  Source: this module.
        """
        ratio_keys = ("heads", "gamma_k", "gamma_v", "gamma_o", "beta", "scheme", "kv_groups")
        unknown = set(changes) - set(ratio_keys) - {"n", "d_k", "d_v", "d_o", "d"}
        if unknown:
            raise FreeprobValueError(
                f"Architecture.replace: unknown field(s) {', '.join(sorted(unknown))}; "
                f"allowed: {', '.join(ratio_keys + ('n', 'd_k', 'd_v', 'd_o', 'd'))}")
        sizes = self.sized and not {"gamma_k", "gamma_v", "gamma_o"} & set(changes)
        if sizes:
            kw = dict(n=self.n, heads=self.heads, d_k=self.d_k, d_v=self.d_v, d_o=self.d_o,
                      d=None if self.d == self.n else self.d, beta=self.beta, scheme=self.scheme,
                      kv_groups=self.kv_groups)
        else:
            if set(changes) & {"n", "d_k", "d_v", "d_o", "d"}:
                raise FreeprobValueError("Architecture.replace: sizes (n, d_k, ...) need a layer built from "
                                         "sizes and no change of gamma_k, gamma_v, gamma_o")
            kw = {k: getattr(self, k) for k in ratio_keys}
        if changes.get("scheme", kw["scheme"]) != "gqa":
            kw["kv_groups"] = None
        kw.update(changes)
        if not sizes:
            return Architecture(**kw)
        if isinstance(self, Dimensions) and kw["beta"] is None:
            kw.pop("beta")
            return Dimensions(**kw)
        return Architecture.from_dimensions(**kw)

    def with_beta(self, beta) -> "Architecture":
        """This layer (sizes kept) at inverse temperature ``beta`` (an :class:`Architecture`).

        Raises ``FreeprobValueError`` for a negative or non-real ``beta``.  Source: [HK26]_ §2.
        """
        if self.sized:
            return Architecture.from_dimensions(n=self.n, heads=self.heads, d_k=self.d_k, d_v=self.d_v,
                                                d_o=self.d_o, d=self.d, beta=beta, scheme=self.scheme,
                                                kv_groups=self.kv_groups)
        return self.replace(beta=beta)

    def ratios(self) -> "Architecture":
        """This layer without its sizes: what the limiting laws depend on (``h``, the ratios,
        ``β`` and the scheme), e.g. as a cache key shared by all ``n`` with these ratios.

        Raises nothing.  Source: [THEORY]_ §1 (the laws depend on ratios only).
        """
        return Architecture(heads=self.heads, gamma_k=self.gamma_k, gamma_v=self.gamma_v,
                            gamma_o=self.gamma_o, beta=self.beta, scheme=self.scheme,
                            kv_groups=self.kv_groups)

    # -- derived quantities ---------------------------------------------------------------
    @property
    def sized(self) -> bool:
        """True when the layer was built from sizes (``n``, ``d_k``, ... are set).

        Raises nothing.  Source: this module.
        """
        return self.n is not None

    @property
    def c_k(self):
        """Per-head key ratio ``d_K/n = γ_K/h``.

        Raises nothing.  Source: [THEORY]_ §1.
        """
        return _ratio(self.gamma_k, self.heads)

    @property
    def c_v(self):
        """Per-head value ratio ``d_V/n = γ_V/h``.

        Raises nothing.  Source: [THEORY]_ §1.
        """
        return _ratio(self.gamma_v, self.heads)

    @cached_property
    def _thetas(self):
        from freeprob.attention import ge
        return (ge.theta1, ge.theta2) if self.beta is None else ge.ge_coefficients(self.beta)

    @property
    def theta1(self):
        """``θ1 = e^{β²} − 1`` (sympy), or the free symbol ``theta1`` when ``beta`` is None.

        Raises nothing (β was checked by the constructor).  Source: [HK26]_ §3.
        """
        return self._thetas[0]

    @property
    def theta2(self):
        """``θ2 = β²`` (sympy), or the free symbol ``theta2`` when ``beta`` is None.

        Raises nothing.  Source: [HK26]_ §3.
        """
        return self._thetas[1]

    @property
    def kappa(self):
        """``κ = θ2/θ1``, the only way β enters the mean-normalised laws (theory.md §1).

        Raises nothing.
        """
        return self.theta2 / self.theta1

    @property
    def key_groups(self):
        """Number of distinct key matrices (``h``, ``h_KV`` or 1).

        Raises nothing.  Source: [THEORY]_ §3.4–3.5.
        """
        return {"independent": self.heads, "gqa": self.kv_groups, "shared_keys": 1,
                "tied": self.heads}[self.scheme]

    @property
    def value_groups(self):
        """Number of distinct value matrices (``h`` or ``h_KV``).

        Raises nothing.  Source: [THEORY]_ §3.4–3.5.
        """
        return {"independent": self.heads, "gqa": self.kv_groups, "shared_keys": self.heads,
                "tied": self.heads}[self.scheme]

    def key_group_of_head(self):
        """Index of the key matrix used by each head (``numpy`` int array of length ``h``).

        Raises nothing.  Source: [THEORY]_ §3.4–3.5.
        """
        import numpy as np
        return np.arange(self.heads) * self.key_groups // self.heads

    def value_group_of_head(self):
        """Index of the value matrix used by each head (``numpy`` int array of length ``h``).

        Raises nothing.  Source: [THEORY]_ §3.4–3.5.
        """
        import numpy as np
        return np.arange(self.heads) * self.value_groups // self.heads

    def label(self) -> str:
        """Short text naming the layer, e.g. ``h=4 dK=64 dV=64 dO=256 gqa:2`` (sizes) or
        ``h=4 γK=1 γV=1 γO=2 tied`` (ratios); ``β`` when set.

        Raises nothing.  Source: this module.
        """
        if self.sized:
            text = f"h={self.heads} dK={self.d_k} dV={self.d_v} dO={self.d_o}"
            if self.d != self.n:
                text += f" d={self.d}"
        else:
            text = f"h={self.heads} γK={self.gamma_k} γV={self.gamma_v} γO={self.gamma_o}"
        if self.scheme != "independent":
            text += f" {self.scheme}" + (f":{self.kv_groups}" if self.scheme == "gqa" else "")
        if self.beta is not None:
            text += f" β={self.beta}"
        return text

    def __repr__(self):
        if self.sized:
            keys = ("n", "heads", "d_k", "d_v", "d_o", "d")
        else:
            keys = ("heads", "gamma_k", "gamma_v", "gamma_o")
        parts = [f"{k}={_text(getattr(self, k))}" for k in keys]
        if self.beta is not None:
            parts.append(f"beta={_text(self.beta)}")
        parts += [f"scheme={self.scheme!r}", f"kv_groups={self.kv_groups!r}"]
        return f"{type(self).__name__}({', '.join(parts)})"


def _simplify_difference(a, b):
    import sympy as sp
    return sp.simplify(sp.sympify(a) - sp.sympify(b))


def _json(v):
    return v if v is None or isinstance(v, int) else str(v)


class Dimensions(Architecture):
    r"""Sizes and head-sharing scheme of one multi-head attention layer: an
    :class:`Architecture` built from integer sizes (the sampler's name for it).

    Parameters
    ----------
    n : int
        Number of tokens, ``n ≥ 1``.
    heads : int
        Number of heads ``h``.
    d_k, d_v, d_o : int
        Per-head key/query width ``d_K``, per-head value width ``d_V``, output width
        ``d_O``.
    d : int, optional
        Input width, ``d ≥ n`` (orthogonal token rows need ``n ≤ d``); defaults to ``n``.
        Only the ``input="explicit"`` route of :func:`freeprob.sampler.draw_weights` uses it.
    scheme : {"independent", "gqa", "shared_keys", "tied"}
        Head sharing (theory.md §3.4–3.5).
    kv_groups : int, optional
        Number of key/value groups for ``scheme="gqa"`` (``heads % kv_groups == 0``;
        MQA is ``kv_groups=1``; consecutive heads form a group).  Must be omitted (or
        equal to the implied value) for the other schemes.

    Attributes
    ----------
    gamma_k, gamma_v, gamma_o : fractions.Fraction
        ``h d_K/n``, ``h d_V/n``, ``d_O/n`` (theory.md §1).
    c_k, c_v : fractions.Fraction
        ``d_K/n``, ``d_V/n``.
    key_groups, value_groups : int
        Number of distinct key / value matrices.

    Raises
    ------
    FreeprobValueError
        A size is not a positive integer; ``n > d``; unknown scheme; ``kv_groups``
        missing, not dividing ``heads``, or given for a scheme other than GQA;
        ``scheme="tied"`` with ``d_v != d_k``.

    Examples
    --------
    >>> dims = Dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32, scheme="gqa", kv_groups=2)
    >>> dims.gamma_k, dims.gamma_o, dims.key_groups
    (Fraction(1, 2), Fraction(1, 2), 2)
    >>> isinstance(dims, Architecture)
    True
    """

    _MESSAGE = "`{name}` of `{owner}` {text}"

    def __init__(self, n, heads, d_k, d_v, d_o, d=None, scheme="independent", kv_groups=None):
        own = "Dimensions"
        vals = {k: self._size(v, own, k) for k, v in dict(n=n, heads=heads, d_k=d_k, d_v=d_v,
                                                           d_o=d_o).items()}
        super().__init__(heads=vals["heads"], gamma_k=None, gamma_v=None, gamma_o=None, scheme=scheme,
                         kv_groups=kv_groups, n=vals["n"], d_k=vals["d_k"], d_v=vals["d_v"],
                         d_o=vals["d_o"], d=d)
