"""DocBin files carry entity links: a span's kb_id_ is read as a link and written back."""

import pytest
from conftest import require

from iescore.errors import InputError
from iescore.io.chars import TextDocument


def test_docbin_keeps_kb_ids_as_links(tmp_path):
    require("spacy")
    from iescore.io.docbin import read_docbin, write_docbin

    t = "Al Roth works for IBM in Paris ."
    d = TextDocument("d1", t, (("PER", 0, 7), ("ORG", 18, 21), ("LOC", 25, 30)), links=((0, "Q1"), (1, "Q37156")))
    write_docbin([d], str(tmp_path / "x.spacy"))
    (back,) = read_docbin(str(tmp_path / "x.spacy")).documents
    assert [((x.span.start, x.span.end), x.id) for x in back.links] == [((0, 7), "Q1"), ((18, 21), "Q37156")]
    with pytest.raises(InputError, match=r"document 'd2': the link of span \('PER', 0, 7\) is on none of the document's spans"):
        write_docbin([TextDocument("d2", t, links=((("PER", 0, 7), "Q1"),))], str(tmp_path / "y.spacy"))
