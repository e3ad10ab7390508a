"""Recommender-system evaluation: user–item interactions and top-k lists.

Sampled evaluation (each test positive ranked against sampled negatives,
with the Krichene & Rendle correction as an option) is
:func:`evaluate_sampled`.
"""

from ._sampled import (
    SampledEvaluation,
    evaluate_sampled,
    sample_negatives,
    sampled_evaluate,
)

__all__ = ["SampledEvaluation", "evaluate_sampled", "sample_negatives", "sampled_evaluate"]
