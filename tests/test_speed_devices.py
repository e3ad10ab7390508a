"""Every speed device against the plain NumPy (or Python) reference beside it.

Query grouping (:func:`group` / :func:`group_reference`), the radix sort of
codes (:func:`stable_code_sort` / its reference), hashing (:func:`hash64`,
:func:`has_equal`, :func:`dense_codes` / theirs), number parsing
(:func:`decimal_values` and a column's numbers / ``float`` per token), the join
(:func:`match_rows`, :func:`query_codes` / theirs), the ideal ranking's sort
(:func:`sorted_descending` / a full sort), blocks in rank order that read the
data's rows (``Ranking.reads_rows`` / the block path) and threads (any number
of threads / one), each on random input (hypothesis) and on adversarial input:
empty, one element, all equal, sorted, reverse sorted, extreme values, ids
whose hashes collide in the width a device uses.
"""

import io
import string
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank._utils import hashing, threads
from sklearn_rank._utils.hashing import (
    dense_codes,
    dense_codes_reference,
    has_equal,
    has_equal_reference,
    hash64,
    hash64_reference,
)
from sklearn_rank.metrics import evaluate
from sklearn_rank.metrics._engine import grouping
from sklearn_rank.metrics._engine import threads as engine_threads
from sklearn_rank.metrics._engine.descending import sorted_descending, sorted_descending_reference
from sklearn_rank.metrics._engine.grouping import (
    Grouping,
    group,
    group_reference,
    stable_code_sort,
    stable_code_sort_reference,
)
from sklearn_rank.metrics._engine.inputs import prepare
from sklearn_rank.trec import Qrels, Run, _fields, _join, _numbers, read_run
from sklearn_rank.trec._column import IdColumn
from sklearn_rank.trec._decimal import decimal_values, decimal_values_reference

# -- query grouping ----------------------------------------------------------------------


def _by_query(g: Grouping) -> tuple[list, list[list[int]]]:
    """The sorted ids, and the input rows of each (in grouped order)."""
    rows = g.rows()
    pos = np.arange(g.starts.shape[0]) if g.seg_pos is None else g.seg_pos
    by_query = [None] * g.qids.shape[0]
    for p, start, length in zip(pos.tolist(), g.starts.tolist(), g.lengths.tolist(),
                                strict=True):
        by_query[p] = rows[start:start + length].tolist()
    return g.qids.tolist(), by_query


def _contiguous(q: np.ndarray) -> bool:
    """Whether every id's rows are consecutive (no id owns two runs)."""
    heads = q[np.flatnonzero(np.append(True, q[1:] != q[:-1]))]
    return np.unique(heads).shape[0] == heads.shape[0]


def _check_group(q: np.ndarray) -> None:
    reference = group_reference(q)
    expected = _by_query(reference)
    for any_order in (False, True):
        g = group(q, any_order=any_order)
        assert g.n_rows == q.shape[0]
        assert _by_query(g) == expected
        assert (g.order is None) == _contiguous(q)  # no row moves exactly when none need to
        if g.order is not None and not any_order:  # moved rows: into id order
            np.testing.assert_array_equal(g.order, reference.order)
            np.testing.assert_array_equal(g.starts, reference.starts)
            assert g.seg_pos is None


_ID_ARRAYS = st.one_of(
    st.lists(st.integers(-3, 6), min_size=1, max_size=80).map(np.array),
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=40)
    .map(lambda v: np.array(v, dtype=np.int64)),
    st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40)
    .map(lambda v: np.array(v, dtype=np.uint64)),
    st.lists(st.floats(allow_nan=False), min_size=1, max_size=40).map(np.array),
    st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=60).map(np.array),
    st.lists(st.sampled_from(["query-000000001", "query-000000002", "q", "\u4e2d" * 10]),
             min_size=1, max_size=60).map(np.array),
)


@settings(max_examples=300, deadline=None)
@given(_ID_ARRAYS)
def test_group_is_its_reference_on_random_ids(q):
    _check_group(q)


def _colliding_strings() -> tuple[str, str]:
    """Two distinct 10-character ids whose 32-bit grouping codes are equal."""
    rng = np.random.default_rng(26)
    ids = np.unique(np.array([f"q{i:09d}" for i in rng.integers(0, 10**9, 400_000)]))
    codes = grouping._string_codes(ids)
    order = np.argsort(codes, kind="stable")
    same = np.flatnonzero(codes[order][1:] == codes[order][:-1])
    assert same.shape[0], "no 32-bit collision among 400k ids"
    return str(ids[order[same[0]]]), str(ids[order[same[0] + 1]])


@pytest.fixture(scope="module")
def colliding_ids():
    return _colliding_strings()


def _adversarial_ids(colliding):
    rng = np.random.default_rng(7)
    a, b = colliding
    shuffled = rng.integers(0, 500, 20_000)
    big = np.iinfo(np.int64)
    yield np.zeros(1, dtype=np.int64)  # one element
    yield np.full(5000, 42)  # all equal
    yield np.full(5000, "the same id, longer than eight characters")
    yield np.sort(shuffled)  # already sorted
    yield np.sort(shuffled)[::-1].copy()  # reverse sorted
    yield shuffled  # shuffled, dense ints
    yield np.repeat(rng.permutation(3000), 3)  # contiguous, not in id order
    yield np.arange(10_000)[::-1].copy()  # every row its own query, reversed
    yield np.array([big.min, big.max, 0, big.min, -1, big.max] * 50)  # extremes
    yield np.array([0, 2**64 - 1, 2**63, 0], dtype=np.uint64)
    yield np.array([-0.0, 0.0, np.inf, -np.inf, 5e-324, -np.inf])  # -0.0 == 0.0
    yield np.array(["a", "a\u00e9", "b", "a", "\u4e2d", "b"] * 100)
    yield np.array([a, b] * 2000)  # 32-bit codes collide, shuffled
    yield np.array([a] * 3000 + [b] * 3000)  # ... contiguous
    yield np.array([a, b])[rng.integers(0, 2, 30_000)]
    names = np.array([f"query-{i:06d}" for i in range(2000)] + [a, b])
    yield names[rng.integers(0, names.shape[0], 50_000)]  # many, two colliding


def test_group_is_its_reference_on_adversarial_ids(colliding_ids):
    for q in _adversarial_ids(colliding_ids):
        _check_group(q)


def test_group_is_its_reference_when_dense_numbering_gives_up(colliding_ids, monkeypatch):
    """dense_codes may give up (None): the radix-sorted codes then group the rows."""
    monkeypatch.setattr(grouping, "dense_codes", lambda codes: None)
    for q in _adversarial_ids(colliding_ids):
        _check_group(q)


# -- the radix sort of codes ---------------------------------------------------------------


def _check_sort(codes: np.ndarray) -> None:
    expected = stable_code_sort_reference(codes)
    for got in (stable_code_sort(codes),
                stable_code_sort(lambda part: codes[part], codes.shape[0])):
        np.testing.assert_array_equal(got.by, expected.by)
        np.testing.assert_array_equal(got.bounds, expected.bounds)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 3), st.integers(0, 2**16 + 1),
                          st.integers(0, 2**32 - 1)), min_size=1, max_size=200))
def test_radix_sort_is_a_stable_argsort_on_random_codes(values):
    _check_sort(np.array(values, dtype=np.uint64))


@pytest.mark.parametrize("n", [1, 2, 70_000])
def test_radix_sort_is_a_stable_argsort_on_adversarial_codes(n):
    rng = np.random.default_rng(n)
    for codes in (np.zeros(n), np.full(n, 2**32 - 1), np.arange(n), np.arange(n)[::-1],
                  rng.integers(0, 2**32, n), rng.integers(0, 2, n) * (2**32 - 1),
                  (rng.integers(0, 4, n) << 16) | 7, np.full(n, 2**16), np.full(n, 2**16 - 1)):
        _check_sort(np.asarray(codes, dtype=np.uint64))


# -- the ideal ranking's sort ----------------------------------------------------------------


def _check_sorted(values: np.ndarray) -> None:
    got, expected = sorted_descending(values), sorted_descending_reference(values)
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)  # (== also for zeros of either sign)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_sorted_descending_is_a_full_sort_on_random_rows(rows, width, density, seed):
    rng = np.random.default_rng(seed)
    values = rng.choice([1.0, 2.0, 3.0, 0.5, -1.0, -2.5, 1e300, -1e-300], size=(rows, width))
    _check_sorted(np.where(rng.random((rows, width)) < density, values, 0.0))


def test_sorted_descending_is_a_full_sort_on_adversarial_rows():
    rng = np.random.default_rng(5)
    sparse = np.where(rng.random((300, 1000)) < 0.02, rng.integers(-3, 5, (300, 1000)), 0)
    for values in (np.zeros((3, 4)), np.ones((2, 5)), -np.ones((2, 5)), np.array([[0.0, -0.0]]),
                   np.array([[0.0, 0.0, 7.0]]), np.array([[-1.0, 0.0, 0.0, 0.0, 2.0]]),
                   np.zeros((0, 3)), np.zeros((4, 0)), np.eye(6), -np.eye(6),
                   sparse.astype(np.float64)):
        _check_sorted(values)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 60), st.floats(0, 1), st.integers(0, 2**32 - 1),
       st.integers(1, 70))
def test_trec_eval_dcg_sum_over_nonzero_gains_is_its_running_sum(rows, width, density, seed,
                                                                 cut):
    """trec_eval's DCG sums gain / log2(r + 1) rank after rank; the kernel visits the
    nonzero gains only, found once for every cut-off (bincount adds in order): the
    same float as the running sum at the cut, bit for bit."""
    from sklearn_rank.metrics._families.gain import _cell_terms, _trec_log2, _trec_sum

    rng = np.random.default_rng(seed)
    gains = rng.choice([1.0, 3.0, 7.0, 0.3, -1.0, 31.0], size=(rows, width))
    gains = np.where(rng.random((rows, width)) < density, gains, 0.0)
    cut = min(cut, width)
    expected = np.cumsum(gains / _trec_log2(width), axis=1)[:, cut - 1]
    nonzero = np.nonzero(gains)  # (row by row, in rank order)
    terms = _cell_terms(*nonzero, gains[nonzero], width)
    assert np.array_equal(_trec_sum(terms, cut, rows), expected)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.floats(0, 1),
       st.integers(0, 2**32 - 1))
def test_hits_and_first_from_flagged_ranks_are_the_prefix_count(lengths, density, seed):
    """Ranking.hits counts a column's nonzero values in the top k, and Ranking.first
    finds the first one, from the flagged ranks (shared by the cut-offs) or from the
    ranked prefix: both are the count and the first nonzero column of the prefix."""
    from sklearn_rank.metrics._engine.columns import Relevant
    from sklearn_rank.metrics._engine.ranking import block_specs, rank_block

    rng = np.random.default_rng(seed)
    n = sum(lengths)
    labels = np.where(rng.random(n) < density, rng.integers(1, 4, n), 0)
    data = prepare(labels, rng.permutation(n).astype(float),
                   qid=np.repeat(np.arange(len(lengths)), lengths))
    relevant = Relevant(1)
    for segments, width in block_specs(data):
        for cut in sorted({1, 2, width // 4, width // 4 + 1, width // 2, width, width + 3} - {0}):
            prefix = rank_block(data, segments, width, ["stable"])["stable"]
            flagged = rank_block(data, segments, width, ["stable"])["stable"]
            flagged.flagged(relevant)
            expected = (prefix.ranked(relevant, min(cut, width)) != 0).sum(axis=1)
            assert np.array_equal(prefix.hits(relevant, cut), expected)
            assert np.array_equal(flagged.hits(relevant, cut), expected)
            top = prefix.ranked(relevant, min(cut, width)) != 0
            first = np.where(top.any(axis=1), np.argmax(top, axis=1), -1)
            assert np.array_equal(prefix.first(relevant, cut), first)
            assert np.array_equal(flagged.first(relevant, cut), first)


def _trec_data(lengths, density, seed, scale=1.0):
    """Rows in rank order as TREC mode holds them: judged and unjudged rows,
    relevance codes (-2, -1 and levels), retrieved documents first."""
    from sklearn_rank.metrics._engine.data import ranked_data

    rng = np.random.default_rng(seed)
    lengths = np.array(lengths)
    n = int(lengths.sum())
    codes = np.where(rng.random(n) < density, rng.integers(-2, 4, n), -1).astype(float)
    retrieved = rng.integers(0, lengths + 1)
    return ranked_data(np.maximum(codes, 0) * scale, lengths, np.arange(lengths.shape[0]),
                       n_retrieved=retrieved, judged=codes >= 0, codes=codes)


def _rank_order_columns():
    from sklearn_rank.metrics._engine.columns import (
        CODES,
        JUDGED,
        LABELS,
        POSITIVE,
        CwlGain,
        NamedGain,
        Relevant,
        StopProbability,
    )

    return [LABELS, JUDGED, POSITIVE, CODES, Relevant(1), Relevant(0), Relevant(2),
            Relevant(-1, unjudged=True), Relevant(-2, unjudged=True), NamedGain("linear"),
            NamedGain("exponential"), CwlGain(0.0, 2.0), StopProbability(3.0)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.floats(0, 1),
       st.integers(0, 2**32 - 1))
def test_blocks_in_rank_order_read_rows_as_their_reference_block(lengths, density, seed):
    """A block whose rows are in rank order (TREC mode) reads a column from the
    data's rows (Ranking.reads_rows: the nonzero rows, a span per query) instead
    of (q, w) arrays: its flagged ranks and their values, ranked prefixes,
    counts, ideal rankings, largest values, hits and first ranks are the
    arrays of the block path (the same block ranked through its order)."""
    from sklearn_rank.metrics._engine.ranking import TREC_ORDER, block_specs, rank_block

    data = _trec_data(lengths, density, seed)
    for segments, width in block_specs(data):
        for col in _rank_order_columns():
            direct = rank_block(data, segments, width, [TREC_ORDER])[TREC_ORDER]
            reference = rank_block(data, segments, width, [TREC_ORDER])[TREC_ORDER]
            reference.in_order = False  # (its order is the identity: the block path)
            assert direct.reads_rows(col) and not reference.reads_rows(col)
            for a, b in zip(direct.flagged(col), reference.flagged(col), strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b)
            assert np.array_equal(direct.flagged_values(col), reference.flagged_values(col))
            for cut in sorted({1, 2, width // 4 + 1, width // 2, width}):
                assert np.array_equal(direct.ranked(col, cut), reference.ranked(col, cut))
                assert np.array_equal(direct.hits(col, cut), reference.hits(col, cut))
                assert np.array_equal(direct.first(col, cut), reference.first(col, cut))
            assert np.array_equal(direct.count(col), reference.count(col))
            assert np.array_equal(direct.ideal(col), reference.ideal(col))
            for a, b in zip(direct.ideal_cells(col), reference.ideal_cells(col), strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b)
            assert np.array_equal(direct.row_max(col), reference.row_max(col))


@pytest.mark.parametrize("scale", [1.0, 2.0**-420, 2.0**399])
def test_scaled_gains_of_blocks_in_rank_order_are_the_block_paths(scale):
    """Scaled (NDCG's gains divided per query by a power of two near the largest)
    finds the queries to scale from the largest value of each, read from the rows
    in rank order: None where no query needs it, else the block path's array."""
    from sklearn_rank.metrics._engine.columns import NamedGain
    from sklearn_rank.metrics._engine.ranking import TREC_ORDER, block_specs, rank_block
    from sklearn_rank.metrics._engine.scaled import Scaled

    data = _trec_data([3, 40, 17, 1, 9], 0.5, 7, scale)
    scaled = []
    for segments, width in block_specs(data):
        for gain in (NamedGain("linear"), NamedGain("exponential")):
            direct = rank_block(data, segments, width, [TREC_ORDER])[TREC_ORDER]
            reference = rank_block(data, segments, width, [TREC_ORDER])[TREC_ORDER]
            reference.in_order = False
            got, expected = direct.unranked(Scaled(gain)), reference.unranked(Scaled(gain))
            assert (got is None) == (expected is None)
            assert got is None or np.array_equal(got, expected)
            scaled.append(got is not None)
    assert any(scaled) == (scale != 1.0)  # (both cases are exercised)


def _column_classes(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _column_classes(sub)


def test_a_per_row_columns_block_is_its_rows_values():
    """Column.per_row promises that a block's cells hold the values of their rows
    (padding 0), which lets blocks in rank order read rows instead: every such
    column's block equals the gather of Column.values, on TREC-mode data with
    judged, unjudged and negatively coded rows and padding. Every Column class is
    in the list, or declares per_row False."""
    from sklearn_rank.metrics._engine.columns import (
        CallableGain,
        Column,
        Gain,
        MappedGain,
        NamedGain,
        PairGain,
        TableGain,
    )
    from sklearn_rank.metrics._engine.ranking import TREC_ORDER, block_specs, rank_block
    from sklearn_rank.metrics._families import _cwl  # noqa: F401 (its Column class)

    columns = [*_rank_order_columns(), CallableGain(np.sqrt), TableGain((0.0, 1.0, 3.0, 7.0)),
               MappedGain(((0.0, 0.0), (1.0, 2.0), (2.0, 5.0), (3.0, 9.0))),
               PairGain(NamedGain("linear"), (("2", 10.0),))]
    listed = {type(c) for c in columns}
    for cls in set(_column_classes(Column)) - listed - {Gain}:  # (Gain: their base)
        assert not cls.per_row, cls
    data = _trec_data([3, 40, 17, 1, 9, 5, 5], 0.6, 11)
    for segments, width in block_specs(data):
        rank = rank_block(data, segments, width, [TREC_ORDER])[TREC_ORDER]
        for col in columns:
            assert np.array_equal(col.block(rank), rank.gathered(col)), col
    for col in columns:  # (and its nonzero rows are those of its values)
        assert np.array_equal(col.nonzero(data), np.flatnonzero(col.values(data) != 0)), col


# -- hashing ----------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=30), min_size=0, max_size=30))
def test_hash64_is_its_reference_on_random_text(texts):
    values = np.array(texts, dtype="U")
    np.testing.assert_array_equal(hash64(values), hash64_reference(values))
    # equal strings, equal hashes, whatever the width (and distinct ones apart)
    wide = values.astype(f"U{values.dtype.itemsize // 4 + 5}")
    np.testing.assert_array_equal(hash64(wide), hash64(values))
    assert np.unique(hash64(values)).shape[0] == np.unique(values).shape[0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=40).map(lambda b: b.rstrip(b"\0")),
                min_size=0, max_size=30))
def test_hash64_is_its_reference_on_random_bytes(data):
    values = np.array(data, dtype="S")
    np.testing.assert_array_equal(hash64(values), hash64_reference(values))
    assert np.unique(hash64(values)).shape[0] == np.unique(values).shape[0]


def test_hash64_is_its_reference_on_adversarial_strings():
    for values in (np.array([""] * 3), np.array(["a"]), np.array(["x" * 200, "x" * 199]),
                   np.array(["\U0010ffff" * 9, "\x01", "\x01\x01"]),
                   np.array([b"\xff" * 64, b"\x01" * 8, b"\x01" * 16], dtype="S"),
                   np.array([], dtype="U3")):
        np.testing.assert_array_equal(hash64(values), hash64_reference(values))
    long = b"ab" * 100_003  # hash_bytes: the same hash from the bytes, chunk by chunk
    mixed = hashing.mix(np.array([hashing.hash_bytes(long, chunk=1000)]))
    np.testing.assert_array_equal(mixed, hash64_reference(np.array([long])))


def _keys(rng, n: int, kind: str) -> np.ndarray:
    if kind == "mixed":
        return hashing.mix(rng.integers(0, 2**63, n, dtype=np.uint64))
    if kind == "few":  # many repeats
        return rng.integers(0, 5, n).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    if kind == "low bits":  # equal high bits: every key in one table slot
        return rng.permutation(n).astype(np.uint64)
    if kind == "high bits":  # equal low bits, few distinct high parts
        return rng.integers(0, 16, n).astype(np.uint64) << np.uint64(60)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["mixed", "few", "low bits", "high bits"])
@pytest.mark.parametrize("n", [0, 1, 2, 1000, hashing._SORTED + 3, 200_000])
def test_has_equal_and_dense_codes_are_their_references(kind, n):
    rng = np.random.default_rng(n)
    keys = _keys(rng, n, kind)
    for k in (keys, np.sort(keys), np.sort(keys)[::-1].copy(),
              np.concatenate((keys, keys[:1]))):  # (the last: one key twice)
        assert has_equal(k) is has_equal_reference(k)
        _check_dense(k)


def test_has_equal_finds_a_pair_that_loses_its_slot():
    """Two equal keys that both lose their table slot to a third key with the
    same high bits, written after them: found in a later round."""
    rng = np.random.default_rng(5)
    keys = _keys(rng, 3 * hashing._SORTED, "mixed")
    x = keys[0]
    keys = np.concatenate(([x, x], keys[1:], [x ^ np.uint64(1)]))
    assert has_equal(keys) is has_equal_reference(keys) is True
    _check_dense(keys)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=100),
       st.integers(0, 3))
def test_has_equal_and_dense_codes_on_random_keys(values, repeats):
    keys = np.array(values + values[:repeats], dtype=np.uint64)
    assert has_equal(keys) is has_equal_reference(keys)
    _check_dense(keys)


def _check_dense(keys: np.ndarray) -> None:
    """dense_codes: None (it gave up), or the reference's partition of the rows,
    numbered by increasing representative row."""
    got = dense_codes(keys)
    if got is None:
        return
    expected = dense_codes_reference(keys)
    assert got.firsts.shape == expected.firsts.shape
    assert (np.diff(got.firsts) > 0).all()
    np.testing.assert_array_equal(keys[got.firsts][got.codes], keys)
    # the same partition: each code maps to one reference code, and back
    pairs = np.unique(np.stack((got.codes.astype(np.int64), expected.codes)), axis=1)
    assert pairs.shape[1] == expected.firsts.shape[0]


# -- number parsing --------------------------------------------------------------------------


def _check_decimals(tokens: list[bytes]) -> None:
    column = IdColumn.from_strings(tokens)
    values, read = decimal_values(column.words(cap=16), column.length)
    expected, expected_read = decimal_values_reference(tokens)
    np.testing.assert_array_equal(read, expected_read)
    # bit for bit: -0.0 is not 0.0
    np.testing.assert_array_equal(values[read].view(np.int64), expected[read].view(np.int64))


_TOKEN = st.text(alphabet="0123456789+-.eE", min_size=1, max_size=20).map(str.encode)
_DECIMAL = st.builds(lambda x, k: (f"{x:.{k}f}").encode(),
                     st.floats(-1e17, 1e17, allow_nan=False), st.integers(0, 17))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_TOKEN, _DECIMAL), min_size=1, max_size=50))
def test_decimal_parser_is_float_on_random_tokens(tokens):
    _check_decimals(tokens)


def test_decimal_parser_is_float_on_adversarial_tokens():
    _check_decimals([
        b"0", b"-0", b"+0", b"-0.0", b".5", b"-.5", b"+.5", b"5.", b"-5.", b".", b"+", b"-",
        b"+-1", b"--1", b"1..2", b"1.2.3", b"1e5", b"1E-3", b"inf", b"nan", b"0x10",
        b"9007199254740992", b"9007199254740993", b"-9007199254740992", b"900719925474099.3",
        b"0000000000000001", b"00000000000000001", b"1234567812345678", b"12345678.1234567",
        b"-1234567.12345678", b"0.0000000000001", b"99999999", b"100000000", b"12345678",
        b"1_0", b"1 0", b"\x7f1", b"/", b":",
    ])


def _numbers_of(tokens: list[bytes], integer: bool = False) -> np.ndarray:
    column = IdColumn.from_strings(tokens)
    return _numbers.parse_numbers(column, "file", lambda i: i + 1, "score", integer)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_DECIMAL, st.floats(allow_nan=False, allow_infinity=False)
                          .map(lambda x: repr(x).encode())), min_size=1, max_size=60))
def test_column_numbers_are_float_of_each_field(tokens):
    """A column's numbers (plain decimals vectorised, the others by NumPy, long
    tokens one by one): ``float(token)`` of every field, bit for bit."""
    expected = np.array([float(t) for t in tokens])
    np.testing.assert_array_equal(_numbers_of(tokens).view(np.int64), expected.view(np.int64))


def test_column_numbers_on_adversarial_fields():
    tokens = [b"1e308", b"-1e308", b"2.2250738585072014e-308", b"5e-324", b"-0", b"1E5",
              b"0." + b"0" * 400 + b"1", b"1" * 300, b"+7", b".5", b"123456789012345678"]
    expected = np.array([float(t) for t in tokens])
    np.testing.assert_array_equal(_numbers_of(tokens).view(np.int64), expected.view(np.int64))
    np.testing.assert_array_equal(_numbers_of([b"3"] * 10, integer=True), 3.0)  # one digit
    for bad in (b"1e400", b"inf", b"nan", b"1_0", b"abc", b"1.5.1"):
        with pytest.raises(ValueError, match="line 2: score .* is not a finite number"):
            _numbers_of([b"1", bad])


# -- the join -----------------------------------------------------------------------------


def _colliding_docnos(rng, n: int) -> list[tuple[bytes, bytes]]:
    """n pairs of distinct 16-byte ids with equal hash_words (equal pair keys
    within a query): word 1 of the second solves the hash's equation."""
    m0, m1 = (int(m) for m in hashing._multipliers(0, 2))
    inverse, mask = pow(m1, -1, 2**64), 2**64 - 1
    allowed = [b for b in range(33, 127) if b != 35]
    pairs = []
    while len(pairs) < n:
        x0, x1, y0 = (int.from_bytes(bytes(rng.choice(allowed, 8).tolist()), sys.byteorder)
                      for _ in range(3))
        y1 = (((x0 * m0) ^ (x1 * m1) ^ (y0 * m0)) & mask) * inverse & mask
        if all(b in allowed for b in y1.to_bytes(8, sys.byteorder)):
            pairs.append(tuple(a.to_bytes(8, sys.byteorder) + b.to_bytes(8, sys.byteorder)
                               for a, b in ((x0, x1), (y0, y1))))
    return pairs


def _check_join(qrels: Qrels, run: Run) -> None:
    codes = _join.query_codes(qrels, run)
    expected = _join.query_codes_reference(qrels, run)
    np.testing.assert_array_equal(codes.vocabulary, expected.vocabulary)
    for got, want in zip(codes.run_codes, expected.run_codes, strict=True):
        np.testing.assert_array_equal(got, want)
    sides = _join.row_codes(qrels, run)
    args = (qrels, run, sides.q_code, sides.r_code)
    np.testing.assert_array_equal(_join.match_rows(*args, sides.vocabulary.shape[0]),
                                  _join.match_rows_reference(*args))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "2", "10", "q"]),
                          st.text(string.ascii_letters + string.digits, min_size=1,
                                  max_size=20)),
                min_size=1, max_size=60, unique=True),
       st.lists(st.tuples(st.sampled_from(["1", "2", "3", "q"]),
                          st.text(string.ascii_letters + string.digits, min_size=1,
                                  max_size=20)),
                min_size=1, max_size=60, unique=True))
def test_join_is_its_reference_on_random_tables(judged, retrieved):
    qrels = Qrels([q for q, _ in judged], [d for _, d in judged], np.ones(len(judged)))
    run = Run([q for q, _ in retrieved], [d for _, d in retrieved], np.ones(len(retrieved)))
    _check_join(qrels, run)
    _check_join(qrels, Run(qrels.qid, qrels.docno, qrels.rel))  # every row judged


def test_join_is_its_reference_on_adversarial_tables():
    rng = np.random.default_rng(3)
    pairs = _colliding_docnos(rng, 30)
    qids = rng.choice(["a", "b"], 30).tolist()
    # judged x, retrieved y: equal pair keys, different ids (a collision to verify)
    qrels = Qrels(qids, [x for x, _ in pairs], np.ones(30))
    run = Run(qids, [y for _, y in pairs], np.ones(30))
    assert (qrels.keys == run.keys).all()
    _check_join(qrels, run)
    run = Run(qids * 2, [y for _, y in pairs] + [x for x, _ in pairs], np.ones(60))
    _check_join(qrels, run)
    # one row; no match at all; a very long docno and qid (columns not compact)
    _check_join(Qrels(["1"], ["d"], [1]), Run(["1"], ["d"], [1.0]))
    _check_join(Qrels(["1"], ["d"], [1]), Run(["1", "2"], ["e", "d"], [1.0, 2.0]))
    long_qid, long_docno = "q" * (1 << 20), "d" * (1 << 20)
    docs = [f"doc{i}" for i in range(500)]
    _check_join(Qrels([long_qid] + ["1"] * 500, [long_docno] + docs, np.ones(501)),
                Run(["1"] * 250 + [long_qid], docs[::2] + [long_docno], np.ones(251)))


# -- threads ----------------------------------------------------------------------------------


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Every threaded device cut into tiny blocks, so small inputs use threads."""
    monkeypatch.setattr(engine_threads, "MIN_CELLS", 1)
    monkeypatch.setattr(grouping, "_CHUNK", 1 << 8)
    monkeypatch.setattr(_numbers, "_NUMBERS", 1 << 6)
    monkeypatch.setattr(_numbers, "_MIN_BLOCKS", 1)
    monkeypatch.setattr(_fields, "_BLOCK", 1 << 10)
    monkeypatch.setattr(_join, "_FIND_ROWS", 1 << 6)
    return monkeypatch


def _with_threads(monkeypatch, n: int, func):
    monkeypatch.setenv(threads.ENV, str(n))
    return func()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9)), min_size=1, max_size=30))
def test_run_blocks_is_a_loop(work):
    """run_blocks on any number of threads: every block once, each writing its
    own result, and the first block's error (in block order) raised."""
    expected = [label * 10 + score for label, score in work]
    for n in (1, 2, 4):
        out = [None] * len(work)

        def step(i, out=out):
            out[i] = work[i][0] * 10 + work[i][1]

        threads.run_blocks(step, range(len(work)), n)
        assert out == expected
    if len(work) > 1:
        def fail(i):
            if i >= 1:
                raise ValueError(i)

        for n in (1, 2, 4):
            with pytest.raises(ValueError, match="^1$"):
                threads.run_blocks(fail, range(len(work)), n)


def test_threads_give_bit_identical_results(tiny_blocks, colliding_ids):
    """Grouping, evaluation, reading a run's numbers and the join on 4 threads
    (blocks cut tiny) equal the same on one thread, bit for bit."""
    rng = np.random.default_rng(11)
    n = 6000
    a, b = colliding_ids
    names = np.array([f"query-{i:05d}" for i in range(300)] + [a, b])
    q = names[rng.integers(0, names.shape[0], n)]
    y = rng.integers(0, 5, n)
    s = rng.normal(size=n).round(2)  # (ties)
    lines = b"".join(b"%s Q0 d%d 0 %s t\n" % (q[i].encode(), i, repr(float(s[i]) * 1e3).encode())
                     for i in range(n))

    def compute():
        g = group(q, any_order=True)
        per_query = evaluate(y, s, qid=q, metrics=["ndcg@10", "map", "err@5"]).per_query
        run = read_run(io.BytesIO(lines), engine="numpy")
        qrels = Qrels(run.qid[::3], run.docno[::3], y[::3])
        sides = _join.row_codes(qrels, run)
        match = _join.match_rows(qrels, run, sides.q_code, sides.r_code,
                                 sides.vocabulary.shape[0])
        return g, per_query, run.score, match

    one = _with_threads(tiny_blocks, 1, compute)
    four = _with_threads(tiny_blocks, 4, compute)
    for x, z in ((one[0].rows(), four[0].rows()), (one[0].starts, four[0].starts),
                 (one[2], four[2]), (one[3], four[3])):
        np.testing.assert_array_equal(x, z)
    assert one[1].keys() == four[1].keys()
    for name in one[1]:
        np.testing.assert_array_equal(np.asarray(one[1][name]).view(np.int64),
                                      np.asarray(four[1][name]).view(np.int64))
