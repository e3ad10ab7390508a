"""ir_measures' names break score ties as their ir_measures provider does (issue 24 item 10).

ir_measures 0.4.3 ranks a run differently per provider: pytrec_eval and gdeval
as trec_eval (score descending, then document id descending), cwl_eval (RBP,
SDCG, NERR8-NERR11, INST, INSQ, BPM) and accuracy in the run's own order
(a stable sort by score), judged, compat and msmarco (``RR@k``) by increasing
document id; judged also counts a negative qrels level as judged. Each name
is compared per query with ir_measures on collections with many tied scores,
negative levels and runs whose rows are in none of these orders (shuffled),
given as dicts, as files and on the command line; per-query values agree to
rel 1e-9 (gdeval prints 5 decimals: abs 5.01e-6).
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

from sklearn_rank.metrics import parse_metric
from sklearn_rank.trec import evaluate_run, read_run

ir_measures = pytest.importorskip("ir_measures")

CWL = ["RBP(rel=1)", "RBP(rel=2,p=0.5)", "SDCG(max_rel=4)@5", "SDCG(min_rel=1,max_rel=3)@10",
       "NERR8(max_rel=4)@5", "NERR9(max_rel=4)@10", "NERR10(max_rel=4)",
       "NERR10(p=0.5,max_rel=3)", "NERR11(max_rel=4)", "INST(T=2.0,max_rel=4)",
       "INSQ(max_rel=4)", "BPM(T=2.0,max_rel=4)@10"]
DOCNO_ASC = ["Judged@1", "Judged@5", "Judged", "RR@3", "RR(rel=2)@10", "Compat",
             "Compat(p=0.8,normalize=False)"]
TREC_ORDER = ["nDCG@5", "AP", "P@5", "RR", "Success@1", "Bpref"]  # pytrec_eval
GDEVAL = ["ERR@5", "nDCG(dcg='exp-log2')@10"]
SEEDS = [0, 1, 2]


def collection(seed: int, n_queries: int = 30):
    """Levels -1..4, unjudged and unretrieved documents, qrels-only and
    run-only queries, scores k/4 for k < 6 (many ties), each query's rows
    shuffled: neither by score nor by document id."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(1, n_queries + 1):
        qid = str(q)
        docs = [f"d{j}" for j in range(int(rng.integers(1, 25)))]
        if q % 7:
            judged = rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)
            qrels[qid] = {str(d): int(rng.choice([-1, -1, 0, 0, 1, 1, 2, 3, 4]))
                          for d in judged}
            for j in range(int(rng.integers(0, 4))):  # judged, never retrieved
                qrels[qid][f"x{j}"] = int(rng.integers(-1, 5))
        if q % 5:
            retrieved = docs + [f"u{j}" for j in range(int(rng.integers(0, 5)))]
            scores = rng.integers(0, 6, len(retrieved)) / 4.0
            run[qid] = {retrieved[i]: float(scores[i])
                        for i in rng.permutation(len(retrieved))}
    return qrels, run


def reference(measure: str, qrels: dict, run) -> dict:
    parsed = ir_measures.parse_measure(measure)
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([parsed], qrels, run)}


def ours(measure: str, qrels: dict, run) -> dict:
    ev = evaluate_run(qrels, run, [measure], complete=True)
    return dict(zip(ev.qids.tolist(), ev.per_query[measure].tolist(), strict=True))


def _agree(measure: str, got: dict, want: dict) -> None:
    tol = ({"abs": 5.01e-6} if measure in GDEVAL else {"rel": 1e-9, "abs": 1e-12})
    assert set(got) == set(want)
    bad = {q: (got[q], want[q]) for q in want if got[q] != pytest.approx(want[q], **tol)}
    assert not bad, f"{measure}: {len(bad)} of {len(want)} queries differ: {bad}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", CWL + DOCNO_ASC + TREC_ORDER + GDEVAL)
def test_tied_scores_per_query_equal_ir_measures(measure, seed):
    if measure in CWL:
        pytest.importorskip("cwl")
    if measure in GDEVAL and shutil.which("perl") is None:
        pytest.skip("gdeval needs perl")
    qrels, run = collection(seed)
    _agree(measure, ours(measure, qrels, run), reference(measure, qrels, run))


def test_the_collections_tell_the_orders_apart():
    """On these collections the registry twins (ties averaged, negative
    levels unjudged) give other values than ir_measures, so the test above
    fails for a name ranked by another rule; the registry names do not
    depend on the run's row order."""
    pytest.importorskip("cwl")
    qrels, run = collection(0)
    in_trec_order = {q: dict(sorted(docs.items(), key=lambda ds: (ds[1], ds[0]), reverse=True))
                     for q, docs in run.items()}
    for measure, registry in [("RBP(rel=1)", "cwl_rbp(threshold=1)"),
                              ("SDCG(max_rel=4)@5", "sdcg(max_rel=4, depth=5)"),
                              ("Judged@5", "judged@5"), ("RR@3", "mrr@3")]:
        twin = ours(registry, qrels, run)
        assert twin != pytest.approx(reference(measure, qrels, run), rel=1e-9), measure
        assert twin == ours(registry, qrels, in_trec_order)
    qrels = {"1": {"a": 1, "b": 0, "c": -1}}
    run = {"1": {"c": 1.0, "b": 1.0, "a": 1.0}}  # trec_eval's order: c, b, a
    assert ours("RR@1", qrels, run) == reference("RR@1", qrels, run) == {"1": 1.0}
    assert ours("mrr@1", qrels, run) == {"1": pytest.approx(1 / 3, rel=1e-15)}  # averaged
    assert ours("Judged@1", qrels, run) == reference("Judged@1", qrels, run) == {"1": 1.0}
    # c: "in the pool, unjudged"; the registry averages over the three orders
    assert ours("judged@1", qrels, run) == {"1": pytest.approx(2 / 3, rel=1e-15)}
    run = {"1": {"a": 1.0, "c": 1.0, "b": 1.0}}  # input: a first
    assert ours("RBP(rel=1)", qrels, run) == pytest.approx(reference("RBP(rel=1)", qrels, run))
    assert ours("RBP(rel=1)", qrels, run)["1"] > ours("cwl_rbp(threshold=1)", qrels, run)["1"]


def test_negative_levels_count_as_judged_for_judged_alone():
    """ir_measures' Judged counts every qrels entry; a negative level is
    trec_eval's "in the pool, unjudged" for every other name (bpref, infAP)."""
    qrels = {"1": {"a": -1, "b": 1, "c": -2}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}
    assert ours("Judged", qrels, run) == reference("Judged", qrels, run) == {"1": 0.75}
    assert ours("Judged@1", qrels, run) == {"1": 1.0}
    ev = evaluate_run(qrels, run, ["judged", "Judged", "bpref", "Bpref"])
    assert ev.per_query["judged"][0] == pytest.approx(0.25, rel=1e-12)
    assert ev.per_query["Bpref"][0] == pytest.approx(ev.per_query["bpref"][0], rel=1e-12)
    # evaluate_run's judged_only=True (trec_eval's -J) keeps what each name counts as judged
    qrels = {"1": {"a": -1, "b": 1}, "2": {"c": -1, "f": 1}}
    run = {"1": {"a": 2.0, "b": 1.0, "d": 0.0}, "2": {"c": 1.0, "e": 0.0}}
    ev = evaluate_run(qrels, run, ["Judged@1", "judged@1", "RBP(rel=1)"], judged_only=True)
    np.testing.assert_array_equal(ev.per_query["Judged@1"], [1.0, 1.0])
    np.testing.assert_array_equal(ev.per_query["judged@1"], [1.0, 0.0])  # 2: nothing left


@pytest.mark.parametrize("measure", ["RBP(rel=1)", "Judged@5", "RR@3", "Compat",
                                     "INST(T=2.0,max_rel=4)"])
def test_run_file_order_is_the_input_order(measure, tmp_path):
    """A run file's lines are its input order (cwl_eval's tie order), as
    ir_measures reads them; its rank column is ignored."""
    if measure.startswith(("RBP", "INST")):
        pytest.importorskip("cwl")
    qrels, run = collection(5)
    path = tmp_path / "run"
    path.write_text("".join(f"{q} Q0 {d} {len(docs) - i} {s!r} r\n"
                            for q, docs in run.items() for i, (d, s) in enumerate(docs.items())))
    want = reference(measure, qrels, list(ir_measures.read_trec_run(str(path))))
    _agree(measure, ours(measure, qrels, read_run(path)), want)
    _agree(measure, ours(measure, qrels, str(path)), want)


def test_ties_option_does_not_change_ir_measures_names():
    """evaluate_run's ties= is the registry names' policy; an ir_measures
    name keeps its provider's order."""
    qrels, run = collection(3)
    names = ["RBP(rel=1)", "Judged@5", "nDCG@5", "RR@3", "Compat"]
    plain = evaluate_run(qrels, run, names)
    for ties in ("average", "optimistic", "pessimistic"):
        ev = evaluate_run(qrels, run, names, ties=ties)
        for name in names:
            np.testing.assert_array_equal(ev.per_query[name], plain.per_query[name])


def test_mixed_layouts_in_one_call():
    """Names of several providers, judged_only and registry names together: each
    as it is alone, keys in the order asked, options checked once for all."""
    pytest.importorskip("cwl")
    qrels, run = collection(1)
    names = ["Judged@5", "AP(judged_only=True)", "RBP(rel=1)", "map", "RR@3", "nDCG@5",
             "p@5", "Compat"]
    ev = evaluate_run(qrels, run, names, complete=True)
    assert list(ev.mean) == names
    for name in names:
        alone = evaluate_run(qrels, run, [name], complete=True)
        np.testing.assert_array_equal(ev.per_query[name], alone.per_query[name])
    # threshold= (from relevance_level) reaches the names that take it only
    ev = evaluate_run(qrels, run, ["AP(judged_only=True)", "Judged@5"], relevance_level=2)
    assert set(ev.mean) == {"AP(judged_only=True)", "Judged@5"}
    with pytest.raises(TypeError, match="option 'gain' that none of the metrics"):
        evaluate_run(qrels, run, ["Judged@5", "RR@3"], gain="linear")


def test_layouts_are_declared_on_the_spec():
    assert parse_metric("RBP(rel=1)").layout.ties == "input"
    assert parse_metric("Judged@3").layout.negative_judged
    assert parse_metric("RR@3").layout.ties == "docno_asc"
    assert parse_metric("RR").layout.ties == "docno_desc"  # pytrec_eval's
    assert parse_metric("mrr@3").layout is None  # registry: the package's rules
    assert parse_metric(ir_measures.RBP(rel=1)) == parse_metric("RBP(rel=1)")


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_command_line_prints_ir_measures_values_on_tied_runs(tmp_path):
    pytest.importorskip("cwl")
    from test_ir_measures import _command_line  # the files written, the CLI's JSON read

    qrels, run = collection(4)
    names = ["RBP(rel=2,p=0.5)", "NERR8(max_rel=4)@5", "Judged@5", "RR@3", "Compat",
             "ERR@10", "nDCG@10"]
    printed = _command_line(tmp_path, qrels, run, names)["per_query"]
    for name in names:
        want = reference(name, qrels, run)
        got = printed["Compat" if name == "Compat" else str(parse_metric(name))]
        _agree("ERR@5" if name == "ERR@10" else name, got, want)
        assert not any(math.isnan(v) for v in got.values())
