r"""Non-commutative polynomials in self-adjoint variables: ``p = Σ_w c_w w``.

A :class:`NCPoly` maps words (tuples of variable names, ``()`` for the constant) to exact
sympy coefficients: rationals, algebraic numbers (``sqrt(2)``), symbols (real parameters)
and the complex unit ``I``.  The variables are self-adjoint, so the adjoint reverses every
word and conjugates its coefficient (symbols are real): ``(c·x y z)* = c̄·z y x``.

Input:

* :func:`parse_ncpoly` reads a string such as ``"x*y*x + 2*y - I*(x*y - y*x)"`` with a
  whitelisted :mod:`ast` walk (nothing is evaluated): variables, parameter names,
  integers, decimals (the exact decimal they spell), ``I``, ``sqrt(r)``, ``+ - * /``
  (division by scalars) and ``**`` (a non-negative integer power of a polynomial, any
  rational power of a scalar);
* :func:`from_sympy` reads a sympy expression whose variables are non-commutative symbols
  (``sympy.Symbol("x", commutative=False)``); commutative symbols are parameters.

Both refuse unknown names, a variable written as a commutative symbol, and expansions of
more than :data:`MAX_TERMS` words, with a one-line :class:`~freeprob.errors.FreeprobValueError`.

Source: the free algebra of [MS17]_ ch. 9–10 (self-adjoint polynomials in free variables).
"""
from __future__ import annotations

import ast

import sympy as sp

from freeprob.errors import FreeprobValueError

__all__ = ["MAX_TERMS", "NCPoly", "parse_ncpoly", "from_sympy", "conjugate", "re_im", "is_zero"]

#: most words a polynomial (or an intermediate product while parsing) may have
MAX_TERMS = 20_000
#: longest accepted polynomial text (characters), deepest nesting
MAX_LENGTH, MAX_DEPTH = 4000, 60
#: names that are not variables or parameters
RESERVED = {"I": "the complex unit", "sqrt": "the square root"}


def _real_dummies(expr):
    syms = {s: sp.Dummy(s.name, real=True) for s in expr.free_symbols}
    return expr.xreplace(syms), {v: k for k, v in syms.items()}


def conjugate(c):
    """The complex conjugate of an exact coefficient, its symbols taken as real."""
    c = sp.sympify(c)
    if c.is_real:
        return c
    real, back = _real_dummies(c)
    return sp.expand(sp.conjugate(real)).xreplace(back)


def re_im(c):
    """``(Re c, Im c)`` of an exact coefficient, symbols taken as real (sympy expressions)."""
    c = sp.sympify(c)
    if c.is_real:
        return c, sp.Integer(0)
    real, back = _real_dummies(sp.expand(c))
    return sp.expand(sp.re(real)).xreplace(back), sp.expand(sp.im(real)).xreplace(back)


def is_zero(c) -> bool:
    """Exact zero test of a coefficient (expand, then simplify for numbers)."""
    e = sp.expand(c)
    if e == 0:
        return True
    if not e.free_symbols:
        return sp.simplify(e) == 0
    return sp.simplify(e) == 0


def _word_text(word):
    if not word:
        return "1"
    out, i = [], 0
    while i < len(word):
        j = i
        while j < len(word) and word[j] == word[i]:
            j += 1
        out.append(word[i] if j - i == 1 else f"{word[i]}**{j - i}")
        i = j
    return "*".join(out)


class NCPoly:
    r"""A non-commutative polynomial ``Σ_w c_w w`` in self-adjoint variables (immutable).

    Parameters
    ----------
    terms : dict
        ``{word: coefficient}``, a word a tuple of variable names (``()`` the constant
        term), a coefficient any exact sympy number or expression; zero coefficients are
        dropped.

    Supports ``+ - *`` with polynomials and scalars, ``**`` by a non-negative integer,
    equality and hashing.  :meth:`adjoint`, :meth:`self_adjoint_defect`.

    Raises
    ------
    FreeprobValueError
        A word that is not a tuple of names, or a product with more than :data:`MAX_TERMS`
        words.

    Source: [MS17]_ ch. 9 (the free algebra ``ℂ⟨x_1, …, x_s⟩``).
    """

    __slots__ = ("_terms", "_hash")

    def __init__(self, terms=None):
        clean = {}
        for word, c in dict(terms or {}).items():
            if not isinstance(word, tuple) or not all(isinstance(n, str) for n in word):
                raise FreeprobValueError(f"NCPoly: words must be tuples of variable names; got {word!r}")
            c = sp.expand(sp.sympify(c))
            if c != 0:
                clean[word] = c
        self._terms = clean
        self._hash = None

    @classmethod
    def scalar(cls, c):
        """The constant polynomial ``c``."""
        return cls({(): c})

    @classmethod
    def letter(cls, name):
        """The variable ``name``."""
        return cls({(name,): 1})

    @property
    def terms(self) -> dict:
        """``{word: coefficient}`` (a copy)."""
        return dict(self._terms)

    def items(self):
        """The ``(word, coefficient)`` pairs, sorted by degree then word."""
        return sorted(self._terms.items(), key=lambda t: (len(t[0]), t[0]))

    @property
    def degree(self) -> int:
        """The largest word length (``-1`` for the zero polynomial)."""
        return max((len(w) for w in self._terms), default=-1)

    def letters(self) -> set:
        """The variable names occurring in some word."""
        return {n for w in self._terms for n in w}

    def is_scalar(self) -> bool:
        """True for a constant (or zero) polynomial."""
        return all(not w for w in self._terms)

    def constant(self):
        """The coefficient of the empty word."""
        return self._terms.get((), sp.Integer(0))

    def free_symbols(self) -> set:
        """The sympy symbols (parameters) of the coefficients."""
        out = set()
        for c in self._terms.values():
            out |= c.free_symbols
        return out

    # -- algebra ---------------------------------------------------------------------
    @staticmethod
    def _lift(other):
        if isinstance(other, NCPoly):
            return other
        if isinstance(other, sp.Basic | int):
            return NCPoly.scalar(other)
        return None

    def __add__(self, other):
        other = self._lift(other)
        if other is None:
            return NotImplemented
        out = dict(self._terms)
        for w, c in other._terms.items():
            out[w] = out.get(w, 0) + c
        return NCPoly(out)

    __radd__ = __add__

    def __neg__(self):
        return NCPoly({w: -c for w, c in self._terms.items()})

    def __sub__(self, other):
        other = self._lift(other)
        return NotImplemented if other is None else self + (-other)

    def __rsub__(self, other):
        other = self._lift(other)
        return NotImplemented if other is None else other + (-self)

    def __mul__(self, other):
        other = self._lift(other)
        if other is None:
            return NotImplemented
        if len(self._terms) * len(other._terms) > MAX_TERMS:
            raise FreeprobValueError(
                f"the product has up to {len(self._terms) * len(other._terms)} words, more than "
                f"{MAX_TERMS} (freeprob.core.ncpoly.MAX_TERMS); expand fewer powers")
        out = {}
        for w1, c1 in self._terms.items():
            for w2, c2 in other._terms.items():
                w = w1 + w2
                out[w] = out.get(w, 0) + c1 * c2
        return NCPoly(out)

    def __rmul__(self, other):
        other = self._lift(other)
        return NotImplemented if other is None else other * self

    def __pow__(self, n):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise FreeprobValueError(f"NCPoly: powers must be non-negative integers; got {n!r}")
        out = NCPoly.scalar(1)
        for _ in range(n):
            out = out * self
        return out

    def __eq__(self, other):
        other = self._lift(other)
        if other is None:
            return NotImplemented
        keys = set(self._terms) | set(other._terms)
        return all(is_zero(self._terms.get(k, 0) - other._terms.get(k, 0)) for k in keys)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(frozenset(self._terms.items()))
        return self._hash

    def adjoint(self):
        """``p*``: every word reversed, every coefficient conjugated (symbols real)."""
        return NCPoly({tuple(reversed(w)): conjugate(c) for w, c in self._terms.items()})

    def self_adjoint_defect(self):
        """``None`` if ``p = p*``, else a one-line reason naming the offending term(s)."""
        for w, c in self.items():
            r = tuple(reversed(w))
            other = self._terms.get(r, sp.Integer(0))
            if is_zero(conjugate(c) - other):
                continue
            if r == w:
                return f"the coefficient {c} of {_word_text(w)} is not real"
            if other == 0:
                return (f"{_word_text(w)} has coefficient {c} but its adjoint {_word_text(r)} "
                        "does not occur")
            return (f"the coefficient {other} of {_word_text(r)} is not the conjugate of the "
                    f"coefficient {c} of {_word_text(w)}")
        return None

    def substitute(self, mapping):
        """The polynomial with ``xreplace(mapping)`` applied to every coefficient."""
        return NCPoly({w: c.xreplace(mapping) for w, c in self._terms.items()})

    def to_sympy(self, symbols=None):
        """A sympy expression in non-commutative symbols (``symbols``: name -> symbol)."""
        symbols = dict(symbols or {})
        for n in self.letters():
            symbols.setdefault(n, sp.Symbol(n, commutative=False))
        return sp.Add(*[c * sp.Mul(*[symbols[n] for n in w]) for w, c in self.items()])

    def __str__(self):
        if not self._terms:
            return "0"
        parts = []
        for w, c in self.items():
            cs = sp.sstr(c)
            if not w:
                parts.append(cs)
            elif c == 1:
                parts.append(_word_text(w))
            elif c == -1:
                parts.append("-" + _word_text(w))
            else:
                simple = c.is_Rational or c.is_Symbol
                parts.append(f"{cs}*{_word_text(w)}" if simple else f"({cs})*{_word_text(w)}")
        return " + ".join(parts).replace("+ -", "- ")

    def __repr__(self):
        return f"NCPoly({self})"


# -- parsing --------------------------------------------------------------------------------
def _check_names(variables, parameters, who):
    names = list(variables)
    for n in names:
        if not isinstance(n, str) or not n.isidentifier() or n.startswith("_"):
            raise FreeprobValueError(f"{who}: variable names must be identifiers not starting with '_'; got {n!r}")
        if n in RESERVED:
            raise FreeprobValueError(f"{who}: {n!r} is reserved ({RESERVED[n]}); choose another variable name")
    params = {}
    for p in parameters or ():
        s = sp.Symbol(p) if isinstance(p, str) else p
        if not isinstance(s, sp.Symbol):
            raise FreeprobValueError(f"{who}: parameters must be names or sympy symbols; got {p!r}")
        if s.name in names:
            raise FreeprobValueError(f"{who}: {s.name!r} is both a variable and a parameter; rename one")
        params[s.name] = s
    return set(names), params


class _Reader:
    """The whitelisted walk of :func:`parse_ncpoly`."""

    def __init__(self, text, names, params, who):
        self.text, self.names, self.params, self.who = text, names, params, who

    def fail(self, node, reason):
        col = getattr(node, "col_offset", 0) + 1
        raise FreeprobValueError(f"{self.who}: {reason} (column {col} of {self.text!r})")

    def walk(self, node, depth=0):
        if depth > MAX_DEPTH:
            self.fail(node, f"nested more than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, int | float | complex):
                self.fail(node, f"{v!r} is not allowed (numbers, names, + - * / ** and sqrt only)")
            if isinstance(v, complex):
                return NCPoly.scalar(sp.I * sp.Rational(repr(v.imag)) + sp.Rational(repr(v.real)))
            return NCPoly.scalar(sp.Integer(v) if isinstance(v, int) else sp.Rational(repr(v)))
        if isinstance(node, ast.Name):
            n = node.id
            if n in self.names:
                return NCPoly.letter(n)
            if n in self.params:
                return NCPoly.scalar(self.params[n])
            if n == "I":
                return NCPoly.scalar(sp.I)
            known = ", ".join(sorted(self.names))
            extra = f"; parameters: {', '.join(sorted(self.params))}" if self.params else ""
            self.fail(node, f"unknown name {n!r} (variables: {known}{extra})")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
            v = self.walk(node.operand, depth + 1)
            return v if isinstance(node.op, ast.UAdd) else -v
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.Pow):
            a, b = self.walk(node.left, depth + 1), self.walk(node.right, depth + 1)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                if not b.is_scalar():
                    self.fail(node, "division by a polynomial in the variables is not allowed")
                if is_zero(b.constant()):
                    self.fail(node, "division by zero")
                return a * NCPoly.scalar(1 / b.constant())
            if not b.is_scalar():
                self.fail(node, "exponents must be numbers")
            e = b.constant()
            if a.is_scalar():
                if not e.is_Rational or abs(e) > 1000:
                    self.fail(node, "a scalar power needs a rational exponent of at most 1000")
                base = a.constant()
                if base == 0 and e < 0:
                    self.fail(node, "division by zero")
                return NCPoly.scalar(base ** e)
            if not e.is_Integer or e < 0 or e > 64:
                self.fail(node, "a polynomial may be raised only to an integer power from 0 to 64")
            return a ** int(e)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt":
            if len(node.args) != 1 or node.keywords:
                self.fail(node, "sqrt takes one argument")
            arg = self.walk(node.args[0], depth + 1)
            if not arg.is_scalar():
                self.fail(node, "sqrt of a polynomial in the variables is not allowed")
            return NCPoly.scalar(sp.sqrt(arg.constant()))
        self.fail(node, f"{type(node).__name__} is not allowed (numbers, names, + - * / ** and sqrt only)")


def parse_ncpoly(text, variables, parameters=(), who="parse_ncpoly") -> NCPoly:
    r"""Read a non-commutative polynomial from a string (never evaluated).

    Parameters
    ----------
    text : str
        E.g. ``"x*y + y*x"``, ``"I*(x*y - y*x)"``, ``"x*y*x + t*y/2"``, ``"(x + y)**3"``.
    variables : iterable of str
        The variable names (identifiers, not ``I`` or ``sqrt``).
    parameters : iterable of str or sympy.Symbol, optional
        Names allowed in coefficients as symbolic (real) parameters.

    Returns
    -------
    NCPoly

    Raises
    ------
    FreeprobValueError
        Not a string, too long, a syntax error, a name that is neither a variable nor a
        parameter (the message lists them), a refused construct, division by a variable,
        a non-integer power of a polynomial, more than :data:`MAX_TERMS` words.

    Source: this module.

    >>> str(parse_ncpoly("(x + y)**2", ["x", "y"]))
    'x**2 + x*y + y*x + y**2'
    """
    names, params = _check_names(variables, parameters, who)
    if not isinstance(text, str):
        raise FreeprobValueError(f"{who}: expected the polynomial as a string; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise FreeprobValueError(f"{who}: the polynomial is longer than {MAX_LENGTH} characters")
    flat = " ".join(text.split())
    if not flat:
        raise FreeprobValueError(f"{who}: the polynomial is empty")
    try:
        tree = ast.parse(flat, mode="eval")
    except SyntaxError as exc:
        raise FreeprobValueError(f"{who}: syntax error in {flat!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise FreeprobValueError(f"{who}: the polynomial is nested too deeply") from None
    try:
        return _Reader(flat, names, params, who).walk(tree.body)
    except RecursionError:
        raise FreeprobValueError(f"{who}: the polynomial is nested too deeply") from None


def from_sympy(expr, variables, who="from_sympy") -> NCPoly:
    r"""A non-commutative polynomial from a sympy expression.

    The variables are non-commutative symbols named as in ``variables``
    (``sympy.symbols("x y", commutative=False)``); every commutative symbol is a real
    parameter of the coefficients.

    Raises
    ------
    FreeprobValueError
        A non-commutative symbol that is not a variable, a variable written as a
        commutative symbol (its products would commute), a non-polynomial term (a function
        of a variable, a negative power), more than :data:`MAX_TERMS` words.

    Source: this module.
    """
    names, _ = _check_names(variables, (), who)
    if not isinstance(expr, sp.Expr):
        raise FreeprobValueError(f"{who}: expected a sympy expression; got {type(expr).__name__}")
    clash = sorted(s.name for s in expr.free_symbols if s.is_commutative and s.name in names)
    if clash:
        raise FreeprobValueError(
            f"{who}: the variable {clash[0]!r} is a commutative symbol, so x*y and y*x would be "
            f"equal; declare it sympy.Symbol({clash[0]!r}, commutative=False)")
    expanded = sp.expand(expr)
    terms = sp.Add.make_args(expanded)
    if len(terms) > MAX_TERMS:
        raise FreeprobValueError(f"{who}: more than {MAX_TERMS} terms")
    out = {}
    for term in terms:
        comm, nc = term.args_cnc()
        word = []
        for f in nc:
            base, e = (f.base, f.exp) if isinstance(f, sp.Pow) else (f, 1)
            if not isinstance(base, sp.Symbol) or not (sp.sympify(e).is_Integer and e > 0):
                raise FreeprobValueError(f"{who}: {f} is not a monomial in the variables (only "
                                         "products and non-negative integer powers of them)")
            if base.name not in names:
                raise FreeprobValueError(
                    f"{who}: unknown variable {base.name!r} (variables: {', '.join(sorted(names))})")
            word += [base.name] * int(e)
        c = sp.Mul(*comm)
        if any(not s.is_commutative for s in c.free_symbols):   # pragma: no cover - args_cnc split
            raise FreeprobValueError(f"{who}: cannot read the term {term}")
        out[tuple(word)] = out.get(tuple(word), 0) + c
    return NCPoly(out)
