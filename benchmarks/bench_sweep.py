"""The default ``freeprob verify`` sweep on 1 vs 2 Dask workers (run by hand; figures in the README).

    python benchmarks/bench_sweep.py            # default sweep, --workers 1 then --workers 2
    python benchmarks/bench_sweep.py --large    # also one n = 4096 configuration, 2 seeds
    python benchmarks/bench_sweep.py --keep DIR # keep the stores and reports in DIR

Every run writes to a fresh store (nothing reused).  ``--workers 1`` runs the cells in the
main process with BLAS on every core; ``--workers 2`` starts a ``LocalCluster`` of two
single-threaded worker processes, each cell's BLAS limited to ``cores // 2`` threads.  The
draws of the two runs are the same (cells are seeded from the sweep seed and the cell key,
not from the schedule); their metrics differ only by the rounding of BLAS run with a
different thread count, printed as the largest relative difference.  Measure on an otherwise idle machine (load < 1).
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time


def run(args, out):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "freeprob.cli", "verify", "--no-progress", "--no-figures", "--out", out,
                    *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def rows(out):
    with open(os.path.join(out, "summary.json")) as fh:
        return json.load(fh)["rows"]


def max_relative_difference(a, b):
    """Largest relative difference between the metric means of two runs (same cells)."""
    worst = 0.0
    for ra, rb in zip(a, b, strict=True):
        assert (ra["config"], ra["n"], ra["beta"]) == (rb["config"], rb["n"], rb["beta"])
        for k, m in ra["metrics"].items():
            if m is not None and m["mean"]:
                worst = max(worst, abs(m["mean"] - rb["metrics"][k]["mean"]) / abs(m["mean"]))
    return worst


def main():
    large = "--large" in sys.argv[1:]
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.2f}")
    jobs = [("default sweep (7 configs x 10 seeds, n <= 1024)", [])]
    if large:
        jobs.append(("llama2-7b at n = 4096 (widths real), 2 seeds", ["--configs", "llama2-7b", "--n", "4096",
                                                                      "--widths", "real", "--seeds", "2"]))
    argv = sys.argv[1:]
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    with tempfile.TemporaryDirectory() as tmp:
        for j, (label, args) in enumerate(jobs):
            times = {}
            for w in (1, 2):
                out = os.path.join(keep or tmp, f"job{j}-workers{w}")
                times[w] = run([*args, "--workers", str(w)], out)
                times[f"rows{w}"] = rows(out)
            diff = max_relative_difference(times["rows1"], times["rows2"])
            print(f"{label}: 1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s, "
                  f"speed-up {times[1] / times[2]:.2f}x; largest relative difference of the metric means "
                  f"{diff:.1e} (same draws; BLAS with 2 threads vs 1 rounds differently)")
    print(f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
