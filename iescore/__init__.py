"""iescore: Information Extraction evaluation as the literature defines it.

Two settings (All Occurrences, One Best per Document), the matching rules
exact / contain(e) / overlap(e, m), any-match and one-to-one counting,
Makhoul's slot error rate, the token & separator model, and conlleval-exact
scoring of tag sequences. Counts are the core object; every measure is a pure
function of them; every report carries a reproducibility signature.

Quick start:
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-PER", "I-PER", "O", "B-LOC"]],
    ...                        prediction=[["B-PER", "I-PER", "O", "O"]])
    >>> round(r.f, 4), r.overall.tp, r.overall.fn
    (0.6667, 1, 1)
"""

from .config import Config, Rule, get_normaliser
from .errors import ConfigError, IEScoreError, InputError
from .files import score_files
from .io.conll import example_path
from .measures import Counts
from .model import Document, Link, Relation, Span, Template, TextRelation
from .options import LINK_SETTINGS, RELATION_SETTINGS
from .render import (
    notebook as _views,  # fills the report's view table (iescore.viewhooks): render sits above report
)
from .render.errorcounts import error_counts
from .report import Report
from .scorer import (
    Scorer,
    TaggedBatch,
    score,
    score_tags,
    score_templates,
    tagged_batch,
)
from .stats.folds import aggregate  # deprecated: iescore.stats.folds gives every measure
from .version import __version__

__all__ = [
    "__version__",
    "error_counts",
    "Config",
    "Rule",
    "get_normaliser",
    "IEScoreError",
    "InputError",
    "ConfigError",
    "Counts",
    "Document",
    "Span",
    "Template",
    "Relation",
    "Link",
    "TextRelation",
    "RELATION_SETTINGS",
    "LINK_SETTINGS",
    "Report",
    "aggregate",
    "Scorer",
    "TaggedBatch",
    "score",
    "score_files",
    "example_path",
    "score_tags",
    "score_templates",
    "tagged_batch",
]
