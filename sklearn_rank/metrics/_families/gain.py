"""Gain-based metrics: CG, DCG and NDCG, with their gains and discounts.

Each metric is its kernel, its :class:`~sklearn_rank.metrics._definition.Metric` declaration and
its public function; importing the module registers them.
"""

from __future__ import annotations

import math

import numpy as np

from .._definition import Metric, metric_function
from .._engine.blocks import row_sums, rowdot
from .._engine.columns import Gain, PairGain, gain_pairs
from .._engine.ranking import in_trec_mode
from .._engine.scaled import Scaled, rows_scaled
from .._vocab.params import Param, declare

__all__ = ["cumulative_gain_score", "dcg_score", "ndcg_score"]


_DISCOUNTED = ("k", "gain", "discount", "log_base", "ties", "empty", "convention")

declare(Param("gains", None, (str, None), """\
gains : str, default=None
    Gain pairs ``'level=gain,...'`` (trec_eval's ``ndcg.1=0,2=3``, ``dcg.1=0,2=3``): a
    document of a listed whole-number level has that gain (the first pair
    of a level wins), any other the gain of ``gain``. The ideal ranking
    sorts the gains decreasingly (NDCG); under ``convention='trec_eval'`` on
    trec_eval's rankings (:func:`sklearn_rank.trec.evaluate_run`,
    :func:`sklearn_rank.trec.trec_eval`) it is trec_eval's: the pairs in
    the order given, then the query's other levels at their own value,
    sorted by the gain difference truncated to an integer (a stable merge
    sort, so fractional gains may stay out of order) and walked from the top
    while the gain is > 0; gains may then be negative, and a pair for -1 or
    -2 gives unjudged documents (not in the qrels, or at a negative level) a
    gain."""))


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
    return _discount_array(discount, size)


def _discount_array(discount, size: int) -> np.ndarray:
    """The first ``size`` values of a discount array, checked."""
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


def _gain(rank, p, scaled: bool = False):
    """The gain column of the options (with ``gains``' pairs); with ``scaled``
    (for ratios: NDCG), its :class:`~sklearn_rank.metrics._engine.scaled.Scaled` version where
    a query of the block needs it."""
    col = Gain.of(p["gain"])
    if p.get("gains") is not None:
        col = PairGain(col, gain_pairs(p["gains"]))
    if scaled and rank.unranked(Scaled(col)) is not None:
        return Scaled(col)
    return col


def _unit_scaled(d: np.ndarray) -> np.ndarray:
    """Discounts divided by a power of two near their maximum if it is outside
    [2**-400, 2**400] (changes no ratio, keeps sums finite)."""
    out = rows_scaled(d[None, :])
    return d if out is None else out[0]


def _trec_log2(size: int) -> np.ndarray:
    """log2(r + 1) for ranks 1..size from libm's log2, as trec_eval's table."""
    global _LOG2
    if size > _LOG2.shape[0]:
        _LOG2 = np.array([math.log2(r + 1) for r in range(1, max(size, 2 * _LOG2.shape[0],
                                                                 1024) + 1)])
    return _LOG2[:size]


_LOG2 = np.zeros(0)


def _discounted(rank, p, k, scaled: bool = False):
    col = _gain(rank, p, scaled)
    kk = rank.cut(k)
    if in_trec_mode(p) and p["discount"] == "log2" and p["log_base"] == 2:
        # trec_eval's sums: gain / log2(r + 1), added rank after rank (TREC mode
        # has no ties: the ranked gains are the expected ones)
        ranked_terms = rank.shared(("trec_dcg", col), lambda: _flagged_terms(rank, col))
        ideal_terms = rank.shared(("trec_idcg", col),
                                  lambda: _cell_terms(*rank.ideal_cells(col), rank.width))
        n = rank.order.shape[0]
        return (_trec_sum(ranked_terms, kk, n), _trec_sum(ideal_terms, kk, n),
                rank.row_max(col)[:, 0] <= 0)
    d = discount_vector(p["discount"], p["log_base"], kk, min(kk, int(rank.lengths.max())))
    if scaled:
        d = _unit_scaled(d)
    dcg = rowdot(rank.expected(col, kk), d)
    ideal = rank.ideal(col)
    idcg = rowdot(ideal[:, :kk], d)
    return dcg, idcg, ideal[:, 0] <= 0


def _cell_terms(rows, cols, values, width: int):
    """The nonzero cells of a block (a ranking holds few relevant documents:
    their rows, 0-based ranks and values, row by row in rank order) divided by
    trec_eval's log2(r + 1): the terms of its DCG."""
    return rows, cols, values / _trec_log2(width)[cols]


def _flagged_terms(rank, col):
    """:func:`_cell_terms` of the ranked gains, from the block's flagged ranks."""
    rows, cols, _, _ = rank.flagged(col)
    return _cell_terms(rows, cols, rank.flagged_values(col), rank.width)


def _trec_sum(terms, cut: int, n_rows: int) -> np.ndarray:
    """Each row's sum of the :func:`_cell_terms` of ranks 1..``cut``, added
    rank after rank as trec_eval's loop adds (adding a zero changes no sum)."""
    rows, cols, values = terms
    keep = cols < cut
    if not keep.all():
        rows, values = rows[keep], values[keep]
    return row_sums(rows, values, n_rows)


def _cg(rank, p, k):
    col = _gain(rank, p)
    cg = rank.expected(col, rank.cut(k)).sum(axis=1)
    return cg, rank.ideal(col)[:, 0] <= 0


def _dcg(rank, p, k):
    if p.get("gains") is not None and in_trec_mode(p):
        from .trec_eval.gains import pair_dcg

        # (every query has trec_eval's DCG: a pair may give unjudged documents a gain)
        dcg = pair_dcg(gain_pairs(p["gains"]), k=k, **_trec_rows(rank))
        return dcg, np.zeros(dcg.shape[0], dtype=bool)
    dcg, _, empty = _discounted(rank, p, k)
    return dcg, empty


def _trec_pair_ndcg(rank, p, k):
    """trec_eval's ndcg with gain pairs (:func:`~.trec_eval.gains.pair_ndcg`) on a
    block of its rankings: the retrieved rows' codes, the queries' level counts."""
    from .trec_eval.gains import pair_ndcg

    value, idcg = pair_ndcg(gain_pairs(p["gains"]), k=k, **_trec_rows(rank))
    return value, ~(idcg > 0)


def _trec_rows(rank) -> dict:
    """The arguments of trec_eval's gain-pair kernels for a block of its
    rankings: the retrieved rows' codes in rank order (``rel``), their query
    and rank, the number of queries and their level counts."""
    data, segments = rank.data, rank.segments
    n = rank.retrieved if rank.retrieved is not None else rank.lengths
    starts = data.starts[segments]
    query = np.repeat(np.arange(segments.shape[0]), n)
    position = np.arange(query.shape[0]) - np.repeat(np.cumsum(n) - n, n)
    rows = np.repeat(starts, n) + position
    if data.codes is not None:
        codes = data.codes[rows]
    else:  # (no codes: an unjudged document is "not in the qrels")
        codes = data.labels[rows] if data.judged is None else np.where(
            data.judged[rows] > 0, data.labels[rows], -1.0)
    if data.trec_levels is not None:
        levels, top = (a[segments] for a in data.trec_levels)
    else:
        levels, top = _level_counts(data, segments)
    return {"rel": codes.astype(np.int64), "query": query, "position": position,
            "nq": segments.shape[0], "levels": levels, "top": top}


def _level_counts(data, segments) -> tuple[np.ndarray, np.ndarray]:
    """Each query's judged documents per whole-number level >= 0, and its top level."""
    lengths, starts = data.lengths[segments], data.starts[segments]
    rows = np.repeat(starts, lengths) + np.arange(lengths.sum()) - np.repeat(
        np.cumsum(lengths) - lengths, lengths)
    labels = data.labels[rows]
    judged = np.ones(rows.shape[0], dtype=bool) if data.judged is None else data.judged[rows] > 0
    query = np.repeat(np.arange(segments.shape[0]), lengths)
    keep = judged & (labels >= 0)
    width = int(labels[keep].max(initial=0)) + 1
    levels = np.bincount(query[keep] * width + labels[keep].astype(np.int64),
                         minlength=segments.shape[0] * width).reshape(-1, width)
    top = np.full(segments.shape[0], -1)
    np.maximum.at(top, query[keep], labels[keep].astype(np.int64))
    return levels, top


def _ndcg(rank, p, k):
    if p.get("gains") is not None and in_trec_mode(p):
        return _trec_pair_ndcg(rank, p, k)
    # A ratio: computed scale-free, so any finite gains give the right number.
    dcg, idcg, empty = _discounted(rank, p, k, scaled=True)
    empty = empty | (idcg <= 0)
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=~empty), empty


CG = Metric(
    "cg", "cumulative gain: sum of the top-k gains",
    params=("k", "gain", "ties", "empty", "convention"), capabilities={"graded", "cutoff"},
    kernel=_cg)


@metric_function(CG)
def cumulative_gain_score(y_true, y_score, *, qid=None, k=None, gain=None, ties=None,
                          empty=None, sample_weight=None, convention=None) -> float:
    """Cumulative gain CG@k: the sum of the gains of the top ``k`` documents.

    See Also
    --------
    dcg_score : CG with a rank discount.
    evaluate : Several metrics and per-query values at once.

    Notes
    -----
    CG@k = sum over ranks r <= k of g(l_r), the gain of the label at rank r.
    Spec: ``"cg@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import cumulative_gain_score
    >>> cumulative_gain_score([[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]], k=3,
    ...                       gain="linear")
    8.0
    """


DCG = Metric(
    "dcg", "discounted cumulative gain: sum of the top-k gains times their discounts",
    params=("k", "gain", "gains", "discount", "log_base", "ties", "empty", "convention"),
    capabilities={"graded", "cutoff"},
    kernel=_dcg)


@metric_function(DCG)
def dcg_score(y_true, y_score, *, qid=None, k=None, gain=None, gains=None, discount="log2",
              log_base=2, ties=None, empty=None, sample_weight=None,
              convention=None) -> float:
    """Discounted cumulative gain DCG@k, averaged over queries.

    See Also
    --------
    ndcg_score : DCG normalised by the ideal DCG.
    evaluate : Several metrics and per-query values at once.

    Notes
    -----
    DCG@k = sum over ranks r <= k of g(l_r) * d(r). With ``gain='linear'`` it
    equals :func:`sklearn.metrics.dcg_score` (``convention='sklearn'``).
    Spec: ``"dcg@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import dcg_score
    >>> round(dcg_score([[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]],
    ...                 convention="sklearn"), 6)
    6.861127
    """


NDCG = Metric(
    "ndcg", "normalized DCG: DCG@k / ideal DCG@k",
    params=("k", "gain", "gains", "discount", "log_base", "ties", "empty", "convention"),
    capabilities={"graded", "cutoff", "bounded", "normalised"},
    kernel=_ndcg)


@metric_function(NDCG)
def ndcg_score(y_true, y_score, *, qid=None, k=None, gain=None, gains=None, discount="log2",
               log_base=2, ties=None, empty=None, sample_weight=None,
               convention=None) -> float:
    """Normalized discounted cumulative gain NDCG@k, averaged over queries.

    See Also
    --------
    dcg_score : The unnormalised DCG.
    evaluate : Several metrics and per-query values at once.
    sklearn.metrics.ndcg_score : The same with ``convention='sklearn'``.

    Notes
    -----
    NDCG@k = DCG@k / IDCG@k, where DCG@k = sum over ranks r <= k of
    g(l_r) * d(r) and IDCG@k is the DCG@k of the same query's documents sorted
    by decreasing gain. A query whose IDCG is 0 has no relevant document; its
    value is set by ``empty``. Every query counts once (weighted by its
    ``sample_weight``), whatever its length. Spec: ``"ndcg@k"``.

    NDCG is a ratio, so it is computed scale-free: a query whose largest gain
    (or the largest discount) lies outside [2**-400, 2**400] has its gains
    divided by a power of two near it (exact). Any finite gain works,
    exponential gains of labels >= 1024 included, where DCG and CG, whose
    values would exceed float64, raise a ValueError.

    What "NDCG@10" means differs between libraries; ``convention`` reproduces
    them exactly: scikit-learn uses linear gain and tie averaging, LightGBM and
    XGBoost exponential gain, input order for ties and 1 for empty queries.
    XGBoost's bare ``"ndcg"`` metric is NDCG@32, not the whole list: compare it
    with ``k=32``.

    References
    ----------
    Järvelin, K., & Kekäläinen, J. (2002). Cumulated gain-based evaluation of
    IR techniques. ACM TOIS 20(4), 422-446.

    McSherry, F., & Najork, M. (2008). Computing information retrieval
    performance measures efficiently in the presence of tied scores. ECIR.

    Examples
    --------
    >>> from sklearn_rank.metrics import ndcg_score
    >>> y_true = [3, 2, 3, 0, 1, 2]
    >>> y_score = [6, 5, 4, 3, 2, 1]
    >>> qid = [7, 7, 7, 7, 7, 7]
    >>> round(ndcg_score(y_true, y_score, qid=qid), 6)
    0.948811
    >>> round(ndcg_score(y_true, y_score, qid=qid, gain="linear"), 6)
    0.960808
    >>> round(ndcg_score(y_true, y_score, qid=qid, gain="linear", discount="classic"), 6)
    0.931509

    Ties are averaged over all orderings, as in scikit-learn:

    >>> round(ndcg_score([[1, 0, 0, 0]], [[1, 1, 1, 0]]), 6)
    0.71031
    >>> ndcg_score([[1, 0, 0, 0]], [[1, 1, 1, 0]], convention="lightgbm")
    1.0
    """
