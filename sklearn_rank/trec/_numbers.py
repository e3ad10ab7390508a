"""The numbers of a TREC file's column (relevance levels, scores), read
vectorised in blocks on threads, with an error naming the first bad line."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from .._utils.threads import run_blocks, thread_limit
from ._column import IdColumn
from ._decimal import decimal_values


def _atol(token: bytes) -> int:
    """What C's ``atol`` (trec_eval's reading of a level) makes of ``token``."""
    digits = re.match(rb"[ \t\n\v\f\r]*([+-]?[0-9]*)", token).group(1)
    value = int(digits) if digits.strip(b"+-") else 0
    return max(-2**63, min(2**63 - 1, value))


# bytes of a token that C's atol reads whole: digits, a sign, a dot (NUL: padding)
_INTEGER_BYTES = np.zeros(256, dtype=bool)
_INTEGER_BYTES[list(b"0123456789+-.\x00")] = True


def _token_value(token: bytes) -> float | None:
    """A token's value if it is a finite decimal number, else None ("1_0" is
    None: Python reads it as 10, C's atof, as trec_eval, as 1)."""
    if b"_" in token:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_ROWS = 1 << 16  # tokens checked at a time by _check_integers (temporaries stay small)
_MIN_BLOCKS = 4  # blocks worth starting threads for (each takes a millisecond or so)


def _prefixes(column: IdColumn):
    """``(lo, hi, chars)`` for blocks of the column's rows: the bytes of
    their prefixes (:meth:`IdColumn.prefix`), a row each."""
    n = len(column)
    for lo in range(0, n, _ROWS):
        hi = min(n, lo + _ROWS)
        raw = column.prefix(np.arange(lo, hi))
        yield lo, hi, raw.view(np.uint8).reshape(hi - lo, raw.dtype.itemsize)


def for_blocks(work: Callable[[int], None], n_blocks: int):
    """``work(i)`` for i in ``range(n_blocks)``: on the calling thread for a
    few blocks, else on up to :func:`~sklearn_rank._utils.threads.thread_limit`
    threads (joined before it returns). Each block writes its own part of the
    result, so the result is the same whatever the number of threads."""
    run_blocks(work, range(n_blocks), thread_limit() if n_blocks >= _MIN_BLOCKS else 1)


def parse_numbers(column: IdColumn, name: str, line: Callable[[int], int], what: str,
             integer: bool, read: FastValues | None = None) -> np.ndarray:
    """The values of a column of numbers, or an error naming the first bad
    line; with ``integer``, every value must be the integer C's ``atol``
    (trec_eval's reading of a relevance level) reads from its token.
    ``read``: the column's :class:`FastValues`, its blocks read (default:
    read here, on up to :func:`~sklearn_rank._utils.threads.thread_limit` threads)."""
    if read is None:
        read = FastValues(column)
        for_blocks(read.read, read.n_blocks)
    values = read.result()
    if values is None:  # find the first bad token (values from Python, which is the reference)
        values = np.empty(len(column))
        for i in range(len(column)):
            token = column.item(i)
            if (value := _token_value(token)) is None:
                raise ValueError(f"{name}: line {line(i)}: {what} "
                                 f"{token.decode(errors='replace')!r} is not a finite number.")
            values[i] = value
    if integer and not read.digits:
        _check_integers(column, values, name, line, what)
    return values


_NUMBERS = 1 << 15  # tokens read at a time by FastValues (see its docstring)


def _one_digit(column: IdColumn) -> np.ndarray | None:
    """The values of a column whose tokens are all one ASCII digit, else None."""
    if not len(column) or column.length.min() != 1 or column.length.max() != 1:
        return None
    digit = column.buf[column.start] - np.uint8(48)  # (other bytes wrap past 9)
    return digit.astype(np.float64) if (digit <= 9).all() else None


class FastValues:
    """The values of a column's tokens, read vectorised in blocks of rows:
    plain decimals by :func:`~sklearn_rank.trec._decimal.decimal_values`, the others from their
    prefixes by NumPy, the long tokens one by one. :meth:`read` each of the
    :attr:`n_blocks` blocks (in any order, on any threads), then
    :meth:`result`: the values, or None if any token is not a finite number
    (or holds a ``_``).

    Blocks of :data:`_NUMBERS` tokens: each block is a few dozen short NumPy
    calls, each taking the GIL, so much smaller blocks leave threads taking
    turns at it; much larger ones keep more temporaries alive.

    A column of one-digit tokens (the usual relevance levels, 0 to 4) is
    read at once from its bytes (:attr:`digits`; no blocks, and no integer
    check needed).
    """

    def __init__(self, column: IdColumn):
        self.column = column
        self._failed = []
        digits = _one_digit(column)
        self.digits = digits is not None  # (then whole numbers: no integer check)
        self._values = digits if self.digits else np.empty(len(column))
        self.n_blocks = 0 if self.digits else -(-len(column) // _NUMBERS)

    def read(self, i: int):
        column, values, n = self.column, self._values, len(self.column)
        lo, hi = i * _NUMBERS, min(n, (i + 1) * _NUMBERS)
        rows = np.arange(lo, hi)
        values[lo:hi], plain = decimal_values(column.words(rows, cap=16),
                                              column.length[lo:hi])
        other = rows[~plain]
        if not other.shape[0]:
            return
        raw = column.prefix(other)
        try:
            values[other] = raw.astype(np.float64)  # (holds the GIL: rare tokens only)
        except ValueError:
            self._failed.append(i)
            return
        if (raw.view(np.uint8) == 95).any():  # 95: "_"
            self._failed.append(i)

    def result(self) -> np.ndarray | None:
        values = self._values
        if self.digits:
            return values
        if self._failed or not np.isfinite(values).all():
            return None
        for i in self.column.long.tolist():  # the tokens longer than the prefix
            if (value := _token_value(self.column.item(i))) is None:
                return None
            values[i] = value
        return values


def _check_integers(column: IdColumn, values: np.ndarray, name: str,
                    line: Callable[[int], int], what: str):
    """An error naming the line of the first value that is not the integer
    C's ``atol`` reads from its token (judged from its prefix, in blocks of
    rows; the long tokens one by one)."""
    check = []
    for lo, hi, chars in _prefixes(column):
        part = values[lo:hi]
        check.append(lo + np.flatnonzero(~_INTEGER_BYTES[chars].all(axis=1)
                                         | (part != np.trunc(part)) | (np.abs(part) >= 2**53)))
    check.append(column.long)
    for i in sorted(set(np.concatenate(check).tolist())):
        token = column.item(i)
        if _atol(token) != values[i]:
            raise ValueError(
                f"{name}: line {line(i)}: {what} {token.decode(errors='replace')!r} "
                f"is not an integer; trec_eval reads levels as integers and would read it "
                f"as {_atol(token)}: write whole numbers (such as 2 or 2.0)."
            )
