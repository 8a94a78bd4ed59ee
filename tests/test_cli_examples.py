"""The ``--help`` examples of ``freeprob verify``, ``readout`` and ``table`` run as written
through the console script (the law commands' examples are run in tests/test_cli_laws.py),
and ``freeprob`` alone prints the help."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from freeprob.cli import build_parser

SCRIPT = Path(sys.executable).with_name("freeprob")


def _example(cmd):
    parser = build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None) and cmd in a.choices)
    text = " ".join(sub.choices[cmd].format_help().split())
    m = re.search(r"example: (freeprob .+)$", text)
    assert m, f"freeprob {cmd} --help has no example"
    return shlex.split(m.group(1))


@pytest.mark.parametrize("cmd, expect", [
    ("table", "free κ_n"),
    ("readout", "head-count"),
    ("verify", "gpt2-small"),
])
def test_help_example_runs(cmd, expect, tmp_path):
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    argv = _example(cmd)
    assert argv[:2] == ["freeprob", cmd]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    proc = subprocess.run([str(SCRIPT), *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert expect in proc.stdout and "Traceback" not in proc.stderr


def test_bare_command_prints_help():
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    proc = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "moments" in proc.stdout and "readout" in proc.stdout
