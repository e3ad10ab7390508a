"""
Early stopping inside cross-validation
======================================

Early stopping on the exact metric the search selects on.
:func:`~sklearn_rank.metrics.lightgbm_eval_metric` reports NDCG@10 with this
package's semantics (here: linear gain, ties averaged) from inside LightGBM, so
early stopping and model selection agree. The validation set is routed to
every fold's fit with its query ids.

Run: python examples/early_stopping.py
"""

import matplotlib.pyplot as plt
import sklearn
from lightgbm import LGBMRanker
from sklearn.model_selection import GridSearchCV

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import lightgbm_eval_metric, make_ranking_scorer
from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit

spec = "ndcg(gain='linear')@10"
X, y, qid = make_ranking(n_queries=250, random_state=4)
fit_rows, valid_rows = next(QueryShuffleSplit(1, test_size=0.2, random_state=0)
                            .split(X, y, qid=qid))

with sklearn.config_context(enable_metadata_routing=True):
    # metric="None": LightGBM's own NDCG is off, so early stopping watches ours.
    ranker = QueryRanker(LGBMRanker(n_estimators=500, early_stopping_round=20,
                                    metric="None", n_jobs=1, verbose=-1))
    ranker.set_fit_request(eval_set=True, eval_qid=True, eval_metric=True)
    search = GridSearchCV(ranker, {"estimator__num_leaves": [7, 31]}, cv=QueryKFold(4),
                          scoring=make_ranking_scorer(spec))
    search.fit(X[fit_rows], y[fit_rows], qid=qid[fit_rows],
               eval_set=[(X[valid_rows], y[valid_rows])], eval_qid=[qid[valid_rows]],
               eval_metric=lightgbm_eval_metric(spec))

best = search.best_estimator_.estimator_
print(f"best parameters: {search.best_params_}; cross-validated {spec}: "
      f"{search.best_score_:.4f}")
print(f"the refitted model stopped at iteration {best.best_iteration_} of 500, "
      f"validation {spec} = {best.best_score_['valid_0'][spec]:.4f}")

# %%
# The refitted model's validation NDCG@10 after each boosting round: training
# stops 20 rounds after the best one.
curve = best.evals_result_["valid_0"][spec]
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.plot(range(1, len(curve) + 1), curve)
ax.axvline(best.best_iteration_, color="0.5", linestyle="--", label="best iteration")
ax.set(xlabel="boosting round", ylabel=f"validation {spec}")
ax.legend()
plt.show()
