"""The metric family against direct implementations of the definitions (DESIGN §3)."""

import math
import warnings

import numpy as np
import pytest

from sklearn_rank.metrics import (
    evaluate,
    expected_reciprocal_rank_score,
    f1_at_k_score,
    get_metric_names,
    gmap_score,
    hit_rate_score,
    mean_average_precision_score,
    mean_reciprocal_rank_score,
    parse_metric,
    precision_at_k_score,
    r_precision_score,
    rank_biased_precision_score,
    rank_eff_score,
    recall_at_k_score,
)

# -- direct, per-query definitions (labels in rank order) ------------------------


def _p(rel, k, capped=False):
    return rel[:k].sum() / (min(k, len(rel)) if capped else k)


def _recall(rel, k):
    return rel[:k].sum() / rel.sum()


def _f1(rel, k):
    p, r = _p(rel, k), _recall(rel, k)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def _hit(rel, k):
    return float(rel[:k].any())


def _rprec(rel):
    n_rel = int(rel.sum())
    return rel[:n_rel].sum() / n_rel


def _ap(rel, k=None, capped=False):
    k = len(rel) if k is None else k
    hits, total = 0, 0.0
    for r, is_rel in enumerate(rel[:k], start=1):
        if is_rel:
            hits += 1
            total += hits / r
    return total / (min(rel.sum(), k) if capped else rel.sum())


def _rr(rel, k=None):
    k = len(rel) if k is None else k
    for r, is_rel in enumerate(rel[:k], start=1):
        if is_rel:
            return 1.0 / r
    return 0.0


def _auc(rel):
    """The share of (relevant, non-relevant) pairs ranked in that order (tie-free)."""
    pos = np.flatnonzero(rel)
    neg = np.flatnonzero(~rel)
    return (pos[:, None] < neg[None, :]).mean() if pos.size and neg.size else np.nan


def _err(labels, k=None, max_grade=4):
    """Chapelle et al. (2009), Algorithm 2, literally."""
    k = len(labels) if k is None else k
    p, err = 1.0, 0.0
    for r, g in enumerate(labels[:k], start=1):
        stop = (2.0**g - 1) / 2.0**max_grade
        err += p * stop / r
        p *= 1 - stop
    return err


def _rank_eff(rel):
    n_rel, n_nonrel = rel.sum(), (~rel).sum()
    if n_nonrel == 0:
        return 1.0
    total, above = 0.0, 0
    for is_rel in rel:
        if is_rel:
            total += 1 - above / n_nonrel
        else:
            above += 1
    return total / n_rel


def _bpref(rel):
    """trec_eval's bpref, every document judged."""
    n_rel, n_nonrel = rel.sum(), (~rel).sum()
    total, above = 0.0, 0
    for is_rel in rel:
        if not is_rel:
            above += 1
        elif above == 0:
            total += 1.0
        else:
            total += 1 - min(above, n_rel) / min(n_nonrel, n_rel)
    return total / n_rel


def _dcg(gains, k=None, discount=lambda r: 1 / math.log2(r + 1)):
    return sum(g * discount(r) for r, g in enumerate(gains[:k], start=1))


def _ndcg(gains, k=None, discount=lambda r: 1 / math.log2(r + 1)):
    return _dcg(gains, k, discount) / _dcg(np.sort(gains)[::-1], k, discount)


def _classic(r):  # Järvelin & Kekäläinen's discount, base 2
    return 1 / max(1.0, math.log2(r))


def _rbp(rel, k=None, p=0.8):
    """Moffat & Zobel (2008), literally: (1 - p) sum over relevant ranks of p**(r - 1)."""
    return (1 - p) * sum(p ** (r - 1) for r, is_rel in enumerate(rel[:k], start=1) if is_rel)


def _cwl(gains, continuation, depth=1000):
    """C/W/L's expected utility per document: sum_i W_i g_i, W_i = prod_{j<i} C_j
    normalised over ranks 1..depth (``continuation(i, g_i, sum_{j<=i} g_j)``)."""
    g = (list(gains) + [0.0] * depth)[:depth]
    reach, total, num, den = 1.0, 0.0, 0.0, 0.0
    for i, gi in enumerate(g, start=1):
        total += gi
        num, den = num + reach * gi, den + reach
        reach *= continuation(i, gi, total)
    return num / den


def _graded(lab, max_rel=4):
    return np.clip(lab, 0, max_rel) / max_rel


def _data(seed, n_queries=40):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(1, 15, n_queries))
    y = rng.choice(5, qid.shape[0], p=[0.5, 0.2, 0.15, 0.1, 0.05]).astype(float)
    y[qid == 0] = 0  # a query without relevant documents
    s = rng.permutation(qid.shape[0]).astype(float)  # tie-free
    return y, s, qid


def _per_query(y, s, qid, fn):
    out = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        labels = y[rows][np.argsort(-s[rows])]
        out.append(fn(labels))
    return np.array(out)


CASES = [
    ("cg@5", lambda lab: (2**lab - 1)[:5].sum()),
    ("cg(gain='linear')", lambda lab: lab.sum()),
    ("dcg@5", lambda lab: _dcg(2**lab - 1, 5)),
    ("dcg(gain='linear', discount='classic')", lambda lab: _dcg(lab, None, _classic)),
    ("ndcg@5", lambda lab: _ndcg(2**lab - 1, 5)),
    ("ndcg(gain='linear', discount='classic')@4", lambda lab: _ndcg(lab, 4, _classic)),
    ("p@5", lambda lab: _p(lab >= 1, 5)),
    ("p(capped=True)@5", lambda lab: _p(lab >= 1, 5, capped=True)),
    ("p(threshold=3)@3", lambda lab: _p(lab >= 3, 3)),
    ("recall@5", lambda lab: _recall(lab >= 1, 5)),
    ("f1@4", lambda lab: _f1(lab >= 1, 4)),
    ("hit_rate@3", lambda lab: _hit(lab >= 1, 3)),
    ("r_precision", lambda lab: _rprec(lab >= 1)),
    ("map", lambda lab: _ap(lab >= 1)),
    ("map@4", lambda lab: _ap(lab >= 1, 4)),
    ("map(capped=True)@4", lambda lab: _ap(lab >= 1, 4, capped=True)),
    ("map(threshold=2)", lambda lab: _ap(lab >= 2)),
    ("mrr", lambda lab: _rr(lab >= 1)),
    ("mrr@2", lambda lab: _rr(lab >= 1, 2)),
    ("err@5", lambda lab: _err(lab, 5)),
    ("err", lambda lab: _err(lab)),
    ("err(max_grade=6)@3", lambda lab: _err(lab, 3, max_grade=6)),
    ("gmap", lambda lab: _ap(lab >= 1)),  # per query: AP (the mean is geometric)
    ("rank_eff", lambda lab: _rank_eff(lab >= 1)),
    ("rank_eff(threshold=3)", lambda lab: _rank_eff(lab >= 3)),
    ("bpref", lambda lab: _bpref(lab >= 1)),
    ("bpref(threshold=2)", lambda lab: _bpref(lab >= 2)),
    ("rbp", lambda lab: _rbp(lab >= 1)),
    ("rbp(p=0.5)@3", lambda lab: _rbp(lab >= 1, 3, p=0.5)),
    ("rbp(p=0.95, threshold=2)", lambda lab: _rbp(lab >= 2, p=0.95)),
    ("judged@3", lambda lab: 1.0),  # flat rows: every row is a judged document
    ("cwl_rbp", lambda lab: _cwl(lab >= 1, lambda i, g, t: 0.8)),
    ("cwl_rbp(p=0.5, threshold=2, depth=4)", lambda lab: _cwl(lab >= 2, lambda i, g, t: 0.5, 4)),
    ("sdcg(depth=5)", lambda lab: _dcg(_graded(lab), 5) / sum(1 / math.log2(r + 1)
                                                           for r in range(1, 6))),
    ("nerr8(max_rel=3, depth=5)", lambda lab: _cwl(_graded(lab, 3), lambda i, g, t: 1 - g, 5)),
    ("nerr9(depth=10)", lambda lab: _cwl(_graded(lab), lambda i, g, t: i / (i + 1) * (1 - g),
                                         10)),
    ("nerr10(p=0.9)", lambda lab: _cwl(_graded(lab), lambda i, g, t: 0.9 * (1 - g))),
    ("nerr11(target=2)", lambda lab: _cwl(_graded(lab), lambda i, g, t:
                                          ((i + 3) / (i + 4)) ** 2 * (1 - g))),
    ("inst(max_rel=3)", lambda lab: _cwl(_graded(lab, 3), lambda i, g, t:
                                         ((i + 2 - t - 1) / (i + 2 - t)) ** 2)),
    ("insq(max_rel=3)", lambda lab: _cwl(_graded(lab, 3), lambda i, g, t:
                                         ((i + 1) / (i + 2)) ** 2)),
    ("bpm(target=2, depth=8)", lambda lab: _cwl(_graded(lab), lambda i, g, t: float(t < 2),
                                                8)),
    # per query, AUC: one class only is empty (0/0 -> 0 here, as empty='zero')
    ("auc(empty='zero')", lambda lab: _auc(lab >= 1)),
    ("gauc(empty='zero', threshold=2)", lambda lab: _auc(lab >= 2)),
]


def test_every_registered_metric_has_a_direct_definition():
    """A metric added to the registry needs its direct definition here."""
    assert {parse_metric(spec).name for spec, _ in CASES} == set(get_metric_names())


@pytest.mark.parametrize("spec, direct", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_equals_direct_definition(spec, direct, seed):
    y, s, qid = _data(seed)
    perm = np.random.default_rng(seed + 10).permutation(y.shape[0])  # rows in any order
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 for empty queries
        expected = np.nan_to_num(_per_query(y, s, qid, direct))  # empty="zero"
    ev = evaluate(y[perm], s[perm], qid=qid[perm], metrics=[spec])
    np.testing.assert_allclose(ev.per_query[spec], expected, rtol=0, atol=1e-12)
    if ev.metrics[0].name == "judged":  # never empty on flat rows: every row is judged
        assert ev.n_empty[spec] == 0
        return
    # empty: no relevant document (for ERR: no positive label; for AUC: one class)
    threshold = ev.metrics[0].resolve().get("threshold", 1e-12)
    one_class = (lambda rel: not rel.any() or rel.all()) if ev.metrics[0].name in (
        "auc", "gauc") else (lambda rel: not rel.any())
    n_empty = sum(one_class(y[qid == q] >= threshold) for q in np.unique(qid))
    assert ev.n_empty[spec] == n_empty > 0


def test_gmap_is_the_geometric_mean_of_ap_with_trec_evals_floor():
    y, s, qid = _data(3)
    ap = _per_query(y, s, qid, lambda lab: _ap(lab >= 1) if (lab >= 1).any() else 0.0)
    assert (ap == 0).any()
    expected = math.exp(np.mean(np.log(np.maximum(ap, 1e-5))))
    assert gmap_score(y, s, qid=qid) == pytest.approx(expected, rel=1e-12)
    ev = evaluate(y, s, qid=qid, metrics=["gmap", "map"])
    np.testing.assert_array_equal(ev.per_query["gmap"], ev.per_query["map"])
    w = np.random.default_rng(0).random(np.unique(qid).shape[0]) + 0.1
    weighted = gmap_score(y, s, qid=qid, sample_weight=w[qid])
    assert weighted == pytest.approx(
        math.exp(np.average(np.log(np.maximum(ap, 1e-5)), weights=w)), rel=1e-12)


@pytest.mark.parametrize(
    "function, kwargs, expected",
    [
        (precision_at_k_score, dict(k=3), 1 / 3),
        (recall_at_k_score, dict(k=3), 1 / 2),
        (f1_at_k_score, dict(k=3), 2 / 5),
        (hit_rate_score, dict(k=1), 0.0),
        (r_precision_score, {}, 0.0),
        (mean_average_precision_score, {}, (1 / 3 + 2 / 4) / 2),
        (mean_reciprocal_rank_score, {}, 1 / 3),
        (expected_reciprocal_rank_score, dict(k=2), 0.0),
        (rank_eff_score, {}, (1 - 2 / 2 + 1 - 2 / 2) / 2),
        (rank_biased_precision_score, {}, 0.2 * (0.8**2 + 0.8**3)),
        (rank_biased_precision_score, dict(k=3, p=0.5), 0.5 * 0.5**2),
    ],
)
def test_functions_on_a_hand_computed_query(function, kwargs, expected):
    # labels in rank order: 0, 0, 1, 1 (two non-relevant above both relevant)
    value = function([[0, 0, 1, 1]], [[4, 3, 2, 1]], **kwargs)
    assert type(value) is float and value == pytest.approx(expected, abs=1e-15)


def test_one_sort_for_every_metric_and_all_per_query_values():
    y, s, qid = _data(4)
    specs = [c[0] for c in CASES] + ["ndcg@5", "gmap"]
    together = evaluate(y, s, qid=qid, metrics=specs)
    for spec in specs:
        alone = evaluate(y, s, qid=qid, metrics=[spec])
        np.testing.assert_allclose(together.per_query[spec], alone.per_query[spec], atol=1e-15)
        assert together.n_empty[spec] == alone.n_empty[spec]
    assert set(together.n_empty) == set(together.mean) == {str(m) for m in together.metrics}


def test_empty_policies_apply_to_binary_metrics():
    y, s, q = [0, 0, 1, 0], [0.9, 0.1, 0.5, 0.2], ["a", "a", "b", "b"]
    assert precision_at_k_score(y, s, qid=q, k=1, empty="skip") == 1.0
    assert mean_average_precision_score(y, s, qid=q, empty="one") == 1.0
    assert math.isnan(recall_at_k_score(y, s, qid=q, k=1, empty="nan"))
    with pytest.raises(ValueError, match=r"map\(empty='raise'\): 1 of 2 queries"):
        mean_average_precision_score(y, s, qid=q, empty="raise")


def test_binary_metrics_accept_negative_labels():
    # trec_eval's negative judgments are just non-relevant
    assert mean_average_precision_score([-1, 1, 0], [3, 2, 1], qid=[1, 1, 1]) == 0.5


def test_err_label_errors():
    with pytest.raises(ValueError, match=r"y_true has 1 label\(s\) above max_grade=4 \(first "
                                         r"in query 2\).*pass max_grade >= the highest"):
        expected_reciprocal_rank_score([1, 5], [0.2, 0.1], qid=[1, 2])
    with pytest.raises(ValueError, match=r"y_true has 1 negative label\(s\) \(first in query "
                                         r"'b'\); err needs grades"):
        expected_reciprocal_rank_score([1, -1], [0.2, 0.1], qid=["a", "b"])
    assert expected_reciprocal_rank_score([1, 5], [0.2, 0.1], qid=[1, 2], max_grade=5) > 0


def test_threshold_without_relevant_documents_warns_once():
    with pytest.warns(UserWarning) as record:
        ev = evaluate([0, 1, 2], [3, 2, 1], qid=[1, 1, 2],
                      metrics=["p(threshold=5)@2", "map(threshold=5)", "mrr"])
    messages = [str(w.message) for w in record if "threshold" in str(w.message)]
    assert len(messages) == 1
    assert "threshold=5 (the highest label is 2)" in messages[0]
    assert "p(threshold=5)@2, map(threshold=5)" in messages[0]
    assert ev.n_empty["p(threshold=5)@2"] == 2



class _Scores:
    """An estimator whose predictions are fixed scores."""

    def __init__(self, scores):
        self.scores = scores

    def predict(self, X):
        return self.scores


def test_warnings_point_at_the_callers_line():
    """Whatever the depth of the package they come from, warnings carry the
    line that called the public function (not a line of the package)."""
    from sklearn_rank.metrics import evaluate_chunks, make_ranking_scorer
    from sklearn_rank.trec import evaluate_run

    y, s, q = [0, 1, 2], [3.0, 2.0, 1.0], [1, 1, 2]
    scorer = make_ranking_scorer("p(threshold=5)@2")
    calls = {
        "function": lambda: precision_at_k_score(y, s, qid=q, k=2, threshold=5),
        "evaluate": lambda: evaluate(y, s, qid=q, metrics=["map(threshold=5)"]),
        "evaluate_chunks": lambda: evaluate_chunks([(y, s, q)], metrics=["mrr(threshold=5)"]),
        "evaluate_run": lambda: evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P.5"],
                                             relevance_level=5),
        "scorer": lambda: scorer(_Scores(s), None, y, qid=q),
    }
    for name, call in calls.items():
        with pytest.warns(UserWarning, match="No document has a label >= threshold=5") as record:
            call()
        assert [w.filename for w in record] == [__file__], name
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        recall_at_k_score(y, s, qid=q, threshold=3, empty="skip")  # every query skipped
    assert {w.category for w in record} == {UserWarning, RuntimeWarning}
    assert {w.filename for w in record} == {__file__}


def test_rbp_of_an_ideal_ranking_and_under_ties():
    # R relevant documents first: 1 - p**R
    y, s = [[2, 1, 1, 0, 0]], [[5, 4, 3, 2, 1]]
    assert rank_biased_precision_score(y, s, p=0.9) == pytest.approx(1 - 0.9**3, rel=1e-15)
    # one tie group of four, two relevant: each rank relevant with probability 1/2
    tied = rank_biased_precision_score([[1, 0, 1, 0]], [[1, 1, 1, 1]], p=0.5)
    assert tied == pytest.approx(0.5 * 0.5 * (1 + 0.5 + 0.25 + 0.125), rel=1e-15)
    assert rank_biased_precision_score([[1, 0, 1, 0]], [[1, 1, 1, 1]], p=0.5,
                                       ties="optimistic") == 0.5 * (1 + 0.5)
    with pytest.raises(ValueError, match=r"The 'p' parameter of rank_biased_precision_score "
                                         r"must be a float in the range \(0\.0, 1\.0\)"):
        rank_biased_precision_score(y, s, p=1)
    with pytest.raises(ValueError, match=r"'p' parameter of metric 'rbp\(p=True\)' must be a "
                                         r"number, got True"):
        evaluate([1, 0], [2, 1], qid=[1, 1], metrics=["rbp(p=True)"])
