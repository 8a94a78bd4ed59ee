"""The cost and the reaction time of the worker process (issue 26; run by hand, figures in
docs/benchmarks.md).

    python benchmarks/bench_interrupt.py

1. Cost: ``freeprob moments 'FreePoisson(1)' --order 5`` run 20 times in one process
   (``freeprob.cli.main``), with the worker process and with ``FREEPROB_IN_PROCESS=1``,
   three rounds each: CPU (this process and its children) and wall time per command.
2. Reaction: the issue's ``freeprob moments 'free_mul(FreePoisson(1/2), FreePoisson(1/3))'
   --order 20000 --force`` (one FLINT series reversion: hours) gets SIGINT, then SIGTERM, 3 s
   after its worker started; the time to exit and the exit status.

Linux (it finds the worker through /proc).  Measure on an otherwise idle machine.
"""
import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
import time

LONG = ["moments", "free_mul(FreePoisson(1/2), FreePoisson(1/3))", "--order", "20000", "--force"]


def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def cost(rounds=3, runs=20):
    from freeprob.cli import main
    argv = ["moments", "FreePoisson(1)", "--order", "5"]
    with contextlib.redirect_stdout(io.StringIO()):
        main(argv)
    for _ in range(rounds):
        for mode in ("in-process", "worker"):
            if mode == "in-process":
                os.environ["FREEPROB_IN_PROCESS"] = "1"
            else:
                os.environ.pop("FREEPROB_IN_PROCESS", None)
            c, t = cpu(), time.perf_counter()
            for _ in range(runs):
                with contextlib.redirect_stdout(io.StringIO()):
                    main(argv)
            print(f"{mode:10s}: {(cpu() - c) / runs * 1e3:5.1f} ms CPU, "
                  f"{(time.perf_counter() - t) / runs * 1e3:5.1f} ms wall per command")
    os.environ.pop("FREEPROB_IN_PROCESS", None)


def reaction(sig):
    proc = subprocess.Popen([sys.executable, "-m", "freeprob.cli", *LONG], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    path = f"/proc/{proc.pid}/task/{proc.pid}/children"
    while not open(path).read().split():
        time.sleep(0.02)
    time.sleep(3)
    t = time.perf_counter()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=600)
    print(f"{signal.Signals(sig).name}: exit status {proc.returncode} after {time.perf_counter() - t:.3f} s "
          f"({err.strip().splitlines()[-1]})")


if __name__ == "__main__":
    print(f"load average {os.getloadavg()[0]:.1f}")
    cost()
    reaction(signal.SIGINT)
    reaction(signal.SIGTERM)
