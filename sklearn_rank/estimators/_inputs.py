"""QueryRanker's inputs: scikit-learn's checks of X and y, and rows sorted by query."""

from __future__ import annotations

from sklearn.utils import check_array
from sklearn.utils.validation import check_consistent_length, check_X_y

from .._utils.compat import check_sample_weight, safe_indexing
from .._utils.queries import length_hint, missing_qid_error
from ..metrics._engine.ids import group_rows
from ._inner import query_arguments
from ._position import sort_within_queries

__all__ = ["check_X", "check_fit_input", "sort_by_query"]


def check_X(X, estimator):
    """X as given (an array, a CSR matrix for any sparse format, a DataFrame; a
    list becomes an array), once scikit-learn's ``check_array`` found it 2-D,
    real and non-empty (its own errors)."""
    options = dict(accept_sparse=True, dtype=None, ensure_all_finite=False,
                   estimator=estimator, input_name="X")
    if not hasattr(X, "shape"):
        return check_array(X, **options)
    if hasattr(X, "tocsr"):  # CSR can be indexed by rows and columns
        X = X.tocsr()
    # A DataFrame converted whole would be copied (as objects when a column holds
    # strings): its first row has its dtypes and width.
    head = (X if getattr(X, "columns", None) is None or X.shape[0] < 2 or X.shape[1] == 0
            else safe_indexing(X, slice(0, 1), axis=0))
    check_array(head, **options)
    return X


def check_fit_input(X, y, estimator):
    """``(X, y)``: X as :func:`check_X` leaves it, y as an array of as many rows."""
    if y is None:  # scikit-learn's check refuses it, in its words
        check_X_y(X, y, estimator=estimator)
    X = check_X(X, estimator)
    y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False,
                    estimator=estimator, input_name="y")
    check_consistent_length(X, y)
    return X, y


def sort_by_query(X, y, qid, sample_weight, kind: str, who: str, position=None):
    """``(X, y, sample_weight, extra)`` of one data set (its query-id column
    dropped) with the rows sorted stably by ``qid``, and the inner model's query
    arguments ``extra``; a pointwise model (``kind='none'``) may go without qid.
    With ``position`` (checked), XGBoost's rows are sorted by it within each
    query (it reads positions from that order) and LightGBM gets
    ``extra["position"]``."""
    if X.shape[1] == 0:
        raise ValueError(
            "X has 1 feature(s), and it is the query-id column: no features are left "
            "for the inner model."
        )
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X)
    if qid is None:
        if kind == "none":
            return X, y, sample_weight, {}
        raise missing_qid_error(who, X=X)
    n_rows = X.shape[0]
    if len(qid) != n_rows:
        raise ValueError(
            f"{who}: X has {n_rows} rows but qid has {len(qid)} values; pass one query id "
            "per row (not group sizes)." + length_hint(len(qid), n_rows)
        )
    grouping = group_rows(qid)
    order, starts, sizes = grouping.order, grouping.starts, grouping.lengths
    if position is not None and kind == "qid":
        order = sort_within_queries(order, sizes, position)
    if order is not None:
        X, y = safe_indexing(X, order, axis=0), y[order]
        if sample_weight is not None:
            sample_weight = sample_weight[order]
    sample_weight, extra = query_arguments(kind, starts, sizes, sample_weight)
    if position is not None and kind == "group":
        extra["position"] = position if order is None else position[order]
    return X, y, sample_weight, extra
