"""make_ranking_scorer: specs, query ids from routing or from the estimator, routing."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import (
    RankingScorer,
    dcg_score,
    evaluate,
    make_ranking_scorer,
    ndcg_score,
)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(12), rng.integers(2, 9, 12))
    X = rng.normal(size=(qid.shape[0], 3))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=qid.shape[0])), 0, 3)
    return X, y, qid


def test_scorer_equals_the_metric_on_predictions():
    X, y, qid = _data()
    model = QueryRanker(Ridge()).fit(X, y)
    pred = model.predict(X)
    for spec in ("ndcg@10", "ndcg(gain='linear', discount='classic')@3", "dcg@5-", "cg"):
        expected = evaluate(y, pred, qid=qid, metrics=[spec]).mean[spec]
        assert make_ranking_scorer(spec)(model, X, y, qid=qid) == expected
    weights = np.random.default_rng(1).random(qid.shape[0])
    assert make_ranking_scorer("ndcg@3")(model, X, y, qid=qid, sample_weight=weights) == (
        ndcg_score(y, pred, qid=qid, k=3, sample_weight=weights))


def test_scorer_from_metric_function_and_options():
    scorer = make_ranking_scorer(ndcg_score, k=5, gain="linear")
    assert str(scorer.spec) == "ndcg(gain='linear')@5"
    assert str(make_ranking_scorer(dcg_score).spec) == "dcg"
    assert str(make_ranking_scorer("ndcg@10", convention="lightgbm").spec) == (
        "ndcg(convention='lightgbm')@10")
    assert isinstance(scorer, RankingScorer)
    with pytest.raises(TypeError, match=r"metric must be a metric spec"):
        make_ranking_scorer(len)
    with pytest.raises(ValueError, match=r"Unknown metric 'ndgc'\. Did you mean 'ndcg'\?"):
        make_ranking_scorer("ndgc@10")
    with pytest.raises(ValueError, match=r"'k' parameter of make_ranking_scorer"):
        make_ranking_scorer(ndcg_score, k=0)


def test_repr_and_pickle():
    scorer = make_ranking_scorer("ndcg(gain='linear')@5")
    assert repr(scorer) == "make_ranking_scorer(\"ndcg(gain='linear')@5\")"
    again = pickle.loads(pickle.dumps(scorer))
    assert again.spec == scorer.spec
    X, y, qid = _data()
    model = QueryRanker(Ridge()).fit(X, y)
    assert again(model, X, y, qid=qid) == scorer(model, X, y, qid=qid)


def test_query_ids_from_the_estimator_column_without_routing():
    import pandas as pd
    X, y, qid = _data()
    expected = ndcg_score(y, Ridge().fit(X, y).predict(X), qid=qid, k=10)
    scorer = make_ranking_scorer("ndcg@10")
    # an array column named by QueryRanker(qid_column=j)
    with_col = np.column_stack([qid, X])
    model = QueryRanker(Ridge(), qid_column=0).fit(with_col, y)
    assert scorer(model, with_col, y) == pytest.approx(expected, abs=1e-12)
    # ... also when QueryRanker is the last step of a pipeline: the column is read from X
    # as QueryRanker sees it, so a scaler that scales the ids makes them unreadable
    # (tests/test_trust_pipelines.py covers the pipeline shapes).
    pipe = make_pipeline(StandardScaler(), QueryRanker(Ridge(), qid_column=0)).fit(with_col, y)
    with pytest.raises(ValueError, match=r"column 0 of X holds non-integer numbers"):
        scorer(pipe, with_col, y)
    # a DataFrame column named qid
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(qid=qid)
    model = QueryRanker(Ridge()).fit(frame, y)
    assert scorer(model, frame, y) == pytest.approx(expected, abs=1e-12)


def test_no_query_ids_names_both_fixes():
    X, y, _ = _data()
    model = QueryRanker(Ridge()).fit(X, y)
    with pytest.raises(ValueError, match=r"The scorer for 'ndcg@10' needs the query id of each "
                                         r"row of X\. Either enable metadata routing.*or give X "
                                         r"a query-id column"):
        make_ranking_scorer("ndcg@10")(model, X, y)


def test_requests_qid_by_default_and_sample_weight_on_demand():
    scorer = make_ranking_scorer("ndcg@10")
    requests = scorer.get_metadata_routing().score.requests
    assert requests == {"qid": True, "sample_weight": None}
    with pytest.raises(RuntimeError, match=r"only available when metadata routing is enabled"):
        scorer.set_score_request(sample_weight=True)
    with sklearn.config_context(enable_metadata_routing=True):
        assert scorer.set_score_request(sample_weight=True) is scorer
        requests = scorer.get_metadata_routing().score.requests
    assert requests == {"qid": True, "sample_weight": True}


def test_same_numbers_as_sklearn_make_scorer_under_routing():
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import cross_validate

    from sklearn_rank.model_selection import QueryKFold

    X, y, qid = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        theirs = make_scorer(ndcg_score, k=10).set_score_request(qid=True)
        res = cross_validate(QueryRanker(Ridge()), X, y, params={"qid": qid}, cv=QueryKFold(3),
                             scoring={"ours": make_ranking_scorer("ndcg@10"), "theirs": theirs})
    np.testing.assert_array_equal(res["test_ours"], res["test_theirs"])
