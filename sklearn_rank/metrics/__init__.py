"""Ranking metrics over grouped data, the metric registry and its spec grammar.

The scorers (:func:`make_ranking_scorer`) are loaded on first use, so that
``import sklearn_rank.metrics`` stays fast.
"""

from importlib import import_module

from ._custom import register_metric
from ._evaluate import evaluate
from ._evaluation import Evaluation

# The metric families register their metrics when imported.
from ._families.auc import auc_score, gauc_score
from ._families.average_precision import gmap_score, mean_average_precision_score
from ._families.binary import (
    f1_at_k_score,
    precision_at_k_score,
    r_precision_score,
    rank_biased_precision_score,
    recall_at_k_score,
)
from ._families.cascade import (
    expected_reciprocal_rank_score,
    hit_rate_score,
    mean_reciprocal_rank_score,
)
from ._families.cwl import (
    bpm_score,
    cwl_rbp_score,
    insq_score,
    inst_score,
    judged_score,
    nerr8_score,
    nerr9_score,
    nerr10_score,
    nerr11_score,
    sdcg_score,
)
from ._families.gain import cumulative_gain_score, dcg_score, ndcg_score
from ._families.preference import bpref_score, rank_eff_score
from ._ipw import ipw_labels
from ._vocab.ir_measures import declare_measures
from ._vocab.registry import document_metrics, get_metric_names
from ._vocab.spec import MetricSpec, parse_metric

document_metrics()
declare_measures()  # ir_measures' names in the catalogue (trec_eval's: its table)

_LAZY = {
    "evaluate_chunks": "._chunked",
    "make_ranking_scorer": "._scorer",
    "make_click_scorer": "._click_scorer",
    "RankingScorer": "._scorer",
    "lightgbm_eval_metric": "._boosting",
    "xgboost_eval_metric": "._boosting",
}

__all__ = [
    "sdcg_score",
    "nerr11_score",
    "nerr10_score",
    "nerr9_score",
    "nerr8_score",
    "judged_score",
    "insq_score",
    "inst_score",
    "cwl_rbp_score",
    "bpm_score",
    "Evaluation",
    "MetricSpec",
    "auc_score",
    "gauc_score",
    "RankingScorer",
    "bpref_score",
    "cumulative_gain_score",
    "dcg_score",
    "evaluate",
    "evaluate_chunks",
    "expected_reciprocal_rank_score",
    "f1_at_k_score",
    "get_metric_names",
    "gmap_score",
    "hit_rate_score",
    "ipw_labels",
    "lightgbm_eval_metric",
    "make_click_scorer",
    "make_ranking_scorer",
    "mean_average_precision_score",
    "mean_reciprocal_rank_score",
    "ndcg_score",
    "parse_metric",
    "precision_at_k_score",
    "r_precision_score",
    "rank_biased_precision_score",
    "rank_eff_score",
    "recall_at_k_score",
    "register_metric",
    "xgboost_eval_metric",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
