"""Average precision: MAP@k and its geometric mean GMAP (trec_eval's ``gm_map``).

Both read the same per-query AP values, computed once per block
(:meth:`~sklearn_rank.metrics._engine.blocks.Ranking.shared`). Each metric is its kernel, its
:class:`~sklearn_rank.metrics._definition.Metric` declaration and its public function; importing
the module registers them.
"""

from __future__ import annotations

import numpy as np

from .._definition import Metric, metric_function
from .._engine.blocks import row_sums, rowdot, tie_group_stats
from .._engine.columns import Relevant
from .._engine.ranking import in_trec_mode, ranked_relevant

__all__ = ["mean_average_precision_score", "gmap_score"]


_BINARY = ("threshold", "ties", "empty", "convention")
_CAPPABLE = ("k", "threshold", "capped", "ties", "empty", "convention")


def _ap(rank, p, k):
    """Average precision: sum over relevant ranks r <= k of P@r, over R (or min(R, k))."""
    relevant = ranked_relevant(p)  # (R: judged documents only)
    cut = rank.cut(k)
    trec = in_trec_mode(p)

    def precision_terms():
        # The n-th relevant document, at rank r, adds P@r = n / r (the terms of
        # every cut-off k: those of the ranks r <= k).
        rows, cols, first, _ = rank.flagged(relevant)
        nth = np.arange(1, rows.shape[0] + 1) - first[rows]
        # trec_eval divides n by r (the product with 1 / r can differ in the last bit)
        return rows, cols, (nth / (cols + 1.0) if trec else nth * (1.0 / (cols + 1)))

    def make():
        n_rows = rank.order.shape[0]
        if rank.tied and rank.tie_rows.shape[0] == n_rows:  # every row below
            total = np.empty(n_rows)
        else:
            rows, cols, precision = rank.shared(("ap_terms", relevant, trec), precision_terms)
            if cut < rank.width:
                keep = cols < cut
                rows, precision = rows[keep], precision[keep]
            total = row_sums(rows, precision, n_rows)
        if rank.tied:
            # For r in a tie group starting at a, of size g with h relevant
            # members, a random order gives P(rel_r) = h/g and P(rel_r, rel_i) =
            # h (h - 1) / (g (g - 1)) for another member i above r.
            a, g, h, above = tie_group_stats(rank, relevant, cut)
            both = np.divide(h * (h - 1), g * (g - 1), out=np.zeros_like(g), where=g > 1)
            terms = h / g * (above + 1) + (np.arange(cut) - a) * both
            total[rank.tie_rows] = rowdot(terms, 1.0 / np.arange(1, cut + 1))
        return total

    total = rank.shared(("ap", relevant, cut, trec), make)
    n_rel = rank.count(Relevant(p["threshold"]))
    denominator = (np.minimum(n_rel, min(k, rank.width)) if (p.get("capped") and k is not None)
                   else n_rel)
    empty = n_rel == 0
    if trec and k is None and (empty & (total > 0)).any():
        # trec_eval's map under a negative -l: unjudged documents counted by rank
        # and none in R give sum / 0 = inf, as it prints
        empty = empty & (total == 0)
        with np.errstate(divide="ignore"):
            return np.divide(total, denominator, out=np.zeros(n_rel.shape),
                             where=~empty), empty
    return np.divide(total, denominator, out=np.zeros(n_rel.shape), where=~empty), empty


MAP = Metric(
    "map", "mean average precision: the sum over relevant ranks r <= k of P@r, divided by R",
    params=_CAPPABLE, capabilities={"binary", "cutoff", "bounded", "normalised"},
    kernel=_ap, aliases=("ap",))


@metric_function(MAP)
def mean_average_precision_score(y_true, y_score, *, qid=None, k=None, threshold=1,
                                 capped=None, ties=None, empty=None, sample_weight=None,
                                 convention=None) -> float:
    """Mean average precision (MAP@k) over queries.

    See Also
    --------
    gmap_score : The geometric mean of the same AP values.

    Notes
    -----
    AP@k = (1/D) sum over relevant ranks r <= k of P@r, with D = R, the number
    of relevant documents of the query (trec_eval's ``map`` / ``map_cut_k``,
    ranx), or D = min(R, k) with ``capped=True`` (LightGBM's and XGBoost's
    ``map@k``). A query with R = 0 is empty: 0 by default, 1 under the
    LightGBM/XGBoost conventions (XGBoost's bare ``map`` is ``map@32``: pass
    ``k=32``). Under ``ties="average"`` the value is the
    exact expectation over tie orderings (McSherry & Najork, 2008). Spec:
    ``"map@k"``, ``"map"`` (alias ``ap``).

    Examples
    --------
    >>> from sklearn_rank.metrics import mean_average_precision_score
    >>> round(mean_average_precision_score([[1, 0, 1, 0]], [[4, 3, 2, 1]]), 6)
    0.833333
    >>> mean_average_precision_score([[0, 0, 1, 1]], [[4, 3, 2, 1]], k=3)  # (1/3) / R
    0.16666666666666666
    >>> mean_average_precision_score([[1, 0, 1, 1]], [[4, 3, 2, 1]], k=2)  # 1 / R
    0.3333333333333333
    >>> mean_average_precision_score([[1, 0, 1, 1]], [[4, 3, 2, 1]], k=2, capped=True)
    0.5
    """


GMAP = Metric(
    "gmap", "geometric mean of average precision (floor 1e-5, trec_eval's gm_map)",
    params=_BINARY, capabilities={"binary", "bounded", "normalised"},
    kernel=_ap, aggregate="geometric")


@metric_function(GMAP)
def gmap_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
               sample_weight=None, convention=None) -> float:
    """Geometric mean average precision (GMAP), trec_eval's ``gm_map``.

    See Also
    --------
    mean_average_precision_score

    Notes
    -----
    GMAP = exp(mean(log(max(AP_q, 1e-5)))): the 1e-5 floor (trec_eval's) keeps
    a query with AP 0 from making the mean 0. The per-query values that
    :func:`evaluate` reports are the AP values themselves. Spec: ``"gmap"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import gmap_score
    >>> round(gmap_score([1, 0, 0, 1], [2, 1, 2, 1], qid=[1, 1, 2, 2]), 6)
    0.707107
    """
