r"""Up-front cost limits of the sampled sweeps (``freeprob verify``, ``freeprob readout``).

A sweep shows a progress bar per finished cell, but one cell (one initialisation at one
size) or one tabulated law is a single step: a size far above what the machine can do
would sit at "0 cells" for hours, or end in a ``MemoryError`` after the exact part.  So
every run is checked before anything is computed:

* one cell's time and memory are estimated from its dense products and ``eigvalsh``
  (:func:`cell_cost`) and refused above :data:`MAX_CELL_SECONDS` or above
  :data:`MEMORY_FRACTION` of this machine's memory (for the cells that run at once);
* the density points of each tabulated law are refused above :data:`MAX_POINTS`;
* a sweep of more than :data:`MAX_CELLS` cells is refused (planning alone then takes
  longer than a progress bar takes to appear).

Each refusal says what it estimated, the limit, and that ``--force`` (``force=True`` from
Python, or :func:`allow_large` around a call) runs it anyway.

Source: measured on this project's 2-core x86_64 (docs/benchmarks.md): one coupled
softmax + GE cell at ``n = 2048, h = 32, d_K = d_V = 128, d_O = d = 4096`` takes 6.5 s
idle, 12 s under load, peak memory 0.76 GiB; tabulating an attention law costs about
2 ms per density point (1.5 s + 2 ms × points, 2026-12).
"""
from __future__ import annotations

import contextlib
import contextvars
import os

from freeprob.errors import FreeprobValueError

__all__ = ["MAX_CELL_SECONDS", "MAX_CELLS", "MAX_POINTS", "MEMORY_FRACTION", "FLOP_RATE",
           "LAW_SECONDS_PER_POINT", "PROGRESS_AFTER", "cell_cost", "density_seconds", "check_cells",
           "check_points", "check_cell_count",
           "allow_large", "large_allowed", "machine_memory", "human_time"]

#: Longest estimated time of one cell (s) run without ``--force``.
MAX_CELL_SECONDS = 600
#: Most density points per support interval of a tabulated law without ``--force``.
MAX_POINTS = 20_000
#: Most cells of one sweep without ``--force``.
MAX_CELLS = 100_000
#: Share of this machine's memory that the cells running at once may use without ``--force``.
MEMORY_FRACTION = 0.8
#: Floating-point rate assumed by :func:`cell_cost` (flop/s): the 2-core reference cell
#: under load (7.2e11 flop in 12 s, rounded down), so estimates err on the long side.
FLOP_RATE = 5e10
#: Time to tabulate one density point of an attention law (s), measured.
LAW_SECONDS_PER_POINT = 2e-3

#: A computation estimated to take longer than this (s) shows a progress bar.
PROGRESS_AFTER = 10

_ALLOW = contextvars.ContextVar("freeprob_allow_large", default=False)


@contextlib.contextmanager
def allow_large():
    r"""Inside the ``with`` block the limits of this module are not enforced (what
    ``--force`` does).

    Returns
    -------
    context manager

    Raises
    ------
    Nothing.

    Source: this module.
    """
    token = _ALLOW.set(True)
    try:
        yield
    finally:
        _ALLOW.reset(token)


def large_allowed() -> bool:
    r"""Whether the limits are lifted (inside :func:`allow_large`).

    Returns
    -------
    bool

    Raises
    ------
    Nothing.

    Source: this module.
    """
    return _ALLOW.get()


def machine_memory() -> int | None:
    r"""Physical memory of this machine in bytes (``None`` where the OS does not say).

    Returns
    -------
    int or None

    Raises
    ------
    Nothing.

    Source: POSIX ``sysconf``.
    """
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def cell_cost(dims, models=2, objects=1, gram_width=None):
    r"""Estimated time (s) and peak memory (bytes) of one sampled cell.

    Parameters
    ----------
    dims : freeprob.sampler.Dimensions
    models : int
        Models sampled on the same draw (softmax + GE = 2; with refinements 4).
    objects : int
        Objects whose Gram spectrum is taken per model.
    gram_width : int, optional
        Width of the factor whose ``n × n`` Gram is taken (default ``d_O``, the output;
        ``h·n`` for ``concat``, whose Gram is ``Σ_h M_h M_hᵀ``).

    Returns
    -------
    (float, float)
        Seconds at :data:`FLOP_RATE` and bytes: projections ``X W_{Q,K,V}``, per head
        ``Q_i K_iᵀ`` and ``A_i V_i``, ``W_O``, the ``n × n`` Gram and its ``eigvalsh``
        (≈ 10 n³ flop); memory of the input, the weights, the head factors and three
        ``n × n`` arrays, in float64.  Within a factor of about 2 of the measured cells.

    Raises
    ------
    Nothing.

    Source: this module's measurements (module docstring).
    """
    n, h, dk, dv, do = int(dims.n), int(dims.heads), int(dims.d_k), int(dims.d_v), int(dims.d_o)
    d = int(dims.d or n)
    proj = 2.0 * n * d * h * (2 * dk + dv)
    heads = 2.0 * n * n * h * (dk + dv)
    width = do if gram_width is None else int(gram_width)
    out = 2.0 * n * h * dv * do + objects * (2.0 * n * n * width + 10.0 * n ** 3)
    flops = proj + models * (heads + out)
    floats = n * d + d * h * (2 * dk + dv) + h * dv * do + 2 * n * h * (dk + dv) + n * do + 3 * n * n
    return flops / FLOP_RATE, 8.0 * floats


def density_seconds(points, dps, unknowns=None):
    r"""Estimated time (s) of ``law.density(grid, dps=dps)`` on ``points`` grid points.

    Parameters
    ----------
    points : int
    dps : int
    unknowns : int, optional
        For a polynomial law on the numeric path: the number of unknowns of its M_k-valued
        equation (:class:`freeprob.numeric.ovcauchy.OperatorValuedCauchy`).

    Returns
    -------
    float
        ``points · 3·10⁻⁶ · dps^1.25`` s: measured on ``free_mul(FreePoisson(1/2),
        FreePoisson(1/3))`` (0.1 ms per point at 15 digits, 0.15 s at 5 000, 2.5 s at
        50 000); laws with larger Cauchy equations take longer.  On the numeric path
        ``points · 10⁻⁴ · unknowns^1.3 · dps/15`` s (measured: 5–10 ms per point for 25–34
        unknowns, 0.1 s for 261, at 15 digits; benchmarks/bench_polynomial_numeric.py).

    Raises
    ------
    Nothing.

    Source: this module's measurements.
    """
    if unknowns is not None:
        return points * 1e-4 * float(unknowns) ** 1.3 * float(dps) / 15
    return points * 3e-6 * float(dps) ** 1.25


def human_time(seconds) -> str:
    r"""``42 s``, ``7 min``, ``3.5 h``, ``12 days``: a duration for messages.

    Parameters
    ----------
    seconds : float

    Returns
    -------
    str

    Raises
    ------
    Nothing.

    Source: this module.

    >>> human_time(30), human_time(420), human_time(12600)
    ('30 s', '7 min', '3.5 h')
    """
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def _gib(b):
    return f"{b / 2 ** 30:.1f} GiB"


def check_cells(cells, *, force=False, concurrent=1, models=2, objects=1, hint="lower --n"):
    r"""Refuse, before anything runs, cells whose estimated time or memory is too large.

    Parameters
    ----------
    cells : iterable of (str, freeprob.sampler.Dimensions)
        A label (``"gpt2-small at n=4096"``) and the dimensions of each distinct cell.
    force : bool
        Skip the check (``--force``); so does :func:`allow_large`.
    concurrent : int or None
        Cells that run at once on this machine (the local workers); ``None`` for a
        remote cluster (no memory check: its machines are not this one).
    models, objects : int
        As :func:`cell_cost`.
    hint : str
        What to do instead, for the message.

    Returns
    -------
    float
        The largest estimated cell time (s), for callers that want a progress bar.

    Raises
    ------
    FreeprobValueError
        One cell above :data:`MAX_CELL_SECONDS`, or the cells running at once above
        :data:`MEMORY_FRACTION` of the memory; the message gives the estimate, the limit,
        ``hint`` and ``--force``.

    Source: this module.
    """
    worst = 0.0
    memory = machine_memory()
    for label, dims in cells:
        seconds, nbytes = cell_cost(dims, models=models, objects=objects)
        worst = max(worst, seconds)
        if force or large_allowed():
            continue
        if seconds > MAX_CELL_SECONDS:
            raise FreeprobValueError(
                f"{label}: one initialisation would take about {human_time(seconds)} (estimated from its "
                f"matrix products and eigvalsh at {FLOP_RATE:.0e} flop/s), and a run shows progress only per "
                f"finished initialisation; the limit is {human_time(MAX_CELL_SECONDS)} per initialisation "
                f"(freeprob.experiments.cost.MAX_CELL_SECONDS): {hint}, or pass --force to run it anyway")
        if concurrent and memory and concurrent * nbytes > MEMORY_FRACTION * memory:
            raise FreeprobValueError(
                f"{label}: one initialisation needs about {_gib(nbytes)} of memory"
                + (f", {concurrent} running at once {_gib(concurrent * nbytes)}" if concurrent > 1 else "")
                + f"; this machine has {_gib(memory)} and the limit is {MEMORY_FRACTION:.0%} of it "
                f"(freeprob.experiments.cost.MEMORY_FRACTION): {hint}"
                + (" or use fewer --workers" if concurrent > 1 else "")
                + ", or pass --force to run it anyway")
    return worst


def check_points(points, laws=1, *, force=False):
    r"""Refuse more than :data:`MAX_POINTS` density points per support interval.

    Parameters
    ----------
    points : int
    laws : int
        Laws to tabulate (for the estimate in the message).
    force : bool
        Skip the check (``--force``); so does :func:`allow_large`.

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        ``points > MAX_POINTS`` without ``force``; the message gives the estimated time.

    Source: this module (:data:`LAW_SECONDS_PER_POINT`, measured).
    """
    if force or large_allowed() or points <= MAX_POINTS:
        return
    per_law = points * LAW_SECONDS_PER_POINT
    raise FreeprobValueError(
        f"--points {points}: tabulating an exact law costs about {LAW_SECONDS_PER_POINT * 1e3:.0f} ms per "
        f"density point, so {points} points need about {human_time(per_law)} per law ({laws} "
        f"law{'s' if laws != 1 else ''} here), shown as one step of the progress bar; the limit is "
        f"{MAX_POINTS} (freeprob.experiments.cost.MAX_POINTS): "
        "lower --points, or pass --force to run it anyway")


def check_cell_count(count, *, force=False, hint="lower --seeds",
                     product="configurations × schemes × sizes × temperatures × initialisations"):
    r"""Refuse a sweep of more than :data:`MAX_CELLS` cells.

    Parameters
    ----------
    count : int
    force : bool
        Skip the check (``--force``); so does :func:`allow_large`.
    hint : str
        What to do instead, for the message.
    product : str
        What the cells are the product of, for the message.

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        ``count > MAX_CELLS`` without ``force``.

    Source: this module.
    """
    if force or large_allowed() or count <= MAX_CELLS:
        return
    raise FreeprobValueError(
        f"the sweep would have {count} cells ({product}); "
        f"planning and storing that many takes minutes before the first one runs; the limit is {MAX_CELLS} "
        f"(freeprob.experiments.cost.MAX_CELLS): {hint}, or pass --force to run it anyway")
