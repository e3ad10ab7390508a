"""Grouping rows by query id: one O(n) pass when the ids are contiguous, one
stable grouping sort otherwise (DESIGN §6).

The interface is :func:`group`, which returns a :class:`Grouping`;
:func:`group_reference` computes the same grouping with ``np.unique`` and a
stable ``np.argsort`` and is what the fast path is tested against.
:func:`factorize` codes ids by their rank with the same machinery
(a :class:`QueryCodes`). The radix sort of codes, :func:`stable_code_sort`
(a :class:`SortedCodes`), has its reference beside it too
(:func:`stable_code_sort_reference`).

Ids come validated (:mod:`~sklearn_rank.metrics._engine.qid`; callers outside
the engine's inputs take them through :mod:`~sklearn_rank.metrics._engine.ids`).
Integer ids in a dense range are grouped with a presence table, short strings by
their characters packed into one integer (exact), longer ones by a hash
(:func:`sklearn_rank._utils.hashing.hash_words`, the hashing module shared with
TREC evaluation) verified exactly, anything else by NumPy's sort.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._utils.hashing import dense_codes, hash_words, mix
from ..._utils.runs import runs_at, runs_of
from .threads import n_threads, run_blocks

__all__ = ["Grouping", "QueryCodes", "SortedCodes", "factorize", "group", "group_reference",
           "stable_code_sort", "stable_code_sort_reference"]

# Row chunk for whole-array passes over big inputs: temporaries stay small
# (no fresh whole-array temporaries to fault in) and cache-friendly.
_CHUNK = 1 << 20


def _string_codes(values: np.ndarray) -> np.ndarray:
    """32-bit codes of fixed-width unicode strings: the high half of
    :func:`~sklearn_rank._utils.hashing.hash_words` of their bytes, read in place as
    8-byte words (the last one zero-extended), so equal strings get equal codes
    whatever the width (NUL padding adds nothing). Distinct strings may share a
    code: the caller verifies."""
    raw = np.ascontiguousarray(values)
    n, width = raw.shape[0], raw.dtype.itemsize

    def word(at: int) -> np.ndarray:  # bytes at..at+7 of every string (unaligned views)
        if at + 8 <= width:
            return np.ndarray((n,), dtype=np.uint64, buffer=raw, offset=at, strides=(width,))
        return np.ndarray((n,), dtype=np.uint32, buffer=raw, offset=at,
                          strides=(width,)).astype(np.uint64)  # 'U': 4 bytes left

    return hash_words(word(at) for at in range(0, width, 8)) >> np.uint64(32)


def _packed(values: np.ndarray) -> np.ndarray | None:
    """Fixed-width unicode strings of at most 8 characters, all below U+0100,
    as the uint64 of their characters' bytes (exact: equal keys, equal
    strings); None if any string has another character."""
    chars = np.ascontiguousarray(values).view(np.uint32).reshape(values.shape[0], -1)
    if chars.shape[1] > 8 or (chars > 255).any():
        return None
    out = np.zeros((values.shape[0], 8), dtype=np.uint8)
    out[:, :chars.shape[1]] = chars
    return out.view(np.uint64)[:, 0]


def _string_keys(v: np.ndarray) -> tuple[np.ndarray, bool]:
    """Keys of the rows' strings, in parts on threads, and whether they are
    exact: the strings themselves when short (:func:`_packed`: ids such as
    ``q000123`` need no hash and no verification), else :func:`_string_codes`."""
    n = v.shape[0]
    if v.dtype.itemsize <= 32:
        parts = _each_part(lambda part: _packed(v[part]), n)
        if all(part is not None for part in parts):
            return np.concatenate(parts), True
    return np.concatenate(_each_part(lambda part: _string_codes(v[part]), n)), False


def _chunks(n: int):
    for lo in range(0, n, _CHUNK):
        yield slice(lo, min(lo + _CHUNK, n))


def _parts(n: int) -> tuple[list[slice], int]:
    """Row slices for a pass on threads (at most ``_CHUNK`` rows each, at
    least two per thread) and the number of threads
    (:mod:`~sklearn_rank.metrics._engine.threads`)."""
    threads = n_threads(n)
    count = max(-(-n // _CHUNK), 2 * threads if threads > 1 else 1)
    step = -(-n // count) if n else 1
    return [slice(lo, min(lo + step, n)) for lo in range(0, n, step)], threads


def _each_part(func, n: int) -> list:
    """``[func(part) for part in parts]`` over :func:`_parts` of ``n`` rows,
    on threads for big inputs (results in the order of the parts)."""
    parts, threads = _parts(n)
    out = [None] * len(parts)

    def work(i: int) -> None:
        out[i] = func(parts[i])

    run_blocks(work, range(len(parts)), threads)
    return out


class SortedCodes(NamedTuple):
    """Codes in a stable sorted order: what :func:`stable_code_sort` returns."""

    by: np.ndarray
    """The stable argsort of the codes (equal codes keep their input order)."""
    bounds: np.ndarray
    """The positions in ``by`` where the code changes, 0 included (none for no code)."""


def stable_code_sort(codes, n: int | None = None) -> SortedCodes:
    """A stable argsort of non-negative integer codes below 2**32, and where
    the sorted codes change.

    ``codes`` is an array, or a function of a slice giving the codes of those
    positions (so big inputs are encoded chunk by chunk; ``n``: how many).
    Equal to :func:`stable_code_sort_reference` for every input.

    A least significant digit radix sort on 16-bit digits: NumPy's stable
    argsort of 16-bit integers is a counting sort, O(n), so codes below
    2**16 (ranks: as many as distinct ids) take one pass and hash codes two,
    where a comparison sort of 64-bit keys is O(n log n).
    """
    get = codes if callable(codes) else codes.__getitem__
    n = codes.shape[0] if n is None else n
    code = np.empty(n, dtype=np.uint32)
    for part in _chunks(n):
        code[part] = get(part)
    by = np.argsort(code.astype(np.uint16), kind="stable")  # the low digit (all, if small)
    if n and code.max() >= 1 << 16:  # then the high digit, stably
        high = (code >> np.uint32(16)).astype(np.uint16)[by]
        by = by[np.argsort(high, kind="stable")]
        del high
    code = code[by]
    bounds = np.flatnonzero(code[1:] != code[:-1])
    bounds += 1
    return SortedCodes(by, np.concatenate((np.zeros(1, dtype=np.intp), bounds)))


def stable_code_sort_reference(codes: np.ndarray) -> SortedCodes:
    """:func:`stable_code_sort` by ``np.argsort(kind="stable")`` (the reference)."""
    by = np.argsort(codes, kind="stable")
    s = codes[by]
    bounds = np.flatnonzero(s[1:] != s[:-1]) + 1
    return SortedCodes(by, np.concatenate((np.zeros(1, dtype=np.intp), bounds)))


class _Segments(NamedTuple):
    """Equal values made contiguous: what :func:`_segments` returns."""

    by: np.ndarray  # a stable permutation of the values making equal ones contiguous
    bounds: np.ndarray  # the start of each segment in ``by`` (segments in any order)
    rank: np.ndarray  # the position of each segment's value in ``uniques``
    uniques: np.ndarray  # the sorted unique values


def _segments(v: np.ndarray) -> _Segments:
    """Group equal values of ``v`` (see :class:`_Segments`)."""
    n = v.shape[0]
    if n >= 1 << 32:  # pragma: no cover - beyond packed keys
        uniques, codes = _unique(v)
        by = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.diff(codes[by], prepend=-1))
        return _Segments(by, bounds, np.arange(uniques.shape[0]), uniques)
    if v.dtype.kind in "iu":
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 4 * n + 1024:  # dense ids: a presence table, O(n + range)
            present = np.zeros(hi - lo + 1, dtype=bool)
            shifted = (v - lo).astype(np.intp, copy=False)
            present[shifted] = True
            codes = (np.cumsum(present) - 1)[shifted]
            uniques = np.flatnonzero(present).astype(v.dtype) + v.dtype.type(lo)
            return _by_codes(codes, uniques)
    elif v.dtype.kind == "U" and v.dtype.itemsize > 0:
        out = _string_segments(v)
        if out is not None:
            return out
    return _by_codes(*_unique(v)[::-1])


def _string_segments(v: np.ndarray, codes: np.ndarray | None = None,
                     exact: bool = False) -> _Segments | None:
    """:func:`_segments` of strings, or None if two distinct strings share a code.

    Sorting strings is slow: number the rows' keys densely
    (:func:`~sklearn_rank._utils.hashing.dense_codes`, no sort; a radix argsort of
    32-bit codes if it gives up), group by that number (one radix pass when
    there are fewer than 2**16 distinct keys), check that no two distinct
    strings share a code (unless the keys are ``exact``, see
    :func:`_string_keys`), and sort only the unique strings.
    """
    n = v.shape[0]
    if codes is None:
        codes, exact = _string_keys(v)
    dense = dense_codes(codes)
    if dense is not None:  # each row's segment is its number
        segment, first_rows = dense
        by, bounds = stable_code_sort(segment)
    else:
        if exact:  # (64-bit keys: their hash's 32 bits, verified below)
            codes, exact = mix(codes) >> np.uint64(32), False
        by, bounds = stable_code_sort(codes)
        first_rows = by[bounds]
        sizes = np.diff(np.append(bounds, n))
        segment = np.empty(n, dtype=np.intp)
        grouped = np.repeat(np.arange(bounds.shape[0]), sizes)
        # a scatter through a permutation: parts write disjoint rows (threads)
        _each_part(lambda part: segment.__setitem__(by[part], grouped[part]), n)
    firsts = v[first_rows]
    # No collision (exact keys have none): every string equals its segment's
    # first (gathers from a small array, chunk by chunk).
    if not exact and not all(_each_part(
            lambda part: np.array_equal(firsts[segment[part]], v[part]), n)):
        return None
    srt = np.argsort(firsts, kind="stable")
    rank = np.empty_like(srt)
    rank[srt] = np.arange(srt.shape[0])
    return _Segments(by, bounds, rank, firsts[srt])


def _by_codes(codes: np.ndarray, uniques: np.ndarray) -> _Segments:
    """:func:`_segments` from codes that already are ranks: segments come sorted."""
    by, bounds = stable_code_sort(codes)
    return _Segments(by, bounds, np.arange(uniques.shape[0]), uniques)


def _unique(v: np.ndarray):
    try:
        return np.unique(v, return_inverse=True)
    except TypeError as exc:
        raise TypeError(
            f"qid values cannot be compared with each other ({exc}); use query ids "
            "of a single type, e.g. all int or all str."
        ) from None


class QueryCodes(NamedTuple):
    """Query ids coded by their rank: what :func:`query_codes` returns."""

    qids: np.ndarray
    """The unique ids, sorted."""
    codes: np.ndarray
    """The position in :attr:`qids` of every row's id."""



def factorize(q: np.ndarray) -> QueryCodes:
    """Sorted unique values of ``q`` and the code (rank) of every element.

    ``q`` holds validated ids
    (:func:`~sklearn_rank.metrics._engine.qid.qid_values`); the values are
    grouped as :func:`group` groups them (:func:`_segments`), not by ``np.unique``.
    """
    by, bounds, rank, uniques = _segments(q)
    codes = np.empty(q.shape[0], dtype=np.intp)
    codes[by] = np.repeat(rank, np.diff(np.append(bounds, q.shape[0])))
    return QueryCodes(uniques, codes)


def _expand(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, start + size)`` over the pairs."""
    ends = np.cumsum(sizes)
    return np.arange(ends[-1]) + np.repeat(starts - (ends - sizes), sizes)


def _in_id_order(by, bounds, rank, total):
    """The elements of ``by`` with segments taken in id order, and segment sizes."""
    sizes = np.diff(np.append(bounds, total))
    if (rank == np.arange(rank.shape[0])).all():
        return by, sizes  # segments already in id order
    in_order = np.argsort(rank)
    sizes = sizes[in_order]
    return by[_expand(bounds[in_order], sizes)], sizes


class Grouping(NamedTuple):
    """Rows grouped by query id: what :func:`group` returns.

    The grouped rows are the input rows taken in :attr:`order`; in that order
    each query's rows are contiguous (a *segment*) and keep their input order.
    """

    order: np.ndarray | None
    """The stable row permutation that makes every query contiguous, or None
    when the rows already are (no row moves: grouped order is input order)."""
    starts: np.ndarray
    """The position of each segment's first row in grouped order (increasing)."""
    seg_pos: np.ndarray | None
    """The position in :attr:`qids` of each segment's id, or None when the
    segments follow the order of :attr:`qids`."""
    qids: np.ndarray
    """The unique query ids, sorted."""
    n_rows: int
    """The number of rows."""

    @property
    def lengths(self) -> np.ndarray:
        """The number of rows of each segment."""
        return np.diff(np.append(self.starts, self.n_rows))

    def rows(self) -> np.ndarray:
        """:attr:`order`, or the identity permutation when it is None."""
        return np.arange(self.n_rows) if self.order is None else self.order


def group(q: np.ndarray, *, any_order: bool = False) -> Grouping:
    """Group rows by query id.

    Parameters
    ----------
    q : ndarray of shape (n_rows,)
        Validated ids (:func:`~sklearn_rank.metrics._engine.qid.qid_values`):
        rows share a query exactly when their values are equal.
    any_order : bool, default=False
        Whether moved rows may leave their segments in any order (then given
        by :attr:`Grouping.seg_pos`), which saves putting them in id order.
        Without it, :attr:`Grouping.seg_pos` is None unless no row moves.

    Returns
    -------
    Grouping
        The same grouping as :func:`group_reference` (the same rows in each
        query, in input order, and the same sorted ids), with no row moved
        when the rows already are contiguous.

    Notes
    -----
    An O(n) comparison finds the runs of equal consecutive ids. Long runs
    (the usual case: grouped or nearly grouped data) are grouped as runs —
    the data are contiguous exactly when no id owns two runs — and expanded
    back to rows; short runs (shuffled rows) are grouped as rows. Either way
    the values are grouped once (:func:`_segments`) and segments are put in id
    order as wholes, never by a second sort.
    """
    n = q.shape[0]
    codes, run_starts, r = _runs(q)
    if r > n // 4:  # short runs: group the rows themselves
        return _group_rows(q, codes, run_starts, r, any_order)
    return _group_runs(q, run_starts, r)


def group_reference(q: np.ndarray) -> Grouping:
    """:func:`group` by ``np.unique`` and a stable ``np.argsort`` (the reference):
    rows always moved into id order, segments in the order of the ids."""
    qids, codes = np.unique(q, return_inverse=True)
    codes = codes.reshape(-1)
    counts = np.bincount(codes, minlength=qids.shape[0])
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
    return Grouping(np.argsort(codes, kind="stable"), starts, None, qids, q.shape[0])


def _runs(q: np.ndarray):
    """``(codes, run_starts, r)``: the runs of equal consecutive ids (their
    starts, None when there are too many to be worth listing, and their
    number r), and the strings' keys when they were used to find them
    (:func:`_string_keys`: ``(keys, exact)``)."""
    n = q.shape[0]
    codes = None
    if q.dtype.kind == "U" and q.dtype.itemsize > 8 and _looks_shuffled(q):
        # Runs of the strings' keys (integer comparisons, much cheaper than
        # string ones; the keys serve the grouping too). Equal strings have
        # equal keys, so these runs merge only runs of distinct strings that
        # share a hash code; the checks below find any such pair (then the
        # strings themselves decide).
        codes = _string_keys(q)  # (keys, exact)
        changes = codes[0][1:] != codes[0][:-1]
        r = int(np.count_nonzero(changes)) + 1  # the runs' starts: only if needed
        run_starts = None if r > n // 4 else runs_at(changes, n)[0]
        del changes
        if r <= n // 4 and not _runs_hold(q, run_starts):
            codes = None
            run_starts, _ = runs_of(q)
            r = run_starts.shape[0]
        return codes, run_starts, r
    run_starts, _ = runs_of(q)
    return codes, run_starts, run_starts.shape[0]


def _group_rows(q: np.ndarray, codes, run_starts, r: int, any_order: bool) -> Grouping:
    """:func:`group` of shuffled rows: the rows themselves are grouped."""
    n = q.shape[0]
    out = None if codes is None else _string_segments(q, *codes)
    if out is None and codes is not None:  # two strings share a code: their own runs
        run_starts = None
    if out is None:
        out = _segments(q)
    by, bounds, rank, qids = out
    m = qids.shape[0]
    if run_starts is None and m * 4 > n:  # could every query be one run?
        run_starts, _ = runs_of(q)
        r = run_starts.shape[0]
    if m == r:  # every query one run: contiguous, no row moves
        first_row = by[bounds]
        seg_pos = rank[np.argsort(first_row)]
        return Grouping(None, run_starts, _unless_identity(seg_pos), qids, n)
    if any_order:
        return Grouping(by, bounds, _unless_identity(rank), qids, n)
    order, sizes = _in_id_order(by, bounds, rank, n)
    return Grouping(order, np.concatenate(([0], np.cumsum(sizes)[:-1])), None, qids, n)


def _group_runs(q: np.ndarray, run_starts: np.ndarray, r: int) -> Grouping:
    """:func:`group` of long runs: the runs are grouped, then expanded to rows."""
    n = q.shape[0]
    by, bounds, rank, qids = _segments(q[run_starts])
    m = qids.shape[0]
    if m == r:  # already contiguous: no row moves
        seg_pos = np.empty(m, dtype=np.intp)
        seg_pos[by] = rank  # each segment is a single run
        return Grouping(None, run_starts, _unless_identity(seg_pos), qids, n)
    run_order, runs_per_query = _in_id_order(by, bounds, rank, r)
    run_lengths = np.diff(np.append(run_starts, n))[run_order]
    order = _expand(run_starts[run_order], run_lengths)
    first_run = np.concatenate(([0], np.cumsum(runs_per_query)[:-1]))
    rows_per_query = np.add.reduceat(run_lengths, first_run)
    return Grouping(order, np.concatenate(([0], np.cumsum(rows_per_query)[:-1])), None, qids, n)


def _unless_identity(positions: np.ndarray) -> np.ndarray | None:
    """``positions``, or None when they are ``0, 1, 2, ...`` (segments in id order)."""
    return None if (positions == np.arange(positions.shape[0])).all() else positions


def _looks_shuffled(q: np.ndarray, sample: int = 4096) -> bool:
    """Whether the first rows of ``q`` change value more often than every
    fourth row (a guess that only picks the faster path)."""
    head = q[:sample]
    return int((head[1:] != head[:-1]).sum()) * 4 > head.shape[0]


def _runs_hold(q: np.ndarray, run_starts: np.ndarray) -> bool:
    """Whether every value of ``q`` equals the first value of its run."""
    lengths = np.diff(np.append(run_starts, q.shape[0]))
    heads = q[run_starts]
    return all(np.array_equal(np.repeat(heads, lengths)[part], q[part])
               for part in _chunks(q.shape[0])) if heads.shape[0] < q.shape[0] else True
