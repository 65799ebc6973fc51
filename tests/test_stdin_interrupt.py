"""Standard input is copied to a temporary file to be read twice; Ctrl-C while it is being
copied leaves no copy behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def test_ctrl_c_while_standard_input_is_copied_leaves_no_temporary_file(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-m", "iescore", "score", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    assert child.stdin is not None
    child.stdin.write(b"Ada B-PER B-PER\n" * 1000)  # the input goes on: the pipe stays open
    child.stdin.flush()
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("iescore-stdin-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.glob("iescore-stdin-*")), "the child never made its copy of standard input"
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert (child.returncode, stdout, stderr.decode()) == (130, b"", "iescore: interrupted\n")
    assert list(tmp_path.iterdir()) == []
