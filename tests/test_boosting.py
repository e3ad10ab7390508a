"""lightgbm_eval_metric / xgboost_eval_metric report the exact metric at every iteration."""

import numpy as np
import pytest

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import (
    evaluate,
    lightgbm_eval_metric,
    parse_metric,
    xgboost_eval_metric,
)

SPECS = ["ndcg@5", "ndcg(gain='linear', discount='classic')@3", "dcg(ties='average')@4-"]


def _data(seed, n_queries):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(1, 20, n_queries))
    X = rng.normal(size=(qid.shape[0], 5))
    y = np.clip(np.round(X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=qid.shape[0])), 0, 4)
    y[qid == 1] = 0  # a query without relevant documents
    return X, y.astype(int), qid


@pytest.mark.parametrize("spec", SPECS)
def test_lightgbm_reports_the_metric_of_each_iteration(spec):
    from lightgbm import LGBMRanker

    X, y, qid = _data(0, 40)
    Xv, yv, qv = _data(1, 15)
    n_iter = 12
    model = QueryRanker(LGBMRanker(n_estimators=n_iter, min_child_samples=3, verbose=-1,
                                   n_jobs=1, metric="None"))
    model.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv],
              eval_metric=lightgbm_eval_metric(spec))
    history = model.estimator_.evals_result_["valid_0"][str(parse_metric(spec))]
    assert len(history) == n_iter
    for i in range(1, n_iter + 1):
        pred = model.estimator_.predict(Xv, num_iteration=i)
        expected = evaluate(yv, pred, qid=qv, metrics=[spec]).mean[spec]
        assert history[i - 1] == pytest.approx(expected, abs=1e-12), i
    assert len(set(np.round(history, 12))) > 1  # the metric moves: the check is not vacuous


def test_lightgbm_early_stopping_on_the_metric_with_weights():
    import lightgbm
    from lightgbm import LGBMRanker

    X, y, qid = _data(2, 40)
    Xv, yv, qv = _data(3, 15)
    wv = np.random.default_rng(4).random(len(yv)) + 0.5
    model = QueryRanker(LGBMRanker(n_estimators=300, learning_rate=0.5, min_child_samples=3,
                                   verbose=-1, n_jobs=1, metric="None"))
    model.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_sample_weight=[wv],
              eval_metric=lightgbm_eval_metric("ndcg@5"),
              callbacks=[lightgbm.early_stopping(5, verbose=False)])
    inner = model.estimator_
    assert inner.best_iteration_ < 300
    best = inner.best_score_["valid_0"]["ndcg@5"]
    pred = inner.predict(Xv, num_iteration=inner.best_iteration_)
    # the weights of the eval set are used (float32 in LightGBM)
    expected = evaluate(yv, pred, qid=qv, metrics=["ndcg@5"],
                        sample_weight=wv.astype(np.float32)).mean["ndcg@5"]
    assert best == pytest.approx(expected, abs=1e-9)


def test_lightgbm_metric_without_groups_errors():
    metric = lightgbm_eval_metric("ndcg@5")
    with pytest.raises(ValueError, match=r"needs query groups: use it with LGBMRanker"):
        metric(np.array([1, 0]), np.array([0.1, 0.2]), None, None)
    assert repr(metric) == "lightgbm_eval_metric('ndcg@5')"
    assert str(lightgbm_eval_metric("ndcg", k=3).spec) == "ndcg@3"


@pytest.mark.parametrize("spec", SPECS)
def test_xgboost_train_reports_the_metric_of_each_iteration(spec):
    import xgboost as xgb

    X, y, qid = _data(5, 40)
    Xv, yv, qv = _data(6, 15)
    dtrain = xgb.DMatrix(X, y, qid=qid)
    dvalid = xgb.DMatrix(Xv, yv, qid=qv)
    history = {}
    booster = xgb.train({"objective": "rank:ndcg", "eta": 0.3, "disable_default_eval_metric": 1,
                         "nthread": 1}, dtrain, num_boost_round=8, evals=[(dvalid, "valid")],
                        custom_metric=xgboost_eval_metric(spec), evals_result=history,
                        verbose_eval=False)
    values = history["valid"][str(parse_metric(spec)).replace(" ", "")]
    for i in range(1, 9):
        pred = booster.predict(dvalid, iteration_range=(0, i))
        expected = evaluate(yv, pred, qid=qv, metrics=[spec]).mean[spec]
        # XGBoost logs six significant digits.
        assert values[i - 1] == pytest.approx(expected, rel=1e-5, abs=1e-6), i
    assert len(set(values)) > 1


def test_xgbranker_calls_the_metric_per_query():
    from xgboost import XGBRanker

    X, y, qid = _data(7, 30)
    Xv, yv, qv = _data(8, 12)
    model = XGBRanker(n_estimators=4, eval_metric=xgboost_eval_metric("ndcg(gain='linear')@5"),
                      n_jobs=1)
    model.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], verbose=False)
    reported = model.evals_result()["validation_0"]["ndcg(gain='linear')@5"][-1]
    per_query = evaluate(yv, model.predict(Xv), qid=qv,
                         metrics=["ndcg(gain='linear')@5"]).per_query["ndcg(gain='linear')@5"]
    # XGBoost scores single-document queries 1.0 itself, and averages the
    # per-query values weighted by query length (it takes group sizes for weights).
    sizes = np.bincount(qv)
    assert (sizes == 1).any()
    per_query[sizes == 1] = 1.0
    assert reported == pytest.approx(np.average(per_query, weights=sizes), rel=1e-5)
    assert abs(reported - per_query.mean()) > 1e-3
