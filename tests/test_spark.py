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

# PySpark's conversions of the test frames warn about pandas >= 3
pytestmark = [pytest.mark.filterwarnings("ignore:PySpark does not yet fully support"),
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]

METRICS = ["ndcg@10", "map", "mrr", "p@3", "err@5", "dcg(gain='linear')@5", "ndcg_cut.10",
           "auc", "hit_rate@5", "rbp", "bpref"]


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


def test_a_query_spread_over_partitions_is_evaluated_whole(spark):
    """Rows dealt round robin to 5 partitions put most queries in several of them: the
    shuffle by query id brings each query's rows together before it is computed."""
    from pyspark.sql import functions as F

    frame = rows(5)
    df = spark.createDataFrame(frame).repartition(5)
    spread = (df.withColumn("part", F.spark_partition_id()).groupBy("qid")
              .agg(F.countDistinct("part").alias("n")).filter("n > 1").count())
    assert spread > frame["qid"].nunique() / 2
    assert_same(evaluate(df, ["ndcg@10", "map"]), in_memory(frame, ["ndcg@10", "map"]))


def test_bad_input_is_refused_naming_the_argument(spark):
    frame = rows(1, n_queries=8)
    df = spark.createDataFrame(frame)
    with pytest.raises(ValueError, match=r"no column 'relevance' \(label_col='relevance'\)"):
        evaluate(df, label_col="relevance")
    text = df.withColumn("label", df["label"].cast("string"))
    with pytest.raises(TypeError, match=r"label_col='label'.* holds string values.*cast"):
        evaluate(text)
    with pytest.raises(TypeError, match=r"qid_col='score'.* holds double values"):
        evaluate(df, qid_col="score", score_col="label", label_col="w")
    with pytest.raises(TypeError, match=r"weight_col='qid'"):
        evaluate(df.withColumn("qid", df["qid"].cast("string")), weight_col="qid")
    for options in ({"ties": "stable"}, {"convention": "lightgbm"}):
        with pytest.raises(ValueError, match=r"ties='stable'.*does not keep"):
            evaluate(df, ["ndcg@5"], **options)
    with pytest.raises(ValueError, match=r"'num_rel'.*trec_eval's own measures.*collected rows"):
        evaluate(df, ["map", "num_rel"])
    with pytest.raises(ValueError, match="ndgc"):
        evaluate(df, ["ndgc@10"])
    with pytest.raises(ValueError, match="no row to evaluate"):
        evaluate(df.filter("qid < 0"))


def test_bad_values_found_on_the_executors_are_raised_on_the_driver(spark):
    """Errors of the executors' rows come back as the error itself (no Spark or Py4J
    exception, no traceback), naming the column's argument."""
    frame = rows(2, n_queries=10)
    frame["score"] = frame["score"].astype(float)
    frame.loc[3, "score"] = np.inf  # (pandas' NaN would become a null)
    with pytest.raises(ValueError, match=r"^score_col='score' contains 1 NaN or inf") as info:
        evaluate(spark.createDataFrame(frame))
    assert type(info.value) is ValueError
    nulls = spark.createDataFrame(rows(2, n_queries=10)).selectExpr(
        "qid", "IF(score > 2, NULL, label) AS label", "score")
    with pytest.raises(ValueError, match=r"^label_col='label' has \d+ missing \(null\)"):
        evaluate(nulls)
    with pytest.raises(ValueError, match=r"has fewer than 2 documents"):
        short = spark.createDataFrame([("a", 1, .5), ("a", 0, .2), ("b", 1, .3)],
                                   ["qid", "label", "score"])
        evaluate(short, ["ndcg@5"], convention="sklearn")
    empty = rows(3, n_queries=10)
    with pytest.raises(ValueError, match=r"no relevant document.*empty='raise'"):
        evaluate(spark.createDataFrame(empty), ["map"], empty="raise")


# -------------------------------------------------------------------- evaluate_run


def trec_rows(seed=0, n_queries=30, int_ids=False):
    """Qrels and a run: judged documents the run misses, unjudged retrieved ones, run
    queries without judgments, judged queries the run lacks, tied scores."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(n_queries):
        docs = rng.choice(40, size=20, replace=False)
        qid = q * 11 + 1 if int_ids else f"q{q}"
        if q % 7 != 6:  # the run's queries 6, 13, ... are not judged
            for d in docs[:12]:
                qrels.append((qid, int(d) if int_ids else f"d{d}", int(rng.integers(0, 3))))
        if q % 9 != 8:  # queries 8, 17, ... are judged but not retrieved
            for d in docs[4:]:
                run.append((qid, int(d) if int_ids else f"d{d}", float(rng.integers(0, 5))))
    qrels = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    run = pd.DataFrame(run, columns=["qid", "docno", "score"])
    return qrels.sample(frac=1, random_state=seed), run.sample(frac=1, random_state=seed)


RUN_METRICS = ["map", "P.5", "ndcg_cut.10", "recip_rank", "ndcg@10", "bpref", "recall.10",
               "nDCG@10", "err@10"]


@pytest.mark.parametrize(("int_ids", "options"), [
    (False, {}),
    (True, {"complete": True, "judged_only": True, "relevance_level": 2}),
    (False, {"convention": "trec_eval", "empty": "skip"}),
])
def test_evaluate_run_equals_trec_evaluate_run(spark, int_ids, options):
    from sklearn_rank.spark import evaluate_run
    from sklearn_rank.trec import evaluate_run as evaluate_run_in_memory

    qrels, run = trec_rows(3, int_ids=int_ids)
    if int_ids:  # ir_measures' layout
        qrels = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    ev = evaluate_run(spark.createDataFrame(qrels).repartition(3),
                      spark.createDataFrame(run).repartition(2), RUN_METRICS, **options)
    ref = evaluate_run_in_memory(qrels, run, RUN_METRICS, **options)
    assert ev.n_queries == ref.n_queries > 20
    assert_same(ev, ref)


def test_evaluate_run_refuses_what_it_does_not_distribute(spark):
    from sklearn_rank.spark import evaluate_run

    qrels, run = (spark.createDataFrame(f) for f in trec_rows(1, n_queries=4))
    with pytest.raises(ValueError, match=r"'num_ret'.*not distributed on Spark"):
        evaluate_run(qrels, run, ["map", "num_ret"])
    with pytest.raises(ValueError, match=r"ties='stable'"):
        evaluate_run(qrels, run, ["ndcg@10"], ties="stable")
    with pytest.raises(ValueError, match=r"qrels_df must have the columns qid, docno, label or"):
        evaluate_run(qrels.withColumnRenamed("label", "rel"), run)
    with pytest.raises(TypeError, match=r"run_df's 'score'.* holds string values"):
        evaluate_run(qrels, run.withColumn("score", run["score"].cast("string")))
    with pytest.raises(ValueError, match=r"[Ll]evel.*1\.5|1\.5.*integer"):
        evaluate_run(qrels.withColumn("label", qrels["label"] * 1.5), run)


def test_a_metric_registered_in_the_driver_is_computed_on_the_executors(spark):
    """register_metric in the driver: the executors' processes get its definition with
    the plan, and a later definition under the same name replaces it there too."""
    from sklearn_rank.metrics import register_metric

    frame = rows(6, n_queries=20)
    df = spark.createDataFrame(frame)
    for power in (1.0, 2.0):  # the second definition must not meet the first's values

        def top_gain(labels, power=power):
            return float((labels[:2] ** power).sum())

        with register_metric("spark_top_gain", top_gain, additive=True):
            ev = evaluate(df, ["spark_top_gain@2", "ndcg@2"])
            assert_same(ev, in_memory(frame, ["spark_top_gain@2", "ndcg@2"]))
