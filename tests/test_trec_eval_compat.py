"""trec_eval 10.0 compatibility: ``sklearn_rank.trec.trec_eval`` and ``sklearn-rank trec_eval``.

Values are checked per query against pytrec_eval (trec_eval 9.0.8 inside) on
generated collections with graded, negative and missing judgments, unjudged
documents and ties; where 10.0 differs from 9.0.8 (iprec_at_recall and
11pt_avg round the cut-off with lround; unj, rbp, rbp_resid are new) the
10.0 value comes from brute-force references written here. Scores are
multiples of 1/64, exact in float32, so 9.0.8's float32 ranking is 10.0's
double ranking. The output's order and format are checked against rules
spelled out in the tests. Byte-for-byte comparisons with the trec_eval binary
are in ``benchmarks/trec_eval_parity.py`` (the binary is not shipped).
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys

import numpy as np
import pytest

from sklearn_rank.metrics._vocab.trec_eval_table import NICKNAMES
from sklearn_rank.trec import trec_eval

pytrec_eval = pytest.importorskip("pytrec_eval")


def _collection(seed: int, n_queries: int = 12):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        qid = f"q{i}"
        docs = [f"d{j}" for j in rng.choice(200, size=60, replace=False)]
        judged = {d: int(rng.choice([0, 0, 0, 1, 1, 2, 3, -1])) for d in docs[:25]}
        if i == 0:
            judged = {d: 0 for d in docs[:5]}  # no relevant document
        if i == 1:
            judged = {docs[0]: -1, docs[1]: -2}  # negative levels only
        retrieved = list(rng.choice(docs, size=int(rng.integers(1, 45)), replace=False))
        qrels[qid] = judged
        run[qid] = {d: float(rng.integers(0, 12)) / 64 for d in retrieved}  # many ties
    run["extra"] = {"d1": 1.0}  # not judged: ignored
    return qrels, run


def _lround(x: float) -> int:
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def _ranking(qrels, run, qid, judged_only=False):
    """Relevance codes in trec_eval's order: score desc, docno desc; -1 not
    judged, -2 negative level."""
    docs = sorted(run.get(qid, {}).items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    codes = []
    for d, _ in docs:
        level = qrels[qid].get(d)
        code = -1 if level is None else (-2 if level < 0 else level)
        if not (judged_only and code < 0):
            codes.append(code)
    return codes


def _iprec(codes, r, p, level=1):
    """Interpolated precision at recall p, 10.0's lround cut-off."""
    n = len(codes)
    rel_ranks = [i + 1 for i, c in enumerate(codes) if c >= level]
    cut = _lround(p * r)
    prec = [sum(c >= level for c in codes[:j]) / j for j in range(1, n + 1)]
    if cut > len(rel_ranks):
        return 0.0
    if cut <= 0:
        return max(prec[rel_ranks[0] - 1:]) if rel_ranks else (0.0 if n else math.nan)
    return max(prec[rel_ranks[cut - 1] - 1:])


PYTREC = sorted(set(NICKNAMES["all_trec"]) - {"runid", "relstring", "num_q", "unj", "rbp",
                                                "rbp_resid", "iprec_at_recall", "11pt_avg"})


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level,judged_only", [(1, False), (2, False), (1, True)])
def test_all_trec_per_query_equals_pytrec_eval(seed, level, judged_only):
    qrels, run = _collection(seed)
    ours = trec_eval(qrels, run, "all_trec", relevance_level=level, judged_only=judged_only)
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, set(PYTREC), relevance_level=level,
        judged_docs_only_flag=judged_only).evaluate(run)
    assert ours.qids == sorted(qrels)
    checked = 0
    for i, qid in enumerate(ours.qids):
        for name, value in theirs[qid].items():
            if name in ("runid", "relstring", "num_q") or name.startswith(("iprec", "11pt")):
                continue
            assert ours.per_query[name][i] == pytest.approx(value, abs=1e-12), (qid, name)
            checked += 1
    assert checked >= 12 * 80  # 80 values per query


@pytest.mark.parametrize("judged_only", [False, True])
def test_iprec_and_11pt_avg_use_lround_as_trec_eval_10(judged_only):
    qrels, run = _collection(3)
    points = [i / 10 for i in range(11)]
    ours = trec_eval(qrels, run, ["iprec_at_recall", "11pt_avg"], judged_only=judged_only)
    for i, qid in enumerate(ours.qids):
        codes = _ranking(qrels, run, qid, judged_only)
        r = sum(1 for v in qrels[qid].values() if v >= 1)
        expected = [_iprec(codes, r, p) for p in points]
        for p, e in zip(points, expected, strict=True):
            assert ours.per_query[f"iprec_at_recall_{p:.2f}"][i] == pytest.approx(
                e, abs=1e-12, nan_ok=True)
        total = 0.0
        for e in expected[::-1]:
            total += e
        assert ours.per_query["11pt_avg"][i] == pytest.approx(total / 11, nan_ok=True)


def test_iprec_r3_differs_from_9_0_8():
    """R = 3 at recall 0.5: lround(1.5) = 2 relevant documents (10.0), where
    9.0.8's (long)(1.5 + 0.9) = 2 too, but at 0.4: lround(1.2) = 1 against 2."""
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.6, "c": 0.5}}
    ours = trec_eval(qrels, run, "iprec_at_recall.0.4")
    assert ours.per_query["iprec_at_recall_0.40"][0] == 1.0  # first relevant at rank 1
    old = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)
    assert old["q"]["iprec_at_recall_0.40"] == pytest.approx(2 / 3)  # 9.0.8's cut-off 2


@pytest.mark.parametrize("seed", [0, 4])
def test_unj_rbp_rbp_resid_brute_force(seed):
    qrels, run = _collection(seed)
    ours = trec_eval(qrels, run, ["unj", "rbp", "rbp_resid.p=0.8"])
    ours.per_query.update(trec_eval(qrels, run, ["rbp.p=0.5,1=3"]).per_query)
    for i, qid in enumerate(ours.qids):
        codes = _ranking(qrels, run, qid)
        n = len(codes)
        for k in (5, 10, 20):
            assert ours.per_query[f"unj_{k}"][i] == sum(c < 0 for c in codes[:k]) / k
        top = max([0] + [v for v in qrels[qid].values()])
        levels = set(range(top + 1))
        gain = {lv: lv / top if top > 1 else lv for lv in levels}  # normalised when > 1
        expected = (1 - 0.9) * sum(gain.get(c, 0.0) * 0.9**r for r, c in enumerate(codes))
        assert ours.per_query["rbp"][i] == pytest.approx(expected, abs=1e-12)
        gains = {lv: float(lv) for lv in levels} | {1: 3.0}
        lo, hi = min([0.0, *gains.values()]), max([0.0, *gains.values()])
        if lo < 0 or hi > 1:
            gains = {lv: (g - lo) / (hi - lo) for lv, g in gains.items()}
        expected = 0.5 * sum(gains.get(c, 0.0) * 0.5**r for r, c in enumerate(codes))
        assert ours.per_query["rbp_p=0.5,1=3"][i] == pytest.approx(expected, abs=1e-12)
        unjudged = [r for r, c in enumerate(codes) if c < 0]
        expected = 0.8**n + 0.2 * sum(0.8**r for r in unjudged) if unjudged else 0.0
        assert ours.per_query["rbp_resid_p=0.8"][i] == pytest.approx(expected, abs=1e-12)


def test_ranking_on_doubles_ties_by_docno_descending():
    """0.1 and 0.10000000149011612 are equal as float32 (9.0.8 ties them and
    puts b first), different as doubles (10.0 ranks a first)."""
    qrels = {"q": {"a": 1, "b": 0}}
    ours = trec_eval(qrels, {"q": {"a": 0.10000000149011612, "b": 0.1}}, "recip_rank")
    assert ours.per_query["recip_rank"][0] == 1.0
    tied = trec_eval(qrels, {"q": {"a": 0.5, "b": 0.5}}, "recip_rank")
    assert tied.per_query["recip_rank"][0] == 0.5  # b > a: b first


def test_missing_query_is_an_error_without_complete():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    with pytest.raises(ValueError, match="'q2'"):
        trec_eval(qrels, run, "map")
    result = trec_eval(qrels, run, ["map", "num_ret", "num_rel", "relstring", "unj"],
                       complete=True)
    assert result.qids == ["q1", "q2"]
    assert list(result.per_query["map"]) == [1.0, 0.0]
    assert list(result.per_query["num_ret"]) == [1.0, 0.0]  # forced 0 (the dummy is 1)
    assert list(result.per_query["relstring"]) == ["1", ""]
    assert result.summary["num_rel"] == 2
    assert result.summary["map"] == 0.5
    nan = trec_eval(qrels, run, "iprec_at_recall.0", complete=True, judged_only=True)
    assert math.isnan(nan.per_query["iprec_at_recall_0.00"][1])  # 0/0 on an empty ranking
    assert nan.lines()[-1].endswith("\t  -nan")


def test_measure_grammar():
    qrels, run = _collection(2, 3)
    names = list(trec_eval(qrels, run, ["P.5", "P.10"]).summary)
    assert names == ["P_5"]  # the first parameters given win
    assert list(trec_eval(qrels, run, ["P", "P.7"]).summary) == ["P_7"]
    assert list(trec_eval(qrels, run, ["ndcg_cut.10,20,23.4"]).summary) == [
        "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]  # atol: 23.4 is 23
    assert list(trec_eval(qrels, run, ["P.5", "map"]).summary) == ["map", "P_5"]
    assert list(trec_eval(qrels, run, "success").summary) == ["success_1", "success_5",
                                                                "success_10"]
    assert list(trec_eval(qrels, run, "Rprec_mult.5.0,0.2").summary) == [
        "Rprec_mult_0.20", "Rprec_mult_5.00"]
    assert list(trec_eval(qrels, run, "utility.2,-1,0,0").summary) == ["utility_2,-1,0,0"]
    official = trec_eval(qrels, run)
    assert len(official.summary) == 30 - 1 + 1  # runid .. P_1000: 30 lines
    assert len(trec_eval(qrels, run, "all_trec").lines()) == 99
    for bad, message in (("P.0", "negative cutoff"), ("P.5,5.5", "duplicate"),
                         ("ndcg.1", "malformed pair"), ("nope", "illegal measure 'nope'"),
                         ("P.", "improper measure")):
        with pytest.raises(ValueError, match=message):
            trec_eval(qrels, run, bad)


QRELS = "b 0 d1 1\nb 0 d2 0\na 0 d1 2\na 0 d3 -1\n10 0 x 1\n9 0 x 1\n"
RUN = ("a Q0 d1 1 0.5 r1\na Q0 d2 2 0.5 r1 extra text\na Q0 d3 3 0.1 r1\n"
       "b Q0 d2 1 2 r1\n10 Q0 x 1 1 r1\n9 Q0 y 1 1 r2\n# comment\n\n")


def _cli(tmp_path, *args, command="trec_eval"):
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    args = [files.pop(0) if a == "Q" else files.pop(0) if a == "R" else a for a in args]
    return subprocess.run([sys.executable, "-m", "sklearn_rank", command, *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_order_and_format(tmp_path):
    proc = _cli(tmp_path, "-q", "-m", "P.2", "-m", "num_ret", "-m", "runid", "-m",
                "relstring", "-m", "gm_map", "Q", "R")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # queries in byte order (10 < 9 < a < b), measures in trec_eval's table order
    # (runid, num_ret, gm_map, P, relstring), runid and gm_map in the summary only,
    # relstring per query only; names padded to 22, values %6.4f, counts %ld
    assert lines == [
        f"{'num_ret':<22}\t10\t1", f"{'P_2':<22}\t10\t0.5000", f"{'relstring':<22}\t10\t'1'",
        f"{'num_ret':<22}\t9\t1", f"{'P_2':<22}\t9\t0.0000", f"{'relstring':<22}\t9\t'-'",
        f"{'num_ret':<22}\t a\t3".replace("\t a", "\ta"), f"{'P_2':<22}\ta\t0.5000",
        f"{'relstring':<22}\ta\t'-2.'",  # tie 0.5: d2 (unjudged) > d1 first; d3 is -1
        f"{'num_ret':<22}\tb\t1", f"{'P_2':<22}\tb\t0.0000", f"{'relstring':<22}\tb\t'0'",
        f"{'runid':<22}\tall\tr2",  # the last data line's tag
        f"{'num_ret':<22}\tall\t6",
        f"{'gm_map':<22}\tall\t{math.exp((2 * math.log(1e-5) + math.log(0.5)) / 4):6.4f}",
        f"{'P_2':<22}\tall\t0.2500",
    ]


def test_cli_flags_and_grammar(tmp_path):
    out = _cli(tmp_path, "-qn", "-mP.1", "Q", "R", "-M1").stdout.splitlines()
    assert len(out) == 4 and out[2] == f"{'P_1':<22}\ta\t0.0000"  # d2 only, no summary
    judged = _cli(tmp_path, "-J", "-m", "num_ret", "Q", "R").stdout
    assert judged == f"{'num_ret':<22}\tall\t3\n"  # d2, y (not judged), d3 (-1) dropped
    level = _cli(tmp_path, "-l2", "-m", "num_rel", "Q", "R").stdout
    assert level == f"{'num_rel':<22}\tall\t1\n"
    same = _cli(tmp_path, "Q", "R", "-q", "-m", "official", "--format", "trec",
                command="evaluate")
    assert same.stdout == _cli(tmp_path, "-q", "Q", "R").stdout and same.stdout
    official = _cli(tmp_path, "Q", "R", "--format", "trec", command="evaluate").stdout
    assert official.count("\n") == 30 and official.startswith("runid")  # no -m: official


def test_cli_errors_are_one_line(tmp_path):
    (tmp_path / "q2").write_text(QRELS + "zz 0 d1 1\n")
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", "trec_eval", "-q",
                           str(tmp_path / "q2"), str(tmp_path / "r")], capture_output=True,
                          text=True, timeout=300) if _cli(tmp_path, "Q", "R") else None
    assert proc.returncode == 2 and proc.stdout == ""
    assert "'zz'" in proc.stderr and len(proc.stderr.splitlines()) == 1
    for args in (["-m", "bogus", "Q", "R"], ["Q"], ["-x", "Q", "R"], ["-m", "P.0", "Q", "R"]):
        proc = _cli(tmp_path, *args)
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def _scan_11pt(codes, r, points):
    """11pt_avg as trec_eval's loop computes it: a reverse scan over the ranks
    with a pointer into the cut-offs, in the order the points were given."""
    cuts = [_lround(p * r) for p in points]
    n, nrr = len(codes), sum(c >= 1 for c in codes)
    cur = len(cuts) - 1
    while cur >= 0 and cuts[cur] > nrr:
        cur -= 1
    best = nrr / n if n else math.nan
    total, rel_so_far = 0.0, nrr
    for i in range(n, 0, -1):
        if rel_so_far <= 0:
            break
        best = max(best, rel_so_far / i)
        if codes[i - 1] >= 1:
            while cur >= 0 and rel_so_far == cuts[cur]:
                total += best
                cur -= 1
            rel_so_far -= 1
    total += best * (cur + 1)
    return total / len(points)


@pytest.mark.parametrize("points", ["0.9,0.1", "0.5,0.1,0.9,0.3", "0,0.2,0.4", "1,0.6,0.6"])
def test_11pt_avg_points_in_any_order(points):
    qrels, run = _collection(5)
    values = [float(p) for p in points.split(",")]
    ours = trec_eval(qrels, run, f"11pt_avg.{points}")
    for i, qid in enumerate(ours.qids):
        codes = _ranking(qrels, run, qid)
        r = sum(1 for v in qrels[qid].values() if v >= 1)
        assert ours.per_query[f"11pt_avg_{points}"][i] == pytest.approx(
            _scan_11pt(codes, r, values), abs=1e-12), qid


def test_cut_offs_printed_alike_both_print():
    qrels, run = _collection(6, 2)
    lines = trec_eval(qrels, run, "iprec_at_recall.0.333,0.334").lines(per_query=True)
    assert [line.split("\t")[:2] for line in lines] == [
        [f"{'iprec_at_recall_0.33':<22}", qid] for qid in ("q0", "q0", "q1", "q1", "all", "all")]


@pytest.mark.parametrize("complete", [True, False])
@pytest.mark.parametrize("flags", [{}, {"judged_only": True}, {"relevance_level": 2}])
def test_evaluate_run_computes_every_trec_eval_measure(complete, flags):
    """evaluate_run(..., ["all_trec"]) holds trec_eval's values under its
    printed names. Without complete, a judged query the run lacks is left out,
    as trec_eval leaves out a query absent from the qrels: the values equal
    trec_eval's on the qrels without it."""
    from sklearn_rank.trec import evaluate_run

    qrels, run = _collection(7, 14)
    del run["q5"], run["q9"]  # judged, not retrieved
    ev = evaluate_run(qrels, run, ["all_trec"], complete=complete, **flags)
    if complete:
        want = trec_eval(qrels, run, "all_trec", complete=True, **flags)
    else:
        want = trec_eval({q: v for q, v in qrels.items() if q in run}, run, "all_trec",
                         **flags)
    assert ev.qids.tolist() == want.qids
    skipped = {"relstring", "gm_map", "gm_bpref"}  # a string; logs per query (below)
    assert list(ev.mean) == [k for k in want.summary if k != "runid"]
    for key, value in want.summary.items():
        if key != "runid":
            assert np.array_equal(ev.mean[key], value, equal_nan=True), key  # the same double
    for key, values in want.per_query.items():
        if key not in skipped:
            np.testing.assert_array_equal(ev.per_query[key], values.astype(float),
                                          err_msg=key)  # NaN (0/0, -J) equal to NaN
    for key, base in (("gm_map", "map"), ("gm_bpref", "bpref")):
        np.testing.assert_array_equal(ev.per_query[key], want.per_query[base])
    np.testing.assert_array_equal(ev.per_query["num_q"], 1.0)


def test_evaluate_run_mixes_registry_and_trec_eval_names():
    from sklearn_rank.trec import evaluate_run

    qrels, run = _collection(3, 6)
    ev = evaluate_run(qrels, run, ["P.10", "infAP", "map", "official", "utility.2,-1,0,0"])
    alone = evaluate_run(qrels, run, ["P.10", "map"])
    want = trec_eval(qrels, run, ["official", "infAP", "utility.2,-1,0,0"])
    # keyed by the names trec_eval prints (P.10's P_10 met again in official: kept once)
    assert list(ev.mean)[:4] == ["P_10", "infAP", "map", "num_q"]
    assert ev.mean["P.10"] == alone.mean["P.10"] and ev.mean["map"] == alone.mean["map"]
    for key in ("infAP", "num_rel_ret", "P_10", "iprec_at_recall_0.50", "utility_2,-1,0,0"):
        assert ev.mean[key] == want.summary[key], key
    assert ev == evaluate_run(qrels, run, ["P.10", "infAP", "map", "official",
                                           "utility.2,-1,0,0"])
    assert ev.to_dict()["num_ret"] == want.summary["num_ret"]  # a sum, as trec_eval's
    assert "infAP" in repr(ev)
    safe = ev.to_dict(names="safe")
    assert safe["iprec_at_recall_0_50"] == want.summary["iprec_at_recall_0.50"]
    assert safe["utility_2_minus1_0_0"] == want.summary["utility_2,-1,0,0"]
    assert len(safe) == len(ev.mean)
    if importlib.util.find_spec("pandas"):
        assert list(ev.to_frame().columns) == list(ev.mean)


def test_evaluate_run_reads_trec_eval_parameters_the_registry_does_not():
    from sklearn_rank.trec import evaluate_run

    qrels, run = _collection(5, 6)
    names = ["ndcg.1=3,2=9", "ndcg_cut.10,20,23.4", "set_F.0.5", "rbp.p=0.8"]
    ev = evaluate_run(qrels, run, names)
    want = trec_eval(qrels, run, names)
    assert list(ev.mean) == list(want.summary)  # ndcg_1=3,2=9, ndcg_cut_10, ..., rbp_p=0.8
    for key, values in want.per_query.items():
        np.testing.assert_array_equal(ev.per_query[key], values)
    with pytest.raises(ValueError, match="cut-off k must be >= 1"):  # the registry's error
        evaluate_run(qrels, run, ["P.0"])


def test_compare_takes_trec_eval_engine_measures():
    from sklearn_rank.stats import compare
    from sklearn_rank.trec import evaluate_run

    qrels, run = _collection(4, 8)
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    names = ["infAP", "num_rel_ret", "map"]
    report = compare({"a": evaluate_run(qrels, run, names),
                      "b": evaluate_run(qrels, other, names)}, baseline="a")
    assert report.metrics == names


@pytest.mark.parametrize("name", ["runid", "relstring", "relstring.5"])
def test_evaluate_run_points_to_trec_eval_for_strings(name):
    from sklearn_rank.trec import evaluate_run

    with pytest.raises(ValueError, match=r"trec_eval\(qrels, run, \['" + name + r"'\]\)"):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map", name])


def test_query_with_only_negative_levels_keeps_the_previous_counts():
    """trec_eval keeps a query's level counts in static state: a query whose
    levels are all negative sees the previous query's (through ideal_dcg or
    a gain for -1), but has no relevant document."""
    qrels = {"a": {"x": 1, "y": 2}, "b": {"z": -1}}
    run = {"a": {"x": 1.0}, "b": {"z": 1.0, "w": 0.5}}
    result = trec_eval(qrels, run, ["ideal_dcg", "num_rel", "ndcg.-1=1"])
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert list(result.per_query["ideal_dcg"]) == [idcg, idcg]
    assert list(result.per_query["num_rel"]) == [2, 0]
    # w (not in the qrels, -1) gains 1 at rank 2; the ideal is a's
    assert result.per_query["ndcg_-1=1"][1] == pytest.approx((1 / math.log2(3)) / idcg)


def _g_ndcg_rel_reference(codes, judged, gains):
    """G and ndcg_rel added rank by rank, as trec_eval 10.0's loops add them
    (gains whose order is unambiguous: any two differ by 1 or more)."""
    gain = lambda c: gains.get(c, 0.0)  # noqa: E731
    ideal = sorted((gains[lv] for lv in judged.values() if lv >= 0 and gains.get(lv, 0) > 0),
                   reverse=True)
    res = cost = g_sum = 0.0
    for i, c in enumerate(codes):  # G: cost adds max(ideal gain, 1) at every rank
        res += gain(c)
        cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        if gain(c) != 0:
            g_sum += gain(c) / math.log2(2 + cost - res)
    g = g_sum / sum(ideal) if ideal else 0.0
    dcg = idcg = s = 0.0
    rel_ret = 0
    for i in range(max(len(codes), len(ideal))):  # ndcg_rel
        if i < len(codes) and gain(codes[i]) != 0:
            dcg += gain(codes[i]) / math.log2(i + 2)
        if i < len(ideal):
            idcg += ideal[i] / math.log2(i + 2)
        if i < len(codes) and gain(codes[i]) > 0:
            s += dcg / idcg
            rel_ret += 1
    s += (len(ideal) - rel_ret) * dcg / idcg if ideal else 0.0
    return g, (s / len(ideal) if s > 0 else 0.0)


@pytest.mark.parametrize("seed", [0, 3])
def test_g_and_ndcg_rel_fractional_gains_brute_force(seed):
    # fractional gains: G, ndcg_rel computed from the nonzero-gain rows and the
    # ideal prefix only must equal trec_eval's rank-by-rank sums
    qrels, run = _collection(seed)
    spec = "1=1.1,2=2.2,3=3.3"
    gains = {0: 0.0, 1: 1.1, 2: 2.2, 3: 3.3}
    ours = trec_eval(qrels, run, [f"G.{spec}", f"ndcg_rel.{spec}"])
    checked = 0
    for i, qid in enumerate(ours.qids):
        g, ndcg_rel = _g_ndcg_rel_reference(_ranking(qrels, run, qid), qrels[qid], gains)
        assert ours.per_query[f"G_{spec}"][i] == g, qid  # the same additions: equal doubles
        assert ours.per_query[f"ndcg_rel_{spec}"][i] == pytest.approx(ndcg_rel, abs=1e-12)
        checked += g > 0
    assert checked >= 8
