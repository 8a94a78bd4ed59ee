r"""``freeprob sweep show`` and ``freeprob sweep export``: read a sweep's result store.

A sweep (``freeprob verify``, a readout comparison) keeps its results in a SQLite file,
``results.sqlite`` in its ``--out`` directory (:mod:`freeprob.experiments.store`).  These commands
open it read-only, so they can run while the sweep is still writing:

* ``freeprob sweep show DB`` prints, per sweep, a header (name, kind, code version,
  creation time, cells done, settings), the stored report and one row per
  (configuration, n, β, quantity) with the mean over seeds and its 95% Student-t
  interval (:func:`freeprob.experiments.stats.mean_interval`); ``--per-seed`` prints the
  stored rows instead, ``--format csv|json`` machine-readable versions of the same;
* ``freeprob sweep export DB --csv FILE --parquet FILE`` writes the ``results`` table
  (:data:`freeprob.experiments.store.RESULT_COLUMNS`, one row per cell and quantity).

``DB`` is the database file or the ``--out`` directory of a run
(:func:`freeprob.experiments.store.store_path`).

Source: this project's design (docs/guide/sweeps.md).
"""
from __future__ import annotations

import csv
import json
import math
import sys
from fractions import Fraction

from freeprob._text import text_table
from freeprob.cli.files import STDOUT, check_outputs, status_stream, write_output
from freeprob.errors import FreeprobValueError

__all__ = ["AGGREGATE_COLUMNS", "PARQUET_TYPES", "VERIFY_EXAMPLE", "add_sweep_command", "aggregate_rows",
           "run_sweep_command"]

#: columns of the aggregated table of ``freeprob sweep show`` (csv/json keys), in order:
#: ``seeds`` counts the values averaged, ``null`` the NULL values skipped; ``half`` is the
#: half-width of the 95% interval ``[lo, hi]`` (empty with fewer than two values)
AGGREGATE_COLUMNS = ("sweep", "config", "n", "beta", "quantity", "seeds", "null", "mean", "half", "lo", "hi")

#: Arrow type of each exported column (``n``, ``seed``: int64; ``value``: float64;
#: the others: string; all nullable).  Built on first use (module ``__getattr__``): the
#: columns come from :mod:`freeprob.experiments.store`, which ``freeprob`` imports only for
#: the commands that read a store.
PARQUET_TYPES: dict


def _parquet_types():
    from freeprob.experiments.store import RESULT_COLUMNS

    return {c: ("int64" if c in ("n", "seed") else "float64" if c == "value" else "string")
            for c in RESULT_COLUMNS}


def __getattr__(name):
    if name == "PARQUET_TYPES":
        return _parquet_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the example of ``freeprob verify --help``: the sweep examples start with it, so that each
#: runs as written in a fresh directory (tests/test_cli_examples.py runs every example)
VERIFY_EXAMPLE = "freeprob verify --quick --configs gpt2-small --no-figures --out freeprob-verify-example"
_EXAMPLE_DB = "freeprob-verify-example"        # the --out of VERIFY_EXAMPLE
_EXAMPLES = {
    "sweep": f"{VERIFY_EXAMPLE} && freeprob sweep show {_EXAMPLE_DB}",
    "show": f"{VERIFY_EXAMPLE} && freeprob sweep show {_EXAMPLE_DB} --format csv",
    "export": f"{VERIFY_EXAMPLE} && freeprob sweep export {_EXAMPLE_DB} --csv results.csv --parquet "
              "results.parquet",
}
_DB_HELP = ("the result store: a .sqlite/.sqlite3/.db file or the --out directory of a run (its "
            "results.sqlite)")


def add_sweep_command(sub) -> None:
    r"""Add ``sweep`` (with ``show`` and ``export``) to an argparse subparsers object.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        From ``parser.add_subparsers(dest="command")`` (:func:`freeprob.cli.build_parser`).

    Returns
    -------
    None

    Raises
    ------
    Nothing.

    Source: this module.
    """
    p = sub.add_parser(
        "sweep",
        help="show or export the results a sweep stored (results.sqlite)",
        description="Read the result store of a sweep (freeprob verify, readout comparisons): 'show' prints "
                    "means and 95% intervals over seeds (or the rows per seed), 'export' writes the results "
                    "table to CSV or Parquet. The store is opened read-only, so this works while the sweep "
                    "is running.",
        epilog=f"example: {_EXAMPLES['sweep']}",
    )
    ssub = p.add_subparsers(dest="sweep_command", metavar="{show,export}")

    s = ssub.add_parser(
        "show",
        help="print each sweep's header, report and mean ± 95%% interval per configuration and quantity",
        description="Print, per sweep: a header (name, kind, code version, created, cells done, settings), "
                    "the stored report, and one row per (config, n, beta, quantity): the number of seeds "
                    "averaged, the NULL values skipped, the mean and its 95% Student-t interval over seeds. "
                    "Exit status: 0; 2 if the store cannot be read or the sweep is unknown.",
        epilog=f"example: {_EXAMPLES['show']}",
    )
    s.add_argument("db", metavar="DB", help=_DB_HELP)
    s.add_argument("--sweep", metavar="NAME", default=None, help="only this sweep (default: all)")
    s.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="table (default), csv or json")
    s.add_argument("--per-seed", action="store_true", help="the stored rows, one per cell and quantity")

    e = ssub.add_parser(
        "export",
        help="write the results table to CSV and/or Parquet",
        epilog=f"example: {_EXAMPLES['export']}",
    )
    _on_first_use(e, _export_description)
    e.add_argument("db", metavar="DB", help=_DB_HELP)
    e.add_argument("--csv", metavar="FILE", default=None, help="write CSV here ('-': standard output)")
    e.add_argument("--parquet", metavar="FILE", default=None,
                   help="write Parquet here ('-': standard output)")
    e.add_argument("--sweep", metavar="NAME", default=None, help="only this sweep (default: all)")
    e.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(_sweep_parser=p)


def _export_description(parser):
    """The description of ``sweep export``, which names the stored columns."""
    from freeprob.experiments.store import RESULT_COLUMNS

    parser.description = (
        "Write the results table (" + ", ".join(RESULT_COLUMNS) + "; one row per cell and quantity, NULL "
        "for a value that was not finite) to CSV and/or Parquet (typed columns; needs pyarrow); FILE '-' is "
        "standard output. An existing file is kept unless --force. Exit status: 0; 2 on bad input.")


def _on_first_use(parser, fill):
    """``fill(parser)`` when the parser first parses or formats its help (the deferral of
    ``freeprob.cli.main``'s parsers: building the parser of every command imports no
    experiments module), or now for a plain :class:`argparse.ArgumentParser`."""
    defer = getattr(parser, "defer", None)
    if defer is None:
        fill(parser)
    else:
        defer(fill)


def run_sweep_command(args, out=None) -> int:
    r"""Run ``freeprob sweep show`` or ``freeprob sweep export`` from parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        From :func:`freeprob.cli.build_parser` with ``args.command == "sweep"``.
    out : file, optional
        Where ``show`` prints and ``export`` reports what it wrote (default ``sys.stdout``).

    Returns
    -------
    int
        The exit status: 0; 2 when no subcommand was given (the help is printed).

    Raises
    ------
    StoreError
        No store at ``args.db``, not a freeprob store, another store format, an unreadable
        or damaged store (a row that fails its checksum), an unknown ``--sweep``, an export
        file that is the store itself (or its ``-wal``/``-shm`` file).
    FreeprobValueError
        ``export`` without ``--csv``/``--parquet``, an existing export file without
        ``--force``, both on standard output (``-``), or Parquet without pyarrow.
    OSError
        An export file cannot be written.

    Source: this module.
    """
    from freeprob.experiments.store import ResultStore, refuse_store_targets

    out = out if out is not None else sys.stdout
    if args.sweep_command is None:
        args._sweep_parser.print_help(out)
        return 2
    if args.sweep_command == "export":
        if args.csv is None and args.parquet is None:
            raise FreeprobValueError("sweep export: give --csv FILE and/or --parquet FILE ('-' for standard "
                                     "output)")
        # refuse before reading anything: existing files without --force, two outputs on '-' or one file
        given = (("--csv", args.csv), ("--parquet", args.parquet))
        # never the store itself (or its -wal/-shm file): --force would replace the data being read
        refuse_store_targets(given, args.db, who="sweep export")
        targets = [(flag[2:], path)
                   for flag, path in check_outputs(given, force=args.force, who="sweep export")]
    # SQLite errors (a damaged file, a table missing) arrive as StoreError with the path and reason
    with ResultStore(args.db, readonly=True) as store:
        rows = store.rows(args.sweep)
        sweeps = _select(store, args.sweep, rows)
    if args.sweep_command == "show":
        _show(sweeps, rows, fmt=args.format, per_seed=args.per_seed, out=out)
        return 0
    report = status_stream([path for _, path in targets]) if out is sys.stdout else out
    for fmt, target in targets:
        (_write_csv if fmt == "csv" else _write_parquet)(rows, target)
        where = "standard output" if target == STDOUT else target
        print(f"wrote {len(rows)} rows to {where}", file=report)
    return 0


def aggregate_rows(rows, level=0.95) -> list[dict]:
    r"""Mean and Student-t interval over seeds of stored results, per (sweep, config, n,
    β, quantity).

    Parameters
    ----------
    rows : iterable of tuples
        Rows of the ``results`` table in :data:`freeprob.experiments.store.RESULT_COLUMNS` order
        (:meth:`freeprob.experiments.store.ResultStore.rows`).
    level : float in ``(0, 1)``
        Confidence level of the interval (default 0.95).

    Returns
    -------
    list of dict
        One dict per group with the keys :data:`AGGREGATE_COLUMNS`: ``seeds`` values
        averaged (NULL values skipped and counted in ``null``), ``mean`` (``None`` if all
        are NULL), ``half``, ``lo``, ``hi`` (``None`` with fewer than two values).  Sorted
        by sweep, config, n, β (numerically when it is a number), quantity.

    Raises
    ------
    FreeprobValueError
        ``level`` outside ``(0, 1)`` (from :func:`freeprob.experiments.stats.mean_interval`).

    Source: :func:`freeprob.experiments.stats.mean_interval` (the t-interval for a normal mean).
    """
    from freeprob.experiments.store import RESULT_COLUMNS
    from freeprob.experiments.stats import mean_interval

    idx = {c: i for i, c in enumerate(RESULT_COLUMNS)}
    groups: dict[tuple, list] = {}
    for r in rows:
        key = tuple(r[idx[c]] for c in ("sweep", "config", "n", "beta", "quantity"))
        groups.setdefault(key, []).append(r[idx["value"]])
    result = []
    for key in sorted(groups, key=_group_order):
        vals = groups[key]
        finite = [float(v) for v in vals if v is not None]
        rec = dict(zip(("sweep", "config", "n", "beta", "quantity"), key))
        rec.update(seeds=len(finite), null=len(vals) - len(finite), mean=None, half=None, lo=None, hi=None)
        if finite:
            mi = mean_interval(finite, level=level)
            rec.update(mean=mi.mean, half=mi.half, lo=mi.lo, hi=mi.hi)
        result.append(rec)
    return result


# -- helpers -------------------------------------------------------------------------------
def _beta_order(beta):
    if beta is None:
        return (0, 0, "")
    try:
        return (1, Fraction(beta), "")
    except (ValueError, ZeroDivisionError):
        return (2, 0, str(beta))


def _group_order(key):
    sweep, config, n, beta, quantity = key
    return (sweep, config or "", -1 if n is None else n, _beta_order(beta), quantity)


def _select(store, name, rows):
    """The ``sweeps()`` records of the sweeps in ``rows = store.rows(name)``: all, or the
    one named (StoreError if unknown)."""
    from freeprob.experiments.store import StoreError

    sweeps = store.sweeps()
    if name is None:
        known = {s["name"] for s in sweeps}
        extra = sorted({r[0] for r in rows} - known)      # rows written without begin_sweep
        return sweeps + [_bare(n) for n in extra]
    chosen = [s for s in sweeps if s["name"] == name]
    if chosen:
        return chosen
    if rows:
        return [_bare(name)]
    names = sorted({s["name"] for s in sweeps} | {r[0] for r in store.rows()})
    raise StoreError(f"no sweep {name!r} in the result store {str(store.path)!r}; it holds "
                     + (", ".join(repr(n) for n in names) if names else "no sweeps"))


def _bare(name):
    return {"name": name, "kind": None, "settings": None, "code_version": None, "created": None,
            "report": None, "cells": None}


def _num(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return format(v, ".6g") if math.isfinite(v) else str(v)
    return str(v)


def _text_table(header, rows):
    return text_table(header, [[_num(v) for v in r] for r in rows])


def _header(s):
    done = "?" if s["cells"] is None else s["cells"]
    lines = [(f"sweep {s['name']}: kind {s['kind'] or '?'}, {s['code_version'] or 'code version ?'}, "
              f"created {s['created'] or '?'}, {done} cells done")]
    if s["settings"] is not None:
        lines.append("settings: " + json.dumps(s["settings"], sort_keys=True, default=str))
    return "\n".join(lines)


def _show(sweeps, rows, *, fmt, per_seed, out):
    from freeprob.experiments.store import RESULT_COLUMNS

    by_sweep: dict[str, list] = {}
    for r in rows:
        by_sweep.setdefault(r[0], []).append(r)
    if per_seed:
        cols = RESULT_COLUMNS
        tables = {s["name"]: [dict(zip(RESULT_COLUMNS, r)) for r in by_sweep.get(s["name"], [])]
                  for s in sweeps}
    else:
        cols = AGGREGATE_COLUMNS
        tables = {s["name"]: aggregate_rows(by_sweep.get(s["name"], [])) for s in sweeps}
    if fmt == "json":
        doc = {"sweeps": [dict(s, rows=tables[s["name"]]) for s in sweeps]}
        print(json.dumps(doc, indent=1, default=str), file=out)
        return
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(cols)
        for s in sweeps:
            for rec in tables[s["name"]]:
                w.writerow(["" if rec[c] is None else repr(rec[c]) if isinstance(rec[c], float) else rec[c]
                            for c in cols])
        return
    if not sweeps:
        print("the result store holds no sweeps", file=out)
    for i, s in enumerate(sweeps):
        if i:
            print(file=out)
        print(_header(s), file=out)
        if s["report"]:
            print("\n" + s["report"].rstrip("\n") + "\n", file=out)
        recs = tables[s["name"]]
        if not recs:
            print("(no results stored yet)", file=out)
            continue
        if per_seed:
            shown = [c for c in RESULT_COLUMNS if c != "sweep"]
            print(_text_table(shown, [[rec[c] for c in shown] for rec in recs]), file=out)
        else:
            shown = ("config", "n", "beta", "quantity", "seeds", "null", "mean", "± 95%", "lo", "hi")
            keys = ("config", "n", "beta", "quantity", "seeds", "null", "mean", "half", "lo", "hi")
            print(_text_table(shown, [[rec[k] for k in keys] for rec in recs]), file=out)


def _write_csv(rows, target):
    from freeprob.experiments.store import RESULT_COLUMNS

    def write(f):
        w = csv.writer(f)
        w.writerow(RESULT_COLUMNS)
        for r in rows:
            w.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in r])

    write_output(target, write)


def _write_parquet(rows, target):
    from freeprob._extras import MissingExtra, require
    try:
        pa = require("pyarrow", "parquet")
        pq = require("pyarrow.parquet", "parquet")
    except MissingExtra as exc:
        raise FreeprobValueError(f"sweep export --parquet: {exc}; --csv does not need it") from None
    from freeprob.experiments.store import RESULT_COLUMNS

    types = {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}
    arrow = _parquet_types()
    columns = {c: pa.array([r[i] for r in rows], type=types[arrow[c]])
               for i, c in enumerate(RESULT_COLUMNS)}
    table = pa.table(columns)
    write_output(target, lambda fh: pq.write_table(table, fh), binary=True)
