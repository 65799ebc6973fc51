"""No data lost: every file iescore writes is written whole or not at all (iescore.atomic),
and Ctrl-C stops the command line with one line and status 130.

The kill tests run the real command line in a child process that writes a 4.6 MB JSON
report (3,000 labels) with --output; the child pauses half-way through the report's text
(a wrapper around the report's pieces), once the parent sees the temporary file on disk
holding bytes, and the parent kills it there. Without the temporary file the target would
hold the first megabytes of the JSON: a file that does not parse.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iescore.atomic import atomic_write
from iescore.io.brat import read_brat, write_brat
from iescore.io.chars import TextDocument
from iescore.io.jsonl import read_jsonl, write_jsonl
from iescore.model import Span

OLD = '{"old": "report"}\n'

# Ctrl-C as at a terminal: a child started with SIGINT ignored (tests run from a shell's
# `cmd &` are) would keep it ignored, and Python installs no KeyboardInterrupt handler
TERMINAL = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"

# the child: iescore's command line, pausing half-way through the report's text (after
# 2 MB of the JSON's 4.6 MB) until it is killed
CHILD = TERMINAL + r"""
import sys, time
import iescore.cli as cli

real = cli.report_pieces

def paused(*a, **k):
    done = 0
    for piece in real(*a, **k):
        yield piece
        done += len(piece)
        if done >= 2_000_000:
            time.sleep(60)  # killed here
            done = -10**12

cli.report_pieces = paused
sys.exit(cli.main(sys.argv[1:]))
"""


def _labels_file(folder: Path) -> Path:
    p = folder / "many.conll"
    p.write_text("".join(f"w B-L{k} B-L{(k * 7) % 3000}\n\n" for k in range(3000)), encoding="utf-8")
    return p


def _temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.tmp"))


def _start_and_wait_for_temp(folder: Path, out: Path) -> subprocess.Popen[bytes]:
    """Start the child writing ``out`` and wait until its temporary file holds bytes."""
    src = _labels_file(folder)
    child = subprocess.Popen([sys.executable, "-c", CHILD, "score", str(src), "--format", "json", "--output", str(out)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tmp = _temps(out.parent)
        if tmp and tmp[0].stat().st_size >= 1_000_000:  # mid-write: a megabyte on disk, not yet whole
            return child
        assert child.poll() is None, child.communicate()
        time.sleep(0.01)
    child.kill()
    raise AssertionError("the child never wrote its temporary file")


@pytest.mark.parametrize("old", [True, False], ids=["old-file", "no-file"])
def test_sigkill_mid_write_leaves_the_old_file_or_none(tmp_path, old):
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    if old:
        out.write_text(OLD, encoding="utf-8")
    child = _start_and_wait_for_temp(tmp_path, out)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    if old:
        assert out.read_text(encoding="utf-8") == OLD
    else:
        assert not out.exists()
    # SIGKILL cannot be caught: the temporary file stays, beside the untouched target, never as it
    assert [p.name.startswith(".report.json.") for p in _temps(out.parent)] == [True]


@pytest.mark.parametrize("old", [True, False], ids=["old-file", "no-file"])
def test_sigint_mid_write_leaves_the_old_file_or_none_and_no_temporary_file(tmp_path, old):
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    if old:
        out.write_text(OLD, encoding="utf-8")
    child = _start_and_wait_for_temp(tmp_path, out)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=30)
    assert (child.returncode, stdout, stderr.decode()) == (130, b"", "iescore: interrupted\n")
    assert sorted(p.name for p in out.parent.iterdir()) == (["report.json"] if old else [])
    if old:
        assert out.read_text(encoding="utf-8") == OLD


def test_an_uninterrupted_write_replaces_the_old_file_whole(tmp_path):
    out = tmp_path / "report.json"
    out.write_text(OLD, encoding="utf-8")
    os.chmod(out, 0o640)
    src = _labels_file(tmp_path)
    r = subprocess.run([sys.executable, "-m", "iescore", "score", str(src), "--format", "json", "--output", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    d = json.loads(out.read_text(encoding="utf-8"))
    assert len(d["per_label"]) == 3000  # L0 .. L2999, each a gold and a predicted label
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # the old file's permissions, not mkstemp's 0600
    assert _temps(tmp_path) == []


def test_ctrl_c_while_reading_a_large_file(tmp_path):
    """SIGINT while the command line reads a 38 MB file: one line, status 130, no traceback."""
    if not os.path.isdir(f"/proc/{os.getpid()}/fd"):
        pytest.skip("needs /proc to see that the child is reading")
    big = tmp_path / "big.conll"
    block = "".join(f"tok{k} B-PER B-PER\ntok I-PER O\n. O O\n\n" for k in range(1000))
    with open(big, "w", encoding="utf-8") as fh:
        for _ in range(1000):
            fh.write(block)
    main = TERMINAL + "import runpy; runpy.run_module('iescore', run_name='__main__', alter_sys=True)"
    child = subprocess.Popen([sys.executable, "-c", main, "score", str(big)],  # python -m iescore
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fds = Path(f"/proc/{child.pid}/fd")
    deadline = time.monotonic() + 60
    reading = False
    while not reading and time.monotonic() < deadline and child.poll() is None:
        try:
            reading = any(os.readlink(fd) == str(big) for fd in fds.iterdir())
        except OSError:  # a descriptor closed while listed
            pass
    assert reading, "the child never opened the file"
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert (child.returncode, stdout, stderr.decode()) == (130, b"", "iescore: interrupted\n")


# --- the helper and the writers of the Python API ----------------------------------------
def test_atomic_write_keeps_the_old_file_on_any_exception(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old", encoding="utf-8")
    for exc in (ValueError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(exc)):
            with atomic_write(path) as fh:
                fh.write("new, half written")
                fh.flush()
                raise exc
        assert path.read_text(encoding="utf-8") == "old"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_atomic_write_writes_through_a_symbolic_link_and_gives_a_new_file_the_umask(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_write(link) as fh:
        fh.write("new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"
    mask = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "fresh.bin", "wb") as fh:
            fh.write(b"\x00")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "fresh.bin").stat().st_mode) == 0o644  # 0666 less the umask 022


def _docs(n: int, fail_at: int | None = None):
    for k in range(n):
        if k == fail_at:
            raise KeyboardInterrupt
        yield TextDocument(f"d{k}", "Al Roth", (Span("PER", 0, 7),))


def test_write_jsonl_interrupted_leaves_the_old_file(tmp_path):
    path = tmp_path / "docs.jsonl"
    write_jsonl(_docs(2), str(path))
    before = path.read_bytes()
    with pytest.raises(KeyboardInterrupt):
        write_jsonl(_docs(50_000, fail_at=40_000), str(path))  # 40,000 lines (3 MB) written, then Ctrl-C
    assert path.read_bytes() == before and [d.id for d in read_jsonl(str(path)).documents] == ["d0", "d1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


def test_write_brat_leaves_every_file_whole(tmp_path):
    write_brat(_docs(2), str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        write_brat(itertools.chain([TextDocument("d1", "Ido Erev", (Span("PER", 0, 8),))], _docs(3, fail_at=0)),
                   str(tmp_path))
    # d1 was rewritten whole, then Ctrl-C: d0 kept as it was; no temporary file
    got = {d.id: (d.text, [(s.label, s.start, s.end) for s in d.spans]) for d in read_brat(str(tmp_path)).documents}
    assert got == {"d0": ("Al Roth", [("PER", 0, 7)]), "d1": ("Ido Erev", [("PER", 0, 8)])}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d0.ann", "d0.txt", "d1.ann", "d1.txt"]


def test_writers_replace_the_old_file_only_when_whole(tmp_path, monkeypatch):
    """write_html, write_brat and write_docbin write through atomic_write: when the final replace is interrupted, the old file
    is left as it was (a writer that opened the target itself would have overwritten it)."""
    pytest.importorskip("jinja2")
    import iescore
    from iescore.render.html import write_html

    r = iescore.score_tags(reference=[["B-PER", "O"]], prediction=[["B-PER", "O"]])
    page = tmp_path / "r.html"
    size = write_html(r, str(page), [["Al", "met"]])
    assert size == page.stat().st_size and page.read_text(encoding="utf-8").lower().startswith("<!doctype html>")
    write_brat(_docs(1), str(tmp_path / "brat"))
    writers = [lambda: write_html(r, str(page), [["Al", "met"]]),
               lambda: write_brat([TextDocument("d0", "Ido Erev", (Span("PER", 0, 8),))], str(tmp_path / "brat"))]
    if importlib.util.find_spec("spacy") is not None:
        from iescore.io.docbin import read_docbin, write_docbin

        spacy_file = tmp_path / "d.spacy"
        write_docbin(list(_docs(2)), str(spacy_file))
        assert [d.id for d in read_docbin(str(spacy_file)).documents] == ["d0", "d1"]
        writers.append(lambda: write_docbin(list(_docs(3)), str(spacy_file)))
    before = {str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert len(before) == 3 + (len(writers) == 3)

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    for write in writers:
        with pytest.raises(KeyboardInterrupt):
            write()
    monkeypatch.undo()
    assert {str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_what_is_no_regular_file_is_written_as_it_is(tmp_path, capsys):
    """A named pipe (or /dev/null, /dev/stdout) cannot be replaced: it is written directly,
    and stays a pipe; nothing is left beside it."""
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    with atomic_write(fifo) as fh:
        fh.write("through the pipe\n")
    reader.join(timeout=30)
    assert got == ["through the pipe\n"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]
    from iescore.cli import main

    src = tmp_path / "a.conll"
    src.write_text("Al B-PER B-PER\nRoth I-PER O\n", encoding="utf-8")
    assert main(["score", str(src), "--output", os.devnull]) == 0
    assert capsys.readouterr() == ("", "")
