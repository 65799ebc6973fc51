"""keep_types, remove_types and the type map (supertags): types left out of both sides
before matching, as if never annotated; counts computed by hand, and seqscore's
``process --keep-types/--remove-types/--type-map`` then ``score`` on a CoNLL-2003 output."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from conftest import require
from seqscore_helpers import phrase_counts, run_seqscore, token_and_tag_files

import iescore
from iescore import Document, Span, Template
from iescore.cli import main
from iescore.config import Config
from iescore.errors import ConfigError, IEScoreWarning, InputError
from iescore.toolbox.commands import convert_file, summarize_file, validate_file
from iescore.toolbox.tags import TypeFilter

# reference chunks: PER(0,2) LOC(3,4) MISC(4,6) | ORG(0,1) PER(2,3)
# predicted chunks: PER(0,2) MISC(3,4) MISC(4,5) | ORG(0,1) LOC(2,3)
REF = [["B-PER", "I-PER", "O", "B-LOC", "B-MISC", "I-MISC"], ["B-ORG", "O", "B-PER"]]
PRED = [["B-PER", "I-PER", "O", "B-MISC", "B-MISC", "O"], ["B-ORG", "O", "B-LOC"]]

# (options, labels, tp, fp, fn, token counts), by hand; the token counts are: tokens,
# equal tags, tokens not O on one side at least, and those of them with equal tags; the
# tags of a chunk left out are read as O
CASES = [
    ({}, ("LOC", "MISC", "ORG", "PER"), 2, 3, 3, [9, 6, 7, 4]),
    # without MISC: FP LOC(2,3); FN LOC(3,4), PER(2,3); tokens 3 (B-LOC/O) and 8 (B-PER/B-LOC) differ
    ({"remove_types": "MISC"}, ("LOC", "ORG", "PER"), 2, 1, 2, [9, 7, 5, 3]),
    ({"keep_types": ["PER", "LOC"]}, ("LOC", "PER"), 1, 1, 2, [9, 7, 4, 2]),
    # the map first: PER and LOC become X, then X is kept
    ({"supertags": "PER=X,LOC=X", "keep_types": "X"}, ("X",), 2, 0, 1, [9, 7, 4, 2]),
]


@pytest.mark.parametrize("detail", ["full", "prf"])
@pytest.mark.parametrize("options,labels,tp,fp,fn,tokens", CASES)
def test_tags_by_hand(options, labels, tp, fp, fn, tokens, detail):
    r = iescore.score_tags(reference=REF, prediction=PRED, detail=detail, **options)
    assert r.labels == labels and "O" not in r.labels
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (tp, fp, fn)
    assert r.token_counts.sum(0).tolist() == tokens


def test_removed_counts_and_signature():
    r = iescore.score_tags(reference=REF, prediction=PRED, keep_types="PER,LOC")
    assert r.repairs["reference"] == {"repaired": 0, "removed:MISC": 1, "removed:ORG": 1}
    assert r.repairs["prediction"] == {"repaired": 0, "removed:MISC": 2, "removed:ORG": 1}
    assert "|keep:LOC,PER|" in r.signature
    cfg = Config(supertags={"A": "B"}, remove_types=["x|y", "MISC"])
    assert "|super:A>B|remove:MISC,x%7Cy|" in cfg.signature()
    assert Config.from_signature(cfg.signature()) == cfg


def test_keep_and_remove_are_refused_together():
    with pytest.raises(ConfigError, match="cannot be combined"):
        Config(keep_types="PER", remove_types="LOC")
    with pytest.raises(ConfigError, match="non-empty string"):
        Config(keep_types=["PER", 3])


def test_a_continuation_is_never_orphaned():
    # B-PER I-LOC I-LOC: decoded first (PER(0,1), LOC(1,3) repaired); removing PER leaves LOC(1,3)
    r = iescore.score_tags(reference=[["B-PER", "I-LOC", "I-LOC"]], prediction=[["O", "B-LOC", "I-LOC"]],
                           scheme="IOB2", remove_types="PER")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)


def test_unknown_types_warn_with_the_types_present():
    with pytest.warns(IEScoreWarning) as caught:
        iescore.score_tags(reference=REF, prediction=PRED, keep_types="per,LOCC,MISC")
    messages = sorted(str(w.message) for w in caught)
    assert "type 'LOCC' is not in the input (did you mean 'LOC'?)" in messages[0]
    assert "type 'per' is not in the input (did you mean 'PER'?)" in messages[1]
    assert "the types present: 'LOC', 'MISC', 'ORG', 'PER'" in messages[0]
    # none of the types to keep in the input: nothing would be scored, an error
    with pytest.raises(InputError, match=r"keep_types: type 'LOCC' is not in the input \(did you mean 'LOC'\?\).*"
                                         r"; none of the types to keep is in the input"):
        iescore.score_tags(reference=REF, prediction=PRED, keep_types="per,LOCC")
    with pytest.warns(IEScoreWarning, match="'PER' is not in the input after the type map"):
        iescore.score_tags(reference=REF, prediction=PRED, supertags="PER=NE", remove_types="PER")


def test_documents_and_templates():
    toks = "a b c d e".split()
    ref = [Document("d", toks, spans=(Span("PER", 0, 2), Span("LOC", 1, 3), Span("MISC", 4, 5)))]
    pred = [[Span("PER", 0, 2), Span("LOC", 2, 3), Span("MISC", 3, 5)]]
    r = iescore.score(reference=ref, prediction=pred, remove_types="LOC")
    # PER matches; MISC(4,5) vs MISC(3,5): FN and FP; the overlapping LOC is gone (no TS error)
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 1, 1) and r.labels == ("MISC", "PER")
    assert r.ts_error is None
    t_ref = [Template("t", {"name": [["Al"]], "date": [["May"]]})]
    t_pred = [Template("t", {"name": [["Al"]], "date": [["June"]]})]
    r = iescore.score_templates(reference=t_ref, prediction=t_pred, keep_types="name")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0) and r.labels == ("name",)


def test_streamed_cli_equals_one_shot(tmp_path, capsys, monkeypatch):
    import iescore.io.conll_stream as cs

    path = tmp_path / "x.conll"
    lines = []
    for ref, pred in zip(REF * 3, PRED * 3):
        lines += [f"w {g} {p}" for g, p in zip(ref, pred)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(cs, "BATCH_TOKENS", 4)
    assert main(["score", str(path), "--json", "--keep-types", "PER,LOC"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (3, 3, 6)


def test_every_command_accepts_the_options(tmp_path, capsys):
    gold = tmp_path / "g.conll"
    pred = tmp_path / "p.conll"
    both = tmp_path / "b.conll"
    gold.write_text("John B-PER\nin O\nParis B-LOC\nEU B-MISC\n", encoding="utf-8")
    pred.write_text("John B-PER\nin O\nParis B-MISC\nEU B-MISC\n", encoding="utf-8")
    both.write_text("John B-PER B-PER\nin O O\nParis B-LOC B-MISC\nEU B-MISC B-MISC\n", encoding="utf-8")
    opts = ["--type-map", "LOC=X", "--remove-types", "MISC"]
    for argv in (["score", str(both)], ["score", str(gold), str(pred)],
                 ["report", str(both), "--html", str(tmp_path / "r.html")],
                 ["compare", str(gold), str(pred), "--resamples", "10"], ["agree", str(gold), str(pred)]):
        assert main(argv + opts + ["--json"]) == 0, argv
        out = capsys.readouterr().out
        assert "remove:MISC" in out and "super:LOC>X" in out, argv
    assert main(["score", str(both), "--keep-types", "A", "--remove-types", "B"]) == 2
    assert "cannot be combined" in capsys.readouterr().err
    out = tmp_path / "o.conll"
    for argv in (["validate", str(both), "--scheme", "IOB2"], ["summarize", str(both), "--json"],
                 ["repair", str(both), "--scheme", "IOB2", "--output", str(out)],
                 ["convert", str(both), "--from", "IOB2", "--to", "IOBES", "--output", str(out)]):
        assert main(argv + opts) == 0, argv
    assert out.read_text(encoding="utf-8") == "John S-PER S-PER\nin O O\nParis S-X O\nEU O O\n"


def test_toolbox_by_hand(tmp_path):
    path = tmp_path / "x.conll"
    # gold: PER(0,2) MISC(3,4) then an invalid O -> I-LOC; prediction: B-PER I-MISC (invalid)
    path.write_text("a B-PER B-PER\nb I-PER I-MISC\nc O O\nd B-MISC O\ne O I-LOC\n", encoding="utf-8")
    assert summarize_file(str(path), "gold", types=TypeFilter(remove="MISC"))["mentions"] == {"PER": 1}
    assert summarize_file(str(path), "pred", types=TypeFilter("PER=NE,LOC=NE"))["mentions"] == {
        "MISC": 1, "NE": 2}
    v = validate_file(str(path), "IOB2", types=TypeFilter(keep="LOC"))
    assert v.counts == {"gold": 0, "pred": 1}  # O -> I-LOC; B-PER -> I-MISC has no LOC tag
    v = validate_file(str(path), "IOB2", types=TypeFilter(keep="PER"))
    assert v.counts == {"gold": 0, "pred": 1}  # B-PER -> I-MISC
    out = tmp_path / "o.conll"
    convert_file(str(path), str(out), "IOB2", "IOB2", "conlleval", types=TypeFilter(remove="PER"))
    assert out.read_text(encoding="utf-8") == "a O O\nb O B-MISC\nc O O\nd B-MISC O\ne O B-LOC\n"


ROW = re.compile(r"^\|\s*(\S+)\s*\|.*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|$")


@pytest.mark.parametrize("options", [
    {"keep_types": "PER,LOC"},
    {"remove_types": "MISC", "supertags": {"PER": "NE", "ORG": "NE"}},
])
def test_equal_to_seqscore_process_then_score(data, tmp_path, options):
    require("seqscore")
    gold_path = data / "conll2003-eng" / "eng.testb"
    _, _, pred_path = token_and_tag_files(data, "florian", tmp_path)  # gold.txt, pred.txt: seqscore's input
    args = []
    if "keep_types" in options:
        args += ["--keep-types", options["keep_types"]]
    if "remove_types" in options:
        args += ["--remove-types", options["remove_types"]]
    if "supertags" in options:
        inverse: dict[str, list[str]] = {}
        for a, b in options["supertags"].items():
            inverse.setdefault(b, []).append(a)
        (tmp_path / "map.json").write_text(json.dumps(inverse), encoding="utf-8")
        args += ["--type-map", str(tmp_path / "map.json")]
    for name in ("gold", "pred"):
        run_seqscore("process", "--labels", "IOB", *args, str(tmp_path / f"{name}.txt"), str(tmp_path / f"{name}2.txt"))
    table = run_seqscore("score", "--labels", "IOB", "--repair-method", "conlleval",
                      "--reference", str(tmp_path / "gold2.txt"), str(tmp_path / "pred2.txt"))
    theirs = {m.group(1): tuple(map(int, m.groups()[1:])) for m in map(ROW.match, table.splitlines()) if m}
    s = iescore.Scorer(scheme="IOB1", **options)
    s.add_batch(iescore.io.conll.read_conll(str(gold_path), str(pred_path)))
    ours = phrase_counts(s.report().to_dict())
    assert ours == theirs


@pytest.mark.parametrize("seed", range(20))
def test_removal_equals_the_spans_never_annotated(seed):
    """Property: scoring with remove_types (or keep_types) gives the counts of the same
    documents whose spans of those types were deleted beforehand, under every rule and
    counting (the TS model's counts too)."""
    import random

    rng = random.Random(seed)
    types = ["A", "B", "C"]
    refs, preds, refs_cut, preds_cut = [], [], [], []
    gone = {rng.choice(types)}

    def spans(n):
        out = set()
        for _ in range(rng.randint(0, 5)):
            s = rng.randrange(n)
            out.add(Span(rng.choice(types), s, min(n, s + rng.randint(1, 3))))
        return sorted(out, key=lambda sp: (sp.start, sp.end, sp.label))

    for k in range(4):
        toks = [f"t{i}" for i in range(12)]
        r, p = spans(12), spans(12)
        refs.append(Document(str(k), toks, spans=tuple(r)))
        preds.append(p)
        refs_cut.append(Document(str(k), toks, spans=tuple(s for s in r if s.label not in gone)))
        preds_cut.append([s for s in p if s.label not in gone])
    for rule, counting in (("E", "any"), ("O(1,1)", "one-to-one"), ("O(inf,inf)", "any")):
        want = iescore.score(reference=refs_cut, prediction=preds_cut, rule=rule, counting=counting)
        for opt in ({"remove_types": sorted(gone)}, {"keep_types": sorted(set(types) - gone)}):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IEScoreWarning)  # a type may be absent from the draw
                got = iescore.score(reference=refs, prediction=preds, rule=rule, counting=counting, **opt)
            assert got.overall == want.overall
            assert set(got.labels) <= set(types) - gone
            assert (got.ts_error is None) == (want.ts_error is None)
