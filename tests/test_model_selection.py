"""Query-keeping splitters."""

import numpy as np
import pytest
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit


def _qid(seed=0, n_queries=40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, n_queries)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, sizes)
    return qid[rng.permutation(qid.shape[0])]


def _check_split(train, test, qid):
    assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)  # ascending
    assert not set(qid[train]) & set(qid[test])  # queries kept whole


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=6, max_size=200), st.integers(2, 5),
       st.booleans())
def test_kfold_keeps_queries_whole_and_covers_every_row_once(ids, n_splits, shuffle):
    qid = np.array(ids)
    if np.unique(qid).shape[0] < n_splits:
        return
    cv = QueryKFold(n_splits, shuffle=shuffle, random_state=0 if shuffle else None)
    seen = np.zeros(qid.shape[0], dtype=int)
    for train, test in cv.split(qid=qid):
        _check_split(train, test, qid)
        assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(qid.shape[0]))
        seen[test] += 1
    assert np.all(seen == 1)


def test_kfold_balances_rows_not_only_queries():
    # One huge query and many small ones: counting queries would put the big
    # one with a share of the small ones.
    qid = np.concatenate([np.zeros(100, int), np.repeat(np.arange(1, 41), 5)])
    sizes = [test.shape[0] for _, test in QueryKFold(3).split(qid=qid)]
    assert sorted(sizes) == [100, 100, 100]
    rng = np.random.default_rng(0)
    qid = _qid()
    largest = np.bincount(np.unique(qid, return_inverse=True)[1]).max()
    for shuffle in (False, True):
        sizes = [t.shape[0] for _, t in QueryKFold(4, shuffle=shuffle,
                                                   random_state=rng.integers(99) if shuffle
                                                   else None).split(qid=qid)]
        assert max(sizes) - min(sizes) <= largest


def test_kfold_ids_from_qid_groups_or_frame():
    import pandas as pd
    qid = _qid()
    X = pd.DataFrame({"f": np.arange(qid.shape[0]), "qid": qid})
    a = [t.tolist() for _, t in QueryKFold(3).split(qid=qid)]
    b = [t.tolist() for _, t in QueryKFold(3).split(X, groups=qid)]
    c = [t.tolist() for _, t in QueryKFold(3).split(X)]
    assert a == b == c
    strings = np.array([f"q{v:05d}" for v in qid])  # same order as the ints
    assert [t.tolist() for _, t in QueryKFold(3).split(qid=strings)] == a


def test_kfold_shuffle_is_reproducible_and_random():
    qid = _qid()
    folds = [[t.tolist() for _, t in QueryKFold(3, shuffle=True, random_state=s).split(qid=qid)]
             for s in (1, 1, 2)]
    assert folds[0] == folds[1] and folds[0] != folds[2]


def test_kfold_errors():
    with pytest.raises(ValueError, match=r"needs at least 3 queries for n_splits=3, but the "
                                         r"data has 2"):
        list(QueryKFold(3).split(qid=[1, 1, 2]))
    with pytest.raises(ValueError, match=r"got both qid and groups"):
        list(QueryKFold(2).split(qid=[1, 2], groups=[1, 2]))
    with pytest.raises(ValueError, match=r"QueryKFold\.split needs the query id of each row.*"
                                         r"enable metadata routing.*DataFrame column named "
                                         r"'qid'.*groups=qid alone is not enough.*"
                                         r"split\(X, y, qid=qid\)"):
        list(QueryKFold(2).split(np.zeros((4, 2))))
    with pytest.raises(ValueError, match=r"X has 4 rows but qid has 3 values"):
        list(QueryKFold(2).split(np.zeros((4, 2)), qid=[1, 2, 3]))
    with pytest.raises(ValueError, match=r"'n_splits' parameter of QueryKFold must be an int "
                                         r"in the range \[2, inf\)"):
        QueryKFold(1)
    with pytest.raises(ValueError, match=r"random_state has no effect since shuffle is False"):
        QueryKFold(3, random_state=0)


def test_get_n_splits_takes_routed_metadata():
    assert QueryKFold(4).get_n_splits(None, None, qid=[1, 2]) == 4
    assert QueryShuffleSplit(3).get_n_splits(groups=[1]) == 3


def test_splitters_request_qid_by_default():
    for cv in (QueryKFold(), QueryShuffleSplit()):
        with sklearn.config_context(enable_metadata_routing=True):
            requests = cv.get_metadata_routing().split.requests
        assert requests["qid"] is True and requests["groups"] is True
        assert "QueryKFold" in repr(QueryKFold()) or "QueryShuffleSplit" in repr(cv)


def test_shuffle_split_sizes():
    qid = _qid(n_queries=50)
    n = qid.shape[0]
    for train, test in QueryShuffleSplit(5, test_size=0.25, random_state=0).split(qid=qid):
        _check_split(train, test, qid)
        assert train.shape[0] + test.shape[0] == n
        # The shortest prefix of shuffled queries holding >= 25% of the rows.
        assert test.shape[0] >= 0.25 * n and test.shape[0] < 0.25 * n + 30
    for train, test in QueryShuffleSplit(3, test_size=5, train_size=10,
                                         random_state=1).split(qid=qid):
        _check_split(train, test, qid)
        assert np.unique(qid[test]).shape[0] == 5 and np.unique(qid[train]).shape[0] == 10
    for train, test in QueryShuffleSplit(3, train_size=0.5, random_state=2).split(qid=qid):
        _check_split(train, test, qid)
        assert train.shape[0] >= 0.5 * n and train.shape[0] + test.shape[0] == n


def test_shuffle_split_default_test_size_and_reproducibility():
    qid = _qid()
    a = [t.tolist() for _, t in QueryShuffleSplit(4, random_state=3).split(qid=qid)]
    b = [t.tolist() for _, t in QueryShuffleSplit(4, random_state=3).split(qid=qid)]
    assert a == b and len({tuple(x) for x in a}) == 4
    assert all(0.2 * qid.shape[0] <= len(t) for t in a)


def test_shuffle_split_errors():
    with pytest.raises(ValueError, match=r"'test_size' parameter of QueryShuffleSplit must be "
                                         r"a float in the range \(0.0, 1.0\)"):
        QueryShuffleSplit(test_size=1.5)
    with pytest.raises(ValueError, match=r"test_size \+ train_size = 1.1 exceeds 1"):
        QueryShuffleSplit(test_size=0.5, train_size=0.6)
    with pytest.raises(ValueError, match=r"needs at least 2 queries"):
        list(QueryShuffleSplit().split(qid=[1, 1]))
    with pytest.raises(ValueError, match=r"leave an empty train or test set"):
        list(QueryShuffleSplit(test_size=3).split(qid=[1, 2, 3]))
