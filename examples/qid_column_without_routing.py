"""
Tuning without metadata routing: a query-id column
==================================================

Without ``sklearn.set_config(enable_metadata_routing=True)``, the query ids
travel in a column of ``X``: a column of an array named by
``QueryRanker(qid_column=j)``, or a DataFrame column named ``qid``.

Run: python examples/qid_column_without_routing.py   (the DataFrame part needs pandas)
"""

import matplotlib.pyplot as plt
import numpy as np
from lightgbm import LGBMRanker
from sklearn.model_selection import GridSearchCV

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer
from sklearn_rank.model_selection import QueryKFold

X, y, qid = make_ranking(n_queries=150, shuffle=True, random_state=3)
grid = {"estimator__num_leaves": [7, 31]}
scorer = make_ranking_scorer("ndcg@10")

# %%
# 1. A NumPy array with the query id in column 0: QueryRanker(qid_column=0) drops it
#    before LightGBM sees X, and the scorer reads it from there. The splitter gets
#    the ids as scikit-learn's `groups`.
Xq = np.column_stack([qid, X])
ranker = QueryRanker(LGBMRanker(n_estimators=30, n_jobs=1, verbose=-1), qid_column=0)
search = GridSearchCV(ranker, grid, scoring=scorer, cv=QueryKFold(5))
search.fit(Xq, y, groups=qid)
print("array + qid_column:", search.best_params_, f"NDCG@10 {search.best_score_:.4f}")
by_array = search.cv_results_

# %%
# 2. A DataFrame with a column named "qid" (XGBoost's convention): found by name,
#    by QueryRanker, the scorers and QueryKFold alike.
try:
    import pandas as pd
except ImportError:
    raise SystemExit("pandas is not installed: skipping the DataFrame part") from None
df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
ranker = QueryRanker(LGBMRanker(n_estimators=30, n_jobs=1, verbose=-1))
search = GridSearchCV(ranker, grid, scoring=scorer, cv=QueryKFold(5))
search.fit(df, y)
print("DataFrame 'qid' column:", search.best_params_, f"NDCG@10 {search.best_score_:.4f}")

# %%
# Both ways give every candidate the same cross-validated NDCG@10: the same
# rows, folds and query ids, only carried differently.
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
at = np.arange(len(grid["estimator__num_leaves"]))
for shift, label, results in ((-0.2, "array + qid_column=0", by_array),
                              (0.2, "DataFrame 'qid' column", search.cv_results_)):
    ax.bar(at + shift, results["mean_test_score"], width=0.4, yerr=results["std_test_score"],
           capsize=4, label=label)
ax.set(xticks=at, xticklabels=[f"num_leaves={n}" for n in grid["estimator__num_leaves"]],
       ylabel="NDCG@10 (mean ± std over 5 folds)", ylim=(0, 1.15),
       title="GridSearchCV, no routing")
ax.legend(loc="upper center", ncols=2)
plt.show()
