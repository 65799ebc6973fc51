"""Reports in notebooks and data tools: repr, _repr_html_, to_pandas, to_html, score_files,
and the signature carried by the CSV output, the Trainer hook and the spaCy scorer.

The small case used by hand (two documents):
  reference  [B-PER I-PER O B-LOC] [B-ORG O]
  prediction [B-PER I-PER O B-PER] [O     O]
PER: PER[0,2) right, PER[3,4) spurious -> tp 1 fp 1 fn 0: P = 1/2, R = 1, F1 = 2/3.
LOC, ORG: one answer missed each -> tp 0 fp 0 fn 1: P undefined (0/0), R = 0, F1 = 2*0/(0+0+1) = 0.
support (answers) 1 each, 3 in all; predicted: PER 2, the others 0.
micro: tp 1 fp 1 fn 2: P = 1/2, R = 1/3, F1 = 2/(2+1+2) = 2/5.
macro: P = 1/2 (PER alone defined), R = (1+0+0)/3 = 1/3, F1 = (2/3+0+0)/3 = 2/9.
weighted (support 1 each): the same as macro here.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import require

import iescore
from iescore import score_tags
from iescore.cli import main

REF = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
PRED = [["B-PER", "I-PER", "O", "B-PER"], ["O", "O"]]
READERS = Path(__file__).parent / "fixtures" / "readers"


class _Cells(HTMLParser):
    """The text of every <th>/<td> per row and of every <p>, as a browser shows it (entities decoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.notes: list[str] = []
        self._cell: list[str] | None = None
        self._p: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "p":
            self._p = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "p":
            self.notes.append("".join(self._p))
            self._p = None

    def handle_data(self, data):
        for buf in (self._cell, self._p):
            if buf is not None:
                buf.append(data)


def cells(html_text: str) -> _Cells:
    p = _Cells()
    p.feed(html_text)
    return p


def run(capsys, *argv):
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


# --- the report's views ------------------------------------------------------------------

def test_repr_is_one_short_line():
    r = score_tags(reference=REF, prediction=PRED)
    sig = r.signature
    assert repr(r) == (f"Report(documents=2, labels=3, average='micro', precision=0.5000, recall=0.3333, "
                       f"f1=0.4000, signature='{sig[:69]}...')")
    assert len(sig) > 72  # so it is cut
    none = score_tags(reference=[["O"]], prediction=[["O"]])
    assert "precision=n/a, recall=n/a, f1=n/a" in repr(none)


def test_repr_html_holds_the_numbers_by_hand_and_the_signature():
    r = score_tags(reference=REF, prediction=PRED)
    got = cells(r._repr_html_())
    assert got.rows == [
        ["label", "TP", "FP", "FN", "precision %", "recall %", "f1 %", "support"],
        ["LOC", "0", "0", "1", "n/a", "0.00", "0.00", "1"],
        ["ORG", "0", "0", "1", "n/a", "0.00", "0.00", "1"],
        ["PER", "1", "1", "0", "50.00", "100.00", "66.67", "1"],
        ["micro avg", "1", "1", "2", "50.00", "33.33", "40.00", "3"],
        ["macro avg", "", "", "", "50.00", "33.33", "22.22", "3"],
        ["weighted avg", "", "", "", "50.00", "33.33", "22.22", "3"],
    ]
    assert got.notes == ["2 documents; headline average: micro", f"signature: {r.signature}"]


def test_repr_html_escapes_labels_and_the_signature():
    # supertags put the label names into the signature (its own separator '>' written %3E)
    r = score_tags(reference=[["B-A", "O"]], prediction=[["B-A", "O"]], supertags=(("A", "<i>&"),))
    assert "super:A><i%3E&|" in r.signature and r.labels == ("<i>&",)
    page = r._repr_html_()
    assert "<i" not in page and "<td>&lt;i&gt;&amp;</td>" in page and "super:A&gt;&lt;i%3E&amp;|" in page
    got = cells(page)
    assert got.rows[1][0] == "<i>&" and got.notes[-1] == f"signature: {r.signature}"


def test_repr_html_shows_at_most_50_labels():
    labels = [f"L{k:03d}" for k in range(60)]
    r = score_tags(reference=[[f"B-{x}" for x in labels]], prediction=[[f"B-{x}" for x in labels]])
    got = cells(r._repr_html_())
    assert len(got.rows) == 1 + 50 + 3 and got.rows[50][0] == "L049"
    assert got.notes[0] == "10 more labels (report.to_pandas() has every label)"


def test_to_pandas_equals_the_hand_computation():
    pd = require("pandas")
    r = score_tags(reference=REF, prediction=PRED)
    df = r.to_pandas()
    assert list(df.columns) == ["label", "tp", "fp", "fn", "precision", "recall", "f1", "support", "predicted"]
    assert list(df["label"]) == ["LOC", "ORG", "PER", "micro avg", "macro avg", "weighted avg"]
    assert df["tp"].tolist()[:4] == [0, 0, 1, 1] and df["fn"].tolist()[:4] == [1, 1, 0, 2]
    assert df["tp"].isna().tolist() == [False] * 4 + [True] * 2 and str(df["tp"].dtype) == "Int64"
    np.testing.assert_allclose(df["precision"], [np.nan, np.nan, 1 / 2, 1 / 2, 1 / 2, 1 / 2], rtol=1e-15)
    np.testing.assert_allclose(df["recall"], [0, 0, 1, 1 / 3, 1 / 3, 1 / 3], rtol=1e-15)
    np.testing.assert_allclose(df["f1"], [0, 0, 2 / 3, 2 / 5, 2 / 9, 2 / 9], rtol=1e-15)
    assert df["support"].tolist() == [1, 1, 1, 3, 3, 3] and df["predicted"].tolist() == [0, 0, 2, 2, 2, 2]
    assert df.attrs["signature"] == r.signature
    assert len(r.to_pandas(averages=False)) == 3
    assert isinstance(df, pd.DataFrame)
    assert "f_beta" in score_tags(reference=REF, prediction=PRED, beta=2.0).to_pandas().columns


def test_to_pandas_agrees_with_seqeval_on_the_example_file():
    require("pandas")
    seqeval = require("seqeval.metrics")
    lines = Path(iescore.example_path()).read_text(encoding="utf-8").splitlines()
    gold, pred = [[]], [[]]
    for line in lines:
        if not line.strip() or line.startswith("-DOCSTART-"):
            if gold[-1]:
                gold.append([]), pred.append([])
            continue
        *_, g, p = line.split()
        gold[-1].append(g), pred[-1].append(p)
    gold, pred = [s for s in gold if s], [s for s in pred if s]
    theirs = seqeval.classification_report(gold, pred, output_dict=True)
    df = iescore.score_files(iescore.example_path()).to_pandas().set_index("label")
    for label, row in theirs.items():
        if label in ("macro avg", "weighted avg"):
            continue  # seqeval counts an undefined measure as 0 in its means
        ours = df.loc[label]
        assert (ours["precision"], ours["recall"], ours["f1"]) == pytest.approx(
            (row["precision"], row["recall"], row["f1-score"]), abs=1e-12), label
        assert ours["support"] == row["support"], label


def test_to_pandas_without_pandas_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    r = score_tags(reference=REF, prediction=PRED)
    with pytest.raises(ImportError) as exc:
        r.to_pandas()
    assert str(exc.value) == "a DataFrame needs pandas, which is not installed: pip install pandas"


def test_import_iescore_imports_neither_pandas_nor_jinja2():
    code = "import sys, iescore, iescore.cli; assert not {'pandas', 'jinja2'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_to_html_writes_the_page_of_iescore_report(tmp_path, capsys):
    require("jinja2")
    example = iescore.example_path()
    run(capsys, "report", example, "--html", str(tmp_path / "cli.html"))
    r = iescore.score_files(example)
    size = r.to_html(tmp_path / "api.html")
    assert (tmp_path / "api.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    assert size == (tmp_path / "api.html").stat().st_size
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    bad = tmp_path / "no-such-folder" / "r.html"
    with pytest.raises(iescore.InputError) as exc:
        r.to_html(bad)
    assert str(exc.value) == f"to_html {str(bad)!r}: cannot write the file (No such file or directory)"


# --- score_files ---------------------------------------------------------------------------

def _cli_json(capsys, *argv):
    return json.loads(run(capsys, "score", *argv, "--json"))


def test_score_files_equals_the_cli_for_conll(tmp_path, capsys):
    example = iescore.example_path()
    assert iescore.score_files(example).to_dict() == _cli_json(capsys, example)
    # a gold and a prediction file, aligned line by line (each file's last column)
    lines = Path(example).read_text(encoding="utf-8").splitlines()
    (tmp_path / "gold.conll").write_text("\n".join(" ".join(ln.split()[:-1]) for ln in lines) + "\n")
    (tmp_path / "pred.conll").write_text("\n".join(" ".join(ln.split()[:1] + ln.split()[-1:]) for ln in lines) + "\n")
    got = iescore.score_files(tmp_path / "gold.conll", tmp_path / "pred.conll", rule="O(1,1)")
    assert got.to_dict() == _cli_json(capsys, str(tmp_path / "gold.conll"), str(tmp_path / "pred.conll"),
                                      "--rule", "O(1,1)")
    assert "|rule:O(1,1)|" in got.signature


def test_score_files_equals_the_cli_for_jsonl(capsys):
    gold, pred = str(READERS / "gold.jsonl"), str(READERS / "pred.jsonl")
    for level in ("characters", "tokens"):
        got = iescore.score_files(gold, pred, input_format="jsonl", level=level)
        assert got.to_dict() == _cli_json(capsys, gold, pred, "--input-format", "jsonl", "--level", level)
    with pytest.warns(iescore.errors.IEScoreWarning, match="'doc1': LOC 'Tel Aviv'"):  # as the CLI warns
        llm = iescore.score_files(gold, str(READERS / "llm.jsonl"), input_format="jsonl", pred_format="llm",
                                  level="characters")
    assert llm.to_dict() == _cli_json(capsys, gold, str(READERS / "llm.jsonl"), "--input-format", "jsonl",
                                      "--pred-format", "llm", "--level", "characters")
    brat = [str(READERS / "brat" / side) for side in ("gold", "pred")]
    got = iescore.score_files(*brat, input_format="brat", level="tokens", tokenizer="whitespace")
    assert got.to_dict() == _cli_json(capsys, *brat, "--input-format", "brat", "--level", "tokens",
                                      "--tokenizer", "whitespace")
    assert "|level:tokens|tokenizer:whitespace|" in got.signature  # the readers' options are in the rule


def test_score_files_refuses_what_the_cli_refuses(tmp_path):
    gold = READERS / "gold.jsonl"
    with pytest.raises(iescore.InputError) as exc:
        iescore.score_files(gold)
    assert str(exc.value) == (f"{gold}: JSON (its first character is '{{'), not CoNLL columns (the default input "
                              "format); pass input_format='jsonl' and level='characters' or level='tokens' (input "
                              "formats: 'conll', 'brat', 'jsonl', 'docbin', 'llm')")
    with pytest.raises(iescore.ConfigError) as exc:
        iescore.score_files(iescore.example_path(), encoding="rot13")
    assert str(exc.value) == ("unknown encoding 'rot13' (not a text encoding); e.g. 'utf-8', 'utf-16', 'latin-1' "
                              "or 'cp1252'")
    with pytest.raises(iescore.InputError) as exc:
        iescore.score_files(iescore.example_path(), level="tokens")
    assert str(exc.value) == ("level='tokens' is for character-offset input (input_format 'brat', 'jsonl', 'docbin' "
                              "or 'llm'); CoNLL files are scored on their tokens")
    with pytest.raises(iescore.ConfigError) as exc:
        iescore.score_files(gold, READERS / "pred.jsonl", input_format="jsonl")
    assert str(exc.value) == "--input-format jsonl: choose --level characters or --level tokens"


# --- the signature travels with the numbers ----------------------------------------------

def test_csv_starts_with_the_signature_and_pandas_skips_it(tmp_path, capsys):
    pd = require("pandas")
    f = tmp_path / "in.conll"
    f.write_text("Paris B-A#1 B-A#1\nis O O\nnice B-B B-A#1\n", encoding="utf-8")
    out = run(capsys, "score", str(f), "--format", "csv")
    signature = json.loads(run(capsys, "score", str(f), "--json"))["signature"]
    assert out.splitlines()[0] == f"# signature: {signature}"
    df = pd.read_csv(io.StringIO(out), comment="#", keep_default_na=False)
    # A#1: tp 1 fp 1 fn 0 (P = 1/2, R = 1); B: tp 0 fp 0 fn 1 (P undefined: an empty cell)
    assert df["label"].tolist() == ["A#1", "B", "overall"]  # the label holding '#' is quoted, read whole
    assert df[["tp", "fp", "fn"]].values.tolist() == [[1, 1, 0], [0, 0, 1], [1, 1, 1]]
    assert df["precision"].tolist() == ["0.5", "", "0.5"]


def test_trainer_hook_keeps_floats_and_logs_the_signature_once(caplog):
    from iescore.adapters.hf import trainer_batch
    from iescore.adapters.trainer import compute_metrics

    class EvalPrediction:
        predictions = np.array([[1, 2, 0]])
        label_ids = np.array([[1, 2, -100]])

    hook = compute_metrics(["O", "B-PER", "I-PER"], log_signature=True)
    with caplog.at_level(logging.INFO, logger="iescore.adapters.trainer"):
        first, second = hook(EvalPrediction()), hook(EvalPrediction())
    core = iescore.Scorer(scheme="auto")
    core.add_batch(trainer_batch(EvalPrediction.predictions, EvalPrediction.label_ids, id2label=["O", "B-PER", "I-PER"]))
    signature = core.report().signature
    assert hook.signature == signature
    assert [rec.getMessage() for rec in caplog.records] == [f"iescore signature: {signature}"]
    assert first == second and all(type(v) is float for v in first.values())
    quiet = compute_metrics(["O", "B-PER", "I-PER"])
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="iescore.adapters.trainer"):
        quiet(EvalPrediction())
    assert caplog.records == [] and quiet.signature == signature
    # every value a number: the Trainer's default hyperparameter_search objective sums them
    # (a string among them is a TypeError there)
    trainer_utils = require("transformers.trainer_utils")
    metrics = {f"eval_{k}": v for k, v in first.items()}
    assert trainer_utils.default_compute_objective({"eval_loss": 1.0, **metrics}) == pytest.approx(sum(first.values()))


def test_spacy_scorer_returns_the_signature_and_spacy_weighs_the_numbers_only():
    spacy = require("spacy")
    from iescore.adapters.spacy import score_examples
    from spacy.training import Example
    from spacy.training.loop import create_evaluation_callback

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler", config={"scorer": {"@scorers": "iescore.spans.v1", "rule": "O(1,1)"}})
    ruler.add_patterns([{"label": "PER", "pattern": "Ada"}, {"label": "LOC", "pattern": "London"}])
    ref = nlp.make_doc("Ada Lovelace met Babbage in London")
    ref.ents = [ref.char_span(0, 12, "PER"), ref.char_span(17, 24, "PER"), ref.char_span(28, 34, "LOC")]
    examples = [Example(nlp.make_doc(ref.text), ref)]
    # Ada within Ada Lovelace (O(1,1)), London right, Babbage missed: P = 1, R = 2/3, F1 = 4/5
    weighted, scores = create_evaluation_callback(nlp, lambda _: examples, {"ents_f": 1.0, "ents_p": 0.0})()
    assert weighted == pytest.approx(0.8, abs=1e-12)
    report = score_examples([Example(nlp(ref.text), ref)], rule="O(1,1)")
    assert scores["ents_signature"] == report.signature and "rule:O(1,1)" in report.signature


# --- comparisons and agreement ---------------------------------------------------------------

def test_comparison_and_agreement_views(tmp_path):
    from iescore.stats import agreement, compare

    gold = [["B-A", "O"]] * 5
    a = score_tags(reference=gold, prediction=[["B-A", "O"]] * 4 + [["O", "O"]])  # R = 4/5, F1 = 8/9
    b = score_tags(reference=gold, prediction=[["B-A", "O"]] * 2 + [["O", "O"]] * 3)  # R = 2/5, F1 = 4/7
    c = compare({"a": a, "b": b}, resamples=200, seed=1)
    got = cells(c._repr_html_())
    assert got.rows[0][0] == "system" and [r[0] for r in got.rows[1:]] == ["a (baseline)", "b"]
    assert got.rows[1][1].startswith("88.89 [") and got.rows[2][1].startswith("57.14 [")
    assert got.notes[-1] == f"signature: {c.signature}"
    df = c.to_pandas() if _has("pandas") else None
    if df is not None:
        assert df["system"].tolist() == ["a", "b"] and df["baseline"].tolist() == [True, False]
        assert df["f1"].tolist() == pytest.approx([8 / 9, 4 / 7]) and df["recall"].tolist() == pytest.approx([0.8, 0.4])
        assert np.isnan(df["p_value"][0]) and df["p_value"][1] == c.systems[1]["p_value"]
        assert df.attrs["signature"] == c.signature
    size = c.to_html(tmp_path / "c.html")
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert size == len(page.encode()) and page.startswith("<!DOCTYPE html>") and cells(page).rows == got.rows
    # A and B agree on PER; only A tags the LOC: F1 2/3 both ways, kappa 7/12 (agreement's docstring)
    ag = agreement({"A": [["B-PER", "O", "B-LOC"]], "B": [["B-PER", "O", "O"]]})
    got = cells(ag._repr_html_())
    assert got.rows[1] == ["A", "B", "66.67", "66.67", "66.67", "0.5833"]
    assert got.notes[-1] == f"signature: {ag.signature}"
    if _has("pandas"):
        df = ag.to_pandas()
        assert df[["a", "b"]].values.tolist() == [["A", "B"]] and df["kappa"][0] == pytest.approx(7 / 12)
        assert df.attrs["t_units"] == 5 and df.attrs["signature"] == ag.signature
    ag.to_html(tmp_path / "a.html")
    with pytest.raises(iescore.InputError) as exc:
        ag.to_html(tmp_path / "no-such-folder" / "a.html")
    assert str(exc.value) == (f"to_html {str(tmp_path / 'no-such-folder' / 'a.html')!r}: cannot write the file "
                              "(No such file or directory)")
    assert cells((tmp_path / "a.html").read_text(encoding="utf-8")).rows == got.rows


def _has(module: str) -> bool:
    try:
        require(module)
    except BaseException:  # a skip outside CI
        return False
    return True
