"""Beside the pipeline, before it: the cost of the extractor whose output is scored: per
phase ("load", "extract", ...) its CPU time, wall time and peak memory.

An extractor is a Python callable or a command:

* [`measure`][iescore.cost.measure] runs ``fn(*args, **kwargs)`` in a fresh spawned
  process (``in_process=True``: in this one) and returns its result and a
  [`Cost`][iescore.cost.Cost]. Inside ``fn``, ``with phase("load"): ...`` marks a phase;
  a call that marks none is one phase (``name``, default ``"extract"``).
* [`measure_command`][iescore.cost.measure_command] runs a command and returns its
  completed process and a ``Cost`` of one phase.

What is measured, per phase: ``cpu_s``, the CPU time of the process (user and system,
every thread; for a command, of the command and the processes it waited for); ``wall_s``,
the elapsed time; ``start_rss_mb``, the resident set when the phase begins (the
interpreter and what was loaded before; None for a command); ``peak_rss_mb``, the
high-water resident set during the phase (MB = 2**20 bytes), which includes the start.
On Linux the high-water mark (``VmHWM``) is reset at each phase's start (writing 5 to
``/proc/self/clear_refs``: with ``in_process=True`` this process's mark), so each phase has
its own peak; where it cannot be reset the peak is the process's since it began
(``peak_scope`` says which). A command's peak is that of its largest process, read from
the kernel's accounting when it ends (``ru_maxrss``); the command is started by a small
Python process, so that this process's memory is not counted as the command's (the kernel
carries a parent's resident set into ``ru_maxrss`` across ``exec``): a command below that
starter's own resident set (about 10 MB) reads as that much.

Example (in this process, so that a doctest can run it):
    >>> def extract(texts):
    ...     with phase("load"):
    ...         model = {"Ada": "PER"}
    ...     with phase("extract"):
    ...         return [model.get(t) for t in texts]
    >>> result, cost = measure(extract, ["Ada", "Bob"], in_process=True)
    >>> result, [p.name for p in cost.phases]
    (['PER', None], ['load', 'extract'])
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import resource
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from .errors import IEScoreError

__all__ = ["Phase", "Cost", "ExtractorError", "phase", "measure", "measure_command", "format_cost", "status_mb"]


class ExtractorError(IEScoreError):
    """The extractor could not be run or measured, or it failed."""


@dataclass(frozen=True)
class Phase:
    """One phase's measures (see the module)."""

    name: str
    cpu_s: float
    wall_s: float
    peak_rss_mb: float | None
    start_rss_mb: float | None = None
    peak_scope: str = "phase"  # "phase" or "process" (the mark could not be reset)


@dataclass(frozen=True)
class Cost:
    """The phases of one run of an extractor, in order; ``how``: ``"process"`` (a fresh
    spawned process), ``"in-process"`` or ``"command"``."""

    phases: tuple[Phase, ...]
    how: str = "process"

    def phase(self, name: str) -> Phase:
        """The phase called ``name``."""
        for p in self.phases:
            if p.name == name:
                return p
        raise KeyError(f"no phase {name!r}; phases: {[p.name for p in self.phases]}")

    @property
    def cpu_s(self) -> float:
        return sum(p.cpu_s for p in self.phases)

    @property
    def wall_s(self) -> float:
        return sum(p.wall_s for p in self.phases)

    @property
    def peak_rss_mb(self) -> float | None:
        peaks = [p.peak_rss_mb for p in self.phases if p.peak_rss_mb is not None]
        return max(peaks) if peaks else None

    def to_dict(self) -> dict[str, Any]:
        """``{"how", "phases": [{name, cpu_s, wall_s, peak_rss_mb, start_rss_mb, peak_scope}],
        "cpu_s", "wall_s", "peak_rss_mb"}`` (the last three over all phases)."""
        return {"how": self.how, "phases": [asdict(p) for p in self.phases],
                "cpu_s": self.cpu_s, "wall_s": self.wall_s, "peak_rss_mb": self.peak_rss_mb}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cost:
        return cls(tuple(Phase(**p) for p in d["phases"]), d.get("how", "process"))


def format_cost(cost: Cost) -> str:
    """The cost as a small text table, one line per phase (and a total for several).

    >>> print(format_cost(Cost((Phase("load", 1.25, 1.5, 300.0, 20.0), Phase("extract", 4.0, 4.25, 512.5, 300.0)))))
    phase         CPU s    wall s  start MB   peak MB
    load           1.25      1.50      20.0     300.0
    extract        4.00      4.25     300.0     512.5
    total          5.25      5.75         -     512.5
    """
    def mb(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"

    lines = [f"{'phase':10}{'CPU s':>9}{'wall s':>10}{'start MB':>10}{'peak MB':>10}"]
    rows = [(p.name + ("*" if p.peak_scope != "phase" else ""), p.cpu_s, p.wall_s, p.start_rss_mb, p.peak_rss_mb)
            for p in cost.phases]
    if len(cost.phases) > 1:
        rows.append(("total", cost.cpu_s, cost.wall_s, None, cost.peak_rss_mb))
    lines += [f"{n:10}{c:>9.2f}{w:>10.2f}{mb(s):>10}{mb(pk):>10}" for n, c, w, s, pk in rows]
    if any(p.peak_scope != "phase" for p in cost.phases):
        lines.append("* peak since the process began (its high-water mark could not be reset)")
    return "\n".join(lines)


# --- memory readings ---------------------------------------------------------------------

def status_mb(field: str, pid: int | str = "self") -> float | None:
    """A memory line of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``) in MB; None without /proc."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # the kernel writes kB
    except OSError:
        pass
    return None


def _maxrss_mb(ru: Any) -> float:
    return float(ru.ru_maxrss / 2**20 if sys.platform == "darwin" else ru.ru_maxrss / 1024)  # bytes on macOS, else kB


def _reset_peak() -> bool:
    """Reset this process's high-water resident set to its current one (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    peak = status_mb("VmHWM")
    return peak if peak is not None else _maxrss_mb(resource.getrusage(resource.RUSAGE_SELF))


# --- phases of a callable ----------------------------------------------------------------

_RECORDED: list[Phase] | None = None  # the phases of the call being measured in this process
_IN_PHASE = False


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Mark a phase of an extractor run by [`measure`][iescore.cost.measure] (outside a
    measured call it measures nothing). Phases follow one another; they do not nest."""
    global _IN_PHASE
    recorded = _RECORDED
    if recorded is None:
        yield
        return
    if _IN_PHASE:
        raise ExtractorError(f"phase {name!r} is inside another phase: phases follow one another")
    _IN_PHASE = True
    start = _start()
    try:
        yield
    finally:
        _IN_PHASE = False
    recorded.append(_finish(name, *start))


def _start() -> tuple[float | None, float, float, str]:
    scope = "phase" if _reset_peak() else "process"
    return status_mb("VmRSS"), time.process_time(), time.perf_counter(), scope


def _finish(name: str, start: float | None, cpu0: float, wall0: float, scope: str) -> Phase:
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return Phase(name, cpu, wall, _peak_mb(), start, scope)


def _run(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> tuple[Any, Cost]:
    global _RECORDED
    if _RECORDED is not None:
        raise ExtractorError("measure() inside a measured call: measure the calls one after another")
    recorded: list[Phase] = []
    _RECORDED = recorded
    try:
        start = _start()
        result = fn(*args, **kwargs)
        whole = _finish(name, *start)
    finally:
        _RECORDED = None
    return result, Cost(tuple(recorded) or (whole,))


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> None:
    try:
        result, cost = _run(fn, args, kwargs, name)
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    try:
        conn.send(("done", result, cost.to_dict()))
    except Exception as exc:  # the result does not pickle
        conn.send(("error", f"its result cannot be sent back ({type(exc).__name__}: {exc})"))


def _sendable(fn: Callable[..., Any]) -> None:
    what = getattr(fn, "__qualname__", repr(fn))
    hint = "pass in_process=True, or define the function at the top level of a module it can import"
    main = sys.modules.get("__main__")
    if getattr(fn, "__module__", None) == "__main__" and not getattr(main, "__file__", None):
        raise ExtractorError(f"{what} is defined in an interactive session, which a fresh process cannot "
                             f"import: {hint}")
    try:
        pickle.dumps(fn)
    except Exception as exc:
        raise ExtractorError(f"{what} cannot be sent to a fresh process ({type(exc).__name__}: {exc}): {hint}") from None


def measure(fn: Callable[..., Any], *args: Any, in_process: bool = False, name: str = "extract",
            **kwargs: Any) -> tuple[Any, Cost]:
    """Run ``fn(*args, **kwargs)`` and measure it: ``(its result, its Cost)``.

    By default in a fresh spawned process (``fn`` must be importable, defined at the top
    level of a module, and it, its arguments and its result must pickle); an exception
    there is raised here as an [`ExtractorError`][iescore.cost.ExtractorError] carrying
    its traceback. ``in_process=True`` runs it here (any callable; what was loaded
    before counts in the phases' start and peak, and exceptions pass through). Phases
    marked with [`phase`][iescore.cost.phase] inside ``fn`` are the cost's phases; a call
    that marks none is one phase called ``name``. (Keyword arguments of ``fn`` called
    ``in_process`` or ``name`` go through ``functools.partial``.)
    """
    if in_process:
        result, cost = _run(fn, args, kwargs, name)
        return result, Cost(cost.phases, "in-process")
    _sendable(fn)
    ctx = mp.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args, kwargs, name))
    try:
        proc.start()  # the arguments are pickled here
    except Exception as exc:
        receive.close()
        raise ExtractorError(f"the arguments of {getattr(fn, '__qualname__', fn)} cannot be sent to a fresh "
                             f"process ({type(exc).__name__}: {exc}): pass in_process=True") from None
    finally:
        send.close()
    try:
        msg = receive.recv()
    except EOFError:  # the process ended without sending
        msg = None
    except BaseException:  # Ctrl-C here: the process is stopped too
        proc.terminate()
        proc.join()
        raise
    finally:
        receive.close()
    proc.join()
    if msg is None:
        raise ExtractorError(f"{getattr(fn, '__qualname__', fn)} ended its process without a result "
                             f"(exit status {proc.exitcode})")
    if msg[0] == "error":
        raise ExtractorError(f"{getattr(fn, '__qualname__', fn)} failed in its process:\n{msg[1]}")
    return msg[1], Cost.from_dict(msg[2])


# --- a command -----------------------------------------------------------------------------

# The starter: runs the command, waits for it and writes its resource use to a pipe.
_STARTER = """\
import os, sys, time
fd = int(sys.argv[1])
cmd = sys.argv[2:]
t = time.perf_counter()
try:
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
except OSError as e:
    os.write(fd, ("E %s" % e).encode())
    sys.exit(127)
_, status, ru = os.wait4(pid, 0)
os.write(fd, ("R %r %r %r %r" % (ru.ru_maxrss, ru.ru_utime + ru.ru_stime, time.perf_counter() - t, status)).encode())
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def _tail(text: str | bytes | None, lines: int = 20) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join((text or "").rstrip().splitlines()[-lines:])


def measure_command(cmd: Sequence[str], *, name: str = "extract", input: str | bytes | None = None,
                    cwd: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None,
                    timeout: float | None = None, text: bool = True) -> tuple[subprocess.CompletedProcess[Any], Cost]:
    """Run the command ``cmd`` (a list: the program and its arguments, looked up on the
    PATH), capturing its output, and measure it: ``(the completed process, its Cost)``.

    A command that cannot be started, ends with a non-zero status or outlasts ``timeout``
    seconds raises an [`ExtractorError`][iescore.cost.ExtractorError] giving the status and
    the last lines of its standard error.
    """
    cmd = [os.fspath(c) for c in cmd]
    if not cmd:
        raise ExtractorError("an empty command: give the program and its arguments as a list")
    rfd, wfd = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _STARTER, str(wfd), *cmd], pass_fds=(wfd,),
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env, text=text,
                                start_new_session=True)
    except BaseException:
        os.close(rfd)
        raise
    finally:
        os.close(wfd)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        os.close(rfd)
        raise ExtractorError(f"command {cmd!r} did not end within {timeout} s; it was stopped. "
                             f"Its standard error ends:\n{_tail(err)}") from None
    except BaseException:
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            pass
        proc.wait()
        os.close(rfd)
        raise
    with os.fdopen(rfd, "rb") as fh:
        report = fh.read().decode()
    if report.startswith("E "):
        raise ExtractorError(f"command {cmd!r} could not be started: {report[2:]}")
    if not report.startswith("R "):
        raise ExtractorError(f"command {cmd!r} was not measured (its starter ended with status "
                             f"{proc.returncode}):\n{_tail(err)}")
    maxrss, cpu, wall, status = (float(x) for x in report.split()[1:])
    if proc.returncode != 0:
        code = os.waitstatus_to_exitcode(int(status))
        how = f"exit status {code}" if code >= 0 else f"signal {-code}"
        raise ExtractorError(f"command {cmd!r} failed ({how}); its standard error ends:\n{_tail(err)}")
    peak = maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024
    done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    return done, Cost((Phase(name, cpu, wall, peak, None, "phase"),), "command")
