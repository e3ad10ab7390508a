"""Paired significance tests, bootstrap intervals and comparison reports."""

from ._cv import CVComparison, compare_cv_candidates, corrected_resampled_ttest
from ._pairing import paired_values
from ._report import Comparison, Report, compare
from ._tests import (
    BootstrapResult,
    RandomizationResult,
    bootstrap_ci,
    paired_ttest,
    randomization_test,
    wilcoxon_test,
)

__all__ = [
    "BootstrapResult",
    "CVComparison",
    "Comparison",
    "RandomizationResult",
    "Report",
    "bootstrap_ci",
    "compare",
    "compare_cv_candidates",
    "corrected_resampled_ttest",
    "paired_ttest",
    "paired_values",
    "randomization_test",
    "wilcoxon_test",
]
