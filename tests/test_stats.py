"""Significance tests, bootstrap intervals, reports and the CV comparison."""

import dataclasses
import itertools

import numpy as np
import pytest
from scipy import stats

from sklearn_rank.metrics import evaluate
from sklearn_rank.stats import (
    bootstrap_ci,
    compare,
    compare_cv_candidates,
    corrected_resampled_ttest,
    paired_ttest,
    paired_values,
    randomization_test,
    wilcoxon_test,
)
from sklearn_rank.stats._report import _adjust


def _evaluations(seed=0, n_queries=60, noises=(2.0, 1.5, 0.5), metrics=("ndcg@5", "map")):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), 12)
    y = rng.integers(0, 3, qid.shape[0])
    return {f"S{i}": evaluate(y, y + rng.normal(0, sd, y.shape), qid=qid, metrics=list(metrics))
            for i, sd in enumerate(noises)}


# ---------------------------------------------------------------- pairing


def test_paired_values_aligns_evaluations_by_qid():
    rng = np.random.default_rng(1)
    qid = np.repeat(["b", "a", "c"], 4)
    y = rng.integers(0, 3, 12)
    a = evaluate(y, rng.random(12), qid=qid, metrics=["ndcg"])
    keep = qid != "c"
    b = evaluate(y[keep], rng.random(keep.sum()), qid=qid[keep], metrics=["ndcg"])
    with pytest.raises(ValueError, match=r"different queries: 1 only in the first \(c\), 0 "
                                         r"only in the second \(\).*missing='drop'"):
        paired_values(a, b)
    x, z, qids = paired_values(a, b, missing="drop")
    assert qids.tolist() == ["a", "b"]
    np.testing.assert_array_equal(x, a.per_query["ndcg"][:2])
    x, z, qids = paired_values(a, b, missing="zero")
    assert qids.tolist() == ["a", "b", "c"] and z[2] == 0.0


def test_paired_values_errors_and_nan_pairs():
    evs = _evaluations()
    with pytest.raises(ValueError, match=r"holds 2 metrics.*pass metric=\.\.\."):
        paired_values(evs["S0"], evs["S1"])
    with pytest.raises(ValueError, match=r"has no metric 'p@5'"):
        paired_values(evs["S0"], evs["S1"], metric="p@5")
    with pytest.raises(TypeError, match=r"not one of each"):
        paired_values(evs["S0"], [1, 2])
    with pytest.raises(ValueError, match=r"same length"):
        paired_values([1, 2, 3], [1, 2])
    x, y, _ = paired_values([1.0, np.nan, 3.0], [0.5, np.nan, 0.1])
    assert x.tolist() == [1.0, 3.0] and y.tolist() == [0.5, 0.1]  # skipped queries drop out
    with pytest.raises(ValueError, match=r"position 1 is NaN in a but 0\.2 in b \(2 such"):
        paired_values([1.0, np.nan, 3.0], [0.5, 0.2, np.nan])  # skipped on one side only


# ---------------------------------------------------------------- tests


def test_ttest_and_wilcoxon_are_scipys_on_the_paired_values():
    evs = _evaluations()
    x, y, _ = paired_values(evs["S2"], evs["S0"], metric="map")
    ours = paired_ttest(evs["S2"], evs["S0"], metric="map")
    theirs = stats.ttest_rel(x, y)
    assert (ours.statistic, ours.pvalue) == (theirs.statistic, theirs.pvalue)
    ours = wilcoxon_test(evs["S2"], evs["S0"], metric="map")
    theirs = stats.wilcoxon(x, y)
    assert (ours.statistic, ours.pvalue) == (theirs.statistic, theirs.pvalue)


@pytest.mark.parametrize("seed", range(5))
def test_randomization_test_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 11))
    a, b = rng.random(n), rng.random(n)
    d = a - b
    # brute force: every sign assignment
    extreme = [abs(np.mean(np.array(s) * d)) >= abs(d.mean()) - 1e-12
               for s in itertools.product([1, -1], repeat=n)]
    res = randomization_test(a, b)
    assert res.exact and res.n_resamples == 2**n
    assert res.pvalue == pytest.approx(np.mean(extreme), abs=1e-15)
    assert res.statistic == pytest.approx(d.mean())
    # scipy's exact permutation test on paired samples agrees
    scipy_p = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                     permutation_type="samples", vectorized=True,
                                     n_resamples=10**6).pvalue
    assert res.pvalue == pytest.approx(scipy_p, abs=1e-12)


def test_randomization_monte_carlo_is_close_to_exact():
    rng = np.random.default_rng(7)
    a, b = rng.random(14), rng.random(14) + 0.1
    exact = randomization_test(a, b, n_resamples=2**14)
    approx = randomization_test(a, b, n_resamples=4000, random_state=0)
    assert exact.exact and not approx.exact
    assert approx.pvalue == pytest.approx(exact.pvalue, abs=0.03)
    again = randomization_test(a, b, n_resamples=4000, random_state=0)
    assert again.pvalue == approx.pvalue  # seeded


def test_randomization_false_positive_rate_under_the_null():
    """400 seeded null data sets (differences symmetric around 0): about 5% of
    p-values fall below 0.05."""
    rng = np.random.default_rng(2024)
    pvalues = [randomization_test(rng.normal(size=25), np.zeros(25), n_resamples=999,
                                  random_state=i).pvalue for i in range(400)]
    rate = np.mean(np.array(pvalues) < 0.05)
    assert 0.025 <= rate <= 0.085, rate


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_is_near_nominal(method):
    """Seeded simulation: the 90% interval of a skewed mean covers the truth
    about 90% of the time."""
    rng = np.random.default_rng(11)
    true_mean = 2 / 7  # Beta(2, 5)
    hits = [bootstrap_ci(rng.beta(2, 5, size=40), confidence=0.9, n_resamples=1000,
                         method=method, random_state=i) for i in range(200)]
    coverage = np.mean([r.low <= true_mean <= r.high for r in hits])
    assert 0.83 <= coverage <= 0.96, coverage


def test_bootstrap_of_a_paired_difference_and_degenerate_data():
    evs = _evaluations()
    res = bootstrap_ci(evs["S2"], evs["S0"], metric="ndcg@5", random_state=0)
    x, y, _ = paired_values(evs["S2"], evs["S0"], metric="ndcg@5")
    same = bootstrap_ci(x - y, random_state=0)
    assert (res.low, res.high, res.statistic) == (same.low, same.high, same.statistic)
    assert res.low < res.statistic < res.high
    flat = bootstrap_ci([0.5, 0.5, 0.5])
    assert (flat.low, flat.high) == (0.5, 0.5)
    with pytest.raises(ValueError, match=r"'method' parameter of bootstrap_ci must be a str "
                                         r"among"):
        bootstrap_ci([1, 2], method="basic")


# ---------------------------------------------------------------- reports


def test_holm_and_bonferroni_adjustments():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    assert _adjust(p, "bonferroni").tolist() == [0.04, 0.16, 0.12, 0.8]
    # Holm: sorted 0.01, 0.03, 0.04, 0.2 times 4, 3, 2, 1, made monotone
    np.testing.assert_allclose(_adjust(p, "holm"), [0.04, 0.09, 0.09, 0.2])
    assert _adjust(p, None).tolist() == p.tolist()


def test_compare_numbers_equal_direct_computations():
    evs = _evaluations()
    before = {k: {m: v.copy() for m, v in ev.per_query.items()} for k, ev in evs.items()}
    report = compare(evs, baseline="S0", random_state=3, n_resamples=2000)
    assert report.systems == ["S0", "S1", "S2"] and report.metrics == ["ndcg@5", "map"]
    assert len(report.comparisons) == 4
    raw = []
    for c in report.comparisons:
        x, y, _ = paired_values(evs[c.system], evs["S0"], metric=c.metric)
        d = x - y
        assert c.mean == pytest.approx(x.mean()) and c.baseline_mean == pytest.approx(y.mean())
        assert c.difference == pytest.approx(d.mean())
        assert (c.wins, c.ties, c.losses) == ((d > 1e-12).sum(), (abs(d) <= 1e-12).sum(),
                                              (d < -1e-12).sum())
        assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
        p = randomization_test(x, y, n_resamples=2000, random_state=3).pvalue
        assert c.pvalue == p
        ci = bootstrap_ci(d, n_resamples=2000, random_state=3)
        assert (c.low, c.high) == (ci.low, ci.high)
        raw.append(p)
    np.testing.assert_allclose([c.pvalue_corrected for c in report.comparisons],
                               _adjust(np.array(raw), "holm"))
    assert report.means["S2"]["map"] == pytest.approx(evs["S2"].mean["map"])
    for k, ev in evs.items():  # inputs untouched
        for m, v in ev.per_query.items():
            np.testing.assert_array_equal(v, before[k][m])


def test_report_renders():
    report = compare(_evaluations(), random_state=0, n_resamples=1000)
    text = str(report)
    assert "Δ vs S0" in text and "p (Holm)" in text and "W/T/L" in text
    assert "S2 beats S0 on ndcg@5 by +" in text and "(Holm)" in text
    # A difference that is not significant is not called a win.
    c = report.comparisons[0]
    flat = dataclasses.replace(c, significant=False, pvalue_corrected=0.2853)
    assert flat.sentence(None).startswith(
        f"{c.system} does not differ significantly from S0 on {c.metric}: "
        f"{c.difference:+.4f} [{c.low:+.4f}, {c.high:+.4f}], p = 0.285, ")
    worse = dataclasses.replace(c, significant=True, difference=-0.5, pvalue_corrected=0.01)
    assert worse.sentence("bonferroni").startswith(
        f"{c.system} trails S0 on {c.metric} by -0.5000 [")
    assert "p = 0.010 (Bonferroni)" in worse.sentence("bonferroni")
    strong = [c for c in report.comparisons if c.system == "S2"]
    assert all(c.significant for c in strong)  # much less noise: clearly better
    # 1000 resamples: the smallest p-value is 1/1001, times 4 comparisons (Holm)
    assert "0.004 *" in text
    md = report.to_markdown()
    assert md.count("\n|") == 1 + 2 * 3  # header rule + 2 metrics x 3 systems
    latex = report.to_latex()
    assert latex.startswith(r"\begin{tabular}{llrrrrrr}") and r"$\Delta$ vs S0" in latex
    frame = report.to_frame()
    assert frame.shape[0] == 6 and frame.loc[("map", "S2"), "significant"]
    relabelled = report.relabel({"ndcg@5": "ndcg_cut_5"})
    assert relabelled.metrics == ["ndcg_cut_5", "map"]


@pytest.mark.parametrize("test", ["ttest", "wilcoxon"])
def test_compare_with_other_tests_and_no_correction(test):
    evs = _evaluations(metrics=("ndcg@5",))
    report = compare(evs, test=test, correction=None, random_state=0, n_resamples=500)
    x, y, _ = paired_values(evs["S1"], evs["S0"])
    scipy_test = stats.ttest_rel if test == "ttest" else stats.wilcoxon
    assert report.comparisons[0].pvalue == pytest.approx(scipy_test(x, y).pvalue)
    assert report.comparisons[0].pvalue_corrected == report.comparisons[0].pvalue


def test_compare_errors():
    evs = _evaluations()
    with pytest.raises(ValueError, match=r"baseline 'X' is not one of the systems"):
        compare(evs, baseline="X")
    with pytest.raises(ValueError, match=r"'test' parameter of compare must be a str among"):
        compare(evs, test="z")
    with pytest.raises(ValueError, match=r"'correction' parameter of compare must be a str "
                                         r"among"):
        compare(evs, correction="fdr")
    with pytest.raises(TypeError, match=r"evaluations\['S0'\] must be an Evaluation"):
        compare({"S0": [1, 2]})


# ---------------------------------------------------------------- cross-validation


def test_corrected_resampled_ttest_by_hand():
    a = np.array([0.61, 0.63, 0.60, 0.64, 0.62])
    b = np.array([0.60, 0.61, 0.60, 0.62, 0.60])
    d = a - b
    t = d.mean() / np.sqrt((1 / 5 + 1 / 4) * d.var(ddof=1))
    res = corrected_resampled_ttest(a, b, test_train_ratio=1 / 4)
    assert res.statistic == pytest.approx(t) and res.df == 4
    assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(t), 4))
    # the correction makes it more conservative than the plain paired t-test
    assert res.pvalue > stats.ttest_rel(a, b).pvalue
    with pytest.raises(ValueError, match=r"one score per fold"):
        corrected_resampled_ttest([1.0], [2.0], test_train_ratio=0.25)


def test_compare_cv_candidates_on_a_search():
    import sklearn
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV

    from sklearn_rank.datasets import make_ranking
    from sklearn_rank.estimators import QueryRanker
    from sklearn_rank.metrics import make_ranking_scorer
    from sklearn_rank.model_selection import QueryKFold

    X, y, qid = make_ranking(n_queries=60, random_state=0)
    scoring = {"ndcg@10": make_ranking_scorer("ndcg@10"), "map": make_ranking_scorer("map")}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(QueryRanker(Ridge()), {"estimator__alpha": [0.1, 100, 1e5]},
                              scoring=scoring, refit="ndcg@10", cv=QueryKFold(4))
        search.fit(X, y, qid=qid)
    r = search.cv_results_
    best, second = np.argsort(r["rank_test_ndcg@10"], kind="stable")[:2]
    folds = [[r[f"split{i}_test_ndcg@10"][c] for i in range(4)] for c in (best, second)]
    expected = corrected_resampled_ttest(*folds, test_train_ratio=1 / 3)
    assert compare_cv_candidates(search, metric="ndcg@10") == expected
    by_params = compare_cv_candidates(r, r["params"][best], r["params"][second],
                                      metric="ndcg@10")
    assert by_params == expected
    with pytest.raises(ValueError, match=r"several metrics \(map, ndcg@10\)"):
        compare_cv_candidates(search)
    with pytest.raises(ValueError, match=r"No candidate has the parameters"):
        compare_cv_candidates(search, {"estimator__alpha": 3}, 0, metric="map")
