"""Reading TREC qrels and run files fast, with errors that name the line.

Two readers build the same tables (:mod:`~sklearn_rank.trec._tables`) from the same bytes:
pyarrow's CSV parser (:mod:`~sklearn_rank.trec._arrow`), used when pyarrow is
installed and a file has the plain layout (single spaces, a newline after
every line, no blank or comment line), and a vectorised NumPy reader
(:mod:`~sklearn_rank.trec._fields`) for everything else, which also writes every error
message; the ``engine`` argument of :func:`read_qrels` and :func:`read_run`
chooses. Both see the file without its gzip layer and without a leading
UTF-8 byte-order mark.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .._utils.validation import HasMethods, StrOptions, validate_params
from ._arrow import ArrowFields, in_background, reader_pool
from ._column import ID_ERRORS
from ._fields import Fields, ParsedFields
from ._tables import DuplicateError, Qrels, Run, Table

__all__ = ["read_qrels", "read_run"]

_CHUNK = 1 << 23  # bytes read at a time (progress is reported per chunk)
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark
ENGINES = ("auto", "numpy", "pyarrow")  # the readers read_qrels / read_run can use


class Layout(NamedTuple):
    """The fields of the lines of a TREC file."""

    what: str  # their names, for messages ("qid iter docno rel")
    number: int  # the field holding the number (relevance level or score)
    integer: bool = False  # whether that number is an integer (a level)
    extra: bool = False  # whether fields after the named ones are allowed (and ignored)
    strings: tuple[int, ...] = (0, 2)  # the id fields (qid, docno)

    @property
    def n_fields(self) -> int:
        return len(self.what.split())


_QRELS = Layout("qid iter docno rel", 3, integer=True)
_RUN = Layout("qid Q0 docno rank score tag", 4, extra=True)


def _use_arrow(engine: str) -> bool:
    """Whether ``engine`` asks for pyarrow's parser (on plain files) and
    pyarrow is installed; for ``"pyarrow"``, an ImportError when it is not."""
    if engine == "numpy":
        return False
    try:
        from pyarrow import csv  # noqa: F401
    except ImportError:
        if engine == "pyarrow":
            raise ImportError(
                'engine="pyarrow" needs pyarrow: pip install "sklearn-rank[fast]" (or pass '
                'engine="auto", which uses pyarrow when it is installed and NumPy otherwise).'
            ) from None
        return False
    return True


def _read_buffer(path_or_buffer, progress: Callable | None,
                 arrow: bool = True) -> tuple[np.ndarray, str]:
    """The whole content (gunzipped, without a leading UTF-8 byte-order mark)
    as a uint8 array, and a name for messages; a file's bytes in memory of
    Arrow's pool when ``arrow`` (see :func:`~sklearn_rank.trec._arrow._arrow_buffer`)."""
    if hasattr(path_or_buffer, "read"):
        data = path_or_buffer.read()
        name = str(getattr(path_or_buffer, "name", "<buffer>"))
        buf = np.frombuffer(data.encode() if isinstance(data, str) else data, dtype=np.uint8)
    else:
        name = os.fspath(path_or_buffer)
        name = name.decode(errors="replace") if isinstance(name, bytes) else name
        with open(path_or_buffer, "rb") as f:
            buf = _read_file(f, name, progress, arrow)
    if buf.shape[0] > 1 and buf[0] == 0x1F and buf[1] == 0x8B:
        buf = _gunzip(buf, name)
    if buf.shape[0] >= 3 and buf[:3].tobytes() == _BOM:
        buf = buf[3:]
    return buf, name


def _read_file(f, name: str, progress: Callable | None, arrow: bool) -> np.ndarray:
    """The bytes of an open binary file: a regular file straight into one
    array (no copy), anything else (a pipe) read to its end."""
    size = os.fstat(f.fileno()).st_size
    if not size:  # a pipe, /dev/stdin, or an empty file
        data = f.read()
        if progress is not None and data:
            progress(name, len(data), len(data))
        buf = _allocate(len(data), arrow)
        buf[:] = np.frombuffer(data, dtype=np.uint8)
        return buf
    buf = _allocate(size, arrow)
    view, done = memoryview(buf), 0
    while done < size and (got := f.readinto(view[done:min(done + _CHUNK, size)])):
        done += got
        if progress is not None:
            progress(name, done, size)
    return buf[:done]


def _gunzip(buf: np.ndarray, name: str) -> np.ndarray:
    """The decompressed content of a gzip file, or a one-line error."""
    import gzip  # (here: a plain file's command line does not import it)
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


def _allocate(size: int, arrow: bool = True) -> np.ndarray:
    """An uninitialised uint8 array, in memory of Arrow's pool when pyarrow
    may parse it (``arrow``, and pyarrow is installed: see
    :func:`~sklearn_rank.trec._arrow._arrow_buffer`)."""
    if arrow:
        try:
            import pyarrow as pa
        except ImportError:
            pass
        else:
            buffer = pa.allocate_buffer(size, memory_pool=reader_pool(pa))
            return np.frombuffer(buffer, dtype=np.uint8)
    return np.empty(size, dtype=np.uint8)


def read_table(path_or_buffer, progress: Callable | None, engine: str, layout: Layout,
          build: Callable[[ParsedFields], Table]):
    """Parse a file and ``build`` its table: from pyarrow's parse when the
    engine allows it, pyarrow is installed and the text is plain, else from
    :class:`Fields` (which also writes every error message, with its line)."""
    arrow = _use_arrow(engine)
    buf, name = _read_buffer(path_or_buffer, progress, arrow)
    fields = ArrowFields.parse(buf, name, layout.n_fields, layout.strings, layout.number,
                                layout.integer) if arrow else None
    if fields is not None:
        with in_background(fields.plain) as plain:
            try:
                table = build(fields)
            except ValueError:
                table = None
            if plain() and table is not None:
                return table
    fields = Fields(buf, name, layout.n_fields, layout.what, extra=layout.extra)
    del buf  # (build releases the text once it has the columns)
    return build(fields)


def _table(fields: ParsedFields, make: Callable[[], Table], what: str) -> Table:
    """``make()``, a document listed twice (:class:`DuplicateError`) told by
    the file's lines: when one of them has more fields than the layout
    names, that is said first, since a field too many before the sixth
    (which trec_eval reads as the last) shifts the document id."""
    try:
        return make()
    except DuplicateError as error:
        lines = [fields.line(i) for i in error.rows]
        wide = [(line, n) for i, line in zip(error.rows, lines, strict=True)
                if (n := fields.n_fields_at(i)) is not None]
        if not wide:
            raise ValueError(error.described(f"lines {lines[0]} and {lines[1]}", what,
                                             fields.name)) from None
        line, n = wide[0]  # (only a run's lines may have more: _RUN.extra)
        raise ValueError(
            f"{fields.name}: line {line} has {n} fields, where a run line has "
            f"{_RUN.n_fields} ({_RUN.what}); the fields after the sixth are ignored, as "
            f"trec_eval ignores them, so its document id is its third field, "
            f"{error.docno!r}, which then appears twice for query {error.qid!r} (lines "
            f"{lines[0]} and {lines[1]}): is there a field too many among the first six?"
        ) from None


@validate_params({
    "path_or_buffer": [str, bytes, os.PathLike, HasMethods(("read",))],
    "progress": [callable, None],
    "engine": [StrOptions(set(ENGINES))],
})
def read_qrels(path_or_buffer, *, progress: Callable | None = None,
               engine: str = "auto") -> Qrels:
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
    engine : {"auto", "numpy", "pyarrow"}, default="auto"
        The parser. ``"auto"``: pyarrow's CSV reader for a
        file in the plain layout (see Notes) when pyarrow is installed (the
        ``fast`` extra), the NumPy reader otherwise. ``"numpy"``: the NumPy
        reader only. ``"pyarrow"``: as ``"auto"``, but an ``ImportError``
        when pyarrow is missing; a file that is not in the plain layout (or
        that pyarrow cannot parse) is still read, by the NumPy reader, since
        both readers give the same table for the same bytes.

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
    ImportError
        With ``engine="pyarrow"`` when pyarrow is not installed.

    Notes
    -----
    trec_eval's rules: levels are integers (trec_eval reads them with C's
    ``atol``, which reads ``1.5`` as 1 and ``2e1`` as 2, silently); a level
    is accepted when it is the integer ``atol`` reads (``2``, ``+2``, ``-1``,
    ``2.0``), and any other is an error. A UTF-8 byte-order mark at the start
    of the file is dropped; trec_eval keeps it as part of the first query id,
    which then differs from the same query's other lines and from the run's
    id (one query silently becomes two, or trec_eval stops).

    With pyarrow installed (``pip install "sklearn-rank[fast]"``) and
    ``engine`` ``"auto"`` or ``"pyarrow"``, a file in the plain layout
    (fields separated by single spaces, a newline after every line, no blank
    or comment line) is parsed by pyarrow's CSV reader, faster once pyarrow
    is imported (the layout is checked on a second thread while the table is
    built); any other file, and every error, goes through the NumPy reader.
    Both give the same table. The NumPy reader works in blocks on up to
    ``SKLEARN_RANK_NUM_THREADS`` threads (else ``OMP_THREAD_LIMIT`` or
    ``OMP_NUM_THREADS``, else the usable cores, at most 4), with the same
    table and the same errors whatever the number; a call from a thread other
    than the main one runs on that thread alone.

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_qrels
    >>> read_qrels(io.StringIO("q1 0 d1 2\\nq1 0 d2 0\\n# a comment\\nq2 0 d1 1\\n"))
    Qrels(3 judgments, 2 queries, 2 with level > 0)
    """
    return read_table(path_or_buffer, progress, engine, _QRELS, _build_qrels)


@validate_params({
    "path_or_buffer": [str, bytes, os.PathLike, HasMethods(("read",))],
    "progress": [callable, None],
    "engine": [StrOptions(set(ENGINES))],
})
def read_run(path_or_buffer, *, progress: Callable | None = None,
             engine: str = "auto") -> Run:
    """Read a TREC run: lines ``qid Q0 docno rank score tag``.

    Parameters
    ----------
    path_or_buffer : str, path-like or file-like
        A run file (plain or gzip, detected by its magic bytes) or an open
        buffer. Blank lines and lines starting with ``#`` are skipped; text
        after the sixth field of a line is ignored, as by trec_eval.
    progress : callable, default=None
        Called as ``progress(name, bytes_read, total_bytes)`` while reading.
    engine : {"auto", "numpy", "pyarrow"}, default="auto"
        The parser. ``"auto"``: pyarrow's CSV reader for a
        file in the plain layout (see Notes) when pyarrow is installed (the
        ``fast`` extra), the NumPy reader otherwise. ``"numpy"``: the NumPy
        reader only. ``"pyarrow"``: as ``"auto"``, but an ``ImportError``
        when pyarrow is missing; a file that is not in the plain layout (or
        that pyarrow cannot parse) is still read, by the NumPy reader, since
        both readers give the same table for the same bytes.

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
    ImportError
        With ``engine="pyarrow"`` when pyarrow is not installed.

    Notes
    -----
    As :func:`read_qrels`: a leading UTF-8 byte-order mark is dropped, and
    plain files are parsed by pyarrow's CSV reader when pyarrow is installed
    (the ``fast`` extra) and ``engine`` allows it, others by NumPy, with the
    same result. Memory stays proportional to the bytes of the ids, however
    long some are.

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_run
    >>> read_run(io.StringIO("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"))
    Run('bm25', 2 documents, 1 queries)
    """
    return read_table(path_or_buffer, progress, engine, _RUN, _build_run)


def _build_qrels(fields: ParsedFields) -> Qrels:
    if not len(fields):
        raise ValueError(f"{fields.name}: the qrels file has no judgments.")
    (qid, docno), level = fields.ids_and_numbers((0, 2), 3, "relevance level", integer=True)
    fields.release()
    return _table(fields, lambda: Qrels(qid, docno, level), "qrels file")


def _build_run(fields: ParsedFields) -> Run:
    if not len(fields):
        raise ValueError(f"{fields.name}: the run has no lines.")
    (qid, docno), score = fields.ids_and_numbers((0, 2), 4, "score")
    tag = fields.last(5).decode("utf-8", ID_ERRORS)
    fields.release()
    return _table(fields, lambda: Run(qid, docno, score, tag), "run")
