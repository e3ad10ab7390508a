"""make_ranking_scorer: specs, query ids from routing or from the estimator, routing."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, TransformerMixin
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
    parse_metric,
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


# ------------------------------------------------- several metrics, one prediction

SPECS = ["ndcg@10", "ndcg(gain='linear', discount='classic')@3", "map@5", "mrr", "err@4"]


class _CountingRidge(Ridge):
    """Ridge that counts its predict calls over every clone (a class-level count)."""

    predictions = 0

    def predict(self, X):
        type(self).predictions += 1
        return super().predict(X)


class _CountingStep(TransformerMixin, BaseEstimator):
    """Passes X through and counts transform calls over every clone (those of scoring:
    fitting goes through fit_transform)."""

    transforms = 0

    def fit(self, X, y=None):
        return self

    def fit_transform(self, X, y=None):
        return X

    def transform(self, X):
        type(self).transforms += 1
        return X


def _paths():
    """``(estimator, X, cv params, routing on)`` for each way query ids reach a scorer."""
    import pandas as pd
    X, y, qid = _data(3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(qid=qid)
    with_col = np.column_stack([qid, X])
    return {
        "routing": (QueryRanker(_CountingRidge()), X, {"params": {"qid": qid}}, True),
        "array column": (QueryRanker(_CountingRidge(), qid_column=0), with_col,
                         {"groups": qid}, False),
        "frame column": (QueryRanker(_CountingRidge()), frame, {}, False),
        "pipeline column": (make_pipeline(_CountingStep(),
                                          QueryRanker(_CountingRidge(), qid_column=0)),
                            with_col, {"groups": qid}, False),
    }, y, qid


@pytest.mark.parametrize("path", ["routing", "array column", "frame column",
                                  "pipeline column"])
def test_several_metrics_predict_once_per_fold(path):
    """One prediction (and, in a pipeline, one transform of X) per fold for all the
    metrics, and exactly the scores of the single-metric scorers."""
    from sklearn.model_selection import cross_validate

    from sklearn_rank.model_selection import QueryKFold, ranking_scoring

    paths, y, qid = _paths()
    estimator, X, params, on = paths[path]
    scoring = ranking_scoring(SPECS)
    assert callable(scoring) and not isinstance(scoring, dict)
    results = {}
    for form, how in (("one", scoring),
                      ("each", {spec: make_ranking_scorer(spec) for spec in SPECS})):
        _CountingRidge.predictions = _CountingStep.transforms = 0
        with sklearn.config_context(enable_metadata_routing=on):
            results[form] = cross_validate(estimator, X, y, scoring=how, cv=QueryKFold(3),
                                           error_score="raise", **params)
        results[form + " predictions"] = _CountingRidge.predictions
        results[form + " transforms"] = _CountingStep.transforms
    assert results["one predictions"] == 3  # one per fold
    assert results["each predictions"] == 3 * len(SPECS)  # what it replaces
    if path == "pipeline column":  # X goes once through the steps before the ranker
        assert (results["one transforms"], results["each transforms"]) == (3, 3 * len(SPECS))
    for spec in SPECS:
        key = f"test_{parse_metric(spec)}"
        np.testing.assert_array_equal(results["one"][key], results["each"][key], err_msg=key)


def test_several_metrics_equal_the_scorers_and_evaluate():
    from sklearn_rank.model_selection import ranking_scoring

    X, y, qid = _data()
    model = QueryRanker(Ridge()).fit(X, y)
    weights = np.random.default_rng(1).random(qid.shape[0])
    scorer = ranking_scoring({"a": "ndcg@10", "b": "map", "c": "ndcg@10"})
    for kwargs in ({}, {"sample_weight": weights}):
        got = scorer(model, X, y, qid=qid, **kwargs)
        assert got == {name: make_ranking_scorer(spec)(model, X, y, qid=qid, **kwargs)
                       for name, spec in (("a", "ndcg@10"), ("b", "map"), ("c", "ndcg@10"))}
        ev = evaluate(y, model.predict(X), qid=qid, metrics=["ndcg@10", "map"], **kwargs)
        assert got == {"a": ev.mean["ndcg@10"], "b": ev.mean["map"], "c": ev.mean["ndcg@10"]}


def test_several_metrics_in_a_search_equal_a_dict_of_scorers():
    """GridSearchCV with the one scorer and refit=<name>: the cv_results_ of a dict of
    scorers, entry for entry, and the same best model."""
    from sklearn.model_selection import GridSearchCV

    from sklearn_rank.model_selection import QueryKFold, ranking_scoring

    X, y, qid = _data(5)
    searches = {}
    for form, scoring in (("one", ranking_scoring(SPECS[:3])),
                          ("each", {str(parse_metric(s)): make_ranking_scorer(s)
                                    for s in SPECS[:3]})):
        search = GridSearchCV(QueryRanker(Ridge()), {"estimator__alpha": [0.1, 10.0, 1e4]},
                              scoring=scoring, refit="map@5", cv=QueryKFold(3),
                              return_train_score=True, error_score="raise")
        with sklearn.config_context(enable_metadata_routing=True):
            searches[form] = search.fit(X, y, qid=qid)
            searches[form + " score"] = search.score(X, y, qid=qid)
    one, each = searches["one"].cv_results_, searches["each"].cv_results_
    keys = [k for k in each if "test" in k or "train" in k]
    assert keys == [k for k in one if "test" in k or "train" in k] and len(keys) == 3 * (6 + 5)
    for key in keys:
        np.testing.assert_array_equal(one[key], each[key], err_msg=key)
    assert searches["one"].best_index_ == searches["each"].best_index_
    assert searches["one score"] == searches["each score"]


def test_several_metrics_requests_and_when_they_stay_a_dict():
    from sklearn_rank.model_selection import ranking_scoring

    scorer = ranking_scoring(["ndcg@10", "ap"])
    assert repr(scorer) == "ranking_scoring(['ndcg@10', 'map'])"
    assert scorer.get_metadata_routing().score.requests == {"qid": True, "sample_weight": None}
    with sklearn.config_context(enable_metadata_routing=True):
        weighted = ranking_scoring({"x": "ndcg@10"}, sample_weight=True, error_score=0.0)
        assert weighted.get_metadata_routing().score.requests == {"qid": True,
                                                                  "sample_weight": True}
        assert repr(weighted) == "ranking_scoring({'x': 'ndcg@10'}, error_score=0.0)"
        # scorers that request different metadata keep their own requests
        mixed = ranking_scoring({"a": make_ranking_scorer("map").set_score_request(
            sample_weight=True), "b": "ndcg@10"})
    assert isinstance(mixed, dict) and set(mixed) == {"a", "b"}
    # a scorer of another kind: a dict of scorers, as scikit-learn takes it
    from sklearn.metrics import make_scorer
    other = make_scorer(ndcg_score)
    assert ranking_scoring({"a": "map", "b": other})["b"] is other
    again = pickle.loads(pickle.dumps(scorer))
    X, y, qid = _data()
    model = QueryRanker(Ridge()).fit(X, y)
    assert again(model, X, y, qid=qid) == scorer(model, X, y, qid=qid)
    with pytest.raises(ValueError, match=r"scoring is empty: give at least one metric spec"):
        ranking_scoring([])
    with pytest.raises(ValueError, match=r"names of the scores must be strings.*got 1 \(int\)"):
        ranking_scoring({1: "map"})


def test_several_metrics_failures():
    """A metric that cannot be scored raises by default; with a number for error_score it
    gets that number, with a warning, and the others their scores (as a dict of scorers);
    without query ids every metric fails."""
    from sklearn_rank.model_selection import ranking_scoring

    X, y, qid = _data()
    y = np.where(qid == 3, 0, y)  # query 3: nothing relevant
    model = QueryRanker(Ridge()).fit(X, y)
    specs = {"ok": "ndcg@10", "strict": "ndcg(empty='raise')@10"}
    with pytest.raises(ValueError, match=r"empty"):
        ranking_scoring(specs)(model, X, y, qid=qid)
    with pytest.warns(UserWarning, match=r"(?s)'strict' could not be scored on this split and is "
                                         r"set to error_score=nan; the error:\n.*empty"):
        got = ranking_scoring(specs, error_score=np.nan)(model, X, y, qid=qid)
    assert got["ok"] == make_ranking_scorer("ndcg@10")(model, X, y, qid=qid)
    assert np.isnan(got["strict"])
    with pytest.warns(UserWarning, match=r"(?s)'ok', 'strict' could not be scored on this split "
                                         r"and are set to error_score=-1.*needs the query id"):
        got = ranking_scoring(specs, error_score=-1)(model, X, y)
    assert got == {"ok": -1, "strict": -1}
    with pytest.raises(ValueError, match=r"The scorer for 'ndcg@10', \"ndcg\(empty='raise'\)@10\" "
                                         r"needs the query id of each row of X"):
        ranking_scoring(specs)(model, X, y)


def test_cross_validate_ranker_failures_as_with_a_dict_of_scorers():
    """cross_validate_ranker gives the one scorer cross_validate's error_score: NaN and a
    warning by default, where a dict of scorers gives the same."""
    from sklearn.model_selection import cross_validate

    from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

    X, y, qid = _data()
    y = np.where(qid == 3, 0, y)
    specs = ["ndcg@10", "ndcg(empty='raise')@10"]
    with pytest.warns(UserWarning, match="could not be scored"):
        ours = cross_validate_ranker(Ridge(), X, y, qid=qid, scoring=specs, cv=QueryKFold(3))
    with pytest.warns(UserWarning), sklearn.config_context(enable_metadata_routing=True):
        theirs = cross_validate(QueryRanker(Ridge()), X, y, params={"qid": qid},
                                cv=QueryKFold(3),
                                scoring={str(parse_metric(s)): make_ranking_scorer(s)
                                         for s in specs})
    for spec in specs:
        key = f"test_{parse_metric(spec)}"
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
    assert np.isnan(ours["test_ndcg(empty='raise')@10"]).any()
    with pytest.raises(ValueError, match="empty"):
        cross_validate_ranker(Ridge(), X, y, qid=qid, scoring=specs, cv=QueryKFold(3),
                              error_score="raise")
