"""The grouped ranking engine: validation, grouping, blocks, tie groups."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank.metrics import evaluate, ndcg_score
from sklearn_rank.metrics._engine import grouping as _grouping
from sklearn_rank.metrics._engine import ranking as _block_ranking
from sklearn_rank.metrics._engine.grouping import factorize
from sklearn_rank.metrics._engine.grouping import group as _group
from sklearn_rank.metrics._engine.inputs import prepare
from sklearn_rank.metrics._engine.ranking import widths as _widths


def _naive_group(q):
    """Reference: stable grouping with Python dicts, queries in sorted order."""
    rows = {}
    for i, v in enumerate(q.tolist()):
        rows.setdefault(v, []).append(i)
    qids = sorted(rows)
    return qids, [rows[v] for v in qids]


def _check_grouping(q):
    g = _group(q)
    order, starts, seg_pos, qids = g.order, g.starts, g.seg_pos, g.qids
    n = q.shape[0]
    order = np.arange(n) if order is None else order
    lengths = np.diff(np.append(starts, n))
    segments = [order[a:a + m].tolist() for a, m in zip(starts, lengths, strict=True)]
    pos = np.arange(len(segments)) if seg_pos is None else seg_pos
    by_query = [None] * len(segments)
    for seg, p in zip(segments, pos, strict=True):
        by_query[p] = seg
    ref_qids, ref_rows = _naive_group(q)
    assert qids.tolist() == ref_qids
    assert by_query == ref_rows


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 6), min_size=1, max_size=60))
def test_grouping_small_int_ids(ids):
    _check_grouping(np.array(ids))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=40))
def test_grouping_sparse_int_ids(ids):
    _check_grouping(np.array(ids, dtype=np.int64))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=4), min_size=1, max_size=40))
def test_grouping_string_ids(ids):
    _check_grouping(np.array(ids))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=40))
def test_grouping_float_ids(ids):
    _check_grouping(np.array(ids))


@pytest.mark.parametrize("n_queries", [3, 70_000])
def test_grouping_many_runs_and_queries(n_queries):
    rng = np.random.default_rng(0)
    q = rng.integers(0, n_queries, 150_000)
    _check_grouping(q)
    _check_grouping(np.sort(q))  # contiguous
    _check_grouping(np.repeat(rng.permutation(n_queries), 2))  # contiguous, unsorted
    _check_grouping(np.repeat(q[:1000], 5))  # long runs, not contiguous


@pytest.mark.parametrize("high", [1, 7, 2**16, 2**16 + 1, 2**32])
@pytest.mark.parametrize("n", [0, 1, 5, 100_000])
def test_radix_grouping_is_a_stable_argsort(high, n):
    """stable_code_sort's one- or two-digit radix sort: NumPy's stable argsort, and
    the positions where the sorted codes change."""
    codes = np.random.default_rng(n + high).integers(0, high, n, dtype=np.uint64)
    by, bounds = _grouping.stable_code_sort(codes)
    expected = np.argsort(codes, kind="stable")
    np.testing.assert_array_equal(by, expected)
    s = codes[expected]
    np.testing.assert_array_equal(bounds, np.flatnonzero(np.diff(s, prepend=-1)) if n else [0])
    by, _ = _grouping.stable_code_sort(lambda part: codes[part], n)  # codes chunk by chunk
    np.testing.assert_array_equal(by, expected)


def test_string_grouping_without_dense_codes(monkeypatch):
    """When dense numbering gives up, the codes are radix-sorted instead:
    the same grouping."""
    rng = np.random.default_rng(4)
    q = np.array([f"q{i}" for i in rng.integers(0, 3000, 20_000)])
    _check_grouping(q)
    monkeypatch.setattr(_grouping, "dense_codes", lambda codes: None)
    _check_grouping(q)


@pytest.mark.parametrize("width", [1, 7, 8])
def test_short_string_ids_are_their_own_keys(width, monkeypatch):
    """Ids of at most 8 characters below U+0100 are packed into exact 64-bit
    keys (no hash, no verification): ids differing in any one character,
    the last included, stay apart; the same grouping when dense numbering
    gives up (the keys' hash codes, verified), also when those codes all
    collide (the sorted fallback)."""
    rng = np.random.default_rng(width)
    alphabet = list("ab\u00e9\u00ff0") + ["\x00"] * (width > 1)
    names = {"".join(rng.choice(alphabet, size=width)) for _ in range(400)}
    names |= {"a" * (width - 1) + "b", "a" * (width - 1) + "\u00e9"}  # (last one differs)
    names = np.array(sorted(names))
    q = names[rng.integers(0, names.shape[0], 20_000)]
    keys, exact = _grouping._string_keys(q)
    assert exact and np.unique(keys).shape[0] == np.unique(q).shape[0]
    _check_grouping(q)
    monkeypatch.setattr(_grouping, "dense_codes", lambda codes: None)
    _check_grouping(q)
    monkeypatch.setattr(_grouping, "mix", lambda keys: np.zeros_like(keys))
    _check_grouping(q)


def test_longer_or_wider_string_ids_are_hashed():
    """Ids of 9 characters, or with a character from U+0100 on, are hashed
    (then verified)."""
    for q in (np.array(["q00000001", "q00000002"] * 3), np.array(["a\u0100", "b"] * 3)):
        assert not _grouping._string_keys(q)[1]
        _check_grouping(q)


def test_string_hash_collisions_fall_back_to_exact_grouping(monkeypatch):
    monkeypatch.setattr(_grouping, "_string_codes", lambda q: np.zeros(q.shape[0], np.uint64))
    q = np.array(["b", "a", "b", "c", "a"])
    qids, codes = factorize(q)
    assert qids.tolist() == ["a", "b", "c"]
    assert codes.tolist() == [1, 0, 1, 2, 0]
    _check_grouping(q)


def test_widths_are_quarter_powers_of_two():
    lengths = np.array([1, 2, 3, 4, 5, 8, 9, 11, 16, 17, 100, 129, 161, 239, 257])
    widths = _widths(lengths)
    assert widths.tolist() == [1, 2, 3, 4, 5, 8, 10, 12, 16, 20, 112, 160, 192, 256, 320]
    assert (widths >= lengths).all() and (widths < 1.25 * lengths + 1).all()
    # a query's width depends on its length only
    assert _widths(np.array([9, 9, 9])).tolist() == [10, 10, 10]


def _data(n_queries=300, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 50, n_queries)
    qid = np.repeat(np.arange(n_queries), lengths)
    y = rng.choice(5, qid.shape[0], p=[0.5, 0.25, 0.15, 0.07, 0.03]).astype(float)
    s = rng.integers(0, 5, qid.shape[0]).astype(float) if ties else rng.random(qid.shape[0])
    return y, s, qid


@pytest.mark.parametrize("ties", ["average", "stable", "pessimistic", "optimistic"])
def test_results_do_not_depend_on_block_size(monkeypatch, ties):
    y, s, qid = _data(ties=True)
    metrics = ["ndcg@5", "dcg", "cg@3", "ndcg"]
    big = evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
    monkeypatch.setattr(_block_ranking, "_BLOCK_CELLS", 7)
    small = evaluate(y, s, qid=qid, metrics=metrics, ties=ties)
    for m in metrics:
        np.testing.assert_allclose(small.per_query[m], big.per_query[m], rtol=0, atol=1e-12)


def test_reference_loop_equals_engine():
    """The engine equals a direct per-query loop (stable ties)."""
    y, s, qid = _data(n_queries=200, ties=True)
    rng = np.random.default_rng(5)
    perm = rng.permutation(y.shape[0])
    ev = evaluate(y[perm], s[perm], qid=qid[perm], metrics=["ndcg@4", "dcg@7"], ties="stable")
    for i, q in enumerate(ev.qids):
        rows = np.flatnonzero(qid[perm] == q)
        yy, ss = y[perm][rows], s[perm][rows]
        order = np.argsort(-ss, kind="stable")
        gains = 2.0 ** yy[order] - 1
        disc = 1 / np.log2(np.arange(2, gains.shape[0] + 2))
        dcg4 = (gains * disc)[:4].sum()
        ideal = (np.sort(2.0**yy - 1)[::-1] * disc)[:4].sum()
        assert ev.per_query["dcg@7"][i] == pytest.approx((gains * disc)[:7].sum(), abs=1e-12)
        expected = dcg4 / ideal if ideal > 0 else 0.0
        assert ev.per_query["ndcg@4"][i] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "qid",
    [
        np.array([5, 5, 9, 9, 9]),
        np.array(["b", "b", "a", "a", "a"]),
        np.array(["b", "b", "a", "a", "a"], dtype=object),
        np.array([5.0, 5.0, 9.5, 9.5, 9.5]),
        [("x", 1), ("x", 1), ("y", 2), ("y", 2), ("y", 2)],
        np.array([b"b", b"b", b"a", b"a", b"a"]),
    ],
    ids=["int", "str", "object-str", "float", "tuples", "bytes"],
)
def test_qid_of_any_hashable_dtype(qid):
    y = [1, 0, 0, 2, 1]
    s = [0.1, 0.9, 0.5, 0.6, 0.7]
    ev = evaluate(y, s, qid=qid, metrics=["ndcg"])
    assert ev.n_queries == 2
    by_hand = evaluate(y, s, qid=[0, 0, 1, 1, 1], metrics=["ndcg"])
    first = 0 if ev.qids[0] == (qid[0] if not isinstance(qid, np.ndarray) else qid[0]) else 1
    values = ev.per_query["ndcg"]
    assert sorted(values) == sorted(by_hand.per_query["ndcg"])
    assert values[first] == by_hand.per_query["ndcg"][0]


def test_pandas_series_qid_and_non_contiguous_rows():
    import pandas as pd
    df = pd.DataFrame({
        "qid": ["q2", "q1", "q2", "q1", "q3"],
        "y": [1, 0, 0, 2, 1],
        "s": [0.3, 0.9, 0.5, 0.6, 0.7],
    })
    ev = evaluate(df["y"], df["s"], qid=df["qid"], metrics=["ndcg"])
    assert ev.qids.tolist() == ["q1", "q2", "q3"]
    # q1: labels [0, 2] ranked 0 first; q2: labels [1, 0] ranked 0 first.
    np.testing.assert_allclose(ev.per_query["ndcg"], [3 / np.log2(3) / 3, 1 / np.log2(3), 1])
    frame = ev.to_frame()
    assert frame.index.name == "qid" and frame.columns.tolist() == ["ndcg"]


def test_two_d_layout_matches_flat_layout():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 4, (6, 9)).astype(float)
    s = rng.random((6, 9))
    flat = evaluate(y.ravel(), s.ravel(), qid=np.repeat(np.arange(6), 9), metrics=["ndcg@4"])
    two_d = evaluate(y, s, metrics=["ndcg@4"])
    assert two_d.qids.tolist() == list(range(6))
    np.testing.assert_array_equal(flat.per_query["ndcg@4"], two_d.per_query["ndcg@4"])


def test_prepare_groups_and_keeps_within_query_order():
    data = prepare([1, 2, 3, 4, 5], [0.5, 0.4, 0.3, 0.2, 0.1], qid=[7, 3, 7, 3, 7])
    assert data.qids.tolist() == [3, 7]
    assert data.labels.tolist() == [2, 4, 1, 3, 5]
    assert data.lengths.tolist() == [2, 3]
    assert data.first_qid(data.labels == 3) == 7


def test_query_weight_is_mean_of_row_weights():
    data = prepare([1, 0, 1, 0], [1, 2, 3, 4], qid=["b", "a", "b", "a"],
                   sample_weight=[1, 4, 3, 2])
    assert data.weights.tolist() == [3.0, 2.0]  # a: (4 + 2) / 2, b: (1 + 3) / 2


def test_no_python_loop_over_queries_scales():
    # 20k single-document queries plus one long query: a per-query loop would
    # be visible; this guards against accidental quadratic behaviour too.
    q = np.concatenate([np.arange(20_000), np.full(5_000, -1)])
    y = np.ones(q.shape[0])
    assert ndcg_score(y, np.arange(q.shape[0], dtype=float), qid=q, k=3) == 1.0
