"""QueryRanker: a per-row ``qid`` adapter for LightGBM, XGBoost, CatBoost and any regressor.

The interface is :class:`QueryRanker` (re-exported by :mod:`sklearn_rank.estimators`):
the estimator's parameters, its query-id column, ``fit``, ``predict`` and ``score``. What it
is built from lives beside it: :mod:`._fitted` forwards the inner model's fitted attributes,
:mod:`._inner` gives each kind of inner model its arguments, :mod:`._inputs` checks the rows
and sorts them by query, :mod:`._position` passes display positions.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from .._utils.compat import DocLinkMixin, HasMethods, check_n_features, fit_context
from .._utils.queries import (
    QID_COLUMN,
    drop_column,
    has_qid_column,
    missing_qid_error,
    qid_position,
    read_qid_column,
)
from ..metrics._evaluate import evaluate
from ._fitted import InnerAttributesMixin
from ._inner import check_labels, eval_arguments, fit_kind, refuse_query_arguments
from ._inputs import check_fit_input, check_X, sort_by_query
from ._position import check_position, fit_lightgbm_with_position, lightgbm_takes_position

__all__ = ["QueryRanker"]


class QueryRanker(DocLinkMixin, InnerAttributesMixin, MetaEstimatorMixin, BaseEstimator):
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
        ``xgboost.XGBRanker`` (gets sorted ``qid``), ``catboost.CatBoostRanker``
        (gets sorted ``group_id``, one per row), or any regressor —
        ``CatBoostRegressor`` among them — used as a pointwise ranker (gets
        nothing extra). Its parameters are reachable as
        ``estimator__<name>``, e.g. ``estimator__num_leaves`` in a grid.
    qid_column : int, str or None, default=None
        A column of ``X`` holding the query ids, dropped before the inner model
        sees ``X``. An int is a column *position* for every input — NumPy and
        sparse arrays, pandas and polars DataFrames (negative counts from the
        end); on a DataFrame that also has a column *labelled* with that int
        at another position it is an error (name the column instead). A str
        is a DataFrame column *name*. With None, a DataFrame
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
        Column names of ``X`` in ``fit``, when it was a DataFrame with string
        column names, the query-id column included.
    feature_importances_ : ndarray of shape (n_columns,)
        The inner model's ``feature_importances_`` (LightGBM, XGBoost,
        CatBoost, scikit-learn's tree ensembles), one entry per column of
        ``X`` as given: when a query-id column was dropped before the inner
        model saw ``X``, it holds NaN at that column's position (and floats),
        so that it pairs with ``feature_names_in_`` and ``X.columns``. Without
        a query-id column it is the inner model's array as it is. The inner
        model's own, one entry per feature it saw, is
        ``estimator_.feature_importances_``. ``coef_`` (linear models) is
        aligned the same way. CatBoost's ranking losses leave it
        ``array(None)`` (CatBoost's own behaviour) until
        ``estimator_.get_feature_importance(Pool(...), type="LossFunctionChange")``
        is given the training rows grouped by query.
    best_iteration_, best_score_, evals_result_, booster_, ... : object
        Every other fitted attribute of the inner model, under its own name and
        as it is: the names ending in ``_`` that it has (LightGBM's
        ``best_iteration_``, ``best_score_``, ``evals_result_``, ``booster_``,
        ``n_iter_``; CatBoost's ``best_iteration_``, ``best_score_``,
        ``evals_result_``, ``tree_count_``; XGBoost's ``evals_result_``; a
        regressor's ``intercept_``, ``estimators_``, ...) and XGBoost's
        ``best_iteration`` and ``best_score`` (no trailing underscore; defined
        after early stopping). The attributes that count or name features
        (LightGBM's ``n_features_`` and ``feature_name_``, CatBoost's
        ``feature_names_``) describe the inner model's input: without the
        query-id column. An attribute the inner model lacks raises
        ``AttributeError``, one read before ``fit`` ``NotFittedError`` (an
        ``AttributeError`` too), so ``hasattr`` is False for both. The inner
        model's parameters and methods are not forwarded: reach them as
        ``estimator__<name>`` and through ``estimator_``.

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

    The parameters are checked when ``fit`` starts, as scikit-learn's
    estimators check theirs (``_parameter_constraints``); ``X``, ``y`` and
    ``sample_weight`` by scikit-learn's own checks, which leave a DataFrame or
    a sparse matrix as it is. Labels are checked before the inner model sees
    them: ranking objectives
    need non-negative integer grades, below ``len(label_gain)`` for LightGBM
    (31 by default) and below 32 for XGBoost's exponential gain. Passing
    ``group=`` (LightGBM's sizes) is an error: pass per-row ``qid`` instead, so
    per-row ids can never be taken for sizes (and ``group_id=`` /
    ``group_weight=``, CatBoost's, for the same reason).

    ``eval_set`` / ``eval_qid`` / ``eval_sample_weight`` are sorted and
    converted the same way (LightGBM ``eval_group``, XGBoost ``eval_qid``), so
    early stopping works inside cross-validation: under routing, request them
    (``set_fit_request(eval_set=True, eval_qid=True, eval_metric=True)``) and
    pass them in the search's ``params``, with the stopping rule on the inner
    model (``LGBMRanker(early_stopping_round=20)``, ``XGBRanker(early_stopping_rounds=20)``).
    XGBoost takes one weight per query: a query's weight is the mean of its
    rows' ``sample_weight``.

    ``position`` (display positions, for clicks) reaches XGBoost as the order
    of the rows within each query (it needs ``lambdarank_unbiased=True``; a
    position shown twice in one query is refused) and LightGBM's lambdarank
    as ``Dataset(position=)``: LightGBM's scikit-learn ``fit`` has no
    ``position`` argument, so QueryRanker then trains the ``LGBMRanker``
    through ``lightgbm.train`` with the parameters its ``fit`` would use and
    leaves it fitted the same way (``booster_``, ``best_iteration_``,
    ``evals_result_``). Other models refuse ``position``.

    CatBoost: ``CatBoostRanker`` gets the rows sorted by query with
    ``group_id`` 0, 1, 2, ... (one per row, as CatBoost needs the rows of a
    group together), and ``sample_weight`` as ``group_weight``: its pairwise
    and groupwise losses ignore row weights, so a query's weight is the mean
    of its rows' (repeated on each row, as CatBoost takes it). Its losses read
    labels as real numbers (YetiRank, PairLogit, QueryRMSE, LambdaMart, ...
    take any finite label, fractions and negative ones included, and get them
    unrounded); ``QuerySoftMax`` needs labels >= 0. Eval sets go to CatBoost
    as ``catboost.Pool`` objects with their ``group_id`` (``group_weight``,
    or row ``weight`` for ``CatBoostRegressor``) and the ``cat_features``,
    ``text_features`` and ``embedding_features`` given to ``fit`` (name the
    columns: positions count the columns without the query-id column). Early
    stopping is CatBoost's (``CatBoostRanker(early_stopping_rounds=20,
    eval_metric="NDCG:top=10")``). CatBoost uses every core and writes a
    ``catboost_info`` folder by default: pass ``thread_count=1`` when the
    search runs fits in parallel, and ``allow_writing_files=False``.

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
    >>> ranker.feature_importances_.shape     # the inner LGBMRanker's
    (3,)
    """

    __metadata_request__fit = {"qid": True, "position": True}
    __metadata_request__score = {"qid": True}

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "qid_column": [Integral, str, None],
    }

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
        X = check_X(X, self)
        position = self._qid_position(X)
        return None if position is None else self._qid_values(X, position)

    # -- fit / predict / score --------------------------------------------

    def _queries(self, X, y, qid, sample_weight, kind, who, position=None):
        """Sort one data set by query; the inner model's per-query arguments."""
        X, qid = self._split_qid(X, qid)
        return sort_by_query(X, y, qid, sample_weight, kind, f"QueryRanker.{who}",
                             position)

    @fit_context
    def fit(self, X, y, *, qid=None, position=None, sample_weight=None, eval_set=None,
            eval_qid=None, eval_sample_weight=None, eval_metric=None, callbacks=None,
            **fit_params):
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
            A set, dict or dict view is refused: it has no row order.
        position : array-like of shape (n_rows,), default=None
            Display position of each row in the list its query showed (0 or 1
            for the top; only the order within a query matters to XGBoost),
            for position-debiased training on clicks: XGBoost's
            ``XGBRanker(lambdarank_unbiased=True)`` gets the rows of each query
            sorted by position, LightGBM's ``LGBMRanker`` (lambdarank) gets
            ``Dataset(position=)``. Requested by default under metadata routing,
            like ``qid``. Other models refuse it. See the user guide's
            "Position bias and clicks".
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
        X, y = check_fit_input(X, y, self)
        kind = fit_kind(self.estimator)
        refuse_query_arguments(fit_params)
        self._record_input(X)
        y = check_labels(y, kind, self.estimator)
        if position is not None:
            position = check_position(position, X.shape[0], kind, self.estimator)
        X_fit, y_fit, w_fit, extra = self._queries(X, y, qid, sample_weight, kind, "fit",
                                                   position)
        if w_fit is not None:
            extra["sample_weight"] = w_fit
        if eval_set is not None:
            extra.update(self._eval_sets(eval_set, eval_qid, eval_sample_weight, kind,
                                         fit_params))
        elif eval_qid is not None or eval_sample_weight is not None:
            raise ValueError("eval_qid and eval_sample_weight need an eval_set.")
        for name, value in (("eval_metric", eval_metric), ("callbacks", callbacks)):
            if value is not None:
                extra[name] = value
        inner = clone(self.estimator)
        if "position" in extra and not lightgbm_takes_position(inner):
            fit_lightgbm_with_position(inner, X_fit, y_fit, **extra, **fit_params)
        else:
            inner.fit(X_fit, y_fit, **extra, **fit_params)
        self.estimator_ = inner  # only once fitted: its attributes are forwarded
        return self

    def _eval_sets(self, eval_set, eval_qid, eval_sample_weight, kind, fit_params) -> dict:
        n = len(eval_set)
        eval_qid = [None] * n if eval_qid is None else list(eval_qid)
        weights = [None] * n if eval_sample_weight is None else list(eval_sample_weight)
        if len(eval_qid) != n or len(weights) != n:
            raise ValueError(
                f"eval_set has {n} sets but eval_qid / eval_sample_weight have "
                f"{len(eval_qid)} / {len(weights)}; give one per set."
            )
        sets, extras, sorted_weights = [], [], []
        for (X_e, y_e), q_e, w_e in zip(eval_set, eval_qid, weights, strict=True):
            X_e, y_e = check_fit_input(X_e, y_e, self)
            y_e = check_labels(y_e, kind, self.estimator)
            X_e, y_e, w_e, extra = self._queries(X_e, y_e, q_e, w_e, kind, "fit (eval_set)")
            sets.append((X_e, y_e))
            extras.append(extra)
            sorted_weights.append(w_e)
        return eval_arguments(self.estimator, kind, sets, extras, sorted_weights, fit_params)

    def _record_input(self, X):
        self.n_features_in_ = X.shape[1]
        self._qid_position_in_fit = self._qid_position(X)  # aligns feature_importances_
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
        X = check_X(X, self)
        check_n_features(self, X)  # the query-id column included
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
