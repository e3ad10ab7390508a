"""Position-debiased learning to rank: ``QueryRanker.fit(position=)`` and IPW labels.

XGBoost reads display positions from the order of a query's rows, so QueryRanker
must hand them over sorted by query and then by position; LightGBM reads
``Dataset(position=)``, which its scikit-learn ``fit`` cannot take, so the fit
must equal LightGBM's own ``train`` on such a Dataset. Models that would ignore
positions refuse them. ``ipw_labels`` with ``dcg(gain='linear')`` is checked
against a hand-written formula, the exact expectation over every click outcome,
and a seeded simulation.
"""

import itertools

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import sklearn
from lightgbm import LGBMRanker
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from xgboost import XGBRanker

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import (
    dcg_score,
    evaluate,
    ipw_labels,
    make_click_scorer,
    make_ranking_scorer,
)
from sklearn_rank.model_selection import QueryKFold

N_QUERIES, PER_QUERY = 24, 8
LGBM_PARAMS = dict(n_estimators=6, num_leaves=7, min_child_samples=2, verbose=-1,
                   n_jobs=1)


@pytest.fixture
def clicks():
    """Click-like data: each query shows 8 rows at positions 1..8 (rows shuffled),
    clicks more likely at the top."""
    rng = np.random.default_rng(0)
    n = N_QUERIES * PER_QUERY
    X = rng.normal(size=(n, 4))
    qid = np.repeat(np.arange(N_QUERIES), PER_QUERY)
    position = np.tile(np.arange(1, PER_QUERY + 1), N_QUERIES)
    relevance = 1 / (1 + np.exp(-2 * X[:, 0]))
    y = (rng.random(n) < relevance / position).astype(int)
    perm = rng.permutation(n)
    return X[perm], y[perm], qid[perm], position[perm]


def presorted(X, y, qid, position):
    """The rows sorted by query, then position: what the inner models must see."""
    order = np.lexsort((position, qid))
    return X[order], y[order], qid[order], position[order]


# --------------------------------------------------------------------------- XGBoost


class SpyXGBRanker(XGBRanker):
    """Records the rows and query ids it is fitted on."""

    def fit(self, X, y, *, qid=None, **kwargs):
        type(self).seen = (np.asarray(X).copy(), np.asarray(qid).copy())
        return super().fit(X, y, qid=qid, **kwargs)


def test_xgboost_gets_rows_sorted_by_query_then_position(clicks):
    X, y, qid, position = clicks
    row = np.arange(X.shape[0], dtype=float)[:, None]  # a column naming each row
    QueryRanker(SpyXGBRanker(n_estimators=2, lambdarank_unbiased=True)).fit(
        np.hstack([X, row]), y, qid=qid, position=position)
    seen_X, seen_qid = SpyXGBRanker.seen
    rows = seen_X[:, -1].astype(int)
    assert sorted(rows) == list(range(X.shape[0]))
    np.testing.assert_array_equal(np.diff(seen_qid) >= 0, True)
    np.testing.assert_array_equal(qid[rows], np.sort(qid))
    for q in np.unique(qid):
        np.testing.assert_array_equal(position[rows][qid[rows] == q],
                                      np.arange(1, PER_QUERY + 1))


def test_xgboost_unbiased_equals_xgboost_on_presorted_rows(clicks):
    X, y, qid, position = clicks
    params = dict(n_estimators=5, lambdarank_unbiased=True, max_depth=3, n_jobs=1)
    ours = QueryRanker(XGBRanker(**params)).fit(X, y, qid=qid, position=position)
    Xs, ys, qs, _ = presorted(X, y, qid, position)
    direct = XGBRanker(**params).fit(Xs, ys, qid=qs)
    np.testing.assert_allclose(ours.predict(X), direct.predict(X), rtol=0, atol=0)
    unsorted = QueryRanker(XGBRanker(**params)).fit(X, y, qid=qid)  # positions lost
    assert np.abs(unsorted.predict(X) - direct.predict(X)).max() > 1e-6


def test_xgboost_refuses_positions_it_would_ignore(clicks):
    X, y, qid, position = clicks
    with pytest.raises(ValueError, match="lambdarank_unbiased=True"):
        QueryRanker(XGBRanker(n_estimators=2)).fit(X, y, qid=qid, position=position)


def test_xgboost_refuses_a_position_twice_in_a_query(clicks):
    X, y, qid, position = clicks
    position = position.copy()
    first = np.flatnonzero(qid == qid[0])
    position[first[:2]] = 3
    with pytest.raises(ValueError, match="appears twice in one query.*one qid per"):
        QueryRanker(XGBRanker(n_estimators=2, lambdarank_unbiased=True)).fit(
            X, y, qid=qid, position=position)


# --------------------------------------------------------------------------- LightGBM


def test_lightgbm_position_equals_lightgbm_dataset_api(clicks):
    X, y, qid, position = clicks
    # Presorted rows: LightGBM's result depends on the order of a query's rows.
    Xs, ys, qs, ps = presorted(X, y, qid, position)
    ours = QueryRanker(LGBMRanker(**LGBM_PARAMS)).fit(Xs, ys, qid=qs, position=ps)
    train_set = lgb.Dataset(Xs, label=ys, group=np.full(N_QUERIES, PER_QUERY),
                            position=ps)
    booster = lgb.train(dict(objective="lambdarank", num_leaves=7, min_child_samples=2,
                             verbose=-1, num_threads=1), train_set, num_boost_round=6)
    np.testing.assert_allclose(ours.predict(X), booster.predict(X), rtol=1e-12)
    assert isinstance(ours.estimator_, LGBMRanker)
    assert ours.estimator_.booster_.num_trees() == 6
    assert ours.estimator_.n_features_in_ == 4
    assert ours.estimator_.feature_importances_.sum() > 0
    without = QueryRanker(LGBMRanker(**LGBM_PARAMS)).fit(Xs, ys, qid=qs)
    assert np.abs(without.predict(X) - booster.predict(X)).max() > 1e-6


def test_lightgbm_position_with_early_stopping(clicks):
    X, y, qid, position = clicks
    ranker = QueryRanker(LGBMRanker(**{**LGBM_PARAMS, "n_estimators": 50},
                                    early_stopping_round=2))
    ranker.fit(X, y, qid=qid, position=position, eval_set=[(X, y)], eval_qid=[qid],
               eval_at=[3])
    assert "ndcg@3" in ranker.estimator_.evals_result_["valid_0"]
    assert 1 <= ranker.estimator_.best_iteration_ <= 50


def test_lightgbm_position_refuses_other_fit_arguments(clicks):
    X, y, qid, position = clicks
    with pytest.raises(ValueError, match="drop init_score"):
        QueryRanker(LGBMRanker(**LGBM_PARAMS)).fit(X, y, qid=qid, position=position,
                                                   init_score=np.zeros(len(y)))
    with pytest.raises(ValueError, match="'lambdarank' objective"):
        QueryRanker(LGBMRanker(**LGBM_PARAMS, objective="rank_xendcg")).fit(
            X, y, qid=qid, position=position)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("bad, match", [
    (lambda p: p - 2, "not non-negative integers"),
    (lambda p: p + 0.5, "not non-negative integers"),
    (lambda p: p[:-1], "one display position per row"),
    (lambda p: p.astype(str), "integer display positions"),
    (lambda p: set(p), "no row order"),
])
def test_bad_positions_are_refused(clicks, bad, match):
    X, y, qid, position = clicks
    with pytest.raises(ValueError, match=match):
        QueryRanker(LGBMRanker(**LGBM_PARAMS)).fit(X, y, qid=qid, position=bad(position))


def test_models_without_positions_refuse_them(clicks):
    X, y, qid, position = clicks
    with pytest.raises(ValueError, match="Ridge does not learn from display positions.*"
                                         "lambdarank_unbiased=True.*LGBMRanker"):
        QueryRanker(Ridge()).fit(X, y, qid=qid, position=position)
    catboost = pytest.importorskip("catboost")
    with pytest.raises(ValueError, match="CatBoostRanker does not learn from display"):
        QueryRanker(catboost.CatBoostRanker(iterations=2, verbose=0)).fit(
            X, y, qid=qid, position=position)


# --------------------------------------------------------------------------- routing


@pytest.mark.parametrize("on", [True, False])
def test_position_reaches_the_model_through_grid_search(clicks, on):
    X, y, qid, position = clicks
    search = GridSearchCV(QueryRanker(LGBMRanker(**LGBM_PARAMS)),
                          {"estimator__num_leaves": [3, 7]}, cv=QueryKFold(3),
                          scoring=make_ranking_scorer("ndcg@5"), error_score="raise")
    # Routing off, the ids come from a DataFrame 'qid' column; position is a fit
    # parameter that the search splits by rows either way.
    X_in = X if on else pd.DataFrame(X).set_axis(list("abcd"), axis=1).assign(qid=qid)
    ids = {"qid": qid} if on else {}
    with sklearn.config_context(enable_metadata_routing=on):
        search.fit(X_in, y, **ids, position=position)
    params = {**LGBM_PARAMS, "num_leaves": search.best_params_["estimator__num_leaves"]}
    by_hand = QueryRanker(LGBMRanker(**params)).fit(X, y, qid=qid, position=position)
    np.testing.assert_allclose(search.predict(X_in), by_hand.predict(X), rtol=1e-12)
    without = QueryRanker(LGBMRanker(**params)).fit(X, y, qid=qid)
    assert np.abs(without.predict(X) - by_hand.predict(X)).max() > 1e-6


def test_routing_without_position_still_works(clicks):
    X, y, qid, _ = clicks
    search = GridSearchCV(QueryRanker(LGBMRanker(**LGBM_PARAMS)),
                          {"estimator__num_leaves": [3]}, cv=QueryKFold(2),
                          scoring=make_ranking_scorer("ndcg@5"), error_score="raise")
    with sklearn.config_context(enable_metadata_routing=True):
        search.fit(X, y, qid=qid)
        request = QueryRanker(Ridge()).get_metadata_routing()
    assert request.fit.requests["position"] is True
    assert request.fit.requests["qid"] is True


# --------------------------------------------------------------------------- IPW


def brute_force_dcg(labels, scores, k):
    """sum over the top k of the ranking by decreasing score of label / log2(rank + 1)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return sum(labels[i] / np.log2(r + 2) for r, i in enumerate(order[:k]))


def test_ipw_dcg_equals_the_hand_written_estimator():
    rng = np.random.default_rng(1)
    n_q, per = 30, 7
    qid = np.repeat(np.arange(n_q), per)
    position = np.tile(np.arange(1, per + 1), n_q)
    clicks = (rng.random(n_q * per) < 0.3).astype(int)
    scores = rng.permutation(n_q * per).astype(float)  # no ties
    labels = ipw_labels(clicks, 1 / position ** 0.8)
    ev = evaluate(labels, scores, qid=qid, metrics=["dcg(gain='linear')@5"])
    expected = [brute_force_dcg(list(clicks[qid == q] * position[qid == q] ** 0.8),
                                list(scores[qid == q]), 5) for q in range(n_q)]
    np.testing.assert_allclose(ev.per_query["dcg(gain='linear')@5"], expected, rtol=1e-12)
    assert ev.mean["dcg(gain='linear')@5"] == pytest.approx(np.mean(expected), rel=1e-12)


def _click_model():
    """One query: true relevance (click probability once examined), the logged
    positions and the propensity 1 / position**eta of each document."""
    relevance = np.array([0.9, 0.1, 0.6, 0.3, 0.0, 0.75])
    shown_at = np.array([3, 1, 6, 2, 4, 5])  # the logging ranker's positions
    propensity = 1 / shown_at ** 1.2
    new_scores = np.array([5.0, 1.0, 4.0, 3.0, 0.0, 2.0])  # a ranking to evaluate
    return relevance, propensity, new_scores


def test_ipw_dcg_is_unbiased_exactly_over_every_click_outcome():
    """E[IPW DCG] over all 2**6 click vectors equals the DCG on true relevance;
    the clicks themselves give a biased DCG."""
    relevance, propensity, scores = _click_model()
    p_click = relevance * propensity
    qid = np.zeros(len(scores))
    expected_ipw = expected_naive = 0.0
    for outcome in itertools.product([0, 1], repeat=len(scores)):
        c = np.array(outcome)
        prob = np.prod(np.where(c == 1, p_click, 1 - p_click))
        expected_ipw += prob * dcg_score(ipw_labels(c, propensity), scores, qid=qid,
                                         gain="linear", k=4)
        expected_naive += prob * dcg_score(c, scores, qid=qid, gain="linear", k=4)
    truth = brute_force_dcg(relevance, scores, 4)
    assert expected_ipw == pytest.approx(truth, rel=1e-12)
    assert abs(expected_naive - truth) > 0.5


def test_ipw_dcg_simulated_logs_converge_to_the_true_dcg():
    """The mean over 20 000 seeded simulated logs lies within 4 standard errors of
    the true DCG@4 (a seeded draw: 4 SE fails by chance with probability ~6e-5)."""
    relevance, propensity, scores = _click_model()
    rng = np.random.default_rng(2)
    n_logs, n = 20_000, len(scores)
    clicks = (rng.random((n_logs, n)) < relevance * propensity).astype(int)
    qid = np.repeat(np.arange(n_logs), n)
    labels = ipw_labels(clicks.ravel(), np.tile(propensity, n_logs))
    ev = evaluate(labels, np.tile(scores, n_logs), qid=qid,
                  metrics=["dcg(gain='linear')@4"])
    values = np.asarray(ev.per_query["dcg(gain='linear')@4"], dtype=float)
    truth = brute_force_dcg(relevance, scores, 4)
    se = values.std(ddof=1) / np.sqrt(n_logs)
    assert abs(values.mean() - truth) < 4 * se
    assert ev.mean["dcg(gain='linear')@4"] == pytest.approx(values.mean(), rel=1e-12)


@pytest.mark.parametrize("clicks, propensity, match", [
    ([1, 0], [0.5], "clicks has 2 rows but propensity has 1"),
    ([1, -1], [0.5, 0.5], "negative or not finite"),
    ([1, 0], [0.0, 0.5], r"propensity must be in \(0, 1\]; row 0"),
    ([1, 0], [0.5, 1.5], r"propensity must be in \(0, 1\]; row 1"),
    ([[1, 0]], [[0.5, 0.5]], "1-D numeric"),
])
def test_ipw_labels_refuses_bad_input(clicks, propensity, match):
    with pytest.raises(ValueError, match=match):
        ipw_labels(clicks, propensity)


# --------------------------------------------------------------------------- click scorer


def inverse_position(p):
    return 1.0 / np.asarray(p)


def test_click_scorer_scores_the_search_on_ipw_clicks(clicks):
    """Routed qid and position: each fold's score is DCG@5 (linear gain) of the
    clicks over the propensity of their position (1 / position: clicks times
    position), and QueryRanker is fitted with the positions."""
    X, y, qid, position = clicks
    cv = QueryKFold(3)
    scorer = make_click_scorer("dcg(gain='linear')@5", propensity=inverse_position)
    search = GridSearchCV(QueryRanker(LGBMRanker(**LGBM_PARAMS)),
                          {"estimator__num_leaves": [3, 7]}, cv=cv, scoring=scorer,
                          error_score="raise")
    with sklearn.config_context(enable_metadata_routing=True):
        search.fit(X, y, qid=qid, position=position)
    for k, (train, test) in enumerate(cv.split(X, y, qid=qid)):
        for i, leaves in enumerate([3, 7]):
            model = QueryRanker(LGBMRanker(**{**LGBM_PARAMS, "num_leaves": leaves}))
            model.fit(X[train], y[train], qid=qid[train], position=position[train])
            scores = model.predict(X[test])
            # LightGBM's scores tie: ties averaged, as the package's metrics do.
            expected = dcg_score(y[test] * position[test], scores, qid=qid[test],
                                 gain="linear", k=5)
            got = search.cv_results_[f"split{k}_test_score"][i]
            assert got == pytest.approx(expected, rel=1e-12)


def test_click_scorer_takes_a_propensity_table(clicks):
    X, y, qid, position = clicks
    ranker = QueryRanker(Ridge()).fit(X, y, qid=qid)
    table = np.r_[np.nan, 1.0 / np.arange(1, PER_QUERY + 1)]  # propensity[p], p = 1..8
    by_table = make_click_scorer(propensity=table)(ranker, X, y, qid=qid, position=position)
    by_function = make_click_scorer(propensity=inverse_position)(ranker, X, y, qid=qid,
                                                                 position=position)
    assert by_table == pytest.approx(by_function, rel=1e-12)
    expected = dcg_score(y * position, ranker.predict(X), qid=qid, gain="linear", k=10)
    assert by_table == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="position 8 has no entry"):
        make_click_scorer(propensity=table[:8])(ranker, X, y, qid=qid, position=position)


def test_click_scorer_refuses_biased_metrics_and_missing_positions(clicks):
    X, y, qid, _ = clicks
    for metric in ["ndcg(gain='linear')@10", "dcg@10", "precision@5"]:
        with pytest.raises(ValueError, match="dcg or cg with gain='linear'"):
            make_click_scorer(metric, propensity=inverse_position)
    ranker = QueryRanker(Ridge()).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="needs the display position of each row"):
        make_click_scorer(propensity=inverse_position)(ranker, X, y, qid=qid)
