"""Inputs: labels, scores, weights and query ids validated and grouped (:func:`prepare`).

Labels and weights are real numbers; float64 keeps them to its rounding.
Scores only order documents, so they must keep their order exactly: integers
beyond 2**53, NumPy's ``longdouble`` and Python numbers of any size (ints
beyond int64, fractions, decimals) lose ties or order when cast to float64
(2**60 and 2**60 + 1 become one float). Such scores are replaced by their
dense ranks, which are exact float64 values that order and tie as the given
numbers do (DESIGN §8).
"""

from __future__ import annotations

import math
from numbers import Rational

import numpy as np

from ..._utils.queries import length_hint
from ..._utils.validation import check_ordered
from .data import Data, scalar, to_query_order
from .grouping import Grouping, group
from .ids import RowIds
from .qid import is_decimal, qid_values
from .threads import n_threads, run_blocks

__all__ = ["as_numeric", "check_finite", "prepare"]

_EXACT = 2**53  # integers up to this magnitude are exact in float64


def as_numeric(x, name: str, *, exact_order: bool = False) -> np.ndarray:
    """``x`` as a float64 array of the same shape.

    With ``exact_order`` (scores), values that float64 cannot hold exactly
    are replaced by their dense ranks (order and ties kept exactly; NaN and
    infinite values stay NaN, for :func:`check_finite` to report).
    """
    check_ordered(x, name)
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{name} could not be converted to an array ({exc}); pass a 1-D array "
            "with one value per row, or a rectangular 2-D array."
        ) from None
    kind = arr.dtype.kind
    if (kind == "f" and not isinstance(x, np.ndarray) and arr.size
            and np.abs(arr).max() >= _EXACT and _holds_ints(x)):
        # NumPy turns Python ints beyond int64 into floats: keep them exact.
        arr, kind = np.array(x, dtype=object), "O"
    if kind == "b":
        return arr.astype(np.float64)
    if kind == "O":
        return _from_objects(arr, name, exact_order)
    if kind not in "iuf":
        raise TypeError(
            f"{name} must hold numbers, got an array of dtype {arr.dtype}; "
            f"convert it with {name}.astype(float)."
        )
    if exact_order and arr.size and _inexact(arr):
        return _dense_ranks(arr)
    return np.asarray(arr, dtype=np.float64)


def _holds_ints(x) -> bool:
    """Whether a (nested) sequence holds a Python int (not bool)."""
    stack = [x]
    while stack:
        for v in stack.pop():
            if isinstance(v, list | tuple):
                stack.append(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                return True
    return False


def _inexact(arr: np.ndarray) -> bool:
    """Whether casting ``arr`` to float64 could merge or reorder values."""
    if arr.dtype.kind in "iu":
        return arr.dtype.itemsize > 4 and (arr.max() > _EXACT or arr.min() < -_EXACT)
    return arr.dtype.itemsize > 8  # longdouble


def _dense_ranks(arr: np.ndarray) -> np.ndarray:
    finite = np.isfinite(arr) if arr.dtype.kind == "f" else np.ones(arr.shape, bool)
    out = np.full(arr.shape, np.nan)
    out[finite] = np.unique(arr[finite], return_inverse=True)[1]
    return out


def _is_number(v) -> bool:
    return ((isinstance(v, float | Rational | np.integer | np.floating) or is_decimal(v))
            and not isinstance(v, np.timedelta64))


def _is_missing(v) -> bool:
    return v is None or type(v).__name__ in ("NAType", "NaTType")


def _finite(v) -> bool:
    if is_decimal(v):
        return v.is_finite()
    if isinstance(v, Rational):
        return True
    return math.isfinite(v)


def _from_objects(arr: np.ndarray, name: str, exact_order: bool) -> np.ndarray:
    """An object array of Python or NumPy numbers (any size) as float64."""
    flat = arr.ravel().tolist()
    for i, v in enumerate(flat):
        if not (_is_number(v) or _is_missing(v)):
            raise TypeError(
                f"{name} must hold numbers, got {type(v).__name__} {v!r} at position {i}; "
                f"convert it with {name}.astype(float)."
            )
    ok = [not _is_missing(v) and _finite(v) for v in flat]
    out = _ranks(flat, ok) if exact_order else _floats(flat, ok, name)
    return np.array(out, dtype=np.float64).reshape(arr.shape)


def _ranks(values: list, ok: list) -> list:
    """Dense ranks of the good values (Python compares ints, floats, fractions
    and decimals exactly), NaN for the others."""
    rank = {v: float(i) for i, v in enumerate(sorted(
        {v for v, good in zip(values, ok, strict=True) if good}))}
    return [rank[v] if good else math.nan for v, good in zip(values, ok, strict=True)]


def _floats(values: list, ok: list, name: str) -> list:
    """The good values as floats, NaN for the others."""
    out = []
    for i, (v, good) in enumerate(zip(values, ok, strict=True)):
        try:
            out.append(float(v) if good else math.nan)
        except OverflowError:
            raise ValueError(
                f"{name} holds a number too large for float64 at position {i} "
                f"({str(v)[:20]}...); rescale it."
            ) from None
    return out


def check_finite(arr: np.ndarray, name: str, row_qid) -> None:
    """Raise if ``arr`` holds NaN or infinite values, naming the first query."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if np.isfinite(total):  # fast path: one reduction, no temporary mask
        return
    bad = ~np.isfinite(arr)
    if not bad.any():  # the sum overflowed on large but finite values
        return
    first = np.flatnonzero(bad)[0]
    raise ValueError(
        f"{name} contains {int(bad.sum())} NaN or infinite value(s) (first in query "
        f"{scalar(row_qid(first))!r}); remove or impute them before scoring."
    )


class _Matrix:
    """scikit-learn's 2-D layout: row i of ``(n_queries, n_docs)`` is query i."""

    weights_per = "query (one per row of the 2-D arrays)"

    def __init__(self, labels: np.ndarray, scores: np.ndarray):
        if labels.ndim == 1 and scores.ndim == 1:
            err = ValueError(
                "y_true and y_score are 1-D, so the query of each row is unknown. Pass "
                "qid=<one query id per row> (e.g. qid=df['qid']), or 2-D arrays of "
                "shape (n_queries, n_docs) as sklearn.metrics.ndcg_score takes."
            )
            err.no_qid = True  # the metric functions add the scorer's fix
            raise err
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
        if labels.size == 0:
            raise ValueError(
                f"y_true and y_score are empty (shape {labels.shape}); pass at least "
                "one query with one document."
            )
        self.n_queries, self.n_docs = labels.shape
        self.labels, self.scores = labels.ravel(), scores.ravel()

    def row_qid(self, row):
        return row // self.n_docs

    def group(self) -> Grouping:
        return Grouping(None, np.arange(0, self.labels.shape[0], self.n_docs), None,
                        np.arange(self.n_queries), self.labels.shape[0])

    def row_ids(self, qids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return np.repeat(qids, lengths)


class _Flat:
    """1-D rows with a query id each, in any order."""

    weights_per = "row"

    def __init__(self, labels: np.ndarray, scores: np.ndarray, qid):
        if labels.ndim != 1 or scores.ndim != 1:
            raise ValueError(
                "qid is given, so y_true and y_score must be 1-D with one value per "
                f"row; got shapes {labels.shape} and {scores.shape}. Flatten them "
                "(y.ravel()) or drop qid to use the 2-D (n_queries, n_docs) layout."
            )
        q, self.id_labels = qid_values(qid)
        if not (labels.shape[0] == scores.shape[0] == q.shape[0]):
            raise ValueError(
                "y_true, y_score and qid must have the same length; got "
                f"{labels.shape[0]}, {scores.shape[0]} and {q.shape[0]}."
                + length_hint(q.shape[0], min(labels.shape[0], scores.shape[0]))
            )
        if labels.shape[0] == 0:
            raise ValueError("y_true, y_score and qid are empty; pass at least one row.")
        self.labels, self.scores, self.codes = labels, scores, q
        # q holds ranks among the sorted ids when id_labels is given
        self.ids = q if self.id_labels is None else RowIds(q, self.id_labels)
        self.row_qid = self.ids.__getitem__

    def group(self) -> Grouping:
        # queries in any order: Data.seg_pos puts the values in id order
        grouping = group(self.codes, any_order=True)
        if self.id_labels is None:
            return grouping
        return Grouping(grouping.order, grouping.starts, grouping.seg_pos, self.id_labels,
                        grouping.n_rows)  # (the codes' ids)

    def row_ids(self, qids: np.ndarray, lengths: np.ndarray):
        return self.ids


def prepare(y_true, y_score, qid=None, sample_weight=None) -> Data:
    """Validate ``(y_true, y_score, qid, sample_weight)`` and group by query.

    Accepts flat 1-D arrays plus ``qid`` (any hashable dtype; rows in any
    order) or scikit-learn's 2-D ``(n_queries, n_docs)`` layout with
    ``qid=None``.
    """
    labels = as_numeric(y_true, "y_true")
    scores = as_numeric(y_score, "y_score", exact_order=True)
    rows = _Matrix(labels, scores) if qid is None else _Flat(labels, scores, qid)
    check_finite(rows.labels, "y_true", rows.row_qid)
    check_finite(rows.scores, "y_score", rows.row_qid)
    grouping = rows.group()
    order, starts, seg_pos, qids = (grouping.order, grouping.starts, grouping.seg_pos,
                                    grouping.qids)
    lengths = grouping.lengths
    weights = None
    if sample_weight is not None:
        weights = _query_weights(sample_weight, rows, qids.shape[0], order, starts, lengths,
                                 seg_pos)
    labels, scores = rows.labels, rows.scores
    if order is not None:  # two random gathers, on two threads for big inputs
        out = {}
        run_blocks(lambda name: out.__setitem__(name, getattr(rows, name)[order]),
                   ("labels", "scores"), n_threads(2 * order.shape[0]))
        labels, scores = out["labels"], out["scores"]
    return Data(labels, scores, starts, lengths, qids, seg_pos, weights,
                rows.row_ids(qids, lengths), order)


def _query_weights(sample_weight, rows, m, order, starts, lengths, seg_pos) -> np.ndarray:
    """Per-query weights in the order of the sorted ids: the given ones (2-D
    layout), or the mean of each query's rows' weights (LightGBM's rule)."""
    w = as_numeric(sample_weight, "sample_weight")
    per_query = isinstance(rows, _Matrix)
    expected = m if per_query else rows.labels.shape[0]
    if w.ndim != 1 or w.shape[0] != expected:
        raise ValueError(
            f"sample_weight must be 1-D with one weight per {rows.weights_per}: expected "
            f"{expected} values, got shape {w.shape}."
        )
    where = (lambda i: i) if per_query else rows.row_qid
    check_finite(w, "sample_weight", where)
    out = w if per_query else to_query_order(
        _row_means(w if order is None else w[order], starts, lengths), seg_pos)
    if (w < 0).any():
        bad = w < 0
        raise ValueError(
            f"sample_weight has {int(bad.sum())} negative value(s) (first in query "
            f"{scalar(where(np.flatnonzero(bad)[0]))!r}); weights must be >= 0."
        )
    if not (out > 0).any():
        raise ValueError("sample_weight sums to zero; at least one query needs a positive weight.")
    return out


def _row_means(grouped: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The mean of each query's values (grouped rows), exact for values near 1e308."""
    with np.errstate(over="ignore"):
        sums = np.add.reduceat(grouped, starts)
    big = ~np.isfinite(sums)
    sums[~big] /= lengths[~big]
    if big.any():  # weights near 1e308: those queries' sums scaled (exact)
        scale = int(np.frexp(grouped.max())[1])
        sums[big] = np.ldexp(np.add.reduceat(np.ldexp(grouped, -scale), starts)[big]
                             / lengths[big], scale)
    return sums
