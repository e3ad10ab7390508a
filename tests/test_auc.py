"""Per-user ROC AUC (``auc``, uAUC) and DIN's GAUC (``gauc``) as registry metrics.

Each user's value is :func:`sklearn.metrics.roc_auc_score` of its rows (ties
counting 1/2), a user with one class only has none (``n_empty``), and
``gauc`` weighs users by their rows (times their sample weight). The metrics
go through every entry point (functions, ``evaluate``, chunks, scorers,
``evaluate_run``, Dask, the command line, ``compare``) with the same values.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sklearn_rank.metrics import (
    auc_score,
    evaluate,
    evaluate_chunks,
    gauc_score,
    make_ranking_scorer,
)
from sklearn_rank.stats import compare
from sklearn_rank.trec import evaluate_run

REL = 1e-12


def _clicks(seed, n_users=80, ties=True):
    """Click data: users with 1-30 impressions, ~30% clicks, scores with many ties
    (integers 0..5) or none; some users with one class only."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 31, n_users)
    qid = np.repeat(np.arange(n_users), lengths)
    y = (rng.random(qid.shape[0]) < 0.3).astype(float)
    s = (rng.integers(0, 6, qid.shape[0]).astype(float) if ties
         else rng.permutation(qid.shape[0]).astype(float))
    perm = rng.permutation(qid.shape[0])  # rows in any order
    return y[perm], s[perm], qid[perm]


def _per_user(y, s, qid, threshold=1.0):
    """roc_auc_score of each user (NaN for one class), in sorted-qid order, and rows."""
    values, rows = [], []
    for u in np.unique(qid):
        rel = y[qid == u] >= threshold
        rows.append(rel.shape[0])
        values.append(roc_auc_score(rel, s[qid == u]) if 0 < rel.sum() < rel.shape[0]
                      else np.nan)
    return np.array(values), np.array(rows, dtype=float)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("ties", [True, False])
def test_each_user_equals_roc_auc_score(seed, ties):
    y, s, q = _clicks(seed, ties=ties)
    want, rows = _per_user(y, s, q)
    ev = evaluate(y, s, qid=q, metrics=["auc", "gauc"])
    np.testing.assert_allclose(ev.per_query["auc"], want, rtol=REL, atol=0)
    np.testing.assert_array_equal(ev.per_query["gauc"], ev.per_query["auc"])
    counted = ~np.isnan(want)
    assert ev.n_empty["auc"] == ev.n_empty["gauc"] == int((~counted).sum()) > 0
    assert ev.mean["auc"] == pytest.approx(want[counted].mean(), rel=REL)
    assert ev.mean["gauc"] == pytest.approx(
        np.average(want[counted], weights=rows[counted]), rel=REL)
    assert auc_score(y, s, qid=q) == pytest.approx(want[counted].mean(), rel=REL)
    assert gauc_score(y, s, qid=q) == ev.mean["gauc"]


@pytest.mark.parametrize("threshold", [1, 2, 3])
def test_graded_labels_are_made_binary_by_the_threshold(threshold):
    rng = np.random.default_rng(7)
    q = np.repeat(np.arange(40), 12)
    y = rng.integers(0, 4, q.shape[0]).astype(float)
    s = rng.integers(0, 4, q.shape[0]).astype(float)
    want, _ = _per_user(y, s, q, threshold)
    ev = evaluate(y, s, qid=q, metrics=[f"auc(threshold={threshold})"])
    np.testing.assert_allclose(ev.per_query[f"auc(threshold={threshold})"], want, rtol=REL)
    assert auc_score(y, s, qid=q, threshold=threshold) == pytest.approx(np.nanmean(want),
                                                                        rel=REL)


def test_tie_policies():
    """'average' counts a tied (click, no click) pair 1/2, 'pessimistic' 0 and
    'optimistic' 1; 'stable' follows the rows' order."""
    y, s, q = np.array([1, 0, 0, 1]), np.array([2, 2, 2, 1]), np.zeros(4, int)
    # pairs: (d0, d1) tie, (d0, d2) tie, (d3, d1) lost, (d3, d2) lost
    for ties, want in [("average", 0.25), ("pessimistic", 0.0), ("optimistic", 0.5),
                       ("stable", 0.5)]:
        assert auc_score(y, s, qid=q, ties=ties) == want, ties
    assert auc_score(y, s, qid=q) == roc_auc_score(y, s)


def test_gauc_is_dins_impression_weighted_mean():
    # user a: 4 rows, AUC 3/4; user b: 2 rows, AUC 1/2 (a tie); user c: no click
    y = [1, 0, 0, 1, 0, 1, 0, 0, 0]
    s = [0.9, 0.8, 0.4, 0.5, 0.3, 0.3, 0.1, 0.2, 0.3]
    q = ["a"] * 4 + ["b"] * 2 + ["c"] * 3
    assert gauc_score(y, s, qid=q) == pytest.approx((4 * 0.75 + 2 * 0.5) / 6, rel=REL)
    assert auc_score(y, s, qid=q) == pytest.approx((0.75 + 0.5) / 2, rel=REL)
    # with empty='zero' the user without clicks counts 0 with its 3 impressions
    assert gauc_score(y, s, qid=q, empty="zero") == pytest.approx(4 / 9, rel=REL)
    # sample weights: a user's weight is the sum of its rows' weights
    w = np.array([1, 1, 1, 1, 3, 3, 5, 5, 5], dtype=float)
    assert gauc_score(y, s, qid=q, sample_weight=w) == pytest.approx(
        (4 * 0.75 + 6 * 0.5) / 10, rel=REL)
    # ... and auc's is the mean of its rows' weights (the package's rule)
    assert auc_score(y, s, qid=q, sample_weight=w) == pytest.approx(
        (1 * 0.75 + 3 * 0.5) / 4, rel=REL)


def test_one_class_users_are_counted_and_follow_empty():
    y, s, q = [1, 1, 0, 0, 1, 0], [3, 2, 1, 0, 5, 4], [1, 1, 2, 2, 3, 3]
    ev = evaluate(y, s, qid=q, metrics=["auc", "auc(empty='one')", "auc-"])
    assert ev.n_empty["auc"] == 2
    np.testing.assert_array_equal(ev.per_query["auc"], [np.nan, np.nan, 1.0])
    assert ev.mean["auc"] == 1.0
    assert ev.mean["auc(empty='one')"] == 1.0
    assert ev.mean["auc-"] == pytest.approx(1 / 3, rel=REL)  # empty='zero'
    with pytest.raises(ValueError, match=r"auc\(empty='raise'\): 2 of 3 queries have one "
                       r"class only .*first: query 1"):
        auc_score(y, s, qid=q, empty="raise")
    # scikit-learn's roc_auc_score refuses one class: its convention does too
    with pytest.raises(ValueError, match=r"empty='raise'"):
        auc_score(y, s, qid=q, convention="sklearn")
    # trec_eval's convention (empty queries 0 for its measures) leaves uAUC's rule
    assert evaluate(y, s, qid=q, metrics=["auc", "ndcg"],
                    convention="trec_eval").mean["auc"] == 1.0
    with pytest.warns(RuntimeWarning, match="auc is undefined"):
        assert np.isnan(auc_score([1, 1], [1, 0], qid=[1, 1]))


@pytest.mark.parametrize("spec", ["auc@10", "gauc@5"])
def test_a_cutoff_is_refused(spec):
    with pytest.raises(ValueError, match=r"has no parameter 'k'\. It takes no cut-off"):
        evaluate([1, 0], [1, 0], qid=[1, 1], metrics=[spec])
    with pytest.raises(TypeError, match="'k'"):
        auc_score([1, 0], [1, 0], qid=[1, 1], k=10)


def test_two_dimensional_layout():
    y = np.array([[1, 0, 0, 1], [0, 1, 1, 0]])
    s = np.array([[0.9, 0.8, 0.4, 0.5], [0.1, 0.2, 0.2, 0.3]])
    want = [roc_auc_score(y[i], s[i]) for i in range(2)]
    assert auc_score(y, s) == pytest.approx(np.mean(want), rel=REL)


def test_large_users_are_exact_and_fast_enough():
    """One user of 200,000 rows with ties: the rank-sum is exact (twice it is an
    integer), equal to roc_auc_score."""
    rng = np.random.default_rng(3)
    n = 200_000
    y = (rng.random(n) < 0.1).astype(float)
    s = np.round(rng.random(n) + 0.3 * y, 2)
    assert auc_score(y, s, qid=np.zeros(n, int)) == pytest.approx(roc_auc_score(y, s),
                                                                  rel=REL)


# -- every entry point --------------------------------------------------------------------


@pytest.fixture(scope="module")
def clicks():
    y, s, q = _clicks(11, n_users=40)
    order = np.argsort(q, kind="stable")  # contiguous users (chunks, files)
    return y[order], s[order], q[order]


@pytest.fixture(scope="module")
def reference(clicks):
    y, s, q = clicks
    return evaluate(y, s, qid=q, metrics=["auc", "gauc", "auc(ties='pessimistic')"])


def _same(evaluation, reference):
    for key, values in reference.per_query.items():
        np.testing.assert_allclose(evaluation.per_query[key], values, rtol=REL, err_msg=key)
        assert evaluation.mean[key] == pytest.approx(reference.mean[key], rel=REL), key
        assert evaluation.n_empty[key] == reference.n_empty[key], key


def test_evaluate_chunks(clicks, reference):
    y, s, q = clicks
    cuts = np.flatnonzero(np.diff(q)) + 1  # chunks of whole users
    parts = np.split(np.arange(q.shape[0]), cuts[::7])
    _same(evaluate_chunks([(y[p], s[p], q[p]) for p in parts], metrics=list(reference.mean)),
          reference)


def test_scorers_greater_is_better(clicks, reference):
    y, s, q = clicks

    class Scores:
        def predict(self, X):
            return np.asarray(X)[:, 0]

    for spec in ("auc", "gauc"):
        scorer = make_ranking_scorer(spec)
        assert scorer(Scores(), s[:, None], y, qid=q) == pytest.approx(reference.mean[spec],
                                                                       rel=REL)
        # a better model scores higher: the scorer is not negated
        assert scorer(Scores(), y[:, None] + 0.0, y, qid=q) == 1.0


def test_evaluate_run_and_cli(tmp_path, clicks, reference):
    y, s, q = clicks
    docs = [f"d{i}" for i in range(len(y))]
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"u{qi:03d} 0 {d} {int(v)}\n" for qi, d, v in zip(q, docs, y,
                                                                           strict=True)))
    run.write_text("".join(f"u{qi:03d} Q0 {d} {r} {float(sc)!r} tag\n"
                           for r, (qi, d, sc) in enumerate(zip(q, docs, s, strict=True))))
    metrics = list(reference.mean)
    _same(evaluate_run(str(qrels), str(run), metrics), reference)
    done = subprocess.run([sys.executable, "-m", "sklearn_rank", "evaluate", str(qrels),
                           str(run), *[a for m in metrics for a in ("-m", m)], "--format",
                           "json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)["runs"]["tag"]
    for key in metrics:
        assert doc["mean"][key] == pytest.approx(reference.mean[key], rel=REL), key
    refused = subprocess.run([sys.executable, "-m", "sklearn_rank", "evaluate", str(qrels),
                              str(run), "-m", "auc@10"], capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode == 2
    assert "takes no cut-off" in refused.stderr and "Traceback" not in refused.stderr


def test_evaluate_run_ranks_unretrieved_documents_last():
    """TREC mode: the judged documents a run did not retrieve rank after the
    retrieved ones, tied with each other; unjudged retrieved ones are non-relevant."""
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "x": 1, "y": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "u": 0.5}}  # x, y not retrieved; u unjudged
    labels = [1, 0, 1, 0, 1, 0]  # a, b, c, u, x, y
    scores = [3.0, 2.0, 1.0, 0.5, -1.0, -1.0]
    value = evaluate_run(qrels, run, ["auc"]).per_query["auc"][0]
    assert value == pytest.approx(roc_auc_score(labels, scores), rel=REL)
    # with tied scores in the run (averaged) and three unretrieved documents
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "x": 1, "y": 0, "z": 0}}
    run = {"q": {"a": 2.0, "b": 2.0, "c": 1.0, "u": 1.0, "w": 3.0}}
    labels, scores = [1, 0, 1, 0, 0, 1, 0, 0], [2, 2, 1, 1, 3, -1, -1, -1]
    value = evaluate_run(qrels, run, ["auc"]).per_query["auc"][0]
    assert value == pytest.approx(roc_auc_score(labels, scores), rel=REL)


def test_dask(clicks, reference):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from sklearn_rank.dask import evaluate as dask_evaluate

    y, s, q = clicks
    frame = pd.DataFrame({"label": y, "score": s, "qid": q})
    _same(dask_evaluate(dd.from_pandas(frame, npartitions=3), metrics=list(reference.mean)),
          reference)
    w = np.random.default_rng(0).integers(1, 4, q.max() + 1)[q].astype(float)
    frame["w"] = w
    got = dask_evaluate(dd.from_pandas(frame, npartitions=3), metrics=["gauc"], weight="w")
    assert got.mean["gauc"] == pytest.approx(gauc_score(y, s, qid=q, sample_weight=w),
                                             rel=REL)


def test_compare_weighs_gauc_by_impressions(clicks, reference):
    y, s, q = clicks
    other = evaluate(y, s + np.random.default_rng(1).normal(0, 2, s.shape), qid=q,
                     metrics=["auc", "gauc"])
    report = compare({"a": reference, "b": other}, metrics=["auc", "gauc"], n_resamples=200)
    for name, ev in (("a", reference), ("b", other)):
        assert report.means[name]["gauc"] == pytest.approx(ev.mean["gauc"], rel=REL)
        assert report.means[name]["auc"] == pytest.approx(ev.mean["auc"], rel=REL)
    text = str(report)
    assert "gauc: mean = the mean weighted by impressions" in text
    assert "\nauc: mean" not in text  # auc is a plain mean
