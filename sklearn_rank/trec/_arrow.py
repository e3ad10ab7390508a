"""The optional pyarrow reader of TREC files: pyarrow's CSV parser, for
files in the plain layout (see :class:`ArrowFields`).

The parser runs on the calling thread (``use_threads=False``): pyarrow's
thread pool would parse a 1M-line run a few tens of milliseconds sooner on
an idle machine, but its threads' allocator arenas keep ~40 MB more of
peak memory, and the layout check already takes the second core.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from ._column import IdColumn
from ._fields import ParsedFields


def reader_pool(pa):
    """The memory pool of the reader's Arrow buffers: the system allocator's.

    pyarrow's default pool (mimalloc or jemalloc) keeps freed memory for
    reuse: the parse's temporaries would stay in the process (60 MB more
    peak memory on a 1M-line run); the system's allocator returns big
    blocks at once.
    """
    return pa.system_memory_pool()


def _arrow_buffer(pa, text: np.ndarray):
    """The bytes of ``text`` as an Arrow buffer of Arrow's own memory: the
    buffer under ``text`` when :func:`_allocate` made it, else a copy.

    Never ``pa.py_buffer(text)``: pyarrow's threaded CSV reader may drop its
    last reference to its input on one of pyarrow's pool threads after
    ``read_csv`` has returned, and a buffer wrapping a Python object then
    takes the GIL to release it. If the interpreter is exiting by then, the
    thread is ended inside C++ code and the process aborts ("terminate
    called without an active exception", SIGABRT). Arrow's memory is
    released without Python.
    """
    owner = text
    while isinstance(owner, np.ndarray):
        owner = owner.base
    if isinstance(owner, pa.Buffer):
        return owner.slice(text.ctypes.data - owner.address, text.shape[0])
    source = pa.allocate_buffer(text.shape[0], memory_pool=reader_pool(pa))
    np.frombuffer(source, dtype=np.uint8)[:] = text
    return source


class ArrowFields(ParsedFields):
    """The fields of a plain file, parsed by pyarrow's CSV reader.

    Used, when pyarrow is installed, only for text that :class:`Fields` would
    split into exactly the same fields: every line ends with a newline and has
    ``n_fields`` non-empty fields separated by single spaces (no tab, CR, blank
    or comment line); anything else, including a value pyarrow cannot parse,
    goes to :class:`Fields`, which also writes every error message.
    """

    def __init__(self, name: str, strings: dict, numbers: dict, text: np.ndarray,
                 n_fields: int):
        self.name, self._strings, self._numbers, self._text = name, strings, numbers, text
        self._n_fields = n_fields

    def plain(self) -> bool:
        """Whether the text has the plain layout (so the fields are those
        :class:`Fields` would give): use the fields only if it is True."""
        return _plain(self._text, len(self), self._n_fields, next(iter(self._numbers.values())))

    @classmethod
    def parse(cls, buf: np.ndarray, name: str, n_fields: int, strings: tuple[int, ...],
              number: int, integer: bool = False) -> ArrowFields | None:
        """The fields, or None when pyarrow is missing or cannot parse the text.

        Use them only if :meth:`plain` says True (:func:`~sklearn_rank.trec._io.read_table` asks on
        another thread while it builds the table).
        """
        text = buf
        if text.shape[0] == 0 or text[-1] != 10:
            return None
        try:
            import pyarrow as pa
            from pyarrow import csv
        except ImportError:
            return None
        names = [str(j) for j in range(n_fields)]
        types = {names[j]: pa.binary() for j in strings}
        # integers: a level pyarrow reads as an int64 is what atol reads (others go to NumPy)
        types[names[number]] = pa.int64() if integer else pa.float64()
        table = _read_csv(pa, csv, _arrow_buffer(pa, text), names, types)
        values = None if table is None else _float_values(pa, table.column(names[number]),
                                                          integer)
        if values is None:
            return None
        columns = {j: _arrow_strings(table.column(names[j])) for j in strings}
        return cls(name, columns, {number: values}, text, n_fields)

    def __len__(self) -> int:
        return next(iter(self._numbers.values())).shape[0]

    def column(self, j: int) -> IdColumn:
        """Field j of every line."""
        data, offsets = self._strings[j]
        return IdColumn(data, offsets[:-1], np.diff(offsets), packed=True)

    def last(self, j: int) -> bytes:
        """The last field of the last line (j must be the last field)."""
        tail = self._text[max(0, self._text.shape[0] - (1 << 16)):-1]  # without the newline
        return tail[np.flatnonzero(tail == 32)[-1] + 1:].tobytes()

    def numbers(self, j: int, what: str, integer: bool = False) -> np.ndarray:
        return self._numbers[j]


def _read_csv(pa, csv, source, names: list[str], types: dict):
    """pyarrow's parse of ``source`` (single-space separated, no quoting), the
    columns of ``types`` only; None if it fails."""
    try:
        return csv.read_csv(
            source,
            read_options=csv.ReadOptions(column_names=names, block_size=1 << 23,
                                         use_threads=False),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False,
                                           double_quote=False, escape_char=False),
            convert_options=csv.ConvertOptions(column_types=types, include_columns=list(types),
                                               null_values=[], strings_can_be_null=False),
            memory_pool=reader_pool(pa),
        )
    except (pa.ArrowException, OverflowError):
        return None


def _float_values(pa, column, integer: bool) -> np.ndarray | None:
    """A pyarrow int64 (``integer``) or float64 column as float64, None if it
    has nulls (or cannot be joined)."""
    try:
        values = column.combine_chunks()
    except pa.ArrowException:
        return None
    if values.null_count:
        return None
    # The buffer itself (writable, owned by this array from now on);
    # pyarrow's to_numpy would import pandas.
    values = np.frombuffer(values.buffers()[1], dtype=np.int64 if integer else np.float64,
                           count=len(values), offset=8 * values.offset)
    return values.astype(np.float64) if integer else values


@contextmanager
def in_background(check: Callable[[], bool]) -> Iterator[Callable[[], bool]]:
    """Run ``check()`` on a thread (NumPy releases the GIL in its loops) for
    the ``with`` block; the function it gives waits for the answer (False if
    ``check`` raised). The thread is joined when the block ends, however it
    ends: none outlives the call that started it.
    """
    answer = []

    def run():
        try:
            answer.append(bool(check()))
        except Exception:  # (MemoryError, ...): the NumPy reader decides
            answer.append(False)

    thread = threading.Thread(target=run, name="sklearn_rank-layout-check")
    thread.start()

    def result() -> bool:
        thread.join()
        return bool(answer and answer[0])

    try:
        yield result
    finally:
        thread.join()


def _plain(text: np.ndarray, rows: int, n_fields: int, values: np.ndarray) -> bool:
    """Whether ``text`` is ``rows`` lines of ``n_fields`` fields separated by
    single spaces, each line ending with a newline, and no line a comment:
    every byte <= 32 is one of the ``rows * n_fields`` separators, ``rows`` of
    them newlines, no two are adjacent (no blank line, no empty field) and no
    line starts with ``#``; and the parsed ``values`` are finite.

    Scanned in blocks that stay in cache (whole-text temporaries would cost
    more in page faults than the comparisons themselves).
    """
    if rows == 0 or text[0] <= 32 or text[0] == 35 or not np.isfinite(values).all():
        return False
    step = 1 << 18
    blank, newline = np.empty(step + 1, dtype=bool), np.empty(step + 1, dtype=bool)
    scratch = np.empty(step, dtype=bool)
    n_blank = n_newline = 0
    for lo in range(0, text.shape[0], step):
        part = text[lo:lo + step + 1]  # one byte of overlap, for adjacency
        own, size = min(step, part.shape[0]), part.shape[0]
        is_blank = np.less(part, 33, out=blank[:size])
        n_blank += np.count_nonzero(is_blank[:own])
        if np.logical_and(is_blank[1:], is_blank[:-1], out=scratch[:size - 1]).any():
            return False
        is_newline = np.equal(part, 10, out=newline[:size])
        n_newline += np.count_nonzero(is_newline[:own])
        starts_comment = np.equal(part[1:], 35, out=scratch[:size - 1])
        if np.logical_and(starts_comment, is_newline[:-1], out=starts_comment).any():
            return False
    return n_blank == rows * n_fields and n_newline == rows


def _arrow_strings(column) -> tuple[np.ndarray, np.ndarray]:
    """The bytes and offsets of a pyarrow binary column, its chunks joined; the
    bytes are followed by 8 zeros, so that every string's words can be read in
    place."""
    parts = []  # (offsets, data, first byte, size) of each chunk
    for chunk in column.chunks:
        _, offsets, data = chunk.buffers()
        offsets = np.frombuffer(offsets, dtype=np.int32, count=len(chunk) + 1,
                                offset=4 * chunk.offset)
        parts.append((offsets, data, int(offsets[0]), int(offsets[-1] - offsets[0])))
    total = sum(size for *_, size in parts)
    data = np.zeros(total + 8, dtype=np.uint8)
    offsets = np.empty(sum(len(part[0]) - 1 for part in parts) + 1,
                       dtype=np.int32 if total + 8 < 2**31 else np.int64)
    at = row = 0
    for chunk_offsets, chunk_data, first, size in parts:
        if size:
            data[at:at + size] = np.frombuffer(chunk_data, np.uint8, count=size, offset=first)
        rows = len(chunk_offsets) - 1
        np.add(chunk_offsets[:-1], at - first, out=offsets[row:row + rows])
        at, row = at + size, row + rows
    offsets[row] = at
    return data, offsets
