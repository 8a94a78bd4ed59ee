"""Sphinx configuration of the freeprob documentation site.

Build (from the repository root, after ``pip install ".[docs]"``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The API pages (``api/generated/``) and the tutorial notebooks (``tutorials/generated/``, from
``notebooks/*.py``) are written at the start of every build (``_ext/freeprob_docs.py``).
"""
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))
sys.path.insert(0, str(DOCS / "_ext"))

import freeprob  # noqa: E402
import freeprob_docs  # noqa: E402

project = "freeprob"
author = "the freeprob authors"
copyright = "2026, the freeprob authors"
release = version = freeprob.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_nb",
]

# -- sources ---------------------------------------------------------------------------------
root_doc = "index"
exclude_patterns = ["_build", "_ext", "**/.ipynb_checkpoints", "tutorials/outputs"]

# -- MyST (Markdown pages) and myst-nb (tutorials) ------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 4
# the three fast notebooks run at build time (about 35 s); the five readout comparisons
# (10-70 s each) are shown with the outputs recorded in docs/tutorials/outputs/ (stamped with
# the hash of their source: a stale one is a warning, hence an error under -W; `python
# docs/_ext/freeprob_docs.py record` rerecords them); tests/test_notebooks.py runs all of them
# and compares the readout ones' outputs with the recorded ones
nb_execution_mode = "force"
nb_execution_excludepatterns = [f"tutorials/generated/{name}.ipynb" for name in freeprob_docs.RECORDED]
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# -- autodoc / napoleon (numpydoc docstrings) ------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True
autoclass_content = "both"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# -- math: MathJax 3 from the site itself (offline), never from a CDN -------------------------
# setup() below: freeprob_docs.use_local_mathjax copies it from the package django-static-mathjax
# (docs extra) into _static/mathjax/ and sets mathjax_path; `python docs/_ext/freeprob_docs.py
# offline DIR` checks a build (.ci/run does)
mathjax_path = freeprob_docs.MATHJAX_PATH

# -- HTML ------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"freeprob {release}"
html_theme_options = {"description": "exact and certified free probability",
                      "fixed_sidebar": True, "show_relbars": True}


def setup(app):
    import atexit
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="freeprob-docs-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    freeprob_docs.kernelspec(tmp)
    freeprob_docs.use_local_mathjax(app, tmp)
    freeprob_docs.write_api_pages()
    from sphinx.util import logging
    freeprob_docs.write_notebooks(warn=logging.getLogger("freeprob_docs").warning)
    app.connect("autodoc-process-docstring", freeprob_docs.strip_bibliography)
    app.connect("autodoc-process-docstring", freeprob_docs.drop_type_docstrings)
    # before napoleon (priority 500), which turns the numpydoc sections into fields
    app.connect("autodoc-process-docstring", freeprob_docs.end_field_sections, priority=400)
