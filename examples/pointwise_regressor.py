"""Any regressor as a pointwise ranker, compared with LambdaMART on the same folds.

Run: python examples/pointwise_regressor.py
"""

from lightgbm import LGBMRanker
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge

from sklearn_rank.datasets import make_ranking
from sklearn_rank.model_selection import QueryKFold, cross_validate_ranker

X, y, qid = make_ranking(n_queries=200, random_state=2)
models = {
    "Ridge (pointwise)": Ridge(),
    "HistGradientBoostingRegressor (pointwise)": HistGradientBoostingRegressor(max_iter=50),
    "LGBMRanker (lambdarank)": LGBMRanker(n_estimators=50, verbose=-1),
}
for name, model in models.items():
    scores = cross_validate_ranker(model, X, y, qid=qid, cv=QueryKFold(5))
    print(f"{name:45s} NDCG@10 {scores['test_score'].mean():.4f} "
          f"± {scores['test_score'].std():.4f}")
