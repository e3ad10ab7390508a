"""trec_eval 10.0's binary and count measures, vectorised over queries.

Every function takes a :class:`Context` (the rankings, :class:`~.ranked.Ranked`, and the
flags) and the measure's parameters, and returns ``[(printed name, per-query values)]``. Sums
run in rank order (``np.bincount`` adds its weights in order), as trec_eval's loops do, so
every value is the same double. The gain-based measures are in :mod:`._gain`, the set
measures in :mod:`._set`; the table of all of them in :mod:`.measures`.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from .ranked import Ranked

__all__ = ["Context"]


class Context:
    """A ranking and the flags, with the per-row quantities measures share."""

    def __init__(self, data: Ranked, level: int, n_docs: int):
        self.data = data
        self.level = level
        self.n_docs = n_docs
        self.rel = data.rel
        self.offsets = data.offsets
        self.nq = data.n_queries
        self.cache: dict = {}  # shared by the measures of one evaluation

    @cached_property
    def n(self) -> np.ndarray:
        return self.data.n

    @cached_property
    def query(self) -> np.ndarray:
        return self.data.query

    @cached_property
    def position(self) -> np.ndarray:
        return self.data.position

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.level

    @cached_property
    def relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The relevant rows and how many each query has (:meth:`select` of
        ``is_rel``), and at each row the relevant documents at or above it in
        its query."""
        rows, per_query = self.select(self.is_rel)
        first = np.cumsum(per_query) - per_query
        return rows, per_query, np.arange(1, rows.shape[0] + 1) - np.repeat(first, per_query)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """R: the query's qrels lines with a level >= -l."""
        start = max(self.level, 0)
        r = self.data.levels[:, start:].sum(axis=1)
        if self.data.unleveled is not None:
            r[self.data.unleveled] = 0  # stale counts (see trec._trec_eval.rankings._stale_levels)
        return r

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.count(self.is_rel & (self.rel >= 0))

    def select(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``mask``'s rows and how many of them each query has (the rows are
        grouped by query: no boolean indexing of the long arrays needed)."""
        rows = np.flatnonzero(mask)
        return rows, np.diff(np.searchsorted(rows, self.offsets))

    def query_of(self, mask: np.ndarray) -> np.ndarray:
        """The query of each of ``mask``'s rows (``self.query[mask]``)."""
        _, counts = self.select(mask)
        return np.repeat(np.arange(self.nq), counts)

    def above(self, mask: np.ndarray, rows: np.ndarray, inclusive: bool = False
              ) -> np.ndarray:
        """How many of ``mask``'s rows are above each of ``rows`` (sorted
        row numbers) in its query (or at it too: ``inclusive``)."""
        marked = np.flatnonzero(mask)
        first = np.searchsorted(marked, self.offsets[:-1])
        at = np.searchsorted(marked, rows, side="right" if inclusive else "left")
        return at - np.repeat(first, np.diff(np.searchsorted(rows, self.offsets)))

    def count(self, mask: np.ndarray) -> np.ndarray:
        return self.select(mask)[1].astype(np.int64)

    def total(self, mask: np.ndarray | None, weights: np.ndarray) -> np.ndarray:
        """Per-query sums of ``weights`` on ``mask``'s rows, in rank order."""
        if mask is None:
            return np.bincount(self.query, weights=weights, minlength=self.nq)
        return np.bincount(self.query_of(mask), weights=weights, minlength=self.nq)

    def rel_in_top(self, k) -> np.ndarray:
        """Relevant documents among each query's first min(k, n)."""
        rows = self.relevant[0]
        start = self.offsets[:-1]
        return (np.searchsorted(rows, start + np.minimum(k, self.n))
                - np.searchsorted(rows, start)).astype(np.int64)

    @cached_property
    def interpolated(self) -> tuple[np.ndarray, np.ndarray]:
        """At every relevant row: max over the ranks j at or below it of
        P@j (trec_eval's interpolated precision); and those rows."""
        rows, _, rel_so_far = self.relevant
        precision = rel_so_far / (self.position[rows] + 1.0)
        if not rows.shape[0]:
            return precision, rows
        # a segmented running max from the bottom: exact ranks of the values
        # shifted by query, so queries never mix
        values, rank = np.unique(precision, return_inverse=True)
        q = self.query[rows]
        key = (self.nq - 1 - q).astype(np.int64) * values.shape[0] + rank
        best = np.maximum.accumulate(key[::-1])[::-1]
        return values[best - (self.nq - 1 - q) * values.shape[0]], rows


_LOG2 = np.zeros(0)


def log2_discount(pos):
    """log2(pos + 2), from a table built with libm's log2 (as trec_eval's)."""
    global _LOG2
    top = int(pos.max(initial=-1)) + 1
    if top > _LOG2.shape[0]:
        size = max(top, 2 * _LOG2.shape[0], 1024)
        _LOG2 = np.array([math.log2(i + 2) for i in range(size)])
    return _LOG2[pos]


def _divide(a, b) -> np.ndarray:
    """``a / b`` as C doubles do it: 0/0 is -nan, no warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


def where_div(cond, a, b) -> np.ndarray:
    """``a / b`` where ``cond`` holds, 0 elsewhere (no division there: trec_eval's
    guarded divisions), broadcast to one shape."""
    out = np.zeros(np.broadcast(cond, a, b).shape)
    cond = np.broadcast_to(cond, out.shape)
    with np.errstate(divide="ignore", invalid="ignore"):  # (binG under -l -1: x / 0, inf)
        np.divide(np.broadcast_to(np.asarray(a, float), out.shape),
                  np.broadcast_to(np.asarray(b, float), out.shape), out=out, where=cond)
    return out


# ------------------------------------------------------------------ official
def num_ret(c, _):
    return [("num_ret", c.n.astype(np.float64))]


def num_rel(c, _):
    return [("num_rel", c.num_rel.astype(np.float64))]


def num_rel_ret(c, _):
    return [("num_rel_ret", c.num_rel_ret.astype(np.float64))]


def num_nonrel_judged_ret(c, _):
    judged = c.count(c.rel >= 0)
    return [("num_nonrel_judged_ret", (judged - c.num_rel_ret).astype(np.float64))]


def log_floor(values):
    return np.array([math.log(max(v, 0.00001)) for v in values.tolist()])


def _iprec(c, points: list[float], truncate: bool = False):
    """trec_eval's interpolated precision at each recall point: a list of
    arrays. The cut rank is 10.0's ``lround(p * R)``; with ``truncate``,
    9.0.8's ``(long)(p * R + 0.9)`` (ir_measures' IPrec)."""
    if c.level < 0:
        return _by_scan(c, points, truncate)[0]
    values, rows = c.interpolated
    r, nrr = c.num_rel, c.num_rel_ret
    first_rel = np.concatenate(([0], np.cumsum(nrr)))[:-1]  # index in rows of the 1st rel
    out = []
    for p in points:
        cut = np.trunc(p * r + 0.9).astype(np.int64) if truncate else _lround(p * r)
        v = np.zeros(c.nq)
        mid = (cut >= 1) & (cut <= nrr)
        v[mid] = values[first_rel[mid] + cut[mid] - 1]
        low = cut <= 0
        hit = low & (nrr > 0)
        v[hit] = values[first_rel[hit]]
        none = low & (nrr == 0)
        v[none] = _divide(0.0, c.n[none])
        out.append(v)
    return out


def _by_scan(c, points, truncate: bool = False) -> tuple[list, np.ndarray]:
    """``_iprec``'s values and 11pt_avg's sum under a negative ``-l``, query by query
    as trec_eval's reverse scan (its C, transcribed): it starts from num_rel_ret
    (judged documents) and counts down at every row whose code is >= the level,
    unjudged ones included, so the scan may stop before the top."""
    r = c.num_rel.astype(np.float64)
    cuts = [np.trunc(p * r + 0.9).astype(np.int64) if truncate else _lround(p * r)
            for p in points]
    values = [np.zeros(c.nq) for _ in points]
    sums = np.zeros(c.nq)
    for q in range(c.nq):
        codes = c.rel[c.offsets[q]:c.offsets[q + 1]].tolist()
        nrr, n = int(c.num_rel_ret[q]), len(codes)
        cur = len(points) - 1
        while cur >= 0 and cuts[cur][q] > nrr:
            cur -= 1
        int_precis = float(_divide(nrr, n))
        rel_so_far, i, total = nrr, n, 0.0
        while i > 0 and rel_so_far > 0:
            int_precis = max(int_precis, rel_so_far / i)
            if codes[i - 1] >= c.level:
                while cur >= 0 and rel_so_far == cuts[cur][q]:
                    values[cur][q] = int_precis
                    total += int_precis
                    cur -= 1
                rel_so_far -= 1
            i -= 1
        while cur >= 0:
            values[cur][q] = int_precis
            total += int_precis
            cur -= 1
        sums[q] = total
    return values, sums


def _lround(x: np.ndarray) -> np.ndarray:
    """C's ``lround`` of every element (halves away from zero; exact)."""
    frac, whole = np.modf(np.abs(x))
    return (np.copysign(whole + (frac >= 0.5), x)).astype(np.int64)


def iprec_at_recall(c, points):
    return [(f"iprec_at_recall_{p:3.2f}", v) for p, v in zip(points, _iprec(c, points),
                                                               strict=True)]


# ------------------------------------------------------------------ all_trec


def infap(c, _):
    rel = c.rel
    judged_nonrel = (rel >= 0) & (rel < c.level)
    unj = rel == -2

    rows = c.is_rel & ~((rel == -1) | (rel == -2))
    at, counts = c.select(rows)
    q = np.repeat(np.arange(c.nq), counts)
    j = c.position.take(at).astype(np.float64)
    rel_so_far = c.above(c.is_rel if c.level > 0 else rows, at, inclusive=True)
    nonrel = c.above(judged_nonrel, at, inclusive=True)
    pool = c.above(unj, at, inclusive=True)
    k = (rel_so_far - 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((k + nonrel + pool) / j)
                * ((k + 0.00001) / (k + nonrel + 2 * 0.00001)))
    term[j == 0] = 1.0
    s = np.bincount(q, weights=term, minlength=c.nq)
    return [("infAP", where_div(c.num_rel > 0, s, c.num_rel))]


def rprec_mult(c, points):
    if c.level < 0:
        return [(f"Rprec_mult_{x:3.2f}", v) for x, v in zip(points, _rprec_mult_scan(c, points),
                                                             strict=True)]
    out = []
    r = c.num_rel.astype(np.float64)
    for x in points:
        cut = np.trunc(x * r + 0.9).astype(np.int64)
        v = np.zeros(c.nq)
        over = cut > c.n
        v[over] = c.num_rel_ret[over] / cut[over].astype(np.float64)
        mid = (cut >= 1) & ~over
        v[mid] = c.rel_in_top(cut)[mid] / cut[mid].astype(np.float64)
        out.append((f"Rprec_mult_{x:3.2f}", v))
    return out


def _rprec_mult_scan(c, points) -> list:
    """Rprec_mult under a negative ``-l``, query by query as trec_eval's reverse
    scan (its C, transcribed; see :func:`_by_scan`)."""
    r = c.num_rel.astype(np.float64)
    cuts = [np.trunc(x * r + 0.9).astype(np.int64) for x in points]
    values = [np.zeros(c.nq) for _ in points]
    for q in range(c.nq):
        codes = c.rel[c.offsets[q]:c.offsets[q + 1]].tolist()
        nrr, n = int(c.num_rel_ret[q]), len(codes)
        cur = len(points) - 1
        while cur >= 0 and cuts[cur][q] > n:
            values[cur][q] = nrr / float(cuts[cur][q])
            cur -= 1
        rel_so_far, i = nrr, n
        while i > 0 and rel_so_far > 0:
            while cur >= 0 and i == cuts[cur][q]:
                values[cur][q] = rel_so_far / i
                cur -= 1
            if codes[i - 1] >= c.level:
                rel_so_far -= 1
            i -= 1
    return values


def pt11_avg(c, params):
    points = params.values if params is not None else [i / 10 for i in range(11)]
    if c.level < 0:
        s = _by_scan(c, points)[1]
    elif list(points) != sorted(points):
        s = _pt11_unsorted(c, points)
    else:
        s = np.zeros(c.nq)
        for v in _iprec(c, points)[::-1]:  # trec_eval adds from the last point down
            s = s + v
    name = "11pt_avg" if params is None else f"11pt_avg_{params.text}"
    return [(name, s / float(len(points)))]


def _pt11_unsorted(c, points) -> np.ndarray:
    """11pt_avg's sum for points not in increasing order, as trec_eval's scan
    takes them: from the last point down, a cut-off is met while the scan of
    the relevant documents (from the last up) has not passed it; once one is
    missed, it and every earlier point get the precision interpolated at the
    first relevant document."""
    values, _ = c.interpolated
    nrr = c.num_rel_ret
    first_rel = np.concatenate(([0], np.cumsum(nrr)))[:-1]
    cuts = np.stack([_lround(p * c.num_rel) for p in points], axis=1)
    final = np.where(nrr > 0, values[np.minimum(first_rel, max(values.shape[0] - 1, 0))]
                     if values.shape[0] else 0.0, _divide(0.0, c.n))
    out = np.zeros(c.nq)
    for q in range(c.nq):
        k = int(nrr[q])
        cur = len(points) - 1
        while cur >= 0 and cuts[q, cur] > k:
            cur -= 1
        total = 0.0
        while cur >= 0 and 1 <= cuts[q, cur] <= k:
            k = int(cuts[q, cur])
            total += values[first_rel[q] + k - 1]
            cur -= 1
        for _ in range(cur + 1):
            total += final[q]
        out[q] = total
    return out


def bin_g(c, _):
    rows, per_query, rel_so_far = c.relevant
    term = 1.0 / log2_discount(c.position.take(rows) - rel_so_far + 1)  # log2(3+r-k)
    s = np.bincount(np.repeat(np.arange(c.nq), per_query), weights=term, minlength=c.nq)
    return [("binG", where_div(per_query > 0, s, c.num_rel))]


def relative_p(c, ks):
    r = c.num_rel
    return [(f"relative_P_{k}", where_div(r > 0, c.rel_in_top(k), np.minimum(k, r)))
            for k in ks]


