"""LightGBM's group sizes and per-row query ids, one from the other."""

from __future__ import annotations

import numpy as np

from .._utils.validation import validate_params

__all__ = ["group_sizes_from_qid", "qid_from_group_sizes"]


@validate_params({"sizes": ["array-like"]})
def qid_from_group_sizes(sizes) -> np.ndarray:
    """Turn LightGBM-style group sizes into one query id per row.

    LightGBM (``LGBMRanker.fit(X, y, group=sizes)``, ``.query`` files) gives
    the queries of contiguous rows as their sizes: the first ``sizes[0]``
    rows are query 0, the next ``sizes[1]`` rows query 1, and so on. The
    metrics, scorers, splitters and :class:`~sklearn_rank.estimators.QueryRanker`
    of this package take the query id of each row (``qid=``) instead.

    Parameters
    ----------
    sizes : array-like of shape (n_groups,)
        The number of rows of each group, in the order of the rows: integers
        >= 0 (floats with integer values are accepted, as ``np.loadtxt``
        reads them). A size 0 is an empty group, as LightGBM allows: it has
        no row, so its id appears nowhere.

    Returns
    -------
    qid : ndarray of shape (sum(sizes),), dtype int64
        The query id of each row: the position 0, 1, 2, ... of its group in
        ``sizes`` (as :func:`load_svmlight_ranking` numbers the queries of a
        LightGBM query file).

    Raises
    ------
    ValueError
        If ``sizes`` is not 1-D, is empty, or holds a value that is not an
        integer >= 0 (naming its position), or if every size is 0.

    See Also
    --------
    group_sizes_from_qid : The inverse, for rows whose queries are contiguous.
    load_svmlight_ranking : Read a LightGBM file with its ``.query`` file.

    Examples
    --------
    >>> from sklearn_rank.datasets import qid_from_group_sizes
    >>> qid_from_group_sizes([3, 2, 1])
    array([0, 0, 0, 1, 1, 2])

    Pass the ids where LightGBM would take ``group=``:

    >>> from sklearn_rank.metrics import ndcg_score
    >>> y = [2, 0, 1, 1, 0, 1]
    >>> score = [0.9, 0.1, 0.5, 0.2, 0.8, 0.3]
    >>> print(f"{ndcg_score(y, score, qid=qid_from_group_sizes([3, 2, 1])):.4f}")
    0.8770
    """
    sizes = _check_sizes(sizes)
    return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)


def _check_sizes(sizes) -> np.ndarray:
    """The group sizes as int64, refusing what is not a list of integers >= 0."""
    values = np.asarray(sizes)
    if values.ndim != 1:
        raise ValueError(f"sizes must be 1-D with one size per group, got shape {values.shape}.")
    if values.shape[0] == 0:
        raise ValueError("sizes is empty; pass the number of rows of each group.")
    if values.dtype.kind == "b" or values.dtype.kind not in "iuf":
        raise ValueError(f"sizes must hold integers (the number of rows of each group), "
                         f"got an array of dtype {values.dtype}.")
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) >= 2**62)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"sizes[{i}] is {values[i].item()!r}; group sizes must be integers.")
    elif values.dtype.kind == "u" and (values >= 2**62).any():
        i = int(np.flatnonzero(values >= 2**62)[0])
        raise ValueError(f"sizes[{i}] is {values[i]}; too large for a group size.")
    values = values.astype(np.int64)
    if (values < 0).any():
        i = int(np.flatnonzero(values < 0)[0])
        raise ValueError(f"sizes[{i}] is {values[i]}; group sizes must be >= 0.")
    if not values.any():
        raise ValueError("every group size is 0: there are no rows.")
    return values


@validate_params({"qid": ["array-like"]})
def group_sizes_from_qid(qid) -> np.ndarray:
    """Turn per-row query ids into LightGBM-style group sizes.

    The inverse of :func:`qid_from_group_sizes`: the number of rows of each
    query, in the order the queries come, for ``LGBMRanker.fit(X, y,
    group=sizes)`` or a LightGBM ``.query`` file. The rows of each query must
    be contiguous, since a size can only describe consecutive rows.

    Parameters
    ----------
    qid : array-like of shape (n_rows,)
        The query id of each row (any ids the metrics take: integers,
        strings, ...). Rows are of one query when their ids are equal.

    Returns
    -------
    sizes : ndarray of shape (n_queries,), dtype int64
        The number of rows of each query, queries in order of their first
        row.

    Raises
    ------
    ValueError
        If ``qid`` is empty or not 1-D, holds a missing id (None, NaN), or if
        the rows of a query are not contiguous: the message names the first
        row where a query comes back after another one. Sort the rows by
        ``qid`` first (stably: ``np.argsort(qid, kind="stable")``).
    TypeError
        If the ids are of mixed types or unhashable.

    See Also
    --------
    qid_from_group_sizes : The inverse.

    Examples
    --------
    >>> from sklearn_rank.datasets import group_sizes_from_qid
    >>> group_sizes_from_qid([7, 7, 7, 3, 3, 9])
    array([3, 2, 1])
    >>> group_sizes_from_qid(["b", "b", "a"])
    array([2, 1])
    """
    from ..metrics._engine.qid import qid_values

    codes, labels = qid_values(qid, "qid")
    if codes.shape[0] == 0:
        raise ValueError("qid is empty; pass the query id of each row.")
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    run_ids = codes[starts]
    _, first_run = np.unique(run_ids, return_index=True)
    if first_run.shape[0] != run_ids.shape[0]:
        seen = np.zeros(run_ids.shape[0], dtype=bool)
        seen[first_run] = True
        run = int(np.flatnonzero(~seen)[0])
        row = int(starts[run])
        first_row = int(starts[np.flatnonzero(run_ids[:run] == run_ids[run])[0]])
        value = codes[row] if labels is None else labels[codes[row]]
        shown = value.item() if isinstance(value, np.generic) else value
        raise ValueError(
            f"qid: the rows of query {shown!r} are not contiguous: it comes back at row "
            f"{row} after other queries (its first row is {first_row}). Group sizes only "
            "describe consecutive rows; sort the rows by qid first: "
            "order = np.argsort(qid, kind='stable'); X, y, qid = X[order], y[order], "
            "qid[order].")
    return np.diff(np.r_[starts, codes.shape[0]]).astype(np.int64)
