"""Group sizes <-> per-row query ids, and LETOR files from any writer (zero_based)."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from sklearn_rank.datasets import (
    group_sizes_from_qid,
    load_svmlight_ranking,
    make_ranking,
    qid_from_group_sizes,
)

# -- qid_from_group_sizes / group_sizes_from_qid ------------------------------


def test_sizes_to_qid_and_back():
    sizes = np.array([3, 1, 4, 1, 5])
    qid = qid_from_group_sizes(sizes)
    assert qid.dtype == np.int64
    np.testing.assert_array_equal(qid, np.repeat(np.arange(5), sizes))
    np.testing.assert_array_equal(group_sizes_from_qid(qid), sizes)


@pytest.mark.parametrize("qid", [
    [7, 7, 7, 3, 3, 9],
    np.array([7, 7, 7, 3, 3, 9], dtype=np.uint8),
    ["q7", "q7", "q7", "q3", "q3", "q9"],
    np.array([7.0, 7.0, 7.0, 3.0, 3.0, 9.0]),
])
def test_qid_to_sizes_keeps_the_order_of_the_rows(qid):
    sizes = group_sizes_from_qid(qid)
    assert sizes.dtype == np.int64
    np.testing.assert_array_equal(sizes, [3, 2, 1])


def test_round_trip_from_make_ranking():
    _, _, qid = make_ranking(n_queries=30, random_state=0)
    sizes = group_sizes_from_qid(qid)
    assert sizes.sum() == qid.shape[0]
    back = qid_from_group_sizes(sizes)
    # the same partition into queries (ids renumbered by position)
    np.testing.assert_array_equal(np.r_[True, back[1:] != back[:-1]],
                                  np.r_[True, qid[1:] != qid[:-1]])


def test_sizes_as_lightgbm_and_qid_as_query_ranker_see_them():
    lightgbm = pytest.importorskip("lightgbm")
    from sklearn_rank.estimators import QueryRanker

    X, y, qid = make_ranking(n_queries=12, random_state=1)
    sizes = group_sizes_from_qid(qid)
    params = dict(n_estimators=5, verbose=-1, random_state=0, deterministic=True,
                  force_row_wise=True)
    direct = lightgbm.LGBMRanker(**params).fit(X, y, group=sizes)
    wrapped = QueryRanker(lightgbm.LGBMRanker(**params)).fit(
        X, y, qid=qid_from_group_sizes(sizes))
    np.testing.assert_allclose(wrapped.predict(X), direct.predict(X), rtol=1e-12)


@pytest.mark.parametrize("qid, row, first, query", [
    ([1, 1, 2, 1], 3, 0, "1"),
    (["a", "b", "b", "c", "b"], 4, 1, "'b'"),
    ([5, 6, 7, 6, 5], 3, 1, "6"),
])
def test_non_contiguous_ids_are_refused_naming_the_row(qid, row, first, query):
    with pytest.raises(ValueError, match="qid") as info:
        group_sizes_from_qid(qid)
    message = str(info.value)
    assert f"query {query} are not contiguous" in message
    assert f"comes back at row {row} " in message
    assert f"its first row is {first}" in message
    assert "np.argsort(qid, kind='stable')" in message


def test_missing_ids_are_refused():
    with pytest.raises(ValueError, match="qid"):
        group_sizes_from_qid([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="qid is empty"):
        group_sizes_from_qid(np.array([], dtype=int))


def test_zero_sizes_are_empty_groups_as_in_lightgbm():
    # LightGBM 4 accepts group=[10, 0, 10]: the empty group has no row
    qid = qid_from_group_sizes([2, 0, 1])
    np.testing.assert_array_equal(qid, [0, 0, 2])
    np.testing.assert_array_equal(group_sizes_from_qid(qid), [2, 1])


def test_integral_float_sizes_are_taken():
    np.testing.assert_array_equal(qid_from_group_sizes(np.array([2.0, 1.0])), [0, 0, 1])


@pytest.mark.parametrize("sizes, message", [
    ([2, 1.5], r"sizes\[1\] is 1.5; group sizes must be integers"),
    ([2, np.nan], r"sizes\[1\] is nan"),
    ([3, -1, 2], r"sizes\[1\] is -1; group sizes must be >= 0"),
    ([0, 0], "every group size is 0"),
    ([], "sizes is empty"),
    ([[1, 2]], "sizes must be 1-D"),
    (["3", "2"], "sizes must hold integers"),
    ([True, False], "sizes must hold integers"),
    (np.array([2**63], dtype=np.uint64), "too large"),
])
def test_bad_sizes_are_refused(sizes, message):
    with pytest.raises(ValueError, match=message):
        qid_from_group_sizes(sizes)


# -- zero_based: files written by scikit-learn's dump_svmlight_file ------------

X_DENSE = np.array([[0.0, 1.5, 0.0, 0.25],
                    [2.0, 0.0, 3.0, 0.0],
                    [0.0, 0.0, 4.0, 1.0],
                    [0.5, 0.0, 0.0, 0.0]])
Y = np.array([1.0, 0.0, 2.0, 1.0])
QID = np.array([5, 5, 6, 6])


def _dumped(tmp_path, X, zero_based):
    path = str(tmp_path / f"dumped_{zero_based}.txt")
    dump_svmlight_file(X, Y, path, query_id=QID, zero_based=zero_based)
    return path


@pytest.mark.parametrize("written, read", [
    (True, True), (True, "auto"), (False, False), (False, "auto")])
def test_round_trip_through_sklearn_dump(tmp_path, written, read):
    X, y, qid = load_svmlight_ranking(_dumped(tmp_path, X_DENSE, written), zero_based=read)
    np.testing.assert_array_equal(X.toarray(), X_DENSE)
    np.testing.assert_array_equal(y, Y)
    np.testing.assert_array_equal(qid, QID)


def test_sklearn_default_dump_round_trip(tmp_path):
    path = str(tmp_path / "default.txt")
    dump_svmlight_file(X_DENSE, Y, path, query_id=QID)  # zero_based=True by default
    X, y, qid = load_svmlight_ranking(path, zero_based=True)
    np.testing.assert_array_equal(X.toarray(), X_DENSE)
    np.testing.assert_array_equal(y, Y)
    np.testing.assert_array_equal(qid, QID)


def test_one_based_reading_of_a_zero_based_file_names_the_fix(tmp_path):
    path = _dumped(tmp_path, X_DENSE, True)  # index 0 first appears on line 2
    with pytest.raises(ValueError, match="line 2: feature index 0 but indices start at 1") as info:
        load_svmlight_ranking(path)
    assert "zero_based=True" in str(info.value)


def test_zero_based_reading_of_a_one_based_file_adds_a_column(tmp_path):
    X, _, _ = load_svmlight_ranking(_dumped(tmp_path, X_DENSE, False), zero_based=True)
    np.testing.assert_array_equal(X.toarray(), np.c_[np.zeros(4), X_DENSE])


def test_auto_follows_sklearn_when_column_0_is_never_written(tmp_path):
    # scikit-learn's rule: no index 0 in the file -> one-based; a zero-based
    # file whose column 0 is all zeros is shifted (documented; pass True)
    X_no_zero = X_DENSE.copy()
    X_no_zero[:, 0] = 0
    path = _dumped(tmp_path, X_no_zero, True)
    from sklearn.datasets import load_svmlight_file

    sk_X, _ = load_svmlight_file(str(path), zero_based="auto")
    X, _, _ = load_svmlight_ranking(path, zero_based="auto")
    np.testing.assert_array_equal(X.toarray(), sk_X.toarray())
    X, _, _ = load_svmlight_ranking(path, zero_based=True, n_features=4)
    np.testing.assert_array_equal(X.toarray(), X_no_zero)


def test_zero_based_errors_name_the_file_index(tmp_path):
    path = _dumped(tmp_path, X_DENSE, True)
    with pytest.raises(ValueError, match=r"line 1: feature index 3 but n_features=3"):
        load_svmlight_ranking(path, zero_based=True, n_features=3)
    bad = tmp_path / "negative.txt"
    bad.write_text("1 qid:1 0:1\n1 qid:1 -1:2\n")
    with pytest.raises(ValueError, match="line 2: feature index -1 is negative"):
        load_svmlight_ranking(bad, zero_based=True)
    inf = tmp_path / "inf.txt"
    inf.write_text("1 qid:1 0:1 2:inf\n")
    with pytest.raises(ValueError, match="line 1: value of feature 2 is inf"):
        load_svmlight_ranking(inf, zero_based=True)


def test_auto_on_a_file_with_a_query_file(tmp_path):
    path = str(tmp_path / "rank.train")
    dump_svmlight_file(X_DENSE, Y, path)  # LightGBM layout: no qid, zero-based
    (tmp_path / "rank.train.query").write_text("2\n2\n")
    X, y, qid = load_svmlight_ranking(path, zero_based="auto")
    np.testing.assert_array_equal(X.toarray(), X_DENSE)
    np.testing.assert_array_equal(qid, qid_from_group_sizes([2, 2]))
