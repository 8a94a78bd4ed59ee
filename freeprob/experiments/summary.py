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

__all__ = ["format_table", "finite_width_summary", "DEFINITIONS", "PAPER_RANGE", "GE_REGIME_BETA"]

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
    "of that cell's K, V, W_O).")
#: The legend under the moments/top-eigenvalue table when it has the finite-width columns.
FW_LEGEND = ("top pred fw: unconditional prediction (mean θ²), ± s.e. fw: its predicted standard error "
             "for a mean over the row's seeds; top pred fw|draw: mean over seeds of the prediction "
             "conditional on each draw's realised θ̂² (docs/theory.md §7 F2)")
#: A row counts as predicted when its mean softmax top eigenvalue is within this of the prediction.
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


def finite_width_summary(rows) -> list:
    r"""The lines comparing the finite-width law with the GE law, over the rows that have
    both softmax distances (relW1 means): in how many rows the finite-width law is closer,
    the median and range of the ratio relW1(SM, fw)/relW1(SM, GE law), and how far the
    finite-width predicted top eigenvalue is from the softmax one (median and largest
    relative difference, against the GE law's edge), and in how many rows the mean softmax
    top eigenvalue is within :data:`TOP_BAND` (5 %) of the conditional prediction
    (``top_pred_fw_draw``) and of the unconditional one (``top_pred_fw``).  Empty when no
    row has both.

    Source: issue 18; docs/theory.md §7 (the finite-width laws);
    :mod:`freeprob.attention.finite_width`, :mod:`freeprob.attention.spikes`.
    """
    import statistics
    pairs = [(r["metrics"]["sm_fw_relW1"]["mean"], r["metrics"]["sm_th_relW1"]["mean"]) for r in rows
             if r["metrics"].get("sm_fw_relW1") and r["metrics"].get("sm_th_relW1")]
    pairs = [(a, b) for a, b in pairs if b > 0]
    if not pairs:
        return []
    ratios = [a / b for a, b in pairs]
    closer = sum(a < b for a, b in pairs)
    out = [f"finite-width law (at each row's own n and widths) vs the GE law, against softmax: closer in "
           f"{closer} of {len(pairs)} rows (relW1); median ratio relW1(SM–fw)/relW1(SM–th) "
           f"{statistics.median(ratios):.2f} (range {min(ratios):.2f}–{max(ratios):.2f})"]
    tops = [(r["metrics"]["top_pred_fw"]["mean"], r["metrics"]["edge_th"]["mean"], r["metrics"]["top_softmax"]["mean"])
            for r in rows if all(r["metrics"].get(k) for k in ("top_pred_fw", "edge_th", "top_softmax"))]
    if tops:
        fw_err = [abs(p / t - 1) * 100 for p, _, t in tops]
        ge_err = [abs(e / t - 1) * 100 for _, e, t in tops]
        line = (f"top eigenvalue vs softmax: finite-width prediction (key-norm spike on the finite-width "
                f"bulk) within {statistics.median(fw_err):.1f}% (median; largest {max(fw_err):.1f}%), "
                f"GE edge "
                f"within {statistics.median(ge_err):.1f}% (largest {max(ge_err):.1f}%) over {len(tops)} "
                f"row{'s' if len(tops) != 1 else ''}")
        def near(key):
            return [abs(r["metrics"][key]["mean"] / r["metrics"]["top_softmax"]["mean"] - 1) <= TOP_BAND
                    for r in rows if (r["metrics"].get(key) or {}).get("mean") is not None
                    and (r["metrics"].get("top_softmax") or {}).get("mean")]
        cond, unc = near("top_pred_fw_draw"), near("top_pred_fw")
        if cond:
            line += (f"; within {100 * TOP_BAND:.0f}%: of the conditional prediction (top pred fw|draw) "
                     f"in {sum(cond)} of {len(cond)} rows, of the unconditional one (top pred fw) in "
                     f"{sum(unc)} of {len(unc)}")
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
        header += ["SM–fw relW1", "SM–fw KS"]
    fn = any("ge_fn_relW1" in r["metrics"] for r in rows)
    if fn:
        header += ["GE–fn relW1", "SM–fn relW1"]
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
            line += [_pct(m.get("sm_fw_relW1")), _pct(m.get("sm_fw_KS"))]
        if fn:
            line += [_pct(m.get("ge_fn_relW1")), _pct(m.get("sm_fn_relW1"))]
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
        lines += finite_width_summary(rows)
    fn = any("ge_fn_relW1" in r["metrics"] for r in rows)
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
