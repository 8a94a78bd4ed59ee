"""CPU time of ``freeprob explore inputs --quick`` against ``freeprob verify --quick
--no-finite-width``, side by side in one run (issue 27; run by hand, figures in
docs/benchmarks.md):

    python benchmarks/bench_explore_inputs.py            # target: ratio ≤ 3

Each command runs in a fresh temporary output directory (nothing resumed), in a child
process, one after the other; its CPU time is the growth of ``resource.getrusage(
RUSAGE_CHILDREN)`` (user + system) over the run, which counts every process the command
waited for (verify's local Dask workers included).  A ratio of CPU times measured
back to back on the same machine is meaningful under load; wall times are not.
``--repeat`` alternates the two commands and reports every pair and the median ratio.
"""
import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def _cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(args, out):
    """(CPU seconds, wall seconds) of ``python -m freeprob ARGS --out OUT``."""
    c, t = _cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "freeprob", *args, "--out", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _cpu() - c, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="pairs of runs (default 1)")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.2f}")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            v_cpu, v_wall = run(["verify", "--quick", "--no-finite-width", "--no-progress"],
                                os.path.join(tmp, f"verify{i}"))
            e_cpu, e_wall = run(["explore", "inputs", "--quick", "--no-figures"],
                                os.path.join(tmp, f"explore{i}"))
            ratios.append(e_cpu / v_cpu)
            print(f"verify --quick --no-finite-width  CPU {v_cpu:7.1f} s  (wall {v_wall:6.1f} s)")
            print(f"explore inputs --quick            CPU {e_cpu:7.1f} s  (wall {e_wall:6.1f} s)")
            print(f"ratio CPU(explore)/CPU(verify)    {ratios[-1]:7.2f}  (target ≤ 3)")
    if len(ratios) > 1:
        print(f"median ratio over {len(ratios)} pairs: {statistics.median(ratios):.2f}")
    print(f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
