"""Numbers at the edges of float64 (DESIGN §8): the right number or a clear error.

Every value here is checked against an independent computation in exact
arithmetic (Python integers, ``fractions``, 50-digit ``decimal``), never
against a number the package produced. NaN may leave a metric only when
``empty="nan"`` asks for it, so every test also turns warnings into errors.
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_rank.metrics import (
    cumulative_gain_score,
    dcg_score,
    evaluate,
    expected_reciprocal_rank_score,
    f1_at_k_score,
    gmap_score,
    mean_average_precision_score,
    ndcg_score,
    precision_at_k_score,
)

pytestmark = pytest.mark.filterwarnings("error")


# -- exact references ---------------------------------------------------------------------


def _exp_gain(label) -> Fraction:
    return Fraction(2 ** int(label) - 1)


def _discount(r: int) -> Fraction:
    """1 / log2(r + 1) as the exact value of its float64 rounding."""
    return Fraction(1 / math.log2(r + 1))


def _ranked_groups(labels, scores, ties):
    """Labels grouped by decreasing score (groups of one unless ties='average')."""
    order = sorted(range(len(labels)), key=lambda i: -scores[i])  # stable: input order
    if ties == "stable":
        return [[labels[i]] for i in order]
    groups = []
    for i in order:
        if groups and scores[groups[-1][0]] == scores[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return [[labels[i] for i in g] for g in groups]


def _dcg_exact(labels, scores, gain, k=None, ties="stable", discount=_discount):
    """Expected DCG@k over tie orders: a group's mean gain at each of its ranks."""
    total, r = Fraction(0), 1
    for group in _ranked_groups(labels, scores, ties):
        mean = sum((gain(x) for x in group), Fraction(0)) / len(group)
        for _ in group:
            if k is None or r <= k:
                total += mean * discount(r)
            r += 1
    return total


def _ndcg_exact(labels, scores, gain, k=None, ties="stable", discount=_discount):
    ideal = sorted(labels, key=lambda x: -gain(x))
    idcg = _dcg_exact(ideal, list(range(len(ideal), 0, -1)), gain, k, discount=discount)
    return _dcg_exact(labels, scores, gain, k, ties, discount) / idcg


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return func(*args, **kwargs)


# -- exponential gains at and beyond 2**1024 ----------------------------------------------


def test_issue_example_labels_1023():
    assert _quiet(ndcg_score, [1023] * 3, [3, 2, 1], qid=[1] * 3) == 1.0


@pytest.mark.parametrize("top", [1022, 1023, 1024, 1025, 1074, 1075, 1100, 5000])
@pytest.mark.parametrize("ties", ["stable", "average"])
@pytest.mark.parametrize("k", [None, 2])
def test_ndcg_exponential_gain_beyond_float64(top, ties, k):
    labels = [top - 1, top, 0, top, 3, top - 60]
    scores = [5, 4, 4, 2, 1, 1]
    expected = _ndcg_exact(labels, scores, _exp_gain, k, ties)
    value = _quiet(ndcg_score, labels, scores, qid=[7] * 6, k=k, ties=ties)
    assert value == pytest.approx(float(expected), rel=1e-13)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3000), min_size=1, max_size=8),
       st.lists(st.integers(0, 3), min_size=8, max_size=8),
       st.sampled_from(["stable", "average"]), st.sampled_from([None, 1, 3]))
def test_ndcg_exponential_gain_any_label(labels, scores, ties, k):
    scores = scores[:len(labels)]
    ev = _quiet(evaluate, labels, scores, qid=[0] * len(labels), metrics=["ndcg"] if k is None
                else [f"ndcg@{k}"], ties=ties)
    value = next(iter(ev.per_query.values()))[0]
    if max(labels) == 0:
        assert value == 0.0
        return
    expected = _ndcg_exact(labels, scores, _exp_gain, k, ties)
    assert value == pytest.approx(float(expected), rel=1e-13, abs=1e-300)


def test_ndcg_with_labels_of_any_size():
    # labels up to 1e308: the largest gain of the query is 2**1e308 - 1; the
    # others vanish next to it (0 to float64 precision)
    assert _quiet(ndcg_score, [1e308, 0.5, 0], [1, 3, 2], qid=[1] * 3) == 0.5
    assert _quiet(ndcg_score, [1e308, 1e308, 7], [1, 3, 2], qid=[1] * 3) == \
        pytest.approx(float((1 + _discount(3)) / (1 + _discount(2))), rel=1e-15)


def test_dcg_and_cg_refuse_a_value_beyond_float64():
    for func in (dcg_score, cumulative_gain_score):
        with pytest.raises(ValueError, match=r"of 1 query \(first: query 'b'\) exceeds float64 "
                                             r"\(about 1\.8e308\): the gains of y_true "
                                             r"\(highest label 1024\)"):
            _quiet(func, [1, 1024, 0], [3, 2, 1], qid=["a", "b", "b"])
    # The same labels give a finite DCG when the huge gain is outside the top k.
    value = _quiet(dcg_score, [1024, 3, 1], [1, 3, 2], qid=[1] * 3, k=2)
    assert value == pytest.approx(float(7 + Fraction(1) * _discount(2)), rel=1e-15)
    # 2**1023 - 1 is finite, and so is its DCG.
    assert _quiet(dcg_score, [1023, 0], [2, 1], qid=[1, 1]) == float(2**1023 - 1)


# -- linear gains, mappings, callables near 1e308 -----------------------------------------


@pytest.mark.parametrize("big", [1e300, 1e308, 1.7976931348623157e308])
def test_linear_gains_near_the_top_of_float64(big):
    labels = [big, big / 3, big, 0.0, 1.0]
    scores = [1, 5, 2, 2, 0]
    for ties in ("stable", "average"):
        expected = _ndcg_exact(labels, scores, Fraction, ties=ties)
        value = _quiet(ndcg_score, labels, scores, qid=[1] * 5, gain="linear", ties=ties)
        assert value == pytest.approx(float(expected), rel=1e-13)


def test_dcg_near_the_top_of_float64_is_exact_or_refused():
    # 1e308 * (1 + 1/log2(3)) = 1.63e308: finite, and computed without overflow.
    expected = Fraction(1e308) * (1 + _discount(2))
    assert _quiet(dcg_score, [1e308, 1e308], [2, 1], qid=[1, 1], gain="linear") == \
        pytest.approx(float(expected), rel=1e-15)
    with pytest.raises(ValueError, match=r"dcg\(gain='linear'\) of 1 query \(first: query 1\)"):
        _quiet(dcg_score, [1.7e308, 1.7e308], [2, 1], qid=[1, 1], gain="linear")
    # Two queries of DCG 1.5e308: the mean is 1.5e308 (the sum would overflow).
    mean = _quiet(dcg_score, [1.5e308, 1.5e308], [1, 1], qid=[1, 2], gain="linear")
    assert mean == 1.5e308


@pytest.mark.parametrize("gain", [
    {0: 0.0, 1: 1e308, 2: 1.7e308},
    [0.0, 1e308, 1.7e308],
    lambda labels: labels * 8e307,
])
def test_huge_gain_mappings_and_callables(gain):
    labels = [1, 2, 0, 2, 1]
    scores = [3, 3, 3, 1, 0]
    table = {0: 0.0, 1: 1e308, 2: 1.7e308} if not callable(gain) else {
        x: x * 8e307 for x in range(3)}
    for ties in ("stable", "average"):
        expected = _ndcg_exact(labels, scores, lambda x: Fraction(table[x]), ties=ties)
        value = _quiet(ndcg_score, labels, scores, qid=[1] * 5, gain=gain, ties=ties)
        assert value == pytest.approx(float(expected), rel=1e-13)
    with pytest.raises(ValueError, match=r"exceeds float64"):
        _quiet(cumulative_gain_score, labels, scores, qid=[1] * 5, gain=gain)


def test_tiny_gains_keep_their_ratio():
    """Subnormal gains (linear) and labels whose 2**l - 1 is tiny (exponential)."""
    linear = _ndcg_exact([1, 2, 0], [3, 2, 1], Fraction)
    assert _quiet(ndcg_score, [5e-324, 1e-323, 0], [3, 2, 1], qid=[1] * 3,
                  gain="linear") == pytest.approx(float(linear), rel=1e-15)
    # 2**l - 1 = l ln 2 (1 + O(l)): the ratio of linear gains, to float64 precision.
    assert _quiet(ndcg_score, [1e-300, 2e-300, 0], [3, 2, 1], qid=[1] * 3) == \
        pytest.approx(float(linear), rel=1e-15)
    # 0 < l < 1: 2**l - 1 without cancellation.
    half = Fraction(math.expm1(0.5 * math.log(2)))
    expected = _ndcg_exact([0.5, 1, 0], [3, 2, 1], lambda x: half if x == 0.5 else
                           Fraction(2**int(x) - 1))
    assert _quiet(ndcg_score, [0.5, 1, 0], [3, 2, 1], qid=[1] * 3) == \
        pytest.approx(float(expected), rel=1e-15)


# -- discounts and log_base ---------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-320, 1e-200, 1e200, 1e308])
def test_discount_callables_of_any_scale(scale):
    labels, scores = [1, 2, 0, 3], [4, 3, 2, 1]
    expected = _ndcg_exact(labels, scores, _exp_gain,
                           discount=lambda r: Fraction(scale / r))
    value = _quiet(ndcg_score, labels, scores, qid=[1] * 4, discount=lambda r: scale / r)
    assert value == pytest.approx(float(expected), rel=1e-13)


@pytest.mark.parametrize("base", [1 + 2**-52, 1 + 1e-9, 3.0, 1e10, 1e308])
@pytest.mark.parametrize("discount", ["log2", "classic"])
def test_log_base_extremes(base, discount):
    labels, scores = [1, 2, 0, 3, 1], [5, 4, 3, 2, 1]
    ln_b = math.log(base)

    def d(r):
        if discount == "log2":
            return Fraction(ln_b / math.log1p(r))
        return Fraction(1 / max(1.0, math.log(r) / ln_b))

    for func, exact in ((ndcg_score, _ndcg_exact), (dcg_score, _dcg_exact)):
        expected = exact(labels, scores, _exp_gain, discount=d)
        value = _quiet(func, labels, scores, qid=[1] * 5, discount=discount, log_base=base)
        assert value == pytest.approx(float(expected), rel=1e-13)


def test_non_finite_options_are_refused():
    with pytest.raises(ValueError, match=r"log_base"):
        ndcg_score([1, 0], [2, 1], qid=[1, 1], log_base=float("inf"))
    with pytest.raises(ValueError, match=r"max_grade"):
        expected_reciprocal_rank_score([1, 0], [2, 1], qid=[1, 1], max_grade=float("inf"))


# -- ERR's stop probability for any max_grade ---------------------------------------------


def _err_exact(labels, max_grade, k=None):
    reach, total = Fraction(1), Fraction(0)
    for r, label in enumerate(labels[:k], start=1):
        stop = Fraction(2**label - 1, 2**max_grade)
        total += reach * stop / r
        reach *= 1 - stop
    return total


@pytest.mark.parametrize("max_grade", [4, 52, 53, 1023, 1024, 1074, 1075, 1100, 5000])
def test_err_with_any_max_grade(max_grade):
    for labels in ([max_grade, 0, max_grade - 1, 2, 1],
                   [max_grade - 1, max_grade - 2, 1, max_grade],
                   [3, 1, 0, 2]):
        for k in (None, 2):
            expected = _err_exact(labels, max_grade, k)
            value = _quiet(expected_reciprocal_rank_score, labels, [5, 4, 3, 2, 1][:len(labels)],
                           qid=[1] * len(labels), k=k, max_grade=max_grade)
            # below 2**-1074 float64 has no number: an absolute floor
            assert value == pytest.approx(float(expected), rel=1e-14, abs=5e-324)


def test_err_issue_example_and_ties_with_huge_grades():
    # ERR with max_grade=1100 gave NaN: labels 1100 stop with probability 1 - 2**-1100.
    assert _quiet(expected_reciprocal_rank_score, [1100, 3, 0], [3, 2, 1], qid=[1] * 3,
                  max_grade=1100) == 1.0
    # tied documents with grades beyond 1024: exact expectation over the 2 orders
    a = _err_exact([1030, 1029, 0], 1030)
    b = _err_exact([1029, 1030, 0], 1030)
    value = _quiet(expected_reciprocal_rank_score, [1030, 1029, 0], [1, 1, 0], qid=[1] * 3,
                   max_grade=1030)
    assert value == pytest.approx(float((a + b) / 2), rel=1e-14)


def test_err_fractional_and_tiny_grades():
    # (2**l - 1) / 2**m for l, m tiny: ~ l ln 2 / 2**m, no cancellation to 0.
    value = _quiet(expected_reciprocal_rank_score, [1e-300, 0], [2, 1], qid=[1, 1],
                   max_grade=1e-300)
    assert value == pytest.approx(1e-300 * math.log(2), rel=1e-14)
    exact = Decimal(2) ** Decimal("0.5") - 1
    value = _quiet(expected_reciprocal_rank_score, [0.5, 0], [2, 1], qid=[1, 1], max_grade=2)
    assert value == pytest.approx(float(exact / 4), rel=1e-15)


# -- scores are ranked as the numbers they are ---------------------------------------------


def test_issue_example_integer_scores_beyond_2_53():
    # 2**60 + 1 ranks first: the non-relevant document, so NDCG = 1 / log2(3).
    value = _quiet(ndcg_score, [1, 0], [2**60, 2**60 + 1], qid=[1, 1])
    assert value == pytest.approx(float(_discount(2)), rel=1e-15)


BIG_SCORES = [
    ("int64 near 2**53", np.array([2**53, 2**53 + 1, 2**53 - 1], dtype=np.int64)),
    ("int64 extremes", np.array([-2**63, -2**63 + 1, 2**63 - 1], dtype=np.int64)),
    ("uint64 extremes", np.array([2**64 - 1, 2**64 - 2, 2**63], dtype=np.uint64)),
    ("python ints beyond uint64", [2**70 + 1, 2**70, 2**70 + 2]),
    ("python ints between int64 and uint64", [2**63 + 1, 2**63, 2**63 + 2]),
    ("mixed ints and floats", [2**60 + 1, 2**60, 0.5]),
    ("object array", np.array([10**30, 10**30 + 1, -(10**30)], dtype=object)),
    ("fractions", [Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**30), Fraction(-1, 3)]),
    ("decimals", [Decimal("0.1") + Decimal("1e-25"), Decimal("0.1"), Decimal("-5")]),
]


@pytest.mark.parametrize("name, scores", BIG_SCORES, ids=[b[0] for b in BIG_SCORES])
def test_scores_that_float64_cannot_hold_are_ranked_exactly(name, scores):
    labels = [2, 0, 1]
    order = sorted(range(3), key=lambda i: scores[i], reverse=True)  # exact comparisons
    ranks = np.empty(3)
    ranks[order] = [3, 2, 1]
    for metric in ("ndcg", "mrr", "map", "err"):
        ev = _quiet(evaluate, labels, scores, qid=[1, 1, 1], metrics=[metric])
        ref = _quiet(evaluate, labels, ranks, qid=[1, 1, 1], metrics=[metric])
        assert ev.per_query[metric][0] == ref.per_query[metric][0], (name, metric)
    # and ties stay ties
    tied = _quiet(ndcg_score, [1, 0], [scores[0], scores[0]], qid=[1, 1])
    assert tied == _quiet(ndcg_score, [1, 0], [1.0, 1.0], qid=[1, 1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**80), 2**80), min_size=2, max_size=8),
       st.lists(st.integers(0, 3), min_size=8, max_size=8))
def test_big_integer_scores_rank_like_python_sorts_them(scores, labels):
    labels = labels[:len(scores)]
    labels[0] = max(labels[0], 1)  # a relevant document (no warning)
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(len(scores), 0, -1)
    for i in range(1, len(order)):  # equal values share a rank
        if scores[order[i]] == scores[order[i - 1]]:
            ranks[order[i]] = ranks[order[i - 1]]
    metrics = ["ndcg", "err", "mrr", "bpref"]
    a = _quiet(evaluate, labels, scores, qid=[0] * len(scores), metrics=metrics)
    b = _quiet(evaluate, labels, ranks, qid=[0] * len(scores), metrics=metrics)
    for m in metrics:
        assert a.per_query[m][0] == b.per_query[m][0], m


def test_big_integer_scores_in_the_two_d_layout():
    assert _quiet(ndcg_score, [[1, 0]], [[2**60, 2**60 + 1]]) == \
        pytest.approx(float(_discount(2)), rel=1e-15)


def test_longdouble_scores_keep_their_order():
    s = np.array([1, 1], dtype=np.longdouble)
    s[1] += np.finfo(np.longdouble).eps  # equal once cast to float64 (where longdouble is longer)
    assert _quiet(ndcg_score, [1, 0], s, qid=[1, 1]) == pytest.approx(float(_discount(2)),
                                                                       rel=1e-15)


def test_number_like_inputs_errors():
    with pytest.raises(ValueError, match=r"y_score contains 1 NaN or infinite value\(s\) "
                                         r"\(first in query 1\)"):
        ndcg_score([1, 0], [None, 2**70], qid=[1, 1])
    with pytest.raises(ValueError, match=r"y_score contains 1 NaN or infinite value\(s\)"):
        ndcg_score([1, 0], [float("nan"), 2**70], qid=[1, 1])
    with pytest.raises(TypeError, match=r"y_score must hold numbers, got str 'a' at position 0"):
        ndcg_score([1, 0], np.array(["a", 2], dtype=object), qid=[1, 1])
    with pytest.raises(ValueError, match=r"y_true holds a number too large for float64 at "
                                         r"position 0"):
        ndcg_score([10**400, 0], [1, 2], qid=[1, 1], gain="linear")


def test_python_int_labels_beyond_int64():
    # labels are gains: float64 rounds 2**70 + 1 to 2**70, a relative 1e-21
    value = _quiet(ndcg_score, [2**70 + 1, 0, 2**69], [1, 3, 2], qid=[1] * 3, gain="linear")
    expected = _ndcg_exact([2**70 + 1, 0, 2**69], [1, 3, 2], Fraction)
    assert value == pytest.approx(float(expected), rel=1e-15)


# -- sample weights of any size -----------------------------------------------------------


@pytest.mark.parametrize("weights", [
    [1e308, 1e308, 1e308, 1e308],
    [1.7976931348623157e308] * 4,
    [5e-324, 5e-324, 1e-323, 1e-323],
    [1e308, 1e308, 5e-324, 5e-324],
    [1e308, 1e308, 1.0, 1.0],
])
def test_sample_weights_near_the_ends_of_float64(weights):
    labels, scores, qid = [0, 1, 1, 0], [1, 2, 1, 2], [1, 1, 2, 2]
    per_query = [Fraction(1), _discount(2)]  # query 1 ideal, query 2 swapped
    w = [(Fraction(weights[0]) + Fraction(weights[1])) / 2,
         (Fraction(weights[2]) + Fraction(weights[3])) / 2]
    expected = sum(v * x for v, x in zip(per_query, w, strict=True)) / sum(w)
    value = _quiet(ndcg_score, labels, scores, qid=qid, sample_weight=weights)
    assert value == pytest.approx(float(expected), rel=1e-15)
    ev = _quiet(evaluate, labels, scores, qid=qid, metrics=["ndcg", "gmap"],
                sample_weight=weights)
    np.testing.assert_allclose(ev.weights, [float(x) for x in w], rtol=1e-15)
    ap = [Fraction(1), Fraction(1, 2)]
    geo = math.exp(float(sum(Fraction(math.log(a)) * x for a, x in zip(ap, w, strict=True))
                         / sum(w)))
    assert ev.mean["gmap"] == pytest.approx(geo, rel=1e-15)
    assert _quiet(gmap_score, labels, scores, qid=qid, sample_weight=weights) == \
        ev.mean["gmap"]


def test_per_query_weights_near_float64_max_in_two_d_layout():
    value = _quiet(ndcg_score, [[0, 1], [1, 0]], [[1, 2], [1, 2]],
                   sample_weight=[1.7e308, 1.7e308])
    assert value == pytest.approx(float((1 + _discount(2)) / 2), rel=1e-15)


# -- cut-offs beyond any list -------------------------------------------------------------


def test_cut_offs_far_beyond_the_lists():
    y, s, q = [1, 0, 1], [3, 2, 1], [1] * 3
    k = 2**62
    assert _quiet(precision_at_k_score, y, s, qid=q, k=k) == float(Fraction(2, k))
    assert _quiet(precision_at_k_score, y, s, qid=q, k=k, capped=True) == 2 / 3
    assert _quiet(f1_at_k_score, y, s, qid=q, k=k) == float(Fraction(4, k + 2))
    assert _quiet(mean_average_precision_score, y, s, qid=q, k=k, capped=True) == \
        pytest.approx(float((1 + Fraction(2, 3)) / 2), rel=1e-15)
    assert _quiet(ndcg_score, y, s, qid=q, k=k) == _quiet(ndcg_score, y, s, qid=q)


def test_empty_nan_is_the_only_nan():
    """NaN leaves a metric only when empty='nan' asks for it."""
    y, s, q = [0, 0, 1, 0], [1, 2, 3, 4], [1, 1, 2, 2]
    assert math.isnan(_quiet(ndcg_score, y, s, qid=q, empty="nan"))
    for big in ([0, 0, 1024, 0], [0, 0, 1e308, 0]):
        gain = "exponential" if big[2] == 1024 else "linear"
        for empty in ("zero", "one", "skip"):
            assert not math.isnan(_quiet(ndcg_score, big, s, qid=q, gain=gain, empty=empty))
