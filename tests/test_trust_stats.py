"""Statistics at the edges: scale (memory in batches), pairing by query id, and
degenerate data (one query, identical systems, NaN, huge resample counts)."""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from scipy import stats

import sklearn_rank
from sklearn_rank.metrics import evaluate
from sklearn_rank.metrics._evaluation import Evaluation
from sklearn_rank.stats import _bootstrap as stats_bootstrap
from sklearn_rank.stats import _tests as stats_tests
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


def _ev(qids, values, metric="ndcg@10"):
    """An Evaluation with given ids and values (what evaluate() returns)."""
    qids = np.asarray(qids)
    values = np.asarray(values, dtype=np.float64)
    return Evaluation(qids, {metric: values}, {metric: float(np.nanmean(values))},
                      {metric: 0}, None, [metric])


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- batches: same numbers


def _reference_randomization(d, n_resamples, seed):
    """Today's algorithm in one draw: all sign rows at once, as NumPy gives them."""
    signs = np.random.default_rng(seed).integers(0, 2, size=(n_resamples, d.shape[0]),
                                                 dtype=np.int8).astype(np.float64) * 2 - 1
    observed = abs(d.mean())
    threshold = observed - 1e-12 * max(1.0, observed)
    count = int((np.abs(signs @ d) / d.shape[0] >= threshold).sum())
    return (count + 1) / (n_resamples + 1)


@pytest.mark.parametrize("n, budget", [(300, 1000), (1001, 3000), (257, 1 << 22)])
def test_randomization_batches_give_the_draws_of_one_big_draw(monkeypatch, n, budget):
    """Whatever the batch (a multiple of 4 rows: four int8 signs per 32-bit
    word), the signs are those of one big draw, so the p-value is too."""
    rng = np.random.default_rng(n)
    a, b = rng.random(n), rng.random(n) + 0.5 / np.sqrt(n)  # p-values well inside (0, 1)
    monkeypatch.setattr(stats_tests, "BATCH_ELEMENTS", budget)
    res = randomization_test(a, b, n_resamples=999, random_state=7)
    expected = _reference_randomization(a - b, 999, 7)
    assert res.pvalue == expected and 0.01 < expected < 0.99
    assert not res.exact and res.n_resamples == 999


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_batches_give_scipys_unbatched_numbers(monkeypatch, method):
    """The batched bootstrap draws the same resamples as SciPy's unbatched one
    (what the package did before batching): identical interval and standard
    error; BCa agrees with SciPy's O(n^2) jackknife to rounding."""
    rng = np.random.default_rng(3)
    x, y = rng.beta(2, 3, 700), rng.beta(2, 3, 700)
    monkeypatch.setattr(stats_bootstrap, "BATCH_ELEMENTS", 5000)  # 7 resamples a batch
    ours = bootstrap_ci(x, y, n_resamples=2000, method=method, random_state=11)
    theirs = stats.bootstrap((x - y,), np.mean, n_resamples=2000, vectorized=True,
                             method="BCa" if method == "bca" else "percentile",
                             **stats_bootstrap._rng_keyword(stats.bootstrap,
                                                            np.random.default_rng(11)))
    assert ours.standard_error == theirs.standard_error
    if method == "percentile":
        assert (ours.low, ours.high) == tuple(theirs.confidence_interval)
    else:
        np.testing.assert_allclose((ours.low, ours.high), theirs.confidence_interval,
                                   rtol=1e-12)


def test_bca_on_skewed_data_matches_scipy():
    d = np.random.default_rng(5).exponential(size=60) - 0.8
    ours = bootstrap_ci(d, method="bca", n_resamples=3000, random_state=1)
    theirs = stats.bootstrap((d,), np.mean, n_resamples=3000, method="BCa",
                             **stats_bootstrap._rng_keyword(stats.bootstrap,
                                                            np.random.default_rng(1)))
    np.testing.assert_allclose((ours.low, ours.high), theirs.confidence_interval, rtol=1e-12)
    percentile = bootstrap_ci(d, n_resamples=3000, random_state=1)
    assert (ours.low, ours.high) != (percentile.low, percentile.high)  # skew moves it


_MEMORY_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    from sklearn_rank.metrics._evaluation import Evaluation
    from sklearn_rank.stats import compare, bootstrap_ci, paired_values
    n = 300_000
    rng = np.random.default_rng(0)
    base = rng.beta(2, 3, n)
    other = np.clip(base + rng.normal(0.001, 0.1, n), 0, 1)
    qid = np.arange(n) * 7
    def ev(v, q):
        return Evaluation(q, {"ndcg@10": v}, {"ndcg@10": float(v.mean())}, {"ndcg@10": 0},
                          None, ["ndcg@10"])
    a, b = ev(base, qid), ev(other, qid[::-1].copy())  # b's ids in another order
    x, y, q = paired_values(a, b)  # warm up the imports
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = compare({"A": a, "B": b}, n_resamples=300, random_state=0)
    ci = bootstrap_ci(b, a, n_resamples=300, method="bca", random_state=0)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c = report.comparisons[0]
    json.dump({"delta_mb": (after - before) / 1024, "n": c.n_queries,
               "low": c.low, "high": c.high, "bca": [ci.low, ci.high]}, sys.stdout)
""")


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
def test_compare_of_300k_queries_stays_in_bounded_memory():
    """300,000 queries (300 resamples to stay quick): the peak grows by well
    under 1 GB (before batching: 1.4 GB for these 300 resamples, 22.4 GiB asked
    for the default 10,000)."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(sklearn_rank.__file__)))
    out = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT], capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["n"] == 300_000
    assert result["low"] < result["high"] and result["bca"][0] < result["bca"][1]
    assert result["delta_mb"] < 500, result


# ---------------------------------------------------------------- pairing by query id


def _reference_pairs(qa, va, qb, vb, missing):
    """The former dict-based alignment: an independent oracle."""
    da, db = dict(zip(qa.tolist(), va, strict=True)), dict(zip(qb.tolist(), vb, strict=True))
    if missing == "drop":
        qids = [q for q in da if q in db]
    else:
        qids = list(da) + [q for q in db if q not in da]
    return ([da.get(q, 0.0) for q in qids], [db.get(q, 0.0) for q in qids], qids)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("kind", ["int", "str", "uint64", "float", "int32-int64",
                                  "int-float", "object"])
@pytest.mark.parametrize("missing", ["drop", "zero"])
def test_pairing_matches_a_dict_reference(seed, kind, missing):
    rng = np.random.default_rng(seed)
    pool = rng.choice(10**6, size=60, replace=False)
    qa = np.sort(rng.choice(pool, size=int(rng.integers(1, 50)), replace=False))
    qb = np.sort(rng.choice(pool, size=int(rng.integers(1, 50)), replace=False))
    convert = {
        "int": (lambda q: q, lambda q: q),
        "str": (lambda q: q.astype(str), lambda q: np.char.add("", q.astype("U12"))),
        "uint64": (lambda q: q.astype(np.uint64) + 2**63, lambda q: q.astype(np.uint64)
                   + 2**63),
        "float": (lambda q: q / 4, lambda q: q / 4),
        "int32-int64": (lambda q: q.astype(np.int32), lambda q: q.astype(np.int64)),
        "int-float": (lambda q: q, lambda q: q.astype(np.float64)),
        "object": (lambda q: np.array([f"q{v}" if v % 2 else int(v) for v in q], object),
                   lambda q: np.array([f"q{v}" if v % 2 else int(v) for v in q], object)),
    }[kind]
    qa, qb = convert[0](qa), convert[1](qb)
    va, vb = rng.random(qa.shape[0]), rng.random(qb.shape[0])
    a, b = _ev(qa, va), _ev(qb, vb)
    want_x, want_y, want_q = _reference_pairs(qa, va, qb, vb, missing)
    if not want_q:
        with pytest.raises(ValueError, match="no pair"):
            paired_values(a, b, missing=missing)
        return
    x, y, q = paired_values(a, b, missing=missing)
    assert x.tolist() == want_x and y.tolist() == want_y and q.tolist() == want_q


def test_pairing_unsorted_ids_keeps_the_first_evaluations_order():
    a = _ev(np.array([5, 3, 9, 1]), [0.5, 0.3, 0.9, 0.1])
    b = _ev(np.array([9, 7, 1, 5]), [0.95, 0.75, 0.15, 0.55])
    x, y, q = paired_values(a, b, missing="drop")
    assert q.tolist() == [5, 9, 1] and x.tolist() == [0.5, 0.9, 0.1]
    assert y.tolist() == [0.55, 0.95, 0.15]
    x, y, q = paired_values(a, b, missing="zero")
    assert q.tolist() == [5, 3, 9, 1, 7]
    assert x.tolist() == [0.5, 0.3, 0.9, 0.1, 0.0]
    assert y.tolist() == [0.55, 0.0, 0.95, 0.15, 0.75]
    with pytest.raises(ValueError, match=r"1 only in the first \(3\), 1 only in the second "
                                         r"\(7\)\. Pass missing='drop'"):
        paired_values(a, b)


@pytest.mark.parametrize("first, second, match", [
    ([1, 2, 3], ["1", "2", "3"], r"number \(int64, e\.g\. 1\) in the first, str \(<U1, "
                                 r"e\.g\. '1'\) in the second"),
    (["a", "b"], [b"a", b"b"], r"str \(<U1, e\.g\. 'a'\) in the first, bytes"),
    ([1.0, 2.0], np.array(["1.0", "2.0"], dtype=object), r"number \(float64.*str \(object"),
])
def test_ids_of_types_that_never_match_are_refused(first, second, match):
    a, b = _ev(np.asarray(first), [0.1] * len(first)), _ev(second, [0.2] * len(second))
    for missing in ("raise", "drop", "zero"):  # 'zero' would score everything against 0
        with pytest.raises(TypeError, match="different types: " + match):
            paired_values(a, b, missing=missing)
    with pytest.raises(TypeError, match=r"qid=np\.asarray\(qid\)\.astype\(str\)"):
        compare({"A": a, "B": b}, missing="zero")


def test_ids_from_evaluate_int_against_str():
    """The case users meet: evaluate() with integer ids against a TREC run's
    string ids."""
    y = np.array([1, 0, 2, 0])
    qid = np.array([1, 1, 2, 2])
    a = evaluate(y, [0.2, 0.1, 0.3, 0.4], qid=qid, metrics=["ndcg"])
    b = evaluate(y, [0.1, 0.2, 0.4, 0.3], qid=qid.astype(str), metrics=["ndcg"])
    with pytest.raises(TypeError, match="1 and '1' are different ids"):
        bootstrap_ci(a, b, missing="zero")
    x, z, q = paired_values(a, evaluate(y, [0.1, 0.2, 0.4, 0.3], qid=qid.astype(float),
                                        metrics=["ndcg"]))
    assert q.tolist() == [1, 2] and x.tolist() == a.per_query["ndcg"].tolist()


def test_large_integer_ids_do_not_meet_as_floats():
    """2**60 and 2**60 + 1 are one float64: never paired through floats."""
    big = 2**60
    a = _ev(np.array([big, big + 1]), [0.1, 0.2])
    b = _ev(np.array([float(big)]), [0.5])
    x, y, q = paired_values(a, b, missing="drop")
    assert q.tolist() == [big] and x.tolist() == [0.1] and y.tolist() == [0.5]
    c = _ev(np.array([big + 1, big], dtype=np.uint64), [0.4, 0.3])
    x, y, q = paired_values(a, c)
    assert x.tolist() == [0.1, 0.2] and y.tolist() == [0.3, 0.4]


def test_object_ids_keep_python_equality():
    """Object ids take Python's own equality (no NumPy string truncation)."""
    a = _ev(np.array(["a", "a\x00", 3], dtype=object), [0.1, 0.2, 0.3])
    b = _ev(np.array([3, "a\x00", "a"], dtype=object), [0.6, 0.5, 0.4])
    x, y, q = paired_values(a, b)
    assert q.tolist() == ["a", "a\x00", 3]
    assert x.tolist() == [0.1, 0.2, 0.3] and y.tolist() == [0.4, 0.5, 0.6]


# ---------------------------------------------------------------- NaN and infinities


def test_nan_on_one_side_is_refused_naming_metric_and_query():
    a = _ev(np.array(["q1", "q2", "q3"]), [0.5, np.nan, 0.7], metric="map")
    b = _ev(np.array(["q1", "q2", "q3"]), [0.4, 0.6, 0.9], metric="map")
    with pytest.raises(ValueError, match=r"^map: the value for query 'q2' is NaN in the first "
                                         r"evaluation but 0\.6 in the second \(1 such "
                                         r"queries\): a query skipped on one side only"):
        paired_values(a, b)
    with pytest.raises(ValueError, match=r"query 'q2' is NaN in the second but 0\.6 in "
                                         r"the first evaluation"):
        randomization_test(b, a)
    for function in (paired_ttest, wilcoxon_test, bootstrap_ci):
        with pytest.raises(ValueError, match=r"query 'q2' is NaN"):
            function(a, b)
    with pytest.raises(ValueError, match=r"query 'q2' is NaN"):
        compare({"A": a, "B": b})


def test_nan_on_both_sides_is_a_skipped_query_left_out():
    """empty='skip' puts NaN in the same queries of both systems: left out,
    as from the means."""
    y = np.array([1, 0, 0, 0, 2, 1])
    qid = np.repeat([1, 2, 3], 2)
    a = evaluate(y, [0.1, 0.9, 0.5, 0.4, 0.3, 0.2], qid=qid, metrics=["ndcg"], empty="skip")
    b = evaluate(y, [0.9, 0.1, 0.5, 0.4, 0.2, 0.3], qid=qid, metrics=["ndcg"], empty="skip")
    x, z, q = paired_values(a, b)
    assert q.tolist() == [1, 3]
    report = compare({"A": a, "B": b}, n_resamples=200, random_state=0)
    assert report.comparisons[0].n_queries == 2
    assert report.means["A"]["ndcg"] == a.mean["ndcg"]


def test_nan_against_a_missing_query_is_left_out_under_missing_zero():
    a = _ev(np.array([1, 2, 3]), [0.5, np.nan, 0.7])
    b = _ev(np.array([1, 3]), [0.4, 0.9])
    x, y, q = paired_values(a, b, missing="zero")
    assert q.tolist() == [1, 3] and x.tolist() == [0.5, 0.7]
    c = _ev(np.array([1, 3, 4]), [0.4, 0.9, np.nan])
    x, y, q = paired_values(a, c, missing="zero")
    assert q.tolist() == [1, 3]
    x, y, q = paired_values(_ev(np.array([1, 3]), [0.5, 0.7]), c, missing="zero")
    assert q.tolist() == [1, 3]


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_values_are_refused(bad):
    with pytest.raises(ValueError, match=r"value for position 1 in b is -?inf; per-query "
                                         r"values must be finite"):
        paired_values([0.1, 0.2], [0.3, bad])
    with pytest.raises(ValueError, match=r"^ndcg@10: the value for query 7 in the first "
                                         r"evaluation is -?inf"):
        paired_values(_ev([3, 7], [0.1, bad]), _ev([3, 7], [0.1, 0.2]))
    with pytest.raises(ValueError, match=r"values\[1\] is -?inf"):
        bootstrap_ci([0.1, bad, 0.3])


def test_bootstrap_of_one_system_skips_nan_and_refuses_2d():
    ci = bootstrap_ci([0.2, np.nan, 0.4], n_resamples=500, random_state=0)
    assert ci.statistic == pytest.approx(0.3)
    with pytest.raises(ValueError, match=r"1-D array of per-query values; got shape \(2, 2\)"):
        bootstrap_ci([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_ci([np.nan, np.nan])


# ---------------------------------------------------------------- small and degenerate data


def test_one_query():
    r = randomization_test([0.75], [0.25])
    assert r.exact and r.pvalue == 1.0 and r.n_resamples == 2
    ci = bootstrap_ci([0.75], [0.25])
    assert (ci.low, ci.statistic, ci.high, ci.standard_error) == (0.5, 0.5, 0.5, 0.0)
    with pytest.raises(ValueError, match=r"t-test needs at least 2 paired queries; got 1"):
        paired_ttest([0.75], [0.25])
    with pytest.raises(ValueError, match=r"Wilcoxon signed-rank test needs at least 2"):
        wilcoxon_test([0.75], [0.25])
    report = compare({"A": _ev([1], [0.25]), "B": _ev([1], [0.75])}, random_state=0)
    c = report.comparisons[0]
    assert (c.pvalue, c.low, c.high, c.effect_size, c.wins) == (1.0, 0.5, 0.5, 0.0, 1)


def test_two_queries_exact():
    r = randomization_test([0.7, 0.6], [0.2, 0.5])
    assert r.exact and r.n_resamples == 4 and r.pvalue == 0.5  # signs ++ and -- as extreme
    assert paired_ttest([0.7, 0.6], [0.2, 0.5]).df == 1
    ci = bootstrap_ci([0.7, 0.6], [0.2, 0.5], random_state=0)
    assert ci.low == pytest.approx(0.1) and ci.high == pytest.approx(0.5)


@pytest.mark.parametrize("n", [1, 2, 5, 40, 5000])
def test_identical_systems(n):
    """Every difference 0: p = 1, the interval [0, 0], no warning (warnings
    are errors here); the t and Wilcoxon statistics, undefined, are refused
    with a message (compare() reports p = 1 with every test)."""
    v = np.random.default_rng(n).random(n)
    r = randomization_test(v, v.copy(), random_state=0)
    assert r.pvalue == 1.0 and r.statistic == 0.0
    for method in ("percentile", "bca"):
        ci = bootstrap_ci(v, v.copy(), method=method, random_state=0)
        assert (ci.low, ci.high, ci.standard_error) == (0.0, 0.0, 0.0)
    if n >= 2:  # SciPy: NaN (t-test), p = 1, NaN or an error (Wilcoxon, by n)
        with pytest.raises(ValueError, match=rf"Every one of the {n} paired differences is 0 "
                                             r".*the t statistic is undefined"):
            paired_ttest(v, v.copy())
        for zero_method in ("wilcox", "pratt", "zsplit"):
            with pytest.raises(ValueError, match=r"the Wilcoxon statistic is undefined"):
                wilcoxon_test(v, v.copy(), zero_method=zero_method)
    q = np.arange(n)
    for test in ("randomization", "ttest", "wilcoxon"):
        c = compare({"A": _ev(q, v), "B": _ev(q, v.copy())}, test=test, n_resamples=500,
                    random_state=0).comparisons[0]
        assert (c.pvalue, c.low, c.high, c.ties, c.significant) == (1.0, 0.0, 0.0, n, False)


def test_bca_with_every_resample_on_one_side_is_refused():
    """Seed 4 draws two resamples without the 1: both means below 1/3."""
    with pytest.raises(ValueError, match=r"BCa interval is undefined: all 2 bootstrap means "
                                         r"lie on one side"):
        bootstrap_ci([0.0, 0.0, 1.0], method="bca", n_resamples=2, random_state=4)


def test_huge_n_resamples_on_few_queries_is_exact_and_quick():
    rng = np.random.default_rng(0)
    a, b = rng.random(12), rng.random(12)
    huge = randomization_test(a, b, n_resamples=10**30)
    assert huge.exact and huge.n_resamples == 2**12
    assert huge.pvalue == randomization_test(a, b, n_resamples=2**12).pvalue


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "100", None, 1])
def test_n_resamples_must_be_a_positive_integer(bad):
    """At least 1 sign assignment, at least 2 bootstrap resamples (a standard
    error)."""
    if bad != 1:
        with pytest.raises(ValueError, match=r"'n_resamples' parameter of randomization_test "
                                             r"must be an int in the range \[1, inf\)|"
                                             r"n_resamples is a number of resamples, not a bool"):
            randomization_test([0.1, 0.2], [0.3, 0.1], n_resamples=bad)
    for call in (lambda: bootstrap_ci([0.1, 0.2], n_resamples=bad),
                 lambda: compare({"A": _ev([1, 2], [0.1, 0.2])}, n_resamples=bad)):
        with pytest.raises(ValueError, match=r"'n_resamples' parameter of (bootstrap_ci|compare) "
                                             r"must be an int in the range \[2, inf\)"):
            call()
    assert randomization_test([0.1, 0.2, 0.3], [0.3, 0.1, 0.2], n_resamples=1).exact is False


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.1])
def test_compare_alpha_range(alpha):
    with pytest.raises(ValueError, match=r"'alpha' parameter of compare must be a float in the "
                                         r"range \(0.0, 1.0\)"):
        compare({"A": _ev([1, 2], [0.1, 0.2])}, alpha=alpha)


# ---------------------------------------------------------------- cross-validation helpers


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_corrected_resampled_ttest_refuses_a_failed_fold(bad):
    with pytest.raises(ValueError, match=r"scores_b\[2\] is (nan|inf): every fold needs a "
                                         r"finite score .*error_score=np\.nan"):
        corrected_resampled_ttest([0.6, 0.62, 0.61], [0.6, 0.61, bad], test_train_ratio=0.5)


@pytest.mark.parametrize("ratio", [0, -1, np.inf, np.nan])
def test_corrected_resampled_ttest_ratio(ratio):
    with pytest.raises(ValueError, match=r"'test_train_ratio' parameter of "
                                         r"corrected_resampled_ttest must be a float in the "
                                         r"range \(0.0, inf\)"):
        corrected_resampled_ttest([0.6, 0.62], [0.6, 0.61], test_train_ratio=ratio)


def test_corrected_resampled_ttest_identical_scores():
    res = corrected_resampled_ttest([0.6, 0.62, 0.61], [0.6, 0.62, 0.61],
                                    test_train_ratio=0.25)
    assert (res.statistic, res.pvalue, res.mean_difference) == (0.0, 1.0, 0.0)


def test_compare_cv_candidates_with_one_candidate():
    results = {"params": [{"alpha": 1}], "rank_test_score": np.array([1]),
               "mean_test_score": np.array([0.6]), "split0_test_score": np.array([0.6]),
               "split1_test_score": np.array([0.62])}
    with pytest.raises(ValueError, match=r"The search has 1 candidate; there is nothing to "
                                         r"compare it with"):
        compare_cv_candidates(results)
    res = compare_cv_candidates(results, 0, 0)  # a candidate against itself
    assert res.pvalue == 1.0
