"""Comparing systems: differences to a baseline with intervals, tests and counts."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._bootstrap import bootstrap_ci
from ._comparison import TESTS, Comparison, _p, counted, percent
from ._constraints import LEVEL, PAIRED, RESAMPLES, SEED
from ._corrections import CORRECTIONS, adjust, label
from ._pairing import paired_values
from ._tests import paired_ttest, randomization_test, wilcoxon_test

__all__ = ["Comparison", "Report", "compare"]


class Report:
    """Systems compared with a baseline: the result of :func:`compare`.

    Attributes
    ----------
    means : dict of system -> dict of metric -> float
        Mean of every system on every metric (over the compared queries).
    comparisons : list of Comparison
        One per (system other than the baseline, metric).
    baseline : str
    test, correction : str
    alpha, confidence : float
    """

    def __init__(self, means, comparisons, baseline, test, correction, alpha, confidence):
        self.means = means
        self.comparisons = comparisons
        self.baseline = baseline
        self.test = test
        self.correction = correction
        self.alpha = alpha
        self.confidence = confidence

    @property
    def metrics(self) -> list[str]:
        return list(next(iter(self.means.values())))

    @property
    def systems(self) -> list[str]:
        return list(self.means)

    def _rows(self):
        """(metric, system, mean, Δ, CI, p, W/T/L, d) cells in print order."""
        by_key = {(c.metric, c.system): c for c in self.comparisons}
        for metric in self.metrics:
            for system in self.systems:
                c = by_key.get((metric, system))
                mean = f"{self.means[system][metric]:.4f}"
                if c is None:
                    yield [metric, system, mean, "baseline", "", "", "", ""]
                    continue
                mark = " *" if c.significant else ""
                yield [metric, system, mean, f"{c.difference:+.4f}",
                       f"[{c.low:+.4f}, {c.high:+.4f}]", _p(c.pvalue_corrected) + mark,
                       f"{c.wins}/{c.ties}/{c.losses}", f"{c.effect_size:+.2f}"]

    def _header(self) -> list[str]:
        name = label(self.correction)
        return ["metric", "system", "mean", f"Δ vs {self.baseline}",
                f"{percent(self.confidence)} CI", f"p ({name})" if name else "p", "W/T/L", "d"]

    def _note(self) -> str:
        n = self.comparisons[0].n_queries if self.comparisons else 0
        after = {None: "", "holm": " after Holm's correction",
                 "bonferroni": " after Bonferroni's correction",
                 "fdr_bh": (" after Benjamini-Hochberg's correction (false discovery rate "
                            f"{self.alpha:g})")}[self.correction]
        queries = counted(n, "query", "queries")
        return (f"{queries}; {TESTS[self.test]}; * p < {self.alpha:g}{after}; CI: bootstrap "
                "percentile interval of the mean difference, not corrected for multiple "
                "comparisons (the verdict is the test's; a sentence below says why when they "
                "disagree); W/T/L: queries won, tied, lost against the baseline; d: mean "
                "difference / its standard deviation (Cohen's d for paired data)")

    def __str__(self) -> str:
        rows = list(self._rows())
        header = self._header()
        widths = [max(len(header[j]), *(len(r[j]) for r in rows)) for j in range(len(header))]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                  for r in rows]
        lines += ["", self._note(), ""]
        lines += [c.sentence(self.correction) for c in self.comparisons]
        return "\n".join(lines)

    def relabel(self, names: dict) -> Report:
        """A copy with metrics renamed (e.g. to trec_eval's names); others kept."""
        from dataclasses import replace

        means = {system: {names.get(m, m): v for m, v in by_metric.items()}
                 for system, by_metric in self.means.items()}
        comparisons = [replace(c, metric=names.get(c.metric, c.metric))
                       for c in self.comparisons]
        return Report(means, comparisons, self.baseline, self.test, self.correction,
                      self.alpha, self.confidence)

    def __repr__(self) -> str:
        return (f"Report(systems={self.systems}, metrics={self.metrics}, "
                f"baseline={self.baseline!r}, test={self.test!r})")

    def to_markdown(self) -> str:
        """The comparison table in GitHub-flavoured Markdown."""
        rows = [self._header(), *self._rows()]
        lines = ["| " + " | ".join(rows[0]) + " |",
                 "|" + "|".join(["---"] * 2 + ["---:"] * (len(rows[0]) - 2)) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows[1:]]
        return "\n".join(lines) + f"\n\n{self._note()}\n"

    def to_latex(self) -> str:
        """The comparison table as a LaTeX ``tabular`` (booktabs)."""
        def escape(text: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"),
                         ("_", r"\_"), ("#", r"\#"), ("Δ", r"$\Delta$"), ("*", r"$^*$")):
                text = text.replace(a, b)
            return text

        rows = [self._header(), *self._rows()]
        lines = [r"\begin{tabular}{ll" + "r" * (len(rows[0]) - 2) + "}", r"\toprule",
                 " & ".join(escape(c) for c in rows[0]) + r" \\", r"\midrule"]
        lines += [" & ".join(escape(c) for c in r) + r" \\" for r in rows[1:]]
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines) + "\n"

    def to_frame(self):
        """One row per (system, metric), as a pandas DataFrame (requires pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Report.to_frame() needs pandas: pip install pandas") from None
        by_key = {(c.metric, c.system): c for c in self.comparisons}
        records = []
        for metric in self.metrics:
            for system in self.systems:
                c = by_key.get((metric, system))
                record = {"metric": metric, "system": system,
                          "mean": self.means[system][metric]}
                if c is not None:
                    record.update(difference=c.difference, low=c.low, high=c.high,
                                  pvalue=c.pvalue, pvalue_corrected=c.pvalue_corrected,
                                  significant=c.significant, wins=c.wins, ties=c.ties,
                                  losses=c.losses, effect_size=c.effect_size)
                records.append(record)
        return pd.DataFrame.from_records(records).set_index(["metric", "system"])


@validate_params({
    "evaluations": [Mapping],
    "baseline": [str, None],
    "metrics": ["array-like", None],
    "test": [StrOptions({"randomization", "ttest", "wilcoxon"})],
    "correction": [StrOptions(set(CORRECTIONS)), None],
    "alpha": LEVEL,
    "confidence": LEVEL,
    "n_resamples": RESAMPLES,
    "missing": PAIRED["missing"],
    "random_state": SEED,
})
def compare(evaluations: dict, *, baseline=None, metrics=None, test="randomization",
            correction="holm", alpha=0.05, confidence=0.95, n_resamples=10000,
            missing="raise", random_state=0) -> Report:
    """Compare systems with a baseline, per query, with tests, intervals and counts.

    Parameters
    ----------
    evaluations : dict of str -> Evaluation
        Each system's per-query results (from :func:`~sklearn_rank.metrics.evaluate`
        or :func:`~sklearn_rank.trec.evaluate_run`), on the same queries.
    baseline : str, default=None
        The system the others are compared with; the first one by default.
    metrics : list of str, default=None
        Metrics to compare; by default every metric all evaluations share.
    test : {'randomization', 'ttest', 'wilcoxon'}, default='randomization'
        The paired test for each (system, metric).
    correction : {'holm', 'bonferroni', 'fdr_bh'} or None, default='holm'
        Correction of the p-values for the number of comparisons (systems
        other than the baseline x metrics), by statsmodels' names: Holm's
        step-down and Bonferroni's control the family-wise error rate (the
        chance of any false "beats"); ``'fdr_bh'``, Benjamini-Hochberg
        (:func:`scipy.stats.false_discovery_control`, SciPy's ``method='bh'``),
        the false discovery rate (the expected share of false ones among the
        comparisons called significant), which finds more differences when
        there are many comparisons.
    alpha : float, default=0.05
        Significance level for the markers and the verdicts, after correction.
    confidence : float, default=0.95
        Level of the bootstrap intervals of the differences (not corrected
        for multiple comparisons).
    n_resamples : int, default=10000
        Resamples of the randomization test and of the bootstrap.
    missing : {'raise', 'drop', 'zero'}, default='raise'
        Queries missing from some evaluations: see
        :func:`~sklearn_rank.stats.paired_values`.
    random_state : int, numpy Generator or None, default=0
        Seed of the randomization test and of the bootstrap, passed to both
        for every comparison, so that a report is the same on every run and
        each comparison's p-value and interval are those of
        :func:`randomization_test` and :func:`bootstrap_ci` called with the
        same seed. ``None`` draws a fresh seed from the operating system.

    Returns
    -------
    report : Report
        ``str(report)`` is a readable table with significance markers and one
        sentence per comparison; ``to_frame()``, ``to_markdown()``,
        ``to_latex()``.

    Notes
    -----
    The verdict ("beats", "trails", "does not differ significantly") is the
    test's, after the correction. The interval describes the size of the
    difference; it is a different method (a bootstrap percentile interval,
    not corrected for multiple comparisons), so the two can disagree: an
    interval may exclude 0 for a difference the test does not call
    significant, because of the correction, because ``confidence`` is not
    ``1 - alpha``, or because the methods differ near the threshold (the
    percentile interval tends to be too narrow with few queries). The
    sentence of such a comparison says which; both are reported, never
    silently reconciled.

    The inputs are not modified. Wins, ties and losses count queries on which
    the system scores above, the same as (within 1e-12), or below the baseline.
    When a system scores exactly as the baseline on every query, its p-value
    is 1 and its interval [0, 0] whatever the test. Memory stays bounded
    (tens of MB beyond the evaluations) whatever the number of queries: the
    randomization test and the bootstrap resample in batches; time grows as
    n_resamples x queries x comparisons.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import evaluate
    >>> from sklearn_rank.stats import compare
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(50), 10)
    >>> y = rng.integers(0, 3, qid.shape[0])
    >>> a = evaluate(y, y + rng.normal(0, 2.0, y.shape), qid=qid, metrics=["ndcg@5"])
    >>> b = evaluate(y, y + rng.normal(0, 0.5, y.shape), qid=qid, metrics=["ndcg@5"])
    >>> report = compare({"A": a, "B": b}, random_state=0)
    >>> report.comparisons[0].significant
    True
    """
    names = _systems(evaluations, baseline)
    baseline = names[0] if baseline is None else baseline
    if metrics is None:
        metrics = [str(m) for m in evaluations[baseline].metrics
                   if all(str(m) in ev.per_query for ev in evaluations.values())]
    run_test = {"randomization": lambda x, y: randomization_test(
                    x, y, n_resamples=n_resamples, random_state=random_state),
                "ttest": paired_ttest, "wilcoxon": wilcoxon_test}[test]
    rows = []
    means = {name: {} for name in names}
    for metric in metrics:
        for name in names:
            x, y, _ = paired_values(evaluations[name], evaluations[baseline], metric=metric,
                                    missing=missing)
            means[name][metric] = float(x.mean())
            if name != baseline:
                ci = bootstrap_ci(x - y, confidence=confidence, n_resamples=n_resamples,
                                  random_state=random_state)
                rows.append(_row(metric, name, baseline, x, y, ci, run_test))
    adjusted = adjust(np.asarray([row["pvalue"] for row in rows]), correction)
    comparisons = [Comparison(**row, pvalue_corrected=float(pa), significant=bool(pa < alpha),
                              confidence=confidence, alpha=alpha, test=test)
                   for row, pa in zip(rows, adjusted, strict=True)]
    return Report(means, comparisons, baseline, test, correction, alpha, confidence)


def _systems(evaluations, baseline) -> list:
    """The names of the systems, checked to hold evaluations and the baseline."""
    if not evaluations:
        raise ValueError("evaluations is empty; pass {name: Evaluation, ...}.")
    for name, ev in evaluations.items():
        if not isinstance(ev, Evaluation):
            raise TypeError(f"evaluations[{name!r}] must be an Evaluation, got "
                            f"{type(ev).__name__}.")
    names = list(evaluations)
    if baseline is not None and baseline not in evaluations:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}.")
    return names


def _row(metric, name, baseline, x, y, ci, run_test) -> dict:
    """The fields of one :class:`Comparison` but the corrected p-value."""
    d = x - y
    sd = d.std(ddof=1) if d.shape[0] > 1 else 0.0
    return dict(metric=metric, system=name, baseline=baseline,
                mean=float(x.mean()), baseline_mean=float(y.mean()),
                difference=float(d.mean()), low=ci.low, high=ci.high,
                pvalue=float(run_test(x, y).pvalue) if np.any(d != 0) else 1.0,
                wins=int((d > 1e-12).sum()), ties=int((np.abs(d) <= 1e-12).sum()),
                losses=int((d < -1e-12).sum()),
                effect_size=float(d.mean() / sd) if sd > 0 else 0.0,
                n_queries=int(d.shape[0]))
