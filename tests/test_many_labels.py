"""Many labels: nothing is sized labels x labels, and the numbers are right.

The confusion table is stored for the label pairs that occur
(:class:`iescore.confusion.Confusion`); these tests check its views against
hand-computed tables, and a 20,000-label report against counts worked out by hand
from how the input is built.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iescore import score, score_tags
from iescore.confusion import Confusion
from iescore.model import Document, Span


def test_pairs_are_summed_sorted_and_zeros_dropped():
    # labels 0, 1, 2; none = 3. Pairs (1,0) twice, (0,3) once, (3,2) once, (2,2) with count 0
    c = Confusion.of_pairs(np.array([1, 0, 3, 1, 2]), np.array([0, 3, 2, 0, 2]), 3,
                           count=np.array([1, 1, 1, 1, 0]))
    assert list(zip(c.ref.tolist(), c.pred.tolist(), c.count.tolist())) == [(0, 3, 1), (1, 0, 2), (3, 2, 1)]
    # row sums: label 0 -> 1, label 1 -> 2, label 2 -> 0, none -> 1; columns: 0 -> 2, 2 -> 1, none -> 1
    assert c.row_sums().tolist() == [1, 2, 0, 1]
    assert c.col_sums().tolist() == [2, 0, 1, 1]
    assert c.table(["A", "B", "C"]) == {"A": {"none": 1}, "B": {"A": 2}, "C": {}, "none": {"C": 1}}
    dense = np.zeros((4, 4), dtype=np.int64)
    dense[0, 3], dense[1, 0], dense[3, 2] = 1, 2, 1
    assert np.array_equal(c.dense(), dense)
    again = Confusion.of_dense(dense)
    assert (again.ref.tolist(), again.pred.tolist(), again.count.tolist()) == (c.ref.tolist(), c.pred.tolist(), c.count.tolist())


def test_join_renumbers_labels_and_keeps_none():
    # batch 1 has labels [B, C] (none = 2): B->C once, C->none once;
    # batch 2 has labels [A, C] (none = 2): A->C twice, none->C once.
    # Joint labels [A, B, C] (none = 3): B->C 1, C->none 1, A->C 2, none->C 1
    one = Confusion.of_pairs(np.array([0, 1]), np.array([1, 2]), 2)
    two = Confusion.of_pairs(np.array([0, 0, 2]), np.array([1, 1, 1]), 2)
    j = Confusion.join([(one, np.array([1, 2])), (two, np.array([0, 2]))], 3)
    assert j.table(["A", "B", "C"]) == {"A": {"C": 2}, "B": {"C": 1}, "C": {"none": 1}, "none": {"C": 1}}


N_LABELS = 20_000


def many_label_documents():
    """Label k (``L00000`` ...) has one answer, token 3k..3k+2 of one document.
    Predictions: k % 4 == 0 exact; k % 4 == 1 same span, label k + 1 (a substitution);
    k % 4 == 2 missed; k % 4 == 3 exact, plus a spurious span of label k at token 3k + 2."""
    names = [f"L{k:05d}" for k in range(N_LABELS)]
    ref = Document("d", ("w",) * (3 * N_LABELS), tuple(Span(names[k], 3 * k, 3 * k + 2) for k in range(N_LABELS)))
    pred = []
    for k in range(N_LABELS):
        if k % 4 == 0:
            pred.append(Span(names[k], 3 * k, 3 * k + 2))
        elif k % 4 == 1:
            pred.append(Span(names[k + 1], 3 * k, 3 * k + 2))
        elif k % 4 == 3:
            pred += [Span(names[k], 3 * k, 3 * k + 2), Span(names[k], 3 * k + 2, 3 * k + 3)]
    return names, ref, pred


def test_twenty_thousand_labels_are_counted_right():
    names, ref, pred = many_label_documents()
    r = score(reference=[ref], prediction=[pred])  # AO, exact, any-match: full report
    q = N_LABELS // 4  # 5,000 labels of each kind
    # TP: the exact ones (kinds 0 and 3) = 2q; FP: the relabelled span (kind 1) and the
    # spurious one (kind 3) = 2q; FN: kinds 1 and 2 = 2q
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2 * q, 2 * q, 2 * q)
    # slots (Makhoul): C = 2q; S = q (kind 1: same span, another label); D = q (kind 2);
    # I = q (the spurious spans: they touch no answer, so they are not aligned)
    assert (r.overall.C, r.overall.S, r.overall.D, r.overall.I) == (2 * q, q, q, q)
    t = r.confusion_table()
    assert len(t) == N_LABELS + 1
    assert t["L00000"] == {"L00000": 1}
    assert t["L00001"] == {"L00002": 1}  # substituted
    assert t["L00002"] == {"none": 1}  # deleted
    assert t["L00003"] == {"L00003": 1}
    assert t["none"] == {names[k]: 1 for k in range(3, N_LABELS, 4)}  # the insertions
    # the pairs stored: (k, k) for kinds 0 and 3 (2q), (k, k + 1) for kind 1 (q),
    # (k, none) for kind 2 (q), (none, k) for kind 3 (q): 5q of the 20,001^2 cells
    assert len(r.confusion_counts) == 5 * q
    # per label: L00001 has one answer and no prediction of its own label; L00002 one
    # answer (missed) and one prediction (the relabelled span of L00001)
    d = r.to_dict()
    assert (d["per_label"]["L00001"]["support"], d["per_label"]["L00001"]["predicted"]) == (1, 0)
    assert (d["per_label"]["L00002"]["support"], d["per_label"]["L00002"]["predicted"]) == (1, 1)
    assert (d["per_label"]["L00003"]["tp"], d["per_label"]["L00003"]["fp"]) == (1, 1)
    assert d == json.loads(r.to_json())


def test_many_labels_in_tags_prf_and_full_agree():
    # tag input: label k's entity is sentence k ("B-Lk I-Lk"); the prediction retypes
    # every third one (k % 3 == 0 -> label k + 1)
    n = 9_000
    ref = [[f"B-L{k}", f"I-L{k}"] for k in range(n)]
    pred = [[f"B-L{k + 1}", f"I-L{k + 1}"] if k % 3 == 0 else [f"B-L{k}", f"I-L{k}"] for k in range(n)]
    # TP = 2n/3 = 6000; FP = FN = n/3 = 3000
    for detail in ("full", "prf"):
        r = score_tags(reference=ref, prediction=pred, scheme="IOB2", detail=detail)
        assert (r.overall.tp, r.overall.fp, r.overall.fn) == (6000, 3000, 3000)
    full = score_tags(reference=ref, prediction=pred, scheme="IOB2")
    # label L0 (answer retyped to L1): row L0 -> {L1: 1}; label L1's own answer is exact
    assert full.confusion_table()["L0"] == {"L1": 1} and full.confusion_table()["L1"] == {"L1": 1}
    assert full.confusion.shape == (n + 1, n + 1)  # n labels (the last retyped one, 8997, gets L8998), then none


@pytest.mark.parametrize("options", [{}, {"detail": "prf"}, {"rule": "O(1,1)", "counting": "one-to-one"},
                                     {"mode": "match-best"}])
def test_to_dict_is_the_json_text_read_back(options):
    r = score_tags(reference=[["B-A", "I-A", "O", "B-B"]], prediction=[["B-A", "O", "B-B", "I-B"]],
                   scheme="IOB2", **options)

    def strict(a, b):  # equal, with the same types all the way down
        assert type(a) is type(b)
        if isinstance(a, dict):
            assert list(a) == list(b)
            for k in a:
                strict(a[k], b[k])
        elif isinstance(a, list):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                strict(x, y)
        else:
            assert a == b or (a != a and b != b)

    strict(r.to_dict(), json.loads(r.to_json()))


# --- the per-label summary computed over arrays == the scalar formulas, label by label ---------
#
# ``reference_summary`` is the plain reference: the per-label entries, the token &
# separator measures per label, the categories, the macro and weighted averages and their
# left-out lists, computed one label at a time from ``report.per_label`` with the scalar
# measures of iescore.measures (the way the report computed them before they were
# vectorised). Values must be the same floats (and ints stay ints).

from hypothesis import example, given, settings
from hypothesis import strategies as st

from iescore.categories import CATEGORIES, MUC_CODES, MUC_OF
from iescore.measures import (
    Counts,
    _binary,
    binary_arrays,
    f_beta,
    makhoul_e,
    muc_err,
    precision,
    recall,
    slot_error_rate,
    ts_measures,
)
from iescore.ts import TS_FIELDS


def _mean(xs):
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def reference_summary(r):
    cfg = r.config
    full = cfg.detail == "full"
    per = r.per_label
    if full:  # support / predicted: the confusion table's row and column sums
        table = r.confusion_table()
        support = {lab: sum(table[lab].values()) for lab in r.labels}
        predicted = dict.fromkeys(r.labels, 0)
        for row in table.values():
            for lab, n in row.items():
                if lab != "none":
                    predicted[lab] += n
    else:
        support = {lab: c.tp + c.fn for lab, c in per.items()}
        predicted = {lab: c.tp + c.fp for lab, c in per.items()}
    entries = {
        lab: {
            "precision": precision(c), "recall": recall(c), "f1": f_beta(c.tp, c.fp, c.fn, 1.0),
            "f_beta": f_beta(c.tp, c.fp, c.fn, cfg.beta),
            "jaccard": None if c.tp + c.fp + c.fn == 0 else c.tp / (c.tp + c.fp + c.fn),
            "tp": c.tp, "fp": c.fp, "fn": c.fn,
            "support": support[lab], "predicted": predicted[lab],
            "ser": slot_error_rate(c) if full else None, "err": muc_err(c) if full else None,
            "e": makhoul_e(c, cfg.alpha) if full else None,
        }
        for lab, c in per.items()
    }
    measured = ("precision", "recall", "f1", "f_beta", "jaccard")

    def weighted(key):
        vals = [(support[lab], e[key]) for lab, e in entries.items() if support[lab] and e[key] is not None]
        den = sum(w for w, _ in vals)
        return None if den == 0 else sum(w * v for w, v in vals) / den

    out = {
        "per_label": entries,
        "macro": {k: _mean([e[k] for e in entries.values()]) for k in measured},
        "macro_left_out": {k: [lab for lab in r.labels if entries[lab][k] is None] for k in measured},
        "weighted": {k: weighted(k) for k in measured},
        "zero_weight_labels": [lab for lab in r.labels if support[lab] == 0],
        "weighted_left_out": {k: [lab for lab in r.labels if support[lab] > 0 and entries[lab][k] is None]
                              for k in measured},
    }
    if r.ts_error is None:
        if r.ts_cells is not None:
            tot = r.ts_cells.sum(axis=0)
            per_ts = {lab: ts_measures(Counts(**dict(zip(TS_FIELDS, tot[j].tolist()))), beta=cfg.beta)
                      for j, lab in enumerate(r.labels)}
        else:
            per_ts = {lab: ts_measures(c, beta=cfg.beta, token_weight=cfg.token_weight,
                                       separator_weight=cfg.separator_weight) for lab, c in per.items()}
        out["ts_per_label"] = per_ts
        out["ts_macro"] = {
            "f1_macro": _mean([m["ts"]["f1"] for m in per_ts.values()]),
            "f_beta_macro": _mean([m["ts"]["f_beta"] for m in per_ts.values()]),
            "token_f1_macro": _mean([m["tokens"]["f1"] for m in per_ts.values()]),
            "token_f_beta_macro": _mean([m["tokens"]["f_beta"] for m in per_ts.values()]),
            "accuracy_macro": _mean([m["ts"]["accuracy"] for m in per_ts.values()]),
            "kappa_macro": _mean([m["ts"]["kappa"] for m in per_ts.values()]),
        }
    if r.categories is not None:
        out["categories"] = {}
        for j, lab in enumerate(r.labels):
            row = r.categories[j].tolist()
            d = {name: int(n) for name, n in zip(CATEGORIES, row)}
            for code in MUC_CODES:
                d[code] = sum(int(n) for n, c in zip(row, MUC_OF) if c == code)
            out["categories"][lab] = d
    return out


def strict_equal(a, b, path="$"):
    """Equal, with the same types all the way down (so 1 != 1.0 and the key orders agree)."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            strict_equal(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            strict_equal(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def assert_summary_matches_reference(r):
    ref = reference_summary(r)
    d = r.to_dict()
    strict_equal(d["per_label"], ref["per_label"])
    av = d["averages"]
    for k in ("precision", "recall", "f1", "f_beta", "jaccard"):
        strict_equal(av["macro"][k], ref["macro"][k], f"macro.{k}")
        strict_equal(av["weighted"][k], ref["weighted"][k], f"weighted.{k}")
    strict_equal(av["macro"]["left_out"], ref["macro_left_out"])
    strict_equal(av["weighted"]["left_out"], ref["weighted_left_out"])
    strict_equal(av["weighted"]["zero_weight_labels"], ref["zero_weight_labels"])
    if "ts_per_label" in ref:
        strict_equal(d["ts"]["per_label"], ref["ts_per_label"])
        for k, v in ref["ts_macro"].items():
            strict_equal(d["ts"][k], v, k)
    else:
        assert d["ts"] is None
    if "categories" in ref:
        strict_equal(d["categories"]["per_label"], ref["categories"])
    strict_equal(d, json.loads(r.to_json()))


_NAMES = [f"L{k}" for k in range(6)]


@st.composite
def _corpora(draw):
    docs, preds = [], []
    weighted = draw(st.booleans())
    for k in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 14))

        def spans():
            out = []
            for _ in range(draw(st.integers(0, 5))):
                a = draw(st.integers(0, n - 1))
                b = draw(st.integers(a + 1, min(n, a + 4)))
                out.append(Span(draw(st.sampled_from(_NAMES)), a, b))
            return out

        w = sw = None
        if weighted:
            w = tuple(draw(st.lists(st.sampled_from([0.1, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
            sw = tuple(draw(st.lists(st.sampled_from([0.3, 1.0, 2.5]), min_size=n - 1, max_size=n - 1)))
        docs.append(Document(f"d{k}", ("w",) * n, tuple(spans()), token_weights=w, separator_weights=sw))
        preds.append(spans())
    return docs, preds


_OPTIONS = [{}, {"beta": 2.0}, {"beta": 0.5, "ser_weights": (1.0, 0.5, 0.25)},  # detail="prf": the tags test
            {"rule": "O(1,1)", "counting": "one-to-one"}, {"mode": "match-best"},
            {"token_weight": 2.0, "separator_weight": 0.5}, {"average": "macro", "rule": "C(1)"}]


@settings(max_examples=150, deadline=None)
@given(_corpora(), st.sampled_from(_OPTIONS))
def test_label_summary_is_the_scalar_formulas_label_by_label(corpus, options):
    import warnings

    docs, preds = corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = score(reference=docs, prediction=preds, **options)
    assert_summary_matches_reference(r)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.sampled_from([{}, {"detail": "prf"}, {"beta": 3.0}]), st.integers(0, 10**6))
def test_label_summary_of_tags_with_many_labels(n_labels, options, seed):
    # tags over up to 400 labels (more than a byte's worth of tags), random retypings and misses
    import random as _random

    rng = _random.Random(seed)
    ref, pred = [], []
    for _ in range(60):
        g, p = [], []
        for _ in range(rng.randint(1, 6)):
            lab, other = f"T{rng.randrange(n_labels)}", f"T{rng.randrange(n_labels)}"
            k = rng.randint(1, 3)
            g += [f"B-{lab}"] + [f"I-{lab}"] * (k - 1) + ["O"]
            choice = rng.random()
            q = lab if choice < 0.6 else other
            p += (["O"] * (k + 1)) if choice > 0.9 else ([f"B-{q}"] + [f"I-{q}"] * (k - 1) + ["O"])
        ref.append(g)
        pred.append(p)
    assert_summary_matches_reference(score_tags(reference=ref, prediction=pred, scheme="IOB2", **options))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9),
                          st.integers(0, 3 * 10**9)), min_size=1, max_size=8),
       st.sampled_from([1.0, 2.0, 0.5]))
def test_binary_measures_over_arrays_match_the_scalar_ones_for_big_counts(rows, beta):
    # n * n beyond 2**53: the integer products must stay exact (rows computed by the scalar formulas)
    rows = [(tp, fp, fn, max(n, tp + fp + fn)) for tp, fp, fn, n in rows]
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows)]
    got = binary_arrays(*cols, beta)
    for i, row in enumerate(rows):
        want = _binary(*row, beta)
        for k, v in want.items():
            x = got[k][i].item()
            assert (x is None or x != x) if v is None else (type(x) is type(v) and x == v), (k, row, x, v)


# --- the vocabulary's whole-list passes == the tag-by-tag reading -------------------------------

from iescore.decode.vocab import Vocabulary
from iescore.errors import InputError
from iescore.schemes import I as ROLE_I
from iescore.schemes import Scheme, get_scheme

_VALID = ["O", "B-A", "I-A", "B-B", "I-B", "B-a b", "I-C-D", "B-C-D"] + [f"{p}-T{k}" for p in "BI" for k in range(300)]
_ODD = ["E-A", "S-B", "B-", "B", "I", "A", "", "X-A", "B-A\u200b", "B-\ufeffA", "-A"]  # invalid in some schemes


@st.composite
def _tag_batch(draw):
    """Valid tags with at most one odd tag among them (each odd tag must be met alone)."""
    tags = draw(st.lists(st.sampled_from(_VALID), max_size=40))
    if draw(st.booleans()):
        tags.insert(draw(st.integers(0, len(tags))), draw(st.sampled_from(_ODD)))
    return tags


def _reference_roles(v, scheme, check):
    """The tag-by-tag reading (the loop Vocabulary.roles ran before its whole-list pass)."""
    n = len(v.tags)
    role, lab, labels = np.zeros(n, np.int8), np.full(n, -1, np.int32), {}
    for i, tag in enumerate(v.tags):
        parsed = v._split(tag)
        if parsed is None:
            continue
        problem = v._problem(i, scheme)
        if problem is not None:
            if not check:
                continue
            raise InputError(tag)
        prefix, label = parsed
        role[i] = ROLE_I if prefix == "" else scheme.letters[prefix]
        lab[i] = labels.setdefault(label, len(labels))
    return role, lab, list(labels)


@settings(max_examples=200, deadline=None)
@given(st.lists(_tag_batch(), min_size=1, max_size=4),
       st.sampled_from(["IOB2", "IOB1", "IOBES", "IO", "empty letter"]), st.booleans())
@example([["-A", "I-A", "O"]], "empty letter", True)  # every tag of the common form but for its letter
def test_vocabulary_roles_match_the_tag_by_tag_reading(batches, scheme_name, check):
    if scheme_name == "empty letter":  # a user's scheme with the empty prefix as a letter ("-A")
        iob2 = get_scheme("IOB2")
        scheme = Scheme("EMPTY", {"": 1, "I": 2}, iob2.start_ok, iob2.end_ok)
    else:
        scheme = get_scheme(scheme_name)
    v = Vocabulary()
    for tags in batches:  # several batches: roles() extends its arrays with the new tags
        v.encode(tags)
        assert list(zip(v._heads, v._tails)) == [(h, t) for h, _, t in (x.partition("-") for x in v.tags)]
        try:
            want = _reference_roles(v, scheme, check)
        except InputError:
            with pytest.raises(InputError):
                v.roles(scheme, check=check)
            return
        role, lab = v.roles(scheme, check=check)
        assert role.tolist() == want[0].tolist()
        # label ids: the same labels in the same order of first sight
        assert [v.labels[k] if k >= 0 else None for k in lab.tolist()] == \
               [want[2][k] if k >= 0 else None for k in want[1].tolist()]
        assert v.labels == want[2]


def _reference_prefixes(v):
    """The tag-by-tag reading of the prefixes scheme detection reads (as before the whole-list pass)."""
    from iescore.schemes import PREFIX_LETTERS

    out = set()
    for tag in v.tags:
        parsed = v._split(tag)
        if parsed is not None and (parsed[0] in PREFIX_LETTERS or (parsed[0] == "" and parsed[1] != "")):
            out.add(parsed[0])
    return out


_FORMS = _VALID[:8] + _ODD + ["-A", "-", "X-", "Y", "O-A", "M-A", "U-B", "L-", "E"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_FORMS), max_size=12), min_size=1, max_size=3),
       st.sampled_from(["O", "O-A", "Y"]))
def test_vocabulary_prefixes_match_the_tag_by_tag_reading(batches, outside):
    v = Vocabulary(outside=outside)
    for tags in batches:
        v.encode(tags)
        assert v.prefixes() == _reference_prefixes(v)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_VALID), st.sampled_from([3, b"B-A", None])), max_size=300),
                min_size=1, max_size=3))
def test_encode_gives_ids_in_order_of_first_sight_and_rejects_non_strings(batches):
    # ids by a plain dict, tag by tag; a batch with a non-string fails and adds no tag
    v, ids = Vocabulary(), {}
    for tags in batches:
        bad = [t for t in tags if not isinstance(t, str)]
        if bad:
            with pytest.raises(InputError, match=f"tags must be strings, got {bad[0]!r}"):
                v.encode(tags)
        else:
            before = len(ids)
            got = v.encode(tags)
            want = [ids.setdefault(t, len(ids)) for t in tags]
            assert got.tolist() == want
            # bytes while the vocabulary had fewer than 256 tags and still has at most 256
            assert got.dtype == (np.uint8 if before < 256 and len(ids) <= 256 else np.int32)
        assert v.tags == list(ids) and v.tag_ids == ids
        assert list(zip(v._heads, v._tails)) == [(h, t) for h, _, t in (x.partition("-") for x in v.tags)]


@pytest.mark.parametrize("n_labels", [3, 1_500])  # kept and copied / rebuilt on each call
def test_to_dict_is_a_fresh_tree_on_every_call(n_labels):
    ref = [[f"B-L{k}", "O"] for k in range(n_labels)]
    r = score_tags(reference=ref, prediction=ref, scheme="IOB2")
    a = r.to_dict()
    assert a["per_label"]["L1"]["tp"] == 1 and a["ts"]["per_label"]["L1"]["tokens"]["tp"] == 1
    a["per_label"]["L1"]["tp"] = -1
    a["ts"]["per_label"]["L1"]["tokens"]["tp"] = -1
    a["categories"]["per_label"]["L1"]["correct"] = -1
    a["averages"]["macro"]["left_out"]["f1"].append("x")
    b = r.to_dict()
    assert b["per_label"]["L1"]["tp"] == 1 and b["ts"]["per_label"]["L1"]["tokens"]["tp"] == 1
    assert b["categories"]["per_label"]["L1"]["correct"] == 1 and b["averages"]["macro"]["left_out"]["f1"] == []
    assert r.ts["per_label"]["L1"]["tokens"]["tp"] == 1
    # labels of the same counts get dicts of their own
    assert b["per_label"]["L1"] == b["per_label"]["L2"] and b["per_label"]["L1"] is not b["per_label"]["L2"]


# --- the per-label rows of to_dict() and the tag path's label order, against plain references ----

@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["tp", "fp", "precision", "f1", "e", "x y"]), min_size=1, max_size=6, unique=True),
       st.integers(0, 6), st.data())
def test_records_and_copies_are_plain_fresh_dicts(keys, n_rows, data):
    from iescore.summary import copies, records

    values = st.one_of(st.none(), st.integers(-3, 3), st.floats(allow_nan=False))
    # row numbers as distinct_rows gives them: every row used, some more than once
    at = data.draw(st.permutations(list(range(n_rows)) + data.draw(st.lists(st.integers(0, max(n_rows - 1, 0)),
                                                                           max_size=20 if n_rows else 0))))
    columns = [data.draw(st.lists(values, min_size=n_rows, max_size=n_rows)) for _ in keys]
    protos = records(keys, columns)
    want = [dict(zip(keys, row)) for row in zip(*columns)]  # the plain reading
    assert protos == want and all(type(d) is dict and list(d) == keys for d in protos)
    assert json.dumps(protos) == json.dumps(want)
    out = copies(protos, at)
    assert out == [want[i] for i in at] and len({id(d) for d in out}) == len(out)
    if out:  # a dict of its own: changing one changes no other
        out[0][keys[0]] = "changed"
        out[0]["new key"] = 1
        assert all(d == want[i] for d, i in zip(out[1:], at[1:]))
        assert records(keys, columns) == want
    # the distinct-rows case: each proto used once, in the order of a permutation
    perm = data.draw(st.permutations(range(n_rows)))
    assert copies(records(keys, columns), perm) == [want[i] for i in perm]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text("abAB-é", max_size=4), unique=True, max_size=20),
       st.dictionaries(st.text("abAB", max_size=2), st.text("ab", max_size=2), max_size=3))
def test_label_order_is_the_label_space_as_an_array(names, supertags):
    from iescore.config import Config
    from iescore.scoring.part import _label_space
    from iescore.scoring.tags import _label_order

    cfg = Config(supertags=supertags) if supertags else Config()
    labels, remap = _label_space(names, cfg)
    got_labels, lab_map = _label_order(names, cfg, np.int32)
    assert got_labels == labels and lab_map.tolist() == [remap[n] for n in names]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 150), st.integers(1, 150), st.lists(st.tuples(st.integers(0, 149), st.integers(0, 149),
       st.integers(0, 2**31 - 1), st.integers(0, 9)), max_size=120))
def test_cell_table_sums_are_the_dense_sums(n_docs, n_labels, cells):
    # sums by label (unsorted key: a bincount per field) and by document (sorted key) of
    # up to 150 groups, against the dense array summed by numpy
    from iescore.cells import CellTable

    cells = sorted({(d % n_docs, lab % n_labels): (a, b) for d, lab, a, b in cells}.items())
    doc = np.array([d for (d, _), _ in cells], dtype=np.int64)
    label = np.array([lab for (_, lab), _ in cells], dtype=np.int64)
    values = np.array([v for _, v in cells], dtype=np.int64).reshape(-1, 2)
    t = CellTable(doc=doc, label=label, values=values, fields=("tp", "fn"), n_labels=n_labels, n_docs=n_docs)
    dense = np.zeros((n_docs, n_labels, 2), dtype=np.int64)
    dense[doc, label] = values
    assert t.label_totals().tolist() == dense.sum(axis=0).tolist()
    assert t.doc_totals().tolist() == dense.sum(axis=1).tolist()


def test_encoding_many_new_tags_keeps_no_container_per_tag():
    # a container kept per new tag (a tuple of its split, say) would wake the cyclic garbage
    # collector, which then walks every live object: 20,000 new tags must leave the count
    # of tracked allocations about where it was (it counts containers alive, not freed ones)
    import gc

    tags = [f"{p}-T{k}" for k in range(10_000) for p in "BI"]
    v = Vocabulary()
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        before = gc.get_count()[0]
        v.encode(tags)
        v.roles(get_scheme("IOB2"))
        grown = gc.get_count()[0] - before
    finally:
        if was:
            gc.enable()
    assert grown < 1_000, grown
    assert v.labels == [f"T{k}" for k in range(10_000)]
