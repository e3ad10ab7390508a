"""QueryRanker: what the inner model receives, label checks, eval sets, estimator checks."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from lightgbm import LGBMRanker
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks
from xgboost import XGBRanker

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import evaluate, ndcg_score


def _data(seed=0, n_queries=30, shuffle=True):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 15, n_queries)
    qid = np.repeat(np.arange(100, 100 + n_queries), sizes)
    X = rng.normal(size=(qid.shape[0], 4))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=qid.shape[0])), 0, 3).astype(int)
    if shuffle:
        perm = rng.permutation(qid.shape[0])
        X, y, qid = X[perm], y[perm], qid[perm]
    return X, y, qid


class _Spy(RegressorMixin, BaseEstimator):
    """Records what ``fit`` receives; ``kind`` picks the fit signature."""

    def __init__(self, kind="group"):
        self.kind = kind

    def fit(self, X, y, **kwargs):
        self.X_, self.y_, self.kwargs_ = X, y, kwargs
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


class _LightGBMLike(_Spy):
    def fit(self, X, y, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_sample_weight=None):
        return super().fit(X, y, group=group, sample_weight=sample_weight, eval_set=eval_set,
                           eval_group=eval_group, eval_sample_weight=eval_sample_weight)


class _XGBoostLike(_Spy):
    def fit(self, X, y, group=None, qid=None, sample_weight=None, eval_set=None,
            eval_qid=None, sample_weight_eval_set=None):
        return super().fit(X, y, qid=qid, sample_weight=sample_weight, eval_set=eval_set,
                           eval_qid=eval_qid, sample_weight_eval_set=sample_weight_eval_set)


class _Pointwise(_Spy):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sample_weight=sample_weight)


def test_lightgbm_gets_group_sizes_of_rows_sorted_stably_by_query():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 2, 3, 4, 5])
    qid = np.array(["b", "a", "b", "c", "a", "b"])
    w = np.array([1.0, 2, 3, 4, 5, 6])
    inner = QueryRanker(_LightGBMLike()).fit(X, y, qid=qid, sample_weight=w).estimator_
    assert inner.kwargs_["group"].tolist() == [2, 3, 1]  # a, b, c
    assert inner.y_.tolist() == [1, 4, 0, 2, 5, 3]  # stable within each query
    assert inner.X_[:, 0].tolist() == [2, 8, 0, 4, 10, 6]
    assert inner.kwargs_["sample_weight"].tolist() == [2, 5, 1, 3, 6, 4]


def test_xgboost_gets_sorted_qid_and_query_weights():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 2, 3, 4, 5])
    qid = np.array([7, 3, 7, 9, 3, 7])
    w = np.array([1.0, 2, 3, 4, 6, 5])
    inner = QueryRanker(_XGBoostLike()).fit(X, y, qid=qid, sample_weight=w).estimator_
    assert inner.kwargs_["qid"].tolist() == [0, 0, 1, 1, 1, 2]
    assert np.all(np.diff(inner.kwargs_["qid"]) >= 0)
    # one weight per query: the mean of its rows' weights
    assert inner.kwargs_["sample_weight"].tolist() == [4.0, 3.0, 4.0]


def test_pointwise_regressor_gets_nothing_extra_and_qid_is_optional():
    X, y, qid = _data()
    inner = QueryRanker(_Pointwise()).fit(X, y, qid=qid).estimator_
    assert set(inner.kwargs_) == {"sample_weight"} and inner.kwargs_["sample_weight"] is None
    QueryRanker(Ridge()).fit(X, y)  # no qid needed to fit a pointwise model


@pytest.mark.parametrize("shuffle", [False, True])
def test_real_lightgbm_matches_lightgbm_on_presorted_data(shuffle):
    X, y, qid = _data(shuffle=shuffle)
    params = dict(n_estimators=10, min_child_samples=2, verbose=-1, deterministic=True,
                  n_jobs=1)
    ours = QueryRanker(LGBMRanker(**params)).fit(X, y, qid=qid)
    order = np.argsort(qid, kind="stable")
    direct = LGBMRanker(**params).fit(X[order], y[order],
                                      group=np.unique(qid, return_counts=True)[1])
    np.testing.assert_array_equal(ours.predict(X), direct.predict(X))
    assert ours.score(X, y, qid=qid) == ndcg_score(y, direct.predict(X), qid=qid, k=10)


def test_real_xgboost_matches_xgboost_on_presorted_data():
    X, y, qid = _data()
    ours = QueryRanker(XGBRanker(n_estimators=5, n_jobs=1)).fit(X, y, qid=qid)
    order = np.argsort(qid, kind="stable")
    direct = XGBRanker(n_estimators=5, n_jobs=1).fit(X[order], y[order], qid=qid[order])
    np.testing.assert_array_equal(ours.predict(X), direct.predict(X))


def test_qid_column_of_array_and_frame_is_dropped():
    import pandas as pd
    X, y, qid = _data()
    with_col = np.column_stack([X[:, :2], qid, X[:, 2:]])
    model = QueryRanker(_LightGBMLike(), qid_column=2).fit(with_col, y)
    assert model.estimator_.X_.shape[1] == 4 and model.n_features_in_ == 5
    np.testing.assert_array_equal(model.query_ids(with_col), qid)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(qid=qid)
    model = QueryRanker(_LightGBMLike()).fit(frame, y)
    assert list(model.estimator_.X_.columns) == list("abcd")
    assert model.feature_names_in_.tolist() == ["a", "b", "c", "d", "qid"]
    assert model.predict(frame).shape == (qid.shape[0],)
    named = QueryRanker(_LightGBMLike(), qid_column="a").fit(frame.drop(columns="qid"), y)
    assert list(named.estimator_.X_.columns) == list("bcd")
    # An explicit qid wins over the column, which is dropped anyway.
    explicit = QueryRanker(_LightGBMLike()).fit(frame, y, qid=np.zeros(len(y)))
    assert explicit.estimator_.kwargs_["group"].tolist() == [len(y)]


def test_score_is_ndcg_at_10():
    X, y, qid = _data()
    model = QueryRanker(Ridge()).fit(X, y)
    assert model.score(X, y, qid=qid) == ndcg_score(y, model.predict(X), qid=qid, k=10)
    with_col = np.column_stack([X, qid])
    model = QueryRanker(Ridge(), qid_column=-1).fit(with_col, y)
    assert model.score(with_col, y) == evaluate(
        y, model.predict(with_col), qid=qid, metrics=["ndcg@10"]).mean["ndcg@10"]


def test_params_reachable_for_grids():
    model = QueryRanker(LGBMRanker())
    model.set_params(estimator__num_leaves=7)
    assert model.get_params()["estimator__num_leaves"] == 7


@pytest.mark.parametrize(
    "estimator, y, match",
    [
        (LGBMRanker(), [0, -1, 2, 1], r"1 label\(s\) that are not non-negative integers "
                                      r"\(first: np.int64\(-1\)\)|1 label\(s\) that are not"),
        (LGBMRanker(), [0, 0.5, 2, 1], r"not non-negative integers"),
        (LGBMRanker(), [0, 40, 2, 1], r"labels up to 40, but LightGBM's ranking objective "
                                      r"takes labels below len\(label_gain\) = 31"),
        (LGBMRanker(label_gain=[0, 1, 3]), [0, 3, 2, 1], r"below len\(label_gain\) = 3"),
        (XGBRanker(), [0, 32, 2, 1], r"XGBoost's exponential NDCG gain takes labels below 32"),
        (LGBMRanker(), ["a", "b", "c", "d"], r"Unknown label type"),
    ],
)
def test_labels_are_checked_for_the_inner_model(estimator, y, match):
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match=match):
        QueryRanker(estimator).fit(X, np.array(y), qid=[1, 1, 2, 2])


def test_bigger_label_gain_accepts_bigger_labels():
    X, _, qid = _data()
    y = np.arange(qid.shape[0]) % 40
    QueryRanker(LGBMRanker(n_estimators=2, verbose=-1, label_gain=list(range(40)))).fit(
        X, y, qid=qid)


def test_group_sizes_cannot_slip_through():
    X, y, qid = _data()
    with pytest.raises(ValueError, match=r"builds group from query ids; pass qid="):
        QueryRanker(LGBMRanker()).fit(X, y, group=np.unique(qid, return_counts=True)[1])
    with pytest.raises(ValueError, match=r"pass eval_qid=\[sklearn_rank\.datasets\."
                                         r"qid_from_group_sizes\(g\) for g in eval_group\] "
                                         r"instead of eval_group="):
        QueryRanker(LGBMRanker()).fit(X, y, qid=qid, eval_group=[[3]])
    sizes = np.unique(qid, return_counts=True)[1]
    with pytest.raises(ValueError, match=r"X has \d+ rows but qid has \d+ values; pass one "
                                         r"query id per row \(not group sizes\)"):
        QueryRanker(LGBMRanker()).fit(X, y, qid=sizes)


def test_missing_qid_names_both_fixes():
    X, y, _ = _data()
    with pytest.raises(ValueError, match=r"QueryRanker\.fit needs the query id of each row.*"
                                         r"enable_metadata_routing=True.*qid_column=j"):
        QueryRanker(LGBMRanker()).fit(X, y)
    model = QueryRanker(Ridge()).fit(X, y)
    with pytest.raises(ValueError, match=r"QueryRanker\.score needs the query id"):
        model.score(X, y)


def test_eval_set_is_sorted_and_mapped_for_early_stopping():
    import lightgbm

    X, y, qid = _data(seed=1, n_queries=40)
    Xv, yv, qv = _data(seed=2, n_queries=15)
    model = QueryRanker(LGBMRanker(n_estimators=200, learning_rate=0.3, min_child_samples=2,
                                   verbose=-1, n_jobs=1))
    model.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_at=[3],
              callbacks=[lightgbm.early_stopping(3, verbose=False)])
    inner = model.estimator_
    assert 0 < inner.best_iteration_ < 200
    reported = inner.evals_result_["valid_0"]["ndcg@3"][inner.best_iteration_ - 1]
    ours = ndcg_score(yv, model.predict(Xv), qid=qv, k=3, convention="lightgbm")
    assert reported == pytest.approx(ours, abs=1e-12)
    spy = QueryRanker(_LightGBMLike()).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv],
                                           eval_sample_weight=[np.ones(len(yv))])
    assert spy.estimator_.kwargs_["eval_group"][0].tolist() == np.unique(
        qv, return_counts=True)[1].tolist()
    xgb = QueryRanker(_XGBoostLike()).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv],
                                          eval_sample_weight=[np.ones(len(yv))])
    assert np.all(np.diff(xgb.estimator_.kwargs_["eval_qid"][0]) >= 0)
    assert xgb.estimator_.kwargs_["sample_weight_eval_set"][0].shape == (15,)
    with pytest.raises(ValueError, match=r"eval_set has 1 sets but eval_qid"):
        QueryRanker(LGBMRanker()).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv, qv])


def test_requests_qid_by_default_under_routing():
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        routing = QueryRanker(LGBMRanker()).get_metadata_routing()
    assert routing.fit.requests["qid"] is True and routing.score.requests["qid"] is True
    assert routing.fit.requests["sample_weight"] is None


_REASON_NO_QID = ("score is per-query NDCG@10 and needs query ids; the check passes X and y "
                  "only")
_REASON_QID_COLUMN = ("the check writes {what} into column 0 of X, which qid_column=0 makes "
                      "the query-id column: a clear error about the query ids is the intended "
                      "behaviour")
_REASON_FLOAT_IDS = ("score reads the query ids from column 0, which holds the check's random "
                     "floats: non-integer query ids are refused (a scaled or wrong column)")


def _expected_failures(estimator):
    if estimator.qid_column is None:
        return {"check_fit_score_takes_y": _REASON_NO_QID,
                "check_pipeline_consistency": _REASON_NO_QID,
                "check_array_api_input": _REASON_NO_QID}
    return {
        "check_dtype_object": _REASON_QID_COLUMN.format(what="a dict"),
        "check_estimators_pickle": _REASON_QID_COLUMN.format(what="NaN"),
        "check_fit_score_takes_y": _REASON_FLOAT_IDS,
        "check_pipeline_consistency": _REASON_FLOAT_IDS,
        "check_array_api_input": _REASON_FLOAT_IDS,
    }


@parametrize_with_checks(
    [
        QueryRanker(Ridge()),
        # The checks cannot pass qid; rankers get theirs from column 0 instead.
        QueryRanker(LGBMRanker(n_estimators=5, min_child_samples=1, verbose=-1, n_jobs=1),
                    qid_column=0),
        QueryRanker(XGBRanker(n_estimators=3, n_jobs=1), qid_column=0),
    ],
    expected_failed_checks=_expected_failures,
)
def test_estimator_checks(estimator, check):
    if getattr(check, "func", None) is getattr(estimator_checks, "check_array_api_input", None):
        # scikit-learn skips this check unless SCIPY_ARRAY_API=1 was set before
        # SciPy was imported: run it in a fresh interpreter where it is.
        _run_with_scipy_array_api(estimator, check)
    else:
        check(estimator)


def _run_with_scipy_array_api(estimator, check):
    name = type(estimator).__name__
    code = (
        "import pickle, sys\n"
        "from sklearn.utils.estimator_checks import check_array_api_input\n"
        "estimator, keywords = pickle.loads(sys.stdin.buffer.read())\n"
        f"check_array_api_input({name!r}, estimator, **keywords)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(
        (estimator, check.keywords)), capture_output=True,
        env={**os.environ, "SCIPY_ARRAY_API": "1"}, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]


def _sklearn_message(check, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as info:
        check(*args, **kwargs)
    return str(info.value)


def test_inputs_are_refused_by_scikit_learns_own_checks():
    """X, y and sample_weight are refused with the messages of scikit-learn's
    check_array / check_X_y / _check_sample_weight, not copies of them."""
    from sklearn.utils import check_array
    from sklearn.utils.validation import check_consistent_length, check_X_y

    from sklearn_rank._utils.compat import check_sample_weight

    X, y = np.ones((4, 2)), np.array([0, 1, 0, 1])
    ranker = QueryRanker(Ridge())
    cases = [
        ((X[:, 0], y), {}, lambda: check_array(X[:, 0], estimator=ranker)),
        ((X + 1j, y), {}, lambda: check_array(X + 1j, estimator=ranker)),
        ((np.ones((0, 2)), y[:0]), {}, lambda: check_array(np.ones((0, 2)), estimator=ranker)),
        ((X, None), {}, lambda: check_X_y(X, None, estimator=ranker)),
        ((X, y[:3]), {}, lambda: check_consistent_length(X, y[:3])),
        ((X, y), {"sample_weight": np.zeros(4)}, lambda: check_sample_weight(np.zeros(4), X)),
        ((X, y), {"sample_weight": -np.ones(4)}, lambda: check_sample_weight(-np.ones(4), X)),
        ((X, y), {"sample_weight": np.ones(3)}, lambda: check_sample_weight(np.ones(3), X)),
    ]
    for args, kwargs, check in cases:
        with pytest.raises(ValueError) as info:
            QueryRanker(Ridge()).fit(*args, **kwargs)
        assert str(info.value) == _sklearn_message(check)
    fitted = QueryRanker(Ridge()).fit(X, y)
    with pytest.raises(ValueError, match=r"^X has 3 features, but QueryRanker is expecting 2 "
                                         r"features as input\.$"):
        fitted.predict(np.ones((4, 3)))


def test_frames_and_sparse_matrices_reach_the_inner_model_as_they_are():
    import pandas as pd
    import scipy.sparse as sp

    X, y, qid = _data(n_queries=5)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(qid=qid.astype(str))
    inner = QueryRanker(_LightGBMLike()).fit(frame, y).estimator_
    assert isinstance(inner.X_, pd.DataFrame) and list(inner.X_.dtypes) == [np.float64] * 4
    inner = QueryRanker(_LightGBMLike()).fit(sp.coo_matrix(X), y, qid=qid).estimator_
    assert sp.issparse(inner.X_) and inner.X_.format == "csr"
    np.testing.assert_array_equal(inner.X_.toarray(), X[np.argsort(qid, kind="stable")])
