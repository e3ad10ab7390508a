"""Tie averaging (DESIGN §8): closed forms per tie group against independent references.

Under ``ties="average"`` a metric is its expected value over the uniformly
random orders of every tie group. The cascades (reciprocal rank, hit rate,
ERR) and bpref are computed in closed form per group (``_ties.py``,
``_bpref_ties``); here they are checked against

* brute force: the mean over every ordering of the tied documents, each
  ordering scored by a direct implementation of the metric's definition;
* exact rational arithmetic (``fractions``) of the expectation as the previous
  implementation computed it: for cascades the means over the j-subsets of a
  group of the product of continue probabilities, for bpref the
  hypergeometric law of the non-relevant documents above each position;
* for large groups, a float64 version of that subset-mean recurrence.

No test here times anything; the sizes only make quadratic algorithms
impractical, not slow tests.
"""

from __future__ import annotations

import itertools
import math
import warnings
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank.metrics import evaluate
from sklearn_rank.metrics._engine import ties as _ties

pytestmark = pytest.mark.filterwarnings("ignore:No document has a label")


# -- direct definitions, labels in rank order ------------------------------------------


def _rr(labels, k=None, threshold=1):
    for r, label in enumerate(labels[:k]):
        if label >= threshold:
            return 1.0 / (r + 1)
    return 0.0


def _hit(labels, k=None):
    return float(any(label >= 1 for label in labels[:k]))


def _err(labels, k=None, max_grade=4):
    reach, total = 1.0, 0.0
    for r, label in enumerate(labels[:k]):
        stop = (2.0**label - 1) / 2.0**max_grade
        total += reach * stop / (r + 1)
        reach *= 1 - stop
    return total


def _bpref(labels):
    """trec_eval's bpref with every document judged."""
    n_rel = sum(label >= 1 for label in labels)
    n_non = len(labels) - n_rel
    if n_rel == 0:
        return 0.0
    den, above, total = min(n_rel, n_non), 0, 0.0
    for label in labels:
        if label >= 1:
            total += 1 - (min(above, n_rel) / den if den else 0)
        else:
            above += 1
    return total / n_rel


DIRECT = {
    "mrr": _rr,
    "mrr@2": lambda lab: _rr(lab, 2),
    "mrr(threshold=3)": lambda lab: _rr(lab, threshold=3),
    "hit_rate": _hit,
    "hit_rate@3": lambda lab: _hit(lab, 3),
    "err": _err,
    "err@3": lambda lab: _err(lab, 3),
    "err(max_grade=5)@4": lambda lab: _err(lab, 4, max_grade=5),
    "bpref": _bpref,
}


def _orders(scores):
    """Every order of the documents consistent with decreasing scores."""
    groups = [np.flatnonzero(scores == s).tolist() for s in sorted(set(scores), reverse=True)]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for part in parts for i in part]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0, 0, 1, 2, 3, 4, 0.5, 2.25]), min_size=n, max_size=n),
    st.lists(st.integers(0, 2), min_size=n, max_size=n))))
def test_equal_brute_force_over_every_ordering(data):
    labels, scores = np.array(data[0], float), np.array(data[1], float)
    ev = evaluate(labels, scores, qid=np.zeros(labels.shape[0]), metrics=list(DIRECT))
    for spec, direct in DIRECT.items():
        expected = np.mean([direct(labels[order].tolist()) for order in _orders(scores)])
        assert ev.per_query[spec][0] == pytest.approx(expected, rel=1e-12, abs=1e-15), spec


# -- exact expectations, group by group ------------------------------------------------


def _groups(labels, scores):
    return [labels[scores == s].tolist() for s in sorted(set(scores.tolist()), reverse=True)]


def _subset_means(values):
    """M[j] = mean over the j-subsets of ``values`` of their product (exact)."""
    e = [Fraction(1)] + [Fraction(0)] * len(values)
    for v in values:
        for j in range(len(values), 0, -1):
            e[j] += v * e[j - 1]
    return [e[j] / math.comb(len(values), j) for j in range(len(values) + 1)]


def _cascade_exact(groups, stop, k=None):
    """Expected sum over ranks r < k of P(stop at r) / (r + 1) (``weight``)."""
    reach, value, pos = Fraction(1), Fraction(0), 0
    for group in groups:
        go_on = [1 - stop(label) for label in group]
        means = _subset_means(go_on)
        for j in range(len(group)):
            if k is None or pos + j < k:
                value += reach * (means[j] - means[j + 1]) / (pos + j + 1)
        reach *= math.prod(go_on)
        pos += len(group)
    return value


def _hit_exact(groups, k):
    """P(a relevant document in the top k): 1 - P(none), hypergeometric."""
    pos = 0
    for group in groups:
        h = sum(label >= 1 for label in group)
        if pos >= k:
            return Fraction(0)
        if h:
            m = min(k - pos, len(group))
            return 1 - Fraction(math.comb(len(group) - h, m), math.comb(len(group), m))
        pos += len(group)
    return Fraction(0)


def _bpref_exact(groups):
    n_rel = sum(label >= 1 for group in groups for label in group)
    n_non = sum(len(group) for group in groups) - n_rel
    den, b, total = min(n_rel, n_non), 0, Fraction(0)
    for group in groups:
        g, h = len(group), sum(label >= 1 for label in group)
        n = g - h
        for j in range(g):  # position j of the group holds a relevant document w.p. h/g
            if not h:
                break
            # C: non-relevant among the j documents above it (drawn from the g - 1 others)
            e_min = sum(Fraction(math.comb(n, c) * math.comb(h - 1, j - c), math.comb(g - 1, j))
                        * min(b + c, n_rel) for c in range(max(0, j - h + 1), min(j, n) + 1))
            total += Fraction(h, g) * (1 - (e_min / den if den else 0))
        b += n
    return total / n_rel if n_rel else Fraction(0)


def _r_precision_exact(groups):
    """The expected share of relevant documents in the top R: the tie group
    holding rank R adds the part of its relevant documents it ranks there."""
    n_rel = sum(label >= 1 for group in groups for label in group)
    hits, above = Fraction(0), 0
    for group in groups:
        inside = min(max(n_rel - above, 0), len(group))
        hits += Fraction(sum(label >= 1 for label in group) * inside, len(group))
        above += len(group)
    return hits / n_rel if n_rel else Fraction(0)


def _rank_eff_exact(groups):
    """rank_eff (every document judged and retrieved): each relevant member of
    a tie group has on average half of the group's non-relevant ones above it."""
    n_rel = sum(label >= 1 for group in groups for label in group)
    n_non = sum(len(group) for group in groups) - n_rel
    if not n_rel:
        return Fraction(0)
    above, before = Fraction(0), 0
    for group in groups:
        h = sum(label >= 1 for label in group)
        above += h * (before + Fraction(len(group) - h, 2))
        before += len(group) - h
    return (n_rel - (above / n_non if n_non else 0)) / n_rel


def _stop(max_grade):
    return lambda label: Fraction(2**int(label) - 1, 2**max_grade)


EXACT = {
    "mrr": lambda gr: _cascade_exact(gr, lambda label: Fraction(int(label >= 1))),
    "mrr@5": lambda gr: _cascade_exact(gr, lambda label: Fraction(int(label >= 1)), 5),
    "hit_rate@3": lambda gr: _hit_exact(gr, 3),
    "hit_rate@40": lambda gr: _hit_exact(gr, 40),
    "err": lambda gr: _cascade_exact(gr, _stop(4)),
    "err@7": lambda gr: _cascade_exact(gr, _stop(4), 7),
    "err(max_grade=7)": lambda gr: _cascade_exact(gr, _stop(7)),
    "bpref": _bpref_exact,
    "r_precision": _r_precision_exact,
    "rank_eff": _rank_eff_exact,
}


@pytest.mark.parametrize("seed", range(4))
def test_medium_tie_groups_equal_exact_expectation(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 60, 25)
    qid = np.repeat(np.arange(lengths.shape[0]), lengths)
    labels = rng.choice(5, qid.shape[0], p=[0.55, 0.2, 0.12, 0.08, 0.05]).astype(float)
    labels[qid == 3] = 0  # a query without relevant documents
    scores = rng.integers(0, 1 + seed * 3, qid.shape[0]).astype(float)  # seed 0: all tied
    ev = evaluate(labels, scores, qid=qid, metrics=list(EXACT))
    for i in range(lengths.shape[0]):
        rows = qid == i
        groups = _groups(labels[rows], scores[rows])
        for spec, exact in EXACT.items():
            assert ev.per_query[spec][i] == pytest.approx(float(exact(groups)), rel=1e-12,
                                                          abs=1e-300), (spec, i)


def _err_reference(groups, max_grade=4, k=None):
    """The subset-mean recurrence in float64 (the previous implementation's
    algorithm, O(g**2) per group): for large groups."""
    reach, value, pos = 1.0, 0.0, 0
    for group in groups:
        go_on = 1 - (2.0 ** np.asarray(group, float) - 1) / 2.0**max_grade
        g = go_on.shape[0]
        means = np.zeros(g + 1)
        means[0] = 1.0
        t = np.arange(1, g + 1)
        for s, v in enumerate(go_on):
            means[1:] = ((s + 1 - t) * means[1:] + t * v * means[:-1]) / (s + 1)
        stop_at = means[:-1] - means[1:]
        j = np.arange(g)
        inside = j + pos < (k if k is not None else pos + g)
        value += reach * (stop_at[inside] / (pos + j[inside] + 1)).sum()
        reach *= go_on.prod()
        pos += g
    return value


@pytest.mark.parametrize("k", [None, 10, 700])
def test_large_tie_groups_equal_reference(k):
    rng = np.random.default_rng(7)
    n = 3000
    labels = rng.choice(5, n, p=[0.6, 0.2, 0.1, 0.07, 0.03]).astype(float)
    scores = rng.integers(0, 3, n).astype(float)
    spec = "err" if k is None else f"err@{k}"
    value = evaluate(labels, scores, qid=np.zeros(n), metrics=[spec]).per_query[spec][0]
    assert value == pytest.approx(_err_reference(_groups(labels, scores), k=k), rel=1e-13)


@pytest.mark.parametrize("seed", range(4))
def test_small_groups_path_gives_the_general_paths_bits(seed, monkeypatch):
    """Groups of up to _SMALL_GROUP documents take all levels at once in plain
    running products; the general path scales them as mantissa * 2**exponent.
    Both must give the same bits (scaling by powers of two commutes with
    rounding while every probability is a normal float)."""
    rng = np.random.default_rng(seed)
    n = 4000
    qid = rng.integers(0, 40, n)
    labels = rng.choice(5, n, p=[0.5, 0.25, 0.15, 0.07, 0.03]).astype(float)
    scores = rng.integers(0, 6, n).astype(float)
    specs = ["err", "err@10", "mrr", "hit_rate@5"]
    fast = evaluate(labels, scores, qid=qid, metrics=specs, ties="average").per_query
    monkeypatch.setattr(_ties, "_SMALL_GROUP", 0)
    general = evaluate(labels, scores, qid=qid, metrics=specs, ties="average").per_query
    for spec in specs:
        np.testing.assert_array_equal(fast[spec], general[spec])


def test_truncation_stays_within_its_bound(monkeypatch):
    """The cascade of a large group is cut where the mass left is below a
    budget (2**-55 of a lower bound of the value per group and cut); with a
    huge budget the cut shows, and the error still obeys the bound."""
    rng = np.random.default_rng(3)
    n = 2000
    labels = rng.choice([0, 1, 2], n, p=[0.3, 0.5, 0.2]).astype(float)
    scores = np.zeros(n)
    exact = _err_reference(_groups(labels, scores))
    value = evaluate(labels, scores, qid=np.zeros(n), metrics=["err"]).per_query["err"][0]
    assert value == pytest.approx(exact, rel=1e-13)
    monkeypatch.setattr(_ties, "_BUDGET", 2.0**-20)
    loose = evaluate(labels, scores, qid=np.zeros(n), metrics=["err"]).per_query["err"][0]
    assert 0 < exact - loose <= 2 * 2.0**-20 * exact


def test_huge_tied_binary_query_equals_exact_values():
    """A 200,000-row query whose scores are all equal: reciprocal rank and hit
    rate from 40-digit decimal and exact rational arithmetic, bpref from the
    uniform law of the non-relevant documents above a relevant one."""
    n, h = 200_000, 1_000
    labels = np.zeros(n)
    labels[np.random.default_rng(0).choice(n, h, replace=False)] = 1
    ev = evaluate(labels, np.zeros(n), qid=np.zeros(n),
                  metrics=["mrr", "mrr@3", "hit_rate@10", "bpref"])
    # P(first relevant at j) = (h/n) prod_{i<j} (n-h-i)/(n-1-i) <= (h/n) 0.995**j:
    # past j = 20,000 the terms add less than 1e-40.
    with localcontext() as ctx:
        ctx.prec = 40
        p, rr, rr3 = Decimal(h) / n, Decimal(0), Decimal(0)
        for j in range(20_000):
            rr += p / (j + 1)
            if j < 3:
                rr3 += p / (j + 1)
            p = p * (n - h - j) / (n - 1 - j)
    assert ev.per_query["mrr"][0] == pytest.approx(float(rr), rel=1e-13)
    assert ev.per_query["mrr@3"][0] == pytest.approx(float(rr3), rel=1e-14)
    hit = 1 - Fraction(math.comb(n - h, 10), math.comb(n, 10))
    assert ev.per_query["hit_rate@10"][0] == pytest.approx(float(hit), rel=1e-14)
    # A relevant document has N_t ~ U{0..N} non-relevant above it (its place
    # among the N + 1 is uniform): E min(N_t, R) = sum_{y<R} P(N_t > y).
    big_n = n - h
    e_min = sum(Fraction(big_n - y, big_n + 1) for y in range(h))
    assert ev.per_query["bpref"][0] == pytest.approx(float(1 - e_min / h), rel=1e-14)


def test_cascade_of_a_big_group_with_rare_positives():
    """Few positives in a large group: the i-th positive can be anywhere. The
    reference: the positives' own cascade (exact subset means) times the law of
    the i-th positive's position, P(s_i = s) = C(s, i) C(g-1-s, p-1-i) / C(g, p),
    summed in 50-digit decimals."""
    rng = np.random.default_rng(11)
    g = 20_000
    labels = np.zeros(g)
    positives = [1, 2, 3, 4, 4, 1]
    labels[rng.choice(g, len(positives), replace=False)] = positives
    p = len(positives)
    means = _subset_means([1 - _stop(4)(label) for label in positives])
    with localcontext() as ctx:
        ctx.prec = 50
        exact = Decimal(0)
        for i in range(p):
            stop = means[i] - means[i + 1]
            position = sum(Decimal(math.comb(s, i) * math.comb(g - 1 - s, p - 1 - i)) / (s + 1)
                           for s in range(i, g - p + i + 1)) / math.comb(g, p)
            exact += Decimal(stop.numerator) / stop.denominator * position
    for k in (None, 5000):
        spec = "err" if k is None else f"err@{k}"
        if k is not None:  # only positions s < k count
            with localcontext() as ctx:
                ctx.prec = 50
                cut = Decimal(0)
                for i in range(p):
                    stop = means[i] - means[i + 1]
                    cut += Decimal(stop.numerator) / stop.denominator * sum(
                        Decimal(math.comb(s, i) * math.comb(g - 1 - s, p - 1 - i)) / (s + 1)
                        for s in range(i, k)) / math.comb(g, p)
            expected = cut
        else:
            expected = exact
        value = evaluate(labels, np.zeros(g), qid=np.zeros(g), metrics=[spec]).per_query[spec]
        assert value[0] == pytest.approx(float(expected), rel=1e-12), spec


def test_no_warning_on_large_tie_groups():
    rng = np.random.default_rng(5)
    n = 20_000
    labels = rng.choice(5, n).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(labels, np.zeros(n), qid=np.zeros(n),
                 metrics=["mrr", "err", "bpref", "hit_rate", "rank_eff", "map", "ndcg"])


def _every_spec(y, s, qid, ties):
    """Every registry metric, bare and @10, that ``ties`` accepts."""
    from sklearn_rank.metrics import get_metric_names

    specs = []
    for spec in (m + cut for m in get_metric_names() for cut in ("", "@10")):
        try:
            evaluate(y, s, qid=qid, metrics=[spec], ties=ties)
        except ValueError:
            continue
        specs.append(spec)
    return specs


@pytest.mark.parametrize("ties", ["average", "stable", "pessimistic", "optimistic"])
def test_value_of_a_query_does_not_depend_on_the_others(ties):
    """A query's value has the same bits evaluated alone as among other
    queries (chunked and distributed evaluation rely on it), for every metric
    and tie policy; with groups above _SMALL_GROUP documents and rare
    positives too, where the tie-averaged cascades' padding and running-product
    chunks once depended on the other queries of the block."""
    rng = np.random.default_rng(0)
    shapes = [(int(n), 4, 0.5) for n in rng.integers(1, 200, 40)]
    shapes += [(2500, 2, 0.002), (1500, 3, 0.3), (1200, 1, 0.01), (9, 2, 0.5)]
    parts = []
    for q, (n, n_scores, p_rel) in enumerate(shapes):
        labels = np.where(rng.random(n) < p_rel, rng.integers(1, 5, n), 0).astype(float)
        parts.append((np.full(n, q), labels, rng.integers(0, n_scores, n).astype(float)))
    qid, labels, scores = (np.concatenate(c) for c in zip(*parts, strict=True))
    specs = _every_spec(labels[:60], scores[:60], qid[:60], ties)
    assert len(specs) >= 30
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        together = evaluate(labels, scores, qid=qid, metrics=specs, ties=ties).per_query
        for q, (_, y, s) in enumerate(parts):
            alone = evaluate(y, s, qid=np.zeros(y.shape[0]), metrics=specs, ties=ties).per_query
            for spec in specs:
                np.testing.assert_array_equal(alone[spec], together[spec][q:q + 1],
                                              err_msg=f"{spec}, query {q}")
