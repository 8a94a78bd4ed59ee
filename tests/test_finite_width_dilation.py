"""The finite-width laws with the bulk scale applied as one outer dilation (issue 27).

Since issue 29 every chaos piece of ``ρ^fw`` carries the bulk scale ``c = θ1^emp/θ1``.  The
laws now build the object from the unscaled pieces and dilate the result by ``c``
(:func:`freeprob.attention.finite_width.finite_width_rho_parts`): the same law, since every
object is linear in the dilation of ``ρ``.  Checked here exactly: the moments to order 6 of
every object × sharing scheme × two layers equal those of the construction with ``c`` inside
every piece (the construction before issue 27, rebuilt here from the public pieces).
"""
import pytest
import sympy as sp

from freeprob.attention import Architecture
from freeprob.attention import finite_width as fw
from freeprob.attention import laws as attention
from freeprob.laws.families import MarchenkoPastur
from freeprob.laws.operations import Dilate, dilate, free_add, shift

OBJECTS = ("attention_law", "concatenated_attention_law", "head_sum_law", "head_output_law",
           "stacked_output_law", "output_law")
SCHEMES = (dict(scheme="independent"), dict(scheme="gqa", kv_groups=2), dict(scheme="shared_keys"),
           dict(scheme="tied"))
LAYERS = (dict(n=64, heads=4, d_k=8, d_v=8, d_o=16, beta=1),
          dict(n=128, heads=2, d_k=16, d_v=16, d_o=32, beta=sp.Rational(3, 4)))


def _scaled_inside(arch, owner=None, *, keys=1, rows=1):
    """``ρ^fw`` as before issue 27: ``c`` multiplied into every chaos weight and the remainder."""
    w, rest = fw.chaos_weights(arch.beta, arch.d_k, n=arch.n)
    parts = [dilate(MarchenkoPastur(sp.sympify(arch.n) / keys / fw.chaos_dimension(arch.d_k, k)
                                    + fw.norm_factor_variance(arch.d_k, k, rows=rows, keys=keys)), w[k - 1])
             for k in (1, 2)]
    return shift(free_add(*parts), rest), 1


@pytest.mark.parametrize("layer", LAYERS, ids=("n64", "n128"))
def test_outer_dilation_has_the_moments_of_the_scaled_pieces(layer, monkeypatch):
    new, old = [], []
    archs = [Architecture.from_dimensions(**layer, **sch) for sch in SCHEMES]
    for arch in archs:
        for obj in OBJECTS:
            law = getattr(attention, obj)(arch, finite_width=True)
            if arch.scheme != "tied" or obj in OBJECTS[:3]:     # tied values: the limit pushforward, no c
                assert isinstance(law, Dilate) and law.c == fw.chaos_weights(arch.beta, arch.d_k, n=arch.n)[0][0] \
                    / sp.sympify(arch.beta) ** 2
            new.append(law.moments(6))
    monkeypatch.setattr(attention, "_finite_rho", _scaled_inside)
    for arch in archs:
        for obj in OBJECTS:
            law = getattr(attention, obj)(arch, finite_width=True)
            old.append(law.moments(6))
    assert len(new) == 24
    for a, b in zip(new, old):
        assert all(sp.expand(x - y) == 0 for x, y in zip(a, b))


def test_rho_parts():
    arch = Architecture.from_dimensions(n=512, heads=4, d_k=8, d_v=8, d_o=32, beta=1)
    rho1, c = fw.finite_width_rho_parts(arch)
    assert c == sp.Rational(559, 500)        # empirical_scale(1, 8, 512), docs: 1.118
    rho = fw.finite_width_row_covariance_law(arch)
    assert isinstance(rho, Dilate) and rho.law == rho1 and rho.c == c
    assert sp.expand(rho.moments(1)[1] - c * (sp.E - 1)) == 0       # mean c·θ1
    assert fw.finite_width_rho_parts(arch, variance="limit")[1] == 1
    assert not isinstance(fw.finite_width_row_covariance_law(arch, variance="limit"), Dilate)
