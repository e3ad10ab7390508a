"""Corrections of p-values for multiple comparisons, by statsmodels' names."""

from __future__ import annotations

import numpy as np

__all__ = ["CORRECTIONS", "adjust", "label"]

#: ``correction=`` value -> how reports name it. The names are statsmodels'
#: (``multipletests(method=...)``); SciPy calls Benjamini-Hochberg ``"bh"``.
CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "fdr_bh": "BH"}


def label(correction: str | None) -> str:
    """``"Holm"``, ``"Bonferroni"``, ``"BH"``, or ``""`` without a correction."""
    return "" if correction is None else CORRECTIONS[correction]


def adjust(pvalues: np.ndarray, correction: str | None) -> np.ndarray:
    """Adjusted p-values (capped at 1), in the order of ``pvalues``.

    Holm's step-down and Bonferroni's control the family-wise error rate;
    Benjamini-Hochberg's step-up (:func:`scipy.stats.false_discovery_control`,
    SciPy >= 1.11) the false discovery rate: among the comparisons called
    significant at ``alpha``, the expected share of false ones is at most
    ``alpha`` (for independent or positively dependent tests).
    """
    m = pvalues.shape[0]
    if correction is None or m == 0:
        return pvalues.copy()
    if correction == "bonferroni":
        return np.minimum(pvalues * m, 1.0)
    if correction == "fdr_bh":
        from scipy.stats import false_discovery_control

        return np.minimum(false_discovery_control(pvalues, method="bh"), 1.0)
    order = np.argsort(pvalues, kind="stable")
    adjusted = np.maximum.accumulate(pvalues[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out
