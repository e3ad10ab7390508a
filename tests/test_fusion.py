"""sklearn_rank.fusion: fuse equals ranx's fuse (its outputs pinned in
tests/data/ranx_fusion.json by maint_tools/ranx_fusion_fixture.py, and ranx itself when it
is installed), a plain loop over each query's documents (ties, weights, runs that miss
documents and queries), and fuse_cv's choices equal a brute-force search per fold."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_rank.datasets import load_sample_trec
from sklearn_rank.fusion import fuse, fuse_cv, fuse_scores, weight_grid
from sklearn_rank.fusion._methods import METHODS, NORMS
from sklearn_rank.model_selection import QueryKFold
from sklearn_rank.trec import Run, evaluate_run, read_qrels

RANX = json.loads((Path(__file__).parent / "data" / "ranx_fusion.json").read_text())
TOL = dict(rel=1e-12, abs=1e-15)


def _as_dict(run: Run) -> dict:
    out: dict = {}
    for q, d, s in zip(run.qid.tolist(), run.docno.tolist(), run.score.tolist(), strict=True):
        out.setdefault(q, {})[d] = s
    return out


def _assert_close(got: dict, expected: dict) -> None:
    """Two {qid: {docno: score}} dicts: the same ids, scores within TOL."""
    assert got.keys() == expected.keys()
    for q in expected:
        assert got[q] == pytest.approx(expected[q], **TOL), q


def _options(case: dict) -> dict:
    params = dict(case["params"])
    return dict(method=case["method"], norm=case["norm"], **params)


@pytest.mark.parametrize("case", RANX["cases"],
                         ids=[f"{c['norm']}-{c['method']}-{c['params'].get('k', '')}"
                              for c in RANX["cases"]])
def test_fuse_equals_ranx_pinned(case):
    fused = _as_dict(fuse(RANX["runs"], **_options(case)))
    assert fused.keys() == case["fused"].keys()
    for q, expected in case["fused"].items():
        assert fused[q].keys() == expected.keys()
        assert fused[q] == pytest.approx(expected, **TOL)


def test_the_pinned_cases_cover_every_method_and_norm():
    """A method or normalisation added to the declarations without ranx's values fails."""
    assert {c["method"] for c in RANX["cases"]} == set(METHODS)
    assert {c["norm"] for c in RANX["cases"]} - {None} == set(NORMS)


def test_fuse_equals_ranx_live():
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(5)
    runs = {name: {f"q{q}": {f"d{d}": float(rng.uniform(0.1, 9))
                             for d in rng.choice(30, int(rng.integers(2, 20)), replace=False)}
                   for q in range(20)} for name in ("a", "b", "c")}
    for norm in [None, *NORMS]:
        for method in METHODS:
            params = {"weights": [0.2, 0.5, 0.3]} if method in ("wsum", "wmnz") else {}
            expected = ranx.fuse([ranx.Run(r, name=n) for n, r in runs.items()],
                                 norm=norm, method=method, params=params).to_dict()
            fused = _as_dict(fuse(runs, method, norm=norm, **params))
            for q in expected:
                assert fused[q] == pytest.approx(dict(expected[q]), **TOL)


# -- a plain loop over the documents of each query ------------------------------------

def _naive_norm(scores: dict, norm) -> dict:
    """One run's {docno: score} of one query, normalised."""
    values = list(scores.values())
    low, high, n = min(values), max(values), len(values)
    # trec_eval's order: decreasing score, then decreasing docno
    ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
    if norm is None:
        return dict(scores)
    if norm == "min-max":
        return {d: 0.0 if high == low else (s - low) / (high - low) for d, s in scores.items()}
    if norm == "max":
        return {d: s / high for d, s in scores.items()}
    if norm == "sum":
        total = sum(s - low for s in values)
        return {d: 0.0 if total == 0 else (s - low) / total for d, s in scores.items()}
    if norm == "zmuv":
        mean = sum(values) / n
        std = (sum((s - mean) ** 2 for s in values) / n) ** 0.5
        return {d: 0.0 if std == 0 else (s - mean) / std for d, s in scores.items()}
    return {d: 1 - i / n for i, d in enumerate(ranked)}  # rank


def _naive_fuse(runs: dict, method: str, norm, weights: list, k: float) -> dict:
    out: dict = {}
    names = list(runs)
    for q in sorted({q for run in runs.values() for q in run}):
        per_run = {}
        for name in names:
            scores = runs[name].get(q, {})
            if not scores:
                continue
            ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
            if method == "rrf":
                per_run[name] = {d: 1 + i for i, d in enumerate(ranked)}
            else:
                per_run[name] = _naive_norm(scores, norm)
        docs = {d for values in per_run.values() for d in values}
        out[q] = {}
        for d in docs:
            have = [(weights[names.index(n)], v[d]) for n, v in per_run.items() if d in v]
            s = [x for _, x in have]
            w = [x for x, _ in have]
            out[q][d] = {
                "rrf": sum(wi / (k + r) for wi, r in have),
                "sum": sum(s), "mnz": sum(s) * len(s), "max": max(s), "min": min(s),
                "med": float(np.median(s)), "anz": sum(s) / len(s),
                "wsum": sum(wi * x for wi, x in have), "wmnz": sum(s) * sum(w),
            }[method]
    return out


def _tied_runs(seed: int) -> dict:
    """Three runs with tied scores (a few values), documents and a query some miss."""
    rng = np.random.default_rng(seed)
    runs = {}
    for name in ("x", "y", "z"):
        runs[name] = {}
        for q in range(6):
            if name == "z" and q == 5:
                continue  # a query one run does not retrieve
            docs = rng.choice(12, int(rng.integers(1, 9)), replace=False)
            runs[name][f"q{q}"] = {f"d{d:02d}": float(rng.integers(1, 5)) for d in docs}
    return runs


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("norm", [None, *NORMS])
def test_fuse_equals_a_plain_loop_with_ties_and_missing_documents(method, norm):
    runs = _tied_runs(3)
    weights = [0.5, 1.5, 2.0] if METHODS[method].weighted else [1.0, 1.0, 1.0]
    fused = fuse(runs, method, norm=norm, k=7,
                 weights=weights if METHODS[method].weighted else None)
    expected = _naive_fuse(runs, method, norm, weights, 7)
    got = _as_dict(fused)
    assert got.keys() == expected.keys()
    for q in expected:
        assert got[q] == pytest.approx(expected[q], **TOL)
    # each query's rows by decreasing fused score, ties by decreasing docno
    for q in expected:
        rows = [(s, d) for qq, d, s in zip(fused.qid, fused.docno, fused.score, strict=True)
                if qq == q]
        assert rows == sorted(rows, reverse=True)


def test_the_plain_loop_tells_the_tie_order_apart():
    """The loop above can fail: with ties broken by increasing docno, RRF differs."""
    runs = _tied_runs(3)
    fused = _as_dict(fuse(runs, "rrf"))
    flipped = {n: {q: {d.replace("d", "e"): s for d, s in docs.items()} for q, docs in r.items()}
               for n, r in runs.items()}
    assert fused != _as_dict(fuse(flipped, "rrf"))


def test_the_input_forms_give_the_same_fused_run(tmp_path):
    runs = _tied_runs(4)
    tables = {n: Run.from_dict(r, name=n) for n, r in runs.items()}
    frames = {n: pd.DataFrame({"qid": t.qid, "docno": t.docno, "score": t.score})
              .sample(frac=1.0, random_state=0) for n, t in tables.items()}
    paths = {}
    for n, t in tables.items():
        paths[n] = tmp_path / f"{n}.run"
        paths[n].write_text("".join(f"{q} Q0 {d} 0 {s!r} {n}\n"
                                    for q, d, s in zip(t.qid.tolist(), t.docno.tolist(),
                                                       t.score.tolist(), strict=True)))
    expected = _as_dict(fuse(runs, "mnz", norm="zmuv"))
    for given in (tables, frames, paths, list(tables.values())):
        _assert_close(_as_dict(fuse(given, "mnz", norm="zmuv")), expected)


def test_fuse_scores_equals_fuse_on_the_rows_as_documents():
    rng = np.random.default_rng(9)
    qid = rng.integers(0, 7, 80)
    scores = [rng.normal(size=80), rng.normal(size=80), rng.uniform(1, 2, 80)]
    runs = {n: Run(qid.astype(str), [f"r{i:03d}" for i in range(80)], s, name=n)
            for n, s in zip("abc", scores, strict=True)}
    for method in METHODS:
        weights = [0.2, 0.3, 0.5] if METHODS[method].weighted else None
        fused = fuse_scores(scores, method, qid=qid, norm="sum", weights=weights)
        table = _as_dict(fuse(runs, method, norm="sum", weights=weights))
        expected = [table[str(q)][f"r{i:03d}"] for i, q in enumerate(qid)]
        assert fused == pytest.approx(expected, **TOL)


def test_weights_by_name_equal_weights_by_position():
    runs = _tied_runs(5)
    by_name = fuse(runs, "wsum", weights={"z": 3.0, "x": 1.0, "y": 2.0})
    by_position = fuse(runs, "wsum", weights=[1.0, 2.0, 3.0])
    _assert_close(_as_dict(by_name), _as_dict(by_position))


@pytest.mark.parametrize("call, error, match", [
    (lambda r: fuse([r["x"]]), ValueError, "two runs or more"),
    (lambda r: fuse(Run.from_dict(r["x"])), TypeError, "'runs' parameter of fuse"),
    (lambda r: fuse("bm25.run"), TypeError, "not a single str: fusion combines two runs"),
    (lambda r: fuse([r["x"], np.ones(3)]), TypeError, "fuse_scores"),
    (lambda r: fuse(r, "borda"), ValueError, r"method='borda' is not a fusion method"),
    (lambda r: fuse(r, "sum", norm="l2"), ValueError, r"norm='l2' is not a normalisation"),
    (lambda r: fuse(r, "sum", weights=[1, 2, 3]), ValueError, "'sum' takes no weights"),
    (lambda r: fuse(r, "wsum", weights=[1, 2]), ValueError, r"3 finite numbers, one per run"),
    (lambda r: fuse(r, "wsum", weights={"x": 1, "w": 2, "y": 1}), ValueError,
     "one weight to each run"),
    (lambda r: fuse({"a": {"q": {"d": -1.0}}, "b": {"q": {"d": 2.0}}}, "sum", norm="max"),
     ValueError, r"run 'a' has -1.0 for query 'q'; use norm='min-max'"),
    (lambda r: fuse_scores([[1, 2], [3, 4]], qid=[1, 1, 1]), ValueError, "of one length"),
    (lambda r: fuse_scores([[1, 2], [3, np.nan]], qid=[1, 1]), ValueError,
     r"runs\[1\] holds a score that is not a finite number \(row 1\)"),
    (lambda r: fuse_scores([[1, 2], [3, 4]], qid=None), ValueError, "qid"),
    (lambda r: fuse_scores([r["x"], r["y"]], qid=[1]), TypeError, "fuse\\(\\)"),
    (lambda r: fuse(r, k=-1), ValueError, "'k' parameter"),
])
def test_bad_arguments_are_errors_that_name_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call(_tied_runs(1))


# -- weights by cross-validation ------------------------------------------------------

def test_weight_grid_is_every_multiple_of_step_summing_to_one():
    grid = weight_grid(3, 0.1)
    assert grid.shape == (66, 3)
    assert grid.sum(axis=1) == pytest.approx(np.ones(66), rel=1e-12)
    brute = {(a, b, 10 - a - b) for a in range(11) for b in range(11 - a)}
    assert {tuple(np.rint(row * 10).astype(int)) for row in grid} == brute
    assert tuple(grid[0]) == (1.0, 0.0, 0.0)


@pytest.mark.parametrize("method", ["wsum", "rrf"])
def test_fuse_cv_folds_choose_the_brute_force_best_weights(method):
    sample = load_sample_trec()
    runs = {n: sample.runs[n] for n in ("bm25", "dense")}
    result = fuse_cv(runs, sample.qrels, "map", method=method, step=0.25, cv=3,
                     random_state=1)
    qrels = read_qrels(sample.qrels)
    grid = weight_grid(2, 0.25)
    per_query = [evaluate_run(qrels, fuse(runs, method, weights=w), ["map"], complete=True)
                 for w in grid]
    qids = per_query[0].qids
    table = np.array([e.per_query["map"] for e in per_query])
    splits = QueryKFold(3, shuffle=True, random_state=1).split(np.zeros((len(qids), 1)),
                                                               qid=qids)
    cv_values = evaluate_run(qrels, result.cv_run, ["map"], complete=True)
    assert list(cv_values.qids) == list(qids)
    for (train, test), chosen in zip(splits, result.fold_weights, strict=True):
        best = grid[int(np.argmax(table[:, train].mean(axis=1)))]
        assert [chosen["bm25"], chosen["dense"]] == pytest.approx(best, rel=1e-12)
        # the fold's test queries are fused with the fold's weights
        assert cv_values.per_query["map"][test] == pytest.approx(
            table[int(np.argmax(table[:, train].mean(axis=1)))][test], rel=1e-12)
    final = grid[int(np.argmax(table.mean(axis=1)))]
    assert list(result.weights.values()) == pytest.approx(final, rel=1e-12)
    _assert_close(_as_dict(result.run), _as_dict(fuse(runs, method, weights=final)))
    assert result.evaluations["fused"].mean["map"] == pytest.approx(
        cv_values.mean["map"], rel=1e-12)
    means = {n: result.evaluations[n].mean["map"] for n in runs}
    assert result.best_single == max(means, key=means.get)


def test_fuse_cv_compares_the_fused_run_with_the_best_single_run():
    sample = load_sample_trec()
    result = fuse_cv(sample.runs, sample.qrels, "ndcg@10", step=0.5, cv=3)
    report = result.compare(n_resamples=500)
    text = str(report)
    assert result.best_single in text and "fused" in text
    assert "baseline" in text


@pytest.mark.parametrize("kwargs, match", [
    (dict(step=0.3), r"step=0.3 must divide 1"),
    (dict(method="sum"), "'method' parameter"),
    (dict(cv=1), "'cv' parameter"),
])
def test_fuse_cv_bad_arguments(kwargs, match):
    sample = load_sample_trec()
    with pytest.raises(ValueError, match=match):
        fuse_cv(sample.runs, sample.qrels, **kwargs)


def test_ids_of_very_different_lengths_are_fused_like_short_ones():
    """A very long id makes a run's ids an object array; mixed with the short ids of
    another run (a str array), the pairs still match by their text."""
    long = "d" * 100_000  # padded to its length, the 200 rows would take 20 MB: kept aside
    short = {f"d{i:02d}": float(i) for i in range(200)}
    runs = {"a": {"q1": {long: 99.0, **short}, "q2": {"d01": 1.0}},
            "b": {"q1": {"d02": 5.0, long: 4.0, "d07": 0.5}, "q2": {"d03": 2.0, "d01": 1.5}}}
    assert Run.from_dict(runs["a"]).docno.dtype == object
    assert Run.from_dict(runs["b"]).docno.dtype != object
    for method in ("rrf", "mnz"):
        expected = _naive_fuse(runs, method, "min-max", [1.0, 1.0], 60)
        _assert_close(_as_dict(fuse(runs, method)), expected)


def test_ids_that_are_not_utf8_are_kept_exactly():
    a = Run([b"q\xff", b"q\xff", b"q1"], [b"d\xfe", b"d1", b"d1"], [2.0, 1.0, 1.0], name="a")
    b = Run([b"q\xff", b"q1"], [b"d1", b"d\xfe"], [3.0, 1.0], name="b")
    fused = fuse([a, b], "sum", norm=None)
    assert set(zip(fused.qid_bytes.items(), fused.docno_bytes.items(), fused.score.tolist(),
                   strict=True)) == {(b"q1", b"d1", 1.0), (b"q1", b"d\xfe", 1.0),
                                     (b"q\xff", b"d1", 4.0), (b"q\xff", b"d\xfe", 2.0)}
