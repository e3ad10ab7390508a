"""Ranked blocks: queries of similar length ranked together (DESIGN §6).

Queries whose lengths round up to the same width are padded to it and
sorted along axis 1 in one 2-D block, so no Python loop runs over queries
and the work per block is a handful of vectorised NumPy calls.

A block (:class:`Ranking`) carries, for every query and rank, the position
of the ranked document within its query, so a per-row column (labels,
gains, relevance flags; see :mod:`~sklearn_rank.metrics._engine.columns`) is put in ranked order
with one
gather, and only the top-k prefix a metric needs is gathered
(:mod:`~sklearn_rank.metrics._engine.ranking` builds the blocks). Under ``ties="average"`` the
block also carries the tie groups of the queries that have ties, so metrics
can average any per-position quantity over the orderings of tied documents
(McSherry & Najork, 2008). Every array a kernel asks for is computed once per
block and cached by column.
"""

from __future__ import annotations

import numpy as np

from .columns import Column
from .descending import descending_cells, sorted_descending

__all__ = ["Ranking", "flagged_above", "row_sums", "rowdot", "tie_group_stats"]

_MISSING = object()


class Ranking:
    """One block of queries ranked under one tie policy.

    Attributes
    ----------
    data : Data
        The prepared data the block is cut from.
    segments : ndarray of shape (q,)
        Which segments of the data the rows of the block are.
    lengths, starts : ndarray of shape (q,)
        Number of documents of each query and offset of its first row.
    order : ndarray of shape (q, w)
        ``order[i, r]`` is the position within query i of the document ranked
        r + 1; columns at and beyond ``lengths[i]`` are padding.
    ties : str
        The tie policy the block was ranked under.
    tie_rows, same : ndarray or None
        Under ``ties="average"``: the block rows that contain tied scores and,
        for those rows, whether columns j and j + 1 hold equal scores.
    """

    def __init__(self, data, segments, lengths, starts, order, ties, tie_rows=None, same=None):
        self.data, self.segments, self.lengths, self.starts = data, segments, lengths, starts
        self.order, self.ties, self.tie_rows, self.same = order, ties, tie_rows, same
        #: Whether ``order`` is the identity: the rows are in rank order already.
        self.in_order = False
        self._cache: dict = {}

    def know_cells(self, rows: np.ndarray, padding: np.ndarray | None):
        """Take the block's :meth:`_rows` and :attr:`padding` from its ranking
        (:func:`~sklearn_rank.metrics._engine.ranking.rank_block` computes both to sort the
        scores)."""
        self._cache["rows"], self._cache["padding"] = rows, padding

    def _memo(self, key, make):
        out = self._cache.get(key, _MISSING)
        if out is _MISSING:
            out = self._cache[key] = make()
        return out

    def shared(self, key, make):
        """``make()``, computed once per block and ``key``: a result shared by
        several metrics (AP for map and gmap). ``key`` must not be a column."""
        return self._memo(("shared", key), make)

    # -- the block's shape ---------------------------------------------------------

    @property
    def width(self) -> int:
        return self.order.shape[1]

    def cut(self, k: int | None) -> int:
        """The number of ranks a cut-off ``k`` keeps in this block."""
        return self.width if k is None else min(k, self.width)

    @property
    def tied(self) -> bool:
        """Whether the block has tie groups to average over."""
        return self.tie_rows is not None and self.tie_rows.shape[0] > 0

    @property
    def retrieved(self) -> np.ndarray | None:
        """Retrieved documents of each query (TREC mode), else None."""
        n = self.data.n_retrieved
        return None if n is None else n[self.segments]

    @property
    def has_judgments(self) -> bool:
        """Whether some documents are unjudged (TREC mode): see :data:`JUDGED`."""
        return self.data.judged is not None

    @property
    def padding(self) -> np.ndarray | None:
        """(q, w) mask of the cells that hold no document; None if there is none."""
        return self._memo("padding", lambda: np.arange(self.width) >= self.lengths[:, None]
                          if (self.lengths < self.width).any() else None)

    def _rows(self) -> np.ndarray:
        """(q, w) the data row of every cell (padding cells: the query's last row)."""
        return self._memo("rows", lambda: self._first_rows(self.width))

    def _first_rows(self, width: int) -> np.ndarray:
        """(q, width) the data rows of the first ``width`` cells of each query
        (padding cells: the query's last row)."""
        rows = np.arange(width) + self.starts[:, None]
        if (self.lengths < width).any():
            np.minimum(rows, (self.starts + self.lengths - 1)[:, None], out=rows)
        return rows

    def _flat_order(self) -> np.ndarray:
        """``order`` as indices into a raveled (q, w) block."""
        return self._memo("flat_order", lambda: self.order + (
            np.arange(self.order.shape[0]) * self.width)[:, None])

    # -- columns ---------------------------------------------------------------------

    def gathered(self, col: Column) -> np.ndarray:
        """The data's values of ``col`` (:meth:`Data.column`) gathered into the
        block, (q, w) in input order, padding cells zero. Columns use it to
        make their block; kernels ask for :meth:`unranked`."""
        out = self.data.column(col).take(self._rows())  # (take: faster than indexing)
        if self.padding is not None:
            np.copyto(out, 0.0, where=self.padding)
        return out

    def unranked(self, col: Column) -> np.ndarray:
        """``col`` of each query's documents in input order, (q, w), padding 0."""
        return self._memo(("unranked", col), lambda: col.block(self))

    def ranked(self, col: Column, width: int | None = None) -> np.ndarray:
        """``col`` at ranks 1..width (default: all), shape (q, width).

        Exact for ``ties`` other than ``"average"``; under ``"average"`` the
        order within tie groups is arbitrary (see :meth:`expected`). Padding
        cells, and in TREC mode the judged documents a run did not retrieve,
        are zero (they hold no rank).
        """
        width = self.cut(width)
        key = ("ranked", col, width)
        if key in self._cache:
            return self._cache[key]
        full = self._cache.get(("ranked", col, self.width))
        if full is not None:
            out = full[:, :width]
        else:
            if self.reads_rows(col) and ("unranked", col) not in self._cache:
                # the first ``width`` cells of each query, from the data's rows
                out = self.data.column(col).take(self._first_rows(width))
                np.copyto(out, 0.0, where=np.arange(width) >= self.lengths[:, None])
            elif self.in_order:  # the block is in rank order already
                out = self.unranked(col)[:, :width].copy()
            else:
                out = self.unranked(col).ravel()[self._flat_order()[:, :width]]
            if self.retrieved is not None:  # judged but not retrieved: no rank
                unretrieved = self._memo("unretrieved", lambda: np.arange(self.width)
                                         >= self.retrieved[:, None])
                np.copyto(out, 0.0, where=unretrieved[:, :width])
        self._cache[key] = out
        return out

    def expected(self, col: Column, width: int | None = None) -> np.ndarray:
        """Expected ``col`` at ranks 1..width over tie orderings.

        Under ``ties="average"`` each value in a tie group is replaced by the
        group's mean, so a quantity that sums ``value(rank) * weight(rank)``
        over ranks (DCG, CG, hits) gets its exact expected value over all
        orderings of tied documents (McSherry & Najork, 2008); a tie group
        straddling the cut-off counts in proportion. Other tie policies fix one
        order, so the ranked values are returned.
        """
        out = self.ranked(col, width)
        if not self.tied:
            return out
        return self._memo(("expected", col, out.shape[1]), lambda: self._averaged(col, out))

    def _averaged(self, col: Column, out: np.ndarray) -> np.ndarray:
        cut = out.shape[1]
        _, gend, values = self.tie_values(col, cut)
        rows, cols, sizes = self.tie_group_list(cut)
        # Each group's own sum (a running sum over the row would lose a small
        # group behind large values to cancellation).
        values = np.where(np.arange(values.shape[1]) <= gend[:, -1:], values, 0.0)
        sums = np.add.reduceat(values.ravel(), rows * values.shape[1] + cols)
        out = out.copy()
        out[self.tie_rows] = (sums / sizes)[self._group_index(cut)]
        return out

    def ideal(self, col: Column) -> np.ndarray:
        """``col`` of each query sorted descending (the ideal ranking), (q, w)."""
        def make():
            if not self.reads_rows(col):
                return sorted_descending(self.unranked(col))
            rows, cols, values = self.ideal_cells(col)
            out = np.zeros(self.order.shape, dtype=values.dtype)
            out[rows, cols] = values
            return out

        return self._memo(("ideal", col), make)

    def ideal_cells(self, col: Column):
        """The nonzero cells of :meth:`ideal`: ``(rows, cols, values)``, row
        by row in rank order (a ranking holds few: its relevant documents).
        A block that reads rows (:meth:`reads_rows`) finds them without the
        (q, w) ideal ranking."""
        def make():
            if self.reads_rows(col):
                nz, lo, _, hi = self._nonzero_rows(col)
                rows, at = _spans(lo, hi)
                return descending_cells(rows, self.data.column(col)[nz[at]], self.order.shape)
            ideal = self.ideal(col)
            flat = np.flatnonzero(ideal != 0)  # (a bool array: much faster)
            rows, cols = np.divmod(flat, self.width)
            return rows, cols, ideal.ravel()[flat]

        return self._memo(("ideal_cells", col), make)

    def row_max(self, col: Column) -> np.ndarray:
        """(q, 1) the largest ``col`` value of each query's cells (padding: 0)."""
        if self.reads_rows(col):  # the ideal ranking's first cell
            rows, cols, values = self.ideal_cells(col)
            out = np.zeros((self.order.shape[0], 1), dtype=values.dtype)
            first = cols == 0
            out[rows[first], 0] = values[first]
            return out
        return self.unranked(col).max(axis=1, keepdims=True)

    def count(self, col: Column) -> np.ndarray:
        """The sum of ``col`` over each query's documents (its relevant ones...)."""
        def make():
            if col.flag and self.reads_rows(col):
                _, lo, _, hi = self._nonzero_rows(col)
                return (hi - lo).astype(np.float64)
            return self.unranked(col).sum(axis=1)

        return self._memo(("count", col), make)

    def flagged(self, col: Column):
        """The documents whose ``col`` is nonzero, in rank order (exact for
        untied rankings): ``(rows, cols, first, flat)``, their rows and
        0-based ranks row by row, where each row starts among them (q + 1
        entries) and their positions in the raveled block. Few documents are
        relevant or judged, so metrics that sum over them (AP, R-precision,
        bpref) work on these short arrays instead of running sums over the
        block.
        """
        def make():
            if self.reads_rows(col):
                nz, lo, end, _ = self._nonzero_rows(col)
                rows, at = _spans(lo, end)
                cols = nz[at] - self.starts[rows]
                first = np.zeros(self.order.shape[0] + 1, dtype=np.intp)
                np.cumsum(np.bincount(rows, minlength=self.order.shape[0]), out=first[1:])
                return rows, cols, first, rows * self.width + cols
            if self.in_order and ("ranked", col, self.width) not in self._cache:
                # rows in rank order already: the unranked block's nonzero cells,
                # less those beyond each query's retrieved documents (TREC mode),
                # without a ranked copy of the block
                flat = np.flatnonzero(self.unranked(col) != 0)
                rows, cols = np.divmod(flat, self.width)
                if self.retrieved is not None:
                    keep = cols < self.retrieved[rows]
                    flat, rows, cols = flat[keep], rows[keep], cols[keep]
            else:
                flat = np.flatnonzero(self.ranked(col) != 0)  # (a bool array: much faster)
                rows, cols = np.divmod(flat, self.width)
            return rows, cols, np.searchsorted(rows, np.arange(self.order.shape[0] + 1)), flat

        return self._memo(("flagged", col), make)

    def flagged_values(self, col: Column) -> np.ndarray:
        """``col`` at its :meth:`flagged` cells, in their order."""
        rows, cols, _, flat = self.flagged(col)
        if self.reads_rows(col):
            return self.data.column(col)[self.starts[rows] + cols]
        return (self.unranked(col) if self.in_order else self.ranked(col)).ravel()[flat]

    # -- blocks in rank order: read from the data's rows ------------------------------

    def reads_rows(self, col: Column) -> bool:
        """Whether the block reads ``col`` from the data's rows instead of
        making (q, w) arrays of it: its rows are in rank order already (TREC
        mode) and its cells hold their rows' values (:attr:`Column.per_row`).
        A ranking then holds few nonzero cells (relevant, judged documents),
        found once in the data (:meth:`Data.nonzero`), and every query's are
        a span of them."""
        return self.in_order and col.per_row

    def _nonzero_rows(self, col: Column):
        """The data's rows whose ``col`` is nonzero and, for each query, where
        its own start, end at its retrieved documents, and end among them."""
        def make():
            nz = self.data.nonzero(col)
            ends = self.starts + self.lengths
            retrieved = self.retrieved
            cut = ends if retrieved is None else self.starts + np.minimum(retrieved, self.lengths)
            return nz, nz.searchsorted(self.starts), nz.searchsorted(cut), nz.searchsorted(ends)

        return self._memo(("nonzero_rows", col), make)

    def hits(self, col: Column, cut: int) -> np.ndarray:
        """How many documents of each query have a nonzero ``col`` among ranks
        1..``cut`` (float64; exact for untied rankings, see :meth:`expected`;
        ``col`` holds 0 or 1).

        Counted from :meth:`flagged` (one search per query, whatever the cut:
        the cut-offs of one column share it) unless the cut is a small part of
        a block that has not flagged ``col`` yet and does not read rows: then
        from the ranked prefix.
        """
        cut = min(cut, self.width)
        if (("flagged", col) not in self._cache and 4 * cut < self.width
                and not self.reads_rows(col)):
            return np.count_nonzero(self.ranked(col, cut), axis=1).astype(np.float64)
        rows = np.arange(self.order.shape[0])
        return flagged_above(self.flagged(col), rows, cut, self.width).astype(np.float64)

    def first(self, col: Column, cut: int) -> np.ndarray:
        """The 0-based rank of each query's first document with a nonzero
        ``col`` among ranks 1..``cut``, or -1 (exact for untied rankings):
        from :meth:`flagged` when the block has them or its rows are in rank
        order (no ranked copy then), else from the ranked prefix."""
        cut = min(cut, self.width)
        n = self.order.shape[0]
        if ("flagged", col) not in self._cache and not self.in_order:
            ranked = self.ranked(col, cut)
            first = np.argmax(ranked != 0, axis=1)
            return np.where(ranked[np.arange(n), first] != 0, first, -1)
        _, cols, start, _ = self.flagged(col)
        out = np.full(n, -1)
        some = start[1:] > start[:-1]
        out[some] = cols[start[:-1][some]]
        out[out >= cut] = -1
        return out

    # -- tie groups (ties="average") ---------------------------------------------------

    def tie_groups(self, cut: int) -> tuple[np.ndarray, np.ndarray]:
        """First and last column of the tie group of columns ``0..cut-1``.

        For the rows ``tie_rows``; the group of the last column may end
        beyond the cut.
        """
        def make():
            t, w = self.same.shape[0], self.width
            ends = np.ones((t, w), dtype=bool)  # column j ends its group
            ends[:, :-1] = ~self.same
            cols = np.arange(cut)
            starts = np.ones((t, cut), dtype=bool)
            starts[:, 1:] = ends[:, :cut - 1]
            gstart = np.maximum.accumulate(np.where(starts, cols, 0), axis=1)
            last = np.where(ends[:, :cut], cols, w)
            last[:, -1] = cut - 1 + np.argmax(ends[:, cut - 1:], axis=1)
            gend = np.minimum.accumulate(last[:, ::-1], axis=1)[:, ::-1]
            return gstart, gend

        return self._memo(("groups", cut), make)

    def tie_group_list(self, cut: int):
        """The tie groups of the tie rows that start before ``cut``, row by row:
        ``(rows, cols, sizes)``, their row in ``tie_rows``, first column and
        size (the last group of a row may extend beyond the cut)."""
        def make():
            gstart, gend = self.tie_groups(cut)
            rows, cols = np.nonzero(gstart == np.arange(cut))
            return rows, cols, gend[rows, cols] - cols + 1

        return self._memo(("group_list", cut), make)

    def _group_index(self, cut: int) -> np.ndarray:
        """(t, cut) the index in :meth:`tie_group_list` of each cell's group."""
        def make():
            gstart, _ = self.tie_groups(cut)
            first = (gstart == np.arange(cut)).ravel()
            return (np.cumsum(first) - 1).reshape(gstart.shape)

        return self._memo(("group_index", cut), make)

    def tie_values(self, col: Column, cut: int):
        """For the tie rows: :meth:`tie_groups` of ``cut`` and ``col`` in rank
        order up to the end of the group straddling the cut (computed once per
        column and cut; read-only)."""
        gstart, gend = self.tie_groups(cut)

        def make():
            span = int(gend[:, -1].max()) + 1
            # the ranked gather, shared with the kernels (in TREC mode the judged
            # documents the run did not retrieve are zero there: they hold no rank)
            ranked = self.ranked(col, span)
            return (ranked if self.tie_rows.shape[0] == self.order.shape[0]
                    else ranked[self.tie_rows])

        return gstart, gend, self._memo(("tie_values", col, cut), make)

    def tie_sums(self, col: Column, cut: int):
        """:meth:`tie_values` as running sums with a leading zero: column j
        holds the sum over ranks before j. Computed once per column and cut.
        Differences of them are exact for 0/1 columns (counts below 2**53);
        :meth:`expected` sums other columns group by group."""
        def make():
            gstart, gend, values = self.tie_values(col, cut)
            csum = np.zeros((values.shape[0], values.shape[1] + 1))
            np.cumsum(values, axis=1, out=csum[:, 1:])
            return gstart, gend, csum

        return self._memo(("tie_sums", col, cut), make)


def _spans(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the spans ``lo[i]:hi[i]``: the span of each of their positions and
    the positions, span after span."""
    counts = hi - lo
    rows = np.repeat(np.arange(lo.shape[0]), counts)
    return rows, np.arange(rows.shape[0]) + np.repeat(lo - (np.cumsum(counts) - counts), counts)


# -- helpers of the kernels ------------------------------------------------------------


def rowdot(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise dot products whose result for a row depends on that row only.

    BLAS matrix-vector products block rows differently for different numbers
    of rows, so a query's value could change in the last bit with the queries
    sharing its block; a row-wise sum does not, which makes chunked and
    distributed evaluation give the same numbers as in-memory evaluation.
    """
    return (values * weights).sum(axis=1)


def row_sums(rows: np.ndarray, values: np.ndarray, n_rows: int) -> np.ndarray:
    """Sum of ``values`` per row (row by row, in order: each row's sum depends
    on that row only)."""
    return np.bincount(rows, weights=values, minlength=n_rows).astype(np.float64, copy=False)


def tie_group_stats(rank: Ranking, col: Column, cut: int):
    """For the tie rows, per rank r < cut: the group's first column a, size g,
    number h of flagged (``col``) members and flagged documents above it
    (computed once per block, column and cut; read-only)."""
    def make():
        gstart, gend, csum = rank.tie_sums(col, cut)
        above = np.take_along_axis(csum, gstart, axis=1)
        h = np.take_along_axis(csum, gend + 1, axis=1) - above
        g = (gend - gstart + 1).astype(np.float64)
        return gstart, g, h, above

    return rank.shared(("tie_group_stats", col, cut), make)


def flagged_above(flagged, rows: np.ndarray, cols: np.ndarray, width: int) -> np.ndarray:
    """How many of the :meth:`Ranking.flagged` documents rank above column
    ``cols`` of ``rows``."""
    _, _, first, flat = flagged
    return np.searchsorted(flat, rows * width + cols) - first[rows]
