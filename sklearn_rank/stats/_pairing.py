"""Pairing the per-query values of two systems: by position, or by query id."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from .._utils.validation import validate_params
from ..metrics._engine.aggregate import summary_weights
from ..metrics._evaluation import Evaluation
from ._constraints import PAIRED

__all__ = ["paired_values"]


def metric_of(evaluation: Evaluation, metric) -> str:
    if metric is None:
        if len(evaluation.metrics) != 1:
            raise ValueError(
                f"The Evaluation holds {len(evaluation.metrics)} metrics "
                f"({', '.join(map(str, evaluation.metrics))}); pass metric=... to choose one."
            )
        return str(evaluation.metrics[0])
    if metric not in evaluation.per_query:
        raise ValueError(
            f"The Evaluation has no metric {metric!r}; it holds "
            f"{', '.join(map(str, evaluation.metrics))}."
        )
    return metric


def _preview(ids) -> str:
    ids = [str(q) for q in ids]
    return ", ".join(ids[:5]) + (f", ... ({len(ids)} in all)" if len(ids) > 5 else "")


# ---------------------------------------------------------------- query ids

_NUMBER, _STR, _BYTES = "number", "str", "bytes"


def _kind_of_value(value) -> str:
    if isinstance(value, str):
        return _STR
    if isinstance(value, bytes):
        return _BYTES
    if isinstance(value, Integral | Real):
        return _NUMBER
    return type(value).__name__


def _id_kinds(qids: np.ndarray) -> set:
    """The kinds of ids an array holds: numbers (int, float and bool compare
    equal in Python), str, bytes, or other Python types by name."""
    kind = qids.dtype.kind
    if kind in "biuf":
        return {_NUMBER}
    if kind == "U":
        return {_STR}
    if kind == "S":
        return {_BYTES}
    return {_kind_of_value(q) for q in qids.tolist()}


def _typed(qa: np.ndarray, qb: np.ndarray):
    """Both id arrays in one NumPy dtype whose equality is Python's, or None.

    Integers stay integers (int64 and uint64 only when every value fits);
    integers meet floats as float64 only when they are exact there; str and
    bytes arrays compare as NumPy strings (object arrays take the slow path:
    NumPy's fixed-width strings drop trailing NUL characters).
    """
    ka, kb = qa.dtype.kind, qb.dtype.kind
    if ka in "US" and ka == kb:
        return qa, qb
    if ka not in "biuf" or kb not in "biuf":
        return None
    if ka in "biu" and kb in "biu":
        return _typed_integers(qa, qb)
    if not all(_exact_in_float64(q) for q in (qa, qb)):
        return None
    return qa.astype(np.float64, copy=False), qb.astype(np.float64, copy=False)


def _typed_integers(qa: np.ndarray, qb: np.ndarray):
    """Integer ids of both arrays as int64, else uint64, or None when neither holds
    them all."""
    for dtype in (np.int64, np.uint64):
        info = np.iinfo(dtype)
        if all(q.size == 0 or (info.min <= q.min() and q.max() <= info.max)
               for q in (qa, qb)):
            return qa.astype(dtype, copy=False), qb.astype(dtype, copy=False)
    return None


def _exact_in_float64(q: np.ndarray) -> bool:
    """Whether every id of ``q`` is a float, or an integer that float64 holds exactly."""
    exact = 2**53
    return q.dtype.kind not in "biu" or not q.size or bool(-exact <= q.min()
                                                           and q.max() <= exact)


def _match(qa: np.ndarray, qb: np.ndarray):
    """Positions of the shared ids in a and in b (in a's order), and masks of
    the ids found on one side only. Ids are equal as Python values are."""
    typed = _typed(qa, qb)
    if typed is not None:
        _, ia, ib = np.intersect1d(*typed, assume_unique=True, return_indices=True)
        order = np.argsort(ia, kind="stable")
        ia, ib = ia[order], ib[order]
    else:  # object ids: Python's own equality, through a dict
        where = {q: i for i, q in enumerate(qb.tolist())}
        pairs = [(i, where[q]) for i, q in enumerate(qa.tolist()) if q in where]
        ia = np.array([i for i, _ in pairs], dtype=np.intp)
        ib = np.array([j for _, j in pairs], dtype=np.intp)
    only_a = np.ones(qa.shape[0], dtype=bool)
    only_a[ia] = False
    only_b = np.ones(qb.shape[0], dtype=bool)
    only_b[ib] = False
    return ia, ib, only_a, only_b


def _check_comparable(qa: np.ndarray, qb: np.ndarray) -> None:
    """Refuse two id sets of which no id can equal an id of the other."""
    kinds_a, kinds_b = _id_kinds(qa), _id_kinds(qb)
    if qa.size and qb.size and not kinds_a & kinds_b:
        def show(q, kinds):
            return (f"{' and '.join(sorted(kinds))} ({q.dtype}, e.g. "
                    f"{q[0].item() if q.dtype != object else q[0]!r})")

        raise TypeError(
            f"The query ids of the two evaluations are of different types: "
            f"{show(qa, kinds_a)} in the first, {show(qb, kinds_b)} in the second, so no "
            "query can be paired (1 and '1' are different ids). Evaluate both with ids of "
            "one type, e.g. evaluate(..., qid=np.asarray(qid).astype(str))."
        )


# ---------------------------------------------------------------- pairing


def weights_of(evaluation: Evaluation, qids, aggregate: str = "mean") -> np.ndarray | None:
    """The query weights of ``evaluation`` for the paired query ids ``qids``
    (from :func:`paired_values`), NaN for an id it does not hold (a query
    paired under ``missing='zero'``); None when it is unweighted. Those of
    the summary of a metric whose ``aggregate`` is given: a mean by
    impressions (``gauc``) weighs each query by its rows (times its weight)."""
    own = summary_weights(aggregate, evaluation.weights, evaluation.lengths)
    if own is None:
        return None
    ids = np.asarray(qids)
    at, found, _, _ = _match(ids, np.asarray(evaluation.qids))
    weights = np.full(ids.shape[0], np.nan)
    weights[at] = np.asarray(own, dtype=np.float64)[found]
    return weights


def _paired_evaluations(a: Evaluation, b: Evaluation, metric, missing):
    ka, kb = metric_of(a, metric), metric_of(b, metric)
    qa, qb = np.asarray(a.qids), np.asarray(b.qids)
    va = np.asarray(a.per_query[ka], dtype=np.float64)
    vb = np.asarray(b.per_query[kb], dtype=np.float64)
    _check_comparable(qa, qb)
    ia, ib, only_a, only_b = _match(qa, qb)
    if (only_a.any() or only_b.any()) and missing == "raise":
        raise ValueError(
            f"The evaluations cover different queries: {int(only_a.sum())} only in the first "
            f"({_preview(qa[only_a].tolist())}), {int(only_b.sum())} only in the second "
            f"({_preview(qb[only_b].tolist())}). Pass missing='drop' to compare the shared "
            "queries, or missing='zero' to score a missing query 0 (trec_eval -c)."
        )
    if missing == "drop" or not (only_a.any() or only_b.any()):
        return va[ia], vb[ib], qa[ia], None, None
    # missing="zero": a's queries in a's order, then those only in b in b's order
    n_a, extra = qa.shape[0], np.flatnonzero(only_b)
    x = np.concatenate([va, np.zeros(extra.shape[0])])
    y = np.zeros(n_a + extra.shape[0])
    y[ia] = vb[ib]
    y[n_a:] = vb[extra]
    in_b = np.zeros(n_a + extra.shape[0], dtype=bool)
    in_b[ia] = True
    in_b[n_a:] = True
    in_a = np.zeros_like(in_b)
    in_a[:n_a] = True
    qids = np.concatenate([qa, qb[extra]]) if qa.dtype != object or qb.dtype != object else \
        np.array([*qa.tolist(), *qb[extra].tolist()], dtype=object)
    return x, y, qids, in_a, in_b


def _drop_skipped(x, y, qids, in_a, in_b, metric):
    """Leave out the queries skipped (NaN) on both sides, or on the only side
    that has them; refuse a value present on one side only, and infinities."""
    if qids is None:
        sides, prefix = ("a", "b"), ""

        def where(i):
            return f"position {i}"
    else:
        sides, prefix = ("the first evaluation", "the second"), f"{metric}: "

        def where(i):
            return f"query {qids[i].item() if qids.dtype != object else qids[i]!r}"
    for values, side in zip((x, y), sides, strict=True):
        bad = np.isinf(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{prefix}the value for {where(i)} in {side} is {values[i]}; "
                             "per-query values must be finite (or NaN for a skipped query).")
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    one_sided = nan_x != nan_y
    if in_a is not None:  # NaN against a query the other side lacks: skipped
        one_sided &= np.where(nan_x, in_b, in_a)
    if one_sided.any():
        i = int(np.flatnonzero(one_sided)[0])
        nan_side, other = sides if nan_x[i] else sides[::-1]
        value = y[i] if nan_x[i] else x[i]
        raise ValueError(
            f"{prefix}the value for {where(i)} is NaN in {nan_side} but {value:.6g} in "
            f"{other} ({int(one_sided.sum())} such queries): a query skipped on one side "
            "only cannot be paired. Evaluate both systems with the same labels and empty= "
            "policy, or remove the NaN values; NaN on both sides (queries skipped under "
            "empty='skip') is left out.")
    keep = ~(nan_x | nan_y)
    if not keep.all():
        x, y = x[keep], y[keep]
        qids = None if qids is None else qids[keep]
    return x, y, qids


@validate_params(PAIRED)
def paired_values(a, b, *, metric=None, missing="raise"):
    """Per-query values of two systems, paired.

    Parameters
    ----------
    a, b : array-like of shape (n_queries,) or Evaluation
        Per-query values in the same query order, or two
        :class:`~sklearn_rank.metrics.Evaluation` objects aligned by ``qid``.
    metric : str, default=None
        The metric of the evaluations to take (needed when they hold several).
    missing : {'raise', 'drop', 'zero'}, default='raise'
        For evaluations over different query sets: raise an error listing the
        difference, keep the shared queries (in the first evaluation's order),
        or count a query missing from one side as 0 there (trec_eval's
        ``-c``; the first evaluation's queries come first, then those only in
        the second).

    Returns
    -------
    x, y : ndarray of shape (n_pairs,)
        Paired values; queries that are NaN on both sides (skipped under
        ``empty='skip'``), or NaN on the one side that has them, are left out.
    qids : ndarray or None
        The query ids of the pairs, for evaluations.

    Raises
    ------
    ValueError
        If a value is NaN on one side only (a query skipped by one system
        only: the pair would silently change the query set) or infinite,
        naming the metric and the query (or position); if the evaluations
        cover different queries under ``missing='raise'``; if no pair is left.
    TypeError
        If the query ids of the two evaluations are of types that can never be
        equal (``1`` and ``'1'``: int ids against str ids).

    Notes
    -----
    Query ids are paired when they are equal as Python values (an int id
    equals the float id of the same value, never a str or bytes id). Ids of
    the usual NumPy dtypes are matched by sorting, O(n log n); object ids by a
    dictionary.

    Examples
    --------
    >>> from sklearn_rank.stats import paired_values
    >>> x, y, _ = paired_values([0.5, float("nan"), 0.7], [0.4, float("nan"), 0.9])
    >>> x.tolist(), y.tolist()
    ([0.5, 0.7], [0.4, 0.9])
    """
    if isinstance(a, Evaluation) != isinstance(b, Evaluation):
        raise TypeError("Pass two Evaluation objects or two arrays of per-query values, "
                        "not one of each.")
    if isinstance(a, Evaluation):
        x, y, qids, in_a, in_b = _paired_evaluations(a, b, metric, missing)
        label = metric_of(a, metric)
    else:
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape:
            raise ValueError(f"a and b must be 1-D arrays of the same length (one value per "
                             f"query); got shapes {x.shape} and {y.shape}.")
        qids = in_a = in_b = label = None
    x, y, qids = _drop_skipped(x, y, qids, in_a, in_b, label)
    if x.shape[0] == 0:
        raise ValueError("There is no pair of per-query values to compare.")
    return x, y, qids
