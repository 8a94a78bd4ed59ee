"""Optional dependencies (pyproject extras): a missing one is reported in one line naming the
extra to install, and the extras of pyproject.toml are the ones freeprob._extras names."""
import pathlib
import subprocess
import re
import sys
import tomllib

import pytest

from freeprob._extras import EXTRAS, MissingExtra, require
from freeprob.errors import FreeprobValueError

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _extras():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]


def _names(deps):
    return {re.split(r"[\[<>=!~; ]", d.strip(), maxsplit=1)[0].lower() for d in deps}


@pytest.mark.parametrize("module,extra", [("pyarrow", "parquet"), ("pyarrow.parquet", "parquet"),
                                          ("distributed", "sweep"), ("tqdm", "sweep"),
                                          ("matplotlib.figure", "plot"), ("scipy.linalg", "sampler")])
def test_a_missing_extra_names_it_in_one_line(monkeypatch, module, extra):
    top = module.split(".")[0]
    for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, top, None)          # import top -> ModuleNotFoundError
    with pytest.raises(MissingExtra) as info:
        require(module, extra)
    msg = str(info.value)
    assert "\n" not in msg and top in msg and f"pip install 'freeprob[{extra}]'" in msg
    assert isinstance(info.value, FreeprobValueError) and isinstance(info.value, ImportError)


def test_an_installed_module_is_returned():
    import json
    assert require("json", "sweep") is json


def test_the_sweep_layer_names_the_sweep_extra(monkeypatch):
    from freeprob.experiments import sweep as sweep_mod
    for name in [m for m in sys.modules if m == "distributed" or m.startswith("distributed.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingExtra, match=re.escape("pip install 'freeprob[sweep]'")):
        sweep_mod.Executor(workers=2)


def test_pyproject_extras_parse_and_all_covers_the_features():
    extras = _extras()
    assert {"sampler", "plot", "sweep", "parquet", "all", "test", "notebooks", "docs"} <= set(extras)
    all_ = extras["all"]
    covered = set()
    for dep in all_:
        m = re.fullmatch(r"freeprob\[([\w,\s-]+)\]", dep.strip())
        if m:
            covered |= {e.strip() for e in m.group(1).split(",")}
        else:
            covered.add(dep)
    assert {"sampler", "plot", "sweep", "parquet"} <= covered
    assert not covered & {"test", "notebooks", "docs"}


def test_every_extra_provides_the_modules_freeprob_requires_of_it():
    extras = _extras()
    dist = {"scipy": "scipy", "matplotlib": "matplotlib", "dask": "dask", "distributed": "distributed",
            "tqdm": "tqdm", "threadpoolctl": "threadpoolctl", "pyarrow": "pyarrow"}
    for extra, modules in EXTRAS.items():
        assert {dist[m] for m in modules} <= _names(extras[extra]), extra
    # verify (the sweep extra) also runs the sampler and draws figures
    assert {"scipy", "matplotlib"} <= _names(extras["sweep"])


def test_core_dependencies_are_the_exact_layer():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    # the exact layer's libraries, and gmpy2: mpmath's GMP backend (1.3x on the numeric
    # layer, benchmarks/bench_output_law_numeric.py; mpmath works without it)
    assert _names(deps) == {"sympy", "mpmath", "numpy", "python-flint", "gmpy2"}


@pytest.mark.parametrize("argv", [["verify", "--quick"], ["verify", "--help"], ["readout", "list"]])
def test_experiment_commands_name_a_missing_extra_before_anything(argv, tmp_path):
    # a core-only install: verify/readout refused in one line, nothing created
    code = ("import sys; sys.modules['scipy'] = None\n"
            "from freeprob.cli import main\n"
            f"sys.exit(main({argv!r}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "freeprob[sampler]" in proc.stderr
    assert list(tmp_path.iterdir()) == []
