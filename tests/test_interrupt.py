"""Issue 26, "work that cannot be stopped or seen": long work runs in a worker process
(:mod:`freeprob._interruptible`), so Ctrl-C and SIGTERM stop every command within seconds
even inside one long compiled call, and long work shows its progress on stderr
(:mod:`freeprob._progress`; a sweep's bar moves within a cell).

The subprocess tests start work that runs for minutes to hours in one FLINT call (the
issue's order-20000 moments: a single series reversion), signal it a second after its
worker process exists and give it 30 s to stop (it stops in well under one)."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import freeprob as fp
from freeprob._interruptible import ENV_IN_PROCESS, WorkerDied, WorkerProcess
from freeprob._progress import report
from freeprob._signals import Terminated, sigterm_as_interrupt

LINUX = sys.platform.startswith("linux") and os.path.isdir("/proc/self/task")
needs_proc = pytest.mark.skipif(not LINUX, reason="watches the worker process through /proc (Linux)")

#: the issue's command: one FLINT series reversion of order 20000 (hours)
LONG_MOMENTS = ["moments", "free_mul(FreePoisson(1/2), FreePoisson(1/3))", "--order", "20000", "--force"]


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _gone(pid, within=10.0):
    """Whether process ``pid`` no longer exists (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def _spawn_until(argv, tmp_path, ready, timeout, poll, failure):
    """``python -m freeprob.cli ARGV`` with Ctrl-C handled as in a terminal (SIGINT not
    inherited as ignored), in its own session, returned once ``ready(proc)`` holds (the test
    fails with ``failure`` and the command's stderr if it ends or ``timeout`` s pass first)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop(ENV_IN_PROCESS, None)
    proc = subprocess.Popen([sys.executable, "-m", "freeprob.cli", *argv], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + timeout
    while not ready(proc):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{failure}: {proc.communicate()[1][-2000:]}")
        time.sleep(poll)
    return proc


def _start(argv, tmp_path):
    """``python -m freeprob.cli ARGV`` with Ctrl-C handled as in a terminal (SIGINT not
    inherited as ignored), in its own session; returns (process, its worker's pid) once the
    worker has computed for a second."""
    proc = _spawn_until(argv, tmp_path, lambda p: _children(p.pid), 240, 0.05, "no worker process started")
    time.sleep(1.0)
    workers = _children(proc.pid)
    assert proc.poll() is None and workers, "the work finished before the signal"
    return proc, workers[0]


def _stop(proc, sig, group=False, times=1):
    """Send ``sig`` (``times`` times, 0.1 s apart: a Ctrl-C pressed again while the command
    stops) and wait for the command."""
    for k in range(times):
        if k:
            time.sleep(0.1)
            if proc.poll() is not None:
                break
        (os.killpg if group else os.kill)(proc.pid, sig)
    try:
        return proc.communicate(timeout=30)             # minutes to hours of work otherwise
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@needs_proc
@pytest.mark.parametrize("sig, status, word", [(signal.SIGINT, 130, "interrupted"),
                                               (signal.SIGTERM, 143, "terminated (SIGTERM)")],
                         ids=["ctrl-c", "sigterm"])
def test_a_law_command_inside_one_long_flint_call_stops_at_once(tmp_path, sig, status, word):
    """The signal sent four times (the newcomer's report: a second Ctrl-C during the stop
    ended the command by the signal, status −2, instead of 130): one line, the status of the
    first."""
    proc, worker = _start(LONG_MOMENTS, tmp_path)
    out, err = _stop(proc, sig, group=sig == signal.SIGINT, times=4)   # Ctrl-C: the terminal signals the group
    assert proc.returncode == status, err
    assert err.strip().splitlines() == [f"freeprob: {word}"], err
    assert out == ""                                             # no half table
    assert _gone(worker), "the worker process outlived the command"


@needs_proc
def test_the_worker_dies_with_a_killed_command(tmp_path):
    proc, worker = _start(LONG_MOMENTS, tmp_path)
    _stop(proc, signal.SIGKILL)                                  # kill -9: no handler runs
    assert proc.returncode == -signal.SIGKILL
    assert _gone(worker), "the worker process outlived kill -9 of the command (PR_SET_PDEATHSIG)"


@needs_proc
def test_explore_stops_inside_a_cell(tmp_path):
    """The first cell of explore beta-growth tabulates exact laws for minutes, in the sweep's
    worker process: Ctrl-C stops it with the usual line, nothing half-stored."""
    proc, worker = _start(["explore", "beta-growth", "--quick", "--ns", "64", "--seeds", "1", "--epsilons",
                           "0.05", "--no-figures", "--out", "x"], tmp_path)
    _, err = _stop(proc, signal.SIGINT, group=True)
    assert proc.returncode == 130, err
    assert err.replace("\r", "\n").strip().splitlines()[-1] == "freeprob: interrupted"
    assert _gone(worker)


def test_interruptible_stops_a_long_flint_call_in_python(monkeypatch):
    """The Python API (a notebook's "interrupt kernel" is SIGINT; SIGTERM here, raised as
    Terminated): the signal lands within seconds although the worker is inside one FLINT call."""
    monkeypatch.delenv(ENV_IN_PROCESS, raising=False)
    law = fp.free_mul(fp.FreePoisson(fp.Rational(1, 2)), fp.FreePoisson(fp.Rational(1, 3)))
    worker, seen, sent = WorkerProcess(), [], []

    def fire():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGTERM)

    timer = threading.Timer(1.5, fire)
    with sigterm_as_interrupt(), pytest.raises(Terminated):
        timer.start()
        try:
            worker.call(law.moments, (20000,), on_wait=lambda: seen.append(worker.pid), wait_interval=0.1)
        finally:
            timer.cancel()
    assert sent and time.monotonic() - sent[0] < 20
    assert worker.pid is None and seen and _gone(seen[-1], within=5)


def _kill_self():
    os.kill(os.getpid(), signal.SIGKILL)


def _boom(text):
    raise fp.FreeprobValueError(text)


def test_interruptible_returns_and_raises_as_in_place(monkeypatch):
    law = fp.FreePoisson(fp.Rational(1, 2))
    monkeypatch.delenv(ENV_IN_PROCESS, raising=False)
    assert fp.interruptible(law.moments, 6) == law.moments(6)
    with pytest.raises(fp.FreeprobValueError, match="bad rate") as info:
        fp.interruptible(_boom, "bad rate")
    if hasattr(os, "fork"):
        assert "in the worker process" in "".join(getattr(info.value, "__notes__", []))
        with pytest.raises(WorkerDied, match="killed by SIGKILL"):
            fp.interruptible(_kill_self)
    monkeypatch.setenv(ENV_IN_PROCESS, "1")                             # in this process, the same values
    assert fp.interruptible(law.free_cumulants, 4) == law.free_cumulants(4)


def _steady(x):
    return {"quantities": {"x": float(x)}}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no worker process without fork")
def test_a_cell_that_kills_its_worker_fails_alone(tmp_path, monkeypatch):
    from freeprob.experiments.store import ResultStore
    from freeprob.experiments.sweep import Executor, SweepCell, run_cells
    monkeypatch.delenv(ENV_IN_PROCESS, raising=False)
    cells = [SweepCell(key="a", params={}, fn=_steady, kwargs={"x": 1}),
             SweepCell(key="dies", params={}, fn=_kill_self, priority=1),     # first: its worker is replaced
             SweepCell(key="b", params={}, fn=_steady, kwargs={"x": 2})]
    with Executor(workers=1) as ex, ResultStore(tmp_path / "r.sqlite") as st:
        st.begin_sweep("s", "test", {})
        stats = run_cells(cells, st, "s", ex, progress=False)
        assert list(stats.failed) == ["dies"] and "WorkerDied" in stats.failed["dies"]
        assert stats.computed == 2 and st.cell_quantities("b") == {"x": 2.0}


def test_explore_progress_moves_within_a_cell(tmp_path, monkeypatch, capsys):
    """The bar of explore beta-growth moves within a cell (one evaluation of the frontier:
    the law, then each draw, reported through the worker's pipe), before the cell ends."""
    from freeprob.experiments import explore_beta

    def fake(family, n, beta, seeds, entropy, points):
        for s in range(seeds + 1):
            report(s, seeds + 1, f"β = {beta:.4g}")
            time.sleep(0.12)                         # reports are sent at most every 0.1 s
        d = 0.04 * beta                              # relative W1 growing with β: a frontier at β = 1.25
        return dict(law=d, sample=d, KS_law=d, KS_sample=d, top_sm=1.0, top_ge=1.0, m4_err=0.0, edge_law=1.0)

    monkeypatch.setattr(explore_beta, "_evaluate", fake)
    res = explore_beta.run_beta_growth(tmp_path, quick=True, ns=(64,), epsilons=(0.05,),
                                       families=("proportional",), seeds=3, steps=2, figures=False, progress=True)
    assert res["failed"] == {} and len(res["rows"]) == 1
    assert 0.95 <= res["rows"][0]["beta_low"] < 1.25 <= res["rows"][0]["beta_high"] <= 1.5
    # the first bisection round has one cell (one midpoint): its bar moves 0 → 1/4 → … → 1
    states = [s for s in capsys.readouterr().err.replace("\r", "\n").splitlines()
              if "bisection 1:" in s and "/1 [" in s]
    fractions = [s for s in states if "| 0." in s]
    assert len({s.split("|")[2].split("[")[0] for s in fractions}) >= 3, states    # several sub-step counts
    first_whole = next(i for i, s in enumerate(states) if "| 1/1 [" in s)
    assert all(states.index(s) < first_whole for s in fractions)
    assert any("β = " in s for s in fractions)


# --- the local Dask cluster's start: Ctrl-C and SIGTERM held back, then acted on ----------

def test_sigterm_during_a_held_start_raises_terminated_after_the_cleanup():
    """A SIGTERM inside :func:`deferred_signals` does not cut the block; on leaving it the
    cleanup runs first, then Terminated is raised (under sigterm_as_interrupt, as in every
    command) and the handlers are as before."""
    from freeprob._signals import deferred_signals
    steps = []
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with sigterm_as_interrupt():
        with pytest.raises(Terminated):
            with deferred_signals(cleanup=lambda: steps.append("cleanup")) as got:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.1)                       # the handler has run: it only noted it
                steps.append("start finished")
        assert got == [signal.SIGTERM] and steps == ["start finished", "cleanup"]
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN     # once: as sigterm_as_interrupt does
    # no signal: no cleanup, nothing raised; the handlers are those of before
    with sigterm_as_interrupt(), deferred_signals(cleanup=lambda: steps.append("again")) as got:
        pass
    assert got == [] and steps == ["start finished", "cleanup"]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


_HELD_CTRL_C = """
import os, signal, subprocess, sys, time
from freeprob._signals import deferred_signals
steps = []
try:
    with deferred_signals(cleanup=lambda: steps.append("cleanup")):
        child = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) "
                                "is signal.SIG_IGN)"], capture_output=True, text=True).stdout.strip()
        os.killpg(0, signal.SIGINT)                # Ctrl-C: the terminal signals the process group
        time.sleep(0.2)
        steps.append("start finished")
    print("not raised")
except KeyboardInterrupt:
    print(child, steps, signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_ctrl_c_during_a_held_start_is_kept_and_workers_ignore_it(tmp_path):
    """A Ctrl-C (to the process group) inside :func:`deferred_signals`: a process started
    in the block inherits SIGINT ignored (a Dask worker prints no traceback), the block
    finishes, the cleanup runs, then KeyboardInterrupt is raised."""
    proc = subprocess.run([sys.executable, "-c", _HELD_CTRL_C], capture_output=True, text=True, timeout=60,
                          start_new_session=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.strip() == "True ['start finished', 'cleanup'] True", proc.stderr


def test_closing_a_dask_cluster_is_bounded(tmp_path):
    """Every client/cluster close passes CLOSE_TIMEOUT; one that times out has its worker
    processes killed and is reported as not closed (no hang, nothing raised)."""
    from types import SimpleNamespace
    from freeprob.experiments.sweep_cluster import CLOSE_TIMEOUT, close_bounded

    class Cluster:
        def __init__(self, fails, pid=None):
            self.fails, self.timeouts = fails, []
            self.workers = {} if pid is None else {"w": SimpleNamespace(process=SimpleNamespace(
                process=SimpleNamespace(pid=pid)))}

        def close(self, timeout=None):
            self.timeouts.append(timeout)
            if self.fails:
                raise TimeoutError("closing")

    ok = Cluster(False)
    assert close_bounded(ok) is True and ok.timeouts == [CLOSE_TIMEOUT] and 0 < CLOSE_TIMEOUT <= 10
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stuck = Cluster(True, worker.pid)
    assert close_bounded(stuck) is False and stuck.timeouts == [CLOSE_TIMEOUT]
    assert worker.wait(timeout=10) == -signal.SIGKILL


def _watcher_running(pid):
    """Whether the Ctrl-C watcher of deferred_signals runs under ``pid`` (the cluster starts)."""
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as fh:
                if b"b'i'" in fh.read():
                    return True
        except OSError:
            pass
    return False


_KEPT = "; finished cells are kept and a rerun resumes"


@needs_proc
@pytest.mark.parametrize("command, sig, status, line", [
    ("verify", signal.SIGINT, 130, "freeprob: interrupted" + _KEPT),
    ("verify", signal.SIGTERM, 143, "freeprob: terminated (SIGTERM)" + _KEPT),
    ("readout", signal.SIGINT, 130, "freeprob: interrupted")],
    ids=["verify-ctrl-c", "verify-sigterm", "readout"])
def test_a_sweep_stops_while_its_cluster_starts(tmp_path, command, sig, status, line):
    """The newcomer's report: a Ctrl-C while verify's LocalCluster starts was ignored (the
    run finished with status 0), a SIGTERM left Dask's exit handler a half-built cluster
    (a traceback).  Both now stop the run as soon as the cluster is up: the usual status
    and line, no traceback (none from a worker either), no table.  Sent to the process
    group, as the terminal and ``timeout`` do.  Readout, stopped before a comparison ran,
    printed nothing: now the one line too."""
    argv = {"verify": ["verify", "--quick", "--configs", "gpt2-small", "--no-progress"],
            "readout": ["readout", "head-count", "--quick", "--seeds", "2"]}[command]
    argv += ["--workers", "2", "--no-figures", "--out", "x"]
    proc = _spawn_until(argv, tmp_path, lambda p: _watcher_running(p.pid), 120, 0.02, "the cluster did not start")
    out, err = _stop(proc, sig, group=True)
    assert proc.returncode == status, err
    assert err.strip().splitlines() == [line]
    assert out == ""


class _Finalised:
    """An object whose finaliser receives a signal: Python runs the handler inside
    ``__del__`` and discards its exception ("Exception ignored in ...")."""

    def __init__(self, sig):
        self.sig = sig

    def __del__(self):
        signal.raise_signal(self.sig)


@pytest.mark.parametrize("sig, exc", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)])
def test_a_stop_python_discards_in_a_finaliser_is_raised_again(sig, exc, monkeypatch):
    """The CI failure of test_trust_store's Ctrl-C test (status 0): a Ctrl-C handled inside
    Dask's garbage-collector callback (or any finaliser) was discarded and the run finished.
    Inside the command's block the next progress report (and a sweep's or worker's wait
    loop) raises it again, and the discarded one prints nothing; outside the block nothing
    is left over."""
    printed = []
    monkeypatch.setattr(sys, "unraisablehook", printed.append)
    # Python's own Ctrl-C handler, whatever this process inherited (a run started in the
    # background of a non-interactive shell has SIGINT ignored)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with sigterm_as_interrupt():
            _Finalised(sig)                     # handled and discarded: this line completes
            with pytest.raises(exc) as got:
                report(1, 2)
            assert type(got.value) is exc
        assert printed == []
        report(1, 2)                            # the block ended: the stop is forgotten
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert sys.unraisablehook == printed.append
    finally:
        signal.signal(signal.SIGINT, old)
