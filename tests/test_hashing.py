"""The hashing helpers: :func:`sklearn_rank._utils.hashing.has_equal` against
brute force (``np.unique``), on keys that stress each of its paths."""

import numpy as np
import pytest

from sklearn_rank._utils import hashing as _hashing
from sklearn_rank._utils.hashing import dense_codes, has_equal, mix


def _brute(keys: np.ndarray) -> bool:
    return np.unique(keys).shape[0] < keys.shape[0]


def _keys(kind: str, n: int, rng) -> np.ndarray:
    """n distinct uint64 keys of a kind."""
    if kind == "mixed":  # as pair keys: well-mixed high bits
        return mix(np.arange(n, dtype=np.uint64) + np.uint64(rng.integers(2**62)))
    if kind == "small":  # every high bit zero: one slot for all
        return rng.permutation(n).astype(np.uint64)
    if kind == "few slots":  # 16 distinct high parts, random low bits
        high = rng.integers(0, 16, n).astype(np.uint64) << np.uint64(60)
        return high | np.arange(n, dtype=np.uint64)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["mixed", "small", "few slots"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 1000, _hashing._SORTED + 1, 100_000, 300_000])
@pytest.mark.parametrize("seed", [0, 1])
def test_has_equal_is_brute_force(kind, n, seed):
    """Distinct keys: False; the same with one key repeated at a random
    place (any distance from its twin): True, as brute force says."""
    rng = np.random.default_rng(seed)
    keys = _keys(kind, n, rng)
    assert has_equal(keys) is _brute(keys) is False
    if n >= 2:
        i, j = rng.choice(n, 2, replace=False)
        keys[i] = keys[j]
        assert has_equal(keys) is _brute(keys) is True


@pytest.mark.parametrize("n", [100_000, 300_000])
def test_has_equal_finds_twins_that_both_lose_their_slot(n):
    """Two equal keys whose slot a third key (written after them) takes:
    neither finds the other in the table; the next round finds them."""
    keys = _keys("mixed", n, np.random.default_rng(2))
    bits = int(n - 1).bit_length() + 1
    twin = keys[10] ^ (keys[10] >> np.uint64(64 - bits) << np.uint64(64 - bits))  # slot 0
    keys[[10, n // 2]] = twin
    keys[-1] = twin + np.uint64(1)  # same slot, written last
    assert has_equal(keys) is _brute(keys) is True
    keys[n // 2] += np.uint64(2)
    assert has_equal(keys) is _brute(keys) is False


def test_has_equal_leaves_its_input_alone():
    keys = _keys("mixed", 50_000, np.random.default_rng(3))
    before = keys.copy()
    has_equal(keys)
    np.testing.assert_array_equal(keys, before)


def _check_dense(keys, codes, firsts):
    m = firsts.shape[0]
    assert m == np.unique(keys).shape[0]
    assert codes.shape == keys.shape and (codes >= 0).all() and (codes < m).all()
    assert (np.diff(firsts) > 0).all()
    np.testing.assert_array_equal(keys[firsts][codes], keys)  # equal keys <=> equal codes


@pytest.mark.parametrize("distinct", [1, 3, 10_000, 200_000])
@pytest.mark.parametrize("n", [0, 1, 200_000])
def test_dense_codes_number_equal_keys_alike(distinct, n):
    """Codes are a numbering of the distinct keys: brute force (np.unique)
    agrees on their number, and every row's code names a row of its key."""
    rng = np.random.default_rng(distinct + n)
    pool = mix(rng.integers(0, 2**62, distinct).astype(np.uint64))
    keys = pool[rng.integers(0, distinct, n)]
    found = dense_codes(keys)
    assert found is not None  # (at most 2 collisions expected over 3 rounds)
    _check_dense(keys, *found)


def test_dense_codes_give_up_rather_than_guess():
    """One round for a million distinct keys in 2**21 slots: colliding keys
    stay unresolved, so None (the caller sorts); more rounds resolve them."""
    keys = mix(np.arange(1 << 20, dtype=np.uint64))
    assert dense_codes(keys, rounds=1) is None
    _check_dense(keys, *dense_codes(keys, rounds=12))
