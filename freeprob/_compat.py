"""Old module paths of the flat layout (``freeprob.law``, ``freeprob.store``, …) kept
working: each old dotted name is served by the module at its new path, as the *same*
module object (so ``monkeypatch.setattr(freeprob.store, …)`` changes what the code reads).

``freeprob.numeric``, ``freeprob.attention``, ``freeprob.sampler`` and ``freeprob.cli``
became packages of the same name that re-export the old module's names; every other old
module is listed in :data:`ALIASES`, except the few whose contents moved to two layers
(:data:`SHIMS`: small modules at the old path re-exporting the names).  See
docs/architecture.md.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: old module path -> new module path (a prefix: ``freeprob.comparisons.sharing`` follows)
ALIASES = {
    "freeprob.symbols": "freeprob.core.symbols",
    "freeprob.conventions": "freeprob.core.conventions",
    "freeprob.coefficients": "freeprob.core.coefficients",
    "freeprob.series": "freeprob.core.series",
    "freeprob.cumulants": "freeprob.core.cumulants",
    "freeprob.partitions": "freeprob.core.partitions",
    "freeprob._exactpoly": "freeprob.core.exactpoly",
    "freeprob._params": "freeprob.core.params",
    "freeprob._boundary": "freeprob.numeric.boundary",
    "freeprob._quadrature": "freeprob.numeric.quadrature",
    "freeprob._rootkernel": "freeprob.numeric.rootkernel",
    "freeprob.law": "freeprob.laws.law",
    "freeprob.families": "freeprob.laws.families",
    "freeprob.operations": "freeprob.laws.operations",
    "freeprob.algebraic": "freeprob.laws.algebraic",
    "freeprob.readout": "freeprob.attention.readout",
    "freeprob._sampler_model": "freeprob.sampler.model",
    "freeprob._sampler_heads": "freeprob.sampler.heads",
    "freeprob.configs": "freeprob.experiments.configs",
    "freeprob.compare": "freeprob.experiments.compare",
    "freeprob.store": "freeprob.experiments.store",
    "freeprob.sweep": "freeprob.experiments.sweep",
    "freeprob.verify": "freeprob.experiments.verify",
    "freeprob.figures": "freeprob.experiments.figures",
    "freeprob.cost": "freeprob.experiments.cost",
    "freeprob._reports": "freeprob.experiments.reports",
    "freeprob.comparisons": "freeprob.experiments.comparisons",
    "freeprob.cli_laws": "freeprob.cli.law_commands",
    "freeprob.cli_sweep": "freeprob.cli.sweep_commands",
    "freeprob.expr": "freeprob.cli.expr",
    "freeprob._costguard": "freeprob.cli.costguard",
    "freeprob._cliutil": "freeprob.cli.files",
}

#: old modules whose contents were split between layers: real modules at the old path that
#: re-export the names from their new homes.  They sit above every layer (they may import
#: anything) and nothing in freeprob imports them.
SHIMS = frozenset({
    "freeprob.readout_sampled",     # freeprob.sampler.readout + freeprob.experiments.stats
})

#: the old top-level names, for ``freeprob.<name>`` attribute access and ``dir()``
SUBMODULES = frozenset(old.split(".")[1] for old in (*ALIASES, *SHIMS))


def target(name: str) -> str | None:
    """The new module path serving the old dotted ``name``, or ``None``.

    Raises nothing.  Source: this module (:data:`ALIASES`).
    """
    for old, new in ALIASES.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new):
        self.new = new
        self._spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self._spec = module.__spec__          # the import system overwrites __spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec         # the module keeps its own identity


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target_=None):
        new = target(name)
        if new is None:
            return None
        return importlib.util.spec_from_loader(name, _AliasLoader(new))


def install() -> None:
    """Put the alias finder first on :data:`sys.meta_path` (once).

    Raises nothing.  Source: :mod:`importlib` (meta path finders, PEP 451).
    """
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
