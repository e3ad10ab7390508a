"""Scores are computed on the query ids the ranker saw (issue 12, item 2).

Without metadata routing a scorer reads the query ids from the ranker's query-id
column, and in a pipeline that column is counted in X *as QueryRanker sees it*:
after a ColumnTransformer, set_output(transform="pandas" / "polars"), feature
selection, nested pipelines and fitted searches. For every pipeline shape, with and
without routing, each fold score scikit-learn reports must equal NDCG@10 recomputed by
hand: the same pipeline fitted on the fold's training rows, its predictions for the
test rows scored with the TRUE query ids of those rows. Shapes that lose the ids get
a clear error instead (pinned messages).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
import sklearn
from lightgbm import LGBMRanker
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.feature_selection import SelectKBest, VarianceThreshold, f_regression
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import _safe_indexing

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer, ndcg_score
from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

N_FEATURES = 6
FEATS = list(range(N_FEATURES))
LAST = N_FEATURES  # the raw query-id column: the last one
NAMES = [f"f{j}" for j in FEATS]
CV = QueryKFold(3)


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=24, n_docs=(4, 20), n_features=N_FEATURES,
                             n_informative=4, shuffle=True, random_state=0)
    return np.column_stack([X, qid]), y, qid


def lgbm():
    return LGBMRanker(n_estimators=6, min_child_samples=2, verbose=-1, n_jobs=1,
                      deterministic=True, random_state=0)


def frame(X, kind):
    columns = {name: X[:, j] for j, name in enumerate(NAMES)}
    columns["qid"] = X[:, LAST].astype(np.int64)
    return pd.DataFrame(columns) if kind == "pandas" else pl.DataFrame(columns)


def routing(on):
    return sklearn.config_context(enable_metadata_routing=on)


# --------------------------------------------------------------------------- shapes

def _ct_first():  # the case: the ids first, the scaled features after them
    ct = ColumnTransformer([("q", "passthrough", [LAST]), ("f", StandardScaler(), FEATS)])
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column=0)), "array"


def _ct_remainder_last():
    ct = ColumnTransformer([("f", StandardScaler(), FEATS)], remainder="passthrough")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column=-1)), "array"


def _ct_middle_drop():
    ct = ColumnTransformer([("a", StandardScaler(), FEATS[:2]), ("q", "passthrough", [LAST]),
                            ("b", "passthrough", FEATS[2:])], remainder="drop")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column=2)), "array"


def _pandas_remainder():
    ct = ColumnTransformer([("f", StandardScaler(), NAMES)], remainder="passthrough")
    ct.set_output(transform="pandas")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column="remainder__qid")), "pandas"


def _polars_named():
    ct = ColumnTransformer([("q", "passthrough", ["qid"]), ("f", StandardScaler(), NAMES)])
    ct.set_output(transform="polars")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column="q__qid")), "polars"


def _pandas_int_position():  # an int is a position on DataFrames too
    ct = ColumnTransformer([("q", "passthrough", ["qid"]), ("f", StandardScaler(), NAMES)])
    ct.set_output(transform="pandas")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column=0)), "pandas"


def _selection_in_features():  # feature selection that leaves the ids alone
    features = make_pipeline(StandardScaler(), SelectKBest(f_regression, k=3))
    ct = ColumnTransformer([("q", "passthrough", [LAST]), ("f", features, FEATS)])
    return make_pipeline(ct, VarianceThreshold(0.0),
                         QueryRanker(lgbm(), qid_column=0)), "array"


def _nested():
    ct = ColumnTransformer([("q", "passthrough", [LAST]), ("f", StandardScaler(), FEATS)])
    model = make_pipeline(VarianceThreshold(0.0), QueryRanker(lgbm(), qid_column=0))
    return Pipeline([("prep", make_pipeline(ct, "passthrough")), ("model", model)]), "array"


SHAPES = {f.__name__[1:]: f for f in (_ct_first, _ct_remainder_last, _ct_middle_drop,
                                      _pandas_remainder, _polars_named, _pandas_int_position,
                                      _selection_in_features, _nested)}


def shape(name, data):
    estimator, kind = SHAPES[name]()
    X, y, qid = data
    return estimator, (X if kind == "array" else frame(X, kind)), y, qid


def leaves(estimator):
    return next(k for k in estimator.get_params() if k.endswith("estimator__num_leaves"))


# --------------------------------------------------------------------------- oracle

def by_hand(estimator, params, X, y, qid, train, test, on):
    """NDCG@10 of a clone fitted on ``train``, scored on ``test`` with the true ids."""
    model = clone(estimator).set_params(**params)
    with routing(on):
        X_tr = _safe_indexing(X, train)
        model.fit(X_tr, y[train], **({"qid": qid[train]} if on else {}))
    pred = model.predict(_safe_indexing(X, test))
    return ndcg_score(y[test], pred, qid=qid[test], k=10)


def fit_kwargs(qid, on):
    return {"qid": qid} if on else {"groups": qid}


@pytest.mark.parametrize("on", [False, True], ids=["columns", "routing"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_search_fold_scores_equal_ndcg_by_hand(data, name, on):
    estimator, X, y, qid = shape(name, data)
    grid = {leaves(estimator): [3, 7]}
    search = GridSearchCV(estimator, grid, scoring=make_ranking_scorer("ndcg@10"), cv=CV,
                          error_score="raise")
    with routing(on):
        search.fit(X, y, **fit_kwargs(qid, on))
    res = search.cv_results_
    folds = list(CV.split(X, y, qid=qid))
    for i, params in enumerate(res["params"]):
        expected = [by_hand(estimator, params, X, y, qid, tr, te, on) for tr, te in folds]
        actual = [res[f"split{k}_test_score"][i] for k in range(len(folds))]
        np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-12)
    # The refitted best pipeline, seen through the search: the true ids of all rows.
    expected = ndcg_score(y, search.predict(X), qid=qid, k=10)
    with routing(on):
        got = search.score(X, y, qid=qid) if on else search.score(X, y)
    assert got == pytest.approx(expected, abs=1e-12)
    if not on:  # the scorer given the search itself reads through best_estimator_
        assert make_ranking_scorer("ndcg@10")(search, X, y) == pytest.approx(expected,
                                                                            abs=1e-12)


@pytest.mark.parametrize("on", [False, True], ids=["columns", "routing"])
def test_cross_validate_and_nested_search(data, on):
    estimator, X, y, qid = shape("pandas_remainder", data)  # the raw 'qid' column travels
    folds = list(CV.split(X, y, qid=qid))
    scorer = make_ranking_scorer("ndcg@10")
    with routing(on):
        res = cross_validate(estimator, X, y, scoring=scorer, cv=CV, error_score="raise",
                             **({"params": {"qid": qid}} if on else {"groups": qid}))
    expected = [by_hand(estimator, {}, X, y, qid, tr, te, on) for tr, te in folds]
    np.testing.assert_allclose(res["test_score"], expected, rtol=0, atol=1e-12)
    # Nested: the outer scorer gets each fold's fitted search.
    search = GridSearchCV(estimator, {leaves(estimator): [3, 7]}, scoring=scorer,
                          cv=QueryKFold(2), error_score="raise")
    with routing(on):
        res = cross_validate(search, X, y, scoring=scorer, cv=CV, return_estimator=True,
                             error_score="raise",
                             **({"params": {"qid": qid}} if on else {"groups": qid}))
    for k, (_, te) in enumerate(folds):
        pred = res["estimator"][k].predict(X.iloc[te])
        assert res["test_score"][k] == pytest.approx(
            ndcg_score(y[te], pred, qid=qid[te], k=10), abs=1e-12)


def test_cross_validate_ranker_pipeline(data):
    estimator, X, y, qid = shape("ct_first", data)
    res = cross_validate_ranker(estimator, X, y, qid=qid, cv=CV)
    expected = [by_hand(estimator, {}, X, y, qid, tr, te, True)
                for tr, te in CV.split(X, y, qid=qid)]
    np.testing.assert_allclose(res["test_score"], expected, rtol=0, atol=1e-12)


class _Counting(TransformerMixin, BaseEstimator):
    """Passes X through and counts transform calls."""

    def fit(self, X, y=None):
        self.calls_ = 0
        return self

    def transform(self, X):
        self.calls_ += 1
        return X


@pytest.mark.parametrize("on", [False, True], ids=["columns", "routing"])
def test_scorer_transforms_x_once(data, on):
    X, y, qid = data
    pipe = make_pipeline(_Counting(), QueryRanker(Ridge(), qid_column=-1)).fit(X, y)
    pipe[0].calls_ = 0
    scorer = make_ranking_scorer("ndcg@10")
    got = scorer(pipe, X, y, qid=qid) if on else scorer(pipe, X, y)
    assert pipe[0].calls_ == 1
    assert got == ndcg_score(y, pipe.predict(X), qid=qid, k=10)


# --------------------------------------------------------------------------- errors

NON_INTEGER = (r"QueryRanker\(qid_column={col}\): column {where} of X holds non-integer "
               r"numbers \(row \d+: .*\), so it does not hold query ids\. In a pipeline, "
               r"qid_column counts the columns of X as QueryRanker sees it.*point qid_column "
               r"at it.*or pass qid=<one query id per row> with metadata routing")


def _scaled_ids():  # a scaler over every column scales the ids too
    return make_pipeline(StandardScaler(), QueryRanker(lgbm(), qid_column=-1)), "-1", "6"


def _ids_dropped():  # the transformer drops the ids: column 0 is a feature
    ct = ColumnTransformer([("f", StandardScaler(), FEATS)], remainder="drop")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column=0)), "0", "0"


def _ids_moved_by_selection():  # column 0 of what the selector keeps is a feature
    selector = SelectKBest(f_regression, k=3)
    return make_pipeline(selector, QueryRanker(lgbm(), qid_column=0)), "0", "0"


def _ids_scaled_by_name():  # pandas output: the name is right, the values are scaled
    ct = ColumnTransformer([("s", StandardScaler(), ["qid"] + NAMES)])
    ct.set_output(transform="pandas")
    return make_pipeline(ct, QueryRanker(lgbm(), qid_column="s__qid")), "'s__qid'", "'s__qid'"


@pytest.mark.parametrize("make", [_scaled_ids, _ids_dropped, _ids_moved_by_selection,
                                  _ids_scaled_by_name], ids=lambda f: f.__name__[1:])
def test_lost_ids_are_refused_without_routing_and_fine_with_it(data, make):
    estimator, col, where = make()
    X, y, qid = data
    if "name" in make.__name__:
        X = frame(X, "pandas")
    search = GridSearchCV(estimator, {leaves(estimator): [3]}, cv=CV, error_score="raise",
                          scoring=make_ranking_scorer("ndcg@10"))
    with routing(False), pytest.raises(ValueError,
                                       match=NON_INTEGER.format(col=col, where=where)):
        search.fit(X, y, groups=qid)
    # With routing the scorer is given the ids and never looks into X: right numbers.
    with routing(True):
        search.fit(X, y, qid=qid)
    folds = list(CV.split(X, y, qid=qid))
    params = search.cv_results_["params"][0]
    expected = [by_hand(estimator, params, X, y, qid, tr, te, True) for tr, te in folds]
    actual = [search.cv_results_[f"split{k}_test_score"][0] for k in range(3)]
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-12)


def test_ranker_ids_that_group_rows_unlike_the_qid_column_are_refused(data):
    X, y, qid = data
    df = frame(X, "pandas").assign(k=np.round(2 * X[:, 0]).astype(int))  # integer feature
    ct = ColumnTransformer([("k", "passthrough", ["k"]), ("f", StandardScaler(), NAMES)])
    pipe = make_pipeline(ct, QueryRanker(Ridge(), qid_column=0)).fit(df, y)  # no ids
    with pytest.raises(ValueError, match=(
            r"The scorer for 'ndcg@10': the query ids QueryRanker\(qid_column=0\) reads "
            r"from X as it sees it group the \d+ rows into \d+ queries, X's 'qid' column "
            r"into 24, so qid_column does not point at the query ids.*or pass qid=")):
        make_ranking_scorer("ndcg@10")(pipe, df, y)
    # The ids permuted over the rows: as many queries, other ones.
    shuffled = df.assign(k=np.random.default_rng(0).permutation(qid))
    pipe.fit(shuffled, y)
    with pytest.raises(ValueError, match=r"into 24 queries, X's 'qid' column into 24 other "):
        make_ranking_scorer("ndcg@10")(pipe, shuffled, y)
    assert make_ranking_scorer("ndcg@10")(pipe, shuffled, y, qid=qid) == ndcg_score(
        y, pipe.predict(shuffled), qid=qid, k=10)


def test_a_wrapper_the_scorer_cannot_see_through_is_refused(data):
    X, y, qid = data
    wrapped = TransformedTargetRegressor(QueryRanker(Ridge(), qid_column=-1)).fit(X, y)
    with pytest.raises(ValueError, match=(
            r"The scorer for 'ndcg@10' cannot read query ids through "
            r"TransformedTargetRegressor: the QueryRanker\(qid_column=-1\) inside it counts "
            r"the columns of X as TransformedTargetRegressor hands them on.*Enable metadata "
            r"routing.*the scorer then gets the query ids themselves")):
        make_ranking_scorer("ndcg@10")(wrapped, X, y)
    # Routed ids need no looking: the right number.
    assert make_ranking_scorer("ndcg@10")(wrapped, X, y, qid=qid) == ndcg_score(
        y, wrapped.predict(X), qid=qid, k=10)
    # A ranker reading the DataFrame 'qid' column by name: the column of X itself.
    df = frame(X, "pandas")
    wrapped = TransformedTargetRegressor(QueryRanker(Ridge())).fit(df, y)
    assert make_ranking_scorer("ndcg@10")(wrapped, df, y) == ndcg_score(
        y, wrapped.predict(df), qid=qid, k=10)


# --------------------------------------------------------------------------- qid_column

def test_int_qid_column_is_a_position_on_every_input(data):
    X, y, qid = data
    # qid first: position 0 of an array, a pandas and a polars frame alike.
    first = np.column_stack([X[:, LAST], X[:, FEATS]])
    inputs = [first, pd.DataFrame(first, columns=["id"] + NAMES),
              pl.DataFrame(first, schema=["id"] + NAMES),
              pd.DataFrame(first)]  # int labels equal to the positions: no doubt
    preds = []
    for X_in in inputs:
        model = QueryRanker(lgbm(), qid_column=0).fit(X_in, y)
        np.testing.assert_array_equal(model.query_ids(X_in), qid)
        preds.append(model.predict(X_in))
        assert model.score(X_in, y) == ndcg_score(y, preds[-1], qid=qid, k=10)
    for pred in preds[1:]:
        np.testing.assert_array_equal(pred, preds[0])


def test_int_qid_column_that_is_another_columns_label_is_refused(data):
    X, y, _ = data
    df = pd.DataFrame(X, columns=[6, 0, 1, 2, 3, 4, 5])  # the ids sit at position 6...
    with pytest.raises(ValueError, match=(
            r"QueryRanker\(qid_column=0\): an int qid_column is a column position, but X "
            r"also has a column labelled 0, at position 1, so the int would name two "
            r"columns\. Give X string column names and name the query-id column "
            r"\(qid_column='\.\.\.'\), or pass qid=")):
        QueryRanker(lgbm(), qid_column=0).fit(df, y)
    # ... and position 6 is labelled 5: ambiguous again.
    with pytest.raises(ValueError, match=r"labelled 6, at position 0"):
        QueryRanker(lgbm(), qid_column=6).fit(df, y)


def test_qid_column_named_differently_than_in_fit_is_refused(data):
    X, y, qid = data
    df = frame(X, "pandas")[["qid"] + NAMES]
    model = QueryRanker(Ridge(), qid_column=0).fit(df, y)
    swapped = df[[NAMES[0], "qid"] + NAMES[1:]]
    with pytest.raises(ValueError, match=(
            r"QueryRanker\(qid_column=0\): column 0 of X is named 'f0' here but was 'qid' "
            r"in fit, so it may not hold the same query ids\. Name the query-id column "
            r"\(qid_column='qid'\), or pass qid=")):
        model.query_ids(swapped)


def test_polars_frame_with_a_named_qid_column(data):
    X, y, qid = data
    df = frame(X, "polars")
    model = QueryRanker(lgbm(), qid_column="qid").fit(df, y)
    assert model.feature_names_in_.tolist() == NAMES + ["qid"]
    assert model.estimator_.feature_name_ == NAMES
    reference = QueryRanker(lgbm()).fit(X[:, FEATS], y, qid=qid)
    np.testing.assert_array_equal(model.predict(df), reference.predict(X[:, FEATS]))
    assert model.score(df, y) == reference.score(X[:, FEATS], y, qid=qid)
    # The default: a column named 'qid', found by name in polars frames too.
    default = QueryRanker(lgbm()).fit(df, y)
    np.testing.assert_array_equal(default.predict(df), model.predict(df))


def test_renamed_qid_column_is_pointed_out(data):
    X, y, _ = data
    ct = ColumnTransformer([("q", "passthrough", ["qid"]), ("f", StandardScaler(), NAMES)])
    pipe = make_pipeline(ct.set_output(transform="pandas"), QueryRanker(lgbm()))
    with pytest.raises(ValueError, match=r"QueryRanker\.fit needs the query id of each row "
                                         r"of X\..*X has a column named 'q__qid': if it holds "
                                         r"the query ids, pass QueryRanker\(\.\.\., "
                                         r"qid_column='q__qid'\)"):
        pipe.fit(frame(X, "pandas"), y)
