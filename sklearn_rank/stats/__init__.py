"""Paired significance tests, bootstrap intervals and comparison reports."""

from ._bootstrap import BootstrapResult, bootstrap_ci
from ._compare import compare
from ._comparison import Comparison
from ._cv import CVComparison, compare_cv_candidates, corrected_resampled_ttest
from ._pairing import paired_values
from ._report import Report
from ._segments import SegmentReport, WorstQueries, compare_segments, worst_queries
from ._tests import RandomizationResult, paired_ttest, randomization_test, wilcoxon_test

__all__ = [
    "BootstrapResult",
    "CVComparison",
    "Comparison",
    "RandomizationResult",
    "Report",
    "SegmentReport",
    "WorstQueries",
    "bootstrap_ci",
    "compare",
    "compare_cv_candidates",
    "compare_segments",
    "corrected_resampled_ttest",
    "paired_ttest",
    "paired_values",
    "randomization_test",
    "wilcoxon_test",
    "worst_queries",
]
