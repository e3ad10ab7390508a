"""trec_eval's own measures on flat rows: ``evaluate(y_true, y_score, qid=...,
metrics=["num_ret", "iprec_at_recall", "G", ...])``.

Flat rows stand for a run in which every document is retrieved and judged,
its label being its relevance level. Each family is checked against
:func:`evaluate_run` on that qrels file and run, against the trec_eval 10.0
binary on the same files (when ``TREC_EVAL`` names it or ``trec_eval`` is on
the PATH; without it, against a copy of what that binary printed for the same
generated files, ``tests/data/trec_flat_binary.json.gz``, which a run with the
binary also checks; rewrite it with ``TREC_EVAL=/path python
tests/test_trec_flat.py``), and against pytrec_eval (trec_eval 9.0.8) where it has the measure
and 9.0.8 agrees with 10.0. Scores are distinct within a query and exact in
float32 (multiples of 1/8), so trec_eval's tie-break by document id never
applies and pytrec_eval's float32 ranking is 10.0's.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate, make_ranking_scorer, parse_metric
from sklearn_rank.trec import evaluate_run

TREC_EVAL = os.environ.get("TREC_EVAL") or shutil.which("trec_eval") or ""
PINNED = Path(__file__).parent / "data" / "trec_flat_binary.json.gz"

# every trec_eval family no registry metric computes, with parameters too (a bare
# "rbp" is the registry's RBP, as in evaluate_run: trec_eval's is "rbp.p=0.9")
FAMILIES = ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q",
            "iprec_at_recall", "11pt_avg", "Rprec_mult", "relative_P", "set_relative_P",
            "set_map", "utility", "G", "binG", "ndcg_rel", "Rndcg", "infAP", "gm_bpref",
            "rbp_resid", "unj"]
WITH_PARAMS = ["iprec_at_recall.0.33,0.5", "Rprec_mult.0.5,1.5", "relative_P.3,7",
               "utility.2,-1,0,0", "11pt_avg.0.25,0.5,0.75", "ndcg.1=3,2=9", "G.1=2,2=5",
               "Rndcg.1=2", "rbp.p=0.8", "rbp_resid.p=0.5", "unj.3", "dcg.1=2", "ideal_dcg"]
SETS = ["official", "all_trec", "set"]
# ir_measures' names computed by the trec_eval engine
IRM = ["IPrec@0.5", "NumRet", "NumRelRet", "NumRel", "NumQ", "infAP", "SetAP",
       "SetP(relative=True)", "SetF(beta=2.0)", "infAP(rel=2)"]
# depend only on the set of documents of a query, not on their order
TIE_FREE = ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q",
            "set_relative_P", "set_map", "utility", "unj", "set", "NumRet", "SetAP"]


def _flat(seed: int, ties: bool = False):
    """Graded labels 0..3, queries of 1..30 rows (one without a relevant
    document), rows shuffled across queries, query ids "q00".."q08"."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 31, size=9)
    qid = np.repeat([f"q{i:02d}" for i in range(9)], sizes)
    y = rng.choice([0, 0, 0, 1, 1, 2, 3], size=qid.shape[0])
    y[qid == "q02"] = 0
    if ties:
        s = rng.integers(0, 6, size=qid.shape[0]) / 8.0
    else:
        s = rng.permutation(qid.shape[0]) / 8.0  # distinct, exact in float32
    order = rng.permutation(qid.shape[0])
    return y[order], s[order], qid[order]


def _trec_tables(y, s, qid):
    """The qrels and run the flat rows stand for. Later rows of a query get
    smaller document ids, so trec_eval's tie-break (decreasing docno) keeps
    input order."""
    n = len(y)
    qrels, run = {}, {}
    for i in range(n):
        docno = f"d{n - i:06d}"
        qrels.setdefault(str(qid[i]), {})[docno] = int(y[i])
        run.setdefault(str(qid[i]), {})[docno] = float(s[i])
    return qrels, run


def _write(tmp_path, qrels, run):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {level}\n" for q, docs in qrels.items()
                                  for d, level in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {score!r} flat\n" for q, docs in run.items()
                                for d, score in docs.items()))
    return qrels_path, run_path


def _same(ours, theirs):
    assert list(ours.mean) == list(theirs.mean)
    assert [str(q) for q in ours.qids] == [str(q) for q in theirs.qids]
    for key in ours.mean:
        assert np.array_equal(ours.per_query[key], theirs.per_query[key], equal_nan=True), key
        assert ours.mean[key] == theirs.mean[key] or (
            math.isnan(ours.mean[key]) and math.isnan(theirs.mean[key])), key
        assert ours.n_empty[key] == theirs.n_empty[key], key


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("measure", FAMILIES + WITH_PARAMS + SETS + IRM)
def test_flat_rows_equal_evaluate_run(measure, seed):
    y, s, qid = _flat(seed)
    qrels, run = _trec_tables(y, s, qid)
    _same(evaluate(y, s, qid=qid, metrics=[measure]), evaluate_run(qrels, run, [measure]))


@pytest.mark.parametrize("threshold", [0, 2, 2.5, 4])
def test_threshold_is_trec_eval_relevance_level(threshold):
    y, s, qid = _flat(3)
    qrels, run = _trec_tables(y, s, qid)
    metrics = ["all_trec", "IPrec@0.5", "NumRet"]
    ours = evaluate(y, s, qid=qid, metrics=metrics, threshold=threshold)
    theirs = evaluate_run(qrels, run, metrics, relevance_level=threshold)
    _same(ours, theirs)


def _binary(qrels_path, run_path, measures, *flags) -> list[tuple[str, str, str]]:
    args = [TREC_EVAL, "-q", *flags, *(f"-m{m}" for m in measures), str(qrels_path),
            str(run_path)]
    out = subprocess.run(args, capture_output=True, check=True).stdout.decode()
    return [tuple(field.strip() for field in line.split("\t")) for line in out.splitlines()]


def _printed(key: str, qrels_path, run_path, measures, *flags) -> list[tuple[str, str, str]]:
    """What trec_eval -q prints for these files: the binary's lines when there
    is one (they must equal the pinned copy), else the pinned copy."""
    pinned = json.loads(gzip.decompress(PINNED.read_bytes()))
    if not TREC_EVAL:
        return [tuple(line) for line in pinned[key]]
    lines = _binary(qrels_path, run_path, measures, *flags)
    assert [list(line) for line in lines] == pinned[key], key
    return lines


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("measures", [FAMILIES, WITH_PARAMS], ids=["defaults", "params"])
def test_flat_rows_equal_the_trec_eval_binary(tmp_path, seed, level, measures):
    """Every line trec_eval -q prints, as it prints it. One call per measure:
    trec_eval takes the first parameters given for a family, and aborts
    (SIGABRT) on some lists of several gain-pair measures (ndcg.1=3,2=9 with
    G.1=2,2=5, rbp.p=0.8, ...)."""
    y, s, qid = _flat(seed)
    qrels_path, run_path = _write(tmp_path, *_trec_tables(y, s, qid))
    qids = [str(q) for q in evaluate(y, s, qid=qid, metrics=["num_q"]).qids]
    for measure in measures:
        ev = evaluate(y, s, qid=qid, metrics=[measure], threshold=level)
        lines = _printed(f"{seed} -l{level} {measure}", qrels_path, run_path, [measure],
                         f"-l{level}")
        seen = set()
        for name, q, printed in lines:
            value = ev.mean[name] if q == "all" else ev.per_query[name][qids.index(q)]
            ours = str(int(value)) if name.startswith("num_") else f"{value:6.4f}".strip()
            assert ours == printed, (name, q)
            seen.add(name)
        assert seen == set(ev.mean), measure  # every value we give, trec_eval printed
        summary_only = {"num_q", "gm_bpref"} & seen
        assert len(lines) == len(qids) * (len(seen) - len(summary_only)) + len(seen)


def test_pytrec_eval_agrees():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    # 9.0.8's iprec_at_recall and 11pt_avg round the cut rank otherwise; no rbp, unj
    families = ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "Rprec_mult",
                "relative_P", "set_relative_P", "set_map", "utility", "G", "binG",
                "ndcg_rel", "Rndcg", "infAP"]
    for seed in range(3):
        y, s, qid = _flat(seed)
        qrels, run = _trec_tables(y, s, qid)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, set(families)).evaluate(run)
        ev = evaluate(y, s, qid=qid, metrics=families)
        qids = [str(q) for q in ev.qids]
        assert sorted(theirs) == qids
        compared = 0
        for key in ev.mean:
            for i, q in enumerate(qids):
                assert ev.per_query[key][i] == pytest.approx(theirs[q][key], abs=1e-12), key
                compared += 1
        assert compared == len(qids) * len(ev.mean) and len(ev.mean) == 31


def _stable_order(s, qid, q):
    rows = [i for i in range(len(s)) if qid[i] == q]
    return sorted(rows, key=lambda i: -s[i])  # Python's sort is stable: input order


def _brute(y, s, qid, level=1):
    """relative_P@5, Rprec_mult@1.5 and iprec_at_recall@0.5 of every query,
    from its rows in stable order, by their definitions (TREC_MEASURES.md)."""
    out = {"relative_P_5": [], "Rprec_mult_1.50": [], "iprec_at_recall_0.50": []}
    for q in sorted(set(qid)):
        rel = [y[i] >= level for i in _stable_order(s, qid, q)]
        n, r = len(rel), sum(rel)
        out["relative_P_5"].append(sum(rel[:5]) / min(5, r) if r else 0.0)
        cut = int(1.5 * r + 0.9)
        out["Rprec_mult_1.50"].append(sum(rel[:cut]) / cut if cut else 0.0)
        cut = math.floor(0.5 * r + 0.5)
        precision = [sum(rel[:j]) / j for j in range(1, n + 1)]
        ranks = [j for j in range(n) if rel[j]]
        if cut > len(ranks) or not ranks:
            out["iprec_at_recall_0.50"].append(0.0)
        else:  # cut <= 0: the best precision at any rank
            out["iprec_at_recall_0.50"].append(max(precision[ranks[max(cut, 1) - 1]:]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stable_ties_are_input_order(seed):
    y, s, qid = _flat(seed, ties=True)
    measures = ["relative_P.5", "Rprec_mult.1.5", "iprec_at_recall.0.5"]
    ev = evaluate(y, s, qid=qid, metrics=measures, ties="stable")
    for key, values in _brute(y, s, qid).items():
        assert ev.per_query[key].tolist() == pytest.approx(values, abs=1e-15), key
    # and the trec_eval engine on a run whose document ids keep input order
    qrels, run = _trec_tables(y, s, qid)
    metrics = ["all_trec", "IPrec@0.5", "infAP(rel=2)"]
    _same(evaluate(y, s, qid=qid, metrics=metrics, ties="stable"),
          evaluate_run(qrels, run, metrics))
    _same(evaluate(y, s, qid=qid, metrics=metrics, convention="trec_eval"),
          evaluate_run(qrels, run, metrics))


STABLE_TIES = ["11pt_avg", "G", "infAP", "relative_P.5"]


def test_stable_ties_equal_the_trec_eval_binary(tmp_path):
    y, s, qid = _flat(4, ties=True)
    qrels_path, run_path = _write(tmp_path, *_trec_tables(y, s, qid))
    ev = evaluate(y, s, qid=qid, metrics=STABLE_TIES, ties="stable")
    for name, q, printed in _printed("ties", qrels_path, run_path, STABLE_TIES):
        value = ev.mean[name] if q == "all" else ev.per_query[name][list(ev.qids).index(q)]
        assert f"{value:6.4f}".strip() == printed, (name, q)


@pytest.mark.parametrize("policy", ["pessimistic", "optimistic"])
def test_bound_ties_order_tied_labels(policy):
    """pessimistic / optimistic = stable order once the tied rows are sorted
    by increasing / decreasing label (then input order)."""
    y, s, qid = _flat(5, ties=True)
    sign = 1 if policy == "pessimistic" else -1
    order = sorted(range(len(y)), key=lambda i: (qid[i], -s[i], sign * y[i], i))
    ev = evaluate(y, s, qid=qid, metrics=["all_trec"], ties=policy)
    _same(ev, evaluate(y[order], s[order], qid=qid[order], metrics=["all_trec"],
                       ties="stable"))


def test_average_ties_raise_where_the_order_matters():
    y, s, qid = _flat(0, ties=True)
    for measure in ("iprec_at_recall", "G", "infAP", "relative_P.5", "official", "IPrec@0.5"):
        with pytest.raises(ValueError, match=r"has tied scores.*ties='stable'"):
            evaluate(y, s, qid=qid, metrics=[measure])
    # the counts and set measures do not depend on the order
    for ties in ("average", "stable", "pessimistic", "optimistic"):
        _same(evaluate(y, s, qid=qid, metrics=TIE_FREE, ties=ties),
              evaluate(y, s, qid=qid, metrics=TIE_FREE, ties="stable"))
    # tie-free data work under the default
    y, s, qid = _flat(0)
    _same(evaluate(y, s, qid=qid, metrics=["all_trec"]),
          evaluate(y, s, qid=qid, metrics=["all_trec"], ties="stable"))


def test_two_dimensional_layout_and_mixed_registry_metrics():
    y = np.array([[3, 0, 1, 2, 0], [0, 1, 0, 0, 2]])
    s = np.array([[0.5, 0.4, 0.3, 0.2, 0.1], [0.9, 0.1, 0.2, 0.3, 0.4]])
    flat = evaluate(y.ravel(), s.ravel(), qid=np.repeat([0, 1], 5),
                    metrics=["ndcg@3", "G", "num_rel", "map"])
    _same(evaluate(y, s, metrics=["ndcg@3", "G", "num_rel", "map"]), flat)
    assert list(flat.mean) == ["ndcg@3", "G", "num_rel", "map"]
    assert flat.mean["num_rel"] == 5.0  # trec_eval's summary of a count: the sum


def test_keys_are_trec_eval_names_and_other_spellings_find_them():
    y, s, qid = _flat(1)
    qrels, run = _trec_tables(y, s, qid)
    metrics = ["ndcg_cut.3", "P.5", "recip_rank", "num_ret", "iprec_at_recall.0.5", "nDCG@3",
               "NumRelRet", "map", "success_1"]
    ev = evaluate(y, s, qid=qid, metrics=metrics)
    run_ev = evaluate_run(qrels, run, metrics)
    keys = ["ndcg_cut_3", "P_5", "recip_rank", "num_ret", "iprec_at_recall_0.50", "nDCG@3",
            "NumRet(rel=1)", "map", "success_1"]
    assert list(ev.mean) == list(run_ev.mean) == keys
    trec_spellings = [("P.5", "P_5"), ("P_5", "P_5"), ("ndcg_cut.3", "ndcg_cut_3"),
                      ("NumRelRet", "NumRet(rel=1)"),
                      ("iprec_at_recall.0.5", "iprec_at_recall_0.50")]
    # the registry's spellings of trec_eval's names: the same metric on flat rows;
    # from a run they average tied scores, which trec_eval breaks by document id
    registry_spellings = [("p@5", "P_5"), ("ndcg(gain='linear')@3", "ndcg_cut_3"),
                          ("mrr", "recip_rank"), ("hit_rate@1", "success_1")]
    for e, spellings in ((ev, trec_spellings + registry_spellings),
                         (run_ev, trec_spellings)):
        for other, key in spellings:
            assert e.mean[other] == dict.__getitem__(e.mean, key), other
            assert other in e.per_query
        with pytest.raises(KeyError, match=r"'p@7' is not a metric.*'P_5'"):
            e.mean["p@7"]
    for other, _ in registry_spellings:
        assert other not in run_ev.mean
    assert str(parse_metric("P.5")) == "P_5" and parse_metric("P.5") == parse_metric("p@5")
    assert parse_metric("P_5") == parse_metric("P.5")  # the key parses back


@pytest.mark.parametrize("name, match", [
    ("runid", r"'runid' names the run file.*trec_eval\(qrels, run, \['runid'\]\)"),
    ("relstring", r"'relstring' is a string.*trec_eval\(qrels, run"),
    ("relstring.20", r"'relstring' is a string.*trec_eval\(qrels, run"),
    ("Compat", r"Compat compares a run.*evaluate_run"),
])
def test_measures_without_a_flat_meaning_are_refused(name, match):
    y, s, qid = _flat(0)
    with pytest.raises(ValueError, match=match):
        evaluate(y, s, qid=qid, metrics=["map", name])


def test_refusals_name_the_fix():
    y, s, qid = _flat(0)
    with pytest.raises(ValueError, match=r"not integers >= 0 \(first: 1.5 in query"):
        evaluate(np.where(y == 1, 1.5, y), s, qid=qid, metrics=["num_rel"])
    with pytest.raises(ValueError, match=r"not integers >= 0 \(first: -1 in query"):
        evaluate(np.where(y == 1, -1, y), s, qid=qid, metrics=["G"])
    with pytest.raises(ValueError, match=r"sample_weight is not supported.*\(num_ret\)"):
        evaluate(y, s, qid=qid, metrics=["num_ret"], sample_weight=np.ones(len(y)))
    with pytest.raises(TypeError, match=r"option 'gain' that none of the metrics \['num_ret'\]"):
        evaluate(y, s, qid=qid, metrics=["num_ret"], gain="linear")
    with pytest.raises(ValueError, match=r"labels go up to 10000000"):
        evaluate(np.where(y == 3, 10_000_000, y), s, qid=qid, metrics=["num_rel"])
    # a registry metric with an option the engine measures do not take: fine
    evaluate(y, s, qid=qid, metrics=["num_ret", "ndcg@3"], gain="linear")


@pytest.mark.parametrize("name", ["num_ret", "iprec_at_recall.0.5", "official", "utility",
                                  "ndcg.1=3"])
def test_single_spec_entry_points_name_evaluate(name):
    """A trec_eval family no registry spec computes: parse_metric and
    make_ranking_scorer say which entry points compute it (not 'Did you mean
    mrr?')."""
    match = r"no registry spec computes: sklearn_rank\.metrics\.evaluate\("
    with pytest.raises(ValueError, match=match):
        parse_metric(name)
    with pytest.raises(ValueError, match=match):
        make_ranking_scorer(name)
    with pytest.raises(ValueError, match=r"sklearn_rank\.metrics\.evaluate\(.*evaluate_run"):
        parse_metric("NumRet")


def _pin(directory: Path) -> None:
    """Write PINNED from the binary's output on the tests' generated files."""
    pinned = {}
    for seed in (0, 1):
        qrels_path, run_path = _write(directory, *_trec_tables(*_flat(seed)))
        for level in (1, 2):
            for measure in FAMILIES + WITH_PARAMS:
                pinned[f"{seed} -l{level} {measure}"] = _binary(qrels_path, run_path, [measure],
                                                                f"-l{level}")
    qrels_path, run_path = _write(directory, *_trec_tables(*_flat(4, ties=True)))
    pinned["ties"] = _binary(qrels_path, run_path, STABLE_TIES)
    PINNED.parent.mkdir(exist_ok=True)
    text = json.dumps(pinned, separators=(",", ":")) + "\n"
    PINNED.write_bytes(gzip.compress(text.encode(), mtime=0))


if __name__ == "__main__":  # TREC_EVAL=/path/to/trec_eval python tests/test_trec_flat.py
    import tempfile

    if not TREC_EVAL:
        sys.exit("set TREC_EVAL to a trec_eval 10.0 binary")
    with tempfile.TemporaryDirectory() as tmp:
        _pin(Path(tmp))
