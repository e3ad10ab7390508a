"""Columns of byte strings (query and document ids) in memory proportional to
their bytes.

A :class:`IdColumn` keeps its strings back to back in one byte buffer. The
usual column (ids of similar lengths) is worked on as a fixed-width array,
every string padded to the longest, vectorised. When that would cost far more
than the bytes themselves (one 200 MB document id among a million short
ones), only the strings up to a width the budget allows are padded, to that
width; the few longer ones are compared, hashed and sorted one by one, from
their own bytes.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .._utils.hashing import hash_bytes, hash_words

# _MASKS[k]: a uint64 word keeping its first k bytes (in memory order, any endianness)
_MASKS = np.frombuffer(b"".join(b"\xff" * k + b"\x00" * (8 - k) for k in range(9)),
                       dtype=np.uint64)
_SLACK = 1 << 22  # bytes of padding any column may spend
_ROWS = 1 << 16  # rows hashed at a time


def _clamp(values: np.ndarray, high: int) -> np.ndarray:
    """``values`` (a scratch array) clipped to 0..high in place (np.clip is slower)."""
    np.maximum(values, 0, out=values)
    return np.minimum(values, high, out=values)


#: How bytes that are not UTF-8 are carried in an id's text: as Python
#: decodes file names, the byte 0xff as the lone surrogate U+DCFF (exact:
#: different ids, different texts; ``text.encode("utf-8", ID_ERRORS)`` gives
#: the bytes back).
ID_ERRORS = "surrogateescape"


def id_text(strings: np.ndarray) -> np.ndarray:
    """A bytes array (``'S'`` or object) as str, UTF-8 (:data:`ID_ERRORS`)."""
    if strings.dtype.kind == "O":
        out = np.empty(strings.shape[0], dtype=object)
        out[:] = [s.decode("utf-8", ID_ERRORS) for s in strings.tolist()]
        return out
    try:
        return strings.astype(str)
    except UnicodeDecodeError:
        return np.char.decode(strings, "utf-8", ID_ERRORS)


def _gather(buf: np.ndarray, start: np.ndarray, width: int, *,
            increasing: bool = False) -> np.ndarray:
    """The ``width`` bytes (a multiple of 8) of ``buf`` from every position of
    ``start``, as rows of uint64 words, zeros past the end of ``buf``
    (``increasing``: the starts are sorted)."""
    n_words = width // 8
    limit = buf.shape[0] - width  # the last position a whole row can be read from
    # rows that would read past the buffer: read from a zero-padded copy
    if increasing:  # a last few rows
        near_end = np.arange(np.searchsorted(start, limit, side="right"), start.shape[0])
    else:
        near_end = np.flatnonzero(start > limit)
    if limit >= 0:
        windows = np.ndarray((limit + 1,), dtype=f"V{width}", buffer=buf, strides=(1,))
        safe = np.minimum(start, limit) if near_end.shape[0] else start
        out = windows[safe].view(np.uint64).reshape(-1, n_words)
    else:
        out = np.empty((start.shape[0], n_words), dtype=np.uint64)
    if near_end.shape[0]:
        cut = max(0, limit - width)
        tail = np.zeros(buf.shape[0] - cut + width, dtype=np.uint8)
        tail[:buf.shape[0] - cut] = buf[cut:]
        windows = np.ndarray((tail.shape[0] - width + 1,), dtype=f"V{width}", buffer=tail,
                             strides=(1,))
        out[near_end] = windows[start[near_end] - cut].view(np.uint64).reshape(-1, n_words)
    return out


def _mask(words: np.ndarray, length: np.ndarray):
    """Zero the bytes of ``words`` (rows of uint64 words, row i holding a
    string of ``length[i]`` bytes) past each string's end, in place."""
    shortest, longest = (int(length.min()), int(length.max())) if length.shape[0] else (0, 0)
    for j in range(words.shape[1]):  # (1-D passes: NumPy is slow on short inner axes)
        if 8 * (j + 1) <= shortest:  # every string fills this word
            continue
        if shortest == longest:
            words[:, j] &= _MASKS[min(8, longest - 8 * j)]
        else:  # bytes of each string in this word: its length - 8j, within 0..8
            kept = length - 8 * j
            if shortest < 8 * j or longest > 8 * (j + 1):
                _clamp(kept, 8)
            words[:, j] &= _MASKS.take(kept)


class IdColumn:
    """Strings stored in a byte buffer: string i is ``buf[start[i]:start[i] + length[i]]``.

    Makes fixed-width arrays and hashes without a Python loop: each string is
    gathered as a whole number of 8-byte words (one fancy index into a
    byte-strided view of the buffer), then masked past its end. A ``packed``
    column (pyarrow's layout: the strings back to back) whose strings all have
    the same length is read through strided views, without gathering at all.

    Memory: strings are padded to at most :attr:`width` bytes, chosen so that
    the padded rows cost no more than four times the bytes of the column (plus
    4 MiB); the rows longer than that (:attr:`long`, few by construction) are
    handled one by one as ``bytes``. The buffer must hold no NUL byte inside a
    string (the readers refuse them): NUL is the padding.
    """

    has_inner_nul = False  # (set by from_fixed; other columns are checked by their makers)

    def __init__(self, buf: np.ndarray, start: np.ndarray, length: np.ndarray, *,
                 packed: bool = False):
        self.buf, self.start, self.length, self._packed = buf, start, length, packed

    @classmethod
    def from_strings(cls, strings: list[bytes]) -> IdColumn:
        """A column of the given byte strings."""
        length = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        start = np.zeros_like(length)
        np.cumsum(length[:-1], out=start[1:])
        buf = np.frombuffer(b"".join(strings) + bytes(8), dtype=np.uint8)
        return cls(buf, start, length, packed=True)

    @classmethod
    def from_fixed(cls, strings: np.ndarray) -> IdColumn:
        """A column of the strings of a ``'S'`` array (without their NUL padding)."""
        strings = np.ascontiguousarray(strings)
        n, width = strings.shape[0], strings.dtype.itemsize
        if not width:
            return cls(np.zeros(8, dtype=np.uint8), np.zeros(n, np.int64), np.zeros(n, np.int64))
        chars = strings.view(np.uint8).reshape(n, width)
        filled = chars != 0
        # each string ends after its last non-NUL byte
        length = width - np.argmax(filled[:, ::-1], axis=1)
        length[~filled.any(axis=1)] = 0
        buf = np.concatenate((strings.view(np.uint8).ravel(), np.zeros(8, dtype=np.uint8)))
        column = cls(buf, np.arange(n, dtype=np.int64) * width, length.astype(np.int64))
        column.has_inner_nul = bool((np.count_nonzero(filled, axis=1) != length).any())
        return column

    def __len__(self) -> int:
        return self.start.shape[0]

    @cached_property
    def _longest(self) -> int:
        return int(self.length.max()) if len(self) else 0

    @cached_property
    def width(self) -> int:
        """Strings up to this many bytes are padded to a common width (every
        string, in the usual column: ``width`` is then the longest length)."""
        n, longest = len(self), self._longest
        padded = n * 8 * -(-longest // 8)
        if padded <= _SLACK:
            return longest
        budget = 4 * (int(self.length.sum()) + 8 * n) + _SLACK
        if padded <= budget:
            return longest
        return max(8, budget // n // 8 * 8)

    @cached_property
    def long(self) -> np.ndarray:
        """The rows longer than :attr:`width` (none in the usual column)."""
        if self.width == self._longest:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.length > self.width)

    @property
    def compact(self) -> bool:
        """Whether every string is padded to the common width (no long row)."""
        return not self.long.shape[0]

    @cached_property
    def _stride(self) -> int:
        """The common length of a packed column of equal-length strings, else 0."""
        if not self._packed or not len(self):
            return 0
        width = int(self.length[0])
        return width if self._longest == width == int(self.length.min()) else 0

    def compacted(self) -> IdColumn:
        """The same strings back to back in a buffer of their own, so that
        the buffer this column points into (a whole file) can be freed: the
        bytes of the strings, plus their starts and lengths. A packed column,
        or one with long strings (:attr:`compact` False), is returned as it is.
        """
        n = len(self)
        if self._packed or not n or not self.compact:
            return self
        shortest, longest = int(self.length.min()), self._longest
        if shortest == longest and longest:  # the usual column: one width
            # each string's bytes in one fancy index of a byte-strided view
            data = np.zeros(n * longest + 8, dtype=np.uint8)
            windows = np.ndarray((self.buf.shape[0] - longest + 1,), dtype=f"V{longest}",
                                 buffer=self.buf, strides=(1,))
            rows = data[:n * longest].view(f"V{longest}")
            for lo in range(0, n, _ROWS):  # (in blocks: no whole-column temporary)
                rows[lo:lo + _ROWS] = windows[self.start[lo:lo + _ROWS]]
            kind = np.int32 if data.shape[0] < 2**31 else np.int64
            start = np.arange(0, n * longest, longest, dtype=kind)
        else:
            words = self.words()
            chars = words.view(np.uint8).reshape(n, words.shape[1] * 8)
            kept = chars[np.arange(chars.shape[1]) < self.length[:, None]]
            data = np.zeros(kept.shape[0] + 8, dtype=np.uint8)
            data[:kept.shape[0]] = kept
            start = np.cumsum(self.length) - self.length
        return IdColumn(data, start, self.length, packed=True)

    def item(self, i: int) -> bytes:
        """String i."""
        start = int(self.start[i])
        return self.buf[start:start + int(self.length[i])].tobytes()

    def items(self, rows=None) -> list[bytes]:
        """The strings (of ``rows``) as a list of ``bytes``."""
        rows = range(len(self)) if rows is None else np.asarray(rows).tolist()
        return [self.item(i) for i in rows]

    def words(self, rows=None, cap: int | None = None) -> np.ndarray:
        """The strings (of ``rows``, cut to ``cap`` bytes) as rows of 8-byte
        words, zero past their ends."""
        start = self.start if rows is None else self.start[rows]
        length = self.length if rows is None else self.length[rows]
        if cap is not None:
            length = np.minimum(length, cap)
        longest = int(length.max()) if length.shape[0] else 0
        out = _gather(self.buf, start, 8 * max(1, -(-longest // 8)),
                      increasing=self._packed and rows is None)
        _mask(out, length)
        return out

    def _packed_words(self, lo: int = 0, hi: int | None = None) -> list[np.ndarray] | None:
        """Word j of every string (of rows ``lo:hi``) of a packed equal-length
        column (contiguous copies of strided views of the buffer, a last
        partial word masked); None if the column is not one, or the last word
        would be read past the buffer."""
        width = self._stride
        if not width or int(self.start[-1]) + 8 * -(-width // 8) > self.buf.shape[0]:
            return None
        hi = len(self) if hi is None else hi
        words = []
        for j in range(-(-width // 8)):
            word = np.ndarray((hi - lo,), dtype=np.uint64, buffer=self.buf,
                              offset=int(self.start[0]) + lo * width + 8 * j,
                              strides=(width,)).copy()
            if 8 * (j + 1) > width:
                word &= _MASKS[width - 8 * j]
            words.append(word)
        return words

    def fixed(self, rows=None) -> np.ndarray:
        """The strings (of ``rows``) as a NUL-padded bytes array; for rows up
        to :attr:`width` long only (every row of a :attr:`compact` column)."""
        if self._stride:
            first = int(self.start[0])
            strings = self.buf[first:first + len(self) * self._stride].view(f"S{self._stride}")
            return strings.copy() if rows is None else strings[rows]
        words = self.words(rows)
        return words.view(f"S{8 * words.shape[1]}").ravel()

    def prefix(self, rows=None) -> np.ndarray:
        """The strings (of ``rows``) cut to :attr:`width` bytes, as a NUL-padded
        bytes array: the strings themselves in a compact column."""
        if self.compact:
            return self.fixed(rows)
        words = self.words(rows, cap=self.width)
        return words.view(f"S{8 * words.shape[1]}").ravel()

    def is_long(self, rows=None) -> np.ndarray:
        """Whether each string (of ``rows``) is longer than :attr:`width`."""
        length = self.length if rows is None else self.length[rows]
        return length > self.width

    def hash(self, rows=None) -> np.ndarray:
        """:func:`hash_words` of the strings (of ``rows``)."""
        if rows is None and self.compact:  # in blocks of rows: small temporaries
            out = np.empty(len(self), dtype=np.uint64)
            for lo in range(0, len(self), _ROWS):
                hi = min(len(self), lo + _ROWS)
                words = self._packed_words(lo, hi)
                if words is None:
                    words = list(self.words(np.arange(lo, hi)).T)
                out[lo:hi] = hash_words(words, overwrite=True)
            return out
        rows = np.arange(len(self)) if rows is None else np.asarray(rows)
        if self.compact:
            return hash_words(list(self.words(rows).T), overwrite=True)
        is_long = self.is_long(rows)
        out = np.empty(rows.shape[0], dtype=np.uint64)
        short = np.flatnonzero(~is_long)
        if short.shape[0]:
            out[short] = hash_words(list(self.words(rows[short]).T), overwrite=True)
        for i in np.flatnonzero(is_long).tolist():
            out[i] = hash_bytes(self.item(rows[i]))
        return out

    def equal(self, rows: np.ndarray, other: IdColumn, other_rows: np.ndarray) -> np.ndarray:
        """Whether string ``rows[i]`` equals string ``other_rows[i]`` of ``other``."""
        same = self.length[rows] == other.length[other_rows]
        # equal lengths: both short or both long in their columns, but the
        # columns' widths may differ: a pair is short when it is in both
        fits = same & ~self.is_long(rows) & ~other.is_long(other_rows)
        pairs = np.flatnonzero(fits)
        if pairs.shape[0]:
            a, b = self.words(rows[pairs]), other.words(other_rows[pairs])
            ok = np.ones(pairs.shape[0], dtype=bool)
            for j in range(a.shape[1]):
                ok &= a[:, j] == b[:, j]
            same[pairs] = ok
        for i in np.flatnonzero(same & ~fits).tolist():
            same[i] = self.item(rows[i]) == other.item(other_rows[i])
        return same

    def all_equal(self, rows: np.ndarray, other: IdColumn, other_rows: np.ndarray) -> bool:
        """Whether every string ``rows[i]`` equals string ``other_rows[i]`` of ``other``."""
        if self.compact and other.compact:
            a, b = self.fixed(rows), other.fixed(other_rows)
            if a.dtype == b.dtype:  # the same width: compare the padded bytes
                return np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                      np.ascontiguousarray(b).view(np.uint8))
        return bool(self.equal(rows, other, other_rows).all())

    def changes(self) -> np.ndarray:
        """``out[i]``: whether string i + 1 differs from string i."""
        n = len(self)
        if n < 2:
            return np.zeros(0, dtype=bool)
        strings = np.ascontiguousarray(self.prefix())
        width = strings.dtype.itemsize
        unit = next(size for size in (8, 4, 2, 1) if width % size == 0)
        units = strings.view(f"u{unit}").reshape(n, width // unit)
        change = units[1:, 0] != units[:-1, 0]
        for j in range(1, units.shape[1]):  # (1-D passes: NumPy is slow on short inner axes)
            change |= units[1:, j] != units[:-1, j]
        if not self.compact:  # equal prefixes next to a long string: compare the strings
            near = np.union1d(self.long, self.long - 1)
            near = near[(near >= 0) & (near < n - 1)]
            near = near[~change[near]]
            change[near] = ~self.equal(near, self, near + 1)
        return change

    def sort_key(self, rows=None) -> np.ndarray:
        """An array whose order (``np.argsort``, ``np.lexsort``) is the bytes
        order of the strings (of ``rows``), equal strings equal keys: the
        strings themselves in a compact column, else integer ranks."""
        if self.compact:
            return self.fixed(rows)
        rows = np.arange(len(self)) if rows is None else np.asarray(rows)
        prefix = self.prefix(rows)
        is_long = self.is_long(rows)
        if not is_long.any():
            return prefix
        # order by prefix; among equal prefixes next to a long string, by the
        # whole strings
        order = np.argsort(prefix, kind="stable")
        ordered = prefix[order]
        new = np.ones(order.shape[0], dtype=bool)
        new[1:] = ordered[1:] != ordered[:-1]
        group = np.cumsum(new) - 1
        distinct = np.ones(int(group[-1]) + 1, dtype=np.int64)
        sub = np.zeros(order.shape[0], dtype=np.int64)
        for g in np.unique(group[np.flatnonzero(is_long[order])]).tolist():
            lo, hi = np.searchsorted(group, [g, g + 1])
            members = self.items(rows[order[lo:hi]])
            index = {s: i for i, s in enumerate(sorted(set(members)))}
            sub[lo:hi] = [index[s] for s in members]
            distinct[g] = len(index)
        base = np.cumsum(distinct) - distinct
        ranks = np.empty(order.shape[0], dtype=np.int64)
        ranks[order] = base[group] + sub
        return ranks

    def texts(self, rows=None) -> np.ndarray:
        """The strings (of ``rows``) as str (UTF-8, :data:`ID_ERRORS`): a
        ``'U'`` array, or an object array when :attr:`compact` is False."""
        if self.compact:
            return id_text(self.fixed(rows))
        strings = np.empty(len(self) if rows is None else len(rows), dtype=object)
        strings[:] = self.items(rows)
        return id_text(strings)
