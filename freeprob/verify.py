r"""``freeprob verify``: the paper's finite-size check, redone.

Softmax multi-head attention at the widths of public models (:mod:`freeprob.configs`),
its Gaussian equivalent (GE) driven by the same ``Q, K, V, W_O`` (a coupled comparison),
and our exact limiting laws (:mod:`freeprob.attention`), side by side: relative
Wasserstein-1 and Kolmogorov–Smirnov distances (:mod:`freeprob.compare`), moment errors
and the top eigenvalue against the predicted edge, as mean and 95% interval over
independent initialisations.

Source: Hayase & Karakida (2026), §5.1 and Table 2 (softmax–GE mean relative distances
0.24%–2.82% over seven configurations at β = 1, ten initialisations), §D.1 (protocol:
``n ≤ d``, fixed inputs, fan-in Gaussian weights, all ``n`` eigenvalues including the
largest); docs/theory.md §5 (our metric definitions, since the paper's are not stated).

Results are written as they are computed to ``out/`` (one line per finished cell in
``cells.jsonl``, its spectra in ``spectra/``, tabulated laws in ``theory/``) so that an
interrupted run resumes where it stopped: a cell whose spectra file exists is not
recomputed.
"""
from __future__ import annotations

import csv
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from .compare import TabulatedLaw, law_distances, relative_moment_errors, two_sample_distances
from .configs import DEFAULT_CONFIGS, Cell, model_config, parse_scheme
from .errors import FreeprobValueError
from .readout_sampled import mean_interval
from .sampler import OBJECTS, draw_weights, spectra

__all__ = ["VerifySettings", "verify", "plan_cells", "summarize", "format_table", "PAPER_RANGE",
           "OBJECT_LAWS", "DEFAULT_MAX_N", "QUICK_MAX_N"]

#: The paper's reported softmax–GE mean relative distances (Table 2, §5.1), in percent.
PAPER_RANGE = (0.24, 2.82)
#: Largest β accepted (beyond it the unnormalised laws' numerics end in PrecisionError).
MAX_BETA = 5
#: Above this β the finite-size effects of docs/theory.md §7 dominate at n ≤ 2048 (a note says so).
GE_REGIME_BETA = Fraction(3, 2)
#: Token cap of the default run (configurations with a larger nominal n are scaled down).
DEFAULT_MAX_N = 1024
#: Token cap and seeds of ``--quick``.
QUICK_MAX_N, QUICK_SEEDS = 256, 2
#: Sampler object → law constructor in :mod:`freeprob.attention`.
OBJECT_LAWS = {"single": "attention_law", "concat": "concatenated_attention_law", "sum": "head_sum_law",
               "head_out": "head_output_law", "stack": "stacked_output_law", "out": "output_law",
               "out_full": "output_law"}
_FORMAT = 1          # bump when a stored cell would mean something else


def _parse_beta(beta):
    if isinstance(beta, bool):
        raise FreeprobValueError(f"beta must be a number in (0, {MAX_BETA}]; got {beta!r}")
    try:
        b = Fraction(str(beta).strip()) if not isinstance(beta, Fraction) else beta
    except (ValueError, ZeroDivisionError):
        raise FreeprobValueError(f"beta must be a number in (0, {MAX_BETA}] (e.g. 1, 0.5 or 1/2); got {beta!r}") from None
    if not 0 < b <= MAX_BETA:
        raise FreeprobValueError(
            f"beta must satisfy 0 < β ≤ {MAX_BETA}; got {beta!r} (at β = 0 the centred attention vanishes; "
            f"above {MAX_BETA} θ1 = e^(β²) − 1 is too large for the exact laws' numerics; the paper's check is "
            "at β = 1)")
    return b


@dataclass(frozen=True)
class VerifySettings:
    r"""What ``freeprob verify`` runs.

    Parameters
    ----------
    configs : sequence of str
        Names from :data:`freeprob.configs.MODEL_CONFIGS` or custom specs
        ``"name:d=..,heads=..,d_head=.."``; default the seven public configurations.
    n : int, optional
        Tokens for every configuration (default: nominal ``n`` capped at ``max_n``).
    max_n : int
        Cap on the nominal ``n`` when ``n`` is not given (default 1024).
    widths : {"scaled", "real"}
        How a smaller ``n`` is reached (:meth:`freeprob.configs.ModelConfig.dimensions`).
    beta : number
        Softmax inverse temperature (exact: ``"0.5"`` is 1/2); default 1.
    seeds : int
        Independent initialisations per configuration (default 10).
    base_seed : int
        Seed of the run; initialisation ``i`` uses ``numpy.random.default_rng([base_seed, i])``.
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
        Output directory.
    figures : bool
    points : int
        Density evaluations per support interval of each tabulated law.

    Raises
    ------
    FreeprobValueError
        Any invalid value; the message says what is allowed.
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
    beta_exact: Fraction = field(init=False, repr=False)

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen)
        if isinstance(self.configs, str):
            set_("configs", (self.configs,))
        set_("configs", tuple(self.configs))
        if not self.configs:
            raise FreeprobValueError("configs: give at least one configuration")
        for key, minimum in (("max_n", 2), ("seeds", 1), ("points", 50)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
                raise FreeprobValueError(f"{key} must be an integer ≥ {minimum}; got {v!r}")
        if self.n is not None and (isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 2):
            raise FreeprobValueError(f"n must be an integer ≥ 2; got {self.n!r}")
        if isinstance(self.base_seed, bool) or not isinstance(self.base_seed, int) or self.base_seed < 0:
            raise FreeprobValueError(f"base_seed must be an integer ≥ 0; got {self.base_seed!r}")
        if not isinstance(self.coupled, bool) or not isinstance(self.refinements, bool):
            raise FreeprobValueError("coupled and refinements must be True or False")
        if self.weights not in ("gaussian", "rademacher", "orthogonal"):
            raise FreeprobValueError(
                f"weights must be 'gaussian', 'rademacher' or 'orthogonal'; got {self.weights!r}")
        if self.refinements and not self.coupled:
            raise FreeprobValueError("refinements compare GE variants on one draw: they need coupled=True")
        if self.widths not in ("scaled", "real"):
            raise FreeprobValueError(f"widths must be 'scaled' or 'real'; got {self.widths!r}")
        objs = (self.objects,) if isinstance(self.objects, str) else tuple(self.objects)
        bad = [o for o in objs if o not in OBJECT_LAWS]
        if bad or not objs:
            raise FreeprobValueError(f"unknown object(s) {bad}; allowed: {', '.join(OBJECT_LAWS)}")
        set_("objects", objs)
        if self.schemes is not None:
            sch = (self.schemes,) if isinstance(self.schemes, str) else tuple(self.schemes)
            for s in sch:
                parse_scheme(s)
            set_("schemes", sch)
        set_("beta_exact", _parse_beta(self.beta))
        set_("out", Path(self.out))


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
            n = settings.n if settings.n is not None else (
                cfg.scaled_n(settings.max_n) if settings.widths == "scaled" else min(cfg.n, settings.max_n))
            if settings.widths == "scaled" and settings.n is not None and n > cfg.n:
                raise FreeprobValueError(
                    f"{cfg.name}: n={n} exceeds its nominal n={cfg.n}; scaled widths only scale down "
                    "(use --widths real for n ≤ d at the model's own widths)")
            cells.append(Cell(cfg, cfg.dimensions(n, widths=settings.widths), settings.widths))
    return cells


# ---------------------------------------------------------------------- storage

def _check_writable(out: Path):
    if out.exists() and not out.is_dir():
        raise FreeprobValueError(f"the output path {str(out)!r} exists and is not a directory; choose another "
                                 "with --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for sub in ("spectra", "theory", "figures"):
            (out / sub).mkdir(exist_ok=True)
        probe = out / ".freeprob-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise FreeprobValueError(
            f"cannot write to the output directory {str(out)!r} ({exc.strerror or exc}); "
            "choose another with --out") from None


def _atomic_write(path: Path, text: str):
    if path.is_dir():
        raise FreeprobValueError(f"cannot write {str(path)!r}: a directory of that name is in the way "
                                 "(remove or rename it); finished cells are kept and a rerun resumes")
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _dims_dict(dims):
    return dict(n=dims.n, heads=dims.heads, d_k=dims.d_k, d_v=dims.d_v, d_o=dims.d_o, d=dims.d,
                scheme=dims.scheme, kv_groups=dims.kv_groups)


def _models(settings):
    return ("softmax", "ge", "ge2", "ge+kn") if settings.refinements else ("softmax", "ge")


def _cell_key(cell, settings, seed):
    payload = json.dumps(dict(v=_FORMAT, config=cell.config.name, dims=_dims_dict(cell.dims),
                              beta=str(settings.beta_exact), seed=[settings.base_seed, seed],
                              objects=list(settings.objects), models=list(_models(settings)),
                              coupled=settings.coupled, weights=settings.weights),
                         sort_keys=True)
    safe = cell.config.name.replace("/", "_").replace(":", "_")
    return f"{safe}-n{cell.dims.n}-s{seed}-" + hashlib.sha1(payload.encode()).hexdigest()[:10]


def _theory_key(cell, settings, obj):
    payload = json.dumps(dict(v=_FORMAT, dims=_dims_dict(cell.dims) | {"d": None},
                              beta=str(settings.beta_exact), obj=obj, points=settings.points),
                         sort_keys=True)
    return f"{obj}-" + hashlib.sha1(payload.encode()).hexdigest()[:12]


# ---------------------------------------------------------------------- one cell

def _sample_cell(cell, settings, seed):
    """Eigenvalues of every (model, object) of one initialisation; float64 arrays."""
    rng = np.random.default_rng([settings.base_seed, seed])
    beta = float(settings.beta_exact)
    objs = settings.objects
    kinds = dict(value_weights=settings.weights, output_weights=settings.weights)
    # GE first after softmax: its noise is then the same draw as in a run without refinements
    base = ("softmax", "ge", "ge2") if settings.refinements else ("softmax", "ge")
    if not settings.coupled:
        return {f"{m}/{o}": v for (m, o), v in spectra(cell.dims, beta, rng=rng, models=base, objects=objs,
                                                      coupled=False, **kinds).items()}
    w = draw_weights(cell.dims, rng=rng, **kinds)
    res = {f"{m}/{o}": v for (m, o), v in spectra(cell.dims, beta, rng=rng, models=base, objects=objs,
                                                  weights=w).items()}
    if settings.refinements:
        kn = spectra(cell.dims, beta, rng=rng, models=("ge",), objects=objs, weights=w, key_norm_term=True)
        res.update({f"ge+kn/{o}": v for (_, o), v in kn.items()})
    return res


def _ignore_sigint():
    """Theory workers leave Ctrl-C to the main process (which keeps finished cells)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _theory_job(dims, beta, obj, points):
    """Worker: tabulate the law of ``obj`` for ``dims`` (runs in a separate process)."""
    from . import attention
    try:
        arch = attention.Architecture.from_dimensions(
            n=dims["n"], heads=dims["heads"], d_k=dims["d_k"], d_v=dims["d_v"], d_o=dims["d_o"],
            beta=beta, scheme=dims["scheme"], kv_groups=dims["kv_groups"])
        law = getattr(attention, OBJECT_LAWS[obj])(arch)
        data = TabulatedLaw.from_law(law, points=points, label=f"{obj} {dims}").to_dict()
        if obj == "out_full":     # bulk = output law; the top eigenvalue is the common-row spike
            data["outlier"] = float(attention.common_row_spike(arch, dims["n"]))
        return data
    except Exception as exc:    # reported in the table, never silently dropped
        return {"error": f"{type(exc).__name__}: {exc}"}


# ---------------------------------------------------------------------- the run

def verify(settings: VerifySettings, *, progress=True, stream="stdout"):
    r"""Run (or resume) a verification and write its results to ``settings.out``.

    Parameters
    ----------
    settings : VerifySettings
    progress : bool
        Show tqdm progress bars on stderr.
    stream : file-like, ``"stdout"`` (default) or None
        Where the text table is printed (None: not printed; it is always written to
        ``out/table.txt``).

    Returns
    -------
    dict
        ``rows`` (one per configuration and object, metrics as mean and 95% interval),
        ``settings``, ``definitions``, ``paper_range``, ``elapsed`` (s), ``computed`` and
        ``resumed`` cell counts.

    Raises
    ------
    FreeprobValueError
        Bad settings (see :class:`VerifySettings`, :func:`plan_cells`) or an output
        directory that cannot be written; raised before any sampling.
    """
    from threadpoolctl import threadpool_limits
    from tqdm import tqdm

    t0 = time.perf_counter()
    cells = plan_cells(settings)
    out = settings.out
    _check_writable(out)
    # theory: one tabulated law per distinct (dims, object), cached on disk
    theory, pending = {}, {}
    todo_theory = {}
    for cell in cells:
        for obj in settings.objects:
            key = _theory_key(cell, settings, obj)
            path = out / "theory" / f"{key}.json"
            if key in theory or key in todo_theory:
                continue
            if path.exists():
                try:
                    theory[key] = json.loads(path.read_text())
                    continue
                except (OSError, ValueError):
                    pass
            todo_theory[key] = (_dims_dict(cell.dims), str(settings.beta_exact), obj)
    pool = None
    if todo_theory:
        workers = max(1, min(len(todo_theory), os.cpu_count() or 1))
        pool = _start_pool(workers)
        for key, (dims, beta, obj) in todo_theory.items():
            pending[key] = pool.apply_async(_theory_job, (dims, beta, obj, settings.points))

    def collect():
        for key, res in list(pending.items()):
            if res.ready():
                data = res.get()
                theory[key] = data
                if "error" not in data:
                    _atomic_write(out / "theory" / f"{key}.json", json.dumps(data))
                del pending[key]

    jobs = [(cell, seed) for cell in cells for seed in range(settings.seeds)]
    log = out / "cells.jsonl"
    computed = resumed = 0
    try:
        with tqdm(total=len(jobs), desc="sampling", unit="cell", file=sys.stderr, disable=not progress,
                  dynamic_ncols=True) as bar:
            for cell, seed in jobs:
                key = _cell_key(cell, settings, seed)
                path = out / "spectra" / f"{key}.npz"
                bar.set_postfix_str(f"{cell.config.name} n={cell.dims.n} seed {seed}")
                if path.exists():
                    resumed += 1
                    bar.update()
                    continue
                collect()
                t = time.perf_counter()
                # one BLAS thread while theory workers run (multi-threaded BLAS spin-waits
                # when the cores are oversubscribed)
                with threadpool_limits(limits=1 if pending else None):
                    eig = _sample_cell(cell, settings, seed)
                tmp = path.with_name(path.stem + ".tmp.npz")
                np.savez(tmp, **eig)
                first = settings.objects[0]
                rec = dict(key=key, config=cell.config.name, dims=_dims_dict(cell.dims),
                           beta=str(settings.beta_exact), seed=seed, seconds=round(time.perf_counter() - t, 3),
                           softmax_vs_ge=two_sample_distances(eig[f"softmax/{first}"], eig[f"ge/{first}"]))
                # the log line first, then the spectra file that marks the cell done: a crash in
                # between recomputes the cell (same seed, same values) and repeats its log line
                with open(log, "a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
                computed += 1
                bar.update()
        if pending:
            with tqdm(total=len(pending), desc="exact laws", unit="law", file=sys.stderr,
                      disable=not progress) as bar:
                while pending:
                    before = len(pending)
                    collect()
                    bar.update(before - len(pending))
                    if pending:
                        time.sleep(0.05)
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if pool is not None:
            pool.terminate()        # no-op after a normal close/join; kills workers on Ctrl-C
    rows, per_seed = summarize(cells, settings, theory)
    result = dict(settings=_settings_dict(settings), rows=rows, paper_range=PAPER_RANGE,
                  definitions=DEFINITIONS, computed=computed, resumed=resumed,
                  elapsed=round(time.perf_counter() - t0, 1), figures=[])
    if settings.figures:
        from .figures import verify_figures
        result["figures"] = verify_figures(cells, settings, theory, out)
    text = format_table(result)
    if stream is not None:     # printed first: a failure to write the files below loses nothing
        print(text, file=sys.stdout if stream == "stdout" else stream)
    _write_outputs(out, result, per_seed)
    _atomic_write(out / "table.txt", text + "\n")
    return result


def _start_pool(workers):
    """A spawn-context process pool whose workers ignore SIGINT from their first instruction
    (the disposition is inherited through exec), so that Ctrl-C reaches only the main
    process, which then terminates them."""
    import signal
    if multiprocessing.parent_process() is not None and multiprocessing.current_process().name != "MainProcess":
        raise FreeprobValueError(
            "verify() was called inside a worker process: a script that calls verify() must protect the "
            "call with `if __name__ == \"__main__\":` (the spawned workers re-import the script)")
    ctx = multiprocessing.get_context("spawn")
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:          # not the main thread: leave signals alone
        old = None
    try:
        pool = ctx.Pool(workers, initializer=_ignore_sigint)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
    # workers that die at start-up would be restarted forever: wait for a first answer,
    # failing fast when a worker exits with an error (the pool's process list is private
    # API, read defensively)
    probe = pool.apply_async(os.getpid)
    t0 = time.monotonic()
    first = {p.pid for p in getattr(pool, "_pool", [])}
    while True:
        try:
            probe.get(timeout=0.5)
            return pool
        except multiprocessing.TimeoutError:
            procs = list(getattr(pool, "_pool", []))
            replaced = {p.pid for p in procs} - first          # a worker died and was restarted
            if replaced or any(p.exitcode not in (None, 0) for p in procs) or \
                    time.monotonic() - t0 > WORKER_START_TIMEOUT:
                break
    pool.terminate()
    raise FreeprobValueError(
        f"verify: the worker processes failed to start within {WORKER_START_TIMEOUT} s or died; if verify() is "
        "called from a script, protect the call with `if __name__ == \"__main__\":` (the spawned "
        "workers re-import the script)")


#: seconds for the spawned theory workers to answer a first trivial task
WORKER_START_TIMEOUT = 180


DEFINITIONS = (
    "relW1 = W1/mean of the reference over all n eigenvalues (top ones included); KS = sup|F_a − F_b|; "
    "vs theory: ∫|F_emp − F_law|dx / m1 and sup|F_emp − F_law| with the exact law's cdf (docs/theory.md §5). "
    "The paper does not state its distance; these are ours. m_k err = (m̂_k − m_k)/m_k vs the exact "
    "moments; edge = top of the exact law's support (out_full: the common-row spike n γ_O + m1(1 + 1/γ_O + "
    "1/γ_V), and its bulk without the top eigenvalue is compared with the output law).")


def _settings_dict(settings):
    d = asdict(settings)
    d["out"] = str(settings.out)
    d["beta"] = str(settings.beta_exact)
    d.pop("beta_exact", None)
    return d


def _mean_ci(values):
    v = [x for x in values if x is not None and math.isfinite(x)]
    if not v:
        return None
    r = mean_interval(v)
    return dict(mean=r.mean, lo=r.lo, hi=r.hi, n=r.n)


def summarize(cells, settings, theory):
    r"""Per-seed metrics from the stored spectra and their mean and 95% t-interval.

    Returns ``(rows, per_seed)``: ``rows`` one dict per (configuration, object) with
    ``metrics`` name → ``{mean, lo, hi, n}``; ``per_seed`` a list of flat dicts.
    """
    rows, per_seed = [], []
    out = settings.out
    models = _models(settings)
    for cell in cells:
        for obj in settings.objects:
            tkey = _theory_key(cell, settings, obj)
            tdata = theory.get(tkey)
            law = (TabulatedLaw.from_dict({k: v for k, v in tdata.items() if k != "outlier"})
                   if tdata and "error" not in tdata else None)
            outlier = (tdata or {}).get("outlier")
            recs = []
            for seed in range(settings.seeds):
                path = out / "spectra" / f"{_cell_key(cell, settings, seed)}.npz"
                if not path.exists():
                    continue
                with np.load(path) as z:
                    eig = {m: z[f"{m}/{obj}"] for m in models}
                sm, ge = eig["softmax"], eig["ge"]
                r = dict(config=cell.config.name, object=obj, seed=seed)
                for m in models[1:]:
                    tag = {"ge": "sm_ge", "ge2": "sm_ge2", "ge+kn": "sm_gekn"}[m]
                    dd = two_sample_distances(sm, eig[m])
                    r[f"{tag}_relW1"], r[f"{tag}_KS"] = dd["relW1"], dd["KS"]
                    r[f"top_{m}"] = float(eig[m][-1])
                r["top_softmax"] = float(sm[-1])
                if law is not None:
                    bulk_sm, bulk_ge = (sm[:-1], ge[:-1]) if outlier is not None else (sm, ge)
                    for tag, lam in (("sm_th", bulk_sm), ("ge_th", bulk_ge)):
                        dd = law_distances(lam, law)
                        r[f"{tag}_relW1"], r[f"{tag}_KS"] = dd["relW1"], dd["KS"]
                    for tag, lam in (("sm", bulk_sm), ("ge", bulk_ge)):
                        err = relative_moment_errors(lam, law.moments, 4)
                        r[f"m2_err_{tag}"], r[f"m4_err_{tag}"] = float(err[1]), float(err[3])
                    r["edge_th"] = law.upper_edge if outlier is None else outlier
                recs.append(r)
            per_seed.extend(recs)
            names = sorted({k for r in recs for k in r} - {"config", "object", "seed"})
            rows.append(dict(config=cell.config.name, label=cell.config.label, object=obj,
                             scheme=cell.config.scheme_label(), dims=cell.describe(), source=cell.config.source,
                             note=cell.config.note, seeds=len(recs),
                             theory_error=(tdata or {}).get("error") if law is None else None,
                             metrics={k: _mean_ci([r.get(k) for r in recs]) for k in names}))
    return rows, per_seed


def _write_outputs(out, result, per_seed):
    _atomic_write(out / "summary.json", json.dumps(result, indent=1, default=str))
    names = sorted({k for row in result["rows"] for k in row["metrics"]})
    lines = []
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
    _atomic_write(out / "summary.csv", buf.getvalue())
    buf = io.StringIO()
    keys = sorted({k for r in per_seed for k in r})
    w = csv.DictWriter(buf, fieldnames=keys)
    w.writeheader()
    w.writerows(per_seed)
    _atomic_write(out / "per_seed.csv", buf.getvalue())
    del lines


def _pct(m):
    if m is None:
        return "n/a"
    s = f"{100 * m['mean']:.2f}"
    if m["lo"] is not None:
        s += f"±{100 * (m['hi'] - m['mean']):.2f}"
    return s


def _num(m):
    if m is None:
        return "n/a"
    v = m["mean"]
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.4g}"


def _table(header, body):
    widths = [max(len(str(r[i])) for r in body + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in body])


def format_table(result) -> str:
    r"""The text report of a run: settings, distance table, moments/top-eigenvalue table,
    our range of softmax–GE relative W1 next to the paper's, definitions, notes."""
    st, rows = result["settings"], result["rows"]
    lines = [f"freeprob verify: beta={st['beta']}, {st['seeds']} initialisation{'s' if st['seeds'] != 1 else ''} "
             "per configuration "
             f"(mean ± 95% t-interval half-width, in %), objects {', '.join(st['objects'])}; "
             + ("softmax and GE coupled (same Q, K, V, W_O)" if st["coupled"] else "softmax and GE drawn independently")
             + ("" if st["weights"] == "gaussian" else f"; {st['weights']} value/output weights")]
    header = ["config", "dims", "SM–GE relW1", "SM–GE KS", "SM–th relW1", "SM–th KS", "GE–th relW1", "GE–th KS"]
    refine = any("sm_ge2_relW1" in r["metrics"] for r in rows)
    if refine:
        header += ["SM–GE2 relW1", "gap closed", "SM–GE+kn relW1", "gap closed", "top eig GE+kn"]
    body = []
    for r in rows:
        m = r["metrics"]
        name = r["config"] + ("" if len(st["objects"]) == 1 else f" [{r['object']}]")
        line = [name, r["dims"]] + [_pct(m.get(k)) for k in ("sm_ge_relW1", "sm_ge_KS", "sm_th_relW1",
                                                               "sm_th_KS", "ge_th_relW1", "ge_th_KS")]
        if refine:
            base = (m.get("sm_ge_relW1") or {}).get("mean")

            def closed(key):
                v = (m.get(key) or {}).get("mean")
                return "n/a" if not base or v is None else f"{100 * (1 - v / base):.0f}%"
            line += [_pct(m.get("sm_ge2_relW1")), closed("sm_ge2_relW1"), _pct(m.get("sm_gekn_relW1")),
                     closed("sm_gekn_relW1"), _num(m.get("top_ge+kn"))]
        body.append(line)
    lines += ["", _table(header, body), ""]
    if refine:
        lines += ["gap closed = 1 − relW1(softmax, GE variant)/relW1(softmax, GE): GE2 keeps the second Hermite "
                  "chaos, GE+kn adds the rank-one key-norm term (docs/theory.md §7)", ""]
    header2 = ["config", "scheme", "m2 err SM", "m2 err GE", "m4 err SM", "m4 err GE", "top eig SM", "top eig GE",
               "edge (theory)"]
    body2 = []
    for r in rows:
        m = r["metrics"]
        name = r["config"] + ("" if len(st["objects"]) == 1 else f" [{r['object']}]")
        body2.append([name, r["scheme"]] + [_pct(m.get(k)) for k in ("m2_err_sm", "m2_err_ge", "m4_err_sm",
                                                                      "m4_err_ge")]
                     + [_num(m.get(k)) for k in ("top_softmax", "top_ge", "edge_th")])
    lines += [_table(header2, body2), ""]
    first = [r for r in rows if r["object"] == st["objects"][0]]
    ours = [r["metrics"]["sm_ge_relW1"]["mean"] * 100 for r in first if r["metrics"].get("sm_ge_relW1")]
    ours_ks = [r["metrics"]["sm_ge_KS"]["mean"] * 100 for r in first if r["metrics"].get("sm_ge_KS")]
    if ours:
        k = len(ours)
        rng_ = lambda v: f"{min(v):.2f}%" if k == 1 else f"{min(v):.2f}%–{max(v):.2f}%"  # noqa: E731
        lines.append(f"softmax–GE mean relative distance ({st['objects'][0]}), ours: relW1 {rng_(ours)}, "
                     f"KS {rng_(ours_ks)} over {k} configuration{'s' if k != 1 else ''}; paper (Table 2, "
                     f"seven configurations): {PAPER_RANGE[0]:.2f}%–{PAPER_RANGE[1]:.2f}%")
    lines.append("definitions: " + result["definitions"])
    notes = []
    if Fraction(st["beta"]) > GE_REGIME_BETA:
        notes.append(f"β = {st['beta']} > {GE_REGIME_BETA}: at these n the finite-size effects of "
                     "docs/theory.md §7 (low-rank chaos, key-norm outlier) dominate the softmax–GE distance")
    if st["weights"] == "orthogonal":
        notes.append("Haar-orthogonal value/output weights are not covered by the laws (they hold for i.i.d. "
                     "weights of the same variance): the theory columns are expected to differ")
    for r in rows:
        if r.get("theory_error"):
            notes.append(f"no exact law for {r['config']} [{r['object']}]: {r['theory_error']}")
        if r["seeds"] < st["seeds"]:
            notes.append(f"{r['config']}: only {r['seeds']} of {st['seeds']} initialisations stored")
        if r.get("note"):
            notes.append(f"{r['config']}: {r['note']}")
        if "rounded" in r["dims"]:
            notes.append(f"{r['config']}: widths rounded to integers, so its width ratios (and law) are not "
                         "those of the nominal cell; the theory columns use the rounded widths")
    lines += [f"note: {x}" for x in dict.fromkeys(notes)]
    figs = "".join(f", {f}" for f in result.get("figures", []))
    lines.append(f"results: {st['out']}/summary.csv, summary.json, per_seed.csv, table.txt{figs} "
                 f"({result['computed']} cell{'s' if result['computed'] != 1 else ''} computed, "
                 f"{result['resumed']} reused; {result['elapsed']} s)")
    return "\n".join(lines)
