"""Shared pieces of the recipes: data paths, progress bars, spaCy training with the iescore
scorer in its config, rank statistics, Markdown tables and plots."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_dir(arg: str | None) -> Path:
    """``--data``, else ``$IESCORE_DATA``, else ``../shared/data`` beside the checkout."""
    path = Path(arg or os.environ.get("IESCORE_DATA") or DEFAULT_DATA)
    if not path.is_dir():
        raise SystemExit(f"data folder {path} not found: pass --data or set IESCORE_DATA")
    return path


def recipe_parser(description: str | None, *, out: str, quick: str) -> argparse.ArgumentParser:
    """The options every recipe takes: ``--data``, ``--out`` and ``--quick``."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="the shared data folder (default: $IESCORE_DATA or ../shared/data)")
    ap.add_argument("--out", default=out, help="output folder")
    ap.add_argument("--quick", action="store_true", help=quick)
    return ap


def save_figure(fig: Any, path: Path, title: str | None = None) -> None:
    """Title (optional), lay out, write at 110 dpi and close a matplotlib figure."""
    import matplotlib.pyplot as plt

    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def progress(items: Iterable[Any], desc: str, total: int | None = None) -> Iterator[Any]:
    """A tqdm progress bar on stderr (plain lines when tqdm is missing)."""
    try:
        from tqdm import tqdm

        yield from tqdm(items, desc=desc, total=total, file=sys.stderr, leave=False)
    except ImportError:
        items = list(items)
        for k, x in enumerate(items):
            print(f"{desc}: {k + 1}/{len(items)}", file=sys.stderr)
            yield x


def rankdata(values: Sequence[float], higher_is_better: bool = True) -> np.ndarray:
    """1 = best; ties share the average rank."""
    v = np.asarray(values, dtype=float)
    v = -v if higher_is_better else v
    order = np.argsort(v, kind="stable")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(1, len(v) + 1)
    for x in np.unique(v):
        m = v == x
        ranks[m] = ranks[m].mean()
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson correlation of average ranks)."""
    ra, rb = rankdata(a), rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / den) if den else float("nan")


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    def fmt(x: Any) -> str:
        if isinstance(x, float):
            return "-" if x != x else f"{x:.4f}" if abs(x) < 1.5 else f"{x:.2f}"
        return str(x)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True))


class Meter:
    """CPU time and peak memory (max RSS) of a block: the runtime measures of an evaluation."""

    def __enter__(self) -> Meter:
        self.cpu0 = time.process_time()
        self.wall0 = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cpu_s = time.process_time() - self.cpu0
        self.wall_s = time.perf_counter() - self.wall0
        self.max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def to_dict(self) -> dict[str, float]:
        return {"cpu_s": round(self.cpu_s, 3), "wall_s": round(self.wall_s, 3), "max_rss_mb": round(self.max_rss_mb, 1)}


def train_spacy_ner(
    docs_train: list[Any],
    docs_dev: list[Any],
    out: Path,
    *,
    beam: bool = False,
    max_steps: int = 600,
    max_epochs: int = 3,
    rule: str = "O(1,1)",
) -> Path:
    """Train a small spaCy NER pipeline with the iescore scorer in its config; returns model-last.

    The scorer is ``iescore.spans.v1`` and ``ents_ts_f`` (TS-F1^M) takes part in model selection.
    """
    import spacy
    from spacy.cli.init_config import init_config
    from spacy.cli.train import train as spacy_train
    from spacy.tokens import DocBin

    out.mkdir(parents=True, exist_ok=True)
    DocBin(docs=docs_train).to_disk(out / "train.spacy")
    DocBin(docs=docs_dev).to_disk(out / "dev.spacy")
    cfg = init_config(lang="en", pipeline=["ner"], optimize="efficiency", gpu=False)
    if beam:
        cfg["components"]["ner"]["factory"] = "beam_ner"
        cfg["components"]["ner"]["beam_width"] = 8
    cfg["components"]["ner"]["scorer"] = {"@scorers": "iescore.spans.v1", "rule": rule}
    cfg["training"]["score_weights"] = {"ents_f": 0.5, "ents_ts_f": 0.5, "ents_p": 0.0, "ents_r": 0.0}
    cfg["training"]["max_steps"] = max_steps
    cfg["training"]["max_epochs"] = max_epochs
    cfg["training"]["eval_frequency"] = max(10, max_steps // 4)
    cfg["paths"]["train"] = str(out / "train.spacy")
    cfg["paths"]["dev"] = str(out / "dev.spacy")
    cfg.to_disk(out / "config.cfg")
    spacy_train(out / "config.cfg", out / "model", use_gpu=-1)
    del spacy
    return out / "model" / "model-last"
