"""Vectorised 64-bit hashing of strings (query and document ids).

One hash serves the TREC tables (:mod:`sklearn_rank.trec`) and the grouping
of string query ids: :func:`hash64` of a fixed-width ``'S'`` or ``'U'``
array. :func:`hash_words` hashes strings given as their 8-byte words, so a
fixed-width array costs rows x its width: fine for ids of similar lengths.
For a few very long ids among short ones, hash those one by one with
:func:`hash_bytes` (the same hash, from the bytes; see
``sklearn_rank.trec._column``): memory then follows the bytes of the ids.

Callers that need exactness verify candidate matches by comparing the
strings: a hash only says which strings may be equal.

Each device has a plain reference beside it, which the tests compare it with:
:func:`hash64_reference` (the same hash in Python integers, string by string),
:func:`has_equal_reference` and :func:`dense_codes_reference` (``np.unique``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["DenseCodes", "dense_codes", "dense_codes_reference", "has_equal",
           "has_equal_reference", "hash64", "hash64_reference", "hash_bytes", "hash_words",
           "mix", "pair_key"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _words(values: np.ndarray) -> np.ndarray:
    """A ``'S'`` array as rows of uint64 words (NUL padded to a multiple of 8)."""
    values = np.ascontiguousarray(values)
    n, width = values.shape[0], values.dtype.itemsize
    n_words = max(1, -(-width // 8))
    if width == 8 * n_words:
        return values.view(np.uint64).reshape(n, n_words)
    words = np.zeros((n, n_words), dtype=np.uint64)
    words.view(np.uint8)[:, :width] = values.view(np.uint8).reshape(n, width)
    return words


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer of a uint64 array (a new array): a bijection in
    which every input bit affects every output bit."""
    x = x ^ (x >> np.uint64(30))
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _multipliers(start: int, stop: int) -> np.ndarray:
    """An odd 64-bit constant for each word position ``start..stop - 1``."""
    j = np.arange(start + 1, stop + 1, dtype=np.uint64)
    j *= _GOLDEN
    return mix(j) | np.uint64(1)


def hash_words(words, *, overwrite: bool = False) -> np.ndarray:
    """A 64-bit hash of strings given as their successive 8-byte words.

    ``words`` is an iterable of uint64 arrays, the j-th holding word j of
    every string (zero past its end). The hash is the XOR over j of word j
    times an odd constant for position j: two passes per word, and an all-zero
    word adds nothing, so NumPy's NUL padding (any width) leaves it unchanged.
    It is not mixed: equal strings hash equal and strings differing in one
    word never collide, but apply :func:`mix` (as :func:`hash64` does) or
    use :func:`pair_key` where the bits must look random. With
    ``overwrite=True`` the word arrays (caller's temporaries) hold the
    products, and the first one the result.
    """
    h = None
    for j, w in enumerate(words):
        w = np.multiply(w, _multipliers(j, j + 1)[0], out=w if overwrite else None)
        if h is None:
            h = w
        else:
            h ^= w
    return h


def hash_bytes(data: bytes, *, chunk: int = 1 << 17) -> np.uint64:
    """:func:`hash_words` of one string given as bytes (any length), in
    memory bounded by ``chunk`` words at a time."""
    h = np.uint64(0)
    n_words = -(-len(data) // 8)
    for lo in range(0, n_words, chunk):
        hi = min(n_words, lo + chunk)
        part = data[8 * lo:8 * hi]
        words = np.frombuffer(part + bytes(8 * (hi - lo) - len(part)), dtype=np.uint64)
        h ^= np.bitwise_xor.reduce(words * _multipliers(lo, hi))
    return h


def hash64(values: np.ndarray) -> np.ndarray:
    """A well-mixed 64-bit hash of every string of a 1-D ``'S'`` or ``'U'`` array.

    Equal strings hash equal whatever the array widths (NUL padding adds
    nothing; a ``'U'`` string is hashed as the bytes of its code points, so
    ``'S'`` and ``'U'`` arrays of the same text hash differently). Every bit
    is well mixed: the top 32 bits make a 32-bit hash.
    """
    if values.dtype.kind not in "SU":
        raise TypeError(f"hash64 takes a 'S' or 'U' array, not {values.dtype}.")
    if values.dtype.kind == "U":  # the bytes of its code points
        values = np.ascontiguousarray(values)
        width = values.dtype.itemsize
        values = values.view(f"S{width}") if width else values.astype("S1")
    return mix(hash_words(_words(values).T))


def hash64_reference(values: np.ndarray) -> np.ndarray:
    """:func:`hash64` computed string by string in Python integers (the reference)."""
    mask = (1 << 64) - 1

    def mixed(x: int) -> int:
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & mask
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    out = []
    for text in values.tolist():
        data = text.encode("utf-32-le") if values.dtype.kind == "U" else text
        data += bytes(-len(data) % 8)
        h = 0
        for j in range(len(data) // 8):
            multiplier = mixed(((j + 1) * 0x9E3779B97F4A7C15) & mask) | 1
            h ^= (int.from_bytes(data[8 * j:8 * j + 8], "little") * multiplier) & mask
        out.append(mixed(h))
    return np.array(out, dtype=np.uint64)


def pair_key(first: np.ndarray, second: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit key of pairs of strings, from a mixed hash of the first
    (:func:`mix` of :func:`hash_words`) and :func:`hash_words` of the second:
    their XOR times an odd constant, so distinct XORs give distinct keys
    (written to ``out`` if given).

    Only the high bits are well mixed (each depends on every bit of both
    hashes): take table positions from the top (``key >> (64 - bits)``).
    """
    key = np.bitwise_xor(first, second, out=out)
    key *= _GOLDEN
    return key


_SORTED = 1 << 14  # keys left at which has_equal sorts them


def has_equal(keys: np.ndarray) -> bool:
    """Whether two of the uint64 ``keys`` are equal, without sorting them all.

    Every key is written to a table of at least twice as many slots, at the
    slot named by its high bits (the last writer of a slot wins), and read
    back: a key that finds another row in its slot is compared with that row's
    key. Two equal keys share a slot, so one of them is its winner (the other
    then finds it) or both lost; the losers (~20% of the keys) go through the
    same again, mixed (:func:`mix`, a bijection: equal stays equal), until a
    few are left, which are sorted. Exact whatever the keys (the same answer
    as :func:`has_equal_reference`); fast when the high bits are well mixed
    (as :func:`pair_key`'s), as a table pass is O(n) where a sort is not.

    Examples
    --------
    >>> import numpy as np
    >>> has_equal(np.array([7, 3, 9], dtype=np.uint64))
    False
    >>> has_equal(np.array([7, 3, 7], dtype=np.uint64))
    True
    """
    while keys.shape[0] > _SORTED:
        n = keys.shape[0]
        bits = int(n - 1).bit_length() + 1
        slot = (keys >> np.uint64(64 - bits)).astype(np.intp)
        index = np.int32 if n < 2**31 else np.intp
        rows = np.arange(n, dtype=index)
        table = np.empty(1 << bits, dtype=index)
        table[slot] = rows  # (repeated slots: one of their rows, whichever)
        winner = table.take(slot)
        del table, slot
        lost = np.flatnonzero(winner != rows)
        lost_keys = keys.take(lost)
        if (lost_keys == keys.take(winner.take(lost))).any():
            return True
        if 2 * lost.shape[0] > n:  # few distinct high bits: sorting is as fast
            keys = lost_keys
            break
        keys = mix(lost_keys)
    keys = np.sort(keys)
    return bool((keys[1:] == keys[:-1]).any())


def has_equal_reference(keys: np.ndarray) -> bool:
    """:func:`has_equal` by ``np.unique`` (the reference)."""
    return np.unique(keys).shape[0] < keys.shape[0]


class DenseCodes(NamedTuple):
    """Equal keys numbered densely: what :func:`dense_codes` returns."""

    codes: np.ndarray
    """The number of every row's key, in ``range(m)`` for ``m`` distinct keys."""
    firsts: np.ndarray
    """``firsts[c]``: a row holding code c's key (increasing in c)."""


def dense_codes(keys: np.ndarray, rounds: int = 3) -> DenseCodes | None:
    """Equal keys numbered densely, without sorting.

    ``codes[i]`` is in ``range(m)`` for the ``m`` distinct uint64 ``keys``
    (equal keys, equal codes) and ``firsts[c]`` is a row holding code c's key
    (increasing in c): the same partition of the rows as
    :func:`dense_codes_reference`, or None (see below).

    Each round writes the unresolved rows into a table (at most 2**21 slots)
    at a slot named by the top bits of their key times an odd constant
    (another each round), the last writer of a slot winning: every row whose
    key is its slot's winner's is resolved to that winner. All the rows of a
    key share a slot, so a key is resolved whole, in one round, to one row.
    Keys still unresolved after ``rounds`` rounds (many distinct keys
    colliding): None, and the caller sorts instead. Dense codes below 2**16
    then group in one radix pass where 32-bit hash codes need two.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.array([7, 3, 7, 9, 3], dtype=np.uint64)
    >>> codes, firsts = dense_codes(keys)
    >>> len(firsts), bool((keys[firsts][codes] == keys).all())
    (3, True)
    """
    n = keys.shape[0]
    bits = max(1, min(int(n - 1).bit_length() + 1, 21))
    shift = np.uint64(64 - bits)
    winner, rows = None, None  # the row each row is resolved to; rows left (None: all)
    for multiplier in _multipliers(0, rounds):
        part = keys if rows is None else keys[rows]
        slot = part * multiplier
        slot >>= shift
        slot = slot.astype(np.intp)
        table = np.empty(1 << bits, dtype=np.intp)
        table[slot] = np.arange(n) if rows is None else rows  # (repeats: any one row)
        won = table.take(slot)
        del table, slot
        same = keys.take(won) == part
        if rows is None:
            winner = won
            rows = np.flatnonzero(~same)
        else:
            winner[rows[same]] = won[same]
            rows = rows[~same]
        if not rows.shape[0]:
            break
    if rows.shape[0]:
        return None
    first = np.zeros(n, dtype=bool)
    first[winner] = True
    number = np.cumsum(first, dtype=np.int32 if n < 2**31 else np.intp)
    number -= 1
    return DenseCodes(number.take(winner), np.flatnonzero(first))


def dense_codes_reference(keys: np.ndarray) -> DenseCodes:
    """:func:`dense_codes` by ``np.unique`` (the reference): codes in the
    order of each key's first row, which is that row."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first)  # the unique keys in the order of their first rows
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(by_first.shape[0])
    return DenseCodes(rank[inverse.reshape(-1)], first[by_first])
