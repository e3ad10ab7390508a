"""Paired significance tests, bootstrap intervals and comparison reports."""

from ._bootstrap import BootstrapResult, bootstrap_ci
from ._compare import compare
from ._comparison import Comparison
from ._cv import CVComparison, compare_cv_candidates, corrected_resampled_ttest
from ._pairing import paired_values
from ._power import difference_variance, minimum_detectable_difference, topic_set_size
from ._report import Report
from ._segments import SegmentReport, WorstQueries, compare_segments, worst_queries
from ._tests import RandomizationResult, paired_ttest, randomization_test, wilcoxon_test
from ._tukey import TukeyResult, randomized_tukey_hsd, tukey_hsd

__all__ = [
    "BootstrapResult",
    "CVComparison",
    "Comparison",
    "RandomizationResult",
    "Report",
    "SegmentReport",
    "TukeyResult",
    "WorstQueries",
    "bootstrap_ci",
    "compare",
    "compare_cv_candidates",
    "compare_segments",
    "corrected_resampled_ttest",
    "difference_variance",
    "minimum_detectable_difference",
    "paired_ttest",
    "paired_values",
    "randomization_test",
    "randomized_tukey_hsd",
    "topic_set_size",
    "tukey_hsd",
    "wilcoxon_test",
    "worst_queries",
]
