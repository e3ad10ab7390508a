"""The grouped ranking engine: validate, group by query once, rank per query.

Every metric reads from this module. The inputs ``(y_true, y_score, qid)`` are
validated once, grouped into contiguous queries once (an O(n) check, a stable
grouping sort only when the query ids are not contiguous), and ranked per
query in length-bucketed 2-D blocks (DESIGN §6): queries whose lengths share
the same power of two are padded to that width and sorted along axis 1, so no
Python loop runs over queries and the work per block is a handful of
vectorised NumPy calls.

A block carries, for every query and rank, the position of the ranked
document within its query, so any per-row column (labels, gains, relevance
flags) is put in ranked order with one gather, and only the top-k prefix a
metric needs is gathered. Under ``ties="average"`` the block also carries the
tie groups of the queries that have ties, so metrics can average any
per-position quantity over the orderings of tied documents (McSherry & Najork,
2008).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._numeric import as_numeric as _as_numeric
from ._numeric import check_finite as _check_finite
from ._qid import qid_values

__all__ = ["Data", "group_rows", "prepare", "query_codes", "ranked_data"]

# --------------------------------------------------------------------------
# Validation and grouping
# --------------------------------------------------------------------------


@dataclass
class Data:
    """Validated inputs, grouped so that each query's rows are contiguous.

    Attributes
    ----------
    labels, scores : ndarray of shape (n_rows,)
        Relevance labels and scores in grouped order (``scores`` is None
        when ``in_rank_order``: the rows are ranked already).
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
        TREC mode: each query's rows are already ranked (decreasing scores,
        no ties), so blocks need no sorting.
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
    _columns: dict = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return self.lengths.shape[0]

    def first_qid(self, mask_grouped: np.ndarray):
        """Query id of the first input row (input order) where the mask holds."""
        rows = np.flatnonzero(mask_grouped)
        if self.order is not None:
            rows = self.order[rows]
        if self.row_qid is None:
            segment = np.searchsorted(self.starts, rows.min(), side="right") - 1
            return _scalar(self.qids[segment])
        return _scalar(self.row_qid[rows.min()])

    def column(self, col) -> np.ndarray:
        """The values of a :class:`~._columns.Column` for every row, in grouped
        order, computed once."""
        out = self._columns.get(col)
        if out is None:
            out = self._columns[col] = col.values(self)
        return out

    def to_query_order(self, values: np.ndarray) -> np.ndarray:
        """Reorder per-segment values into the order of ``qids``."""
        return _to_query_order(values, self.seg_pos)


def _to_query_order(values: np.ndarray, seg_pos) -> np.ndarray:
    if seg_pos is None:
        return values
    out = np.empty_like(values)
    out[seg_pos] = values
    return out


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def _qid_array(qid, name: str = "qid") -> np.ndarray:
    """Validated query ids as an array of the ids themselves (see :mod:`._qid`).

    Ids coded against their sorted values come back as Python objects: one
    reference per row, never one fixed-width copy of a long id per row.
    """
    q, labels = qid_values(qid, name)
    return q if labels is None else labels.astype(object)[q]


def _hash_strings(q: np.ndarray) -> np.ndarray:
    """32-bit FNV-style hash of fixed-width unicode strings, vectorised."""
    chars = np.ascontiguousarray(q).view(np.uint32).reshape(q.shape[0], -1)
    h = np.full(q.shape[0], 2166136261, dtype=np.uint32)
    mult = np.uint32(16777619)
    for j in range(chars.shape[1]):
        h ^= chars[:, j]
        h *= mult
    return h


# Row chunk for whole-array passes over big inputs: temporaries stay small
# (no page faults on fresh 100 MB arrays at 12M rows) and cache-friendly.
_CHUNK = 1 << 20


def _chunks(n: int):
    for lo in range(0, n, _CHUNK):
        yield slice(lo, min(lo + _CHUNK, n))


def _sort_keys(codes, n: int | None = None) -> np.ndarray:
    """Sorted 64-bit keys ``code << 32 | position`` of non-negative codes < 2**32.

    ``codes`` is an array, or a function of a slice giving the codes of those
    positions (so big inputs are encoded chunk by chunk). Keys are unique, so
    the fast unstable value sort is stable; the low bits of the sorted keys are
    a stable argsort of the codes and the high bits the sorted codes (measured
    3x faster than ``argsort(kind="stable")``).
    """
    get = codes if callable(codes) else codes.__getitem__
    n = codes.shape[0] if n is None else n
    key = np.empty(n, dtype=np.uint64)
    for part in _chunks(n):
        chunk = key[part]
        chunk[:] = get(part)
        chunk <<= np.uint64(32)
        chunk |= np.arange(part.start, part.stop, dtype=np.uint64)
    key.sort()
    return key


def _runs_of(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of equal consecutive ids (none without ids)."""
    return _runs_at(ids[1:] != ids[:-1], ids.shape[0])


def _runs_at(changes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of ``n`` values, ``changes[i]`` telling
    whether value i + 1 differs from value i."""
    starts = np.flatnonzero(changes) + 1
    if n:
        starts = np.concatenate(([0], starts))
    return starts, np.diff(np.append(starts, n))


def _low(keys: np.ndarray) -> np.ndarray:
    return (keys & np.uint64(0xFFFFFFFF)).astype(np.intp)


def _boundaries(keys: np.ndarray) -> np.ndarray:
    """Positions where the high 32 bits of sorted keys change (0 included)."""
    n = keys.shape[0]
    out = [np.zeros(1, dtype=np.intp)]
    for part in _chunks(n - 1):
        high = keys[part.start:part.stop + 1] >> np.uint64(32)
        out.append(np.flatnonzero(high[1:] != high[:-1]) + (part.start + 1))
    return np.concatenate(out)


def _segments(v: np.ndarray):
    """Group equal values of ``v``.

    Returns ``(by, bounds, rank, uniques)``: ``by`` is a stable permutation of
    ``v`` that makes equal values contiguous, ``bounds`` the start of each
    segment in ``by`` (segments in any order), ``rank`` the position of each
    segment's value in ``uniques``, the sorted unique values.
    """
    n = v.shape[0]
    if n >= 1 << 32:  # pragma: no cover - beyond packed keys
        uniques, codes = _unique(v)
        by = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.diff(codes[by], prepend=-1))
        return by, bounds, np.arange(uniques.shape[0]), uniques
    if v.dtype.kind in "iu":
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 4 * n + 1024:  # dense ids: a presence table, O(n + range)
            present = np.zeros(hi - lo + 1, dtype=bool)
            shifted = (v - lo).astype(np.intp, copy=False)
            present[shifted] = True
            codes = (np.cumsum(present) - 1)[shifted]
            uniques = np.flatnonzero(present).astype(v.dtype) + v.dtype.type(lo)
            return _by_codes(codes, uniques)
    elif v.dtype.kind == "U" and v.dtype.itemsize > 0:
        # Sorting strings is slow: group by a 32-bit hash, check that no two
        # distinct strings share a hash, and sort only the unique strings.
        keys = _sort_keys(lambda part: _hash_strings(v[part]), n)
        by = _low(keys)
        bounds = _boundaries(keys)
        del keys
        firsts = v[by[bounds]]
        sizes = np.diff(np.append(bounds, n))
        segment = np.empty(n, dtype=np.intp)
        segment[by] = np.repeat(np.arange(bounds.shape[0]), sizes)
        # No collision: every string equals its segment's first (gathers from a
        # small array, chunk by chunk).
        if all(np.array_equal(firsts[segment[part]], v[part]) for part in _chunks(n)):
            srt = np.argsort(firsts, kind="stable")
            rank = np.empty_like(srt)
            rank[srt] = np.arange(srt.shape[0])
            return by, bounds, rank, firsts[srt]
    return _by_codes(*_unique(v)[::-1])


def _by_codes(codes: np.ndarray, uniques: np.ndarray):
    """:func:`_segments` from codes that already are ranks: segments come sorted."""
    keys = _sort_keys(codes)
    return _low(keys), _boundaries(keys), np.arange(uniques.shape[0]), uniques


def _unique(v: np.ndarray):
    try:
        return np.unique(v, return_inverse=True)
    except TypeError as exc:
        raise TypeError(
            f"qid values cannot be compared with each other ({exc}); use query ids "
            "of a single type, e.g. all int or all str."
        ) from None


def _factorize(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique values of ``q`` and the code (rank) of every element."""
    by, bounds, rank, uniques = _segments(q)
    codes = np.empty(q.shape[0], dtype=np.intp)
    codes[by] = np.repeat(rank, np.diff(np.append(bounds, q.shape[0])))
    return uniques, codes


def _expand(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, start + size)`` over the pairs."""
    ends = np.cumsum(sizes)
    return np.arange(ends[-1]) + np.repeat(starts - (ends - sizes), sizes)


def _in_id_order(by, bounds, rank, total):
    """The elements of ``by`` with segments taken in id order, and segment sizes."""
    sizes = np.diff(np.append(bounds, total))
    if (rank == np.arange(rank.shape[0])).all():
        return by, sizes  # segments already in id order
    in_order = np.argsort(rank)
    sizes = sizes[in_order]
    return by[_expand(bounds[in_order], sizes)], sizes


def _group(q: np.ndarray):
    """Group rows by query id.

    Returns ``(order, starts, seg_pos, qids)``: ``order`` is the stable row
    permutation that makes queries contiguous (None when they already are),
    ``starts`` the offset of each query in grouped order, ``seg_pos`` the
    position in ``qids`` of each grouped query (None when they follow the
    sorted order) and ``qids`` the sorted unique ids.

    An O(n) comparison finds the runs of equal consecutive ids. Long runs
    (the usual case: grouped or nearly grouped data) are grouped as runs —
    the data are contiguous exactly when no id owns two runs — and expanded
    back to rows; short runs (shuffled rows) are grouped as rows. Either way
    the values are grouped once (:func:`_segments`) and segments are put in id
    order as wholes, never by a second sort.
    """
    n = q.shape[0]
    run_starts, _ = _runs_of(q)
    r = run_starts.shape[0]
    if r > n // 4:  # short runs: group the rows themselves
        by, bounds, rank, qids = _segments(q)
        m = qids.shape[0]
        if m == r:  # every query one run: contiguous, no row moves
            first_row = by[bounds]
            seg_pos = rank[np.argsort(first_row)]
            return None, run_starts, (None if (seg_pos == np.arange(m)).all() else seg_pos), qids
        order, sizes = _in_id_order(by, bounds, rank, n)
        return order, np.concatenate(([0], np.cumsum(sizes)[:-1])), None, qids
    by, bounds, rank, qids = _segments(q[run_starts])
    m = qids.shape[0]
    if m == r:  # already contiguous: no row moves
        seg_pos = np.empty(m, dtype=np.intp)
        seg_pos[by] = rank  # each segment is a single run
        return None, run_starts, (None if (seg_pos == np.arange(m)).all() else seg_pos), qids
    run_order, runs_per_query = _in_id_order(by, bounds, rank, r)
    run_lengths = np.diff(np.append(run_starts, n))[run_order]
    order = _expand(run_starts[run_order], run_lengths)
    first_run = np.concatenate(([0], np.cumsum(runs_per_query)[:-1]))
    rows_per_query = np.add.reduceat(run_lengths, first_run)
    return order, np.concatenate(([0], np.cumsum(rows_per_query)[:-1])), None, qids


class _RowIds:
    """The query id of each row, looked up in the sorted ids when asked (for
    messages) rather than copied out for every row."""

    __slots__ = ("codes", "labels")

    def __init__(self, codes: np.ndarray, labels: np.ndarray):
        self.codes, self.labels = codes, labels

    def __getitem__(self, row):
        return self.labels[self.codes[row]]


def query_codes(qid, name: str = "qid") -> tuple[np.ndarray, np.ndarray]:
    """Validated query ids: the sorted unique ids and the code of every row."""
    q, labels = qid_values(qid, name)
    if q.shape[0] == 0:
        raise ValueError(f"{name} is empty; pass one query id per row.")
    if labels is not None:  # codes already are ranks among the sorted ids
        return labels, q
    return _factorize(q)


def group_rows(qid, name: str = "qid") -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Stable row order that makes queries contiguous (None if they are), and
    the first row and size of each query in that order."""
    q, _ = qid_values(qid, name)
    if q.shape[0] == 0:
        raise ValueError(f"{name} is empty; pass one query id per row.")
    order, starts, _, _ = _group(q)
    return order, starts, np.diff(np.append(starts, q.shape[0]))


def ranked_data(labels: np.ndarray, lengths: np.ndarray, qids: np.ndarray, *,
                n_retrieved: np.ndarray | None = None,
                judged: np.ndarray | None = None) -> Data:
    """Data for rows grouped by query and ranked within each query, queries in
    the order of ``qids`` (the scores are decreasing, without ties).

    For trusted internal callers (TREC evaluation), which validated the values.
    """
    starts = np.cumsum(lengths) - lengths
    return Data(labels, None, starts, lengths, qids, None, None, None, None,
                n_retrieved=n_retrieved, judged=judged, in_rank_order=True)


def prepare(y_true, y_score, qid=None, sample_weight=None) -> Data:
    """Validate ``(y_true, y_score, qid, sample_weight)`` and group by query.

    Accepts flat 1-D arrays plus ``qid`` (any hashable dtype; rows in any
    order) or scikit-learn's 2-D ``(n_queries, n_docs)`` layout with
    ``qid=None``.
    """
    labels = _as_numeric(y_true, "y_true")
    scores = _as_numeric(y_score, "y_score", exact_order=True)
    if qid is None:
        if labels.ndim == 1 and scores.ndim == 1:
            raise ValueError(
                "y_true and y_score are 1-D, so the query of each row is unknown. Pass "
                "qid=<one query id per row> (e.g. qid=df['qid']), or 2-D arrays of "
                "shape (n_queries, n_docs) as sklearn.metrics.ndcg_score takes."
            )
        if labels.ndim != 2 or scores.ndim != 2:
            raise ValueError(
                "Without qid, y_true and y_score must both be 2-D arrays of shape "
                f"(n_queries, n_docs); got shapes {labels.shape} and {scores.shape}."
            )
        if labels.shape != scores.shape:
            raise ValueError(
                f"y_true and y_score have different shapes {labels.shape} and "
                f"{scores.shape}; they must match."
            )
        n_queries, n_docs = labels.shape
        if labels.size == 0:
            raise ValueError(
                f"y_true and y_score are empty (shape {labels.shape}); pass at least "
                "one query with one document."
            )
        labels = labels.ravel()
        scores = scores.ravel()
        q = np.arange(n_queries)
        grouping = (None, np.arange(0, labels.shape[0], n_docs), None, q)
        row_qid = lambda i: i // n_docs  # noqa: E731
        query_qid = q
    else:
        if labels.ndim != 1 or scores.ndim != 1:
            raise ValueError(
                "qid is given, so y_true and y_score must be 1-D with one value per "
                f"row; got shapes {labels.shape} and {scores.shape}. Flatten them "
                "(y.ravel()) or drop qid to use the 2-D (n_queries, n_docs) layout."
            )
        q, id_labels = qid_values(qid)
        if not (labels.shape[0] == scores.shape[0] == q.shape[0]):
            raise ValueError(
                "y_true, y_score and qid must have the same length; got "
                f"{labels.shape[0]}, {scores.shape[0]} and {q.shape[0]}."
            )
        if labels.shape[0] == 0:
            raise ValueError("y_true, y_score and qid are empty; pass at least one row.")
        grouping = None
        if id_labels is not None:  # q holds ranks among the sorted ids
            q_codes, q = q, _RowIds(q, id_labels)
        row_qid = q.__getitem__
        query_qid = None

    _check_finite(labels, "y_true", row_qid)
    _check_finite(scores, "y_score", row_qid)

    if grouping is None:
        if id_labels is None:
            grouping = _group(q)
        else:
            order, starts, seg_pos, _ = _group(q_codes)
            grouping = order, starts, seg_pos, id_labels
    order, starts, seg_pos, qids = grouping
    n = labels.shape[0]
    lengths = np.diff(np.append(starts, n))

    weights = None
    if sample_weight is not None:
        weights = _query_weights(sample_weight, n, qids.shape[0], query_qid, row_qid,
                                 order, starts, lengths, seg_pos)

    if order is not None:
        labels = labels[order]
        scores = scores[order]
    if query_qid is not None:  # 2-D layout: row_qid maps a row to its query
        row_qid_arr = np.repeat(query_qid, lengths)
    else:
        row_qid_arr = q
    return Data(labels, scores, starts, lengths, qids, seg_pos, weights,
                row_qid_arr, order)


def _query_weights(sample_weight, n, m, query_qid, row_qid, order, starts, lengths,
                   seg_pos):
    w = _as_numeric(sample_weight, "sample_weight")
    expected = m if query_qid is not None else n
    unit = "query (one per row of the 2-D arrays)" if query_qid is not None else "row"
    if w.ndim != 1 or w.shape[0] != expected:
        raise ValueError(
            f"sample_weight must be 1-D with one weight per {unit}: expected "
            f"{expected} values, got shape {w.shape}."
        )
    if query_qid is not None:
        _check_finite(w, "sample_weight", lambda i: i)
        per_query = w
    else:
        _check_finite(w, "sample_weight", row_qid)
        grouped = w if order is None else w[order]
        # A query's weight is the mean of its rows' weights (LightGBM's rule).
        with np.errstate(over="ignore"):
            sums = np.add.reduceat(grouped, starts)
        big = ~np.isfinite(sums)
        sums[~big] /= lengths[~big]
        if big.any():  # weights near 1e308: those queries' sums scaled (exact)
            scale = int(np.frexp(grouped.max())[1])
            sums[big] = np.ldexp(np.add.reduceat(np.ldexp(grouped, -scale), starts)[big]
                                 / lengths[big], scale)
        per_query = _to_query_order(sums, seg_pos)
    if (w < 0).any():
        bad = w < 0
        first = np.flatnonzero(bad)[0]
        where = first if query_qid is not None else _scalar(row_qid(first))
        raise ValueError(
            f"sample_weight has {int(bad.sum())} negative value(s) (first in query "
            f"{where!r}); weights must be >= 0."
        )
    if not (per_query > 0).any():
        raise ValueError("sample_weight sums to zero; at least one query needs a positive weight.")
    return per_query
