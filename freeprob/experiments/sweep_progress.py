r"""The progress bar of a sweep, moved by the sub-steps its cells report.

A long cell (a frontier of ``explore beta-growth``: minutes) reports its sub-steps with
:func:`freeprob._progress.report`; :func:`freeprob.experiments.sweep.run_cells` moves its
bar within the cell (``0.4/6``) and names the sub-step.  In this process the reports come
through the pipe of the worker process (:mod:`freeprob._interruptible`); on Dask workers
:func:`dask_progress_sink` sends them to the client as events of :data:`PROGRESS_TOPIC`
(``Worker.log_event``), which :class:`RunningCells` receives (``Client.subscribe_topic``).

Source: this project's design (docs/guide/sweeps.md); Dask distributed, structured events
(https://distributed.dask.org: ``Worker.log_event``, ``Client.subscribe_topic``).
"""
from __future__ import annotations

import contextlib
import sys
import time

__all__ = ["PROGRESS_TOPIC", "BAR_FORMAT", "cell_bar", "dask_progress_sink", "RunningCells"]

#: the Dask event topic of the cells' progress reports
PROGRESS_TOPIC = "freeprob-cell-progress"
#: the bar of a sweep: the cells done (with one decimal while a cell is part done)
BAR_FORMAT = "{l_bar}{bar}| {cells}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
#: least seconds between two reports a Dask worker sends for one cell
_EVENT_INTERVAL = 0.5


def cell_bar(tqdm, **kwargs):
    """A ``tqdm`` bar (the class given: the ``sweep`` extra's) counting cells, showing a
    fractional count (a cell part done) with one decimal and a whole one as an integer;
    ``kwargs`` go to tqdm.  Source: this module."""
    class CellBar(tqdm):
        @property
        def format_dict(self):
            d = super().format_dict
            n = d["n"]
            d["cells"] = str(int(n)) if n == int(n) else f"{n:.1f}"
            return d

    kwargs = dict(dict(unit="cell", dynamic_ncols=True, smoothing=0.1, bar_format=BAR_FORMAT), **kwargs)
    return CellBar(**kwargs)


def dask_progress_sink(key):
    """A :func:`freeprob._progress.report` receiver that sends the fraction done of cell
    ``key`` to the client (``Worker.log_event``, at most every :data:`_EVENT_INTERVAL` s);
    ``None`` outside a Dask task (distributed not imported: this process or its worker
    process).  A failure to send is ignored (progress is optional).  Source: this module."""
    distributed = sys.modules.get("distributed")
    if key is None or distributed is None:
        return None
    try:
        worker = distributed.get_worker()
    except ValueError:             # not in a Dask task
        return None
    last = [0.0]

    def sink(done, total, text):
        now = time.monotonic()
        if now - last[0] < _EVENT_INTERVAL or not total:
            return
        last[0] = now
        with contextlib.suppress(Exception):
            worker.log_event(PROGRESS_TOPIC, {"key": key, "frac": min(float(done or 0) / float(total), 0.99),
                                              "text": text})
    return sink


class RunningCells:
    """The reports of the cells running on Dask workers: :meth:`show` sets the bar to the
    finished cells plus the fractions done of the running ones, with the latest sub-step
    (at most every half second); :meth:`finished` counts a cell done.  Without event
    support on the cluster the bar counts whole cells only.  Source: this module."""

    def __init__(self, client, bar):
        self.client, self.bar, self.frac, self.text, self.done = client, bar, {}, None, set()
        self.base, self.next = bar.n, 0.0
        try:
            client.subscribe_topic(PROGRESS_TOPIC, self._event)
            self.subscribed = True
        except Exception:          # an old scheduler: no sub-step progress
            self.subscribed = False

    def _event(self, event):       # on the client's event-loop thread
        msg = event[1] if isinstance(event, tuple) and len(event) == 2 else event
        if isinstance(msg, dict) and "key" in msg and msg["key"] not in self.done:    # not a late one
            self.frac[msg["key"]] = float(msg.get("frac") or 0)
            self.text = msg.get("text")

    def _move(self):
        target = self.base + sum(list(self.frac.values()))       # list(): one step under the GIL
        if target > self.bar.n:
            self.bar.update(target - self.bar.n)

    def show(self):
        """Move the bar to the latest reports (throttled)."""
        now = time.monotonic()
        if now < self.next or not self.frac:
            return
        self.next = now + 0.5
        if self.text:
            self.bar.set_postfix_str(str(self.text), refresh=False)
        self._move()

    def finished(self, key):
        """Cell ``key`` is stored: a whole cell on the bar."""
        self.done.add(key)
        self.frac.pop(key, None)
        self.base += 1
        self._move()

    def close(self):
        """Stop receiving the reports."""
        if self.subscribed:
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(PROGRESS_TOPIC)
