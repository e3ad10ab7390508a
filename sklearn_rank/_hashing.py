"""Vectorised 64-bit hashing of byte strings (query and document ids).

:func:`hash_words` hashes strings given as their 8-byte words, so a
fixed-width array costs rows x its width: fine for ids of similar lengths.
For a few very long ids among short ones, hash those one by one with
:func:`hash_bytes` (the same hash, from the bytes; see
``sklearn_rank.trec._column``): memory then follows the bytes of the ids.
"""

from __future__ import annotations

import numpy as np

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


def _units(values: np.ndarray) -> np.ndarray:
    """A contiguous ``'S'`` array as rows of the widest unsigned integers that
    divide its width, without a copy: equal rows, equal strings (of one array)."""
    width = values.dtype.itemsize
    unit = next(size for size in (8, 4, 2, 1) if width % size == 0)
    return values.view(f"u{unit}").reshape(values.shape[0], width // unit)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a bijection in which every input bit affects
    every output bit."""
    x = x ^ (x >> np.uint64(30))
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _multiplier(j: int) -> np.uint64:
    """An odd 64-bit constant for word position j."""
    return _mix(np.array([j + 1], dtype=np.uint64) * _GOLDEN)[0] | np.uint64(1)


def hash_words(words, *, overwrite: bool = False) -> np.ndarray:
    """A 64-bit hash of strings given as their successive 8-byte words.

    ``words`` is an iterable of uint64 arrays, the j-th holding word j of
    every string (zero past its end). The hash is the XOR over j of word j
    times an odd constant for position j: two passes per word, and an all-zero
    word adds nothing, so NumPy's NUL padding (any width) leaves it unchanged.
    It is not mixed: equal strings hash equal and strings differing in one
    word never collide, but use :func:`pair_key` or :func:`hash64` where the
    bits must look random. With ``overwrite=True`` the word arrays (caller's
    temporaries) hold the products, and the first one the result.
    """
    h = None
    for j, w in enumerate(words):
        w = np.multiply(w, _multiplier(j), out=w if overwrite else None)
        if h is None:
            h = w
        else:
            h ^= w
    return h


def _multipliers(start: int, stop: int) -> np.ndarray:
    """:func:`_multiplier` of the word positions ``start..stop - 1``."""
    j = np.arange(start + 1, stop + 1, dtype=np.uint64)
    j *= _GOLDEN
    return _mix(j) | np.uint64(1)


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
    """A well-mixed 64-bit hash of every string of a ``'S'`` array.

    Equal strings hash equal whatever the array widths; callers that need
    exactness verify candidate matches by comparing the strings.
    """
    if values.dtype.kind != "S":
        raise TypeError(f"hash64 takes a bytes ('S') array, not {values.dtype}.")
    return _mix(hash_words(_words(values).T))


def pair_key(first: np.ndarray, second: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit key of pairs of strings, from :func:`hash64` of the first and
    :func:`hash_words` of the second: their XOR times an odd constant, so
    distinct XORs give distinct keys (written to ``out`` if given).

    Only the high bits are well mixed (each depends on every bit of both
    hashes): take table positions from the top (``key >> (64 - bits)``).
    """
    key = np.bitwise_xor(first, second, out=out)
    key *= _GOLDEN
    return key
