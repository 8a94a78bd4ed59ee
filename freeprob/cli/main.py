r"""The ``freeprob`` command line.

``freeprob verify`` (the main job) checks the paper's laws against finite-n softmax
attention at the widths of public models (:mod:`freeprob.experiments.verify`); ``freeprob table``
prints exact (or ``--dps N`` digit) moments, free, boolean, classical and monotone cumulants of a
law built from the standard families and operations.

Examples
--------
``freeprob verify --quick``, ``freeprob verify`` (seven configurations, β = 1, ten
initialisations), ``freeprob verify --configs gpt2-small,falcon-7b --seeds 3 --n 512``,
``freeprob table --law arcsine --order 10``, ``freeprob table --dps 30``,
``freeprob readout head-count --quick`` (the paper's readout comparisons, §5 and appendix D;
``freeprob readout list`` names them).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import sympy as sp

from freeprob.laws import families as fam
from freeprob.laws import operations as ops
from freeprob._interruptible import WorkerDied
from freeprob._signals import interruption, sigterm_as_interrupt
from freeprob.cli.files import DPS_ARG, ORDER_ARG, STDOUT, bounded_int
from freeprob.cli.finite_commands import add_finite_command, run_finite_command
from freeprob.cli.law_commands import (
    LAW_COMMANDS,
    SEQUENCE_FORMATS,
    TABLE_KINDS,
    add_law_commands,
    print_sequences,
    run_law_command,
)
from freeprob.cli.jacobi_commands import JACOBI_COMMANDS, add_jacobi_command, run_jacobi_command
from freeprob.cli.fit_commands import add_fit_command, run_fit_command
from freeprob.cli.sweep_commands import VERIFY_EXAMPLE, add_sweep_command, run_sweep_command
from freeprob.core.params import check_unique
from freeprob.errors import FreeprobValueError, PrecisionError

__all__ = ["main", "PRESET_LAWS", "BROKEN_PIPE_STATUS", "MEASURED_TIMES"]

#: exit status when the reader of standard output goes away (``freeprob sweep show DB | head -1``):
#: 0, quietly, as for a complete run -- the reader took what it wanted
BROKEN_PIPE_STATUS = 0

_h = sp.Rational(1, 2)
_t = sp.Rational(1, 3)

#: name -> (description, constructor)
PRESET_LAWS = {
    "mp-product": ("free_mul(FreePoisson(1/2), FreePoisson(1/3))",
                   lambda: ops.free_mul(fam.FreePoisson(_h), fam.FreePoisson(_t))),
    "fuss-catalan": ("free_mul(FreePoisson(1), FreePoisson(1), FreePoisson(1))",
                     lambda: ops.free_mul(fam.FreePoisson(1), fam.FreePoisson(1), fam.FreePoisson(1))),
    "semicircle": ("Semicircle(mean=0, variance=1)", lambda: fam.Semicircle(0, 1)),
    "free-poisson": ("FreePoisson(rate=1/2, jump=1)", lambda: fam.FreePoisson(_h)),
    "arcsine": ("free_add(Bernoulli(), Bernoulli())",
                lambda: ops.free_add(fam.Bernoulli(), fam.Bernoulli())),
    "semicircle+mp": ("free_add(Semicircle(0, 1), FreePoisson(1/2))",
                      lambda: ops.free_add(fam.Semicircle(0, 1), fam.FreePoisson(_h))),
}


def table(law_name: str, order: int, dps: int | None, out=None, fmt: str = "table") -> None:
    """Print the moments and the free, boolean, classical and monotone cumulants of a preset law (see
    :data:`PRESET_LAWS`) to ``out`` (default ``sys.stdout``): ``freeprob table``, the output
    of ``freeprob moments`` / ``cumulants`` (:func:`freeprob.cli.law_commands.print_sequences`)
    with the five columns, under the preset's description; ``fmt`` is one of
    ``table`` (default), ``csv``, ``json``, ``latex``."""
    desc, make = PRESET_LAWS[law_name]
    print_sequences(make(), desc, TABLE_KINDS, order, dps, fmt, out if out is not None else sys.stdout,
                    who="freeprob table")


#: the run times the help texts quote, each measured, with the page that reports the
#: measurements: tests/test_cli_examples.py checks that every time in a help text is one of
#: these and that its page (and the README, for verify) quotes it, so a new measurement is
#: made here and there together
MEASURED_TIMES = {
    "verify --quick": ("10–20 s on 2 idle cores, up to 2.5 min under load", "docs/guide/verify.md"),
    "finite-width law": ("1–6 s each", "docs/guide/verify.md"),
    "finite-n law": ("27 s CPU for one head at n = 256, 9× its limit law", "docs/guide/finite-n.md"),
    "readout --quick": ("10–70 s each on 2 idle cores", "docs/guide/readout.md"),
    "explore --quick": ("2.5–4.5 min on 2 cores at load 9–15", "docs/guide/explore.md"),
}


def _time(what):
    return MEASURED_TIMES[what][0]


def _max_workers():
    from freeprob.experiments.sweep import max_local_workers
    return max_local_workers()


#: ``--workers``: 1 to max(8, 2 × cores) local processes (freeprob.experiments.sweep.max_local_workers)
_WORKERS_ARG = bounded_int(1, _max_workers, limit="max(8, 2 × cores); use --scheduler for more")


def _list_arg(what, *, item=None, key=None, split=None, scalar=False, same="the same value"):
    r"""The argparse ``type=`` of every list flag (``--configs``, ``--n``, ``--beta``,
    ``--schemes``, ``--objects``; ``explore --ns``, ``--epsilons``): comma-separated items, none
    empty, each parsed by ``item`` (a bad one named by its place: ``argument --ns: item 2 of
    '128,abc': expected an integer ≥ 64; got 'abc'``), and no value twice (:func:`freeprob.core.params.check_unique`, the check of
    :class:`freeprob.experiments.verify.VerifySettings`, so the message is the same from Python).

    ``what`` names the items for the message; ``key`` the normal form compared for
    duplicates and ``same`` what two items with one normal form are; ``split`` the
    tokenizer (default: split at commas); ``scalar``: one item is returned alone, not as
    a 1-tuple."""
    def parse(text):
        tokens = (split or (lambda t: [x.strip() for x in t.split(",")]))(text)
        if not tokens or not all(tokens):
            raise argparse.ArgumentTypeError(f"expected {what}, comma-separated, none empty; got {text!r}")
        values = []
        for i, tok in enumerate(tokens, 1):
            try:
                values.append(item(tok) if item else tok)
            except (argparse.ArgumentTypeError, FreeprobValueError) as exc:    # name the bad item
                where = f"item {i} of {text!r}: " if len(tokens) > 1 else ""
                raise argparse.ArgumentTypeError(f"{where}{exc}") from None
        values = tuple(values)
        try:
            check_unique(values, "", key=key, same=same)
        except FreeprobValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return values[0] if scalar and len(values) == 1 else values

    return parse


def _config_tokens(text):
    """Comma-separated names; a custom ``name:d=..,heads=..`` keeps its own commas."""
    items = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            return [""]             # an empty item: refused by _list_arg, as for every list flag
        starts_new = ":" in tok and "=" not in tok.split(":", 1)[0]     # "name:..." not "scheme=gqa:4"
        if not starts_new and "=" in tok and items and ":" in items[-1]:
            items[-1] += "," + tok
        else:
            items.append(tok)
    return items


def _scheme_key(text):
    from freeprob.experiments.configs import parse_scheme
    try:
        return parse_scheme(text)
    except FreeprobValueError:
        return text                 # VerifySettings names the unknown scheme


def _beta_key(text):
    from freeprob.experiments.verify import _parse_beta
    try:
        return _parse_beta(text)
    except FreeprobValueError:
        return text                 # VerifySettings names the allowed range


def _beta_item(text):
    """One β of ``--beta``, checked as :class:`freeprob.experiments.verify.VerifySettings` does
    (the range and why); kept as typed."""
    from freeprob.experiments.verify import _parse_beta
    _parse_beta(text)
    return text


def _epsilon_item(text):
    """One threshold of ``explore --epsilons``: a number in (0, 1)."""
    try:
        v = float(text)
    except ValueError:
        v = None
    if v is None or not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1) (e.g. 0.01); got {text!r}")
    return v


_size_list = _list_arg("integers ≥ 2", item=bounded_int(2), scalar=True)
_beta_list = _list_arg("temperatures", item=_beta_item, key=_beta_key)
_ns_list = _list_arg("integers ≥ 64", item=bounded_int(64))
_epsilon_list = _list_arg("thresholds in (0, 1)", item=_epsilon_item)
def _config_key(text):
    from freeprob.experiments.configs import config_identity
    return config_identity(text)


_config_list = _list_arg("configuration names", split=_config_tokens, key=_config_key,
                         same="the same configuration name (compared ignoring case)")
_scheme_list = _list_arg("scheme names", key=_scheme_key)
_object_list = _list_arg("object names")


def _add_no_figures(p, help_):
    """``--no-figures``, also spelt ``--no-figure`` (hidden), on ``verify`` and ``readout``."""
    p.add_argument("--no-figures", dest="no_figures", action="store_true", help=help_)
    p.add_argument("--no-figure", dest="no_figures", action="store_true", help=argparse.SUPPRESS)


def _add_verify(sub):
    p = sub.add_parser(
        "verify",
        help="check the attention laws against finite-n softmax attention at public-model widths",
        description="Softmax multi-head attention at public-model widths, its Gaussian equivalent and the "
                    "exact limiting laws, side by side (Hayase & Karakida 2026, Table 2). A sweep over "
                    "configurations × n × β × seeds, run in this process, on local Dask workers or on a Dask "
                    "cluster; every finished cell goes to the SQLite store named by --out (with CSV/JSON, a "
                    "text table and figures); an interrupted run resumes.",
    )
    p.defer(_verify_arguments)


#: the extras the sampled experiments (verify, readout) import (modules: freeprob._extras.EXTRAS)
_EXPERIMENT_EXTRAS = ("sampler", "plot", "sweep")


def _need_experiment_extras(command):
    """Refuse ``freeprob verify``/``readout`` in one line, before anything is imported or
    created, when an optional dependency they use is missing (a core-only install)."""
    import importlib.util

    from freeprob._extras import EXTRAS
    # found, not imported: the run imports what it uses when it uses it (``verify --help`` and
    # a one-process run do not start with Dask's distributed and matplotlib loaded)
    missing = [(module, extra) for extra in _EXPERIMENT_EXTRAS for module in EXTRAS[extra]
               if importlib.util.find_spec(module) is None]
    if missing:
        extras = ",".join(dict.fromkeys(e for _, e in missing))
        print(f"freeprob {command}: needs {', '.join(m for m, _ in missing)}, which "
              f"{'is' if len(missing) == 1 else 'are'} not installed: pip install 'freeprob[{extras}]' "
              "(or 'freeprob[all]')", file=sys.stderr)
        raise SystemExit(2)


def _verify_arguments(p):
    """The epilog and arguments of ``freeprob verify``, which name the configurations, schemes
    and defaults of :mod:`freeprob.experiments`: added when ``verify`` is parsed or its help
    printed (:class:`_Parser`), so that no other command imports the experiments layer."""
    _need_experiment_extras("verify")
    from freeprob.experiments.configs import MODEL_CONFIGS, SCHEME_CHOICES
    from freeprob.experiments.verify import DEFAULT_MAX_N, OBJECT_LAWS, QUICK_MAX_N, QUICK_SEEDS

    p.epilog = ("configurations: " + ", ".join(MODEL_CONFIGS) + " (or custom 'name:d=512,heads=8,d_head=64"
                "[,scheme=gqa:2,context=..]'). Exit status: 0; 1 if an exact law could not be tabulated; "
                f"2 on bad input. example: {VERIFY_EXAMPLE}")
    p.add_argument("--quick", action="store_true",
                   help=f"a smoke run ({_time('verify --quick')}): n ≤ {QUICK_MAX_N}, {QUICK_SEEDS} "
                        "initialisations (unless given), output in ./freeprob-verify-quick")
    p.add_argument("--configs", type=_config_list, default=None,
                   help="comma-separated configuration names (default: all seven)")
    p.add_argument("--n", type=_size_list, default=None,
                   help="tokens for every configuration, or a comma-separated list to sweep sizes "
                        "(default: nominal n capped at --max-n)")
    p.add_argument("--max-n", type=bounded_int(2), default=None,
                   help=f"cap on the nominal n (default {DEFAULT_MAX_N}; --quick {QUICK_MAX_N})")
    p.add_argument("--widths", choices=("scaled", "real"), default="scaled",
                   help="reach a smaller n by scaling all widths (default) or keep the model's widths")
    p.add_argument("--beta", type=_beta_list, default="1",
                   help="inverse temperature β (exact decimal; default 1), or a comma-separated list to "
                        "sweep temperatures (0.5,1,1.5)")
    p.add_argument("--seeds", type=bounded_int(1), default=None,
                   help=f"initialisations per configuration (default 10; --quick {QUICK_SEEDS})")
    p.add_argument("--base-seed", type=bounded_int(0), default=2026, help="seed of the run (default 2026)")
    p.add_argument("--schemes", type=_scheme_list, default=None,
                   help="run every configuration under these schemes instead of its own: "
                        + ", ".join(SCHEME_CHOICES))
    p.add_argument("--objects", type=_object_list, default=("out",),
                   help="objects to compare (default out): " + ", ".join(OBJECT_LAWS))
    p.add_argument("--refinements", action="store_true",
                   help="also run GE2 and GE + key-norm term (docs/theory.md §7) and report the gap each closes")
    p.add_argument("--uncoupled", action="store_true",
                   help="draw GE independently of softmax (default: same Q, K, V, W_O)")
    p.add_argument("--no-finite-width", action="store_true",
                   help="skip the finite-width laws (freeprob.attention.finite_width): no SM–fw and "
                        f"top pred fw columns, one exact law per cell instead of two ({_time('finite-width law')})")
    p.add_argument("--finite-n", action="store_true",
                   help="also tabulate the GE model's law at each cell's n to order 1/n (freeprob.attention.finite_n): "
                        "GE–fn, SM–fn per seed and pooled, paired against the limit law; with finite width also fw + "
                        f"that shift (finite_n_width): SM–(fw+fn), paired against SM–fw ({_time('finite-n law')} each)")
    p.add_argument("--weights", choices=("gaussian", "rademacher", "orthogonal"), default="gaussian",
                   help="value/output weight distribution (default gaussian)")
    p.add_argument("--out", default=None,
                   help="the result store: a .sqlite, .sqlite3 or .db file (reports go to the same path "
                        "without the suffix) or a directory holding results.sqlite and the reports (default "
                        "./freeprob-verify, --quick ./freeprob-verify-quick)")
    p.add_argument("--workers", type=_WORKERS_ARG, default=None,
                   help="local Dask worker processes (default: the cores, at most 8; 1 runs in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the sweep on an existing Dask cluster (tcp://host:port); fails fast if unreachable")
    _add_no_figures(p, "skip the figures (figures of an earlier run stay if they show these settings, else "
                       "are moved aside to figures/NAME.earlier-RUN.png; nothing is removed)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--points", type=bounded_int(50), default=None,
                   help="density points per support interval of each exact law (default 1000; --quick 400; "
                        "above freeprob.experiments.cost.MAX_POINTS needs --force)")
    p.add_argument("--fit", type=_fit_spec, default=None, metavar="FAMILY|algebraic[:DG,DZ]",
                   help="also fit a law to each softmax spectrum (freeprob.fit) and report its distance from the GE law")
    p.add_argument("--force", action="store_true",
                   help="run sizes above the cost limits (an initialisation estimated above 10 min or beyond "
                        "the memory, more than freeprob.experiments.cost.MAX_POINTS points or MAX_CELLS cells), and overwrite "
                        "report files in the report directory that freeprob did not write")


def _fit_spec(text):
    """``--fit``: a family of freeprob.fit or ``algebraic[:DG,DZ]``, checked at parse time."""
    from freeprob.experiments.fit_report import parse_fit_spec
    try:
        parse_fit_spec(text)
    except FreeprobValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("fit: ")) from None
    return text


def _refuse_stdout_out(path, what):
    """``--out -``: the results are a SQLite store and report files, not one stream."""
    if path == STDOUT:
        raise FreeprobValueError(f"--out names {what} (the SQLite result store and the reports); '-' "
                                 "(standard output) is not one: the table is printed anyway, and `freeprob "
                                 "sweep export DB --csv -` prints the stored results")


def verify_command(args, out=None) -> int:
    """Run ``freeprob verify`` from parsed arguments; exit status 0, or 1 if an exact law
    could not be tabulated (its columns are then "n/a" and a note says why)."""
    from freeprob.experiments.verify import DEFAULT_MAX_N, QUICK_MAX_N, QUICK_SEEDS, VerifySettings, verify

    kw = dict(n=args.n, widths=args.widths, beta=args.beta, base_seed=args.base_seed,
              schemes=args.schemes, objects=args.objects, refinements=args.refinements,
              coupled=not args.uncoupled, weights=args.weights, finite_width=not args.no_finite_width,
              finite_n=args.finite_n, figures=not args.no_figures)
    if args.configs is not None:
        kw["configs"] = args.configs
    kw["max_n"] = args.max_n or (QUICK_MAX_N if args.quick else DEFAULT_MAX_N)
    kw["seeds"] = args.seeds or (QUICK_SEEDS if args.quick else 10)
    kw["points"] = args.points or (400 if args.quick else 1000)
    if args.out is not None and not args.out.strip():
        raise FreeprobValueError("--out must name a .sqlite file or a directory; got an empty string")
    _refuse_stdout_out(args.out, "a .sqlite file or a directory")
    kw["out"] = args.out or ("freeprob-verify-quick" if args.quick else "freeprob-verify")
    if args.workers is not None and args.scheduler is not None:
        raise FreeprobValueError("give --workers (local processes) or --scheduler (an existing cluster), not both")
    stream = out if out is not None else sys.stdout
    res = verify(settings := VerifySettings(**kw), progress=not args.no_progress, stream=stream,
                 workers=args.workers, scheduler=args.scheduler, force=args.force)
    if args.fit is not None and res["rows"]:    # freeprob.experiments.fit_report: fitted laws vs the GE law
        from freeprob.experiments.fit_report import format_fit_rows, verify_fit_rows
        say = None if args.no_progress else (lambda text: print(f"freeprob verify --fit: {text}", file=sys.stderr))
        print(format_fit_rows(verify_fit_rows(settings, args.fit, progress=say)), file=stream)
    return 1 if any(r.get("theory_error") for r in res["rows"]) else 0


def _add_explore(sub):
    """``freeprob explore inputs|beta-growth`` (issue 19: the paper's open questions, §6.2)."""
    p = sub.add_parser(
        "explore",
        help="the paper's open questions (§6.2): general inputs; the growth of beta with n",
        description="explore inputs: softmax attention with non-orthonormal inputs (Gaussian, AR(1), "
                    "low-rank tokens) against the orthonormal-input law and the input-Gram law "
                    "(docs/theory.md §10), and GQA vs tying under those inputs; writes inputs.csv. "
                    "explore beta-growth: the frontier beta*(n, eps) within eps of the GE law, fits "
                    "against a*sqrt(log n)+b and c*n^alpha (docs/theory.md §11); writes beta_frontier.csv. "
                    "Cells are stored in --out/results.sqlite as they finish (a rerun resumes).",
        epilog="Exit status: 0; 1 if a cell failed (listed on stderr, its rows left out of the tables; "
               "a rerun computes only the failed cells); 2 on bad input. "
               "example: freeprob explore inputs --quick --out freeprob-explore",
    )
    p.add_argument("what", choices=["inputs", "beta-growth"], help="which question")
    p.add_argument("--quick", action="store_true", help=f"small sizes ({_time('explore --quick')})")
    p.add_argument("--n", type=bounded_int(64), default=None, help="inputs: tokens (default 512, quick 256)")
    p.add_argument("--ns", type=_ns_list, default=None,
                   help="beta-growth: comma-separated n, multiples of 8 ≥ 64 (default 256,512,1024,2048)")
    p.add_argument("--epsilons", type=_epsilon_list, default=None,
                   help="beta-growth: thresholds in (0, 1) (relative W1; default 0.01,0.02,0.05)")
    p.add_argument("--families", default=None,
                   help="beta-growth: width families, comma-separated (default proportional,fixed_head)")
    p.add_argument("--beta", type=float, default=None, help="inputs: inverse temperature (default 0.5)")
    p.add_argument("--seeds", type=bounded_int(1), default=None, help="initialisations per point")
    p.add_argument("--out", default="freeprob-explore", help="output directory (default ./freeprob-explore)")
    p.add_argument("--force", action="store_true",
                   help="beta-growth: run evaluations estimated above the cost limits (freeprob.experiments.cost)")
    _add_no_figures(p, "skip the figures")
    p.add_argument("--workers", type=_WORKERS_ARG, default=None,
                   help="local Dask worker processes (default 1, in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cells on an existing Dask cluster (tcp://host:port)")


def explore_command(args, out=None) -> int:
    """Run ``freeprob explore``: print the table and the output files; exit status 0, or 1 if
    a cell failed (listed on stderr; its rows are left out)."""
    _need_experiment_extras("explore")
    out = sys.stdout if out is None else out
    kw = dict(quick=args.quick, workers=args.workers, scheduler=args.scheduler, figures=not args.no_figures,
              progress=True)
    other = {"inputs": (("--ns", args.ns), ("--epsilons", args.epsilons), ("--families", args.families),
                        ("--force", args.force or None)),
             "beta-growth": (("--n", args.n), ("--beta", args.beta))}[args.what]
    wrong = [flag for flag, value in other if value is not None]
    if wrong:
        raise FreeprobValueError(f"explore {args.what}: {', '.join(wrong)} belong(s) to the other question "
                                 f"(inputs: --n, --beta; beta-growth: --ns, --epsilons, --families, --force)")
    if args.what == "inputs":
        from freeprob.experiments.explore import run_inputs
        res = run_inputs(args.out, n=args.n, beta=0.5 if args.beta is None else args.beta, seeds=args.seeds, **kw)
        if res["rows"]:
            print(",".join(res["rows"][0]), file=out)
        for r in res["rows"]:
            print(",".join(str(r[k]) if not isinstance(r[k], float) else f"{r[k]:.4g}" for k in r), file=out)
        print("(input_minus_ortho_relW1, ci95_lo, ci95_hi, p, verdict: relW1 against the input-Gram law minus "
              "against the orthonormal law, paired over the seeds, 95% t-interval; p_KS, verdict_KS: the same "
              "for KS)", file=out)
        seeds = next(iter(res["preferred"].values()), {}).get("seeds", "?")
        print("preferred scheme (smaller m2/m1^2 of out, from the laws; check: the samples' paired t-test over "
              f"the {seeds} seeds, 95%):", file=out)
        for case, c in res["preferred"].items():
            lo, hi = c["ci95_lo"], c["ci95_hi"]
            check = {True: "agrees", False: "DISAGREES", None: "no verdict"}[c["agree"]]
            print(f"  {case}: {c['preferred']} (law m2/m1^2 GQA {c['law_gqa']:.4g}, tied {c['law_tied']:.4g}); "
                  f"samples: {c['samples']} (m2/m1^2 GQA - tied = {c['gqa_minus_tied']:+.4g}"
                  + ("" if lo is None else f", 95% interval {lo:+.4g} to {hi:+.4g}, p = {c['p']:.2g}")
                  + f"; {check})", file=out)
    else:
        from freeprob.experiments.explore_beta import FAMILIES, run_beta_growth
        fams = FAMILIES if args.families is None else tuple(args.families.split(","))
        res = run_beta_growth(args.out, ns=args.ns, epsilons=args.epsilons or (0.01, 0.02, 0.05),
                              seeds=args.seeds, force=args.force, families=fams, **kw)
        print("family,n,epsilon,beta_star,beta_low,beta_high,beta_sigma", file=out)
        for r in res["rows"]:
            print(",".join(f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]) for k in r), file=out)
        if any(r["beta_low"] == 0 for r in res["rows"]):
            print("note: beta_star nan with [0, beta_min]: even the smallest beta of the grid is farther than "
                  "epsilon from the GE law (at small n the finite-n distance of the spectrum to its limit law "
                  "alone exceeds epsilon)", file=out)
        from freeprob.experiments.explore_beta import describe_fit
        for key, fit in res["fits"].items():
            for line in describe_fit(key, fit):
                print(line, file=out)
        if not res["fits"]:
            print("note: no fit: a fit needs a finite beta_star at 3 or more values of n", file=out)
    print("files: " + ", ".join(res["files"]), file=out)
    for note in res.get("set_aside", ()):           # earlier outputs this run does not rewrite
        print(f"note: explore {args.what}: {note}", file=sys.stderr)
    if res["failed"]:               # their rows are left out of the tables; a rerun retries only them
        print(f"freeprob: explore {args.what}: {len(res['failed'])} cell(s) failed and have no row "
              f"(the others are stored in {args.out}/results.sqlite; a rerun computes only the failed ones):",
              file=sys.stderr)
        for key, msg in res["failed"].items():
            print(f"  {key}: {msg}", file=sys.stderr)
        return 1
    return 0


def _add_readout(sub):
    p = sub.add_parser(
        "readout",
        help="the paper's readout comparisons (§5, appendix D): exact predictions vs softmax training",
        description="Run one of the paper's readout comparisons (or all): the prediction from the exact "
                    "laws next to finite-n softmax features (mean ± 95% interval over initialisations) and "
                    "the paper's figure. Prints the table and writes NAME.txt, NAME.json and NAME.png to "
                    "--out; a finished comparison with the same settings is not recomputed (--force does). "
                    "Every measured initialisation is a sweep cell stored in --out/results.sqlite as it "
                    "finishes (in this process, on --workers local Dask processes or on a --scheduler "
                    "cluster), so an interrupted comparison resumes.",
    )
    p.defer(_readout_arguments)


def _readout_arguments(p):
    """The epilog and arguments of ``freeprob readout`` (they name the comparisons of
    :mod:`freeprob.experiments.comparisons`), added on first use like :func:`_verify_arguments`."""
    _need_experiment_extras("readout")
    from freeprob.experiments.comparisons import COMPARISONS

    p.epilog = ("comparisons: " + "; ".join(f"{k}: {d}" for k, (_, d) in COMPARISONS.items())
                + ". example: freeprob readout list")
    p.add_argument("name", choices=[*COMPARISONS, "all", "list"],
                   help="comparison to run, 'all', or 'list' to name them")
    p.add_argument("--quick", action="store_true", help=f"small sizes ({_time('readout --quick')})")
    p.add_argument("--n", type=bounded_int(2), default=None, help="tokens (default: per comparison)")
    p.add_argument("--seeds", type=bounded_int(2), default=None,
                   help="initialisations (default: per comparison)")
    p.add_argument("--out", default="freeprob-readout",
                   help="output directory: NAME.txt/.json/.png and results.sqlite, the store of every measured "
                        "initialisation (default ./freeprob-readout)")
    _add_no_figures(p, "skip the figures (a figure of an earlier run stays if it shows these settings, else "
                       "is moved aside to NAME.earlier-RUN.png; nothing is removed)")
    p.add_argument("--force", action="store_true",
                   help="recompute the comparison even if a finished result is stored (measured initialisations "
                        "already in results.sqlite are still reused), run sizes above the cost limits "
                        "(an initialisation estimated above 10 min or beyond the memory), and overwrite report "
                        "files in --out that freeprob did not write")
    p.add_argument("--workers", type=_WORKERS_ARG, default=None,
                   help="local Dask worker processes (default 1, in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the sweep on an existing Dask cluster (tcp://host:port); fails fast if unreachable")


def readout_command(args, out=None) -> int:
    """Run ``freeprob readout``: each comparison's table to ``out`` (stdout) and its files to
    ``--out`` as soon as it finishes; stored results with the same settings are reused.  The
    measured initialisations run as sweep cells (this process, ``--workers`` local Dask
    processes or a ``--scheduler`` cluster), each stored in ``--out/results.sqlite`` as it
    finishes, so an interrupted comparison resumes without recomputing them."""
    import contextlib
    import json
    from pathlib import Path

    from freeprob.experiments.comparisons import COMPARISONS, check_comparison, run_comparison
    from freeprob.experiments.cost import allow_large
    from freeprob.experiments.store import (ResultStore, StoreError, check_creatable, check_out_name,
                                            code_version, refuse_store_targets, store_path)
    from freeprob.experiments.reports import ReportDir
    from freeprob.experiments.sweep import Executor, SchedulerError, check_executor, interruption

    out = out if out is not None else sys.stdout
    if args.name == "list":
        for k, (_, d) in COMPARISONS.items():
            print(f"{k:18s} {d}", file=out)
        return 0
    workers, scheduler = getattr(args, "workers", None), getattr(args, "scheduler", None)
    if workers is not None and scheduler is not None:
        raise FreeprobValueError("give --workers (local processes) or --scheduler (an existing cluster), not both")
    workers = workers if workers is not None or scheduler else 1
    check_executor(workers, scheduler)          # refused runs create nothing
    if not args.out.strip():
        raise FreeprobValueError("--out must name a directory (it holds the reports and results.sqlite); "
                                 "got an empty string")
    _refuse_stdout_out(args.out, "a directory")
    outdir = Path(args.out)
    if outdir.exists() and not outdir.is_dir():
        raise FreeprobValueError(f"--out {args.out!r} is a file; it must name a directory")
    check_out_name(outdir, who="readout", database=False)
    check_creatable(outdir)
    names = list(COMPARISONS) if args.name == "all" else [args.name]
    files = {name: [f"{name}.{ext}" for ext in ("txt", "json", "png")] for name in names}
    writes = {name: files[name][:2 if args.no_figures else 3] for name in names}     # what a run writes
    refuse_store_targets([("report", outdir / f) for name in names for f in files[name]], outdir, who="readout")
    reports = ReportDir(outdir, store_path(outdir), who="readout", force=args.force)
    reports.check([])                           # the reports of another store: refused before anything
    settings = dict(quick=args.quick, n=args.n, seeds=args.seeds)

    def reusable(name):
        """A finished result of these settings, computed by this code, with its files (written
        by freeprob: listed in the report directory's manifest)."""
        stored = outdir / f"{name}.json"
        if args.force or not all(reports.owns(f) and (outdir / f).is_file() for f in writes[name]):
            return False
        try:
            data = json.loads(stored.read_text(encoding="utf-8")).get("data", {})
        except (OSError, ValueError, AttributeError):
            return False
        return data.get("settings") == settings and data.get("code_version") == code_version()

    todo = [name for name in names if not reusable(name)]
    # settings a comparison does not allow (n range, divisibility, seeds) and sizes above the cost
    # limits (freeprob.experiments.cost; --force lifts them): refused before anything is created; of several
    # comparisons the others still run
    failed = []
    for name in list(todo):
        try:
            check_comparison(name, quick=args.quick, n=args.n, seeds=args.seeds, workers=workers,
                             scheduler=scheduler, force=args.force)
        except FreeprobValueError as exc:
            if len(names) == 1:
                raise FreeprobValueError(f"readout {name}: {exc}") from None
            print(f"freeprob: error: readout {name}: {exc}; skipped", file=sys.stderr, flush=True)
            failed.append(name)
            todo.remove(name)
    if len(failed) == len(names):
        raise FreeprobValueError(f"readout: all {len(names)} comparisons refused the settings (see above); "
                                 "nothing was run")
    # report files freeprob did not write: refused before anything is computed or created
    reports.check([f for name in todo for f in writes[name]])
    with contextlib.ExitStack() as stack:
        stack.enter_context(reports)                # on every exit path: no empty folder left
        executor = None
        if todo:          # started before anything is created: an unreachable scheduler leaves nothing behind
            executor = stack.enter_context(Executor(workers=workers, scheduler=scheduler))
            print(f"readout: measured cells run in {executor.description}; stored in {store_path(outdir)}",
                  file=sys.stderr, flush=True)
        reports.open()                                # fail before computing, not after
        store = stack.enter_context(ResultStore(store_path(outdir)))      # a bad store fails here
        for name in names:
            if name in failed:
                continue
            if name not in todo:
                stored = outdir / f"{name}.json"
                print((outdir / f"{name}.txt").read_text(encoding="utf-8"), file=out)
                print(f"(stored result {stored}; --force recomputes)\n", file=out)
                continue
            # the previous reports of this comparison that this run writes again go (none stale); an
            # earlier figure under --no-figures stays if it shows these settings, else is moved aside
            for note in reports.begin(writes[name], keep=files[name][len(writes[name]):],
                                      run=_readout_run(name, settings)):
                print(f"note: {note}", file=sys.stderr, flush=True)
            try:
                with allow_large() if args.force else contextlib.nullcontext():     # --force: any size
                    comp = run_comparison(name, quick=args.quick, n=args.n, seeds=args.seeds, store=store,
                                          executor=executor,
                                          progress=lambda msg: print(msg, file=sys.stderr, flush=True))
            except (StoreError, SchedulerError):
                raise
            except KeyboardInterrupt as exc:      # Ctrl-C, or SIGTERM (freeprob.experiments.sweep.Terminated)
                print(f"freeprob: readout {name}: {interruption(exc)[0]}; its finished cells are stored in "
                      f"{store.path} and a rerun resumes", file=sys.stderr, flush=True)
                exc.freeprob_reported = True
                raise
            except FreeprobValueError as exc:
                if len(names) == 1:
                    raise FreeprobValueError(f"readout {name}: {exc}") from None
                print(f"freeprob: error: readout {name}: {exc}; skipped", file=sys.stderr, flush=True)
                failed.append(name)
                continue
            comp.data["settings"] = settings
            comp.data["code_version"] = code_version()        # a result of other code is recomputed
            if args.no_figures:
                comp.plot = None
            paths = comp.write(outdir, reports=reports)
            print(comp.table(), file=out)
            sw = comp.sweep
            print("wrote " + ", ".join(str(p) for p in paths), file=out)
            print(f"cells: {sw['computed']} computed, {sw['resumed']} already stored (sweep {sw['name']} in "
                  f"{sw['store']})\n", file=out, flush=True)
    if failed:
        print(f"freeprob: readout: {len(failed)} of {len(names)} comparisons refused the settings: "
              f"{', '.join(failed)}", file=sys.stderr)
        return 2
    return 0


def _readout_run(name, settings):
    """What the reports of readout comparison ``name`` show: its settings and the code."""
    import hashlib

    from freeprob.experiments.store import code_version
    text = json.dumps(dict(settings, name=name, code=code_version()), sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:10]


class _Parser(argparse.ArgumentParser):
    """The parsers of ``freeprob`` (the subcommands' too: ``add_subparsers`` makes them of
    the parent's class): an :class:`argparse.ArgumentParser` whose arguments may be added on
    first use.  :meth:`defer` registers ``fill(parser)``, run before the parser first parses
    arguments or formats its usage or help; so a command whose options name what the
    experiments layer defines (``verify``, ``readout``) costs nothing until it is chosen, and
    ``freeprob moments ...`` imports neither that layer nor scipy, matplotlib or dask."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fills = []

    def defer(self, fill) -> None:
        """Run ``fill(self)`` before this parser is first used."""
        self._fills.append(fill)

    def _complete(self):
        while self._fills:
            self._fills.pop(0)(self)

    def parse_known_args(self, args=None, namespace=None):
        self._complete()
        return super().parse_known_args(args, namespace)

    def format_usage(self):
        self._complete()
        return super().format_usage()

    def format_help(self):
        self._complete()
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``freeprob``; cheap to build (see :class:`_Parser`)."""
    parser = _Parser(
        prog="freeprob",
        description="Exact free probability: moments, cumulants and transforms of spectral laws; "
                    "verification of the multi-head attention laws against sampled spectra.",
    )
    sub = parser.add_subparsers(dest="command")
    _add_verify(sub)
    _add_readout(sub)
    _add_explore(sub)
    add_sweep_command(sub)
    add_fit_command(sub)
    add_law_commands(sub)
    add_jacobi_command(sub)
    add_finite_command(sub)
    p = sub.add_parser(
        "table",
        help="print moments and free/boolean/classical/monotone cumulants of a law",
        description="Print the moments and the free, boolean, classical and monotone cumulants of a preset law.",
        epilog="example: freeprob table --law arcsine --order 10 --dps 20",
    )
    p.add_argument("--law", default="mp-product", choices=sorted(PRESET_LAWS),
                   help="preset law (default: mp-product = " + PRESET_LAWS["mp-product"][0] + ")")
    p.add_argument("--order", type=ORDER_ARG, default=8, help="highest order (default 8)")
    p.add_argument("--dps", type=DPS_ARG, default=None,
                   help="decimal digits (default: exact rationals/expressions)")
    p.add_argument("--format", choices=SEQUENCE_FORMATS, default="table",
                   help="output format (default table; the formats of freeprob moments)")
    return parser


def main(argv=None) -> int:
    """Entry point of the ``freeprob`` console script; returns the exit status.  SIGTERM
    (``timeout``, SLURM, ``docker stop``) stops every command like Ctrl-C: one line, the
    finished cells kept, the store closed, a cluster shut down; exit status 130 on Ctrl-C,
    143 on SIGTERM (:func:`freeprob._signals.sigterm_as_interrupt`).  The long work of every
    command runs in a worker process (:mod:`freeprob._interruptible`: the law commands'
    computation, the cells of an in-process sweep), so the signal lands within a fraction of
    a second even inside a long compiled call.  Exit status 1 when that worker was killed
    (out of memory)."""
    with sigterm_as_interrupt():
        try:
            return _main(argv)
        except KeyboardInterrupt as exc:   # before a command ran: parsing, importing verify's modules
            word, status = interruption(exc)
            print(f"freeprob: {word}", file=sys.stderr)
            return status


def _main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "verify":
            status = verify_command(args)
        elif args.command == "readout":
            status = readout_command(args)
        elif args.command == "explore":
            status = explore_command(args)
        elif args.command == "sweep":
            status = run_sweep_command(args)
        elif args.command == "fit":
            status = run_fit_command(args)
        elif args.command in LAW_COMMANDS:
            status = run_law_command(args)
        elif args.command in JACOBI_COMMANDS:
            status = run_jacobi_command(args)
        elif args.command == "finite":
            status = run_finite_command(args)
        else:
            table(args.law, args.order, args.dps, fmt=args.format)
            status = 0
        sys.stdout.flush()           # a reader that went away is seen here, not in the flush at exit
        return status
    except KeyboardInterrupt as exc:       # Ctrl-C, or SIGTERM (freeprob.experiments.sweep.Terminated)
        word, status = interruption(exc)
        if not getattr(exc, "freeprob_reported", False):     # readout names its comparison itself
            print(f"freeprob: {word}" + ("; finished cells are kept and a rerun resumes"
                                         if args.command == "verify" else ""), file=sys.stderr)
        return status
    except BrokenPipeError:
        # the reader went away (`freeprob sweep show DB | head -1`): what it wanted was
        # printed, so stop quietly with status 0 (BROKEN_PIPE_STATUS), in every command;
        # stdout goes to devnull, as the Python documentation recommends, so that the
        # final flush at exit does not fail again
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):        # no real descriptor (stdout replaced in process)
            pass
        return BROKEN_PIPE_STATUS
    except OSError as exc:
        kept = ("finished cells are kept and a rerun resumes" if args.command == "verify" else
                "finished comparisons are kept in --out" if args.command == "readout" else "")
        print(f"freeprob: error: cannot write {exc.filename or ''}: {exc.strerror or exc}"
              + (f"; {kept}" if kept else ""), file=sys.stderr)
        return 2
    except (FreeprobValueError, PrecisionError) as exc:
        print(f"freeprob: error: {exc}", file=sys.stderr)
        return 2
    except WorkerDied as exc:              # the worker process of a law command was killed (out of memory)
        print(f"freeprob: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
