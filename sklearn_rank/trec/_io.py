"""Reading TREC qrels and run files fast, with errors that name the line.

Two readers build the same tables from the same bytes: pyarrow's
multi-threaded CSV parser (:mod:`._arrow`), used when pyarrow is installed
and a file has the plain layout (single spaces, a newline after every line,
no blank or comment line), and a vectorised NumPy reader (:mod:`._fields`)
for everything else, which also writes every error message. Both see the
file without its gzip layer and without a leading UTF-8 byte-order mark. Ids
are kept as columns of bytes (:mod:`._column`).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from functools import cached_property

import numpy as np

from .._hashing import _mix, pair_key
from ..metrics._grouping import runs_at as _runs_at
from ._arrow import _ArrowFields, _in_background
from ._column import _Column
from ._fields import _Fields, _Parsed

__all__ = ["Qrels", "Run", "read_qrels", "read_run"]

_CHUNK = 1 << 23  # bytes read at a time (progress is reported per chunk)
_ARROW = True  # parse plain files with pyarrow when it is installed (tests switch it off)


def _as_column(ids, what: str) -> _Column:
    """Ids (a column, or array-like of str, bytes or numbers) as UTF-8 bytes."""
    if isinstance(ids, _Column):
        return ids
    if not isinstance(ids, list):
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"{what} must be a 1-D array; got shape {ids.shape}.")
        if ids.dtype.kind == "U":
            try:
                ids = ids.astype(bytes)  # ASCII: the fast, common case
            except UnicodeEncodeError:
                ids = np.char.encode(ids, "utf-8")
        elif ids.dtype.kind != "S":
            ids = ids.tolist()
    if isinstance(ids, list):
        strings = [s if isinstance(s, bytes) else str(s).encode("utf-8", "surrogatepass")
                   for s in ids]
        column = _Column.from_strings(strings)
        has_nul = bool(np.count_nonzero(column.buf[:column.buf.shape[0] - 8] == 0))
    else:
        column = _Column.from_fixed(ids)
        has_nul = column.has_inner_nul
    if has_nul:
        raise ValueError(f"{what} ids must not contain NUL characters (trec_eval cuts an id "
                         "at its first NUL, which would merge different ids).")
    return column


class _Table:
    """Rows of (qid, docno, value) with ids kept as UTF-8 bytes internally."""

    _value_name = "value"

    def __init__(self, qid, docno, values):
        self._qid = _as_column(qid, "qid")
        self._docno = _as_column(docno, "docno")
        try:
            values = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{self._value_name} must hold numbers.") from None
        shapes = ((len(self._qid),), (len(self._docno),), values.shape)
        if values.ndim != 1 or len(set(shapes)) != 1:
            raise ValueError(
                f"qid, docno and {self._value_name} must be 1-D arrays of the same length; got "
                f"shapes {shapes[0]}, {shapes[1]} and {shapes[2]}."
            )
        self._check_values(values)
        setattr(self, self._value_name, values)

    def _check_values(self, values: np.ndarray):
        if not np.isfinite(values).all():
            self._refuse(values, ~np.isfinite(values), "is not a finite number")

    def _refuse(self, values: np.ndarray, bad: np.ndarray, problem: str):
        i, n = int(np.argmax(bad)), int(bad.sum())
        raise ValueError(
            f"{type(self).__name__}: {self._value_name} {float(values[i])!r} of document "
            f"{self._docno.item(i).decode(errors='replace')!r} for query "
            f"{self._qid.item(i).decode(errors='replace')!r} {problem} ({n} "
            f"row{'s' if n > 1 else ''} in all)."
        )

    def __len__(self) -> int:
        return len(self._qid)

    @cached_property
    def qid(self) -> np.ndarray:
        """Query ids (str), as in the file."""
        return self._qid.texts()

    @cached_property
    def docno(self) -> np.ndarray:
        """Document ids (str), as in the file."""
        return self._docno.texts()

    @cached_property
    def _key(self) -> np.ndarray:
        """A 64-bit hash of each (qid, docno) pair (equal pairs, equal keys)."""
        starts, lengths = self._qid_runs  # each query's rows are mostly adjacent
        docno = self._docno.hash()
        return pair_key(np.repeat(_mix(self._qid.hash(starts)), lengths), docno, out=docno)

    @cached_property
    def _qid_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Starts and lengths of the runs of consecutive rows with equal qids."""
        return _runs_at(self._qid.changes(), len(self))

    def _n_queries(self) -> int:
        starts = self._qid_runs[0]
        if self._qid.compact:
            return np.unique(self._qid.fixed(starts)).shape[0]
        return len(set(self._qid.items(starts)))

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
        return qids, docnos, values


class Qrels(_Table):
    """Relevance judgments: one row per judged (query, document) pair.

    Parameters
    ----------
    qid, docno : array-like of str
        Query and document ids.
    rel : array-like of int
        Relevance levels: whole numbers (``2`` or ``2.0``; ``1.5`` is a
        ``ValueError``, as trec_eval reads levels as integers and would
        silently truncate it). trec_eval reads a negative level as "in the
        pool but not judged": such documents are neither relevant nor judged
        non-relevant.

    Attributes
    ----------
    qid, docno : ndarray of str
        Object arrays when the ids differ greatly in length (a few very long
        ones), so that memory stays proportional to their bytes.
    rel : ndarray of float
    """

    _value_name = "rel"

    def _check_values(self, values: np.ndarray):
        super()._check_values(values)
        bad = values != np.trunc(values)
        if bad.any():
            i = int(np.argmax(bad))
            self._refuse(values, bad, "is not an integer: trec_eval reads relevance levels as "
                         f"integers (it would read this one as {int(values[i])})")

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
        Retrieval scores, finite (trec_eval ranks by decreasing score, ties
        by decreasing document id; the rank column of a run file is ignored).
    name : str, default="run"
        The run tag.

    Attributes
    ----------
    qid, docno : ndarray of str
        Object arrays when the ids differ greatly in length (a few very long
        ones), so that memory stays proportional to their bytes.
    score : ndarray of float
    name : str
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

def _read_buffer(path_or_buffer, progress: Callable | None) -> tuple[np.ndarray, str]:
    """The whole content (gunzipped, without a leading UTF-8 byte-order mark)
    as a uint8 array, and a name for messages."""
    if hasattr(path_or_buffer, "read"):
        data = path_or_buffer.read()
        name = str(getattr(path_or_buffer, "name", "<buffer>"))
        buf = np.frombuffer(data.encode() if isinstance(data, str) else data, dtype=np.uint8)
    else:
        name = os.fspath(path_or_buffer)
        name = name.decode(errors="replace") if isinstance(name, bytes) else name
        with open(path_or_buffer, "rb") as f:
            buf = _read_file(f, name, progress)
    if buf.shape[0] > 1 and buf[0] == 0x1F and buf[1] == 0x8B:
        buf = _gunzip(buf, name)
    if buf.shape[0] >= 3 and buf[:3].tobytes() == _BOM:
        buf = buf[3:]
    return buf, name


_BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark


def _read_file(f, name: str, progress: Callable | None) -> np.ndarray:
    """The bytes of an open binary file: a regular file straight into one
    array (no copy), anything else (a pipe) read to its end."""
    size = os.fstat(f.fileno()).st_size
    if not size:  # a pipe, /dev/stdin, or an empty file
        data = f.read()
        if progress is not None and data:
            progress(name, len(data), len(data))
        buf = _allocate(len(data))
        buf[:] = np.frombuffer(data, dtype=np.uint8)
        return buf
    buf = _allocate(size)
    view, done = memoryview(buf), 0
    while done < size and (got := f.readinto(view[done:min(done + _CHUNK, size)])):
        done += got
        if progress is not None:
            progress(name, done, size)
    return buf[:done]


def _gunzip(buf: np.ndarray, name: str) -> np.ndarray:
    """The decompressed content of a gzip file, or a one-line error."""
    import zlib

    try:
        data = gzip.decompress(buf)
    except EOFError:
        reason = "it ends before the end of its compressed data (truncated)"
    except (gzip.BadGzipFile, zlib.error) as error:
        reason = f"{error}"
    else:
        return np.frombuffer(data, dtype=np.uint8)
    raise ValueError(f"{name}: cannot decompress this gzip file: {reason}; the file is "
                     "damaged or incomplete (compare it with its source).")


def _allocate(size: int) -> np.ndarray:
    """An uninitialised uint8 array, in memory of Arrow's pool when pyarrow
    may parse it (see :func:`._arrow._arrow_buffer`)."""
    if _ARROW:
        try:
            import pyarrow as pa
        except ImportError:
            pass
        else:
            return np.frombuffer(pa.allocate_buffer(size), dtype=np.uint8)
    return np.empty(size, dtype=np.uint8)


def _arrow_fields(buf: np.ndarray, name: str, n_fields: int, strings: tuple[int, ...],
                  number: int, integer: bool = False) -> _ArrowFields | None:
    """pyarrow's parse of ``buf`` (see :meth:`_ArrowFields.parse`), or None
    when it is switched off (``_ARROW``), not installed or cannot parse."""
    return _ArrowFields.parse(buf, name, n_fields, strings, number, integer) if _ARROW else None


def _read(path_or_buffer, progress: Callable | None, n_fields: int, what: str,
          strings: tuple[int, ...], number: int, build: Callable[[_Parsed], _Table], *,
          integer: bool = False, extra: bool = False):
    """Parse a file and ``build`` its table: from pyarrow's parse when pyarrow
    is installed and the text is plain, else from :class:`_Fields` (which
    also writes every error message, with its line). ``integer``: the number
    field holds integers; ``extra``: fields after the first ``n_fields`` are
    ignored."""
    buf, name = _read_buffer(path_or_buffer, progress)
    fields = _arrow_fields(buf, name, n_fields, strings, number, integer)
    if fields is not None:
        with _in_background(fields.plain) as plain:
            try:
                table = build(fields)
            except ValueError:
                table = None
            if plain() and table is not None:
                return table
    return build(_Fields(buf, name, n_fields, what, extra=extra))


def _check_duplicates(fields: _Parsed, table: _Table, what: str):
    """Error naming the first document listed twice for a query."""
    key = table._key
    sorted_keys = np.sort(key)
    if not (sorted_keys[1:] == sorted_keys[:-1]).any():
        return
    qid, docno = table._qid, table._docno
    order = np.argsort(key, kind="stable")
    candidates = np.flatnonzero(key[order][1:] == key[order][:-1])
    i, j = order[candidates], order[candidates + 1]
    same = qid.equal(i, qid, j) & docno.equal(i, docno, j)  # equal hashes: verify the ids
    if same.any():
        i, j = int(i[np.argmax(same)]), int(j[np.argmax(same)])
        first, second = sorted((int(fields.lines[i]), int(fields.lines[j])))
        raise ValueError(
            f"{fields.name}: document {docno.item(i).decode(errors='replace')!r} appears "
            f"twice for query {qid.item(i).decode(errors='replace')!r} (lines {first} and "
            f"{second}); each {what} lists a document once per query."
        )


def read_qrels(path_or_buffer, *, progress: Callable | None = None) -> Qrels:
    """Read TREC relevance judgments: lines ``qid iter docno rel``.

    Parameters
    ----------
    path_or_buffer : str, path-like or file-like
        A qrels file (plain or gzip, detected by its magic bytes; a pipe is
        read to its end) or an open text/binary buffer. Blank lines and lines
        starting with ``#`` are skipped; fields are separated by whitespace
        (C's: space, tab, newline, CR, vertical tab, form feed, as in
        trec_eval; other bytes belong to their field).
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
        that is not an integer (see Notes), a document judged twice for a
        query, a NUL byte or a carriage return inside a line; naming the file
        for a truncated or corrupt gzip file.
    OSError
        When the file cannot be opened (missing, a directory, ...).

    Notes
    -----
    trec_eval's rules: levels are integers (trec_eval reads them with C's
    ``atol``, which reads ``1.5`` as 1 and ``2e1`` as 2, silently); a level
    is accepted when it is the integer ``atol`` reads (``2``, ``+2``, ``-1``,
    ``2.0``), and any other is an error. A UTF-8 byte-order mark at the start
    of the file is dropped; trec_eval keeps it as part of the first query id,
    which then differs from the same query's other lines and from the run's
    id (one query silently becomes two, or trec_eval stops).

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
    return _read(path_or_buffer, progress, 4, "qid iter docno rel", (0, 2), 3, _build_qrels,
                 integer=True)


def read_run(path_or_buffer, *, progress: Callable | None = None) -> Run:
    """Read a TREC run: lines ``qid Q0 docno rank score tag``.

    Parameters
    ----------
    path_or_buffer : str, path-like or file-like
        A run file (plain or gzip, detected by its magic bytes) or an open
        buffer. Blank lines and lines starting with ``#`` are skipped; text
        after the sixth field of a line is ignored, as by trec_eval.
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
        Naming the file and line for a line with fewer than 6 fields, a score
        that is not a finite number (as C's ``atof`` reads it whole: ``1_0``,
        which Python reads as 10, is an error), a document retrieved twice for
        a query, a NUL byte or a carriage return inside a line; naming the
        file for a truncated or corrupt gzip file.
    OSError
        When the file cannot be opened (missing, a directory, ...).

    Notes
    -----
    As :func:`read_qrels`: a leading UTF-8 byte-order mark is dropped, and
    plain files are parsed by pyarrow's CSV reader when pyarrow is installed
    (the ``fast`` extra), others by NumPy, with the same result. Memory
    stays proportional to the bytes of the ids, however long some are.

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_run
    >>> read_run(io.StringIO("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"))
    Run('bm25', 2 documents, 1 queries)
    """
    return _read(path_or_buffer, progress, 6, "qid Q0 docno rank score tag", (0, 2), 4,
                 _build_run, extra=True)


def _build_qrels(fields: _Parsed) -> Qrels:
    if not len(fields):
        raise ValueError(f"{fields.name}: the qrels file has no judgments.")
    qrels = Qrels(fields.column(0), fields.column(2),
                  fields.numbers(3, "relevance level", integer=True))
    _check_duplicates(fields, qrels, "qrels file")
    return qrels


def _build_run(fields: _Parsed) -> Run:
    if not len(fields):
        raise ValueError(f"{fields.name}: the run has no lines.")
    run = Run(fields.column(0), fields.column(2), fields.numbers(4, "score"),
              fields.last(5).decode(errors="replace"))
    _check_duplicates(fields, run, "run")
    return run
