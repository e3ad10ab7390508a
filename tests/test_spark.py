"""sklearn_rank.spark: Spark DataFrames evaluated exactly as in memory.

One local Spark session for the run (``spark``, the root conftest's fixture).
Every result is compared with the in-memory evaluation of the same rows,
collected: the same engine computes both, so values and means are equal.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_rank.metrics import evaluate as evaluate_in_memory
from sklearn_rank.spark import evaluate

# PySpark warns that pandas >= 3 is not fully supported when it converts the test frames
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support:FutureWarning")

METRICS = ["ndcg@10", "map", "mrr", "p@3", "err@5", "dcg(gain='linear')@5", "ndcg_cut.10"]


def rows(seed=0, n_queries=60, qid_kind="int"):
    """Generated rows: queries of 1 to 25 documents, tied scores (few distinct
    values), queries without a relevant document, positive weights."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 26, n_queries)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, sizes)
    label = rng.integers(0, 4, qid.shape[0]) * (rng.random(qid.shape[0]) < .6)
    empty = np.isin(qid, np.unique(qid)[::5])  # a fifth of the queries: all labels 0
    label[empty] = 0
    frame = pd.DataFrame({"qid": qid, "label": label.astype(np.int64),
                          "score": rng.integers(0, 6, qid.shape[0]) / 2,
                          "w": rng.integers(1, 5, qid.shape[0]).astype(float)})
    if qid_kind == "str":
        frame["qid"] = "q" + frame["qid"].astype(str)
    return frame.sample(frac=1, random_state=seed).reset_index(drop=True)  # rows shuffled


def in_memory(frame, metrics, weight=None, **options):
    return evaluate_in_memory(frame["label"].to_numpy(), frame["score"].to_numpy(),
                              qid=frame["qid"].to_numpy(), metrics=metrics,
                              sample_weight=None if weight is None else frame[weight].to_numpy(),
                              **options)


def assert_same(ev, ref):
    """Equal evaluations: per-query values to 1e-12 and exactly (the same engine)."""
    assert list(ev.qids) == list(ref.qids)
    for key in ref.per_query:
        np.testing.assert_allclose(ev.per_query[key], ref.per_query[key], rtol=1e-12)
        assert ev.mean[key] == pytest.approx(ref.mean[key], rel=1e-12, nan_ok=True)
        assert ev.n_empty[key] == ref.n_empty[key]
    assert ev == ref


@pytest.mark.parametrize(("qid_kind", "partitions"), [("int", 1), ("str", 3), ("int", 7)])
def test_evaluate_equals_in_memory(spark, qid_kind, partitions):
    frame = rows(partitions, qid_kind=qid_kind)
    df = spark.createDataFrame(frame).repartition(partitions)
    ev = evaluate(df, METRICS)
    ref = in_memory(frame, METRICS)
    assert ref.n_empty["map"] > 0 and ev.n_queries == frame["qid"].nunique()
    assert_same(ev, ref)


def test_weights_and_empty_policies(spark):
    frame = rows(11)
    df = spark.createDataFrame(frame)
    for options in ({}, {"empty": "skip"}, {"empty": "one", "ties": "pessimistic"}):
        ev = evaluate(df, ["ndcg@5", "map", "gauc"], weight_col="w", **options)
        assert_same(ev, in_memory(frame, ["ndcg@5", "map", "gauc"], "w", **options))
