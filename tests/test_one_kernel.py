"""One kernel per measure, one catalogue, metrics below trec (issue 26).

trec_eval's measures that a registry metric computes go through the registry's kernel in every
entry point (the drop-in, evaluate_run, evaluate on flat rows); the others are declared in the
registry's catalogue with the engine that computes them; nothing in ``sklearn_rank.metrics``
imports ``sklearn_rank.trec``.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

import sklearn_rank
from sklearn_rank.cli._app import main
from sklearn_rank.metrics import get_metric_names, parse_metric
from sklearn_rank.metrics._families.trec_eval.measures import KERNELS
from sklearn_rank.metrics._vocab.ir_measures import IRM_MEASURES
from sklearn_rank.metrics._vocab.registry import OTHER
from sklearn_rank.metrics._vocab.trec_eval_table import MEASURES, TWINS
from sklearn_rank.trec import evaluate_run, trec_eval

PACKAGE = Path(sklearn_rank.__file__).parent


def _imported(path: Path) -> set[str]:
    """The absolute names of the modules ``path`` imports (at any depth)."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                out.add(".".join(base + ([node.module] if node.module else [])))
            else:
                out.add(node.module)
    return out


def test_metrics_imports_nothing_from_trec_or_cli():
    upward = {str(path.relative_to(PACKAGE)): sorted(
                  name for name in _imported(path)
                  if name.startswith(("sklearn_rank.trec", "sklearn_rank.cli")))
              for path in (PACKAGE / "metrics").rglob("*.py")}
    assert {path: names for path, names in upward.items() if names} == {}


def test_catalogue_lists_every_vocabulary_once():
    assert get_metric_names("trec_eval") == sorted(MEASURES)
    assert get_metric_names("ir_measures") == sorted(IRM_MEASURES)
    assert len(get_metric_names()) == len(set(get_metric_names()))
    for (vocabulary, name), measure in OTHER.items():
        assert (measure.twin is None) != (measure.engine is None), (vocabulary, name)
        assert measure.summary, (vocabulary, name)
        if measure.twin is not None:  # a registry spec (a template of the cut-off)
            assert parse_metric(measure.twin.format(10)).name in get_metric_names()
        else:
            assert measure.engine in ("trec_eval", "ndeval", "ir_measures")


def test_each_trec_eval_measure_has_one_kernel():
    # A registry twin or a trec-engine kernel, never both: trec_eval's
    # parameters are the registry's (ndcg's gain pairs, set_F's beta).
    both = set(TWINS) & set(KERNELS)
    assert both == set()
    neither = set(MEASURES) - set(TWINS) - set(KERNELS)
    assert neither == {"runid", "num_q"}  # the run's tag and the number of queries


def _collection(seed: int):
    """Graded, negative and missing judgments, unjudged documents, tied scores,
    a judged query the run lacks and one without relevant documents."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(12):
        docs = [f"d{j}" for j in rng.choice(200, size=60, replace=False)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 0, 1, 1, 2, 3, 4, -1])) for d in docs[:30]}
        if i == 3:
            qrels["q3"] = {d: 0 for d in docs[:4]}
        if i != 5:
            run[f"q{i}"] = {d: float(rng.integers(0, 6)) / 4 for d in docs[10:10 + 25 + i]}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", [0, 1, 2])
def test_trec_eval_and_registry_give_the_same_doubles(seed, level):
    # One kernel: trec_eval's name and the registry's spec under
    # convention="trec_eval" are the same computation, so the same doubles
    # (exact equality is the contract here, not a tolerance).
    qrels, run = _collection(seed)
    pairs = {"map": "map", "ndcg": "ndcg", "set_F": "f1", "ndcg_cut_10": "ndcg@10",
             "P_5": "p@5", "recall_10": "recall@10", "map_cut_7": "map@7", "bpref": "bpref",
             "recip_rank": "mrr", "Rprec": "r_precision", "success_5": "hit_rate@5",
             "set_P": "p", "set_recall": "recall"}
    ours = trec_eval(qrels, run, ["map", "ndcg", "set_F", "ndcg_cut.10", "P.5", "recall.10",
                                  "map_cut.7", "bpref", "recip_rank", "Rprec", "success.5",
                                  "set_P", "set_recall"],
                     relevance_level=level, complete=True)
    registry = evaluate_run(qrels, run, list(pairs.values()), relevance_level=level,
                            complete=True, convention="trec_eval")
    assert list(registry.qids) == ours.qids
    for label, spec in pairs.items():
        np.testing.assert_array_equal(ours.per_query[label], registry.per_query[spec],
                                      err_msg=label)


def test_a_negative_relevance_level_counts_unjudged_documents_by_rank(tmp_path, capsys):
    # trec_eval 10.0 takes -l -1: its loops over ranks count an unjudged
    # document (code -1, or -2 for a negative qrels level) as relevant, its R
    # and set measures do not (the binary's bytes: tests/test_trec_eval_kernels.py)
    qrels, run = _collection(0)
    at = {level: trec_eval(qrels, run, ["P.5", "set_P", "num_rel"], relevance_level=level,
                           complete=True) for level in (-2, -1, 0)}
    assert (at[-2].per_query["P_5"] >= at[-1].per_query["P_5"]).all()
    assert (at[-1].per_query["P_5"] >= at[0].per_query["P_5"]).all()
    assert (at[-1].per_query["P_5"] > at[0].per_query["P_5"]).any()
    for level in (-2, -1):
        np.testing.assert_array_equal(at[level].per_query["set_P"], at[0].per_query["set_P"])
        np.testing.assert_array_equal(at[level].per_query["num_rel"],
                                      at[0].per_query["num_rel"])
    q_path, r_path = tmp_path / "qrels", tmp_path / "run"
    q_path.write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in qrels.items()
                              for d, v in docs.items()))
    r_path.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in run.items()
                              for d, s in docs.items()))
    assert main(["trec_eval", "-c", "-l", "-1", "-m", "P.5", str(q_path), str(r_path)]) == 0
    assert capsys.readouterr().out.startswith("P_5 ")


def test_trec_mode_kernels_do_trec_evals_arithmetic():
    # The registry kernels in trec_eval's mode add n / r and gain / log2(r + 1)
    # rank after rank, and F is 2 P R / (P + R), as trec_eval's C does: the
    # doubles are its own (these labels are chosen so that n * (1 / r), a
    # pairwise sum with log(2) / log1p(r), or 2 hits / (n + R) differ).
    binary = [1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0]
    graded = [2, 1, 3, 3, 2, 2, 2, 2, 2, 0, 3, 2]
    docs = [f"d{i:02d}" for i in range(12)]
    run = {"q": {d: float(12 - i) for i, d in enumerate(docs)}}
    found = trec_eval({"q": dict(zip(docs, binary, strict=True))}, run, ["map", "set_F"])
    r = sum(binary)
    total = 0.0
    for n, rank in enumerate([i + 1 for i, b in enumerate(binary) if b], start=1):
        total += n / rank
    assert found.per_query["map"][0] == total / r
    precision, recall = r / 12, r / r
    assert found.per_query["set_F"][0] == 2.0 * precision * recall / (precision + recall)

    found = trec_eval({"q": dict(zip(docs, graded, strict=True))}, run, ["ndcg"])
    dcg = idcg = 0.0
    for i, (g, ideal) in enumerate(zip(graded, sorted(graded, reverse=True), strict=True)):
        dcg += g / math.log2(i + 2)
        idcg += ideal / math.log2(i + 2)
    assert found.per_query["ndcg"][0] == dcg / idcg
    # (the other arithmetic gives other doubles on these labels)
    product = sum(n * (1.0 / rank) for n, rank in enumerate(
        [i + 1 for i, b in enumerate(binary) if b], start=1))
    assert product != total
