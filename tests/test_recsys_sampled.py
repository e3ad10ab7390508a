"""Sampled evaluation: negatives drawn per user, metrics of each positive ranked
against them (labelled as sampled), and Krichene & Rendle's rank-estimate
correction (labelled as an estimate)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from sklearn_rank.recsys import (
    SampledEvaluation,
    evaluate_sampled,
    sample_negatives,
    sampled_evaluate,
)
from sklearn_rank.stats import compare

REL = 1e-12


# -- sampling ------------------------------------------------------------------------------


def _interactions(seed, n_users=40, n_items=300, per_user=(1, 6), train=(0, 40)):
    rng = np.random.default_rng(seed)
    pos_u, pos_i, tr_u, tr_i = [], [], [], []
    for u in range(n_users):
        items = rng.permutation(n_items)
        n_pos, n_tr = rng.integers(*per_user), rng.integers(*train)
        pos_u += [u] * n_pos
        pos_i += items[:n_pos].tolist()
        tr_u += [u] * n_tr
        tr_i += items[n_pos:n_pos + n_tr].tolist()
    return (np.array(pos_u), np.array(pos_i)), (np.array(tr_u, int), np.array(tr_i, int))


@pytest.mark.parametrize("seed", range(3))
def test_negatives_are_distinct_candidates(seed):
    positives, train = _interactions(seed)
    users = np.unique(positives[0])
    got_u, got_i = sample_negatives(users, positives, 300, 50, seed=seed, exclude=train)
    np.testing.assert_array_equal(got_u, np.repeat(users, 50))
    forbidden = set(zip(*map(np.ndarray.tolist, positives), strict=True)) | set(
        zip(*map(np.ndarray.tolist, train), strict=True))
    assert not forbidden & set(zip(got_u.tolist(), got_i.tolist(), strict=True))
    for u in users:
        assert np.unique(got_i[got_u == u]).shape[0] == 50
    assert got_i.min() >= 0 and got_i.max() < 300
    # seeded: the same seed gives the same negatives, another seed others
    again = sample_negatives(users, positives, 300, 50, seed=seed, exclude=train)
    np.testing.assert_array_equal(again[1], got_i)
    other = sample_negatives(users, positives, 300, 50, seed=seed + 100, exclude=train)
    assert (other[1] != got_i).any()


@pytest.mark.parametrize("n_items, n_negatives", [(12, 4), (400, 3)])
def test_negatives_are_uniform_over_the_candidates(n_items, n_negatives):
    """Each candidate is drawn with probability n_negatives / n_candidates (a
    permutation for small candidate sets, redrawn repeats for large ones)."""
    counts = np.zeros(n_items)
    n_runs = 3000
    for seed in range(n_runs):
        _, items = sample_negatives([0], ([0], [2]), n_items, n_negatives, seed=seed,
                                    exclude=([0, 0], [5, 7]))
        counts[items] += 1
    assert counts[[2, 5, 7]].sum() == 0
    candidates = np.setdiff1d(np.arange(n_items), [2, 5, 7])
    p = n_negatives / candidates.shape[0]
    sd = math.sqrt(n_runs * p * (1 - p))
    assert np.all(np.abs(counts[candidates] - n_runs * p) < 5 * sd)


def test_sampling_refuses_bad_input():
    with pytest.raises(ValueError, match=r"User 1 has 2 candidate negatives .* fewer than "
                                         r"n_negatives=3"):
        sample_negatives([0, 1], ([0, 1], [0, 1]), 4, 3, exclude=([1], [2]))
    with pytest.raises(ValueError, match=r"Item codes must lie in 0\.\.n_items - 1 = 9; got 10"):
        sample_negatives([0], ([0], [10]), 10, 3)
    with pytest.raises(ValueError, match="positives must be a pair"):
        sample_negatives([0], [0, 1, 2], 10, 3)
    with pytest.raises(ValueError, match="The .n_negatives. parameter of sample_negatives"):
        sample_negatives([0], ([0], [1]), 10, 0)
    with pytest.raises(ValueError, match="exclude's user codes must be >= 0; got -1"):
        sample_negatives([0], ([0], [1]), 10, 3, exclude=([-1], [2]))
    with pytest.raises(ValueError, match="User code 5 has no row in the score matrix of 2"):
        evaluate_sampled(np.zeros((2, 10)), ([0, 5], [1, 1]), n_negatives=3)


# -- the sampled metrics -----------------------------------------------------------------


def _brute(pos, neg, k):
    """hit@k, ndcg@k and rr of one positive among negatives, ties averaged by
    enumerating the positive's equally likely places in its tie group."""
    higher, tied = int((neg > pos).sum()), int((neg == pos).sum())
    places = range(higher + 1, higher + tied + 2)
    hit = np.mean([r <= k for r in places])
    ndcg = np.mean([1 / math.log2(r + 1) if r <= k else 0.0 for r in places])
    rr = np.mean([1 / r for r in places])
    return hit, ndcg, rr


@pytest.mark.parametrize("seed", range(3))
def test_sampled_metrics_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_users, m = 25, 30
    neg = rng.integers(0, 8, (n_users, m)).astype(float)  # many ties
    pos_users = np.sort(rng.integers(0, n_users, 60))
    pos = rng.integers(0, 10, pos_users.shape[0]).astype(float)
    ev = sampled_evaluate(pos, neg, pos_users=pos_users, users=np.arange(n_users) * 10,
                          metrics=["hit_rate@5", "ndcg@5", "mrr"])
    assert isinstance(ev, SampledEvaluation)
    users = np.unique(pos_users)
    np.testing.assert_array_equal(ev.qids, users * 10)  # users without positives left out
    want = np.array([[np.mean([_brute(pos[j], neg[u], 5)[c]
                               for j in np.flatnonzero(pos_users == u)]) for c in range(3)]
                     for u in users])
    for c, key in enumerate(["hit_rate@5 [sampled 30]", "ndcg@5 [sampled 30]",
                             "mrr [sampled 30]"]):
        np.testing.assert_allclose(ev.per_query[key], want[:, c], rtol=REL, err_msg=key)
        assert ev.mean[key] == pytest.approx(want[:, c].mean(), rel=REL)
    np.testing.assert_array_equal(ev.n_positives, np.bincount(pos_users)[users])


def test_results_are_labelled_as_sampled():
    ev = sampled_evaluate([0.5, 0.2], [[0.1, 0.9], [0.3, 0.4]], metrics=["ndcg@2"],
                          correction="krichene_rendle", n_candidates=10)
    assert list(ev.mean) == ["ndcg@2 [sampled 2]", "ndcg@2 [sampled 2, krichene_rendle estimate]"]
    with pytest.raises(KeyError, match=r"'ndcg@2' is not a metric of this evaluation"):
        ev.mean["ndcg@2"]  # never read as the full-ranking value
    assert "sampled: 2 negatives per user" in repr(ev) and "estimates" in repr(ev)
    assert ev.n_negatives == 2 and ev.correction == "krichene_rendle"


# -- the correction ------------------------------------------------------------------------


def test_correction_equals_the_formula_on_a_tiny_case():
    """r~ = 1 + higher + tied / 2; r^ = 1 + (r~ - 1) N / m; metric at r^."""
    pos = np.array([0.5, 0.5, 0.9])
    neg = np.array([[0.9, 0.5, 0.1, 0.0], [0.8, 0.7, 0.6, 0.2]])
    pos_users = np.array([0, 1, 1])
    n_candidates = np.array([40, 20])
    ev = sampled_evaluate(pos, neg, pos_users=pos_users, n_candidates=n_candidates,
                          correction="krichene_rendle",
                          metrics=["hit_rate@10", "ndcg@10", "mrr", "p@10", "recall@10"])
    # user 0: one positive, 1 higher, 1 tied: r~ = 2.5, r^ = 1 + 1.5 * 40 / 4 = 16
    # user 1: r~ = 4 -> r^ = 1 + 3 * 20 / 4 = 16; r~ = 1 -> r^ = 1
    r0, r1 = [16.0], [16.0, 1.0]

    def mean_over(ranks, f):
        return np.mean([f(r) for r in ranks])

    formulas = {"hit_rate@10": lambda r: float(r <= 10),
                "ndcg@10": lambda r: 1 / math.log2(r + 1) if r <= 10 else 0.0,
                "mrr": lambda r: 1 / r, "p@10": lambda r: float(r <= 10) / 10,
                "recall@10": lambda r: float(r <= 10)}
    for spec, f in formulas.items():
        got = ev.per_query[f"{spec} [sampled 4, krichene_rendle estimate]"]
        np.testing.assert_allclose(got, [mean_over(r0, f), mean_over(r1, f)], rtol=REL,
                                   err_msg=spec)
    # the sampled values themselves: user 1's second positive ranks first
    np.testing.assert_allclose(ev.per_query["mrr [sampled 4]"],
                               [np.mean([1 / 2, 1 / 3]), np.mean([1 / 4, 1])], rtol=REL)


def _model(seed, n_users=150, n_items=2000):
    """Scores of a model whose positives rank anywhere from 1 to a few hundred."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n_users, n_items))
    positives = (np.arange(n_users), rng.integers(0, n_items, n_users))
    scores[positives] = rng.normal(2.3, 0.8, n_users)
    train_items = rng.integers(0, n_items, (n_users, 30))
    train = (np.repeat(np.arange(n_users), 30), train_items.ravel())
    keep = train[1] != np.repeat(positives[1], 30)
    return scores, positives, (train[0][keep], train[1][keep])


def _full(scores, positives, train, metric):
    """The metric of each positive ranked against every candidate (no ties)."""
    excluded = np.zeros(scores.shape, bool)
    excluded[train] = True
    excluded[positives] = True
    s = scores[positives]
    rank = 1 + ((scores > s[:, None]) & ~excluded).sum(axis=1)
    return {"hit_rate@10": (rank <= 10).mean(),
            "ndcg@10": np.where(rank <= 10, 1 / np.log2(rank + 1), 0).mean(),
            "mrr": (1 / rank).mean()}[metric]


@pytest.mark.parametrize("metric", ["hit_rate@10", "ndcg@10", "mrr"])
def test_correction_is_closer_to_the_full_ranking_on_average(metric):
    scores, positives, train = _model(0)
    full = _full(scores, positives, train, metric)
    sampled, corrected = [], []
    for seed in range(10):
        ev = evaluate_sampled(scores, positives, exclude=train, n_negatives=100, seed=seed,
                              metrics=[metric], correction="krichene_rendle")
        sampled.append(ev.mean[f"{metric} [sampled 100]"])
        corrected.append(ev.mean[f"{metric} [sampled 100, krichene_rendle estimate]"])
    error_sampled = np.mean(np.abs(np.array(sampled) - full))
    error_corrected = np.mean(np.abs(np.array(corrected) - full))
    # (measured: about 17x closer for hit_rate@10, 2x for ndcg@10 and 1.6x for mrr, whose
    # 1 / r^ counts a sampled first rank fully)
    assert error_corrected < error_sampled, (full, np.mean(sampled), np.mean(corrected))


def test_the_rank_estimate_is_unbiased():
    """Over many draws, the mean estimated rank is the full rank."""
    scores, positives, train = _model(1, n_users=20, n_items=500)
    excluded = np.zeros(scores.shape, bool)
    excluded[train] = True
    excluded[positives] = True
    full_rank = 1 + ((scores > scores[positives][:, None]) & ~excluded).sum(axis=1)
    n_candidates = (~excluded).sum(axis=1)
    estimates = []
    for seed in range(400):
        users, items = sample_negatives(np.arange(20), positives, 500, 25, seed=seed,
                                        exclude=train)
        neg = scores[users, items].reshape(20, 25)
        higher = (neg > scores[positives][:, None]).sum(axis=1)
        estimates.append(1 + higher * n_candidates / 25)
    mean = np.mean(estimates, axis=0)
    sd = np.std(estimates, axis=0) / math.sqrt(400)
    assert np.all(np.abs(mean - full_rank) < 5 * sd + 1e-9)


# -- inputs ------------------------------------------------------------------------------


def test_scores_from_a_matrix_a_function_an_estimator_or_a_sparse_matrix():
    scores, positives, train = _model(2, n_users=30, n_items=200)
    kwargs = dict(exclude=train, n_negatives=20, seed=5, metrics=["ndcg@5", "auc"])
    want = evaluate_sampled(scores, positives, **kwargs)

    class Estimator:
        def predict(self, pairs):
            return scores[pairs[:, 0], pairs[:, 1]]

    for given in (lambda u, i: scores[u, i], Estimator()):
        got = evaluate_sampled(given, positives, n_items=200, **kwargs)
        assert got == want
    shifted = sparse.csr_matrix(scores + 10.0)  # sparse: absent entries would score 0
    got = evaluate_sampled(shifted, positives, **kwargs)
    np.testing.assert_allclose(got.per_query["ndcg@5 [sampled 20]"],
                               want.per_query["ndcg@5 [sampled 20]"], rtol=REL)
    with pytest.raises(ValueError, match="n_items is needed"):
        evaluate_sampled(Estimator(), positives, **kwargs)


def test_refused_metrics_and_options():
    neg = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"gauc is not summarised by a mean over users"):
        sampled_evaluate([1, 1], neg, metrics=["gauc"])
    with pytest.raises(ValueError, match=r"estimates metrics of the positive's rank.*not "
                                         r"'err@5'"):
        sampled_evaluate([1, 1], neg, metrics=["err@5"], correction="krichene_rendle",
                         n_candidates=10)
    with pytest.raises(ValueError, match=r"not 'p'"):
        sampled_evaluate([1, 1], neg, metrics=["p"], correction="krichene_rendle",
                         n_candidates=10)
    with pytest.raises(ValueError, match="needs n_candidates"):
        sampled_evaluate([1, 1], neg, correction="krichene_rendle")
    with pytest.raises(ValueError, match="The .correction. parameter of sampled_evaluate must be"):
        sampled_evaluate([1, 1], neg, correction="cls")
    with pytest.raises(ValueError, match="neg_scores has 1 NaN"):
        sampled_evaluate([1, 1], [[0, np.nan, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="pos_users must give each of the 3 positives"):
        sampled_evaluate([1, 1, 1], neg, pos_users=[0, 1, 2])


def test_compare_two_models_on_sampled_metrics():
    scores, positives, train = _model(3, n_users=80, n_items=400)
    noisy = scores + np.random.default_rng(9).normal(0, 1.5, scores.shape)
    kwargs = dict(exclude=train, n_negatives=50, seed=1, metrics=["ndcg@10"])
    report = compare({"good": evaluate_sampled(scores, positives, **kwargs),
                      "noisy": evaluate_sampled(noisy, positives, **kwargs)},
                     n_resamples=500)
    key = "ndcg@10 [sampled 50]"
    assert report.means["good"][key] > report.means["noisy"][key]
