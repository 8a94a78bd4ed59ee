"""Issue 17: atoms a law knows exactly are handed to the numeric layer
(``AlgebraicCauchy(..., known_atoms=...)``), checked there against the Cauchy equation,
and not re-derived by continuing G to the atom."""
from fractions import Fraction

import mpmath
import pytest
import sympy as sp

from freeprob.attention import Architecture, output_law
from freeprob.errors import FreeprobValueError
from freeprob.laws.families import Atomic, CompoundFreePoisson, FreePoisson
from freeprob.laws.operations import free_mul
from freeprob.numeric import AlgebraicCauchy


def _attention():
    return output_law(Architecture(heads=4, gamma_k=Fraction(1, 2), gamma_v=Fraction(1, 2),
                                   gamma_o=1, beta=1))


LAWS = [
    FreePoisson(sp.Rational(1, 2)),
    FreePoisson(sp.Rational(1, 3), 2),
    CompoundFreePoisson(sp.Rational(1, 2), Atomic((0, 1), (sp.Rational(1, 2), sp.Rational(1, 2)))),
    free_mul(FreePoisson(sp.Rational(1, 2)), FreePoisson(sp.Rational(3, 4))),
    _attention(),
]


def _rederived(law, dps=15):
    """The atoms found by the numeric layer alone (no handed atoms)."""
    return AlgebraicCauchy(law.cauchy_equation()).atoms(dps=dps)


def _same(a, b):
    assert len(a) == len(b)
    for (la, ma), (lb, mb) in zip(a, b):
        assert abs(mpmath.mpf(sp.N(la, 30)) - mpmath.mpf(sp.N(lb, 30))) < 1e-12
        assert abs(mpmath.mpf(sp.N(ma, 30)) - mpmath.mpf(sp.N(mb, 30))) < 1e-12


@pytest.mark.parametrize("law", LAWS, ids=lambda law: type(law).__name__)
def test_handed_atoms_equal_rederived(law):
    handed = law._known_atoms()
    assert handed, "these laws know their mass at 0"
    ev = law._evaluator("test")
    assert ev._known == [tuple(sp.sympify(v) for v in t) for t in handed]
    _same(ev.atoms(dps=15), _rederived(law))
    _same(law.atoms(dps=15), _rederived(law))


def test_handed_atom_skips_the_continuation(monkeypatch):
    law = FreePoisson(sp.Rational(1, 2))
    ev = AlgebraicCauchy(law.cauchy_equation(), known_atoms=[(0, sp.Rational(1, 2))])

    def boom(*args, **kwargs):
        raise AssertionError("the mass was re-derived by continuation")
    monkeypatch.setattr(type(ev), "_pole_residue", boom)
    assert ev.atoms() == ((0, sp.Rational(1, 2)),)


def test_atoms_not_handed_are_still_found():
    # free Poisson of rate 1/2 has its atom at 0; handing "no atom at 1" changes nothing
    law = FreePoisson(sp.Rational(1, 2))
    P = law.cauchy_equation()
    assert AlgebraicCauchy(P, known_atoms=[]).atoms() == ((0, sp.Rational(1, 2)),)
    mixed = Atomic((0, 2), (sp.Rational(1, 4), sp.Rational(3, 4)))
    ev = AlgebraicCauchy(mixed.cauchy_equation(), known_atoms=[(0, sp.Rational(1, 4))])
    assert ev.atoms() == ((0, sp.Rational(1, 4)), (2, sp.Rational(3, 4)))


@pytest.mark.parametrize("bad", [
    [(0, sp.Rational(1, 3))],             # wrong mass at a true atom
    [(1, sp.Rational(1, 2))],             # not a root of the leading coefficient
])
def test_wrong_handed_atom_is_rejected(bad):
    P = FreePoisson(sp.Rational(1, 2)).cauchy_equation()
    with pytest.raises(FreeprobValueError, match="inconsistent"):
        AlgebraicCauchy(P, known_atoms=bad).atoms()


def test_wrong_handed_atom_rejected_irrational_coefficients():
    P = _attention().cauchy_equation()           # coefficients in ℤ[e], atom 1/2 at 0
    with pytest.raises(FreeprobValueError, match="inconsistent"):
        AlgebraicCauchy(P, known_atoms=[(0, sp.Rational(1, 3))]).atoms()


@pytest.mark.parametrize("bad", [[(0, 2)], [(0.5, sp.Rational(1, 2))], [(0,)], 5])
def test_malformed_known_atoms(bad):
    P = FreePoisson(sp.Rational(1, 2)).cauchy_equation()
    with pytest.raises(FreeprobValueError):
        AlgebraicCauchy(P, known_atoms=bad)


def test_cdf_with_handed_atoms_matches():
    law = _attention()
    plain = AlgebraicCauchy(law.cauchy_equation())
    for x in (0.5, 2):
        assert abs(law.cdf(x) - plain.cdf(x)) < 1e-13
