r"""``freeprob verify``: the paper's finite-size check, redone.

Softmax multi-head attention at the widths of public models (:mod:`freeprob.experiments.configs`),
its Gaussian equivalent (GE) driven by the same ``Q, K, V, W_O`` (a coupled comparison),
and our exact limiting laws (:mod:`freeprob.attention`), side by side: relative
Wasserstein-1 and Kolmogorov–Smirnov distances (:mod:`freeprob.experiments.compare`), moment errors
and the top eigenvalue against the predicted edge, as mean and 95% interval over
independent initialisations; by default also against the finite-width law at each cell's
own ``n`` and widths and its predicted top eigenvalue (:mod:`freeprob.attention.finite_width`,
:mod:`freeprob.attention.spikes`; issue 18, docs/theory.md §7).

Source: [HK26]_ §5.1 and Table 2 (softmax–GE mean relative distances
0.24%–2.82% over seven configurations at β = 1, ten initialisations), §D.1 (protocol:
``n ≤ d``, fixed inputs, fan-in Gaussian weights, all ``n`` eigenvalues including the
largest); docs/theory.md §5 (our metric definitions, since the paper's are not stated).

A run is a sweep (:mod:`freeprob.experiments.sweep`) over configurations × sizes ``n`` × temperatures
``β`` × seeds, executed in this process, on a local Dask cluster or on an existing one.
Every cell (one initialisation of one configuration at one ``n`` and ``β``) is written
the moment it finishes to the SQLite store (:mod:`freeprob.experiments.store`; ``--out``): its
spectra and one row per quantity, with the code version and the time; tabulated laws
too.  An interrupted run resumes where it stopped: stored cells are never recomputed.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from freeprob.experiments.compare import TabulatedLaw, law_distances, relative_moment_errors, snap_to_atoms, two_sample_distances
from freeprob.experiments.configs import DEFAULT_CONFIGS, Cell, config_identity, model_config, parse_scheme
from freeprob.core.params import check_unique
from freeprob._checks import check_choice, check_int, check_ints, parse_beta
from freeprob.errors import FreeprobValueError
from freeprob.experiments.stats import finite_mean_interval
from freeprob.sampler.spectra import draw_weights, spectra
from freeprob.experiments.figures import FIGURE_FILES, verify_figures
from freeprob._files import write_output
from freeprob.experiments.reports import ReportDir
from freeprob.experiments.store import (
    ResultStore,
    check_creatable,
    check_out_name,
    code_version,
    refuse_store_targets,
    store_path,
)
from freeprob.experiments.summary import (DEFINITIONS, PAPER_RANGE, format_table,  # noqa: F401 (verify's names)
                                          paired_metrics)
from freeprob.experiments.sweep import Executor, SweepCell, cell_seed, pending_cells, run_cells
from freeprob.experiments.verify_finite_n import combined_distances, combined_paired, finite_n_distances, pooled_distances
from freeprob.experiments.verify_keys import _cell_key, _dims_dict, _models, _seed_identity, _theory_key
from freeprob.experiments.verify_laws import OBJECT_LAWS, adopt_transient, law_dims, theory_job
from freeprob.experiments.verify_top import THEORY_EXTRAS, ConditionalTop, realised_strengths, spread_of_mean

__all__ = ["VerifySettings", "verify", "plan_cells", "check_cost", "summarize", "format_table", "PAPER_RANGE",
           "OBJECT_LAWS", "DEFAULT_MAX_N", "QUICK_MAX_N", "figure_panels"]

#: Largest β accepted (beyond it the unnormalised laws' numerics end in PrecisionError).
MAX_BETA = 5
#: Smallest β accepted (θ1 = e^{β²} − 1 ≈ 10⁻⁴; at β = 10⁻¹⁰ the atom search fails and at
#: 10⁻⁴⁰⁰ the exact arithmetic runs for minutes).
MIN_BETA = Fraction(1, 100)
#: Token cap of the default run (configurations with a larger nominal n are scaled down).
DEFAULT_MAX_N = 1024
#: Token cap and seeds of ``--quick``.
QUICK_MAX_N, QUICK_SEEDS = 256, 2


def _parse_beta(beta):
    """``β`` as an exact Fraction in ``[MIN_BETA, MAX_BETA]`` (:func:`freeprob._checks.parse_beta`)."""
    return parse_beta(beta, None, minimum=MIN_BETA, maximum=MAX_BETA, why=(
        f" (0 < β ≤ {MAX_BETA} in principle; as β → 0 the centred attention vanishes like β², and "
        f"below {MIN_BETA} θ1 = e^(β²) − 1 is too small for the exact laws' numerics; above {MAX_BETA} "
        "too large; the paper's check is at β = 1)"))


@dataclass(frozen=True)
class VerifySettings:
    r"""What ``freeprob verify`` runs.

    Parameters
    ----------
    configs : sequence of str
        Names from :data:`freeprob.experiments.configs.MODEL_CONFIGS` or custom specs
        ``"name:d=..,heads=..,d_head=.."``; default the seven public configurations.
    n : int or sequence of int, optional
        Tokens for every configuration (default: nominal ``n`` capped at ``max_n``); a
        sequence sweeps the sizes (``"512,1024"`` from the command line).
    max_n : int
        Cap on the nominal ``n`` when ``n`` is not given (default 1024).
    widths : {"scaled", "real"}
        How a smaller ``n`` is reached (:meth:`freeprob.experiments.configs.ModelConfig.dimensions`).
    beta : number or sequence of numbers
        Softmax inverse temperature (exact: ``"0.5"`` is 1/2); default 1.  A sequence (or
        a comma-separated string ``"0.5,1"``) sweeps the temperatures.
    seeds : int
        Independent initialisations per configuration (default 10).
    base_seed : int
        Seed of the sweep; initialisation ``i`` of a cell uses
        ``numpy.random.default_rng(cell_seed(base_seed, "config/dims/β/i"))``
        (:func:`freeprob.experiments.sweep.cell_seed`), independent of scheduling.
    schemes : sequence of str, optional
        Run every configuration under these sharing schemes (``independent``, ``gqa:G``,
        ``mqa``, ``shared_keys``, ``tied``) instead of its own.
    objects : sequence of str
        Sampler objects (default ``("out",)``, the centred MHA output of the paper's check).
    refinements : bool
        Also run GE2 and GE with the key-norm term (docs/theory.md §7) and report how much of
        the softmax–GE gap each closes.
    coupled : bool
        True (default): GE uses the same ``Q, K, V, W_O`` as softmax; False: independent
        draws (the distance then includes the sampling spread of both).
    weights : {"gaussian", "rademacher", "orthogonal"}
        Distribution of the value and output weights (:func:`freeprob.sampler.draw_weights`;
        the laws cover i.i.d. weights of the same variance, not Haar-orthogonal ones).
    out : path
        The result store: a ``.sqlite``/``.db`` file, or a directory that holds
        ``results.sqlite`` (:func:`freeprob.experiments.store.store_path`); the reports (table,
        CSV/JSON summaries, figures) go to :attr:`report_dir`.
    figures : bool
    points : int
        Density evaluations per support interval of each tabulated law.
    finite_width : bool
        True (default): also tabulate the finite-width law of every object at the cell's
        own ``n`` and widths (:mod:`freeprob.attention.finite_width`) and report the
        softmax–finite-width distances and the predicted top eigenvalue
        (:func:`freeprob.attention.spikes.predicted_top_eigenvalue`; ``out_full``: its bulk
        only), its standard error for the mean over the seeds and the prediction
        conditional on each cell's draw (:mod:`freeprob.experiments.verify_top`).  One
        more exact law per cell, 1–6 s each (its Cauchy equation has degree 12–15 for
        ``out``).
    finite_n : bool
        False (default): True also tabulates the GE model's expected law at each cell's own
        ``n`` and widths to order ``1/n`` (:mod:`freeprob.attention.finite_n`) and reports
        the GE and softmax distances to it, per seed and pooled over the seeds, beside the
        limit law's, with the paired difference over seeds
        (:mod:`freeprob.experiments.verify_finite_n`).  One more law per cell: 27 s CPU
        for one head at n = 256 at the default ``points``, 9× its limit law.  With
        ``finite_width`` too, also the finite-width law plus the GE model's finite-n shift
        (:mod:`freeprob.attention.finite_n_width`; a third law per cell): softmax's distance
        to it per seed and pooled, paired against the finite-width law's.

    Raises
    ------
    FreeprobValueError
        Any invalid value; the message says what is allowed.  A list (``configs``,
        ``n``, ``beta``, ``schemes``, ``objects``) that names one value twice (``"mqa"`` and
        ``"gqa:1"`` are one scheme, ``0.5`` and ``1/2`` one β, ``"GPT2-small"`` is
        ``"gpt2-small"``, two custom configurations with one name are one configuration,
        and ``"independent"`` and ``"gqa:2"`` are one sharing for a configuration with 2
        heads) is refused with the message of the command line's list flags
        (:func:`freeprob.core.params.check_unique`), before anything is created.
    """

    configs: tuple = DEFAULT_CONFIGS
    n: int | None = None
    max_n: int = DEFAULT_MAX_N
    widths: str = "scaled"
    beta: object = 1
    seeds: int = 10
    base_seed: int = 2026
    schemes: tuple | None = None
    objects: tuple = ("out",)
    refinements: bool = False
    coupled: bool = True
    weights: str = "gaussian"
    out: object = "freeprob-verify"
    figures: bool = True
    points: int = 1000
    finite_width: bool = True
    finite_n: bool = False
    beta_exact: Fraction = field(init=False, repr=False)
    betas_exact: tuple = field(init=False, repr=False)
    sizes: tuple | None = field(init=False, repr=False)

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen)
        if isinstance(self.configs, str):
            set_("configs", (self.configs,))
        set_("configs", check_unique(self.configs, "configs", key=config_identity,
                                     same="the same configuration name (compared ignoring case)"))
        if not self.configs:
            raise FreeprobValueError("configs: give at least one configuration")
        for key, minimum in (("max_n", 2), ("seeds", 1), ("points", 50)):
            set_(key, check_int(getattr(self, key), None, key, minimum=minimum))
        sizes = None
        if self.n is not None:
            sizes = check_ints(self.n, None, "n", minimum=2)        # names a bad item by its place
            check_unique(sizes, "n")
            set_("n", sizes[0] if len(sizes) == 1 else sizes)
        set_("sizes", sizes)
        set_("base_seed", check_int(self.base_seed, None, "base_seed", minimum=0))
        if not all(isinstance(v, bool) for v in (self.coupled, self.refinements, self.finite_width, self.finite_n)):
            raise FreeprobValueError("coupled, refinements, finite_n and finite_width must be True or False")
        check_choice(self.weights, ("gaussian", "rademacher", "orthogonal"), None, "weights")
        if self.refinements and not self.coupled:
            raise FreeprobValueError("refinements compare GE variants on one draw: they need coupled=True")
        if self.widths not in ("scaled", "real"):
            raise FreeprobValueError(f"widths must be 'scaled' or 'real'; got {self.widths!r}")
        objs = (self.objects,) if isinstance(self.objects, str) else tuple(self.objects)
        bad = [o for o in objs if o not in OBJECT_LAWS]
        if bad or not objs:
            raise FreeprobValueError(f"unknown object(s) {bad}; allowed: {', '.join(OBJECT_LAWS)}")
        set_("objects", check_unique(objs, "objects"))
        if self.schemes is not None:
            sch = (self.schemes,) if isinstance(self.schemes, str) else tuple(self.schemes)
            set_("schemes", check_unique(sch, "schemes", key=parse_scheme))
            for name in self.configs:           # schemes drawing one layer of a configuration twice
                try:
                    cfg = model_config(name)
                except FreeprobValueError:      # plan_cells names the bad configuration
                    continue
                check_unique(sch, "schemes", key=lambda s_: cfg.sharing(*parse_scheme(s_)),
                             same=f"the same sharing for the configuration {cfg.name!r} ({cfg.heads} "
                                  f"head{'s' if cfg.heads != 1 else ''})")
        raw = self.beta.split(",") if isinstance(self.beta, str) else self.beta
        raw = tuple(raw) if isinstance(raw, list | tuple) else (raw,)
        if not raw:
            raise FreeprobValueError(f"beta: give at least one temperature; got {self.beta!r}")
        betas = tuple(_parse_beta(b) for b in raw)
        check_unique(raw, "beta", key=_parse_beta)
        set_("betas_exact", betas)
        set_("beta_exact", betas[0])
        if self.out is None or not str(self.out).strip():
            raise FreeprobValueError("out must name the result store (a .sqlite file or a directory)")
        set_("out", Path(self.out))

    @property
    def store_path(self) -> Path:
        """The SQLite file of the run (:func:`freeprob.experiments.store.store_path` of ``out``)."""
        return store_path(self.out)

    @property
    def report_dir(self) -> Path:
        """Where the table, summaries and figures go: ``out`` when it is a directory,
        else the database path without its suffix (``runs/v.sqlite`` → ``runs/v/``)."""
        sp_ = self.store_path
        return self.out if sp_ != self.out else sp_.with_suffix("")


def plan_cells(settings: VerifySettings) -> list[Cell]:
    r"""The (configuration, dimensions) cells of a run, in order.

    Raises
    ------
    FreeprobValueError
        Unknown configuration (known ones listed), ``n > d``, a scheme that does not fit a
        configuration (e.g. ``gqa:5`` with 12 heads, tying with ``d_V ≠ d_K``).
    """
    cells = []
    for name in settings.configs:
        base = model_config(name)
        variants = [base]
        if settings.schemes is not None:
            variants = [base.with_scheme(*parse_scheme(s)) for s in settings.schemes]
        for cfg in variants:
            default = (cfg.scaled_n(settings.max_n) if settings.widths == "scaled" else min(cfg.n, settings.max_n))
            for n in settings.sizes or (default,):
                if settings.widths == "scaled" and settings.sizes is not None and n > cfg.n:
                    raise FreeprobValueError(
                        f"{cfg.name}: n={n} exceeds its nominal n={cfg.n}; scaled widths only scale down "
                        "(use --widths real for n ≤ d at the model's own widths)")
                cells.append(Cell(cfg, cfg.dimensions(n, widths=settings.widths), settings.widths))
    return cells


# ---------------------------------------------------------------------- storage

def _atomic_write(path: Path, text: str):
    if path.is_dir():
        raise FreeprobValueError(f"cannot write {str(path)!r}: a directory of that name is in the way "
                                 "(remove or rename it); finished cells are kept and a rerun resumes")
    # the one file policy (freeprob._files): UTF-8, links followed, devices as they are
    write_output(path, lambda fh: fh.write(text))


def _report_run(settings):
    """What a run's reports show: its settings (but where they go) and the code."""
    d = {k: v for k, v in _settings_dict(settings).items() if k not in ("out", "figures")}
    return hashlib.sha1((json.dumps(d, sort_keys=True) + code_version()).encode()).hexdigest()[:10]


def _sweep_name(settings):
    d = _settings_dict(settings)
    for k in ("out", "figures", "seeds"):
        d.pop(k, None)
    # the code is part of the name: a rerun under other code is a new sweep, never mixed with the old one
    text = json.dumps(d, sort_keys=True) + code_version()
    return "verify-" + hashlib.sha1(text.encode()).hexdigest()[:10], d


# ---------------------------------------------------------------------- one cell

def _sample_job(dims, beta, entropy, objects, refinements, coupled, weights):
    """Worker: eigenvalues of every (model, object) of one initialisation (float64 arrays)
    and the quantities that need no exact law."""
    rng = np.random.default_rng(entropy)
    b = float(Fraction(beta))
    kinds = dict(value_weights=weights, output_weights=weights)
    # GE first after softmax: its noise is then the same draw as in a run without refinements
    base = ("softmax", "ge", "ge2") if refinements else ("softmax", "ge")
    # the softmax weights are drawn here (the same stream as spectra's own draw): their
    # realised key-norm spike strength gives the conditional top prediction (verify_top)
    w = draw_weights(dims, rng=rng, **kinds)
    if not coupled:
        eig = {f"{m}/{o}": v for (m, o), v in spectra(dims, b, rng=rng, models=base[:1], objects=objects,
                                                      weights=w).items()}
        eig.update({f"{m}/{o}": v for (m, o), v in spectra(dims, b, rng=rng, models=base[1:], objects=objects,
                                                           coupled=False, **kinds).items()})
    else:
        eig = {f"{m}/{o}": v for (m, o), v in spectra(dims, b, rng=rng, models=base, objects=objects,
                                                      weights=w).items()}
        if refinements:
            kn = spectra(dims, b, rng=rng, models=("ge",), objects=objects, weights=w, key_norm_term=True)
            eig.update({f"ge+kn/{o}": v for (_, o), v in kn.items()})
    models = _models(refinements)
    q = realised_strengths(w, beta, objects)
    for o in objects:
        sm = eig[f"softmax/{o}"]
        q[f"{o}/top_softmax"] = float(sm[-1])
        for m in models[1:]:
            tag = {"ge": "sm_ge", "ge2": "sm_ge2", "ge+kn": "sm_gekn"}[m]
            dd = two_sample_distances(sm, eig[f"{m}/{o}"])
            q[f"{o}/{tag}_relW1"], q[f"{o}/{tag}_KS"] = dd["relW1"], dd["KS"]
            q[f"{o}/top_{m}"] = float(eig[f"{m}/{o}"][-1])
    return dict(quantities=q, arrays=eig)


def plan_sweep(settings: VerifySettings, cells=None) -> list[SweepCell]:
    r"""The sweep of a run: one object cell per distinct (dimensions, β, object) — the
    tabulated exact law, first — and one cell per (configuration, n, β, seed).

    ``cells`` is :func:`plan_cells` of ``settings`` when already at hand (computed
    otherwise).

    Raises
    ------
    FreeprobValueError
        As :func:`plan_cells`.

    Source: paper §5.1 / §D.1 (the protocol; one initialisation per cell), this project's
    sweep design (:mod:`freeprob.experiments.sweep`).
    """
    out, seen = [], set()
    cells = plan_cells(settings) if cells is None else cells
    kinds = ([(False, False)] + [(True, False)] * settings.finite_width + [(False, True)] * settings.finite_n
             + [(True, True)] * (settings.finite_width and settings.finite_n))
    for fw, fn in kinds:
        for cell in cells:
            for beta in settings.betas_exact:
                for obj in settings.objects:
                    key = _theory_key(cell, beta, obj, settings.points, fw, fn)
                    if key not in seen:
                        seen.add(key)
                        out.append(SweepCell(key=key, params=dict(
                            config=cell.config.name, n=cell.dims.n, beta=str(beta), object=obj,
                            object_kind={(True, False): "finite-width law", (False, True): "finite-n law",
                                         (True, True): "finite-width + finite-n law"}.get((fw, fn), "tabulated law")),
                            fn=theory_job, kwargs=dict(dims=law_dims(cell.dims, obj), beta=str(beta), obj=obj,
                                                       points=settings.points, finite_width=fw, finite_n=fn),
                            kind="object", priority=7 if fw and fn else 9 if fw else 8 if fn else 10))
    for cell in cells:
        for beta in settings.betas_exact:
            for seed in range(settings.seeds):
                out.append(SweepCell(
                    key=_cell_key(cell, settings, beta, seed),
                    params=dict(config=cell.config.name, n=cell.dims.n, beta=str(beta), seed=seed,
                                dims=_dims_dict(cell.dims)),
                    fn=_sample_job,
                    kwargs=dict(dims=cell.dims, beta=str(beta),
                                entropy=cell_seed(settings.base_seed, _seed_identity(cell, beta, seed)),
                                objects=tuple(settings.objects), refinements=settings.refinements,
                                coupled=settings.coupled, weights=settings.weights)))
    return out


# ---------------------------------------------------------------------- the run

def check_cost(settings: VerifySettings, cells=None, *, force=False, workers=None, scheduler=None) -> None:
    r"""Refuse, before anything is computed, a run that would sit without progress for
    long or not fit in memory (:mod:`freeprob.experiments.cost`).

    Parameters
    ----------
    settings : VerifySettings
    cells : list of Cell, optional
        :func:`plan_cells` of ``settings`` (computed if not given).
    force : bool
        Skip the checks (``--force``).
    workers : int, optional
        Local worker processes (cells running at once; default as
        :class:`freeprob.experiments.sweep.Executor`).
    scheduler : str, optional
        A remote cluster: no memory check (its machines are not this one).

    Returns
    -------
    None

    Raises
    ------
    FreeprobValueError
        More than :data:`freeprob.experiments.cost.MAX_CELLS` cells, more than
        :data:`freeprob.experiments.cost.MAX_POINTS` density points, or one cell estimated above
        :data:`freeprob.experiments.cost.MAX_CELL_SECONDS` or the memory; the message gives the estimate
        and says that ``--force`` runs it anyway.

    Source: :mod:`freeprob.experiments.cost` (measured costs).
    """
    from freeprob.experiments import cost

    cells = plan_cells(settings) if cells is None else cells
    total = len(cells) * len(settings.betas_exact) * settings.seeds
    cost.check_cell_count(total, force=force, hint="lower --seeds, or split the sweep over several runs")
    cost.check_points(settings.points, laws=len(cells) * len(settings.betas_exact) * len(settings.objects)
                      * (1 + settings.finite_width + (1 + settings.finite_width) * settings.finite_n), force=force)
    if scheduler is not None:
        concurrent = None
    else:
        concurrent = min(workers if workers is not None else min(os.cpu_count() or 1, 8), max(1, total))
    distinct = {(c.config.name, c.dims): c for c in cells}
    cost.check_cells([(f"{c.config.name} at {c.describe()}", c.dims) for c in distinct.values()], force=force,
                     concurrent=concurrent, models=len(_models(settings.refinements)),
                     objects=len(settings.objects), hint="lower --n or --max-n")


def verify(settings: VerifySettings, *, progress=True, stream="stdout", workers=None, scheduler=None,
           force=False):
    r"""Run (or resume) a verification sweep, store every cell, write the reports.

    Parameters
    ----------
    settings : VerifySettings
    progress : bool
        A tqdm progress bar on stderr (cells done, rate, time left).
    stream : file-like, ``"stdout"`` (default) or None
        Where the text table is printed (None: not printed; it is always written to
        ``report_dir/table.txt`` and into the store).
    workers : int ≥ 1, optional
        Local Dask worker processes (default: the cores, at most 8; ``1``: in this
        process).  See :class:`freeprob.experiments.sweep.Executor`.
    scheduler : str, optional
        Address of an existing Dask scheduler; the same sweep runs there unchanged.
    force : bool
        Run sizes above the cost limits of :mod:`freeprob.experiments.cost`, and overwrite report files
        in :attr:`VerifySettings.report_dir` that freeprob did not write (``--force``).

    Returns
    -------
    dict
        ``rows`` (one per configuration, object, ``n`` and ``β``; metrics as mean and 95%
        interval), ``settings``, ``definitions``, ``paper_range``, ``elapsed`` (s),
        ``computed`` and ``resumed`` cell counts, ``store`` (path), ``executor``.

    Raises
    ------
    FreeprobValueError
        Bad settings (see :class:`VerifySettings`, :func:`plan_cells`), outputs that
        cannot be written, an ``out`` named like a single file (``foo.txt``:
        :func:`freeprob.experiments.store.check_out_name`), or, without ``force``, a run above the cost limits (one cell too
        slow or too large for the memory, too many density points or cells:
        :func:`check_cost`); raised before any sampling.  Also before anything is created:
        report files that exist in the report directory but were not written by freeprob
        (not in its manifest, :mod:`freeprob.experiments.reports`; unless ``force``), and a report
        directory that holds the reports or the store of another result store.
    freeprob.experiments.store.StoreError
        The store at ``out`` is not a freeprob store or was written in another store
        format (never mixed), a report path that is the store, or a store that cannot be
        written or read (disk full, a damaged file).
    freeprob.experiments.sweep.SchedulerError
        Unreachable scheduler, no workers, workers without freeprob or with other freeprob
        code, or a cluster lost during the run (the finished cells are stored).

    Notes
    -----
    Everything that can be checked is checked before anything is created (no empty store
    or directory is left by a refused run).  When the run starts computing, the reports it
    writes again are removed (only those its manifest lists; earlier figures that a
    ``figures=False`` run does not rewrite are kept, or moved aside if they show other results):
    every report file present describes the latest run that finished, and an interrupted
    run leaves none (the store keeps its finished cells; a rerun reuses them and writes the
    reports).  Cells are keyed by the code identity
    (:func:`freeprob.experiments.store.code_version`): after the code changed, a rerun computes
    everything afresh as a new sweep in the same store; the cells of the old code stay
    there under their own sweep and are never mixed in (a note on stderr says so).
    """
    from freeprob.experiments.sweep import check_executor

    t0 = time.perf_counter()
    # refused runs create nothing: validate the executor, the paths and an existing store first
    check_executor(workers, scheduler)
    cells = plan_cells(settings)
    check_cost(settings, cells, force=force, workers=workers, scheduler=scheduler)
    sweep = plan_sweep(settings, cells)
    name, sweep_settings = _sweep_name(settings)
    report = settings.report_dir
    check_out_name(settings.out, who="verify")
    check_creatable(report)
    check_creatable(settings.store_path.parent)
    refuse_store_targets([("report", report / f) for f in (*_REPORT_FILES, *FIGURE_FILES)],
                         settings.store_path, who="verify")
    # report files freeprob did not write, or the reports of another store: refused now
    reports = ReportDir(report, settings.store_path, who="verify", force=force, run=_report_run(settings))
    reports.check(_REPORT_FILES + (FIGURE_FILES if settings.figures else ()))
    idle = False
    if settings.store_path.is_file():
        with ResultStore(settings.store_path, readonly=True) as existing:
            # nothing to compute (a finished run, re-summarised): no workers to start
            idle = not pending_cells(sweep, existing)
    with reports:               # on every exit path: no empty figures/ or report folder left
        with Executor(workers=1 if idle else workers, scheduler=None if idle else scheduler) as ex, \
                ResultStore(settings.store_path) as store:
            reports.open()
            store.begin_sweep(name, "verify", sweep_settings)
            if not idle:
                _note_other_code(store, name, sweep_settings)
            # the previous run's reports go now: every report present describes the latest finished run
            for note in reports.begin(_REPORT_FILES + (FIGURE_FILES if settings.figures else ()),
                                      keep=() if settings.figures else FIGURE_FILES):    # --no-figures
                print(f"note: {note}", file=sys.stderr)
            executor = ex.description
            conditional = ConditionalTop(OBJECT_LAWS, law_dims)     # takes the workers' fw set-ups
            stats = run_cells(sweep, store, name, ex, progress=progress, desc="verify",
                              on_result=lambda cell, res: adopt_transient(conditional, cell, res))
            ex.close()                  # the summary needs no workers
            theory = {}
            for c in sweep:
                if c.kind == "object":
                    data = store.get_object(c.key)
                    theory[c.key] = (data if data is not None
                                     else {"error": stats.failed.get(c.key, "not computed")})
            rows, per_seed = summarize(cells, settings, theory, store, name, conditional)
            failed = {k: v for k, v in stats.failed.items() if not k.startswith("theory-")}
            result = dict(settings=_settings_dict(settings), rows=rows, paper_range=PAPER_RANGE,
                          definitions=DEFINITIONS, computed=stats.by_kind["cell"][0],
                          resumed=stats.by_kind["cell"][1], laws_computed=stats.by_kind["object"][0],
                          failed=failed, elapsed=round(time.perf_counter() - t0, 1), figures=[],
                          store=str(settings.store_path), report=str(report), sweep=name, executor=executor)
            if settings.figures:
                result["figures"] = verify_figures(figure_panels(cells, settings, theory, store),
                                                   settings.objects[0], reports)
            text = format_table(result)
            if stream is not None:     # printed first: a failure to write the files below loses nothing
                print(text, file=sys.stdout if stream == "stdout" else stream)
            store.set_report(name, text)
        _write_outputs(reports, result, per_seed)
        _atomic_write(reports.target("table.txt"), text + "\n")
    return result


#: the report files of a run (besides :data:`freeprob.experiments.figures.FIGURE_FILES`)
_REPORT_FILES = ("table.txt", "summary.csv", "summary.json", "per_seed.csv")


def _note_other_code(store, name, settings):
    """Say on stderr when the store holds sweeps of these settings run by other code:
    their cells are kept but never reused (their keys carry the code identity)."""
    settings = json.loads(json.dumps(settings, default=str))       # as stored (tuples become lists)
    # stores written before the finite-width columns have no ``finite_width`` setting
    new = ("finite_width", "finite_n")         # nor, before issue 29, a ``finite_n`` one
    same = lambda other: {k: v for k, v in other.items() if k not in new} == {  # noqa: E731
        k: v for k, v in settings.items() if k not in new}
    others = [s for s in store.sweeps()
              if s["kind"] == "verify" and same(s["settings"]) and s["name"] != name
              and s["code_version"] != code_version()]
    for s in others:
        print(f"freeprob verify: note: the store also holds sweep {s['name']} of these settings, computed "
              f"by {s['code_version']} ({s['cells']} cells); results of other code are never mixed, so its "
              f"cells are kept under that sweep and not reused: computing afresh with {code_version()}",
              file=sys.stderr)


def _settings_dict(settings):
    d = asdict(settings)
    d["out"] = str(settings.out)
    d["beta"] = ",".join(str(b) for b in settings.betas_exact)
    d["n"] = None if settings.sizes is None else (settings.sizes[0] if len(settings.sizes) == 1
                                                  else list(settings.sizes))
    for k in ("beta_exact", "betas_exact", "sizes"):
        d.pop(k, None)
    return d


def _mean_ci(values):
    r = finite_mean_interval(values)
    return None if r is None else dict(mean=r.mean, lo=r.lo, hi=r.hi, n=r.n)


def summarize(cells, settings, theory, store, sweep, conditional=None):
    r"""Per-seed metrics from the stored cells and their mean and 95% t-interval.

    The quantities that need the exact law (distances and moment errors against it, the
    predicted edge) are computed here from the stored spectra and added to the store.

    Parameters
    ----------
    cells : list of Cell
        :func:`plan_cells` of ``settings``.
    settings : VerifySettings
    theory : dict
        Theory key → tabulated law dict (or ``{"error": text}``).
    store : freeprob.experiments.store.ResultStore
    sweep : str
    conditional : ConditionalTop, optional
        For the conditional top predictions (holding the laws set up by the workers).

    Returns
    -------
    (rows, per_seed)
        ``rows`` one dict per (configuration, object, ``n``, ``β``) with ``metrics`` name →
        ``{mean, lo, hi, n}``; ``per_seed`` a list of flat dicts.
    """
    rows, per_seed = [], []
    conditional = ConditionalTop(OBJECT_LAWS, law_dims) if conditional is None else conditional
    for cell in cells:
        for beta in settings.betas_exact:
            for obj in settings.objects:
                tdata = theory.get(_theory_key(cell, beta, obj, settings.points))
                law = _tabulated(tdata)
                outlier = (tdata or {}).get("outlier")
                fdata = theory.get(_theory_key(cell, beta, obj, settings.points, True))
                fw_law = _tabulated(fdata)
                ndata = theory.get(_theory_key(cell, beta, obj, settings.points, False, True)) if settings.finite_n else None
                fn_law, pooled = _tabulated(ndata), {"sm": [], "ge": []}
                cdata = theory.get(_theory_key(cell, beta, obj, settings.points, True, True)) if settings.finite_n else None
                fwfn_law = _tabulated(cdata)
                recs = []
                for seed in range(settings.seeds):
                    key = _cell_key(cell, settings, beta, seed)
                    info = store.cell_info(key)
                    if info is None:
                        continue
                    stored = store.cell_quantities(key)
                    r = dict(config=cell.config.name, object=obj, n=cell.dims.n, beta=str(beta), seed=seed)
                    r.update({k.split("/", 1)[1]: v for k, v in stored.items() if k.startswith(obj + "/")})
                    if law is not None:
                        # snapped onto the law's atoms at the scale of the whole spectrum, spike included
                        sm, ge = (snap_to_atoms(store.array(key, f"{m}/{obj}"), law.atom_locations)
                                  for m in ("softmax", "ge"))
                        bulk_sm, bulk_ge = (sm[:-1], ge[:-1]) if outlier is not None else (sm, ge)
                        extra = {}
                        for tag, lam in (("sm_th", bulk_sm), ("ge_th", bulk_ge)):
                            dd = law_distances(lam, law)
                            extra[f"{tag}_relW1"], extra[f"{tag}_KS"] = dd["relW1"], dd["KS"]
                        for tag, lam in (("sm", bulk_sm), ("ge", bulk_ge)):
                            err = relative_moment_errors(lam, law.moments, 4)
                            extra[f"m2_err_{tag}"], extra[f"m4_err_{tag}"] = float(err[1]), float(err[3])
                        extra["edge_th"] = law.upper_edge if outlier is None else outlier
                        if fn_law is not None or fwfn_law is not None:      # finite n (issue 29)
                            pooled["sm"].append(store.array(key, f"softmax/{obj}"))
                            pooled["ge"].append(store.array(key, f"ge/{obj}"))
                        if fn_law is not None:
                            extra.update(finite_n_distances(pooled["sm"][-1], pooled["ge"][-1], fn_law, extra, outlier))
                        if fw_law is not None:      # snapped onto the finite-width law's own atoms
                            sm_fw = snap_to_atoms(store.array(key, f"softmax/{obj}"), fw_law.atom_locations)
                            dd = law_distances(sm_fw[:-1] if outlier is not None else sm_fw, fw_law)
                            extra["sm_fw_relW1"], extra["sm_fw_KS"] = dd["relW1"], dd["KS"]
                            if fdata.get("predicted_top") is not None:
                                extra["top_pred_fw"] = fdata["predicted_top"]
                            spread = stored.get(f"{obj}/top_spread_fw")    # the row's own scheme
                            spread = conditional.spread(_dims_dict(cell.dims), beta, obj) if spread is None else spread
                            if spread is not None:
                                extra["top_spread_fw"] = spread
                            theta = stored.get(f"{obj}/theta_sq_draw")
                            if theta is not None and fdata.get("predicted_top") is not None:
                                # conditional on this draw's θ̂²: stored, so computed once per cell
                                done = stored.get(f"{obj}/top_pred_fw_draw")
                                extra["top_pred_fw_draw"] = (
                                    done if done is not None
                                    else conditional(_dims_dict(cell.dims), beta, obj, theta))
                        if fwfn_law is not None:    # finite width + the GE model's finite-n shift
                            extra.update(combined_distances(pooled["sm"][-1], fwfn_law, extra, outlier))
                        if any(stored.get(f"{obj}/{k}") != v for k, v in extra.items()):
                            store.add_quantities(sweep, key, info["params"],
                                                 {f"{obj}/{k}": v for k, v in extra.items()})
                        r.update(extra)
                    recs.append(r)
                per_seed.extend(recs)
                names = sorted({k for r in recs for k in r} - {"config", "object", "seed", "n", "beta"})
                rows.append(dict(config=cell.config.name, label=cell.config.label, object=obj, n=cell.dims.n,
                                 beta=str(beta), scheme=cell.config.scheme_label(), dims=cell.describe(),
                                 source=cell.config.source, note=cell.config.note, seeds=len(recs),
                                 theory_error=(tdata or {}).get("error") if law is None else None,
                                 fw_error=(fdata or {}).get("error") if settings.finite_width and fw_law is None
                                 else None,
                                 metrics={k: _mean_ci([r.get(k) for r in recs]) for k in names}
                                 | ({"top_pred_fw_se": spread_of_mean(recs)} if "top_spread_fw" in names
                                    else {}) | paired_metrics(recs) | combined_paired(recs)
                                 | pooled_distances(pooled, {"th": law, "fn": fn_law, "fw": fw_law, "fwfn": fwfn_law},
                                                    outlier),
                                 fn_error=(ndata or {}).get("error") if settings.finite_n and fn_law is None else None,
                                 fwfn_error=(cdata or {}).get("error") if cdata and fwfn_law is None else None))
    return rows, per_seed


def _tabulated(tdata):
    """The :class:`~freeprob.experiments.compare.TabulatedLaw` of a stored theory entry, or ``None``
    (no entry, or ``{"error": text}``); the ``outlier`` of ``out_full`` and the
    ``predicted_top`` and ``predicted_top_spread`` of a finite-width law are left out."""
    if not tdata or "error" in tdata:
        return None
    return TabulatedLaw.from_dict({k: v for k, v in tdata.items() if k not in THEORY_EXTRAS})


def figure_panels(cells, settings, theory, store):
    r"""The panels of the figures of a run (:func:`freeprob.experiments.figures.verify_figures`): for
    the first object and the first β, one ``(title, [softmax spectra], [GE spectra], law
    or None)`` per cell with stored spectra, read from ``store``.

    Parameters
    ----------
    cells : list of Cell
        :func:`plan_cells` of ``settings``.
    settings : VerifySettings
    theory : dict
        Theory key → tabulated law dict (or ``{"error": text}``).
    store : freeprob.experiments.store.ResultStore

    Returns
    -------
    list of tuple
        Empty when no cell has spectra.
    """
    obj = settings.objects[0]
    beta = settings.betas_exact[0]
    panels = []
    for cell in cells:
        sm, ge = [], []
        for seed in range(settings.seeds):
            key = _cell_key(cell, settings, beta, seed)
            a, b = store.array(key, f"softmax/{obj}"), store.array(key, f"ge/{obj}")
            if a is not None and b is not None:
                sm.append(a)
                ge.append(b)
        if not sm:
            continue
        law = _tabulated(theory.get(_theory_key(cell, beta, obj, settings.points)))
        title = f"{cell.config.label}\n{cell.describe().split(' (')[0]}, β={beta}"
        panels.append((title, sm, ge, law))
    return panels


def _write_outputs(reports, result, per_seed):
    """Write ``summary.json``, ``summary.csv`` and ``per_seed.csv`` through ``reports``
    (a :class:`freeprob.experiments.reports.ReportDir`)."""
    _atomic_write(reports.target("summary.json"), json.dumps(result, indent=1, default=str))
    names = sorted({k for row in result["rows"] for k in row["metrics"]})
    import io
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["config", "object", "scheme", "dims", "seeds"] +
               [f"{k}_{s}" for k in names for s in ("mean", "ci95_lo", "ci95_hi")])
    for row in result["rows"]:
        vals = []
        for k in names:
            m = row["metrics"].get(k)
            vals += ["" if m is None or m[s] is None else f"{m[s]:.6g}" for s in ("mean", "lo", "hi")]
        w.writerow([row["config"], row["object"], row["scheme"], row["dims"], row["seeds"]] + vals)
    _atomic_write(reports.target("summary.csv"), buf.getvalue())
    buf = io.StringIO()
    keys = sorted({k for r in per_seed for k in r})
    w = csv.DictWriter(buf, fieldnames=keys)
    w.writeheader()
    w.writerows(per_seed)
    _atomic_write(reports.target("per_seed.csv"), buf.getvalue())
