"""Many systems at once: every pair, several baselines, Tukey's HSD (SciPy's, the
two-way one, Carterette's randomized one), corrections over systems x metrics,
folds keyed by (fold, query), the report's tables and plots (issue 28 item 2)."""

import itertools

import numpy as np
import pytest
from scipy import stats

from sklearn_rank.metrics import evaluate
from sklearn_rank.stats import (
    bootstrap_ci,
    compare,
    paired_values,
    randomization_test,
    randomized_tukey_hsd,
    tukey_hsd,
)
from sklearn_rank.stats._corrections import adjust


def _evaluations(seed=0, n_queries=40, noises=(2.0, 1.5, 0.5, 1.4), metrics=("ndcg@5", "map"),
                 qid=None):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), 8) if qid is None else qid
    y = rng.integers(0, 3, qid.shape[0])
    return {f"S{i}": evaluate(y, y + rng.normal(0, sd, y.shape), qid=qid, metrics=list(metrics))
            for i, sd in enumerate(noises)}


def _values(seed, n, k):
    rng = np.random.default_rng(seed)
    base = rng.uniform(size=(n, 1))
    return {f"S{i}": base[:, 0] + rng.normal(0.05 * i, 0.1, n) for i in range(k)}


# ---------------------------------------------------------------- pairs


def test_every_pair_by_default_each_against_the_earlier_ones():
    evs = _evaluations()
    report = compare(evs, n_resamples=300, random_state=4)
    pairs = [(c.system, c.baseline) for c in report.comparisons if c.metric == "map"]
    assert pairs == [("S1", "S0"), ("S2", "S0"), ("S2", "S1"), ("S3", "S0"), ("S3", "S1"),
                     ("S3", "S2")]
    assert report.baseline is None and report.baselines == ["S0", "S1", "S2"]
    raw = []
    for c in report.comparisons:  # each number is that of the pair compared alone
        x, y, _ = paired_values(evs[c.system], evs[c.baseline], metric=c.metric)
        assert c.difference == pytest.approx((x - y).mean(), rel=1e-12)
        assert c.pvalue == randomization_test(x, y, n_resamples=300, random_state=4).pvalue
        ci = bootstrap_ci(x - y, n_resamples=300, random_state=4)
        assert (c.low, c.high) == (ci.low, ci.high)
        raw.append(c.pvalue)
    # Holm over every pair x metric: 12 comparisons
    np.testing.assert_allclose([c.pvalue_corrected for c in report.comparisons],
                               adjust(np.array(raw), "holm"), rtol=1e-12)


def test_two_systems_without_a_baseline_are_the_first_as_baseline():
    evs = dict(list(_evaluations().items())[:2])
    assert str(compare(evs, n_resamples=200)) == str(compare(evs, baseline="S0",
                                                             n_resamples=200))
    assert compare(evs, n_resamples=200).baseline == "S0"


def test_a_list_of_baselines():
    evs = _evaluations(metrics=("map",))
    report = compare(evs, baseline=["S0", "S2"], n_resamples=200)
    assert [(c.system, c.baseline) for c in report.comparisons] == [
        ("S1", "S0"), ("S2", "S0"), ("S3", "S0"), ("S1", "S2"), ("S3", "S2")]
    one = compare(evs, baseline=["S2"], n_resamples=200)
    assert one.baseline == "S2" and str(one) == str(compare(evs, baseline="S2",
                                                            n_resamples=200))


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "fdr_bh"])
def test_corrections_over_systems_and_metrics_are_statsmodels(correction):
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    report = compare(_evaluations(), test="ttest", correction=correction)
    raw = np.array([c.pvalue for c in report.comparisons])
    assert raw.shape == (12,)
    theirs = multipletests(raw, alpha=0.05, method=correction)[1]
    np.testing.assert_allclose([c.pvalue_corrected for c in report.comparisons], theirs,
                               rtol=1e-12)


def test_errors_name_the_fix():
    evs = _evaluations()
    with pytest.raises(ValueError, match=r"baseline 'X' is not one of the systems"):
        compare(evs, baseline=["S0", "X"])
    with pytest.raises(ValueError, match=r"baseline is an empty list"):
        compare(evs, baseline=[])
    with pytest.raises(ValueError, match=r"nothing to compare: 1 system \('S0'\)"):
        compare({"S0": evs["S0"]})


# ---------------------------------------------------------------- Tukey's HSD


@pytest.mark.parametrize("seed", range(3))
def test_one_way_tukey_hsd_is_scipys(seed):
    values = _values(seed, n=30, k=4)
    ours = tukey_hsd(values, paired=False)
    theirs = stats.tukey_hsd(*values.values())
    np.testing.assert_allclose(ours.pvalue, theirs.pvalue, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ours.statistic, theirs.statistic, rtol=1e-12)
    ci = theirs.confidence_interval(0.9)
    low, high = ours.confidence_interval(0.9)
    np.testing.assert_allclose(low, ci.low, rtol=1e-9)
    np.testing.assert_allclose(high, ci.high, rtol=1e-9)


def test_two_way_tukey_hsd_uses_the_residual_of_system_plus_query():
    """The error mean square and its degrees of freedom are those of the two-way
    additive ANOVA (statsmodels' OLS of value ~ system + query)."""
    pd = pytest.importorskip("pandas")
    ols = pytest.importorskip("statsmodels.formula.api").ols
    values = _values(5, n=25, k=3)
    frame = pd.DataFrame([{"system": s, "query": q, "value": v}
                          for s, vs in values.items() for q, v in enumerate(vs)])
    fit = ols("value ~ C(system) + C(query)", data=frame).fit()
    means = np.array([np.mean(v) for v in values.values()])
    q = np.abs(means[:, None] - means[None, :]) / np.sqrt(fit.mse_resid / 25)
    expected = stats.studentized_range.sf(q, 3, fit.df_resid)
    np.fill_diagonal(expected, 1.0)
    result = tukey_hsd(values)
    assert fit.df_resid == 2 * 24
    np.testing.assert_allclose(result.pvalue, expected, rtol=1e-9)
    # the paired design sees what the one-way one misses: a shared query effect
    assert result.pvalue[0, 2] < tukey_hsd(values, paired=False).pvalue[0, 2]


def test_simultaneous_intervals_are_disjoint_exactly_when_significant():
    values = _values(2, n=40, k=5)
    for result in (tukey_hsd(values), randomized_tukey_hsd(values, n_resamples=2000)):
        low, high = result.simultaneous_intervals(0.95)
        disjoint = (low[:, None] > high[None, :]) | (high[:, None] < low[None, :])
        significant = result.pvalue < 0.05
        off = ~np.eye(5, dtype=bool)
        assert (disjoint == significant)[off].all()
        assert significant[off].any() and not significant[off].all()


def _brute_force_randomized_tukey(values):
    """Every within-query permutation of the systems' scores, written out."""
    x = np.column_stack(list(values.values()))
    n, k = x.shape
    observed = np.abs(x.mean(0)[:, None] - x.mean(0)[None, :])
    ranges = []
    for choice in itertools.product(list(itertools.permutations(range(k))), repeat=n):
        means = np.mean([x[q, list(p)] for q, p in enumerate(choice)], axis=0)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    return np.array([[np.mean(ranges >= o - 1e-12) for o in row] for row in observed])


@pytest.mark.parametrize("seed", range(3))
def test_randomized_tukey_hsd_exact_is_the_brute_force(seed):
    values = _values(seed, n=4, k=3)  # (3!)**4 = 1296 permutations
    result = randomized_tukey_hsd(values, n_resamples=1296)
    expected = _brute_force_randomized_tukey(values)
    np.fill_diagonal(expected, 1.0)
    np.testing.assert_allclose(result.pvalue, expected, rtol=0, atol=1e-12)


def test_randomized_tukey_hsd_monte_carlo_is_close_to_exact_and_seeded():
    values = _values(9, n=5, k=3)  # 6**5 = 7776 permutations
    exact = randomized_tukey_hsd(values, n_resamples=7776)
    approx = randomized_tukey_hsd(values, n_resamples=4000, random_state=1)
    np.testing.assert_allclose(approx.pvalue, exact.pvalue, atol=0.03)
    again = randomized_tukey_hsd(values, n_resamples=4000, random_state=1)
    np.testing.assert_array_equal(again.pvalue, approx.pvalue)


def test_tukey_errors():
    with pytest.raises(ValueError, match=r"at least 2 systems"):
        tukey_hsd({"A": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"values\['B'\] has shape \(3,\)"):
        tukey_hsd({"A": [1.0, 2.0], "B": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"values\['B'\] holds NaN"):
        randomized_tukey_hsd({"A": [1.0, 2.0], "B": [1.0, np.nan]})


@pytest.mark.parametrize("test", ["tukey", "randomized_tukey"])
def test_compare_with_tukey_takes_its_simultaneous_pvalues(test):
    evs = _evaluations()
    report = compare(evs, test=test, n_resamples=500, random_state=2)
    for metric in ("ndcg@5", "map"):
        values = {s: paired_values(ev, evs["S0"], metric=metric)[0] for s, ev in evs.items()}
        reference = (tukey_hsd(values) if test == "tukey"
                     else randomized_tukey_hsd(values, n_resamples=500, random_state=2))
        np.testing.assert_allclose(report.tukey[metric].pvalue, reference.pvalue, rtol=1e-12)
        for c in report.comparisons:
            if c.metric == metric:
                i, j = int(c.system[1]), int(c.baseline[1])
                assert c.pvalue == pytest.approx(reference.pvalue[i, j], rel=1e-12)
    # the correction is over the metrics of each pair (Tukey covers the pairs)
    for system, base in {(c.system, c.baseline) for c in report.comparisons}:
        pair = [c for c in report.comparisons if (c.system, c.baseline) == (system, base)]
        np.testing.assert_allclose([c.pvalue_corrected for c in pair],
                                   adjust(np.array([c.pvalue for c in pair]), "holm"))
    assert "simultaneous over the pairs of systems" in str(report)


def test_tukey_needs_the_same_queries_for_every_system():
    evs = _evaluations(metrics=("map",))
    qid = np.repeat(np.arange(1, 41), 8)  # queries 1..40, against 0..39
    evs["S3"] = _evaluations(metrics=("map",), qid=qid)["S3"]
    with pytest.raises(ValueError, match=r"compares every system on the same queries"):
        compare(evs, test="tukey", missing="drop")


# ---------------------------------------------------------------- folds


def test_folds_are_compared_on_the_union_keyed_by_fold_and_query():
    """Two folds whose query ids overlap (0..19 each): the same as one evaluation
    of their union with distinct ids."""
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(20), 6)
    y = [rng.integers(0, 3, qid.shape[0]) for _ in range(2)]
    scores = {s: [yf + rng.normal(0, sd, qid.shape[0]) for yf in y]
              for s, sd in {"A": 1.5, "B": 0.8}.items()}
    folds = {s: {f"fold{f}": evaluate(y[f], scores[s][f], qid=qid, metrics=["ndcg@5"])
                 for f in range(2)} for s in scores}
    union = {s: evaluate(np.concatenate(y), np.concatenate(scores[s]),
                         qid=np.concatenate([qid, qid + 100]), metrics=["ndcg@5"])
             for s in scores}
    ours = compare(folds, n_resamples=500).comparisons[0]
    theirs = compare(union, n_resamples=500).comparisons[0]
    assert ours.n_queries == 40
    for field in ("mean", "baseline_mean", "difference", "low", "high", "pvalue"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-12)
    # a list of folds: by position
    listed = {s: list(f.values()) for s, f in folds.items()}
    assert compare(listed, n_resamples=500).comparisons[0].pvalue == ours.pvalue


def test_folds_errors():
    evs = _evaluations(metrics=("map",))
    with pytest.raises(ValueError, match=r"evaluations\['S0'\] holds folds and "
                                         r"evaluations\['S1'\] one Evaluation"):
        compare({"S0": [evs["S0"], evs["S0"]], "S1": evs["S1"]})
    with pytest.raises(ValueError, match=r"has the folds \['a', 'b'\] and evaluations\['S1'\] "
                                         r"\['a', 'c'\]"):
        compare({"S0": {"a": evs["S0"], "b": evs["S0"]},
                 "S1": {"a": evs["S1"], "c": evs["S1"]}})
    with pytest.raises(TypeError, match=r"its fold 1 is a str"):
        compare({"S0": [evs["S0"], "x"], "S1": [evs["S1"], evs["S1"]]})


# ---------------------------------------------------------------- tables and plots


def test_tables_of_a_report_without_a_single_baseline():
    report = compare(_evaluations(), n_resamples=2000)
    text = str(report)
    assert text.splitlines()[0].split()[:4] == ["metric", "system", "vs", "mean"]
    assert "against the system in column vs" in text
    md = report.to_markdown()
    assert md.count("\n|") == 1 + 2 * (1 + 6)  # rule + 2 metrics x (a baseline + 6 pairs)
    assert "|---|---|---|---:|" in md
    latex = report.to_latex()
    assert latex.startswith(r"\begin{tabular}{lllrrrrrr}")
    assert r" $^*$ & " in latex  # the marked p-value is the seventh cell
    frame = report.to_frame()
    assert frame.index.names == ["metric", "system", "baseline"]
    assert frame.shape[0] == 14 and frame.loc[("map", "S2", "S1"), "significant"]
    assert "baselines=['S0', 'S1', 'S2']" in repr(report)


def test_plots_of_many_systems(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    evs = _evaluations()
    report = compare(evs, test="tukey", n_resamples=200)
    ax = report.plot(system="S2", baseline="S1", metric="map")
    x, y, _ = paired_values(evs["S2"], evs["S1"], metric="map")
    heights = [bar.get_height() for bar in ax.containers[0]]
    assert heights == pytest.approx(sorted(x - y, reverse=True), rel=1e-12, abs=1e-15)
    with pytest.raises(ValueError, match=r"'S2' is compared with 'S0', 'S1' only"):
        report.plot(system="S2", baseline="S3")
    ax = report.plot_means(metric="map")
    result = report.tukey["map"]
    order = np.argsort(result.means)
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"S{i}" for i in order]
    low, _ = result.simultaneous_intervals(0.95)
    segments = ax.collections[0].get_segments()
    assert [s[0][0] for s in segments] == pytest.approx(low[order].tolist(), rel=1e-12)
    ax.figure.savefig(tmp_path / "means.png")
    with pytest.raises(ValueError, match=r"test='tukey' or test='randomized_tukey'"):
        compare(evs, n_resamples=100).plot_means()


def test_tukey_labels_its_pvalues_and_corrects_only_over_metrics():
    one = compare(_evaluations(metrics=("map",)), test="tukey")
    assert one.correction is None  # nothing is left to correct over one metric
    assert "p (Tukey)" in str(one).splitlines()[0]
    assert one.comparisons[0].sentence(one.correction).count("(Tukey)") == 1
    two = compare(_evaluations(), test="randomized_tukey", n_resamples=200)
    assert two.correction == "holm" and "p (randomized Tukey, Holm)" in str(two)
    assert "after Holm's correction over the metrics" in str(two)


def test_randomized_tukey_of_two_systems_is_the_paired_randomization_test():
    """With two systems, permuting a query's two scores flips the sign of its
    difference, and the range of the two means is |mean difference|."""
    rng = np.random.default_rng(8)
    a, b = rng.uniform(size=9), rng.uniform(size=9)
    ours = randomized_tukey_hsd({"a": a, "b": b}, n_resamples=2**9)
    assert ours.pvalue[0, 1] == pytest.approx(randomization_test(a, b, n_resamples=2**9).pvalue,
                                              abs=1e-12)


def test_randomized_tukey_family_wise_error_rate_under_the_null():
    """400 seeded data sets of four equivalent systems (a query effect, no system
    effect): the chance that any of the six pairs is called significant at 0.05
    is about 0.05, as simultaneous p-values promise (Tukey's own formula is
    checked against statsmodels above)."""
    rng = np.random.default_rng(2026)
    hits = []
    for i in range(400):
        query = rng.normal(size=(20, 1))
        values = dict(enumerate((query + rng.normal(size=(20, 4))).T))
        result = randomized_tukey_hsd(values, n_resamples=199, random_state=i)
        hits.append(bool((result.pvalue < 0.05).any()))
    assert 0.025 <= np.mean(hits) <= 0.085, np.mean(hits)


def test_tukey_pvalues_do_not_depend_on_the_baselines():
    evs = _evaluations(metrics=("map",))
    every = compare(evs, test="tukey", n_resamples=100)
    for baseline in ("S2", ["S3", "S1"]):
        report = compare(evs, test="tukey", baseline=baseline, n_resamples=100)
        np.testing.assert_allclose(report.tukey["map"].pvalue, every.tukey["map"].pvalue,
                                   rtol=1e-12)
        for c in report.comparisons:
            i, j = int(c.system[1]), int(c.baseline[1])
            assert c.pvalue == pytest.approx(every.tukey["map"].pvalue[i, j], rel=1e-12)
