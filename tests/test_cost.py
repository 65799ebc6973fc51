"""The extractor's cost (iescore.cost): CPU time, wall time and peak memory per phase, of a
callable in a fresh process or in this one, and of a command. Every assertion is an
inequality that holds under any load (CPU time never grows by waiting; a page written is
resident)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from iescore.cost import Cost, ExtractorError, Phase, format_cost, measure, measure_command, phase

MB = 2**20
LINUX = os.path.exists("/proc/self/clear_refs")


# --- callables run in a fresh process: at the top level, so that it can import them -----

def allocate(mb):
    block = b"\x01" * (mb * MB)  # every page written: resident
    return len(block)


def spin(seconds):
    """Busy for ``seconds`` of this process's CPU time; returns the CPU time it saw."""
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass
    return time.process_time() - t


def two_phases():
    with phase("load"):
        big = b"\x01" * (200 * MB)
        del big
    with phase("extract"):
        small = b"\x01" * (50 * MB)
        spin(0.3)
    return len(small)


def nested():
    with phase("load"), phase("inner"):
        pass


def fails():
    raise KeyError("no such model")


def test_a_callable_in_a_fresh_process_allocating_200_mb():
    result, cost = measure(allocate, 200)
    assert result == 200 * MB and cost.how == "process"
    (p,) = cost.phases
    assert p.name == "extract" and p.peak_scope == ("phase" if LINUX else "process")
    assert p.peak_rss_mb >= 200
    if p.start_rss_mb is not None:  # /proc: the call adds its 200 MB and little else (the 2 MB
        # spared: pages of the start's resident set freed during the call)
        assert 198 <= p.peak_rss_mb - p.start_rss_mb < 230


def test_this_process_memory_is_not_the_child_s():
    held = b"\x01" * (400 * MB)  # a large parent: a fresh process does not carry it
    _, cost = measure(allocate, 10)
    assert cost.phases[0].peak_rss_mb < 400 and len(held) == 400 * MB


@pytest.mark.skipif(not LINUX, reason="per-phase peaks need /proc/self/clear_refs")
def test_each_phase_has_its_own_peak_and_cpu():
    result, cost = measure(two_phases)
    assert result == 50 * MB and [p.name for p in cost.phases] == ["load", "extract"]
    load, extract = cost.phases
    assert load.peak_rss_mb - load.start_rss_mb >= 198
    # the 200 MB were freed before "extract": its peak is its own 50 MB above its start
    assert 48 <= extract.peak_rss_mb - extract.start_rss_mb < 80
    assert extract.peak_rss_mb < load.peak_rss_mb
    assert extract.cpu_s >= 0.3 and cost.cpu_s == pytest.approx(load.cpu_s + extract.cpu_s)
    assert cost.peak_rss_mb == load.peak_rss_mb


def test_cpu_of_a_busy_loop_and_of_a_sleep():
    seen, cost = measure(spin, 0.4)
    p = cost.phases[0]
    assert p.cpu_s >= seen >= 0.4
    assert p.wall_s + 0.01 >= p.cpu_s  # one thread: no more CPU than elapsed time
    _, cost = measure(time.sleep, 0.3, in_process=True, name="sleep")
    p = cost.phase("sleep")
    assert p.wall_s >= 0.3 and p.cpu_s < 0.2 and cost.how == "in-process"


def test_in_process_phases_and_any_callable():
    def extract(n):
        with phase("load"):
            model = b"\x01" * (n * MB)
        with phase("extract"):
            return len(model)

    result, cost = measure(extract, 60, in_process=True)
    assert result == 60 * MB and [p.name for p in cost.phases] == ["load", "extract"]
    if LINUX:
        assert cost.phase("load").peak_rss_mb - cost.phase("load").start_rss_mb >= 58
    with pytest.raises(KeyError, match="no phase 'train'"):
        cost.phase("train")
    with pytest.raises(ExtractorError, match="phase 'inner' is inside another phase"):
        measure(nested, in_process=True)
    with phase("outside"):  # outside a measured call a phase measures nothing
        pass


def test_a_callable_a_fresh_process_cannot_take():
    def local():
        return 1

    with pytest.raises(ExtractorError, match=r"local.*cannot be sent to a fresh process.*pass in_process=True"):
        measure(local)
    with pytest.raises(ExtractorError, match=r"<lambda>.*pass in_process=True, or define the function at the top level"):
        measure(lambda: 1)
    with pytest.raises(ExtractorError, match=r"the arguments of allocate cannot be sent"):
        measure(allocate, lambda: 1)
    assert measure(lambda: 7, in_process=True)[0] == 7


def exits():
    os._exit(3)


def test_a_failure_in_the_process_carries_its_traceback():
    with pytest.raises(ExtractorError, match=r"fails failed in its process:\n(.|\n)*KeyError: 'no such model'"):
        measure(fails)
    with pytest.raises(ExtractorError, match=r"exits ended its process without a result \(exit status 3\)"):
        measure(exits)


# --- commands --------------------------------------------------------------------------------

def test_a_command_allocating_200_mb_from_a_large_process():
    held = b"\x01" * (400 * MB)  # the kernel would carry this into a direct child's ru_maxrss
    code = "b = b'\\x01' * (200 * 2**20); print(len(b))"
    done, cost = measure_command([sys.executable, "-c", code], name="tag")
    assert done.stdout == f"{200 * MB}\n" and done.returncode == 0 and cost.how == "command"
    p = cost.phase("tag")
    assert 200 <= p.peak_rss_mb < 260 and len(held) == 400 * MB
    assert p.wall_s + 0.01 >= p.cpu_s


def test_a_command_busy_loop():
    code = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass"
    _, cost = measure_command([sys.executable, "-c", code])
    assert cost.cpu_s >= 0.4 and cost.wall_s + 0.01 >= cost.cpu_s


def test_a_failing_command_gives_its_status_and_the_end_of_its_stderr():
    code = "import sys\nfor i in range(100): print('line', i, file=sys.stderr)\nsys.exit(3)"
    with pytest.raises(ExtractorError, match=r"failed \(exit status 3\); its standard error ends:\n") as info:
        measure_command([sys.executable, "-c", code])
    assert "line 99" in str(info.value) and "line 79" not in str(info.value)
    with pytest.raises(ExtractorError, match=r"command \['no-such-extractor-x'\] could not be started"):
        measure_command(["no-such-extractor-x"])
    with pytest.raises(ExtractorError, match=r"did not end within 0.5 s"):
        measure_command([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)


def test_input_and_the_cost_as_a_dict_and_a_table():
    done, cost = measure_command([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], input="ada")
    assert done.stdout == "ADA\n"
    d = cost.to_dict()
    assert d["how"] == "command" and d["phases"][0]["name"] == "extract" and Cost.from_dict(d) == cost
    two = Cost((Phase("load", 1.0, 2.0, 100.0, 10.0), Phase("extract", 3.0, 4.0, 50.0, 40.0, "process")))
    assert two.to_dict()["cpu_s"] == 4.0 and two.to_dict()["peak_rss_mb"] == 100.0
    assert format_cost(two).splitlines() == [
        "phase         CPU s    wall s  start MB   peak MB",
        "load           1.00      2.00      10.0     100.0",
        "extract*       3.00      4.00      40.0      50.0",
        "total          4.00      6.00         -     100.0",
        "* peak since the process began (its high-water mark could not be reset)",
    ]
