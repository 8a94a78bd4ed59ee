r"""The one bibliography of freeprob.  Docstrings cite these by key, ``[HK26]_``; the documentation's
references page (docs/references.md) lists the same entries (a test checks both).

.. [HK26] T. Hayase, R. Karakida, *Gaussian Equivalence for Multi-Head Self-Attention*,
   arXiv:2610.10033 (2026).
.. [HCK25] T. Hayase, B. Collins, R. Karakida, *Gaussian Equivalence for Self-Attention:
   Asymptotic Spectral Analysis of Attention Matrix*, arXiv:2510.06685 (2025).
.. [THEORY] docs/theory.md of this project: the reconstruction of [HK26]'s model,
   conventions and laws, with numerical checks.
.. [NS06] A. Nica, R. Speicher, *Lectures on the Combinatorics of Free Probability*, LMS
   Lecture Note Series 335, Cambridge University Press (2006).
.. [MS17] J. A. Mingo, R. Speicher, *Free Probability and Random Matrices*, Fields Institute
   Monographs 35, Springer (2017).
.. [VOI87] D. Voiculescu, Multiplication of certain non-commuting random variables, J.
   Operator Theory 18 (1987), 223–235.
.. [NS96] A. Nica, R. Speicher, On the multiplication of free N-tuples of noncommutative
   random variables, Amer. J. Math. 118 (1996), 799–837.
.. [SW97] R. Speicher, R. Woroudi, Boolean convolution, Fields Inst. Commun. 12 (1997),
   267–279.
.. [LS59] V. P. Leonov, A. N. Shiryaev, On a method of calculation of semi-invariants,
   Theory Probab. Appl. 4 (1959), 319–329.
.. [RE08] N. R. Rao, A. Edelman, The polynomial method for random matrices, Found. Comput.
   Math. 8 (2008), 649–702.
.. [BS10] Z. Bai, J. W. Silverstein, *Spectral Analysis of Large Dimensional Random
   Matrices*, 2nd ed., Springer (2010).
.. [LY22] Y. M. Lu, H.-T. Yau, An equivalence principle for the spectrum of random inner-product
   kernel matrices with polynomial scalings, arXiv:2205.06308 (2022).
.. [DW18] E. Dobriban, S. Wager, High-dimensional asymptotics of prediction: ridge
   regression and classification, Ann. Statist. 46 (2018), 247–279.
.. [TRA76] B. M. Trager, Algebraic factoring and rational function integration, Proc.
   SYMSAC '76 (1976), 219–226.
.. [BES40] A. S. Besicovitch, On the linear independence of fractional powers of integers,
   J. London Math. Soc. 15 (1940), 3–6.
.. [MOR53] L. J. Mordell, On the linear independence of algebraic numbers, Pacific J. Math.
   3 (1953), 625–630.
.. [KNU97] D. E. Knuth, *The Art of Computer Programming*, vol. 2, 3rd ed., §4.7
   (manipulation of power series), Addison-Wesley (1997).
.. [FUJ16] M. Fujiwara, Über die obere Schranke des absoluten Betrages der Wurzeln einer
   algebraischen Gleichung, Tôhoku Math. J. 10 (1916), 167–171.
.. [BCSS98] L. Blum, F. Cucker, M. Shub, S. Smale, *Complexity and Real Computation*,
   Springer (1998).
.. [RUM10] S. M. Rump, Verification methods: rigorous results using floating-point
   arithmetic, Acta Numerica 19 (2010), 287–449.
.. [NEU90] A. Neumaier, *Interval Methods for Systems of Equations*, Cambridge University
   Press (1990).
.. [JOH17] F. Johansson, Arb: efficient arbitrary-precision midpoint-radius interval
   arithmetic, IEEE Trans. Comput. 66 (2017), 1281–1292.
.. [JOH18] F. Johansson, Numerical integration in arbitrary-precision ball arithmetic,
   Mathematical Software – ICMS 2018, LNCS 10931 (2018), 255–263.
.. [BGN12] F. Benaych-Georges, R. R. Nadakuditi, The singular values and vectors of low rank
   perturbations of large rectangular random matrices, J. Multivariate Anal. 111 (2012), 120–135.
.. [AND13] G. W. Anderson, Convergence of the largest singular value of a polynomial in
   independent Wigner matrices, Ann. Probab. 41 (2013), 2103–2181.
.. [BMS17] S. T. Belinschi, T. Mai, R. Speicher, Analytic subordination theory of
   operator-valued free additive convolution and the solution of a general random matrix
   problem, J. Reine Angew. Math. 732 (2017), 21–53.
.. [HRS07] J. W. Helton, R. Rashidi Far, R. Speicher, Operator-valued semicircular elements:
   solving a quadratic matrix equation with positivity constraints, Int. Math. Res. Not.
   IMRN 2007 (2007), rnm086.
.. [JOH98] K. Johansson, On fluctuations of eigenvalues of random Hermitian matrices, Duke
   Math. J. 91 (1998), 151–204.
.. [MSW17] T. Mai, R. Speicher, M. Weber, Absence of algebraic relations and of zero divisors
   under the assumption of full non-microstates free entropy dimension, Adv. Math. 304
   (2017), 1080–1107.
.. [CS16] I. Charlesworth, D. Shlyakhtenko, Free entropy dimension and regularity of
   non-commutative polynomials, J. Funct. Anal. 271 (2016), 2274–2292.
.. [HS11] T. Hasebe, H. Saigo, The monotone cumulants, Ann. Inst. Henri Poincaré Probab. Stat.
   47 (2011), 1160–1170.
.. [AHLV15] O. Arizmendi, T. Hasebe, F. Lehner, C. Vargas, Relations between cumulants in
   noncommutative probability, Adv. Math. 282 (2015), 56–92.
.. [MUR01] N. Muraki, Monotonic independence, monotonic central limit theorem and monotonic law
   of small numbers, Infin. Dimens. Anal. Quantum Probab. Relat. Top. 4 (2001), 39–58.
.. [GAU04] W. Gautschi, *Orthogonal Polynomials: Computation and Approximation*, Oxford
   University Press (2004).
.. [BAR68] E. H. Bareiss, Sylvester's identity and multistep integer-preserving Gaussian
   elimination, Math. Comp. 22 (1968), 565–578.
.. [MSS22] A. W. Marcus, D. A. Spielman, N. Srivastava, Finite free convolutions of
   polynomials, Probab. Theory Related Fields 182 (2022), 807–848.
.. [MAR21] A. W. Marcus, Polynomial convolutions and (finite) free probability,
   arXiv:2108.07054 (2021).
.. [AP18] O. Arizmendi, D. Perales, Cumulants for finite free convolution, J. Combin. Theory
   Ser. A 155 (2018), 244–266.
.. [AGP23] O. Arizmendi, J. Garza-Vargas, D. Perales, Finite free cumulants: multiplicative
   convolutions, genus expansion and infinitesimal distributions, Trans. Amer. Math. Soc. 376
   (2023), 4383–4420.
.. [BPR06] S. Basu, R. Pollack, M.-F. Roy, *Algorithms in Real Algebraic Geometry*, 2nd ed.,
   Springer (2006).
.. [BS04] Z. D. Bai, J. W. Silverstein, CLT for linear spectral statistics of large-dimensional
   sample covariance matrices, Ann. Probab. 32 (2004), 553–605.
.. [BS12] S. T. Belinschi, D. Shlyakhtenko, Free probability of type B: analytic interpretation
   and applications, Amer. J. Math. 134 (2012), 193–234.
.. [RED14] C. E. I. Redelmeier, Real second-order freeness and the asymptotic real second-order
   freeness of several real matrix ensembles, Int. Math. Res. Not. IMRN 2014 (2014), 3353–3395;
   arXiv:1101.0422.
.. [MP13] J. A. Mingo, M. Popa, Real second order freeness and Haar orthogonal matrices, J.
   Math. Phys. 54 (2013), 051701; arXiv:1210.6097.
.. [MIN19] J. A. Mingo, Non-crossing annular pairings and the infinitesimal distribution of the
   GOE, J. London Math. Soc. (2019); arXiv:1808.02100.
.. [FMNS19] M. Février, M. Mastnak, A. Nica, K. Szpojankowski, A construction which relates
   c-freeness to infinitesimal freeness, Adv. in Appl. Math. (2019).
.. [CM25] G. Cébron, J. A. Mingo, Infinitesimal freeness for orthogonally invariant random
   matrices, arXiv:2506.05139 (2025).
.. [LED09] M. Ledoux, A recursion formula for the moments of the Gaussian orthogonal ensemble,
   Ann. Inst. H. Poincaré Probab. Statist. 45 (2009), 754–769.
.. [HZ86] J. Harer, D. Zagier, The Euler characteristic of the moduli space of curves, Invent.
   Math. 85 (1986), 457–485.
"""
from __future__ import annotations

__all__ = ["REFERENCES", "cite"]

#: key -> full reference (the entries of this module's docstring)
REFERENCES = {
    key.strip("[]"): " ".join(text.split())
    for key, text in (
        entry.split(" ", 1)
        for entry in (chunk.strip() for chunk in __doc__.split(".. ")[1:])
    )
}


def cite(key: str) -> str:
    """The full reference of ``key`` (e.g. ``"HK26"``).

    Raises
    ------
    KeyError
        ``key`` is not in :data:`REFERENCES`.

    Source: this module.
    """
    return REFERENCES[key]
