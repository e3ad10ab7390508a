"""Joining a run to its relevance judgments on (qid, docno), exactly.

Query ids are coded against their sorted union (:func:`query_codes`); each
run row then finds its judgment in a per-query open-addressing hash table of
the qrels' 64-bit pair keys (:class:`_HashTable`), and every match is
verified by comparing the ids (:func:`match_rows`): a hash collision costs
time (the join is redone exactly, by :func:`match_rows_reference`), never a
wrong match. :func:`match_rows_reference`, a dict of the ids, is also what the
hash join is tested against; :func:`query_codes_reference` is
:func:`query_codes`' reference.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._utils.threads import run_blocks, thread_limit
from ._column import id_text
from ._tables import Qrels, Run, Table


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, without importing ``numpy.ma`` as ``np.unique``
    does (a cost every one-shot process would pay)."""
    values = np.sort(values)
    return values[np.append(True, values[1:] != values[:-1])[:values.shape[0]]]


class QueryCodes(NamedTuple):
    """Query ids of several tables coded against their sorted union: what
    :func:`query_codes` returns."""

    vocabulary: np.ndarray
    """The query ids of the tables, unique and sorted (bytes order, as
    trec_eval), as str."""
    run_codes: list[np.ndarray]
    """For every table, the position in :attr:`vocabulary` of each of its runs
    of rows with the same qid (:attr:`Table.query_runs`)."""


def query_codes(*tables: Table) -> QueryCodes:
    """The query ids of the tables coded against their sorted union (see
    :class:`QueryCodes`); the same as :func:`query_codes_reference`."""
    columns = [table.qid_bytes for table in tables]
    starts = [table.query_runs[0] for table in tables]
    if all(column.compact for column in columns):
        ids = [column.fixed(s) for column, s in zip(columns, starts, strict=True)]
        vocabulary = sorted_unique(np.concatenate(ids))
        return QueryCodes(id_text(vocabulary),
                          [np.searchsorted(vocabulary, i).astype(np.int32) for i in ids])
    # a few very long ids: compared as bytes objects (memory: their bytes)
    return _codes_of_items([column.items(s) for column, s in zip(columns, starts, strict=True)])


def query_codes_reference(*tables: Table) -> QueryCodes:
    """:func:`query_codes` by a sorted set of the ids as ``bytes`` (the reference)."""
    return _codes_of_items([table.qid_bytes.items(table.query_runs[0]) for table in tables])


class RowCodes(NamedTuple):
    """The query codes of a qrels table and a run: what :func:`row_codes` returns."""

    vocabulary: np.ndarray
    """The query ids of both tables, unique and sorted (:func:`query_codes`)."""
    q_run_code: np.ndarray
    """The code of each run of rows with the same qid of the qrels."""
    r_run_code: np.ndarray
    """The same of the run."""
    q_code: np.ndarray
    """The code of each row of the qrels."""
    r_code: np.ndarray
    """The code of each row of the run."""


def row_codes(qrels, run) -> RowCodes:
    """The query ids of both tables (:func:`query_codes`), the code of each
    run of rows of the qrels and of the run, and the code of each of their rows."""
    if len(qrels) == 0:
        raise ValueError("The qrels hold no judgment.")
    vocabulary, (q_run_code, r_run_code) = query_codes(qrels, run)
    q_code = np.repeat(q_run_code, qrels.query_runs[1])
    r_code = np.repeat(r_run_code, run.query_runs[1])
    return RowCodes(vocabulary, q_run_code, r_run_code, q_code, r_code)


class QuerySides(NamedTuple):
    """The query codes of a qrels table and a run, and which side has each
    query: what :func:`query_sides` returns."""

    vocabulary: np.ndarray
    """The query ids of both tables, unique and sorted (:func:`query_codes`)."""
    q_code: np.ndarray
    """The code of each row of the qrels."""
    r_code: np.ndarray
    """The code of each row of the run."""
    judged: np.ndarray
    """For every query code, whether the qrels judge that query."""
    in_run: np.ndarray
    """For every query code, whether the run retrieves for that query."""


def query_sides(qrels, run) -> QuerySides:
    """:func:`row_codes` of the tables (without the codes of their runs of
    rows), and for every query code whether the qrels judge it and whether
    the run retrieves for it."""
    codes = row_codes(qrels, run)
    judged = np.zeros(codes.vocabulary.shape[0], dtype=bool)
    judged[codes.q_run_code] = True
    in_run = np.zeros(codes.vocabulary.shape[0], dtype=bool)
    in_run[codes.r_run_code] = True
    return QuerySides(codes.vocabulary, codes.q_code, codes.r_code, judged, in_run)


def _codes_of_items(ids: list[list[bytes]]) -> QueryCodes:
    """:func:`query_codes` of lists of ids."""
    vocabulary = sorted(set().union(*ids))
    index = {q: i for i, q in enumerate(vocabulary)}
    strings = np.empty(len(vocabulary), dtype=object)
    strings[:] = vocabulary
    return QueryCodes(id_text(strings),
                      [np.array([index[q] for q in i], dtype=np.int32) for i in ids])


class _HashTable:
    """Open-addressing (linear probing) hash tables of keys, one per query.

    Query ``c`` gets its own power-of-two region of slots, at least 4 per key,
    so a query's lookups stay within a few cache lines; a slot holds a row
    number of ``keys``, or ``len(keys)`` when empty. Built and searched
    vectorised: rows that want the same slot take it in turns, the others move
    on to the next slot of their region.
    """

    def __init__(self, keys: np.ndarray, codes: np.ndarray, n_codes: int):
        n = keys.shape[0]
        per_query = np.bincount(codes, minlength=n_codes)
        bits = np.ceil(np.log2(np.maximum(4 * per_query, 4))).astype(np.int64)
        self.size = 1 << bits
        self.base = np.cumsum(self.size) - self.size
        self.shift = (64 - bits).astype(np.uint64)  # a key's home: its top bits
        self.keys = np.append(keys, np.uint64(0))  # row n: the empty slot's key
        self.table = np.full(int(self.size.sum()), n,
                             dtype=np.int32 if n < 2**31 - 1 else np.int64)
        pending = np.arange(n, dtype=self.table.dtype)
        pos = self._home(keys, codes)
        while pending.shape[0]:
            self.table[pos] = pending  # one of the rows wanting a slot gets it
            lost = self.table[pos] != pending
            pending, pos = pending[lost], pos[lost]
            while pending.shape[0]:  # the others probe for the next free slot
                taken = np.flatnonzero(self.table[pos] < n)
                if not taken.shape[0]:
                    break
                pos[taken] = self._next(pos[taken], codes[pending[taken]])

    def _home(self, keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
        home = self.shift[codes]
        np.right_shift(keys, home, out=home)
        home = home.view(np.int64)
        home += self.base[codes]
        return home

    def _next(self, pos: np.ndarray, codes: np.ndarray) -> np.ndarray:
        base = self.base[codes]
        return base + ((pos - base + 1) & (self.size[codes] - 1))

    def find(self, keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """For every key, the row holding it (searched in its query's region),
        or ``len(keys)`` (the empty slot's row) when it is absent."""
        n = self.keys.shape[0] - 1
        pos = self._home(keys, codes)
        out = self.table[pos]
        # a slot holding another key: probe on (an empty slot, row n, ends the search)
        pending = np.flatnonzero(np.greater(out < n, self.keys[out] == keys))
        pos = pos[pending]
        while pending.shape[0]:
            pos = self._next(pos, codes[pending])
            row = self.table[pos]
            out[pending] = row
            go_on = np.flatnonzero(np.greater(row < n, self.keys[row] == keys[pending]))
            pending, pos = pending[go_on], pos[go_on]
        return out


_FIND_ROWS = 1 << 18  # run rows looked up at a time (a part per thread)


def match_rows(qrels: Qrels, run: Run, q_code: np.ndarray, r_code: np.ndarray,
               n_codes: int) -> np.ndarray:
    """For every run row, the qrels row with the same (qid, docno), or
    ``len(qrels)`` when the document is not judged for the query.

    ``q_code`` and ``r_code`` are the query codes of every row of the qrels
    and of the run (:func:`query_codes`, repeated over the rows), ``n_codes``
    their number. The same as :func:`match_rows_reference`: a hash join of
    the pairs' 64-bit keys, each match verified on the ids (any collision:
    the reference's exact join instead).
    """
    table = _HashTable(qrels.keys, q_code, n_codes)
    keys, n = run.keys, len(run)
    parts = [slice(lo, min(n, lo + _FIND_ROWS)) for lo in range(0, n, _FIND_ROWS)]
    match = np.empty(n, dtype=table.table.dtype)

    def find(part: slice):
        match[part] = table.find(keys[part], r_code[part])

    # each part's rows find their own matches: the same whatever the threads
    run_blocks(find, parts, thread_limit() if len(parts) > 1 else 1)
    if not _verified(match, qrels, run, q_code, r_code):
        match[:] = match_rows_reference(qrels, run, q_code, r_code)  # a hash collision
    return match


def match_rows_reference(qrels: Qrels, run: Run, q_code: np.ndarray,
                         r_code: np.ndarray) -> np.ndarray:
    """:func:`match_rows` by a dict of the (query code, docno bytes) pairs
    (the reference, and the exact join when a hash collides)."""
    index = {pair: i for i, pair in enumerate(zip(q_code.tolist(), qrels.docno_bytes.items(),
                                                  strict=True))}
    return np.array([index.get(pair, len(qrels))
                     for pair in zip(r_code.tolist(), run.docno_bytes.items(), strict=True)],
                    dtype=np.int64)


def _verified(match: np.ndarray, qrels: Qrels, run: Run, q_code: np.ndarray,
              r_code: np.ndarray) -> bool:
    """Whether every match of the hash join (``len(qrels)``: no match) pairs
    equal ids: the same query code and the same docno."""
    hit = np.flatnonzero(match < len(qrels))
    judged = match[hit]
    return bool((q_code[judged] == r_code[hit]).all()
                and qrels.docno_bytes.all_equal(judged, run.docno_bytes, hit))
