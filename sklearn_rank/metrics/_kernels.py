"""Per-block metric kernels, gains and discounts.

A kernel takes a :class:`~sklearn_rank.metrics._engine.Ranking` (one block of
ranked queries), the metric's resolved options and its cut-off ``k``, and
returns ``(values, empty)``: one value per query of the block and a mask of the
queries the metric cannot judge (no relevant document). The empty-query policy
and the averaging over queries are applied later, once, by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._blocks import flagged_above, row_sums, rowdot
from ._columns import JUDGED, POSITIVE, Gain, Relevant, Scaled, StopProbability, rows_scaled
from ._ties import cascade_ties

__all__ = ["KERNELS", "discount_vector"]


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


def _gain(rank, p, scaled: bool = False):
    """The gain column of the options; with ``scaled`` (for ratios: NDCG),
    its :class:`~._columns.Scaled` version where a query of the block needs it."""
    col = Gain.of(p["gain"])
    if scaled and rank.unranked(Scaled(col)) is not None:
        return Scaled(col)
    return col


def _unit_scaled(d: np.ndarray) -> np.ndarray:
    """Discounts divided by a power of two near their maximum if it is outside
    [2**-400, 2**400] (changes no ratio, keeps sums finite)."""
    out = rows_scaled(d[None, :])
    return d if out is None else out[0]


def _discounted(rank, p, k, scaled: bool = False):
    col = _gain(rank, p, scaled)
    kk = rank.cut(k)
    d = discount_vector(p["discount"], p["log_base"], kk, min(kk, int(rank.lengths.max())))
    if scaled:
        d = _unit_scaled(d)
    dcg = rowdot(rank.expected(col, kk), d)
    ideal = rank.ideal(col)
    idcg = rowdot(ideal[:, :kk], d)
    return dcg, idcg, ideal[:, 0] <= 0


def _cg(rank, p, k):
    col = _gain(rank, p)
    cg = rank.expected(col, rank.cut(k)).sum(axis=1)
    return cg, rank.ideal(col)[:, 0] <= 0


def _dcg(rank, p, k):
    dcg, _, empty = _discounted(rank, p, k)
    return dcg, empty


def _ndcg(rank, p, k):
    # A ratio: computed scale-free, so any finite gains give the right number.
    dcg, idcg, empty = _discounted(rank, p, k, scaled=True)
    empty = empty | (idcg <= 0)
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=~empty), empty


# -- binary relevance ---------------------------------------------------------


def _hits(rank, p, k) -> np.ndarray:
    """Expected number of relevant documents in the top k."""
    return rank.expected(Relevant(p["threshold"]), rank.cut(k)).sum(axis=1)


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
    return value, rank.count(Relevant(p["threshold"])) == 0


def _recall(rank, p, k):
    n_rel = rank.count(Relevant(p["threshold"]))
    empty = n_rel == 0
    return np.divide(_hits(rank, p, k), n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


def _f1(rank, p, k):
    # The harmonic mean of hits/D and hits/R is 2 hits / (D + R): linear in the
    # hits, so its expected value over tie orderings is exact too.
    n_rel = rank.count(Relevant(p["threshold"]))
    hits = _hits(rank, p, k)
    value = np.divide(2 * hits, _precision_denominator(rank, p, k) + n_rel,
                      out=np.zeros(n_rel.shape), where=hits > 0)
    return value, n_rel == 0


def _r_precision(rank, p, k):
    relevant = Relevant(p["threshold"])
    n_rel = rank.count(relevant)
    cut = np.maximum(n_rel, 1).astype(np.intp)  # (R <= the width: R documents are judged)
    if rank.tied:
        hits = np.cumsum(rank.expected(relevant), axis=1)
        at_r = np.take_along_axis(hits, cut[:, None] - 1, axis=1)[:, 0]
    else:
        at_r = flagged_above(rank.flagged(relevant), np.arange(cut.shape[0]), cut,
                             rank.width)
    empty = n_rel == 0
    return np.divide(at_r, n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


def _tie_groups_stats(rank, col, cut):
    """For the tie rows, per rank r < cut: the group's first column a, size g,
    number h of flagged (``col``) members and flagged documents above it."""
    gstart, gend, csum = rank.tie_sums(col, cut)
    above = np.take_along_axis(csum, gstart, axis=1)
    h = np.take_along_axis(csum, gend + 1, axis=1) - above
    g = (gend - gstart + 1).astype(np.float64)
    return gstart, g, h, above


def _ap(rank, p, k):
    """Average precision: sum over relevant ranks r <= k of P@r, over R (or min(R, k))."""
    relevant = Relevant(p["threshold"])
    cut = rank.cut(k)

    def make():
        # The n-th relevant document, at rank r, adds P@r = n / r.
        rows, cols, first, _ = rank.flagged(relevant)
        nth = np.arange(1, rows.shape[0] + 1) - first[rows]
        if cut < rank.width:
            keep = cols < cut
            rows, cols, nth = rows[keep], cols[keep], nth[keep]
        total = row_sums(rows, nth * (1.0 / (cols + 1)), first.shape[0] - 1)
        if rank.tied:
            # For r in a tie group starting at a, of size g with h relevant
            # members, a random order gives P(rel_r) = h/g and P(rel_r, rel_i) =
            # h (h - 1) / (g (g - 1)) for another member i above r.
            a, g, h, above = _tie_groups_stats(rank, relevant, cut)
            both = np.divide(h * (h - 1), g * (g - 1), out=np.zeros_like(g), where=g > 1)
            terms = h / g * (above + 1) + (np.arange(cut) - a) * both
            total[rank.tie_rows] = rowdot(terms, 1.0 / np.arange(1, cut + 1))
        return total

    total = rank.shared(("ap", relevant, cut), make)
    n_rel = rank.count(relevant)
    denominator = (np.minimum(n_rel, min(k, rank.width)) if (p.get("capped") and k is not None)
                   else n_rel)
    empty = n_rel == 0
    return np.divide(total, denominator, out=np.zeros(n_rel.shape), where=~empty), empty


def _non_relevant_above(rank, p):
    """For each relevant retrieved document, in rank order: its row and the
    judged non-relevant documents ranked above it (exact for untied
    rankings); and each query's number of judged non-relevant documents."""
    relevant = Relevant(p["threshold"])
    rows, cols, first, _ = rank.flagged(relevant)
    relevant_above = np.arange(rows.shape[0]) - first[rows]
    if not rank.has_judgments:  # every document is judged
        judged_above, n_judged = cols, rank.lengths
    else:
        judged_above = flagged_above(rank.flagged(JUDGED), rows, cols, rank.width)
        n_judged = rank.count(JUDGED)
    return rows, judged_above - relevant_above, n_judged - rank.count(relevant)


def _tie_non_relevant(rank, p):
    """Tie rows: P(rel_r) and the distribution of non-relevant members above r.

    Given that the document at r is relevant, the number C of non-relevant
    members of its group above r is hypergeometric: j draws (the members
    above) from the g - 1 others, g - h of them non-relevant. Returns
    ``(p_rel, before, j, g, h)`` with ``before`` the non-relevant documents
    above the whole group.
    """
    a, g, h, above = _tie_groups_stats(rank, Relevant(p["threshold"]), rank.width)
    return h / g, a - above, np.arange(rank.width) - a, g, h


def _rank_eff(rank, p, k):
    rows, above, n_nonrel = _non_relevant_above(rank, p)
    total = row_sums(rows, above, n_nonrel.shape[0])
    if rank.tied:
        p_rel, before, j, g, h = _tie_non_relevant(rank, p)
        mean_c = np.divide(j * (g - h), g - 1, out=np.zeros_like(g), where=g > 1)
        total[rank.tie_rows] = (p_rel * (before + mean_c)).sum(axis=1)
    relevant = Relevant(p["threshold"])
    n_rel = rank.count(relevant)
    empty = n_rel == 0
    # (1/R) sum over relevant retrieved r of (1 - |non-relevant above r| / N):
    # a relevant document the run did not retrieve (TREC runs) earns nothing;
    # with no judged non-relevant document at all (N = 0) each earns 1.
    retrieved_relevant = np.diff(rank.flagged(relevant)[2])
    penalty = np.divide(total, n_nonrel, out=np.zeros(n_rel.shape), where=n_nonrel > 0)
    value = np.divide(retrieved_relevant - penalty, n_rel, out=np.zeros(n_rel.shape),
                      where=~empty)
    return value, empty


def _bpref(rank, p, k):
    """trec_eval's bpref: (1/R) sum over relevant retrieved r of
    (1 - min(|judged non-relevant above r|, R) / min(N, R))."""
    rows, above, n_nonrel = _non_relevant_above(rank, p)
    n_rel = rank.count(Relevant(p["threshold"]))
    denominator = np.minimum(n_nonrel, n_rel)
    penalty = np.divide(np.minimum(above, n_rel[rows]), denominator[rows],
                        out=np.zeros(above.shape), where=denominator[rows] > 0)
    total = row_sums(rows, 1.0 - penalty, n_rel.shape[0])
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
    rows, a, size = rank.tie_group_list(rank.width)
    _, _, csum = rank.tie_sums(Relevant(p["threshold"]), rank.width)
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


def _cascade(rank, col, weights) -> np.ndarray:
    """Sum over ranks r of weights[r - 1] * P(the user stops at r).

    A user scans the ranking and stops at each document with probability
    ``col`` (ERR's cascade; for binary flags, at the first relevant
    document). Under ``ties="average"`` the value is the exact expectation
    over the orderings of tied documents (:func:`~._ties.cascade_ties`).
    """
    cut = weights.shape[0]
    stop = rank.ranked(col, cut)
    reach = np.ones_like(stop)
    np.cumprod(1.0 - stop[:, :-1], axis=1, out=reach[:, 1:])
    value = rowdot(stop * reach, weights)
    if rank.tied:
        value[rank.tie_rows] = cascade_ties(rank, col, weights)
    return value


def _binary_cascade(rank, p, k, weights_of):
    """A cascade with 0/1 stop probabilities: the weight of the first relevant rank."""
    relevant = Relevant(p["threshold"])
    cut = rank.cut(k)
    weights = weights_of(cut)
    rel = rank.ranked(relevant, cut)
    first = np.argmax(rel, axis=1)
    value = np.where(rel[np.arange(rel.shape[0]), first] > 0, weights[first], 0.0)
    if rank.tied:
        value[rank.tie_rows] = cascade_ties(rank, relevant, weights)
    return value, rank.count(relevant) == 0


def _hit_rate(rank, p, k):
    return _binary_cascade(rank, p, k, np.ones)


def _reciprocal_rank(rank, p, k):
    return _binary_cascade(rank, p, k, lambda cut: 1.0 / np.arange(1, cut + 1))


def _err(rank, p, k):
    cut = rank.cut(k)
    value = _cascade(rank, StopProbability(p["max_grade"]), 1.0 / np.arange(1, cut + 1))
    return value, rank.unranked(POSITIVE).sum(axis=1) == 0


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
