"""
Distributed training and evaluation with Dask
=============================================

Distributed training and evaluation: ``lightgbm.dask.DaskLGBMRanker`` scored by
per-query NDCG@10 with :func:`sklearn_rank.dask.evaluate`.

Trains lightgbm.dask.DaskLGBMRanker on a Dask DataFrame partitioned by query
(each partition holds whole queries, sorted), for a few parameter settings,
and scores each on a held-out Dask DataFrame with sklearn_rank.dask.evaluate:
per-query NDCG@10 computed on the workers, averaged exactly on the client.
Distributed LightGBM training depends on which worker holds which partition,
so the models (and the scores printed) vary a little from run to run; the
evaluation of a given model is exact and deterministic.
Needs the dask extra: pip install "sklearn-rank[dask]" (and matplotlib for the figure).
Run: python examples/dask_lightgbm.py

The documentation build does not run this example: it starts a LocalCluster
of two worker processes and trains four distributed LightGBM models, about a
minute on a 2-core machine (the test suite runs it as a script,
tests/test_examples.py). Its output and figure, from one run, are at the end of
this page.
"""

# sphinx_gallery_thumbnail_path = "_static/dask_lightgbm.png"

import logging
import warnings

import dask.dataframe as dd
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster
from lightgbm.dask import DaskLGBMRanker

from sklearn_rank.dask import evaluate
from sklearn_rank.datasets import make_ranking
from sklearn_rank.model_selection import QueryShuffleSplit


def by_query(frame: pd.DataFrame, npartitions: int):
    """A Dask DataFrame whose partitions hold whole queries, sorted by qid."""
    return dd.from_pandas(frame.set_index("qid").sort_index(), npartitions=npartitions)


def main():
    # lightgbm.dask sets the threads from the workers' and says so for every fit.
    warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
    X, y, qid = make_ranking(n_queries=400, random_state=0)
    features = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=features).assign(label=y, qid=qid)
    train_rows, test_rows = next(QueryShuffleSplit(1, test_size=0.25, random_state=0)
                                 .split(X, y, qid=qid))

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        train = by_query(frame.iloc[train_rows], npartitions=4)
        test = by_query(frame.iloc[test_rows], npartitions=2)
        # LightGBM takes the query sizes of each partition, aligned with X.
        group = train.map_partitions(lambda part: part.groupby(level=0, sort=False).size(),
                                     meta=("size", "int64"))

        results = {}
        for num_leaves in (7, 31):
            for learning_rate in (0.05, 0.2):
                params = {"num_leaves": num_leaves, "learning_rate": learning_rate}
                model = DaskLGBMRanker(client=client, n_estimators=60, verbose=-1, **params)
                model.fit(train[features], train["label"], group=group)
                booster = model.to_local().booster_
                scored = test.map_partitions(lambda part, b=booster: part.assign(
                    score=b.predict(part[features], num_threads=1)))
                ev = evaluate(scored.reset_index(), metrics=["ndcg@10", "map"], aligned=True)
                results[num_leaves, learning_rate] = ev
                print(f"num_leaves={num_leaves:2d} learning_rate={learning_rate:.2f}: "
                      f"held-out ndcg@10 = {ev.mean['ndcg@10']:.4f}, "
                      f"map = {ev.mean['map']:.4f} over {ev.n_queries} queries")

    best = max(results, key=lambda key: results[key].mean["ndcg@10"])
    per_query = results[best].to_frame()["ndcg@10"]
    print(f"best parameters: num_leaves={best[0]}, learning_rate={best[1]}")
    print(f"per-query ndcg@10 of the best model: median {np.median(per_query):.4f}, "
          f"worst query {per_query.idxmin()} = {per_query.min():.4f}")

    fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    labels = [f"{leaves} leaves\nrate {rate}" for leaves, rate in results]
    ax.bar(labels, [ev.mean["ndcg@10"] for ev in results.values()], label="ndcg@10")
    ax.plot(labels, [ev.mean["map"] for ev in results.values()], "o", color="C1", label="map")
    ax.set(ylim=(0, 1.15), ylabel="held-out mean over queries",
           title=f"DaskLGBMRanker, {results[best].n_queries} held-out queries")
    ax.legend(loc="upper center", ncols=2)
    plt.show()


if __name__ == "__main__":  # the cluster starts worker processes
    main()

# %%
# Output
# ------
#
# The documentation build does not run this example (see above), so here is
# what it printed and drew in one run (LightGBM 4.7.0, Dask 2026.8.0, 2 busy cores; the
# workers' LightGBM network log lines left out). The models depend on which
# worker holds which partition, so another run prints slightly different scores.
#
# Output of one run:
#
# .. code-block:: text
#
#     num_leaves= 7 learning_rate=0.05: held-out ndcg@10 = 0.6380, map = 0.7296 over 103 queries
#     num_leaves= 7 learning_rate=0.20: held-out ndcg@10 = 0.6759, map = 0.7531 over 103 queries
#     num_leaves=31 learning_rate=0.05: held-out ndcg@10 = 0.6642, map = 0.7465 over 103 queries
#     num_leaves=31 learning_rate=0.20: held-out ndcg@10 = 0.6622, map = 0.7435 over 103 queries
#     best parameters: num_leaves=7, learning_rate=0.2
#     per-query ndcg@10 of the best model: median 0.7270, worst query 1 = 0.0000
#
# .. image:: /_static/dask_lightgbm.png
#    :alt: Held-out NDCG@10 (bars) and MAP (dots) of the four DaskLGBMRanker models
