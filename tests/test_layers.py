"""The package layering of docs/architecture.md, checked statically (``ast``) and by import.

Layers, lowest first: base (``errors``, ``_extras``, ``_files``, ``references``,
``_checks``, ``_text`` and the top-level ``__init__``) -> core -> numeric -> laws -> fit ->
attention -> sampler -> experiments -> cli.  One import path per module: the flat layout's
old paths are gone.  A module imports only its own layer or lower ones; the sampler imports
only ``freeprob.errors``, ``freeprob._checks``, the layer class
(``freeprob.attention.architecture``) and itself.  No import cycles, counting
imports inside functions.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "freeprob"
ORDER = ("base", "core", "numeric", "laws", "fit", "attention", "sampler", "experiments", "cli")
BASE = {"freeprob", "freeprob.errors", "freeprob._extras", "freeprob._files", "freeprob._signals",
        "freeprob._progress", "freeprob._interruptible",
        "freeprob.references", "freeprob._checks", "freeprob._text"}
MAX_LINES = 800
#: what the sampler may import besides itself: the errors, the argument checks and the one
#: layer class (which import only the standard library and freeprob.errors at import time)
SAMPLER_MAY_IMPORT = {"freeprob.errors", "freeprob._checks", "freeprob._extras",
                      "freeprob.attention.architecture"}
#: imports allowed against the layer order, each until the named caller changes
TRANSITIONAL = set()      # (src, dst) edges allowed while code moves; empty


def _modules():
    """dotted module name -> (path, is_package)"""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


#: top-level modules of a higher layer: ``python -m freeprob`` is the command line
TOP_LEVEL = {"freeprob.__main__": "cli", "freeprob._entry": "cli", "freeprob.finite": "laws"}


def _layer(mod):
    if mod in TOP_LEVEL:
        return TOP_LEVEL[mod]
    if mod in BASE:
        return "base"
    sub = mod.split(".")[1]
    assert sub in ORDER, f"{mod}: no layer for freeprob/{sub}; add it to docs/architecture.md"
    return sub


def _canonical(name):
    """The module serving dotted ``name``, or its nearest parent."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_module(name):
    return name in MODULES


def _imports(mod):
    """(target module, line, in_function) for every freeprob import in ``mod``."""
    path, is_pkg = MODULES[mod]
    tree = ast.parse(path.read_text(), str(path))
    package = mod if is_pkg else mod.rpartition(".")[0]
    found = []

    def visit(node, in_func):
        for child in ast.iter_child_nodes(node):
            func = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda))
            names = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    src = ".".join(base + ([child.module] if child.module else []))
                else:
                    src = child.module or ""
                # ``from X import y``: y may be a submodule of X
                names = [f"{src}.{a.name}" if _is_module(f"{src}.{a.name}") else src
                         for a in child.names]
            for name in names:
                if name == "freeprob" or name.startswith("freeprob."):
                    target = _canonical(name)
                    if target and target != mod and (target, child.lineno, func) not in found:
                        found.append((target, child.lineno, func))
            visit(child, func)

    visit(tree, False)
    return found


EDGES = {mod: _imports(mod) for mod in MODULES}


def _allowed(src, dst):
    ls, ld = _layer(src), _layer(dst)
    if (src, dst) in TRANSITIONAL:
        return True
    if ls == "sampler":
        return ld == "sampler" or dst in SAMPLER_MAY_IMPORT
    return ORDER.index(ld) <= ORDER.index(ls)


def test_no_upward_imports():
    bad = sorted(f"{src}:{line} -> {dst}  ({_layer(src)} -> {_layer(dst)}"
                 f"{', in function' if func else ''})"
                 for src, edges in EDGES.items() for dst, line, func in edges
                 if not _allowed(src, dst))
    assert not bad, "upward imports:\n  " + "\n  ".join(bad)


def _own_child(src, dst):
    """A package ``__init__`` importing its own submodules (re-exports) is not a cycle."""
    return MODULES[src][1] and dst.startswith(src + ".")


def _cycles(graph):
    """Strongly connected components of size > 1 (Tarjan, iterative-safe for this size)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return comps


def test_no_import_cycles():
    graph = {src: sorted({dst for dst, _, _ in edges if not _own_child(src, dst)})
             for src, edges in EDGES.items()}
    comps = _cycles(graph)
    lines = []
    for comp in comps:
        lines.append("cycle: " + ", ".join(comp))
        lines += [f"    {src}:{line} -> {dst}{' (in function)' if func else ''}"
                  for src in comp for dst, line, func in EDGES[src]
                  if dst in comp and not _own_child(src, dst)]
    assert not comps, "import cycles:\n" + "\n".join(lines)


def test_modules_are_short():
    lengths = {mod: len(path.read_text().splitlines()) for mod, (path, _) in MODULES.items()}
    long = {mod: n for mod, n in lengths.items() if n > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def _fresh(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout.strip()


def test_sampler_imports_without_symbolic_stack():
    out = _fresh("import sys, freeprob.sampler\n"
                 "print(sorted(m for m in ('sympy', 'flint', 'mpmath', 'scipy') if m in sys.modules))")
    assert out == "[]", f"import freeprob.sampler loaded {out}"


def test_layer_class_imports_without_symbolic_stack():
    """The one layer class serves the sampler: building and using a layer needs no sympy,
    and ``import freeprob.attention`` loads no law until a law is asked for."""
    out = _fresh("import sys, freeprob.attention\n"
                 "from freeprob.attention import Architecture\n"
                 "from freeprob.sampler import Dimensions\n"
                 "a = Architecture.from_dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32, beta='0.5',\n"
                 "                                 scheme='gqa', kv_groups=2)\n"
                 "d = Dimensions(n=64, heads=4, d_k=8, d_v=8, d_o=32, scheme='tied')\n"
                 "x = (a.c_k, a.kappa if False else None, a.to_dict(), a.label(), d.ratios(),\n"
                 "     d.with_beta(1), d.key_group_of_head(), a.replace(heads=8))\n"
                 "print(sorted(m for m in ('sympy', 'flint', 'mpmath', 'freeprob.attention.laws')\n"
                 "             if m in sys.modules))")
    assert out == "[]", f"the layer class loaded {out}"


def test_public_names_and_one_path_per_module():
    """Every public name resolves; the flat layout's old module paths (``freeprob.law``,
    ``freeprob.store``, ``freeprob.readout_sampled``, …) are gone, so each module has one
    import path."""
    out = _fresh(
        "import importlib, freeprob as fp\n"
        "missing = [n for n in fp.__all__ if not hasattr(fp, n)]\n"
        "old = []\n"
        "for name in ('freeprob.law', 'freeprob.store', 'freeprob.readout_sampled', 'freeprob.series',\n"
        "             'freeprob.comparisons', 'freeprob.cli_laws', 'freeprob._compat', 'freeprob.readout'):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        old.append(name)\n"
        "    except ModuleNotFoundError:\n"
        "        pass\n"
        "print(missing, old, hasattr(fp, 'law'))")
    assert out == "[] [] False"
