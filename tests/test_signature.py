"""The signature rebuilds the configuration exactly, and names the reference data (SPEC §8)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import Config, ConfigError, Document, Scorer, Span, score, score_tags
from iescore.config import DOCUMENTS, MISALIGNED, MISSING, NORMALISERS, SUBWORDS, Rule
from iescore.decode import SCHEMES
from iescore.io.conll import read_conll
from iescore.io.llm import ALIGN

# --- numbers and labels written exactly -------------------------------------------------


def test_floats_are_written_exactly():
    # 6 significant digits would print 1.0000001 as 1 and lose it
    cfg = Config(beta=1.0000001, token_weight=0.1, separator_weight=1 / 3, ser_weights=(0.3, 1e-9, 2.5))
    back = Config.from_signature(cfg.signature())
    assert back == cfg
    assert back.beta == 1.0000001 and back.separator_weight == 1 / 3
    assert "beta:1.0000001" in cfg.signature()
    assert Config(beta=1.0000001).signature() != Config().signature()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(), st.text()), max_size=4, unique_by=lambda p: p[0]))
def test_supertag_labels_with_any_characters_round_trip(pairs):
    pairs += [("a|b", "c,d"), ("x>y", "z:w"), ("%7C", "q=r")]  # the reserved characters, always
    cfg = Config(supertags=pairs)
    assert Config.from_signature(cfg.signature()) == cfg


def test_scheme_aliases_are_canonical():
    for alias, name in (("BIO", "IOB2"), ("bio", "IOB2"), ("iob1", "IOB1"), ("biluo", "BILOU"), ("BIOES", "IOBES")):
        assert Config(scheme=alias) == Config(scheme=name)
        assert f"|scheme:{name}|" in Config(scheme=alias).signature()
    r = score_tags(reference=[["B-X", "I-X"]], prediction=[["B-X", "I-X"]], scheme="bio")
    assert "|scheme:IOB2|" in r.signature
    with pytest.raises(ConfigError, match="unknown tag scheme 'BIOX'; valid: .*IOB2"):
        Config(scheme="BIOX")


# --- options that change numbers ----------------------------------------------------------


def _conll(tmp_path, text, name="f.conll"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.filterwarnings("ignore:.*is the same column given twice:iescore.errors.IEScoreWarning")
def test_documents_mode_is_recorded_with_auto_resolved(tmp_path):
    text = "-DOCSTART- O O\n\nAl B-PER B-PER\n\nBo B-PER O\n"
    path = _conll(tmp_path, text)
    sigs = {}
    for mode in ("auto", "docstart", "sentence"):
        s = Scorer(scheme="IOB2", mode="match-best")
        s.add_batch(read_conll(path, documents=mode))
        sigs[mode] = s.report().signature
    assert "|docs:docstart|" in sigs["auto"] and "|docs:sentence|" in sigs["sentence"]
    assert sigs["auto"] == sigs["docstart"] != sigs["sentence"]
    assert Config.from_signature(sigs["sentence"]).documents == "sentence"
    # no -DOCSTART- line: auto means sentences
    s = Scorer(scheme="IOB2")
    s.add_batch(read_conll(_conll(tmp_path, "Al B-PER B-PER\n", "g.conll")))
    assert s.config.documents == "sentence"
    # a scorer cannot hold batches read both ways under one signature
    with pytest.raises(ConfigError, match="documents='sentence' but the scorer has documents='docstart'"):
        s = Scorer(scheme="IOB2")
        s.add_batch(read_conll(path, documents="docstart"))
        s.add_batch(read_conll(_conll(tmp_path, "Al B-PER B-PER\n", "h.conll"), documents="sentence"))


def test_cli_records_documents(tmp_path, capsys):
    import json

    from iescore.cli import main

    path = _conll(tmp_path, "-DOCSTART- O O\n\nAl B-PER B-PER\n")
    assert main(["score", path, "--json"]) == 0
    assert "|docs:docstart|" in json.loads(capsys.readouterr().out)["signature"]


def test_subword_strategy_is_recorded():
    from iescore.adapters.hf import trainer_batch

    labels = ["O", "B-X", "I-X"]
    logits = np.zeros((1, 3, 3))
    logits[0, :, 1] = 1
    sigs = []
    for strategy in SUBWORDS:
        s = Scorer(scheme="IOB2")
        s.add_batch(trainer_batch(logits, [[1, -100, 2]], id2label=labels, word_ids=[[0, 0, 1]], strategy=strategy))
        sigs.append(s.report().signature)
        assert f"|subwords:{strategy}|" in sigs[-1]
    assert len(set(sigs)) == 3


def test_pipeline_policy_is_recorded_on_the_scorer():
    from iescore.adapters.hf import pipeline_to_spans

    from iescore.text import document_from_text

    doc = document_from_text("d1", "Ada Lovelace met Babbage", tokenizer="regex")
    out = [{"entity_group": "PER", "score": 0.9, "start": 0, "end": 6}]  # "Ada Lo": half a token
    sigs = {}
    for policy in ("expand", "contract"):
        s = Scorer()
        spans, _ = pipeline_to_spans(out, doc, misaligned=policy, scorer=s)
        s.add(reference=[doc], prediction=[spans])
        r = s.report()
        sigs[policy] = r.signature
        assert f"|misaligned:{policy}|" in r.signature and r.repairs["adapter"] == {"misaligned": 1}
    assert sigs["expand"] != sigs["contract"]


def test_spacy_policies_are_recorded():
    spacy = pytest.importorskip("spacy")
    from iescore.adapters.spacy import score_examples
    from spacy.tokens import Span as SpacySpan
    from spacy.training import Example

    nlp = spacy.blank("en")
    ref, pred = nlp("Ada Lovelace met Babbage"), nlp("Ada Lovelace met Babbage")
    ref.ents = [SpacySpan(ref, 0, 2, "PER")]
    pred.ents = [SpacySpan(pred, 0, 2, "PER")]
    r = score_examples([Example(pred, ref)], misaligned="contract", missing="outside")
    assert "|misaligned:contract|missing:outside|" in r.signature
    back = Config.from_signature(r.signature)
    assert (back.misaligned, back.missing) == ("contract", "outside")


def test_different_unit_weights_never_share_a_signature():
    toks = ("a", "b", "c")
    ref = [Span("X", 0, 2)]
    pred = [[Span("X", 1, 3)]]
    sigs = set()
    for tw in ((1, 1, 1), (1, 2, 1), (2, 1, 1)):
        r = score(reference=[Document("d", toks, tuple(ref), token_weights=tw)], prediction=pred)
        assert "tsw:1,1,unit=" in r.signature
        sigs.add(r.config.signature())
    assert len(sigs) == 3
    # documents without weights record no digest
    assert "unit" not in score(reference=[Document("d", toks, tuple(ref))], prediction=pred).signature


def test_llm_alignment_is_recorded():
    from iescore.io.chars import TextDocument
    from iescore.io.llm import Extraction, score_llm

    # "Al" occurs at characters 0 and 7; the reference's only entity is "Al Roth" (7..14)
    ref = [TextDocument("d", "Al met Al Roth.", (Span("PER", 7, 14),))]
    pred = [Extraction("d", (("PER", "Al"),))]
    first = score_llm(ref, pred, level="characters", align="first")  # at 0: 1 FP
    every = score_llm(ref, pred, level="characters", align="every")  # at 0 and 7: 2 FP
    assert (first.overall.tp, first.overall.fp, every.overall.tp, every.overall.fp) == (0, 1, 0, 2)
    assert "|level:characters|align:first|" in first.signature
    assert "|level:characters|align:every|" in every.signature
    assert Config.from_signature(every.signature).align == "every"
    # the policy is not an option of OBD, which places nothing
    obd = score_llm(ref, pred, level="characters", align="every", setting="OBD")
    assert "align:" not in obd.signature and Config.from_signature(obd.signature).align is None
    with pytest.raises(ConfigError, match=r"^unknown align 'evry' \(did you mean 'every'\?\); valid: 'first', "
                                          r"'every' or 'unique' \(or None: not used\)$"):
        Config(align="evry")


def test_metric_zero_division_is_recorded():
    from conftest import require

    evaluate = require("evaluate")
    import iescore.metric_card as card

    metric = evaluate.load(card.PATH)
    # LOC is predicted but never in the reference: its recall is 0/0
    kw = dict(predictions=[["B-PER", "B-LOC"]], references=[["B-PER", "O"]])
    zero = metric.compute(zero_division=0, **kw)
    one = metric.compute(zero_division=1, **kw)
    with pytest.warns(UserWarning, match="undefined"):
        warned = metric.compute(**kw)
    assert (zero["LOC"]["recall"], one["LOC"]["recall"], warned["LOC"]["recall"]) == (0.0, 1.0, 0.0)
    assert one["signature"] == zero["signature"] + "|zero_division:1"
    assert warned == zero  # "warn" gives 0, as zero_division=0 does, and the same signature


def _templates():
    from iescore import Template

    ref = [Template("a", {"P": (("x", "y"),)}), Template("b", {"L": (("z",),)})]
    pred = [Template("a", {"P": (("x", "y"),)}), Template("b", {})]
    return ref, pred


def test_an_empty_batch_or_shard_leaves_the_template_digest():
    from iescore import score_templates
    from iescore.scoring.state import load_state, merge_states

    ref, pred = _templates()
    one = score_templates(reference=ref, prediction=pred, setting="OBD").signature
    a = Scorer(setting="OBD")
    a.add(reference=ref, prediction=pred)
    empty = Scorer(setting="OBD")
    empty.add(reference=[], prediction=[])  # no documents: nothing to describe
    assert a.merge(empty).report().signature == empty.merge(a).report().signature == one
    assert merge_states([load_state(a.to_state()), load_state(empty.to_state())]).report().signature == one
    a.add(reference=[], prediction=[])
    assert a.report().signature == one
    # a template without fillers is a document all the same: another digest
    from iescore import Template

    b = Scorer(setting="OBD")
    b.add(reference=[*ref, Template("c", {})], prediction=[*pred, Template("c", {})])
    assert b.report().signature != one


# --- every option round-trips, and the rebuilt configuration gives the same numbers ---------------

LABELS = ("A", "B", "C")


@st.composite
def configs(draw):
    kind = draw(st.sampled_from(["exact", "contain", "overlap"]))
    n = st.one_of(st.integers(0, 3), st.just(float("inf")))
    rule = Rule(kind) if kind == "exact" else Rule(kind, draw(n), 0 if kind == "contain" else draw(n))
    weight = st.floats(0, 10, allow_nan=False, allow_infinity=False)
    return Config(
        setting=draw(st.sampled_from(["AO", "OBD"])),
        rule=rule,
        counting=draw(st.sampled_from(["any", "one-to-one"])),
        mode=draw(st.sampled_from(["match-all", "match-best", "one-per-string"])),
        scheme=draw(st.sampled_from([*SCHEMES, "auto", "spans", "bio", "iob1", "BILUO"])),
        repair=draw(st.sampled_from(["conlleval", "strict", "discard"])),
        average=draw(st.sampled_from(["micro", "macro", "weighted"])),
        normaliser=draw(st.sampled_from([*NORMALISERS, "lower+whitespace"])),
        beta=draw(st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False)),
        supertags=draw(st.lists(st.tuples(st.sampled_from(LABELS), st.text(max_size=4)), max_size=3,
                                unique_by=lambda p: p[0])),
        token_weight=draw(weight),
        separator_weight=draw(weight),
        ser_weights=(draw(weight), draw(weight), draw(weight)),
        unit_weights=draw(st.one_of(st.none(), st.text("0123456789abcdef", min_size=16, max_size=16))),
        documents=draw(st.one_of(st.none(), st.sampled_from(DOCUMENTS))),
        subwords=draw(st.one_of(st.none(), st.sampled_from(SUBWORDS))),
        misaligned=draw(st.one_of(st.none(), st.sampled_from(MISALIGNED))),
        missing=draw(st.one_of(st.none(), st.sampled_from(MISSING))),
        align=draw(st.one_of(st.none(), st.sampled_from(ALIGN))),
    )


@st.composite
def corpora(draw):
    docs, preds = [], []
    for k in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 8))
        toks = tuple(draw(st.lists(st.sampled_from(["a", "B", "c."]), min_size=n, max_size=n)))

        def spans():
            out = []
            for _ in range(draw(st.integers(0, 3))):
                a = draw(st.integers(0, n - 1))
                out.append(Span(draw(st.sampled_from(LABELS)), a, draw(st.integers(a + 1, n))))
            return tuple(out)

        weights = draw(st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=n, max_size=n)))
        docs.append(Document(f"d{k}", toks, spans(), token_weights=weights))
        preds.append(list(spans()))
    return docs, preds


def _outcome(fn):
    try:
        return fn().to_dict()
    except (ConfigError, ValueError) as exc:  # the same error both times
        return repr(exc)


# a drawn corpus may share no label between its sides, and drawn supertags may make labels
# that differ only by surrounding whitespace: iescore warns of both
@pytest.mark.filterwarnings("ignore:no predicted label occurs in the reference:iescore.errors.IEScoreWarning")
@pytest.mark.filterwarnings("ignore:labels .* differ only by:iescore.errors.IEScoreWarning")
@settings(max_examples=150, deadline=None)
@given(configs(), corpora())
def test_signature_rebuilds_the_configuration_and_the_numbers(cfg, corpus):
    sig = cfg.signature()
    back = Config.from_signature(sig)
    assert back == cfg and back.signature() == sig
    docs, preds = corpus
    first = _outcome(lambda: score(reference=docs, prediction=preds, config=cfg))
    again = _outcome(lambda: score(reference=docs, prediction=preds, config=Config.from_signature(sig)))
    assert first == again
    if isinstance(first, dict):
        assert Config.from_signature(first["signature"]).with_(unit_weights=None) == cfg.with_(unit_weights=None)


@settings(max_examples=100, deadline=None)
@given(configs(), st.data())
def test_signature_rebuilds_the_numbers_of_tag_input(cfg, data):
    name = cfg.scheme if cfg.scheme in SCHEMES else "IOB2"
    letters = list(SCHEMES[name].letters)
    tag = st.one_of(st.just("O"), st.builds(lambda p, lab: f"{p}-{lab}", st.sampled_from(letters),
                                            st.sampled_from(LABELS)))
    ref = data.draw(st.lists(st.lists(tag, min_size=1, max_size=6), min_size=1, max_size=3))
    pred = [data.draw(st.lists(tag, min_size=len(r), max_size=len(r))) for r in ref]
    toks = [["w"] * len(r) for r in ref]
    cfg = cfg.with_(unit_weights=None)  # tag input carries no per-t-unit weights

    def run(c):
        return lambda: score_tags(reference=ref, prediction=pred, tokens=toks, config=c)

    first = _outcome(run(cfg))
    assert first == _outcome(run(Config.from_signature(cfg.signature())))
    if isinstance(first, dict):
        assert Config.from_signature(first["signature"]) == Config.from_signature(
            cfg.with_(scheme=Config.from_signature(first["signature"]).scheme).signature())


# --- the reference data's digest -------------------------------------------------------------


def _docs():
    a = Document("a", ("x", "y", "z"), (Span("P", 0, 1), Span("L", 1, 3)))
    b = Document("b", ("u", "v"), (Span("P", 1, 2),))
    c = Document("c", ("w",))
    return [a, b, c], [[Span("P", 0, 1)], [], [Span("L", 0, 1)]]


def test_reference_digest_is_the_same_for_shards_and_one_call():
    docs, preds = _docs()
    one = score(reference=docs, prediction=preds)
    ref = one.signature.rsplit("|", 1)[1]
    assert ref.startswith("ref:") and len(ref) == 4 + 16
    assert one.signature == one.config.signature() + "|" + ref
    assert one.to_dict()["signature"] == one.signature
    a, b = Scorer(), Scorer()
    a.add(reference=docs[2:], prediction=preds[2:])
    b.add(reference=docs[:2], prediction=preds[:2])
    assert a.merge(b).report().signature == one.signature  # another order, the same data
    # a different prediction, the same reference: the same signature
    assert score(reference=docs, prediction=[[], [], []]).signature == one.signature
    # from_signature ignores the digest
    assert Config.from_signature(one.signature) == one.config


def test_reference_digest_changes_with_the_reference():
    docs, preds = _docs()
    base = score(reference=docs, prediction=preds).signature
    moved = [Document("a", ("x", "y", "z"), (Span("P", 0, 1), Span("L", 1, 2))), *docs[1:]]
    relabelled = [Document("a", ("x", "y", "z"), (Span("P", 0, 1), Span("P", 1, 3))), *docs[1:]]
    renamed = [docs[0], Document("B", ("u", "v"), (Span("P", 1, 2),)), docs[2]]
    longer = [docs[0], docs[1], Document("c", ("w", "w"))]
    sigs = {base}
    for ref in (moved, relabelled, renamed, longer, docs[:2]):
        sigs.add(score(reference=ref, prediction=[[]] * len(ref)).signature)
    assert len(sigs) == 6
    # the same items held by other documents
    x, y = (("p", "q"), ("r", "s"))
    held = [
        [Document("x", x, (Span("P", 0, 1),)), Document("y", y, (Span("L", 1, 2),))],
        [Document("x", x, (Span("L", 1, 2),)), Document("y", y, (Span("P", 0, 1),))],
        [Document("x", x, (Span("P", 0, 1), Span("L", 1, 2))), Document("y", y)],
    ]
    assert len({score(reference=ref, prediction=[[], []]).signature for ref in held}) == 3


def test_reference_digest_of_numbered_tag_documents_ignores_the_numbering():
    # numbered ids say where a document came, not what it is: the same sentences in another
    # order have the same digest (and the same counts)
    ref = [["B-X", "I-X", "O"], ["O"], ["B-Y"]]
    pred = [["B-X", "O", "O"], ["B-X"], ["B-Y"]]
    one = score_tags(reference=ref, prediction=pred)
    other = score_tags(reference=ref[::-1], prediction=pred[::-1])
    assert one.signature == other.signature
    assert score_tags(reference=ref[:2], prediction=pred[:2]).signature != one.signature


def test_documents_mode_on_conll2003_changes_numbers_and_signature(data):
    # under match-best a document is the scope of "the best match": -DOCSTART- sections and
    # sentences give different F1 on eng.testb, so they must not share a signature
    gold = str(data / "conll2003-eng" / "eng.testb")
    pred = str(data / "conll2003-shared-task-outputs" / "results" / "chieu" / "eng.testb")
    reports = {}
    for mode in ("auto", "sentence"):
        s = Scorer(scheme="auto", mode="match-best")
        s.add_batch(read_conll(gold, pred, documents=mode))
        reports[mode] = s.report()
    assert reports["auto"].f != reports["sentence"].f
    assert "|docs:docstart|" in reports["auto"].signature and "|docs:sentence|" in reports["sentence"].signature


# --- the vectorised id helpers of the digest against plain per-string references ---------

def _plain_decimal(x: str) -> int:
    # str(int(x)) == x: canonical decimal; the digest only treats values below 2**62 as numbers
    if x.isascii() and x.isdigit() and str(int(x)) == x and int(x) < 2**62:
        return int(x)
    return -1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=6), st.integers(0, 2**64).map(str),
                          st.from_regex(r"0[0-9]{0,20}", fullmatch=True),
                          st.from_regex(r"[1-9][0-9]{16,21}", fullmatch=True)), max_size=30))
def test_decimal_values_agree_with_int_parsing(texts):
    from iescore.ids import decimal_values

    assert decimal_values(texts).tolist() == [_plain_decimal(x) for x in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=8), max_size=40), st.binary(max_size=4))
def test_string_hashes_are_per_string_and_separate_distinct_strings(texts, salt):
    from iescore.ids import string_hash, string_hashes

    h = string_hashes(texts, salt).tolist()
    assert h == [string_hash(x, salt) for x in texts]  # one string at a time gives the same
    by_text = {}
    for x, v in zip(texts, h):
        by_text.setdefault(x, set()).add(v)
    assert all(len(v) == 1 for v in by_text.values())  # equal strings, equal hashes
    assert len(set(h)) == len(by_text)  # distinct strings, distinct hashes (64 bits: no collision here)


def _plain_mix64(x: int) -> int:
    m = 2**64 - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def _plain_string_hash(text: str, salt: bytes) -> int:
    # the definition, one byte at a time: each byte of salt + text mixed with its position,
    # summed modulo 2**64, mixed with the mixed length
    data = salt + text.encode("utf-8", "surrogatepass")
    total = sum(_plain_mix64((i << 8) | b) for i, b in enumerate(data)) % 2**64
    return _plain_mix64(total ^ _plain_mix64(len(data) + 0x5BD1E995))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=8), st.text("abT0123456789-", max_size=8),
                          st.sampled_from(["\ud800", "é", "x\U0001F600"])), max_size=40),
       st.sampled_from([b"", b"id:", b"label:", b"\xff\x00"]))
def test_string_hashes_are_the_per_byte_definition(texts, salt):
    from iescore.ids import string_hashes

    assert string_hashes(texts, salt).tolist() == [_plain_string_hash(x, salt) for x in texts]


def test_string_hashes_depend_on_order_length_and_salt():
    from iescore.ids import string_hashes

    h = string_hashes(["ab", "ba", "a", "a\x00", "", "ab"], b"id:").tolist()
    assert len(set(h[:5])) == 5 and h[0] == h[5]
    assert string_hashes(["ab"], b"x:")[0] != string_hashes(["ab"], b"y:")[0]
    assert string_hashes(["x:ab"])[0] == string_hashes(["ab"], b"x:")[0]  # the salt is a prefix


def test_brats_discontinuous_policy_is_signed_when_a_span_was_discontinuous(tmp_path):
    """A predicted discontinuous span split into its fragments or covered whole: different
    numbers (by hand: split gives Al[0,2) and Roth[3,7), one of two right; cover gives
    [0,7), the answer), so different signatures; no discontinuous span, no key."""
    import iescore
    from iescore.config import Config

    for side, ann in (("g", "T1\tPER 0 7\tAl Roth\n"), ("p", "T1\tPER 0 2;3 7\tAl Roth\n")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "a.txt").write_text("Al Roth met Ido.", encoding="utf-8")
        (tmp_path / side / "a.ann").write_text(ann, encoding="utf-8")
    got = {pol: iescore.score_files(tmp_path / "g", tmp_path / "p", input_format="brat", level="characters",
                                    discontinuous=pol) for pol in ("split", "cover")}
    assert (got["split"].precision, got["split"].recall) == (0.0, 0.0)
    assert (got["cover"].precision, got["cover"].recall) == (1.0, 1.0)
    assert "|discontinuous:split|" in got["split"].signature
    assert "|discontinuous:cover|" in got["cover"].signature
    assert Config.from_signature(got["cover"].signature).discontinuous == "cover"
    plain = iescore.score_files(tmp_path / "g", tmp_path / "g", input_format="brat", level="characters",
                                discontinuous="split")
    assert "discontinuous" not in plain.signature
