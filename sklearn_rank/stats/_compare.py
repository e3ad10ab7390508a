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
from ._folds import folded
from ._pairing import paired_values
from ._report import Report
from ._scale import paired_on_scale
from ._tests import APPROXIMATIONS, paired_ttest, randomization_test, wilcoxon_test
from ._tukey import randomized_tukey_hsd, tukey_hsd

__all__ = ["TUKEY_TESTS", "compare"]

#: The tests of every pair of systems at once, simultaneous over the pairs.
TUKEY_TESTS = ("tukey", "randomized_tukey")


@validate_params({
    "evaluations": [Mapping],
    "baseline": [str, list, tuple, None],
    "metrics": ["array-like", None],
    "test": [StrOptions({"randomization", "ttest", "wilcoxon", *TUKEY_TESTS})],
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
    evaluations : dict of str -> Evaluation, or of str -> folds
        Each system's per-query results (from :func:`~sklearn_rank.metrics.evaluate`
        or :func:`~sklearn_rank.trec.evaluate_run`), on the same queries. A
        system evaluated on several folds or data sets gives them as a dict of
        fold -> Evaluation (or a list, the folds by position), the same folds
        for every system: its queries are then keyed by (fold, query id), and
        the systems are compared on the union of the folds' queries.
    baseline : str, list of str or None, default=None
        The system the others are compared with; a list: each other system
        is compared with each of them (a pair of two baselines once, the
        later one against the earlier); None: every pair of systems, each
        system against every system before it.
    metrics : list of str, default=None
        Metrics to compare, each held by every evaluation; by default every
        metric all evaluations share (an error names each one's metrics when
        they share none).
    test : {'randomization', 'ttest', 'wilcoxon', 'tukey', 'randomized_tukey'}, \
default='randomization'
        The paired test for each (system, metric); or a test of every pair of
        systems at once, whose p-values are simultaneous over the pairs of
        all the systems: ``'tukey'``, Tukey's HSD in the two-way design
        (system and query, :func:`tukey_hsd`), or ``'randomized_tukey'``,
        Carterette's randomized Tukey HSD (:func:`randomized_tukey_hsd`).
        Both compare every system on the same queries.
    correction : {'holm', 'bonferroni', 'fdr_bh'} or None, default='holm'
        Correction of the p-values for the number of comparisons (pairs of
        systems x metrics; for Tukey's tests, whose p-values already cover the
        pairs of systems, each pair's p-values over the metrics; with one
        metric there is nothing left to correct, and the report says None),
        by statsmodels' names: Holm's
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
        of queries, ``'normal'`` always approximates. (The Tukey tests do not
        use it; their intervals do.)

    Returns
    -------
    report : Report
        ``str(report)`` is a readable table with significance markers and one
        sentence per comparison; ``to_frame()``, ``to_markdown()``,
        ``to_latex()``; ``plot()`` (per-query differences) and, for Tukey's
        tests, ``plot_means()`` (the means with simultaneous intervals).

    Raises
    ------
    ValueError
        When a baseline is not a system, or there is one system only; when
        some systems are given by folds and others not, or by other folds;
        when the evaluations share no metric, or one lacks a metric of
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

    Every pair of three systems, with Tukey's HSD:

    >>> c = evaluate(y, y + rng.normal(0, 1.0, y.shape), qid=qid, metrics=["ndcg@5"])
    >>> report = compare({"A": a, "B": b, "C": c}, test="tukey")
    >>> [(c.system, c.baseline) for c in report.comparisons]
    [('B', 'A'), ('C', 'A'), ('C', 'B')]
    """
    evaluations = folded(evaluations)
    names = _systems(evaluations, baseline)
    pairs = _pairs(names, baseline)
    reference = pairs[0][1]
    metrics = _metrics(evaluations, reference, metrics)
    rows, aggregates, weighted, tukeys, approximated = [], {}, False, {}, False
    means = {name: {} for name in names}
    differences = {metric: {} for metric in metrics}
    baselines = list(dict.fromkeys(base for _, base in pairs))
    single = len(baselines) == 1  # one baseline (or two systems): keyed by system
    for metric in metrics:
        # each system paired with the reference: its summary, and reused below
        with_reference = {name: paired_on_scale(evaluations, name, reference, metric, missing)
                          for name in names}
        for name, paired in with_reference.items():
            means[name][metric] = paired.mean
            aggregates[metric] = paired.aggregate
        weighted = weighted or _weighted(with_reference)
        run_test = _test(test, n_resamples, random_state, approximation)
        if test in TUKEY_TESTS:
            tukeys[metric] = _tukey(evaluations, with_reference, reference, metric, missing,
                                    test, n_resamples, random_state)
            run_test = _tukey_pvalue(tukeys[metric])
        for name, base in pairs:
            paired = with_reference[name] if base == reference else paired_on_scale(
                evaluations, name, base, metric, missing)
            ci = bootstrap_ci(paired.x - paired.y, confidence=confidence,
                              n_resamples=n_resamples, random_state=random_state,
                              approximation=approximation)
            rows.append(_row(metric, name, base, paired, ci, run_test))
            approximated = approximated or ci.approximated
            differences[metric][name if single else (name, base)] = paired.x - paired.y
    correction = _correction(correction, test, metrics)
    adjusted = _adjusted(rows, correction, test)
    comparisons = [Comparison(**row, pvalue_corrected=float(pa), significant=bool(pa < alpha),
                              confidence=confidence, alpha=alpha, test=test)
                   for row, pa in zip(rows, adjusted, strict=True)]
    return Report(means, comparisons, baselines[0] if single else None, test, correction,
                  alpha, confidence, aggregates, weighted, differences, baselines=baselines,
                  tukey=tukeys, approximated=approximated)


def _correction(correction, test: str, metrics: list):
    """The correction the report makes: none for Tukey's tests on one metric (their
    p-values already cover the pairs of systems: nothing is left to correct)."""
    return None if test in TUKEY_TESTS and len(metrics) == 1 else correction


def _weighted(with_reference: dict) -> bool:
    """Whether the evaluations weigh their queries (a mean by impressions, gauc's,
    is weighted whatever the evaluation: not counted)."""
    return any(p.weighted and p.aggregate != "impressions" for p in with_reference.values())


def _test(test: str, n_resamples: int, random_state, approximation: str = "auto"):
    """The paired test of ``test=``: a function of (x, y) with a ``pvalue``."""
    if test == "randomization":
        return lambda x, y: randomization_test(x, y, n_resamples=n_resamples,
                                               random_state=random_state,
                                               approximation=approximation)
    return {"ttest": paired_ttest, "wilcoxon": wilcoxon_test}.get(test)


def _tukey(evaluations, with_reference, reference, metric, missing, test, n_resamples,
           random_state):
    """Tukey's HSD (or its randomized form) of every system on ``metric``, on the
    compared scale (``with_reference``: each system paired with ``reference``),
    over the queries every system answers."""
    queries = None
    for name in with_reference:
        _, _, qids = paired_values(evaluations[name], evaluations[reference], metric=metric,
                                   missing=missing)
        qids = qids.tolist()
        if queries is not None and qids != queries:
            raise ValueError(
                f"{metric}: test={test!r} compares every system on the same queries, and "
                f"evaluations[{name!r}] is paired with evaluations[{reference!r}] on other "
                "queries than the other systems are. Evaluate every system on the same "
                "queries, or use a pairwise test (test='randomization').")
        queries = qids
    values = {name: paired.x for name, paired in with_reference.items()}
    if test == "tukey":
        return tukey_hsd(values)
    return randomized_tukey_hsd(values, n_resamples=n_resamples, random_state=random_state)


def _tukey_pvalue(result):
    """The p-value of a pair, as a test's result, from the simultaneous ones of
    ``result`` (matched by the pair's means, which are the rows')."""
    index = {name: i for i, name in enumerate(result.systems)}

    def run(name, base):
        return float(result.pvalue[index[name], index[base]])

    run.by_names = True
    return run


def _adjusted(rows: list, correction, test: str) -> np.ndarray:
    """The corrected p-values of the rows: over all (pair, metric) comparisons; for
    Tukey's tests, whose p-values are simultaneous over the pairs of systems, over
    the metrics of each pair."""
    pvalues = np.asarray([row["pvalue"] for row in rows])
    if test not in TUKEY_TESTS:
        return adjust(pvalues, correction)
    out = np.empty_like(pvalues)
    groups = {}
    for i, row in enumerate(rows):
        groups.setdefault((row["system"], row["baseline"]), []).append(i)
    for at in groups.values():
        out[at] = adjust(pvalues[at], correction)
    return out


def _pairs(names: list, baseline) -> list:
    """The (system, baseline) pairs compared: every pair (the later system against
    the earlier) for None, each other system against the baseline, or against
    each baseline of a list (a pair of baselines once, the later as the system)."""
    if baseline is None:
        pairs = [(names[j], names[i]) for j in range(len(names)) for i in range(j)]
    else:
        baselines = [baseline] if isinstance(baseline, str) else list(baseline)
        pairs = [(name, base) for i, base in enumerate(baselines) for name in names
                 if name != base and name not in baselines[:i]]
    if not pairs:
        raise ValueError(f"There is nothing to compare: {len(names)} system "
                         f"({', '.join(map(repr, names))}); pass at least two evaluations.")
    return pairs


def _systems(evaluations, baseline) -> list:
    """The names of the systems, checked to hold evaluations and the baseline(s)."""
    if not evaluations:
        raise ValueError("evaluations is empty; pass {name: Evaluation, ...}.")
    for name, ev in evaluations.items():
        if not isinstance(ev, Evaluation):
            raise TypeError(f"evaluations[{name!r}] must be an Evaluation, got "
                            f"{type(ev).__name__}.")
    names = list(evaluations)
    baselines = [baseline] if isinstance(baseline, str) or baseline is None else \
        list(baseline)
    if not baselines:
        raise ValueError("baseline is an empty list; name the baselines, or pass None to "
                         "compare every pair of systems.")
    for base in baselines:
        if base is not None and base not in evaluations:
            raise ValueError(f"baseline {base!r} is not one of the systems {names}.")
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
                pvalue=_pvalue(run_test, paired, name, baseline) if np.any(d != 0) else 1.0,
                wins=int((paired.ties > 1e-12).sum()),
                ties=int((np.abs(paired.ties) <= 1e-12).sum()),
                losses=int((paired.ties < -1e-12).sum()),
                effect_size=float(d.mean() / sd) if sd > 0 else 0.0,
                n_queries=int(d.shape[0]), aggregate=paired.aggregate,
                weighted=paired.weighted)


def _pvalue(run_test, paired, name, baseline) -> float:
    """The p-value of one comparison by ``run_test``."""
    if getattr(run_test, "by_names", False):
        return run_test(name, baseline)
    return float(run_test(paired.x, paired.y).pvalue)
