"""How a metric's per-query values become its summary: one rule for every output.

:attr:`Evaluation.mean <sklearn_rank.metrics.Evaluation>` (through the
evaluation plan) and every report built on evaluations
(:func:`~sklearn_rank.stats.compare`) summarise with :func:`summarize` and
the aggregate :func:`aggregate_of` reads from the metric, so a report's
summary of a system is its evaluation's mean.

The trec_eval engine (:mod:`sklearn_rank.metrics._families.trec_eval`) keeps its own
summation in trec_eval's order, so that its output is trec_eval's byte for
byte; its measures declare their aggregate here (``TrecMeasure.summary``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AGGREGATES", "GEOMETRIC_FLOOR", "aggregate_of", "evaluation_aggregate",
           "on_mean_scale", "scaled_mean", "summarize", "summary_weights"]

#: trec_eval's gm_map floor: a query with AP 0 counts as 1e-5 in the geometric mean.
GEOMETRIC_FLOOR = 1e-5
#: The summaries of per-query values: the (weighted) mean; the geometric mean
#: of the floored values (``gmap``, trec_eval's ``gm_map`` and ``gm_bpref``);
#: the sum over queries (trec_eval's counts: ``num_rel_ret``, ``num_q``, ...);
#: the mean weighted by each query's rows, its impressions (``gauc``: the
#: weights come from :func:`summary_weights`).
AGGREGATES = ("mean", "geometric", "sum", "impressions")
_ENGINE = {"mean": "mean", "gmean": "geometric", "sum": "sum"}  # TrecMeasure.summary


def aggregate_of(spec) -> str:
    """The aggregate of one metric of an evaluation: one of :data:`AGGREGATES`.

    A registry spec's metric declares it (``Metric.aggregate``: ``"geometric"``
    for ``gmap``); a trec_eval-engine measure (``TrecMeasure``) by its
    ``summary`` (``"sum"`` for the counts, ``"gmean"`` for ``gm_bpref``).
    """
    info = getattr(type(spec), "info", None)
    if info is not None:
        return spec.info.aggregate
    return _ENGINE[getattr(spec, "summary", "mean")]


def evaluation_aggregate(evaluation, metric: str) -> str:
    """:func:`aggregate_of` the metric an evaluation keys as ``metric`` (any
    spelling its ``per_query`` finds); ``"mean"`` for a key no spec prints."""
    key = evaluation.per_query.key_of(metric)
    if key not in evaluation.per_query:
        raise KeyError(f"{metric!r} is not a metric of this evaluation; its keys: "
                       f"{', '.join(map(repr, dict.keys(evaluation.per_query)))}")
    for spec in evaluation.metrics:
        if str(spec) == key:
            return aggregate_of(spec)
    return "mean"


def summary_weights(aggregate: str, weights: np.ndarray | None,
                    lengths: np.ndarray | None) -> np.ndarray | None:
    """The per-query weights of a metric's summary.

    ``weights`` (the per-query weights of ``sample_weight``, None when
    unweighted) for every aggregate but ``"impressions"``, whose query weight
    is its number of rows ``lengths`` times its weight: the sum of its rows'
    sample weights, since a query's weight is the mean of its rows'.
    """
    if aggregate != "impressions":
        return weights
    if lengths is None:
        raise ValueError("A mean weighted by impressions needs each query's number of rows; "
                         "this evaluation does not carry them (evaluate the metric with "
                         "sklearn_rank.metrics.evaluate or evaluate_run).")
    lengths = np.asarray(lengths, dtype=np.float64)
    return lengths if weights is None else lengths * weights


def on_mean_scale(values: np.ndarray, aggregate: str) -> np.ndarray:
    """The per-query values whose (weighted) mean gives the summary.

    ``log(max(value, 1e-5))`` for a geometric mean (whose log is their mean);
    the values themselves otherwise (a sum is n times their mean).
    """
    if aggregate == "geometric":
        return np.log(np.maximum(values, GEOMETRIC_FLOOR))
    return values


def summarize(values: np.ndarray, aggregate: str, weights: np.ndarray | None = None) -> float:
    """The summary of the counted (non-NaN) per-query ``values`` of a metric.

    Parameters
    ----------
    values : ndarray of shape (n_queries,)
        Finite per-query values.
    aggregate : {"mean", "geometric", "sum", "impressions"}
        See :data:`AGGREGATES`.
    weights : ndarray of shape (n_queries,) or None
        Per-query weights of a weighted mean (arithmetic or geometric); for
        ``"impressions"``, those of :func:`summary_weights`.

    Returns
    -------
    float
        The (weighted) mean; exp of the (weighted) mean of
        ``log(max(value, 1e-5))``; or the sum.
    """
    if aggregate == "sum":
        if weights is not None:
            raise ValueError("A sum over queries has no weighted form; evaluate the counts "
                             "without sample_weight.")
        return float(values.sum())
    mean = scaled_mean(on_mean_scale(values, aggregate), weights)
    return float(np.exp(mean)) if aggregate == "geometric" else mean


def scaled_mean(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The (weighted) mean of finite values, without intermediate overflow.

    Weights whose largest is outside [2**-500, 2**500] are first divided by a
    power of two near it (exact; subnormal weights keep their precision), and
    when a sum still overflows (values near 1e308) the values are scaled the
    same way. Otherwise this is the plain formula, bit for bit.
    """
    if weights is not None:
        top_w = _exponent(weights)
        if abs(top_w) > 500:
            weights = np.ldexp(weights, -top_w)
    with np.errstate(over="ignore", invalid="ignore"):
        if weights is None:
            top, bottom = values.sum(), values.shape[0]
        else:
            top, bottom = (values * weights).sum(), weights.sum()
    if np.isfinite(top) and np.isfinite(bottom):
        return float(top / bottom)
    v_exp = _exponent(values)
    v = np.ldexp(values, -v_exp)
    if weights is None:
        mean = v.sum() / v.shape[0]
    else:
        w = np.ldexp(weights, -_exponent(weights))
        mean = (v * w).sum() / w.sum()
    return float(np.ldexp(mean, v_exp))


def _exponent(x: np.ndarray) -> int:
    """e with max |x| / 2**e in [0.5, 1) (0 for an all-zero array)."""
    top = float(np.abs(x).max()) if x.size else 0.0
    return int(np.frexp(top)[1]) if top > 0 else 0
