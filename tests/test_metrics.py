"""Public metric functions: options, conventions, policies and bad input."""

import math
import warnings

import numpy as np
import pytest

from sklearn_rank.metrics import (
    Evaluation,
    cumulative_gain_score,
    dcg_score,
    evaluate,
    mean_average_precision_score,
    ndcg_score,
)

LABELS = [3, 2, 3, 0, 1, 2]
SCORES = [6, 5, 4, 3, 2, 1]
ONE_QUERY = [0] * 6


def _dcg(gains, discounts):
    return sum(g * d for g, d in zip(gains, discounts, strict=False))


def test_design_reference_values():
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY, gain="linear") == pytest.approx(
        0.960808, abs=1e-6)
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY) == pytest.approx(0.948811, abs=1e-6)
    classic = ndcg_score(LABELS, SCORES, qid=ONE_QUERY, gain="linear", discount="classic")
    assert classic == pytest.approx(0.931509, abs=1e-6)


def test_classic_discount_by_hand():
    # Järvelin & Kekäläinen: 1 / max(1, log_b r); with b = 2, ranks 1 and 2
    # are not discounted.
    disc = [1 / max(1.0, math.log2(r)) for r in range(1, 7)]
    expected = _dcg(LABELS, disc) / _dcg(sorted(LABELS, reverse=True), disc)
    got = ndcg_score(LABELS, SCORES, qid=ONE_QUERY, gain="linear", discount="classic")
    assert got == pytest.approx(expected, abs=1e-12)
    disc3 = [1 / max(1.0, math.log(r, 3)) for r in range(1, 7)]
    got3 = dcg_score(LABELS, SCORES, qid=ONE_QUERY, gain="linear", discount="classic",
                     log_base=3)
    assert got3 == pytest.approx(_dcg(LABELS, disc3), abs=1e-12)
    assert disc3[:3] == [1, 1, 1]


def test_log_base_of_standard_discount():
    d2 = dcg_score(LABELS, SCORES, qid=ONE_QUERY)
    d10 = dcg_score(LABELS, SCORES, qid=ONE_QUERY, log_base=10)
    assert d10 == pytest.approx(d2 * math.log(10) / math.log(2), rel=1e-12)
    # NDCG does not depend on the base of the standard discount.
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY, log_base=10) == pytest.approx(
        ndcg_score(LABELS, SCORES, qid=ONE_QUERY), rel=1e-12)


def test_cumulative_gain():
    assert cumulative_gain_score(LABELS, SCORES, qid=ONE_QUERY, k=3) == 7 + 3 + 7
    assert cumulative_gain_score(LABELS, SCORES, qid=ONE_QUERY, k=3, gain="linear") == 8
    assert cumulative_gain_score(LABELS, SCORES, qid=ONE_QUERY, gain="linear") == 11


@pytest.mark.parametrize(
    "gain",
    [
        [0, 1, 3, 7],
        np.array([0.0, 1.0, 3.0, 7.0]),
        {0: 0, 1: 1, 2: 3, 3: 7},
        lambda labels: 2.0**labels - 1,
        "exponential",
    ],
    ids=["list", "array", "dict", "callable", "string"],
)
def test_gain_forms_agree(gain):
    expected = ndcg_score(LABELS, SCORES, qid=ONE_QUERY, k=4)
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY, k=4, gain=gain) == pytest.approx(
        expected, abs=1e-15)


def test_custom_gain_changes_the_ideal_ranking():
    # A gain that prefers label 1 over label 2: the ideal ranking sorts by gain.
    gain = {0: 0.0, 1: 5.0, 2: 1.0}
    y, s = [2, 1, 0], [3, 2, 1]
    d = [1 / math.log2(r + 1) for r in (1, 2, 3)]
    expected = (1 * d[0] + 5 * d[1]) / (5 * d[0] + 1 * d[1])
    assert ndcg_score(y, s, qid=[0, 0, 0], gain=gain) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "discount",
    [
        lambda ranks: 1 / np.maximum(1, np.log2(ranks)),
        [1 / max(1.0, math.log2(r)) for r in range(1, 7)],
    ],
    ids=["callable", "array"],
)
def test_discount_forms_agree_with_classic(discount):
    expected = ndcg_score(LABELS, SCORES, qid=ONE_QUERY, discount="classic")
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY, discount=discount) == pytest.approx(
        expected, abs=1e-15)


def test_k_larger_than_every_query_is_clipped():
    y = [1, 0, 2, 0, 1]
    s = [0.2, 0.4, 0.1, 0.9, 0.3]
    q = [1, 1, 1, 2, 2]
    assert ndcg_score(y, s, qid=q, k=1000) == ndcg_score(y, s, qid=q)
    assert ndcg_score(y, s, qid=q, k=3) == ndcg_score(y, s, qid=q)


# ---------------------------------------------------------------- ties


def test_tie_policies():
    y, s = [[1, 0, 0, 0]], [[1, 1, 1, 0]]
    assert ndcg_score(y, s) == pytest.approx(0.710310, abs=1e-6)
    assert ndcg_score(y, s, ties="stable") == 1.0
    assert ndcg_score([[0, 0, 1, 0]], s, ties="stable") == pytest.approx(0.5)
    assert ndcg_score(y, s, ties="optimistic") == 1.0
    assert ndcg_score(y, s, ties="pessimistic") == pytest.approx(0.5)
    # The average is the mean of the three placements of the relevant document.
    assert ndcg_score(y, s) == pytest.approx((1 + 1 / math.log2(3) + 0.5) / 3)


def test_tie_group_straddling_the_cut_counts_in_proportion():
    # Three tied documents, one relevant, cut at 2: the relevant document is in
    # the top 2 with probability 2/3.
    y, s = [[0, 1, 0, 0]], [[2, 1, 1, 1]]
    d = [1 / math.log2(r + 1) for r in (1, 2)]
    expected_dcg = d[1] * 1 / 3  # rank 2 holds the relevant one w.p. 1/3
    assert dcg_score(y, s, k=2, gain="linear") == pytest.approx(expected_dcg, abs=1e-15)
    assert cumulative_gain_score(y, s, k=2, gain="linear") == pytest.approx(1 / 3)


# ---------------------------------------------------------------- empty queries


def _with_empty_query():
    y = [1, 0, 0, 0, 0]
    s = [0.1, 0.9, 0.5, 0.4, 0.3]
    q = ["a", "a", "b", "b", "b"]  # b has no relevant document
    return y, s, q


@pytest.mark.parametrize(
    "empty, mean", [("zero", 0.5 / 2), ("one", 1.5 / 2), ("skip", 0.5)]
)
def test_empty_policies(empty, mean):
    y, s, q = _with_empty_query()
    ndcg_a = 1 / math.log2(3)
    ev = evaluate(y, s, qid=q, metrics=["ndcg"], empty=empty)
    assert ev.n_empty["ndcg"] == 1
    assert ev.mean["ndcg"] == pytest.approx(mean * 2 * ndcg_a if empty != "one" else
                                            (ndcg_a + 1) / 2)


def test_empty_nan_and_raise():
    y, s, q = _with_empty_query()
    ev = evaluate(y, s, qid=q, metrics=["ndcg"], empty="nan")
    assert math.isnan(ev.mean["ndcg"]) and math.isnan(ev.per_query["ndcg"][1])
    assert ev.per_query["ndcg"][0] == pytest.approx(1 / math.log2(3))
    with pytest.raises(ValueError, match=r"ndcg\(empty='raise'\): 1 of 2 queries have no "
                                         r"relevant document \(first: query 'b'\)"):
        ndcg_score(y, s, qid=q, empty="raise")


def test_all_queries_skipped_warns_and_returns_nan():
    with pytest.warns(RuntimeWarning, match="no query is counted"):
        value = ndcg_score([0, 0], [1, 2], qid=[1, 1], empty="skip")
    assert math.isnan(value)
    with pytest.warns(RuntimeWarning, match="no query is counted"):  # 1: empty, 2: weight 0
        assert math.isnan(ndcg_score([0, 0, 1, 0], [1, 2, 1, 2], qid=[1, 1, 2, 2],
                                     sample_weight=[1.0, 1.0, 0.0, 0.0], empty="skip"))
    # and the documentation of empty= says so, not only the warning
    if ndcg_score.__doc__ is not None:  # python -OO
        for doc in (ndcg_score.__doc__, mean_average_precision_score.__doc__):
            text = " ".join(doc.split())
            assert "A mean over no counted query (every query empty under ``'skip'``, or " \
                   "weighted 0) is NaN" in text
            assert "torchmetrics' retrieval metrics return 0" in text


def test_dcg_reports_empty_queries_too():
    y, s, q = _with_empty_query()
    ev = evaluate(y, s, qid=q, metrics=["dcg", "cg", "dcg-"])
    assert ev.n_empty == {"dcg": 1, "cg": 1, "dcg-": 1}
    assert dcg_score(y, s, qid=q, empty="skip") == pytest.approx(1 / math.log2(3))


# ---------------------------------------------------------------- weights


def test_sample_weight_equals_repeating_queries():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 12).astype(float)
    s = rng.random(12)
    q = np.repeat([0, 1, 2], 4)
    w = np.repeat([1, 3, 2], 4)
    weighted = ndcg_score(y, s, qid=q, k=3, sample_weight=w)
    rep = np.repeat(np.arange(3), [1, 3, 2])
    rows = np.concatenate([np.flatnonzero(q == i) for i in rep])
    new_q = np.repeat(np.arange(rep.shape[0]), 4)
    assert weighted == pytest.approx(ndcg_score(y[rows], s[rows], qid=new_q, k=3), abs=1e-14)


def test_empty_one_is_weighted():
    y, s, q = _with_empty_query()
    w = [1, 1, 3, 3, 3]
    value = ndcg_score(y, s, qid=q, empty="one", sample_weight=w)
    assert value == pytest.approx((1 / math.log2(3) * 1 + 1 * 3) / 4)


def test_two_d_sample_weight_is_per_query():
    y = [[1, 0], [0, 1]]
    s = [[0.5, 0.2], [0.5, 0.2]]
    assert ndcg_score(y, s, sample_weight=[3, 1]) == pytest.approx(
        (3 + 1 / math.log2(3)) / 4)


# ---------------------------------------------------------------- conventions


def test_conventions():
    y, s = [[1, 0, 0, 0], [0, 0, 0, 0]], [[1, 1, 1, 0], [1, 2, 3, 4]]
    sk = ndcg_score(y, s, convention="sklearn")
    assert sk == pytest.approx(0.710310 / 2, abs=1e-6)
    assert ndcg_score(y, s, convention="lightgbm") == 1.0
    assert ndcg_score(y, s, convention="xgboost") == 1.0
    assert ndcg_score(y, s, convention="xgboost", empty="zero") == 0.5
    # explicit options win over the preset
    assert ndcg_score(y, s, convention="lightgbm", ties="average") == pytest.approx(
        (0.710310 + 1) / 2, abs=1e-6)
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY, convention="sklearn") == pytest.approx(
        0.960808, abs=1e-6)
    assert ndcg_score(LABELS, SCORES, qid=ONE_QUERY, convention="sklearn",
                      gain="exponential") == pytest.approx(0.948811, abs=1e-6)


def test_evaluate_options_and_spec_options():
    y, s, q = _with_empty_query()
    ev = evaluate(y, s, qid=q, metrics=["ndcg", "ndcg-"], convention="xgboost")
    assert ev.mean["ndcg"] == pytest.approx((1 / math.log2(3) + 1) / 2)
    assert ev.mean["ndcg-"] == pytest.approx(1 / math.log2(3) / 2)
    single = evaluate(y, s, qid=q, metrics="ndcg@2")
    assert list(single.mean) == ["ndcg@2"]


def test_functions_return_plain_floats():
    for fn in (ndcg_score, dcg_score, cumulative_gain_score):
        assert type(fn(LABELS, SCORES, qid=ONE_QUERY)) is float


def test_evaluation_repr_and_frame():
    y, s, q = _with_empty_query()
    ev = evaluate(y, s, qid=q, metrics=["ndcg@2", "dcg"], sample_weight=[1, 1, 2, 2, 2])
    assert isinstance(ev, Evaluation)
    text = repr(ev)
    assert "Evaluation(n_queries=2, weighted)" in text
    assert "ndcg@2" in text and "n_empty" in text
    frame = ev.to_frame()
    assert frame.columns.tolist() == ["weight", "ndcg@2", "dcg"]
    assert frame.index.tolist() == ["a", "b"]
    assert ev.weights.tolist() == [1.0, 2.0]


def test_inputs_are_not_modified():
    y = np.array([1.0, 0.0, 2.0])
    s = np.array([0.2, 0.2, 0.1])
    q = np.array([3, 3, 3])
    copies = y.copy(), s.copy(), q.copy()
    evaluate(y, s, qid=q, metrics=["ndcg", "dcg@1"], ties="pessimistic")
    for a, b in zip((y, s, q), copies, strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(y_true=[1, 0, 2], y_score=[0.1, np.nan, np.inf], qid=[4, 5, 5]), ValueError,
         r"y_score contains 2 NaN or infinite value\(s\) \(first in query 5\)"),
        (dict(y_true=[1, np.nan, 2], y_score=[0.1, 0.2, 0.3], qid=["a", "b", "b"]),
         ValueError, r"y_true contains 1 NaN or infinite value\(s\) \(first in query 'b'\)"),
        (dict(y_true=[1, -1, -2], y_score=[0.1, 0.2, 0.3], qid=["a", "b", "b"]),
         ValueError, r"y_true has 2 negative label\(s\) \(first in query 'b'\); ndcg needs "
                     r"relevance labels >= 0"),
        (dict(y_true=[1, 0, 2], y_score=[0.1, 0.2], qid=[1, 1, 1]), ValueError,
         r"must have the same length; got 3, 2 and 3"),
        (dict(y_true=[1, 0, 2], y_score=[0.1, 0.2, 0.3], qid=[1, 1]), ValueError,
         r"must have the same length; got 3, 3 and 2"),
        (dict(y_true=[1, 0, 2], y_score=[0.1, 0.2, 0.3]), ValueError,
         r"1-D, so the query of each row is unknown\. Pass qid="),
        (dict(y_true=[[1, 0]], y_score=[[0.1, 0.2]], qid=[1, 1]), ValueError,
         r"qid is given, so y_true and y_score must be 1-D"),
        (dict(y_true=[[1, 0]], y_score=[[0.1, 0.2], [0.3, 0.4]]), ValueError,
         r"different shapes \(1, 2\) and \(2, 2\)"),
        (dict(y_true=[[[1]]], y_score=[[[1]]]), ValueError,
         r"must both be 2-D arrays of shape \(n_queries, n_docs\)"),
        (dict(y_true=[], y_score=[], qid=[]), ValueError, r"are empty"),
        (dict(y_true=np.zeros((0, 3)), y_score=np.zeros((0, 3))), ValueError, r"are empty"),
        (dict(y_true=["a", "b"], y_score=[0.1, 0.2], qid=[1, 1]), TypeError,
         r"y_true must hold numbers, got an array of dtype <U1"),
        (dict(y_true=[[1, 0], [1]], y_score=[[0.1, 0.2], [0.1]]), ValueError,
         r"y_true could not be converted to an array"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1.0, np.nan]), ValueError,
         r"qid has 1 missing \(NaN\) value\(s\), first at row 1"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=["a", None]), ValueError,
         r"qid has 1 missing \(None/NaN\) value\(s\), first at row 1"),
        (dict(y_true=[1, 0, 1], y_score=[0.1, 0.2, 0.3], qid=[1, "a", 1]), TypeError,
         r"qid values cannot be compared with each other"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[[1, 1], [2, 2]]), ValueError,
         r"qid must be 1-D"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], k=0), ValueError,
         r"The 'k' parameter of ndcg_score must be an int in the range \[1, inf\) or "
         r"None\. Got 0 instead\."),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], k=2.5), ValueError,
         r"The 'k' parameter of ndcg_score must be an int"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], gain="expo"), ValueError,
         r"The 'gain' parameter of ndcg_score must be a str among"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], discount="log"), ValueError,
         r"The 'discount' parameter of ndcg_score must be a str among"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], ties="random"), ValueError,
         r"The 'ties' parameter of ndcg_score must be a str among"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], empty="ignore"), ValueError,
         r"The 'empty' parameter of ndcg_score must be a str among"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], convention="ranx"), ValueError,
         r"The 'convention' parameter of ndcg_score must be a str among"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], log_base=0.5), ValueError,
         r"The 'log_base' parameter of ndcg_score must be a float in the range \(1.0, inf\)"),
        (dict(y_true=[1, 3], y_score=[0.1, 0.2], qid=[1, 2], gain={0: 0, 1: 1}), ValueError,
         r"1 label\(s\) with no entry in the gain mapping \(first in query 2, label 3\)"),
        (dict(y_true=[1, 3], y_score=[0.1, 0.2], qid=[1, 2], gain=[0, 1]), ValueError,
         r"1 label\(s\) that are not integers below len\(gain\) = 2 \(first in query 2\)"),
        (dict(y_true=[1, 0.5], y_score=[0.1, 0.2], qid=[1, 2], gain=[0, 1]), ValueError,
         r"not integers below len\(gain\)"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], gain=[0, -1]), ValueError,
         r"gain must map labels to finite gains >= 0"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], gain=lambda x: -x), ValueError,
         r"gain callable returned 1 negative, NaN or infinite gain\(s\) \(first in query 1\)"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], gain=lambda x: x[:1]),
         ValueError, r"gain callable must return one gain per label"),
        (dict(y_true=[1, 0, 1], y_score=[0.1, 0.2, 0.3], qid=[1, 1, 1], discount=[1, 0.5]),
         ValueError, r"discount array has 2 values but ranks up to 3 are needed; pass k <= 2"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 1], discount=lambda r: -r),
         ValueError, r"discount callable must return finite discounts >= 0"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], sample_weight=[1]), ValueError,
         r"sample_weight must be 1-D with one weight per row: expected 2 values"),
        (dict(y_true=[[1, 0]], y_score=[[0.1, 0.2]], sample_weight=[1, 1]), ValueError,
         r"one weight per query \(one per row of the 2-D arrays\): expected 1 values"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], sample_weight=[1, -1]),
         ValueError, r"sample_weight has 1 negative value\(s\) \(first in query 2\)"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], sample_weight=[0, 0]),
         ValueError, r"sample_weight sums to zero"),
        (dict(y_true=[1, 0], y_score=[0.1, 0.2], qid=[1, 2], sample_weight=[1, np.nan]),
         ValueError, r"sample_weight contains 1 NaN or infinite value\(s\) \(first in query 2\)"),
    ],
)
def test_bad_input_messages(kwargs, error, match):
    with pytest.raises(error, match=match):
        ndcg_score(**kwargs)


def test_bad_input_messages_of_evaluate():
    y, s, q = [1, 0], [0.1, 0.2], [1, 1]
    with pytest.raises(TypeError, match=r"evaluate\(\) got an option 'gian'.*Did you mean "
                                        r"'gain'\?"):
        evaluate(y, s, qid=q, metrics=["ndcg"], gian="linear")
    with pytest.raises(TypeError, match=r"option 'k'.*Write the cut-off in the spec"):
        evaluate(y, s, qid=q, metrics=["ndcg"], k=3)
    with pytest.raises(ValueError, match=r"The 'ties' parameter of evaluate must be"):
        evaluate(y, s, qid=q, metrics=["ndcg"], ties="random")
    with pytest.raises(ValueError, match=r"Unknown metric 'ndgc'\. Did you mean 'ndcg'\?"):
        evaluate(y, s, qid=q, metrics=["ndgc@10"])
    with pytest.raises(ValueError, match=r"metrics is empty"):
        evaluate(y, s, qid=q, metrics=[])
    with pytest.raises(TypeError, match=r"The 'metrics' parameter of evaluate must be an "
                                        r"instance of 'str'"):
        evaluate(y, s, qid=q, metrics=10)


def test_no_warnings_on_clean_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate([[1, 0, 0]], [[0.1, 0.2, 0.3]], metrics=["ndcg", "dcg@2", "cg"])
