"""Issue 12's verdict, per application, utility function and controller mode: does nom adaptive
earn a mean profit of at least the best fixed W's mean minus one pooled standard deviation, and
more than the same application in the Linux guest (each of its servers) and in OSv?

"Best fixed W" is the W in the plan with the highest mean profit under the row's own utility
function (fixed-W runs are valued under every function from the same trace). The pooled standard
deviation is the two samples' (adaptive's and the best fixed W's):
sqrt(((n1 - 1) s1^2 + (n2 - 1) s2^2) / (n1 + n2 - 2)); with fewer than three runs between them
it is undefined and the row says so instead of passing or failing. Profits are in the pass's
verdict units (analysis.Analysis: KVM-equivalent under the exit-cost model).
"""
import math

from profit import KINDS

from .plan import ADAPTIVE_MODES, adaptive_variant


def pooled_sd(a, b):
    """The pooled standard deviation of two (mean, sd, n) samples; None below n1 + n2 = 3."""
    (_, s1, n1), (_, s2, n2) = a, b
    if n1 < 1 or n2 < 1 or n1 + n2 < 3:
        return None
    return math.sqrt(((n1 - 1) * s1 ** 2 + (n2 - 1) * s2 ** 2) / (n1 + n2 - 2))


def best_fixed(analysis, app, kind, basis="profit"):
    """(W, (mean, sd, n)) of the fixed W with the highest mean profit under kind, or None."""
    found = []
    for w in analysis.w_values(app):
        s = analysis.profit(app, "nom", f"w={w:g}", kind, basis=basis)
        if s[2]:
            found.append((s[0], -w, w, s))  # ties: the smaller W
    if not found:
        return None
    _, _, w, s = max(found)
    return w, s


def others(analysis, app, kind, basis="profit"):
    """[(guest, variant, (mean, sd, n))] of every non-nom run set of app that has a profit."""
    pairs = sorted({(r["guest"], r["variant"]["name"]) for r in analysis.ok
                    if r["app"] == app and r["guest"] != "nom"})
    out = []
    for guest, variant in pairs:
        s = analysis.profit(app, guest, variant, kind, basis=basis)
        if s[2]:
            out.append((guest, variant, s))
    return out


def verdicts(analysis, app, basis="profit"):
    """One dict per (utility, mode) whose adaptive variant has runs: the adaptive profit, the
    best fixed W and its profit, the pooled SD, the bar (best - pooled SD), whether adaptive
    reaches it (None when undefined), and for each other guest its profit and whether
    adaptive earns more. basis: the runs' whole profit, or "profit_fast" (analysis.fast_pieces:
    each run at its fast-host rates; runs without one are left out)."""
    rows = []
    for kind in KINDS:
        best = best_fixed(analysis, app, kind, basis)
        rivals = others(analysis, app, kind, basis)
        for mode in ADAPTIVE_MODES:
            variant = adaptive_variant(kind, mode)["name"]
            if not analysis.runs(app, "nom", variant):
                continue
            adp = analysis.profit(app, "nom", variant, kind, basis=basis)
            row = {"utility": kind, "mode": mode, "variant": variant, "adaptive": adp,
                   "best_w": None, "best": None, "pooled_sd": None, "bar": None,
                   "meets_bar": None, "rivals": []}
            if best:
                w, s = best
                sd = pooled_sd(adp, s) if adp[2] else None
                row.update(best_w=w, best=s, pooled_sd=sd)
                if sd is not None:
                    row["bar"] = s[0] - sd
                    row["meets_bar"] = adp[0] >= row["bar"]
            for guest, gv, s in rivals:
                row["rivals"].append({"guest": guest, "variant": gv, "profit": s,
                                      "beaten": adp[0] > s[0] if adp[2] else None})
            rows.append(row)
    return rows
