"""sklearn_rank.inspection.permutation_importance: scikit-learn's definition,
scored per query with the query ids held fixed; and the scorer's error when a
caller routes no qid (scikit-learn's own permutation_importance)."""

import numpy as np
import pandas as pd
import polars as pl
import pytest
import sklearn
from lightgbm import LGBMRanker
from scipy import sparse
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.linear_model import Ridge
from sklearn.metrics import ndcg_score as sklearn_ndcg_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.inspection import permutation_importance
from sklearn_rank.metrics import make_ranking_scorer
from sklearn_rank.model_selection import QueryKFold, ranking_scoring

N_REPEATS = 3
SEED = 7
# The same predictions evaluated by two implementations: they agree to rounding.
TOL = 1e-12


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=25, n_docs=(5, 30), n_features=5, n_informative=3,
                             random_state=0)
    return X, y, qid


def lgbm():
    return LGBMRanker(n_estimators=10, min_child_samples=5, n_jobs=1, verbose=-1)


def brute_force(model, X, y, qid, *, k=10, sample_weight=None):
    """Importances by the definition, spelled out: one seed drawn from
    ``RandomState(SEED)``; for each column a fresh ``RandomState(seed)``, an index
    array shuffled in place before each repeat and applied to the column as the
    last repeat left it; the score is the mean over queries of scikit-learn's own
    ``ndcg_score`` (linear gain, ties averaged) of each query's rows, each query
    weighted by the mean of its rows' weights."""
    queries = [np.flatnonzero(qid == q) for q in np.unique(qid)]
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)

    def score(X_scored):
        pred = model.predict(X_scored)
        values = [sklearn_ndcg_score([y[rows]], [pred[rows]], k=k) for rows in queries]
        query_weights = [weights[rows].mean() for rows in queries]
        return np.average(values, weights=query_weights)

    baseline = score(X)
    seed = np.random.RandomState(SEED).randint(np.iinfo(np.int32).max + 1)
    drops = np.empty((X.shape[1], N_REPEATS))
    for j in range(X.shape[1]):
        rng = np.random.RandomState(seed)
        order = np.arange(X.shape[0])
        column = X[:, j].copy()
        for r in range(N_REPEATS):
            rng.shuffle(order)
            column = column[order]
            X_perm = X.copy()
            X_perm[:, j] = column
            drops[j, r] = baseline - score(X_perm)
    return drops


# ---------------------------------------------------------------- the definition


@pytest.mark.parametrize("weighted", [False, True])
def test_equals_a_brute_force_loop_scored_by_sklearns_ndcg(data, weighted):
    X, y, qid = data
    weights = np.random.default_rng(1).uniform(0.5, 2, len(y)) if weighted else None
    model = QueryRanker(lgbm()).fit(X, y, qid=qid)
    result = permutation_importance(model, X, y, qid=qid, scoring="ndcg(gain='linear')@10",
                                    n_repeats=N_REPEATS, random_state=SEED,
                                    sample_weight=weights)
    expected = brute_force(model, X, y, qid, sample_weight=weights)
    assert isinstance(result, Bunch)
    assert result.importances.shape == (X.shape[1], N_REPEATS)
    np.testing.assert_allclose(result.importances, expected, rtol=0, atol=TOL)
    np.testing.assert_allclose(result.importances_mean, expected.mean(axis=1), rtol=0,
                               atol=TOL)
    np.testing.assert_allclose(result.importances_std, expected.std(axis=1), rtol=0,
                               atol=TOL)
    assert np.all(result.importances_mean[:3] > 0)  # the informative features matter


def test_equals_sklearns_on_the_qid_column_path_with_the_column_held(data):
    """On the qid-column path scikit-learn's function scores every feature right
    (the scorer reads the unshuffled column), and this one gives the same numbers;
    the query-id column, which scikit-learn shuffles (scrambling the queries), is
    not shuffled here: its row is NaN."""
    X, y, qid = data
    Xq = np.column_stack([qid, X])
    model = QueryRanker(lgbm(), qid_column=0).fit(Xq, y)
    ours = permutation_importance(model, Xq, y, n_repeats=N_REPEATS, random_state=SEED)
    theirs = sklearn_permutation_importance(model, Xq, y, n_repeats=N_REPEATS,
                                            random_state=SEED,
                                            scoring=make_ranking_scorer("ndcg@10"))
    np.testing.assert_allclose(ours.importances[1:], theirs.importances[1:], rtol=TOL, atol=0)
    assert np.isnan(ours.importances[0]).all()
    assert np.isnan(ours.importances_mean[0]) and np.isnan(ours.importances_std[0])
    assert abs(theirs.importances_mean[0]) > 1e-3  # the queries scrambled: another score

    # A DataFrame column named 'qid' (last here), pandas and polars alike.
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(qid=qid)
    model = QueryRanker(lgbm()).fit(df, y)
    theirs = sklearn_permutation_importance(model, df, y, n_repeats=N_REPEATS,
                                            random_state=SEED,
                                            scoring=make_ranking_scorer("ndcg@10"))
    for frame in (df, pl.from_pandas(df)):
        ours = permutation_importance(model, frame, y, n_repeats=N_REPEATS,
                                      random_state=SEED)
        np.testing.assert_allclose(ours.importances[:-1], theirs.importances[:-1],
                                   rtol=TOL, atol=0)
        assert np.isnan(ours.importances[-1]).all()


def test_a_ranker_fitted_under_routing_gives_what_the_qid_column_path_gives(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        routed = QueryRanker(lgbm()).fit(X, y, qid=qid)
        result = permutation_importance(routed, X, y, qid=qid, n_repeats=N_REPEATS,
                                        random_state=SEED)
        search = GridSearchCV(QueryRanker(lgbm()), {"estimator__num_leaves": [7, 31]},
                              scoring=make_ranking_scorer("ndcg@10"), cv=QueryKFold(3))
        search = search.fit(X, y, qid=qid)
        through_search = permutation_importance(search, X, y, qid=qid,
                                                n_repeats=N_REPEATS, random_state=SEED)
    # Routing changes nothing here: the ids are given.
    unrouted = permutation_importance(routed, X, y, qid=qid, n_repeats=N_REPEATS,
                                      random_state=SEED)
    np.testing.assert_array_equal(result.importances, unrouted.importances)
    # The same model on the qid-column path: column j of X is column j + 1 there.
    Xq = np.column_stack([qid, X])
    column = QueryRanker(lgbm(), qid_column=0).fit(Xq, y)
    by_column = permutation_importance(column, Xq, y, n_repeats=N_REPEATS, random_state=SEED)
    np.testing.assert_allclose(by_column.importances[1:], result.importances, rtol=TOL,
                               atol=0)
    best = search.best_estimator_
    np.testing.assert_allclose(
        through_search.importances,
        permutation_importance(best, X, y, qid=qid, n_repeats=N_REPEATS,
                               random_state=SEED).importances, rtol=TOL, atol=0)


def test_the_ids_stay_fixed_where_the_column_cannot_be_named(data):
    """Behind a ColumnTransformer the ranker's qid_column counts the columns after
    it, so column 0 of X is shuffled like a feature; with the ids read once from
    the unshuffled X, shuffling it leaves every score as it was (the ranker drops
    it). scikit-learn's function scrambles the queries instead."""
    X, y, qid = data
    Xq = np.column_stack([qid, X])
    features = list(range(1, Xq.shape[1]))
    pipe = make_pipeline(
        ColumnTransformer([("q", "passthrough", [0]), ("f", StandardScaler(), features)]),
        QueryRanker(Ridge(), qid_column=0)).fit(Xq, y)
    ours = permutation_importance(pipe, Xq, y, n_repeats=N_REPEATS, random_state=SEED)
    assert ours.importances[0].tolist() == [0.0] * N_REPEATS
    assert np.all(ours.importances_mean[1:4] > 0)
    theirs = sklearn_permutation_importance(pipe, Xq, y, n_repeats=N_REPEATS,
                                            random_state=SEED,
                                            scoring=make_ranking_scorer("ndcg@10"))
    np.testing.assert_allclose(ours.importances[1:], theirs.importances[1:], rtol=TOL, atol=0)
    assert abs(theirs.importances_mean[0]) > 1e-3


def test_several_metrics_give_a_dict_of_the_single_metric_results(data):
    X, y, qid = data
    model = QueryRanker(Ridge()).fit(X, y, qid=qid)
    kwargs = dict(qid=qid, n_repeats=N_REPEATS, random_state=SEED)
    single = {spec: permutation_importance(model, X, y, scoring=spec, **kwargs)
              for spec in ("ndcg@10", "map@5")}
    as_list = permutation_importance(model, X, y, scoring=["ndcg@10", "ap@5"], **kwargs)
    as_dict = permutation_importance(model, X, y, scoring={"a": "ndcg@10", "b": "map@5"},
                                     **kwargs)
    as_scorer = permutation_importance(model, X, y, scoring=ranking_scoring(["ndcg@10",
                                                                            "map@5"]),
                                       **kwargs)
    assert list(as_list) == list(as_scorer) == ["ndcg@10", "map@5"]
    assert list(as_dict) == ["a", "b"]
    for got in (as_list, as_scorer, dict(zip(single, as_dict.values(), strict=True))):
        for spec, bunch in got.items():
            np.testing.assert_array_equal(bunch.importances, single[spec].importances)
    one = permutation_importance(model, X, y, scoring=make_ranking_scorer("ndcg@10"),
                                 **kwargs)
    np.testing.assert_array_equal(one.importances, single["ndcg@10"].importances)


def test_bad_input_is_refused_with_the_fix(data):
    X, y, qid = data
    model = QueryRanker(Ridge()).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"permutation_importance needs the query id of each "
                                         r"row of X: pass qid=<one query id per row>, or "
                                         r"give X a query-id column"):
        permutation_importance(model, X, y)
    with pytest.raises(TypeError, match=r"scoring holds 3\.5; give metric specs"):
        permutation_importance(model, X, y, qid=qid, scoring=["ndcg@10", 3.5])
    with pytest.raises(ValueError, match=r"scoring is empty"):
        permutation_importance(model, X, y, qid=qid, scoring=[])
    with pytest.raises(TypeError, match=r"The 'X' parameter of permutation_importance must "
                                        r"be an array-like\. Got <Compressed Sparse Row"):
        permutation_importance(model, sparse.csr_matrix(X), y, qid=qid)


# ------------------------------------------- the scorer's error when no qid arrives


def test_under_routing_the_error_names_what_works_not_routing(data):
    """scikit-learn's permutation_importance calls scorer(estimator, X, y): under
    routing no qid arrives, and the error must not advise turning routing on."""
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        model = QueryRanker(Ridge()).fit(X, y, qid=qid)
        with pytest.raises(ValueError) as info:
            sklearn_permutation_importance(model, X, y, n_repeats=1,
                                           scoring=make_ranking_scorer("ndcg@10"))
    message = str(info.value)
    assert message.startswith("The scorer for 'ndcg@10' needs the query id of each row of "
                              "X. Metadata routing is on, but no qid reached it")
    assert "set_config(enable_metadata_routing=True)" not in message
    assert "scikit-learn's permutation_importance is one" in message
    assert "sklearn_rank.inspection.permutation_importance(estimator, X, y, qid=qid)" in message
    assert "qid_column=j" in message
    # Routing off: the advice to turn it on stands.
    with pytest.raises(ValueError, match=r"needs the query id of each row of X\. Either "
                                         r"enable metadata routing \(sklearn\.set_config"):
        sklearn_permutation_importance(model, X, y, n_repeats=1,
                                       scoring=make_ranking_scorer("ndcg@10"))


def test_under_routing_every_missing_qid_error_says_routing_is_on(data):
    X, y, qid = data
    model = QueryRanker(Ridge()).fit(X, y, qid=qid)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match=r"QueryRanker\.score needs the query id of each "
                                             r"row of X\. Metadata routing is on"):
            model.score(X, y)
        with pytest.raises(ValueError, match=r"QueryKFold\.split needs the query id of each "
                                             r"row\. Metadata routing is on, but no qid "
                                             r"reached it.*split\(X, y, qid=qid\)"):
            list(QueryKFold(3).split(X))
        # A ranker hidden in a wrapper: routing is on, so the fix is to pass qid.
        Xq = np.column_stack([X, qid])
        wrapped = TransformedTargetRegressor(QueryRanker(Ridge(), qid_column=-1)).fit(Xq, y)
        with pytest.raises(ValueError) as info:
            make_ranking_scorer("ndcg@10")(wrapped, Xq, y)
    message = str(info.value)
    assert "cannot read query ids through TransformedTargetRegressor" in message
    assert "set_config(enable_metadata_routing=True)" not in message
    assert "metadata routing is on" in message

