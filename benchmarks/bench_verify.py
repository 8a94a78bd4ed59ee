"""Wall clock and peak memory of ``freeprob verify`` (run by hand; figures in the README).

    python benchmarks/bench_verify.py            # default run and --quick, fresh output dirs

Each run uses a fresh temporary output directory (nothing reused), then a rerun of the
default into the same directory (only re-summarising).  Peak memory is the resident set
of the main process (``resource.getrusage(RUSAGE_CHILDREN)`` over the runs so far).
"""
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time


def run(args, out):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "freeprob.cli", "verify", "--no-progress", "--out", out, *args],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        quick = run(["--quick"], os.path.join(tmp, "quick"))
        print(f"freeprob verify --quick              {quick:6.1f} s")
        full = run([], os.path.join(tmp, "full"))
        print(f"freeprob verify (7 configs x 10)     {full:6.1f} s (target < 300 s)")
        again = run([], os.path.join(tmp, "full"))
        print(f"rerun of the finished default run    {again:6.1f} s")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak resident memory of a verify process: {peak:.0f} MiB; load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
