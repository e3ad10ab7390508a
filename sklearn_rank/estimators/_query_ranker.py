"""QueryRanker: a per-row ``qid`` adapter for LightGBM, XGBoost and any regressor."""

from __future__ import annotations

import inspect
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from .._compat import DocLinkMixin, safe_indexing
from .._queries import (
    QID_COLUMN,
    drop_column,
    has_qid_column,
    missing_qid_error,
    qid_position,
    read_qid_column,
)
from ..metrics._evaluate import evaluate
from ..metrics._grouping import group_rows

__all__ = ["QueryRanker"]

# LightGBM's default label_gain has 31 entries: labels 0..30.
_LIGHTGBM_MAX_LABELS = 31
# XGBoost's exponential NDCG gain accepts relevance degrees below 32.
_XGBOOST_MAX_LABELS = 32


def _as_2d(X):
    """X as given when it is an array, DataFrame or sparse matrix; else an array."""
    if not hasattr(X, "shape"):
        X = np.asarray(X)
    elif hasattr(X, "tocsr"):  # any sparse format: CSR can be indexed by rows and columns
        X = X.tocsr()
    if len(X.shape) != 2:
        raise ValueError(
            f"Expected a 2-D X of shape (n_rows, n_features), got shape {X.shape}. Reshape "
            "your data either using X.reshape(-1, 1) if it has a single feature or "
            "X.reshape(1, -1) if it contains a single row."
        )
    for axis, what in ((0, "sample"), (1, "feature")):
        if X.shape[axis] == 0:
            raise ValueError(
                f"Found array with 0 {what}(s) (shape={X.shape}) while a minimum of 1 is "
                "required by QueryRanker."
            )
    if getattr(getattr(X, "dtype", None), "kind", None) == "c":
        raise ValueError("Complex data not supported: X must hold real numbers.")
    return X


def _check_sample_weight(sample_weight, n_rows):
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ValueError(
            f"sample_weight must have one weight per row: expected shape ({n_rows},), "
            f"got {w.shape}."
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must hold finite weights >= 0.")
    if not w.any():
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return w


def _fit_params(estimator) -> set:
    try:
        return set(inspect.signature(estimator.fit).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without signatures
        return set()


def _fit_kind(estimator) -> str:
    """How the inner model takes queries: 'qid' (XGBoost), 'group' (LightGBM) or 'none'."""
    params = _fit_params(estimator)
    if "qid" in params:
        return "qid"
    if "group" in params:
        return "group"
    return "none"


class QueryRanker(DocLinkMixin, MetaEstimatorMixin, BaseEstimator):
    """Fit a ranker, or any regressor, from flat rows with a query id per row.

    LightGBM wants group *sizes* of contiguous queries, XGBoost wants sorted
    query ids, scikit-learn's model selection wants neither: it splits rows
    and passes per-row metadata. ``QueryRanker`` takes one query id per row —
    rows in any order — sorts the rows stably by query, and gives the inner
    model what it needs, so ``GridSearchCV``, ``cross_validate`` and friends
    work with stock scikit-learn.

    Parameters
    ----------
    estimator : estimator object
        The inner model: ``lightgbm.LGBMRanker`` (gets ``group`` sizes),
        ``xgboost.XGBRanker`` (gets sorted ``qid``), or any regressor, used as a
        pointwise ranker (gets nothing extra). Its parameters are reachable as
        ``estimator__<name>``, e.g. ``estimator__num_leaves`` in a grid.
    qid_column : int, str or None, default=None
        A column of ``X`` holding the query ids, dropped before the inner model
        sees ``X``. An int is a column *position* for every input — NumPy and
        sparse arrays, pandas and polars DataFrames (negative counts from the
        end); on a DataFrame that also has a column *labelled* with that int
        at another position it is an error (name the column instead). A str
        (any non-int) is a DataFrame column *name*. With None, a DataFrame
        column named ``qid`` is used when present (XGBoost's convention). In a
        pipeline it refers to ``X`` as this step sees it, after the earlier
        steps: e.g. ``0`` after ``ColumnTransformer([("q", "passthrough",
        [j]), ...])``, or the name ``"q__qid"`` / ``"remainder__qid"`` after
        ``set_output(transform="pandas")`` (or ``"polars"``). This is the way
        to pass query ids without metadata routing; the scorers of this
        package read the same column.

    Attributes
    ----------
    estimator_ : estimator object
        The fitted inner model.
    n_features_in_ : int
        Number of columns of ``X`` seen in ``fit``, the query-id column included.
    feature_names_in_ : ndarray of str
        Column names of ``X`` in ``fit``, when it was a DataFrame.

    See Also
    --------
    sklearn_rank.metrics.make_ranking_scorer : Scorers that see query ids.
    sklearn_rank.model_selection.QueryKFold : Folds that keep queries whole.
    sklearn_rank.model_selection.cross_validate_ranker : All of it in one call.

    Notes
    -----
    Query ids reach ``fit`` and ``score`` as ``qid=`` — requested by default
    under metadata routing (``sklearn.set_config(enable_metadata_routing=True)``)
    — or through ``qid_column``. An explicit ``qid`` wins over the column (the
    column is dropped either way). ``fit`` groups rows by the column as it is;
    ids read from it for a score (``score``, :meth:`query_ids`, the scorers)
    must look like ids: non-integer numbers (a feature, or ids a scaler
    scaled, where an earlier step moved, dropped or transformed the column)
    are refused, and so is a column at an int position whose DataFrame name
    differs from the one in ``fit``.

    Labels are checked before the inner model sees them: ranking objectives
    need non-negative integer grades, below ``len(label_gain)`` for LightGBM
    (31 by default) and below 32 for XGBoost's exponential gain. Passing
    ``group=`` (LightGBM's sizes) is an error: pass per-row ``qid`` instead, so
    per-row ids can never be taken for sizes.

    ``eval_set`` / ``eval_qid`` / ``eval_sample_weight`` are sorted and
    converted the same way (LightGBM ``eval_group``, XGBoost ``eval_qid``), so
    early stopping works inside cross-validation: under routing, request them
    (``set_fit_request(eval_set=True, eval_qid=True, eval_metric=True)``) and
    pass them in the search's ``params``, with the stopping rule on the inner
    model (``LGBMRanker(early_stopping_round=20)``, ``XGBRanker(early_stopping_rounds=20)``).
    XGBoost takes one weight per query: a query's weight is the mean of its
    rows' ``sample_weight``.

    Examples
    --------
    >>> import numpy as np
    >>> from lightgbm import LGBMRanker
    >>> from sklearn_rank.estimators import QueryRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> qid = rng.integers(0, 6, 60)          # rows in any order
    >>> y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 1).astype(int)
    >>> ranker = QueryRanker(LGBMRanker(n_estimators=5, min_child_samples=2, verbose=-1))
    >>> ranker.fit(X, y, qid=qid).predict(X[:2]).shape
    (2,)
    """

    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(self, estimator, *, qid_column=None):
        self.estimator = estimator
        self.qid_column = qid_column

    # -- the query-id column ----------------------------------------------

    def _who(self) -> str:
        return f"QueryRanker(qid_column={self.qid_column!r})"

    def _qid_position(self, X):
        """Position of the query-id column in X, or None without one."""
        if self.qid_column is not None:
            return qid_position(X, self.qid_column, self._who())
        if has_qid_column(X):
            return qid_position(X, QID_COLUMN, self._who())
        return None

    def _qid_values(self, X, position, *, for_scores=True):
        """The query ids in the column at ``position``; only ids that scores are
        computed on are checked to look like ids (``fit`` groups by the column)."""
        by_position = isinstance(self.qid_column, Integral)
        return read_qid_column(
            X, position, self._who(), check=for_scores,
            fitted_names=getattr(self, "feature_names_in_", None) if by_position else None)

    def _split_qid(self, X, qid):
        """``(X without the qid column, qid)``; the column gives qid when qid is None."""
        position = self._qid_position(X)
        if position is None:
            return X, qid
        if qid is None:
            qid = self._qid_values(X, position, for_scores=False)
        return drop_column(X, position), qid

    def query_ids(self, X):
        """Query id of each row of X from the query-id column, or None without one.

        Used by this package's scorers when no ``qid`` is routed to them; in a
        pipeline they pass X as this step sees it (after the earlier steps).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        qid : ndarray of shape (n_rows,) or None

        Raises
        ------
        ValueError
            When the column holds non-integer numbers (a feature or scaled ids,
            not query ids), or, for an int ``qid_column``, when that column of
            a DataFrame has another name than in ``fit``.
        """
        X = _as_2d(X)
        position = self._qid_position(X)
        return None if position is None else self._qid_values(X, position)

    # -- fit / predict / score --------------------------------------------

    def _check_labels(self, y, kind):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one label per row), got shape {y.shape}.")
        if y.dtype.kind == "c":
            raise ValueError("Complex data not supported: y must hold real numbers.")
        if y.dtype.kind not in "iufb":
            raise ValueError(
                f"Unknown label type: y has dtype {y.dtype}; pass numeric relevance labels.")
        if kind == "none":
            return y
        if not np.isfinite(y).all():
            raise ValueError(
                "y must hold finite numeric relevance labels for a ranking objective.")
        bad = (y < 0) | (y != np.floor(y))
        if bad.any():
            raise ValueError(
                f"y has {int(bad.sum())} label(s) that are not non-negative integers (first: "
                f"{y[bad][0]!r}); {type(self.estimator).__name__}'s ranking objective "
                "needs graded relevance labels 0, 1, 2, ..."
            )
        if kind == "group":
            label_gain = self.estimator.get_params().get("label_gain")
            limit = _LIGHTGBM_MAX_LABELS if label_gain is None else len(label_gain)
            if y.max() >= limit:
                raise ValueError(
                    f"y has labels up to {int(y.max())}, but LightGBM's ranking objective "
                    f"takes labels below len(label_gain) = {limit}; pass "
                    "estimator__label_gain=[...] with one gain per label, or map the labels "
                    "to 0..30."
                )
        elif y.max() >= _XGBOOST_MAX_LABELS:
            raise ValueError(
                f"y has labels up to {int(y.max())}, but XGBoost's exponential NDCG gain "
                f"takes labels below {_XGBOOST_MAX_LABELS}; map the labels to 0..31 or set "
                "estimator__ndcg_exp_gain=False."
            )
        return y.astype(np.int64) if y.dtype.kind == "f" else y

    def _queries(self, X, y, qid, sample_weight, kind, who):
        """Sort one data set by query; the inner model's per-query arguments."""
        X, qid = self._split_qid(X, qid)
        if X.shape[1] == 0:
            raise ValueError(
                "X has 1 feature(s), and it is the query-id column: no features are left "
                "for the inner model."
            )
        sample_weight = _check_sample_weight(sample_weight, X.shape[0])
        if qid is None:
            if kind == "none":
                return X, np.asarray(y), sample_weight, {}
            raise missing_qid_error(f"QueryRanker.{who}", X=X)
        n_rows = X.shape[0]
        if len(qid) != n_rows:
            raise ValueError(
                f"QueryRanker.{who}: X has {n_rows} rows but qid has {len(qid)} values; "
                "pass one query id per row (not group sizes)."
            )
        order, starts, sizes = group_rows(qid)
        y = np.asarray(y)
        if order is not None:
            X, y = safe_indexing(X, order, axis=0), y[order]
            if sample_weight is not None:
                sample_weight = np.asarray(sample_weight)[order]
        extra = {}
        if kind == "group":
            extra["group"] = sizes
        elif kind == "qid":
            extra["qid"] = np.repeat(np.arange(sizes.shape[0]), sizes)
            if sample_weight is not None:  # XGBoost ranking weights are per query
                sample_weight = np.add.reduceat(np.asarray(sample_weight, float),
                                                starts) / sizes
        return X, y, sample_weight, extra

    def fit(self, X, y, *, qid=None, sample_weight=None, eval_set=None, eval_qid=None,
            eval_sample_weight=None, eval_metric=None, callbacks=None, **fit_params):
        """Fit the inner model on rows sorted by query.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_rows, n_features)
            Features; may hold the query-id column (see ``qid_column``).
        y : array-like of shape (n_rows,)
            Relevance labels.
        qid : array-like of shape (n_rows,), default=None
            Query id of each row, rows in any order. Needed for ranking models
            unless ``X`` has a query-id column; optional for pointwise regressors.
        sample_weight : array-like of shape (n_rows,), default=None
            Row weights (per query for XGBoost: the mean of the query's rows).
        eval_set : list of (X, y) tuples, default=None
            Validation sets for early stopping, each with its own query ids.
        eval_qid : list of array-like, default=None
            Query ids of each validation set (or use their query-id column).
        eval_sample_weight : list of array-like, default=None
            Row weights of each validation set.
        eval_metric : str, callable or list, default=None
            The inner model's ``eval_metric`` (e.g.
            :func:`~sklearn_rank.metrics.lightgbm_eval_metric`); passed on when set.
        callbacks : list of callables, default=None
            The inner model's ``callbacks`` (e.g. ``lightgbm.early_stopping``);
            passed on when set.
        **fit_params
            Passed to the inner model's ``fit`` (``callbacks``, ``eval_at``, ...).

        Returns
        -------
        self : QueryRanker
        """
        if y is None:
            raise ValueError(
                "QueryRanker requires y to be passed, but the target y is None; pass the "
                "relevance labels."
            )
        X = _as_2d(X)
        kind = _fit_kind(self.estimator)
        for name in ("group", "eval_group"):
            if name in fit_params:
                raise ValueError(
                    f"QueryRanker builds {name} from query ids; pass "
                    f"{'qid' if name == 'group' else 'eval_qid'}=<one query id per row> "
                    f"instead of {name}=."
                )
        if "eval_X" in fit_params or "eval_y" in fit_params:
            raise ValueError(
                "Pass validation data to QueryRanker as eval_set=[(X, y), ...] with "
                "eval_qid=[qid, ...]; it sorts them by query and hands them to the inner "
                "model in the form it takes (eval_X / eval_y for LightGBM >= 4.7)."
            )
        self._record_input(X)
        y = self._check_labels(y, kind)
        X_fit, y_fit, w_fit, extra = self._queries(X, y, qid, sample_weight, kind, "fit")
        if w_fit is not None:
            extra["sample_weight"] = w_fit
        if eval_set is not None:
            extra.update(self._eval_sets(eval_set, eval_qid, eval_sample_weight, kind))
        elif eval_qid is not None or eval_sample_weight is not None:
            raise ValueError("eval_qid and eval_sample_weight need an eval_set.")
        for name, value in (("eval_metric", eval_metric), ("callbacks", callbacks)):
            if value is not None:
                extra[name] = value
        self.estimator_ = clone(self.estimator)
        self.estimator_.fit(X_fit, y_fit, **extra, **fit_params)
        return self

    def _eval_sets(self, eval_set, eval_qid, eval_sample_weight, kind) -> dict:
        n = len(eval_set)
        eval_qid = [None] * n if eval_qid is None else list(eval_qid)
        weights = [None] * n if eval_sample_weight is None else list(eval_sample_weight)
        if len(eval_qid) != n or len(weights) != n:
            raise ValueError(
                f"eval_set has {n} sets but eval_qid / eval_sample_weight have "
                f"{len(eval_qid)} / {len(weights)}; give one per set."
            )
        sets, groups, qids, sample_weights = [], [], [], []
        for (X_e, y_e), q_e, w_e in zip(eval_set, eval_qid, weights, strict=True):
            y_e = self._check_labels(y_e, kind)
            X_e, y_e, w_e, extra = self._queries(X_e, y_e, q_e, w_e, kind, "fit (eval_set)")
            sets.append((X_e, y_e))
            groups.append(extra.get("group"))
            qids.append(extra.get("qid"))
            sample_weights.append(w_e)
        if "eval_X" in _fit_params(self.estimator):  # LightGBM >= 4.7 deprecates eval_set
            out = {"eval_X": tuple(X for X, _ in sets), "eval_y": tuple(y for _, y in sets)}
        else:
            out = {"eval_set": sets}
        has_weights = any(w is not None for w in sample_weights)
        if kind == "group":
            out["eval_group"] = groups
            if has_weights:
                out["eval_sample_weight"] = sample_weights
        elif kind == "qid":
            out["eval_qid"] = qids
            if has_weights:
                out["sample_weight_eval_set"] = sample_weights
        elif has_weights:
            out["eval_sample_weight"] = sample_weights
        return out

    def _record_input(self, X):
        self.n_features_in_ = X.shape[1]
        columns = getattr(X, "columns", None)
        if columns is not None and all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def predict(self, X):
        """Scores of the inner model (higher ranks first).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_rows, n_features)
            Same columns as in ``fit`` (the query-id column is dropped).

        Returns
        -------
        scores : ndarray of shape (n_rows,)
        """
        check_is_fitted(self)
        X = _as_2d(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but QueryRanker is expecting "
                f"{self.n_features_in_} features as input (the query-id column included)."
            )
        position = self._qid_position(X)
        if position is not None:
            X = drop_column(X, position)
        return np.asarray(self.estimator_.predict(X))

    def score(self, X, y, *, qid=None, sample_weight=None) -> float:
        """Mean NDCG@10 over queries (exponential gain, ties averaged).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)
            Relevance labels.
        qid : array-like of shape (n_rows,), default=None
            Query ids (requested by default under metadata routing); read from
            the query-id column when None.
        sample_weight : array-like of shape (n_rows,), default=None
            Row weights (a query's weight is the mean of its rows').

        Returns
        -------
        score : float
            :func:`~sklearn_rank.metrics.ndcg_score` with ``k=10``.
        """
        scores = self.predict(X)
        if qid is None:
            qid = self.query_ids(X)
            if qid is None:
                raise missing_qid_error("QueryRanker.score")
        ev = evaluate(y, scores, qid=qid, metrics=["ndcg@10"], sample_weight=sample_weight)
        return ev.mean["ndcg@10"]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.target_tags.required = True
        return tags
