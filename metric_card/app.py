"""Gradio app of the Hugging Face Space (the standard evaluate widget)."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("metric_card.py")
launch_gradio_widget(module)
