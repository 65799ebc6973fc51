"""``iescore score --thresholds`` and ``--breakdown``: the curve of two JSONL files equals
the command run on prediction files filtered at each threshold, the numbers of the small
fixture are those counted by hand, and inputs without confidences are refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iescore.cli import main

FIX = Path(__file__).parent / "fixtures"
GOLD, PRED = str(FIX / "thresholds" / "gold.jsonl"), str(FIX / "thresholds" / "pred.jsonl")
JSONL = ["--input-format", "jsonl", "--level", "tokens"]


def _json(capsys, *argv):
    assert main(["score", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# the fixture: answers n1 PER "Ada Lovelace", PER "Charles Babbage", LOC "London", w1 LOC
# "Paris", LOC "France"; predictions (confidence) PER "Ada Lovelace" 0.9 (exact), PER
# "Charles" 0.6 (not exact), LOC "London" 0.8, ORG "met" 0.3 (no answer), LOC "Paris" 0.7,
# LOC "France" 0.4. Kept at t: TP/FP among the predictions >= t, FN the answers left
HAND = [(0.3, 4, 2, 1), (0.4, 4, 1, 1), (0.6, 3, 1, 2), (0.7, 3, 0, 2), (0.8, 2, 0, 3), (0.9, 1, 0, 4)]


@pytest.mark.parametrize("counting", ["any", "one-to-one", "match-best"])
def test_curve_by_hand_and_against_filtered_files(tmp_path, capsys, counting):
    # match-best is scored again at each threshold, through the files
    mode = ["--mode", "match-best"] if counting == "match-best" else ["--counting", counting]
    d = _json(capsys, GOLD, PRED, *JSONL, "--thresholds", *mode)["thresholds"]
    assert d["method"] == {"any": "pairs", "one-to-one": "matching", "match-best": "rescored"}[counting]
    points = [(p["threshold"], p["tp"], p["fp"], p["fn"]) for p in d["points"]]
    if counting == "match-best":
        # the most confident prediction of each document and label: n1 PER "Ada Lovelace" (TP),
        # n1 LOC "London" (TP), n1 ORG "met" (FP, down to 0.3), w1 LOC "Paris" (TP, down to 0.7)
        assert points[:4] == [(0.3, 3, 1, 0), (0.4, 3, 0, 0), (0.6, 3, 0, 0), (0.7, 3, 0, 0)]
    else:
        assert points == HAND
        # F1 = 2TP / (2TP + FP + FN) at 0.4: 8/10, the largest (0.3: 8/11, 0.7: 6/8)
        assert d["best"] == {"threshold": 0.4, "tp": 4, "fp": 1, "fn": 1, "precision": 0.8, "recall": 0.8,
                             "f1": 0.8, "f_beta": 0.8}
    for t, *_ in HAND:  # the reference: the command on the prediction file without the spans below t
        lines = []
        for line in Path(PRED).read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            rec["spans"] = [s for s in rec["spans"] if s["score"] >= t]
            lines.append(json.dumps(rec))
        kept = tmp_path / f"pred_{t}.jsonl"
        kept.write_text("\n".join(lines) + "\n", encoding="utf-8")
        o = _json(capsys, GOLD, str(kept), *JSONL, *mode)["overall"]
        point = next(p for p in d["points"] if p["threshold"] == t)
        assert (o["tp"], o["fp"], o["fn"]) == (point["tp"], point["fp"], point["fn"])


def test_table_csv_markdown(capsys):
    assert main(["score", GOLD, PRED, *JSONL, "--thresholds"]) == 0
    out = capsys.readouterr().out.splitlines()
    i = next(k for k, x in enumerate(out) if x.startswith("thresholds ("))
    assert out[i] == ("thresholds (predictions of confidence >= t kept): 6 points of 6 distinct confidences, "
                      "from the candidate pairs")
    assert out[i + 1] == "best F1 80.00% at t = 0.4: precision 80.00%, recall 80.00% (tp 4, fp 1, fn 1)"
    assert out[i + 2].startswith("signature: ")
    assert main(["score", GOLD, PRED, *JSONL, "--thresholds", "--format", "csv"]) == 0
    csv = capsys.readouterr().out.split("\n\n")[-1].splitlines()
    assert csv[0] == "threshold,tp,fp,fn,precision,recall,f1,f_beta"
    assert csv[2] == "0.4,4,1,1,0.8,0.8,0.8,0.8"
    assert len(csv) == 7
    assert main(["score", GOLD, PRED, *JSONL, "--thresholds", "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "- best F1 80.00% at t = 0.4" in md


def test_quantiles_on_the_command_line(capsys):
    d = _json(capsys, GOLD, PRED, *JSONL, "--thresholds", "--mode", "match-best", "--max-thresholds", "3")
    t = d["thresholds"]
    # 3 of the 6 distinct confidences at positions 0, round(2.5) = 2, 5: 0.3, 0.6, 0.9
    assert [p["threshold"] for p in t["points"]] == [0.3, 0.6, 0.9]
    assert "3 of the 6 distinct confidences" in t["note"]
    with pytest.raises(SystemExit) as exc:
        main(["score", GOLD, PRED, *JSONL, "--thresholds", "--max-thresholds", "1"])
    assert exc.value.code == 2 and "at least 2" in capsys.readouterr().err


def test_no_confidences_refused(tmp_path, capsys):
    assert main(["score", "--example", "--thresholds"]) == 2
    assert "CoNLL tags carry none" in capsys.readouterr().err
    # a JSONL prediction without a score on one span: the document and the span are named
    lines = Path(PRED).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[1])
    del rec["spans"][1]["score"]
    p = tmp_path / "pred.jsonl"
    p.write_text(lines[0] + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    assert main(["score", GOLD, str(p), *JSONL, "--thresholds"]) == 2
    err = capsys.readouterr().err
    assert "document 'w1', predicted span ('LOC', 3, 4) 'France' has none (1 of 6 predictions" in err


def test_breakdowns_on_the_command_line(capsys):
    argv = [GOLD, PRED, *JSONL, "--breakdown", "length", "--breakdown", f"attr:{FIX / 'thresholds' / 'sources.tsv'}",
            "--breakdown", f"seen:{FIX / 'breakdowns' / 'train.conll'}"]
    d = _json(capsys, *argv)["breakdowns"]
    assert [b["name"] for b in d] == ["length", "attribute:sources.tsv", "seen"]
    # length 1: answers London, Paris, France (all found); predictions Charles (FP), met (FP),
    # London, Paris, France (TP). length 2: answers Ada Lovelace (found), Charles Babbage
    # (missed); prediction Ada Lovelace (TP)
    g = {r["group"]: (r["support"], r["found"], r["fn"], r["predicted"], r["tp"], r["fp"]) for r in d[0]["rows"]}
    assert g == {"1": (3, 3, 0, 5, 3, 2), "2": (2, 1, 1, 1, 1, 0)}
    assert d[0]["rows"][0]["f1"] == pytest.approx(2 * 0.6 * 1.0 / 1.6)
    g = {r["group"]: (r["support"], r["found"], r["fn"], r["predicted"], r["tp"], r["fp"]) for r in d[1]["rows"]}
    assert g == {"news": (3, 2, 1, 4, 2, 2), "web": (2, 2, 0, 2, 2, 0)}
    # seen in train.conll: PER "Ada Lovelace", LOC "London" (each one answer and one TP prediction)
    g = {r["group"]: (r["support"], r["found"], r["fn"], r["predicted"], r["tp"], r["fp"]) for r in d[2]["rows"]}
    assert g == {"seen": (2, 2, 0, 2, 2, 0), "unseen": (3, 2, 1, 4, 2, 2)}
    assert main(["score", *argv, "--format", "csv"]) == 0
    sections = capsys.readouterr().out.split("\n\n")
    assert sections[-3].splitlines()[1] == "length,1,3,3,0,5,3,2,0.6,1.0,0.75"  # F1 18/24
    with pytest.raises(SystemExit) as exc:
        main(["score", "--example", "--breakdown", "length", "--breakdown", "lenght"])
    assert exc.value.code == 2 and "expected length, seen:TRAINFILE or attr:FILE, got 'lenght'" in capsys.readouterr().err


def test_breakdown_of_a_conll_file(capsys):
    # the built-in example read whole for its items (the streamed path keeps none)
    assert main(["score", "--example", "--breakdown", "length", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["breakdowns"][0]["rows"]
    assert sum(r["support"] for r in rows) > 0
