"""Every ``--help`` example runs as written, in a fresh directory, through the console script:
those of ``verify``, ``readout``, ``table`` and ``sweep`` (``show``, ``export``) here, those of
the law commands and ``jacobi`` in tests/test_cli_laws.py; ``explore``'s (minutes of computing) is parsed
and validated by the real command up to the computation.  And ``freeprob`` alone prints the help.

The sweep examples start with the verify example (``VERIFY_EXAMPLE && freeprob sweep …``),
since a store must exist; they run in the directory of the verify example's run, where its
first half resumes instead of recomputing (the same result as in a fresh directory).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from freeprob.cli import build_parser
from freeprob.cli.jacobi_commands import JACOBI_COMMANDS
from freeprob.cli.law_commands import LAW_COMMANDS
from freeprob.cli.sweep_commands import VERIFY_EXAMPLE

SCRIPT = Path(sys.executable).with_name("freeprob")
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")


def _subparsers(parser, prefix=()):
    """``{("sweep", "show"): parser, …}`` for every command and subcommand."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[(*prefix, name)] = sub
                found |= _subparsers(sub, (*prefix, name))
    return found


COMMANDS = _subparsers(build_parser())


def _examples(cmd):
    """The example lines of ``freeprob CMD --help`` (``cmd`` a tuple, e.g. ``("sweep", "show")``)."""
    text = " ".join(COMMANDS[cmd].format_help().split())        # the help wraps long lines
    return re.findall(r"example: (freeprob .+?)(?= example: |$)", text)


def _run_line(line, cwd):
    """Run one example line as a shell would (``&&`` chains), with the console script first on PATH."""
    env = dict(ENV, PATH=os.pathsep.join([str(SCRIPT.parent), ENV.get("PATH", "")]))
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_every_command_has_an_example_and_a_test_that_runs_it():
    runs_here = {("table",), ("readout",), ("verify",), ("sweep",), ("sweep", "show"), ("sweep", "export"),
                 ("explore",), ("finite",), ("fit",)}      # finite: tests/test_finite.py
    law_like = {(c,) for c in LAW_COMMANDS + JACOBI_COMMANDS}           # their examples: test_cli_laws.py
    assert set(COMMANDS) == runs_here | law_like                         # a new command needs its test
    for cmd in COMMANDS:
        assert _examples(cmd), f"freeprob {' '.join(cmd)} --help has no example"
        for line in _examples(cmd):
            for part in line.split(" && "):
                argv = shlex.split(part)
                assert argv[0] == "freeprob" and argv[1] in {c[0] for c in COMMANDS}, line
    assert _examples(("verify",)) == [VERIFY_EXAMPLE]


@pytest.mark.parametrize("cmd, expect", [
    ("table", "free κ_n"),
    ("readout", "head-count"),
])
def test_help_example_runs(cmd, expect, tmp_path):
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    (line,) = _examples((cmd,))
    proc = _run_line(line, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert expect in proc.stdout and "Traceback" not in proc.stderr


def test_fit_example_runs(tmp_path):
    """``freeprob fit FILE``: its example, on 400 eigenvalues of a Wishart matrix written to
    the file the example names (the one input it needs)."""
    import numpy as np
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    (line,) = _examples(("fit",))
    x = np.random.default_rng(0).standard_normal((800, 400))
    np.savetxt(tmp_path / shlex.split(line)[2], np.linalg.eigvalsh(x.T @ x / 800))
    proc = _run_line(line, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ratio" in proc.stdout and "distance to the sample" in proc.stdout


@pytest.fixture(scope="module")
def verify_example(tmp_path_factory):
    """The verify example, run once in a fresh directory: (directory, completed process)."""
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    work = tmp_path_factory.mktemp("examples")
    return work, _run_line(VERIFY_EXAMPLE, work)


def test_verify_example_runs(verify_example):
    work, proc = verify_example
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "gpt2-small" in proc.stdout and "Traceback" not in proc.stderr
    assert (work / "freeprob-verify-example" / "results.sqlite").is_file()


@pytest.mark.parametrize("cmd, expect", [
    (("sweep",), "verify-"),
    (("sweep", "show"), "config,"),
    (("sweep", "export"), "results.csv"),
])
def test_sweep_examples_run(cmd, expect, verify_example):
    """Issue 26: ``sweep show --help``'s example read a store that a fresh directory lacks."""
    work, first = verify_example
    assert first.returncode == 0, first.stderr[-2000:]
    (line,) = _examples(cmd)
    assert line.startswith(VERIFY_EXAMPLE + " && ")     # so it runs as written in a fresh directory
    proc = _run_line(line, work)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert expect in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    if cmd == ("sweep", "export"):
        head = (work / "results.csv").read_text(encoding="utf-8").splitlines()[0]
        assert head.startswith("sweep,") and (work / "results.parquet").stat().st_size > 0


def test_explore_example_is_accepted(tmp_path, monkeypatch, capsys):
    """The explore example takes minutes: its arguments go through the real command, in a fresh
    directory, up to the computation (tests/test_explore.py runs that at small sizes)."""
    from freeprob.cli import main
    from freeprob.experiments import explore
    (line,) = _examples(("explore",))
    argv = shlex.split(line)
    seen = {}

    def computed(out, **kw):
        seen.update(kw, out=out)
        return dict(rows=[], files=[], failed={},
                    preferred={"gaussian_dn2": dict(preferred="gqa", law_gqa=7.73, law_tied=8.17, samples="gqa",
                                                    agree=True, gqa_minus_tied=-0.4, ci95_lo=-0.6, ci95_hi=-0.2,
                                                    p=0.01, seeds=4)})

    monkeypatch.setattr(explore, "run_inputs", computed)
    monkeypatch.chdir(tmp_path)
    assert argv[:3] == ["freeprob", "explore", "inputs"]
    assert main(argv[1:]) == 0, capsys.readouterr().err
    assert seen["quick"] is True and seen["out"] == argv[argv.index("--out") + 1]
    # the answer is the laws', the samples' paired test its check (issue 28)
    printed = capsys.readouterr().out
    assert "gaussian_dn2: gqa (law m2/m1^2 GQA 7.73, tied 8.17); samples: gqa" in printed and "; agrees)" in printed


def test_bare_command_prints_help():
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    proc = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "moments" in proc.stdout and "readout" in proc.stdout


def test_every_time_a_help_text_quotes_is_measured():
    """Issue 26: ``verify --quick``'s help said "~20 s" where the runs take minutes.  Every run
    time in a help text is one of freeprob.cli.main.MEASURED_TIMES, which the page of the
    measurements quotes word for word (and the README, for verify's)."""
    from freeprob.cli.main import MEASURED_TIMES
    root = Path(__file__).resolve().parents[1]
    helps = {cmd: " ".join(sub.format_help().split()) for cmd, sub in COMMANDS.items()}
    claim = re.compile(r"~?\d[\d.]*(?:[–-]\d[\d.]*)? ?(?:s|sec|seconds|min|minutes|h|hours)\b")
    quoted = [text for text, _ in MEASURED_TIMES.values()]
    for cmd, text in helps.items():
        for m in claim.finditer(text):
            limit = re.search(r"estimated above $", text[:m.start()])        # a cost limit, not a time
            assert limit or any(m.group(0) in q and q in text for q in quoted), \
                f"freeprob {' '.join(cmd)} --help: {m.group(0)!r} is not a measured time (MEASURED_TIMES)"
    for what, (text, page) in MEASURED_TIMES.items():
        assert any(text in h for h in helps.values()), f"{what}: quoted by no help text"
        assert text in " ".join((root / page).read_text(encoding="utf-8").split()), f"{page} does not say {text!r}"
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    assert MEASURED_TIMES["verify --quick"][0] in readme
