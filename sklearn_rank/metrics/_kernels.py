"""Per-block metric kernels, gains and discounts.

A kernel takes a :class:`~sklearn_rank.metrics._engine.Ranking` (one block of
ranked queries), the metric's resolved options and its cut-off ``k``, and
returns ``(values, empty)``: one value per query of the block and a mask of the
queries the metric cannot judge (no relevant document). The empty-query policy
and the averaging over queries are applied later, once, by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from ._ties import cascade_ties

__all__ = ["KERNELS", "check_grades", "check_labels", "discount_vector", "gain_column"]

_LN2 = math.log(2.0)
# Gains and discounts whose largest value per query lies in [1/_SAFE, _SAFE]
# (or is 0) sum without overflow or loss to underflow; others are scaled by a
# power of two (exact) where a ratio is computed (NDCG).
_SAFE = 2.0**400


# --------------------------------------------------------------------------
# Gains
# --------------------------------------------------------------------------


def _exponential(labels):
    """2**l - 1 (inf beyond 1023: only the scale-free NDCG accepts such labels)."""
    with np.errstate(over="ignore"):
        gains = np.exp2(labels)
    gains -= 1.0
    fraction = (labels > 0) & (labels < 1)
    if fraction.any():  # 2**l - 1 cancels for small l
        gains[fraction] = np.expm1(labels[fraction] * _LN2)
    return gains


def _exponential_scaled(labels: np.ndarray) -> np.ndarray | None:
    """(2**l - 1) / 2**e per row of a (q, w) block of labels, e an integer near
    the row's largest label when that label is >= 400 (computed as
    2**(l - e) - 2**-e, so labels >= 1024 work), or a power of two scaling
    tiny labels (< 2**-400) up; None when no row needs it."""
    top = labels.max(axis=1, keepdims=True)
    big = top >= 400
    tiny = (top > 0) & (top < 1 / _SAFE)
    if not (big.any() or tiny.any()):
        return None
    shift = np.where(big, np.floor(top), 0.0)
    with np.errstate(over="ignore"):
        out = np.exp2(labels - shift) - np.exp2(-shift)
    low = (labels > 0) & (labels < 1)  # (label 0 gives exactly 0 above)
    if low.any():
        down = np.minimum(shift, 2000).astype(np.int64)  # (2**-2000: 0 anyway)
        out = np.where(low, np.ldexp(np.expm1(labels * _LN2), -down), out)
    if tiny.any():  # l < 2**-400: 2**l - 1 = l ln 2 to float64 precision
        up = np.frexp(np.where(tiny, top, 1.0))[1]
        out = np.where(tiny, np.ldexp(labels, -up) * _LN2, out)
    return out


def _rows_scaled(values: np.ndarray) -> np.ndarray | None:
    """Each row of non-negative ``values`` divided by a power of two near its
    maximum when that maximum is outside [1/_SAFE, _SAFE]; None if none is."""
    top = values.max(axis=1, keepdims=True)
    out_of_range = (top >= _SAFE) | ((top > 0) & (top < 1 / _SAFE))
    if not out_of_range.any():
        return None
    shift = np.where(out_of_range, np.frexp(top)[1], 0)
    return np.ldexp(values, -shift)


def _linear(labels):
    return labels


def _lookup(table: np.ndarray):
    def gain(labels):
        return table[labels.astype(np.intp)]

    return gain


def _mapping(keys: np.ndarray, values: np.ndarray):
    def gain(labels):
        return values[np.searchsorted(keys, labels)]

    return gain


def gain_column(gain):
    """``(key, func)``: a hashable cache key and the vectorised label -> gain map."""
    if isinstance(gain, str):
        return ("gain", gain), _exponential if gain == "exponential" else _linear
    if callable(gain):
        return ("gain", gain), gain
    if isinstance(gain, Mapping) or _is_pairs(gain):
        items = sorted(dict(gain).items())
        keys = np.array([k for k, _ in items], dtype=np.float64)
        values = np.array([v for _, v in items], dtype=np.float64)
        return ("gain", tuple(items)), _mapping(keys, values)
    table = np.asarray(gain, dtype=np.float64)
    return ("gain", tuple(table.tolist())), _lookup(table)


def _is_pairs(gain) -> bool:
    """A mapping frozen into a tuple of (label, gain) pairs by the spec."""
    return (isinstance(gain, tuple) and len(gain) > 0
            and all(isinstance(p, tuple) and len(p) == 2 for p in gain))


def check_labels(data, gain, metric: str) -> None:
    """Check that every label has a finite non-negative gain under ``gain``."""
    labels = data.labels
    lo = labels.min()
    if lo < 0:
        bad = labels < 0
        raise ValueError(
            f"y_true has {int(bad.sum())} negative label(s) (first in query "
            f"{data.first_qid(bad)!r}); {metric} needs relevance labels >= 0 "
            "(negative gains break 0 <= NDCG <= 1). Clip or shift the labels."
        )
    if isinstance(gain, str):
        # Any finite label works: NDCG is computed scale-free, and a DCG or CG
        # that overflows float64 is refused once computed (overflow_error).
        return
    if callable(gain):
        key, func = gain_column(gain)
        values = np.asarray(func(labels.copy()), dtype=np.float64)
        if values.shape != labels.shape:
            raise ValueError(
                f"gain callable must return one gain per label (an array of shape "
                f"{labels.shape}), got shape {values.shape}."
            )
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise ValueError(
                f"gain callable returned {int(bad.sum())} negative, NaN or infinite "
                f"gain(s) (first in query {data.first_qid(bad)!r}); gains must be "
                "finite and >= 0."
            )
        data.column(key, lambda _: values)  # computed once: keep it
        return
    if isinstance(gain, Mapping) or _is_pairs(gain):
        table = dict(gain)
        keys = np.array(sorted(table), dtype=np.float64)
        missing = ~np.isin(labels, keys)
        if missing.any():
            raise ValueError(
                f"y_true has {int(missing.sum())} label(s) with no entry in the gain "
                f"mapping (first in query {data.first_qid(missing)!r}, label "
                f"{labels[missing][0]:g}); add them to the mapping."
            )
        values = np.array([table[k] for k in sorted(table)], dtype=np.float64)
        _check_gain_values(values)
        return
    table = np.asarray(gain, dtype=np.float64)
    _check_gain_values(table)
    bad = (labels != np.floor(labels)) | (labels >= table.shape[0])
    if bad.any():
        raise ValueError(
            f"y_true has {int(bad.sum())} label(s) that are not integers below "
            f"len(gain) = {table.shape[0]} (first in query {data.first_qid(bad)!r}); "
            "a gain array maps label i to gain[i], like LightGBM's label_gain."
        )


def check_grades(data, max_grade: float, metric: str) -> None:
    """ERR's grades: labels in [0, max_grade]."""
    labels = data.labels
    for bad, what in ((labels < 0, "negative label(s)"),
                      (labels > max_grade, f"label(s) above max_grade={max_grade:g}")):
        if bad.any():
            raise ValueError(
                f"y_true has {int(bad.sum())} {what} (first in query {data.first_qid(bad)!r}); "
                f"{metric} needs grades 0..max_grade (ERR's stop probability is "
                "(2**label - 1) / 2**max_grade); pass max_grade >= the highest label."
            )


def _check_gain_values(values: np.ndarray) -> None:
    if values.ndim != 1 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(
            "gain must map labels to finite gains >= 0; got "
            f"{np.array2string(values, threshold=8)}."
        )


# --------------------------------------------------------------------------
# Discounts
# --------------------------------------------------------------------------


def discount_vector(discount, log_base: float, size: int, needed: int | None = None
                    ) -> np.ndarray:
    """Discount of ranks 1..size, of which ranks beyond ``needed`` hold no
    document (a block's padding): an array or callable is asked for the
    ``needed`` ones only, the others are 0."""
    if needed is not None and needed < size and not isinstance(discount, str):
        return np.concatenate((discount_vector(discount, log_base, needed),
                               np.zeros(size - needed)))
    ranks = np.arange(1, size + 1, dtype=np.float64)
    if isinstance(discount, str):
        if discount == "log2":
            # 1 / log_b(r + 1); b = 2 is the standard discount.
            return np.log(log_base) / np.log1p(ranks)
        # Järvelin & Kekäläinen (2002): 1 / max(1, log_b r).
        return 1.0 / np.maximum(1.0, np.log(ranks) / np.log(log_base))
    if callable(discount):
        values = np.asarray(discount(ranks), dtype=np.float64)
        if values.shape != ranks.shape or not np.isfinite(values).all() or (values < 0).any():
            raise ValueError(
                "discount callable must return finite discounts >= 0, one per rank "
                f"(called with ranks 1..{size}); got {np.array2string(values, threshold=8)}."
            )
        return values
    values = np.asarray(discount, dtype=np.float64)
    if values.ndim != 1 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(
            "discount array must be 1-D with finite discounts >= 0 (discount[r - 1] "
            "for rank r)."
        )
    if values.shape[0] < size:
        raise ValueError(
            f"discount array has {values.shape[0]} values but ranks up to {size} are "
            f"needed; pass k <= {values.shape[0]} or a longer array."
        )
    return values[:size]


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


def _gains(rank, p, scaled: bool = False):
    """Key and function of the gain column, its block made ready in ``rank``.

    The named gains are computed from the block's labels (no extra gather);
    mappings and callables are evaluated once on all labels and gathered.
    With ``scaled`` (for ratios: NDCG), a query whose largest gain is outside
    [2**-400, 2**400] has its gains divided by a power of two near it, which
    changes no ratio and keeps every sum finite (labels >= 1024 included);
    the other queries keep their gains bit for bit.
    """
    key, func = gain_column(p["gain"])
    named = isinstance(p["gain"], str)
    plain = rank.derived if named else rank.unranked
    if not scaled:
        plain(key, func)
        return key, func

    def make():
        if named and p["gain"] == "exponential":
            return _exponential_scaled(rank.unranked(("label",), _identity))
        return _rows_scaled(plain(key, func))

    scaled_key = ("scaled", key)
    if rank.cached(("needs", scaled_key), lambda: rank.column(scaled_key, make) is not None):
        return scaled_key, None
    plain(key, func)
    return key, func


def _identity(x):
    return x


def _unit_scaled(d: np.ndarray) -> np.ndarray:
    """Discounts divided by a power of two near their maximum if it is outside
    [2**-400, 2**400] (changes no ratio, keeps sums finite)."""
    out = _rows_scaled(d[None, :])
    return d if out is None else out[0]


def _rowdot(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise dot products whose result for a row depends on that row only.

    BLAS matrix-vector products block rows differently for different numbers
    of rows, so a query's value could change in the last bit with the queries
    sharing its block; a row-wise sum does not, which makes chunked and
    distributed evaluation give the same numbers as in-memory evaluation.
    """
    return (values * weights).sum(axis=1)


def _ideal(rank, key, func) -> np.ndarray:
    """Gains of each query sorted descending (the ideal ranking)."""
    return rank.cached(("ideal", key),
                       lambda: np.sort(rank.unranked(key, func), axis=1)[:, ::-1])


def _cut(rank, k) -> int:
    return rank.width if k is None else min(k, rank.width)


def _discounted(rank, p, k, scaled: bool = False):
    key, func = _gains(rank, p, scaled)
    kk = _cut(rank, k)
    d = discount_vector(p["discount"], p["log_base"], kk, min(kk, int(rank.lengths.max())))
    if scaled:
        d = _unit_scaled(d)
    dcg = _rowdot(rank.expected(key, func, kk), d)
    ideal = _ideal(rank, key, func)
    idcg = _rowdot(ideal[:, :kk], d)
    return dcg, idcg, ideal[:, 0] <= 0


def _cg(rank, p, k):
    key, func = _gains(rank, p)
    cg = rank.expected(key, func, _cut(rank, k)).sum(axis=1)
    return cg, _ideal(rank, key, func)[:, 0] <= 0


def _dcg(rank, p, k):
    dcg, _, empty = _discounted(rank, p, k)
    return dcg, empty


def _ndcg(rank, p, k):
    # A ratio: computed scale-free, so any finite gains give the right number.
    dcg, idcg, empty = _discounted(rank, p, k, scaled=True)
    empty = empty | (idcg <= 0)
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=~empty), empty


# -- binary relevance ---------------------------------------------------------


def _flags(rank, key, func):
    """Make the block of a 0/1 column ready: ``func`` of the labels, times the
    judged mask (TREC mode: unjudged documents are neither relevant nor judged
    non-relevant)."""
    if rank.data.judged is None:
        rank.derived(key, func)
    else:
        rank.column(key, lambda: rank.derived(("unmasked", key), func) * rank.judged)
    return key, func


def _relevance(rank, p):
    """Key and function of the relevance flags (label >= threshold)."""
    threshold = p["threshold"]

    def func(labels):
        return (labels >= threshold).astype(np.float64)

    return _flags(rank, ("rel", threshold), func)


def _count(rank, key, func) -> np.ndarray:
    return rank.cached(("count", key), lambda: rank.unranked(key, func).sum(axis=1))


def _n_relevant(rank, p) -> np.ndarray:
    return _count(rank, *_relevance(rank, p))


def _flagged(rank, key, func):
    """The documents whose ``func(labels)`` is nonzero, in rank order (exact
    for untied rankings): ``(rows, cols, first, flat)``, their rows and
    0-based ranks row by row, where each row starts among them (q + 1
    entries) and their positions in the raveled block. Few documents are
    relevant or judged, so metrics that sum over them (AP, R-precision,
    bpref) work on these short arrays instead of running sums over the block.
    """
    def make():
        flat = np.flatnonzero(rank.ranked(key, func) != 0)  # (a bool array: much faster)
        rows, cols = np.divmod(flat, rank.width)
        return rows, cols, np.searchsorted(rows, np.arange(rank.order.shape[0] + 1)), flat

    return rank.cached(("flagged", key), make)


def _row_sums(rows: np.ndarray, values: np.ndarray, n_rows: int) -> np.ndarray:
    """Sum of ``values`` per row (row by row, in order: each row's sum depends
    on that row only)."""
    return np.bincount(rows, weights=values, minlength=n_rows).astype(np.float64, copy=False)


def _flagged_above(flagged, rows: np.ndarray, cols: np.ndarray, width: int) -> np.ndarray:
    """How many of the ``flagged`` documents rank above column ``cols`` of ``rows``."""
    _, _, first, flat = flagged
    return np.searchsorted(flat, rows * width + cols) - first[rows]


def _hits(rank, p, k) -> np.ndarray:
    """Expected number of relevant documents in the top k."""
    key, func = _relevance(rank, p)
    return rank.expected(key, func, _cut(rank, k)).sum(axis=1)


def _precision_denominator(rank, p, k) -> np.ndarray:
    """k (missing ranks of short lists count as non-relevant), or min(k, n)
    with ``capped`` (XGBoost); the retrieved list when k is None."""
    n = rank.lengths if rank.retrieved is None else rank.retrieved
    if k is None:
        return n.astype(np.float64)
    if p["capped"]:
        return np.minimum(min(k, rank.width), n).astype(np.float64)
    return np.full(n.shape[0], float(k) if k < 2**1000 else math.inf)  # any int k


def _precision(rank, p, k):
    denominator = _precision_denominator(rank, p, k)
    value = np.divide(_hits(rank, p, k), denominator, out=np.zeros(denominator.shape),
                      where=denominator > 0)
    return value, _n_relevant(rank, p) == 0


def _recall(rank, p, k):
    n_rel = _n_relevant(rank, p)
    empty = n_rel == 0
    return np.divide(_hits(rank, p, k), n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


def _f1(rank, p, k):
    # The harmonic mean of hits/D and hits/R is 2 hits / (D + R): linear in the
    # hits, so its expected value over tie orderings is exact too.
    n_rel = _n_relevant(rank, p)
    hits = _hits(rank, p, k)
    value = np.divide(2 * hits, _precision_denominator(rank, p, k) + n_rel,
                      out=np.zeros(n_rel.shape), where=hits > 0)
    return value, n_rel == 0


def _r_precision(rank, p, k):
    key, func = _relevance(rank, p)
    n_rel = _n_relevant(rank, p)
    cut = np.maximum(n_rel, 1).astype(np.intp)  # (R <= the width: R documents are judged)
    if rank.tied:
        hits = np.cumsum(rank.expected(key, func), axis=1)
        at_r = np.take_along_axis(hits, cut[:, None] - 1, axis=1)[:, 0]
    else:
        at_r = _flagged_above(_flagged(rank, key, func), np.arange(cut.shape[0]), cut,
                              rank.width)
    empty = n_rel == 0
    return np.divide(at_r, n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


def _tie_groups_stats(rank, key, func, cut):
    """For the tie rows, per rank r < cut: the group's first column a, size g,
    number h of flagged (``func``) members and flagged documents above it."""
    gstart, gend, csum = rank.tie_sums(key, func, cut)
    above = np.take_along_axis(csum, gstart, axis=1)
    h = np.take_along_axis(csum, gend + 1, axis=1) - above
    g = (gend - gstart + 1).astype(np.float64)
    return gstart, g, h, above


def _ap(rank, p, k):
    """Average precision: sum over relevant ranks r <= k of P@r, over R (or min(R, k))."""
    key, func = _relevance(rank, p)
    cut = _cut(rank, k)

    def make():
        # The n-th relevant document, at rank r, adds P@r = n / r.
        rows, cols, first, _ = _flagged(rank, key, func)
        nth = np.arange(1, rows.shape[0] + 1) - first[rows]
        if cut < rank.width:
            keep = cols < cut
            rows, cols, nth = rows[keep], cols[keep], nth[keep]
        total = _row_sums(rows, nth * (1.0 / (cols + 1)), first.shape[0] - 1)
        if rank.tied:
            # For r in a tie group starting at a, of size g with h relevant
            # members, a random order gives P(rel_r) = h/g and P(rel_r, rel_i) =
            # h (h - 1) / (g (g - 1)) for another member i above r.
            a, g, h, above = _tie_groups_stats(rank, key, func, cut)
            both = np.divide(h * (h - 1), g * (g - 1), out=np.zeros_like(g), where=g > 1)
            terms = h / g * (above + 1) + (np.arange(cut) - a) * both
            total[rank.tie_rows] = _rowdot(terms, 1.0 / np.arange(1, cut + 1))
        return total

    total = rank.cached(("ap", key, cut, rank.ties), make)
    n_rel = _n_relevant(rank, p)
    denominator = (np.minimum(n_rel, min(k, rank.width)) if (p.get("capped") and k is not None)
                   else n_rel)
    empty = n_rel == 0
    return np.divide(total, denominator, out=np.zeros(n_rel.shape), where=~empty), empty


def _non_relevant_above(rank, p):
    """For each relevant retrieved document, in rank order: its row and the
    judged non-relevant documents ranked above it (exact for untied
    rankings); and each query's number of judged non-relevant documents."""
    rows, cols, first, _ = _flagged(rank, *_relevance(rank, p))
    relevant_above = np.arange(rows.shape[0]) - first[rows]
    if rank.data.judged is None:  # every document is judged
        judged_above, n_judged = cols, rank.lengths
    else:
        judged = _flagged(rank, ("judged",), None)
        judged_above = _flagged_above(judged, rows, cols, rank.width)
        n_judged = _count(rank, ("judged",), None)
    return rows, judged_above - relevant_above, n_judged - _n_relevant(rank, p)


def _tie_non_relevant(rank, p):
    """Tie rows: P(rel_r) and the distribution of non-relevant members above r.

    Given that the document at r is relevant, the number C of non-relevant
    members of its group above r is hypergeometric: j draws (the members
    above) from the g - 1 others, g - h of them non-relevant. Returns
    ``(p_rel, before, j, g, h)`` with ``before`` the non-relevant documents
    above the whole group.
    """
    key, func = _relevance(rank, p)
    a, g, h, above = _tie_groups_stats(rank, key, func, rank.width)
    return h / g, a - above, np.arange(rank.width) - a, g, h


def _rank_eff(rank, p, k):
    rows, above, n_nonrel = _non_relevant_above(rank, p)
    total = _row_sums(rows, above, n_nonrel.shape[0])
    if rank.tied:
        p_rel, before, j, g, h = _tie_non_relevant(rank, p)
        mean_c = np.divide(j * (g - h), g - 1, out=np.zeros_like(g), where=g > 1)
        total[rank.tie_rows] = (p_rel * (before + mean_c)).sum(axis=1)
    n_rel = _n_relevant(rank, p)
    empty = n_rel == 0
    # (1/R) sum over relevant retrieved r of (1 - |non-relevant above r| / N):
    # a relevant document the run did not retrieve (TREC runs) earns nothing;
    # with no judged non-relevant document at all (N = 0) each earns 1.
    retrieved_relevant = np.diff(_flagged(rank, *_relevance(rank, p))[2])
    penalty = np.divide(total, n_nonrel, out=np.zeros(n_rel.shape), where=n_nonrel > 0)
    value = np.divide(retrieved_relevant - penalty, n_rel, out=np.zeros(n_rel.shape),
                      where=~empty)
    return value, empty


def _bpref(rank, p, k):
    """trec_eval's bpref: (1/R) sum over relevant retrieved r of
    (1 - min(|judged non-relevant above r|, R) / min(N, R))."""
    rows, above, n_nonrel = _non_relevant_above(rank, p)
    n_rel = _n_relevant(rank, p)
    denominator = np.minimum(n_nonrel, n_rel)
    penalty = np.divide(np.minimum(above, n_rel[rows]), denominator[rows],
                        out=np.zeros(above.shape), where=denominator[rows] > 0)
    total = _row_sums(rows, 1.0 - penalty, n_rel.shape[0])
    if rank.tied:
        total[rank.tie_rows] = _bpref_ties(rank, p, n_rel, denominator)
    empty = n_rel == 0
    return np.divide(total, n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


def _bpref_ties(rank, p, n_rel, denominator) -> np.ndarray:
    """bpref's sum for the tie rows, in closed form per tie group, O(1) each.

    In a group with h relevant and n non-relevant members, below b judged
    non-relevant documents (every document is judged in arrays), the sum over
    its relevant members t of min(b + N_t, R), N_t the non-relevant members
    above t, is sum_{y<R} #{t: b + N_t > y}. A relevant member precedes the
    (z + 1)-th non-relevant one with probability (z + 1) / (n + 1) (its place
    among the n + 1 is uniform), so E #{t: N_t > z} = h (n - z) / (n + 1) for
    0 <= z < n, h for z < 0 and 0 for z >= n; summed over y = b + z:

        h min(b, R) + h (Z n - Z (Z - 1) / 2) / (n + 1),  Z = clip(R - b, 0, n).
    """
    key, func = _relevance(rank, p)
    rows, a, size = rank.tie_group_list(rank.width)
    _, _, csum = rank.tie_sums(key, func, rank.width)
    above = csum[rows, a]
    h = csum[rows, a + size] - above
    n = size - h
    b = a - above
    cap = n_rel[rank.tie_rows][rows]
    z = np.clip(cap - b, 0, n)
    expected = h * np.minimum(b, cap) + h * (z * n - z * (z - 1) / 2) / (n + 1)
    den = denominator[rank.tie_rows][rows]
    penalty = np.divide(expected, den, out=np.zeros(expected.shape), where=den > 0)
    return np.bincount(rows, weights=h - penalty, minlength=rank.tie_rows.shape[0])


# -- cascades: ERR, reciprocal rank, hit rate -------------------------------------


def _cascade(rank, key, func, weights) -> np.ndarray:
    """Sum over ranks r of weights[r - 1] * P(the user stops at r).

    A user scans the ranking and stops at each document with probability
    ``func(label)`` (ERR's cascade; for binary flags, at the first relevant
    document). Under ``ties="average"`` the value is the exact expectation
    over the orderings of tied documents (:func:`~._ties.cascade_ties`).
    """
    cut = weights.shape[0]
    stop = rank.ranked(key, func, cut)
    reach = np.ones_like(stop)
    np.cumprod(1.0 - stop[:, :-1], axis=1, out=reach[:, 1:])
    value = _rowdot(stop * reach, weights)
    if rank.tied:
        value[rank.tie_rows] = cascade_ties(rank, key, func, weights)
    return value


def _binary_cascade(rank, p, k, weights_of):
    """A cascade with 0/1 stop probabilities: the weight of the first relevant rank."""
    key, func = _relevance(rank, p)
    cut = _cut(rank, k)
    weights = weights_of(cut)
    rel = rank.ranked(key, func, cut)
    first = np.argmax(rel, axis=1)
    value = np.where(rel[np.arange(rel.shape[0]), first] > 0, weights[first], 0.0)
    if rank.tied:
        value[rank.tie_rows] = cascade_ties(rank, key, func, weights)
    return value, _n_relevant(rank, p) == 0


def _hit_rate(rank, p, k):
    return _binary_cascade(rank, p, k, np.ones)


def _reciprocal_rank(rank, p, k):
    return _binary_cascade(rank, p, k, lambda cut: 1.0 / np.arange(1, cut + 1))


def stop_probability(labels, max_grade: float) -> np.ndarray:
    """ERR's (2**l - 1) / 2**max_grade for 0 <= l <= max_grade, without overflow.

    Computed as 2**(l - m) - 2**-m (exact for integer grades below 2**53) or,
    for l < 1, as 2**(l - m) (1 - 2**-l) (no cancellation); any max_grade works
    (a probability below 2**-1074 is 0).
    """
    labels = np.asarray(labels, dtype=np.float64)
    head = np.exp2(labels - max_grade)
    out = head - np.exp2(-max_grade)
    low = (labels > 0) & (labels < 1)  # (label 0 gives exactly 0 above)
    if low.any():
        out[low] = head[low] * -np.expm1(-labels[low] * _LN2)
    return out


def _err(rank, p, k):
    max_grade = p["max_grade"]
    key = ("err", max_grade)

    def func(labels):
        return stop_probability(labels, max_grade)

    rank.derived(key, func)
    cut = _cut(rank, k)
    value = _cascade(rank, key, func, 1.0 / np.arange(1, cut + 1))
    positive = rank.derived(("positive",), lambda labels: (labels > 0).astype(np.float64))
    return value, positive.sum(axis=1) == 0


KERNELS: dict[str, Callable] = {
    "cg": _cg,
    "dcg": _dcg,
    "ndcg": _ndcg,
    "p": _precision,
    "recall": _recall,
    "f1": _f1,
    "hit_rate": _hit_rate,
    "r_precision": _r_precision,
    "map": _ap,
    "gmap": _ap,
    "mrr": _reciprocal_rank,
    "err": _err,
    "rank_eff": _rank_eff,
    "bpref": _bpref,
}
