"""Differential tests: sklearn_rank's NDCG / DCG against peer implementations.

Every test computes a number with a peer (scikit-learn, LightGBM, XGBoost,
pytrec_eval) and with sklearn_rank on the same data, and compares the two; the
only hard-coded expectations are DESIGN.md §7's measured values, pinned as a
regression (the classic discount, which no peer implements, is also computed by
hand, and the tie example is also compared with scikit-learn).

Peer facts these tests pin (measured with LightGBM 4.7 and XGBoost 3.2):

* LightGBM and XGBoost order documents with equal scores by input order
  within the query (a stable sort), i.e. ``ties="stable"``.
* Both score a query without relevant documents as 1; XGBoost's ``ndcg@k-``
  scores it 0.
* XGBoost's bare ``"ndcg"`` metric (no ``@k``) is ``ndcg@32``, whatever the
  objective or pair settings; XGBoost computes the metric in double precision
  from its float32 predictions.
* LightGBM weights the 1 of an empty query by 1, not by the query's weight
  (sklearn_rank weights it; DESIGN.md §3).
* pytrec_eval scores a query with no relevant document 0 and keeps it.
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics

from sklearn_rank.metrics import (
    dcg_score,
    evaluate,
    f1_at_k_score,
    gmap_score,
    hit_rate_score,
    mean_average_precision_score,
    mean_reciprocal_rank_score,
    ndcg_score,
    precision_at_k_score,
    r_precision_score,
    recall_at_k_score,
)

# --------------------------------------------------------------------------- helpers


def _qid_from_sizes(sizes):
    return np.repeat(np.arange(len(sizes)), sizes)


def _has_tie_within_a_query(score, qid):
    return any(
        np.unique(score[qid == q]).size < np.count_nonzero(qid == q) for q in np.unique(qid)
    )


def _interleave(qid, rng):
    """A row permutation mixing the queries but keeping each query's row order.

    With ``ties="stable"`` the order of a query's rows matters, so this is the
    strongest shuffle under which the value must not change.
    """
    slots = rng.permutation(qid.size)  # slots[i]: new position of old row i, pre-fix
    new_pos = np.empty(qid.size, dtype=np.intp)
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)  # ascending: the query's original order
        new_pos[rows] = np.sort(slots[rows])
    order = np.empty(qid.size, dtype=np.intp)
    order[new_pos] = np.arange(qid.size)
    return order  # take rows in this order


def _relabel(qid, rng):
    """Replace query ids by shuffled string ids (a bijection)."""
    uniq = np.unique(qid)
    names = np.array([f"query-{i:03d}" for i in rng.permutation(uniq.size)])
    return names[np.searchsorted(uniq, qid)]


# --------------------------------------------------------------------- scikit-learn

N_QUERIES, N_DOCS = 8, 6
KS = [None, 1, 3, 5, N_DOCS + 4]


def _sklearn_data(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, size=(N_QUERIES, N_DOCS))
    y[0] = 0  # a query without relevant documents
    y[1, :] = [3, 0, 0, 0, 0, 0]
    score = rng.integers(0, 3, size=(N_QUERIES, N_DOCS)).astype(float)  # many ties
    return y, score


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sklearn_data_has_consequential_ties(seed):
    y, score = _sklearn_data(seed)
    averaged = sklearn.metrics.ndcg_score(y, score)
    ignored = sklearn.metrics.ndcg_score(y, score, ignore_ties=True)
    assert abs(averaged - ignored) > 1e-6  # so tie-averaging is really compared


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", KS)
def test_sklearn_ndcg(seed, k):
    y, score = _sklearn_data(seed)
    expected = sklearn.metrics.ndcg_score(y, score, k=k)
    assert ndcg_score(y, score, k=k, convention="sklearn") == pytest.approx(
        expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("log_base", [2, 10])
def test_sklearn_dcg(seed, k, log_base):
    y, score = _sklearn_data(seed)
    expected = sklearn.metrics.dcg_score(y, score, k=k, log_base=log_base)
    got = dcg_score(y, score, k=k, log_base=log_base, convention="sklearn")
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", KS)
def test_sklearn_flat_layout_equals_2d(seed, k):
    y, score = _sklearn_data(seed)
    rng = np.random.default_rng(100 + seed)
    qid = _qid_from_sizes([N_DOCS] * N_QUERIES)
    perm = rng.permutation(qid.size)  # ties are averaged: any row order will do
    flat = dict(qid=_relabel(qid, rng)[perm], k=k, convention="sklearn")
    yf, sf = y.ravel()[perm], score.ravel()[perm]
    assert ndcg_score(yf, sf, **flat) == pytest.approx(
        ndcg_score(y, score, k=k, convention="sklearn"), rel=1e-12, abs=1e-12)
    assert ndcg_score(yf, sf, **flat) == pytest.approx(
        sklearn.metrics.ndcg_score(y, score, k=k), rel=1e-12, abs=1e-12)
    assert dcg_score(yf, sf, **flat) == pytest.approx(
        sklearn.metrics.dcg_score(y, score, k=k), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", KS)
def test_sklearn_sample_weight(seed, k):
    y, score = _sklearn_data(seed)
    w = np.random.default_rng(200 + seed).uniform(0.1, 3.0, size=N_QUERIES)
    qid = _qid_from_sizes([N_DOCS] * N_QUERIES)
    for ours, theirs in ((ndcg_score, sklearn.metrics.ndcg_score),
                         (dcg_score, sklearn.metrics.dcg_score)):
        expected = theirs(y, score, k=k, sample_weight=w)
        unweighted = theirs(y, score, k=k)
        assert abs(expected - unweighted) > 1e-6  # the weights matter
        got_2d = ours(y, score, k=k, sample_weight=w, convention="sklearn")
        got_1d = ours(y.ravel(), score.ravel(), qid=qid, k=k,
                      sample_weight=np.repeat(w, N_DOCS), convention="sklearn")
        assert got_2d == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert got_1d == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ["ndcg", "dcg"])
def test_sklearn_refuses_single_document_queries(name):
    """scikit-learn refuses a list of one document; so does convention='sklearn'
    for ndcg and dcg, naming the first such query (in row order) and the
    convention. Without the convention, or for other metrics, such a query
    scores as usual."""
    ours = {"ndcg": ndcg_score, "dcg": dcg_score}[name]
    with pytest.raises(ValueError, match="more than 1 document|formats are supported"):
        getattr(sklearn.metrics, f"{name}_score")([[1]], [[1]])
    with pytest.raises(ValueError, match=r"query 0 has fewer than 2 documents \(1 query of "
                                         r"1\), which convention='sklearn' refuses"):
        ours([[1]], [[1]], convention="sklearn")
    y, s, qid = [1, 0, 1, 2, 0, 3], [0.5, 0.2, 0.1, 0.3, 0.4, 0.9], ["c", "c", "b", "a", "a", "d"]
    with pytest.raises(ValueError, match=r"query 'b' has fewer than 2 documents \(2 queries "
                                         r"of 4\).*pass the options it sets \(gain='linear', "
                                         r"ties='average', empty='zero'\)"):
        ours(y, s, qid=qid, convention="sklearn")
    with pytest.raises(ValueError, match="query 'b' has fewer than 2"):
        evaluate(y, s, qid=qid, metrics=["map", f"{name}@3"], convention="sklearn")
    assert ours([[1]], [[1]]) == 1.0
    kept = ours(y, s, qid=qid, gain="linear", ties="average", empty="zero")
    per_query = evaluate(y, s, qid=qid, metrics=[name], gain="linear").per_query[name]
    assert kept == pytest.approx(per_query.mean(), rel=1e-12)
    assert per_query[1] == pytest.approx(1.0, rel=1e-12)  # 'b': label 1 at rank 1
    assert mean_average_precision_score(y, s, qid=qid, convention="sklearn") == pytest.approx(
        mean_average_precision_score(y, s, qid=qid), rel=1e-12)


# ------------------------------------------------------------------ GBDT test data

_TRUE_W = np.array([1.0, -0.7, 0.5, 0.3, 0.0])


def _features_labels(rng, n):
    X = rng.normal(size=(n, _TRUE_W.size))
    z = X @ _TRUE_W + 0.5 * rng.normal(size=n)
    return X, np.digitize(z, [-0.5, 0.3, 1.0, 1.6])  # labels 0..4


def _train_data(seed, n_queries=40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 16, size=n_queries)
    X, y = _features_labels(rng, sizes.sum())
    return X, y, sizes


def _eval_data(seed, *, big_query=0):
    """Contiguous eval queries: normal ones, empty ones, single documents, ties.

    Returns ``X, y, sizes`` plus ``kinds`` (one tag per query).
    """
    rng = np.random.default_rng(seed)
    blocks = []
    for size in rng.integers(3, 21, size=10):
        X, y = _features_labels(rng, size)
        if not y.any():
            y[0] = 1  # exactly the queries tagged "empty" have no relevant document
        blocks.append(("normal", X, y))
    for size in (1, 4, 9):  # no relevant document (the size-1 one is also single)
        X, _ = _features_labels(rng, size)
        blocks.append(("empty", X, np.zeros(size, dtype=int)))
    X, _ = _features_labels(rng, 1)
    blocks.append(("single", X, np.array([3])))
    # Duplicated feature rows with different labels: guaranteed tied predictions,
    # the less relevant copy first, so stable != optimistic != averaged.
    X, y = _features_labels(rng, 7)
    X[1] = X[0]
    X[4] = X[3]
    y[[0, 1, 3, 4]] = [0, 4, 1, 3]
    blocks.append(("ties", X, y))
    if big_query:
        blocks.append(("big", *_features_labels(rng, big_query)))
    blocks = [blocks[i] for i in rng.permutation(len(blocks))]
    kinds = [b[0] for b in blocks]
    sizes = np.array([len(b[2]) for b in blocks])
    return np.vstack([b[1] for b in blocks]), np.concatenate([b[2] for b in blocks]), sizes, kinds


# ------------------------------------------------------------------------ LightGBM

LGB_EVAL_AT = [1, 3, 5, 10, 50]  # 50 exceeds every eval query


@pytest.fixture(scope="module")
def lgb_run():
    import lightgbm
    X, y, sizes = _train_data(0)
    X_ev, y_ev, sizes_ev, kinds = _eval_data(1)
    assert sizes_ev.max() < max(LGB_EVAL_AT)
    qid_ev = _qid_from_sizes(sizes_ev)
    # Weighted eval sets: the rows' weights vary within a query (LightGBM's
    # query weight is their mean); one set without empty queries, one with.
    rng = np.random.default_rng(2)
    w_ev = rng.uniform(0.2, 3.0, size=y_ev.size)
    nonempty = np.isin(qid_ev, [q for q, kind in enumerate(kinds) if kind != "empty"])
    assert np.all(np.bincount(qid_ev, weights=y_ev)[np.unique(qid_ev[nonempty])] > 0)
    sizes_ne = np.bincount(qid_ev[nonempty])
    sizes_ne = sizes_ne[sizes_ne > 0]
    model = lightgbm.LGBMRanker(
        n_estimators=30, num_leaves=7, learning_rate=0.1, min_child_samples=3,
        deterministic=True, force_col_wise=True, n_jobs=1, random_state=0, verbose=-1)
    eval_X = (X_ev, X_ev[nonempty], X_ev)
    eval_y = (y_ev, y_ev[nonempty], y_ev)
    if "eval_X" in inspect.signature(model.fit).parameters:  # LightGBM >= 4.7
        evals = dict(eval_X=eval_X, eval_y=eval_y)
    else:
        evals = dict(eval_set=list(zip(eval_X, eval_y, strict=True)))
    model.fit(
        X, y, group=sizes, **evals,
        eval_group=[sizes_ev, sizes_ne, sizes_ev],
        eval_sample_weight=[None, w_ev[nonempty], w_ev],
        eval_at=LGB_EVAL_AT,
    )
    return dict(model=model, X=X_ev, y=y_ev, qid=qid_ev, kinds=kinds, w=w_ev,
                nonempty=nonempty, pred=model.predict(X_ev),
                result=model.evals_result_)


def test_lightgbm_eval_set_is_as_intended(lgb_run):
    r = lgb_run
    assert {"normal", "empty", "single", "ties"} <= set(r["kinds"])
    assert np.all(np.diff(r["qid"]) >= 0)  # contiguous, as LightGBM requires
    assert r["pred"].dtype == np.float64
    assert _has_tie_within_a_query(r["pred"], r["qid"])


@pytest.mark.parametrize("k", LGB_EVAL_AT)
def test_lightgbm_ndcg(lgb_run, k):
    r = lgb_run
    expected = r["result"]["valid_0"][f"ndcg@{k}"][-1]
    got = ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, convention="lightgbm")
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("k", LGB_EVAL_AT)
def test_lightgbm_ndcg_any_row_order(lgb_run, k):
    r = lgb_run
    rng = np.random.default_rng(k)
    order = _interleave(r["qid"], rng)
    qid = _relabel(r["qid"], rng)[order]
    assert np.any(np.diff(np.searchsorted(np.unique(qid), qid)) < 0)  # not contiguous
    for q in np.unique(r["qid"]):  # each query's rows keep their relative order
        assert np.all(np.diff(order[r["qid"][order] == q]) > 0)
    expected = r["result"]["valid_0"][f"ndcg@{k}"][-1]
    got = ndcg_score(r["y"][order], r["pred"][order], qid=qid, k=k, convention="lightgbm")
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("k", LGB_EVAL_AT)
def test_lightgbm_default_convention_differs(lgb_run, k):
    """Sanity: the comparison above is sensitive to the empty-query rule."""
    r = lgb_run
    expected = r["result"]["valid_0"][f"ndcg@{k}"][-1]
    assert abs(ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k) - expected) > 1e-3
    zero = ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, convention="lightgbm",
                      empty="zero")
    assert abs(zero - expected) > 1e-3


def test_lightgbm_ties_are_stable(lgb_run):
    """Sanity: averaging or optimistic tie handling would not match LightGBM."""
    r = lgb_run
    for ties in ("average", "optimistic"):
        differs = [
            abs(ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, convention="lightgbm",
                           ties=ties) - r["result"]["valid_0"][f"ndcg@{k}"][-1]) > 1e-9
            for k in LGB_EVAL_AT
        ]
        assert any(differs), ties


@pytest.mark.parametrize("k", LGB_EVAL_AT)
def test_lightgbm_sample_weight(lgb_run, k):
    r = lgb_run
    keep = r["nonempty"]
    expected = r["result"]["valid_1"][f"ndcg@{k}"][-1]
    got = ndcg_score(r["y"][keep], r["pred"][keep], qid=r["qid"][keep], k=k,
                     sample_weight=r["w"][keep], convention="lightgbm")
    unweighted = ndcg_score(r["y"][keep], r["pred"][keep], qid=r["qid"][keep], k=k,
                            convention="lightgbm")
    # LightGBM stores weights (so the query weights) in float32.
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-6)
    assert abs(unweighted - expected) > 1e-3  # the weights matter


@pytest.mark.parametrize("k", LGB_EVAL_AT)
def test_lightgbm_weighted_empty_query_quirk(lgb_run, k):
    """LightGBM adds an unweighted 1 per empty query; sklearn_rank weights it.

    LightGBM's number is recomputed from sklearn_rank's per-query values and
    query weights, and sklearn_rank's own weighted mean differs from it.
    """
    r = lgb_run
    spec = f"ndcg@{k}"
    ev = evaluate(r["y"], r["pred"], qid=r["qid"], metrics=[spec], convention="lightgbm")
    values = ev.per_query[spec]
    weight = np.array([r["w"][r["qid"] == q].mean() for q in ev.qids])
    empty = np.array([np.all(r["y"][r["qid"] == q] == 0) for q in ev.qids])
    assert empty.sum() == ev.n_empty[spec] == 3
    quirk = (np.sum(weight[~empty] * values[~empty]) + empty.sum()) / weight.sum()
    expected = r["result"]["valid_2"][spec][-1]
    assert quirk == pytest.approx(expected, rel=1e-6, abs=1e-6)
    ours = ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, sample_weight=r["w"],
                      convention="lightgbm")
    assert ours == pytest.approx(np.sum(weight * values) / weight.sum(), rel=1e-12)
    assert abs(ours - expected) > 1e-6


def _lgb_metric_on_scores(y, score, sizes, eval_at):
    """LightGBM's NDCG of fixed scores: init_score plus trees that add nothing."""
    import lightgbm
    X = np.zeros((y.size, 1))  # a constant feature: no split, one-leaf trees
    train = lightgbm.Dataset(X, label=y, group=sizes, init_score=score)
    valid = lightgbm.Dataset(X, label=y, group=sizes, init_score=score, reference=train)
    result = {}
    lightgbm.train(
        {"objective": "lambdarank", "learning_rate": 1e-300, "eval_at": eval_at,
         "metric": "ndcg", "verbose": -1, "deterministic": True, "num_threads": 1},
        train, num_boost_round=1, valid_sets=[valid], valid_names=["v"],
        callbacks=[lightgbm.record_evaluation(result)])
    return {k: result["v"][f"ndcg@{k}"][-1] for k in eval_at}


def _tied_scores(seed, n_queries=30):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, size=n_queries)
    y = rng.integers(0, 5, size=sizes.sum()) * (rng.random(sizes.sum()) < 0.5)
    score = rng.integers(0, 3, size=sizes.sum()).astype(float)  # float32-exact ties
    return y, score, sizes


@pytest.mark.parametrize("seed", [0, 1])
def test_lightgbm_tie_order_on_given_scores(seed):
    y, score, sizes = _tied_scores(seed)
    qid = _qid_from_sizes(sizes)
    expected = _lgb_metric_on_scores(y, score, sizes, [1, 3, 5, 20])
    for k, value in expected.items():
        got = ndcg_score(y, score, qid=qid, k=k, convention="lightgbm")
        assert got == pytest.approx(value, rel=1e-9, abs=1e-9), k
    averaged = ndcg_score(y, score, qid=qid, k=3, convention="lightgbm", ties="average")
    assert abs(averaged - expected[3]) > 1e-6


# ------------------------------------------------------------------------- XGBoost

XGB_KS = [1, 3, 5, 10, 50]  # 50 exceeds every eval query
XGB_METRICS = ["ndcg", "ndcg-"] + [f"ndcg@{k}{m}" for k in XGB_KS for m in ("", "-")]
BIG = 40  # one eval query longer than 32 documents


@pytest.fixture(scope="module")
def xgb_run():
    import xgboost
    X, y, sizes = _train_data(3)
    X_ev, y_ev, sizes_ev, kinds = _eval_data(4, big_query=BIG)
    assert sizes_ev.max() == BIG < max(XGB_KS)
    qid_ev = _qid_from_sizes(sizes_ev)
    model = xgboost.XGBRanker(n_estimators=20, tree_method="hist", eval_metric=XGB_METRICS,
                              n_jobs=1, random_state=0)
    model.fit(X, y, qid=_qid_from_sizes(sizes), eval_set=[(X_ev, y_ev)], eval_qid=[qid_ev],
              verbose=False)
    return dict(X=X_ev, y=y_ev, qid=qid_ev, kinds=kinds, pred=model.predict(X_ev),
                result=model.evals_result()["validation_0"])


def test_xgboost_eval_set_is_as_intended(xgb_run):
    r = xgb_run
    assert {"normal", "empty", "single", "ties", "big"} <= set(r["kinds"])
    assert r["pred"].dtype == np.float32
    assert _has_tie_within_a_query(r["pred"], r["qid"])
    assert set(XGB_METRICS) <= set(r["result"])


@pytest.mark.parametrize("k", XGB_KS)
def test_xgboost_ndcg(xgb_run, k):
    r = xgb_run
    one = ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, convention="xgboost")
    zero = ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, convention="xgboost",
                      empty="zero")
    assert one == pytest.approx(r["result"][f"ndcg@{k}"][-1], rel=1e-6, abs=1e-6)
    assert zero == pytest.approx(r["result"][f"ndcg@{k}-"][-1], rel=1e-6, abs=1e-6)
    assert abs(one - zero) > 1e-3  # the eval set has empty queries


@pytest.mark.parametrize("k", XGB_KS)
def test_xgboost_evaluate(xgb_run, k):
    r = xgb_run
    rng = np.random.default_rng(k)
    order = _interleave(r["qid"], rng)
    specs = [f"ndcg@{k}", f"ndcg@{k}-"]
    ev = evaluate(r["y"][order], r["pred"][order], qid=_relabel(r["qid"], rng)[order],
                  metrics=specs, convention="xgboost")
    for spec in specs:
        assert ev.mean[spec] == pytest.approx(r["result"][spec][-1], rel=1e-6, abs=1e-6)
        assert ev.n_empty[spec] == 3


def test_xgboost_bare_ndcg_is_ndcg_at_32(xgb_run):
    r = xgb_run
    for suffix, empty in (("", "one"), ("-", "zero")):
        at32 = ndcg_score(r["y"], r["pred"], qid=r["qid"], k=32, convention="xgboost",
                          empty=empty)
        full = ndcg_score(r["y"], r["pred"], qid=r["qid"], convention="xgboost",
                          empty=empty)
        assert abs(at32 - full) > 1e-6  # the 40-document query tells them apart
        assert at32 == pytest.approx(r["result"]["ndcg" + suffix][-1], rel=1e-6, abs=1e-6)
        # ... and k=None is XGBoost's ndcg@k for any k at least the longest query
        assert full == pytest.approx(r["result"][f"ndcg@50{suffix}"][-1], rel=1e-6,
                                     abs=1e-6)


def test_xgboost_ties_are_stable(xgb_run):
    r = xgb_run
    for ties in ("average", "optimistic"):
        differs = [
            abs(ndcg_score(r["y"], r["pred"], qid=r["qid"], k=k, convention="xgboost",
                           ties=ties) - r["result"][f"ndcg@{k}"][-1]) > 1e-6
            for k in XGB_KS
        ]
        assert any(differs), ties


def _xgb_metric_on_scores(y, score, qid, metrics):
    """XGBoost's metrics of fixed scores: base_margin plus trees with eta=0."""
    import xgboost
    X = np.zeros((y.size, 1))
    dtrain = xgboost.DMatrix(X, label=y, qid=qid, base_margin=score)
    dvalid = xgboost.DMatrix(X, label=y, qid=qid, base_margin=score)
    result = {}
    xgboost.train(
        {"objective": "rank:ndcg", "eta": 0.0, "base_score": 0.0, "eval_metric": metrics,
         "nthread": 1},
        dtrain, num_boost_round=1, evals=[(dvalid, "v")], evals_result=result,
        verbose_eval=False)
    return {m: result["v"][m][-1] for m in metrics}


@pytest.mark.parametrize("seed", [0, 1])
def test_xgboost_tie_order_on_given_scores(seed):
    y, score, sizes = _tied_scores(seed)
    qid = _qid_from_sizes(sizes)
    metrics = ["ndcg@1", "ndcg@3", "ndcg@3-", "ndcg@20", "ndcg"]
    expected = _xgb_metric_on_scores(y, score, qid, metrics)
    ev = evaluate(y, score, qid=qid, metrics=metrics, convention="xgboost")
    for m in metrics:
        assert ev.mean[m] == pytest.approx(expected[m], rel=1e-9, abs=1e-9), m
    averaged = ndcg_score(y, score, qid=qid, k=3, convention="xgboost", ties="average")
    assert abs(averaged - expected["ndcg@3"]) > 1e-6


@pytest.mark.parametrize("relevant_rank", [20, 32, 33, 50])
def test_xgboost_bare_ndcg_truncates_at_32(relevant_rank):
    """One relevant document at a given rank of a 60-document list."""
    y = np.zeros(60, dtype=int)
    y[relevant_rank - 1] = 1
    score = -np.arange(60.0)
    qid = np.zeros(60, dtype=int)
    expected = _xgb_metric_on_scores(y, score, qid, ["ndcg", "ndcg@60"])
    assert expected["ndcg"] == pytest.approx(
        ndcg_score(y, score, qid=qid, k=32, convention="xgboost"), rel=1e-9, abs=1e-12)
    assert expected["ndcg@60"] == pytest.approx(
        ndcg_score(y, score, qid=qid, convention="xgboost"), rel=1e-9, abs=1e-12)
    assert (expected["ndcg"] == 0) == (relevant_rank > 32)


# --------------------------------------------------------------------- pytrec_eval

TREC_KS = [3, 5, 10]


def _trec_data(seed, n_queries=15):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 16, size=n_queries)
    sizes[:2] = [12, 4]
    y = rng.integers(0, 4, size=sizes.sum())
    qid_int = _qid_from_sizes(sizes)
    y[qid_int == 0] = 0  # queries without relevant documents
    y[qid_int == 1] = 0
    # Distinct within a query and exact in float32: integers / 1024.
    score = np.concatenate([rng.permutation(n) + 1 for n in sizes]) / 1024.0
    doc = np.concatenate([np.arange(n) for n in sizes])
    qid = np.array([f"q{q:02d}" for q in qid_int])
    docno = np.array([f"d{d:02d}" for d in doc])
    return y, score, qid, docno


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pytrec_eval_ndcg_cut(seed):
    import pytrec_eval
    y, score, qid, docno = _trec_data(seed)
    assert np.all(score.astype(np.float32) == score)
    assert not _has_tie_within_a_query(score, qid)
    qrels, run = {}, {}
    for q, d, label, s in zip(qid, docno, y, score, strict=True):
        qrels.setdefault(q, {})[d] = int(label)  # every document judged, 0 included
        run.setdefault(q, {})[d] = float(s)
    measures = {"ndcg_cut." + ",".join(map(str, TREC_KS)), "ndcg"}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    rng = np.random.default_rng(seed)
    perm = rng.permutation(y.size)  # tie-free: any row order will do
    specs = [f"ndcg@{k}" for k in TREC_KS] + ["ndcg"]
    ev = evaluate(y[perm], score[perm], qid=qid[perm], metrics=specs, gain="linear")
    assert list(ev.qids) == sorted(trec)
    assert ev.n_empty["ndcg"] == 2
    for k, spec in zip([*TREC_KS, None], specs, strict=True):
        measure = "ndcg" if k is None else f"ndcg_cut_{k}"
        expected = np.array([trec[q][measure] for q in ev.qids])
        np.testing.assert_allclose(ev.per_query[spec], expected, rtol=1e-9, atol=1e-12)
        assert ndcg_score(y, score, qid=qid, k=k, gain="linear") == pytest.approx(
            expected.mean(), rel=1e-9, abs=1e-12)


# -------------------------------------------------------- DESIGN §7 measured values

LABELS = [3, 2, 3, 0, 1, 2]
IN_ORDER = [6, 5, 4, 3, 2, 1]


def _classic_dcg(labels):
    return sum(g / max(1.0, math.log2(r)) for r, g in enumerate(labels, start=1))


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (dict(gain="linear"), 0.960808),
        (dict(convention="sklearn"), 0.960808),
        (dict(gain="exponential"), 0.948811),
        (dict(convention="lightgbm"), 0.948811),
        (dict(convention="xgboost"), 0.948811),
        (dict(gain="linear", discount="classic"), 0.931509),
    ],
)
def test_design_measured_values(options, expected):
    got = ndcg_score([LABELS], [IN_ORDER], k=6, **options)
    assert got == pytest.approx(expected, abs=5e-7)
    flat = ndcg_score(LABELS, IN_ORDER, qid=[0] * 6, k=6, **options)
    assert flat == pytest.approx(got, rel=1e-12)


def test_design_classic_discount_by_hand():
    by_hand = _classic_dcg(LABELS) / _classic_dcg(sorted(LABELS, reverse=True))
    assert by_hand == pytest.approx(0.931509, abs=5e-7)
    got = ndcg_score([LABELS], [IN_ORDER], gain="linear", discount="classic")
    assert got == pytest.approx(by_hand, rel=1e-12)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, 0.710310),
        (dict(convention="sklearn"), 0.710310),
        (dict(convention="lightgbm"), 1.0),
        (dict(convention="xgboost"), 1.0),
    ],
)
def test_design_tie_example(options, expected):
    y_true, y_score = [[1, 0, 0, 0]], [[1, 1, 1, 0]]
    assert ndcg_score(y_true, y_score, **options) == pytest.approx(expected, abs=5e-7)
    if options.get("convention", "sklearn") == "sklearn":
        assert ndcg_score(y_true, y_score, **options) == pytest.approx(
            sklearn.metrics.ndcg_score(y_true, y_score), rel=1e-12)


# ==================================================================================
# The binary metric family (precision, recall, hit rate, R-precision, MAP, GMAP, MRR)
# ==================================================================================
#
# Peer facts pinned below (measured with pytrec_eval-terrier 0.5.11, LightGBM 4.7
# and XGBoost 3.2):
#
# * trec_eval's ``P_k`` divides by k (a query shorter than k counts its missing
#   ranks as non-relevant), ``map_cut_k`` divides by R, and ``gm_map``'s
#   per-query value is log(max(AP, 1e-5)); the aggregate is exp of their mean.
#   A query without a relevant document (label >= relevance_level) is kept and
#   scores 0 in every measure (``gm_map``: log(1e-5)). ``relevance_level`` is
#   ``label >= level``.
# * LightGBM's ``map@k`` counts label > 0.5 as relevant, divides by min(R, k),
#   scores a query without relevant documents 1 and orders ties by input order.
#   Unlike its NDCG, it weights that 1 by the query weight.
# * XGBoost's ``map`` and ``pre`` reject labels other than 0/1. ``map@k``
#   divides by min(R, k) and scores an empty query 1 (``map@k-``: 0); ``pre@k``
#   divides by min(k, n) and scores an empty query 0 (``pre@k-`` too); bare
#   ``map`` / ``pre`` mean ``map@32`` / ``pre@32``; ties keep input order. With
#   query weights, ``map@k`` weights the 1 of an empty query (its NDCG does not).

# --------------------------------------------------------------------- pytrec_eval

FAMILY_KS = [1, 3, 5, 10, 20]  # 20 exceeds every query of _trec_data


def _trec_family_specs():
    """(trec_eval measure, sklearn_rank spec) pairs compared query by query."""
    pairs = []
    for k in FAMILY_KS:
        pairs += [(f"P_{k}", f"p@{k}"), (f"recall_{k}", f"recall@{k}"),
                  (f"map_cut_{k}", f"map@{k}"), (f"success_{k}", f"hit_rate@{k}")]
    pairs += [("map", "map"), ("recip_rank", "mrr"), ("Rprec", "r_precision"),
              ("set_P", "p"), ("set_recall", "recall"), ("set_F", "f1")]
    return pairs


def _trec_family_run(seed, relevance_level):
    import pytrec_eval
    y, score, qid, docno = _trec_data(seed)
    assert np.all(score.astype(np.float32) == score)
    assert not _has_tie_within_a_query(score, qid)
    qrels, run = {}, {}
    for q, d, label, s in zip(qid, docno, y, score, strict=True):
        qrels.setdefault(q, {})[d] = int(label)  # every document judged, 0 included
        run.setdefault(q, {})[d] = float(s)
    cut = ",".join(map(str, FAMILY_KS))
    measures = {f"P.{cut}", f"recall.{cut}", f"map_cut.{cut}", f"success.{cut}", "map",
                "recip_rank", "Rprec", "gm_map", "set_P", "set_recall", "set_F"}
    if relevance_level == 1:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)  # the default level
    else:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures,
                                                   relevance_level=relevance_level)
    return y, score, qid, evaluator.evaluate(run)


@pytest.mark.parametrize("relevance_level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pytrec_eval_binary_family(seed, relevance_level):
    y, score, qid, trec = _trec_family_run(seed, relevance_level)
    options = {} if relevance_level == 1 else {"threshold": relevance_level}
    sizes = np.array([np.count_nonzero(qid == q) for q in sorted(trec)])
    n_rel = np.array([np.count_nonzero((qid == q) & (y >= relevance_level))
                      for q in sorted(trec)])
    assert np.any((sizes < max(FAMILY_KS)) & (n_rel > 0))  # short lists with hits
    assert np.any(n_rel > 3)  # R > k for small k: R and min(R, k) differ

    rng = np.random.default_rng(seed)
    perm = rng.permutation(y.size)  # tie-free: any row order will do
    pairs = _trec_family_specs()
    specs = [spec for _, spec in pairs] + ["gmap"]
    ev = evaluate(y[perm], score[perm], qid=qid[perm], metrics=specs, **options)
    assert list(ev.qids) == sorted(trec)
    for measure, spec in pairs:
        expected = np.array([trec[q][measure] for q in ev.qids])
        np.testing.assert_allclose(ev.per_query[spec], expected, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{measure} vs {spec}")
        assert ev.mean[spec] == pytest.approx(expected.mean(), rel=1e-9, abs=1e-12), spec
        assert ev.n_empty[spec] == np.count_nonzero(n_rel == 0), spec

    # gm_map: trec_eval's per-query value is log(max(AP, 1e-5)); ours is the AP.
    log_ap = np.array([trec[q]["gm_map"] for q in ev.qids])
    np.testing.assert_allclose(np.log(np.maximum(ev.per_query["gmap"], 1e-5)), log_ap,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ev.per_query["gmap"], ev.per_query["map"], rtol=0, atol=0)
    gm_map = math.exp(log_ap.mean())
    import pytrec_eval
    assert pytrec_eval.compute_aggregated_measure("gm_map", list(log_ap)) == pytest.approx(
        gm_map, rel=1e-12)
    assert ev.mean["gmap"] == pytest.approx(gm_map, rel=1e-9)
    assert gmap_score(y, score, qid=qid, **options) == pytest.approx(gm_map, rel=1e-9)


@pytest.mark.parametrize("relevance_level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pytrec_eval_binary_family_functions(seed, relevance_level):
    """The public functions give trec_eval's means (every query counts once)."""
    y, score, qid, trec = _trec_family_run(seed, relevance_level)
    t = relevance_level

    def mean(measure):
        return np.mean([trec[q][measure] for q in trec])

    def close(got, measure):
        assert got == pytest.approx(mean(measure), rel=1e-9, abs=1e-12), measure

    data = dict(qid=qid, threshold=t)
    for k in FAMILY_KS:
        close(precision_at_k_score(y, score, k=k, **data), f"P_{k}")
        close(recall_at_k_score(y, score, k=k, **data), f"recall_{k}")
        close(mean_average_precision_score(y, score, k=k, **data), f"map_cut_{k}")
        close(hit_rate_score(y, score, k=k, **data), f"success_{k}")
    close(mean_average_precision_score(y, score, **data), "map")
    close(mean_reciprocal_rank_score(y, score, **data), "recip_rank")
    close(r_precision_score(y, score, **data), "Rprec")
    close(f1_at_k_score(y, score, **data), "set_F")


@pytest.mark.parametrize("relevance_level", [1, 2])
def test_pytrec_eval_scores_empty_queries_zero(relevance_level):
    """trec_eval keeps a query without relevant documents and scores it 0."""
    y, score, qid, trec = _trec_family_run(0, relevance_level)
    empty = [q for q in sorted(trec) if not np.any(y[qid == q] >= relevance_level)]
    assert len(empty) >= 2
    ev = evaluate(y, score, qid=qid, metrics=[s for _, s in _trec_family_specs()],
                  threshold=relevance_level)
    rows = np.isin(ev.qids, empty)
    for measure, spec in _trec_family_specs():
        assert all(trec[q][measure] == 0.0 for q in empty), measure
        assert np.all(ev.per_query[spec][rows] == 0.0), spec
    assert all(trec[q]["gm_map"] == pytest.approx(math.log(1e-5), rel=1e-12)
               for q in empty)
    # Under the other empty-query rules the means move away from trec_eval's.
    for spec in ("map", "p@5", "mrr"):
        skipped = evaluate(y, score, qid=qid, metrics=[spec], threshold=relevance_level,
                           empty="skip").mean[spec]
        assert abs(skipped - ev.mean[spec]) > 1e-6, spec


# ------------------------------------------------------------------------ LightGBM

LGB_MAP_AT = [1, 2, 3, 5, 10, 50]  # 50 exceeds every eval query


def _lgb_eval_kwargs(model, eval_X, eval_y):
    if "eval_X" in inspect.signature(model.fit).parameters:  # LightGBM >= 4.7
        return dict(eval_X=eval_X, eval_y=eval_y)
    return dict(eval_set=list(zip(eval_X, eval_y, strict=True)))


@pytest.fixture(scope="module")
def lgb_map_run():
    import lightgbm
    X, y, sizes = _train_data(5)
    X_ev, y_ev, sizes_ev, kinds = _eval_data(6)
    assert sizes_ev.max() < max(LGB_MAP_AT)
    qid_ev = _qid_from_sizes(sizes_ev)
    rng = np.random.default_rng(7)
    w_ev = rng.uniform(0.2, 3.0, size=y_ev.size)
    nonempty = np.isin(qid_ev, [q for q, kind in enumerate(kinds) if kind != "empty"])
    sizes_ne = np.bincount(qid_ev[nonempty])
    sizes_ne = sizes_ne[sizes_ne > 0]
    model = lightgbm.LGBMRanker(
        n_estimators=20, num_leaves=7, learning_rate=0.1, min_child_samples=3,
        deterministic=True, force_col_wise=True, n_jobs=1, random_state=0, verbose=-1,
        metric="map")
    eval_X = (X_ev, X_ev[nonempty], X_ev)
    eval_y = (y_ev, y_ev[nonempty], y_ev)
    model.fit(
        X, y, group=sizes, **_lgb_eval_kwargs(model, eval_X, eval_y),
        eval_group=[sizes_ev, sizes_ne, sizes_ev],
        eval_sample_weight=[None, w_ev[nonempty], w_ev],
        eval_at=LGB_MAP_AT,
    )
    return dict(X=X_ev, y=y_ev, qid=qid_ev, kinds=kinds, w=w_ev, nonempty=nonempty,
                pred=model.predict(X_ev), result=model.evals_result_)


def test_lightgbm_map_eval_set_is_as_intended(lgb_map_run):
    r = lgb_map_run
    assert {"normal", "empty", "single", "ties"} <= set(r["kinds"])
    assert 1 in np.bincount(r["qid"])  # single-document queries
    assert r["y"].max() > 1  # graded labels
    assert _has_tie_within_a_query(r["pred"], r["qid"])
    assert set(r["result"]["valid_0"]) == {f"map@{k}" for k in LGB_MAP_AT}


@pytest.mark.parametrize("k", LGB_MAP_AT)
def test_lightgbm_map(lgb_map_run, k):
    r = lgb_map_run
    expected = r["result"]["valid_0"][f"map@{k}"][-1]
    got = mean_average_precision_score(r["y"], r["pred"], qid=r["qid"], k=k,
                                       convention="lightgbm")
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
    # the same through a spec, with interleaved rows and string query ids
    rng = np.random.default_rng(k)
    order = _interleave(r["qid"], rng)
    ev = evaluate(r["y"][order], r["pred"][order], qid=_relabel(r["qid"], rng)[order],
                  metrics=[f"map@{k}", f"map(convention='lightgbm')@{k}"],
                  convention="lightgbm")
    assert ev.mean[f"map@{k}"] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert ev.mean[f"map(convention='lightgbm')@{k}"] == pytest.approx(
        expected, rel=1e-9, abs=1e-9)
    assert ev.n_empty[f"map@{k}"] == 3


def test_lightgbm_map_options_matter(lgb_map_run):
    """Sanity: each part of the convention is needed to match LightGBM."""
    r = lgb_map_run
    data = dict(y_true=r["y"], y_score=r["pred"], qid=r["qid"], convention="lightgbm")
    expected = {k: r["result"]["valid_0"][f"map@{k}"][-1] for k in LGB_MAP_AT}
    for override in (dict(empty="zero"), dict(capped=False), dict(ties="average"),
                     dict(ties="optimistic"), dict(threshold=2)):
        differs = [abs(mean_average_precision_score(**data, k=k, **override) - v) > 1e-9
                   for k, v in expected.items()]
        assert any(differs), override


@pytest.mark.parametrize("k", LGB_MAP_AT)
def test_lightgbm_map_sample_weight(lgb_map_run, k):
    r = lgb_map_run
    keep = r["nonempty"]
    expected = r["result"]["valid_1"][f"map@{k}"][-1]
    data = dict(y_true=r["y"][keep], y_score=r["pred"][keep], qid=r["qid"][keep], k=k,
                convention="lightgbm")
    got = mean_average_precision_score(**data, sample_weight=r["w"][keep])
    # LightGBM stores weights (so the query weights) in float32.
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_lightgbm_map_weights_matter(lgb_map_run):
    r = lgb_map_run
    keep = r["nonempty"]
    unweighted = [mean_average_precision_score(r["y"][keep], r["pred"][keep],
                                               qid=r["qid"][keep], k=k, convention="lightgbm")
                  for k in LGB_MAP_AT]
    weighted = [r["result"]["valid_1"][f"map@{k}"][-1] for k in LGB_MAP_AT]
    assert max(abs(a - b) for a, b in zip(unweighted, weighted, strict=True)) > 1e-4


@pytest.mark.parametrize("k", LGB_MAP_AT)
def test_lightgbm_map_weights_the_empty_query_one(lgb_map_run, k):
    """Unlike its NDCG, LightGBM's MAP weights the 1 of an empty query, as we do."""
    r = lgb_map_run
    expected = r["result"]["valid_2"][f"map@{k}"][-1]
    got = mean_average_precision_score(r["y"], r["pred"], qid=r["qid"], k=k,
                                       sample_weight=r["w"], convention="lightgbm")
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-6)


def _lgb_map_on_scores(y, score, sizes, eval_at):
    """LightGBM's MAP of fixed scores: init_score plus trees that add nothing."""
    import lightgbm
    X = np.zeros((y.size, 1))
    train = lightgbm.Dataset(X, label=y, group=sizes, init_score=score)
    valid = lightgbm.Dataset(X, label=y, group=sizes, init_score=score, reference=train)
    result = {}
    lightgbm.train(
        {"objective": "lambdarank", "learning_rate": 1e-300, "eval_at": eval_at,
         "metric": "map", "verbose": -1, "deterministic": True, "num_threads": 1},
        train, num_boost_round=1, valid_sets=[valid], valid_names=["v"],
        callbacks=[lightgbm.record_evaluation(result)])
    return {k: result["v"][f"map@{k}"][-1] for k in eval_at}


@pytest.mark.parametrize("seed", [0, 1])
def test_lightgbm_map_tie_order_on_given_scores(seed):
    y, score, sizes = _tied_scores(seed)
    qid = _qid_from_sizes(sizes)
    expected = _lgb_map_on_scores(y, score, sizes, [1, 2, 3, 5, 20])
    for k, value in expected.items():
        got = mean_average_precision_score(y, score, qid=qid, k=k, convention="lightgbm")
        assert got == pytest.approx(value, rel=1e-9, abs=1e-9), k
    averaged = [mean_average_precision_score(y, score, qid=qid, k=k, convention="lightgbm",
                                             ties="average") for k in expected]
    assert any(abs(a - v) > 1e-6 for a, v in zip(averaged, expected.values(), strict=True))


def test_lightgbm_map_by_hand():
    """Pinned small cases: min(R, k) denominator, empty query 1, input-order ties."""
    cases = [  # labels (ranked by decreasing score), k -> LightGBM's map@k
        ([1, 1, 0, 1], {1: 1.0, 2: 1.0, 3: 2 / 3, 4: 11 / 12, 10: 11 / 12}),
        ([2, 0, 3, 1], {1: 1.0, 2: 0.5, 3: 5 / 9, 4: 29 / 36}),
        ([0, 0, 0], {1: 1.0, 2: 1.0}),
    ]
    for labels, by_k in cases:
        y = np.array(labels, dtype=float)
        score = -np.arange(y.size, dtype=float)
        peer = _lgb_map_on_scores(y, score, [y.size], list(by_k))
        for k, value in by_k.items():
            assert peer[k] == pytest.approx(value, rel=1e-12), (labels, k)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # no relevant document at all
                got = mean_average_precision_score([labels], [score], k=k,
                                                   convention="lightgbm")
            assert got == pytest.approx(value, rel=1e-12), (labels, k)
    # a tie: the document given first is ranked first
    for labels, expected in (([1, 0], 1.0), ([0, 1], 0.0)):
        y = np.array(labels, dtype=float)
        peer = _lgb_map_on_scores(y, np.ones(2), [2], [1])[1]
        assert peer == expected
        assert mean_average_precision_score([labels], [[1, 1]], k=1,
                                            convention="lightgbm") == expected


# ------------------------------------------------------------------------- XGBoost

XGB_MAP_METRICS = ["map", "map-", "pre", "pre-"] + [
    f"{m}@{k}{s}" for m in ("map", "pre") for k in XGB_KS for s in ("", "-")]


@pytest.fixture(scope="module")
def xgb_map_run():
    import xgboost
    X, y, sizes = _train_data(8)
    X_ev, y_ev, sizes_ev, kinds = _eval_data(9, big_query=BIG)
    y_ev = (y_ev >= 2).astype(int)  # XGBoost's map and pre need 0/1 labels
    qid_ev = _qid_from_sizes(sizes_ev)
    # R = 34 > 32 relevant documents in the 40-document query: bare "map" (@32)
    # then divides by 32, not R, and some relevant document lies below rank 32.
    big = np.flatnonzero(qid_ev == kinds.index("big"))
    y_ev[big] = 0
    y_ev[np.random.default_rng(10).choice(big, size=34, replace=False)] = 1
    model = xgboost.XGBRanker(n_estimators=10, tree_method="hist",
                              eval_metric=XGB_MAP_METRICS, n_jobs=1, random_state=0)
    # graded training labels are fine: only the metrics insist on 0/1
    model.fit(X, y, qid=_qid_from_sizes(sizes), eval_set=[(X_ev, y_ev)], eval_qid=[qid_ev],
              verbose=False)
    return dict(X=X_ev, y=y_ev, qid=qid_ev, kinds=kinds, pred=model.predict(X_ev),
                result=model.evals_result()["validation_0"])


def test_xgboost_map_eval_set_is_as_intended(xgb_map_run):
    r = xgb_map_run
    assert {"normal", "empty", "single", "ties", "big"} <= set(r["kinds"])
    assert set(np.unique(r["y"])) == {0, 1}
    assert _has_tie_within_a_query(r["pred"], r["qid"])
    assert set(XGB_MAP_METRICS) <= set(r["result"])
    big = r["qid"] == r["kinds"].index("big")
    assert r["y"][big].sum() == 34


@pytest.mark.parametrize("k", XGB_KS)
def test_xgboost_map(xgb_map_run, k):
    r = xgb_map_run
    data = dict(y_true=r["y"], y_score=r["pred"], qid=r["qid"], k=k, convention="xgboost")
    one = mean_average_precision_score(**data)
    zero = mean_average_precision_score(**data, empty="zero")
    assert one == pytest.approx(r["result"][f"map@{k}"][-1], rel=1e-9, abs=1e-9)
    assert zero == pytest.approx(r["result"][f"map@{k}-"][-1], rel=1e-9, abs=1e-9)
    assert abs(one - zero) > 1e-3  # the eval set has empty queries


@pytest.mark.parametrize("k", XGB_KS)
def test_xgboost_precision(xgb_map_run, k):
    r = xgb_map_run
    data = dict(y_true=r["y"], y_score=r["pred"], qid=r["qid"], k=k, convention="xgboost")
    got = precision_at_k_score(**data)
    # an empty query scores 0 with or without the '-' suffix
    assert got == pytest.approx(r["result"][f"pre@{k}"][-1], rel=1e-9, abs=1e-9)
    assert got == pytest.approx(r["result"][f"pre@{k}-"][-1], rel=1e-9, abs=1e-9)
    if k > 1:  # the denominator is min(k, n): some eval queries are shorter than k
        assert abs(precision_at_k_score(**data, capped=False) - got) > 1e-3


@pytest.mark.parametrize("k", XGB_KS)
def test_xgboost_map_pre_evaluate(xgb_map_run, k):
    r = xgb_map_run
    rng = np.random.default_rng(k)
    order = _interleave(r["qid"], rng)
    specs = [f"map@{k}", f"map@{k}-", f"p@{k}", f"p@{k}-"]
    ev = evaluate(r["y"][order], r["pred"][order], qid=_relabel(r["qid"], rng)[order],
                  metrics=specs, convention="xgboost")
    for spec, peer in zip(specs, [f"map@{k}", f"map@{k}-", f"pre@{k}", f"pre@{k}-"],
                          strict=True):
        assert ev.mean[spec] == pytest.approx(r["result"][peer][-1], rel=1e-9, abs=1e-9)


def test_xgboost_bare_map_pre_are_at_32(xgb_map_run):
    r = xgb_map_run
    data = dict(y_true=r["y"], y_score=r["pred"], qid=r["qid"], convention="xgboost")
    for peer, ours in (("map", dict(k=32)), ("map-", dict(k=32, empty="zero"))):
        at32 = mean_average_precision_score(**data, **ours)
        full = mean_average_precision_score(**data, **{**ours, "k": None})
        assert abs(at32 - full) > 1e-6  # the 40-document query tells them apart
        assert at32 == pytest.approx(r["result"][peer][-1], rel=1e-9, abs=1e-9)
    for peer in ("pre", "pre-"):
        at32 = precision_at_k_score(**data, k=32)
        assert abs(at32 - precision_at_k_score(**data)) > 1e-6
        assert at32 == pytest.approx(r["result"][peer][-1], rel=1e-9, abs=1e-9)


def test_xgboost_map_ties_are_stable(xgb_map_run):
    r = xgb_map_run
    data = dict(y_true=r["y"], y_score=r["pred"], qid=r["qid"], convention="xgboost")
    for ties in ("average", "optimistic"):
        differs = [
            abs(mean_average_precision_score(**data, k=k, ties=ties)
                - r["result"][f"map@{k}"][-1]) > 1e-9
            or abs(precision_at_k_score(**data, k=k, ties=ties)
                   - r["result"][f"pre@{k}"][-1]) > 1e-9
            for k in XGB_KS
        ]
        assert any(differs), ties


@pytest.mark.parametrize("seed", [0, 1])
def test_xgboost_map_pre_tie_order_on_given_scores(seed):
    y, score, sizes = _tied_scores(seed)
    y = (y > 0).astype(int)
    qid = _qid_from_sizes(sizes)
    peer = ["map@1", "map@3", "map@3-", "map@20", "map", "pre@1", "pre@3", "pre@3-",
            "pre@20", "pre"]
    ours = ["map@1", "map@3", "map@3-", "map@20", "map@32", "p@1", "p@3", "p@3-", "p@20",
            "p@32"]
    expected = _xgb_metric_on_scores(y, score, qid, peer)
    ev = evaluate(y, score, qid=qid, metrics=ours, convention="xgboost")
    for o, p in zip(ours, peer, strict=True):
        assert ev.mean[o] == pytest.approx(expected[p], rel=1e-9, abs=1e-9), p
    for o, p in (("map@3", "map@3"), ("p@3", "pre@3")):
        averaged = evaluate(y, score, qid=qid, metrics=[o], convention="xgboost",
                            ties="average").mean[o]
        assert abs(averaged - expected[p]) > 1e-6, p


def test_xgboost_map_pre_by_hand():
    """Pinned small cases of XGBoost's map@k / pre@k on one query."""
    cases = [  # labels ranked by decreasing score -> {metric: value}
        ([1, 1, 0, 1], {"map@2": 1.0, "map@3": 2 / 3, "map@4": 11 / 12, "pre@3": 2 / 3}),
        ([0, 1], {"map@1": 0.0, "map@3": 0.5, "pre@1": 0.0, "pre@3": 0.5, "pre@5": 0.5}),
        ([0, 0, 0], {"map@2": 1.0, "map@2-": 0.0, "pre@2": 0.0, "pre@2-": 0.0}),
    ]
    for labels, values in cases:
        y = np.array(labels)
        score = -np.arange(y.size, dtype=float)
        qid = np.zeros(y.size, dtype=int)
        peer = _xgb_metric_on_scores(y, score, qid, list(values))
        specs = [m.replace("pre", "p") for m in values]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # no relevant document at all
            ev = evaluate(y, score, qid=qid, metrics=specs, convention="xgboost")
        for (metric, value), spec in zip(values.items(), specs, strict=True):
            assert peer[metric] == pytest.approx(value, rel=1e-12), (labels, metric)
            assert ev.mean[spec] == pytest.approx(value, rel=1e-12), (labels, spec)


@pytest.mark.parametrize(("first", "relevant"), [(25, 10), (11, 40)])
def test_xgboost_bare_map_pre_truncate_at_32(first, relevant):
    """60 documents; ranks first .. first + relevant - 1 are relevant."""
    y = np.zeros(60, dtype=int)
    y[first - 1:first - 1 + relevant] = 1
    score = -np.arange(60.0)
    qid = np.zeros(60, dtype=int)
    peer = _xgb_metric_on_scores(y, score, qid, ["map", "pre", "map@60", "pre@60"])
    ev = evaluate(y, score, qid=qid, metrics=["map@32", "p@32", "map", "p"],
                  convention="xgboost")
    assert peer["map"] == pytest.approx(ev.mean["map@32"], rel=1e-12)
    assert peer["pre"] == pytest.approx(ev.mean["p@32"], rel=1e-12)
    assert peer["map@60"] == pytest.approx(ev.mean["map"], rel=1e-12)
    assert peer["pre@60"] == pytest.approx(ev.mean["p"], rel=1e-12)
    assert peer["map"] != peer["map@60"]


@pytest.mark.parametrize("metric", ["map@3", "pre@3", "map", "pre"])
def test_xgboost_map_pre_reject_graded_labels(metric):
    import xgboost
    y = np.array([2, 0, 1])
    with pytest.raises(xgboost.core.XGBoostError, match="binary labels"):
        _xgb_metric_on_scores(y, np.array([3.0, 2.0, 1.0]), np.zeros(3, dtype=int), [metric])


def _xgb_weighted_metric_on_scores(y, score, qid, group_weight, metrics):
    """As ``_xgb_metric_on_scores``, with one weight per query (XGBoost's ranking rule)."""
    import xgboost
    d = xgboost.DMatrix(np.zeros((y.size, 1)), label=y, qid=qid, base_margin=score,
                        weight=group_weight)
    result = {}
    xgboost.train(
        {"objective": "rank:ndcg", "eta": 0.0, "base_score": 0.0, "eval_metric": metrics,
         "nthread": 1},
        d, num_boost_round=1, evals=[(d, "v")], evals_result=result, verbose_eval=False)
    return {m: result["v"][m][-1] for m in metrics}


@pytest.mark.parametrize("seed", [0, 1])
def test_xgboost_weighted_map_pre(seed):
    """XGBoost's map weights the 1 of an empty query by its weight, as we do
    (its NDCG does not: see ``test_lightgbm_weighted_empty_query_quirk``)."""
    y, score, sizes = _tied_scores(seed)
    y = (y > 0).astype(int)
    qid = _qid_from_sizes(sizes)
    assert np.any(np.bincount(qid, weights=y) == 0)  # empty queries
    w = np.random.default_rng(seed).integers(1, 17, size=sizes.size) / 8.0  # float32-exact
    peer = ["map@1", "map@3", "map@3-", "map@20", "pre@1", "pre@3", "pre@20"]
    ours = ["map@1", "map@3", "map@3-", "map@20", "p@1", "p@3", "p@20"]
    expected = _xgb_weighted_metric_on_scores(y, score, qid, w, peer)
    ev = evaluate(y, score, qid=qid, metrics=ours, convention="xgboost",
                  sample_weight=np.repeat(w, sizes))
    for o, p in zip(ours, peer, strict=True):
        assert ev.mean[o] == pytest.approx(expected[p], rel=1e-9, abs=1e-9), p
    unweighted = evaluate(y, score, qid=qid, metrics=["map@3"], convention="xgboost")
    assert abs(unweighted.mean["map@3"] - expected["map@3"]) > 1e-4
