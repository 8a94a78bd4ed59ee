"""CPU, wall clock and peak memory of ``freeprob verify``, with and without the finite-width laws
(run by hand; figures in docs/benchmarks.md and the README).

    python benchmarks/bench_verify.py                 # --quick pair, default pair, rerun
    python benchmarks/bench_verify.py --quick-only    # only the --quick pair
    python benchmarks/bench_verify.py --repeat 2      # each pair twice, interleaved

Each run is a fresh ``freeprob verify`` process with a fresh temporary output directory
(nothing reused).  The two runs of a pair (``verify --quick`` and ``verify --quick
--no-finite-width``; likewise the default run) are measured side by side in one session,
interleaved, so that the machine's load affects both alike; the figure of merit is the ratio
of their CPU times (target ≤ 1.5).

CPU time is the user + system time of the ``verify`` process and of every process under it,
from ``resource.getrusage(RUSAGE_CHILDREN)`` before and after the run.  The Dask worker
processes of a local cluster are children of the ``verify`` process (its nannies run in that
process and start each worker with ``multiprocessing``), which joins (reaps) them when the
cluster closes, so their CPU time is added to the ``verify`` process's own children total,
and that to ours when we reap ``verify``.  The script checks this: while a run goes it polls
the CPU times of the process tree with psutil (every 0.1 s; the last value seen per process),
and prints that sum next to the rusage figure.  If rusage were missing the workers, it would
be far below the polled sum; it is a little above it (the polling misses each process's last
tenth of a second).  Peak memory is the largest resident set of one process
(``ru_maxrss`` of RUSAGE_CHILDREN, over the runs so far).
"""
import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time

try:
    import psutil
except ImportError:         # the cross-check is skipped
    psutil = None


def _cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _poll_tree(pid, seen, stop):
    """Record the CPU time (user + system) of ``pid`` and its descendants until ``stop``."""
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    while not stop.is_set():
        try:
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            break
        for p in procs:
            try:
                t = p.cpu_times()
                seen[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        stop.wait(0.1)


def run(args, out):
    """``(wall s, CPU s by rusage, CPU s polled or None)`` of one ``freeprob verify`` run."""
    c0, t0 = _cpu_children(), time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "freeprob.cli", "verify", "--no-progress", "--out", out,
                             *args], stdout=subprocess.DEVNULL)
    seen, stop = {}, threading.Event()
    poller = None
    if psutil is not None:
        poller = threading.Thread(target=_poll_tree, args=(proc.pid, seen, stop), daemon=True)
        poller.start()
    rc = proc.wait()
    stop.set()
    if poller is not None:
        poller.join()
    wall, cpu = time.perf_counter() - t0, _cpu_children() - c0
    if rc != 0:
        raise SystemExit(f"freeprob verify {' '.join(args)} failed with exit code {rc}")
    return wall, cpu, (sum(seen.values()) if psutil is not None else None)


def pair(label, args, tmp, repeat):
    """Run ``args`` with and without ``--no-finite-width``, interleaved ``repeat`` times."""
    rows = {"with": [], "without": []}
    for i in range(repeat):
        for tag, extra in (("with", []), ("without", ["--no-finite-width"])):
            load = os.getloadavg()[0]
            wall, cpu, polled = run([*args, *extra], os.path.join(tmp, f"{label}-{tag}-{i}"))
            rows[tag].append((wall, cpu))
            pol = "" if polled is None else f", polled {polled:6.1f} s"
            print(f"freeprob verify {' '.join(args + extra):40s} CPU {cpu:6.1f} s (rusage{pol}), "
                  f"wall {wall:6.1f} s, load avg at start {load:.2f}", flush=True)
    cpu_w = sum(c for _, c in rows["with"]) / repeat
    cpu_wo = sum(c for _, c in rows["without"]) / repeat
    wall_w = sum(w for w, _ in rows["with"]) / repeat
    print(f"  {label}: CPU with finite-width laws / without = {cpu_w:.1f} / {cpu_wo:.1f} s = "
          f"{cpu_w / cpu_wo:.2f} (target <= 1.5); wall with them {wall_w:.1f} s", flush=True)
    return cpu_w / cpu_wo


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick-only", action="store_true", help="only the --quick pair")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each pair (interleaved)")
    a = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        pair("verify --quick", ["--quick"], tmp, a.repeat)
        if not a.quick_only:
            pair("verify (7 configs x 10)", [], tmp, a.repeat)
            wall, cpu, _ = run([], os.path.join(tmp, "verify-with-0"))
            print(f"rerun of the finished default run: CPU {cpu:.1f} s, wall {wall:.1f} s")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak resident memory of one process: {peak:.0f} MiB; load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
