"""ir_measures' names mean ir_measures' numbers (issue 14 items 3-5).

Every measure is compared per query with ir_measures 0.4.3 (one ir_measures
call per measure: its multi-measure calls share trec_eval invocations by set
order), on generated collections with graded, negative and missing
judgments, queries missing on either side, float32-exact scores and runs
inserted in trec_eval's order (score descending, docno descending), through
:func:`~sklearn_rank.trec.evaluate_run` and the command line (runs in other
orders, where the providers' tie orders differ: tests/test_irm_ties.py). The
C/W/L measures are also checked against an independent brute-force reference.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate, make_ranking_scorer, parse_metric
from sklearn_rank.trec import evaluate_run

ir_measures = pytest.importorskip("ir_measures")

# (measure, tolerance): gdeval's values are printed with 5 decimals.
MEASURES = [
    ("nDCG@5", 1e-12), ("nDCG", 1e-12), ("nDCG@20", 1e-12), ("NDCG@10", 1e-12),
    ("nDCG(gains={0:0,1:1,2:3,3:7,4:15})@5", 1e-12), ("nDCG(gains={1:2,3:1})", 1e-12),
    ("nDCG(judged_only=True)", 1e-12), ("nDCG(judged_only=True)@10", 1e-12),
    ("AP(judged_only=True)", 1e-12), ("P(judged_only=True)@5", 1e-12),
    ("R(rel=2,judged_only=True)@10", 1e-12), ("RR(judged_only=True)", 1e-12),
    ("Rprec(judged_only=True)", 1e-12), ("Success(judged_only=True)@3", 1e-12),
    ("SetP(judged_only=True)", 1e-12), ("SetF(judged_only=True)", 1e-12),
    ("AP", 1e-12), ("AP(rel=2)", 1e-12), ("AP@10", 1e-12), ("MAP(rel=3)@5", 1e-12),
    ("RR", 1e-12), ("RR(rel=2)", 1e-12), ("P@5", 1e-12), ("P(rel=2)@10", 1e-12),
    ("Precision@1", 1e-12), ("R@10", 1e-12), ("R(rel=3)@20", 1e-12), ("Recall@5", 1e-12),
    ("Rprec", 1e-12), ("Rprec(rel=2)", 1e-12), ("Bpref", 1e-12), ("Bpref(rel=2)", 1e-12),
    ("Success@1", 1e-12), ("Success(rel=2)@5", 1e-12), ("SetP", 1e-12),
    ("SetP(rel=2)", 1e-12), ("SetR", 1e-12), ("SetF", 1e-12),
    ("RBP(rel=1)", 1e-12), ("RBP(rel=2,p=0.5)", 1e-12), ("RBP(rel=1,p=0.99)", 1e-12),
    ("SDCG(max_rel=4)@5", 1e-12), ("SDCG(min_rel=1,max_rel=3)@10", 1e-12),
    ("NERR8(max_rel=4)@5", 1e-12), ("NERR9(max_rel=4)@10", 1e-12),
    ("NERR10(max_rel=4)", 1e-12), ("NERR10(p=0.5,max_rel=3)", 1e-12),
    ("NERR11(max_rel=4)", 1e-12), ("NERR11(T=2.0,max_rel=4)", 1e-12),
    ("INST(max_rel=4)", 1e-12), ("INST(T=3.0,max_rel=3)", 1e-12), ("INSQ(max_rel=4)", 1e-12),
    ("INSQ(T=2.0,min_rel=1,max_rel=4)", 1e-12), ("BPM(max_rel=4)@5", 1e-12),
    ("BPM(T=2.0,max_rel=4)@10", 1e-12),
    ("ERR@5", 5.01e-6), ("ERR@20", 5.01e-6), ("nDCG(dcg='exp-log2')@5", 5.01e-6),
    ("nDCG(dcg='exp-log2')@10", 5.01e-6),
]
# On the trec_eval engine (trec_eval's definitions, IPrec with 9.0.8's cut rank).
ENGINE_MEASURES = [
    "infAP", "infAP(rel=2)", "IPrec@0.5", "IPrec@0.2", "IPrec@0.7", "IPrec@0.0", "IPrec@1.0",
    "IPrec(rel=2)@0.3", "IPrec(judged_only=True)@0.6", "IPrec@0.555", "NumRet",
    "NumRet(rel=2)", "NumRelRet", "NumRel", "NumQ", "SetAP", "SetAP(rel=2)",
    "SetAP(judged_only=True)", "SetP(relative=True)", "SetRelP", "SetP(rel=2,relative=True)",
    "SetF(beta=2.0)", "SetF(rel=2,beta=0.5)", "SetF(beta=3.0,judged_only=True)",
]
# Providers that break score ties by increasing docno (MS MARCO, judged): tie-free runs
# here, tied ones in tests/test_irm_ties.py.
UNTIED_MEASURES = [("RR@3", 1e-12), ("RR(rel=2)@10", 1e-12), ("Judged@5", 1e-12),
                   ("Judged@1", 1e-12), ("Judged", 1e-12)]
SEEDS = [0, 1, 2]


def _trec_ordered(scores: dict) -> dict:
    """A query's run inserted in trec_eval's order: score desc, then docno desc."""
    return dict(sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True))


def collection(seed: int, n_queries: int = 30, tied: bool = True, negative: bool = True):
    """Numeric query ids (gdeval), levels -1..4, unjudged and unretrieved documents,
    qrels-only and run-only queries, float32-exact scores (many ties if ``tied``)."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(1, n_queries + 1):
        qid = str(q)
        docs = [f"d{j}" for j in range(int(rng.integers(1, 25)))]
        if q % 7:
            judged = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
            levels = [-1, 0, 0, 1, 1, 2, 3, 4] if negative else [0, 0, 1, 1, 2, 3, 4]
            qrels[qid] = {str(d): int(rng.choice(levels)) for d in judged}
            for j in range(int(rng.integers(0, 4))):  # judged, never retrieved
                qrels[qid][f"x{j}"] = int(rng.integers(0, 5))
        if q % 5:
            retrieved = docs + [f"u{j}" for j in range(int(rng.integers(0, 5)))]
            scores = (rng.integers(0, 8, len(retrieved)) / 4.0 if tied
                      else rng.permutation(len(retrieved)) / 8.0)
            run[qid] = _trec_ordered({d: float(s) for d, s in zip(retrieved, scores,
                                                                  strict=True)})
    return qrels, run


def reference(measure: str, qrels: dict, run: dict) -> dict:
    """ir_measures' per-query values (one call for this measure alone)."""
    parsed = ir_measures.parse_measure(measure)
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([parsed], qrels, run)}


def ours(measure: str, qrels: dict, run: dict) -> dict:
    ev = evaluate_run(qrels, run, [measure], complete=True)
    key = str(ev.metrics[0])  # an alias (SetRelP) under ir_measures' str()
    return dict(zip(ev.qids.tolist(), ev.per_query[key].tolist(), strict=True))


def _compare(measure, tol, qrels, run):
    want, got = reference(measure, qrels, run), ours(measure, qrels, run)
    assert set(got) == set(want) == set(qrels)
    bad = {q: (got[q], want[q]) for q in want if not math.isclose(got[q], want[q], rel_tol=0,
                                                                   abs_tol=tol)}
    assert not bad, f"{measure}: {len(bad)} of {len(want)} queries differ: {bad}"
    return len(want)


needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure, tol", MEASURES, ids=[m for m, _ in MEASURES])
def test_per_query_equals_ir_measures(measure, tol, seed):
    if "ERR" in measure and "NERR" not in measure or "exp-log2" in measure:
        if shutil.which("perl") is None:
            pytest.skip("gdeval needs perl")
    if measure.startswith(("RBP", "SDCG", "NERR", "INST", "INSQ", "BPM")):
        pytest.importorskip("cwl")
    qrels, run = collection(seed)
    assert _compare(measure, tol, qrels, run) == len(qrels)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", ENGINE_MEASURES)
def test_engine_measures_equal_ir_measures(measure, seed):
    qrels, run = collection(seed)
    assert _compare(measure, 0.0, qrels, run) == len(qrels)
    # and the aggregate: a mean, or a sum for the counts (ir_measures' SumAgg)
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(measure)], qrels, run)
    got = evaluate_run(qrels, run, [measure], complete=True)
    assert got.mean[str(got.metrics[0])] == pytest.approx(float(next(iter(want.values()))),
                                                          rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", ["Compat", "Compat(p=0.8)", "Compat(normalize=False)",
                                     "Compat(p=0.5,normalize=False)"])
def test_compat_equals_ir_measures_without_ties(measure, seed):
    # ir_measures' compat breaks score ties by increasing docno (tied: tests/test_irm_ties.py)
    qrels, run = collection(seed, tied=False)
    assert _compare(measure, 1e-12, qrels, run) == len(qrels)


def _accuracy_brute_force(levels: dict, scores: dict, cutoff, rel) -> float:
    ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)[:cutoff]
    relevant = [d for d in ranked if levels.get(d, 0) >= rel]
    nonrel = [d for d in ranked if levels.get(d, 0) < rel]
    if not relevant or not nonrel:
        return math.nan
    right = sum(ranked.index(r) < ranked.index(n) for r in relevant for n in nonrel)
    return right / (len(relevant) * len(nonrel))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure, cutoff, rel", [("Accuracy", None, 1), ("Accuracy@5", 5, 1),
                                                  ("Accuracy(rel=2)@10", 10, 2)])
def test_accuracy_equals_ir_measures_and_pair_counts(measure, cutoff, rel, seed):
    """Accuracy: the fraction of (relevant, non-relevant) pairs in the top k in
    the right order; no value (NaN, out of the mean) without such a pair
    (ir_measures: no value without a relevant document, ZeroDivisionError
    without a non-relevant one)."""
    qrels, run = collection(seed, tied=False)
    ev = evaluate_run(qrels, run, [measure], complete=True)
    got = dict(zip(ev.qids.tolist(), ev.per_query[measure].tolist(), strict=True))
    for qid in qrels:
        want = _accuracy_brute_force(qrels[qid], run.get(qid, {}), cutoff, rel)
        assert got[qid] == pytest.approx(want, nan_ok=True, abs=1e-12), qid
        one = ({qid: qrels[qid]}, {qid: run[qid]}) if qid in run else None
        if one is not None and not math.isnan(want):
            assert reference(measure, *one) == pytest.approx({qid: want}, abs=1e-12)
    counted = [v for v in got.values() if not math.isnan(v)]
    assert ev.mean[measure] == pytest.approx(sum(counted) / len(counted), abs=1e-12)
    assert ev.n_empty[measure] == len(got) - len(counted)


def test_compat_and_accuracy_break_ties_as_ir_measures():
    qrels, run = {"1": {"a": 1, "b": 0}}, {"1": {"b": 1.0, "a": 1.0}}
    # ir_measures: a before b (increasing docno) for Compat, input order for Accuracy
    assert reference("Compat", qrels, run) == ours("Compat", qrels, run) == {"1": 1.0}
    assert reference("Accuracy", qrels, run) == ours("Accuracy", qrels, run) == {"1": 0.0}
    # trec_eval's order (b first) would give Compat (0.95 / 2) / (1 + 0.95 / 2)
    run = {"1": {"a": 1.0, "b": 1.0}}
    assert reference("Accuracy", qrels, run) == ours("Accuracy", qrels, run) == {"1": 1.0}


def test_iprec_uses_9_0_8_cut_rank_not_10_0():
    """IR_MEASURES.md §12.3: R = 3, IPrec@0.8 cuts at (long)(2.4 + 0.9) = 3
    (ir_measures 0.5), trec_eval 10.0's iprec_at_recall.0.8 at lround(2.4) = 2."""
    qrels = {"1": {"a": 1, "b": 1, "c": 1, "n1": 0, "n2": 0, "n3": 0}}
    run = {"1": {"a": 6.0, "n1": 5.0, "b": 4.0, "n2": 3.0, "n3": 2.0, "c": 1.0}}
    assert reference("IPrec@0.8", qrels, run) == ours("IPrec@0.8", qrels, run) == {"1": 0.5}
    ev = evaluate_run(qrels, run, ["IPrec@0.8", "iprec_at_recall.0.8"])
    assert ev.per_query["iprec_at_recall_0.80"][0] == pytest.approx(2 / 3)


def test_engine_names_refused_on_flat_rows():
    """Compat and Accuracy compare a run with the qrels' ideal ranking: refused
    on flat rows. (The other engine names, IPrec@0.5, NumQ, infAP, ..., are
    computed there: tests/test_trec_flat.py.)"""
    for name in ("Compat", "Accuracy@5"):
        with pytest.raises(ValueError, match="evaluate_run"):
            evaluate([[1, 0]], [[0.5, 0.2]], metrics=[name])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure, tol", UNTIED_MEASURES, ids=[m for m, _ in UNTIED_MEASURES])
def test_per_query_equals_ir_measures_without_ties(measure, tol, seed):
    # Judged: no negative levels (which ir_measures counts judged: tests/test_irm_ties.py)
    qrels, run = collection(seed, tied=False, negative=False)
    _compare(measure, tol, qrels, run)


def test_judged_only_applies_to_its_measure_alone():
    qrels, run = collection(8)
    ev = evaluate_run(qrels, run, ["AP", "AP(judged_only=True)", "P@5", "nDCG@5"],
                      complete=True)
    assert list(ev.mean) == ["AP", "AP(judged_only=True)", "P@5", "nDCG@5"]
    alone = evaluate_run(qrels, run, ["AP", "P@5", "nDCG@5"], complete=True)
    for key in ("AP", "P@5", "nDCG@5"):
        np.testing.assert_array_equal(ev.per_query[key], alone.per_query[key])
    minus_j = evaluate_run(qrels, run, ["AP"], complete=True, judged_only=True)
    np.testing.assert_array_equal(ev.per_query["AP(judged_only=True)"], minus_j.per_query["AP"])
    assert (ev.per_query["AP"] != ev.per_query["AP(judged_only=True)"]).any()


def test_providers_rules_against_the_registry_twins():
    """ir_measures' names follow its providers, the registry names the package's rules."""
    qrels = {"1": {"a": -1, "b": 1}}
    run = {"1": {"a": 2.0, "b": 1.0}}
    # ir_measures' Judged counts a negative level; elsewhere it is "pooled but unjudged".
    assert reference("Judged@1", qrels, run) == ours("Judged@1", qrels, run) == {"1": 1.0}
    assert ours("judged@1", qrels, run) == {"1": 0.0}
    # MS MARCO's RR@k breaks ties by increasing docno, pytrec_eval's RR by decreasing;
    # the registry's mrr averages over both orders, as on flat rows.
    qrels, run = {"1": {"a": 1, "b": 0}}, {"1": {"b": 1.0, "a": 1.0}}
    assert reference("RR@1", qrels, run) == ours("RR@1", qrels, run) == {"1": 1.0}
    assert ours("mrr@1", qrels, run) == {"1": 0.5}
    assert ours("RR", qrels, run) == reference("RR", qrels, run) == {"1": 0.5}


def _command_line(tmp_path, qrels, run, names) -> dict:
    """The run's entry of ``sklearn-rank evaluate ... -c -q --format json``
    on the collection written as files, measures ``names``."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {lv}\n" for q, docs in qrels.items()
                                  for d, lv in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} r\n" for q, docs in run.items()
                                for i, (d, s) in enumerate(docs.items())))
    args = [arg for name in names for arg in ("-m", name)]
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", "evaluate", str(qrels_path),
                           str(run_path), *args, "-c", "-q", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return next(iter(json.loads(proc.stdout)["runs"].values()))


@needs_perl
def test_command_line_prints_ir_measures_values(tmp_path):
    pytest.importorskip("cwl")
    qrels, run = collection(4)
    names = ["nDCG@10", "AP(rel=2)", "P@5", "R@10", "Bpref", "RBP(rel=2,p=0.5)",
             "INST(T=2.0,max_rel=4)", "NERR8(max_rel=4)@5", "ERR@10", "SetF"]
    printed = _command_line(tmp_path, qrels, run, names)["per_query"]
    for name in names:
        label = str(parse_metric(name))  # ir_measures' str(), parameters in declared order
        want = reference(name, qrels, run)
        got = printed[label]
        assert set(got) == set(want)
        for qid in want:
            assert got[qid] == pytest.approx(want[qid], abs=5.01e-6 if name == "ERR@10" else 1e-9)


def test_command_line_prints_engine_measures(tmp_path):
    qrels, run = collection(5)
    names = ["infAP(rel=2)", "IPrec@0.3", "NumRet", "NumRelRet", "NumRel", "NumQ", "SetAP",
             "SetP(relative=True)", "SetF(beta=2.0)", "nDCG@10"]
    printed = _command_line(tmp_path, qrels, run, names)
    for name in names:
        label = str(ir_measures.parse_measure(name))  # NumRelRet prints NumRet(rel=1)
        want = reference(name, qrels, run)
        assert printed["per_query"][label] == pytest.approx(want, abs=1e-12), name
        agg = ir_measures.calc_aggregate([ir_measures.parse_measure(name)], qrels, run)
        assert printed["mean"][label] == pytest.approx(float(next(iter(agg.values()))))


# -- spellings ------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "nDCG@10", "NDCG@10", "AP", "MAP(rel=2)@5", "P(rel=2)@5", "R@100", "RR@10", "Judged@10",
    "RBP(rel=1)", "RBP(p=0.5,rel=2)", "SDCG(max_rel=4)@10", "NERR8(max_rel=4)@10",
    "BPM(T=2.0,min_rel=1,max_rel=4)@20", "nDCG(dcg='exp-log2')@5", "nDCG(gains={0:0,1:1,2:3})",
    "INST(T=3.0,max_rel=3)", "NERR10(p=0.5,max_rel=3)", "Success@1", "Bpref(rel=2)",
    "Precision@5", "Recall@5", "MRR", "BPref", "nDCG(dcg='log2')@3", "AP(rel=1)"])
def test_printed_as_ir_measures_prints_it(text):
    assert str(parse_metric(text)) == str(ir_measures.parse_measure(text))
    assert parse_metric(ir_measures.parse_measure(text)) == parse_metric(text)  # objects


@pytest.mark.parametrize("text, message", [
    ("Ndcg@10", "'nDCG' (ir_measures measure)"), ("Map", "'map' (registry metric)"),
    ("P@0", "cut-off must be >= 1"), ("R", "requires 'cutoff'"),
    ("INST(T=1,max_rel=3)", "write 1.0"), ("INST", "requires 'max_rel'"),
    ("nDCG(ties='stable')@10", "registry metric 'ndcg'"), ("RBP", "RBP(rel=1)"),
    ("alpha_nDCG@5", "subtopic"), ("RR(judged_only=True)@5", "no ir_measures provider"),
    ("NumQ", "num_q"), ("IPrec@0.5", "iprec_at_recall"), ("nDCG@10-", "suffix"),
    ("nDCG(gains={0:1})", "level 0"), ("SDCG(min_rel=3,max_rel=3)@5", "min_rel"),
    ("RBP(rel=1)@5", "cwl_rbp(depth=k)"),
    ("P(rel=-1)@5", "literal"), ("nDCG(foo=1)", "no parameter 'foo'"),
])
def test_refusals_name_the_fix(text, message):
    with pytest.raises(ValueError, match=None) as info:
        parse_metric(text)
    assert message in str(info.value)


def test_lower_case_names_keep_the_registry_meaning():
    # ndcg: exponential gain; nDCG: ir_measures' linear gain
    y, s = [[3, 0, 1]], [[1.0, 3.0, 2.0]]
    got = evaluate(y, s, metrics=["ndcg", "nDCG", "ndcg(gain='linear')"]).mean
    assert got["nDCG"] == got["ndcg(gain='linear')"] != got["ndcg"]
    # bare P is trec_eval's P_5 ... P_1000 family
    # trec_eval's P family, keyed as trec_eval prints it
    assert [str(m) for m in evaluate(y, s, metrics=["P"]).metrics][:2] == ["P_5", "P_10"]
    assert evaluate(y, s, metrics=["P"]).metrics[0] == parse_metric("p@5")


def test_flat_rows_and_scorers_take_ir_measures_names():
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 4, 40), rng.permutation(40).astype(float)
    qid = np.repeat(np.arange(8), 5)
    ev = evaluate(y, s, qid=qid, metrics=["INST(max_rel=3)", ir_measures.nDCG @ 5])
    assert ev.mean["INST(max_rel=3)"] == pytest.approx(evaluate(
        y, s, qid=qid, metrics=["inst(max_rel=3)"]).mean["inst(max_rel=3)"])
    pd = pytest.importorskip("pandas")
    scorer = make_ranking_scorer("RBP(rel=2)")

    class Fixed:
        def predict(self, X):
            return s

    assert scorer(Fixed(), pd.DataFrame({"qid": qid}), y) == pytest.approx(
        evaluate(y, s, qid=qid, metrics=["cwl_rbp(threshold=2)"]).mean["cwl_rbp(threshold=2)"])


# -- C/W/L against a brute-force reference (IR_MEASURES.md §6.4) ----------------------------

def _cwl_reference(name, gains, k=None, p=0.8, target=1.0):
    depth = 1000 if k is None else min(k, 1000)
    g = (list(gains) + [0.0] * depth)[:depth]
    cont, total = [], 0.0
    for i, gi in enumerate(g, start=1):
        total += gi
        cont.append({"rbp": p, "sdcg": math.log2(i + 1) / math.log2(i + 2),
                     "nerr8": 1 - gi, "nerr9": i / (i + 1) * (1 - gi), "nerr10": p * (1 - gi),
                     "nerr11": ((i + 2 * target - 1) / (i + 2 * target)) ** 2 * (1 - gi),
                     "inst": ((i + 2 * target - total - 1) / (i + 2 * target - total)) ** 2,
                     "insq": ((i + 2 * target - 1) / (i + 2 * target)) ** 2,
                     "bpm": 1.0 if total < target else 0.0}[name])
    reach = [1.0]
    for c in cont[:-1]:
        reach.append(reach[-1] * c)
    return sum(r * gi for r, gi in zip(reach, g, strict=True)) / sum(reach)


@pytest.mark.parametrize("name, spec, kwargs", [
    ("rbp", "cwl_rbp(threshold=1)", {}), ("sdcg", "sdcg(max_rel=3, depth=4)", {"k": 4}),
    ("nerr8", "nerr8(max_rel=3, depth=5)", {"k": 5}), ("nerr9", "nerr9(max_rel=3)", {}),
    ("nerr10", "nerr10(p=0.6, max_rel=3)", {"p": 0.6}),
    ("nerr11", "nerr11(target=2, max_rel=3)", {"target": 2.0}),
    ("inst", "inst(target=2, max_rel=3)", {"target": 2.0}), ("insq", "insq(max_rel=3)", {}),
    ("bpm", "bpm(target=1.5, max_rel=3, depth=6)", {"k": 6, "target": 1.5}),
])
@pytest.mark.parametrize("ties", ["stable", "average"])
def test_cwl_equals_brute_force(name, spec, kwargs, ties):
    rng = np.random.default_rng(5)
    qid = np.repeat(np.arange(12), rng.integers(1, 8, 12))
    y = rng.integers(0, 4, qid.shape[0]).astype(float)
    s = rng.integers(0, 3, qid.shape[0]).astype(float)  # many ties
    got = evaluate(y, s, qid=qid, metrics=[spec], ties=ties).per_query[spec]
    for i, q in enumerate(np.unique(qid)):
        rows = np.flatnonzero(qid == q)
        gain = ((y[rows] >= 1).astype(float) if name == "rbp" else np.clip(y[rows], 0, 3) / 3)
        if ties == "stable":
            orders = [sorted(range(rows.shape[0]), key=lambda j: -s[rows][j])]
        else:
            orders = [o for o in itertools.permutations(range(rows.shape[0]))
                      if all(s[rows][a] >= s[rows][b] for a, b in itertools.pairwise(o))]
        want = np.mean([_cwl_reference(name, gain[list(o)], **kwargs) for o in orders])
        assert got[i] == pytest.approx(want, abs=1e-12), (name, q)


def test_judged_brute_force():
    rng = np.random.default_rng(9)
    qrels, run = {}, {}
    for q in range(20):
        docs = [f"d{j}" for j in range(int(rng.integers(1, 15)))]
        qrels[str(q)] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.5}
        qrels[str(q)].setdefault("z", 1)
        run[str(q)] = {d: float(rng.permutation(len(docs))[j]) for j, d in enumerate(docs)}
    for k in (1, 3, 10, None):
        spec = "judged" if k is None else f"judged@{k}"
        ev = evaluate_run(qrels, run, [spec], convention="trec_eval")
        for qid, value in zip(ev.qids, ev.per_query[spec], strict=True):
            ranked = sorted(run[qid], key=lambda d: (run[qid][d], d), reverse=True)[:k]
            assert value == sum(d in qrels[qid] for d in ranked) / len(ranked)


@pytest.mark.parametrize("spec, make", [
    ("cwl_rbp(threshold=2, residual=True)", lambda m: m.RBPCWLMetric(0.8)),
    ("cwl_rbp(p=0.95, residual=True)", lambda m: m.RBPCWLMetric(0.95)),
    ("inst(target=2, max_rel=4, residual=True)", lambda m: m.INSTCWLMetric(2.0)),
    ("insq(max_rel=4, residual=True)", lambda m: m.INSQCWLMetric(1.0)),
    ("nerr10(p=0.9, max_rel=4, residual=True)", lambda m: m.NERReq10CWLMetric(0.9)),
    ("nerr11(max_rel=4, residual=True)", lambda m: m.NERReq11CWLMetric(1.0)),
    ("bpm(max_rel=4, depth=10, residual=True)", lambda m: m.BPMCWLMetric(1.0, 10)),
    ("sdcg(max_rel=4, depth=10, residual=True)", lambda m: m.NDCGCWLMetric(10)),
    ("nerr8(max_rel=4, depth=5, residual=True)", lambda m: m.NERReq8CWLMetric(5)),
])
def test_cwl_residual_equals_cwl_eval(spec, make):
    """The residual (unjudged documents and missing ranks at gain 1, minus the
    value) against cwl_eval's own (ir_measures never asks for it)."""
    ruler = pytest.importorskip("cwl.ruler.cwl_ruler")
    from cwl.ruler.ranking import Ranking

    qrels, run = collection(6, negative=False)
    ev = evaluate_run(qrels, run, [spec], convention="trec_eval")
    parsed = parse_metric(spec)
    options = parsed.resolve()
    for qid, value in zip(ev.qids.tolist(), ev.per_query[spec].tolist(), strict=True):
        levels = qrels[qid]
        if parsed.name == "cwl_rbp":
            gains = [float(levels[d] >= options["threshold"]) if d in levels else np.nan
                     for d in run[qid]]
        else:
            gains = [min(levels[d], 4) / 4 if d in levels else np.nan for d in run[qid]]
        metric = make(ruler)
        metric.residuals = True
        metric.measure(Ranking(qid, np.array(gains), np.ones(len(gains))))
        assert value == pytest.approx(metric.residual_expected_utility, abs=1e-12), qid


def test_nonlinear_cwl_refuses_too_many_tie_orderings():
    y, s = [[0, 1, 2, 3, 4] * 2], [[1.0] * 10]  # 10! / 2**5 = 113400 orderings
    with pytest.raises(ValueError, match="113400.*ties='stable'"):
        evaluate(y, s, metrics=["inst"])
    assert evaluate(y, s, metrics=["inst"], ties="stable").mean["inst"] > 0
    assert evaluate(y, s, metrics=["insq"]).mean["insq"] > 0  # linear: exact, no enumeration
