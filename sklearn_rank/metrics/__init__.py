"""Ranking metrics over grouped data, the metric registry and its spec grammar."""

from ._evaluation import Evaluation
from ._ranking import cumulative_gain_score, dcg_score, evaluate, ndcg_score
from ._registry import MetricSpec, get_metric_names, parse_metric

__all__ = [
    "Evaluation",
    "MetricSpec",
    "cumulative_gain_score",
    "dcg_score",
    "evaluate",
    "get_metric_names",
    "ndcg_score",
    "parse_metric",
]
