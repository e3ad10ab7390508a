"""
Tune an LGBMRanker with GridSearchCV
====================================

A grid search over LightGBM's ``LGBMRanker``, scored by per-query NDCG@10 on
folds that keep every query whole. Query ids reach the splitter
(:class:`~sklearn_rank.model_selection.QueryKFold`), the ranker
(:class:`~sklearn_rank.estimators.QueryRanker`) and the scorer through
scikit-learn's metadata routing. The two metrics come from one scorer
(:func:`~sklearn_rank.model_selection.ranking_scoring`) that predicts each
fold once.

Run: python examples/lightgbm_grid_search.py
"""

import matplotlib.pyplot as plt
import numpy as np
import sklearn
from lightgbm import LGBMRanker
from sklearn.model_selection import GridSearchCV

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import evaluate
from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit, ranking_scoring

sklearn.set_config(enable_metadata_routing=True)

X, y, qid = make_ranking(n_queries=200, shuffle=True, random_state=0)
train, test = next(QueryShuffleSplit(n_splits=1, test_size=0.2, random_state=0)
                   .split(X, y, qid=qid))

search = GridSearchCV(
    QueryRanker(LGBMRanker(n_estimators=50, n_jobs=1, verbose=-1)),
    {"estimator__num_leaves": [7, 31], "estimator__learning_rate": [0.05, 0.1]},
    scoring=ranking_scoring({"ndcg@10": "ndcg@10",
                             "ndcg_linear@10": "ndcg(gain='linear')@10"}),
    refit="ndcg@10",
    cv=QueryKFold(5),
)
search.fit(X[train], y[train], qid=qid[train])
print("best parameters:", search.best_params_)
print(f"cross-validated NDCG@10: {search.best_score_:.4f}")

ev = evaluate(y[test], search.predict(X[test]), qid=qid[test],
              metrics=["ndcg@10", "ndcg(gain='linear')@10"])
print(ev)

# %%
# Every candidate's cross-validated NDCG@10, with the spread over the 5 folds.
results = search.cv_results_
labels = [f"{p['estimator__num_leaves']} leaves\nrate {p['estimator__learning_rate']}"
          for p in results["params"]]
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.errorbar(np.arange(len(labels)), results["mean_test_ndcg@10"],
            yerr=results["std_test_ndcg@10"], fmt="o", capsize=4)
ax.set(xticks=np.arange(len(labels)), xticklabels=labels, ylabel="NDCG@10 (mean ± std)",
       title="GridSearchCV candidates, QueryKFold(5)")
plt.show()
