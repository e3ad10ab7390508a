"""Synthetic ranking data and the SVMlight / LETOR / LightGBM file reader."""

import bz2
import gzip
import lzma
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from sklearn_rank.datasets import load_svmlight_ranking, make_ranking
from sklearn_rank.metrics import ndcg_score

# ---------------------------------------------------------------------------
# make_ranking


def _lengths(qid):
    """Query lengths in order of first appearance; rows must be grouped."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.diff(np.r_[starts, qid.size])


def test_shapes_dtypes_and_grouping():
    X, y, qid = make_ranking(random_state=0)
    n = qid.shape[0]
    assert X.shape == (n, 20) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (n,) and y.dtype == np.int64
    assert qid.dtype == np.int64
    assert set(np.unique(y)) == {0, 1, 2, 3, 4}
    # Grouped by query, in increasing query id 0..n_queries-1.
    assert np.all(np.diff(qid) >= 0)
    assert np.array_equal(np.unique(qid), np.arange(200))
    lengths = _lengths(qid)
    assert lengths.shape == (200,)
    assert lengths.min() >= 5 and lengths.max() <= 60


def test_fixed_number_of_documents():
    X, y, qid = make_ranking(30, n_docs=7, n_features=4, n_informative=4, n_relevance=3,
                             random_state=1)
    assert X.shape == (210, 4)
    assert np.array_equal(qid, np.repeat(np.arange(30), 7))
    assert y.max() == 2


def test_varied_lengths_cover_the_range():
    _, _, qid = make_ranking(2000, n_docs=(1, 10), n_features=2, n_informative=1,
                             random_state=0)
    lengths = np.bincount(qid)
    assert set(lengths) == set(range(1, 11))
    _, _, qid = make_ranking(5, n_docs=(3, 3), random_state=0)
    assert np.array_equal(np.bincount(qid), [3] * 5)


def test_reproducible():
    a = make_ranking(50, random_state=42)
    b = make_ranking(50, random_state=42)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    c = make_ranking(50, random_state=43)
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])
    # A RandomState is used (and advanced) as scikit-learn does.
    rs = np.random.RandomState(0)
    d, e = make_ranking(50, random_state=rs), make_ranking(50, random_state=rs)
    assert not np.array_equal(d[1][:100], e[1][:100])
    np.testing.assert_array_equal(make_ranking(50, random_state=np.random.RandomState(0))[0],
                                  d[0])


@pytest.mark.parametrize(
    "n_relevance, expected",
    [
        (2, [0.55, 0.45]),
        (3, [0.55, 0.30, 0.15]),
        (5, [0.55, 0.24, 0.12, 0.06, 0.03]),
    ],
)
def test_label_proportions(n_relevance, expected):
    _, y, _ = make_ranking(500, n_relevance=n_relevance, random_state=0)
    np.testing.assert_allclose(np.bincount(y) / y.size, expected, atol=1e-3)


@pytest.mark.parametrize("noise", [0.0, 0.5, 1.0, 3.0])
def test_label_proportions_do_not_depend_on_noise(noise):
    _, y, _ = make_ranking(300, noise=noise, random_state=0)
    np.testing.assert_allclose(np.bincount(y) / y.size, [0.55, 0.24, 0.12, 0.06, 0.03],
                               atol=1e-3)


def test_some_but_few_queries_without_relevant_documents():
    _, y, qid = make_ranking(5000, random_state=0)
    relevant = np.bincount(qid, weights=y > 0)
    empty = np.mean(relevant == 0)
    assert 0.01 < empty < 0.10
    # ... and queries differ in how many relevant documents they have.
    share = relevant / np.bincount(qid)
    assert np.std(share) > 0.15


def test_shuffle_permutes_rows():
    X0, y0, qid0 = make_ranking(100, random_state=3)
    X, y, qid = make_ranking(100, shuffle=True, random_state=3)
    assert X.shape == X0.shape and y.dtype == np.int64 and qid.dtype == np.int64
    # Same query lengths, but queries are no longer contiguous.
    np.testing.assert_array_equal(np.bincount(qid), np.bincount(qid0))
    assert _lengths(qid).size > 10 * 100
    np.testing.assert_allclose(np.bincount(y) / y.size, np.bincount(y0) / y0.size, atol=1e-3)


def test_noise_features_carry_no_signal():
    X, y, _ = make_ranking(1000, n_features=12, n_informative=4, random_state=0)
    corr = np.array([np.corrcoef(X[:, j], y)[0, 1] for j in range(12)])
    assert np.all(np.abs(corr[4:]) < 0.04)
    assert np.max(np.abs(corr[:4])) > 0.1


@pytest.mark.parametrize("n_informative", [0, 1, 2, 3])
def test_few_informative_features(n_informative):
    X, y, qid = make_ranking(50, n_features=3, n_informative=n_informative, random_state=0)
    assert X.shape[1] == 3 and np.isfinite(X).all()
    assert y.min() == 0 and y.max() == 4


def test_noise_zero_gives_labels_from_features_and_query():
    X, y, qid = make_ranking(200, noise=0.0, random_state=0)
    assert y.min() == 0 and y.max() == 4


def test_learnable_trees_beat_linear_beat_random():
    from lightgbm import LGBMRanker
    from sklearn.linear_model import Ridge

    X, y, qid = make_ranking(200, random_state=0)
    train, test = qid < 150, qid >= 150
    # n_jobs=1: OpenMP threads on a busy machine make LightGBM crawl.
    ranker = LGBMRanker(n_estimators=100, n_jobs=1, verbose=-1, random_state=0)
    ranker.fit(X[train], y[train], group=np.bincount(qid[train]))
    linear = Ridge().fit(X[train], y[train])
    random = np.random.default_rng(0).random(test.sum())

    def ndcg(score):
        return ndcg_score(y[test], score, qid=qid[test], k=10)

    trees, lin, chance = ndcg(ranker.predict(X[test])), ndcg(linear.predict(X[test])), ndcg(random)
    assert trees > chance + 0.15
    assert lin > chance + 0.05
    assert trees > lin


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_queries=0), "'n_queries' parameter of make_ranking must be an int in the range"),
        (dict(n_docs=0), "'n_docs' parameter of make_ranking"),
        (dict(n_docs=(0, 5)), r"n_docs=\(0, 5\) must be an int >= 1 .* 1 <= low <= high"),
        (dict(n_docs=(6, 5)), r"n_docs=\(6, 5\) must be"),
        (dict(n_docs=(1, 2, 3)), r"n_docs=\(1, 2, 3\) must be"),
        (dict(n_docs=(1.5, 3)), r"n_docs=\(1.5, 3\) must be"),
        (dict(n_features=0), "'n_features' parameter"),
        (dict(n_informative=21), "n_informative=21 must be <= n_features=20"),
        (dict(n_informative=-1), "'n_informative' parameter"),
        (dict(n_relevance=1), r"'n_relevance' parameter of make_ranking must be an int in the "
                              r"range \[2, inf\)"),
        (dict(noise=-0.1), r"'noise' parameter of make_ranking must be a float in the range "
                           r"\[0.0, inf\)"),
        (dict(noise=float("nan")), "'noise' parameter"),
        (dict(random_state="a"), "'random_state' parameter"),
    ],
)
def test_make_ranking_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ranking(**kwargs)


def test_make_ranking_options_are_keyword_only():
    with pytest.raises(TypeError):
        make_ranking(10, 5)


# ---------------------------------------------------------------------------
# load_svmlight_ranking


def _write(path, text, opener=open):
    with opener(path, "wb") as f:
        f.write(text.encode())
    return path


def _dump(path, X, y, qid=None, opener=open):
    with opener(path, "wb") as f:
        dump_svmlight_file(X, y, f, query_id=qid, zero_based=False)
    return path


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(20, n_docs=(1, 8), n_features=6, n_informative=3,
                             random_state=0)
    X[np.abs(X) < 0.5] = 0.0  # sparse rows, some empty
    return X, y, qid


@pytest.mark.parametrize("opener, name", [(open, "train.txt"), (gzip.open, "train.txt.gz"),
                                          (gzip.open, "train.txt"), (bz2.open, "train.bz2"),
                                          (lzma.open, "train.dat")])
def test_round_trip(tmp_path, data, opener, name):
    X, y, qid = data
    path = _dump(tmp_path / name, X, y, qid + 100, opener=opener)
    X2, y2, qid2 = load_svmlight_ranking(path)
    assert sp.issparse(X2) and X2.format == "csr"
    # dump_svmlight_file writes 16 significant digits.
    np.testing.assert_allclose(X2.toarray(), X, rtol=1e-15)
    assert y2.dtype == np.float64 and qid2.dtype == np.int64
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(qid2, qid + 100)


def test_round_trip_path_as_str_float32_and_n_features(tmp_path, data):
    X, y, qid = data
    path = _dump(tmp_path / "train.txt", X, y, qid)
    X2, _, _ = load_svmlight_ranking(str(path), n_features=10, dtype=np.float32)
    assert X2.shape == (X.shape[0], 10) and X2.dtype == np.float32
    np.testing.assert_allclose(X2.toarray()[:, :6], X, rtol=1e-6)
    assert X2[:, 6:].nnz == 0


def test_letor_comments_blank_lines_and_crlf(tmp_path):
    path = _write(tmp_path / "letor.txt",
                  "# MSLR-style file\r\n"
                  "\r\n"
                  "2 qid:7 1:3 2:0.5 3:-1e-2 #docid = GX000 inc = 1 prob = 0.02\r\n"
                  "   \n"
                  "0 qid:7 3:4 # 1:99\n"
                  "1 qid:3#no space before the comment\n"
                  "4   qid:9\t2:1.5e3\n")
    X, y, qid = load_svmlight_ranking(path)
    np.testing.assert_array_equal(X.toarray(), [[3, 0.5, -0.01], [0, 0, 4], [0, 0, 0],
                                                [0, 1500, 0]])
    np.testing.assert_array_equal(y, [2, 0, 1, 4])
    np.testing.assert_array_equal(qid, [7, 7, 3, 9])


def test_non_contiguous_qids_are_kept_as_read(tmp_path):
    path = _write(tmp_path / "t.txt", "1 qid:2 1:1\n0 qid:1 1:2\n2 qid:2 1:3\n")
    np.testing.assert_array_equal(load_svmlight_ranking(path)[2], [2, 1, 2])


def test_lightgbm_query_file_explicit(tmp_path, data):
    X, y, qid = data
    path = _dump(tmp_path / "rank.train", X, y)
    qpath = _write(tmp_path / "sizes.txt", "\n".join(map(str, np.bincount(qid))) + "\n")
    X2, y2, qid2 = load_svmlight_ranking(path, qpath)
    np.testing.assert_allclose(X2.toarray(), X, rtol=1e-15)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(qid2, qid)


@pytest.mark.parametrize("opener", [open, gzip.open])
def test_lightgbm_query_file_found_next_to_data(tmp_path, opener):
    path = _write(tmp_path / "rank.train", "1 1:1\n0 2:1\n2 1:3\n0 1:1\n3 3:2\n")
    _write(tmp_path / "rank.train.query", "2\n\n3\n", opener=opener)
    _, y, qid = load_svmlight_ranking(path)
    np.testing.assert_array_equal(qid, [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(y, [1, 0, 2, 0, 3])


def test_qid_and_agreeing_query_file(tmp_path):
    path = _write(tmp_path / "t.txt", "1 qid:5 1:1\n0 qid:5 1:2\n2 qid:8 1:3\n")
    _write(tmp_path / "t.txt.query", "2\n1\n")
    np.testing.assert_array_equal(load_svmlight_ranking(path)[2], [5, 5, 8])
    other = _write(tmp_path / "other.query", "2\n1\n")
    np.testing.assert_array_equal(load_svmlight_ranking(path, other)[2], [5, 5, 8])


@pytest.mark.parametrize(
    "sizes, match",
    [
        ("1\n2\n", r"the qids form 2 runs .*, the query file gives 2 group sizes "
                   r"\(first difference: group 1\); remove or fix one of them"),
        ("3\n", r"the qids form 2 runs .*, the query file gives 1 group sizes;"),
    ],
)
def test_qid_and_disagreeing_query_file(tmp_path, sizes, match):
    path = _write(tmp_path / "t.txt", "1 qid:5 1:1\n0 qid:5 1:2\n2 qid:8 1:3\n")
    qpath = _write(tmp_path / "q", sizes)
    with pytest.raises(ValueError, match=re.escape(f"{path} has qid: fields and a query file "
                                                   f"{qpath} that disagree")):
        load_svmlight_ranking(path, qpath)
    with pytest.raises(ValueError, match=match):
        load_svmlight_ranking(path, qpath)


def test_no_qid_and_no_query_file(tmp_path):
    path = _write(tmp_path / "rank.train", "1 1:1\n0 2:1\n")
    with pytest.raises(ValueError, match=re.escape(
            f"{path} has no qid: fields and no query file: pass query_path=")):
        load_svmlight_ranking(path)


def test_group_sizes_must_add_up(tmp_path):
    path = _write(tmp_path / "rank.train", "1 1:1\n0 2:1\n2 1:3\n")
    qpath = _write(tmp_path / "rank.train.query", "2\n2\n")
    with pytest.raises(ValueError, match=re.escape(
            f"The group sizes in {qpath} sum to 4 but {path} has 3 rows.")):
        load_svmlight_ranking(path)


@pytest.mark.parametrize(
    "sizes, match",
    [
        ("2\nx\n", "line 2: group size 'x' is not an integer"),
        ("2\n\n1.5\n", "line 3: group size '1.5' is not an integer"),
        ("0\n3\n", "line 1: group size 0; sizes must be >= 1"),
        ("3\n-1\n", "line 2: group size -1; sizes must be >= 1"),
    ],
)
def test_malformed_query_file(tmp_path, sizes, match):
    path = _write(tmp_path / "rank.train", "1 1:1\n0 2:1\n2 1:3\n")
    qpath = _write(tmp_path / "rank.train.query", sizes)
    with pytest.raises(ValueError, match=re.escape(f"{qpath}: {match}")):
        load_svmlight_ranking(path)


GOOD = "1 qid:1 1:0.5 2:1\n"


@pytest.mark.parametrize(
    "text, match",
    [
        (GOOD + "abc qid:1 1:0.5\n", "line 2: label 'abc' is not a number"),
        (GOOD * 16 + "abc qid:1 1:0.5\n", "line 17: label 'abc' is not a number"),
        (GOOD + "1 qid:1 1:abc\n", "line 2: value 'abc' of feature 1 is not a number"),
        (GOOD + "1 qid:1 1:\n", "line 2: value '' of feature 1 is not a number"),
        (GOOD * 2 + "1 qid:1 0:1 2:3\n", "line 3: feature index 0 but indices start at 1"),
        (GOOD + "1 qid:1 -2:1\n", "line 2: feature index -2 but indices start at 1"),
        (GOOD * 3 + "1 qid:1 1:1 3:1 2:1\n",
         r"line 4: features not in increasing order \(index 2 after 3\)"),
        (GOOD + "1 qid:1 4:1 4:2\n", "line 2: feature index 4 repeated"),
        (GOOD * 8 + "1 1:1\n", r"line 9: missing qid: \(line 1 has one; every line needs "
                                r"one, or none does\)"),
        ("1 1:1\n1 qid:1 1:1\n", "line 2: has qid: but line 1 does not"),
        (GOOD + "1 qid:x 1:1\n", "line 2: qid 'x' is not an integer"),
        (GOOD + "1 qid: 1:1\n", "line 2: qid '' is not an integer"),
        (GOOD + "1 qid:1.5 1:1\n", "line 2: qid '1.5' is not an integer"),
        (GOOD + "1 qid:99999999999999999999 1:1\n",
         "line 2: qid 99999999999999999999 does not fit in int64"),
        (GOOD + "1 qidx:1 1:1\n", "line 2: 'qidx:1' is neither qid:<id> nor <index>:<value>"),
        (GOOD + "1 qid:1 1:1 qid:2\n", "line 2: 'qid:2': qid: must come right after the label"),
        (GOOD + "1 qid:1 1:1 abc\n", "line 2: 'abc' is not an <index>:<value> pair"),
        (GOOD + "1 qid:1 a:1\n", "line 2: feature index 'a' is not an integer"),
        (GOOD + "1 qid:1 1.5:1\n", "line 2: feature index '1.5' is not an integer"),
        (GOOD + "1 qid:1 99999999999:1\n", "line 2: feature index 99999999999 is too large"),
        ("# header\n\n" + GOOD + "  \n" + "x qid:1\n", "line 5: label 'x' is not a number"),
        ("1 1:1\n1 2:1\nzzz 1:1\n", "line 3: label 'zzz' is not a number"),
    ],
)
def test_malformed_lines(tmp_path, text, match):
    path = _write(tmp_path / "bad.txt", text)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ": " + match):
        load_svmlight_ranking(path)


def test_malformed_line_in_gzip_file(tmp_path):
    path = _write(tmp_path / "bad.gz", GOOD * 4 + "1 qid:1 2:1 1:1\n", opener=gzip.open)
    with pytest.raises(ValueError, match="bad.gz: line 5: features not in increasing order"):
        load_svmlight_ranking(path)


def test_long_tokens_are_shortened(tmp_path):
    path = _write(tmp_path / "bad.txt", "y" * 100 + " qid:1 1:1\n")
    with pytest.raises(ValueError, match=r"line 1: label 'y{37}\.\.\.' is not a number"):
        load_svmlight_ranking(path)


def test_index_beyond_n_features(tmp_path):
    path = _write(tmp_path / "t.txt", "# c\n1 qid:1 1:1 3:1\n1 qid:1 2:1 5:1 7:1\n")
    with pytest.raises(ValueError, match="t.txt: line 3: feature index 5 but n_features=4"):
        load_svmlight_ranking(path, n_features=4)
    assert load_svmlight_ranking(path, n_features=7)[0].shape == (2, 7)


@pytest.mark.parametrize("text", ["", "# only a comment\n\n"])
def test_no_data_lines(tmp_path, text):
    path = _write(tmp_path / "empty.txt", text)
    with pytest.raises(ValueError, match="empty.txt: no data lines"):
        load_svmlight_ranking(path)


def test_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "nope.txt"))):
        load_svmlight_ranking(tmp_path / "nope.txt")
    path = _write(tmp_path / "rank.train", "1 1:1\n")
    with pytest.raises(FileNotFoundError, match="nope.query"):
        load_svmlight_ranking(path, tmp_path / "nope.query")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_features=0), "'n_features' parameter of load_svmlight_ranking"),
        (dict(query_path=3), "'query_path' parameter of load_svmlight_ranking"),
    ],
)
def test_load_validation(tmp_path, kwargs, match):
    path = _write(tmp_path / "t.txt", GOOD)
    with pytest.raises(ValueError, match=match):
        load_svmlight_ranking(path, **kwargs)
    with pytest.raises(ValueError, match="'path' parameter of load_svmlight_ranking"):
        load_svmlight_ranking(3)
