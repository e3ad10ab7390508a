"""Evaluating recommender systems: top-k lists from user–item frames, beyond-accuracy metrics.

:func:`evaluate_recommendations` evaluates each user's top k (after removing
the items seen in training) against held-out interactions, with the
registry's ranking metrics and the metrics of the lists themselves
(coverage, concentration, novelty, diversity, ...); :func:`top_k` turns a
score matrix or an estimator into the recommendations frame. Sampled
evaluation (each test positive ranked against sampled negatives, with the
Krichene & Rendle correction as an option) is :func:`evaluate_sampled`.
"""

from ._evaluate import RecommenderEvaluation, evaluate_recommendations
from ._negatives import sample_negatives
from ._sampled import SampledEvaluation, evaluate_sampled, sampled_evaluate
from ._topk import top_k

__all__ = ["RecommenderEvaluation", "SampledEvaluation", "evaluate_recommendations",
           "evaluate_sampled", "sample_negatives", "sampled_evaluate", "top_k"]
