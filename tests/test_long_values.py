"""A message quotes a long value of the input with its middle cut, never megabytes of it."""

from __future__ import annotations

import pytest

from iescore.errors import InputError, shown
from iescore.io.conll import read_conll


def test_shown_cuts_the_middle_and_says_the_length():
    assert shown("B-PER") == "'B-PER'"
    assert shown("a" * 80) == repr("a" * 80)
    assert shown("ab" * 50, limit=6) == "'aba' ... 'bab' (100 characters)"


def test_a_megabyte_line_is_quoted_cut(tmp_path):
    path = tmp_path / "g.conll"
    path.write_text("a B-PER B-PER\n" + "x" * 1_000_000 + " O\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_conll(str(path))
    assert str(exc.value) == (f"{path}:2: 2 columns where earlier lines have 3: '{'x' * 40}' ... "
                              f"'{'x' * 38} O' (1,000,002 characters)")


def test_a_long_invalid_tag_is_quoted_cut():
    import iescore

    with pytest.raises(InputError) as exc:
        iescore.score_tags(reference=[["B-PER"]], prediction=[["y" * 500]], scheme="IOB2")
    assert str(exc.value) == ("document '0' (prediction), token 0: invalid tag '" + "y" * 40 + "' ... '"
                              + "y" * 40 + "' (500 characters): not a tag of scheme IOB2; valid forms: "
                              "'B-<label>', 'I-<label>' or 'O'")
