"""A fitted QueryRanker shows its inner model's fitted attributes.

``feature_importances_``, ``best_iteration_``, ``best_score_``,
``evals_result_``, ``booster_``, ... under the inner model's own names (and
XGBoost's ``best_iteration`` / ``best_score``), for LightGBM, XGBoost, CatBoost
and scikit-learn regressors, directly and through ``GridSearchCV``;
``n_features_in_`` / ``feature_names_in_`` describe ``X`` as given, and the
per-feature attributes are aligned with its columns (NaN at a query-id column).
"""

import copy
import pickle
from importlib.util import find_spec

import numpy as np
import pandas as pd
import pytest
import sklearn
from lightgbm import LGBMRanker
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.utils.validation import check_is_fitted
from xgboost import XGBRanker

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer
from sklearn_rank.model_selection import QueryKFold

needs_catboost = pytest.mark.skipif(find_spec("catboost") is None,
                                    reason="catboost is not installed")


def _lightgbm(**params):
    return LGBMRanker(**{"n_estimators": 8, "min_child_samples": 2, "n_jobs": 1,
                         "verbose": -1, **params})


def _xgboost(**params):
    return XGBRanker(**{"n_estimators": 8, "n_jobs": 1, **params})


def _catboost(**params):
    from catboost import CatBoostRanker

    return CatBoostRanker(**{"iterations": 8, "depth": 3, "thread_count": 1, "random_seed": 0,
                             "verbose": 0, "allow_writing_files": False, **params})


def _gbr():
    return GradientBoostingRegressor(n_estimators=8, random_state=0)


#: (inner model, the fitted attributes it has) for each library.
MODELS = {
    "lightgbm": (_lightgbm, ["feature_importances_", "booster_", "best_iteration_",
                             "best_score_", "evals_result_", "n_features_", "feature_name_",
                             "n_estimators_", "n_iter_", "objective_"]),
    "xgboost": (_xgboost, ["feature_importances_", "intercept_"]),
    "catboost": (_catboost, ["feature_importances_", "best_score_", "evals_result_",
                             "tree_count_", "feature_names_", "learning_rate_"]),
    "gradient_boosting": (_gbr, ["feature_importances_", "estimators_", "train_score_",
                                 "n_estimators_", "init_"]),
    "ridge": (Ridge, ["coef_", "intercept_"]),
}
PARAMS = [pytest.param(name, marks=needs_catboost if name == "catboost" else ())
          for name in MODELS]


def _data(seed=0, n_queries=25, n_features=4):
    """Rows in no query order; the label follows column 0 (the signal)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 12, n_queries)
    qid = np.repeat(rng.choice(np.arange(100, 1000), n_queries, replace=False), sizes)
    X = rng.normal(size=(qid.shape[0], n_features))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=qid.shape[0]), [0.0, 0.8, 1.5])
    perm = rng.permutation(qid.shape[0])
    return X[perm], y[perm], qid[perm]


def _equal(a, b):
    """Attribute values equal as values (arrays, dicts of results, models by identity)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a is b or a == b


def _catboost_importances(ranker, X, y, qid):
    """CatBoost's ranking losses leave ``feature_importances_`` unset (``array(None)``)
    until ``get_feature_importance`` is given the training data, rows grouped by
    query (the recipe of QueryRanker's docstring)."""
    from catboost import Pool

    assert ranker.feature_importances_.shape == ()  # CatBoost's own: array(None)
    order = np.argsort(qid, kind="stable")
    ranker.estimator_.get_feature_importance(
        Pool(X[order] if isinstance(X, np.ndarray) else X.iloc[order], y[order],
             group_id=qid[order]), type="LossFunctionChange")


def _fit(name, make, X, y, qid=None, **params):
    """QueryRanker(make()) fitted on X (its query-id column named by ``params``)."""
    ranker = QueryRanker(make(), **params).fit(X, y, qid=qid)
    if name == "catboost":
        features = X if qid is not None else X.drop(columns=params["qid_column"])
        _catboost_importances(ranker, features, y, ranker.query_ids(X) if qid is None else qid)
    return ranker


@pytest.mark.parametrize("name", PARAMS)
def test_fitted_attributes_are_the_inner_models_under_their_own_names(name):
    make, attributes = MODELS[name]
    X, y, qid = _data()
    ranker = _fit(name, make, X, y, qid)
    for attribute in attributes:
        assert hasattr(ranker, attribute), attribute
        _equal(getattr(ranker, attribute), getattr(ranker.estimator_, attribute))
    # no query-id column: the per-feature attribute is the inner model's array as it is
    per_feature = "coef_" if name == "ridge" else "feature_importances_"
    assert getattr(ranker, per_feature).shape == (X.shape[1],)
    assert ranker.n_features_in_ == X.shape[1]
    assert per_feature in dir(ranker)


@pytest.mark.parametrize("name", PARAMS)
@pytest.mark.parametrize("position", [0, 2, -1])
def test_per_feature_attributes_line_up_with_the_columns_of_X(name, position):
    """With a query-id column, ``feature_importances_`` (``coef_``) has one entry per
    column of X as given, NaN at the query-id column, and the inner model's numbers
    at the columns they belong to: the signal's importance is at its own name."""
    make, _ = MODELS[name]
    X, y, qid = _data()
    names = ["signal", "noise_a", "noise_b", "noise_c"]
    frame = pd.DataFrame(X, columns=names)
    frame.insert(position % (X.shape[1] + 1), "query", qid)
    ranker = _fit(name, make, frame, y, qid_column="query")
    per_feature = "coef_" if name == "ridge" else "feature_importances_"
    values = getattr(ranker, per_feature)
    at = frame.columns.get_loc("query")
    assert values.shape == (frame.shape[1],) == (ranker.n_features_in_,)
    assert np.isnan(values[at]) and np.isfinite(np.delete(values, at)).all()
    np.testing.assert_array_equal(np.delete(values, at),
                                  getattr(ranker.estimator_, per_feature))
    assert ranker.feature_names_in_.tolist() == frame.columns.tolist()
    strongest = ranker.feature_names_in_[np.nanargmax(np.abs(values))]
    assert strongest == "signal"
    # the same model as one fitted on the features alone, with qid= routed
    plain = _fit(name, make, frame.drop(columns="query"), y, qid)
    np.testing.assert_allclose(np.delete(values, at), getattr(plain, per_feature),
                               rtol=1e-12, atol=0)


def test_array_with_an_int_qid_column_gets_nan_at_that_position():
    X, y, qid = _data()
    Xq = np.insert(X, 1, qid, axis=1)
    ranker = QueryRanker(_lightgbm(), qid_column=1).fit(Xq, y)
    assert ranker.n_features_in_ == 5 and not hasattr(ranker, "feature_names_in_")
    importances = ranker.feature_importances_
    assert importances.dtype == np.float64 and np.isnan(importances[1])
    assert np.nanargmax(importances) == 0  # the signal, column 0
    np.testing.assert_array_equal(np.delete(importances, 1),
                                  ranker.estimator_.feature_importances_)
    # attributes that count or name features are the inner model's
    assert ranker.n_features_ == 4 and len(ranker.feature_name_) == 4


def test_xgboost_and_lightgbm_importance_types_go_through():
    X, y, qid = _data()
    for inner in (_lightgbm(importance_type="gain"), _xgboost(importance_type="weight")):
        ranker = QueryRanker(inner).fit(X, y, qid=qid)
        np.testing.assert_array_equal(ranker.feature_importances_,
                                      ranker.estimator_.feature_importances_)


# -- early stopping ---------------------------------------------------------


def _eval_data():
    X, y, qid = _data(seed=0, n_queries=40)
    X_val, y_val, qid_val = _data(seed=1, n_queries=20)
    # noise labels on the validation set: the validation score peaks early
    y_val = np.random.default_rng(2).permutation(y_val)
    return (X, y, qid), (X_val, y_val, qid_val)


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_lightgbm_early_stopping_attributes_match_lightgbm_fitted_by_hand():
    (X, y, qid), (X_val, y_val, qid_val) = _eval_data()
    ranker = QueryRanker(_lightgbm(n_estimators=60, early_stopping_round=3)).fit(
        X, y, qid=qid, eval_set=[(X_val, y_val)], eval_qid=[qid_val], eval_at=[5])
    order, order_val = np.argsort(qid, kind="stable"), np.argsort(qid_val, kind="stable")
    by_hand = _lightgbm(n_estimators=60, early_stopping_round=3).fit(
        X[order], y[order], group=np.unique(qid, return_counts=True)[1],
        eval_set=[(X_val[order_val], y_val[order_val])],
        eval_group=[np.unique(qid_val, return_counts=True)[1]], eval_at=[5])
    assert 1 <= ranker.best_iteration_ < 60
    assert ranker.best_iteration_ == by_hand.best_iteration_
    assert ranker.best_score_ == by_hand.best_score_
    assert ranker.evals_result_ == by_hand.evals_result_
    assert ranker.booster_ is ranker.estimator_.booster_
    assert ranker.booster_.current_iteration() == by_hand.booster_.current_iteration()
    np.testing.assert_array_equal(ranker.feature_importances_, by_hand.feature_importances_)


def test_xgboost_best_iteration_and_best_score_keep_xgboosts_names():
    (X, y, qid), (X_val, y_val, qid_val) = _eval_data()
    ranker = QueryRanker(_xgboost(n_estimators=60, early_stopping_rounds=3)).fit(
        X, y, qid=qid, eval_set=[(X_val, y_val)], eval_qid=[qid_val], verbose=False)
    inner = ranker.estimator_
    assert 0 <= ranker.best_iteration < 59
    assert ranker.best_iteration == inner.best_iteration
    assert ranker.best_score == inner.best_score
    assert ranker.evals_result_ == inner.evals_result_
    # without early stopping XGBoost defines neither: hasattr tells
    plain = QueryRanker(_xgboost()).fit(X, y, qid=qid)
    assert not hasattr(plain, "best_iteration") and not hasattr(plain, "best_score")
    with pytest.raises(AttributeError, match="XGBRanker has none.*early stopping"):
        plain.best_iteration  # noqa: B018


@needs_catboost
def test_catboost_early_stopping_attributes():
    (X, y, qid), (X_val, y_val, qid_val) = _eval_data()
    ranker = QueryRanker(_catboost(iterations=80, early_stopping_rounds=3,
                                   eval_metric="NDCG:top=5")).fit(
        X, y, qid=qid, eval_set=[(X_val, y_val)], eval_qid=[qid_val])
    inner = ranker.estimator_
    assert ranker.best_iteration_ == inner.best_iteration_ is not None
    assert ranker.tree_count_ == inner.tree_count_ < 80  # stopped early
    assert ranker.best_score_ == inner.best_score_
    assert ranker.evals_result_ == inner.evals_result_
    assert "validation" in ranker.evals_result_


def test_attributes_of_the_best_estimator_of_a_search_under_routing():
    (X, y, qid), (X_val, y_val, qid_val) = _eval_data()
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = QueryRanker(_lightgbm(n_estimators=60, early_stopping_round=3))
        ranker.set_fit_request(eval_set=True, eval_qid=True)
        search = GridSearchCV(ranker, {"estimator__num_leaves": [3, 7]},
                              scoring=make_ranking_scorer("ndcg@10"), cv=QueryKFold(3))
        search.fit(X, y, qid=qid, eval_set=[(X_val, y_val)], eval_qid=[qid_val])
    best = search.best_estimator_
    assert best.estimator_.num_leaves == search.best_params_["estimator__num_leaves"]
    assert best.best_iteration_ == best.estimator_.best_iteration_ >= 1
    assert best.evals_result_ == best.estimator_.evals_result_
    assert best.booster_ is best.estimator_.booster_
    np.testing.assert_array_equal(best.feature_importances_,
                                  best.estimator_.feature_importances_)
    assert best.n_features_in_ == X.shape[1] == search.n_features_in_


def test_search_over_a_frame_with_a_qid_column_without_routing():
    X, y, qid = _data()
    frame = pd.DataFrame(X, columns=["signal", "a", "b", "c"]).assign(qid=qid)
    search = GridSearchCV(QueryRanker(_xgboost()), {"estimator__max_depth": [2, 3]},
                          scoring=make_ranking_scorer("ndcg@10"), cv=QueryKFold(3))
    best = search.fit(frame, y).best_estimator_
    assert best.feature_names_in_.tolist() == ["signal", "a", "b", "c", "qid"]
    importances = pd.Series(best.feature_importances_, index=best.feature_names_in_)
    assert np.isnan(importances["qid"]) and importances.idxmax() == "signal"


# -- before fit, and what is not forwarded ----------------------------------


@pytest.mark.parametrize("attribute", ["feature_importances_", "best_iteration_", "booster_",
                                       "evals_result_", "coef_", "best_iteration"])
def test_unfitted_ranker_has_none_of_them(attribute):
    ranker = QueryRanker(_lightgbm())
    assert hasattr(ranker, attribute) is False
    with pytest.raises(NotFittedError, match=rf"QueryRanker instance is not fitted yet.*"
                                             rf"'{attribute}'.*Call 'fit'"):
        getattr(ranker, attribute)
    with pytest.raises(NotFittedError):
        check_is_fitted(ranker)


def test_catboost_unfitted_values_are_not_shown_before_fit():
    """CatBoost answers ``None`` for its fitted attributes before ``fit``; an
    unfitted QueryRanker raises instead."""
    pytest.importorskip("catboost")
    ranker = QueryRanker(_catboost())
    assert not hasattr(ranker, "feature_importances_")
    assert not hasattr(ranker, "best_iteration_")


@needs_catboost
def test_a_failed_fit_leaves_no_inner_model_to_answer():
    """CatBoost answers ``None`` for ``feature_importances_`` before its ``fit``: a
    QueryRanker whose inner fit failed must not show that as a fitted value."""
    from catboost import CatBoostError

    X, y, qid = _data()
    ranker = QueryRanker(_catboost(depth=100))
    with pytest.raises(CatBoostError):
        ranker.fit(X, y, qid=qid)
    assert not hasattr(ranker, "estimator_")
    assert not hasattr(ranker, "feature_importances_")


def test_only_fitted_attributes_are_forwarded():
    X, y, qid = _data()
    ranker = QueryRanker(_xgboost()).fit(X, y, qid=qid)
    assert ranker.estimator_.max_depth is None and ranker.estimator_.booster is None
    for name in ("max_depth", "booster", "n_estimators", "get_booster", "predict_proba",
                 "_Booster", "__array__"):
        assert not hasattr(ranker, name), name
    with pytest.raises(AttributeError, match="'QueryRanker' object has no attribute 'booster'"):
        ranker.booster  # noqa: B018
    with pytest.raises(AttributeError, match="XGBRanker has none"):
        ranker.booster_  # noqa: B018  (LightGBM's name; XGBoost's is get_booster())


class _NamesEverything(RegressorMixin, BaseEstimator):
    """An inner model that always sets ``feature_names_in_`` and ``n_features_in_``."""

    def fit(self, X, y):
        self.n_features_in_ = 99
        self.feature_names_in_ = np.array(["inner"], dtype=object)
        self.seen_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        return np.zeros(len(X))


def test_n_features_in_and_feature_names_in_are_the_rankers_own():
    X, y, qid = _data()
    Xq = np.column_stack([qid, X])
    ranker = QueryRanker(_NamesEverything(), qid_column=0).fit(Xq, y)
    assert ranker.seen_ == 4  # forwarded: the inner model saw 4 columns
    assert ranker.n_features_in_ == 5
    assert not hasattr(ranker, "feature_names_in_")
    frame = pd.DataFrame(Xq, columns=["qid", "a", "b", "c", "d"])
    ranker.fit(frame, y)
    assert ranker.feature_names_in_.tolist() == ["qid", "a", "b", "c", "d"]


# -- copies -----------------------------------------------------------------


def test_pickle_deepcopy_and_clone():
    X, y, qid = _data()
    ranker = QueryRanker(_lightgbm(), qid_column=0).fit(np.column_stack([qid, X]), y)
    for copied in (pickle.loads(pickle.dumps(ranker)), copy.deepcopy(ranker)):
        np.testing.assert_array_equal(copied.feature_importances_,
                                      ranker.feature_importances_)
        assert copied.best_iteration_ == ranker.best_iteration_
    assert not hasattr(clone(ranker), "feature_importances_")
    unfitted = pickle.loads(pickle.dumps(QueryRanker(_lightgbm())))
    assert not hasattr(unfitted, "feature_importances_")
