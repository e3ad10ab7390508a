"""Reading TREC qrels and run files fast, with errors that name the line.

Two readers build the same tables: pyarrow's multi-threaded CSV parser, used
when pyarrow is installed and a file has the plain layout (single spaces,
a newline after every line, no blank or comment line), and a vectorised NumPy
reader for everything else, which also writes every error message.
"""

from __future__ import annotations

import gzip
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property

import numpy as np

from .._hashing import _units, _words, hash64, hash_words, pair_key
from ..metrics._engine import _runs_at

__all__ = ["Qrels", "Run", "read_qrels", "read_run"]

_CHUNK = 1 << 23  # bytes read at a time (progress is reported per chunk)
_ARROW = True  # parse plain files with pyarrow when it is installed (tests switch it off)


def _as_bytes(ids) -> np.ndarray:
    """Ids as a fixed-width bytes array (UTF-8), the form evaluation works on."""
    ids = np.asarray(ids)
    if ids.dtype.kind == "S":
        return ids
    if ids.dtype.kind != "U":
        ids = ids.astype(str)
    try:
        return ids.astype(bytes)  # ASCII: the fast, common case
    except UnicodeEncodeError:
        return np.char.encode(ids, "utf-8")


def _as_text(ids: np.ndarray) -> np.ndarray:
    try:
        return ids.astype(str)
    except UnicodeDecodeError:
        return np.char.decode(ids, "utf-8", "replace")


class _Table:
    """Rows of (qid, docno, value) with ids kept as UTF-8 bytes internally."""

    _value_name = "value"

    def __init__(self, qid, docno, values):
        self.qid_bytes = _as_bytes(qid)
        if isinstance(docno, _Column):  # from a file: bytes arrays made when needed
            self._docno_column = docno
        else:
            self._docno_column = None
            self.docno_bytes = _as_bytes(docno)
        values = np.asarray(values, dtype=np.float64)
        shapes = (self.qid_bytes.shape, (self._n_docno(),), values.shape)
        if values.ndim != 1 or len(set(shapes)) != 1:
            raise ValueError(
                f"qid, docno and {self._value_name} must be 1-D arrays of the same length; got "
                f"shapes {shapes[0]}, {shapes[1]} and {shapes[2]}."
            )
        setattr(self, self._value_name, values)

    def __len__(self) -> int:
        return self.qid_bytes.shape[0]

    def _n_docno(self) -> int:
        column = self._docno_column
        return self.docno_bytes.shape[0] if column is None else len(column)

    @cached_property
    def docno_bytes(self) -> np.ndarray:
        """Document ids as UTF-8 bytes."""
        return self._docno_column.fixed()

    def _docno_source(self):
        """The document ids as made so far: a bytes array, or else the file's column."""
        return self.__dict__.get("docno_bytes", self._docno_column)

    def _docno_at(self, rows: np.ndarray) -> np.ndarray:
        """Document ids of ``rows`` as UTF-8 bytes."""
        column = self._docno_source()
        return column[rows] if isinstance(column, np.ndarray) else column.fixed(rows)

    @cached_property
    def qid(self) -> np.ndarray:
        """Query ids (str), as in the file."""
        return _as_text(self.qid_bytes)

    @cached_property
    def docno(self) -> np.ndarray:
        """Document ids (str), as in the file."""
        return _as_text(self.docno_bytes)

    @cached_property
    def _key(self) -> np.ndarray:
        """A 64-bit hash of each (qid, docno) pair (equal pairs, equal keys)."""
        starts, lengths = self._qid_runs  # each query's rows are mostly adjacent
        column = self._docno_source()
        docno = hash_words(_words(column).T) if isinstance(column, np.ndarray) else column.hash()
        return pair_key(np.repeat(hash64(self.qid_bytes[starts]), lengths), docno, out=docno)

    @cached_property
    def _qid_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Starts and lengths of the runs of consecutive rows with equal qids."""
        units = _units(np.ascontiguousarray(self.qid_bytes))  # (faster than comparing bytes)
        change = units[1:, 0] != units[:-1, 0]
        for j in range(1, units.shape[1]):  # (1-D passes: NumPy is slow on short inner axes)
            change |= units[1:, j] != units[:-1, j]
        return _runs_at(change, len(self))

    def _n_queries(self) -> int:
        return np.unique(self.qid_bytes).shape[0]

    @classmethod
    def _from_nested(cls, nested: dict, what: str):
        qids, docnos, values = [], [], []
        for q, docs in nested.items():
            if not isinstance(docs, dict):
                raise TypeError(f"{what} must map query ids to {{docno: value}} dicts; query "
                                f"{q!r} maps to a {type(docs).__name__}.")
            qids.extend([str(q)] * len(docs))
            docnos.extend(str(d) for d in docs)
            values.extend(docs.values())
        try:
            values = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{what} values must be numbers.") from None
        return np.asarray(qids, dtype=str), np.asarray(docnos, dtype=str), values


class Qrels(_Table):
    """Relevance judgments: one row per judged (query, document) pair.

    Parameters
    ----------
    qid, docno : array-like of str
        Query and document ids.
    rel : array-like of float
        Relevance levels. trec_eval reads a negative level as "in the pool but
        not judged": such documents are neither relevant nor judged
        non-relevant.

    Attributes
    ----------
    qid, docno : ndarray of str
    rel : ndarray of float
    """

    _value_name = "rel"

    def __repr__(self) -> str:
        return (f"Qrels({len(self)} judgments, {self._n_queries()} queries, "
                f"{int((self.rel > 0).sum())} with level > 0)")

    @classmethod
    def from_dict(cls, judgments: dict) -> Qrels:
        """From ``{qid: {docno: level}}`` (pytrec_eval's and ranx's layout)."""
        return cls(*cls._from_nested(judgments, "qrels"))


class Run(_Table):
    """A ranked run: one row per retrieved (query, document) pair.

    Parameters
    ----------
    qid, docno : array-like of str
        Query and document ids.
    score : array-like of float
        Retrieval scores (trec_eval ranks by decreasing score, ties by
        decreasing document id; the rank column of a run file is ignored).
    name : str, default="run"
        The run tag.
    """

    _value_name = "score"

    def __init__(self, qid, docno, score, name: str = "run"):
        super().__init__(qid, docno, score)
        self.name = name

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} documents, {self._n_queries()} queries)"

    @classmethod
    def from_dict(cls, scores: dict, name: str = "run") -> Run:
        """From ``{qid: {docno: score}}`` (pytrec_eval's and ranx's layout)."""
        return cls(*cls._from_nested(scores, "run"), name)


# --------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------

# _MASKS[k]: a uint64 word keeping its first k bytes (in memory order, any endianness)
_MASKS = np.frombuffer(b"".join(b"\xff" * k + b"\x00" * (8 - k) for k in range(9)),
                       dtype=np.uint64)


def _read_buffer(path_or_buffer, progress: Callable | None) -> tuple[np.ndarray, str]:
    """The whole content (gunzipped) as a uint8 array, and a name for messages."""
    if hasattr(path_or_buffer, "read"):
        data = path_or_buffer.read()
        name = getattr(path_or_buffer, "name", "<buffer>")
        buf = np.frombuffer(data.encode() if isinstance(data, str) else data, dtype=np.uint8)
    else:
        name = os.fspath(path_or_buffer)
        size = os.path.getsize(name)
        buf = _allocate(size)
        view, done = memoryview(buf), 0
        with open(name, "rb") as f:  # straight into the array: no copy
            while done < size and (got := f.readinto(view[done:min(done + _CHUNK, size)])):
                done += got
                if progress is not None:
                    progress(name, done, size)
        buf = buf[:done]
    if buf.shape[0] > 1 and buf[0] == 0x1F and buf[1] == 0x8B:
        buf = np.frombuffer(gzip.decompress(buf), dtype=np.uint8)
    return buf, str(name)


def _allocate(size: int) -> np.ndarray:
    """An uninitialised uint8 array, in memory of Arrow's pool when pyarrow
    may parse it (see :func:`_arrow_buffer`)."""
    if _ARROW:
        try:
            import pyarrow as pa
        except ImportError:
            pass
        else:
            return np.frombuffer(pa.allocate_buffer(size), dtype=np.uint8)
    return np.empty(size, dtype=np.uint8)


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
    source = pa.allocate_buffer(text.shape[0])
    np.frombuffer(source, dtype=np.uint8)[:] = text
    return source


def _clamp(values: np.ndarray, high: int) -> np.ndarray:
    """``values`` (a scratch array) clipped to 0..high in place (np.clip is slower)."""
    np.maximum(values, 0, out=values)
    return np.minimum(values, high, out=values)


class _Column:
    """Strings stored in a byte buffer: string i is ``buf[start[i]:start[i] + length[i]]``.

    Makes fixed-width arrays (:meth:`fixed`) and hashes (:meth:`hash`) without
    a Python loop: each string is gathered as a whole number of 8-byte words
    (one fancy index into a byte-strided view of the buffer), then masked past
    its end. A ``packed`` column (pyarrow's layout: the strings back to back)
    whose strings all have the same length is read through strided views,
    without gathering at all.
    """

    def __init__(self, buf: np.ndarray, start: np.ndarray, length: np.ndarray, *,
                 packed: bool = False):
        self.buf, self.start, self.length, self._packed = buf, start, length, packed

    def __len__(self) -> int:
        return self.start.shape[0]

    @cached_property
    def _stride(self) -> int:
        """The common length of a packed column of equal-length strings, else 0."""
        if not self._packed or not len(self):
            return 0
        width = int(self.length[0])
        return width if int(self.length.min()) == width == int(self.length.max()) else 0

    def _words(self, rows=None) -> np.ndarray:
        """The strings (of ``rows``) as rows of 8-byte words, zero past their ends."""
        start = self.start if rows is None else self.start[rows]
        length = self.length if rows is None else self.length[rows]
        shortest, longest = (int(length.min()), int(length.max())) if length.shape[0] else (0, 0)
        n_words = max(1, -(-longest // 8))
        width, buf = 8 * n_words, self.buf
        limit = buf.shape[0] - width  # the last position a whole row can be read from
        # rows that would read past the buffer: read from a zero-padded copy
        if self._packed and rows is None:  # starts increase: a last few rows
            near_end = np.arange(np.searchsorted(start, limit, side="right"), start.shape[0])
        else:
            near_end = np.flatnonzero(start > limit)
        if limit >= 0:
            windows = np.ndarray((limit + 1,), dtype=f"V{width}", buffer=buf, strides=(1,))
            safe = np.minimum(start, limit) if near_end.shape[0] else start
            out = windows[safe].view(np.uint64).reshape(-1, n_words)
        else:
            out = np.empty((start.shape[0], n_words), dtype=np.uint64)
        if near_end.shape[0]:
            cut = max(0, limit - width)
            tail = np.zeros(buf.shape[0] - cut + width, dtype=np.uint8)
            tail[:buf.shape[0] - cut] = buf[cut:]
            windows = np.ndarray((tail.shape[0] - width + 1,), dtype=f"V{width}", buffer=tail,
                                 strides=(1,))
            out[near_end] = windows[start[near_end] - cut].view(np.uint64).reshape(-1, n_words)
        for j in range(n_words):  # (1-D passes: NumPy is slow on short inner axes)
            if 8 * (j + 1) <= shortest:  # every string fills this word
                continue
            if shortest == longest:
                out[:, j] &= _MASKS[min(8, longest - 8 * j)]
            else:  # bytes of each string in this word: its length - 8j, within 0..8
                kept = length - 8 * j
                if shortest < 8 * j or longest > 8 * (j + 1):
                    _clamp(kept, 8)
                out[:, j] &= _MASKS.take(kept)
        return out

    def _packed_words(self) -> list[np.ndarray] | None:
        """Word j of every string of a packed equal-length column (contiguous
        copies of strided views of the buffer, a last partial word masked);
        None if the column is not one, or the last word would be read past
        the buffer."""
        width = self._stride
        if not width or int(self.start[-1]) + 8 * -(-width // 8) > self.buf.shape[0]:
            return None
        words = []
        for j in range(-(-width // 8)):
            word = np.ndarray((len(self),), dtype=np.uint64, buffer=self.buf,
                              offset=int(self.start[0]) + 8 * j, strides=(width,)).copy()
            if 8 * (j + 1) > width:
                word &= _MASKS[width - 8 * j]
            words.append(word)
        return words

    def fixed(self, rows=None) -> np.ndarray:
        """The strings (of ``rows``) as a NUL-padded bytes array."""
        if self._stride:
            first = int(self.start[0])
            strings = self.buf[first:first + len(self) * self._stride].view(f"S{self._stride}")
            return strings.copy() if rows is None else strings[rows]
        words = self._words(rows)
        return words.view(f"S{8 * words.shape[1]}").ravel()

    def hash(self) -> np.ndarray:
        """:func:`hash_words` of the strings."""
        words = self._packed_words()
        return hash_words(list(self._words().T) if words is None else words, overwrite=True)


def _parse_floats(raw: np.ndarray) -> np.ndarray | None:
    try:
        values = raw.astype(np.float64)
    except ValueError:
        return None
    return values if np.isfinite(values).all() else None


class _Parsed:
    """What both readers give: the fields of every line, as :class:`_Column`."""

    def column(self, j: int) -> _Column:
        raise NotImplementedError

    def raw(self, j: int, rows=None) -> np.ndarray:
        """Field j of every line (or of ``rows``) as a bytes array."""
        return self.column(j).fixed(rows)


class _Fields(_Parsed):
    """Whitespace-separated fields of a text buffer, as byte spans (vectorised).

    Blank lines and lines starting with ``#`` are skipped; every other line
    must have exactly ``n_fields`` fields.
    """

    def __init__(self, buf: np.ndarray, name: str, n_fields: int, what: str):
        self.name = name
        self.buf = text = buf
        numbers = None
        if (text == 35).any():  # '#': drop comment lines (rare)
            lines = text.tobytes().split(b"\n")
            keep = [i for i, line in enumerate(lines) if not line.lstrip().startswith(b"#")]
            self.buf = text = np.frombuffer(b"\n".join(lines[i] for i in keep), dtype=np.uint8)
            numbers = np.asarray(keep) + 1
        seps = np.flatnonzero(text <= 32)  # space, tab, newline, CR, ...
        if numbers is None and self._regular(text, seps, n_fields):
            return
        starts = np.empty(seps.shape[0] + 1, dtype=np.int64)
        starts[0] = 0
        starts[1:] = seps + 1
        ends = np.empty_like(starts)
        ends[:-1] = seps
        ends[-1] = text.shape[0]
        newline = np.zeros(starts.shape[0], dtype=bool)
        newline[1:] = text[seps] == 10
        line = np.cumsum(newline)
        token = ends > starts  # False between two separators in a row
        if not token[:-1].all():
            starts, ends, line = starts[token], ends[token], line[token]
        elif not token[-1]:  # only the end of the data after its last newline
            starts, ends, line = starts[:-1], ends[:-1], line[:-1]
        counts = np.bincount(line)
        data_lines = np.flatnonzero(counts)
        if numbers is None:
            numbers = np.arange(counts.shape[0]) + 1
        bad = counts[data_lines] != n_fields
        if bad.any():
            first = data_lines[np.argmax(bad)]
            raise ValueError(
                f"{name}: line {int(numbers[first])}: expected {n_fields} fields ({what}), "
                f"got {int(counts[first])}."
            )
        self._lines = numbers[data_lines]
        self.starts = starts.reshape(-1, n_fields)
        self.ends = ends.reshape(-1, n_fields)

    def _regular(self, text: np.ndarray, seps: np.ndarray, n_fields: int) -> bool:
        """The common layout, checked in O(n): every line has ``n_fields``
        fields, one separator apart, and ends with a newline (no blank line)."""
        n = seps.shape[0]
        if n == 0 or n % n_fields or seps[0] == 0 or text[-1] != 10:
            return False
        ends = seps.reshape(-1, n_fields)
        if (np.count_nonzero(text[ends[:, -1]] == 10) != ends.shape[0]
                or np.count_nonzero(text[seps] == 10) != ends.shape[0]
                or np.diff(seps).min(initial=2) < 2):
            return False
        starts = np.empty_like(seps)
        starts[0] = 0
        starts[1:] = seps[:-1] + 1
        self.starts, self.ends, self._lines = starts.reshape(-1, n_fields), ends, None
        return True

    @property
    def lines(self) -> np.ndarray:
        """The file's line number of every row."""
        return np.arange(1, len(self) + 1) if self._lines is None else self._lines

    def __len__(self) -> int:
        return self.starts.shape[0]

    def column(self, j: int) -> _Column:
        """Field j of every line."""
        start = self.starts[:, j]
        return _Column(self.buf, start, self.ends[:, j] - start)

    def last(self, j: int) -> bytes:
        """Field j of the last line."""
        return self.raw(j, [-1])[0]

    def numbers(self, j: int, what: str) -> np.ndarray:
        raw = self.raw(j)
        values = _parse_floats(raw)
        if values is None:
            for i, token in enumerate(raw.tolist()):
                if _parse_floats(np.array([token])) is None:
                    raise ValueError(
                        f"{self.name}: line {int(self.lines[i])}: {what} "
                        f"{token.decode(errors='replace')!r} is not a finite number."
                    ) from None
        return values


class _ArrowFields(_Parsed):
    """The fields of a plain file, parsed by pyarrow's multi-threaded CSV reader.

    Used, when pyarrow is installed, only for text that :class:`_Fields` would
    split into exactly the same fields: every line ends with a newline and has
    ``n_fields`` non-empty fields separated by single spaces (no tab, CR, blank
    or comment line); anything else, including a value pyarrow cannot parse,
    goes to :class:`_Fields`, which also writes every error message.
    """

    def __init__(self, name: str, strings: dict, numbers: dict, text: np.ndarray,
                 n_fields: int):
        self.name, self._strings, self._numbers, self._text = name, strings, numbers, text
        self._n_fields = n_fields

    def plain(self) -> bool:
        """Whether the text has the plain layout (so the fields are those
        :class:`_Fields` would give): use the fields only if it is True."""
        return _plain(self._text, len(self), self._n_fields, next(iter(self._numbers.values())))

    @classmethod
    def parse(cls, buf: np.ndarray, name: str, n_fields: int, strings: tuple[int, ...],
              number: int) -> _ArrowFields | None:
        """The fields, or None when pyarrow is missing or cannot parse the text.

        Use them only if :meth:`plain` says True (:func:`_read` asks on
        another thread while it builds the table).
        """
        text = buf
        if not _ARROW or text.shape[0] == 0 or text[-1] != 10:
            return None
        try:
            import pyarrow as pa
            from pyarrow import csv
        except ImportError:
            return None
        source = _arrow_buffer(pa, text)
        names = [str(j) for j in range(n_fields)]
        types = {names[j]: pa.binary() for j in strings} | {names[number]: pa.float64()}
        try:
            table = csv.read_csv(
                source,
                read_options=csv.ReadOptions(column_names=names, block_size=1 << 23),
                parse_options=csv.ParseOptions(delimiter=" ", quote_char=False,
                                               double_quote=False, escape_char=False),
                convert_options=csv.ConvertOptions(column_types=types,
                                                   include_columns=list(types),
                                                   null_values=[], strings_can_be_null=False),
            )
            values = table.column(names[number]).combine_chunks()
        except (pa.ArrowException, OverflowError):
            return None
        if values.null_count:
            return None
        # The buffer itself (writable, owned by this array from now on);
        # pyarrow's to_numpy would import pandas (0.3 s).
        values = np.frombuffer(values.buffers()[1], dtype=np.float64, count=len(values),
                               offset=8 * values.offset)
        columns = {j: _arrow_strings(table.column(names[j])) for j in strings}
        return cls(name, columns, {number: values}, text, n_fields)

    @property
    def lines(self) -> np.ndarray:
        """The file's line number of every row (the text has no blank line)."""
        return np.arange(1, len(self) + 1)

    def __len__(self) -> int:
        return next(iter(self._numbers.values())).shape[0]

    def column(self, j: int) -> _Column:
        """Field j of every line."""
        data, offsets = self._strings[j]
        return _Column(data, offsets[:-1], np.diff(offsets), packed=True)

    def last(self, j: int) -> bytes:
        """The last field of the last line (j must be the last field)."""
        tail = self._text[max(0, self._text.shape[0] - (1 << 16)):-1]  # without the newline
        return tail[np.flatnonzero(tail == 32)[-1] + 1:].tobytes()

    def numbers(self, j: int, what: str) -> np.ndarray:
        return self._numbers[j]


@contextmanager
def _in_background(check: Callable[[], bool]) -> Iterator[Callable[[], bool]]:
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


def _read(path_or_buffer, progress: Callable | None, n_fields: int, what: str,
          strings: tuple[int, ...], number: int, build: Callable[[_Parsed], _Table]):
    """Parse a file and ``build`` its table: from pyarrow's parse when pyarrow
    is installed and the text is plain, else from :class:`_Fields` (which
    also writes every error message, with its line)."""
    buf, name = _read_buffer(path_or_buffer, progress)
    fields = _ArrowFields.parse(buf, name, n_fields, strings, number)
    if fields is not None:
        with _in_background(fields.plain) as plain:
            try:
                table = build(fields)
            except ValueError:
                table = None
            if plain() and table is not None:
                return table
    return build(_Fields(buf, name, n_fields, what))


def _check_duplicates(fields: _Parsed, table: _Table, what: str):
    """Error naming the first document listed twice for a query."""
    key = table._key
    sorted_keys = np.sort(key)
    if not (sorted_keys[1:] == sorted_keys[:-1]).any():
        return
    qid, docno = table.qid_bytes, table.docno_bytes
    order = np.argsort(key, kind="stable")
    candidates = np.flatnonzero(key[order][1:] == key[order][:-1])
    for c in candidates:  # equal hashes: verify the strings
        i, j = order[c], order[c + 1]
        if qid[i] == qid[j] and docno[i] == docno[j]:
            first, second = sorted((int(fields.lines[i]), int(fields.lines[j])))
            raise ValueError(
                f"{fields.name}: document {docno[i].decode(errors='replace')!r} appears twice "
                f"for query {qid[i].decode(errors='replace')!r} (lines {first} and {second}); "
                f"each {what} lists a document once per query."
            )


def read_qrels(path_or_buffer, *, progress: Callable | None = None) -> Qrels:
    """Read TREC relevance judgments: lines ``qid iter docno rel``.

    Parameters
    ----------
    path_or_buffer : str, path-like or file-like
        A qrels file (plain or gzip, detected by its magic bytes) or an open
        text/binary buffer. Blank lines and lines starting with ``#`` are
        skipped; fields are separated by any whitespace.
    progress : callable, default=None
        Called as ``progress(name, bytes_read, total_bytes)`` while reading.

    Returns
    -------
    qrels : Qrels
        Ids kept exactly as strings, levels as floats.

    Raises
    ------
    ValueError
        Naming the file and line for a line without exactly 4 fields, a level
        that is not a number, or a document judged twice for a query.

    Notes
    -----
    With pyarrow installed (``pip install "sklearn-rank[fast]"``), a file in
    the plain layout (fields separated by single spaces, a newline after
    every line, no blank or comment line) is parsed by pyarrow's
    multi-threaded CSV reader, five times as fast or more (the layout is
    checked on a second thread while the table is built); any other file, and
    every error, goes through the NumPy reader. Both give the same table.

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_qrels
    >>> read_qrels(io.StringIO("q1 0 d1 2\\nq1 0 d2 0\\n# a comment\\nq2 0 d1 1\\n"))
    Qrels(3 judgments, 2 queries, 2 with level > 0)
    """
    return _read(path_or_buffer, progress, 4, "qid iter docno rel", (0, 2), 3, _build_qrels)


def read_run(path_or_buffer, *, progress: Callable | None = None) -> Run:
    """Read a TREC run: lines ``qid Q0 docno rank score tag``.

    Parameters
    ----------
    path_or_buffer : str, path-like or file-like
        A run file (plain or gzip, detected by its magic bytes) or an open
        buffer. Blank lines and lines starting with ``#`` are skipped.
    progress : callable, default=None
        Called as ``progress(name, bytes_read, total_bytes)`` while reading.

    Returns
    -------
    run : Run
        Ids kept exactly as strings, scores as floats; ``name`` is the tag of
        the last line (trec_eval's runid). The rank column is ignored, as by
        trec_eval.

    Raises
    ------
    ValueError
        Naming the file and line for a line without exactly 6 fields, a score
        that is not a finite number, or a document retrieved twice for a query.

    Notes
    -----
    As :func:`read_qrels`: plain files are parsed by pyarrow's CSV reader
    when pyarrow is installed (the ``fast`` extra), others by NumPy, with
    the same result.

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_run
    >>> read_run(io.StringIO("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"))
    Run('bm25', 2 documents, 1 queries)
    """
    return _read(path_or_buffer, progress, 6, "qid Q0 docno rank score tag", (0, 2), 4,
                 _build_run)


def _build_qrels(fields: _Parsed) -> Qrels:
    if not len(fields):
        raise ValueError(f"{fields.name}: the qrels file has no judgments.")
    qrels = Qrels(fields.raw(0), fields.column(2), fields.numbers(3, "relevance level"))
    _check_duplicates(fields, qrels, "qrels file")
    return qrels


def _build_run(fields: _Parsed) -> Run:
    if not len(fields):
        raise ValueError(f"{fields.name}: the run has no lines.")
    run = Run(fields.raw(0), fields.column(2), fields.numbers(4, "score"),
              fields.last(5).decode(errors="replace"))
    _check_duplicates(fields, run, "run")
    return run
