"""``freeprob sweep show`` and ``freeprob sweep export`` on a small store built with the
ResultStore API: the printed means and intervals are mean_interval's, csv/json agree,
exports equal ``ResultStore.rows()``, bad input gives exit status 2 and a clear message,
and the ``--help`` examples run as written through the console script."""
import csv
import io
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from freeprob.cli import build_parser, main
from freeprob.cli.sweep_commands import AGGREGATE_COLUMNS, VERIFY_EXAMPLE, aggregate_rows
from freeprob.experiments.stats import mean_interval
from freeprob.experiments.store import RESULT_COLUMNS, STORE_FORMAT, ResultStore

SCRIPT = Path(sys.executable).with_name("freeprob")

#: (config, seed) -> (relW1, ks); one NULL (None) and one non-finite (stored as NULL)
VALUES = {("gpt2-small", 0): (0.0412, 0.91), ("gpt2-small", 1): (0.0398, None),
          ("llama-7b", 0): (0.0285, 0.97), ("llama-7b", 1): (0.0301, 0.95)}
REPORT = "relative W1 below 5% for both configurations"


def _build(path):
    with ResultStore(path) as st:
        st.begin_sweep("verify", "verify", {"beta": "1", "seeds": 2, "n": 128})
        for (cfg, seed), (w, ks) in VALUES.items():
            st.write_cell("verify", f"{cfg}/s{seed}", {"config": cfg, "n": 128, "beta": "1", "seed": seed},
                          {"relW1": w, "ks": ks}, seconds=0.1)
        st.set_report("verify", REPORT)
        st.begin_sweep("other", "readout", {"seeds": 1})
        st.write_cell("other", "o/s0", {"config": "x", "n": 16, "beta": "2", "seed": 0}, {"loss": 1.5})
    return path


@pytest.fixture
def store(tmp_path):
    return _build(tmp_path / "run")


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _expected():
    """mean_interval over the same numbers, NULLs dropped."""
    exp = {}
    for cfg in ("gpt2-small", "llama-7b"):
        for i, q in enumerate(("relW1", "ks")):
            vals = [VALUES[cfg, s][i] for s in (0, 1)]
            finite = [v for v in vals if v is not None]
            exp[cfg, q] = (mean_interval(finite), len(finite), len(vals) - len(finite))
    return exp


def test_show_table_means_and_intervals(store):
    rc, out, err = _run(["sweep", "show", str(store), "--sweep", "verify"])
    assert rc == 0 and err == ""
    assert "sweep verify: kind verify" in out and "2 cells done" not in out and "4 cells done" in out
    assert 'settings: {"beta": "1", "n": 128, "seeds": 2}' in out and REPORT in out
    lines = {tuple(ln.split()[:4]): ln.split()[4:] for ln in out.splitlines()
             if ln.startswith(("gpt2-small", "llama-7b"))}
    assert len(lines) == 4
    for (cfg, q), (mi, k, nulls) in _expected().items():
        seeds, null, mean, *rest = lines[cfg, "128", "1", q]
        assert (int(seeds), int(null)) == (k, nulls)
        assert mean == format(mi.mean, ".6g")
        if mi.half is None:                     # one value: no interval
            assert k == 1 and rest == []
        else:
            assert rest == [format(mi.half, ".6g"), format(mi.lo, ".6g"), format(mi.hi, ".6g")]
    assert "loss" not in out                    # --sweep selects


def test_show_csv_and_json_agree_with_mean_interval(store):
    rc, text, _ = _run(["sweep", "show", str(store / "results.sqlite"), "--format", "csv"])
    assert rc == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == AGGREGATE_COLUMNS
    rc, text, _ = _run(["sweep", "show", str(store), "--format", "json"])
    assert rc == 0
    doc = json.loads(text)
    sweeps = {s["name"]: s for s in doc["sweeps"]}      # ordered by creation time, then name
    assert sorted(sweeps) == ["other", "verify"]
    sv = sweeps["verify"]
    assert sv["report"] == REPORT and sv["cells"] == 4
    assert sv["settings"] == {"beta": "1", "n": 128, "seeds": 2}
    jrows = [r for s in doc["sweeps"] for r in s["rows"]]
    assert len(jrows) == len(rows) == 5
    for c, j in zip(rows, jrows):
        for k in AGGREGATE_COLUMNS:
            if j[k] is None:
                assert c[k] == ""
            elif isinstance(j[k], float):
                assert float(c[k]) == j[k]
            else:
                assert c[k] == str(j[k])
    exp = _expected()
    assert len(sv["rows"]) == len(exp)
    for j in sv["rows"]:
        mi, k, nulls = exp[j["config"], j["quantity"]]
        assert (j["seeds"], j["null"], j["mean"], j["half"], j["lo"], j["hi"]) == \
            (k, nulls, mi.mean, mi.half, mi.lo, mi.hi)
    assert sweeps["other"]["rows"] == [{"sweep": "other", "config": "x", "n": 16, "beta": "2",
                                        "quantity": "loss", "seeds": 1, "null": 0, "mean": 1.5,
                                        "half": None, "lo": None, "hi": None}]


def test_show_per_seed(store):
    with ResultStore(store, readonly=True) as st:
        expected = [dict(zip(RESULT_COLUMNS, r)) for r in st.rows("verify")]
    rc, text, _ = _run(["sweep", "show", str(store), "--sweep", "verify", "--per-seed", "--format", "json"])
    assert rc == 0 and json.loads(text)["sweeps"][0]["rows"] == expected
    rc, text, _ = _run(["sweep", "show", str(store), "--sweep", "verify", "--per-seed", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["cell_key"], r["quantity"], r["value"]) for r in rows] == \
        [(e["cell_key"], e["quantity"], "" if e["value"] is None else repr(e["value"])) for e in expected]
    rc, text, _ = _run(["sweep", "show", str(store), "--per-seed"])
    assert rc == 0 and "gpt2-small/s1" in text and "cell_key" in text and "loss" in text


def test_aggregate_rows_all_null_group():
    rows = [("s", f"k{i}", "c", 8, "1", i, "q", None, "v", "t") for i in range(3)]
    (rec,) = aggregate_rows(rows)
    assert (rec["seeds"], rec["null"], rec["mean"], rec["half"]) == (0, 3, None, None)


def test_export_csv_and_parquet_equal_rows(store, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    csv_path, pq_path = tmp_path / "r.csv", tmp_path / "r.parquet"
    rc, out, err = _run(["sweep", "export", str(store), "--csv", str(csv_path), "--parquet", str(pq_path)])
    assert rc == 0 and err == "" and "wrote 9 rows" in out
    with ResultStore(store, readonly=True) as st:
        expected = st.rows()
    assert len(expected) == 9 and any(r[7] is None for r in expected)
    with open(csv_path, newline="", encoding="utf-8") as f:
        got = list(csv.reader(f))
    assert tuple(got[0]) == RESULT_COLUMNS
    conv = {"n": int, "seed": int, "value": float}
    back = [tuple(None if v == "" else conv.get(c, str)(v) for c, v in zip(RESULT_COLUMNS, r))
            for r in got[1:]]
    assert back == expected
    table = pq.read_table(pq_path)
    assert table.column_names == list(RESULT_COLUMNS)
    assert {f.name: str(f.type) for f in table.schema} == \
        {c: ("int64" if c in ("n", "seed") else "double" if c == "value" else "string")
         for c in RESULT_COLUMNS}
    assert [tuple(r[c] for c in RESULT_COLUMNS) for r in table.to_pylist()] == expected
    # one sweep only
    rc, _, _ = _run(["sweep", "export", str(store), "--sweep", "other", "--csv", str(csv_path), "--force"])
    with open(csv_path, newline="", encoding="utf-8") as f:
        assert [r[0] for r in list(csv.reader(f))[1:]] == ["other"]


def _error(argv):
    rc, _, err = _run(argv)
    assert rc == 2 and "Traceback" not in err and err.startswith("freeprob: error: ")
    return err


def test_bad_inputs(store, tmp_path):
    assert "no result store" in _error(["sweep", "show", str(tmp_path / "missing")])
    assert "no result store" in _error(["sweep", "export", str(tmp_path / "missing.db"), "--csv",
                                        str(tmp_path / "x.csv")])
    err = _error(["sweep", "show", str(store), "--sweep", "nope"])
    assert "no sweep 'nope'" in err and "'verify'" in err and "'other'" in err
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"junk" * 500)
    assert "not a SQLite database" in _error(["sweep", "show", str(junk)])
    # an incompatible store format
    other = _build(tmp_path / "old.sqlite")
    con = sqlite3.connect(other)
    con.execute("UPDATE meta SET value = '999' WHERE key = 'store_format'")
    con.commit()
    con.close()
    err = _error(["sweep", "show", str(other)])
    assert "store format 999" in err and f"format {STORE_FORMAT} only" in err
    # existing export target
    target = tmp_path / "exists.csv"
    target.write_text("keep me", encoding="utf-8")
    err = _error(["sweep", "export", str(store), "--csv", str(target)])
    assert "exists" in err and "--force" in err and target.read_text(encoding="utf-8") == "keep me"
    assert "--csv FILE" in _error(["sweep", "export", str(store)])
    rc, _, _ = _run(["sweep", "export", str(store), "--csv", str(target), "--force"])
    assert rc == 0 and target.read_text(encoding="utf-8").startswith("sweep,cell_key")
    rc, out, _ = _run(["sweep"])
    assert rc == 2 and "show" in out and "export" in out


def _examples():
    parser = build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None) and "sweep" in a.choices)
    sweep = sub.choices["sweep"]
    ssub = next(a for a in sweep._actions if getattr(a, "choices", None) and "show" in a.choices)
    out = {}
    for name, p in [("sweep", sweep), ("show", ssub.choices["show"]), ("export", ssub.choices["export"])]:
        m = re.search(r"example: (freeprob .+)$", " ".join(p.format_help().split()))
        assert m, f"{name} --help has no example"
        first, _, then = m.group(1).partition(" && ")
        assert first == VERIFY_EXAMPLE          # the store comes from the verify example
        out[name] = shlex.split(then)
    return out


@pytest.mark.parametrize("name", ["sweep", "show", "export"])
def test_help_examples_run(name, tmp_path):
    """The sweep part of each example (after the verify example that makes the store; the
    whole line runs in a fresh directory in tests/test_cli_examples.py), here on a small
    store built in place of the verify example's."""
    if not SCRIPT.exists():
        pytest.skip("the freeprob console script is not installed")
    if name == "export":
        pytest.importorskip("pyarrow")
    argv = _examples()[name]
    assert argv[:2] == ["freeprob", "sweep"]
    _build(tmp_path / shlex.split(VERIFY_EXAMPLE)[-1])
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([str(SCRIPT), *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    if name == "export":
        assert (tmp_path / "results.csv").is_file() and (tmp_path / "results.parquet").is_file()
    else:
        assert "relW1" in proc.stdout


def test_a_closed_pipe_ends_quietly(tmp_path):
    # `freeprob sweep show DB | head -1`: the reader leaves early; no "Broken pipe" error
    import subprocess
    import sys
    store = tmp_path / "big.sqlite"
    with ResultStore(store) as st:          # ~300 kB of CSV: more than a pipe buffer holds
        st.begin_sweep("big", "toy", {})
        for i in range(2000):
            st.write_cell("big", f"cell-{i}", {"config": "c", "n": 8, "beta": "1", "seed": i},
                          {"first": i / 7, "second": i / 11})
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "freeprob.cli", "sweep", "show", str(store), "--per-seed",
                                 "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.wait(timeout=60)
        assert first.startswith(b"sweep,") and err == "" and proc.returncode in (0, 1)
