"""
Any regressor as a pointwise ranker
===================================

Any scikit-learn regressor works as a pointwise ranker (it learns the labels,
and its predictions rank each query's documents), compared here with
LambdaMART (LightGBM's ``LGBMRanker``) on the same query-keeping folds by
:func:`~sklearn_rank.model_selection.cross_validate_ranker`.

Run: python examples/pointwise_regressor.py
"""

import matplotlib.pyplot as plt
from lightgbm import LGBMRanker
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
from threadpoolctl import threadpool_limits

from sklearn_rank.datasets import make_ranking
from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

X, y, qid = make_ranking(n_queries=200, random_state=2)
models = {
    "Ridge (pointwise)": Ridge(),
    "HistGradientBoostingRegressor (pointwise)": HistGradientBoostingRegressor(max_iter=50),
    "LGBMRanker (lambdarank)": LGBMRanker(n_estimators=50, n_jobs=1, verbose=-1),
}
fold_scores = {}
# HistGradientBoostingRegressor has no n_jobs: it uses every core through
# OpenMP, which other processes on a busy machine slow down many times over.
# One thread is plenty for data this small.
with threadpool_limits(limits=1, user_api="openmp"):
    for name, model in models.items():
        scores = cross_validate_ranker(model, X, y, qid=qid, cv=QueryKFold(5))
        fold_scores[name] = scores["test_score"]
        print(f"{name:45s} NDCG@10 {scores['test_score'].mean():.4f} "
              f"± {scores['test_score'].std():.4f}")

# %%
# NDCG@10 of each of the 5 folds (every model sees the same folds).
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.boxplot(list(fold_scores.values()))
ax.set(xticks=range(1, len(fold_scores) + 1),
       xticklabels=[name.replace(" (", "\n(") for name in fold_scores],
       ylabel="NDCG@10 per fold")
plt.show()
