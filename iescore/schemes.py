"""Old import path of :mod:`iescore.decode` (stage 1 of the pipeline: scheme tables,
vocabulary, decoders), kept so that code written against ``iescore.schemes`` still runs.
New code imports from :mod:`iescore.decode`."""

from .decode import *  # noqa: F403
from .decode import __all__  # noqa: F401
