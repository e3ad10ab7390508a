"""trec_eval 10.0's gain pairs (``ndcg.1=3,2=9``): each query's gain list and ideal ranking.

A query's gains come from trec_eval's gain list (``level=gain`` pairs whose level
is a whole number, in the order given, then every level of the query not listed,
at its own value), sorted by trec_eval's comparator (the gain difference truncated
to an int) with glibc's merge sort; a row's gain is the first entry of its level
in that list (0 for a level it lacks: unjudged documents, unless a pair names -1 or
-2); the ideal ranking walks the list from its top, each level as many times as
the query has documents of it, while the gain is > 0. Used by the trec engine's
gain measures (:mod:`._gain`) and by the registry's ``ndcg(gains=...)`` in
trec_eval's mode (:func:`pair_ndcg`).
"""

from __future__ import annotations

import math
import re
from functools import cached_property

import numpy as np

from ._measures import log2_discount, where_div

__all__ = ["GainSetup", "ideal_dcg", "pair_dcg", "pair_ndcg", "within"]


def _compare(a, b) -> int:
    d = a[1] - b[1]
    return int(d) if math.isfinite(d) else (1 if d > 0 else -1)


def _msort(items: list) -> list:
    """glibc's ``msort``: top-down merge sort, the left half wins ties."""
    n = len(items)
    if n <= 1:
        return list(items)
    n1 = n // 2
    left, right = _msort(items[:n1]), _msort(items[n1:])
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if _compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _is_integer_name(name: str) -> bool:
    body = name[1:] if name[:1] in "+-" else name
    return body.isdigit()


def _atol(text: str) -> int:
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def _gain_list(pairs, n_levels: int) -> list:
    """Sorted entries (level, gain, counted level or None) for a query whose
    levels are 0 .. n_levels - 1."""
    entries = [[_atol(name), value, None] for name, value in pairs if _is_integer_name(name)]
    for i in range(n_levels):
        for e in entries:
            if e[0] == i:
                e[2] = i
                break
        else:
            entries.append([i, float(i), i])
    return _msort([tuple(e) for e in entries])


class GainSetup:
    """Per-row gains and per-query ideal rankings for one pair list.

    ``rel`` and ``query`` are the rows' relevance codes (a level, -1 not in the
    qrels, -2 a negative level) and query indexes (0 .. nq - 1, in rank order);
    ``levels[i, l]`` counts query ``i``'s qrels lines of level ``l`` and ``top[i]``
    is its highest level (trec_eval's, stale ones included:
    :class:`~.ranked.Ranked`)."""

    def __init__(self, pairs, *, rel: np.ndarray, query: np.ndarray, nq: int,
                 levels: np.ndarray, top: np.ndarray):
        self.rel, self.query, self.nq, self.levels = rel, query, nq, levels
        n_levels = np.maximum(top + 1, 0)
        groups, self.group = np.unique(n_levels, return_inverse=True)
        self.lists = [_gain_list(pairs, int(g)) for g in groups]
        lo = min([-2] + [e[0] for lst in self.lists for e in lst])
        hi = max([0] + [e[0] for lst in self.lists for e in lst])
        lut = np.zeros((len(groups), hi - lo + 1))
        for gi, lst in enumerate(self.lists):
            seen = set()
            for level, gain, _ in lst:
                if level not in seen:
                    seen.add(level)
                    lut[gi, level - lo] = gain
        self.lut, self.lo = lut, lo
        self._row_gains = None

    def row_gains(self) -> np.ndarray:
        if self._row_gains is None:
            self._row_gains = self.per_row(self.lut)
        return self._row_gains

    def per_row(self, lut: np.ndarray) -> np.ndarray:
        """Every row's value in a table shaped as :attr:`lut` (a row per gain
        list, a column per code from :attr:`lo`)."""
        if lut.shape[0] == 1:
            return lut[0].take(self.rel - self.lo)
        at = self.group.take(self.query)  # (the table raveled: one gather, ~4x
        at *= lut.shape[1]                # faster than indexing it in 2-D)
        at += self.rel
        at -= self.lo
        return lut.ravel().take(at)

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray]:
        """(ideal gains flat, their query index), queries in order."""
        levels = self.levels
        parts_g, parts_c, parts_q = [], [], []
        for gi, lst in enumerate(self.lists):
            qs = np.flatnonzero(self.group == gi)
            if not qs.shape[0] or not lst:
                continue
            rev = lst[::-1]
            gains = np.array([e[1] for e in rev])
            counts = np.zeros((qs.shape[0], len(rev)), dtype=np.int64)
            for j, (_, _, counted) in enumerate(rev):
                if counted is not None and counted < levels.shape[1]:
                    counts[:, j] = levels[qs, counted]
            if gains[0] <= 0:
                counts[:] = 0
            stop = np.cumsum((counts > 0) & (gains <= 0)[None, :], axis=1) > 0
            counts[stop] = 0
            parts_g.append(np.tile(gains, qs.shape[0]))
            parts_c.append(counts.ravel())
            parts_q.append(np.repeat(qs, len(rev)))
        if not parts_g:
            return np.zeros(0), np.zeros(0, dtype=np.int64)
        g, cnt, q = (np.concatenate(p) for p in (parts_g, parts_c, parts_q))
        order = np.argsort(q, kind="stable")
        g, cnt, q = g[order], cnt[order], q[order]
        return np.repeat(g, cnt), np.repeat(q, cnt)

    @cached_property
    def ideal_length(self) -> np.ndarray:
        return np.bincount(self.ideal[1], minlength=self.nq)


def within(q: np.ndarray, nq: int) -> np.ndarray:
    """The position of every entry of ``q`` (sorted query indexes) in its query."""
    counts = np.bincount(q, minlength=nq)
    starts = np.cumsum(counts) - counts
    return np.arange(q.shape[0]) - np.repeat(starts, counts)


def ideal_dcg(setup: GainSetup) -> np.ndarray:
    """Every query's ideal DCG: its ideal gains over log2(rank + 1), added in rank order."""
    g, q = setup.ideal
    pos = within(q, setup.nq)
    return np.bincount(q, weights=g / log2_discount(pos), minlength=setup.nq)


def pair_dcg(pairs, *, rel: np.ndarray, query: np.ndarray, position: np.ndarray, nq: int,
             levels: np.ndarray, top: np.ndarray, k: int | None = None) -> np.ndarray:
    """trec_eval's ``dcg`` with gain ``pairs`` (as :func:`pair_ndcg`'s arguments):
    gain / log2(rank + 1) added over the nonzero gains rank after rank (over
    the first ``k`` ranks when given)."""
    setup = GainSetup(pairs, rel=rel, query=query, nq=nq, levels=levels, top=top)
    return _pair_dcg(setup, query, position, nq, k)


def _pair_dcg(setup: GainSetup, query, position, nq: int, k: int | None) -> np.ndarray:
    g = setup.row_gains()
    keep = g != 0
    if k is not None:
        keep &= position < k
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = g[keep] / log2_discount(position[keep])
    return np.bincount(query[keep], weights=terms, minlength=nq)


def pair_ndcg(pairs, *, rel: np.ndarray, query: np.ndarray, position: np.ndarray, nq: int,
              levels: np.ndarray, top: np.ndarray, k: int | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's ``ndcg`` with gain ``pairs`` (``[(name, gain)]``, as given) of
    rows ``rel`` (codes of the retrieved documents, in rank order; ``query``,
    ``position``: their query and 0-based rank), in its operations: the DCG adds
    gain / log2(rank + 1) over the nonzero gains rank after rank, the ideal DCG
    over the ideal ranking (both over the first ``k`` ranks when given), 0 where
    the ideal DCG is not > 0; and the ideal DCGs."""
    setup = GainSetup(pairs, rel=rel, query=query, nq=nq, levels=levels, top=top)
    dcg = _pair_dcg(setup, query, position, nq, k)
    ideal_g, ideal_q = setup.ideal
    ideal_pos = within(ideal_q, nq)
    if k is not None:
        ideal_g, ideal_q, ideal_pos = (a[ideal_pos < k] for a in (ideal_g, ideal_q, ideal_pos))
    idcg = np.bincount(ideal_q, weights=ideal_g / log2_discount(ideal_pos), minlength=nq)
    return where_div(idcg > 0, dcg, idcg), idcg
