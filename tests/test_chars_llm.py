"""Character-offset documents scored on characters or on tokens, LLM extractions (OBD
templates, alignment for AO, hallucinated strings), and ``iescore score --input-format``.
Every number is computed by hand in a comment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from iescore import Config, InputError, Span
from iescore.cli import main
from iescore.errors import ConfigError, IEScoreWarning
from iescore.io.brat import read_brat
from iescore.io.chars import TextDocument, to_document
from iescore.io.llm import Extraction, align_extractions, read_llm, score_llm
from iescore.io.textscore import score_text

FIX = Path(__file__).parent / "fixtures" / "readers"
T1 = "Al Roth met Ido Erev in Haifa ."


def counts(r):
    return r.overall.tp, r.overall.fp, r.overall.fn


# --- characters ------------------------------------------------------------------------------
def test_rules_count_characters_at_the_character_level():
    ref = [TextDocument("d", T1, (Span("PER", 12, 20),))]  # "Ido Erev"
    short = [TextDocument("d", T1, (Span("PER", 12, 15),))]  # "Ido": 5 characters missing (" Erev")
    assert counts(score_text(ref, short, level="characters", rule="O(0,4)")) == (0, 1, 1)
    assert counts(score_text(ref, short, level="characters", rule="O(0,5)")) == (1, 0, 0)
    wide = [TextDocument("d", T1, (Span("PER", 11, 20),))]  # " Ido Erev": 1 extra character
    assert counts(score_text(ref, wide, level="characters")) == (0, 1, 1)
    assert counts(score_text(ref, wide, level="characters", rule="C(1)")) == (1, 0, 0)


def test_the_ts_model_counts_characters_and_the_boundaries_between_them():
    ref = [TextDocument("d", T1, (Span("PER", 12, 20),))]
    pred = [TextDocument("d", T1, (Span("PER", 12, 15),))]
    r = score_text(ref, pred, level="characters")
    ts = r.to_dict()["ts"]["per_label"]["PER"]
    # gold: 8 characters, 7 boundaries inside; prediction: 3 characters, 2 boundaries, all inside the gold.
    # characters TP 3, FN 5; boundaries TP 2, FN 5; the text has 31 characters and 30 boundaries:
    # TN 31 - 8 = 23 and 30 - 7 = 23
    assert (ts["tokens"]["tp"], ts["tokens"]["fn"], ts["tokens"]["fp"], ts["tokens"]["tn"]) == (3, 5, 0, 23)
    assert (ts["separators"]["tp"], ts["separators"]["fn"], ts["separators"]["tn"]) == (2, 5, 23)
    assert ts["ts"]["f1"] == pytest.approx(10 / 20)  # 2*5 / (2*5 + 0 + 10)
    assert r.to_dict()["ts"]["token_f1_macro"] == pytest.approx(6 / 11)  # 2*3 / (2*3 + 5)
    assert "level:characters" in r.signature and "misaligned" not in r.signature
    assert Config.from_signature(r.signature) == r.config


# --- tokens ----------------------------------------------------------------------------------
# "Al Roth, Ido", regex tokens: Al [0,2) Roth [3,7) , [7,8) Ido [9,12)
TEXT = "Al Roth, Ido"
REF = [TextDocument("d", TEXT, (Span("PER", 0, 7), Span("PER", 9, 11)))]  # "Al Roth" (aligned), "Id" (not)
PRED = [TextDocument("d", TEXT, (Span("PER", 0, 8), Span("PER", 4, 12)))]  # "Al Roth," (aligned), "oth, Ido"


def test_spans_mapped_onto_tokens_by_expand_are_counted_on_both_sides():
    # expand: gold [0,2) and [3,4) ("Id" -> Ido); prediction [0,3) and [1,4) ("oth, Ido" -> Roth , Ido)
    r = score_text(REF, PRED, level="tokens", tokenizer="regex", misaligned="expand")
    assert counts(r) == (0, 2, 2)
    assert dict(r.repairs["adapter"]) == {"misaligned": 1, "reference misaligned": 1}
    # C(1): [0,3) holds [0,2) and one token more: TP; [1,4) holds [3,4) and two more: FP
    assert counts(score_text(REF, PRED, level="tokens", misaligned="expand", rule="C(1)")) == (1, 1, 1)


def test_contract_drops_what_holds_no_token_and_counts_it():
    # contract: gold "Id" holds no whole token (dropped); prediction "oth, Ido" -> [2,4) (", Ido")
    r = score_text(REF, PRED, level="tokens", misaligned="contract", rule="C(1)")
    assert counts(r) == (1, 1, 0)  # [0,3) contains [0,2) with 1 extra; [2,4) matches nothing
    assert dict(r.repairs["adapter"]) == {"misaligned": 1, "reference dropped": 1}
    sig = r.signature
    assert "misaligned:contract|level:tokens|tokenizer:regex" in sig
    assert Config.from_signature(sig) == r.config


def test_error_policy_names_the_document_and_the_span():
    with pytest.raises(InputError, match=r"document 'd': span \('PER', 9, 11\) 'Id': characters \[9, 11\) do not fall"):
        score_text(REF, PRED, level="tokens", misaligned="error")


def test_tokenizer_choices_given_and_custom():
    with pytest.raises(ConfigError, match=r"document 'd' has no tokens of its own \(tokenizer='given'\)"):
        score_text(REF, PRED, level="tokens", tokenizer="given")
    with pytest.raises(ConfigError, match=r"unknown level 'words'; valid: 'characters' or 'tokens'"):
        score_text(REF, PRED, level="words")
    # a callable splitting at every character but spaces: "Id" is on boundaries
    r = score_text(REF, PRED, level="tokens", tokenizer=lambda t: [(k, k + 1) for k, c in enumerate(t) if c != " "])
    assert "tokenizer:custom" in r.signature and "adapter" not in r.repairs


def test_to_document_at_the_character_level_keeps_every_character():
    d, c = to_document(TextDocument("x", "a b", (Span("L", 0, 3),)), level="characters")
    assert d.tokens == ("a", " ", "b") and d.separators == ("", "") and d.text == "a b"
    assert d.spans == (Span("L", 0, 3),) and c == {"misaligned": 0, "dropped": 0}


@pytest.mark.parametrize("span, message", [
    (("P", 0, 40), r"document 'd': span \('P', 0, 40\) ends outside the text of 12 characters"),
    (("P", 5, 2), r"document 'd': span \('P', 5, 2\) is empty or reversed"),
    (("P", 4, 4), r"document 'd': span \('P', 4, 4\) is empty or reversed"),
    (("", 0, 2), r"document 'd': a span needs a non-empty string label"),
])
def test_bad_character_spans_are_errors_naming_the_document(span, message):
    with pytest.raises(InputError, match=message):
        TextDocument("d", TEXT, (span,))


def test_a_span_may_end_at_the_last_character_and_not_one_after():
    assert TextDocument("d", "Al", (("P", 0, 2),)).spans == (Span("P", 0, 2),)
    with pytest.raises(InputError, match=r"span \('P', 0, 3\) ends outside the text of 2 characters"):
        TextDocument("d", "Al", (("P", 0, 3),))


def test_obd_fillers_at_the_character_level_are_character_sequences():
    gold = [TextDocument("d", "Al Roth", (Span("PER", 0, 7),))]
    llm = [Extraction("d", (("PER", "Al Rot"),))]
    # characters: "Al Rot" is "Al Roth" less one character: O(0,1) accepts it, E does not
    assert counts(score_llm(gold, llm, setting="OBD", level="characters", rule="O(0,1)")) == (1, 0, 0)
    assert counts(score_llm(gold, llm, setting="OBD", level="characters")) == (0, 1, 1)
    # tokens: ("Al", "Rot") against ("Al", "Roth") share only "Al": O(0,1) refuses the different last token
    assert counts(score_llm(gold, llm, setting="OBD", level="tokens", rule="O(0,1)")) == (0, 1, 1)


def test_given_tokens_must_lie_in_order_inside_the_text():
    assert TextDocument("d", "Al Roth", (), ((0, 2), (3, 7))).tokens == ((0, 2), (3, 7))
    for toks in (((0, 2), (3, 8)), ((0, 3), (2, 7)), ((2, 2),)):
        with pytest.raises(InputError, match=r"document 'd': token #\d .* is empty, outside the text"):
            TextDocument("d", "Al Roth", (), toks)


def test_documents_are_paired_by_id_and_texts_compared():
    with pytest.raises(InputError, match=r"reference document 'd' has no prediction"):
        score_text(REF, [TextDocument("e", TEXT)], level="characters")
    with pytest.raises(InputError, match=r"at character 9: 'I' \(reference\) vs 'i' \(prediction\)"):
        score_text(REF, [TextDocument("d", "Al Roth, ido")], level="characters")


# --- LLM extractions --------------------------------------------------------------------------
GOLD = read_brat(str(FIX / "brat" / "gold")).documents


def test_read_llm_fixture():
    got = read_llm(str(FIX / "llm.jsonl"))
    assert got == (Extraction("doc1", (("PER", "Al Roth"), ("PER", "Ido"), ("LOC", "Tel Aviv"))),
                   Extraction("doc2", (("ORG", "EU"), ("MISC", "German")), "EU rejects German call ."))


def test_llm_extractions_as_obd_templates():
    pred = read_llm(str(FIX / "llm.jsonl"))
    r = score_llm(GOLD, pred, setting="OBD", level="tokens", tokenizer="whitespace")
    # gold templates: doc1 PER {Al Roth, Ido Erev}, LOC {Haifa}; doc2 ORG {EU}, MISC {German}
    # LLM: doc1 PER {Al Roth, Ido}, LOC {Tel Aviv}; doc2 ORG {EU}, MISC {German}
    # TP Al Roth, EU, German = 3; FP Ido, Tel Aviv = 2 (a string found nowhere is an ordinary FP); FN Ido Erev, Haifa = 2
    assert counts(r) == (3, 2, 2)
    assert "level:tokens|tokenizer:whitespace" in r.signature


def test_llm_strings_go_through_the_normaliser():
    pred = [Extraction("doc1", (("PER", "al ROTH"),)), Extraction("doc2", ())]
    # the gold has 5 fillers (Al Roth, Ido Erev, Haifa; EU, German): identity finds none of them
    assert counts(score_llm(GOLD, pred, setting="OBD", level="tokens")) == (0, 1, 5)
    # lower: "al roth" = "al roth"; doc1's Ido Erev and Haifa, doc2's EU and German still missed
    assert counts(score_llm(GOLD, pred, setting="OBD", level="tokens", normaliser="lower")) == (1, 0, 4)


def test_llm_extractions_aligned_for_ao_count_hallucinated_strings():
    pred = read_llm(str(FIX / "llm.jsonl"))
    with pytest.warns(IEScoreWarning, match=r"1 extracted strings are found nowhere .*'doc1': LOC 'Tel Aviv'"):
        r = score_llm(GOLD, pred, setting="AO", level="tokens", tokenizer="whitespace")
    # placed: PER Al Roth [0,7) TP; PER Ido [12,15) FP (gold Ido Erev FN); LOC Haifa FN;
    # doc2 EU TP, German TP. TP 3, FP 1, FN 2; Tel Aviv has no position: counted, not scored
    assert counts(r) == (3, 1, 2)
    assert dict(r.repairs["adapter"]) == {"hallucinated": 1}
    docs, unfound = align_extractions(GOLD, pred)
    assert unfound == [("doc1", "LOC", "Tel Aviv")]


def test_align_policies_first_every_unique():
    ref = [TextDocument("d", "Al met Al Roth.", (Span("PER", 7, 14),))]  # regex tokens: Al met Al Roth .
    pred = [Extraction("d", (("PER", "Al"),))]
    # first: "Al" at [0,2) = token [0,1); gold [2,4): FP 1, FN 1 even under O(0,1)
    r = score_llm(ref, pred, setting="AO", level="tokens", align="first", rule="O(0,1)")
    assert counts(r) == (0, 1, 1) and dict(r.repairs["adapter"]) == {"ambiguous strings": 1}
    # every: [0,1) and [2,3); [2,3) lies in [2,4) missing 1 token: TP under O(0,1), [0,1) FP
    assert counts(score_llm(ref, pred, setting="AO", level="tokens", align="every", rule="O(0,1)")) == (1, 1, 0)
    with pytest.raises(InputError, match=r"document 'd': PER 'Al' occurs 2 times \(at characters 0 and 7"):
        score_llm(ref, pred, setting="AO", level="tokens", align="unique")
    with pytest.raises(ConfigError, match="'first', 'every' or 'unique'"):
        score_llm(ref, pred, setting="AO", level="tokens", align="all")


def test_llm_bad_input():
    with pytest.raises(InputError, match=r"at character 0: 'A' \(reference\) vs 'a' \(prediction\)"):
        align_extractions([TextDocument("d", "Al")], [Extraction("d", (), "al")])
    with pytest.raises(InputError, match=r"extraction #0 must be a \(label, text\) pair of strings that are not empty"):
        Extraction("d", (("PER", "  "),))
    with pytest.raises(ConfigError, match="score them against each other with setting='OBD'"):
        score_llm([Extraction("d", ())], [Extraction("d", ())], setting="AO", level="tokens")
    both = score_llm([Extraction("d", (("P", "a b"),))], [Extraction("d", (("P", "a b"), ("P", "c")))],
                     setting="OBD", level="characters")
    assert counts(both) == (1, 1, 0)


@pytest.mark.parametrize("line, message", [
    ('{"entities": []}', r"x\.jsonl:1: a document is an object with an 'id'"),
    ('{"id": "a", "entities": [{"text": "Al"}]}', r"x\.jsonl:1: an extraction is \{'label': ..., 'text': ...\}"),
    ('{"id": "a", "entities": {"label": "P"}}', r"x\.jsonl:1: 'entities' must be a list"),
])
def test_read_llm_bad_lines(tmp_path, line, message):
    (tmp_path / "x.jsonl").write_text(line + "\n")
    with pytest.raises(InputError, match=message):
        read_llm(str(tmp_path / "x.jsonl"))


# --- the command line ------------------------------------------------------------------------
def run(capsys, *argv):
    status = main(["score", *(str(a) for a in argv)])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_brat_and_jsonl_give_the_corpus_numbers(capsys):
    for argv in ([FIX / "brat" / "gold", FIX / "brat" / "pred", "--input-format", "brat"],
                 [FIX / "gold.jsonl", FIX / "pred.jsonl", "--input-format", "jsonl"],
                 [FIX / "brat" / "gold", FIX / "pred.jsonl", "--input-format", "brat", "--pred-format", "jsonl"]):
        status, out, _ = run(capsys, *argv, "--level", "tokens", "--tokenizer", "whitespace", "--json")
        d = json.loads(out)
        assert status == 0 and (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (2, 3, 3)
    # the last run: the brat gold's skipped annotations and the JSONL prediction's rejected answer
    assert d["repairs"]["adapter"] == {"reference skipped brat attributes": 1, "reference skipped brat notes": 1,
                                       "skipped prodigy reject answers": 1}


def test_cli_llm_ao_warns_and_counts(capsys):
    status, out, err = run(capsys, FIX / "gold.jsonl", FIX / "llm.jsonl", "--input-format", "jsonl",
                           "--pred-format", "llm", "--level", "tokens", "--tokenizer", "whitespace", "--json")
    d = json.loads(out)
    assert status == 0 and (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (3, 1, 2)
    assert d["repairs"]["adapter"] == {"hallucinated": 1}
    assert "iescore: warning: 1 extracted strings are found nowhere" in err
    status, out, _ = run(capsys, FIX / "gold.jsonl", FIX / "llm.jsonl", "--input-format", "jsonl",
                         "--pred-format", "llm", "--level", "tokens", "--setting", "OBD", "--json")
    assert (json.loads(out)["overall"]["tp"], json.loads(out)["overall"]["fp"]) == (3, 2)


def test_cli_docbin(capsys, tmp_path):
    pytest.importorskip("spacy")
    from iescore.io.docbin import write_docbin

    write_docbin(GOLD, str(tmp_path / "g.spacy"))
    status, out, _ = run(capsys, tmp_path / "g.spacy", FIX / "pred.jsonl", "--input-format", "docbin",
                         "--pred-format", "jsonl", "--level", "tokens", "--tokenizer", "given", "--json")
    assert status == 0 and json.loads(out)["overall"]["tp"] == 2


def test_cli_input_errors_exit_2_naming_the_problem(capsys, tmp_path):
    brat = ["--input-format", "brat"]
    cases = [
        ([FIX / "brat" / "gold", FIX / "brat" / "pred", *brat], "choose --level characters or --level tokens"),
        ([FIX / "brat" / "gold", *brat, "--level", "tokens"], "give the gold FILE and a PRED_FILE"),
        ([FIX / "corpus.conll", FIX / "brat" / "pred", "--pred-format", "brat", "--level", "tokens"],
         "must both be conll, got 'conll' and 'brat'"),
        ([FIX / "brat" / "gold", FIX / "brat" / "pred", *brat, "--level", "tokens", "--scheme", "IOB2"],
         "--scheme 'IOB2' is for tag input"),
        ([FIX / "corpus.conll", "--level", "tokens"], "--level is for character-offset input"),
        ([FIX / "brat" / "gold", FIX / "brat" / "pred", *brat, "--level", "tokens", "--documents", "sentence"],
         "--documents is for CoNLL files"),
        ([FIX / "llm.jsonl", FIX / "llm.jsonl", "--input-format", "llm", "--level", "tokens"],
         "score them against each other with setting='OBD'"),
    ]
    shutil.copy(FIX / "brat" / "gold" / "doc1.ann", tmp_path / "doc1.ann")
    cases.append(([tmp_path, FIX / "brat" / "pred", *brat, "--level", "tokens"], "doc1.txt does not exist"))
    for argv, message in cases:
        status, _, err = run(capsys, *argv)
        assert status == 2 and message in err, (argv, err)


def test_the_readme_commands_on_the_fixtures_run(capsys, monkeypatch):
    """The inputs guide's `iescore score tests/fixtures/readers/...` lines run and score something."""
    import re
    import shlex

    root = Path(__file__).resolve().parents[1]
    lines = re.findall(r"^iescore score (tests/fixtures/readers/.*)$", (root / "docs" / "how-to" / "inputs.md").read_text(), flags=re.M)
    assert len(lines) == 3
    monkeypatch.chdir(root)
    for line in lines:
        status, out, _ = run(capsys, *shlex.split(line))
        assert status == 0 and "phrases; correct:" in out and "level:" in out, line
