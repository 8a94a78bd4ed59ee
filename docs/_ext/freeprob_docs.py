"""Build-time helpers of the documentation site (used by ``docs/conf.py`` and the tests).

* :func:`api_plan` walks the public modules of :mod:`freeprob` and gives every public name one
  home: the module that defines it (``__module__``, or an assignment in its source for data);
  a name re-exported elsewhere is listed there as a link to its home, never documented twice.
* :func:`write_api_pages` writes one reStructuredText page per layer (``docs/api/generated/``).
* :func:`write_notebooks` converts ``notebooks/*.py`` (jupytext percent format) to ``.ipynb``
  under ``docs/tutorials/generated/`` for myst-nb; the notebooks too slow to run at every
  build (:data:`RECORDED`, the readout comparisons) are shown with the outputs recorded in
  ``docs/tutorials/outputs/`` by :func:`record_outputs` (``python docs/_ext/freeprob_docs.py
  record``), each stamped with the hash of the source it ran (:func:`source_hash`); a stale
  one is a build warning (an error under ``-W``) and a test failure.
* :func:`mathjax_static` copies MathJax (from the ``django-static-mathjax`` package of the
  ``docs`` extra; it needs no Django) into the site's ``_static/mathjax/``, so that the math
  renders offline; :func:`remote_assets` lists what a built page would load from another
  host (``.ci/run`` checks that the real build loads nothing: ``python
  docs/_ext/freeprob_docs.py offline DIR``).
* :func:`strip_bibliography` keeps the ``.. [KEY]`` entries of :mod:`freeprob.references` out
  of its API entry: ``docs/references.md`` is the one place that defines them for Sphinx.

Source: this project's design (issue 20).
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent

#: the API pages: title, and the module prefixes each holds (first match wins)
LAYERS = (
    ("core", "freeprob.core", ("freeprob.core",)),
    ("numeric", "freeprob.numeric", ("freeprob.numeric",)),
    ("laws", "freeprob.laws", ("freeprob.laws",)),
    ("fit", "freeprob.fit", ("freeprob.fit",)),
    ("attention", "freeprob.attention", ("freeprob.attention",)),
    ("sampler", "freeprob.sampler", ("freeprob.sampler",)),
    ("experiments", "freeprob.experiments", ("freeprob.experiments",)),
    ("cli", "freeprob.cli", ("freeprob.cli",)),
    ("base", "freeprob (top level, errors, references)", ("freeprob",)),
)

#: modules not documented: the entry-point script and the old paths of ``freeprob/_compat.py``
#: (a shim re-exporting names documented at their new homes)
SKIP = {"freeprob.cli.__main__"}


def public_modules():
    """Dotted names of the public modules of freeprob (no ``_`` component), sorted."""
    import freeprob
    names = ["freeprob"]
    for info in pkgutil.walk_packages(freeprob.__path__, "freeprob."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or info.name in SKIP:
            continue
        names.append(info.name)
    return sorted(names)


def _assigned(module, name):
    try:
        src = inspect.getsource(module)
    except (OSError, TypeError):
        return False
    return re.search(rf"^{re.escape(name)}\s*(:[^=\n]*)?=", src, re.M) is not None


def public_names(module):
    """The public names of ``module``: its ``__all__``, else the public functions and classes
    it defines."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return sorted(n for n, v in vars(module).items()
                  if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
                  and v.__module__ == module.__name__)


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or callable(obj):
        return "function"
    return "data"


def api_plan():
    """``{module: {"own": [(name, kind)], "elsewhere": [(name, target)]}}`` for every public
    module; ``target`` is the dotted home of a re-exported name (or ``None`` for a name from
    another package, e.g. sympy's ``Rational``)."""
    mods = {name: importlib.import_module(name) for name in public_modules()}
    home = {}                                   # id(obj), name -> module documenting it
    plan = {m: {"own": [], "elsewhere": []} for m in mods}

    def defining(mod, name, obj):
        where = getattr(obj, "__module__", None) if _kind(obj) != "data" else None
        if where is None:
            return mod.__name__ if _assigned(mod, name) else None
        return where

    # first pass: names whose defining module is public
    for mname, mod in mods.items():
        for name in public_names(mod):
            obj = getattr(mod, name)
            where = defining(mod, name, obj)
            if where == mname:
                home[id(obj), name] = mname
    # second pass: a name its defining module does not export is documented there all the
    # same if that module is public, else in the deepest public module exporting it; a name
    # from outside freeprob is only mentioned
    extra = {m: [] for m in mods}
    for mname in sorted(mods, key=lambda m: (-m.count("."), m)):
        mod = mods[mname]
        for name in public_names(mod):
            obj = getattr(mod, name)
            if (id(obj), name) in home:
                continue
            where = defining(mod, name, obj) or mname
            if not where.startswith("freeprob"):
                continue
            h = where if where in mods and getattr(mods[where], name, None) is obj else mname
            home[id(obj), name] = h
            extra[h].append((name, _kind(obj)))
    for mname, mod in mods.items():
        for name in public_names(mod):
            obj = getattr(mod, name)
            h = home.get((id(obj), name))
            if h == mname and (name, _kind(obj)) not in extra[mname]:
                plan[mname]["own"].append((name, _kind(obj)))
            elif h != mname:
                plan[mname]["elsewhere"].append((name, f"{h}.{name}" if h else None))
        plan[mname]["own"] += extra[mname]
    return plan


def _layer(mname):
    for key, _, prefixes in LAYERS:
        if any(mname == p or mname.startswith(p + ".") for p in prefixes):
            return key
    raise KeyError(mname)


_DIRECTIVE = {"class": "autoclass", "function": "autofunction", "data": "autodata"}


def _rst_page(title, modules, plan):
    lines = [title, "=" * len(title), ""]
    for mname in modules:
        entry = plan[mname]
        lines += [f".. _api-{mname}:", "", f"``{mname}``", "-" * (len(mname) + 4), "",
                  f".. automodule:: {mname}", "   :no-members:", ""]
        if entry["elsewhere"]:
            refs = []
            for name, target in entry["elsewhere"]:
                refs.append(f":py:obj:`{name} <{target}>`" if target else f"``{name}`` (from sympy)")
            lines += ["Also exported here (documented at their home): " + ", ".join(refs) + ".", ""]
        for name, kind in entry["own"]:
            lines += [f".. {_DIRECTIVE[kind]}:: {mname}.{name}"]
            if kind == "class":
                lines += ["   :members:", "   :show-inheritance:"]
            lines += [""]
    return "\n".join(lines) + "\n"


def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_api_pages(outdir=DOCS / "api" / "generated"):
    """Write one page per layer of :data:`LAYERS`; returns the page names."""
    plan = api_plan()
    pages = []
    for key, title, _ in LAYERS:
        modules = [m for m in plan if _layer(m) == key]
        _write_if_changed(outdir / f"{key}.rst", _rst_page(title, modules, plan))
        pages.append(key)
    return pages


KERNEL = "freeprob-docs"


def kernelspec(tmp):
    """Write a kernelspec for this interpreter under ``tmp`` and put it first on
    ``JUPYTER_PATH`` (as tests/test_notebooks.py does), so that the executed notebooks run
    in this environment, never in a kernel of another one; figures go to ``tmp/out``."""
    import json
    import os
    import sys
    spec = Path(tmp) / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (Path(tmp) / "out").mkdir(exist_ok=True)
    env = {"FREEPROB_NOTEBOOK_OUT": str(Path(tmp) / "out"), "OPENBLAS_NUM_THREADS": "1"}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "freeprob docs", "language": "python", "env": env}))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(Path(tmp) / "jupyter")] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p])


#: notebooks shown with recorded outputs instead of being executed at every build (10-70 s
#: each; tests/test_notebooks.py runs them and compares their outputs with the recorded ones)
RECORDED = ("readout_gqa_tying", "readout_head_count", "readout_sharing", "readout_temperature",
            "readout_width_allocation")
#: where the recorded notebooks (.ipynb with outputs) live
OUTPUTS = DOCS / "tutorials" / "outputs"


def source_hash(path):
    """SHA-256 of a notebook's source file (``notebooks/NAME.py``), the stamp of its recording."""
    import hashlib
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def recorded_state(name):
    """``"current"``, ``"missing"`` or ``"stale"`` (the source changed since the recording)
    for the recorded outputs of ``notebooks/NAME.py``."""
    path = OUTPUTS / f"{name}.ipynb"
    if not path.is_file():
        return "missing"
    import json
    stamp = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("freeprob", {})
    return "current" if stamp.get("source_sha256") == source_hash(ROOT / "notebooks" / f"{name}.py") else "stale"


def write_notebooks(outdir=DOCS / "tutorials" / "generated", warn=None):
    """Convert every ``notebooks/*.py`` to ``.ipynb`` (kernel :data:`KERNEL`) for myst-nb; a
    notebook of :data:`RECORDED` is written with its recorded outputs when they are current,
    else without outputs and ``warn(message)`` is called (Sphinx's logger in ``conf.py``)."""
    import jupytext
    import nbformat
    names = []
    for src in sorted((ROOT / "notebooks").glob("*.py")):
        nb = jupytext.read(src, fmt="py:percent")
        if src.stem in RECORDED:
            state = recorded_state(src.stem)
            if state == "current":
                nb = nbformat.read(OUTPUTS / f"{src.stem}.ipynb", as_version=4)
            elif warn is not None:
                warn(f"notebooks/{src.name}: its recorded outputs are {state} (the tutorial page shows none); "
                     f"run `python docs/_ext/freeprob_docs.py record {src.stem}`")
        nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "freeprob docs",
                                     "language": "python"}
        _write_if_changed(outdir / f"{src.stem}.ipynb", nbformat.writes(nb))
        names.append(src.stem)
    return names


def record_outputs(names=RECORDED, timeout=1800):
    """Execute ``notebooks/NAME.py`` for each name (nbclient, a kernel of this interpreter,
    one BLAS thread, figures written to a temporary folder, which the outputs call
    ``FREEPROB_NOTEBOOK_OUT``) and write ``docs/tutorials/outputs/NAME.ipynb`` with its
    outputs and the :func:`source_hash` of the source.  Returns the written paths.

    Raises ``nbclient``'s ``CellExecutionError`` when a cell fails (nothing written for it)."""
    import tempfile

    import jupytext
    import nbclient
    import nbformat
    written = []
    with tempfile.TemporaryDirectory(prefix="freeprob-record-") as tmp:
        kernelspec(tmp)
        out = Path(tmp) / "out"
        for name in names:
            src = ROOT / "notebooks" / f"{name}.py"
            nb = jupytext.read(src, fmt="py:percent")
            nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=timeout,
                                    resources={"metadata": {"path": str(out)}}).execute()
            for cell in nb.cells:
                cell.get("metadata", {}).pop("execution", None)         # no timestamps: stable files
                for o in cell.get("outputs", []):
                    if "text" in o:
                        o["text"] = o["text"].replace(str(out) + "/", "").replace(str(out), ".")
            nb.metadata["freeprob"] = {"source_sha256": source_hash(src),
                                       "recorded_with": "python docs/_ext/freeprob_docs.py record"}
            OUTPUTS.mkdir(parents=True, exist_ok=True)
            path = OUTPUTS / f"{name}.ipynb"
            path.write_text(nbformat.writes(nb), encoding="utf-8")
            written.append(path)
    return written


#: the MathJax script of the site, relative to ``_static`` (Sphinx's ``mathjax_path``)
MATHJAX_PATH = "mathjax/tex-mml-chtml.js"
#: what the combined TeX/MathML component loads at run time (relative to the MathJax root):
#: the fonts, the TeX extensions it autoloads, the menu and the accessibility parts
_MATHJAX_PARTS = ("tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y",
                  "adaptors")


def mathjax_root():
    """The MathJax 3 distribution (``es5/``) of the installed ``django-static-mathjax``.

    Raises ``RuntimeError`` naming the package when it is not installed."""
    import importlib.util
    spec = importlib.util.find_spec("mathjax")
    roots = [Path(p) / "static" / "mathjax" for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        if (root / "es5" / "tex-mml-chtml.js").is_file():
            return root
    raise RuntimeError("the documentation site bundles MathJax from the package django-static-mathjax "
                       "(MathJax 3, no Django needed): pip install '.[docs]'")


def mathjax_static(tmp):
    """Copy the parts of MathJax the pages load (:data:`_MATHJAX_PARTS`, with MathJax's
    license) to ``tmp/static/mathjax``; returns ``tmp/static``, a folder for
    ``html_static_path`` (so the pages load ``_static/`` + :data:`MATHJAX_PATH`)."""
    import shutil
    root = mathjax_root()
    dest = Path(tmp) / "static" / "mathjax"
    for part in _MATHJAX_PARTS:
        src = root / "es5" / part
        if src.is_dir():
            shutil.copytree(src, dest / part, dirs_exist_ok=True)
        else:
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    shutil.copy2(root / "LICENSE", dest / "LICENSE")
    return str(dest.parent)


def use_local_mathjax(app, tmp):
    """In a Sphinx ``setup(app)``: serve MathJax from the site's ``_static/mathjax/``
    (:func:`mathjax_static` into ``tmp``), never from a CDN."""
    app.config.mathjax_path = MATHJAX_PATH
    static = mathjax_static(tmp)
    app.connect("builder-inited", lambda app: app.config.html_static_path.append(static))


_TAG = re.compile(r"<(script|link|img|iframe|source|audio|video|embed|object)\b[^>]*>", re.I | re.S)
_ATTR = re.compile(r"""\b(src|href|data)\s*=\s*["']([^"']*)["']""", re.I)
_CSS_URL = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])([^"')\s]+)""", re.I)
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)


def remote_assets(html_dir):
    """What the built site at ``html_dir`` loads from another host: ``[(file, url)]`` for
    every script, stylesheet, icon, image or media source with an absolute URL
    (``https://…``, ``//…``) in its HTML pages and every ``url(…)``/``@import`` of one in its
    CSS.  Links a reader follows (``<a href>``) are not loads and are not listed."""
    found = []
    root = Path(html_dir)
    for page in sorted(root.rglob("*.html")):
        for tag in _TAG.finditer(page.read_text(encoding="utf-8", errors="replace")):
            name = tag.group(1).lower()
            for attr, url in _ATTR.findall(tag.group(0)):
                if name == "link" and attr.lower() == "href":
                    rel = re.search(r"""\brel\s*=\s*["']([^"']*)["']""", tag.group(0), re.I)
                    if rel and not {"stylesheet", "icon", "preload", "modulepreload", "manifest"} & set(
                            rel.group(1).lower().split()):
                        continue        # e.g. rel="canonical": not loaded
                if _REMOTE.match(url):
                    found.append((str(page.relative_to(root)), url))
    for css in sorted(root.rglob("*.css")):
        for url in _CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            if _REMOTE.match(url):
                found.append((str(css.relative_to(root)), url))
    return found


_ENTRY = re.compile(r"^\.\. \[[A-Z][A-Z0-9]*\].*?(?=^\S|\Z)", re.M | re.S)


def strip_bibliography(app, what, name, obj, options, lines):
    """autodoc-process-docstring: drop the citation targets of :mod:`freeprob.references`."""
    if what == "module" and name == "freeprob.references":
        text = _ENTRY.sub("", "\n".join(lines) + "\n")
        lines[:] = text.splitlines() + ["", "The entries: :doc:`/references`."]


#: numpydoc sections made of fields (``name : type`` / exception names): napoleon reads every
#: line up to the next section header as one more field
_FIELD_SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises",
                   "Warns", "Attributes", "Keyword Arguments"}
_PROSE = re.compile(r"^[A-Z][\w`]*:? \S+ \S")


def end_field_sections(app, what, name, obj, options, lines):
    """autodoc-process-docstring, before napoleon: a paragraph that follows the fields of a
    numpydoc section without a header of its own (``Source: …`` after ``Raises``, a doctest)
    gets one (``Notes``, ``Examples``), so that napoleon does not read it as one more field."""
    section, out = None, []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"-{3,}", nxt.strip()):
            section = line.strip()
        elif (section in _FIELD_SECTIONS and line and not line[0].isspace()
              and i > 0 and not lines[i - 1].strip() and not re.fullmatch(r"-{3,}", line.strip())):
            if line.startswith(">>>"):
                out += ["Examples", "--------"]
                section = "Examples"
            elif " : " not in line and _PROSE.match(line) and not nxt[:1].isspace():
                out += ["Notes", "-----"]
                section = "Notes"
        out.append(line)
    lines[:] = out


def drop_type_docstrings(app, what, name, obj, options, lines):
    """autodoc-process-docstring: module data (a sympy ``Symbol``, a dict) would show the
    docstring of its type; show none instead."""
    if what in ("data", "attribute") and not inspect.isclass(obj) and not callable(obj):
        doc = inspect.getdoc(type(obj)) or ""
        if doc and [ln for ln in lines if ln.strip()][:1] == doc.strip().splitlines()[:1]:
            lines[:] = []


if __name__ == "__main__":     # .ci/run: offline DIR; by hand after a notebook changed: record [NAMES]
    import sys
    if len(sys.argv) >= 2 and sys.argv[1] == "record":
        unknown = [n for n in sys.argv[2:] if n not in RECORDED]
        if unknown:
            sys.exit(f"record: {', '.join(unknown)}: not among the recorded notebooks {', '.join(RECORDED)}")
        for p in record_outputs(tuple(sys.argv[2:]) or RECORDED):
            print(f"wrote {p.relative_to(ROOT)}")
        sys.exit(0)
    if len(sys.argv) != 3 or sys.argv[1] != "offline":
        sys.exit("usage: python docs/_ext/freeprob_docs.py offline HTML_DIR | record [NAME ...]")
    if not (Path(sys.argv[2]) / "index.html").is_file():
        sys.exit(f"{sys.argv[2]}: no built site (index.html) there")
    remote = remote_assets(sys.argv[2])
    for page, url in remote:
        print(f"{page}: loads {url}", file=sys.stderr)
    if remote:
        sys.exit(f"the built site loads {len(remote)} asset(s) from other hosts (listed above): it must work "
                 "offline")
    print(f"{sys.argv[2]}: every script, stylesheet and font is local")
