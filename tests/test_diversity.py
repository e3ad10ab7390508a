"""ir_measures' diversity measures equal ir_measures' (pyndeval, ndeval 4.5) per query.

Generated collections: several subtopics per query (ids shared between
queries and ids of their own, so that ndeval's numbering of subtopics, and
the order in which it adds gains, is exercised), documents relevant to
several subtopics, graded levels (``rel=``), unjudged documents, judged
documents never retrieved, queries without a relevant subtopic, queries
missing on either side, tie-free scores. One ir_measures call per measure.
Values are compared exactly (pyndeval returns ndeval's doubles, unprinted).
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate, parse_metric
from sklearn_rank.trec import SubtopicQrels, evaluate_run, read_qrels, read_subtopic_qrels

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pyndeval")
pd = pytest.importorskip("pandas")

MEASURES = [
    "alpha_nDCG@1", "alpha_nDCG@2", "alpha_nDCG@5", "alpha_nDCG@10", "alpha_nDCG@20",
    "alpha_nDCG(alpha=0.3)@10", "alpha_nDCG(alpha=0.8,rel=2)@5", "alpha_nDCG(alpha=1.0)@10",
    "alpha_nDCG(alpha=0.0)@10", "alpha_DCG@1", "alpha_DCG@5", "alpha_DCG@20",
    "alpha_DCG(alpha=0.3,rel=2)@10", "ERR_IA@1", "ERR_IA@3", "ERR_IA@10", "ERR_IA@20",
    "ERR_IA(rel=2)@5", "nERR_IA@1", "nERR_IA@5", "nERR_IA@20", "nERR_IA(rel=3)@10",
    "NRBP", "NRBP(alpha=0.3,beta=0.9)", "NRBP(rel=2,beta=0.2)", "nNRBP",
    "nNRBP(alpha=0.7,beta=0.8)", "nNRBP(rel=2,alpha=0.1,beta=0.95)", "nNRBP(beta=1.0)",
    "AP_IA", "AP_IA(rel=2)", "MAP_IA", "P_IA@1", "P_IA@5", "P_IA@20", "P_IA(rel=2)@10",
    "StRecall@1", "StRecall@5", "StRecall@20", "StRecall(rel=3)@10",
]
SEEDS = [0, 1, 2]


def collection(seed: int, n_queries: int = 25):
    """``(qrels, run)`` DataFrames in ir_measures' layout (see the module's doc)."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, n_queries + 1):
        qid = f"q{q}"
        docs = [f"d{j}" for j in range(int(rng.integers(1, 30)))]
        if q % 6:
            n_sub = int(rng.integers(1, 6))
            subtopics = [str(s) for s in range(1, n_sub + 1)]
            if q % 4 == 0:  # subtopic ids of its own, met first here
                subtopics = [f"{qid}-{s}" for s in rng.permutation(n_sub).tolist()]
            pool = docs + [f"x{j}" for j in range(int(rng.integers(0, 5)))]  # never retrieved
            judged = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
            levels = [0] if q in (9, 14) else [0, 0, 1, 1, 2, 3]  # nothing relevant
            for d in judged.tolist():
                for s in rng.choice(subtopics, size=int(rng.integers(1, n_sub + 1)),
                                    replace=False).tolist():
                    qrels.append((qid, s, d, int(rng.choice(levels))))
        if q % 5:
            retrieved = docs + [f"u{j}" for j in range(int(rng.integers(0, 5)))]
            scores = rng.permutation(len(retrieved)) / 8.0
            run.extend((qid, d, float(s)) for d, s in zip(retrieved, scores, strict=True))
    order = rng.permutation(len(qrels))  # the same rows, shuffled: queries interleave
    qrels = pd.DataFrame([qrels[i] for i in order],
                         columns=["query_id", "iteration", "doc_id", "relevance"])
    return qrels, pd.DataFrame(run, columns=["query_id", "doc_id", "score"])


def reference(measure: str, qrels, run) -> dict:
    parsed = ir_measures.parse_measure(measure)
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([parsed], qrels, run)}


def _same(got: dict, want: dict, measure: str) -> None:
    assert set(got) == set(want)
    bad = {q: (got[q], want[q]) for q in want
           if not (got[q] == want[q] or math.isnan(got[q]) and math.isnan(want[q]))}
    assert not bad, f"{measure}: {len(bad)} of {len(want)} queries differ: {bad}"


def ours(measure, qrels, run, **options) -> dict:
    ev = evaluate_run(qrels, run, [measure], complete=True, **options)
    key = str(ev.metrics[0])
    return dict(zip(ev.qids.tolist(), ev.per_query[key].tolist(), strict=True))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", MEASURES)
def test_per_query_equals_ir_measures(measure, seed):
    qrels, run = collection(seed)
    want = reference(measure, qrels, run)
    assert set(want) == set(qrels.query_id)
    _same(ours(measure, qrels, run), want, measure)


def test_the_collections_exercise_every_case():
    qrels, run = collection(0)
    per_doc = qrels[qrels.relevance >= 1].groupby(["query_id", "doc_id"]).size()
    assert (per_doc > 1).sum() > 20  # documents relevant to several subtopics
    assert set(qrels.query_id) - set(run.query_id) and set(run.query_id) - set(qrels.query_id)
    values = reference("nNRBP", qrels, run)
    assert sum(math.isnan(v) for v in values.values()) >= 2  # no relevant subtopic
    judged = set(zip(qrels.query_id, qrels.doc_id, strict=True))
    assert sum((q, d) not in judged for q, d in zip(run.query_id, run.doc_id, strict=True)) > 50


def test_files_objects_and_the_mean(tmp_path):
    qrels, run = collection(3)
    path = tmp_path / "qrels"
    path.write_text("".join(f"{q} {s} {d} {r}\n" for q, s, d, r in qrels.itertuples(False)))
    objects = [ir_measures.alpha_nDCG @ 10, ir_measures.nNRBP, ir_measures.AP_IA]
    from_file = evaluate_run(str(path), run, objects)  # judged and retrieved queries
    from_frame = evaluate_run(read_subtopic_qrels(path, engine="numpy"), run,
                              [str(m) for m in objects])
    for m in objects:
        key = str(m)
        assert np.array_equal(from_file.per_query[key], from_frame.per_query[key],
                              equal_nan=True)
        want = reference(key, qrels, run)
        values = [want[q] for q in from_file.qids if not math.isnan(want[q])]
        # nNRBP: queries without a relevant subtopic have no value (NaN), out of the mean
        assert from_file.mean[key] == pytest.approx(sum(values) / len(values), rel=1e-15)
    assert from_file.n_empty["nNRBP"] == sum(math.isnan(v) for v in
                                            from_file.per_query["nNRBP"])


def test_judged_only_drops_unjudged_documents_first():
    # ir_measures' judged_only=True fails inside its pyndeval provider (it
    # indexes a generator); the meaning is the other measures' judged_only:
    # the same as ir_measures on the run without its unjudged documents.
    qrels, run = collection(4)
    judged = set(zip(qrels.query_id, qrels.doc_id, strict=True))
    kept = run[[(q, d) in judged for q, d in zip(run.query_id, run.doc_id, strict=True)]]
    for measure in ["alpha_nDCG(judged_only=True)@10", "ERR_IA(judged_only=True)@5",
                    "AP_IA(judged_only=True)", "P_IA(rel=2,judged_only=True)@5"]:
        plain = measure.replace(",judged_only=True", "").replace("(judged_only=True)", "")
        _same(ours(measure, qrels, run), reference(plain, qrels, kept), measure)
        _same(ours(plain, qrels, run, judged_only=True), reference(plain, qrels, kept), measure)


def test_score_ties_go_by_increasing_document_id():
    # pyndeval's order (trec_eval's and ndeval -traditional's: decreasing id)
    qrels = pd.DataFrame([("q", "1", "a", 1), ("q", "2", "b", 0)],
                         columns=["query_id", "iteration", "doc_id", "relevance"])
    run = pd.DataFrame([("q", "b", 1.0), ("q", "a", 1.0)], columns=["query_id", "doc_id", "score"])
    assert reference("P_IA@1", qrels, run) == ours("P_IA@1", qrels, run) == {"q": 1.0}
    assert ours("P_IA@2", qrels, run) == reference("P_IA@2", qrels, run) == {"q": 0.5}


def test_cut_offs_beyond_ndeval_s_20_follow_its_formulas():
    # ndeval stops at rank 20 (ir_measures: AssertionError); the same sums go on
    qrels, run = collection(5)
    got = evaluate_run(qrels, run, ["StRecall@25", "P_IA@25", "alpha_DCG@25", "ERR_IA@25"],
                       complete=True)
    k20 = evaluate_run(qrels, run, ["StRecall@20", "P_IA@20"], complete=True)
    assert (got.per_query["StRecall@25"] >= k20.per_query["StRecall@20"]).all()
    sub = SubtopicQrels.from_frame(qrels)
    for i, qid in enumerate(got.qids.tolist()):
        rows = run[run.query_id == qid].sort_values("score", ascending=False).doc_id.tolist()
        rel = {(s, d) for q, s, d, r in zip(sub.qid, sub.subtopic, sub.docno, sub.rel,
                                            strict=True) if q == qid and r >= 1}
        topics = {s for s, _ in rel}
        if not topics:
            continue
        hits = [[s for s in sorted(topics) if (s, d) in rel] for d in rows[:25]]
        covered = {s for h in hits for s in h}
        assert got.per_query["StRecall@25"][i] == pytest.approx(len(covered) / len(topics))
        assert got.per_query["P_IA@25"][i] == pytest.approx(
            sum(map(len, hits)) / (25 * len(topics)))
        seen, dcg, err = {}, 0.0, 0.0
        for r, h in enumerate(hits):
            gain = sum(0.5 ** seen.get(s, 0) for s in h)
            dcg, err = dcg + gain / math.log2(r + 2), err + gain / (r + 1)
            for s in h:
                seen[s] = seen.get(s, 0) + 1
        ideal = [len(topics) * 0.5 ** r for r in range(25)]
        assert got.per_query["alpha_DCG@25"][i] == pytest.approx(
            dcg / sum(g / math.log2(r + 2) for r, g in enumerate(ideal)))
        assert got.per_query["ERR_IA@25"][i] == pytest.approx(
            err / sum(g / (r + 1) for r, g in enumerate(ideal)))


def test_command_line_prints_ir_measures_values(tmp_path):
    qrels, run = collection(6)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} {s} {d} {r}\n" for q, s, d, r in qrels.itertuples(False)))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in run.itertuples(False)))
    names = ["alpha_nDCG@20", "nERR_IA@10", "NRBP(beta=0.8)", "AP_IA", "StRecall@5"]
    args = [arg for name in names for arg in ("-m", name)]
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", "evaluate", str(qrels_path),
                           str(run_path), *args, "-c", "-q", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    printed = next(iter(json.loads(proc.stdout)["runs"].values()))["per_query"]
    for name in names:
        want = reference(name, qrels, run)
        assert printed[str(ir_measures.parse_measure(name))] == pytest.approx(want, rel=1e-15,
                                                                              abs=0)


@pytest.mark.parametrize("text", ["alpha_nDCG@10", "alpha_nDCG(alpha=0.3)@5", "NRBP(beta=0.8)",
                                  "nNRBP(rel=2)", "MAP_IA", "ERR_IA(rel=2)@20", "StRecall@5",
                                  "P_IA@10", "nERR_IA@5", "alpha_DCG(rel=2,alpha=0.1)@3"])
def test_printed_as_ir_measures_prints_it(text):
    measure = ir_measures.parse_measure(text)
    got = evaluate_run(*collection(7), [text, measure])
    assert [str(m) for m in got.metrics] == [str(measure)]  # the same measure, once


@pytest.mark.parametrize("text, message", [
    ("alpha_nDCG", "requires 'cutoff'"), ("ERR_IA(alpha=0.3)@5", "no parameter 'alpha'"),
    ("NRBP@5", "no parameter 'cutoff'"), ("StRecall(judged_only=True)@5", "no parameter"),
    ("alpha_nDCG(alpha=1.5)@5", "in [0, 1]"), ("NRBP(beta=2.0)", "in [0, 1]"),
    ("alpha_nDCG(alpha=1)@5", "write 1.0"), ("P_IA@0", "cut-off must be >= 1"),
])
def test_bad_parameters_name_the_fix(text, message):
    for call in (lambda: parse_metric(text),
                 lambda: evaluate_run(*collection(8), [text])):
        with pytest.raises(ValueError) as info:
            call()
        assert message in str(info.value)


def test_flat_rows_refuse_with_the_fix():
    for metric in ("alpha_nDCG@10", ir_measures.NRBP, "MAP_IA"):
        with pytest.raises(ValueError, match=r"subtopic judgments .*evaluate_run\(qrels, run"):
            evaluate([1, 0], [0.5, 0.2], qid=[1, 1], metrics=[metric])


def test_qrels_without_subtopics_are_refused():
    run = {"q": {"a": 1.0}}
    for qrels in ({"q": {"a": 1}}, read_qrels(io.StringIO("q 0 a 1\n"))):
        with pytest.raises(TypeError, match="need subtopic judgments"):
            evaluate_run(qrels, run, ["alpha_nDCG@5"])


def test_subtopic_qrels_reader():
    text = "q1 1 a 1\nq1 2 a 0\nq1 2 b 2\n# c\nq2 x a 1\n"
    for engine in ("numpy", "pyarrow", "auto"):
        got = read_subtopic_qrels(io.StringIO(text), engine=engine)
        assert got.subtopic.tolist() == ["1", "2", "2", "x"]
        assert got.codes.tolist() == [0, 1, 1, 2]  # ndeval's numbering: first appearance
    with pytest.raises(ValueError, match=r"'a' is judged twice on subtopic '1' .*lines 1 and 3"):
        read_subtopic_qrels(io.StringIO("q1 1 a 1\nq1 2 a 0\nq1 1 a 2\n"))
    with pytest.raises(ValueError, match="line 2: expected 4 fields"):
        read_subtopic_qrels(io.StringIO("q1 1 a 1\nq1 a 1\n"))
    # with other measures: one judgment per document, or an error saying why
    run = {"q1": {"a": 1.0, "b": 0.5}}
    with pytest.raises(ValueError, match="several subtopics"):
        evaluate_run(read_subtopic_qrels(io.StringIO(text)), run, ["alpha_nDCG@5", "map"])
    one = read_subtopic_qrels(io.StringIO("q1 1 a 1\nq1 2 b 2\n"))
    got = evaluate_run(one, run, ["alpha_nDCG@5", "map", "P_IA@2"])
    assert got.per_query["map"].tolist() == [1.0]
    assert got.per_query["P_IA@2"].tolist() == [0.5]


def test_nothing_relevant_anywhere():
    qrels = read_subtopic_qrels(io.StringIO("q1 1 a 0\nq1 2 b 0\nq2 1 c 0\n"))
    run = {"q1": {"a": 1.0, "z": 0.5}}
    got = evaluate_run(qrels, run, ["alpha_nDCG@5", "nNRBP", "AP_IA", "P_IA@2"], complete=True)
    frame = pd.DataFrame([(q, s, d, int(r)) for q, s, d, r in zip(
        qrels.qid, qrels.subtopic, qrels.docno, qrels.rel, strict=True)],
        columns=["query_id", "iteration", "doc_id", "relevance"])
    runs = pd.DataFrame([("q1", "a", 1.0), ("q1", "z", 0.5)],
                        columns=["query_id", "doc_id", "score"])
    for key in got.per_query:
        _same(dict(zip(got.qids.tolist(), got.per_query[key].tolist(), strict=True)),
              reference(key, frame, runs), key)
    # q1: NaN, out of the mean; q2 (not in the run): 0, as ir_measures fills it
    assert got.n_empty["nNRBP"] == 1 and got.mean["nNRBP"] == 0.0


def test_tied_scores_break_as_pyndeval():
    """pyndeval ranks tied scores by increasing document id (neither trec_eval's
    decreasing id nor the run's row order): per query, exactly, on a run with
    many ties whose rows are shuffled within each query."""
    qrels, run = collection(5)
    rng = np.random.default_rng(11)
    run = run.assign(score=rng.integers(0, 4, len(run)) / 4.0)
    run = run.iloc[rng.permutation(len(run))].sort_values("query_id", kind="stable")
    for measure in ["alpha_nDCG@10", "ERR_IA@5", "P_IA@5", "AP_IA", "NRBP", "StRecall@3"]:
        _same(ours(measure, qrels, run), reference(measure, qrels, run), measure)
