"""The store keys of a ``freeprob verify`` run (:mod:`freeprob.experiments.verify`): what a
stored cell or tabulated law depends on, so that results of other settings or code are never
reused or mixed.

Source: this project's store design (:mod:`freeprob.experiments.store`).
"""
from __future__ import annotations

import hashlib
import json

from freeprob.experiments import store as _store       # its code_version() read at call time
from freeprob.experiments.verify_laws import law_dims

#: bump when a stored cell would mean something else (3: zeros snapped in KS; 4: finite width)
_FORMAT = 4


def _dims_dict(dims):
    return dims.to_dict()


def _models(refinements):
    return ("softmax", "ge", "ge2", "ge+kn") if refinements else ("softmax", "ge")


def _seed_identity(cell, beta, seed):
    """What a cell's random draws depend on (with the sweep seed): configuration,
    dimensions, β and the initialisation index — not the objects or models reported."""
    return json.dumps(dict(config=cell.config.name, dims=_dims_dict(cell.dims), beta=str(beta), seed=seed),
                      sort_keys=True)


def _cell_key(cell, settings, beta, seed):
    """Everything that changes a number stored under the cell: its draws (configuration,
    dimensions, β, seeds, objects, models, coupling, weights), the exact law its derived
    quantities are measured against (``points``; :func:`summarize`) and the code
    (:func:`freeprob.experiments.store.code_version`: results of other code are never reused)."""
    payload = json.dumps(dict(v=_FORMAT, config=cell.config.name, dims=_dims_dict(cell.dims),
                              beta=str(beta), seed=[settings.base_seed, seed],
                              objects=list(settings.objects), models=list(_models(settings.refinements)),
                              coupled=settings.coupled, weights=settings.weights, points=settings.points,
                              code=_store.code_version()),
                         sort_keys=True)
    safe = cell.config.name.replace("/", "_").replace(":", "_")
    return f"{safe}-n{cell.dims.n}-b{beta}-s{seed}-" + hashlib.sha1(payload.encode()).hexdigest()[:10]


def _theory_key(cell, beta, obj, points, finite_width=False, finite_n=False):
    """The store key of a tabulated law (GE limit; finite width: ``theory-fw-…``; the GE
    model's finite-n law: ``theory-fn-…``; both, the finite-width law plus the GE model's
    finite-n shift: ``theory-fwfn-…``, whose payload holds both flags); the finite-width and
    finite-n laws depend on ``n`` and the absolute widths, which ``dims`` holds."""
    payload = json.dumps(dict(v=_FORMAT, dims=law_dims(cell.dims, obj) | {"d": None},
                              beta=str(beta), obj=obj, points=points, code=_store.code_version())
                         | ({"fw": True} if finite_width else {}) | ({"fn": True} if finite_n else {}),
                         sort_keys=True)
    tag = "fwfn-" if finite_width and finite_n else "fw-" if finite_width else "fn-" if finite_n else ""
    return f"theory-{tag}{obj}-" + hashlib.sha1(payload.encode()).hexdigest()[:12]
