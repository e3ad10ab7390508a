"""Cascade metrics (ERR, reciprocal rank, hit rate) averaged over tie orderings.

A user scans a ranking and stops at each document with its stop probability
R (ERR: (2**l - 1) / 2**max_grade; reciprocal rank and hit rate: 1 for a
relevant document, else 0); a stop at rank r earns ``weights[r - 1]``.
Under ``ties="average"`` the value is the exact expectation over the uniformly
random orders of every tie group (McSherry & Najork, 2008). Groups are
independent: a group starting at 0-based rank ``a`` is reached with the
product ``rho`` of the continue probabilities 1 - R of every document above
it, whatever their order. Within a group of ``g`` documents, ``p`` of them
with R > 0 ("positives") and ``z = g - p`` with R = 0 (which only shift
positions):

* the positives, in a uniformly random order among themselves, give
  ``S[i]``, the probability that the cascade stops at the i-th positive
  (0-based), and ``M[i]``, that it reaches it (the mean over the i-subsets of
  the positives of the product of their continue probabilities). A recurrence
  over levels i, each one running sum over the positives, gives both from
  sums of non-negative terms only (no cancellation, unlike M[i] - M[i + 1]);
* independently, the i-th positive sits at group position ``i + y`` with ``y``
  zeros before it, with probability ``P_i(y) = C(i + y, i) C(z - y + p - 1 - i,
  p - 1 - i) / C(g, p)``; ``P_0(y) = (p / g) prod_{u<y} (z - u) / (g - 1 - u)``
  and ``P_{i+1}(y) / P_i(y) = (i + 1 + y)(p - 1 - i) / ((i + 1)(z - y + p - 1 - i))``;

and the group adds ``rho * sum_i S[i] * sum_y P_i(y) * weights[a + i + y]``.

Cost, per group: O(p * D) for the levels and O(D * Y) for the positions,
where D <= min(p, k - a) is the number of levels and Y <= min(z + 1, k - a)
the number of zero counts y that are looked at. Both are cut where the mass
left is provably below 2**-54 of the query's value (so the value is exact to
float64 resolution; see :func:`_levels` and :func:`_window`): for binary stop
probabilities D = 1 and the cost is O(min(g, k - a)); for ERR with the default
max_grade=4 and integer labels D stays below a few hundred whatever the group
size. Stop probabilities close to 0 (large ``max_grade``, fractional labels)
make D grow like 40 / R: the cost then approaches O(g * min(g, k - a)).
"""

from __future__ import annotations

import numpy as np

__all__ = ["cascade_ties"]

# Relative share of the query's value that each truncation may leave out, per
# group (two truncations per group: their sum stays below 2**-54 of the value).
_BUDGET = 2.0**-55
# Groups of at most this many documents take the all-levels-at-once path
# (:func:`_positions_small`), up to this many cells per call.
_SMALL_GROUP = 900
_CELLS = 1 << 22
_SHORT = 48  # axes up to this long are accumulated column by column (:func:`_running`)


def _running(ufunc, x: np.ndarray, axis: int, out: np.ndarray | None = None) -> np.ndarray:
    """``ufunc.accumulate(x, axis)`` (a running sum or product) into ``out``
    (default: in place). NumPy's accumulate calls its inner loop once per
    row of the axis, slow for the short axes of tie groups; a short axis is
    done column by column instead, one whole-array operation each. The same
    operations in the same order (``out[j] = ufunc(out[j - 1], x[j])``), so
    the same bits."""
    if out is None:
        out = x
    elif out is not x:
        out[...] = x
    if out.shape[axis] > _SHORT:
        return ufunc.accumulate(out, axis=axis, out=out)
    columns = np.moveaxis(out, axis, 0)
    for j in range(1, columns.shape[0]):
        ufunc(columns[j - 1], columns[j], out=columns[j])
    return out


def cascade_ties(rank, col, weights: np.ndarray, *, binary: bool = False) -> np.ndarray:
    """Expected cascade value of each tie row of ``rank`` (see module docs).

    ``col`` is a column of stop probabilities in [0, 1]; ``weights[r]`` is
    the gain of a stop at 0-based rank r < len(weights), non-increasing.
    ``binary``: the probabilities are 0 or 1 (relevance flags), so only the
    first group with a positive counts (see :func:`_first_groups`).
    """
    cut = weights.shape[0]
    _, gend, stop = rank.tie_values(col, cut)
    if binary:
        return _first_groups(rank, col, weights, gend, stop)
    rows, a, size = rank.tie_group_list(cut)
    n_rows, span = stop.shape
    # Reach of each group: the continue probabilities of the ranks above it.
    reach = np.ones((n_rows, span + 1))
    _running(np.multiply, 1.0 - stop, 1, out=reach[:, 1:])
    rho = reach[rows, a]
    # The positives of every group, group by group (cells in row-major order).
    flat = np.flatnonzero(stop > 0)
    flat = flat[flat % span <= gend[flat // span, -1]]  # not past the last group
    pos_value = stop.ravel()[flat]
    pos_group = np.searchsorted(rows * span + a, flat, side="right") - 1
    p = np.bincount(pos_group, minlength=rows.shape[0])
    inside = np.minimum(size, cut - a)  # group positions that rank within the cut
    live = (p > 0) & (rho > 0)

    # Lower bound of each row's value: the first positive of each group lands
    # first with probability p / g (weights are positive before the cut).
    first_stop = np.bincount(pos_group, weights=pos_value, minlength=rows.shape[0])
    low = np.bincount(rows, weights=np.where(live, rho * first_stop / size * weights[a], 0.0),
                      minlength=n_rows)
    n_live = np.bincount(rows, weights=live, minlength=n_rows)
    budget = _BUDGET * low[rows] / np.maximum(n_live[rows], 1)

    which = np.flatnonzero(live)
    if not which.shape[0]:
        return np.zeros(n_rows)
    if (pos_value == 1).all():  # binary stops: the first positive ends the cascade
        stops, depth = np.ones((which.shape[0], 1)), np.ones(which.shape[0], dtype=np.intp)
    else:
        stops, depth = _all_levels(pos_value, p, a, inside, rho, budget, weights, which)
    total = np.zeros(rows.shape[0])
    total[which] = _positions(stops, depth, p[which], size[which], a[which], inside[which],
                              rho[which], budget[which], weights)
    return np.bincount(rows, weights=rho * total, minlength=n_rows)


def _first_groups(rank, col, weights, gend, stop) -> np.ndarray:
    """:func:`cascade_ties` for 0/1 stop probabilities, in O(cells) passes.

    The cascade stops at the first positive for sure, so the only group that
    is reached and holds positives (``live`` in :func:`cascade_ties`) is the
    group of each row's first positive, reached with probability 1. This
    computes that group's terms with the same operations as the general path
    (the same groups, in the same order, with the same budgets), so the
    values are equal bit for bit; it skips the per-positive arrays.
    """
    cut = weights.shape[0]
    gstart, _, csum = rank.tie_sums(col, cut)
    n_rows = stop.shape[0]
    has = stop > 0
    first = np.argmax(has, axis=1)
    at = np.minimum(first, cut - 1)  # a positive past the cut: the straddling group
    every = np.arange(n_rows)
    which = np.flatnonzero(has[every, first] & (first <= gend[:, -1]))
    out = np.zeros(n_rows)
    if not which.shape[0]:
        return out
    a = gstart[which, at[which]]
    size = gend[which, at[which]] - a + 1
    p_float = csum[which, a + size] - csum[which, a]  # exact counts
    p = p_float.astype(np.int64)
    rho = np.ones(which.shape[0])
    # cascade_ties' budget of a row with one live group, operation for operation
    budget = _BUDGET * (rho * p_float / size * weights[a]) / 1.0
    inside = np.minimum(size, cut - a)
    stops, depth = np.ones((which.shape[0], 1)), np.ones(which.shape[0], dtype=np.intp)
    out[which] = rho * _positions(stops, depth, p, size, a, inside, rho, budget, weights)
    return out


def _all_levels(pos_value, p, a, inside, rho, budget, weights, which):
    """:func:`_levels` for the groups ``which``, by classes of similar p:
    (S of shape (len(which), max D), D per group)."""
    offsets = np.concatenate(([0], np.cumsum(p)))
    parts = []
    for members in _classes(p[which]):
        parts.append((members, *_levels(pos_value, offsets, which[members], p, a, inside, rho,
                                        budget, weights)))
    depth = np.zeros(which.shape[0], dtype=np.intp)
    stops = np.zeros((which.shape[0], max(int(d.max()) for _, _, d in parts)))
    for members, s, d in parts:
        width = int(d.max())
        stops[members, :width] = s[:, :width]
        depth[members] = d
    return stops, depth


def _classes(sizes: np.ndarray):
    """Indices of ``sizes`` (>= 1) split by size up to powers of two (bounded
    padding; sizes up to 16 together: fewer, larger NumPy calls)."""
    bucket = np.maximum(np.ceil(np.log2(sizes)), 4).astype(np.intp)
    if (bucket == bucket[0]).all():
        yield np.arange(sizes.shape[0])
        return
    for b in np.unique(bucket):
        yield np.flatnonzero(bucket == b)


def _levels(pos_value, offsets, members, p_all, a_all, inside_all, rho_all, budget_all,
            weights):
    """Stop probabilities S[i] of the positives' cascade for the groups ``members``.

    With E_i[s] the mean over the i-subsets of all p positives of the product
    of continue probabilities c restricted to the first s positives (the
    i-subsets inside that prefix, normalised by C(p, i)), and F_i[s] the same
    for the (i + 1)-subsets inside the prefix with one member marked as the
    stop (R of the marked one times c of the others, normalised by
    (p - i) C(p, i)):

        E_i[s] = i / (p - i + 1) * sum_{u<=s} c_u E_{i-1}[u - 1]
        F_i[s] = 1 / (p - i) * sum_{u<=s} (i c_u F_{i-1}[u - 1] + R_u E_i[u - 1])

    M[i] = E_i[p] and S[i] = F_i[p]. Level i is skipped, and the group's
    levels end, when the positives from the i-th on can no longer add more
    than the group's budget: they stop at ranks >= a + i, so they add at most
    rho * M[i] * weights[a + i]. Returns (S of shape (n, D), D per group).
    """
    p = p_all[members]
    width = int(p.max())
    cols = np.arange(width)
    counts = np.minimum(p, inside_all[members])  # positives that can rank inside the cut
    where = offsets[members][:, None] + np.minimum(cols, p[:, None] - 1)
    filled = cols < p[:, None]
    r = np.where(filled, pos_value[where], 0.0)
    c = np.where(filled, 1.0 - r, 0.0)  # padding: neither continues nor stops
    n_levels = int(counts.max())
    stops = np.zeros((members.shape[0], n_levels))
    depth = np.zeros(members.shape[0], dtype=np.intp)
    # Per group and level: the factors of E_i and F_i, and the weight of rank a + i.
    level = np.arange(n_levels)
    grow_by = level / np.maximum(p[:, None] - level + 1, 1)
    f_by = np.maximum(p[:, None] - level, 1).astype(float)
    rank_i = a_all[members][:, None] + level
    cut = weights.shape[0]
    w_at = np.where(rank_i < cut, weights[np.minimum(rank_i, cut - 1)], 0.0)
    more = level < counts[:, None]
    rho, budget = rho_all[members], budget_all[members]
    left = slice(None)  # groups still computing, as rows of the arrays (all, then indices)
    e = np.ones((members.shape[0], width + 1))
    f = None
    for i in range(n_levels):
        if i:
            grow = np.empty_like(e)
            grow[:, 0] = 0.0
            np.multiply(c, e[:, :-1], out=grow[:, 1:])
            _running(np.add, grow[:, 1:], 1)
            grow *= grow_by[:, i:i + 1]
            keep = more[:, i] & (rho * grow[:, -1] * w_at[:, i] > budget)
            if not keep.all():
                left = np.flatnonzero(keep) if isinstance(left, slice) else left[keep]
                c, r, grow, f = c[keep], r[keep], grow[keep], f[keep]
                grow_by, f_by, w_at, more = grow_by[keep], f_by[keep], w_at[keep], more[keep]
                rho, budget = rho[keep], budget[keep]
                if not left.shape[0]:
                    break
            e = grow
        f_next = np.empty_like(e)
        f_next[:, 0] = 0.0
        terms = np.multiply(r, e[:, :-1], out=f_next[:, 1:])
        if i:
            terms += i * c * f[:, :-1]
        _running(np.add, terms, 1)
        f = f_next
        f /= f_by[:, i:i + 1]
        stops[left, i] = f[:, -1]
        depth[left] = i + 1
    return stops, depth


def _window(depth, p, size, a, rho, budget, weights) -> np.ndarray:
    """How many zero counts y = 0..Y-1 to look at, per group.

    The positives 0..D-1 sit beyond their first ``Y`` zero counts with
    probability at most P(Z_{D-1} >= Y) = P(X <= D - 1), X the positives among
    the first n = D - 1 + Y positions. Hoeffding's inequality, which holds for
    sampling without replacement (Hoeffding, 1963, §6), bounds it by
    exp(-2 (n q - D + 1)**2 / n) with q = p / g; the positions left out add at
    most rho * weights[a] * that bound, kept below the group's budget.
    """
    q = p / size
    with np.errstate(divide="ignore"):
        log_inv = np.log(rho * weights[a]) - np.log(budget)
    half = np.maximum(np.nan_to_num(log_inv, posinf=np.inf), 0.0) / 2.0
    root = (np.sqrt(half) + np.sqrt(half + 4.0 * q * (depth - 1))) / (2.0 * q)
    with np.errstate(over="ignore", invalid="ignore"):
        n = np.ceil(root * root)
    return np.where(np.isfinite(n), np.clip(n - (depth - 1), 1.0, 2.0**62), 2.0**62)


def _positions(stops, depth, p, size, a, inside, rho, budget, weights) -> np.ndarray:
    """sum_i S[i] sum_y P_i(y) weights[a + i + y] for each group (see module docs).

    Groups are computed in batches (:func:`_batches`); a group's value depends
    on that group only, not on the batch: sums run in order along the padded
    axes (padding adds exact zeros), and the chunks of :func:`_scaled_cumprod`
    are the group's own. So a query gives the same bits evaluated alone, in
    chunks or with others.
    """
    z = size - p
    span = np.minimum(np.minimum(z + 1, inside), _window(depth, p, size, a, rho, budget,
                                                          weights)).astype(np.intp)
    out = np.zeros(p.shape[0])
    for members, step in _batches(span, size, p, depth):
        out[members] = _positions_block(stops[members], depth[members], p[members],
                                        z[members], size[members], a[members],
                                        inside[members], span[members], weights, step)
    return out


def _batches(span, size, p, depth):
    """``(members, step)`` batches of groups: by class of span; groups of up
    to ``_SMALL_GROUP`` documents (step None: :func:`_positions_small`) in
    runs of at most ``_CELLS`` cells, larger ones by the chunk length ``step``
    of :func:`_scaled_cumprod`, from their own smallest ratio (the last one:
    the ratios fall with y)."""
    small = size <= _SMALL_GROUP
    steps = None
    if not small.all():
        z, last = size - p, span - 1
        tail = np.where(last > 0, (z - last + 1) / np.maximum(size - last, 1), 1.0)
        smallest = np.minimum(p / size, tail)
        steps = np.maximum(900 // np.maximum(1.0, -np.log2(smallest)), 1).astype(np.int64)
        steps[small] = 0
    for members in _classes(span):
        key = None if steps is None else steps[members]
        for step in [0] if key is None else np.unique(key).tolist():
            part = members if key is None else members[key == step]
            if step:
                yield part, step
                continue
            cells = int(span[part].max()) * int(depth[part].max())
            rows = max(1, _CELLS // cells)
            for lo in range(0, part.shape[0], rows):
                yield part[lo:lo + rows], None


def _positions_block(stops, depth, p, z, size, a, inside, span, weights, step) -> np.ndarray:
    width, levels = int(span.max()), int(depth.max())
    y = np.arange(width)
    use = y < span[:, None]
    # P_0(y) = (p / g) prod_{u<y} (z - u) / (g - 1 - u), as mantissa * 2**exponent.
    ratio = np.where(use, (z[:, None] - y + 1) / np.maximum(size[:, None] - y, 1), 1.0)
    ratio[:, 0] = p / size
    if step is None:
        return _positions_small(ratio, stops, depth, p, z, a, inside, use, weights)
    mant, expo = _scaled_cumprod(ratio, step)
    mant[~use] = 0.0
    n_weights = weights.shape[0]
    total = np.zeros(p.shape[0])
    for i in range(levels):
        if i:
            ratio_i = ((i + y) * (p[:, None] - i)) / (
                i * np.maximum(z[:, None] - y + p[:, None] - i, 1))
            mant *= np.where(use, ratio_i, 0.0)
            mant, more = np.frexp(mant)
            expo += more
        rank_of = a[:, None] + i + y
        at = np.where((rank_of < a[:, None] + inside[:, None]) & use,
                      weights[np.minimum(rank_of, n_weights - 1)], 0.0)
        w_i = _running(np.add, np.ldexp(mant, expo) * at, 1)[:, -1]
        total += np.where(i < depth, stops[:, i] * w_i, 0.0)
    return total


def _positions_small(ratio, stops, depth, p, z, a, inside, use, weights) -> np.ndarray:
    """:func:`_positions_block` for groups of at most ``_SMALL_GROUP`` documents,
    all levels at once: every P_i(y) is then at least 1 / C(g, p) >= 2**-g, a
    normal float64, so plain running products give the same bits as the
    mantissa-exponent ones (scaling by powers of two commutes with rounding)."""
    n, width = ratio.shape
    levels = int(depth.max())
    y = np.arange(width)
    i = np.arange(1, levels)[:, None]
    # P_0(y), then the ratios P_i(y) / P_{i-1}(y), zero past a group's depth
    chain = np.empty((n, levels, width))
    _running(np.multiply, ratio, 1, out=chain[:, 0])
    pc, zc = p[:, None, None], z[:, None, None]
    chain[:, 1:] = ((i + y) * (pc - i)) / (i * np.maximum(zc - y + pc - i, 1))
    chain *= use[:, None, :]
    chain[:, 1:] *= i < depth[:, None, None]
    _running(np.multiply, chain, 1)
    rank_of = a[:, None, None] + np.arange(levels)[:, None] + y
    inside_cut = (rank_of < (a + inside)[:, None, None]) & use[:, None, :]
    chain *= np.where(inside_cut, weights[np.minimum(rank_of, weights.shape[0] - 1)], 0.0)
    _running(np.add, chain, 2)
    terms = np.where(np.arange(levels) < depth[:, None], stops[:, :levels] * chain[:, :, -1],
                     0.0)
    return _running(np.add, terms, 1)[:, -1]


def _scaled_cumprod(ratio: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Running products along axis 1 as ``mantissa * 2**exponent`` (no
    underflow): products of chunks of ``step`` ratios (short enough not to
    underflow: step * -log2(smallest ratio) <= 900), renormalised between
    chunks."""
    n, width = ratio.shape
    mant = np.empty_like(ratio)
    expo = np.zeros(ratio.shape, dtype=np.int64)
    carry_m, carry_e = np.ones(n), np.zeros(n, dtype=np.int64)
    for lo in range(0, width, step):
        hi = min(lo + step, width)
        block = _running(np.multiply, ratio[:, lo:hi], 1, out=np.empty((n, hi - lo)))
        block *= carry_m[:, None]
        m, e = np.frexp(block)
        mant[:, lo:hi] = m
        expo[:, lo:hi] = e + carry_e[:, None]
        carry_m, carry_e = m[:, -1], expo[:, hi - 1]
    return mant, expo
