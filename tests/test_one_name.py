"""One spelling, one meaning, one label (DESIGN §10): a registry spec gives the
same per-query values, under the same key, through every entry point.

The table is every registered metric (with a cut-off where it takes one) and
a sample of options, including tie policies; the entry points are the metric
functions, ``evaluate``, ``evaluate_chunks``, Dask's ``evaluate``, the
scorers (``make_ranking_scorer``, ``ranking_scoring``: what ``tune`` uses),
``lightgbm_eval_metric``, ``evaluate_run`` and ``sklearn-rank
evaluate/compare``. The data have tied scores, a query without relevant
documents and one of a single document, so every tie policy is exercised.
A metric registered later joins the table by itself; an entry point that
gives a name another default fails it.

Values are compared with ``rel=1e-12``: the entry points group and block the
same queries differently (a query's value depends on its own rows only, but
evaluate_run's rows come ranked from the run while the others sort scores),
which may change the last bits of a sum.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import sklearn_rank.metrics as metrics_module
from sklearn_rank.metrics import (
    evaluate,
    evaluate_chunks,
    get_metric_names,
    lightgbm_eval_metric,
    make_ranking_scorer,
    parse_metric,
)
from sklearn_rank.metrics._vocab.registry import METRICS
from sklearn_rank.model_selection import ranking_scoring
from sklearn_rank.trec import evaluate_run

REL = 1e-12

OPTIONS = [
    "ndcg(gain='linear')@5", "ndcg(gain='exponential')@5", "ndcg(discount='classic')@4",
    "ndcg(ties='pessimistic')@5", "ndcg(ties='optimistic')@5", "ndcg(ties='stable')@5",
    "ndcg@10-", "ndcg(empty='one')@3", "p(ties='optimistic')@2", "p(ties='pessimistic')@3",
    "map(threshold=2)", "map@3", "map(capped=True)@3", "cg@3", "dcg@3",
    "dcg(gain='linear')@3", "recall(ties='pessimistic')@3", "mrr(threshold=2)",
    "err(max_grade=3)@5", "rbp(p=0.5)", "gmap", "r_precision(ties='optimistic')",
]


def _specs() -> list[str]:
    out = []
    for name in get_metric_names():
        out.append(name)
        if "cutoff" in METRICS[name].capabilities:
            out.append(f"{name}@3")
    return out + OPTIONS


SPECS = _specs()


def _data(seed=0):
    """Flat rows (labels 0..3, integer scores with ties), contiguous by query,
    with a query without relevant documents and one of a single document."""
    rng = np.random.default_rng(seed)
    lengths = [1, 4, 7, 3, 8, 5, 6, 2, 9, 4]
    qid = np.repeat([f"q{i:02d}" for i in range(len(lengths))], lengths)
    y = rng.integers(0, 4, qid.shape[0]).astype(float)
    y[qid == "q03"] = 0  # no relevant document
    s = rng.integers(0, 4, qid.shape[0]).astype(float)  # ties in most queries
    return y, s, qid


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(scope="module")
def reference(data):
    y, s, q = data
    return evaluate(y, s, qid=q, metrics=SPECS)


def _trec_files(tmp_path, data):
    """The qrels and run files the flat rows stand for: every row a judged,
    retrieved document (scores written exactly)."""
    y, s, q = data
    docs = [f"d{i}" for i in range(len(y))]
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("".join(f"{qi} 0 {d} {int(v)}\n" for qi, d, v in zip(q, docs, y,
                                                                          strict=True)))
    run.write_text("".join(f"{qi} Q0 {d} {r} {float(sc)!r} tag\n"
                           for r, (qi, d, sc) in enumerate(zip(q, docs, s, strict=True))))
    return qrels, run


def test_the_table_covers_every_registered_metric():
    names = {parse_metric(s).name for s in SPECS}
    assert names == set(get_metric_names())


def test_keys_are_the_canonical_spelling(reference):
    assert list(reference.per_query) == list(dict.fromkeys(str(parse_metric(s))
                                                           for s in SPECS))


@pytest.mark.parametrize("spec", SPECS)
def test_metric_function_and_scorers(data, reference, spec):
    y, s, q = data
    parsed = parse_metric(spec)
    want = reference.mean[spec]
    function = getattr(metrics_module, METRICS[parsed.name].function)
    kwargs = dict(parsed.params)
    if parsed.k is not None:
        kwargs["k"] = parsed.k
    if str(parsed).endswith("-"):
        kwargs["empty"] = "zero"
    assert function(y, s, qid=q, **kwargs) == pytest.approx(want, rel=REL)

    class Scores:  # an estimator whose predictions are X's only column
        def predict(self, X):
            return np.asarray(X)[:, 0]

    X = s[:, None]
    assert make_ranking_scorer(spec)(Scores(), X, y, qid=q) == pytest.approx(want, rel=REL)
    scored = ranking_scoring({"m": spec})(Scores(), X, y, qid=q)
    assert scored["m"] == pytest.approx(want, rel=REL)
    sizes = np.unique(q, return_counts=True)[1]  # rows contiguous, ids sorted
    name, value, _ = lightgbm_eval_metric(spec)(y, s, None, sizes)
    assert name == str(parsed)
    assert value == pytest.approx(want, rel=REL)


def _same(evaluation, reference, qids=None):
    assert list(evaluation.per_query) == list(reference.per_query)
    assert list(map(str, evaluation.qids)) == list(map(str, reference.qids if qids is None
                                                       else qids))
    for key, values in reference.per_query.items():
        np.testing.assert_allclose(evaluation.per_query[key], values, rtol=REL, atol=0,
                                   err_msg=key)
        assert evaluation.mean[key] == pytest.approx(reference.mean[key], rel=REL), key


def test_evaluate_chunks(data, reference):
    y, s, q = data
    chunks = [(y[i:i + 7], s[i:i + 7], q[i:i + 7]) for i in range(0, len(y), 7)]
    _same(evaluate_chunks(chunks, metrics=SPECS), reference)


def test_dask(data, reference):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from sklearn_rank.dask import evaluate as dask_evaluate

    y, s, q = data
    frame = pd.DataFrame({"label": y, "score": s, "qid": q})
    # rows in one partition, in their order: every spec, ties='stable' included
    _same(dask_evaluate(dd.from_pandas(frame, npartitions=1), metrics=SPECS, aligned=True),
          reference)
    # shuffled on qid: the row order (ties='stable') is refused, naming the spec
    shuffled = dd.from_pandas(frame, npartitions=3)
    unordered = [spec for spec in SPECS
                 if parse_metric(spec).resolve().get("ties") != "stable"]
    _same(dask_evaluate(shuffled, metrics=unordered),
          evaluate(y, s, qid=q, metrics=unordered))
    with pytest.raises(ValueError, match=r"ndcg\(ties='stable'\)@5 breaks ties by row order"):
        dask_evaluate(shuffled, metrics=SPECS)


def test_evaluate_run(tmp_path, data, reference):
    qrels, run = _trec_files(tmp_path, data)
    _same(evaluate_run(str(qrels), str(run), SPECS), reference)


def _cli(*args):
    done = subprocess.run([sys.executable, "-m", "sklearn_rank", *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cli_evaluate_json(tmp_path, data, reference):
    qrels, run = _trec_files(tmp_path, data)
    measures = [a for spec in SPECS for a in ("-m", spec)]
    doc = json.loads(_cli("evaluate", str(qrels), str(run), *measures, "-q",
                          "--format", "json"))["runs"]["tag"]
    assert list(doc["mean"]) == list(reference.mean)  # labelled as asked, canonically
    for key, values in reference.per_query.items():
        got = [doc["per_query"][key][str(qid)] for qid in reference.qids]
        got = [np.nan if v is None else v for v in got]  # JSON's null: no value (auc)
        np.testing.assert_allclose(got, values, rtol=REL, atol=0, err_msg=key)
        assert doc["mean"][key] == pytest.approx(reference.mean[key], rel=REL), key


@pytest.mark.parametrize("spec", ["ndcg@3", "p@3", "mrr", "recall", "map", "cg@3",
                                  "ndcg(ties='pessimistic')@5", "gmap"])
def test_cli_compare_labels_and_means(tmp_path, data, reference, spec):
    qrels, run = _trec_files(tmp_path, data)
    out = _cli("compare", str(qrels), str(run), str(run), "-m", spec, "--resamples", "10",
               "--format", "markdown")
    rows = [line for line in out.splitlines() if line.startswith("| " + str(parse_metric(spec))
                                                                 + " ")]
    assert len(rows) == 2, out  # the baseline and the other run, labelled as asked
    for row in rows:
        mean = float(row.split("|")[3])
        assert mean == pytest.approx(reference.mean[spec], abs=5e-5)


def test_trec_eval_names_keep_trec_eval_meaning(tmp_path):
    """``ndcg_cut.10`` is linear-gain NDCG with trec_eval's tie order (document
    ids, decreasing) in evaluate_run and the CLI; ``ndcg@10`` is the
    registry's (gain 2**l - 1, ties averaged) there as everywhere."""
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 0\nq1 0 b 2\nq1 0 c 1\n")
    run.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 c 3 0.5 t\n")
    ev = evaluate_run(str(qrels), str(run), ["ndcg_cut.10", "ndcg@10",
                                             "ndcg(gain='linear', ties='stable')@10", "P.1",
                                             "p@1"])
    # trec_eval ranks b before a (decreasing docno); the registry averages a/b
    ideal_linear = 2 + 1 / np.log2(3)
    assert ev.mean["ndcg_cut_10"] == pytest.approx((2 + 1 / 2) / ideal_linear, rel=REL)
    # ties='stable' is the run's order (a before b), as rows in input order
    assert ev.mean["ndcg(gain='linear', ties='stable')@10"] == pytest.approx(
        (2 / np.log2(3) + 1 / 2) / ideal_linear, rel=REL)
    exp_dcg = ((3 + 3 / np.log2(3)) / 2 + 1 / 2)
    assert ev.mean["ndcg@10"] == pytest.approx(exp_dcg / (3 + 1 / np.log2(3)), rel=REL)
    assert ev.mean["P_1"] == 1.0
    assert ev.mean["p@1"] == 0.5
    y, s = np.array([0, 2, 1.0]), np.array([1, 1, 0.5])
    assert evaluate(y, s, qid=[1, 1, 1], metrics=["ndcg@10", "p@1"]).mean == pytest.approx(
        {"ndcg@10": ev.mean["ndcg@10"], "p@1": 0.5}, rel=REL)


def _tie_orders(docs: list, scores: dict) -> list[list]:
    """Every ranking of ``docs`` by decreasing score (each order of tied ones)."""
    import itertools

    levels = sorted(set(scores.values()), reverse=True)
    groups = [[d for d in docs if scores[d] == s] for s in levels]
    return [[d for group in pick for d in group]
            for pick in itertools.product(*(itertools.permutations(g) for g in groups))]


def _distinct(ranking: list) -> dict:
    """A run of one query ranked as ``ranking``, scores without ties."""
    return {d: float(len(ranking) - i) for i, d in enumerate(ranking)}


def test_evaluate_run_tie_policies_equal_brute_force():
    """In evaluate_run (TREC mode: unjudged documents, judged ones the run
    missed), ``ties="average"`` is the mean over every order of tied
    documents, ``"stable"`` the run's order and ``"pessimistic"`` the least
    relevant first (trec_eval's order, decreasing document id, among equal
    levels), each computed with untied scores. Tolerance: a mean of up to 144
    orders, 1e-12."""
    rng = np.random.default_rng(7)
    specs = [m for m in get_metric_names()] + ["ndcg@3", "p@2", "map@3", "recall@2",
                                               "ndcg(gain='linear')@4", "err@3"]
    for trial in range(12):
        docs = [f"d{i}" for i in rng.permutation(7)[:int(rng.integers(3, 7))]]
        scores = {d: float(rng.integers(0, 3)) for d in docs}
        judged = {d: int(rng.integers(-1, 3)) for d in docs if rng.random() < 0.8}
        judged.update({"missed1": int(rng.integers(0, 3)), "missed2": 1})
        qrels = {"q": judged}
        got = {policy: evaluate_run(qrels, {"q": scores}, specs, ties=policy)
               for policy in ("average", "stable", "pessimistic")}
        orders = _tie_orders(docs, scores)
        each = [evaluate_run(qrels, {"q": _distinct(order)}, specs) for order in orders]
        level = {d: max(judged.get(d, 0), 0) for d in docs}
        pessimistic = sorted(docs, key=lambda d: (-scores[d], level[d],
                                                  [-b for b in d.encode()]))
        want = {"average": {key: np.mean([ev.mean[key] for ev in each]) for key in each[0].mean},
                "stable": evaluate_run(qrels, {"q": _distinct(sorted(
                    docs, key=lambda d: -scores[d]))}, specs).mean,  # (sorted is stable)
                "pessimistic": evaluate_run(qrels, {"q": _distinct(pessimistic)}, specs).mean}
        for policy, ev in got.items():
            for key, value in want[policy].items():
                assert ev.mean[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (
                    trial, policy, key)


def test_trec_lines_never_give_another_number_under_trec_eval_names(tmp_path, data):
    """--format trec prints trec_eval's names for trec_eval's measures only: a
    registry name that trec_eval prints for its own measure (map, bpref, ndcg)
    shows its tie policy, whatever else is asked."""
    qrels, run = _trec_files(tmp_path, data)
    out = _cli("evaluate", str(qrels), str(run), "-m", "P.5", "-m", "map", "-m", "bpref",
               "-m", "ndcg", "-m", "map_cut.3", "-m", "p@5", "--format", "trec")
    labels = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert labels == ["P_5", "map(ties='average')", "bpref(ties='average')",
                      "ndcg(ties='average')", "map_cut_3", "p@5"]
    trec = _cli("trec_eval", "-m", "map", "-m", "P.5", str(qrels), str(run))
    trec_map = float(next(line.split()[2] for line in trec.splitlines()
                          if line.split()[0] == "map"))
    values = {line.split("\t")[0].strip(): float(line.split("\t")[2])
              for line in out.splitlines()}
    # the data's tied scores make the two MAPs differ: the label tells them apart
    assert trec_map != pytest.approx(values["map(ties='average')"], abs=1e-4)
