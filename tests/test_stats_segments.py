"""Segments and worst queries (issue 28 item 6): compare_segments against compare()
on hand-made subsets with the correction written out, worst_queries against a
plain loop."""

import warnings

import numpy as np
import pytest

from sklearn_rank.metrics._evaluation import Evaluation
from sklearn_rank.stats import compare, compare_segments, worst_queries


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _ev(qids, **values):
    qids = np.asarray(qids)
    per_query = {m: np.asarray(v, dtype=np.float64) for m, v in values.items()}
    return Evaluation(qids, per_query, {m: float(v.mean()) for m, v in per_query.items()},
                      dict.fromkeys(per_query, 0), None, list(per_query))


def _systems(n=90, seed=0):
    rng = np.random.default_rng(seed)
    qids = np.arange(n) * 3 + 1
    base = rng.beta(2, 3, (2, n))
    gain = np.where(np.arange(n) % 3 == 0, 0.15, 0.0)  # B gains on segment "x" only
    b = np.clip(base + gain + rng.normal(0, 0.05, (2, n)), 0, 1)
    c = np.clip(base + rng.normal(0, 0.1, (2, n)), 0, 1)
    evs = {"A": _ev(qids, ndcg=base[0], ap=base[1]), "B": _ev(qids, ndcg=b[0], ap=b[1]),
           "C": _ev(qids[::-1], ndcg=c[0][::-1], ap=c[1][::-1])}  # C's ids in another order
    segments = {int(q): "xyz"[i % 3] for i, q in enumerate(qids)}
    return evs, segments, qids


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "fdr_bh", None])
def test_segments_are_compare_on_each_subset_with_one_correction(correction):
    evs, segments, qids = _systems()
    report = compare_segments(evs, segments, baseline="A", n_resamples=500,
                              correction=correction)
    assert report.segments == ["x", "y", "z"] and report.sizes == {"x": 30, "y": 30, "z": 30}
    raw, rows = [], []
    for segment in "xyz":
        keep = [q for q in qids if segments[int(q)] == segment]
        subset = {}
        for name, ev in evs.items():
            mask = np.isin(ev.qids, keep)
            subset[name] = _ev(ev.qids[mask], ndcg=ev.per_query["ndcg"][mask],
                               ap=ev.per_query["ap"][mask])
        alone = compare(subset, baseline="A", n_resamples=500, correction=None)
        for c, ours in zip(alone.comparisons, report.reports[segment].comparisons, strict=True):
            assert (ours.metric, ours.system, ours.n_queries) == (c.metric, c.system, 30)
            assert (ours.pvalue, ours.low, ours.high, ours.difference) == \
                (c.pvalue, c.low, c.high, c.difference)
            raw.append(c.pvalue)
            rows.append(ours)
    m = len(raw)  # 3 segments x 2 systems x 2 metrics
    assert m == 12
    p = np.asarray(raw)
    if correction == "bonferroni":
        expected = np.minimum(p * m, 1)
    elif correction == "holm":  # step-down, written out
        order = np.argsort(p, kind="stable")
        expected = np.empty(m)
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, p[i] * (m - rank)))
            expected[i] = running
    elif correction == "fdr_bh":
        order = np.argsort(p)
        scaled = p[order] * m / np.arange(1, m + 1)
        expected = np.empty(m)
        expected[order] = np.minimum(1, np.minimum.accumulate(scaled[::-1])[::-1])
    else:
        expected = p
    got = np.asarray([c.pvalue_corrected for c in rows])
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert [c.significant for c in rows] == list(expected < 0.05)
    # B gains 0.15 on segment x only: significant there, not elsewhere
    by = {(s, c.system, c.metric): c for s in "xyz" for c in report.reports[s].comparisons}
    if correction is not None:
        assert by[("x", "B", "ndcg")].significant and not by[("y", "B", "ndcg")].significant
    # the overall report is compare()'s, corrected on its own
    overall = compare(evs, baseline="A", n_resamples=500, correction=correction)
    assert report.overall.comparisons == overall.comparisons


def test_a_series_and_a_mapping_give_the_same_report():
    pd = pytest.importorskip("pandas")
    evs, segments, _ = _systems(60, seed=1)
    series = pd.DataFrame({"qid": list(segments), "seg": list(segments.values())}) \
        .set_index("qid")["seg"]
    a = compare_segments(evs, segments, baseline="A", n_resamples=300)
    b = compare_segments(evs, series, baseline="A", n_resamples=300)
    assert str(a) == str(b)
    frame = b.to_frame()
    assert list(frame.index.names) == ["segment", "metric", "system"]
    assert frame.loc[("x", "ndcg", "B"), "pvalue_corrected"] == \
        a.reports["x"].comparisons[0].pvalue_corrected


def test_a_query_without_a_segment_is_named():
    evs, segments, qids = _systems(30)
    del segments[int(qids[4])]
    with pytest.raises(ValueError, match=r"segments: query 13 \(int\) of evaluations\['A'\] "
                                         r"has no segment\. Map every query"):
        compare_segments(evs, segments)
    text = {str(k): v for k, v in _systems(30)[1].items()}  # "1" is not 1
    with pytest.raises(ValueError, match=r"query 1 \(int\).*keys: '1' \(str\)"):
        compare_segments(evs, text)
    with pytest.raises(TypeError, match="segments must be a mapping"):
        compare_segments(evs, ["x"] * 30)


def test_an_error_inside_a_segment_names_it():
    """A missing query fails overall first; a segment that pairs no query (A lacks
    all of segment y, missing='drop') fails naming the segment."""
    evs, segments, qids = _systems(30)
    a = evs["A"]
    evs["A"] = _ev(a.qids[1:], ndcg=a.per_query["ndcg"][1:], ap=a.per_query["ap"][1:])
    with pytest.raises(ValueError, match=r"missing='drop'"):
        compare_segments(evs, segments, n_resamples=100)
    report = compare_segments(evs, segments, baseline="A", n_resamples=100, missing="zero")
    assert report.sizes["x"] == 10  # the query A lacks scores 0 there, in its segment
    keep = np.asarray([segments[int(q)] != "y" for q in a.qids])
    evs["A"] = _ev(a.qids[keep], ndcg=a.per_query["ndcg"][keep], ap=a.per_query["ap"][keep])
    with pytest.raises(ValueError, match=r"^segment 'y': "):
        compare_segments(evs, segments, n_resamples=100, missing="drop")


def _worst_by_loop(x, y, qids, k):
    pairs = [(float(b - a), i) for i, (a, b) in enumerate(zip(y, x, strict=True)) if b < a]
    pairs.sort()
    return [qids[i] for _, i in pairs[:k]], [d for d, _ in pairs[:k]]


@pytest.mark.parametrize("k", [1, 5, 40])
def test_worst_queries_against_a_loop(k):
    evs, _, qids = _systems(60, seed=3)
    w = worst_queries(evs["C"], evs["A"], metric="ap", k=k, names=("C", "A"))
    by_a = dict(zip(evs["A"].qids.tolist(), evs["A"].per_query["ap"], strict=True))
    by_c = dict(zip(evs["C"].qids.tolist(), evs["C"].per_query["ap"], strict=True))
    ids = sorted(by_a)
    expected_ids, expected_d = _worst_by_loop([by_c[q] for q in ids], [by_a[q] for q in ids],
                                              ids, k)
    assert w.qids.tolist() == expected_ids
    np.testing.assert_allclose(w.differences, expected_d, rtol=1e-12, atol=0)
    np.testing.assert_allclose(w.values - w.baseline_values, w.differences, rtol=1e-12)
    assert [by_c[q] for q in expected_ids] == w.values.tolist()
    assert w.n_losses == sum(by_c[q] < by_a[q] for q in ids) and w.n_queries == 60
    assert len(w.qids) == min(k, w.n_losses) and (w.differences < 0).all()
    assert str(w).startswith(f"ap: the {len(w.qids)} quer")


def test_worst_queries_when_nothing_is_lost_and_on_arrays():
    w = worst_queries([0.5, 0.6], [0.5, 0.1], k=3)
    assert w.n_losses == 0 and len(w.qids) == 0
    assert str(w) == "value: B loses to A on no query (of 2 paired)"
    w = worst_queries([0.2, 0.9, 0.5, 0.1], [0.6, 0.8, 0.5, 0.4], k=2)
    assert w.qids.tolist() == [0, 3]  # positions; -0.4 then -0.3
    with pytest.raises(ValueError, match="'k' parameter"):
        worst_queries([0.1], [0.2], k=0)


def test_compare_segments_lists_the_worst_queries_of_every_comparison():
    evs, segments, _ = _systems(45)
    report = compare_segments(evs, segments, baseline="A", n_resamples=200, worst=4)
    keys = [(w.system, w.metric) for w in report.worst]
    assert keys == [("B", "ndcg"), ("C", "ndcg"), ("B", "ap"), ("C", "ap")]
    for w in report.worst:
        alone = worst_queries(evs[w.system], evs["A"], metric=w.metric, k=4)
        assert w.qids.tolist() == alone.qids.tolist()
    text = str(report)
    assert "Per segment (3 segments): p corrected by Holm across the 12" in text
    assert "ndcg: the 4 queries where C loses most to A" in text
    assert report.to_markdown().count("| segment | queries |") == 1
    assert r"\begin{tabular}" in report.to_latex()


def test_every_pair_and_folds():
    """baseline=None compares every pair in each segment (a 'vs' column), and
    folds key the queries by (fold, query id)."""
    evs, segments, qids = _systems(45, seed=5)
    report = compare_segments(evs, segments, n_resamples=200, worst=2)
    pairs = [(c.system, c.baseline) for c in report.reports["x"].comparisons]
    assert pairs == [(c.system, c.baseline) for c in report.overall.comparisons]
    assert ("C", "B") in pairs and "| vs |" in report.to_markdown()
    assert [(w.system, w.baseline) for w in report.worst] == pairs
    assert len(report.to_frame()) == len(report.segments) * len(report.overall.to_frame())
    folds = {name: {"f1": ev, "f2": ev} for name, ev in evs.items()}
    by_fold = {(fold, q): s for q, s in segments.items() for fold in ("f1", "f2")}
    twice = compare_segments(folds, by_fold, baseline="A", n_resamples=200)
    assert twice.sizes == {"x": 30, "y": 30, "z": 30}
