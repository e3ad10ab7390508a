"""trec_eval 10.0's gain-based measures: ndcg, ndcg_cut, G, ndcg_rel, Rndcg, rbp, rbp_resid.

A query's gains come from trec_eval's gain list (``level=gain`` pairs, then
every level of the query at its own value), sorted by trec_eval's
comparator (the gain difference truncated to an int) with glibc's merge sort;
the ideal ranking walks that list from its top. Everything runs on a grid of
ranks ``0 .. max(n, L)`` per query (``L``: the ideal ranking's length), with
running sums done query by query in rank order, as trec_eval adds them.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ._te_measures import Context, _discount, _where_div

__all__ = ["GainSetup", "ndcg", "ndcg_cut", "g_measure", "ndcg_rel", "rndcg", "rbp",
           "rbp_resid"]


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
    import re

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
    """Per-row gains and per-query ideal rankings for one pair list."""

    def __init__(self, c: Context, pairs):
        self.c = c
        data = c.data
        n_levels = np.maximum(data.top + 1, 0)
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
            c = self.c
            if self.lut.shape[0] == 1:
                self._row_gains = self.lut[0][c.rel - self.lo]
            else:
                self._row_gains = self.lut[self.group[c.query], c.rel - self.lo]
        return self._row_gains

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray]:
        """(ideal gains flat, their query index), queries in order."""
        c = self.c
        levels = c.data.levels
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
        return np.bincount(self.ideal[1], minlength=self.c.nq)


def _within(q: np.ndarray, nq: int) -> np.ndarray:
    counts = np.bincount(q, minlength=nq)
    starts = np.cumsum(counts) - counts
    return np.arange(q.shape[0]) - np.repeat(starts, counts)


def _seg_cumsum(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Running sums restarting at every segment, each added in order (as
    trec_eval's loops add: never a difference of two global sums)."""
    if not values.shape[0]:
        return values.copy()
    longest = int(counts.max())
    if (counts == longest).all():  # every query as long: a matrix already
        return np.cumsum(values.reshape(-1, longest), axis=1).ravel()
    if counts.shape[0] * longest <= 2 * values.shape[0] + 100_000:
        # a padded matrix: np.cumsum adds along each row in order
        inside = np.arange(longest)[None, :] < counts[:, None]
        grid = np.zeros((counts.shape[0], longest))
        grid[inside] = values
        return np.cumsum(grid, axis=1)[inside]
    out = np.empty_like(values)
    start = 0
    for n in counts.tolist():
        np.cumsum(values[start:start + n], out=out[start:start + n])
        start += n
    return out


def _setup(c: Context, params) -> GainSetup:
    key = ("gains", params.text if params is not None else None)
    if key not in c.cache:
        c.cache[key] = GainSetup(c, params.pairs if params is not None else [])
    return c.cache[key]


def _grid(c: Context, params) -> _Grid:
    key = ("grid", params.text if params is not None else None)
    if key not in c.cache:
        c.cache[key] = _Grid(c, _setup(c, params))
    return c.cache[key]


def _pair_name(base, params):
    return base if params is None else f"{base}_{params.text}"


def _idcg(setup: GainSetup) -> np.ndarray:
    g, q = setup.ideal
    pos = _within(q, setup.c.nq)
    return np.bincount(q, weights=g / _discount(pos), minlength=setup.c.nq)


def _dcg_terms(c, gains):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gains != 0, gains / _discount(c.position), 0.0)


def ndcg(c: Context, params):
    setup = _setup(c, params)
    dcg = c.total(None, _dcg_terms(c, setup.row_gains()))
    idcg = _idcg(setup)
    return [(_pair_name("ndcg", params), _where_div(idcg > 0, dcg, idcg))]


def ndcg_cut(c: Context, ks):
    rel = c.rel
    rows = rel > 0
    term = rel[rows] / _discount(c.position[rows])
    levels = c.data.levels
    top = levels.shape[1] - 1
    counts = levels[:, :0:-1] if top >= 1 else np.zeros((c.nq, 0), dtype=np.int64)
    ideal_g = np.repeat(np.tile(np.arange(top, 0, -1, dtype=np.float64), c.nq),
                        counts.ravel())
    ideal_q = np.repeat(np.repeat(np.arange(c.nq), top), counts.ravel())
    ideal_pos = _within(ideal_q, c.nq)
    ideal_term = ideal_g / _discount(ideal_pos)
    out = []
    pos = c.position[rows]
    q = c.query[rows]
    for k in ks:
        dcg = np.bincount(q[pos < k], weights=term[pos < k], minlength=c.nq)
        keep = ideal_pos < k
        idcg = np.bincount(ideal_q[keep], weights=ideal_term[keep], minlength=c.nq)
        out.append((f"ndcg_cut_{k}", np.where(idcg > 0, _where_div(idcg > 0, dcg, idcg), dcg)))
    return out


class _Grid:
    """Ranks 0 .. T-1 of every query, T = max(n, L + 1): gains, ideal gains,
    running DCG and ideal DCG."""

    def __init__(self, c: Context, setup: GainSetup):
        n, length = c.n, setup.ideal_length
        self.t = np.maximum(n, length + 1)
        nq = c.nq
        self.start = np.cumsum(self.t) - self.t
        if (self.t == n).all():  # the ideal rankings end within the runs: the rows
            self.q, self.pos = c.query, c.position
            self.retrieved = np.ones(self.q.shape[0], dtype=bool)
            self.g = setup.row_gains()
        else:
            self.q = np.repeat(np.arange(nq), self.t)
            self.pos = np.arange(self.q.shape[0]) - np.repeat(self.start, self.t)
            self.retrieved = self.pos < n[self.q]
            self.g = np.zeros(self.q.shape[0])
            self.g[self.retrieved] = setup.row_gains()
        ideal_g, ideal_q = setup.ideal
        self.ideal = np.zeros(self.q.shape[0])
        self.ideal[np.repeat(self.start, length) + _within(ideal_q, nq)] = ideal_g
        disc = _discount(self.pos)
        with np.errstate(divide="ignore", invalid="ignore"):
            dterm = np.where(self.g != 0, self.g / disc, 0.0)
            iterm = np.where(self.ideal > 0, self.ideal / disc, 0.0)
        self.dcg = _seg_cumsum(dterm, self.t)
        self.idcg = _seg_cumsum(iterm, self.t)
        self.n, self.length = n, length
        self.last = self.start + self.t - 1

    def at(self, values, r):
        """values at rank r (clipped to the query's grid) per query."""
        return values[self.start + np.minimum(r, self.t - 1)]


def g_measure(c: Context, params):
    setup = _setup(c, params)
    grid = _grid(c, params)
    ret = grid.retrieved
    res = _seg_cumsum(grid.g[ret], c.n)
    cost = _seg_cumsum(np.maximum(grid.ideal[ret], 1.0), c.n)
    g = grid.g[ret]
    nz = g != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        term = g[nz] / np.log2((2 + cost[nz]) - res[nz])
    g_sum = np.bincount(c.query[nz], weights=term, minlength=c.nq)
    ideal_g, ideal_q = setup.ideal
    sum_ideal = np.bincount(ideal_q, weights=ideal_g, minlength=c.nq)
    return [(_pair_name("G", params), _where_div(sum_ideal > 0, g_sum, sum_ideal))]


def ndcg_rel(c: Context, params):
    grid = _grid(c, params)
    hit = grid.retrieved & (grid.g > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.bincount(grid.q[hit], weights=grid.dcg[hit] / grid.idcg[hit], minlength=c.nq)
        nrel_ret = np.bincount(grid.q[hit], minlength=c.nq)
        dcg_final = grid.at(grid.dcg, np.maximum(c.n - 1, 0))
        dcg_final = np.where(c.n > 0, dcg_final, 0.0)
        idcg_final = grid.idcg[grid.last]
        s = s + ((grid.length - nrel_ret).astype(np.float64) * dcg_final) / idcg_final
        v = np.where(s > 0, s / grid.length, 0.0)
    return [(_pair_name("ndcg_rel", params), v)]


def rndcg(c: Context, params):
    setup = _setup(c, params)
    grid = _grid(c, params)
    nq = c.nq
    initial = np.array([lst[-1][1] if lst else 0.0 for lst in setup.lists])[setup.group]
    processed_until = np.where(initial > 0, grid.length + 1, 0)  # ranks 0 .. P-1
    prev_ideal = np.empty_like(grid.ideal)
    prev_ideal[1:] = grid.ideal[:-1]
    prev_ideal[grid.start[grid.t > 0]] = initial[grid.t > 0]
    event = (grid.pos < processed_until[grid.q]) & (grid.ideal != prev_ideal)
    prev = np.flatnonzero(event) - 1  # rank r - 1 (of the same query when r > 0)
    first = grid.pos[event] == 0
    qe = grid.q[event]
    dcg_prev = np.where(first, 0.0, grid.dcg[np.maximum(prev, 0)])
    # beyond the retrieved ranks the DCG stays at its final value
    n_last = np.where(c.n > 0, grid.at(grid.dcg, np.maximum(c.n - 1, 0)), 0.0)
    beyond = grid.pos[event] - 1 >= c.n[qe]
    dcg_prev = np.where(beyond, n_last[qe], dcg_prev)
    idcg_prev = np.where(first, 0.0, grid.idcg[np.maximum(prev, 0)])
    ok = idcg_prev > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.bincount(qe[ok], weights=dcg_prev[ok] / idcg_prev[ok], minlength=nq)
        k = np.bincount(qe[ok], minlength=nq).astype(np.float64)
        idcg_final = grid.idcg[grid.last]
        tail = (processed_until < c.n) & (idcg_final > 0)
        s = s + np.where(tail, n_last / np.where(tail, idcg_final, 1.0), 0.0)
        k = k + tail
        v = np.where(c.num_rel > 0, s / k, 0.0)
    return [(_pair_name("Rndcg", params), v)]


def _p(params):
    p = 0.9
    for name, value in (params.pairs if params is not None else []):
        if name == "p":
            p = value
    return p


def _powers(p: float, n: int) -> np.ndarray:
    steps = np.full(n + 1, p)
    steps[0] = 1.0
    return np.cumprod(steps)


def rbp(c: Context, params):
    setup = _setup(c, params)
    p = _p(params)
    lut = setup.lut.copy()
    for gi, lst in enumerate(setup.lists):
        gains = [e[1] for e in lst]
        lo, hi = min([0.0] + gains), max([0.0] + gains)
        if lo < 0 or hi > 1:
            row = lut[gi]
            listed = np.zeros(row.shape[0], dtype=bool)
            listed[[e[0] - setup.lo for e in lst]] = True
            row[listed] = (row[listed] - lo) / (hi - lo)
    gains = lut[setup.group[c.query], c.rel - setup.lo]
    powers = _powers(p, int(c.n.max(initial=0)))
    s = c.total(gains != 0, gains[gains != 0] * powers[c.position[gains != 0]])
    return [(_pair_name("rbp", params), (1.0 - p) * s)]


def rbp_resid(c: Context, params):
    p = _p(params)
    powers = _powers(p, int(c.n.max(initial=0)))
    unj = c.rel < 0
    s = c.total(unj, powers[c.position[unj]])
    u = c.count(unj)
    v = np.where(u > 0, powers[c.n] + (1 - p) * s, 0.0)
    return [(_pair_name("rbp_resid", params), v)]


def dcg(c: Context, params):
    setup = _setup(c, params)
    return [(_pair_name("dcg", params), c.total(None, _dcg_terms(c, setup.row_gains())))]


def ideal_dcg(c: Context, params):
    setup = _setup(c, params)
    return [(_pair_name("ideal_dcg", params), _idcg(setup))]
