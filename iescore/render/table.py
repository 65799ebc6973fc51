"""The views stage of the pipeline: iescore's default text table of a report.

The conlleval view (`iescore.render.conlleval`) followed by iescore's own lines
(headline average, slot errors, averages, token & separator model, repairs, error
categories, SemEval-2013 scenarios, document-macro average, multi-slot tags, signature); it reads a finished [`Report`][iescore.report.Report] and recomputes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..multislot import multislot_lines
from ..semeval import SCENARIOS
from .categories import category_lines
from .conlleval import conlleval_lines

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["format_table", "semeval_lines"]


def semeval_lines(report: Report) -> list[str]:
    """The SemEval-2013 scenarios, overall (no lines where there is no alignment)::

        semeval-2013:   COR   INC   PAR   MIS   SPU   POS   ACT  precision  recall      F1
              strict:     1     1     0     1     1     3     3     33.33%  33.33%  33.33%
    """
    sem = report._summary["semeval"]
    if sem is None:
        return []

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.2f}%"

    codes = ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")
    head = "".join(f"{c:>6}" for c in codes) + f"{'precision':>11}{'recall':>8}{'F1':>8}"
    out = [f"{'semeval-2013':>17}:{head}"]
    for name in SCENARIOS:
        e = sem[name]
        out.append(f"{name:>17}:" + "".join(f"{e[c]:>6}" for c in codes)
                   + f"{pct(e['precision']):>11}{pct(e['recall']):>8}{pct(e['f1']):>8}")
    return out


def format_table(report: Report) -> str:
    """The default table: the conlleval view (`format_conlleval`), then
    iescore's lines: the headline average's precision, recall and F1 (and F_beta
    when beta != 1), the slot errors (and the weighted SER when S, D and I are
    weighted), the micro/macro/weighted averages of F1 (and
    of F_beta) and of the Jaccard overlap, the token & separator model, repairs, the error
    categories, the SemEval-2013 scenarios (`semeval_lines`), the document-macro average,
    Makhoul's multi-slot tags (`iescore.multislot.multislot_lines`), the extractor's cost
    when the report has one (`format_cost`) and the signature.
    Undefined values print as n/a in iescore's lines."""
    s = report._summary
    cfg = report.config

    def pct(x: float | None) -> str:
        return "   n/a" if x is None else f"{100 * x:6.2f}"

    # F_beta's name: F2 for an integer beta, else F_beta with the beta stated
    whole = float(cfg.beta).is_integer()
    fb = f"F{int(cfg.beta)}" if whole else "F_beta"
    at = "" if whole else f" (beta={cfg.beta:g})"
    lines = conlleval_lines(report)
    av = s["averages"]
    h = av[cfg.average]
    head = f"headline ({cfg.average} average): precision {pct(h['precision'])}%; recall {pct(h['recall'])}%; F1 {pct(h['f1'])}%"
    lines.append(head if cfg.beta == 1 else f"{head}; {fb}{at} {pct(h['f_beta'])}%")
    se = s["slot_errors"]
    if se is not None:
        e_name = "E" if cfg.alpha == 0.5 else f"E(alpha={cfg.alpha:g})"
        weighted = "" if cfg.ser_weights == (1.0, 1.0, 1.0) else (
            f"; SER(weights S,D,I={','.join(f'{w:g}' for w in cfg.ser_weights)}): {pct(se['ser_weighted'])}%")
        lines.append(
            f"slot errors: C={se['C']} S={se['S']} D={se['D']} I={se['I']} (N={se['N']}, M={se['M']}); "
            f"SER: {pct(se['ser'])}%; ERR: {pct(se['err'])}%; {e_name}: {pct(se['e'])}%{weighted}"
        )
    for f, name in [("f1", "F1")] + ([] if cfg.beta == 1 else [("f_beta", f"{fb}{at}")]) + [("jaccard", "Jaccard")]:
        lines.append(
            f"averages {name}: micro {pct(av['micro'][f])}%; macro {pct(av['macro'][f])}%; "
            f"weighted {pct(av['weighted'][f])}%"
        )
    ts = s["ts"]
    if ts is None:
        lines.append(f"token & separator: unavailable ({report.ts_error})")
    else:
        for f, name, where in [("f1", "F1", "")] + ([] if cfg.beta == 1 else [("f_beta", fb, at)]):
            lines.append(
                f"token & separator{where}: TS-{name}^M {pct(ts[f + '_macro'])}%; "
                f"TS-{name}^mu {pct(ts[f + '_micro'])}%; T-{name}^M {pct(ts['token_' + f + '_macro'])}%"
            )
    for side, rep in s["repairs"].items():
        if any(rep.values()):
            where = s["repair_sites"].get(side)
            first = f" (the first at {'; '.join(where)})" if where else ""
            lines.append(f"{side}: " + ", ".join(f"{k} {v}" for k, v in rep.items()) + first)
    lines += category_lines(report)
    lines += semeval_lines(report)
    dm = report._full_summary("doc_macro") if report.totals is None or getattr(report.totals, "doc_sums", None) else None
    if dm is not None:
        lines.append("document macro: " + "; ".join(
            f"{name} {pct(dm[k]['mean'])}% (sd {pct(dm[k]['sd']).strip()}; documents {dm[k]['documents']}, "
            f"left out {dm[k]['left_out']})" for k, name in (("precision", "precision"), ("recall", "recall"), ("f1", "F1"))))
    lines += multislot_lines(report.labels, report.multislot, report._labels_summary.counts,  # type: ignore[attr-defined]
                             s["multislot"] and s["multislot"]["overall"])
    if report.cost is not None:
        from ..cost import format_cost

        lines += ["extractor's cost:", *format_cost(report.cost).split("\n")]
    lines.append(f"signature: {report.signature}")
    return "\n".join(lines)
