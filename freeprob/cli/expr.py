r"""A small, safe expression language for laws and parameters (used by the command line).

The text is parsed with :func:`ast.parse` (``mode="eval"``) and the tree is walked against
a strict whitelist; nothing is ever passed to ``eval``, ``exec``, ``compile`` or
``getattr``.  A malformed or refused expression raises :class:`ExpressionError`, whose
message shows the expression with a caret under the offending column.

Grammar
-------
* **Laws**: calls of the names in :data:`NAMES` with positional and keyword arguments,
  nested freely::

      Semicircle(0, 1)                      Semicircle(mean=1, variance=1/4)
      FreePoisson(1/2)                      MarchenkoPastur(ratio=2, scale=1)
      Atomic([-1, 0, 2], [1/4, 1/2, 1/4])   Dirac(3)      Bernoulli(p=1/3, low=0, high=1)
      CompoundFreePoisson(2, Bernoulli())   compound_free_poisson(2, Dirac(1))
      free_mul(FreePoisson(1/2), FreePoisson(1/3))
      free_add(Semicircle(0, 1), FreePoisson(t))       free_power(Bernoulli(), 3/2)
      boolean_add(Bernoulli(), Semicircle(0, 1))       monotone_add(Semicircle(0, 1), Dirac(2))
      pushforward(Semicircle(0, 1), x**2 - 1)          shift(Dirac(0), 2)    dilate(..., 3)
      mixture([Semicircle(0, 1), Dirac(2)], [1/3, 2/3])
      polynomial('x*y + y*x', x=Semicircle(0, 1), y=FreePoisson(1/2))
      rectangular_companion(MarchenkoPastur(1/2), 1/2)
      output_law(heads=12, gamma_k=1, gamma_v=1, gamma_o=1, beta=1)
      head_sum_law(heads=8, gamma_k=1, gamma_v=1, gamma_o=1, beta=1, scheme="gqa", kv_groups=2)
      mean_normalized(output_law(heads=h, gamma_k=gk, gamma_v=gv, gamma_o=go))

  Scalar sugar: ``law + a``, ``a + law``, ``law - a`` (:func:`~freeprob.laws.operations.shift`),
  ``c * law``, ``law * c``, ``law / c``, ``-law`` (:func:`~freeprob.laws.operations.dilate`).
  ``law + law`` and ``law * law`` are refused (use ``free_add`` / ``free_mul``).
* **Values** (parameters): integers, decimals read as the exact decimal they spell
  (``0.1`` is ``1/10``, ``1e-3`` is ``1/1000``), ``+ - * / **`` and unary ``±`` in exact
  sympy arithmetic (``1/3`` is the rational one third), the constants ``E`` and ``pi``,
  ``exp(r)`` and ``sqrt(r)``, and symbols: any other identifier that starts with a
  lower-case letter (``t``, ``theta1``, ``gamma_K``).  ``theta1`` and ``theta2`` are the
  positive symbols of :mod:`freeprob.attention`.  ``x`` is the variable of the
  ``pushforward`` polynomial and may appear only there; ``z``, ``w``, ``u`` are
  reserved (the transform variables).
* **Lists** ``[...]`` or tuples ``(...)`` only as direct arguments (atoms, weights and
  the laws of a mixture); **strings** only as the value of the ``scheme=`` keyword and as
  the polynomial of ``polynomial('…', name=law, …)`` (a self-adjoint polynomial in free
  variables, read by :func:`freeprob.core.ncpoly.parse_ncpoly`, never evaluated; its other
  lower-case names are symbolic parameters).

The parameters of the attention laws are keyword-only: ``heads``, ``gamma_k``,
``gamma_v``, ``gamma_o``, ``beta`` (default: ``θ1``, ``θ2`` left symbolic), ``scheme``
(``"independent"``, ``"gqa"``, ``"shared_keys"``, ``"tied"``) and ``kv_groups``, as in
:class:`~freeprob.attention.Architecture`; symbols given there are made positive (the
architecture requires it).

Limits (against resource attacks): at most :data:`MAX_LENGTH` characters, nesting depth
:data:`MAX_DEPTH`, integers of at most :data:`MAX_DIGITS` digits, exponents of at most
:data:`MAX_EXPONENT` in absolute value, ``|r| <=`` :data:`MAX_EXP_ARGUMENT` in ``exp(r)``.

>>> parse_law("free_mul(FreePoisson(1/2), FreePoisson(1/3))").moments(3)
(1, 1/6, 1/6, 47/216)
>>> parse_value("exp(1/2) - 1 + t/3")
t/3 - 1 + exp(1/2)
>>> try:
...     parse_law("Semicircle(0, 1).__class__")
... except ExpressionError as exc:
...     print(exc)
attributes (`.name`) are not allowed at column 18:
    Semicircle(0, 1).__class__
                     ^
"""
from __future__ import annotations

import ast
import difflib
import inspect
import re

import sympy as sp

from freeprob.attention.ge import theta1 as _theta1
from freeprob.attention.ge import theta2 as _theta2
from freeprob.laws import families as _fam
from freeprob.laws import independences as _ind
from freeprob.laws import operations as _ops
from freeprob.laws import polynomial as _poly
from freeprob.errors import FreeprobValueError, NotAvailable
from freeprob.laws.law import Law
from freeprob.core.symbols import ExpConstant
from freeprob.core.symbols import x as _x

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_EXPONENT", "MAX_EXP_ARGUMENT", "MAX_LENGTH", "NAMES",
           "ExpressionError", "parse_law", "parse_value"]

#: longest accepted expression (characters)
MAX_LENGTH = 2000
#: deepest accepted nesting (syntax-tree levels and brackets)
MAX_DEPTH = 60
#: largest number of decimal digits of an integer (numerator or denominator) anywhere
MAX_DIGITS = 400
#: largest absolute exponent in ``a ** b``
MAX_EXPONENT = 1000
#: largest ``|r|`` in ``exp(r)``
MAX_EXP_ARGUMENT = 1000
#: longest identifier
MAX_NAME = 40


class ExpressionError(FreeprobValueError):
    r"""A law or value expression is malformed or refused.

    Attributes
    ----------
    column : int
        1-based column (character) of the error in :attr:`text`.
    text : str
        The expression as parsed (newlines and tabs replaced by spaces).
    reason : str
        The message without the excerpt.

    The message is ``"{reason} at column {column}:"`` followed by the expression and a
    caret under the column (and, for unknown names, a line listing the known names).
    """

    def __init__(self, reason: str, text: str, column: int, note: str = ""):
        self.reason = reason
        self.text = text
        self.note = note
        self.column = max(1, min(int(column), len(text) + 1))
        shown, caret = _excerpt(text, self.column)
        super().__init__(f"{reason} at column {self.column}:\n    {shown}\n    {caret}^"
                         + (f"\n{note}" if note else ""))

    def __reduce__(self):
        # rebuilt from its parts, so that it crosses a process boundary (the worker of a
        # command, freeprob._interruptible): the default would call __init__ with the message
        return (type(self), (self.reason, self.text, self.column, self.note))


def _excerpt(text, column, width=100):
    """The expression (cut around ``column`` if long) and the spaces before the caret."""
    if len(text) <= width:
        return text, " " * (column - 1)
    start = max(0, min(column - 1 - width // 2, len(text) - width))
    shown = ("…" if start else "") + text[start:start + width] + ("…" if start + width < len(text) else "")
    return shown, " " * (column - 1 - start + (1 if start else 0))


# -- the registry ------------------------------------------------------------------------
_ARCH_KEYS = ("heads", "gamma_k", "gamma_v", "gamma_o", "beta", "scheme", "kv_groups")


def _positive_symbols(value):
    """Plain symbols of an architecture parameter made positive (Architecture needs it)."""
    if isinstance(value, sp.Basic):
        return value.xreplace({s: sp.Symbol(s.name, positive=True) for s in value.free_symbols
                               if s.is_positive is not True})
    return value


def _att():
    """:mod:`freeprob.attention.laws`, imported on first use (a law command that names no
    attention law does not load it)."""
    from freeprob.attention import laws
    return laws


def _attention(name):
    def make(*, heads, gamma_k, gamma_v, gamma_o, beta=None, scheme="independent", kv_groups=None):
        given = (heads, gamma_k, gamma_v, gamma_o, beta, scheme, kv_groups)
        kw = {k: _positive_symbols(v) for k, v in zip(_ARCH_KEYS, given)}
        if kw["beta"] is not None and isinstance(kw["beta"], sp.Basic) and kw["beta"].free_symbols:
            raise FreeprobValueError(f"{name}: beta must be a number (omit it for symbolic θ1, θ2)")
        att = _att()
        return getattr(att, name)(att.Architecture(**kw))

    make.__name__ = name
    return make


def _mean_normalized(law):
    return _att().mean_normalized(law)


def _pushforward(law, polynomial):
    return _ops.pushforward(law, polynomial)


def _mixture(laws, weights=None):
    return _ops.mixture(laws, weights)


def _polynomial(polynomial, /, **variables):
    try:
        names = {n.id for n in ast.walk(ast.parse(polynomial, mode="eval")) if isinstance(n, ast.Name)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        names = set()                   # polynomial_law reports the syntax error
    params = sorted(n for n in names - set(variables) - {"I", "sqrt"} if n[:1].islower())
    for n in params:
        if n in _RESERVED or n == "x":
            raise FreeprobValueError(f"{n!r} cannot be a parameter of the polynomial (reserved); "
                                     "make it a variable, e.g. polynomial('x*y + y*x', x=..., y=...)")
    return _poly.polynomial_law(polynomial, variables, parameters=[sp.Symbol(n) for n in params])


_ATT = ("heads=, gamma_k=, gamma_v=, gamma_o=[, beta=, scheme=, kv_groups=]")

#: layer sizes and the finite-size keywords of the Python attention laws, refused with :data:`_NOT_HERE`
_SIZES = ("n", "d_model", "d_k", "d_v", "d_o", "d_head")
_NOT_HERE = ("expressions build limit laws (attention laws from the ratios heads=, gamma_k=, gamma_v=, "
             "gamma_o=); the laws at a layer's finite sizes are in Python, law.finite_n(n) or "
             "attention.output_law(Architecture.from_dimensions(n=32, heads=2, d_k=8, d_v=8, d_o=32, beta=1), "
             "finite_n=True, finite_width=True) (docs/guide/finite-n.md), and in `freeprob verify --finite-n`")

#: name -> (short description, constructor); the constructors of laws
_LAWS = {
    "Semicircle": ("Semicircle(mean=0, variance=1): Wigner semicircle", _fam.Semicircle),
    "FreePoisson": ("FreePoisson(rate=1, jump=1): free Poisson law", _fam.FreePoisson),
    "MarchenkoPastur": ("MarchenkoPastur(ratio, scale=1): mean scale, variance ratio·scale²",
                        _fam.MarchenkoPastur),
    "CompoundFreePoisson": ("CompoundFreePoisson(rate, jump_law): π(ν, t)", _fam.CompoundFreePoisson),
    "compound_free_poisson": ("compound_free_poisson(rate, jump_law): same as CompoundFreePoisson",
                              _fam.CompoundFreePoisson),
    "Atomic": ("Atomic([points], [weights]): finitely supported law", _fam.Atomic),
    "Dirac": ("Dirac(point=0): point mass", _fam.Dirac),
    "Bernoulli": ("Bernoulli(p=1/2, low=-1, high=1): two-point law", _fam.Bernoulli),
    "free_add": ("free_add(law, law, ...): free additive convolution ⊞", _ops.free_add),
    "free_mul": ("free_mul(law, law, ...): free multiplicative convolution ⊠", _ops.free_mul),
    "free_power": ("free_power(law, t): free additive power μ^{⊞t}", _ops.free_power),
    "boolean_add": ("boolean_add(law, law, ...): boolean additive convolution ⊎", _ind.boolean_add),
    "monotone_add": ("monotone_add(law, law, ...): monotone additive convolution ▷ (in this order)",
                     _ind.monotone_add),
    "pushforward": ("pushforward(law, polynomial in x): law of p(X)", _pushforward),
    "shift": ("shift(law, a): law of X + a", _ops.shift),
    "dilate": ("dilate(law, c): law of c X", _ops.dilate),
    "mixture": ("mixture([laws], [weights]): mixture (block-diagonal matrix)", _mixture),
    "polynomial": ("polynomial('x*y + y*x', x=law, y=law): law of a self-adjoint polynomial in free "
                   "variables", _polynomial),
    "rectangular_companion": ("rectangular_companion(law, ratio): law of XᵀX/n from XXᵀ/n",
                              _ops.rectangular_companion),
    "attention_law": (f"attention_law({_ATT}): one head's centred attention", _attention("attention_law")),
    "concatenated_attention_law": (f"concatenated_attention_law({_ATT})",
                                   _attention("concatenated_attention_law")),
    "head_sum_law": (f"head_sum_law({_ATT}): (1/h)(Σ M_i)(Σ M_i)ᵀ", _attention("head_sum_law")),
    "head_output_law": (f"head_output_law({_ATT}): one head's output", _attention("head_output_law")),
    "stacked_output_law": (f"stacked_output_law({_ATT}): stacked head outputs",
                           _attention("stacked_output_law")),
    "output_law": (f"output_law({_ATT}): centred multi-head attention output", _attention("output_law")),
    "mean_normalized": ("mean_normalized(law): law divided by its mean", _mean_normalized),
}

#: name -> (description, function of sympy values) for value functions
_FUNCTIONS = {
    "exp": "exp(r): the constant e^r (r a number or symbol, |r| <= 1000)",
    "sqrt": "sqrt(r): square root",
}
#: irrational square roots allowed in one expression (each may double the field degree)
MAX_RADICALS = 4
_CONSTANTS = {"E": (sp.E, "E: Euler's number e"), "pi": (sp.pi, "pi: π")}
_SPECIAL_SYMBOLS = {"theta1": _theta1, "theta2": _theta2}
_RESERVED = {"z": "the Cauchy-transform variable", "w": "the R-transform variable",
             "u": "the S-transform variable", "nan": "not a number", "inf": "not a finite number",
             "oo": "not a finite number", "zoo": "not a finite number"}

#: every known name -> short description (laws, operations, attention laws, functions, constants)
NAMES = {**{k: d for k, (d, _) in _LAWS.items()}, **_FUNCTIONS,
         **{k: d for k, (_, d) in _CONSTANTS.items()},
         "x": "x: the variable of a pushforward polynomial",
         "theta1, theta2": "the GE constants θ1, θ2 of freeprob.attention (positive symbols)"}

_SIGNATURES = {}


def _signature(name, fn):
    sig = _SIGNATURES.get(name)
    if sig is None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):      # pragma: no cover - all registered callables have one
            sig = None
        _SIGNATURES[name] = sig
    return sig


def _known(name):
    """(reason suffix with the closest names, note listing all known names)."""
    known = list(_LAWS) + list(_FUNCTIONS) + list(_CONSTANTS)
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    return hint, "known names: " + ", ".join(known)


def _prefixed(name, exc):
    msg = str(exc)
    return msg if msg.startswith(name) else f"{name}: {msg}"


# -- the walker --------------------------------------------------------------------------
_DECIMAL = re.compile(r"(\d[\d_]*)?(\.[\d_]*)?([eE][+-]?\d+)?")
_REFUSED = {
    ast.Attribute: "attributes (`.name`) are not allowed",
    ast.Subscript: "subscripts (`a[i]`) are not allowed",
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed",
    ast.Starred: "starred arguments (`*a`) are not allowed",
    ast.Dict: "dictionaries are not allowed",
    ast.Set: "sets are not allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "`and`/`or` are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.NamedExpr: "assignment expressions (`:=`) are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
    ast.Slice: "slices are not allowed",
}


def _digits(v) -> int:
    """Decimal digits of the largest integer in a rational (an estimate from bit length)."""
    return max(abs(int(v.p)).bit_length(), abs(int(v.q)).bit_length()) * 30103 // 100000 + 1


class _Walker:
    def __init__(self, text, lead):
        self.text = text                              # as shown in messages
        self.lead = lead                              # leading blanks, not given to ast.parse
        self._bytes = text[lead:].encode("utf-8")

    # columns: ast offsets are UTF-8 byte offsets into the (single, stripped) line
    def _col(self, off) -> int:
        return len(self._bytes[:off].decode("utf-8", errors="ignore")) + 1 + self.lead

    def column(self, node) -> int:
        """1-based column of ``node``: of the attribute name, the ``[`` of a subscript,
        the operator of a binary operation, else the start of the node."""
        off = getattr(node, "col_offset", 0) or 0
        if isinstance(node, ast.Attribute) and node.end_col_offset is not None:
            off = node.end_col_offset - len(node.attr.encode("utf-8"))
        elif isinstance(node, ast.Subscript):
            off = self._bytes.find(b"[", node.value.end_col_offset)
        elif isinstance(node, ast.BinOp):
            gap = self._bytes[node.left.end_col_offset:node.right.col_offset]
            sym = {ast.Add: b"+", ast.Sub: b"-", ast.Mult: b"*", ast.Div: b"/", ast.Pow: b"**",
                   ast.Mod: b"%", ast.FloorDiv: b"//", ast.MatMult: b"@", ast.BitAnd: b"&",
                   ast.BitOr: b"|", ast.BitXor: b"^", ast.LShift: b"<<", ast.RShift: b">>"}.get(
                type(node.op), b"")
            i = gap.find(sym) if sym else -1
            off = node.left.end_col_offset + max(i, 0) if sym else off
        elif isinstance(node, ast.Compare | ast.BoolOp | ast.IfExp):
            # the first operator / keyword after the first operand
            first = node.left if isinstance(node, ast.Compare) else (
                node.values[0] if isinstance(node, ast.BoolOp) else node.body)
            gap = self._bytes[first.end_col_offset:node.end_col_offset or len(self._bytes)]
            j = len(gap) - len(gap.lstrip())
            off = first.end_col_offset + j
        return self._col(max(off, 0))

    def fail(self, node, reason, note=""):
        raise ExpressionError(reason, self.text, self.column(node), note)

    def unknown(self, node, what, name):
        hint, note = _known(name)
        self.fail(node, f"unknown {what} {name!r}{hint}", note)

    def segment(self, node):
        start = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", start)
        return self._bytes[start:end].decode("utf-8", errors="ignore")

    # -- generic dispatch -----------------------------------------------------------
    def walk(self, node, depth, ctx):
        if depth > MAX_DEPTH:
            self.fail(node, f"the expression is nested too deeply (more than {MAX_DEPTH} levels)")
        for kind, reason in _REFUSED.items():
            if isinstance(node, kind):
                self.fail(node, reason)
        if isinstance(node, ast.Constant):
            return self.constant(node, ctx)
        if isinstance(node, ast.Name):
            return self.name(node, ctx)
        if isinstance(node, ast.Call):
            return self.call(node, depth, ctx)
        if isinstance(node, ast.BinOp):
            return self.binop(node, depth, ctx)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node, depth, ctx)
        if isinstance(node, ast.List | ast.Tuple):
            if not ctx.get("sequence_ok"):
                self.fail(node, "lists and tuples are allowed only as arguments (points, weights, laws)")
            inner = dict(ctx, sequence_ok=False)
            return [self.walk(e, depth + 1, inner) for e in node.elts]
        self.fail(node, f"{type(node).__name__} expressions are not allowed")

    def constant(self, node, ctx):
        v = node.value
        if isinstance(v, bool) or v is None or v is Ellipsis:
            self.fail(node, f"{v!r} is not allowed; use numbers, names and calls")
        if isinstance(v, str):
            if not ctx.get("string_ok"):
                self.fail(node, "strings are allowed only as the value of scheme= (e.g. scheme=\"gqa\")")
            return v
        if isinstance(v, bytes | complex):
            self.fail(node, f"{type(v).__name__} literals are not allowed")
        if isinstance(v, int):
            if v.bit_length() > MAX_DIGITS * 3.33:
                self.fail(node, f"integer literal with more than {MAX_DIGITS} digits")
            return sp.Integer(v)
        if isinstance(v, float):
            text = self.segment(node).replace("_", "")
            m = _DECIMAL.fullmatch(text)
            if not m or not text:
                self.fail(node, f"cannot read the number {text!r}")
            mant = (m.group(1) or "") + (m.group(2) or "")
            exp10 = int(m.group(3)[1:]) if m.group(3) else 0
            if len(mant) + abs(exp10) > MAX_DIGITS:
                self.fail(node, f"number {text} has more than {MAX_DIGITS} digits")
            return sp.Rational(text)
        self.fail(node, f"{type(v).__name__} literals are not allowed")      # pragma: no cover

    def name(self, node, ctx):
        n = node.id
        if n.startswith("_"):
            self.fail(node, f"names starting with '_' are not allowed ({n!r})")
        if len(n) > MAX_NAME:
            self.fail(node, f"name longer than {MAX_NAME} characters")
        if n in _CONSTANTS:
            return _CONSTANTS[n][0]
        if n in _LAWS or n in _FUNCTIONS:
            self.fail(node, f"{n} is a function: call it, e.g. {NAMES[n].split(':')[0]}")
        if n in _SPECIAL_SYMBOLS:
            return _SPECIAL_SYMBOLS[n]
        if n in ("nan", "inf", "oo", "zoo"):         # meant as a number, not as a symbol's name
            self.fail(node, f"{n!r} is {_RESERVED[n]}: values must be finite real numbers")
        if n in _RESERVED:
            self.fail(node, f"{n!r} is reserved ({_RESERVED[n]}); choose another symbol name")
        if n == "x":
            if not ctx.get("polynomial"):
                self.fail(node, "'x' is the variable of a pushforward polynomial and may appear only there, "
                                "e.g. pushforward(Semicircle(0, 1), x**2)")
            return _x
        if n[0].islower():
            return sp.Symbol(n)
        self.unknown(node, "name", n)

    def call(self, node, depth, ctx):
        func = node.func
        if not isinstance(func, ast.Name):
            reason = _REFUSED.get(type(func), "only calls of known names are allowed")
            self.fail(func, reason + " (only calls of known names)")
        n = func.id
        if n.startswith("_"):
            self.fail(func, f"names starting with '_' are not allowed ({n!r})")
        if n not in _LAWS and n not in _FUNCTIONS:
            if n in _CONSTANTS:
                self.fail(func, f"{n} is a constant, not a function")
            self.unknown(func, "function", n)
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.fail(a, "starred arguments (`*a`) are not allowed")
        for k in node.keywords:
            if k.arg is None:
                self.fail(k.value, "`**` arguments are not allowed")
        if n in _FUNCTIONS:
            return self.value_function(node, n, depth, ctx)
        desc, fn = _LAWS[n]
        base = dict(ctx, sequence_ok=True, string_ok=False, polynomial=False)
        args = []
        for i, a in enumerate(node.args):
            sub = dict(base, polynomial=(n == "pushforward" and i == 1),
                       string_ok=(n == "polynomial" and i == 0))
            args.append(self.walk(a, depth + 1, sub))
        kwargs = {}
        for k in node.keywords:
            if k.arg in ("finite_n", "finite_width") or (k.arg in _SIZES and desc.startswith(n + "(heads=")):
                self.fail(k, f"{n}: {k.arg}= is not available in expressions: {_NOT_HERE}")
            if k.arg.startswith("_"):
                self.fail(k.value, f"names starting with '_' are not allowed ({k.arg!r})")
            if k.arg in kwargs:
                self.fail(k.value, f"keyword {k.arg!r} given twice")
            sub = dict(base, string_ok=(k.arg == "scheme" or (n == "polynomial" and k.arg == "polynomial")),
                       polynomial=(n == "pushforward" and k.arg == "polynomial"))
            kwargs[k.arg] = self.walk(k.value, depth + 1, sub)
        sig = _signature(n, fn)
        nodes = {}
        if sig is not None:
            try:
                sig.bind(*args, **kwargs)
            except TypeError as exc:
                where = node
                m = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
                if m:
                    where = next((k for k in node.keywords if k.arg == m.group(1)), node)
                elif "too many positional" in str(exc) and node.args:
                    params = [q for q in sig.parameters.values()
                              if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
                    where = node.args[min(len(params), len(node.args) - 1)]
                self.fail(where, f"{n}: {exc}; usage: {desc}")
            nodes = dict(sig.bind(*node.args, **{k.arg: k.value for k in node.keywords}).arguments)
        arg_nodes = dict(enumerate(node.args)) | {k.arg: k.value for k in node.keywords}
        self._check_argument_types(node, n, args, kwargs, arg_nodes)
        try:
            out = fn(*args, **kwargs)
        except FreeprobValueError as exc:
            if isinstance(exc, ExpressionError):
                raise
            # point at the argument the message names ("Parameter `rate` of ...")
            m = re.search(r"`(\w+)` of|: (\w+) must", str(exc))
            culprit = nodes.get(m.group(1) or m.group(2)) if m else None
            if culprit is None:                   # else any argument the message names
                culprit = next((v for k, v in nodes.items()
                                if isinstance(k, str) and re.search(rf"\b{k}\b", str(exc))), None)
            if n == "pushforward" and "polynomial" in str(exc):
                culprit = nodes.get("polynomial")
            self.fail(culprit if isinstance(culprit, ast.AST) else node, _prefixed(n, exc))
        except (TypeError, NotAvailable) as exc:
            self.fail(node, _prefixed(n, exc))
        except ZeroDivisionError:
            self.fail(node, f"{n}: division by zero")
        return out

    def _check_argument_types(self, node, n, args, kwargs, arg_nodes):
        """Laws where laws belong, values where values belong (clear messages, not deep errors)."""
        law_slots = {"free_add": "*", "free_mul": "*", "boolean_add": "*", "monotone_add": "*",
                     "free_power": (0, "law"), "pushforward": (0, "law"),
                     "shift": (0, "law"), "dilate": (0, "law"), "rectangular_companion": (0, "law"),
                     "mean_normalized": (0, "law"), "CompoundFreePoisson": (1, "jump_law"),
                     "compound_free_poisson": (1, "jump_law")}
        if n == "polynomial":
            self._check_polynomial_arguments(node, args, kwargs, arg_nodes)
            return
        slot = law_slots.get(n)
        positions = list(enumerate(args)) + [(k, v) for k, v in kwargs.items()]
        for where, v in positions:
            is_law_slot = (slot == "*") or (slot is not None and where in slot) or (
                n == "mixture" and where in (0, "laws"))
            at = arg_nodes.get(where, node)
            if n == "mixture" and where in (0, "laws"):
                if not isinstance(v, list) or not all(isinstance(e, Law) for e in v):
                    self.fail(at, "mixture: the first argument must be a list of laws, "
                                    "e.g. mixture([Semicircle(0, 1), Dirac(2)], [1/2, 1/2])")
                continue
            what = f"argument {where + 1}" if isinstance(where, int) else f"argument {where}="
            if is_law_slot and not isinstance(v, Law):
                self.fail(at, f"{n}: {what} must be a law; got {self._show(v)}")
            if not is_law_slot and isinstance(v, Law):
                self.fail(at, f"{n}: {what} must be a number or symbol, not a law")
            if isinstance(v, list) and n not in ("Atomic", "mixture"):
                self.fail(at, f"{n}: {what} must not be a list")
            if isinstance(v, list) and any(isinstance(e, Law) for e in v):
                self.fail(at, f"{n}: {what} must be a list of numbers, not of laws")

    def _check_polynomial_arguments(self, node, args, kwargs, arg_nodes):
        text = args[0] if args else kwargs.get("polynomial")
        if not isinstance(text, str):
            self.fail(arg_nodes.get(0, node), "polynomial: the first argument must be the polynomial as a "
                                              "string, e.g. polynomial('x*y + y*x', x=Semicircle(0, 1), y=...)")
        for k, v in kwargs.items():
            if k != "polynomial" and not isinstance(v, Law):
                self.fail(arg_nodes.get(k, node), f"polynomial: the variable {k}= must be a law; got {self._show(v)}")
        if not [k for k in kwargs if k != "polynomial"]:
            self.fail(node, "polynomial: give the laws of the variables as keywords, e.g. x=Semicircle(0, 1)")

    @staticmethod
    def _show(v):
        return "a list" if isinstance(v, list) else repr(v) if isinstance(v, str) else f"the value {v}"

    def value_function(self, node, n, depth, ctx):
        if node.keywords or len(node.args) != 1:
            self.fail(node, f"{n} takes exactly one positional argument: {_FUNCTIONS[n]}")
        arg = self.value(node.args[0], depth + 1, ctx)
        if n == "exp":
            if arg.is_Rational:
                if abs(arg) > MAX_EXP_ARGUMENT:
                    self.fail(node, f"exp argument above {MAX_EXP_ARGUMENT} in absolute value")
                return ExpConstant(arg)
            if arg.is_number and not arg.is_real:
                self.fail(node, "exp needs a real argument")
            return sp.exp(arg)
        out = sp.sqrt(arg)
        if out.is_number and out.is_real is False:
            self.fail(node, "sqrt of a negative number")
        # each independent square root doubles the degree of the exact number field the
        # coefficients live in (2^k): refuse before the field construction runs for minutes
        self.radicals = getattr(self, "radicals", 0) + (0 if out.is_Rational else 1)
        if self.radicals > MAX_RADICALS:
            self.fail(node, f"more than {MAX_RADICALS} irrational square roots (the exact coefficient field "
                            f"would have degree up to 2^{self.radicals}); use fewer, or decimals")
        return out

    def value(self, node, depth, ctx):
        v = self.walk(node, depth, dict(ctx, sequence_ok=False, string_ok=False))
        if isinstance(v, Law):
            self.fail(node, "a number or symbol is expected here, not a law")
        return v

    def unary(self, node, depth, ctx):
        v = self.walk(node.operand, depth + 1, dict(ctx, sequence_ok=False, string_ok=False))
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if isinstance(v, Law):
                return self._law_op(node, lambda: _ops.dilate(v, -1))
            return -v
        self.fail(node, f"the operator {type(node.op).__name__} is not allowed (only + - * / **)")

    def binop(self, node, depth, ctx):
        ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
        sym = ops.get(type(node.op))
        if sym is None:
            self.fail(node, f"the operator {type(node.op).__name__} is not allowed (only + - * / **)")
        sub = dict(ctx, sequence_ok=False, string_ok=False)
        a = self.walk(node.left, depth + 1, sub)
        b = self.walk(node.right, depth + 1, sub)
        la, lb = isinstance(a, Law), isinstance(b, Law)
        if la or lb:
            return self._law_binop(node, sym, a, b, la, lb)
        if sym == "**":
            return self._power(node, a, b)
        if sym == "/" and b == 0:
            self.fail(node, "division by zero")
        out = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b}[sym]()
        self._check_size(node, out)
        return out

    def _law_binop(self, node, sym, a, b, la, lb):
        if la and lb:
            hint = {"+": "free_add(a, b)", "*": "free_mul(a, b)"}.get(sym, "free_add / free_mul")
            self.fail(node, f"law {sym} law is not defined (classical or free?); use {hint}")
        law, val = (a, b) if la else (b, a)
        if sym == "+":
            return self._law_op(node, lambda: _ops.shift(law, val))
        if sym == "-":
            return self._law_op(node, lambda: _ops.shift(a, -b) if la else _ops.shift(_ops.dilate(b, -1), a))
        if sym == "*":
            return self._law_op(node, lambda: _ops.dilate(law, val))
        if sym == "/" and la:
            if b == 0:
                self.fail(node, "division by zero")
            return self._law_op(node, lambda: _ops.dilate(a, 1 / b))
        self.fail(node, f"`{sym}` with a law is not defined; laws allow law + a, law - a, c * law, law / c")

    def _law_op(self, node, make):
        try:
            return make()
        except FreeprobValueError as exc:
            self.fail(node, str(exc))

    def _power(self, node, a, b):
        if b.is_number:
            if not b.is_Rational:
                self.fail(node, "exponents must be rational numbers or symbols")
            if abs(b) > MAX_EXPONENT or max(abs(int(b.p)), int(b.q)) > MAX_EXPONENT:
                self.fail(node, f"exponent {b if _digits(b) < 30 else '(huge)'} is above the limit "
                                f"{MAX_EXPONENT} in absolute value")
            if a.is_Rational:
                if a == 0 and b < 0:
                    self.fail(node, "division by zero (0 to a negative power)")
                if _digits(a) * abs(b) > 2 * MAX_DIGITS:
                    self.fail(node, f"the power would have more than {MAX_DIGITS} digits")
        elif a.is_number and a.is_Rational and abs(a) not in (0, 1) and not b.free_symbols:
            self.fail(node, "exponents must be rational numbers or symbols")
        out = a**b
        self._check_size(node, out)
        return out

    def _check_size(self, node, v):
        if isinstance(v, sp.Basic):
            if v.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
                self.fail(node, "division by zero or an infinite value")
            for r in v.atoms(sp.Rational):
                if _digits(r) > MAX_DIGITS:
                    self.fail(node, f"a number with more than {MAX_DIGITS} digits")


def _prepare(text) -> str:
    if not isinstance(text, str):
        raise FreeprobValueError(f"expected the expression as a string; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters", text[:MAX_LENGTH],
                              MAX_LENGTH)
    if "\x00" in text:
        raise ExpressionError("NUL character in the expression", text.replace("\x00", " "),
                              text.index("\x00") + 1)
    flat = re.sub(r"[\r\n\t\f\v]", " ", text)
    depth = 0
    for i, ch in enumerate(flat):
        if ch in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ExpressionError(f"brackets nested more than {MAX_DEPTH} deep", flat, i + 1)
        elif ch in ")]}":
            depth -= 1
    if not flat.strip():
        raise ExpressionError("empty expression", flat, 1)
    return flat


def _parse_tree(flat, lead):
    try:
        tree = ast.parse(flat[lead:], mode="eval")
    except SyntaxError as exc:
        msg = (exc.msg or "invalid syntax").replace("invalid syntax. ", "invalid syntax; ")
        if not exc.offset:          # Python reports offset 0 for an expression cut short
            raise ExpressionError(f"syntax error: {msg} (unexpected end of the expression)", flat,
                                  len(flat.rstrip()) + 1) from None
        raise ExpressionError(f"syntax error: {msg}", flat, exc.offset + lead) from None
    except (RecursionError, MemoryError):
        raise ExpressionError("the expression is too deeply nested or too large to parse", flat, 1) from None
    except ValueError as exc:     # pragma: no cover - e.g. null bytes, refused earlier
        raise ExpressionError(f"cannot parse: {exc}", flat, 1) from None
    return tree


def _walk_top(text, want_law):
    flat = _prepare(text)
    lead = len(flat) - len(flat.lstrip())
    tree = _parse_tree(flat, lead)
    walker = _Walker(flat, lead)
    try:
        out = walker.walk(tree.body, 0, {})
    except RecursionError:
        raise ExpressionError("the expression is too deeply nested", flat, 1) from None
    if want_law and not isinstance(out, Law):
        what = ("a string" if isinstance(out, str) else "a list" if isinstance(out, list)
                else f"the value {out}")
        raise ExpressionError(f"expected a law such as Semicircle(0, 1); got {what}", flat,
                              walker._col(tree.body.col_offset))
    if not want_law and not isinstance(out, sp.Expr):
        what = "a law" if isinstance(out, Law) else "a list" if isinstance(out, list) else "a string"
        raise ExpressionError(f"expected a number or symbolic value; got {what}", flat,
                              walker._col(tree.body.col_offset))
    return out


def parse_law(text: str) -> Law:
    r"""Parse a law expression such as ``"free_mul(FreePoisson(1/2), Semicircle(0, 1))"``.

    Parameters
    ----------
    text : str
        An expression of the grammar in the module docstring: calls of the families,
        operations and attention laws of :data:`NAMES` with exact values.

    Returns
    -------
    Law

    Raises
    ------
    ExpressionError
        Malformed text, a refused construct (attributes, subscripts, lambdas,
        comprehensions, names starting with ``_``, ...), an unknown name (the message
        lists the known ones and suggests the closest), a wrong argument, a parameter
        outside its domain, or a limit exceeded (length, depth, digits, exponent); its
        ``column`` points at the offending part of ``text``.
    FreeprobValueError
        ``text`` is not a string.

    Source: this module (no external reference); the laws are those of
    :mod:`freeprob.laws.families`, :mod:`freeprob.laws.operations` and :mod:`freeprob.attention`.

    >>> parse_law("MarchenkoPastur(2)")
    FreePoisson(rate=1/2, jump=2)
    >>> parse_law("2 * Semicircle(0, 1) + 1").moments(2)
    (1, 1, 5)
    """
    return _walk_top(text, True)


def parse_value(text: str) -> sp.Expr:
    r"""Parse a parameter value: a number, exact rational, symbol, constant or arithmetic.

    Parameters
    ----------
    text : str
        E.g. ``"1/3"``, ``"0.25"`` (read as ``1/4``), ``"exp(1) - 1"``, ``"t**2 + 1"``,
        ``"sqrt(2)/2"``, ``"pi"``.

    Returns
    -------
    sympy.Expr
        Exact: rationals stay rationals; ``exp(r)`` of a rational ``r`` is
        :class:`freeprob.core.symbols.ExpConstant` (``exp(1)`` is ``E``).

    Raises
    ------
    ExpressionError
        As for :func:`parse_law`, and when the text denotes a law rather than a value.

    Source: this module.

    >>> parse_value("1/3 + 0.5")
    5/6
    >>> parse_value("exp(1) - 1")
    -1 + E
    """
    return _walk_top(text, False)
