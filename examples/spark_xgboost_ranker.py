"""
Tune SparkXGBRanker with CrossValidator on Spark
================================================

XGBoost's own Spark estimator, ``xgboost.spark.SparkXGBRanker``, tuned by Spark
ML's ``CrossValidator`` on folds that keep each query whole
(:func:`sklearn_rank.spark.query_folds`) and scored by this package's exact
NDCG@10 (:class:`sklearn_rank.spark.RankingEvaluator`); the tuned model is then
scored on held-out queries with several metrics at once
(:func:`sklearn_rank.spark.evaluate`).

Spark's ``CrossValidator`` splits rows at random unless it is given a fold
column, so without ``query_folds`` one query's documents would sit in training
and validation at once. ``SparkXGBRanker`` needs the query ids (``qid_col``)
and the features as one vector column; it trains each XGBoost worker on one
partition's rows, so ``force_repartition=True`` makes it range-partition the
rows by query first (each query whole in one worker) — see
:ref:`spark-xgboost-ranker` in the user guide.

Needs the spark and xgboost extras: pip install "sklearn-rank[spark,xgboost]",
a Java runtime 17 or newer, and matplotlib for the figure.
Run: python examples/spark_xgboost_ranker.py

The documentation build does not run this example: it starts a Spark JVM and
trains seven XGBoost models through Spark, one to two minutes on a busy 2-core
machine (most of it starting Spark and its Python workers); the test suite runs
it (tests/test_spark_search.py, which also recomputes every fold's score in
memory). Its output and figure, from one run, are at the end of this page.
"""

# sphinx_gallery_thumbnail_path = "_static/spark_xgboost_ranker.png"

import warnings

import matplotlib.pyplot as plt
import pandas as pd
from pyspark.ml.feature import VectorAssembler
from pyspark.ml.tuning import CrossValidator, ParamGridBuilder
from xgboost.spark import SparkXGBRanker

from sklearn_rank.datasets import make_ranking
from sklearn_rank.spark import RankingEvaluator, evaluate, get_session, query_folds

# XGBoost's Spark code converts with pandas, and PySpark warns on every
# conversion that it does not fully support pandas 3.
warnings.filterwarnings("ignore", message="PySpark does not yet fully support")
# The running session if there is one, else a local one on two cores.
spark = get_session("local[2]", config={"spark.ui.enabled": "false",
                                        "spark.ui.showConsoleProgress": "false",
                                        "spark.sql.shuffle.partitions": "4"})
spark.sparkContext.setLogLevel("ERROR")

# %%
# The data: 120 generated queries, 90 to tune on and 30 held out, with the
# features assembled into the one vector column SparkXGBRanker reads.
X, y, qid = make_ranking(n_queries=120, random_state=0)
features = [f"f{j}" for j in range(X.shape[1])]
rows = pd.DataFrame(X, columns=features).assign(qid=qid, label=y)
assemble = VectorAssembler(inputCols=features, outputCol="features")
df = assemble.transform(spark.createDataFrame(rows)).select("qid", "label", "features")
train, test = df.filter("qid < 90"), df.filter("qid >= 90")

# %%
# Folds of whole queries, balanced by rows: a column ``fold`` (0, 1, 2) for
# ``CrossValidator(foldCol="fold")``. Cached: every fit reads the same rows.
train = query_folds(train, 3, seed=0).cache()

# %%
# The search: two depths of tree, each fitted on two folds and scored on the
# third, two fits at a time (``parallelism=2``, one per core). One XGBoost
# worker with one thread (``spark.task.cpus``) and a seed make the fits
# deterministic; ``force_repartition=True`` keeps each query in one worker's
# partition whatever the number of workers.
ranker = SparkXGBRanker(qid_col="qid", label_col="label", features_col="features",
                        num_workers=1, force_repartition=True, n_estimators=20,
                        learning_rate=0.3, tree_method="hist", random_state=0)
grid = ParamGridBuilder().addGrid(ranker.max_depth, [2, 5]).build()
evaluator = RankingEvaluator(metricName="ndcg@10", queryIdCol="qid", labelCol="label",
                             predictionCol="prediction")
cv = CrossValidator(estimator=ranker, estimatorParamMaps=grid, evaluator=evaluator,
                    numFolds=3, foldCol="fold", parallelism=2)
cv_model = cv.fit(train)
for params, mean, std in zip(grid, cv_model.avgMetrics, cv_model.stdMetrics, strict=True):
    depth = params[ranker.max_depth]
    print(f"max_depth={depth}: cross-validated ndcg@10 {mean:.4f} ± {std:.4f}")
best = max(range(len(grid)), key=lambda i: cv_model.avgMetrics[i])
print(f"best parameters: max_depth={grid[best][ranker.max_depth]}, "
      f"score {cv_model.avgMetrics[best]:.4f}")

# %%
# The model refitted on all 90 queries, scored on the 30 held-out ones:
# several metrics per query, computed on the executors, the same
# ``Evaluation`` as in memory.
scored = cv_model.transform(test)
ev = evaluate(scored, ["ndcg@10", "map", "mrr"], score_col="prediction")
print("held-out " + ", ".join(f"{name} {value:.4f}" for name, value in ev.mean.items())
      + f" over {ev.n_queries} queries")

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
depths = [str(params[ranker.max_depth]) for params in grid]
ax.errorbar(depths, cv_model.avgMetrics, yerr=cv_model.stdMetrics, fmt="o", capsize=4,
            label="cross-validated (3 query folds)")
ax.plot([depths[best]], [ev.mean["ndcg@10"]], "s", color="C1",
        label="refitted, on 30 held-out queries")
ax.set(xlabel="max_depth", ylabel="NDCG@10", title="SparkXGBRanker tuned by CrossValidator")
ax.legend()
plt.show()

# %%
# Output
# ------
#
# The documentation build does not run this example (see above), so here is
# what it printed and drew in one run (XGBoost 3.2.0, PySpark 4.3.0, Java 17,
# 2 busy cores). One worker, one thread and a seed make the fits deterministic:
# another run prints the same scores.
#
# Output of one run:
#
# .. code-block:: text
#
#     max_depth=2: cross-validated ndcg@10 0.5630 ± 0.0223
#     max_depth=5: cross-validated ndcg@10 0.6012 ± 0.0219
#     best parameters: max_depth=5, score 0.6012
#     held-out ndcg@10 0.6233, map 0.7361, mrr 0.8669 over 30 queries
#
# .. image:: /_static/spark_xgboost_ranker.png
#    :alt: Cross-validated NDCG@10 of the two depths (with their spread over the
#          folds) and the refitted model's NDCG@10 on the held-out queries
