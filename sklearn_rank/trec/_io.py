"""Reading TREC qrels and run files fast, with errors that name the line."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from functools import cached_property

import numpy as np

from .._hashing import combine, hash64

__all__ = ["Qrels", "Run", "read_qrels", "read_run"]

_CHUNK = 1 << 23  # bytes read at a time (progress is reported per chunk)


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
        self.docno_bytes = _as_bytes(docno)
        values = np.asarray(values, dtype=np.float64)
        shapes = (self.qid_bytes.shape, self.docno_bytes.shape, values.shape)
        if values.ndim != 1 or len(set(shapes)) != 1:
            raise ValueError(
                f"qid, docno and {self._value_name} must be 1-D arrays of the same length; got "
                f"shapes {shapes[0]}, {shapes[1]} and {shapes[2]}."
            )
        setattr(self, self._value_name, values)

    def __len__(self) -> int:
        return self.qid_bytes.shape[0]

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
        return combine(hash64(self.qid_bytes), hash64(self.docno_bytes))

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


def _read_bytes(path_or_buffer, progress: Callable | None) -> tuple[bytes, str]:
    """The whole content (gunzipped) and a name for messages."""
    if hasattr(path_or_buffer, "read"):
        data = path_or_buffer.read()
        name = getattr(path_or_buffer, "name", "<buffer>")
        if isinstance(data, str):
            data = data.encode()
    else:
        name = os.fspath(path_or_buffer)
        size = os.path.getsize(name)
        chunks, done = [], 0
        with open(name, "rb") as f:
            while chunk := f.read(_CHUNK):
                chunks.append(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(name, done, size)
        data = b"".join(chunks)
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data, str(name)


class _Fields:
    """Whitespace-separated fields of a text buffer, as byte spans (vectorised).

    Blank lines and lines starting with ``#`` are skipped; every other line
    must have exactly ``n_fields`` fields.
    """

    def __init__(self, data: bytes, name: str, n_fields: int, what: str):
        self.name = name
        numbers = None
        if b"#" in data:  # drop comment lines (rare: the fast path serves the rest)
            lines = data.split(b"\n")
            keep = [i for i, line in enumerate(lines) if not line.lstrip().startswith(b"#")]
            data = b"\n".join(lines[i] for i in keep)
            numbers = np.asarray(keep) + 1
        self.buf = buf = np.frombuffer(data, dtype=np.uint8)
        seps = np.flatnonzero(buf <= 32)  # space, tab, newline, CR, ...
        starts = np.empty(seps.shape[0] + 1, dtype=np.int64)
        starts[0] = 0
        starts[1:] = seps + 1
        ends = np.empty_like(starts)
        ends[:-1] = seps
        ends[-1] = buf.shape[0]
        newline = np.zeros(starts.shape[0], dtype=bool)
        newline[1:] = buf[seps] == 10
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
        self.lines = numbers[data_lines]
        self.starts = starts.reshape(-1, n_fields)
        self.ends = ends.reshape(-1, n_fields)

    def __len__(self) -> int:
        return self.starts.shape[0]

    def raw(self, j: int) -> np.ndarray:
        """Field j of every line as a fixed-width bytes array."""
        start = self.starts[:, j]
        length = self.ends[:, j] - start
        width = int(length.max()) if length.shape[0] else 1
        out = np.take(self.buf, start[:, None] + np.arange(width), mode="clip")
        out[np.arange(width) >= length[:, None]] = 0
        return out.view(f"S{width}").ravel()

    def numbers(self, j: int, what: str) -> np.ndarray:
        raw = self.raw(j)
        try:
            values = raw.astype(np.float64)
        except ValueError:
            values = None
        if values is None or not np.isfinite(values).all():
            for i, token in enumerate(raw.tolist()):
                try:
                    ok = bool(np.isfinite(float(token)))
                except ValueError:
                    ok = False
                if not ok:
                    raise ValueError(
                        f"{self.name}: line {int(self.lines[i])}: {what} "
                        f"{token.decode(errors='replace')!r} is not a finite number."
                    ) from None
        return values


def _check_duplicates(fields: _Fields, table: _Table, what: str):
    """Error naming the first document listed twice for a query."""
    qid, docno = table.qid_bytes, table.docno_bytes
    key = table._key
    sorted_keys = np.sort(key)
    if not (sorted_keys[1:] == sorted_keys[:-1]).any():
        return
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

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_qrels
    >>> read_qrels(io.StringIO("q1 0 d1 2\\nq1 0 d2 0\\n# a comment\\nq2 0 d1 1\\n"))
    Qrels(3 judgments, 2 queries, 2 with level > 0)
    """
    data, name = _read_bytes(path_or_buffer, progress)
    fields = _Fields(data, name, 4, "qid iter docno rel")
    if not len(fields):
        raise ValueError(f"{name}: the qrels file has no judgments.")
    qrels = Qrels(fields.raw(0), fields.raw(2), fields.numbers(3, "relevance level"))
    _check_duplicates(fields, qrels, "qrels file")
    return qrels


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

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_run
    >>> read_run(io.StringIO("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"))
    Run('bm25', 2 documents, 1 queries)
    """
    data, name = _read_bytes(path_or_buffer, progress)
    fields = _Fields(data, name, 6, "qid Q0 docno rank score tag")
    if not len(fields):
        raise ValueError(f"{name}: the run has no lines.")
    run = Run(fields.raw(0), fields.raw(2), fields.numbers(4, "score"),
              fields.raw(5)[-1].decode(errors="replace"))
    _check_duplicates(fields, run, "run")
    return run
