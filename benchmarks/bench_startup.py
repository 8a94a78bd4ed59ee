"""Startup of a law command (issue 27): ``freeprob moments 'FreePoisson(1)' --order 5``
against ``python -c "import sympy"`` (sympy is loaded in full by either), measured in one run.

Run ``python benchmarks/bench_startup.py [--rounds 9]``.  The commands run in turn in each
round; printed are the best wall-clock time and the best CPU time (user + system of the
child process; less sensitive to other load on the machine) of each, and their ratios to
``import sympy``.  ``python -X importtime -m freeprob moments 'FreePoisson(1)'`` shows what
the rest is.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time


def measure(cmds, rounds):
    """``{name: (best wall s, best cpu s)}`` of the commands, run in turn ``rounds`` times."""
    wall = dict.fromkeys(cmds, float("inf"))
    cpu = dict.fromkeys(cmds, float("inf"))
    for _ in range(rounds):
        for name, cmd in cmds.items():
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            wall[name] = min(wall[name], time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name] = min(cpu[name], r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return {name: (wall[name], cpu[name]) for name in cmds}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    py = sys.executable
    cmds = {
        "freeprob moments 'FreePoisson(1)' --order 5": [py, "-m", "freeprob", "moments", "FreePoisson(1)",
                                                         "--order", "5"],
        'python -c "import sympy"': [py, "-c", "import sympy"],
        'python -c "pass"': [py, "-c", "pass"],
    }
    print(f"load average at start {os.getloadavg()[0]:.2f}")
    out = measure(cmds, args.rounds)
    ref_wall, ref_cpu = out['python -c "import sympy"']
    for name, (wall, cpu) in out.items():
        print(f"{name:46s} wall {wall:6.3f} s ({wall / ref_wall:4.2f}x)   cpu {cpu:6.3f} s ({cpu / ref_cpu:4.2f}x)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
