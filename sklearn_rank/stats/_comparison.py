"""One system against a baseline on one metric, and the sentence that says it."""

from __future__ import annotations

from dataclasses import dataclass

from .._utils.text import counted, p_text, percent
from ._corrections import label
from ._scale import quantity

__all__ = ["TESTS", "Comparison", "counted", "p_label", "percent"]


#: ``test=`` value -> its name in sentences and notes.
TESTS = {"randomization": "paired randomization test", "ttest": "paired t-test",
         "wilcoxon": "Wilcoxon signed-rank test",
         "tukey": "Tukey's HSD (two-way: system and query)",
         "randomized_tukey": "randomized Tukey HSD (Carterette)"}


def p_label(test: str, correction: str | None) -> str:
    """How a p-value is labelled: its correction (``"Holm"``), for Tukey's tests
    also the test whose p-values are simultaneous over the pairs (``"Tukey"``,
    ``"randomized Tukey, Holm"``); ``""`` for an uncorrected p-value."""
    name = label(correction)
    tukey = {"tukey": "Tukey", "randomized_tukey": "randomized Tukey"}.get(test)
    if tukey is None:
        return name
    return f"{tukey}, {name}" if name else tukey


@dataclass(frozen=True)
class Comparison:
    """One system against the baseline on one metric (a row of a :class:`Report`).

    Attributes
    ----------
    metric, system, baseline : str
    mean, baseline_mean : float
        The summaries of the system and of the baseline over the paired
        queries, by the metric's own rule (``Evaluation.mean``'s): the
        (weighted) mean; the geometric mean for ``gmap`` and ``gm_bpref``; the
        sum for trec_eval's counts (``num_rel_ret``, ...).
    difference : float
        System - baseline, on the scale of the test: the difference of the
        (weighted) means; of the logs of the geometric means (the mean
        per-query difference of ``log(max(value, 1e-5))``); of the sums (n x
        the mean per-query difference).
    low, high : float
        The bootstrap percentile interval of ``difference`` at level
        ``confidence``, not corrected for multiple comparisons.
    pvalue, pvalue_corrected : float
        The test's two-sided p-value, before and after the correction.
    significant : bool
        ``pvalue_corrected < alpha``: the verdict, which is the test's.
    wins, ties, losses : int
        Queries on which the system's compared quantity is above, the same as
        (within 1e-12), or below the baseline's.
    effect_size : float
        Mean difference / its standard deviation (Cohen's d for paired data),
        of the compared quantity.
    n_queries : int
    confidence, alpha : float
    test : {'randomization', 'ttest', 'wilcoxon', 'tukey', 'randomized_tukey'}
    aggregate : {'mean', 'geometric', 'sum'}
        The metric's summary.
    weighted : bool
        Whether the evaluations weigh their queries (``sample_weight``).
    """

    metric: str
    system: str
    baseline: str
    mean: float
    baseline_mean: float
    difference: float
    low: float
    high: float
    pvalue: float
    pvalue_corrected: float
    significant: bool
    wins: int
    ties: int
    losses: int
    effect_size: float
    n_queries: int
    confidence: float = 0.95
    alpha: float = 0.05
    test: str = "randomization"
    aggregate: str = "mean"
    weighted: bool = False

    @property
    def compared(self) -> str:
        """The per-query quantity the test compares: ``"value"``,
        ``"log(max(value, 1e-5))"`` (a geometric mean), ``"w * value / mean(w)"``
        (a weighted mean)."""
        return quantity(self.aggregate, self.weighted)

    def sentence(self, correction: str | None, *, ties: bool = False) -> str:
        """The comparison in words, for example ``"B beats A on ndcg@10 by +0.0120, 95%
        bootstrap CI [+0.0040, +0.0200], p = 0.003 (Holm), 412 wins / 301 losses"``
        (``ties=True``: ``"412 wins / 87 ties / 301 losses"``).

        "beats" / "trails" only when the test is significant after the
        correction; otherwise ``"B does not differ significantly from A on
        ndcg@10: +0.0030, 95% bootstrap CI [...]"``. When the interval and
        the verdict disagree (an interval that excludes 0 without a
        significant test, or the reverse), the sentence ends with the reason.
        """
        name = p_label(self.test, correction)
        if self.significant and self.difference != 0:
            verb = "beats" if self.difference > 0 else "trails"
            claim = f"{self.system} {verb} {self.baseline} on {self.metric} by "
        else:
            claim = (f"{self.system} does not differ significantly from {self.baseline} on "
                     f"{self.metric}: ")
        return (f"{claim}{self.difference:+.4f}{self._scale()}, {percent(self.confidence)} "
                f"bootstrap CI [{self.low:+.4f}, {self.high:+.4f}], "
                f"p {p_text(self.pvalue_corrected, True)}"
                f"{f' ({name})' if name else ''}, {counted(self.wins, 'win')} / "
                f"{counted(self.ties, 'tie') + ' / ' if ties else ''}"
                f"{counted(self.losses, 'loss', 'losses')}"
                f"{self._disagreement(correction)}")

    def _scale(self) -> str:
        """What the difference is of, when it is not of plain means."""
        if self.aggregate == "sum":
            return f" (in the sum over {self.n_queries} queries)"
        weighted = "weighted " if self.weighted else ""
        if self.aggregate == "geometric":
            return f" (in the {weighted}mean of {quantity('geometric', False)} per query)"
        return " (in the weighted mean)" if self.weighted else ""

    def _disagreement(self, correction: str | None) -> str:
        """Why the interval and the verdict disagree (``"; ..."``), or ``""``."""
        excludes = self.low > 0 or self.high < 0
        significant = self.significant and self.difference != 0
        if excludes == significant:
            return ""
        where = "excludes 0 but the test is not significant" if excludes else \
            "includes 0 but the test is significant"
        if not significant and correction is not None and self.pvalue < self.alpha:
            return (f"; the interval {where} after {label(correction)}'s correction for "
                    f"multiple comparisons (p {p_text(self.pvalue, True)} before it), which the "
                    "interval does not make")
        if abs(self.confidence - (1 - self.alpha)) > 1e-9:
            return (f"; the interval {where}: the interval is at "
                    f"{percent(self.confidence)}, the test at alpha = {self.alpha:g}, which "
                    f"matches an interval at {percent(1 - self.alpha)}")
        before = (f" (p {p_text(self.pvalue, True)} before correction)"
                  if self.pvalue != self.pvalue_corrected else "")
        return (f"; the interval {where}{before}: the bootstrap percentile interval and the "
                f"{TESTS[self.test]} are different methods, which can disagree near the "
                f"threshold, more often with few queries ({self.n_queries}); the verdict is "
                "the test's")
