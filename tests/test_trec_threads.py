"""The NumPy reader of TREC files on several threads (issue 16): the same
table and the same first error whatever the number of threads, every thread
joined before the call returns (errors and interrupts included), and plain
decimals read without the GIL exactly as Python's ``float`` reads them.

Blocks are made tiny here (a few lines) so that small files use many blocks
and every thread; the thread tests repeat their reads, since scheduling
differs run to run.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank._utils.threads import ENV
from sklearn_rank.trec import _decimal, _fields, _numbers, read_qrels, read_run
from sklearn_rank.trec._column import IdColumn
from sklearn_rank.trec._decimal import decimal_values

PLAIN = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)")


def _read_tokens(tokens: list[str]):
    column = IdColumn.from_strings([t.encode() for t in tokens])
    return decimal_values(column.words(cap=16), column.length)


def _check_exact(tokens: list[str]):
    """Every token read is ``float(token)`` to the bit (sign of zero
    included), and every short plain decimal is read."""
    values, read = _read_tokens(tokens)
    for token, value, was_read in zip(tokens, values.tolist(), read.tolist(), strict=True):
        if was_read:
            assert PLAIN.fullmatch(token), token
            expected = float(token)
            assert value == expected and np.signbit(value) == np.signbit(expected), token
        else:
            digits = token.lstrip("+-").replace(".", "", 1)
            assert not (PLAIN.fullmatch(token) and len(token) <= 16
                        and int(digits) <= 2**53), token


def test_decimals_are_read_as_python_reads_them():
    rng = np.random.default_rng(0)
    tokens = [f"{v:.{d}f}" for v, d in zip(rng.normal(0, 10.0 ** rng.integers(-3, 9, 3000)),
                                           rng.integers(0, 14, 3000), strict=True)]
    tokens += ["0", "-0", "-0.0", "+0.", "+5", "5.", ".5", "+.5", "-.5", "007", "0.1", "0.3",
               "123456789012345", "9007199254740992", "9007199254740993", "-9007199254740992",
               "900719925474099.3", "9.007199254740993", "1234567890123456", "9999999999999999",
               "1" * 17, "0." + "0" * 14 + "1", "1e5", "1E5", "inf", "nan", "--1", "+-1", "1.2.3",
               "+", "-", ".", "-.", "12a", "1_0", "0x10", "1,5", "١", "", " 1", "1 "]
    _check_exact(tokens)
    values, read = _read_tokens(["2.5", "-7", "1e5", "12.000001"])
    assert read.tolist() == [True, True, False, True]
    assert values[read].tolist() == [2.5, -7.0, 12.000001]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.from_regex(PLAIN, fullmatch=True),
                          st.text(alphabet="0123456789.+-e_ ", max_size=18)),
                min_size=1, max_size=40))
def test_any_token_is_read_exactly_or_left_alone(tokens):
    _check_exact([t for t in tokens if "\x00" not in t])


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 64 bytes and 8 numbers: a few hundred lines use every thread."""
    monkeypatch.setattr(_fields, "_BLOCK", 64)
    monkeypatch.setattr(_numbers, "_NUMBERS", 8)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)


def _files(tmp_path, seed: int):
    rng = np.random.default_rng(seed)
    run = "".join(f"q{i // 40} Q0 d{rng.integers(10**rng.integers(1, 9))}x{i} {i} "
                  f"{rng.normal() * 10.0 ** rng.integers(-2, 6):.{rng.integers(0, 9)}f} tag\n"
                  for i in range(400))
    qrels = "".join(f"q{i // 30} 0 d{i} {rng.integers(-1, 4)}\n" for i in range(300))
    return run, qrels


def _table(table):
    return (table.qid.tolist(), table.docno.tolist(),
            getattr(table, table._value_name).tolist())


def _outcome(path, read, threads: int, monkeypatch):
    monkeypatch.setenv(ENV, str(threads))
    try:
        return _table(read(path, engine="numpy"))
    except ValueError as error:
        return str(error)


BAD_LINES = {  # a line that makes a file an error, and its message's words
    "score": ("q1 Q0 dz 1 1_0 tag\n", "score '1_0' is not a finite number"),
    "fields": ("q1 Q0 dz 1 2.5\n", "expected 6 fields"),
    "carriage return": ("q1 Q0 dz 1 2.5 t\rq1 Q0 dy 2 1 t\n", "a carriage return"),
    "duplicate": (None, "appears twice for query"),
    "nan": ("q1 Q0 dz 1 nan tag\n", "score 'nan' is not a finite number"),
}


@pytest.mark.parametrize("seed", range(3))
def test_threads_give_the_same_table_and_the_same_first_error(tmp_path, tiny_blocks,
                                                               monkeypatch, seed):
    """One thread or four: the same tables, and for a file with a bad line
    anywhere (the first, a middle, the last) the same message and line."""
    run, qrels = _files(tmp_path, seed)
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    run_path.write_text(run)
    qrels_path.write_text(qrels)
    started = []
    real_start = threading.Thread.start

    def start(self):
        started.append(self.name)
        real_start(self)

    for path, read in ((run_path, read_run), (qrels_path, read_qrels)):
        one = _outcome(path, read, 1, monkeypatch)
        assert isinstance(one, tuple) and not started
        monkeypatch.setattr(threading.Thread, "start", start)
        for _ in range(5):
            assert _outcome(path, read, 4, monkeypatch) == one
        monkeypatch.setattr(threading.Thread, "start", real_start)
        assert len(started) >= 5 * 3 * 2  # the two scans, the ids and numbers: 3 helpers each
        started.clear()
    lines = run.splitlines(keepends=True)
    for kind, (bad, words) in BAD_LINES.items():
        for at in (0, len(lines) // 2 + seed, len(lines)):
            damaged = lines[:at] + [bad or lines[max(0, at - 1)]] + lines[at:]
            if kind == "duplicate" and at == 0:
                damaged = lines[:1] + damaged
            run_path.write_text("".join(damaged))
            one = _outcome(run_path, read_run, 1, monkeypatch)
            assert isinstance(one, str) and words in one, (kind, at, one)
            for _ in range(3):
                assert _outcome(run_path, read_run, 4, monkeypatch) == one


def test_every_split_of_a_small_file_gives_the_one_block_table(tmp_path, monkeypatch):
    """Blocks ending at every byte of a small file: the same separators,
    table and first error as one block."""
    monkeypatch.setenv(ENV, "3")
    run, _ = _files(tmp_path, 5)
    text = "".join(run.splitlines(keepends=True)[:12])
    buf = np.frombuffer(text.encode(), np.uint8)
    whole = _fields._plain_separators(buf, 6)
    bad = text.replace(" tag\n", " tag\n\n", 1)  # a blank line: not the usual layout
    path = tmp_path / "run"
    path.write_text(text)
    expected = _table(read_run(path, engine="numpy"))
    for block in range(1, len(text) + 2):
        monkeypatch.setattr(_fields, "_BLOCK", block)
        monkeypatch.setattr(_numbers, "_NUMBERS", 1 + block % 7)
        assert np.array_equal(_fields._plain_separators(buf, 6), whole), block
        assert _fields._plain_separators(np.frombuffer(bad.encode(), np.uint8), 6) is None
        assert _table(read_run(path, engine="numpy")) == expected


def test_no_thread_outlives_a_read_even_when_a_block_fails(tmp_path, tiny_blocks,
                                                           monkeypatch):
    """A block that raises (an unexpected error, or Ctrl-C on a worker or
    on the calling thread) ends the read with that exception once every
    thread is joined."""
    run, _ = _files(tmp_path, 1)
    path = tmp_path / "run"
    path.write_text(run)
    monkeypatch.setenv(ENV, "4")
    before = set(threading.enumerate())
    real = _decimal.decimal_values
    for exc in (MemoryError, KeyboardInterrupt):
        for nth in (0, 3, 20):
            calls = []
            lock = threading.Lock()

            def failing(words, length, exc=exc, nth=nth, calls=calls, lock=lock):
                with lock:
                    calls.append(1)
                    k = len(calls)
                if k == nth + 1:
                    raise exc
                return real(words, length)

            monkeypatch.setattr(_numbers, "decimal_values", failing)
            for _ in range(3):
                calls.clear()
                with pytest.raises(exc):
                    read_run(path, engine="numpy")
                assert set(threading.enumerate()) == before
    monkeypatch.setattr(_numbers, "decimal_values", real)
    for _ in range(10):
        read_run(path, engine="numpy")
        assert set(threading.enumerate()) == before


def test_the_commands_read_with_numpy(tmp_path, monkeypatch):
    """sklearn-rank evaluate / trec_eval read with the NumPy reader (pyarrow
    is not imported for them), with the tables of the default engine."""
    from sklearn_rank.cli import _support as _cli_support
    from sklearn_rank.cli._trec_eval import trec_output
    from sklearn_rank.trec import _io

    run, qrels = _files(tmp_path, 2)
    (tmp_path / "run").write_text(run)
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d1x{i * 40} 1\n" for i in range(10)))
    assert _cli_support.READER == "numpy"
    engines = []
    real = _io.read_table

    def spy(path, progress, engine, layout, build):
        engines.append(engine)
        return real(path, progress, engine, layout, build)

    monkeypatch.setattr(_io, "read_table", spy)
    out = trec_output(str(tmp_path / "qrels"), [str(tmp_path / "run")], ["map"])
    assert engines == ["numpy", "numpy"] and out.startswith("map")
