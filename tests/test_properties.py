"""Properties every metric must have, checked with hypothesis.

Organised by property across metrics (as scikit-learn's
``metrics/tests/test_common.py``): the tables of metrics derive from the
capabilities each metric declares in the registry, so a metric added later is
tested here without editing this file; parametrised invariance tests.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank.metrics import evaluate, get_metric_names, parse_metric
from sklearn_rank.metrics._vocab.registry import METRICS
from sklearn_rank.trec import evaluate_run

# Metrics that stay normalised at any cut-off (the ideal ranking's top k is ideal).
NORMALISED_AT_ANY_CUTOFF = {"ndcg", "mrr", "hit_rate"}
# Values other than the default of the options, one spec per metric and value.
OPTION_VARIANTS = {"gain": ["'linear'", "[0, 1, 2, 5, 9]"], "discount": ["'classic'"],
                   "log_base": ["3"], "threshold": ["2"], "capped": ["True"],
                   "max_grade": ["5"], "p": ["0.5"]}
# Combinations worth a line of their own.
EXTRA = {"normalised": ["ndcg(discount='classic', log_base=3)@4", "ndcg(gain=[0, 1, 2, 5, 9])@2",
                        "map(capped=True)@2", "mrr(threshold=3)@2"],
         "bounded": ["p(capped=True)@3", "p(threshold=2)@2", "err(max_grade=5)@2"],
         "unbounded": ["dcg(gain='linear', discount='classic')@2"]}


def _kind(name: str, k=None) -> str:
    """'normalised' (in [0, 1]; the ideal ranking scores 1), 'bounded' (in [0, 1])
    or 'unbounded', from the metric's declared capabilities."""
    capabilities = METRICS[name].capabilities
    if "normalised" in capabilities and (k is None or name in NORMALISED_AT_ANY_CUTOFF):
        return "normalised"
    return "bounded" if "bounded" in capabilities else "unbounded"


def _table(kind: str) -> list[str]:
    specs = []
    for name, metric in sorted(METRICS.items()):
        if _kind(name) == kind:
            specs.append(name)
            specs += [f"{name}({option}={value})" for option in metric.params
                      for value in OPTION_VARIANTS.get(option, ())]
        if "cutoff" in metric.capabilities and _kind(name, 3) == kind:
            specs.append(f"{name}@3")
    return specs + EXTRA[kind]


NORMALIZED = _table("normalised")
BOUNDED = _table("bounded")
UNNORMALIZED = _table("unbounded")
ALL = NORMALIZED + BOUNDED + UNNORMALIZED
BINARY = [spec for spec in ALL if "binary" in parse_metric(spec).info.capabilities]
GRADED = sorted(name for name, m in METRICS.items() if "graded" in m.capabilities)
JUDGMENTS = sorted(name for name, m in METRICS.items() if "judgments" in m.capabilities)


def test_no_metric_is_forgotten():
    """Every registered metric is in the property tables ("We shouldn't forget
    any metrics", scikit-learn's test_common), and declares what it is."""
    assert {parse_metric(spec).name for spec in ALL} == set(get_metric_names())
    for name, metric in METRICS.items():
        assert {"binary", "graded"} & metric.capabilities, name  # labels mean something
    assert set(EXTRA) == {"normalised", "bounded", "unbounded"}
    assert len(set(ALL)) == len(ALL)

# Random data often has no document above a threshold; the warning is tested elsewhere.
pytestmark = pytest.mark.filterwarnings("ignore:No document has a label")
TIES = ["average", "stable", "pessimistic", "optimistic"]


@st.composite
def ranking_data(draw, max_queries=6, max_docs=9, tied=None):
    """Flat (y_true, y_score, qid) with labels 0..4 and possibly tied scores."""
    n_queries = draw(st.integers(1, max_queries))
    lengths = draw(st.lists(st.integers(1, max_docs), min_size=n_queries,
                            max_size=n_queries))
    n = sum(lengths)
    labels = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    if tied if tied is not None else draw(st.booleans()):
        scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    else:
        scores = draw(st.permutations(range(n)))
    qid = np.repeat(np.arange(n_queries), lengths)
    return np.array(labels, float), np.array(scores, float), qid


def _empty(spec, labels) -> bool:
    """Whether a query of these labels is empty for ``spec``: no relevant
    document, or (a "pairwise" metric: AUC) one class only."""
    relevant = labels >= spec.resolve().get("threshold", 1e-9)
    if "pairwise" in spec.info.capabilities:
        return bool(relevant.all() or not relevant.any())
    return not relevant.any()


def _values(y, s, q, metrics=ALL, **options):
    return evaluate(y, s, qid=q, metrics=metrics, **options).per_query


@settings(max_examples=150, deadline=None)
@given(ranking_data(), st.sampled_from(TIES))
def test_normalized_metrics_lie_in_unit_interval(data, ties):
    y, s, q = data
    for metric, values in _values(y, s, q, NORMALIZED + BOUNDED, ties=ties).items():
        values = values[~np.isnan(values)]  # (a pairwise metric's one-class queries)
        assert np.all(values >= -1e-12) and np.all(values <= 1 + 1e-12), metric


@settings(max_examples=100, deadline=None)
@given(ranking_data(), st.sampled_from(TIES))
def test_ideal_ranking_scores_one(data, ties):
    y, _, q = data
    ev = evaluate(y, y, qid=q, metrics=NORMALIZED, ties=ties)  # scores = labels
    for spec, (metric, values) in zip(ev.metrics, ev.per_query.items(), strict=True):
        empty = np.array([_empty(spec, y[q == i]) for i in ev.qids])
        np.testing.assert_allclose(values[~empty], 1.0, atol=1e-12, err_msg=metric)
        # empty queries: 0, or no value for a pairwise metric (its empty='skip')
        want = np.nan if "pairwise" in spec.info.capabilities else 0.0
        np.testing.assert_array_equal(values[empty], want)


@settings(max_examples=100, deadline=None)
@given(ranking_data(), st.randoms(use_true_random=False))
def test_invariant_to_row_order(data, rnd):
    y, s, q = data
    perm = np.array(rnd.sample(range(y.shape[0]), y.shape[0]))
    # Stable ties follow input order, so only the other policies are invariant.
    for ties in ("average", "pessimistic", "optimistic"):
        a = _values(y, s, q, ties=ties)
        b = _values(y[perm], s[perm], q[perm], ties=ties)
        for metric in a:
            np.testing.assert_allclose(a[metric], b[metric], atol=1e-12, err_msg=metric)


@settings(max_examples=100, deadline=None)
@given(ranking_data())
def test_invariant_to_qid_relabelling(data):
    y, s, q = data
    relabel = np.array([f"query-{(7 * i) % 13:02d}" for i in range(q.max() + 1)])
    a = evaluate(y, s, qid=q, metrics=ALL)
    b = evaluate(y, s, qid=relabel[q], metrics=ALL)
    order = np.argsort(relabel[a.qids])
    assert b.qids.tolist() == relabel[a.qids][order].tolist()
    for metric in ALL:
        np.testing.assert_array_equal(a.per_query[metric][order], b.per_query[metric])
        assert a.mean[metric] == pytest.approx(b.mean[metric], abs=1e-12, nan_ok=True)


@settings(max_examples=100, deadline=None)
@given(ranking_data(), st.sampled_from(TIES))
def test_invariant_to_strictly_increasing_score_transform(data, ties):
    y, s, q = data
    a = _values(y, s, q, ties=ties)
    b = _values(y, np.exp(s / 4) * 3 - 1, q, ties=ties)
    for metric in a:  # equal up to the order in which tie-group sums are added
        np.testing.assert_allclose(a[metric], b[metric], rtol=1e-14, atol=1e-14,
                                   err_msg=metric)


@settings(max_examples=100, deadline=None)
@given(ranking_data(), st.sampled_from(TIES))
def test_cutoff_beyond_longest_query_equals_full_metric(data, ties):
    y, s, q = data
    longest = int(np.bincount(q).max())
    # the whole list: P divides by k unless capped
    uncut = [f"{name}(capped=True)" if "capped" in metric.params else name
             for name, metric in sorted(METRICS.items()) if "cutoff" in metric.capabilities]
    uncut.append("dcg(discount='classic')")
    for k in (longest, longest + 5):
        full = _values(y, s, q, uncut, ties=ties)
        cut = _values(y, s, q, [spec.replace(")", ")@{}", 1).format(k) if ")" in spec
                                else f"{spec}@{k}" for spec in uncut], ties=ties)
        for (_, a), (_, b) in zip(full.items(), cut.items(), strict=True):
            # equal up to summation over padded columns, which are zero
            np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)


@settings(max_examples=60, deadline=None)
@given(ranking_data(max_queries=1, max_docs=7, tied=True))
def test_tie_policies_against_brute_force_over_orderings(data):
    """'average' is the mean over every ordering of tied documents; 'pessimistic'
    and 'optimistic' are its minimum and maximum; 'stable' is input order."""
    y, s, q = data
    n = y.shape[0]
    # Every order consistent with the scores: permutations whose scores do not increase.
    orders = np.array([p for p in itertools.permutations(range(n))
                       if all(s[p[i]] >= s[p[i + 1]] for i in range(n - 1))])
    # Every ordering as its own query of one evaluation, ties kept in input order.
    stacked = evaluate(y[orders].ravel(), s[orders].ravel(),
                       qid=np.repeat(np.arange(orders.shape[0]), n), metrics=ALL, ties="stable")
    per_order = np.column_stack([stacked.per_query[m] for m in ALL])
    results = {ties: _values(y, s, q, ties=ties) for ties in TIES}
    for j, metric in enumerate(ALL):
        assert results["average"][metric][0] == pytest.approx(per_order[:, j].mean(),
                                                              abs=1e-12, nan_ok=True), metric
        if "nonmonotone" in parse_metric(metric).info.capabilities:
            continue  # label orders, not bounds (bpm): test_nonmonotone_metrics_are_declared
        # With gains increasing in the label, worst-first is the minimum.
        assert results["pessimistic"][metric][0] == pytest.approx(
            per_order[:, j].min(), abs=1e-12, nan_ok=True), metric
        assert results["optimistic"][metric][0] == pytest.approx(
            per_order[:, j].max(), abs=1e-12, nan_ok=True), metric
    stable_order = np.argsort(-s, kind="stable")
    expected = evaluate(y[stable_order], s[stable_order], qid=q, metrics=ALL, ties="stable")
    for metric in ALL:
        assert results["stable"][metric][0] == pytest.approx(expected.per_query[metric][0],
                                                             rel=0, abs=0, nan_ok=True)


def test_nonmonotone_metrics_are_declared():
    """bpm is not monotone: a tie order other than worst-first scores lower (so
    the bound check above rightly leaves it out), as the declaration says."""
    y, s = np.array([0.0, 3.0, 4.0]), np.zeros(3)
    orders = list(itertools.permutations(range(3)))
    values = [evaluate(y[list(p)], s, qid=np.zeros(3, int), metrics=["bpm"],
                       ties="stable").mean["bpm"] for p in orders]
    pessimistic = evaluate(y, s, qid=np.zeros(3, int), metrics=["bpm"],
                           ties="pessimistic").mean["bpm"]
    assert min(values) < pessimistic
    declared = {name for name, m in METRICS.items() if "nonmonotone" in m.capabilities}
    assert declared == {"bpm"}


@settings(max_examples=60, deadline=None)
@given(ranking_data(), st.lists(st.integers(1, 4), min_size=6, max_size=6))
def test_integer_weights_equal_repetition(data, weights):
    y, s, q = data
    n_queries = q.max() + 1
    w = np.array(weights[:n_queries])
    weighted = evaluate(y, s, qid=q, metrics=ALL, sample_weight=w[q])
    rows, new_q, next_id = [], [], 0
    for i in range(n_queries):
        for _ in range(w[i]):
            idx = np.flatnonzero(q == i)
            rows.extend(idx)
            new_q.extend([next_id] * idx.shape[0])
            next_id += 1
    rows = np.array(rows)
    repeated = evaluate(y[rows], s[rows], qid=np.array(new_q), metrics=ALL)
    for metric in ALL:
        assert weighted.mean[metric] == pytest.approx(repeated.mean[metric], rel=1e-12,
                                                      abs=1e-12, nan_ok=True)


@settings(max_examples=60, deadline=None)
@given(ranking_data())
def test_evaluate_equals_one_query_at_a_time(data):
    y, s, q = data
    ev = evaluate(y, s, qid=q, metrics=ALL)
    for i, qid in enumerate(ev.qids):
        rows = q == qid
        single = evaluate(y[rows], s[rows], qid=q[rows], metrics=ALL)
        for metric in ALL:  # equal up to the summation order of BLAS
            assert ev.per_query[metric][i] == pytest.approx(single.per_query[metric][0],
                                                            rel=1e-14, abs=1e-14, nan_ok=True)
        counted = ev.per_query[ALL[0]][~np.isnan(ev.per_query[ALL[0]])]  # (skipped: NaN)
        if counted.shape[0]:
            assert math.isclose(ev.mean[ALL[0]], np.mean(counted), rel_tol=1e-12)


@settings(max_examples=100, deadline=None)
@given(ranking_data(tied=False), st.integers(1, 6))
def test_precision_times_k_counts_hits_and_map_at_most_one(data, k):
    y, s, q = data
    ev = evaluate(y, s, qid=q, metrics=[f"p@{k}", "map", f"map@{k}", "recall"])
    for i, qid in enumerate(ev.qids):
        rows = np.flatnonzero(q == qid)
        top = rows[np.argsort(-s[rows])][:k]
        assert ev.per_query[f"p@{k}"][i] * k == pytest.approx((y[top] >= 1).sum())
    assert np.all(ev.per_query["map"] <= 1 + 1e-12)
    assert np.all(ev.per_query[f"map@{k}"] <= ev.per_query["map"] + 1e-12)
    judged = ~np.isnan(ev.per_query["recall"])
    assert np.all(ev.per_query["recall"][judged] <= 1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(ranking_data(), st.sampled_from(TIES))
def test_binary_metrics_see_only_whether_a_label_reaches_the_threshold(data, ties):
    y, s, q = data
    ev = evaluate(y, s, qid=q, metrics=BINARY, ties=ties)
    for spec in ev.metrics:
        t = spec.resolve()["threshold"]
        relabelled = np.where(y >= t, t + 3.0, t - 2.0)
        values = evaluate(relabelled, s, qid=q, metrics=[spec], ties=ties).per_query[spec]
        np.testing.assert_array_equal(values, ev.per_query[spec], err_msg=str(spec))


@pytest.mark.parametrize("name", GRADED)
def test_graded_metrics_refuse_negative_labels(name):
    with pytest.raises(ValueError, match=r"y_true has 1 negative label\(s\) \(first in query 2\)"):
        evaluate([1, 0, -1], [3, 2, 1], qid=[1, 1, 2], metrics=[name])


@pytest.mark.parametrize("name", JUDGMENTS)
@pytest.mark.parametrize("seed", range(3))
def test_judgment_metrics_skip_unjudged_documents(name, seed):
    """In a TREC run, documents without a judgment neither count as relevant
    nor as judged non-relevant: inserting them anywhere changes nothing."""
    rng = np.random.default_rng(seed)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(12)} for i in range(6)}
    run = {q: {f"d{j}": float(rng.random()) for j in range(12)} for q in qrels}
    noisy = {q: {**docs, **{f"u{j}": float(rng.random()) for j in range(8)}}
             for q, docs in run.items()}
    judged = evaluate_run(qrels, run, [name])
    unjudged = evaluate_run(qrels, noisy, [name])
    np.testing.assert_allclose(unjudged.per_query[name], judged.per_query[name], rtol=1e-12)
