"""End to end: real LightGBM / XGBoost rankers in every scikit-learn tool a user would try.

Each test runs a scikit-learn model-selection tool (searches, ``cross_validate``,
curves, pipelines, multi-metric scoring, ``n_jobs=2``) on a ``QueryRanker`` and then
CHECKS THE NUMBERS: every per-fold score scikit-learn reports must equal
:func:`~sklearn_rank.metrics.ndcg_score` recomputed by hand on the predictions of a
clone refitted with the same parameters on the same training rows (to 1e-12), and no
query may be split between the training and test rows of a fold. The splitters are
deterministic (``QueryKFold``, or shuffling with a fixed ``random_state``) and so are
the models (fixed seeds, one thread, LightGBM ``deterministic=True``), so re-splitting
and refitting reproduce every fold. The data are generated here (no dataset module
needed): ~630 rows in 48 queries of 3..25 documents.

Query ids reach the tools in the two ways of DESIGN.md §5, both tested: metadata
routing (``qid=``), and, with routing off, a query-id column (a DataFrame ``qid``
column, or an array column named by ``QueryRanker(qid_column=j)`` with ``groups=``
passed to the search for the splitter).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import lightgbm
import numpy as np
import pandas as pd
import pytest
import sklearn
import xgboost
from scipy.stats import loguniform, randint
from sklearn.base import clone
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.metrics import make_scorer
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    ParameterGrid,
    RandomizedSearchCV,
    cross_val_predict,
    cross_val_score,
    cross_validate,
    learning_curve,
    validation_curve,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import evaluate, make_ranking_scorer, ndcg_score
from sklearn_rank.model_selection import (
    QueryKFold,
    QueryShuffleSplit,
    cross_validate_ranker,
    ranking_scoring,
)

ATOL = 1e-12
N_SPLITS = 3
QID_COL = 2  # where the array-with-a-qid-column layout puts the query ids

# --------------------------------------------------------------------------- data


def make_data(n_queries=48, *, n_features=6, seed=0):
    """Small graded ranking data: labels 0..4 skewed toward 0, learnable signal.

    Query lengths vary in 3..25; query ids are random (not 0..m-1, not in row order),
    so ``QueryRanker``'s sort by query id reorders even contiguous data. Rows are
    grouped by query (see :func:`shuffled` for the other case).
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 26, size=n_queries)
    ids = rng.choice(np.arange(100, 10_000), size=n_queries, replace=False)
    qid = np.repeat(ids, sizes)
    n = qid.shape[0]
    X = rng.normal(size=(n, n_features))
    offset = np.repeat(rng.normal(scale=0.5, size=n_queries), sizes)
    latent = (X[:, 0] + 0.6 * X[:, 1] * X[:, 2] + 0.8 * (X[:, 3] > 0.5)
              + 0.5 * rng.normal(size=n) + offset)
    y = np.digitize(latent, [0.9, 1.7, 2.4, 3.0])
    return X, y, qid


def shuffled(X, y, qid, seed=1):
    """The same rows in random order: queries are no longer contiguous."""
    perm = np.random.default_rng(seed).permutation(qid.shape[0])
    return X[perm], y[perm], qid[perm]


@pytest.fixture(scope="module")
def data():
    return make_data()


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Family:
    """One model family: a factory and the parameters each tool searches over."""

    name: str
    make: Callable[..., object]
    grid: dict
    distributions: dict
    halving_grid: dict
    curve_param: str
    curve_range: list


def _lgbm(**params):
    return lightgbm.LGBMRanker(n_estimators=8, min_child_samples=2, verbose=-1, n_jobs=1,
                               deterministic=True, random_state=0, **params)


def _xgb(**params):
    return xgboost.XGBRanker(n_estimators=5, tree_method="hist", n_jobs=1, random_state=0,
                             **params)


LGBM = Family(
    name="lightgbm", make=_lgbm,
    grid={"estimator__num_leaves": [3, 7]},
    distributions={"estimator__num_leaves": randint(2, 16),
                   "estimator__learning_rate": loguniform(0.03, 0.5)},
    halving_grid={"estimator__num_leaves": [3, 5, 7, 15]},
    curve_param="estimator__num_leaves", curve_range=[3, 7],
)
XGB = Family(
    name="xgboost", make=_xgb,
    grid={"estimator__max_depth": [2, 4]},
    distributions={"estimator__max_depth": randint(1, 6),
                   "estimator__learning_rate": loguniform(0.03, 0.5)},
    halving_grid={"estimator__max_depth": [1, 2, 3, 5]},
    curve_param="estimator__max_depth", curve_range=[1, 3],
)
FAMILIES = [pytest.param(LGBM, id="lightgbm"), pytest.param(XGB, id="xgboost")]

# --------------------------------------------------------------------------- metrics

# The oracles: the metric functions, called by hand (the scorers go through evaluate).
NDCG10 = {"score": lambda y, s, q: ndcg_score(y, s, qid=q, k=10)}
TWO_METRICS = {
    "ndcg@10": lambda y, s, q: ndcg_score(y, s, qid=q, k=10),
    "lin": lambda y, s, q: ndcg_score(y, s, qid=q, k=5, gain="linear"),
}


def two_scorers():
    return {"ndcg@10": make_ranking_scorer("ndcg@10"),
            "lin": make_ranking_scorer("ndcg(gain='linear')@5")}


# --------------------------------------------------------------------------- input paths

PATHS = ["routing", "frame", "frame+groups", "frame+routing", "column"]


def routing(on=True):
    return sklearn.config_context(enable_metadata_routing=on)


def as_path(path, family, X, y, qid):
    """``(estimator, X_in, fit_kwargs, routing_on)`` for one way of passing query ids.

    * ``routing``: metadata routing on, ``fit(X, y, qid=qid)``.
    * ``frame``: routing off, X a DataFrame with a ``qid`` column, which the splitter,
      the ranker and the scorers all read.
    * ``frame+groups``: the same, ``groups=qid`` also passed to the search.
    * ``frame+routing``: the DataFrame, routing on, but no ``qid=`` passed: the
      column alone still reaches the splitter, the ranker and the scorers.
    * ``column``: routing off, a NumPy X with the query ids in column ``QID_COL``,
      ``QueryRanker(qid_column=QID_COL)``, ``groups=qid`` passed for the splitter.
    """
    if path == "routing":
        return QueryRanker(family.make()), X, {"qid": qid}, True
    if path.startswith("frame"):
        frame = pd.DataFrame({f"f{j}": X[:, j] for j in range(X.shape[1])})
        frame.insert(1, "qid", qid)
        fit_kwargs = {"groups": qid} if path == "frame+groups" else {}
        return QueryRanker(family.make()), frame, fit_kwargs, path == "frame+routing"
    if path == "column":
        X_col = np.insert(X, QID_COL, qid, axis=1)
        return QueryRanker(family.make(), qid_column=QID_COL), X_col, {"groups": qid}, False
    raise AssertionError(path)


# --------------------------------------------------------------------------- helpers


def _rows(X, rows):
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def fit_by_hand(estimator, params, X, y, qid, rows=None):
    """A clone of ``estimator`` with ``params``, fitted on ``rows`` with explicit qid."""
    rows = np.arange(qid.shape[0]) if rows is None else rows
    model = clone(estimator).set_params(**params)
    with routing(True):  # lets a Pipeline route qid to its QueryRanker
        return model.fit(_rows(X, rows), y[rows], qid=qid[rows])


def assert_queries_whole(cv, X, y, qid):
    """Re-split with ``qid``; assert no query is on both sides of any fold. Returns folds."""
    folds = list(cv.split(X, y, qid=qid))
    assert len(folds) == cv.get_n_splits(X, y, qid=qid)
    for train, test in folds:
        assert len(train) and len(test)
        assert not set(qid[train]) & set(qid[test])
    return folds


def recompute_fold_scores(estimator, params, X, y, qid, folds, metrics, *, train=False):
    """Per-fold scores of ``clone(estimator).set_params(**params)``, refitted by hand.

    Returns ``{"test_<name>": array}`` (and ``"train_<name>"`` with ``train=True``), one
    value per fold, computed with the oracle functions of ``metrics``.
    """
    out = {f"{side}_{name}": [] for side in ("test", "train") for name in metrics}
    for tr, te in folds:
        model = fit_by_hand(estimator, params, X, y, qid, tr)
        sides = [("test", te)] + ([("train", tr)] if train else [])
        for side, rows in sides:
            pred = model.predict(_rows(X, rows))
            for name, metric in metrics.items():
                out[f"{side}_{name}"].append(metric(y[rows], pred, qid[rows]))
    return {key: np.array(v) for key, v in out.items() if v}


def assert_close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), expected, rtol=0, atol=ATOL)


def check_search(search, estimator, X, y, qid, folds, metrics, *, refit="score"):
    """Every ``split{k}_test_<name>`` (and ``split{k}_train_<name>`` when recorded) of
    ``cv_results_`` equals the by-hand refit; the refitted best estimator is the
    by-hand one."""
    res = search.cv_results_
    sides = ["test", "train"] if "split0_train_" + next(iter(metrics)) in res else ["test"]
    for i in range(len(res["params"])):
        expected = recompute_fold_scores(estimator, res["params"][i], X, y, qid, folds,
                                         metrics, train="train" in sides)
        for name in metrics:
            for side in sides:
                actual = [res[f"split{k}_{side}_{name}"][i] for k in range(len(folds))]
                assert_close(actual, expected[f"{side}_{name}"])
                assert_close(res[f"mean_{side}_{name}"][i], expected[f"{side}_{name}"].mean())
    if refit:
        assert search.best_index_ == int(np.argmax(res[f"mean_test_{refit}"]))
        assert search.best_params_ == res["params"][search.best_index_]
        by_hand = fit_by_hand(estimator, search.best_params_, X, y, qid)
        np.testing.assert_array_equal(search.predict(X), by_hand.predict(X))


# --------------------------------------------------------------------------- 1, 11: grid


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("family", FAMILIES)
def test_grid_search(data, family, path):
    X, y, qid = data
    estimator, X_in, fit_kwargs, on = as_path(path, family, X, y, qid)
    cv = QueryKFold(N_SPLITS)
    search = GridSearchCV(estimator, family.grid, scoring=make_ranking_scorer("ndcg@10"),
                          cv=cv, return_train_score=True, error_score="raise")
    with routing(on):
        search.fit(X_in, y, **fit_kwargs)
    folds = assert_queries_whole(cv, X_in, y, qid)
    check_search(search, estimator, X_in, y, qid, folds, NDCG10)
    # search.score: routed qid, or the query-id column of X.
    expected = ndcg_score(y, search.predict(X_in), qid=qid, k=10)
    with routing(on):
        got = search.score(X_in, y, qid=qid) if on else search.score(X_in, y)
    assert got == pytest.approx(expected, abs=ATOL)


@pytest.mark.parametrize("path", ["routing", "frame"])
def test_default_scoring_is_query_ranker_score(data, path):
    """``scoring=None`` uses ``QueryRanker.score``: the same numbers as ndcg@10."""
    X, y, qid = data
    estimator, X_in, fit_kwargs, on = as_path(path, LGBM, X, y, qid)
    results = []
    for scoring in (None, make_ranking_scorer("ndcg@10")):
        search = GridSearchCV(estimator, LGBM.grid, scoring=scoring, cv=QueryKFold(N_SPLITS),
                              error_score="raise")
        with routing(on):
            search.fit(X_in, y, **fit_kwargs)
        results.append(search.cv_results_)
    for k in range(N_SPLITS):
        np.testing.assert_array_equal(results[0][f"split{k}_test_score"],
                                      results[1][f"split{k}_test_score"])


@pytest.mark.parametrize("groups", [False, True])
def test_no_query_ids_raises_naming_both_fixes(data, groups):
    """Routing off, an array X, no qid column: an error naming both fixes."""
    X, y, qid = data
    search = GridSearchCV(QueryRanker(_lgbm()), LGBM.grid, cv=QueryKFold(N_SPLITS),
                          scoring=make_ranking_scorer("ndcg@10"), error_score="raise")
    # Without groups the splitter asks first, naming the fixes that work for the ranker
    # and the scorers too (tests/test_first_errors.py follows each of them).
    match = ("QueryRanker.fit.*enable_metadata_routing.*qid_column.*groups=qid does not "
             "reach it" if groups
             else "QueryKFold.split.*enable_metadata_routing.*column named 'qid'.*groups=qid "
                  "alone is not enough")
    with routing(False), pytest.raises(ValueError, match=match):
        search.fit(X, y, **({"groups": qid} if groups else {}))


# --------------------------------------------------------------------------- 2: randomized


@pytest.mark.parametrize("family", FAMILIES)
def test_randomized_search(data, family):
    X, y, qid = data
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    search = RandomizedSearchCV(estimator, family.distributions, n_iter=3, random_state=0,
                                scoring=make_ranking_scorer("ndcg@10"), cv=cv,
                                error_score="raise")
    with routing():
        search.fit(X, y, qid=qid)
    assert len(search.cv_results_["params"]) == 3
    check_search(search, estimator, X, y, qid, assert_queries_whole(cv, X, y, qid), NDCG10)


# --------------------------------------------------------------------------- 3: halving


@pytest.mark.parametrize("family", FAMILIES)
def test_halving_grid_search(data, family):
    X, y, qid = data
    # The resource is the number of boosting rounds, not rows: resource="n_samples"
    # (the default) would subsample rows and cut queries apart.
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    search = HalvingGridSearchCV(estimator, family.halving_grid,
                                 resource="estimator__n_estimators", min_resources=2,
                                 max_resources=8, factor=2,
                                 scoring=make_ranking_scorer("ndcg@10"), cv=cv,
                                 error_score="raise")
    with routing():
        search.fit(X, y, qid=qid)
    res = search.cv_results_
    assert list(search.n_resources_) == [2, 4, 8]
    assert list(search.n_candidates_) == [4, 2, 1]
    for params, n in zip(res["params"], res["n_resources"], strict=True):
        assert params["estimator__n_estimators"] == n
    folds = assert_queries_whole(cv, X, y, qid)
    # Every iteration's candidates (the last one's included), refitted with the
    # n_estimators that iteration used (in "params").
    check_search(search, estimator, X, y, qid, folds, NDCG10, refit=False)
    last = np.flatnonzero(res["iter"] == search.n_iterations_ - 1)
    # best_* come from the last iteration; the refit uses its n_estimators (8).
    assert search.best_index_ in last
    assert search.best_estimator_.estimator_.n_estimators == 8
    by_hand = fit_by_hand(estimator, search.best_params_, X, y, qid)
    np.testing.assert_array_equal(search.predict(X), by_hand.predict(X))


# --------------------------------------------------------------------------- 4, 5: cv


SPLITTERS = [
    pytest.param(QueryKFold(N_SPLITS), id="kfold"),
    pytest.param(QueryKFold(N_SPLITS, shuffle=True, random_state=0), id="kfold-shuffle"),
    pytest.param(QueryShuffleSplit(N_SPLITS, test_size=0.25, random_state=0), id="shuffle-split"),
]


@pytest.mark.parametrize("cv", SPLITTERS)
@pytest.mark.parametrize("family", FAMILIES)
def test_cross_validate_with_train_scores(data, family, cv):
    X, y, qid = data
    estimator = QueryRanker(family.make())
    with routing():
        res = cross_validate(estimator, X, y, cv=cv, scoring=two_scorers(),
                             params={"qid": qid}, return_train_score=True,
                             return_indices=True, error_score="raise")
    folds = assert_queries_whole(cv, X, y, qid)
    for (train, test), (r_train, r_test) in zip(
            folds, zip(res["indices"]["train"], res["indices"]["test"], strict=True),
            strict=True):
        np.testing.assert_array_equal(r_train, train)
        np.testing.assert_array_equal(r_test, test)
    expected = recompute_fold_scores(estimator, {}, X, y, qid, folds, TWO_METRICS,
                                     train=True)
    assert set(expected) == {k for k in res if k.startswith(("test_", "train_"))}
    for key, value in expected.items():
        assert_close(res[key], value)


@pytest.mark.parametrize("family", FAMILIES)
def test_cross_val_score(data, family):
    X, y, qid = data
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    with routing():
        scores = cross_val_score(estimator, X, y, cv=cv,
                                 scoring=make_ranking_scorer("ndcg@10"),
                                 params={"qid": qid}, error_score="raise")
    folds = assert_queries_whole(cv, X, y, qid)
    assert_close(scores, recompute_fold_scores(estimator, {}, X, y, qid, folds,
                                               NDCG10)["test_score"])


@pytest.mark.parametrize("family", FAMILIES)
def test_cross_val_predict(data, family):
    X, y, qid = data
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    with routing():
        pred = cross_val_predict(estimator, X, y, cv=cv, params={"qid": qid})
    for train, test in assert_queries_whole(cv, X, y, qid):
        model = fit_by_hand(estimator, {}, X, y, qid, train)
        np.testing.assert_array_equal(pred[test], model.predict(X[test]))


@pytest.mark.parametrize("path", ["routing", "frame"])
def test_nested_cross_validation(data, path):
    """A search inside cross_validate: the inner folds are cut from each outer train fold.

    (With routing off, an array X with ``qid_column`` cannot work here: scikit-learn
    does not pass ``groups`` on to the inner search, and a splitter cannot know the
    ranker's ``qid_column``. A DataFrame ``qid`` column travels with the rows.)
    """
    X, y, qid = data
    estimator, X_in, _, on = as_path(path, LGBM, X, y, qid)
    inner_cv, outer_cv = QueryKFold(N_SPLITS), QueryKFold(N_SPLITS)
    search = GridSearchCV(estimator, LGBM.grid, scoring=make_ranking_scorer("ndcg@10"),
                          cv=inner_cv, error_score="raise")
    with routing(on):
        res = cross_validate(search, X_in, y, cv=outer_cv, scoring=make_ranking_scorer("ndcg@10"),
                             return_estimator=True, error_score="raise",
                             **({"params": {"qid": qid}} if on else {}))
    outer = assert_queries_whole(outer_cv, X_in, y, qid)
    for k, (train, test) in enumerate(outer):
        X_tr, y_tr, q_tr = _rows(X_in, train), y[train], qid[train]
        inner = assert_queries_whole(inner_cv, X_tr, y_tr, q_tr)
        means = [recompute_fold_scores(estimator, params, X_tr, y_tr, q_tr, inner,
                                       NDCG10)["test_score"].mean()
                 for params in ParameterGrid(LGBM.grid)]
        best = list(ParameterGrid(LGBM.grid))[int(np.argmax(means))]
        assert res["estimator"][k].best_params_ == best
        model = fit_by_hand(estimator, best, X_in, y, qid, train)
        expected = ndcg_score(y[test], model.predict(_rows(X_in, test)), qid=qid[test], k=10)
        assert res["test_score"][k] == pytest.approx(expected, abs=ATOL)


# --------------------------------------------------------------------------- 6, 7: curves


@pytest.mark.parametrize("family", FAMILIES)
def test_validation_curve(data, family):
    X, y, qid = data
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    with routing():
        train_scores, test_scores = validation_curve(
            estimator, X, y, param_name=family.curve_param, param_range=family.curve_range,
            cv=cv, scoring=make_ranking_scorer("ndcg@10"), params={"qid": qid},
            error_score="raise")
    assert train_scores.shape == test_scores.shape == (len(family.curve_range), N_SPLITS)
    folds = assert_queries_whole(cv, X, y, qid)
    for i, value in enumerate(family.curve_range):
        expected = recompute_fold_scores(estimator, {family.curve_param: value}, X, y, qid,
                                         folds, NDCG10, train=True)
        assert_close(test_scores[i], expected["test_score"])
        assert_close(train_scores[i], expected["train_score"])


@pytest.mark.parametrize("family", FAMILIES)
def test_learning_curve(data, family):
    X, y, qid = data
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    with routing():
        sizes, train_scores, test_scores = learning_curve(
            estimator, X, y, train_sizes=[0.4, 0.7, 1.0], cv=cv,
            scoring=make_ranking_scorer("ndcg@10"), params={"qid": qid},
            error_score="raise")
    folds = assert_queries_whole(cv, X, y, qid)  # the test folds stay whole
    # scikit-learn trains on prefixes train[:n] of each fold's training rows, n taken
    # from the FIRST fold's size: a prefix may cut a query (fine for training), and a
    # larger fold is cut at 100% too. The test folds are whole queries.
    assert sizes[-1] == len(folds[0][0])
    assert train_scores.shape == test_scores.shape == (3, N_SPLITS)
    for i, n in enumerate(sizes):
        for k, (train, test) in enumerate(folds):
            sub = train[:n]
            assert not set(qid[sub]) & set(qid[test])
            model = fit_by_hand(estimator, {}, X, y, qid, sub)
            assert test_scores[i, k] == pytest.approx(
                ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=10), abs=ATOL)
            assert train_scores[i, k] == pytest.approx(
                ndcg_score(y[sub], model.predict(X[sub]), qid=qid[sub], k=10), abs=ATOL)


# --------------------------------------------------------------------------- 8: pipeline


@pytest.mark.parametrize("family", FAMILIES)
def test_pipeline_in_search(data, family):
    X, y, qid = data
    pipe = make_pipeline(StandardScaler(), QueryRanker(family.make()))
    grid = {f"queryranker__{name}": values for name, values in family.grid.items()}
    cv = QueryKFold(N_SPLITS)
    search = GridSearchCV(pipe, grid, scoring=make_ranking_scorer("ndcg@10"), cv=cv,
                          error_score="raise")
    with routing():
        search.fit(X, y, qid=qid)
    check_search(search, pipe, X, y, qid, assert_queries_whole(cv, X, y, qid), NDCG10)


# --------------------------------------------------------------------------- 9: multi-metric


SCORING_FORMS = {
    "scorers": (two_scorers, "ndcg@10", "lin"),
    "spec_dict": (lambda: ranking_scoring({"ndcg@10": "ndcg@10",
                                           "lin": "ndcg(gain='linear')@5"}),
                  "ndcg@10", "lin"),
    # Specs become one scorer that predicts once per fold (test_scorer.py counts), its
    # scores named by the dict's keys or, for a list, by the canonical specs.
    "spec_list": (lambda: ranking_scoring(["ndcg@10", "ndcg(gain='linear')@5"]),
                  "ndcg@10", "ndcg(gain='linear')@5"),
}


@pytest.mark.parametrize("form", list(SCORING_FORMS))
@pytest.mark.parametrize("family", FAMILIES)
def test_multi_metric_search(data, family, form):
    X, y, qid = data
    make_scoring, ndcg_name, lin_name = SCORING_FORMS[form]
    scoring = make_scoring()
    assert sorted(getattr(scoring, "specs", scoring)) == sorted([ndcg_name, lin_name])
    estimator = QueryRanker(family.make())
    cv = QueryKFold(N_SPLITS)
    search = GridSearchCV(estimator, family.grid, scoring=scoring, refit="ndcg@10", cv=cv,
                          error_score="raise")
    with routing():
        search.fit(X, y, qid=qid)
    metrics = {ndcg_name: TWO_METRICS["ndcg@10"], lin_name: TWO_METRICS["lin"]}
    check_search(search, estimator, X, y, qid, assert_queries_whole(cv, X, y, qid), metrics,
                 refit="ndcg@10")
    assert search.best_score_ == search.cv_results_["mean_test_ndcg@10"][search.best_index_]
    assert search.cv_results_["rank_test_ndcg@10"][search.best_index_] == 1


# --------------------------------------------------------------------------- 10: n_jobs


def _score_keys(cv_results):
    return [k for k in cv_results if k.startswith(("split", "mean_test", "rank_test"))]


@pytest.mark.parametrize("path", ["routing", "column"])
@pytest.mark.parametrize("family", FAMILIES)
def test_n_jobs_2_equals_n_jobs_1(data, family, path):
    """joblib's default process backend (loky) gives exactly the n_jobs=1 results."""
    X, y, qid = data
    estimator, X_in, fit_kwargs, on = as_path(path, family, X, y, qid)
    searches = []
    for n_jobs in (1, 2):
        search = GridSearchCV(estimator, family.grid, scoring=two_scorers(), refit="ndcg@10",
                              cv=QueryKFold(N_SPLITS), n_jobs=n_jobs, error_score="raise")
        with routing(on):
            search.fit(X_in, y, **fit_kwargs)
        searches.append(search)
    one, two = (s.cv_results_ for s in searches)
    assert _score_keys(one) == _score_keys(two)
    for key in _score_keys(one):
        np.testing.assert_array_equal(two[key], one[key], err_msg=key)
    np.testing.assert_array_equal(searches[1].predict(X_in), searches[0].predict(X_in))


# --------------------------------------------------------------------------- 12: row order


@pytest.mark.parametrize("path", ["routing", "column"])
@pytest.mark.parametrize("family", FAMILIES)
def test_shuffled_rows(data, family, path):
    """Rows in random order (queries not contiguous): folds still keep queries whole."""
    X, y, qid = shuffled(*data)
    assert np.any(np.diff(np.flatnonzero(np.diff(qid) != 0)) == 1)  # really interleaved
    estimator, X_in, fit_kwargs, on = as_path(path, family, X, y, qid)
    cv = QueryKFold(N_SPLITS)
    search = GridSearchCV(estimator, family.grid, scoring=make_ranking_scorer("ndcg@10"),
                          cv=cv, error_score="raise")
    with routing(on):
        search.fit(X_in, y, **fit_kwargs)
    folds = assert_queries_whole(cv, X_in, y, qid)
    check_search(search, estimator, X_in, y, qid, folds, NDCG10)
    # The same queries go to the same folds as with the rows grouped by query.
    grouped = list(cv.split(qid=data[2]))
    for (_, test), (_, test_grouped) in zip(folds, grouped, strict=True):
        assert set(qid[test]) == set(data[2][test_grouped])


# --------------------------------------------------------------------------- 13: one call


@pytest.mark.parametrize("global_routing", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_cross_validate_ranker(data, family, global_routing):
    X, y, qid = data
    bare = family.make()  # wrapped in QueryRanker by cross_validate_ranker
    with routing(global_routing):
        res = cross_validate_ranker(bare, X, y, qid=qid,
                                    scoring=["ndcg@10", "ndcg(gain='linear')@5"], cv=N_SPLITS,
                                    return_train_score=True, return_estimator=True,
                                    return_indices=True, error_score="raise")
        assert sklearn.get_config()["enable_metadata_routing"] is global_routing
    assert sklearn.get_config()["enable_metadata_routing"] is False
    assert all(isinstance(est, QueryRanker) for est in res["estimator"])
    folds = assert_queries_whole(QueryKFold(N_SPLITS), X, y, qid)
    for (train, test), r_train, r_test in zip(folds, res["indices"]["train"],
                                              res["indices"]["test"], strict=True):
        np.testing.assert_array_equal(r_train, train)
        np.testing.assert_array_equal(r_test, test)
    metrics = {"ndcg@10": TWO_METRICS["ndcg@10"],
               "ndcg(gain='linear')@5": TWO_METRICS["lin"]}
    expected = recompute_fold_scores(QueryRanker(bare), {}, X, y, qid, folds, metrics,
                                     train=True)
    assert set(expected) == {k for k in res if k.startswith(("test_", "train_"))}
    for key, value in expected.items():
        assert_close(res[key], value)


def test_cross_validate_ranker_keeps_a_wrapped_ranker(data):
    X, y, qid = data
    res = cross_validate_ranker(QueryRanker(_lgbm()), X, y, qid=qid, cv=N_SPLITS,
                                return_estimator=True, error_score="raise")
    assert all(isinstance(est.estimator, lightgbm.LGBMRanker) for est in res["estimator"])
    # a request the user set on their QueryRanker survives
    w = np.random.default_rng(0).random(len(y)) + 0.5
    with sklearn.config_context(enable_metadata_routing=True):
        wrapped = QueryRanker(_lgbm()).set_fit_request(sample_weight=True)
    res = cross_validate_ranker(wrapped, X, y, qid=qid, cv=N_SPLITS,
                                params={"sample_weight": w}, error_score="raise")
    for score, (train, test) in zip(res["test_score"],
                                    QueryKFold(N_SPLITS).split(X, y, qid=qid), strict=True):
        fitted = QueryRanker(_lgbm()).fit(X[train], y[train], qid=qid[train],
                                          sample_weight=w[train])
        assert score == pytest.approx(ndcg_score(y[test], fitted.predict(X[test]),
                                                 qid=qid[test], k=10, sample_weight=w[test]),
                                      abs=1e-12)
    with pytest.raises(ValueError, match="got qid twice"):
        cross_validate_ranker(QueryRanker(_lgbm()), X, y, qid=qid, params={"qid": qid})


def test_cross_validate_ranker_n_jobs_2(data):
    """Routing is switched on in the loky workers too: the same numbers as n_jobs=1."""
    X, y, qid = data
    one, two = (cross_validate_ranker(_xgb(), X, y, qid=qid, cv=N_SPLITS, n_jobs=n_jobs,
                                      return_train_score=True, error_score="raise")
                for n_jobs in (1, 2))
    assert sklearn.get_config()["enable_metadata_routing"] is False
    for key in ("test_score", "train_score"):
        np.testing.assert_array_equal(two[key], one[key])


# --------------------------------------------------------------------------- 14: make_scorer


def test_sklearn_make_scorer_equals_make_ranking_scorer(data):
    X, y, qid = data
    estimator = QueryRanker(_lgbm())
    cv = QueryKFold(N_SPLITS)
    with routing():
        scoring = {"sk": make_scorer(ndcg_score, k=10).set_score_request(qid=True),
                   "ours": make_ranking_scorer("ndcg@10")}
        search = GridSearchCV(estimator, LGBM.grid, scoring=scoring, refit="ours", cv=cv,
                              error_score="raise").fit(X, y, qid=qid)
        res_cv = cross_validate(estimator, X, y, cv=cv, scoring=scoring, params={"qid": qid},
                                return_train_score=True, error_score="raise")
    res = search.cv_results_
    for k in range(N_SPLITS):
        np.testing.assert_array_equal(res[f"split{k}_test_sk"], res[f"split{k}_test_ours"])
    for side in ("test", "train"):
        np.testing.assert_array_equal(res_cv[f"{side}_sk"], res_cv[f"{side}_ours"])
    folds = assert_queries_whole(cv, X, y, qid)
    check_search(search, estimator, X, y, qid, folds,
                 {"sk": NDCG10["score"], "ours": NDCG10["score"]}, refit="ours")


# --------------------------------------------------------------------------- the oracle


def test_oracle_agrees_with_evaluate(data):
    """The by-hand oracle (ndcg_score) and evaluate agree on a fitted model's scores."""
    X, y, qid = data
    pred = fit_by_hand(QueryRanker(_lgbm()), {}, X, y, qid).predict(X)
    ev = evaluate(y, pred, qid=qid, metrics=["ndcg@10", "ndcg(gain='linear')@5"])
    assert ev.mean["ndcg@10"] == pytest.approx(TWO_METRICS["ndcg@10"](y, pred, qid), abs=ATOL)
    assert ev.mean["ndcg(gain='linear')@5"] == pytest.approx(
        TWO_METRICS["lin"](y, pred, qid), abs=ATOL)
    assert 0.5 < ev.mean["ndcg@10"] < 1  # the models learn something
