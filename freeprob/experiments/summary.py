r"""The text report of ``freeprob verify`` (:func:`format_table`): the settings, the
distance table, the moments/top-eigenvalue table, our range of softmax–GE relative W1 next
to the paper's, the metric definitions and notes.  :mod:`freeprob.experiments.verify` re-exports these
names.

Source: [HK26]_ §5.1 and Table 2; docs/theory.md §5 (our metric
definitions, since the paper's are not stated) and §7 (finite-size effects).
"""
from __future__ import annotations

from fractions import Fraction

from freeprob._text import text_table
from freeprob.errors import FreeprobValueError
from freeprob.experiments.stats import paired_comparison, within_band

__all__ = ["format_table", "finite_width_summary", "paired_metrics", "DEFINITIONS", "PAPER_RANGE",
           "GE_REGIME_BETA"]

#: The paper's reported softmax–GE mean relative distances (Table 2, §5.1), in percent.
PAPER_RANGE = (0.24, 2.82)
#: Above this β the finite-size effects of docs/theory.md §7 dominate at n ≤ 2048 (a note says so).
GE_REGIME_BETA = Fraction(3, 2)

DEFINITIONS = (
    "relW1 = W1/mean of the reference over all n eigenvalues (top ones included); KS = sup|F_a − F_b|; "
    "vs theory: ∫|F_emp − F_law|dx / m1 and sup|F_emp − F_law| with the exact law's cdf (docs/theory.md §5). "
    "Eigenvalues within 1e-9·max|λ| of an atom of the law (two samples: of 0) count as on it (float64 "
    "eigensolvers return structural zeros as ±~n·eps·max|λ|; freeprob.experiments.compare.snap_to_atoms). "
    "The paper does not state its distance; these are ours. m_k err = (m̂_k − m_k)/m_k vs the exact "
    "moments; edge = top of the exact law's support (out_full: the common-row spike n γ_O + m1(1 + 1/γ_O + "
    "1/γ_V), and its bulk without the top eigenvalue is compared with the output law).")
#: Appended to the definitions when a table has the finite-width columns.
FW_DEFINITION = (
    " fw = the finite-width law at the row's own n and widths (freeprob.attention.finite_width, docs/theory.md "
    "§7); top pred fw = its predicted top eigenvalue, the key-norm outlier or the bulk edge "
    "(freeprob.attention.spikes.predicted_top_eigenvalue) at the mean spike strength θ² "
    "(unconditional); ± s.e. fw = the predicted standard error of the mean over the row's seeds of the "
    "top eigenvalue, from the spike's own scatter (predicted_top_spread/√seeds); top pred fw|draw = the "
    "mean over seeds of the prediction conditional on each draw's realised θ̂² (realised_spike_strength "
    "of that cell's K, V, W_O). fw − th relW1 = relW1(SM, fw) − relW1(SM, th) paired over the row's seeds "
    "(mean ± 95% t-interval, in points of %; significant when the interval excludes 0, "
    "freeprob.experiments.stats.paired_comparison).")
#: The legend under the moments/top-eigenvalue table when it has the finite-width columns.
FW_LEGEND = ("top pred fw: unconditional prediction (mean θ²), ± s.e. fw: its predicted standard error "
             "for a mean over the row's seeds; top pred fw|draw: mean over seeds of the prediction "
             "conditional on each draw's realised θ̂² (docs/theory.md §7 F2)")
#: The band of "top eigenvalue within 5 %": per draw, and for the mean of the draws with its interval.
TOP_BAND = 0.05


def _row_name(r, st, several):
    name = r["config"] + ("" if len(st["objects"]) == 1 else f" [{r['object']}]")
    if several:
        name += f" n={r['n']} β={r['beta']}"
    return name


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
    """Two left-aligned label columns, then right-aligned numbers, under a rule."""
    return text_table(header, body, align="llr", rule=True, strip=False)


def paired_metrics(recs) -> dict:
    r"""The row metrics that compare two quantities on the same seeds (``recs``: one dict
    per seed of a row, as :func:`freeprob.experiments.verify.summarize` builds them).

    * ``fw_minus_th_relW1``: relW1(softmax, finite-width law) − relW1(softmax, GE law),
      paired over the seeds: ``{mean, lo, hi, n, p, verdict}``
      (:func:`freeprob.experiments.stats.paired_comparison`; verdict ``"closer
      (significant)"``, ``"farther (significant)"`` or ``"not significant"``);
    * ``top_fw_draw_rel`` / ``top_fw_rel``: the softmax top eigenvalue relative to the
      conditional (``top_pred_fw_draw``) and unconditional (``top_pred_fw``) prediction,
      ``top/pred − 1`` per draw, mean and t-interval with the verdict of
      :func:`~freeprob.experiments.stats.within_band` at :data:`TOP_BAND`;
    * ``top_fw_draw_in_band`` / ``top_fw_in_band``: the share of single draws within
      :data:`TOP_BAND` with its Wilson interval (``{mean, lo, hi, n, k}``).

    A comparison whose values are missing is left out.  Raises nothing.

    Source: issue 26; :mod:`freeprob.experiments.stats`.
    """
    out = {}
    a, b = [r.get("sm_fw_relW1") for r in recs], [r.get("sm_th_relW1") for r in recs]
    try:
        out["fw_minus_th_relW1"] = paired_comparison(a, b, lower="closer", higher="farther").as_dict()
    except FreeprobValueError:                  # no seed with both distances
        pass
    for key, name in (("top_pred_fw_draw", "top_fw_draw"), ("top_pred_fw", "top_fw")):
        try:
            w = within_band([r.get("top_softmax") for r in recs], [r.get(key) for r in recs], TOP_BAND)
        except FreeprobValueError:              # no seed with both values
            continue
        m = w["mean"]
        out[f"{name}_rel"] = dict(mean=m.mean, lo=m.lo, hi=m.hi, n=m.n, verdict=w["verdict"])
        out[f"{name}_in_band"] = w["per_draw"].as_dict()
    return out


def _diff_pct(m):
    """A paired difference in points of %, to 0.001 point (the tied row's is 0.002)."""
    if m is None:
        return "n/a"
    return f"{100 * m['mean']:.3f}" + ("" if m.get("lo") is None else f"±{100 * (m['hi'] - m['mean']):.3f}")


def _signed_pct(m):
    s = f"{100 * m['mean']:+.2f}%"
    return s + (f" ± {100 * (m['hi'] - m['mean']):.2f}" if m.get("lo") is not None else "")


def _fw_closer_line(rows, names):
    """The finite-width vs GE law line: significant rows counted, the others named."""
    import statistics
    pairs = [(r["metrics"]["sm_fw_relW1"]["mean"], r["metrics"]["sm_th_relW1"]["mean"]) for r in rows
             if r["metrics"].get("sm_fw_relW1") and r["metrics"].get("sm_th_relW1")]
    pairs = [(a, b) for a, b in pairs if b > 0]
    if not pairs:
        return None
    ratios = [a / b for a, b in pairs]
    tests = [(names[id(r)], r["metrics"]["fw_minus_th_relW1"]) for r in rows
             if r["metrics"].get("fw_minus_th_relW1")]
    head = "finite-width law (at each row's own n and widths) vs the GE law, against softmax (relW1"
    if not tests:          # no per-seed pairs (a summary from before issue 26): the point counts only
        closer = sum(a < b for a, b in pairs)
        text = f"{head}, means only, no paired test): closer in {closer} of {len(pairs)} rows"
    else:
        by = {v: [(n, t) for n, t in tests if t["verdict"] == v]
              for v in ("closer (significant)", "farther (significant)", "not significant")}
        closer = by["closer (significant)"]
        text = (f"{head}, paired over the seeds, 95% t-interval): closer (significant) in "
                f"{len(closer)} of {len(tests)} rows")
        rel = [-t["relative"] for _, t in closer if t.get("relative") is not None]
        if rel:             # the size of the effect, and the weakest of the significant rows
            weakest = max(closer, key=lambda x: x[1]["p"])
            size = (f"{100 * min(rel):.2g}" if f"{100 * min(rel):.2g}" == f"{100 * max(rel):.2g}"
                    else f"{100 * min(rel):.2g}–{100 * max(rel):.2g}")
            text += f" (relW1 lower by {size}% of the GE law's; largest p {weakest[1]['p']:.2g}, {weakest[0]})"
        for verdict in ("farther (significant)", "not significant"):
            if by[verdict]:
                text += (f"; {verdict} in {len(by[verdict])} (" + "; ".join(
                    f"{n}: {100 * t['mean']:+.2f} ± {100 * (t['hi'] - t['mean']):.2f} points, p = {t['p']:.2g}"
                    if t.get("lo") is not None else f"{n}: {100 * t['mean']:+.2f} points, one seed"
                    for n, t in by[verdict]) + ")")
    return (text + f"; median ratio relW1(SM–fw)/relW1(SM–th) {statistics.median(ratios):.2f} "
            f"(range {min(ratios):.2f}–{max(ratios):.2f})")


def _band_line(rows, names, name, label):
    """``within TOP_BAND`` of one prediction: the means of draws (with their intervals) and
    the single draws (pooled rate with its Wilson interval; rows that miss named)."""
    from freeprob.experiments.stats import rate_interval
    rel = [(names[id(r)], r["metrics"][f"{name}_rel"], r["metrics"].get(f"{name}_in_band")) for r in rows
           if r["metrics"].get(f"{name}_rel")]
    if not rel:
        return None
    band = f"{100 * TOP_BAND:.0f}%"
    mean_in = [x for x in rel if abs(x[1]["mean"]) <= TOP_BAND]
    inside = [x for x in rel if x[1]["verdict"] == "within"]
    text = f"{label}: mean of the draws within {band} in {len(mean_in)} of {len(rel)} rows"
    unsure = [x for x in rel if x[1]["verdict"] != "within"]
    text += f" (its 95% interval inside ±{band} in {len(inside)}"
    if unsure:
        text += "; " + "; ".join(f"{n}: {_signed_pct(m)}, {m['verdict']}" for n, m, _ in unsure)
    text += ")"
    draws = [x for x in rel if x[2]]
    if draws:
        k, n = sum(x[2]["k"] for x in draws), sum(x[2]["n"] for x in draws)
        text += f"; single draws within {band}: {format(rate_interval(k, n))}"
        miss = [x for x in draws if x[2]["k"] < x[2]["n"]]
        if miss:
            text += " — " + "; ".join(f"{n_} {format(rate_interval(d['k'], d['n']))}" for n_, _, d in miss)
    return text


def finite_width_summary(rows, names=None) -> list:
    r"""The lines comparing the finite-width law with the GE law, over the rows that have
    both softmax distances (relW1 means), each claim with its test (issue 26):

    * the rows where the finite-width law is closer to softmax than the GE law with a
      paired t-test over the seeds at 95 % (``fw_minus_th_relW1`` of
      :func:`paired_metrics`), the rows where the difference is not significant (or goes
      the other way) named with their interval and p-value; the median and range of the
      ratio relW1(SM, fw)/relW1(SM, GE law);
    * how far the finite-width predicted top eigenvalue is from the softmax one (median and
      largest relative difference of the means of draws, against the GE law's edge);
    * "within :data:`TOP_BAND` (5 %)" of the conditional (``top_pred_fw_draw``) and the
      unconditional (``top_pred_fw``) prediction, both as the mean of the draws (its
      interval inside ±5 % or not) and per single draw (the pooled share with its Wilson
      interval, the rows with misses named).

    ``names``: ``id(row) → label`` (default the configuration name).  Rows without the
    paired metrics (summaries from before issue 26) get the point counts and say so.
    Empty when no row has both distances.

    Source: issue 18, 26; docs/theory.md §7 (the finite-width laws);
    :mod:`freeprob.attention.finite_width`, :mod:`freeprob.attention.spikes`,
    :mod:`freeprob.experiments.stats`.
    """
    import statistics
    names = names or {id(r): r.get("config", "?") for r in rows}
    first = _fw_closer_line(rows, names)
    if first is None:
        return []
    out = [first]
    tops = [(r["metrics"]["top_pred_fw"]["mean"], r["metrics"]["edge_th"]["mean"], r["metrics"]["top_softmax"]["mean"])
            for r in rows if all(r["metrics"].get(k) for k in ("top_pred_fw", "edge_th", "top_softmax"))]
    if tops:
        fw_err = [abs(p / t - 1) * 100 for p, _, t in tops]
        ge_err = [abs(e / t - 1) * 100 for _, e, t in tops]
        out.append(f"top eigenvalue vs softmax (means of the draws): finite-width prediction (key-norm spike on "
                   f"the finite-width bulk) off by {statistics.median(fw_err):.1f}% (median; largest "
                   f"{max(fw_err):.1f}%), GE edge by {statistics.median(ge_err):.1f}% (largest {max(ge_err):.1f}%) "
                   f"over {len(tops)} row{'s' if len(tops) != 1 else ''}")
        for name, label in (("top_fw_draw", "softmax top eigenvalue vs the conditional prediction (top pred fw|draw)"),
                            ("top_fw", "softmax top eigenvalue vs the unconditional prediction (top pred fw)")):
            line = _band_line(rows, names, name, label)
            if line:
                out.append(line)
    return out


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
    fw = any("sm_fw_relW1" in r["metrics"] for r in rows)
    if fw:
        header += ["SM–fw relW1", "SM–fw KS", "fw − th relW1"]
    fn = any("ge_fn_relW1" in r["metrics"] for r in rows)
    if fn:
        header += ["GE–fn relW1", "SM–fn relW1"]
    fwfn = any("sm_fwfn_relW1" in r["metrics"] for r in rows)
    if fwfn:
        header += ["SM–(fw+fn) relW1", "fw − (fw+fn)"]
    refine = any("sm_ge2_relW1" in r["metrics"] for r in rows)
    if refine:
        header += ["SM–GE2 relW1", "gap closed", "SM–GE+kn relW1", "gap closed", "top eig GE+kn"]
    several = len({(r["n"], r["beta"]) for r in rows}) > len({r["config"] for r in rows}) or "," in st["beta"]
    body = []
    for r in rows:
        m = r["metrics"]
        name = _row_name(r, st, several)
        line = [name, r["dims"]] + [_pct(m.get(k)) for k in ("sm_ge_relW1", "sm_ge_KS", "sm_th_relW1",
                                                               "sm_th_KS", "ge_th_relW1", "ge_th_KS")]
        if fw:
            line += [_pct(m.get("sm_fw_relW1")), _pct(m.get("sm_fw_KS")), _diff_pct(m.get("fw_minus_th_relW1"))]
        if fn:
            line += [_pct(m.get("ge_fn_relW1")), _pct(m.get("sm_fn_relW1"))]
        if fwfn:
            line += [_pct(m.get("sm_fwfn_relW1")), _diff_pct(m.get("fw_minus_fwfn_relW1"))]
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
               "edge (theory)"] + (["top pred fw", "± s.e. fw", "top pred fw|draw"] if fw else [])
    body2 = []
    for r in rows:
        m = r["metrics"]
        name = _row_name(r, st, several)
        body2.append([name, r["scheme"]] + [_pct(m.get(k)) for k in ("m2_err_sm", "m2_err_ge", "m4_err_sm",
                                                                      "m4_err_ge")]
                     + [_num(m.get(k)) for k in ("top_softmax", "top_ge", "edge_th")
                        + (("top_pred_fw", "top_pred_fw_se", "top_pred_fw_draw") if fw else ())])
    lines += [_table(header2, body2), ""] + ([FW_LEGEND, ""] if fw else [])
    first = [r for r in rows if r["object"] == st["objects"][0]]
    ours = [r["metrics"]["sm_ge_relW1"]["mean"] * 100 for r in first if r["metrics"].get("sm_ge_relW1")]
    ours_ks = [r["metrics"]["sm_ge_KS"]["mean"] * 100 for r in first if r["metrics"].get("sm_ge_KS")]
    if ours:
        k = len(ours)
        rng_ = lambda v: f"{min(v):.2f}%" if k == 1 else f"{min(v):.2f}%–{max(v):.2f}%"  # noqa: E731
        lines.append(f"softmax–GE mean relative distance ({st['objects'][0]}), ours: relW1 {rng_(ours)}, "
                     f"KS {rng_(ours_ks)} over {k} configuration{'s' if k != 1 else ''}; paper (Table 2, "
                     f"seven configurations): {PAPER_RANGE[0]:.2f}%–{PAPER_RANGE[1]:.2f}%")
    if fw:
        lines += finite_width_summary(rows, {id(r): _row_name(r, st, several) for r in rows})
    fn = fn or fwfn
    if fn:
        from freeprob.experiments.verify_finite_n import FN_DEFINITION, finite_n_summary
        lines += finite_n_summary(rows)
    lines.append("definitions: " + result["definitions"] + (FW_DEFINITION if fw else "")
                 + (FN_DEFINITION if fn else ""))
    notes = []
    big = [b for b in st["beta"].split(",") if Fraction(b) > GE_REGIME_BETA]
    if big:
        notes.append(f"β = {', '.join(big)} > {GE_REGIME_BETA}: at these n the finite-size effects of "
                     "docs/theory.md §7 (low-rank chaos, key-norm outlier) dominate the softmax–GE distance")
    if st["weights"] == "orthogonal":
        notes.append("Haar-orthogonal value/output weights are not covered by the laws (they hold for i.i.d. "
                     "weights of the same variance): the theory columns are expected to differ")
    for r in rows:
        if r.get("theory_error"):
            notes.append(f"no exact law for {r['config']} [{r['object']}]: {r['theory_error']}")
        if r.get("fw_error"):
            notes.append(f"no finite-width law for {r['config']} [{r['object']}]: {r['fw_error']}")
        if r.get("fn_error"):
            notes.append(f"no finite-n law for {r['config']} [{r['object']}]: {r['fn_error']}")
        if r.get("fwfn_error"):
            notes.append(f"no finite-width + finite-n law for {r['config']} [{r['object']}]: {r['fwfn_error']}")
        if r["seeds"] < st["seeds"]:
            notes.append(f"{r['config']}: only {r['seeds']} of {st['seeds']} initialisations stored")
        if r.get("note"):
            notes.append(f"{r['config']}: {r['note']}")
        if "rounded" in r["dims"]:
            notes.append(f"{r['config']} (n={r['n']}): widths rounded to integers, so its width ratios (and law) are not "
                         "those of the nominal cell; the theory columns use the rounded widths")
    lines += [f"note: {x}" for x in dict.fromkeys(notes)]
    for key, err in list(result.get("failed", {}).items())[:5]:
        lines.append(f"note: cell {key} failed ({err}); a rerun retries it")
    figs = "".join(f", {f}" for f in result.get("figures", []))
    report = result.get("report", st["out"])
    lines.append(f"results: store {result.get('store', st['out'])} (sweep {result.get('sweep', '?')}); reports "
                 f"{report}/summary.csv, summary.json, per_seed.csv, table.txt{figs} "
                 f"({result['computed']} cell{'s' if result['computed'] != 1 else ''} computed, "
                 f"{result['resumed']} reused"
                 + (f", {result['laws_computed']} exact law{'s' if result['laws_computed'] != 1 else ''} tabulated"
                    if result.get("laws_computed") else "")
                 + f"; {result['elapsed']} s"
                 + (f"; {result['executor']}" if result.get("executor") else "") + ")")
    return "\n".join(lines)
