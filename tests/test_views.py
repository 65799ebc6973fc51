"""The report's views: conlleval's table byte for byte, per-label counts, F1 and F_beta names,
macro/weighted left-out labels, and the front ends that read them.

Every expected value is worked out by hand: the conlleval lines from conlleval.pl's
(version 2004-01-26) rules -- per type ``found`` is the number of predicted chunks of
that type, percentages are ``100*correct/found`` with 0 when nothing was found, FB1 is
``2PR/(P+R)`` of the two percentages (0 when P+R = 0), type names are printed with
``%17s`` (right-aligned in 17 bytes, never cut), the accuracy line only when some token
was read, and the type list is sorted with a duplicate check that treats the names
``""`` and ``"0"`` as false (so such a type seen on both sides is listed twice).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from iescore import Scorer, score_tags
from iescore.cli import main
from iescore.io.conll import read_conll
from iescore.render.flat import flat_metrics, seqeval_style


def cli(capsys, tmp_path, text, *argv):
    p = tmp_path / "in.conll"
    p.write_bytes(text.encode("utf-8"))
    assert main(["score", str(p), *argv]) == 0
    return capsys.readouterr().out


def block(out):
    """The conlleval block of a CLI table: the lines before iescore's headline line."""
    lines = out.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("headline ("))
    return "".join(line + "\n" for line in lines[:k])


# --- one token, gold LOC, predicted PER -------------------------------------------------------

PARIS = "Paris B-LOC B-PER\n"


def test_paris_conlleval_block(capsys, tmp_path):
    # 1 token, tags differ -> accuracy 0/1; gold LOC (1 chunk), pred PER (1 chunk), correct 0.
    # overall: P = 100*0/1 = 0, R = 100*0/1 = 0, FB1 0 (P+R = 0).
    # LOC: found (predicted LOC) 0 -> P 0.00; R = 0/1 = 0.00; FB1 0.00; last column 0.
    # PER: P = 0/1 = 0.00; no PER answer -> R 0.00; FB1 0.00; last column 1.
    assert block(cli(capsys, tmp_path, PARIS)) == (
        "processed 1 tokens with 1 phrases; found: 1 phrases; correct: 0.\n"
        "accuracy:   0.00%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0\n"
        "              PER: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
    )


def test_paris_iescore_lines(capsys, tmp_path):
    out = cli(capsys, tmp_path, PARIS).split("\n")[4:]
    # headline = micro: TP 0, FP 1, FN 1 -> P 0, R 0, F1 0 (count form 0/2).
    # slot alignment: LOC and PER overlap on the token, wrong label -> S = 1; N = M = 1;
    # SER = 1/1, ERR = 1/(1+0), E = (1 + .5*0 + .5*0)/(.5*1 + .5*1) = 1.
    # macro F1: LOC 0, PER 0 -> 0; weighted: LOC (weight 1) 0 -> 0.
    # Jaccard TP/(TP+FP+FN): micro 0/2, LOC 0/1, PER 0/1 -> 0 in every average.
    # TS: LOC token FN, PER token FP -> every F1 0.
    assert out[:5] == [
        "headline (micro average): precision   0.00%; recall   0.00%; F1   0.00%",
        "slot errors: C=0 S=1 D=0 I=0 (N=1, M=1); SER: 100.00%; ERR: 100.00%; E: 100.00%",
        "averages F1: micro   0.00%; macro   0.00%; weighted   0.00%",
        "averages Jaccard: micro   0.00%; macro   0.00%; weighted   0.00%",
        "token & separator: TS-F1^M   0.00%; TS-F1^mu   0.00%; T-F1^M   0.00%",
    ]
    # error categories: the one aligned pair has the same token and another label -> wrong
    # label (MUC INC), under the reference label LOC; PER's row is empty (its prediction is
    # LOC's partner)
    assert out[5:9] == [
        " error categories: correct  wrong-label  wrong-bound  wrong-both  missed  spurious  |   COR   INC   PAR   MIS   SPU",
        "              LOC:       0            1            0           0       0         0  |     0     1     0     0     0",
        "              PER:       0            0            0           0       0         0  |     0     0     0     0     0",
        "          overall:       0            1            0           0       0         0  |     0     1     0     0     0",
    ]
    # SemEval-2013: the pair has the same extent and another label -> strict INC, exact COR,
    # partial COR, type INC (P = R = F1 = 0 or 1); one document: P = R = F1 = 0, no sd
    assert out[9:15] == [
        "     semeval-2013:   COR   INC   PAR   MIS   SPU   POS   ACT  precision  recall      F1",
        "           strict:     0     1     0     0     0     1     1      0.00%   0.00%   0.00%",
        "            exact:     1     0     0     0     0     1     1    100.00% 100.00% 100.00%",
        "          partial:     1     0     0     0     0     1     1    100.00% 100.00% 100.00%",
        "             type:     0     1     0     0     0     1     1      0.00%   0.00%   0.00%",
        "document macro: precision   0.00% (sd n/a; documents 1, left out 0); recall   0.00% "
        "(sd n/a; documents 1, left out 0); F1   0.00% (sd n/a; documents 1, left out 0)",
    ]
    # multi-slot tags: the pair's type slot is a substitution, its extent slot correct (same
    # token), both under LOC; SER over both slots (1 + 0)/2
    assert out[15:19] == [
        "  multi-slot tags: type-C  type-S  type-D  type-I  |  extent-C  extent-S  extent-D  extent-I  |       SER",
        "              LOC:      0       1       0       0  |         1         0         0         0  |    50.00%",
        "              PER:      0       0       0       0  |         0         0         0         0  |       n/a",
        "          overall:      0       1       0       0  |         1         0         0         0  |    50.00%",
    ]
    assert out[19].startswith("signature: iescore|")


def test_paris_to_dict():
    d = score_tags(reference=[["B-LOC"]], prediction=[["B-PER"]]).to_dict()
    loc, per = d["per_label"]["LOC"], d["per_label"]["PER"]
    # LOC: one answer, no prediction; the substitution is LOC's (S under the reference label)
    assert {k: loc[k] for k in ("tp", "fp", "fn", "support", "predicted")} == \
        {"tp": 0, "fp": 0, "fn": 1, "support": 1, "predicted": 0}
    assert (loc["precision"], loc["recall"], loc["f1"], loc["f_beta"]) == (None, 0.0, 0.0, 0.0)
    # SER = S/N = 1, ERR = S/(N+I) = 1, E = S/(.5 N + .5 M) with LOC's M = C+S+I = 1 -> 1
    assert (loc["ser"], loc["err"], loc["e"]) == (1.0, 1.0, 1.0)
    # PER: no answer, one prediction
    assert {k: per[k] for k in ("tp", "fp", "fn", "support", "predicted")} == \
        {"tp": 0, "fp": 1, "fn": 0, "support": 0, "predicted": 1}
    assert (per["precision"], per["recall"], per["f1"], per["f_beta"]) == (0.0, None, 0.0, 0.0)
    assert (per["ser"], per["err"], per["e"]) == (None, None, None)  # N = 0, N+I = 0, .5N+.5M = 0
    o = d["overall"]
    assert (o["tp"], o["fp"], o["fn"], o["support"], o["predicted"]) == (0, 1, 1, 1, 1)
    assert d["confusion"] == {"LOC": {"PER": 1}, "PER": {}, "none": {}}
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"], se["N"], se["M"]) == (0, 1, 0, 0, 1, 1)
    av = d["averages"]
    # macro P: LOC undefined, PER 0 -> 0; macro R: LOC 0, PER undefined -> 0
    assert av["macro"]["left_out"] == {"precision": ["LOC"], "recall": ["PER"], "f1": [], "f_beta": [], "jaccard": []}
    assert (av["macro"]["precision"], av["macro"]["recall"], av["macro"]["f1"]) == (0.0, 0.0, 0.0)
    # weighted: PER has weight 0; LOC (weight 1) has no precision -> no weight left -> None
    assert av["weighted"]["zero_weight_labels"] == ["PER"]
    assert av["weighted"]["left_out"] == {"precision": ["LOC"], "recall": [], "f1": [], "f_beta": [], "jaccard": []}
    assert (av["weighted"]["precision"], av["weighted"]["recall"]) == (None, 0.0)
    assert "undefined_labels" not in av["macro"] and "f" not in o


# --- six tokens: one type without answers, one without predictions -----------------------------

SIX = (
    "w1 B-PER B-PER\n"
    "w2 I-PER I-PER\n"
    "w3 O B-ORG\n"
    "w4 B-LOC B-LOC\n"
    "w5 B-LOC O\n"
    "w6 B-MISC O\n"
)
SIX_REF = [["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "B-MISC"]]
SIX_PRED = [["B-PER", "I-PER", "B-ORG", "B-LOC", "O", "O"]]

# gold chunks PER[w1,w2], LOC[w4], LOC[w5], MISC[w6] (4); predicted PER[w1,w2], ORG[w3], LOC[w4] (3);
# correct: PER and LOC[w4] (2). Tags equal on w1, w2, w4 -> accuracy 100*3/6 = 50.00.
# overall P = 100*2/3 = 66.67, R = 100*2/4 = 50.00, FB1 = 2*(200/3)*50/(200/3+50) = 400/7 = 57.14.
# LOC: P = 1/1 = 100.00, R = 1/2 = 50.00, FB1 = 2*100*50/150 = 66.67, found 1.
# MISC: nothing found -> P 0.00, R = 0/1 = 0.00, FB1 0.00, found 0.
# ORG: P = 0/1 = 0.00, no answer -> R 0.00, FB1 0.00, found 1.
# PER: 100.00 everywhere, found 1.
SIX_BLOCK = (
    "processed 6 tokens with 4 phrases; found: 3 phrases; correct: 2.\n"
    "accuracy:  50.00%; precision:  66.67%; recall:  50.00%; FB1:  57.14\n"
    "              LOC: precision: 100.00%; recall:  50.00%; FB1:  66.67  1\n"
    "             MISC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0\n"
    "              ORG: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
    "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
)


def test_six_conlleval_block(capsys, tmp_path):
    assert block(cli(capsys, tmp_path, SIX)) == SIX_BLOCK


@pytest.mark.parametrize("detail", ["full", "prf"])
def test_six_conlleval_view_under_both_details(detail):
    r = score_tags(reference=SIX_REF, prediction=SIX_PRED, detail=detail)
    assert r.format_conlleval() == SIX_BLOCK
    assert r.format_table().startswith(SIX_BLOCK)
    per = r.to_dict()["per_label"]
    assert {lab: (e["support"], e["predicted"]) for lab, e in per.items()} == {
        "LOC": (2, 1), "MISC": (1, 0), "ORG": (0, 1), "PER": (1, 1)}


def test_six_averages_and_left_out_labels():
    d = score_tags(reference=SIX_REF, prediction=SIX_PRED).to_dict()
    # per label (P, R, F1): LOC (1, 1/2, 2/3), MISC (None, 0, 0), ORG (0, None, 0), PER (1, 1, 1)
    mac = d["averages"]["macro"]
    assert mac["left_out"] == {"precision": ["MISC"], "recall": ["ORG"], "f1": [], "f_beta": [], "jaccard": []}
    assert mac["precision"] == pytest.approx(2 / 3)  # (1 + 0 + 1) / 3
    assert mac["recall"] == pytest.approx(0.5)  # (1/2 + 0 + 1) / 3
    assert mac["f1"] == pytest.approx(5 / 12)  # (2/3 + 0 + 0 + 1) / 4
    assert mac["f1_of_macro_pr"] == pytest.approx(4 / 7)  # 2 (2/3)(1/2) / (2/3 + 1/2)
    # weights: LOC 2, MISC 1, PER 1, ORG 0
    w = d["averages"]["weighted"]
    assert w["zero_weight_labels"] == ["ORG"]
    assert w["left_out"] == {"precision": ["MISC"], "recall": [], "f1": [], "f_beta": [], "jaccard": []}
    assert w["precision"] == pytest.approx(1.0)  # (2*1 + 1*1) / 3, MISC left out
    assert w["recall"] == pytest.approx(0.5)  # (2*1/2 + 1*0 + 1*1) / 4
    assert w["f1"] == pytest.approx(7 / 12)  # (2*2/3 + 0 + 1) / 4
    # slot alignment: PER C, LOC[w4] C, LOC[w5] D, MISC D, ORG I
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"], se["N"], se["M"]) == (2, 0, 2, 1, 4, 3)
    assert d["confusion"] == {"LOC": {"LOC": 1, "none": 1}, "MISC": {"none": 1}, "ORG": {},
                              "PER": {"PER": 1}, "none": {"ORG": 1}}


def test_six_beta_2_by_hand(capsys, tmp_path):
    r = score_tags(reference=SIX_REF, prediction=SIX_PRED, beta=2.0)
    d = r.to_dict()
    # micro: P = 2/3, R = 1/2; F2 = 5PR/(4P+R) = (5/3)/(8/3+1/2) = 10/19; F1 = 4/7
    o = d["overall"]
    assert o["f_beta"] == pytest.approx(10 / 19) and o["f1"] == pytest.approx(4 / 7)
    assert (r.f, r.f_beta, r.f1) == (pytest.approx(10 / 19), pytest.approx(10 / 19), pytest.approx(4 / 7))
    # per label F2: LOC 5(1)(1/2)/(4+1/2) = 5/9; MISC 0; ORG 0; PER 1
    assert d["per_label"]["LOC"]["f_beta"] == pytest.approx(5 / 9)
    assert d["per_label"]["LOC"]["f1"] == pytest.approx(2 / 3)
    assert d["averages"]["macro"]["f_beta"] == pytest.approx(7 / 18)  # (5/9 + 1) / 4
    assert d["averages"]["weighted"]["f_beta"] == pytest.approx(19 / 36)  # (2*5/9 + 0 + 1) / 4
    assert d["averages"]["macro"]["f1"] == pytest.approx(5 / 12)  # unchanged by beta
    # TS, per label over t-units (6 tokens, 5 separators):
    # LOC tokens TP w4, FN w5 (w4|w5 are two segments: no positive separator) -> F1 2/3, F2 5/9;
    # MISC FN w6 -> 0; ORG FP w3 -> 0; PER tokens TP 2 + separator w1|w2 TP 1 -> 1.
    ts = d["ts"]
    assert ts["per_label"]["LOC"]["ts"]["f1"] == pytest.approx(2 / 3)
    assert ts["per_label"]["LOC"]["ts"]["f_beta"] == pytest.approx(5 / 9)
    assert ts["f1_macro"] == pytest.approx(5 / 12) and ts["f_beta_macro"] == pytest.approx(7 / 18)
    # micro: TP 1+3 = 4, FP 1, FN 2 -> F1 8/11, F2 20/(20+8+1) = 20/29
    assert ts["f1_micro"] == pytest.approx(8 / 11) and ts["f_beta_micro"] == pytest.approx(20 / 29)
    # tokens only: LOC (TP1, FN1), MISC FN1, ORG FP1, PER TP2 -> macro F1 5/12, F2 7/18;
    # micro TP 3, FP 1, FN 2 -> F1 6/9, F2 15/24
    assert ts["token_f1_macro"] == pytest.approx(5 / 12) and ts["token_f_beta_macro"] == pytest.approx(7 / 18)
    assert ts["token_f1_micro"] == pytest.approx(2 / 3) and ts["token_f_beta_micro"] == pytest.approx(5 / 8)
    # the table: the conlleval block is F1 whatever beta; iescore's lines name F1 and F2
    out = cli(capsys, tmp_path, SIX, "--beta", "2").split("\n")
    assert "".join(line + "\n" for line in out[:6]) == SIX_BLOCK
    # E with alpha = 1/(1+4) = 0.2: (S + .8 D + .2 I)/(.8 N + .2 M) = (1.6 + .2)/(3.2 + .6) = 18/38
    # SER = 3/4, ERR = 3/5
    # Jaccard TP/(TP+FP+FN): micro 2/5; LOC 1/2, MISC 0, ORG 0, PER 1 -> macro 1.5/4 = 37.5%,
    # weighted by answers (LOC 2, MISC 1, PER 1) (2 * 1/2 + 0 + 1)/4 = 50%
    assert out[6:12] == [
        "headline (micro average): precision  66.67%; recall  50.00%; F1  57.14%; F2  52.63%",
        "slot errors: C=2 S=0 D=2 I=1 (N=4, M=3); SER:  75.00%; ERR:  60.00%; E(alpha=0.2):  47.37%",
        "averages F1: micro  57.14%; macro  41.67%; weighted  58.33%",
        "averages F2: micro  52.63%; macro  38.89%; weighted  52.78%",
        "averages Jaccard: micro  40.00%; macro  37.50%; weighted  50.00%",
        "token & separator: TS-F1^M  41.67%; TS-F1^mu  72.73%; T-F1^M  41.67%",
    ]
    assert out[12] == "token & separator: TS-F2^M  38.89%; TS-F2^mu  68.97%; T-F2^M  38.89%"
    # error categories from the alignment above: LOC[w4] and PER correct, LOC[w5] and MISC
    # missed (under their labels), ORG spurious
    assert out[13:19] == [
        " error categories: correct  wrong-label  wrong-bound  wrong-both  missed  spurious  |   COR   INC   PAR   MIS   SPU",
        "              LOC:       1            0            0           0       1         0  |     1     0     0     1     0",
        "             MISC:       0            0            0           0       1         0  |     0     0     0     1     0",
        "              ORG:       0            0            0           0       0         1  |     0     0     0     0     1",
        "              PER:       1            0            0           0       0         0  |     1     0     0     0     0",
        "          overall:       2            0            0           0       2         1  |     2     0     0     2     1",
    ]
    # SemEval-2013: no pair but the two correct ones -> every scenario COR 2, MIS 2, SPU 1:
    # P 2/3, R 2/4, F1 4/7; the one document the same
    assert out[19:25] == [
        "     semeval-2013:   COR   INC   PAR   MIS   SPU   POS   ACT  precision  recall      F1",
        *(f"{s:>17}:     2     0     0     2     1     4     3     66.67%  50.00%  57.14%"
          for s in ("strict", "exact", "partial", "type")),
        "document macro: precision  66.67% (sd n/a; documents 1, left out 0); recall  50.00% "
        "(sd n/a; documents 1, left out 0); F1  57.14% (sd n/a; documents 1, left out 0)",
    ]
    # multi-slot tags: both aligned pairs correct in both slots; LOC[w5], MISC deleted, ORG
    # inserted (both slots each); SER over both: LOC 2/4, MISC 2/2, ORG n/a (no answer),
    # PER 0, overall 2 (2 + 1)/(2 * 4)
    assert out[25:31] == [
        "  multi-slot tags: type-C  type-S  type-D  type-I  |  extent-C  extent-S  extent-D  extent-I  |       SER",
        "              LOC:      1       0       1       0  |         1         0         1         0  |    50.00%",
        "             MISC:      0       0       1       0  |         0         0         1         0  |   100.00%",
        "              ORG:      0       0       0       1  |         0         0         0         1  |       n/a",
        "              PER:      1       0       0       0  |         1         0         0         0  |     0.00%",
        "          overall:      2       0       2       1  |         2         0         2         1  |    75.00%",
    ]
    assert out[31].startswith("signature: ") and "|beta:2|" in out[31]


def test_headline_names_the_average_and_a_fractional_beta(capsys, tmp_path):
    out = cli(capsys, tmp_path, SIX, "--beta", "0.5", "--average", "macro").split("\n")
    # macro P = 2/3, R = 1/2, F1 = 5/12; F_0.5 per label (count form 1.25 TP/(1.25 TP + .25 FN + FP)):
    # LOC 1.25/1.5 = 5/6, MISC 0, ORG 0, PER 1 -> macro (5/6 + 1)/4 = 11/24
    assert out[6] == ("headline (macro average): precision  66.67%; recall  50.00%; F1  41.67%; "
                      "F_beta (beta=0.5)  45.83%")
    assert out[8].startswith("averages F1: ")
    assert out[9].startswith("averages F_beta (beta=0.5): micro ")
    assert out[10].startswith("averages Jaccard: micro ")
    assert out[12].startswith("token & separator (beta=0.5): TS-F_beta^M ")


# --- conlleval's edge cases -----------------------------------------------------------------


def test_no_tokens_prints_one_line(capsys, tmp_path):
    # conlleval prints the counts line and, having read no token, nothing else
    assert block(cli(capsys, tmp_path, "")) == "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"


def test_no_phrases(capsys, tmp_path):
    # 2 tokens, all O and equal: accuracy 100; no chunk: P, R, FB1 keep their default 0; no type line
    assert block(cli(capsys, tmp_path, "a O O\nb O O\n")) == (
        "processed 2 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
        "accuracy: 100.00%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n"
    )


def test_all_wrong(capsys, tmp_path):
    # gold PER[A,B], predicted LOC[C]; no tag agrees -> accuracy 0/3
    assert block(cli(capsys, tmp_path, "A B-PER O\nB I-PER O\nC O B-LOC\n")) == (
        "processed 3 tokens with 1 phrases; found: 1 phrases; correct: 0.\n"
        "accuracy:   0.00%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "              PER: precision:   0.00%; recall:   0.00%; FB1:   0.00  0\n"
    )


def test_percentages_use_conlleval_arithmetic(capsys, tmp_path):
    # 160 one-token gold chunks of X; the first 23 predicted, the rest O.
    # conlleval computes 100*23/160 = 14.375 exactly, printed 14.38 (a tie, rounded to even);
    # 100*(23/160) would print 14.37. FB1 = 2*100*14.375/114.375 = 25.1366 -> 25.14.
    text = "".join(f"t{k} B-X {'B-X' if k < 23 else 'O'}\n" for k in range(160))
    assert block(cli(capsys, tmp_path, text)) == (
        "processed 160 tokens with 160 phrases; found: 23 phrases; correct: 23.\n"
        "accuracy:  14.38%; precision: 100.00%; recall:  14.38%; FB1:  25.14\n"
        "                X: precision: 100.00%; recall:  14.38%; FB1:  25.14  23\n"
    )


def test_type_names_are_padded_to_17_bytes_never_cut(capsys, tmp_path):
    long = "A_TYPE_NAME_OF_21_CHR"  # 21 bytes: printed whole, no padding
    exact = "SEVENTEEN_CHARS_X"  # 17 bytes: no padding
    accented = "PERSÖN"  # 6 characters, 7 bytes in UTF-8: 10 spaces
    text = f"a B-{long} B-{long}\nb B-{exact} O\nc B-{accented} B-{accented}\n"
    out = block(cli(capsys, tmp_path, text)).split("\n")
    # sorted by bytes: "A_..." < "PERSÖN" < "SEVENTEEN..."
    assert out[2:5] == [
        f"{long}: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        f"          {accented}: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        f"{exact}: precision:   0.00%; recall:   0.00%; FB1:   0.00  0",
    ]


def test_type_0_seen_on_both_sides_is_listed_twice(capsys, tmp_path):
    # conlleval's duplicate check `not($lastType) or $lastType ne $i` lets "0" through twice
    # when it is a key of both the gold and the guessed counts; "1" is listed once.
    out = block(cli(capsys, tmp_path, "a B-0 B-0\nb B-1 B-1\n")).split("\n")
    line0 = "                0: precision: 100.00%; recall: 100.00%; FB1: 100.00  1"
    line1 = "                1: precision: 100.00%; recall: 100.00%; FB1: 100.00  1"
    assert out[2:5] == [line0, line0, line1]
    # only a gold chunk of type 0: listed once
    out = block(cli(capsys, tmp_path, "a B-0 O\n")).split("\n")
    assert out[2:4] == ["                0: precision:   0.00%; recall:   0.00%; FB1:   0.00  0", ""]


def test_empty_type_and_type_0_both_listed_twice(capsys, tmp_path):
    # "B" alone is a chunk of the empty type (conlleval's ""), sorted before "0": both are seen
    # on both sides, so each line is printed twice, in sorted order
    out = block(cli(capsys, tmp_path, "a B B\nb B-0 B-0\nc B-1 O\n")).split("\n")
    empty = " " * 17 + ": precision: 100.00%; recall: 100.00%; FB1: 100.00  1"
    zero = "                0: precision: 100.00%; recall: 100.00%; FB1: 100.00  1"
    one = "                1: precision:   0.00%; recall:   0.00%; FB1:   0.00  0"
    assert out[2:8] == [empty, empty, zero, zero, one, ""]


def test_category_block_never_cuts_a_name_or_a_count():
    # 12,345 correct chunks of a 24-character label: the name is printed whole (right-aligned
    # in 17 characters, so no padding), the count overflows its columns (7 under "correct",
    # 4 under "COR") instead of being cut; columns are joined by two spaces
    name = "a_very_long_label_name_x"
    tags = [[f"B-{name}"]] * 12345
    r = score_tags(reference=tags, prediction=tags, scheme="IOB2")
    lines = r.format_table().split("\n")
    row = next(line for line in lines if line.startswith(f"{name}: ") and "|" in line)
    assert row == (f"{name}:   12345            0            0           0       0         0  |  12345"
                   "     0     0     0     0")
    assert lines[lines.index(row) + 1] == ("          overall:   12345            0            0           0       0"
                                           "         0  |  12345     0     0     0     0")


def test_labels_without_chunks_are_not_listed():
    # repair="discard" drops the ill-formed I-LOC chunk: LOC stays a label without items,
    # and conlleval lists only the types it has seen
    r = score_tags(reference=[["B-PER", "O"]], prediction=[["B-PER", "I-LOC"]], scheme="IOB2", repair="discard")
    assert "LOC" in r.labels
    assert [line.split(":")[0].strip() for line in r.format_conlleval().splitlines()[2:]] == ["PER"]


# --- CoNLL-2003: florian's eng.testb ------------------------------------------------------------


def test_florian_found_per_type_and_the_official_lines(data):
    out = data / "conll2003-shared-task-outputs" / "results" / "florian"
    s = read_conll(str(data / "conll2003-eng" / "eng.testb"), str(out / "eng.testb"))
    scorer = Scorer()
    scorer.add_batch(s)
    r = scorer.report()
    lines = r.format_conlleval().splitlines()
    # the official conlleval.out (an older conlleval, without the found column) for eng.testb
    official = (out / "conlleval.out").read_text().splitlines()
    k = official.index("eng.testb")
    assert lines[:2] == official[k + 1 : k + 3]
    assert [line.rsplit("  ", 1)[0] for line in lines[2:]] == official[k + 3 : k + 7]
    # conlleval 2004-01-26's found column: predicted chunks of each type
    assert [int(line.rsplit("  ", 1)[1]) for line in lines[2:]] == [1689, 653, 1613, 1665]
    per = r.to_dict()["per_label"]
    assert [per[t]["predicted"] for t in ("LOC", "MISC", "ORG", "PER")] == [1689, 653, 1613, 1665]
    assert sum(per[t]["support"] for t in per) == 5648


def test_readme_table_is_the_output_of_its_command(data):
    """The inputs guide (docs/how-to/inputs.md) names the command of its example table; the
    table is that command's output, to the signature and its digest of the reference data."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "how-to" / "inputs.md").read_text()
    cmd = "iescore score conll2003-eng/eng.testb conll2003-shared-task-outputs/results/florian/eng.testb"
    m = re.search(r"```bash\n" + re.escape(cmd) + r"\n```\n\n```\n(.*?)```", readme, flags=re.S)
    assert m, "the README names the command of its example table"
    shown = m.group(1).splitlines()
    scorer = Scorer()
    scorer.add_batch(read_conll(str(data / "conll2003-eng" / "eng.testb"),
                                str(data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb")))
    got = scorer.report().format_table().splitlines()
    assert shown == got


# --- front ends -----------------------------------------------------------------------------------

# ref [B-X, O], pred [B-X, B-Y]: TP 1, FP 1, FN 0 -> P 1/2, R 1, F1 2/3, F2 = 5PR/(4P+R) = 2.5/3


def test_flat_views_keep_f1_and_add_f_beta():
    r = score_tags(reference=[["B-X", "O"]], prediction=[["B-X", "B-Y"]], beta=2.0)
    m = flat_metrics(r)
    assert m["f1"] == pytest.approx(2 / 3) and m["f_beta"] == pytest.approx(2.5 / 3)
    assert m["micro_f1"] == pytest.approx(2 / 3)
    assert (m["X_f1"], m["X_f_beta"], m["Y_f1"], m["Y_f_beta"]) == (1.0, 1.0, 0.0, 0.0)
    s = seqeval_style(r)
    assert s["overall_f1"] == pytest.approx(2 / 3) and s["overall_f_beta"] == pytest.approx(2.5 / 3)
    assert s["X"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 1}  # seqeval's shape
    one = flat_metrics(score_tags(reference=[["B-X", "O"]], prediction=[["B-X", "B-Y"]]))
    assert one["f_beta"] == one["f1"] == pytest.approx(2 / 3)


def test_flat_views_under_detail_prf_leave_out_the_slot_errors():
    # detail="prf" counts TP/FP/FN only: no slot errors to report (not a made-up SER of 0)
    r = score_tags(reference=[["B-X", "O"]], prediction=[["B-X", "B-Y"]], detail="prf", beta=2.0)
    m = flat_metrics(r)
    assert m["f1"] == pytest.approx(2 / 3) and m["f_beta"] == pytest.approx(2.5 / 3)
    assert not {"ser", "err", "e"} & set(m)
    s = seqeval_style(r)
    assert "overall_ser" not in s and "overall_C" not in s and s["overall_f1"] == pytest.approx(2 / 3)


def test_spacy_scores_keep_f1_and_add_f_beta():
    from iescore.adapters.spacy_scorer import spacy_scores

    r = score_tags(reference=[["B-X", "O"]], prediction=[["B-X", "B-Y"]], beta=2.0)
    out = spacy_scores(r, "ents")
    assert out["ents_f"] == pytest.approx(2 / 3) and out["ents_f_beta"] == pytest.approx(2.5 / 3)
    assert out["ents_per_type"]["Y"] == {"p": 0.0, "r": 0.0, "f": 0.0}


def test_trainer_hook_keeps_f1_and_adds_f_beta():
    from iescore.adapters.trainer import compute_metrics

    class EvalPrediction:
        predictions = np.array([[1, 2]])  # B-X B-Y
        label_ids = np.array([[1, 0]])  # B-X O

    m = compute_metrics(["O", "B-X", "B-Y"], beta=2.0)(EvalPrediction())
    assert m["f1"] == pytest.approx(2 / 3) and m["f_beta"] == pytest.approx(2.5 / 3)


def test_json_keys(capsys, tmp_path):
    d = json.loads(cli(capsys, tmp_path, SIX, "--json", "--beta", "2"))
    assert set(d["overall"]) >= {"f1", "f_beta", "support", "predicted"} and "f" not in d["overall"]
    assert set(d["averages"]["micro"]) == {"precision", "recall", "f1", "f_beta", "jaccard"}
    assert set(d["averages"]["macro"]["left_out"]) == {"precision", "recall", "f1", "f_beta", "jaccard"}
    assert {"f1_macro", "f_beta_macro", "token_f1_micro", "token_f_beta_micro"} <= set(d["ts"])
