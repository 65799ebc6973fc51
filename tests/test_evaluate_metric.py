"""The `evaluate` metric module: offline loading, the card's examples, CoNLL-2003 numbers, distribution."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

evaluate = require("evaluate")

import iescore.metric_card as card

from iescore import Scorer
from iescore.io.conll import read_conll
from iescore.render.flat import seqeval_style


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(card.PATH)


def test_installed_package_tells_the_path():
    out = subprocess.run([sys.executable, "-m", "iescore", "metric-path"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == card.PATH
    assert (Path(card.PATH) / "metric_card.py").is_file()
    assert (Path(card.PATH) / "README.md").read_text().startswith("---\ntitle: iescore\n")


@pytest.mark.filterwarnings(r"ignore:.* undefined \(0/0\), set to:UserWarning")  # the examples show zero_division
def test_card_examples_run_as_doctests():
    res = doctest.testfile(str(Path(card.PATH) / "README.md"), module_relative=False)
    assert res.attempted >= 10 and res.failed == 0


@pytest.mark.filterwarnings(r"ignore:.* undefined \(0/0\), set to:UserWarning")  # the examples show zero_division
def test_script_docstring_example_runs():
    mod = evaluate.load(card.SCRIPT)  # the script path works too
    assert mod.compute(predictions=[["B-X"]], references=[["B-X"]])["overall_f1"] == 1.0
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("iescore_metric_script", card.SCRIPT)
    m = module_from_spec(spec)
    spec.loader.exec_module(m)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(m._KWARGS_DESCRIPTION, {}, "kwargs", card.SCRIPT, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3


def test_seqeval_keys_and_plain_types(metric):
    with pytest.warns(UserWarning, match=r"^LOC\.recall undefined \(0/0\), set to 0 \(zero_division='warn'"):
        out = metric.compute(predictions=[["B-PER", "O", "B-LOC"]], references=[["B-PER", "O", "O"]])
    assert set(out) >= {"overall_precision", "overall_recall", "overall_f1", "overall_accuracy", "PER", "LOC"}
    assert out["LOC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 0}  # recall 0/0 -> zero_division
    assert (out["overall_precision"], out["overall_recall"], out["overall_accuracy"]) == (0.5, 1.0, 2 / 3)
    for k, v in out.items():
        if k != "signature" and not isinstance(v, dict):
            assert type(v) in (float, int), k
    out = metric.compute(predictions=[["B-PER", "O", "B-LOC"]], references=[["B-PER", "O", "O"]], zero_division=1.0)
    assert out["LOC"]["recall"] == 1.0


def _team(data, team):
    from dist_worker import sentences

    gold = str(data / "conll2003-eng" / "eng.testb")
    pred = str(data / "conll2003-shared-task-outputs" / "results" / team / "eng.testb")
    refs, preds = sentences(gold, pred)
    return read_conll(gold, pred), refs, preds


@pytest.mark.parametrize("team", ["florian", "klein", "whitelaw"])
def test_conll2003_numbers_equal_the_core(metric, data, team):
    batch, refs, preds = _team(data, team)
    s = Scorer(scheme="IOB1")
    s.add_batch(batch)
    core = seqeval_style(s.report())
    out = metric.compute(predictions=preds, references=refs, scheme="IOB1")
    for k in ("overall_precision", "overall_recall", "overall_f1", "overall_ser", "overall_ts_f1_macro", "PER", "LOC"):
        assert out[k] == core[k], k
    # token accuracy differs only by conlleval's -DOCSTART- lines, which the metric never sees
    assert out["overall_accuracy"] == pytest.approx(
        (core["overall_accuracy"] * 46666 - 231) / 46435, abs=1e-12
    )
    if team == "florian":
        assert f"{100 * out['overall_f1']:.2f}" == "88.76"


def test_distributed_equals_single(data, tmp_path):
    """Two real processes (evaluate meets them through file locks) give the single-process result."""
    _, refs, preds = _team(data, "chieu")
    single = evaluate.load(card.PATH).compute(predictions=preds, references=refs)
    gold = str(data / "conll2003-eng" / "eng.testb")
    pred = str(data / "conll2003-shared-task-outputs" / "results" / "chieu" / "eng.testb")
    worker = str(Path(__file__).with_name("dist_worker.py"))
    outs = [tmp_path / f"out{r}.json" for r in range(2)]
    procs = [
        subprocess.Popen([sys.executable, worker, str(r), "2", str(tmp_path / "cache"), str(outs[r]), gold, pred])
        for r in range(2)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    assert json.loads(outs[1].read_text()) is None
    assert json.loads(outs[0].read_text()) == single


@pytest.mark.filterwarnings(r"ignore:overall_accuracy undefined \(0/0\):UserWarning")  # no tokens to count
def test_span_input_compared_as_strings_needs_tokens(metric):
    ref = [[{"label": "PER", "start": 0, "end": 2}]]
    with pytest.raises(ValueError, match="compare strings: pass tokens="):
        metric.compute(predictions=ref, references=ref, setting="OBD")
    out = metric.compute(predictions=[[{"label": "PER", "start": 0, "end": 1}]], references=ref, setting="OBD",
                         rule="O(0,1)", tokens=[["Al", "Roth"]])
    assert out["overall_f1"] == 1.0
