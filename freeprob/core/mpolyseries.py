r"""Series over rational functions of symbols, in FLINT multivariate polynomials.

The elements and series kernels of :class:`~freeprob.core.coefficients.MpolyRing`
(issue 17): a coefficient is a rational function of the parameters, a :class:`Frac`
``num/den`` of two python-flint ``fmpq_mpoly`` in lowest terms (``den`` with leading
coefficient 1), and a truncated series ``Σ_{k<n} P_k x^k`` with polynomial coefficients
is *packed* into one ``fmpq_mpoly`` in the parameters and one more variable ``x``, so that
a series product is one FLINT product followed by a truncation (the remainder of the
division by ``x^n``).

Rational coefficients are kept out of the series kernels by rescaling the variable: for a
series ``a_0 (1 + Σ_{k≥1} e_k x^k)`` with rational ``e_k``, a polynomial ``c`` is chosen
such that every ``e_k c^k`` is a polynomial (from the irreducible factors of the
denominators: ``c = Π p^{max_k ⌈v_p(den e_k)/k⌉}``); then ``A(x) = q(x/c)`` with a
polynomial series ``q``, and ``1/A(x) = Q(x/c)``, ``Q = 1/q`` (Newton iteration).  The
reversion of ``f`` is Lagrange inversion,

.. math::  [x^k] f^{<-1>} = \frac1k [y^{k-1}] φ(y)^k, \qquad φ = y / f(y),

directly when ``φ`` has polynomial coefficients (issue 27: the χ-transform
``u/((1+u)(t1+u)(t2+u))`` of a product of free Poisson laws, whose ``φ`` is the product);
otherwise ``f = f_1 (x + Σ_{k≥2} e_k x^k)`` is rescaled as above (weights ``k − 1``) to
``h(y) = y + Σ h_k y^k`` with polynomial ``h_k`` and Lagrange inversion runs on
``φ = y/h(y)``.  The powers ``φ^j`` are split into baby steps ``φ^b`` (``b < m``) and giant
steps ``φ^{am}`` (``m ≈ √n``): ``O(√n)`` packed products and ``n²/2`` products of
coefficients (the baby-step giant-step evaluation of Lagrange's formula, cf. Brent–Kung
[KNU97]_ §4.7).  When ``φ`` is a polynomial of low degree ``d`` (at most ``√n``) the plain
chain ``φ^j = φ^{j-1} φ`` on lists of coefficients (``d + 1`` small products per
coefficient, only the coefficients later steps read) is cheaper and is used.

Conversion: :func:`from_domain` and :func:`to_domain` go to and from the elements of a
sympy rational function field ``ZZ(t1, …)`` / ``QQ(t1, …)`` (whose canonical form, and so
whose ``to_sympy`` expressions, are those of
:class:`~freeprob.core.coefficients.SymbolicRing`); :func:`poly_expr` builds the
same expression directly, in one pass, for a polynomial (the common case, and the one
where sympy's generic constructors cost most).
"""
from __future__ import annotations

import math

import flint
import sympy as sp
from sympy.core.basic import _args_sortkey

__all__ = ["Frac", "MpolyAlgebra", "from_domain", "to_domain", "poly_expr"]


class Frac:
    """A rational function ``num/den`` (``fmpq_mpoly``), in lowest terms, ``den`` with
    leading coefficient 1.  Supports ``+ - * /`` with ``Frac``, ``int``, ``fmpz``, ``fmpq``."""

    __slots__ = ("num", "den")

    def __init__(self, num, den):
        self.num, self.den = num, den

    @staticmethod
    def make(num, den):
        """``num/den`` reduced to lowest terms (``den`` not zero)."""
        if den.is_one():
            return Frac(num, den)
        if num.is_zero():
            return Frac(num, den.context().constant(1))
        if den.is_constant():
            c = den.leading_coefficient()
            return Frac(num / c, den.context().constant(1))
        g = num.gcd(den)
        if not g.is_one():
            num, den = num / g, den / g
        c = den.leading_coefficient()
        if c != 1:
            num, den = num / c, den / c
        return Frac(num, den)

    def _lift(self, other):
        if isinstance(other, Frac):
            return other
        if isinstance(other, (int, flint.fmpz, flint.fmpq)) and not isinstance(other, bool):
            ctx = self.num.context()
            return Frac(ctx.constant(other), ctx.constant(1))
        return None

    def __add__(self, other):
        o = self._lift(other)
        if o is None:
            return NotImplemented
        if self.den.is_one() and o.den.is_one():
            return Frac(self.num + o.num, self.den)
        if self.den == o.den:
            return Frac.make(self.num + o.num, self.den)
        return Frac.make(self.num * o.den + o.num * self.den, self.den * o.den)

    __radd__ = __add__

    def __neg__(self):
        return Frac(-self.num, self.den)

    def __sub__(self, other):
        o = self._lift(other)
        return NotImplemented if o is None else self + (-o)

    def __rsub__(self, other):
        o = self._lift(other)
        return NotImplemented if o is None else o + (-self)

    def __mul__(self, other):
        if isinstance(other, (int, flint.fmpz, flint.fmpq)) and not isinstance(other, bool):
            if other == 0:
                return Frac(self.num * 0, self.num.context().constant(1))
            return Frac(self.num * other, self.den)
        if not isinstance(other, Frac):
            return NotImplemented
        if self.den.is_one() and other.den.is_one():
            return Frac(self.num * other.num, self.den)
        return Frac.make(self.num * other.num, self.den * other.den)

    __rmul__ = __mul__

    def inverse(self):
        if self.num.is_zero():
            raise ZeroDivisionError("Frac: division by zero")
        num, den = self.den, self.num
        c = den.leading_coefficient()
        return Frac(num / c, den / c) if c != 1 else Frac(num, den)

    def __truediv__(self, other):
        if isinstance(other, (int, flint.fmpz, flint.fmpq)) and not isinstance(other, bool):
            if other == 0:
                raise ZeroDivisionError("Frac: division by zero")
            return Frac(self.num / other, self.den)
        if not isinstance(other, Frac):
            return NotImplemented
        return self * other.inverse()

    def __rtruediv__(self, other):
        o = self._lift(other)
        return NotImplemented if o is None else o * self.inverse()

    def __eq__(self, other):
        o = self._lift(other)
        if o is None:
            return NotImplemented
        return self.num == o.num and self.den == o.den

    __hash__ = None

    def __repr__(self):
        return f"({self.num})/({self.den})" if not self.den.is_one() else f"{self.num}"


def _ceil_div(a, b):
    return -(-a // b)


class MpolyAlgebra:
    """Elements and packed-series kernels over ``ℚ(v_0, …, v_{m-1})`` (``m = nvars``).

    The FLINT context has the ``m`` parameters and, last, the series variable ``x``;
    coefficients are polynomials free of ``x``.

    Raises ``ZeroDivisionError`` on division by zero.  Source: [KNU97]_ §4.7 (series
    arithmetic), python-flint's ``fmpq_mpoly``.
    """

    def __init__(self, nvars: int):
        self.nvars = int(nvars)
        names = tuple(f"v{i}" for i in range(self.nvars)) + ("x",)
        self.ctx = flint.fmpq_mpoly_ctx.get(names, "lex")
        self.x = self.ctx.gens()[-1]
        self.one_poly = self.ctx.constant(1)
        self.zero = Frac(self.ctx.constant(0), self.one_poly)
        self.one = Frac(self.one_poly, self.one_poly)
        self._xpows = {}

    # -- elements ----------------------------------------------------------------
    def poly(self, terms):
        """The polynomial ``{exponents (nvars): fmpq}`` (coefficient-free of ``x``)."""
        return self.ctx.from_dict({tuple(m) + (0,): c for m, c in terms.items()})

    def terms(self, p):
        """``{exponents (nvars): fmpq}`` of a polynomial free of ``x``."""
        return {m[:-1]: c for m, c in p.to_dict().items()}

    # -- packed series -----------------------------------------------------------
    def pack(self, polys):
        """``Σ_k polys[k] x^k`` as one ``fmpq_mpoly`` (divide and conquer, in FLINT).

        Raises nothing.  Source: this module.
        """
        polys = list(polys)
        if not polys:
            return self.ctx.constant(0)

        def rec(lo, hi):
            if hi - lo == 1:
                return polys[lo]
            mid = (lo + hi) // 2
            high = rec(mid, hi)
            low = rec(lo, mid)
            return low if high.is_zero() else low + high * self._xpow(mid - lo)

        return rec(0, len(polys))

    def unpack(self, P, n):
        """The coefficients ``[P_0, …, P_{n-1}]`` of ``x^k`` in the packed ``P`` (divide
        and conquer: remainders and quotients by powers of ``x``, in FLINT).

        Raises nothing.  Source: this module.
        """
        out = [None] * n
        zero = self.ctx.constant(0)

        def rec(Q, lo, hi):                    # Q holds the coefficients lo..hi-1, shifted
            if Q.is_zero():
                for k in range(lo, hi):
                    out[k] = zero
            elif hi - lo == 1:
                out[lo] = Q
            else:
                mid = (lo + hi) // 2
                q, r = divmod(Q, self._xpow(mid - lo))
                rec(r, lo, mid)
                rec(q, mid, hi)

        rec(self.trunc(P, n), 0, n)
        return out

    def _xpow(self, k):
        k = int(k)          # a sympy Integer order (e.g. from sp.degree) is not a flint exponent
        try:
            return self._xpows[k]
        except KeyError:
            self._xpows[k] = p = self.x ** k
            return p

    def trunc(self, P, n):
        """``P mod x^n``."""
        if P.is_zero() or P.degrees()[-1] < n:
            return P
        return divmod(P, self._xpow(n))[1]

    def mul_trunc(self, P, Q, n):
        """``P Q mod x^n``; for two long factors the low half only (split at ``h = ⌈n/2⌉``:
        ``A C + x^h (A D + B C) mod x^n`` with ``P = A + x^h B``, ``Q = C + x^h D``), which
        skips the products of the discarded high half.

        Raises nothing.  Source: [KNU97]_ §4.7.
        """
        P, Q = self.trunc(P, n), self.trunc(Q, n)
        if P.is_zero() or Q.is_zero():
            return P * 0
        if min(P.degrees()[-1], Q.degrees()[-1]) < 8:
            return self.trunc(P * Q, n)
        h = (n + 1) // 2
        xh = self._xpow(h)
        B, A = divmod(P, xh)
        D, C = divmod(Q, xh)
        high = self.mul_trunc(A, D, n - h) + self.mul_trunc(B, C, n - h)
        return self.trunc(A * C, n) + high * xh

    def inv_packed(self, q, n):
        """``1/q mod x^n`` for a packed ``q`` with constant term 1 (Newton iteration).

        Raises ``ZeroDivisionError`` if the constant term is 0.  Source: [KNU97]_ §4.7 (Newton).
        """
        Q = self.one_poly
        prec = 1
        while prec < n:
            prec = min(2 * prec, n)
            E = self.mul_trunc(q, Q, prec)            # 1 + O(x^{prec/2})
            Q = Q - self.mul_trunc(Q, E - 1, prec)
        return Q

    # -- rational coefficients -------------------------------------------------
    def _fracs_to_polys(self, a):
        """``(polys, D)`` with ``a[k] = polys[k] / D`` (``D`` the lcm of the denominators)."""
        D = self.one_poly
        for f in a:
            if not f.den.is_one() and not D == f.den:
                g = D.gcd(f.den)
                D = D * (f.den / g)
        if D.is_one():
            return [f.num for f in a], D
        return [f.num * (D / f.den) if not f.den.is_one() else f.num * D for f in a], D

    def _scaling(self, e, weights):
        """A polynomial ``c`` with ``e[i] c^{weights[i]}`` polynomial for every ``i``."""
        dens = [(f.den, w) for f, w in zip(e, weights) if not f.den.is_one()]
        if not dens:
            return self.one_poly
        lcm = self.one_poly
        for d, _ in dens:
            if not lcm == d:
                lcm = lcm * (d / lcm.gcd(d))
        c = self.one_poly
        for p, _ in lcm.factor()[1]:
            need = 0
            for d, w in dens:
                v = 0
                while True:
                    q, r = divmod(d, p)
                    if not r.is_zero():
                        break
                    d, v = q, v + 1
                need = max(need, _ceil_div(v, w))
            c = c * p ** need
        return c

    def _scaled_polys(self, e, weights, c):
        """``[e[i] c^{weights[i]}]`` as polynomials (exact by the choice of ``c``)."""
        if c.is_one():
            return [f.num for f in e]
        out = []
        pw = {}
        for f, w in zip(e, weights):
            if f.num.is_zero():
                out.append(f.num)
                continue
            if w not in pw:
                pw[w] = c ** w
            out.append(f.num * (pw[w] / f.den))
        return out

    def _times_scalar(self, polys, scalars):
        """``[polys[k] * scalars[k]]`` as reduced :class:`Frac` (``scalars`` are Frac)."""
        out = []
        for p, s in zip(polys, scalars):
            if p.is_zero():
                out.append(self.zero)
            elif s.den.is_one():
                out.append(Frac(p * s.num, s.den))
            else:
                out.append(Frac.make(p * s.num, s.den))
        return out

    # -- kernels on lists of Frac --------------------------------------------------
    def mul(self, a, b, n):
        pa, Da = self._fracs_to_polys(a[:n])
        pb, Db = self._fracs_to_polys(b[:n])
        R = self.unpack(self.mul_trunc(self.pack(pa), self.pack(pb), n), n)
        D = Da * Db
        if D.is_one():
            return [Frac(r, D) for r in R]
        return [Frac.make(r, D) for r in R]

    def inv(self, a, n):
        a0 = a[0]
        ia0 = a0.inverse()
        e = [f * ia0 for f in a[1:n]]                                   # a = a0 (1 + Σ e_k x^k)
        weights = list(range(1, len(e) + 1))
        c = self._scaling(e, weights)
        q = self.pack([self.one_poly] + self._scaled_polys(e, weights, c))
        Q = self.unpack(self.inv_packed(q, n), n)                       # 1/A(x) = Q(x/c)
        scal, s, ic = [], ia0, Frac(self.one_poly, c) if c.is_one() else Frac.make(self.one_poly, c)
        for _ in range(n):
            scal.append(s)
            s = s * ic
        return self._times_scalar(Q, scal)

    def compose(self, f, g, n):
        """``f(g) mod x^n`` (``g_0 = 0``) as ``Σ_j f_j g^j``: the powers ``g^j`` packed (one
        truncated product each, in the coefficients of ``g`` only), each multiplied by its
        ``f_j`` and summed.  Horner's rule ``f_0 + g(f_1 + g(…))`` instead multiplies the
        growing series, whose coefficients mix the parameters of ``f`` and ``g``, by ``g`` at
        every step: for the monotone convolution of two laws with different symbols this is
        about 20 times faster at 64 terms.

        Raises nothing.  Source: [KNU97]_ §4.7 (composition of power series).
        """
        pf, Df = self._fracs_to_polys(f[:n])
        pg, Dg = self._fracs_to_polys(g[:n])
        G = self.pack(pg)
        acc, power, scale = self.ctx.constant(0), self.one_poly, self.one_poly
        dpow = [self.one_poly]                      # Dg^i, i = 0..n-1
        if not Dg.is_one():
            for _ in range(n - 1):
                dpow.append(dpow[-1] * Dg)
            scale = dpow[-1]
        for j in range(min(n, len(pf))):
            if j:
                power = self.mul_trunc(power, G, n)
                if power.is_zero():
                    break
            if not pf[j].is_zero():
                term = power * pf[j]
                acc = acc + (term if Dg.is_one() else term * dpow[n - 1 - j])
        D = Df * scale
        R = self.unpack(acc, n)
        if D.is_one():
            return [Frac(r, D) for r in R]
        return [Frac.make(r, D) for r in R]

    def reversion(self, f, n):
        out = [self.zero] * n
        if n <= 1:
            return out
        # φ = x/f(x) and g_k = (1/k) [x^{k-1}] φ^k: when φ has polynomial coefficients
        # (χ = u/((1+u)(t1+u)(t2+u)) of a free product of free Poisson laws: φ is the
        # product), Lagrange inversion runs on φ itself, with polynomial results
        phi = self.inv(f[1:n], n - 1)
        if all(p.den.is_one() for p in phi):
            H = self._lagrange_phi(self.pack([p.num for p in phi]), n)
            return [self.zero] + [Frac(h, self.one_poly) for h in H[1:]]
        f1 = f[1]
        if1 = f1.inverse()
        e = [g * if1 for g in f[2:n]]                                  # f = f1 (x + Σ e_k x^k)
        weights = list(range(1, len(e) + 1))
        c = self._scaling(e, weights)
        h = self._scaled_polys(e, weights, c)                           # h(y) = y + Σ h_k y^k
        H = self.lagrange(h, n)                                         # h^{<-1>}, H[1] = 1
        # g(x) = G(x/f1), G(x) = c H(x/c): g_k = H_k / (c^{k-1} f1^k)
        ic = Frac(self.one_poly, c) if c.is_one() else Frac.make(self.one_poly, c)
        scal, s = [self.zero], if1
        for _ in range(1, n):
            scal.append(s)
            s = s * if1 * ic
        return self._times_scalar(H, scal)

    def lagrange(self, h, n):
        """Reversion ``[0, 1, H_2, …, H_{n-1}]`` (polynomials) of ``y + Σ h[k-2] y^k``:
        ``H_j = (1/j) [y^{j-1}] φ^j``, ``φ = y/h(y)``, baby-step giant-step.

        Raises nothing.  Source: [KNU97]_ §4.7 (Lagrange inversion).
        """
        N = n - 1                                   # the largest j
        if N < 1:
            return [self.ctx.constant(0)] * n
        phi = self.inv_packed(self.pack([self.one_poly] + list(h[:max(N - 1, 0)])), N)
        return self._lagrange_phi(phi, n)

    def _lagrange_phi(self, phi, n):
        """``[0, H_1, …, H_{n-1}]``, ``H_j = (1/j) [y^{j-1}] φ^j`` for the packed ``φ`` (known
        modulo ``y^{n-1}``, polynomial coefficients, any constant term): the chain of
        :meth:`_lagrange_chain` when ``φ`` has low degree in ``y``, else baby-step giant-step.

        Raises nothing.  Source: [KNU97]_ §4.7 (Lagrange inversion)."""
        zero = self.ctx.constant(0)
        N = n - 1
        if N < 1:
            return [zero] * n
        phi = self.trunc(phi, N)
        m = max(1, math.isqrt(N))
        out = [zero] * n
        if phi.degrees()[-1] <= max(m, 2):
            # φ is a polynomial of low degree in y (e.g. (1+u)(t1+u)(t2+u) of a free
            # product of free Poisson laws): the plain chain φ^j = φ^{j-1} φ is cheaper
            return self._lagrange_chain(phi, N, out)
        baby = [self.one_poly]
        for _ in range(1, m):
            baby.append(self.mul_trunc(baby[-1], phi, N))
        giant_step = self.mul_trunc(baby[-1], phi, N)
        B = [self.unpack(b, N) for b in baby]
        G, a = self.one_poly, 0
        while a * m <= N:
            Gc = self.unpack(G, N) if a else None
            for b in range(m):
                j = a * m + b
                if j == 0:
                    continue
                if j > N:
                    break
                if a == 0:
                    v = B[b][j - 1]
                elif b == 0:
                    v = Gc[j - 1]
                else:
                    Bb = B[b]
                    v = zero
                    for i in range(j):
                        gi = Gc[i]
                        if not gi.is_zero():
                            bi = Bb[j - 1 - i]
                            if not bi.is_zero():
                                v += gi * bi
                out[j] = v / j if j > 1 else v
            a += 1
            if a * m <= N:
                G = self.mul_trunc(G, giant_step, N)
        return out

    def _lagrange_chain(self, phi, N, out):
        """``out[j] = (1/j) [y^{j-1}] φ^j`` for ``j = 1..N`` and a polynomial ``φ`` of low
        degree ``d`` in ``y``: the chain ``φ^j = φ^{j-1} φ`` on the list of coefficients
        (``d + 1`` products of coefficient polynomials per coefficient), so that truncating
        and reading a coefficient cost nothing (on the packed polynomial both are FLINT
        divisions by powers of ``y``, which cost about as much as the products).  Only the
        coefficients a later ``[y^{j'-1}] φ^{j'}`` reads are formed: those of ``φ^j`` from
        ``y^{jd - 1 - N(d-1)}`` to ``y^{N-1}``.

        Raises nothing.  Source: [KNU97]_ §4.7 (Lagrange inversion)."""
        zero = self.ctx.constant(0)
        phis = [(d, c) for d, c in enumerate(self.unpack(phi, phi.degrees()[-1] + 1))
                if not c.is_zero()]
        deg = phis[-1][0]
        P = [self.one_poly]                          # φ^{j-1} mod y^N, coefficient lists
        for j in range(1, N + 1):
            top = min(len(P) - 1 + deg, N - 1)
            low = max(0, j * deg - 1 - N * (deg - 1)) if deg else 0
            Q = [zero] * low
            for i in range(low, top + 1):
                acc = None
                for d, c in phis:
                    if i < d:
                        break
                    if i - d < len(P):
                        q = P[i - d]
                        if not q.is_zero():
                            q = q if c.is_one() else q * c
                            acc = q if acc is None else acc + q
                Q.append(zero if acc is None else acc)
            P = Q
            v = P[j - 1] if j - 1 < len(P) else zero
            out[j] = v / j if j > 1 else v
        return out


# -- sympy fraction fields ZZ(v_0, …) / QQ(v_0, …) ------------------------------------
def _ints(c, dom):
    """``(p, q)`` of a coefficient of ``dom`` (ZZ or QQ)."""
    if dom.is_ZZ:
        return int(c), 1
    return int(dom.numer(c)), int(dom.denom(c))


def from_domain(alg, K, a):
    """The :class:`Frac` of an element ``a`` of the sympy fraction field ``K``."""
    def poly(p):
        d = {}
        for m, c in p.items():
            num, den = _ints(c, K.dom)
            d[tuple(m) + (0,)] = flint.fmpq(num, den)
        return alg.ctx.from_dict(d)

    num, den = poly(K.numer(a)), poly(K.denom(a))
    return Frac.make(num, den)


def to_domain(alg, K, f):
    """The element of the sympy fraction field ``K`` equal to the :class:`Frac` ``f``."""
    num, den = f.num.to_dict(), f.den.to_dict()
    ring = K.field.ring
    lcm = 1
    if K.dom.is_ZZ:
        for c in list(num.values()) + list(den.values()):
            q = int(c.q)
            if q != 1:
                lcm = lcm * q // math.gcd(lcm, q)
        nd = {m[:-1]: int(c.p) * (lcm // int(c.q)) for m, c in num.items()}
        dd = {m[:-1]: int(c.p) * (lcm // int(c.q)) for m, c in den.items()}
    else:
        dom = K.dom
        nd = {m[:-1]: dom(int(c.p), int(c.q)) for m, c in num.items()}
        dd = {m[:-1]: dom(int(c.p), int(c.q)) for m, c in den.items()}
    if f.den.is_one() and K.dom.is_ZZ and lcm == 1:
        return K.field.raw_new(ring.from_dict(nd), ring.one)
    return K.field.new(ring.from_dict(nd), ring.from_dict(dd))


#: sympy class -> its position in ``ordering_of_classes`` (the first key of
#: :meth:`sympy.core.basic.Basic.compare`), or ``None`` when the class is not listed there
_CLASS_POS = {}


def _class_pos(cls):
    try:
        return _CLASS_POS[cls]
    except KeyError:
        from sympy.core.basic import ordering_of_classes
        pos = _CLASS_POS[cls] = (ordering_of_classes.index(cls.__name__)
                                 if cls.__name__ in ordering_of_classes else None)
        return pos


#: ``(g, e) -> g**e`` for the powers built by :func:`poly_expr` (bounded: cleared when full)
_POWERS = {}


def _power(g, e):
    try:
        return _POWERS[(g, e)]
    except KeyError:
        if len(_POWERS) > 100_000:
            _POWERS.clear()
        out = _POWERS[(g, e)] = g if e == 1 else sp.Pow(g, e)
        return out


def poly_expr(p, gens):
    """The sympy expression of the polynomial ``p`` (rational coefficients, free of ``x``) in
    the symbols ``gens``, in canonical form: the expression sympy's ``Add``/``Mul``
    constructors build (and so ``to_sympy`` of the fraction field), with identical
    arguments in identical order.  ``None`` when a class involved is not in sympy's
    ``ordering_of_classes`` (then the caller takes sympy's generic route).

    One pass: the generators are ranked once by sympy's sort key (``_args_sortkey``, i.e.
    :meth:`sympy.core.basic.Basic.compare`), after which each term's place is a tuple of
    integers: ``compare`` orders two objects by the position of their classes in
    ``ordering_of_classes``, then by the length of their arguments, then argument by
    argument; the arguments of ``g**e`` are ``(g, e)``, those of a number ``(p, q)``.  So
    the terms are sorted by plain tuple comparison instead of one ``compare`` call (a
    recursive Python function) per pair, which cost most of the conversion of a long
    symbolic series.

    Raises nothing.  Source: sympy's ``Basic.compare``, ``Add.flatten``, ``Mul.flatten``.
    """
    d = p.to_dict()
    if not d:
        return sp.S.Zero
    nv = len(gens)
    pos_mul, pos_pow = _class_pos(sp.Mul), _class_pos(sp.Pow)
    # compare(g**a, h**b) is compare(g, h), then a vs b: rank the generators once
    grank = {g: r for r, g in enumerate(sorted(gens, key=_args_sortkey))}
    gpos = [_class_pos(type(g)) for g in gens]
    if None in gpos or pos_mul is None or pos_pow is None:
        return None
    objs, fkey = {}, {}
    for m in d:
        for i, e in enumerate(m[:nv]):
            if e and (i, e) not in objs:
                objs[(i, e)] = _power(gens[i], e)
                fkey[(i, e)] = (gpos[i], grank[gens[i]]) if e == 1 else (pos_pow, grank[gens[i]], e)
    numbers = {}
    terms, const = [], None
    for m, c in d.items():
        pq = (int(c.p), int(c.q))
        num = numbers.get(pq)
        if num is None:
            num = sp.Integer(pq[0]) if pq[1] == 1 else sp.Rational(*pq)
            cp = _class_pos(type(num))
            if cp is None:
                return None
            numbers[pq] = num = (num, (cp,) + pq)
        fs = [(i, e) for i, e in enumerate(m[:nv]) if e]
        if not fs:
            const = num[0]
            continue
        if len(fs) > 1:
            fs.sort(key=fkey.__getitem__)
        if pq == (1, 1):
            if len(fs) == 1:
                terms.append((fkey[fs[0]], objs[fs[0]]))
                continue
            args, akeys = [], []
        else:
            args, akeys = [num[0]], [num[1]]
        args += [objs[f] for f in fs]
        akeys += [fkey[f] for f in fs]
        terms.append(((pos_mul, len(args), *akeys), sp.Mul._from_args(args, True)))
    if not terms:
        return const
    terms.sort(key=lambda kt: kt[0])
    args = [t for _, t in terms]
    if const is not None:
        args.insert(0, const)
    return args[0] if len(args) == 1 else sp.Add._from_args(args, True)
