"""The exit path: no thread of ours outlives the call that started it, and a
process that read TREC files ends with status 0 (or 2 for bad input through
the command line), never SIGABRT.

The abort this guards against (issue 12, item 1): pyarrow's threaded CSV
reader can drop its last reference to its input on one of pyarrow's pool
threads after ``read_csv`` has returned. When that input wrapped a Python
object (``pa.py_buffer`` of a NumPy array), releasing it took the GIL; at
interpreter exit that thread was ended inside C++ and the process aborted
("terminate called without an active exception", exit 134): 3 in 300 and 6
in 400 runs of ``read_qrels`` on a loaded two-core machine. The readers now
give pyarrow buffers of Arrow's own memory, and join their layout-check
thread whatever happens.

:func:`test_short_processes_exit_cleanly` starts short processes over the
success and error paths, several at a time so that they load every core. A
normal run starts 48 of them; ``SKLEARN_RANK_STRESS=1`` starts 600 (set
``SKLEARN_RANK_STRESS`` to a number for that many).
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from sklearn_rank.trec import _arrow, _io, evaluate_run, read_qrels, read_run

QRELS = "".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(20) for d in range(30))
RUN = "".join(f"q{q} Q0 d{d} {d + 1} {30 - d}.5 tag\n" for q in range(20) for d in range(25))


def _stress_count() -> int:
    value = os.environ.get("SKLEARN_RANK_STRESS", "")
    if not value or value == "0":
        return 48
    return 600 if value == "1" else int(value)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Plain files (read by pyarrow when installed) and bad ones."""
    root = tmp_path_factory.mktemp("exit")
    paths = {
        "qrels": QRELS,
        "run": RUN,
        "bad.qrels": "q1 0 d1 1\nq1 0 d2\n",  # malformed: NumPy reader's error
        "dup.qrels": QRELS + "q0 0 d1 2\n",  # plain: pyarrow parses, the build fails
        "half.qrels": "q1 0 d1 1.5\n",  # plain: pyarrow parses, the level is refused
    }
    out = {}
    for name, text in paths.items():
        (root / name).write_text(text)
        out[name] = str(root / name)
    data = gzip.compress(QRELS.encode())
    (root / "truncated.qrels.gz").write_bytes(data[:len(data) // 2])
    out["truncated.qrels.gz"] = str(root / "truncated.qrels.gz")
    return out


def _commands(files):
    """(argv, expected status) of every kind of short process."""
    python = [sys.executable]
    read = "from sklearn_rank.trec import read_qrels, read_run, evaluate_run; "
    cli = [*python, "-m", "sklearn_rank", "evaluate"]
    return [
        ([*python, "-c", read + f"read_qrels({files['qrels']!r})"], 0),
        ([*python, "-c", read + f"evaluate_run(read_qrels({files['qrels']!r}), "
                                f"read_run({files['run']!r}))"], 0),
        ([*python, "-c", read + f"\ntry:\n read_qrels({files['dup.qrels']!r})\n"
                                "except ValueError:\n pass"], 0),
        ([*cli, files["qrels"], files["run"]], 0),
        ([*cli, files["bad.qrels"], files["run"]], 2),
        ([*cli, files["dup.qrels"], files["run"]], 2),
        ([*cli, files["half.qrels"], files["run"]], 2),
        ([*cli, files["truncated.qrels.gz"], files["run"]], 2),
        # the metrics engine's block and grouping threads (forced to 2), joined
        # before the call returns, with the process ending right after
        ([*python, "-c", "import os; os.environ['SKLEARN_RANK_NUM_THREADS'] = '2'\n"
          "import numpy as np; from sklearn_rank.metrics import evaluate\n"
          "rng = np.random.default_rng(0); n = 600_000\n"
          "q = np.char.add('q', rng.integers(0, 6000, n).astype(str))\n"
          "evaluate(rng.integers(0, 5, n), rng.integers(0, 10, n), qid=q,"
          " metrics=['ndcg@10', 'mrr', 'map'])"], 0),
    ]


def test_short_processes_exit_cleanly(files):
    """Hundreds of short processes (``SKLEARN_RANK_STRESS=1``), a few at a
    time: each ends with its status (0, or 2 with one line on stderr for bad
    input), never by a signal."""
    commands = _commands(files)
    n = _stress_count()
    width = max(3, (os.cpu_count() or 1) + 1)  # more processes than cores
    outcomes = {}
    running = []
    started = 0
    while started < n or running:
        while started < n and len(running) < width:
            argv, expected = commands[started % len(commands)]
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
            running.append((proc, argv, expected, time.monotonic()))
            started += 1
        proc, argv, expected, begun = running.pop(0)
        _, stderr = proc.communicate(timeout=max(60.0, 120.0 - (time.monotonic() - begun)))
        key = (" ".join(argv[1:]), expected)
        outcomes.setdefault(key, []).append((proc.returncode, stderr))
    failures = []
    for (command, expected), results in outcomes.items():
        for code, stderr in results:
            lines = stderr.strip().splitlines()
            ok = code == expected and (lines == [] if expected == 0 else len(lines) == 1)
            if not ok:
                failures.append(f"{command!r}: status {code} (expected {expected}): {stderr!r}")
    counts = {command: len(results) for (command, _), results in outcomes.items()}
    assert sum(counts.values()) == n
    assert not failures, f"{len(failures)} of {n} processes failed:\n" + "\n".join(failures[:5])


# What the console script pip writes runs (and ``python -m sklearn_rank``).
_CONSOLE_SCRIPT = ("import re, sys\nfrom sklearn_rank.cli._entry import program\n"
                   "sys.exit(program())\n")


def _interrupted(argv, delay=None):
    """Run ``argv`` (Python's arguments) under ``-X importtime`` and send it
    SIGINT ``delay`` seconds after the program's entry module is imported
    (None: no SIGINT): (status, stdout, stderr without the import-time lines,
    seconds from that import to the exit).

    Before that import the interpreter is starting (``site``, ``runpy``):
    no code of the program runs there, and Python's own handling applies.
    The child gets SIGINT's default disposition, as from a terminal (a test
    runner may have it ignored, which Python would keep)."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", *argv],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    head = []
    for line in proc.stderr:  # the line is written once the module has run
        head.append(line)
        if line.rstrip().endswith("| sklearn_rank.cli._entry"):
            break
    entered = time.monotonic()
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)  # (nothing is sent once it has been waited for)
    out, err = proc.communicate(timeout=120)
    span = time.monotonic() - entered
    err = "".join(line for line in "".join(head + [err]).splitlines(True)
                  if not line.startswith("import time:"))
    return proc.returncode, out, err, span


def test_interrupt_at_any_moment_exits_130_quietly(files):
    """Ctrl-C at any moment of the program, from its entry on (importing the
    command line and NumPy, reading, writing, exiting): status 130 and
    nothing on stderr (no KeyboardInterrupt traceback, no NumPy "C-extensions
    failed" advice, no exit 1, 2 or by the signal), or the command's own
    status 0 and output when it had finished. Both entries; SIGINT at 40
    moments spread over 1.2 times the command's time on this machine (whatever
    the load: any moment has one of these two outcomes)."""
    command = ["evaluate", files["qrels"], files["run"]]
    entries = (["-m", "sklearn_rank"], ["-c", _CONSOLE_SCRIPT])
    status, expected, err, span = _interrupted([*entries[0], *command])
    assert (status, err) == (0, ""), err
    outcomes = []
    for i in range(40):
        delay = span * 1.2 * i / 40
        status, out, err, _ = _interrupted([*entries[i % 2], *command], delay)
        outcomes.append(status)
        assert (status, err) in ((130, ""), (0, "")), (delay, entries[i % 2], status, err)
        assert status == 130 or out == expected
    assert 130 in outcomes  # (interrupted at least once: the test tests something)


def _threads() -> set:
    return set(threading.enumerate())


def test_no_thread_outlives_a_read(files, monkeypatch):
    """After every read, success or error, no thread that the read started
    is left, even when building the table fails with an unexpected error."""
    before = _threads()
    read_qrels(files["qrels"])
    read_run(files["run"])
    evaluate_run(files["qrels"], files["run"])
    for name in ("bad.qrels", "dup.qrels", "half.qrels", "truncated.qrels.gz"):
        with pytest.raises(ValueError):
            read_qrels(files[name])
    assert _threads() == before

    def build(fields):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        _io.read_table(files["qrels"], None, "auto", _io._QRELS, build)
    assert _threads() == before


def test_layout_check_is_joined_when_the_block_raises():
    started = threading.Event()
    release = threading.Event()

    def check():
        started.set()
        release.wait(5)
        return True

    before = _threads()
    with pytest.raises(KeyError):
        with _arrow.in_background(check):
            started.wait(5)
            release.set()
            raise KeyError("in the block")
    assert _threads() == before

    def failing():
        raise MemoryError

    with _arrow.in_background(failing) as answer:
        assert answer() is False  # a check that raises says "not plain"
    assert _threads() == before


def test_pyarrow_gets_arrow_memory():
    """The buffer handed to pyarrow is Arrow's memory (no Python object to
    release on its threads): the file's own buffer when the reader allocated
    it there, else a copy."""
    pa = pytest.importorskip("pyarrow")
    data = np.frombuffer(b"q1 0 d1 1\n", dtype=np.uint8)  # a view of Python bytes
    copy = _arrow._arrow_buffer(pa, data)
    assert isinstance(copy, pa.Buffer) and copy.to_pybytes() == data.tobytes()
    assert copy.address != data.ctypes.data
    allocated = _io._allocate(data.shape[0] + 3)
    allocated[:] = np.frombuffer(b"\xef\xbb\xbf" + data.tobytes(), dtype=np.uint8)
    view = _arrow._arrow_buffer(pa, allocated[3:])  # a slice, as after a BOM
    assert view.address == allocated[3:].ctypes.data
    assert view.to_pybytes() == data.tobytes()
