"""Prepared data: validated inputs grouped so that each query's rows are contiguous."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Data", "ranked_data", "scalar", "to_query_order"]


def scalar(value):
    """A NumPy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class Data:
    """Validated inputs, grouped so that each query's rows are contiguous.

    Attributes
    ----------
    labels, scores : ndarray of shape (n_rows,)
        Relevance labels and scores in grouped order (with
        ``in_rank_order``, ``scores`` only tell ties apart, or are None: no
        ties).
    starts, lengths : ndarray of shape (n_queries,)
        Offset and number of rows of each query (segment) in grouped order.
    qids : ndarray of shape (n_queries,)
        Unique query ids, sorted.
    seg_pos : ndarray of shape (n_queries,) or None
        ``seg_pos[i]`` is the position in ``qids`` of segment ``i``; None when
        segments already follow the sorted order.
    weights : ndarray of shape (n_queries,) or None
        Per-query weights in the order of ``qids``.
    row_qid : ndarray of shape (n_rows,), indexable by row, or None
        Query id of every row in input order, for error messages: an array
        or a lookup by row (None: found from ``starts``, the rows being
        grouped in the order of ``qids``).
    n_retrieved : ndarray of shape (n_queries,) or None
        TREC mode: how many of each segment's documents were retrieved. They
        rank first; the others are judged documents the run did not retrieve,
        which count for the ideal ranking and the number of relevant
        documents but hold no rank. None: every document is retrieved.
    judged : ndarray of shape (n_rows,) or None
        TREC mode: 1 for judged documents, 0 for unjudged ones (never
        relevant, and not counted as judged non-relevant). None: all judged.
    order : ndarray of shape (n_rows,) or None
        The row permutation that grouped the input (None when it was
        already grouped).
    in_rank_order : bool
        TREC mode: each query's rows are already ranked (by decreasing
        score, ties in trec_eval's order), so blocks need no sorting.
    input_order : ndarray of shape (n_rows,) or None
        TREC mode: each row's position in the run as given, which
        ``ties="stable"`` orders tied rows by (None: the rows' order).
    codes : ndarray of shape (n_rows,) or None
        TREC mode: trec_eval's relevance code of every row (its level, -1 not
        in the qrels, -2 a negative qrels level), which trec_eval compares
        with a negative ``-l`` (:class:`~.columns.Relevant`'s ``unjudged``).
        None: not needed (a relevance level >= 0).
    trec_levels : tuple of two ndarrays or None
        TREC mode: trec_eval's level counts of every query (``(levels, top)``:
        ``levels[i, l]`` qrels lines of level ``l``, ``top[i]`` the highest
        level; a query judged only at negative levels has the previous
        query's, as trec_eval's static state), for ``ndcg(gains=...)``. None:
        counted from the judged rows.
    """

    labels: np.ndarray
    scores: np.ndarray | None
    starts: np.ndarray
    lengths: np.ndarray
    qids: np.ndarray
    seg_pos: np.ndarray | None
    weights: np.ndarray | None
    row_qid: np.ndarray | None = field(repr=False)
    order: np.ndarray | None = field(repr=False)
    n_retrieved: np.ndarray | None = field(default=None, repr=False)
    judged: np.ndarray | None = field(default=None, repr=False)
    in_rank_order: bool = False
    input_order: np.ndarray | None = field(default=None, repr=False)
    codes: np.ndarray | None = field(default=None, repr=False)
    trec_levels: tuple | None = field(default=None, repr=False)
    _columns: dict = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return self.lengths.shape[0]

    def query_position(self, segments):
        """The position in ``qids`` of each of ``segments`` (an int or an array)."""
        return segments if self.seg_pos is None else self.seg_pos[segments]

    def first_qid(self, mask_grouped: np.ndarray):
        """Query id of the first input row (input order) where the mask holds."""
        rows = np.flatnonzero(mask_grouped)
        if self.order is not None:
            rows = self.order[rows]
        if self.row_qid is None:
            segment = np.searchsorted(self.starts, rows.min(), side="right") - 1
            return scalar(self.qids[segment])
        return scalar(self.row_qid[rows.min()])

    def column(self, col) -> np.ndarray:
        """The values of a :class:`~sklearn_rank.metrics._engine.columns.Column` for every row, in
        grouped
        order, computed once."""
        out = self._columns.get(col)
        if out is None:
            out = self._columns[col] = col.values(self)
        return out

    def nonzero(self, col) -> np.ndarray:
        """The rows whose ``col`` value is nonzero, in order, found once."""
        key = ("nonzero", col)
        out = self._columns.get(key)
        if out is None:
            out = self._columns[key] = col.nonzero(self)
        return out

    def to_query_order(self, values: np.ndarray) -> np.ndarray:
        """Reorder per-segment values into the order of ``qids``."""
        return to_query_order(values, self.seg_pos)


def to_query_order(values: np.ndarray, seg_pos) -> np.ndarray:
    if seg_pos is None:
        return values
    out = np.empty_like(values)
    out[seg_pos] = values
    return out


def ranked_data(labels: np.ndarray, lengths: np.ndarray, qids: np.ndarray, *,
                n_retrieved: np.ndarray | None = None, judged: np.ndarray | None = None,
                scores: np.ndarray | None = None,
                input_order: np.ndarray | None = None,
                codes: np.ndarray | None = None, trec_levels: tuple | None = None) -> Data:
    """Data for rows grouped by query and ranked within each query, queries in
    the order of ``qids``.

    Without ``scores`` the ranking has no ties. With them (non-increasing
    within each query's retrieved rows, NaN for rows that hold no rank),
    equal scores form tie groups: the internal policy ``"trec"`` keeps the
    rows' order (trec_eval's), ``"stable"`` orders them by ``input_order``
    (the run's order), the other policies average or re-sort them. For
    trusted internal callers (TREC evaluation), which validated the values.
    """
    starts = np.cumsum(lengths) - lengths
    return Data(labels, scores, starts, lengths, qids, None, None, None, None,
                n_retrieved=n_retrieved, judged=judged, in_rank_order=True,
                input_order=input_order, codes=codes, trec_levels=trec_levels)
