"""CatBoost inside QueryRanker: ``CatBoostRanker`` gets rows sorted by query with
sorted ``group_id`` (one per row), its query weights as ``group_weight`` and its
eval sets as ``Pool`` objects; ``CatBoostRegressor`` is a pointwise ranker.

Every model is checked against CatBoost fitted by hand on the same rows sorted by
query (one thread, a fixed seed: CatBoost is then deterministic), and the searches
against fold scores recomputed by hand.
"""

import functools

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer, ndcg_score
from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

catboost = pytest.importorskip("catboost")
from catboost import CatBoostRanker, CatBoostRegressor, Pool  # noqa: E402

N_SPLITS = 3
ATOL = 1e-12


def ranker(**params):
    return CatBoostRanker(iterations=12, depth=3, thread_count=1, random_seed=0, verbose=0,
                          allow_writing_files=False, **params)


def regressor(**params):
    return CatBoostRegressor(iterations=12, depth=3, thread_count=1, random_seed=0,
                             verbose=0, allow_writing_files=False, **params)


def make_data(n_queries=24, seed=0):
    """Graded labels 0..3 with signal; random query ids, rows NOT grouped by query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 14, size=n_queries)
    ids = rng.choice(np.arange(100, 1000), size=n_queries, replace=False)
    qid = np.repeat(ids, sizes)
    X = rng.normal(size=(qid.shape[0], 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=qid.shape[0]),
                    [0.3, 1.0, 1.6])
    perm = rng.permutation(qid.shape[0])
    return X[perm], y[perm], qid[perm]


@pytest.fixture(scope="module")
def data():
    return make_data()


def by_query(qid):
    """The stable order by query id, and the group ids 0, 1, 2, ... of the sorted rows."""
    order = np.argsort(qid, kind="stable")
    return order, np.unique(qid[order], return_inverse=True)[1]


class Recorder:
    """Record the arguments a CatBoost ``fit`` is called with (and fit for real)."""

    def __init__(self, monkeypatch, cls):
        self.calls = []
        original = cls.fit

        @functools.wraps(original)  # the signature QueryRanker reads stays CatBoost's
        def fit(model, X, y=None, **kwargs):
            self.calls.append((X, y, kwargs))
            return original(model, X, y, **kwargs)

        monkeypatch.setattr(cls, "fit", fit)


# ------------------------------------------------------------- what CatBoost is given


def test_ranker_gets_rows_sorted_by_query_and_sorted_group_id(data, monkeypatch):
    X, y, qid = data
    record = Recorder(monkeypatch, CatBoostRanker)
    model = QueryRanker(ranker()).fit(X, y, qid=qid)
    X_fit, y_fit, kwargs = record.calls[0]
    order, group_id = by_query(qid)
    np.testing.assert_array_equal(X_fit, X[order])
    np.testing.assert_array_equal(y_fit, y[order])
    np.testing.assert_array_equal(kwargs["group_id"], group_id)  # sorted, one per row
    assert set(kwargs) == {"group_id"}
    # the same model as CatBoost fitted by hand on the sorted rows
    by_hand = ranker().fit(X[order], y[order], group_id=group_id)
    np.testing.assert_array_equal(model.predict(X), by_hand.predict(X))


def test_sample_weight_becomes_the_query_weight(data, monkeypatch):
    """CatBoost's pairwise and groupwise losses ignore object weights ("Pairwise losses
    don't support object weights"): a query's weight, the mean of its rows', goes in
    ``group_weight``, repeated on every row of the query."""
    X, y, qid = data
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=y.shape[0])
    record = Recorder(monkeypatch, CatBoostRanker)
    model = QueryRanker(ranker()).fit(X, y, qid=qid, sample_weight=w)
    _, _, kwargs = record.calls[0]
    order, group_id = by_query(qid)
    mean = {q: w[qid == q].mean() for q in np.unique(qid)}
    expected = np.array([mean[q] for q in qid[order]])
    np.testing.assert_allclose(kwargs["group_weight"], expected, rtol=1e-15)
    assert "sample_weight" not in kwargs
    by_hand = ranker().fit(X[order], y[order], group_id=group_id, group_weight=expected)
    np.testing.assert_array_equal(model.predict(X), by_hand.predict(X))


@pytest.mark.parametrize("weighted", [False, True])
def test_eval_sets_become_pools_with_group_ids(data, monkeypatch, weighted):
    X, y, qid = data
    X_val, y_val, q_val = make_data(10, seed=5)
    w_val = np.random.default_rng(2).uniform(0.5, 2.0, size=y_val.shape[0])
    record = Recorder(monkeypatch, CatBoostRanker)
    model = QueryRanker(ranker(eval_metric="NDCG:top=5")).fit(
        X, y, qid=qid, eval_set=[(X_val, y_val), (X[:40], y[:40])],
        eval_qid=[q_val, qid[:40]], eval_sample_weight=[w_val, None] if weighted else None)
    _, _, kwargs = record.calls[0]
    pools = kwargs["eval_set"]
    assert [type(p) for p in pools] == [Pool, Pool]
    v_order, v_group = by_query(q_val)
    np.testing.assert_array_equal(pools[0].get_label(), y_val[v_order])
    np.testing.assert_array_equal(pools[0].get_group_id_hash(),
                                  Pool(X_val[v_order], y_val[v_order],
                                       group_id=v_group).get_group_id_hash())
    # the same training and validation curves as CatBoost given the Pools by hand
    order, group_id = by_query(qid)
    s_order, s_group = by_query(qid[:40])
    weight = ({"group_weight": np.array([w_val[q_val == q].mean() for q in q_val[v_order]])}
              if weighted else {})
    by_hand = ranker(eval_metric="NDCG:top=5").fit(
        X[order], y[order], group_id=group_id,
        eval_set=[Pool(X_val[v_order], y_val[v_order], group_id=v_group, **weight),
                  Pool(X[:40][s_order], y[:40][s_order], group_id=s_group)])
    assert model.estimator_.get_evals_result() == by_hand.get_evals_result()
    assert model.estimator_.get_best_iteration() == by_hand.get_best_iteration()
    np.testing.assert_array_equal(model.predict(X), by_hand.predict(X))


def test_early_stopping_on_a_mapped_eval_set(data):
    X, y, qid = data
    X_val, y_val, q_val = make_data(10, seed=5)
    base = ranker(eval_metric="NDCG:top=5").set_params(iterations=200, learning_rate=0.3,
                                                      early_stopping_rounds=3)
    model = QueryRanker(base).fit(X, y, qid=qid, eval_set=[(X_val, y_val)], eval_qid=[q_val])
    order, group_id = by_query(qid)
    v_order, v_group = by_query(q_val)
    by_hand = clone(base).fit(X[order], y[order], group_id=group_id,
                              eval_set=Pool(X_val[v_order], y_val[v_order], group_id=v_group))
    assert model.estimator_.tree_count_ == by_hand.tree_count_ < 200
    np.testing.assert_array_equal(model.predict(X), by_hand.predict(X))


def test_categorical_features_reach_the_eval_pools(data):
    X, y, qid = data
    X_val, y_val, q_val = make_data(10, seed=5)

    def frame(X, qid):
        return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "colour": np.where(X[:, 2] > 0, "red",
                                                                             "blue"),
                             "qid": qid})

    model = QueryRanker(ranker()).fit(frame(X, qid), y, eval_set=[(frame(X_val, q_val),
                                                                  y_val)],
                                      cat_features=["colour"])
    assert model.estimator_.get_cat_feature_indices() == [2]
    assert list(model.estimator_.get_evals_result()) == ["learn", "validation"]


def test_regressor_is_a_pointwise_ranker(data, monkeypatch):
    X, y, qid = data
    record = Recorder(monkeypatch, CatBoostRegressor)
    # without qid: the rows as given, nothing about queries
    model = QueryRanker(regressor()).fit(X, y)
    X_fit, y_fit, kwargs = record.calls[-1]
    assert X_fit is X and kwargs == {}
    np.testing.assert_array_equal(model.predict(X), regressor().fit(X, y).predict(X))
    # with qid (and a weighted eval set, without eval_qid: its rows as given): the rows
    # sorted by query, the row weights kept
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=y.shape[0])
    model = QueryRanker(regressor()).fit(X, y, qid=qid, sample_weight=w,
                                         eval_set=[(X[:30], y[:30])],
                                         eval_sample_weight=[w[:30]])
    _, _, kwargs = record.calls[-1]
    order, _ = by_query(qid)
    np.testing.assert_array_equal(kwargs["sample_weight"], w[order])
    assert set(kwargs) == {"sample_weight", "eval_set"}
    np.testing.assert_allclose(kwargs["eval_set"][0].get_weight(), w[:30], rtol=1e-6)
    by_hand = regressor().fit(X[order], y[order], sample_weight=w[order],
                              eval_set=Pool(X[:30], y[:30], weight=w[:30]))
    np.testing.assert_array_equal(model.predict(X), by_hand.predict(X))
    assert model.estimator_.get_evals_result() == by_hand.get_evals_result()
    assert model.score(X, y, qid=qid) == pytest.approx(
        ndcg_score(y, model.predict(X), qid=qid, k=10), abs=ATOL)


# ------------------------------------------------------------- labels and arguments


def test_ranking_losses_take_real_valued_labels(data):
    """CatBoost's ranking losses read labels as real numbers: graded fractions and
    negative labels are accepted, and kept (not rounded)."""
    X, y, qid = data
    y_real = y + np.linspace(-0.5, 0.5, y.shape[0])
    order, group_id = by_query(qid)
    for loss in ("YetiRank", "PairLogit", "QueryRMSE"):
        model = QueryRanker(ranker(loss_function=loss)).fit(X, y_real, qid=qid)
        by_hand = ranker(loss_function=loss).fit(X[order], y_real[order], group_id=group_id)
        np.testing.assert_array_equal(model.predict(X), by_hand.predict(X))


@pytest.mark.parametrize("loss", ["QuerySoftMax", "QuerySoftMax:beta=2"])
def test_query_softmax_refuses_negative_labels(data, loss):
    X, y, qid = data
    y_neg = y - 1
    with pytest.raises(ValueError, match=r"y has \d+ negative label\(s\) \(first: -1\), but "
                                         r"CatBoost's QuerySoftMax loss .* needs labels >= 0"):
        QueryRanker(ranker(loss_function=loss)).fit(X, y_neg, qid=qid)
    order, group_id = by_query(qid)  # the rule is CatBoost's own
    with pytest.raises(catboost.CatBoostError, match=r"Min target less than 0"):
        ranker(loss_function=loss).fit(X[order], y_neg[order], group_id=group_id)
    QueryRanker(ranker(loss_function=loss)).fit(X, y, qid=qid)  # labels >= 0: fine


def test_non_finite_labels_and_query_arguments_are_refused(data):
    X, y, qid = data
    y_nan = y.astype(float)
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match=r"y must hold finite numeric relevance labels"):
        QueryRanker(ranker()).fit(X, y_nan, qid=qid)
    with pytest.raises(ValueError, match=r"QueryRanker builds group_id from query ids; pass "
                                         r"qid=<one query id per row> instead of group_id="):
        QueryRanker(ranker()).fit(X, y, group_id=qid)
    with pytest.raises(ValueError, match=r"builds group_weight from query ids; pass "
                                         r"sample_weight=<one weight per row> instead"):
        QueryRanker(ranker()).fit(X, y, qid=qid, group_weight=np.ones(y.shape[0]))
    with pytest.raises(ValueError, match=r"QueryRanker\.fit needs the query id of each row"):
        QueryRanker(ranker()).fit(X, y)


# ------------------------------------------------------------- in a search


def recompute(estimator, params, X, y, qid, folds):
    """Each fold's NDCG@10 by hand: the estimator with ``params`` fitted on the fold's
    training rows (query ids given explicitly), scored on its test rows."""
    scores = []
    for train, test in folds:
        model = clone(estimator).set_params(**params)
        rows = (lambda Z, r: Z.iloc[r]) if hasattr(X, "iloc") else (lambda Z, r: Z[r])
        model.fit(rows(X, train), y[train], qid=qid[train])
        scores.append(ndcg_score(y[test], model.predict(rows(X, test)), qid=qid[test], k=10))
    return np.array(scores)


@pytest.mark.parametrize("path", ["routing", "qid column"])
@pytest.mark.parametrize("make", [ranker, regressor], ids=["CatBoostRanker",
                                                           "CatBoostRegressor"])
def test_grid_search_fold_scores_recomputed_by_hand(data, make, path):
    X, y, qid = data
    estimator = QueryRanker(make())
    grid = {"estimator__depth": [2, 4]}
    cv = QueryKFold(N_SPLITS)
    search = GridSearchCV(estimator, grid, scoring=make_ranking_scorer("ndcg@10"), cv=cv,
                          error_score="raise")
    if path == "routing":
        X_in, fit_kwargs = X, {"qid": qid}
    else:  # routing off: a DataFrame with a 'qid' column, read by all three
        X_in = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(qid=qid)
        fit_kwargs = {}
    with sklearn.config_context(enable_metadata_routing=path == "routing"):
        search.fit(X_in, y, **fit_kwargs)
    folds = list(cv.split(X, y, qid=qid))
    for train, test in folds:
        assert not set(qid[train]) & set(qid[test])
    res = search.cv_results_
    for i, params in enumerate(res["params"]):
        expected = recompute(estimator, params, X_in, y, qid, folds)
        actual = [res[f"split{k}_test_score"][i] for k in range(N_SPLITS)]
        np.testing.assert_allclose(actual, expected, rtol=0, atol=ATOL)
    best = clone(estimator).set_params(**search.best_params_).fit(X_in, y, qid=qid)
    np.testing.assert_array_equal(search.predict(X_in), best.predict(X_in))
    assert 0.5 < search.best_score_ < 1  # the models learn something


def test_cross_validate_ranker_wraps_a_bare_catboost_ranker(data):
    X, y, qid = data
    res = cross_validate_ranker(ranker(), X, y, qid=qid, cv=N_SPLITS, return_estimator=True,
                                error_score="raise")
    assert all(isinstance(est, QueryRanker) for est in res["estimator"])
    folds = list(QueryKFold(N_SPLITS).split(qid=qid))
    np.testing.assert_allclose(res["test_score"],
                               recompute(QueryRanker(ranker()), {}, X, y, qid, folds),
                               rtol=0, atol=ATOL)
