"""Plain decimal numbers read from their bytes without the GIL.

NumPy's conversion of a bytes array to float64 (``astype``) parses one token
at a time while it holds the GIL, so it cannot use a second core. Most numbers
of a TREC file are short decimals (``12.345678``, ``-3``, ``2``); those are
read here from the 8-byte words of their tokens with integer arithmetic on
whole arrays (SWAR: all the digits of a word at once), which NumPy runs with
the GIL released, on any number of threads.

A token is read here when it is ``[+-]digits[.digits]`` (or ``[+-].digits``),
at most 16 bytes, with a digit string (its digits without the dot) of value
at most 2**53. Its value is then the integer of its digits divided by a power
of ten, both exact as float64, and IEEE division rounds correctly: the value
is exactly Python's ``float(token)`` (Clinger's fast path). Any other token is
left to the caller. :func:`decimal_values_reference` reads the same tokens
one by one with a regular expression and ``float``: the tests compare the two.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["decimal_values", "decimal_values_reference"]

_U = np.uint64
_ONES = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_DOTS = _U(0x2E2E2E2E2E2E2E2E)  # "." in every byte
_ZEROS = _U(0x3030303030303030)  # "0" in every byte
_NIBBLES = _U(0xF0F0F0F0F0F0F0F0)
_SIXES = _U(0x0606060606060606)
_THREES = _U(0x3333333333333333)
_LIMIT = _U(1 << 53)  # digit strings up to this are exact as float64


def _byte_masks() -> tuple[np.ndarray, np.ndarray]:
    """Low and high words of the 128-bit masks keeping the first p bytes (p = 0..16)."""
    lo, hi = np.zeros(17, dtype=np.uint64), np.zeros(17, dtype=np.uint64)
    for p in range(17):
        mask = (1 << (8 * p)) - 1
        lo[p], hi[p] = mask & (2**64 - 1), mask >> 64
    return lo, hi


_KEEP_LO, _KEEP_HI = _byte_masks()
_FILL_LO, _FILL_HI = _ZEROS & ~_KEEP_LO, _ZEROS & ~_KEEP_HI  # "0" after the first p bytes
_POW10 = 10.0 ** np.arange(17)  # exact as float64 up to 10**22
_TENS = 10 ** np.arange(9, dtype=np.uint64)
# for a token of d digits (d = 0..16): digits in the second word, and each
# word's shift that right-aligns its digits (the second word's at most 56
# bits: NumPy's shifts by 64 are not portable; its "0" bytes read as zeros)
_SECOND = np.maximum(np.arange(17) - 8, 0)
_SHIFT_LO = (8 * (8 - np.minimum(np.maximum(np.arange(17), 1), 8))).astype(np.uint64)
_SHIFT_HI = (8 * (8 - np.maximum(_SECOND, 1))).astype(np.uint64)


def _lowest_dot(word: np.ndarray) -> np.ndarray:
    """The high bit of the lowest byte of each word that is ``.`` (0: none).

    The usual zero-byte test on ``word ^ DOTS``: its lowest flagged byte is
    always a real zero byte (flags above a zero byte may be false ones), so
    the lowest set bit of the flags is kept.
    """
    x = word ^ _DOTS
    flags = (x - _ONES) & ~x & _HIGH
    return flags & (_U(0) - flags)


def _byte_index(bit: np.ndarray) -> np.ndarray:
    """The byte (0..7) whose high bit is the single set bit of ``bit`` (nonzero)."""
    exponent = (bit.astype(np.float64).view(np.int64) >> 52) - 1023  # exact: a power of two
    return (exponent - 7) >> 3


def _all_digits(word: np.ndarray) -> np.ndarray:
    """Whether every byte of each word is an ASCII digit."""
    return ((word & _NIBBLES) | (((word + _SIXES) & _NIBBLES) >> _U(4))) == _THREES


def _eight_digits(word: np.ndarray) -> np.ndarray:
    """The integer written by the 8 ASCII digits of each word (first byte most
    significant)."""
    word = word & _U(0x0F0F0F0F0F0F0F0F)
    word = (word * _U(2561)) >> _U(8)
    word = ((word & _U(0x00FF00FF00FF00FF)) * _U(6553601)) >> _U(16)
    return ((word & _U(0x0000FFFF0000FFFF)) * _U(42949672960001)) >> _U(32)


def decimal_values(words: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values of plain decimal tokens, and which tokens are read.

    Parameters
    ----------
    words : ndarray of uint64, shape (n, w)
        Each token's bytes as 8-byte words (memory order), zero past its end
        (at least its first 16 bytes when it is longer: ``w`` may be 1 or 2).
    length : ndarray of int, shape (n,)
        Each token's length in bytes.

    Returns
    -------
    values : ndarray of float64
        ``float(token)`` for every token read, anything for the others.
    read : ndarray of bool
        Which tokens are read (see the module's docstring).
    """
    n = words.shape[0]
    lo = np.array(words[:, 0])
    hi = np.array(words[:, 1]) if words.shape[1] > 1 else np.zeros(n, dtype=np.uint64)
    size = length.astype(np.int64)
    first = lo & _U(0xFF)
    negative = first == _U(45)  # "-"
    signed = np.flatnonzero(negative | (first == _U(43)))  # "+"
    if signed.shape[0]:  # drop the sign: the 128-bit token one byte down
        lo[signed] = (lo[signed] >> _U(8)) | (hi[signed] << _U(56))
        hi[signed] >>= _U(8)
        size[signed] -= 1
    # the first dot: its byte index (16: none), then the token without it
    at = np.full(n, 16, dtype=np.int64)
    found = _lowest_dot(lo)
    dotted = np.flatnonzero(found)
    at[dotted] = _byte_index(found[dotted])
    rest = np.flatnonzero(found == 0)  # (no dot in the first word)
    found = _lowest_dot(hi[rest])
    dotted = np.flatnonzero(found)
    at[rest[dotted]] = _byte_index(found[dotted]) + 8
    keep_lo, keep_hi = _KEEP_LO[at], _KEEP_HI[at]  # the bytes before the dot
    after = (lo >> _U(8)) | (hi << _U(56))
    after &= ~keep_lo
    lo &= keep_lo
    lo |= after
    hi = (hi & keep_hi) | ((hi >> _U(8)) & ~keep_hi)
    digits = size - (at < 16)  # the bytes left: digits if the token is plain
    decimals = size - 1 - at  # (negative without a dot)
    np.clip(decimals, 0, 16, out=decimals)  # (tokens over 16 bytes are not read)
    read = (digits >= 1) & (length <= 16)
    np.clip(digits, 0, 16, out=digits)
    # "0" in the bytes after the digits: every byte must then be a digit
    lo |= _FILL_LO[digits]
    hi |= _FILL_HI[digits]
    read &= _all_digits(lo)
    read &= _all_digits(hi)
    # each word's digits right-aligned (zeros before them): the first word
    # holds the first min(digits, 8), the second the rest
    lo <<= _SHIFT_LO[digits]
    hi <<= _SHIFT_HI[digits]
    mantissa = _eight_digits(lo)
    mantissa *= _TENS[_SECOND[digits]]
    mantissa += _eight_digits(hi)
    read &= mantissa <= _LIMIT
    values = mantissa.astype(np.float64)
    values /= _POW10[decimals]
    np.negative(values, out=values, where=negative)
    return values, read


_PLAIN = re.compile(rb"[+-]?[0-9]*\.?[0-9]*")


def decimal_values_reference(tokens: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`decimal_values` of tokens given as ``bytes``, one by one with a
    regular expression and ``float`` (the reference; NaN for tokens not read)."""
    values, read = np.full(len(tokens), np.nan), np.zeros(len(tokens), dtype=bool)
    for i, token in enumerate(tokens):
        digits = token.lstrip(b"+-").replace(b".", b"", 1)
        if (len(token) <= 16 and _PLAIN.fullmatch(token) and digits
                and int(digits) <= 2**53):
            values[i], read[i] = float(token), True
    return values, read
