"""trec_eval 10.0's gain-based measures without a registry twin: dcg, ideal_dcg, G,
ndcg_rel, Rndcg, rbp, rbp_resid.

A query's gains and ideal ranking come from trec_eval's gain list
(:class:`~.gains.GainSetup`; ``ndcg`` with gain pairs is the registry's
``ndcg(gains=...)``, on the same list). Everything runs on a grid of
ranks ``0 .. max(n, L)`` per query (``L``: the ideal ranking's length), with
running sums done query by query in rank order, as trec_eval adds them.
"""

from __future__ import annotations

import numpy as np

from ._measures import Context, log2_discount, where_div
from .gains import GainSetup, ideal_dcg, within

__all__ = ["g_measure", "ideal_dcg_measure", "ndcg_rel", "rndcg", "rbp", "rbp_resid"]


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
        c.cache[key] = GainSetup(params.pairs if params is not None else [], rel=c.rel,
                                 query=c.query, nq=c.nq, levels=c.data.levels,
                                 top=c.data.top)
    return c.cache[key]


def _pair_name(base, params):
    return base if params is None else f"{base}_{params.text}"


class _Prefix:
    """What G, ndcg_rel and Rndcg need without a grid of every rank: the
    rows of nonzero gain (their running DCG) and every query's ideal ranking
    with one rank more, 0 .. L (its running ideal DCG and G's cost)."""

    def __init__(self, c: Context, setup: GainSetup):
        nq = c.nq
        g = setup.row_gains()
        self.nz = np.flatnonzero(g != 0)  # rows in query and rank order
        self.g = g[self.nz]
        self.nz_q = c.query[self.nz]
        self.nz_pos = c.position[self.nz]
        self.nz_count = np.bincount(self.nz_q, minlength=nq)
        self.nz_start = np.cumsum(self.nz_count) - self.nz_count
        # running sums over the nonzero rows only: adding the zeros in
        # between changes no partial sum
        self.dcg = _seg_cumsum(self.g / log2_discount(self.nz_pos), self.nz_count)
        length = setup.ideal_length
        self.length = length
        ext = length + 1
        self.ext_start = np.cumsum(ext) - ext
        self.ext_q = np.repeat(np.arange(nq), ext)
        self.ext_pos = np.arange(self.ext_q.shape[0]) - np.repeat(self.ext_start, ext)
        ideal_g, ideal_q = setup.ideal
        self.ideal = np.zeros(self.ext_q.shape[0])
        self.ideal[np.repeat(self.ext_start, length) + within(ideal_q, nq)] = ideal_g
        with np.errstate(divide="ignore", invalid="ignore"):
            iterm = np.where(self.ideal > 0, self.ideal / log2_discount(self.ext_pos), 0.0)
        self.idcg = _seg_cumsum(iterm, ext)
        self.ext_last = self.ext_start + length  # rank L: the ideal DCG is final
        self.idcg_final = self.idcg[self.ext_last]
        nz_last = self.nz_start + self.nz_count - 1
        self.dcg_final = np.zeros(nq)
        some = self.nz_count > 0
        self.dcg_final[some] = self.dcg[nz_last[some]]
        self.n = c.n
        self.offsets = c.offsets

    def dcg_through(self, q: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The running DCG of queries ``q`` at ranks ``r`` (inclusive; 0
        before rank 0, the final DCG beyond the last retrieved rank)."""
        row = self.offsets[q] + np.minimum(r, self.n[q] - 1)
        idx = np.searchsorted(self.nz, row, side="right")  # nonzero rows <= row
        inside = (r >= 0) & (idx > self.nz_start[q])
        out = np.zeros(q.shape[0])
        out[inside] = self.dcg[idx[inside] - 1]
        return out


def _prefix(c: Context, params) -> _Prefix:
    key = ("prefix", params.text if params is not None else None)
    if key not in c.cache:
        c.cache[key] = _Prefix(c, _setup(c, params))
    return c.cache[key]


def _g_cost(c: Context, pre: _Prefix) -> np.ndarray:
    """G's running cost (sum of max(ideal gain, 1)) at the nonzero rows."""
    cost_ext = _seg_cumsum(np.maximum(pre.ideal, 1.0), pre.length + 1)
    q, pos = pre.nz_q, pre.nz_pos
    length = pre.length[q]
    at_l = cost_ext[pre.ext_last]  # cost at rank L; each later rank adds 1.0
    cost = np.where(pos <= length, cost_ext[pre.ext_start[q] + np.minimum(pos, length)],
                    at_l[q] + (pos - length))
    exact = (at_l == np.floor(at_l)) & (np.abs(at_l) < 2.0 ** 52)
    for qi in np.flatnonzero(~exact & (pre.nz_count > 0) & (c.n > pre.length + 1)):
        # a fractional cost: 1.0 added rank by rank rounds, as trec_eval's loop
        steps = np.ones(int(c.n[qi]) - int(pre.length[qi]))
        steps[0] = at_l[qi]
        run = np.cumsum(steps)
        sel = slice(pre.nz_start[qi], pre.nz_start[qi] + pre.nz_count[qi])
        beyond = pos[sel] > length[sel]
        cost[sel][beyond] = run[pos[sel][beyond] - length[sel][beyond]]
    return cost


def g_measure(c: Context, params):
    setup = _setup(c, params)
    pre = _prefix(c, params)
    res = _seg_cumsum(pre.g, pre.nz_count)
    cost = _g_cost(c, pre)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = pre.g / np.log2((2 + cost) - res)
    g_sum = np.bincount(pre.nz_q, weights=term, minlength=c.nq)
    ideal_g, ideal_q = setup.ideal
    sum_ideal = np.bincount(ideal_q, weights=ideal_g, minlength=c.nq)
    return [(_pair_name("G", params), where_div(sum_ideal > 0, g_sum, sum_ideal))]


def ndcg_rel(c: Context, params):
    pre = _prefix(c, params)
    hit = pre.g > 0
    q, pos = pre.nz_q[hit], pre.nz_pos[hit]
    length = pre.length
    idcg = pre.idcg[pre.ext_start[q] + np.minimum(pos, length[q])]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.bincount(q, weights=pre.dcg[hit] / idcg, minlength=c.nq)
        nrel_ret = np.bincount(q, minlength=c.nq)
        s = s + ((length - nrel_ret).astype(np.float64) * pre.dcg_final) / pre.idcg_final
        v = np.where(s > 0, s / length, 0.0)
    return [(_pair_name("ndcg_rel", params), v)]


def rndcg(c: Context, params):
    setup = _setup(c, params)
    pre = _prefix(c, params)
    nq = c.nq
    initial = np.array([lst[-1][1] if lst else 0.0 for lst in setup.lists])[setup.group]
    prev_ideal = np.empty_like(pre.ideal)
    prev_ideal[1:] = pre.ideal[:-1]
    prev_ideal[pre.ext_start] = initial
    # ranks 0 .. L of the queries whose ideal ranking starts above 0
    event = (initial[pre.ext_q] > 0) & (pre.ideal != prev_ideal)
    at = np.flatnonzero(event)
    qe, pe = pre.ext_q[at], pre.ext_pos[at]
    first = pe == 0
    dcg_prev = pre.dcg_through(qe, pe - 1)
    idcg_prev = np.where(first, 0.0, pre.idcg[np.maximum(at - 1, 0)])
    processed_until = np.where(initial > 0, pre.length + 1, 0)
    ok = idcg_prev > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.bincount(qe[ok], weights=dcg_prev[ok] / idcg_prev[ok], minlength=nq)
        k = np.bincount(qe[ok], minlength=nq).astype(np.float64)
        idcg_final = pre.idcg_final
        tail = (processed_until < c.n) & (idcg_final > 0)
        s = s + np.where(tail, pre.dcg_final / np.where(tail, idcg_final, 1.0), 0.0)
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
    gains = setup.per_row(lut)
    powers = _powers(p, int(c.n.max(initial=0)))
    rows, counts = c.select(gains != 0)
    s = np.bincount(np.repeat(np.arange(c.nq), counts),
                    weights=gains.take(rows) * powers.take(c.position.take(rows)),
                    minlength=c.nq)
    return [(_pair_name("rbp", params), (1.0 - p) * s)]


def rbp_resid(c: Context, params):
    p = _p(params)
    powers = _powers(p, int(c.n.max(initial=0)))
    rows, u = c.select(c.rel < 0)
    s = np.bincount(np.repeat(np.arange(c.nq), u), weights=powers.take(c.position.take(rows)),
                    minlength=c.nq)
    v = np.where(u > 0, powers[c.n] + (1 - p) * s, 0.0)
    return [(_pair_name("rbp_resid", params), v)]


def ideal_dcg_measure(c: Context, params):
    setup = _setup(c, params)
    return [(_pair_name("ideal_dcg", params), ideal_dcg(setup))]
