"""The front ends of relations and links: the command line (``--task``, the named settings,
the formats that carry them, what the rows are), ``iescore compare`` and ``iescore agree``
on relation and link reports, the statistics over them and the HTML report.

Every number is worked out by hand from the documents below, or is ``iescore.score`` on
Documents built by hand with the same token positions (never a number of the front end
under test only).

The corpus: ``D`` documents, each the text ``Al met Bo and Cy met Di .`` (tokens Al met Bo
and Cy met Di . at 0..7), persons Al, Bo, Cy, Di; gold relations meets(Al, Bo) and
meets(Cy, Di); gold links Al Q1, Bo Q2, Cy Q3, Di NIL.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import iescore
from iescore import Document, Link, Relation, Span
from iescore.cli import main
from iescore.errors import IEScoreWarning
from iescore.io.chars import TextDocument
from iescore.io.jsonl import write_jsonl
from iescore.stats import bootstrap, compare

TEXT = "Al met Bo and Cy met Di ."
TOKENS = tuple(TEXT.split())
# (character span, token span) of each person
AL, BO, CY, DI = (((0, 2), (0, 1)), ((7, 9), (2, 3)), ((14, 16), (4, 5)), ((21, 23), (6, 7)))
FIX = Path(__file__).parent / "fixtures" / "relations"
BRAT_GOLD, BRAT_PRED = FIX / "brat" / "gold", FIX / "brat" / "pred"
BRAT_WARNING = r"2 brat relations or normalizations name an id that is no entity"


def _span(p, tokens):
    return Span("PER", *(p[1] if tokens else p[0]))


def _doc(k, rels, links, tokens):
    """Document ``k`` as a TextDocument (characters) or a Document (tokens)."""
    relations = tuple(Relation("meets", _span(h, tokens), _span(t, tokens)) for h, t in rels)
    lk = tuple(Link(_span(m, tokens), i) for m, i in links)
    spans = tuple(_span(p, tokens) for p in (AL, BO, CY, DI))
    if tokens:
        return Document(f"d{k}", TOKENS, spans=spans, relations=relations, links=lk)
    return TextDocument(f"d{k}", TEXT, spans, relations=relations, links=lk)


GOLD_RELS = ((AL, BO), (CY, DI))
GOLD_LINKS = ((AL, "Q1"), (BO, "Q2"), (CY, "Q3"), (DI, "NIL"))
SYSTEMS = {
    # A: the gold; B: meets(Cy, Di) swapped and two wrong ids in every document;
    # C: B's in even documents, both relations swapped and three wrong ids in odd ones
    "A": lambda k: (GOLD_RELS, GOLD_LINKS),
    "B": lambda k: (((AL, BO), (DI, CY)), ((AL, "Q1"), (BO, "Q9"), (CY, "Q3"), (DI, "Q8"))),
    "C": lambda k: (((AL, BO), (DI, CY)) if k % 2 == 0 else ((BO, AL), (DI, CY)),
                    ((AL, "Q1"), (BO, "Q9"), (CY, "Q3"), (DI, "Q8")) if k % 2 == 0 else
                    ((AL, "Q7"), (BO, "Q9"), (CY, "Q3"), (DI, "Q8"))),
}


def corpus(system, n, tokens=False):
    return [_doc(k, *(SYSTEMS[system](k) if system != "gold" else (GOLD_RELS, GOLD_LINKS)), tokens)
            for k in range(n)]


@pytest.fixture()
def files(tmp_path):
    """The gold and the systems of 6 documents as JSONL files."""
    out = {}
    for name in ("gold", "A", "B", "C"):
        out[name] = str(tmp_path / f"{name}.jsonl")
        write_jsonl(corpus(name, 6), out[name])
    return out


def run(capsys, *argv, code=0):
    got = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert got == code, out.err
    return out


def counts(e):
    return e["tp"], e["fp"], e["fn"]


# --- iescore score --task ----------------------------------------------------------------------
@pytest.mark.parametrize("flags, overall, per_label", [
    # the fixture (test_readers_relations works it out): works_for right; located_in swapped;
    # lives_in's head "Ido" for "Ido Erev"
    (["--task", "relations"], (1, 2, 2), {"works_for": (1, 0, 0), "located_in": (0, 1, 1), "lives_in": (0, 1, 1)}),
    (["--relation-setting", "strict"], (1, 2, 2), {"works_for": (1, 0, 0)}),
    (["--task", "relations", "--symmetric", "located_in"], (2, 1, 1), {"located_in": (1, 0, 0)}),
    (["--relation-setting", "relaxed"], (2, 1, 1), {"lives_in": (1, 0, 0), "located_in": (0, 1, 1)}),
    (["--task", "relations", "--rule", "O(inf,inf)"], (2, 1, 1), {"lives_in": (1, 0, 0)}),
    (["--relation-setting", "boundaries"], (1, 2, 2), {"works_for": (1, 0, 0)}),
    (["--relation-setting", "boundaries", "--no-arg-labels"], (1, 2, 2), {"works_for": (1, 0, 0)}),
    # links: Q1 and Q41621 right; Q95 for Q37156; "Ido" for "Ido Erev" (Q2); rows by entity type
    (["--task", "links"], (2, 2, 2), {"PER": (1, 1, 1), "ORG": (0, 1, 1), "LOC": (1, 0, 0)}),
    (["--link-setting", "strong", "--link-types"], (2, 2, 2), {"PER": (1, 1, 1)}),
    (["--link-setting", "weak"], (3, 1, 1), {"PER": (2, 0, 0), "ORG": (0, 1, 1)}),
])
def test_score_brat_with_the_task_options(capsys, flags, overall, per_label):
    out = run(capsys, "score", BRAT_GOLD, BRAT_PRED, "--input-format", "brat", "--level", "tokens", "--json", *flags)
    d = json.loads(out.out)
    assert counts(d["overall"]) == overall
    assert {k: counts(d["per_label"][k]) for k in per_label} == per_label
    assert ("task:relations" if "relation" in " ".join(flags) else "task:links") in d["signature"]


def test_a_named_setting_is_its_options(capsys):
    base = ["score", BRAT_GOLD, BRAT_PRED, "--input-format", "brat", "--level", "characters", "--json"]
    named = json.loads(run(capsys, *base, "--relation-setting", "relaxed").out)
    spelt = json.loads(run(capsys, *base, "--task", "relations", "--rule", "O(inf,inf)").out)
    assert named == spelt
    named = json.loads(run(capsys, *base, "--link-setting", "weak").out)
    spelt = json.loads(run(capsys, *base, "--task", "links", "--rule", "O(inf,inf)").out)
    assert named == spelt


@pytest.mark.parametrize("flags, message", [
    (["--relation-setting", "relaxed", "--rule", "E"], "--rule E contradicts --relation-setting relaxed (rule O(inf,inf))"),
    (["--link-setting", "weak", "--rule", "E"], "--rule E contradicts --link-setting weak (rule O(inf,inf))"),
    (["--relation-setting", "strict", "--no-arg-labels"], "--no-arg-labels contradicts --relation-setting strict"),
    (["--relation-setting", "strict", "--task", "links"], "--relation-setting strict is a setting of --task relations, "
                                                          "not of --task links"),
    (["--relation-setting", "strict", "--link-setting", "weak"], "one task at a time"),
    (["--task", "links", "--symmetric", "r"], "symmetric=('r',) applies to task='relations'"),
])
def test_contradicting_options_are_errors(capsys, flags, message):
    out = run(capsys, "score", BRAT_GOLD, BRAT_PRED, "--input-format", "brat", "--level", "tokens", *flags, code=2)
    assert message in out.err and out.out == ""


def test_the_formats_without_relations_or_links_are_named(capsys, tmp_path):
    conll = tmp_path / "a.conll"
    conll.write_text("Al B-PER B-PER\n", encoding="utf-8")
    for task, carriers in (("relations", "--input-format brat or jsonl or llm"), ("links", "--input-format brat or jsonl")):
        for argv in (["score", conll], ["score", conll, "--" + task[:-1] + "-setting",
                                        "strict" if task == "relations" else "strong"],
                     ["report", conll, "--html", tmp_path / "r.html"], ["compare", conll, conll]):
            out = run(capsys, *argv, *([] if "-setting" in " ".join(map(str, argv)) else ["--task", task]), code=2)
            assert out.err == (f"iescore: error: --task {task}: conll input carries no {task}; the formats that carry "
                               f"{task} ({'brat R lines' if task == 'relations' else 'brat N lines'}"
                               + out.err.split(f"{'brat R lines' if task == 'relations' else 'brat N lines'}", 1)[1])
            assert carriers in out.err
        assert not (tmp_path / "r.html").exists()
    with pytest.raises(iescore.ConfigError, match="--task links: conll input carries no links"):
        iescore.score_files(conll, task="links")


def test_json_matches_the_score_of_documents_built_by_hand(capsys, files):
    for task, opts in (("relations", {}), ("links", {}), ("links", {"nil": "ignore"})):
        flags = ["--nil", "ignore"] if opts else []
        for system in ("A", "B", "C"):
            out = run(capsys, "score", files["gold"], files[system], "--input-format", "jsonl", "--level", "tokens",
                      "--task", task, "--json", "--counting", "one-to-one", *flags)
            d = json.loads(out.out)
            want = iescore.score(reference=corpus("gold", 6, tokens=True), prediction=corpus(system, 6, tokens=True),
                                 task=task, counting="one-to-one", **opts).to_dict()
            assert d["overall"] == want["overall"] and d["per_label"] == want["per_label"]
            assert d["categories"] == want["categories"]


def test_the_counts_by_hand(capsys, files):
    # B: per document meets(Al, Bo) right, meets(Di, Cy) for meets(Cy, Di): TP 1, FP 1, FN 1
    base = ["score", files["gold"], files["B"], "--input-format", "jsonl", "--level", "characters", "--json"]
    d = json.loads(run(capsys, *base, "--task", "relations").out)
    assert counts(d["overall"]) == (6, 6, 6) and list(d["per_label"]) == ["meets"]
    # symmetric: the swapped one matches too
    d = json.loads(run(capsys, *base, "--task", "relations", "--symmetric", "meets").out)
    assert counts(d["overall"]) == (12, 0, 0)
    # links: Q1, Q3 right; Q9 for Q2, Q8 for NIL: TP 2, FP 2, FN 2 per document, one row (PER)
    d = json.loads(run(capsys, *base, "--task", "links").out)
    assert counts(d["overall"]) == (12, 12, 12) and list(d["per_label"]) == ["PER"]
    # NIL ignored: the gold NIL answer left out (FN 1 per document); Q8 is no NIL: still an FP
    d = json.loads(run(capsys, *base, "--task", "links", "--nil", "ignore").out)
    assert counts(d["overall"]) == (12, 12, 6)


def test_the_rows_are_named(capsys, files):
    base = ["score", files["gold"], files["B"], "--input-format", "jsonl", "--level", "tokens"]
    out = run(capsys, *base, "--task", "relations").out
    assert out.splitlines()[0] == "task relations: each row is a relation label; a phrase is a relation (its label, " \
                                  "head and tail)"
    assert out.splitlines()[1] == "6 documents with 12 phrases; found: 12 phrases; correct: 6."
    out = run(capsys, *base, "--task", "links", "--format", "csv").out
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][0].startswith("# task links: each row is the entity type of the mentions (not an id)")
    assert rows[1][0].startswith("# signature: ") and rows[2][:4] == ["label", "tp", "fp", "fn"]
    assert rows[3][:4] == ["PER", "12", "12", "12"]
    out = run(capsys, *base, "--task", "links", "--format", "markdown").out
    assert out.startswith("task links: each row is the entity type of the mentions (not an id); a phrase is a link "
                          "(a mention and its knowledge-base id).\n\n| label |")
    out = run(capsys, *base, "--format", "csv").out  # entities: no note
    assert out.startswith("# signature: ")


def test_llm_relation_strings_on_the_command_line(capsys):
    # brat gold against the LLM's (label, head, tail) strings, OBD: works_for right, located_in swapped,
    # lives_in's head "Ido": 1 TP, 2 FP, 2 FN (test_readers_relations)
    out = run(capsys, "score", BRAT_GOLD, FIX / "llm.jsonl", "--input-format", "brat", "--pred-format", "llm",
              "--level", "tokens", "--setting", "OBD", "--task", "relations", "--json")
    assert counts(json.loads(out.out)["overall"]) == (1, 2, 2)
    out = run(capsys, "score", BRAT_GOLD, FIX / "llm.jsonl", "--input-format", "brat", "--pred-format", "llm",
              "--level", "tokens", "--task", "links", code=2)
    assert "--task links: llm input carries no links" in out.err


# --- statistics --------------------------------------------------------------------------------
def reports(n, task, names=("A", "B", "C")):
    gold = corpus("gold", n, tokens=True)
    return {s: iescore.score(reference=gold, prediction=corpus(s, n, tokens=True), task=task) for s in names}


@pytest.mark.parametrize("task", ["relations", "links"])
def test_compare_a_system_better_on_every_document(task):
    # A has TP 2 (links 4) per document, B TP 1 (2) with FP = FN = 1 (2). Swapping k of D documents:
    # F1(A') = (2D - k) / 2D, F1(B') = (D + k) / 2D, |difference| = |D - 2k| / 2D, as large as the
    # observed 1/2 only for k = 0 and k = D: exact p = 2 / 2^D
    r = reports(6, task, ("A", "B"))
    assert r["A"].f1 == 1.0 and r["B"].f1 == 0.5
    c = compare(r, test="ar", resamples="all")
    b = next(s for s in c.systems if s["name"] == "B")
    assert b["p_value"] == pytest.approx(2 / 2 ** 6)
    # a system against itself: p = 1 (every resample at least as extreme as 0)
    c = compare({"A": r["B"], "A2": r["B"]}, test="ar", resamples=200)
    assert c.systems[1]["p_value"] == 1.0
    c = compare({"A": r["B"], "A2": r["B"]}, test="bs", resamples=200)
    assert c.systems[1]["p_value"] == 1.0


@pytest.mark.parametrize("task", ["relations", "links"])
def test_bootstrap_of_a_relation_report(task):
    # C: even documents F1 1/2 (relations: TP 1 FP 1 FN 1; links: TP 2 FP 2 FN 2), odd documents
    # F1 0 (TP 0 FP 2 FN 2) and 1/4 (TP 1 FP 3 FN 3). Micro F1 of 6 documents:
    # relations 2*3 / (2*3 + 9 + 9) = 1/4; links 2*9 / (2*9 + 15 + 15) = 3/8.
    # Any resample's micro F1 is a mediant of the documents', so between their min and max.
    (r,) = reports(6, task, ("C",)).values()
    point, lo_doc, hi_doc = (0.25, 0.0, 0.5) if task == "relations" else (0.375, 0.25, 0.5)
    assert r.f1 == pytest.approx(point)
    b = bootstrap(r, resamples=500, seed=3)
    lo, hi = b.intervals["f1"]
    assert b.values["f1"] == pytest.approx(point)
    assert lo_doc <= lo <= point <= hi <= hi_doc and lo < hi


def test_compare_on_the_command_line(capsys, files):
    out = run(capsys, "compare", files["gold"], files["A"], files["B"], files["A"], "--names", "A,B,A2",
              "--input-format", "jsonl", "--input-level", "tokens", "--task", "relations", "--json",
              "--resamples", "200")
    d = json.loads(out.out)
    rows = {s["name"]: s for s in d["systems"]}
    gold = corpus("gold", 6, tokens=True)
    for name, system in (("A", "A"), ("B", "B")):
        want = iescore.score(reference=gold, prediction=corpus(system, 6, tokens=True), task="relations")
        assert rows[name]["f1"] == want.f1 and rows[name]["precision"] == want.precision
    # A2 is A: p = 1; B is worse on every document: p = (1 + #{k = 0 or 6}) / 201, about 1/64 of 200 swaps
    assert rows["A2"]["p_value"] == 1.0 and rows["B"]["p_value"] < 0.05
    assert "task:relations" in d["signature"]
    # the text table names the same systems
    out = run(capsys, "compare", files["gold"], files["B"], files["C"], "--input-format", "jsonl", "--input-level",
              "tokens", "--link-setting", "weak", "--resamples", "50")
    assert "task:links" in out.out and "B.jsonl (baseline)" in out.out


def test_agree_on_relations_is_f1_both_ways(capsys, files):
    out = run(capsys, "agree", files["gold"], files["B"], "--names", "G,B", "--input-format", "jsonl", "--level",
              "tokens", "--task", "relations", "--json")
    d = json.loads(out.out)
    (p,) = d["pairs"]
    gold, b = corpus("gold", 6, tokens=True), corpus("B", 6, tokens=True)
    ab = iescore.score(reference=gold, prediction=b, task="relations")
    ba = iescore.score(reference=b, prediction=gold, task="relations")
    assert (p["f1_ab"], p["f1_ba"]) == (ab.f1, ba.f1) == (0.5, 0.5)
    assert p["kappa"] is None and d["fleiss_kappa"] is None and d["krippendorff_alpha"] is None
    assert "kappa and alpha are not defined for relations" in d["note"]
    out = run(capsys, "agree", files["gold"], files["C"], "--input-format", "jsonl", "--level", "tokens",
              "--link-setting", "strong")
    assert "note: kappa and alpha are not defined for links" in out.out
    assert out.out.rstrip().endswith("|agree:f1")


def test_brat_warnings_still_reach_the_command_line(capsys):
    with pytest.warns(IEScoreWarning, match=BRAT_WARNING):
        r = iescore.score_files(BRAT_GOLD, BRAT_PRED, input_format="brat", level="tokens", task="relations")
    # the tokens are kept for the HTML page: the regex tokens of the text
    assert r.__dict__["_tokens"][0][:4] == ["Al", "Roth", "works", "for"]


# --- the HTML report ---------------------------------------------------------------------------
def _page(tmp_path, capsys, *flags):
    out = tmp_path / "r.html"
    err = run(capsys, "report", BRAT_GOLD, BRAT_PRED, "--input-format", "brat", "--level", "tokens", "--html", out,
              *flags).err
    assert f"wrote {out}" in err
    return out


def _data(page):
    import re

    text = page.read_text(encoding="utf-8")
    return text, json.loads(re.search(r'<script type="application/json" id="iescore-data">(.*?)</script>', text,
                                      flags=re.S).group(1))


def test_the_page_holds_the_relations_with_their_arguments(tmp_path, capsys):
    pytest.importorskip("jinja2")
    text, data = _data(_page(tmp_path, capsys, "--task", "relations"))
    assert "<h2>Per relation label</h2>" in text and "<th>relation label</th>" in text
    (doc,) = data["docs"]
    assert doc["tokens"][:5] == ["Al", "Roth", "works", "for", "IBM"]
    # gold: works_for(Al Roth, IBM), located_in(IBM, Paris), lives_in(Ido Erev, Haifa), token positions by hand
    assert sorted(doc["args"]["reference"].values()) == sorted([
        ["PER", 0, 2, "Al Roth", "ORG", 4, 5, "IBM"], ["ORG", 4, 5, "IBM", "LOC", 6, 7, "Paris"],
        ["PER", 8, 10, "Ido Erev", "LOC", 12, 13, "Haifa"]])
    assert ["LOC", 6, 7, "Paris", "ORG", 4, 5, "IBM"] in doc["args"]["prediction"].values()
    text, data = _data(_page(tmp_path, capsys, "--link-setting", "strong"))
    assert "<h2>Per entity type</h2>" in text
    (doc,) = data["docs"]
    assert sorted(doc["ids"]["reference"].values()) == ["Wikidata:Q1", "Wikidata:Q2", "Wikidata:Q37156",
                                                        "Wikidata:Q41621"]
    assert sorted(doc["ids"]["prediction"].values()) == ["Wikidata:Q1", "Wikidata:Q2", "Wikidata:Q41621",
                                                         "Wikidata:Q95"]


def test_in_a_browser_relations_are_rows_and_links_show_their_ids(tmp_path, capsys):
    pytest.importorskip("jinja2")
    from test_html_report import browser

    dom = browser(_page(tmp_path, capsys, "--task", "relations"))
    rows = [a for tag, a in dom.elements if tag == "tr" and a.get("class") == "rel"]  # the relation table's rows
    assert [(r["data-side"]) for r in rows] == ["reference"] * 3 + ["prediction"] * 3
    labels = {(s["data-side"], s["data-label"]): (s["data-status"], s["data-category"]) for s in dom.spans()}
    # by hand: works_for right; located_in swapped (missed + spurious); lives_in's head short (boundary)
    assert labels == {("reference", "works_for"): ("TP", "correct"), ("prediction", "works_for"): ("TP", "correct"),
                      ("reference", "located_in"): ("FN", "missed"), ("prediction", "located_in"): ("FP", "spurious"),
                      ("reference", "lives_in"): ("FN", "wrong_boundary"),
                      ("prediction", "lives_in"): ("FP", "wrong_boundary")}
    shown = "".join(dom.text)
    for cell in ("PER [8, 10) \u201cIdo Erev\u201d", "PER [8, 9) \u201cIdo\u201d", "LOC [6, 7) \u201cParis\u201d",
                 "lives_in (PER [8, 9) \u201cIdo\u201d \u2192 LOC [12, 13) \u201cHaifa\u201d)"):
        assert cell in shown
    dom = browser(_page(tmp_path, capsys, "--task", "links"))
    ids = {(s["data-side"], s["data-id"]): (s["data-label"], s["data-status"]) for s in dom.spans()}
    assert ids == {("reference", "Wikidata:Q1"): ("PER", "TP"), ("prediction", "Wikidata:Q1"): ("PER", "TP"),
                   ("reference", "Wikidata:Q37156"): ("ORG", "FN"), ("prediction", "Wikidata:Q95"): ("ORG", "FP"),
                   ("reference", "Wikidata:Q2"): ("PER", "FN"), ("prediction", "Wikidata:Q2"): ("PER", "FP"),
                   ("reference", "Wikidata:Q41621"): ("LOC", "TP"), ("prediction", "Wikidata:Q41621"): ("LOC", "TP")}
    assert "PER Wikidata:Q1" in "".join(dom.text)


# --- the spaCy scorer and the evaluate metric ------------------------------------------------------
def test_the_spacy_scorer_scores_links_and_refuses_relations():
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc
    from spacy.tokens import Span as SpacySpan
    from spacy.training import Example
    from spacy.util import registry

    nlp = spacy.blank("en")

    def doc(ents):
        d = Doc(nlp.vocab, words=list(TOKENS))
        d.ents = [SpacySpan(d, s, e, "PER", kb_id=kb) for s, e, kb in ents]
        return d

    # gold Al Q1, Bo Q2, Cy Q3; predicted Al Q1, Bo Q9, Cy (no id: no link): TP 1, FP 1, FN 2
    ref = doc([(0, 1, "Q1"), (2, 3, "Q2"), (4, 5, "Q3")])
    pred = doc([(0, 1, "Q1"), (2, 3, "Q9"), (4, 5, "")])
    out = registry.scorers.get("iescore.spans.v1")(task="links")([Example(pred, ref)])
    assert (out["ents_links_p"], out["ents_links_r"]) == (0.5, pytest.approx(1 / 3))
    assert "task:links" in out["ents_links_signature"]
    gold = [Document("d", TOKENS, links=(Link(Span("PER", 0, 1), "Q1"), Link(Span("PER", 2, 3), "Q2"),
                                         Link(Span("PER", 4, 5), "Q3")))]
    one = iescore.score(reference=gold, prediction=[Document("d", TOKENS, links=(
        Link(Span("PER", 0, 1), "Q1"), Link(Span("PER", 2, 3), "Q9")))], task="links")
    assert out["ents_links_f"] == one.f1 == 0.4
    with pytest.raises(iescore.ConfigError, match="spaCy has no standard place for relations"):
        registry.scorers.get("iescore.spans.v1")(task="relations")
    with pytest.raises(iescore.ConfigError, match="task='links' scores mentions by position"):
        registry.scorers.get("iescore.templates.v1")(task="links")


def test_the_evaluate_metric_refuses_relation_and_link_options():
    pytest.importorskip("evaluate")
    import evaluate
    import iescore.metric_card as card

    metric = evaluate.load(card.PATH)
    tags = [["B-PER", "O"]]
    for opts in ({"task": "relations"}, {"task": "links", "nil": "ignore"}, {"symmetric": "r"}):
        with pytest.raises(iescore.ConfigError, match="this metric scores entities .* carry no relations and no links"):
            metric.compute(predictions=tags, references=tags, **opts)
    assert metric.compute(predictions=tags, references=tags, task="entities")["overall_f1"] == 1.0


# --- precision-recall curves -------------------------------------------------------------------------
@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_curves_of_relations_and_links_drop_low_confidences(counting):
    from iescore.stats.thresholds import pr_curve

    def sp(p):
        return Span("PER", *p[1])

    gold = [Document("d", TOKENS, relations=(Relation("meets", sp(AL), sp(BO)), Relation("meets", sp(CY), sp(DI))),
                     links=(Link(sp(AL), "Q1"), Link(sp(BO), "Q2")))]
    # relations: meets(Al, Bo) 0.9 right, meets(Di, Cy) 0.5 swapped, meets(Cy, Di) 0.2 right
    # t = 0.9: TP 1 FP 0 FN 1; t = 0.5: TP 1 FP 1 FN 1; t = 0.2: TP 2 FP 1 FN 0
    pred = [Document("d", TOKENS, relations=(Relation("meets", sp(AL), sp(BO), 0.9), Relation("meets", sp(DI), sp(CY), 0.5),
                                             Relation("meets", sp(CY), sp(DI), 0.2)))]
    c = pr_curve(gold, pred, task="relations", counting=counting)
    assert (c.thresholds, c.tp, c.fp, c.fn) == ((0.2, 0.5, 0.9), (2, 1, 1), (1, 1, 0), (0, 1, 1))
    # links: Al Q1 0.8 right, Bo Q9 0.6 wrong id, Bo Q2 0.3 right (same mention as the wrong one)
    # t = 0.8: 1, 0, 1; t = 0.6: 1, 1, 1; t = 0.3: 2, 1, 0
    pred = [Document("d", TOKENS, links=(Link(sp(AL), "Q1", 0.8), Link(sp(BO), "Q9", 0.6), Link(sp(BO), "Q2", 0.3)))]
    c = pr_curve(gold, pred, task="links", counting=counting)
    assert (c.thresholds, c.tp, c.fp, c.fn) == ((0.3, 0.6, 0.8), (2, 1, 1), (1, 1, 0), (0, 1, 1))
    with pytest.raises(iescore.InputError, match=r"predicted relation 'meets' 'Al -> Bo' has none"):
        pr_curve(gold, [Document("d", TOKENS, relations=(Relation("meets", sp(AL), sp(BO)),))], task="relations")


def test_the_command_line_curve_of_jsonl_relations(capsys, tmp_path):
    def rel(h, t, score):
        return Relation("meets", Span("PER", *h[0]), Span("PER", *t[0]), score)

    gold = [TextDocument("d", TEXT, (), relations=(rel(AL, BO, None), rel(CY, DI, None)))]
    pred = [TextDocument("d", TEXT, (), relations=(rel(AL, BO, 0.9), rel(DI, CY, 0.5), rel(CY, DI, 0.2)))]
    write_jsonl(gold, str(tmp_path / "g.jsonl"))
    write_jsonl(pred, str(tmp_path / "p.jsonl"))
    out = run(capsys, "score", tmp_path / "g.jsonl", tmp_path / "p.jsonl", "--input-format", "jsonl", "--level",
              "tokens", "--task", "relations", "--thresholds", "--json")
    t = json.loads(out.out)["thresholds"]
    assert [(p["threshold"], p["tp"], p["fp"], p["fn"]) for p in t["points"]] == [(0.2, 2, 1, 0), (0.5, 1, 1, 1),
                                                                                 (0.9, 1, 0, 1)]


def test_breakdowns_of_relations(capsys, files, tmp_path):
    base = ["score", files["gold"], files["C"], "--input-format", "jsonl", "--level", "tokens", "--task", "relations"]
    for spec in ("length", f"seen:{files['gold']}"):
        out = run(capsys, *base, "--breakdown", spec, code=2)
        assert "a relation has two arguments, no length or string of its own" in out.err
    # by a document attribute: even documents (C: TP 1 FP 1 FN 1 each) and odd ones (TP 0 FP 2 FN 2 each)
    attrs = tmp_path / "attrs.tsv"
    attrs.write_text("".join(f"d{k}\t{'even' if k % 2 == 0 else 'odd'}\n" for k in range(6)), encoding="utf-8")
    d = json.loads(run(capsys, *base, "--breakdown", f"attr:{attrs}", "--json").out)
    rows = {r["group"]: (r["tp"], r["fp"], r["fn"]) for r in d["breakdowns"][0]["rows"]}
    assert rows == {"even": (3, 3, 3), "odd": (0, 6, 6)}
