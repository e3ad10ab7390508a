"""pandas and polars DataFrames with a query-id column, without metadata routing:
QueryRanker, the scorers, the splitters and ``cross_validate_ranker`` read the
column, and every id keeps its identity (polars strings stay Python strings:
NumPy's fixed-width strings would drop a trailing NUL and merge ``'a'`` with
``'a\\x00'``).

Every score is checked against ``ndcg_score`` recomputed by hand with the true ids.
"""

import numpy as np
import pandas as pd
import pytest
from lightgbm import LGBMRanker
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_validate

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer, ndcg_score
from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit, cross_validate_ranker

pl = pytest.importorskip("polars")

ATOL = 1e-12
LIBS = ["pandas", "polars"]


def lgbm(**params):
    return LGBMRanker(n_estimators=5, min_child_samples=2, verbose=-1, n_jobs=1,
                      deterministic=True, random_state=0, **params)


def make_data(n_queries=30, seed=0):
    """String query ids, some equal but for a trailing NUL; rows not grouped."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 12, size=n_queries)
    half = n_queries // 2
    names = [f"q{i}" for i in range(half)] + [f"q{i}\x00" for i in range(n_queries - half)]
    qid = np.array([names[i] for i in np.repeat(np.arange(n_queries), sizes)], dtype=object)
    X = rng.normal(size=(qid.shape[0], 3))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=qid.shape[0]), [0.3, 1.0])
    perm = rng.permutation(qid.shape[0])
    return X[perm], y[perm], qid[perm]


def frame(lib, X, qid, name="qid"):
    columns = {f"f{j}": X[:, j] for j in range(X.shape[1])}
    columns[name] = list(qid)
    return pd.DataFrame(columns) if lib == "pandas" else pl.DataFrame(columns)


def rows(df, index):
    return df.iloc[index] if hasattr(df, "iloc") else df[index]


@pytest.fixture(scope="module")
def data():
    return make_data()


def test_the_data_has_queries_that_differ_by_a_trailing_nul(data):
    _, _, qid = data
    stripped = {q.rstrip("\x00") for q in qid}
    assert len(stripped) < len(set(qid))


@pytest.mark.parametrize("lib", LIBS)
def test_query_ranker_and_scorers_read_the_column_as_it_is(data, lib):
    X, y, qid = data
    df = frame(lib, X, qid)
    model = QueryRanker(Ridge()).fit(df, y)
    ids = model.query_ids(df)
    assert ids.dtype == object and list(ids) == list(qid)
    expected = ndcg_score(y, model.predict(df), qid=qid, k=10)
    assert model.score(df, y) == pytest.approx(expected, abs=ATOL)
    assert make_ranking_scorer("ndcg@10")(model, df, y) == pytest.approx(expected, abs=ATOL)
    # the inner model never sees the ids
    assert model.estimator_.n_features_in_ == 3


@pytest.mark.parametrize("cv", [QueryKFold(3), QueryShuffleSplit(3, random_state=0)])
@pytest.mark.parametrize("lib", LIBS)
def test_splitters_read_the_column(data, lib, cv):
    X, y, qid = data
    df = frame(lib, X, qid)
    assert ([t.tolist() for _, t in cv.split(df)]
            == [t.tolist() for _, t in cv.split(X, qid=qid)])


@pytest.mark.parametrize("lib", LIBS)
def test_grid_search_without_routing(data, lib):
    """A frame with a 'qid' column and nothing else: the splitter, every fit and every
    scorer read the column; each fold score equals NDCG@10 by hand."""
    X, y, qid = data
    df = frame(lib, X, qid)
    cv = QueryKFold(3)
    search = GridSearchCV(QueryRanker(lgbm()), {"estimator__num_leaves": [3, 7]}, cv=cv,
                          scoring=make_ranking_scorer("ndcg@10"), error_score="raise")
    search.fit(df, y)
    folds = list(cv.split(X, qid=qid))
    for train, test in folds:
        assert not set(qid[train]) & set(qid[test])
    for i, params in enumerate(search.cv_results_["params"]):
        for k, (train, test) in enumerate(folds):
            model = clone(QueryRanker(lgbm())).set_params(**params)
            model.fit(X[train], y[train], qid=qid[train])
            expected = ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=10)
            assert search.cv_results_[f"split{k}_test_score"][i] == pytest.approx(
                expected, abs=ATOL)
    res = cross_validate(QueryRanker(lgbm()), df, y, cv=cv,
                         scoring=make_ranking_scorer("ndcg@10"))
    assert res["test_score"].shape == (3,)


# ------------------------------------------------------------- cross_validate_ranker


def by_hand(estimator, X, y, qid):
    scores = []
    for train, test in QueryKFold(3).split(X, qid=qid):
        model = clone(estimator).fit(X[train], y[train], qid=qid[train])
        scores.append(ndcg_score(y[test], model.predict(X[test]), qid=qid[test], k=10))
    return np.array(scores)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("how", ["found", "named", "other name", "values"])
def test_cross_validate_ranker_takes_a_column(data, lib, how):
    X, y, qid = data
    name = "query" if how == "other name" else "qid"
    df = frame(lib, X, qid, name=name)
    kwargs = ({"qid": df["qid"]} if how == "values"
              else {"found": {}, "named": {"qid": "qid"}, "other name": {"qid": "query"}}[how])
    res = cross_validate_ranker(lgbm(), df, y, cv=3, return_estimator=True,
                                error_score="raise", **kwargs)
    np.testing.assert_allclose(res["test_score"], by_hand(QueryRanker(lgbm()), X, y, qid),
                               rtol=0, atol=ATOL)
    # the column never reaches the model as a feature
    assert all(est.estimator_.n_features_ == 3 for est in res["estimator"])


@pytest.mark.parametrize("lib", LIBS)
def test_cross_validate_ranker_takes_the_column_out_for_a_regressor(data, lib):
    """A regressor is used as it is: the column must not become a feature."""
    X, y, qid = data
    res = cross_validate_ranker(Ridge(), frame(lib, X, qid, name="query"), y, qid="query",
                                cv=3, return_estimator=True, error_score="raise")
    assert all(est.n_features_in_ == 3 for est in res["estimator"])
    np.testing.assert_allclose(res["test_score"], by_hand(QueryRanker(Ridge()), X, y, qid),
                               rtol=0, atol=ATOL)


def test_cross_validate_ranker_errors_name_the_fix(data):
    X, y, qid = data
    df = frame("pandas", X, qid)
    with pytest.raises(ValueError, match=r"cross_validate_ranker needs the query id of each "
                                         r"row of X: pass qid=<one query id per row>, "
                                         r"qid='<name of the DataFrame column.*or give X a "
                                         r"DataFrame column named 'qid'"):
        cross_validate_ranker(lgbm(), X, y)
    with pytest.raises(ValueError, match=r"qid='qid' names a column of X, but X is not a "
                                         r"DataFrame; pass qid=<one query id per row>"):
        cross_validate_ranker(lgbm(), X, y, qid="qid")
    with pytest.raises(ValueError, match=r"cross_validate_ranker\(qid='query'\): X has no "
                                         r"column named 'query'; its columns are"):
        cross_validate_ranker(lgbm(), df, y, qid="query")
    with pytest.raises(ValueError, match=r"takes the query-id column 'qid' out of X, so "
                                         r"QueryRanker\(qid_column='qid'\) would not find it"):
        cross_validate_ranker(QueryRanker(lgbm(), qid_column="qid"), df, y)
