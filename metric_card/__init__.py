"""The iescore ``evaluate`` metric module (Hugging Face Space layout).

``PATH`` is the folder to pass to ``evaluate.load`` (it works offline)::

    import evaluate, iescore.metric_card
    metric = evaluate.load(iescore.metric_card.PATH)

``iescore metric-path`` prints the same path.
"""

import os

PATH = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(PATH, "metric_card.py")
