"""What a report compares: each system's summary, and the per-query quantity of its tests.

A report prints each system's summary as its evaluation does
(:func:`~sklearn_rank.metrics._engine.aggregate.summarize`, the one rule of
``Evaluation.mean``): the geometric mean for ``gmap``, the sum for trec_eval's
counts, the weighted mean for a weighted evaluation. Its tests, intervals and
effect sizes compare the per-query quantity whose mean that summary is (or,
for a sum, is n times): the logs of the floored values for a geometric mean,
each value times its query's weight over the mean weight for a weighted one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics._engine.aggregate import (
    GEOMETRIC_FLOOR,
    evaluation_aggregate,
    on_mean_scale,
    summarize,
)
from ._pairing import paired_values, weights_of

__all__ = ["Paired", "paired_on_scale", "quantity", "scale_note"]


@dataclass(frozen=True)
class Paired:
    """One system and the baseline on one metric, on the report's scale.

    Attributes
    ----------
    x, y : ndarray of shape (n_pairs,)
        The compared per-query quantities of the system and of the baseline:
        mean(x) - mean(y) is the difference of their summaries (divided by n
        for a sum; of their logs for a geometric mean).
    ties : ndarray of shape (n_pairs,)
        The unweighted differences of the quantities, for wins, ties and losses.
    mean, baseline_mean : float
        The summaries (``Evaluation.mean``'s rule) over the paired queries.
    factor : int
        n for a sum (the difference of the sums is n times the mean
        difference), else 1.
    aggregate : str
        ``"mean"``, ``"geometric"`` or ``"sum"``.
    weighted : bool
    """

    x: np.ndarray
    y: np.ndarray
    ties: np.ndarray
    mean: float
    baseline_mean: float
    factor: int
    aggregate: str
    weighted: bool


def paired_on_scale(evaluations: dict, name: str, baseline: str, metric: str,
                    missing: str) -> Paired:
    """``evaluations[name]`` against ``evaluations[baseline]`` on ``metric``, paired
    by query (see :func:`paired_values`), on the scale of the metric's summary."""
    a, b = evaluations[name], evaluations[baseline]
    aggregate = evaluation_aggregate(a, metric)
    other = evaluation_aggregate(b, metric)
    if aggregate != other:
        raise ValueError(
            f"{metric}: evaluations[{name!r}] summarises it by its {aggregate} and "
            f"evaluations[{baseline!r}] by its {other}; they are different metrics that "
            "print alike. Evaluate both systems with the same metric spec.")
    x, y, qids = paired_values(a, b, metric=metric, missing=missing)
    weights = _common_weights(weights_of(a, qids, aggregate), weights_of(b, qids, aggregate),
                              name, baseline)
    mean = summarize(x, aggregate, weights)
    baseline_mean = summarize(y, aggregate, weights)
    x, y = on_mean_scale(x, aggregate), on_mean_scale(y, aggregate)
    ties = x - y
    if weights is not None:
        scale = weights / weights.mean()
        x, y = x * scale, y * scale
    return Paired(x, y, ties, mean, baseline_mean, x.shape[0] if aggregate == "sum" else 1,
                  aggregate, weights is not None)


def _common_weights(wa, wb, name: str, baseline: str) -> np.ndarray | None:
    """The query weights of the pairs: the same on both sides (a query on one side
    only, under ``missing='zero'``, takes that side's weight)."""
    if wa is None and wb is None:
        return None
    if wa is None or wb is None:
        weighted, other = (name, baseline) if wb is None else (baseline, name)
        raise ValueError(
            f"evaluations[{weighted!r}] is weighted (evaluated with sample_weight) and "
            f"evaluations[{other!r}] is not: a weighted mean cannot be compared with an "
            "unweighted one. Evaluate both systems with the same sample_weight, or both "
            "without.")
    both = ~np.isnan(wa) & ~np.isnan(wb)
    differ = both & ~np.isclose(wa, wb, rtol=1e-12, atol=0.0)
    if differ.any():
        raise ValueError(
            f"evaluations[{name!r}] and evaluations[{baseline!r}] weigh "
            f"{int(differ.sum())} of their shared queries differently (e.g. "
            f"{wa[differ][0]:g} against {wb[differ][0]:g}): paired queries must have one "
            "weight. Evaluate both systems with the same sample_weight.")
    weights = np.where(np.isnan(wa), wb, wa)
    if not (weights > 0).any():
        raise ValueError(f"Every query compared between evaluations[{name!r}] and "
                         f"evaluations[{baseline!r}] has weight 0: their weighted means are "
                         "undefined.")
    return weights


def _floor() -> str:
    """``1e-5``, as the docs write it."""
    return f"{GEOMETRIC_FLOOR:.0e}".replace("e-0", "e-")


def quantity(aggregate: str, weighted: bool) -> str:
    """The per-query quantity the tests compare, in words."""
    value = f"log(max(value, {_floor()}))" if aggregate == "geometric" else "value"
    return f"w * {value} / mean(w)" if weighted else value


def scale_note(metric: str, aggregate: str, weighted: bool, n: int | None) -> str | None:
    """The line of a report that says what its columns hold for ``metric``
    (None for an unweighted arithmetic mean, which needs no line)."""
    if aggregate == "geometric":
        weighted_ = "weighted " if weighted else ""
        return (f"{metric}: mean = the {weighted_}geometric mean, "
                f"exp({weighted_}mean(log(max(value, {_floor()})))); the tests, Δ, CI and d "
                f"compare {quantity(aggregate, weighted)} per query (Δ = the difference of "
                "the logs of the geometric means: exp(Δ) is their ratio)")
    if aggregate == "sum":
        n = "the" if n is None else f"the {n}"
        return (f"{metric}: mean = the sum over {n} queries (its summary, as evaluate "
                "prints it); the tests and d compare the per-query values; Δ and CI are of "
                "the sum (n x the mean difference per query)")
    if aggregate == "impressions":
        return (f"{metric}: mean = the mean weighted by impressions (each query's number of "
                "rows, times its sample weight); the tests, Δ, CI and d compare "
                f"{quantity(aggregate, True)} per query, whose mean is that weighted mean")
    if weighted:
        return (f"{metric}: mean = the weighted mean (the query weights of sample_weight); "
                f"the tests, Δ, CI and d compare {quantity(aggregate, weighted)} per query, "
                "whose mean is the weighted mean")
    return None
