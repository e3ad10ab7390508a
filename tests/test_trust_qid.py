"""Query identity (DESIGN §8): rows share a query exactly when their ids are equal
Python values of one type.

Every public entry that takes query ids (the metric functions, ``evaluate``,
``evaluate_chunks``, the splitters, ``QueryRanker.fit``, ``cross_validate_ranker``)
either groups the rows as a Python dict of lists does (the reference here) or
refuses the ids with a message naming the first offending row. Memory follows
the total size of the ids, never rows x the longest id.
"""

import contextlib
import json
import subprocess
import sys
import textwrap
from decimal import Decimal

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge

from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import evaluate, evaluate_chunks, ndcg_score
from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit, cross_validate_ranker


def _reference(values):
    """Independent grouping: a dict of row lists keyed by the ids, ids sorted."""
    rows = {}
    for i, value in enumerate(values):
        rows.setdefault(value, []).append(i)
    keys = sorted(rows)
    return keys, [rows[k] for k in keys]


def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n).astype(float)
    y[0] = 3  # at least one relevant document
    return np.arange(n, dtype=float)[:, None], y, rng.permutation(n) / n  # distinct scores


class _GroupSpy(RegressorMixin, BaseEstimator):
    """LightGBM-like inner model: records the row order and the group sizes."""

    def fit(self, X, y, group=None):
        self.X_, self.group_ = np.asarray(X), group
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _segments(row_order, sizes):
    ends = np.cumsum(sizes)
    return [row_order[e - s:e].tolist() for e, s in zip(ends, sizes, strict=True)]


def _check_every_entry(qid, values):
    """Every entry groups ``qid`` as the reference groups its Python ``values``."""
    keys, groups = _reference(values)
    m, n = len(keys), len(values)
    assert m >= 2
    X, y, s = _rows(n)
    code = np.empty(n, dtype=np.intp)
    for j, rows in enumerate(groups):
        code[rows] = j

    # metrics: ids sorted as Python sorts them, per-query values of the reference
    metrics = ["ndcg", "dcg@2", "map"]
    ev = evaluate(y, s, qid=qid, metrics=metrics)
    ref = evaluate(y, s, qid=code, metrics=metrics)
    assert ev.n_queries == m
    assert all(a == b for a, b in zip(list(ev.qids), keys, strict=True))
    for metric in metrics:
        np.testing.assert_array_equal(ev.per_query[metric], ref.per_query[metric])
    assert ndcg_score(y, s, qid=qid) == ref.mean["ndcg"]

    # splitters: one query per fold / per test set
    want = {tuple(rows) for rows in groups}
    for ids in ({"qid": qid}, {"groups": qid}):
        tests = [tuple(test) for _, test in QueryKFold(m).split(X, **ids)]
        assert sorted(tests) == sorted(want)
    for train, test in QueryShuffleSplit(3, test_size=1, random_state=0).split(X, qid=qid):
        assert tuple(test) in want and sorted(train.tolist() + test.tolist()) == list(range(n))
    assert QueryKFold(2).get_n_splits(X, qid=qid) == 2

    # QueryRanker: rows sorted stably by query, queries in id order
    inner = QueryRanker(_GroupSpy()).fit(X, y, qid=qid).estimator_
    assert _segments(inner.X_[:, 0].astype(int), inner.group_) == groups

    # cross_validate_ranker: the folds of the reference
    res = cross_validate_ranker(Ridge(), X, y, qid=qid, cv=QueryKFold(m), return_indices=True)
    assert sorted(tuple(t) for t in res["indices"]["test"]) == sorted(want)

    # evaluate_chunks: queries contiguous (in reverse id order), chunks of 3 rows
    order = np.concatenate([groups[j] for j in reversed(range(m))])
    q_ordered = _take(qid, order)
    chunks = [(y[order][i:i + 3], s[order][i:i + 3], _slice(q_ordered, i, i + 3))
              for i in range(0, n, 3)]
    streamed = evaluate_chunks(chunks, metrics=metrics)
    assert all(a == b for a, b in zip(list(streamed.qids), keys, strict=True))
    for metric in metrics:
        np.testing.assert_array_equal(streamed.per_query[metric], ref.per_query[metric])


def _take(qid, order):
    if isinstance(qid, list):
        return [qid[i] for i in order]
    if isinstance(qid, pd.Series):
        return qid.iloc[order].reset_index(drop=True)
    return qid.take(order) if hasattr(qid, "take") else qid[order]


def _slice(qid, lo, hi):
    return qid.iloc[lo:hi] if isinstance(qid, pd.Series) else qid[lo:hi]


def _objects(values):
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


GROUPED = {
    # NumPy's fixed-width strings drop trailing NULs: "a" and "a\x00" must stay apart.
    "trailing NUL str": ["a", "a\x00", "b", "a", "a\x00\x00", "a\x00", "b", "a"],
    "trailing NUL bytes": [b"a", b"a\x00", b"b", b"a", b"a\x00", b"b"],
    "embedded NUL": ["a\x00b", "a", "a\x00b", "ab", "a"],
    "long and short str": ["x" * 5000, "b", "x" * 4999 + "y", "b", "x" * 5000, "a"],
    "numpy and Python str": [np.str_("a"), "a", "b", np.str_("b"), "a"],
    "numpy and Python int": [np.int64(3), 3, np.int32(-1), -1, 3],
    "tuples": [("x", 1), ("y", 2), ("x", 1), ("x", 2), ("y", 2), ("x", 1)],
    "ints beyond 64 bits": [2**64, -1, 2**64 + 1, 2**64, -1, 2**63],
    "uint64 beside int64": [np.uint64(2**63 + 1), np.int64(-1), np.uint64(2**63),
                            np.uint64(2**63 + 1), np.int64(-1)],
    "bool": [True, False, True, True, False],
    "negative zero": [0.0, -0.0, 1.5, -0.0, 1.5],
    "Decimal": [Decimal("1"), Decimal("1.0"), Decimal("2"), Decimal("2.00"), Decimal("1")],
    "frozensets in a chain": [frozenset(), frozenset({1}), frozenset({1, 2}), frozenset({1}),
                              frozenset()],
    "datetimes": [pd.Timestamp("2020-01-02"), pd.Timestamp("2020-01-01"),
                  pd.Timestamp("2020-01-02")],
}

CONTAINERS = {
    "list": lambda v: list(v),
    "object array": _objects,
}


@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("case", list(GROUPED))
def test_ids_grouped_by_python_equality(case, container):
    values = GROUPED[case]
    _check_every_entry(CONTAINERS[container](values), values)


def _columns():
    ids = ["q2", "q10", "q2", "q1\x00", "q10", "q1", "q2"]
    return ids, {
        "numpy U": np.array(ids[:3] + ["q1"] + ids[4:]),  # NumPy values: no NUL here
        "pandas object": pd.Series(ids, dtype=object),
        "pandas string": pd.Series(ids, dtype="string"),
        "pandas string[pyarrow]": pd.Series(ids, dtype="string[pyarrow]"),
        "pandas category": pd.Series(ids, dtype="category"),
        "pyarrow": pa.array(ids),
        "pyarrow chunked": pa.chunked_array([ids[:3], ids[3:]]),
        "datetime64": np.array(["2021-01-02", "2021-01-01", "2021-01-02"], dtype="M8[D]"),
        "pandas Int64": pd.Series([5, 3, 5, 3, 3], dtype="Int64"),
        "pandas str": pd.Series(ids, dtype="str"),
        "category, unused": pd.Series(pd.Categorical(ids, categories=["q0", *set(ids), "q9"])),
        "category of ints": pd.Series([7, 2**40, 7, -1], dtype="category"),
        "category of floats": pd.Series([0.5, -0.0, 0.0, 0.5], dtype="category"),
        "category of bools": pd.Series([True, False, True], dtype="category"),
        "categorical index": pd.CategoricalIndex(ids),
        "pyarrow large_string": pa.array(ids, type=pa.large_string()),
        "pyarrow binary": pa.array([v.encode() for v in ids], type=pa.binary()),
        "pyarrow int": pa.array([3, 1, 3, 2]),
        "polars": pl.Series(ids),
        "polars binary": pl.Series([v.encode() for v in ids]),
    }


@pytest.mark.parametrize("column", list(_columns()[1]))
def test_dataframe_columns_grouped_by_their_values(column):
    qid = _columns()[1][column]
    values = list(qid.to_pylist() if hasattr(qid, "to_pylist") else qid)
    _check_every_entry(qid, values)


@contextlib.contextmanager
def _pandas_unloaded():
    """Strings in lists are coded by pandas when it is loaded, else by a dict."""
    pandas = sys.modules.pop("pandas")
    try:
        yield
    finally:
        sys.modules["pandas"] = pandas


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\x00", max_size=3), min_size=2, max_size=12)
       .filter(lambda v: len(set(v)) >= 2),
       st.booleans(), st.booleans(), st.booleans())
def test_random_strings_with_nuls_grouped_by_equality(values, as_bytes, as_array, pandas):
    if as_bytes:
        values = [v.encode() for v in values]
    keys, groups = _reference(values)
    qid = _objects(values) if as_array else values
    X, y, s = _rows(len(values))
    with contextlib.nullcontext() if pandas else _pandas_unloaded():
        ev = evaluate(y, s, qid=qid, metrics=["dcg"])
        tests = sorted(tuple(t) for _, t in QueryKFold(len(keys)).split(X, qid=qid))
    assert ev.qids.tolist() == keys
    assert tests == sorted(tuple(g) for g in groups)


class _BadHash:
    def __hash__(self):
        raise RuntimeError("no hash")


class _BadEq:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        raise RuntimeError("no eq")


REFUSED = {
    # mixed types: equal values of different types are not one query
    "bytes and str": (lambda: ["a", "b", b"a", "a"], TypeError,
                      r"row 2 holds bytes b'a', row 0 holds str 'a'"),
    "int and float": (lambda: [1, 2, 1.0, 2], TypeError,
                      r"row 2 holds float 1\.0, row 0 holds int 1"),
    "bool and int": (lambda: [1, 0, True, 1], TypeError,
                     r"row 2 holds bool True, row 0 holds int 1"),
    "int and str": (lambda: [1, 1, "1", 2], TypeError, r"row 2 holds str '1', row 0 holds int 1"),
    "Timestamp and str": (lambda: [pd.Timestamp("2020"), "2020", "x"], TypeError,
                          r"row 1 holds str '2020', row 0 holds Timestamp"),
    # no order: inclusion orders sets partially, np.unique would split queries
    "frozensets": (lambda: [frozenset({1}), frozenset({1}), frozenset({2}), frozenset({1, 2})],
                   TypeError, r"rows 0 \(frozenset\(\{1\}\)\) and 2 \(frozenset\(\{2\}\)\) "
                              r"are neither equal nor ordered"),
    "tuples of mixed types": (lambda: [("a", 1), ("a", 1), (1, "a")], TypeError,
                              r"rows 0 \(\('a', 1\)\) and 2 \(\(1, 'a'\)\)"),
    # not ids at all
    "nested lists": (lambda: [[1, 2], [1, 2], [3, 4]], ValueError,
                     r"must be 1-D with one query id per row: row 0 holds a list"),
    "dicts": (lambda: [{"a": 1}, {"a": 1}], TypeError,
              r"one hashable query id per row: row 0 holds dict"),
    "raising __hash__": (lambda: [_BadHash(), _BadHash()], TypeError,
                         r"row 0 \(.*\) cannot serve as a query id: comparing or hashing it "
                         r"raised RuntimeError: no hash"),
    "raising __eq__": (lambda: [_BadEq(), _BadEq(), _BadEq()], TypeError,
                       r"row 1 \(.*\) cannot serve as a query id: comparing or hashing it "
                       r"raised RuntimeError: no eq"),
}


def _entries(qid, n):
    X, y, s = _rows(n)
    return {
        "evaluate": lambda: evaluate(y, s, qid=qid),
        "ndcg_score": lambda: ndcg_score(y, s, qid=qid),
        "QueryKFold.split": lambda: list(QueryKFold(2).split(X, qid=qid)),
        "QueryKFold.split(groups)": lambda: list(QueryKFold(2).split(X, groups=qid)),
        "QueryShuffleSplit.split": lambda: list(QueryShuffleSplit(2).split(X, qid=qid)),
        "QueryRanker.fit": lambda: QueryRanker(Ridge()).fit(X, y, qid=qid),
        "cross_validate_ranker": lambda: cross_validate_ranker(Ridge(), X, y, qid=qid, cv=2),
        "evaluate_chunks": lambda: evaluate_chunks([(y, s, qid)]),
    }


ENTRIES = list(_entries([], 1))


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("case", list(REFUSED))
def test_ids_refused_naming_the_first_offending_row(case, container, entry):
    make, error, match = REFUSED[case]
    values = make()
    qid = CONTAINERS[container](values)
    name = "groups" if "groups" in entry else "qid"
    with pytest.raises(error, match=rf"^(chunk 0 \(rows numbered within the chunk\): )?"
                                    rf"{name} .*{match}"):
        _entries(qid, len(values))[entry]()
    # get_n_splits does not read the ids (the number of folds is n_splits)
    assert QueryKFold(3).get_n_splits(None, qid=qid) == 3


def _missing_cases():
    strs = ["a", "b", None, "a", None]
    return {
        "None in a list": strs,
        "float NaN in a list": [1.5, 2.5, float("nan"), 1.5, np.nan],
        "NaN in a float array": np.array([1.5, 2.5, np.nan, 1.5, np.nan]),
        "NaN among str": ["a", "b", np.nan, "a", float("nan")],
        "pd.NA in an object array": _objects(["a", "b", pd.NA, "a", pd.NA]),
        "pd.NA in string[pyarrow]": pd.Series(strs, dtype="string[pyarrow]"),
        "pd.NA in string": pd.Series(strs, dtype="string"),
        "NaN in category": pd.Series(strs, dtype="category"),
        "pd.NA in Int64": pd.Series([1, 2, None, 1, None], dtype="Int64"),
        "None in pyarrow": pa.array(strs),
        "NaT in datetime64": np.array(["2020-01-01", "2020-01-02", "NaT", "2020-01-01",
                                       "NaT"], dtype="M8[D]"),
        "NaT in timedelta64": np.array([1, 2, "NaT", 1, "NaT"], dtype="m8[s]"),
        "NaT in pandas datetimes": pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02",
                                                             None, "2020-01-01", None])),
        "pd.NaT among Timestamps": _objects([pd.Timestamp("2020"), pd.Timestamp("2021"),
                                             pd.NaT, pd.Timestamp("2020"), pd.NaT]),
        "np NaT among datetime64": _objects([np.datetime64("2020-01-01"),
                                             np.datetime64("2020-01-02"),
                                             np.datetime64("NaT"),
                                             np.datetime64("2020-01-01"),
                                             np.datetime64("NaT")]),
        "Decimal NaN": [Decimal("1"), Decimal("2"), Decimal("NaN"), Decimal("1"),
                        Decimal("sNaN")],
        "None and pd.NA mixed with ints": [1, 2, None, 1, pd.NA],
        "None in polars": pl.Series(strs),
        "null in polars ints": pl.Series([1, 2, None, 1, None]),
    }


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("case", list(_missing_cases()))
def test_missing_ids_refused_with_first_row(case, entry):
    qid = _missing_cases()[case]
    name = "groups" if "groups" in entry else "qid"
    with pytest.raises(ValueError, match=rf"{name} has 2 missing \((NaN|NaT|None/NaN)\) "
                                         r"value\(s\), first at row 2\b"):
        _entries(qid, 5)[entry]()


def test_chunks_name_the_chunk_and_keep_one_kind_of_id():
    y, s = np.array([1.0, 0, 1, 0]), np.array([0.4, 0.3, 0.2, 0.1])
    with pytest.raises(ValueError, match=r"^chunk 1 \(rows numbered within the chunk\): qid "
                                         r"has 1 missing \(None/NaN\) value\(s\), first at row 1"):
        evaluate_chunks([(y[:2], s[:2], ["a", "a"]), (y[2:], s[2:], ["b", None])])
    # each chunk is of one type, but concatenating them would merge "a" and b"a"
    with pytest.raises(TypeError, match=r"chunk 1 holds bytes ids but the first chunk str"):
        evaluate_chunks([(y[:2], s[:2], np.array(["a", "a"])),
                         (y[2:], s[2:], np.array([b"a", b"b"]))])
    with pytest.raises(TypeError, match=r"chunk 1 holds float ids but the first chunk int"):
        evaluate_chunks([(y[:2], s[:2], [1, 1]), (y[2:], s[2:], [1.0, 2.0])])


def test_a_string_is_not_a_sequence_of_ids():
    # refused at the public boundary: a string is not array-like
    with pytest.raises(ValueError, match=r"The 'qid' parameter of evaluate must be an "
                                         r"array-like or None\. Got 'abc' instead"):
        evaluate([1, 0, 1], [0.3, 0.2, 0.1], qid="abc")


_MEMORY_SCRIPT = textwrap.dedent("""
    import json, sys, tracemalloc
    import numpy as np
    import pandas as pd
    from sklearn.linear_model import Ridge
    from sklearn_rank.estimators import QueryRanker
    from sklearn_rank.metrics import evaluate, evaluate_chunks
    from sklearn_rank.model_selection import QueryKFold

    n = 5000
    ids = [f"q{i % 50:03d}" for i in range(n)]
    ids[n // 2] = "x" * (1 << 20)  # one 1 MiB id: fixed width would be 20 GB
    y = np.arange(n) % 3
    s = np.arange(n) / n
    X = s[:, None]
    make = {"list": list, "bytes": lambda v: [x.encode() for x in v],
            "object array": lambda v: np.array(v, dtype=object),
            "pandas object": lambda v: pd.Series(v, dtype=object),
            "pandas string[pyarrow]": lambda v: pd.Series(v, dtype="string[pyarrow]"),
            "polars": lambda v: __import__("polars").Series(v)}
    out = {}
    for container in sys.argv[1:]:
        qid = make[container](ids)
        grouped = make[container](sorted(ids))  # contiguous queries for the chunks
        calls = {
            "evaluate": lambda: evaluate(y, s, qid=qid, metrics=["ndcg@10"]),
            "QueryKFold": lambda: list(QueryKFold(3).split(X, qid=qid)),
            "QueryRanker": lambda: QueryRanker(Ridge()).fit(X, y, qid=qid),
            "evaluate_chunks": lambda: evaluate_chunks(
                (y[i:i + 1000], s[i:i + 1000], grouped[i:i + 1000]) for i in range(0, n, 1000)),
        }
        for name, call in calls.items():
            tracemalloc.start()
            call()
            out[f"{container}: {name}"] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    print(json.dumps(out))
""")


def _limit_address_space():  # a regression fails fast instead of swapping
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def test_memory_follows_the_size_of_the_ids():
    containers = ["list", "bytes", "object array", "pandas object", "pandas string[pyarrow]",
                  "polars"]
    done = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, *containers],
                          capture_output=True, text=True, timeout=600,
                          preexec_fn=_limit_address_space)
    assert done.returncode == 0, done.stderr[-2000:]
    peaks = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(peaks) == 4 * len(containers)
    # The ids hold about 1 MiB (4 MiB as a 4-byte-wide str); padding every
    # row to the longest id would need 5000 x 4 MiB = 20 GB.
    for call, peak in peaks.items():
        assert peak < 16 << 20, (call, peak / 2**20)


@pytest.mark.parametrize("frame", ["pandas", "polars"])
def test_splitters_read_a_frame_qid_column_as_its_values(frame):
    ids = ["a", "a\x00", "a", "b", "a\x00"]
    data = {"qid": ids, "x": np.arange(5.0)}
    X = pd.DataFrame(data) if frame == "pandas" else pl.DataFrame(data)
    _, groups = _reference(ids)
    tests = sorted(tuple(t) for _, t in QueryKFold(3).split(X))
    assert tests == sorted(tuple(g) for g in groups)


@pytest.mark.parametrize("qid, dtype", [
    (["q2", "q10", "q2"], "<U3"),
    (_objects(["q2", "q10", "q2"]), "<U3"),
    (pd.Series(["q2", "q10", "q2"], dtype="string[pyarrow]"), "<U3"),
    ([b"q2", b"q10", b"q2"], "|S3"),
    # NumPy strings would drop the NUL, or pad every id to the longest one
    (["q2", "q2\x00", "q2"], "object"),
    (["q2", "x" * 1000, "q2", "q3"], "object"),
])
def test_ordinary_string_ids_reported_as_numpy_strings(qid, dtype):
    _, y, s = _rows(len(qid))
    assert evaluate(y, s, qid=qid).qids.dtype == np.dtype(dtype)


_POOL = [1, 2, -(2**70), 1.0, 2.5, -0.0, True, False, "a", "a\x00", "", b"a", b"a\x00",
         ("a", 1), ("a", 1.0), (1, "a"), frozenset({1}), frozenset({1, 2}), frozenset(),
         Decimal("1.0"), None, float("nan"), pd.NA, pd.NaT]


def _valid(values) -> bool:
    """The rule, stated independently: one type, no missing id, a total order."""
    if len({type(v) for v in values}) != 1:
        return False
    if any(v is None or v is pd.NA or v is pd.NaT or v != v for v in values):
        return False
    try:
        keys = sorted(set(values))
    except TypeError:
        return False
    return all(a < b for a, b in zip(keys[:-1], keys[1:], strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(range(len(_POOL))), min_size=1, max_size=8))
def test_any_mixture_grouped_by_equality_or_refused(picks):
    values = [_POOL[i] for i in picks]
    _, y, s = _rows(len(values))
    if not _valid(values):
        with pytest.raises((TypeError, ValueError), match=r"^qid .*rows? \d"):
            evaluate(y, s, qid=values, metrics=["dcg"])
        return
    keys, groups = _reference(values)
    code = np.empty(len(values), dtype=np.intp)
    for j, rows in enumerate(groups):
        code[rows] = j
    ev = evaluate(y, s, qid=values, metrics=["dcg"])
    assert ev.qids.tolist() == keys
    np.testing.assert_array_equal(ev.per_query["dcg"],
                                  evaluate(y, s, qid=code, metrics=["dcg"]).per_query["dcg"])
