"""A search over XGBoost's Spark ranker (issue 29, item 4), checked independently.

``examples/spark_xgboost_ranker.py`` runs here, in this process, on the test
session's Spark (``spark``: its ``get_session`` returns the running session),
so the test checks the very code the gallery shows: ``SparkXGBRanker`` tuned by
``CrossValidator`` with ``RankingEvaluator("ndcg@10")`` over ``query_folds``.
Then every fold's score is recomputed without Spark ML's machinery: for each
parameter map and fold, the ranker is fitted on the other folds, predicts the
fold, and the collected predictions are scored by the in-memory
``sklearn_rank.metrics.evaluate``; the fold means must equal
``cv_model.avgMetrics``. XGBoost is deterministic here (one worker, one
thread: ``spark.task.cpus`` is 1, a seed), so the refitted models are the
search's.
"""

import io
import itertools
import re
import runpy
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate

EXAMPLE = Path(__file__).parents[1] / "examples" / "spark_xgboost_ranker.py"
# what the example must print (tests/test_examples.py's convention)
EXPECTED = r"^best parameters: max_depth=\d, score [01]\.\d{4}$"


@pytest.fixture(scope="module")
def search(spark):
    """The example's top-level names after it ran, and what it printed."""
    import matplotlib

    matplotlib.use("Agg")  # the example ends with plt.show()
    import matplotlib.pyplot as plt

    out = io.StringIO()
    with redirect_stdout(out):
        names = runpy.run_path(str(EXAMPLE), run_name="__main__")
    plt.close("all")
    names["stdout"] = out.getvalue()
    return names


def test_example_prints_the_search_and_held_out_scores(search):
    assert re.search(EXPECTED, search["stdout"], re.M), search["stdout"]
    assert re.search(r"^held-out ndcg@10 [01]\.\d{4}, map [01]\.\d{4}, mrr [01]\.\d{4} "
                     r"over 30 queries$", search["stdout"], re.M), search["stdout"]


def test_folds_keep_each_query_whole(search):
    from pyspark.sql import functions as F

    train = search["train"]
    folds = train.groupBy("qid").agg(F.countDistinct("fold").alias("n"),
                                     F.min("fold").alias("fold")).toPandas()
    assert len(folds) == 90  # every training query has a fold
    assert (folds["n"] == 1).all()  # no query in two folds
    assert sorted(folds["fold"].unique()) == [0, 1, 2]


def test_fold_scores_recomputed_in_memory_equal_cross_validator(search):
    train, ranker, grid = search["train"], search["ranker"], search["grid"]
    cv_model = search["cv_model"]
    assert len(cv_model.avgMetrics) == len(grid) == 2

    def fold_score(i: int, fold: int) -> float:
        model = ranker.fit(train.filter(f"fold != {fold}"), grid[i])
        scored = (model.transform(train.filter(f"fold = {fold}"))
                  .select("qid", "label", "prediction").toPandas())
        ev = evaluate(scored["label"].to_numpy(), scored["prediction"].to_numpy(),
                      qid=scored["qid"].to_numpy(), metrics=["ndcg@10"])
        assert ev.n_queries == scored["qid"].nunique() > 20
        return ev.mean["ndcg@10"]

    # two fits at a time, as the example's CrossValidator(parallelism=2)
    with ThreadPoolExecutor(2) as pool:
        scores = pool.map(fold_score, *zip(*itertools.product(range(len(grid)), range(3)),
                                           strict=True))
        recomputed = np.array(list(scores)).reshape(len(grid), 3)
    assert recomputed.mean(axis=1) == pytest.approx(cv_model.avgMetrics, rel=1e-9)
    assert recomputed.std(axis=1) == pytest.approx(cv_model.stdMetrics, rel=1e-6, abs=1e-12)
    # the search kept the better parameter map, and the scores tell them apart
    assert cv_model.avgMetrics[int(np.argmax(recomputed.mean(axis=1)))] == max(
        cv_model.avgMetrics)
    assert abs(cv_model.avgMetrics[0] - cv_model.avgMetrics[1]) > 1e-3
