r"""Conventions of freeprob, stated once (this module holds no code).

Every transform docstring links here; every convention is tested in
``tests/test_conventions.py`` on known laws.

Sequences
    Indexed by order: moments ``(m_0 = 1, m_1, …, m_k)``, free cumulants
    ``(κ_0 = 0, κ_1, …, κ_k)``, boolean cumulants ``(b_0 = 0, b_1, …)``, classical
    cumulants ``(c_0 = 0, c_1, …)``.

Cauchy transform
    ``G(z) = ∫ dμ(x)/(z − x)``, so ``G(z) ~ 1/z`` at infinity and ``Im G(z) < 0``
    for ``Im z > 0``.  As a series at infinity, ``G(z) = Σ_{n≥0} m_n z^{−n−1}``.  The
    Stieltjes sign ``m = −G`` is never used.  Density: ``−Im G(x + i0)/π``.

Moment series
    ``ψ(z) = Σ_{n≥1} m_n z^n`` (no constant term), so ``1 + ψ(z) = z^{−1} G(z^{−1})``.

η-transform (boolean cumulants)
    ``η(z) = ψ(z)/(1 + ψ(z)) = 1 − 1/M(z) = Σ_{n≥1} b_n z^n`` with ``M = 1 + ψ``.

χ- and S-transforms
    ``χ = ψ^{<−1>}`` (compositional inverse; needs ``m_1 ≠ 0``) and
    ``S(u) = χ(u)(1 + u)/u``.  Free Poisson with rate ``t`` and jump 1 has
    ``S(u) = 1/(u + t)``; ``S_{μ⊠ν} = S_μ S_ν``; ``S_{cX}(u) = S_X(u)/c``.

R-transform (Voiculescu)
    ``R(w) = Σ_{n≥0} κ_{n+1} w^n``, defined by ``G(R(w) + 1/w) = w``; semicircle of
    variance σ²: ``R(w) = σ² w``; free Poisson rate λ, jump α: ``R(w) = λα/(1 − αw)``.
    ``R_{μ⊞ν} = R_μ + R_ν``.  The series ``w R(w) = Σ_{n≥1} κ_n w^n`` is the
    *cumulant series* (``Law.cumulant_series``), never called the R-transform.

Canonical variables (:mod:`freeprob.core.symbols`)
    ``z`` for G and ψ, ``w`` for R, ``u`` for χ and S, ``G`` for the unknown of
    algebraic equations, ``x`` for polynomials.

Marchenko–Pastur
    ``FreePoisson(rate=λ, jump=α)`` has free cumulants ``λ α^n``; the ``MP(c)`` of the
    attention laws (mean 1, variance c, the law of ``XᵀX/m``, ``X ∈ R^{m×p}``,
    ``c = p/m``) is ``MarchenkoPastur(c) = FreePoisson(rate=1/c, jump=c)``.

Parameters
    Exact sympy expressions; floats are converted to the exact rational they print as
    (``0.1 → 1/10``), see :mod:`freeprob.core.params`.

References
    [NS06]_ Lecture 11 (free cumulants), Lecture 16 (R-transform), Lecture 18
    (S-transform); [MS17]_ §2.1–2.6 (:mod:`freeprob.references`).
"""
