"""
Cross-validate and tune an XGBRanker
====================================

XGBoost's ``XGBRanker`` cross-validated and tuned on query-keeping folds,
scored both by this package's NDCG@10 and by XGBoost's own meaning of it
(``convention="xgboost"``: ties in input order, queries without relevant
documents score 1).

Run: python examples/xgboost_ranker.py   (needs xgboost: pip install "sklearn-rank[xgboost]")
"""

import matplotlib.pyplot as plt
import numpy as np
import sklearn
from sklearn.model_selection import RandomizedSearchCV
from xgboost import XGBRanker

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer
from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

X, y, qid = make_ranking(n_queries=150, random_state=1)

# %%
# One call: routing is enabled only inside, the bare XGBRanker is wrapped in QueryRanker.
scores = cross_validate_ranker(
    XGBRanker(n_estimators=50, tree_method="hist", n_jobs=1), X, y, qid=qid,
    scoring=["ndcg@10", "ndcg(convention='xgboost')@10"], cv=5)
for name in ("test_ndcg@10", "test_ndcg(convention='xgboost')@10"):
    print(f"{name}: {scores[name].mean():.4f} ± {scores[name].std():.4f}")

# %%
# A search, with XGBoost's own meaning of NDCG@10 (stable ties, empty queries score 1).
with sklearn.config_context(enable_metadata_routing=True):
    search = RandomizedSearchCV(
        QueryRanker(XGBRanker(n_estimators=50, tree_method="hist", n_jobs=1)),
        {"estimator__max_depth": [3, 4, 6], "estimator__learning_rate": [0.05, 0.1, 0.3]},
        n_iter=4, random_state=0, cv=QueryKFold(4),
        scoring=make_ranking_scorer("ndcg@10", convention="xgboost"),
    ).fit(X, y, qid=qid)
print("best parameters:", search.best_params_, f"score {search.best_score_:.4f}")

# %%
# Each fold's NDCG@10 under both meanings: XGBoost's scores a query without a
# relevant document 1 instead of 0 (and breaks ties in input order), which
# lifts the folds that hold such queries.
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
folds = np.arange(1, len(scores["test_ndcg@10"]) + 1)
for name, label in (("test_ndcg@10", "ndcg@10 (this package)"),
                    ("test_ndcg(convention='xgboost')@10", "convention='xgboost'")):
    ax.plot(folds, scores[name], "o-", label=label)
ax.set(xticks=folds, xlabel="fold of cross_validate_ranker (cv=5)", ylabel="NDCG@10",
       title="XGBRanker, per fold")
ax.legend()
plt.show()
