"""Relevance judgments per subtopic, for the diversity measures
(:mod:`~sklearn_rank.trec._diversity`).

A diversity qrels file (the TREC Web track's, read by ``ndeval``) has the
usual four fields ``qid iter docno rel``, the second being the subtopic
(intent) the document is judged on; a document judged on several subtopics
has several lines. :class:`Qrels` keeps one judgment per document and
:func:`read_qrels` refuses a document listed twice, so the subtopics are read
by a reader of their own, only when a diversity measure is asked for: the
ordinary reading path stays as fast and as small as it is.

Subtopic ids are kept as integer codes in order of first appearance in the
file (ndeval's and pyndeval's numbering: the order in which it adds up a
document's subtopic gains).
"""

from __future__ import annotations

import os

import numpy as np

from .._utils.validation import HasMethods, StrOptions, validate_params
from ._frames import frame_ids, frame_values, is_frame
from ._io import ENGINES, Layout, read_table
from ._tables import Qrels, as_column

__all__ = ["SubtopicQrels", "read_subtopic_qrels"]

_SUBTOPIC_QRELS = Layout("qid iter docno rel", 3, integer=True, strings=(0, 1, 2))
#: DataFrame layouts: (qid, subtopic, docno, level) columns
_FRAME_LAYOUTS = (("query_id", "iteration", "doc_id", "relevance"),
                  ("qid", "iteration", "docno", "label"),
                  ("qid", "subtopic", "docno", "label"))


def _first_appearance_codes(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``texts`` numbered in order of first appearance, and the names."""
    order = np.argsort(texts, kind="stable")
    ordered = texts[order]
    new = np.ones(ordered.shape[0], dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(new) - 1
    first = order[new]  # the first row of every distinct text (stable sort)
    rank = np.empty(first.shape[0], dtype=np.int32)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0], dtype=np.int32)
    codes = np.empty(texts.shape[0], dtype=np.int32)
    codes[order] = rank[group]
    return codes, texts[np.sort(first)]


class _Judgments(Qrels):
    """The rows of subtopic judgments as :class:`Qrels`, where a document may
    be listed once on each subtopic (:class:`SubtopicQrels` checks that)."""

    _unique = False


class SubtopicDuplicateError(ValueError):
    """A document judged twice on one subtopic of a query: ``rows`` (counted
    from 0, increasing), ``qid``, ``subtopic`` and ``docno``."""

    def __init__(self, qrels: SubtopicQrels, rows: tuple[int, int]):
        self.rows = tuple(sorted(rows))
        self.qid, self.docno = qrels.judgments.row_ids(self.rows[0])
        self.subtopic = str(qrels.subtopic[self.rows[0]])
        super().__init__(self.described(f"rows {self.rows[0]} and {self.rows[1]}, counted "
                                         "from 0", "SubtopicQrels", "a subtopic qrels table"))

    def described(self, where: str, prefix: str, each: str) -> str:
        return (f"{prefix}: document {self.docno!r} is judged twice on subtopic "
                f"{self.subtopic!r} of query {self.qid!r} ({where}); {each} judges a document "
                "once per subtopic.")


class SubtopicQrels:
    """Relevance judgments per subtopic: one row per (query, subtopic, document).

    The judgments the diversity measures (``alpha_nDCG@k``, ``ERR_IA@k``, ...)
    read; see :func:`read_subtopic_qrels`.

    Parameters
    ----------
    qid, subtopic, docno : array-like of str
        Query, subtopic and document ids (a document may be judged on several
        subtopics of a query, once on each).
    rel : array-like of int
        Relevance levels (whole numbers, as in :class:`Qrels`).

    Attributes
    ----------
    qid, subtopic, docno : ndarray of str
    rel : ndarray of float
    """

    def __init__(self, qid, subtopic, docno, rel):
        # a Qrels of every row (the same document may repeat): ids as UTF-8
        # bytes, levels checked as a qrels file's
        self.judgments = _Judgments(qid, docno, rel)
        column = as_column(subtopic, "subtopic")
        if len(column) != len(self.judgments):
            raise ValueError(f"subtopic must have one id per judgment; got {len(column)} for "
                             f"{len(self.judgments)} judgments.")
        self.codes, self.names = _first_appearance_codes(column.texts())
        if (pair := self.duplicate()) is not None:
            raise SubtopicDuplicateError(self, pair)

    def __len__(self) -> int:
        return len(self.judgments)

    @property
    def qid(self) -> np.ndarray:
        return self.judgments.qid

    @property
    def docno(self) -> np.ndarray:
        return self.judgments.docno

    @property
    def rel(self) -> np.ndarray:
        return self.judgments.rel

    @property
    def subtopic(self) -> np.ndarray:
        return self.names[self.codes]

    def __repr__(self) -> str:
        return (f"SubtopicQrels({len(self)} judgments, {self.judgments.n_queries()} queries, "
                f"{self.names.shape[0]} subtopic ids)")

    def duplicate(self) -> tuple[int, int] | None:
        """The first two rows judging the same document on the same subtopic
        of a query, or None."""
        keys, codes = self.judgments.keys, self.codes
        order = np.lexsort((codes, keys))
        k, c = keys[order], codes[order]
        candidates = np.flatnonzero((k[1:] == k[:-1]) & (c[1:] == c[:-1]))
        if not candidates.shape[0]:
            return None
        i, j = order[candidates], order[candidates + 1]
        qid, docno = self.judgments.qid_bytes, self.judgments.docno_bytes
        same = qid.equal(i, qid, j) & docno.equal(i, docno, j)
        if not same.any():
            return None
        at = int(np.argmax(same))
        return int(min(i[at], j[at])), int(max(i[at], j[at]))

    def to_qrels(self) -> Qrels:
        """The judgments as :class:`Qrels` (one per document), for the other
        measures: an error when a document is judged on several subtopics."""
        pair = self.judgments.duplicate()
        if pair is not None:
            qid, docno = self.judgments.row_ids(pair[0])
            raise ValueError(
                f"The subtopic qrels judge document {docno!r} of query {qid!r} on several "
                "subtopics: only the diversity measures (alpha_nDCG, ERR_IA, ...) read such "
                "judgments; evaluate the other measures with ad hoc qrels (one judgment per "
                "document), in a call of their own.")
        return self.judgments

    @classmethod
    def from_frame(cls, frame) -> SubtopicQrels:
        """From a pandas or polars DataFrame with the columns ``query_id,
        iteration, doc_id, relevance`` (ir_measures' layout, the subtopic in
        ``iteration``) or ``qid, iteration`` (or ``subtopic``), ``docno,
        label``; ids follow :meth:`Qrels.from_frame`'s rules."""
        names = {str(c) for c in frame.columns}
        for layout in _FRAME_LAYOUTS:
            if set(layout) <= names:
                q, s, d, r = layout
                try:
                    return cls(frame_ids(frame[q], q), frame_ids(frame[s], s),
                               frame_ids(frame[d], d), frame_values(frame[r], r))
                except SubtopicDuplicateError as error:
                    raise ValueError(error.described(
                        f"rows {error.rows[0]} and {error.rows[1]}, counted from 0",
                        "The subtopic qrels DataFrame", "a subtopic qrels DataFrame")) from None
        wanted = " or ".join(", ".join(layout) for layout in _FRAME_LAYOUTS)
        raise ValueError(f"Subtopic judgments need the columns {wanted} (the subtopic is "
                         f"ir_measures' 'iteration'); the DataFrame has {sorted(names)}.")


def _build(fields) -> SubtopicQrels:
    if not len(fields):
        raise ValueError(f"{fields.name}: the qrels file has no judgments.")
    try:
        return SubtopicQrels(fields.column(0).compacted(), fields.column(1).compacted(),
                             fields.column(2).compacted(),
                             fields.numbers(3, "relevance level", integer=True))
    except SubtopicDuplicateError as error:
        first, second = (fields.line(i) for i in error.rows)
        raise ValueError(error.described(f"lines {first} and {second}", fields.name,
                                         "a subtopic qrels file")) from None


@validate_params({
    "path_or_buffer": [str, bytes, os.PathLike, HasMethods(("read",))],
    "engine": [StrOptions(set(ENGINES))],
})
def read_subtopic_qrels(path_or_buffer, *, engine: str = "auto") -> SubtopicQrels:
    """Read diversity relevance judgments: lines ``qid subtopic docno rel``.

    The TREC Web track's diversity qrels (``ndeval``'s input; ir_measures
    reads the subtopic from the ``iteration`` field): a qrels file whose
    second field is the subtopic (intent) a document is judged on, a document
    judged on several subtopics having a line for each. The file's rules are
    :func:`read_qrels`'s (whitespace, comments, gzip, integer levels).

    Parameters
    ----------
    path_or_buffer : str, path-like or file-like
        A qrels file or an open buffer.
    engine : {"auto", "numpy", "pyarrow"}, default="auto"
        The parser, as in :func:`read_qrels`.

    Returns
    -------
    qrels : SubtopicQrels

    Raises
    ------
    ValueError
        Naming the file and line, for what :func:`read_qrels` refuses, except
        that a document may be listed several times for a query: once on each
        subtopic (twice on one subtopic is an error).

    Examples
    --------
    >>> import io
    >>> from sklearn_rank.trec import read_subtopic_qrels
    >>> read_subtopic_qrels(io.StringIO("q1 1 d1 1\\nq1 2 d1 1\\nq1 2 d2 0\\n"))
    SubtopicQrels(3 judgments, 1 queries, 2 subtopic ids)
    """
    return read_table(path_or_buffer, None, engine, _SUBTOPIC_QRELS, _build)


def as_subtopic_qrels(value) -> SubtopicQrels:
    """``evaluate_run``'s ``qrels`` as subtopic judgments (for a diversity
    measure): a path or file is read with its subtopics."""
    if isinstance(value, SubtopicQrels):
        return value
    if is_frame(value):
        return SubtopicQrels.from_frame(value)
    if isinstance(value, str | os.PathLike) or hasattr(value, "read"):
        return read_subtopic_qrels(value)
    raise TypeError(
        "The diversity measures (alpha_nDCG, ERR_IA, ...) need subtopic judgments: pass "
        "qrels as a file path (its second field is the subtopic), a SubtopicQrels "
        "(sklearn_rank.trec.read_subtopic_qrels) or a DataFrame with an 'iteration' column; "
        f"got a {type(value).__name__}, which has no subtopics.")
