"""The indented JSON writer (iescore.render.jsontext) against its reference, ``json.dumps``.

The writer must give ``json.dumps(obj, indent=...)``'s text exactly: by hand on small
trees, on random trees (hypothesis), on a whole report, and with the same errors.
"""

from __future__ import annotations

import io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import score_tags
from iescore.render.jsontext import PIECES_PER_CHUNK, json_pieces, json_text, write_json

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),  # any characters: quotes, backslashes, line breaks, non-ASCII
    st.sampled_from(["{", "}", "[", "]", ",\n", '": "', "\u2028", "\ud800"]),  # JSON's own characters, a lone surrogate
)
KEYS = st.one_of(st.text(max_size=4), st.integers(-5, 5), st.sampled_from([1.5, True, False, None, math.inf]))
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=30,
)


def test_by_hand():
    # level 0: the outer dict; "a" is an innermost list at level 1 (its items at 4 spaces)
    obj = {"a": [1, 2.5], "b": {}, "c": {"d": None, "e": [[]]}, "f": "x\ny"}
    assert json_text(obj) == (
        '{\n'
        '  "a": [\n    1,\n    2.5\n  ],\n'
        '  "b": {},\n'
        '  "c": {\n    "d": null,\n    "e": [\n      []\n    ]\n  },\n'
        '  "f": "x\\ny"\n'
        '}'
    )
    assert json_text([]) == "[]" and json_text(3) == "3" and json_text({1: {}}) == '{\n  "1": {}\n}'
    assert json_text({"a": [1]}, indent="\t") == '{\n\t"a": [\n\t\t1\n\t]\n}'
    assert json_text({"a": [1]}, indent=0) == '{\n"a": [\n1\n]\n}'


@settings(max_examples=400, deadline=None)
@given(TREES, st.sampled_from([2, 0, 4, "\t"]))
def test_same_text_as_json_dumps(obj, indent):
    try:
        want = json.dumps(obj, indent=indent)
    except (TypeError, ValueError) as exc:  # e.g. a float key that is NaN is fine; nothing here fails
        with pytest.raises(type(exc)):
            json_text(obj, indent)
        return
    assert json_text(obj, indent) == want
    out = io.StringIO()
    write_json(obj, out, indent)
    assert out.getvalue() == want


def test_the_same_errors_as_json_dumps():
    for bad in ({"a": {1, 2}}, {"a": [object()]}, {(1, 2): 3}, {"a": {(1, 2): 3}}):
        with pytest.raises(TypeError):
            json.dumps(bad, indent=2)
        with pytest.raises(TypeError):
            json_text(bad)
    loop: list = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_text({"x": loop})


def test_a_report_is_written_as_json_dumps_writes_it():
    r = score_tags(reference=[["B-LOC", "I-LOC", "O", "B-PER"], ["B-X", "O"]],
                   prediction=[["B-LOC", "O", "O", "B-PER"], ["O", "B-X"]])
    d = r.to_dict()
    assert json_text(d) == json.dumps(d, indent=2)


def test_the_text_comes_in_chunks_of_bounded_size():
    # 20,000 innermost dicts (about 40 characters each) under one dict: each chunk joins
    # at most PIECES_PER_CHUNK pieces, so there are several, none holding the whole text
    obj = {f"label{k}": {"tp": k, "f1": k / 7} for k in range(20_000)}
    chunks = list(json_pieces(obj))
    want = json.dumps(obj, indent=2)
    assert "".join(chunks) == want
    assert len(chunks) == 20_000 // PIECES_PER_CHUNK + 1  # 4 full chunks, then the rest and the brace
    assert max(map(len, chunks)) < 100 * PIECES_PER_CHUNK
    out = io.StringIO()
    write_json(obj, out)
    assert out.getvalue() == want


def test_report_to_json_with_indent_is_json_dumps_text():
    r = score_tags(reference=[["B-LOC", "O"]], prediction=[["B-PER", "O"]])
    assert r.to_json(indent=2) == json.dumps(r.to_dict(), indent=2)
    assert r.to_json(indent="  ", sort_keys=True) == json.dumps(r.to_dict(), indent="  ", sort_keys=True)
    assert r.to_json() == json.dumps(r.to_dict())
