"""Shared pieces of the recipes: data paths, progress bars, spaCy training with the iescore
scorer in its config, rank statistics, Markdown tables and plots."""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

from iescore.cost import status_mb

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
    return np.asarray(scipy.stats.rankdata(-v if higher_is_better else v, method="average"), dtype=float)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (``scipy.stats.spearmanr``); NaN when one side is
    constant (where scipy would also warn)."""
    if len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")
    return float(scipy.stats.spearmanr(a, b)[0])


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


@dataclass(frozen=True)
class RankComparison:
    """The systems' ranks under several evaluation models, compared on one common set.

    A rank shift only means something between two rankings of the same systems, so every rank
    here is taken among ``systems``: the systems that have a value under every model. The
    others are in ``left_out`` with the models under which they have none.
    """

    base: str  # the model the shifts are taken against
    systems: tuple[str, ...]  # ranked under every model, in input order
    left_out: dict[str, tuple[str, ...]]  # system -> the models under which it has no value
    ranks: dict[str, dict[str, float]]  # model -> system -> rank among ``systems`` (1 = best)
    shifts: dict[str, dict[str, float]]  # model -> system -> rank - base rank (negative: climbs)


def compare_rankings(
    values: Mapping[str, Mapping[str, float | None]], higher_is_better: Mapping[str, bool], base: str
) -> RankComparison:
    """Rank the systems under each model among those ranked under all of them; shifts against ``base``.

    ``values[system][model]`` is a system's value (``None``: undefined); ``higher_is_better``
    names the models. A system without a value under some model is left out of every ranking.

    >>> c = compare_rankings({"a": {"F": 0.9, "T": 0.7}, "b": {"F": 0.8, "T": None},
    ...                       "c": {"F": 0.7, "T": 0.9}}, {"F": True, "T": True}, "F")
    >>> c.systems, c.left_out
    (('a', 'c'), {'b': ('T',)})
    >>> c.ranks["T"], c.shifts["T"]
    ({'a': 2.0, 'c': 1.0}, {'a': 1.0, 'c': -1.0})
    """
    models = list(higher_is_better)
    left_out = {n: tuple(m for m in models if v.get(m) is None) for n, v in values.items()}
    left_out = {n: ms for n, ms in left_out.items() if ms}
    systems = tuple(n for n in values if n not in left_out)
    ranks = {
        m: dict(zip(systems, rankdata([values[n][m] for n in systems], higher_is_better[m]).tolist()))
        for m in models
    }
    shifts = {m: {n: ranks[m][n] - ranks[base][n] for n in systems} for m in models}
    return RankComparison(base, systems, left_out, ranks, shifts)


SAMPLE_INTERVAL_S = 0.05  # how often run_phase samples the resident set of a phase's process
PHASE_MEASURES = (
    "each phase runs in a fresh process (multiprocessing, spawn); CPU and wall time of the phase's "
    "call; start RSS: the process's resident set when the call begins (interpreter and the "
    "recipe's imports); peak RSS: the process's high-water resident set (VmHWM), so it includes "
    f"the start RSS; mean RSS: the average of resident-set samples taken every {SAMPLE_INTERVAL_S:g} s "
    "during the call; MB = 2**20 bytes"
)


def _rss_mb(pid: int) -> float | None:
    """The resident set of a process in MB (``/proc``, else psutil when installed, else None)."""
    rss = status_mb("VmRSS", pid)
    if rss is None:
        try:
            import psutil

            rss = psutil.Process(pid).memory_info().rss / 2**20
        except Exception:  # no psutil, or the process has just ended
            return None
    return rss


def _peak_rss_mb() -> float:
    """This process's peak resident set in MB.

    ``VmHWM`` where there is ``/proc``: it belongs to the process's own address space. Not
    ``ru_maxrss`` on Linux: a spawned child inherits there the resident set of the parent it
    was forked from before its ``exec`` (a child of a 500 MB parent reports 500 MB).
    """
    peak = status_mb("VmHWM")
    if peak is None:
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024  # bytes on macOS, else kB
    return peak


def _phase_child(conn: Any, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    conn.send(("started", _rss_mb(os.getpid())))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        result = fn(*args, **kwargs)
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        raise
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    conn.send(("done", result, cpu, wall, _peak_rss_mb()))


def run_phase(fn: Callable[..., Any], *args: Any, interval: float = SAMPLE_INTERVAL_S, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    """Run ``fn(*args, **kwargs)`` in a fresh process and measure it; returns (result, measures).

    The measures (see ``PHASE_MEASURES``): ``cpu_s``, ``wall_s``, ``start_rss_mb``,
    ``peak_rss_mb``, ``mean_rss_mb`` (None when the call ended before the first sample) and
    ``rss_samples``. ``fn``, its arguments and its result must pickle, and ``fn`` must be
    importable (defined at the top of a module). An exception in the phase is raised here as
    a ``RuntimeError`` carrying the child's traceback.
    """
    ctx = mp.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_phase_child, args=(send, fn, args, kwargs))
    proc.start()
    send.close()
    start_rss, samples, msg = None, [], None
    try:
        while True:
            if receive.poll(interval):
                msg = receive.recv()
                if msg[0] != "started":
                    break
                start_rss = msg[1]
            elif not proc.is_alive():
                raise RuntimeError(f"phase {fn.__name__} ended without a result (exit code {proc.exitcode})")
            elif start_rss is not None and (rss := _rss_mb(proc.pid)) is not None:
                samples.append(rss)
    finally:
        proc.join()
    if msg[0] == "error":
        raise RuntimeError(f"phase {fn.__name__} failed in its process:\n{msg[1]}")
    _, result, cpu, wall, peak = msg
    peak = max([peak, *samples])  # a sample may fall after the child read its peak, while it sends
    measures = {
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "start_rss_mb": None if start_rss is None else round(start_rss, 1),
        "peak_rss_mb": round(peak, 1),
        "mean_rss_mb": round(sum(samples) / len(samples), 1) if samples else None,
        "rss_samples": len(samples),
    }
    return result, measures


RUNTIME_HEADER = ["phase", "CPU s", "wall s", "start RSS MB", "peak RSS MB", "mean RSS MB"]


def runtime_rows(runtime: Mapping[str, Any]) -> list[list[Any]]:
    """The rows of a runtime table (``RUNTIME_HEADER``) from ``run_phase`` measures by phase name."""
    keys = ("cpu_s", "wall_s", "start_rss_mb", "peak_rss_mb", "mean_rss_mb")
    return [[k] + ["-" if v[c] is None else v[c] for c in keys] for k, v in runtime.items() if isinstance(v, dict)]


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
