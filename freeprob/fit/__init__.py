r"""Laws from spectra: free cumulants, family laws and algebraic laws fitted to sampled
eigenvalues, with standard errors, and free compression/decompression of a spectrum.

The fit layer sits above the laws (docs/architecture.md): it imports laws, numeric, core
and base, and the experiments (``freeprob verify --fit``) and the command line
(``freeprob fit FILE``) import it.  Guide: docs/guide/fitting.md.

===========================  ===================================================
``fit_free_cumulants``       κ_1..κ_k with standard errors (:mod:`.cumulants`)
``fit_law``                  a family (semicircle, Marchenko–Pastur, free Poisson)
                             by moment matching, with intervals (:mod:`.families`)
``fit_algebraic``            a :class:`EquationLaw` whose Cauchy equation
                             ``P(G, z) = 0`` fits the sample (:mod:`.algebraic`)
``decompress``/``compress``  the law at another matrix size (:mod:`.resize`)
===========================  ===================================================
"""
import importlib

_EXPORTS = {
    "Estimate": "freeprob.fit.cumulants",
    "CumulantFit": "freeprob.fit.cumulants",
    "fit_free_cumulants": "freeprob.fit.cumulants",
    "LawFit": "freeprob.fit.families",
    "fit_law": "freeprob.fit.families",
    "FAMILIES": "freeprob.fit.families",
    "EquationLaw": "freeprob.fit.equation",
    "AlgebraicFit": "freeprob.fit.algebraic",
    "fit_algebraic": "freeprob.fit.algebraic",
    "decompress": "freeprob.fit.resize",
    "compress": "freeprob.fit.resize",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'freeprob.fit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
