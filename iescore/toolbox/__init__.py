"""Beside the pipeline, the CoNLL toolbox: validate, repair, convert and summarize the tag
columns of CoNLL files, on the decoder of stage 1 (`iescore.decode`).

`tags` works on one sentence's tags (`invalid_transitions`, `repair_tags`,
`convert_tags`), `columns` reads a CoNLL file's tag columns and writes it back with every
other byte kept, `commands` does the work of ``iescore validate``, ``repair``,
``convert`` and ``summarize`` on files, and `cli` gives them their command line.

Example:
    >>> from iescore.toolbox import convert_tags, invalid_transitions, repair_tags
    >>> [(t.before, t.after) for t in invalid_transitions(["O", "I-PER", "I-PER"], "IOB2")]
    [('O', 'I-PER')]
    >>> repair_tags(["O", "I-PER", "I-PER"], "IOB2")
    ['O', 'B-PER', 'I-PER']
    >>> convert_tags(["B-PER", "I-PER", "O"], "IOB2", "BILOU")
    ['B-PER', 'L-PER', 'O']
"""

from .commands import convert_file, repair_file, summarize_file, validate_file
from .tags import TOOLBOX_SCHEMES, Transition, convert_tags, invalid_transitions, repair_tags

__all__ = ["TOOLBOX_SCHEMES", "Transition", "invalid_transitions", "repair_tags", "convert_tags",
           "validate_file", "repair_file", "convert_file", "summarize_file"]
