"""The TREC tables: relevance judgments (:class:`Qrels`) and runs (:class:`Run`).

Rows of (qid, docno, value). Ids are kept as columns of bytes
(:class:`~sklearn_rank.trec._column.IdColumn`, memory proportional to their bytes); the
readers (:mod:`~sklearn_rank.trec._io`) and the evaluation (:mod:`~sklearn_rank.trec._join`,
:mod:`~sklearn_rank.trec._evaluate`)
work on them through the public methods below.

Ids are kept exactly. As text (the ``qid`` and ``docno`` attributes, an
evaluation's ``qids``), bytes that are not UTF-8 are decoded as Python
decodes file names (``surrogateescape``: the byte ``0xff`` is the lone
surrogate ``"\\udcff"``), so that different ids stay different and
``text.encode("utf-8", "surrogateescape")`` gives the bytes back; str ids
given to a table are encoded the same way.

A table lists each (qid, docno) pair once, whatever its source (a file, a
DataFrame, a dict, the constructor): a pair listed twice is a
:class:`DuplicateError` naming both rows, as trec_eval refuses a document
judged twice, and a run that retrieves one twice would count it twice.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .._utils.hashing import has_equal, mix, pair_key
from .._utils.runs import runs_at as _runs_at
from ._column import ID_ERRORS, IdColumn
from ._frames import frame_columns

__all__ = ["Qrels", "Run"]


class DuplicateError(ValueError):
    """A (qid, docno) pair listed twice in a table: ``rows`` are the two rows
    (counted from 0, in increasing order), ``qid`` and ``docno`` the ids."""

    def __init__(self, table: Table, rows: tuple[int, int]):
        self.rows = tuple(sorted(rows))
        self.qid, self.docno = table.row_ids(self.rows[0])
        self.kind = type(table).__name__
        super().__init__(self.described(f"rows {self.rows[0]} and {self.rows[1]}, counted from 0",
                                        "qrels table" if self.kind == "Qrels" else "run"))

    def described(self, where: str, each: str, prefix: str = "") -> str:
        """The message with ``where`` the two rows are (``"lines 3 and 7"``)
        and what ``each`` lists a document once per query."""
        head = f"{prefix}: " if prefix else f"{self.kind}: "
        return (f"{head}document {self.docno!r} appears twice for query {self.qid!r} "
                f"({where}); each {each} lists a document once per query.")


def _from_frame(cls, frame, **kwargs):
    """A :class:`Qrels` or :class:`Run` (``cls``) from a DataFrame in one of the
    two layouts; ``kwargs`` go to the table (a run's ``name``)."""
    try:
        return cls(*frame_columns(frame, cls.__name__), **kwargs)
    except DuplicateError as error:  # (the rules of a file, rows for its lines)
        what = "qrels" if cls.__name__ == "Qrels" else "run"
        raise ValueError(error.described(f"rows {error.rows[0]} and {error.rows[1]}, "
                                         "counted from 0", f"{what} DataFrame",
                                         f"The {what} DataFrame")) from None


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8", ID_ERRORS)
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} {text!r} holds the lone surrogate "
            f"U+{ord(text[error.start]):04X}, which is no UTF-8 text and no byte of a file "
            "(only U+DC80..U+DCFF stand for bytes, as Python decodes file names); give "
            "the id as bytes or as valid text.") from None


def as_column(ids, what: str) -> IdColumn:
    """Ids (a column, or array-like of str, bytes or numbers) as bytes (str
    encoded as UTF-8, ``surrogateescape``: see the module's doc)."""
    if isinstance(ids, IdColumn):
        return ids
    if not isinstance(ids, list):
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"{what} must be a 1-D array; got shape {ids.shape}.")
        if ids.dtype.kind == "U":
            ids = _encoded(ids, what)
        elif ids.dtype.kind != "S":
            ids = ids.tolist()
    if isinstance(ids, list):
        strings = [s if isinstance(s, bytes) else _utf8(str(s), what) for s in ids]
        column = IdColumn.from_strings(strings)
        has_nul = bool(np.count_nonzero(column.buf[:column.buf.shape[0] - 8] == 0))
    else:
        column = IdColumn.from_fixed(ids)
        has_nul = column.has_inner_nul
    if has_nul:
        raise ValueError(f"{what} ids must not contain NUL characters (trec_eval cuts an id "
                         "at its first NUL, which would merge different ids).")
    return column


def _encoded(ids: np.ndarray, what: str) -> np.ndarray:
    """A ``'U'`` array as a ``'S'`` array of UTF-8 bytes."""
    try:
        return ids.astype(bytes)  # ASCII: the fast, common case
    except UnicodeEncodeError:
        pass
    try:
        return np.char.encode(ids, "utf-8", ID_ERRORS)
    except UnicodeEncodeError:
        for text in ids.tolist():  # (the message names the first)
            _utf8(text, what)
        raise


class Table:
    """Rows of (qid, docno, value) with ids kept as bytes internally."""

    _value_name = "value"
    _unique = True  # each (qid, docno) pair once (see the module's doc)

    def __init__(self, qid, docno, values):
        self._qid = as_column(qid, "qid")
        self._docno = as_column(docno, "docno")
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
        if self._unique and (pair := self.duplicate()) is not None:
            raise DuplicateError(self, pair)

    def _check_values(self, values: np.ndarray):
        if not np.isfinite(values).all():
            self._refuse(values, ~np.isfinite(values), "is not a finite number")

    def _refuse(self, values: np.ndarray, bad: np.ndarray, problem: str):
        i, n = int(np.argmax(bad)), int(bad.sum())
        qid, docno = self.row_ids(i)
        raise ValueError(
            f"{type(self).__name__}: {self._value_name} {float(values[i])!r} of document "
            f"{docno!r} for query {qid!r} {problem} ({n} row{'s' if n > 1 else ''} in all)."
        )

    def __len__(self) -> int:
        return len(self._qid)

    @cached_property
    def qid(self) -> np.ndarray:
        """Query ids (str), as in the file (bytes that are not UTF-8 as
        ``surrogateescape`` decodes them)."""
        return self._qid.texts()

    @cached_property
    def docno(self) -> np.ndarray:
        """Document ids (str), as :attr:`qid`."""
        return self._docno.texts()

    # -- for the readers and the evaluation (public, not in __all__) ------------

    @property
    def qid_bytes(self) -> IdColumn:
        """The query ids as a column of UTF-8 bytes."""
        return self._qid

    @property
    def docno_bytes(self) -> IdColumn:
        """The document ids as a column of UTF-8 bytes."""
        return self._docno

    @cached_property
    def query_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Starts and lengths of the runs of consecutive rows with equal qids."""
        return _runs_at(self._qid.changes(), len(self))

    @property
    def keys(self) -> np.ndarray:
        """A 64-bit hash of each (qid, docno) pair: equal pairs, equal keys
        (:func:`sklearn_rank._utils.hashing.pair_key`; its high bits are well mixed)."""
        return self._key

    @cached_property
    def _key(self) -> np.ndarray:
        starts, lengths = self.query_runs  # each query's rows are mostly adjacent
        docno = self._docno.hash()
        return pair_key(np.repeat(mix(self._qid.hash(starts)), lengths), docno, out=docno)

    def row_ids(self, i: int) -> tuple[str, str]:
        """The query and document ids of row ``i`` as :attr:`qid` gives them."""
        return (self._qid.item(i).decode("utf-8", ID_ERRORS),
                self._docno.item(i).decode("utf-8", ID_ERRORS))

    def duplicate(self) -> tuple[int, int] | None:
        """The first two rows (in hash order) holding the same (qid, docno),
        or None when every pair is listed once."""
        key = self.keys
        if not has_equal(key):
            return None
        order = np.argsort(key, kind="stable")
        candidates = np.flatnonzero(key[order][1:] == key[order][:-1])
        i, j = order[candidates], order[candidates + 1]
        # equal hashes: verify the ids
        same = self._qid.equal(i, self._qid, j) & self._docno.equal(i, self._docno, j)
        if not same.any():
            return None
        return int(i[np.argmax(same)]), int(j[np.argmax(same)])

    def n_queries(self) -> int:
        """The number of distinct query ids."""
        starts = self.query_runs[0]
        if self._qid.compact:
            return np.unique(self._qid.fixed(starts)).shape[0]
        return len(set(self._qid.items(starts)))

    @classmethod
    def _from_dict(cls, nested: dict, what: str, **kwargs):
        """The table of ``{qid: {docno: value}}``; keys are ids as ``str()``
        gives them, so two keys that read the same (``1`` and ``"1"``) are
        one id, and a pair they make twice is an error naming the keys."""
        try:
            return cls(*cls._from_nested(nested, what), **kwargs)
        except DuplicateError as error:
            shown = " and ".join(f"[{q!r}][{d!r}]" for q, d in _key_pairs(nested, error.rows))
            raise ValueError(
                f"The {what} dict lists document {error.docno!r} twice for query "
                f"{error.qid!r}: the entries {shown} are the same ids as text (ids are "
                "text, as in a TREC file: keys are read with str()); give each query and "
                "document one key.") from None

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


def _key_pairs(nested: dict, rows: tuple[int, ...]) -> list[tuple]:
    """The (query key, document key) of each of ``rows`` (counted from 0 in
    the order :meth:`Table._from_nested` lays the entries out)."""
    wanted, found, at = set(rows), {}, 0
    for q, docs in nested.items():
        if any(at <= r < at + len(docs) for r in wanted):
            for r, d in enumerate(docs, start=at):
                if r in wanted:
                    found[r] = (q, d)
        at += len(docs)
    return [found[r] for r in rows]


class Qrels(Table):
    """Relevance judgments: one row per judged (query, document) pair.

    Parameters
    ----------
    qid, docno : array-like of str or bytes
        Query and document ids; each (qid, docno) pair once (twice is a
        ``ValueError`` naming both rows).
    rel : array-like of int
        Relevance levels: whole numbers (``2`` or ``2.0``; ``1.5`` is a
        ``ValueError``, as trec_eval reads levels as integers and would
        silently truncate it). trec_eval reads a negative level as "in the
        pool but not judged": such documents are neither relevant nor judged
        non-relevant.

    Attributes
    ----------
    qid, docno : ndarray of str
        Exactly the ids: bytes that are not UTF-8 as ``surrogateescape``
        decodes them (``"\\udcff"`` for ``0xff``). Object arrays when the ids
        differ greatly in length (a few very long ones), so that memory stays
        proportional to their bytes.
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
        return (f"Qrels({len(self)} judgments, {self.n_queries()} queries, "
                f"{int((self.rel > 0).sum())} with level > 0)")

    @classmethod
    def from_dict(cls, judgments: dict) -> Qrels:
        """From ``{qid: {docno: level}}`` (pytrec_eval's and ranx's layout)."""
        return cls._from_dict(judgments, "qrels")

    @classmethod
    def from_frame(cls, frame) -> Qrels:
        """From a pandas or polars DataFrame with the columns ``qid, docno,
        label`` (PyTerrier's layout) or ``query_id, doc_id, relevance``
        (ir_measures').

        Other columns are ignored. Ids are text, as in a qrels file: string
        columns are taken as they are, integer columns as their decimal
        strings (``301`` is the query ``"301"``); float, boolean or missing
        ids are an error (read files with the ids as strings: pandas
        ``dtype=str`` keeps ``"001"``, which an integer column would make
        ``"1"``). A frame with the id columns of both layouts or of neither
        is an error naming the columns it needs.

        Examples
        --------
        >>> import pandas as pd
        >>> from sklearn_rank.trec import Qrels, evaluate_run
        >>> qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d1"],
        ...                       "label": [2, 0, 1]})
        >>> Qrels.from_frame(qrels)
        Qrels(3 judgments, 2 queries, 2 with level > 0)
        >>> run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d2", "d1", "d1"],
        ...                     "score": [0.9, 0.8, 0.5]})       # ir_measures' layout
        >>> evaluate_run(qrels, run, ["recip_rank"]).per_query["recip_rank"]
        array([0.5, 1. ])
        """
        return _from_frame(cls, frame)


class Run(Table):
    """A ranked run: one row per retrieved (query, document) pair.

    Parameters
    ----------
    qid, docno : array-like of str or bytes
        Query and document ids; each (qid, docno) pair once (twice is a
        ``ValueError`` naming both rows).
    score : array-like of float
        Retrieval scores, finite (trec_eval ranks by decreasing score, ties
        by decreasing document id; the rank column of a run file is ignored).
    name : str, default="run"
        The run tag.

    Attributes
    ----------
    qid, docno : ndarray of str
        Exactly the ids: bytes that are not UTF-8 as ``surrogateescape``
        decodes them (``"\\udcff"`` for ``0xff``). Object arrays when the ids
        differ greatly in length (a few very long ones), so that memory stays
        proportional to their bytes.
    score : ndarray of float
    name : str
    """

    _value_name = "score"

    def __init__(self, qid, docno, score, name: str = "run"):
        super().__init__(qid, docno, score)
        self.name = name

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} documents, {self.n_queries()} queries)"

    @classmethod
    def from_dict(cls, scores: dict, name: str = "run") -> Run:
        """From ``{qid: {docno: score}}`` (pytrec_eval's and ranx's layout)."""
        return cls._from_dict(scores, "run", name=name)

    @classmethod
    def from_frame(cls, frame, name: str = "run") -> Run:
        """From a pandas or polars DataFrame with the columns ``qid, docno,
        score`` (PyTerrier's layout: a transformer's results) or ``query_id,
        doc_id, score`` (ir_measures').

        Other columns are ignored: a ``rank`` column too, as trec_eval ranks by
        score. Ids follow :meth:`Qrels.from_frame`'s rules.
        """
        return _from_frame(cls, frame, name=name)
