"""sklearn_rank.spark with Spark ML: RankingEvaluator, query folds and model selection.

One local Spark session for the run (``spark``, the root conftest's fixture). The
CrossValidator's fold scores are recomputed independently: its sub-models'
predictions on each validation fold, collected and evaluated in memory.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_rank.metrics import evaluate as evaluate_in_memory
from sklearn_rank.spark import (
    RankingEvaluator,
    check_query_folds,
    get_session,
    query_folds,
)
from sklearn_rank.spark._folds import assign_folds
from sklearn_rank.spark._session import require_java

# PySpark's conversions of the test frames warn about pandas >= 3
pytestmark = [pytest.mark.filterwarnings("ignore:PySpark does not yet fully support"),
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]


def ranking_rows(seed=0, n_queries=40):
    """Queries of 2 to 30 documents with two features; labels follow the first feature."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 31, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    x = rng.normal(size=(qid.shape[0], 2))
    label = np.clip(np.round(1.2 * x[:, 0] + rng.normal(scale=.7, size=qid.shape[0]) + 1), 0, 3)
    return pd.DataFrame({"qid": "q" + pd.Series(qid).astype(str), "x0": x[:, 0], "x1": x[:, 1],
                         "label": label, "w": rng.integers(1, 4, qid.shape[0]).astype(float)})


# ------------------------------------------------------------------ the evaluator


def test_evaluator_params():
    evaluator = RankingEvaluator()
    assert (evaluator.getMetricName(), evaluator.getQueryIdCol(), evaluator.getLabelCol(),
            evaluator.getPredictionCol(), evaluator.getWeightCol()) == (
        "ndcg@10", "qid", "label", "prediction", None)
    evaluator.setParams(metricName="map", queryIdCol="query")
    evaluator.setLabelCol("rel").setPredictionCol("score").setWeightCol("w")
    assert (evaluator.getMetricName(), evaluator.getQueryIdCol(), evaluator.getLabelCol(),
            evaluator.getPredictionCol(), evaluator.getWeightCol()) == (
        "map", "query", "rel", "score", "w")
    copy = evaluator.copy({evaluator.metricName: "mrr@5"})
    assert copy.getMetricName() == "mrr@5" and evaluator.getMetricName() == "map"
    assert evaluator.isLargerBetter() and RankingEvaluator(metricName="P.10").isLargerBetter()
    with pytest.raises(ValueError, match="ndgc"):
        RankingEvaluator(metricName="ndgc@10")
    with pytest.raises(ValueError, match="one metric spec"):
        RankingEvaluator(metricName="P.5,10")
    with pytest.raises(TypeError, match="metricName must be one metric spec as a string"):
        RankingEvaluator().setMetricName(10)


def test_evaluator_scores_the_mean_and_persists(spark, tmp_path):
    frame = ranking_rows(1).rename(columns={"x0": "prediction"})
    df = spark.createDataFrame(frame)
    evaluator = RankingEvaluator(metricName="ndcg(gain='linear')@5", weightCol="w")
    ref = evaluate_in_memory(frame["label"], frame["prediction"], qid=frame["qid"],
                             metrics=["ndcg(gain='linear')@5"], sample_weight=frame["w"])
    assert evaluator.evaluate(df) == pytest.approx(ref.mean["ndcg(gain='linear')@5"],
                                                   rel=1e-12)
    assert evaluator.evaluate(df, {evaluator.weightCol: None}) == pytest.approx(
        evaluate_in_memory(frame["label"], frame["prediction"], qid=frame["qid"],
                           metrics=["ndcg(gain='linear')@5"]).mean["ndcg(gain='linear')@5"],
        rel=1e-12)
    path = str(tmp_path / "evaluator")
    evaluator.save(path)
    loaded = RankingEvaluator.load(path)
    assert type(loaded) is RankingEvaluator and loaded.uid == evaluator.uid
    assert {p.name: v for p, v in loaded.extractParamMap().items()} == {
        p.name: v for p, v in evaluator.extractParamMap().items()}
    assert loaded.getWeightCol() == "w"


# ------------------------------------------------------------------------ the folds


def test_assign_folds_balances_rows_and_follows_the_seed():
    counts = np.random.default_rng(0).integers(1, 50, 200)
    for k in (2, 3, 5):
        folds = assign_folds(counts, k, seed=0)
        rows = np.bincount(folds, weights=counts, minlength=k)
        assert rows.max() - rows.min() <= counts.max()
        assert set(folds) == set(range(k))
    assert np.array_equal(assign_folds(counts, 3, 7), assign_folds(counts, 3, 7))
    assert not np.array_equal(assign_folds(counts, 3, 7), assign_folds(counts, 3, 8))


def test_query_folds_keep_queries_whole(spark):
    frame = ranking_rows(2, n_queries=30)
    df = spark.createDataFrame(frame)
    folded = query_folds(df, 4, seed=3)
    out = folded.toPandas()
    assert len(out) == len(frame) and out["fold"].dtype.kind == "i"
    assert (out.groupby("qid")["fold"].nunique() == 1).all()  # no query in two folds
    rows = out["fold"].value_counts()
    assert sorted(rows.index) == [0, 1, 2, 3]
    assert rows.max() - rows.min() <= frame["qid"].value_counts().max()
    per_query = out.groupby("qid")["fold"].first()
    again = query_folds(df.repartition(3), 4, seed=3).toPandas().groupby("qid")["fold"].first()
    assert per_query.equals(again)  # the seed decides, not the partitioning
    check_query_folds(folded, "fold")
    with pytest.raises(ValueError, match=r"fold_col='fold' splits 1 query across folds "
                                         r"\(first: query 'q5', in folds \[0, 1\]\)"):
        check_query_folds(folded.selectExpr(
            "qid", "IF(qid = 'q5' AND x0 > 0, 1, IF(qid = 'q5', 0, fold)) AS fold"), "fold")
    with pytest.raises(ValueError, match="already has a column 'fold'"):
        query_folds(folded, 4)
    with pytest.raises(ValueError, match="num_folds=31 is more than the 30 queries"):
        query_folds(df, 31)


# --------------------------------------------------------------- model selection


def test_cross_validator_with_query_folds(spark, tmp_path):
    """CrossValidator(foldCol=...) over query folds scored by RankingEvaluator: each
    average metric is the mean over the folds of the sub-model's in-memory NDCG on its
    validation fold's collected predictions."""
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder

    frame = ranking_rows(4, n_queries=24)
    df = VectorAssembler(inputCols=["x0", "x1"], outputCol="features").transform(
        query_folds(spark.createDataFrame(frame), 3, seed=1)).cache()
    regression = LinearRegression(featuresCol="features", labelCol="label", solver="normal")
    grid = ParamGridBuilder().addGrid(regression.regParam, [0.0, 50.0]).build()
    evaluator = RankingEvaluator(metricName="ndcg@5")
    cv = CrossValidator(estimator=regression, estimatorParamMaps=grid, evaluator=evaluator,
                        foldCol="fold", collectSubModels=True, parallelism=1)
    model = cv.fit(df)
    recomputed = np.zeros(len(grid))
    for fold in range(3):
        validation = df.filter(df["fold"] == fold)
        for j in range(len(grid)):  # each sub-model's predictions, as a column p<j>
            validation = model.subModels[fold][j].transform(validation).withColumnRenamed(
                "prediction", f"p{j}")
        pred = validation.select("qid", "label", *(f"p{j}" for j in range(len(grid)))).toPandas()
        for j in range(len(grid)):
            recomputed[j] += evaluate_in_memory(pred["label"], pred[f"p{j}"], qid=pred["qid"],
                                                metrics=["ndcg@5"]).mean["ndcg@5"] / 3
    np.testing.assert_allclose(model.avgMetrics, recomputed, rtol=1e-12)
    assert model.bestModel.getRegParam() == grid[int(np.argmax(recomputed))][
        regression.regParam]
    df.unpersist()
    cv.save(str(tmp_path / "cv"))  # the evaluator is saved and loaded with its search
    loaded = CrossValidator.load(str(tmp_path / "cv")).getEvaluator()
    assert type(loaded) is RankingEvaluator and loaded.getMetricName() == "ndcg@5"


def test_train_validation_split_uses_the_evaluator(spark):
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression
    from pyspark.ml.tuning import ParamGridBuilder, TrainValidationSplit

    df = VectorAssembler(inputCols=["x0", "x1"], outputCol="features").transform(
        spark.createDataFrame(ranking_rows(5, n_queries=20)))
    regression = LinearRegression(featuresCol="features", labelCol="label", solver="normal")
    grid = ParamGridBuilder().addGrid(regression.regParam, [0.0, 1.0]).build()
    split = TrainValidationSplit(estimator=regression, estimatorParamMaps=grid, seed=0,
                                 evaluator=RankingEvaluator(metricName="map(threshold=2)"))
    model = split.fit(df)
    assert len(model.validationMetrics) == 2
    assert all(0 < m <= 1 for m in model.validationMetrics)


# ------------------------------------------------------------------- Java runtime


def _fake_java(folder, version):
    java = folder / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2020-01-01' >&2\n")
    java.chmod(0o755)
    return folder


@pytest.mark.parametrize(("version", "said"), [(None, "has no runnable bin/java"),
                                               ("11.0.2", "Java 11"), ("1.8.0_292", "Java 8")])
def test_a_missing_or_old_java_is_one_clear_error(tmp_path, monkeypatch, version, said):
    home = tmp_path if version is None else _fake_java(tmp_path, version)
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(RuntimeError, match=r"^Spark needs a Java runtime 17 or newer: .*"
                                           r"openjdk-17-jre-headless.*" + said):
        require_java()
    # get_session checks it before starting Spark (when no session is active)
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    with pytest.raises(RuntimeError, match="Spark needs a Java runtime 17 or newer"):
        get_session("local[1]")


def test_a_recent_java_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "21")))
    require_java()
