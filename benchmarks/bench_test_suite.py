"""CPU time of the test suite (the README's test command), per test and in all; two checkouts
side by side (run by hand; figures in docs/benchmarks.md, "Test suite").

    python benchmarks/bench_test_suite.py CHECKOUT [CHECKOUT ...]

Each CHECKOUT is a directory holding the project (a git worktree of the commit to measure)
with its own virtual environment in ``CHECKOUT/.venv`` (``pip install -e ".[all,test]"``).
Their suites start together, so that the machine's load affects them alike, and the figure
of merit is each suite's CPU time: user + system time of the pytest process (all threads)
and of every child process it waited for (``resource.getrusage``: subprocess runs of the
command line, forked workers, Dask local-cluster workers), from the start of the session to
its end, collection included.  A pytest plugin written to a temporary folder records the
same per test (setup, call and teardown); the script prints the totals, the files that cost
most, and writes the per-test rows to ``CHECKOUT.cpu.json`` beside each checkout.

Wall times are printed too but mean little on a shared machine: only the CPU times of
suites run together are compared.
"""
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

PLUGIN = '''
import json, os, resource, time
import pytest

_rows = []


def _cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t0, w0 = _cpu(), time.time()
    yield
    _rows.append((item.nodeid, _cpu() - t0, time.time() - w0))


def pytest_sessionfinish(session, exitstatus):
    with open(os.environ["FREEPROB_CPU_OUT"], "w") as f:
        json.dump({"rows": _rows, "total_cpu": _cpu(), "exitstatus": int(exitstatus)}, f)
'''


def main(checkouts):
    if not checkouts:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "freeprob_cpu_plugin.py").write_text(PLUGIN)
        procs = []
        for co in checkouts:
            co = Path(co).resolve()
            py = co / ".venv" / "bin" / "python"
            if not py.exists():
                sys.exit(f"{co}: no .venv/bin/python (make one: pip install -e '.[all,test]')")
            env = dict(os.environ, PYTHONPATH=tmp, FREEPROB_CPU_OUT=str(co) + ".cpu.json")
            log = open(str(co) + ".pytest.log", "w")
            procs.append((co, subprocess.Popen(
                [str(py), "-m", "pytest", "-q", "-p", "freeprob_cpu_plugin", "-p", "no:cacheprovider"],
                cwd=co, env=env, stdout=log, stderr=subprocess.STDOUT), log))
        for co, p, log in procs:
            p.wait()
            log.close()
    for co, _, _ in procs:
        data = json.loads(Path(str(co) + ".cpu.json").read_text())
        rows = data["rows"]
        by_file = Counter()
        for nodeid, cpu, _wall in rows:
            by_file[nodeid.split("::")[0]] += cpu
        print(f"{co}: {len(rows)} tests, exit status {data['exitstatus']}, "
              f"CPU {data['total_cpu']:.0f} s (session), {sum(r[1] for r in rows):.0f} s (in tests), "
              f"wall {sum(r[2] for r in rows):.0f} s")
        for name, cpu in by_file.most_common(12):
            print(f"  {cpu:7.1f} s  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
