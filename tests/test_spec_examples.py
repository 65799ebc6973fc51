"""Every worked example of SPEC.md §4, §6 and §9, with the papers' numbers."""

from __future__ import annotations

import pytest

from iescore import Document, Span, Template, score, score_templates
from iescore.measures import Counts, makhoul_e, muc_err, slot_error_rate

# --- De Sitter et al. 2004, Example 6 (AO) -------------------------------------------
# F(D) = {(18,25), (93,100)}, F^(D) = {(20,25), (93,101), (50,52)}; positions 1-based inclusive.
EX6_REF = Document(
    id="D",
    tokens=tuple(f"w{i}" for i in range(1, 121)),
    spans=(Span.from_inclusive("loc", 18, 25), Span.from_inclusive("loc", 93, 100)),
)
EX6_PRED = [[Span.from_inclusive("loc", 20, 25), Span.from_inclusive("loc", 93, 101), Span.from_inclusive("loc", 50, 52)]]


@pytest.mark.parametrize(
    "rule, expected",
    [("exact", (0, 3, 2)), ("contain(1)", (1, 2, 1)), ("overlap(1,2)", (2, 1, 0))],
)
def test_de_sitter_example_6(rule, expected):
    c = score(reference=[EX6_REF], prediction=EX6_PRED, rule=rule).overall
    assert (c.tp, c.fp, c.fn) == expected


def test_from_inclusive_converts_to_half_open():
    s = Span.from_inclusive("loc", 18, 25)
    assert (s.start, s.end) == (17, 25)
    assert s.to_inclusive() == (18, 25)


# --- De Sitter et al. 2004, Example 7 (OBD, speaker) -----------------------------------
EX7_REF = Template("D", {"speaker": ("Al Roth", "Ido Erev")})
EX7_PRED = Template("D", {"speaker": ("Al Roth", "Ido", "Cristina Bicchieri")})


@pytest.mark.parametrize("rule, expected", [("E", (1, 2, 1)), ("O(1,2)", (2, 1, 0))])
def test_de_sitter_example_7(rule, expected):
    c = score_templates(reference=[EX7_REF], prediction=[EX7_PRED], rule=rule).overall
    assert (c.tp, c.fp, c.fn) == expected


def test_de_sitter_example_7_from_ao_documents():
    """The same example reached from positioned spans: OBD is position-free."""
    toks = ("Al", "Roth", "and", "Ido", "Erev", "meet", "Cristina", "Bicchieri", "Al", "Roth")
    ref = Document("D", toks, (Span("speaker", 0, 2), Span("speaker", 3, 5), Span("speaker", 8, 10)))
    pred = [[Span("speaker", 8, 10), Span("speaker", 3, 4), Span("speaker", 6, 8)]]
    e = score(reference=[ref], prediction=pred, setting="OBD", rule="E").overall
    o = score(reference=[ref], prediction=pred, setting="OBD", rule="O(1,2)").overall
    assert (e.tp, e.fp, e.fn) == (1, 2, 1)
    assert (o.tp, o.fp, o.fn) == (2, 1, 0)


# --- Esuli & Sebastiani 2010, the fox example (SPEC §6) ----------------------------------
FOX = ("The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog")
FOX_REF = Document("fox", FOX, (Span("X", 1, 3), Span("X", 7, 9)))
FOX_PRED = [[Span("X", 1, 4), Span("X", 7, 8), Span("X", 8, 9)]]


def test_esuli_fox_token_and_separator():
    r = score(reference=[FOX_REF], prediction=FOX_PRED)
    ts = r.to_dict()["ts"]["per_label"]["X"]["ts"]
    assert (ts["tp"], ts["fp"], ts["fn"]) == (5, 2, 1)
    assert ts["f1"] == pytest.approx(10 / 13)
    assert r.to_dict()["ts"]["f1_macro"] == pytest.approx(10 / 13)


def test_esuli_fox_segment_f1():
    exact = score(reference=[FOX_REF], prediction=FOX_PRED, rule="exact")
    assert exact.f == 0
    anyov = score(reference=[FOX_REF], prediction=FOX_PRED, rule="O(inf,inf)", counting="any")
    assert anyov.f == 1


# --- Makhoul et al. 2000, Table 1 -------------------------------------------------------
def test_makhoul_table_1_from_counts():
    n = 10
    a = Counts(D=n)
    b = Counts(D=n, I=n // 5)
    assert (muc_err(a), slot_error_rate(a)) == (1.0, 1.0)
    assert (muc_err(b), slot_error_rate(b)) == (1.0, 1.2)


def test_makhoul_table_1_from_spans():
    toks = tuple("abcdefghijklmnopqrst")
    ref = Document("d", toks, tuple(Span("X", 2 * k, 2 * k + 1) for k in range(5)))  # N = 5
    system_a = score(reference=[ref], prediction=[[]]).to_dict()["slot_errors"]
    system_b = score(reference=[ref], prediction=[[Span("X", 15, 16)]]).to_dict()["slot_errors"]  # I = 0.2 N
    assert (system_a["S"], system_a["D"], system_a["I"], system_a["err"], system_a["ser"]) == (0, 5, 0, 1.0, 1.0)
    assert (system_b["S"], system_b["D"], system_b["I"], system_b["err"], system_b["ser"]) == (0, 5, 1, 1.0, 1.2)


def test_makhoul_e_is_one_minus_f():
    # C=3, S=1, D=1, I=2: N=5, M=6; with alpha=1/2, E = (S + D/2 + I/2)/(N/2 + M/2) = 2.5/5.5
    c = Counts(tp=3, fp=3, fn=2, C=3, S=1, D=1, I=2)
    assert makhoul_e(c, 0.5) == pytest.approx(2.5 / 5.5)
    # P = C/M = 1/2, R = C/N = 3/5, F1 = 2PR/(P+R) = 6/11 = 1 - 5/11
    assert makhoul_e(c, 0.5) == pytest.approx(1 - 6 / 11)


# --- De Sitter Fig. 1 template: location fillers appear twice, OBD counts them once --------
def test_obd_template_collapses_repeated_fillers():
    toks = ("CMU", ";", "Adamson", "Wing", "x", "CMU", ";", "Adamson", "Wing")
    ref = Document("fig1", toks, (Span("location", 0, 4), Span("location", 5, 9)))
    assert ref.template().slots == {"location": (("CMU", ";", "Adamson", "Wing"),)}
    pred = [[Span("location", 2, 4)]]  # "Adamson Wing": contained in the answer, 2 missing
    r = score(reference=[ref], prediction=pred, setting="OBD", rule="O(0,2)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    r = score(reference=[ref], prediction=pred, setting="AO", rule="O(0,2)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 1)
