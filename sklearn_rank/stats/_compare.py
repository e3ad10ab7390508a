"""Comparing systems: differences to a baseline with intervals, tests and counts."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._utils.validation import StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._bootstrap import bootstrap_ci
from ._comparison import Comparison
from ._constraints import LEVEL, PAIRED, RESAMPLES, SEED
from ._corrections import CORRECTIONS, adjust
from ._report import Report
from ._scale import paired_on_scale
from ._tests import APPROXIMATIONS, paired_ttest, randomization_test, wilcoxon_test

__all__ = ["compare"]


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
    "approximation": [StrOptions(APPROXIMATIONS)],
})
def compare(evaluations: dict, *, baseline=None, metrics=None, test="randomization",
            correction="holm", alpha=0.05, confidence=0.95, n_resamples=10000,
            missing="raise", random_state=0, approximation="auto") -> Report:
    """Compare systems with a baseline, per query, with tests, intervals and counts.

    Parameters
    ----------
    evaluations : dict of str -> Evaluation
        Each system's per-query results (from :func:`~sklearn_rank.metrics.evaluate`
        or :func:`~sklearn_rank.trec.evaluate_run`), on the same queries.
    baseline : str, default=None
        The system the others are compared with; the first one by default.
    metrics : list of str, default=None
        Metrics to compare, each held by every evaluation; by default every
        metric all evaluations share (an error names each one's metrics when
        they share none).
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
    approximation : {'auto', 'normal', 'none'}, default='auto'
        Passed to :func:`randomization_test` and :func:`bootstrap_ci`: from
        50,000 queries (``'auto'``) the randomization p-value and the interval
        come from the normal approximation of their resampling distribution
        with its Edgeworth (Cornish-Fisher) term, closer to the exact values
        than 10,000 resamples are; ``'none'`` resamples whatever the number
        of queries, ``'normal'`` always approximates.

    Returns
    -------
    report : Report
        ``str(report)`` is a readable table with significance markers and one
        sentence per comparison; ``to_frame()``, ``to_markdown()``,
        ``to_latex()``.

    Raises
    ------
    ValueError
        When the evaluations share no metric, or one lacks a metric of
        ``metrics``; when one evaluation is weighted (``sample_weight``) and
        another not, or they weigh a query differently; and as
        :func:`paired_values` for the queries.

    Notes
    -----
    Each system's summary (the ``mean`` column, :attr:`Report.means`) is its
    evaluation's ``Evaluation.mean``, by the same rule, over the compared
    queries: the weighted mean for a weighted evaluation; the geometric mean
    exp(mean(log(max(value, 1e-5)))) for ``gmap`` (trec_eval's ``gm_map``) and
    ``gm_bpref``; the sum over queries for trec_eval's counts (``num_rel_ret``,
    ``num_ret``, ``num_rel``, ``num_q``; ir_measures' ``NumRet``, ...). The
    tests, the interval, the effect size and wins / ties / losses compare the
    per-query quantity whose mean that summary is, and the report says which
    in a line per metric:

    - a geometric mean: log(max(value, 1e-5)) per query, so the difference
      is that of the logs of the geometric means (exp of it is their ratio);
    - a sum: the per-query values; the difference and its interval are of
      the sums, n times the mean per-query difference (the test is the same);
    - a weighted mean: w * value / mean(w) per query (w the query weights,
      shared by the evaluations), whose mean is the weighted mean: the
      randomization test flips the signs of the weighted differences, and the
      bootstrap resamples them (the denominator, the sum of the weights, held
      at its value); wins, ties and losses count queries, unweighted.

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
    n_resamples x queries x comparisons, and as queries x comparisons only
    from 50,000 queries under ``approximation='auto'``.

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
    metrics = _metrics(evaluations, baseline, metrics)
    run_test = {"randomization": lambda x, y: randomization_test(
                    x, y, n_resamples=n_resamples, random_state=random_state,
                    approximation=approximation),
                "ttest": paired_ttest, "wilcoxon": wilcoxon_test}[test]
    rows, aggregates, weighted = [], {}, False
    means = {name: {} for name in names}
    differences = {metric: {} for metric in metrics}
    for metric in metrics:
        for name in names:
            paired = paired_on_scale(evaluations, name, baseline, metric, missing)
            means[name][metric] = paired.mean
            aggregates[metric] = paired.aggregate
            # (a mean by impressions, gauc's, is weighted whatever the evaluation)
            weighted = weighted or (paired.weighted and paired.aggregate != "impressions")
            if name != baseline:
                ci = bootstrap_ci(paired.x - paired.y, confidence=confidence,
                                  n_resamples=n_resamples, random_state=random_state,
                                  approximation=approximation)
                rows.append(_row(metric, name, baseline, paired, ci, run_test))
                differences[metric][name] = paired.x - paired.y
    adjusted = adjust(np.asarray([row["pvalue"] for row in rows]), correction)
    comparisons = [Comparison(**row, pvalue_corrected=float(pa), significant=bool(pa < alpha),
                              confidence=confidence, alpha=alpha, test=test)
                   for row, pa in zip(rows, adjusted, strict=True)]
    return Report(means, comparisons, baseline, test, correction, alpha, confidence,
                  aggregates, weighted, differences)


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


def _metrics(evaluations, baseline, metrics) -> list:
    """The metrics to compare: those given, held by every evaluation, or by
    default those all evaluations share; an error naming each side's metrics
    when there is none."""
    def held():
        return "; ".join(f"{name!r} holds {', '.join(map(str, ev.metrics))}"
                         for name, ev in evaluations.items())

    if metrics is None:
        metrics = [str(m) for m in evaluations[baseline].metrics
                   if all(str(m) in ev.per_query for ev in evaluations.values())]
        if not metrics:
            raise ValueError(
                f"The evaluations share no metric ({held()}), so there is nothing to "
                "compare. Evaluate every system with the same metrics (trec_eval's "
                "ndcg_cut.10, with linear gains, is not ndcg@10), or pass metrics=[...] "
                "naming a metric every evaluation holds.")
        return metrics
    metrics = [str(m) for m in metrics]
    if not metrics:
        raise ValueError("metrics is empty; pass the metrics to compare, or None for every "
                         "metric the evaluations share.")
    for metric in metrics:
        lacking = [name for name, ev in evaluations.items() if metric not in ev.per_query]
        if lacking:
            raise ValueError(f"metrics: {metric!r} is not a metric of evaluations"
                             f"[{lacking[0]!r}] ({held()}).")
    return metrics


def _row(metric, name, baseline, paired, ci, run_test) -> dict:
    """The fields of one :class:`Comparison` but the corrected p-value."""
    d = paired.x - paired.y
    sd = d.std(ddof=1) if d.shape[0] > 1 else 0.0
    return dict(metric=metric, system=name, baseline=baseline, mean=paired.mean,
                baseline_mean=paired.baseline_mean,
                difference=float(d.sum() if paired.aggregate == "sum" else d.mean()),
                low=ci.low * paired.factor, high=ci.high * paired.factor,
                pvalue=float(run_test(paired.x, paired.y).pvalue) if np.any(d != 0) else 1.0,
                wins=int((paired.ties > 1e-12).sum()),
                ties=int((np.abs(paired.ties) <= 1e-12).sum()),
                losses=int((paired.ties < -1e-12).sum()),
                effect_size=float(d.mean() / sd) if sd > 0 else 0.0,
                n_queries=int(d.shape[0]), aggregate=paired.aggregate,
                weighted=paired.weighted)
