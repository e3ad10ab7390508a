"""The habits LightGBM and scikit-learn users bring end in errors that name the
working line: ``group=sizes`` anywhere names ``qid_from_group_sizes``; group sizes
passed where per-row ids go say so; ``make_scorer(ndcg_score)`` without qid names
``make_ranking_scorer`` (issue 25, items 3 and 4)."""

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import Ridge
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

from sklearn_rank.datasets import group_sizes_from_qid, make_ranking, qid_from_group_sizes
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import evaluate, make_ranking_scorer, ndcg_score, precision_at_k_score
from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

FIX = "qid=sklearn_rank.datasets.qid_from_group_sizes(group)"


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=12, random_state=0)
    return X, y, qid, group_sizes_from_qid(qid)


def _lightgbm():
    return pytest.importorskip("lightgbm").LGBMRanker(n_estimators=3, verbose=-1)


@pytest.mark.parametrize("call", [
    pytest.param(lambda X, y, s: QueryRanker(Ridge()).fit(X, y, group=s), id="QueryRanker"),
    pytest.param(lambda X, y, s: QueryRanker(_lightgbm()).fit(X, y, group=s),
                 id="QueryRanker(LGBMRanker)"),
    pytest.param(lambda X, y, s: ndcg_score(y, X[:, 0], group=s), id="ndcg_score"),
    pytest.param(lambda X, y, s: precision_at_k_score(y, X[:, 0], k=5, group=s),
                 id="precision_at_k_score"),
    pytest.param(lambda X, y, s: evaluate(y, X[:, 0], group=s), id="evaluate"),
    pytest.param(lambda X, y, s: make_ranking_scorer("ndcg@10", group=s),
                 id="make_ranking_scorer"),
    pytest.param(lambda X, y, s: cross_validate_ranker(Ridge(), X, y, group=s),
                 id="cross_validate_ranker"),
])
def test_group_sizes_where_query_ids_go_name_the_helper(data, call):
    X, y, _, sizes = data
    with pytest.raises((ValueError, TypeError), match="group") as info:
        call(X, y, sizes)
    assert FIX in str(info.value)


def test_eval_group_names_the_helper_for_each_set(data):
    X, y, _, sizes = data
    with pytest.raises(ValueError, match="eval_group") as info:
        QueryRanker(_lightgbm()).fit(X, y, qid=qid_from_group_sizes(sizes),
                                     eval_set=[(X, y)], eval_group=[sizes])
    assert ("eval_qid=[sklearn_rank.datasets.qid_from_group_sizes(g) for g in eval_group]"
            in str(info.value))


@pytest.mark.parametrize("call", [
    pytest.param(lambda X, y, s: QueryRanker(Ridge()).fit(X, y, qid=s), id="QueryRanker"),
    pytest.param(lambda X, y, s: ndcg_score(y, X[:, 0], qid=s), id="ndcg_score"),
    pytest.param(lambda X, y, s: list(QueryKFold(3).split(X, y, qid=s)), id="QueryKFold-qid"),
    pytest.param(lambda X, y, s: list(QueryKFold(3).split(X, y, groups=s)),
                 id="QueryKFold-groups"),
])
def test_group_sizes_passed_as_ids_name_the_helper(data, call):
    X, y, _, sizes = data
    with pytest.raises(ValueError, match=f"{len(sizes)}") as info:
        call(X, y, sizes)
    assert "LightGBM group sizes" in str(info.value) and FIX in str(info.value)


def test_the_helpers_line_is_the_working_line(data):
    X, y, qid, sizes = data
    expected = ndcg_score(y, X[:, 0], qid=qid)
    assert ndcg_score(y, X[:, 0], qid=qid_from_group_sizes(sizes)) == pytest.approx(
        expected, rel=1e-12)


def test_other_unknown_arguments_keep_their_message(data):
    X, y, qid, _ = data
    with pytest.raises(TypeError) as info:
        ndcg_score(y, X[:, 0], qid=qid, groups=qid)
    assert "qid_from_group_sizes" not in str(info.value)


def test_make_scorer_without_qid_names_make_ranking_scorer(data):
    X, y, qid, _ = data
    with pytest.raises(ValueError, match="called by a scikit-learn scorer") as info:
        cross_val_score(Ridge(), X, y, groups=qid, cv=GroupKFold(3),
                        scoring=make_scorer(ndcg_score, k=10), error_score="raise")
    assert "scoring=sklearn_rank.metrics.make_ranking_scorer('ndcg@10')" in str(info.value)
    # in a search: the same message, whichever way the search reports it
    search = GridSearchCV(Ridge(), {"alpha": [1.0]}, cv=GroupKFold(3),
                          scoring=make_scorer(ndcg_score), error_score="raise")
    with pytest.raises(ValueError, match=r"make_ranking_scorer\('ndcg'\)"):
        search.fit(X, y, groups=qid)


def test_the_suggested_scorer_gives_the_numbers_make_scorer_gives_under_routing(data):
    X, y, qid, _ = data
    with sklearn.config_context(enable_metadata_routing=True):
        ours = cross_val_score(QueryRanker(Ridge()), X, y, cv=QueryKFold(3),
                               scoring=make_ranking_scorer("ndcg@10"), params={"qid": qid})
        theirs = cross_val_score(
            QueryRanker(Ridge()), X, y, cv=QueryKFold(3), params={"qid": qid},
            scoring=make_scorer(ndcg_score, k=10).set_score_request(qid=True))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_direct_call_without_qid_names_qid_first_then_the_scorer(data):
    X, y, _, _ = data
    with pytest.raises(ValueError) as info:
        precision_at_k_score(y, X[:, 0], k=5)
    message = str(info.value)
    assert message.startswith("y_true and y_score are 1-D, so the query of each row is "
                              "unknown. Pass qid=")
    assert "make_ranking_scorer('p@5')" in message
    assert "called by a scikit-learn scorer" not in message
