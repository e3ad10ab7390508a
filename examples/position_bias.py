"""
Learn to rank from clicks: position bias and inverse propensity weighting
=========================================================================

Clicks are biased labels: users examine the top of a list more than its
bottom, so the documents a production ranker put on top collect the clicks
whatever their relevance. Here click logs are simulated with a position-based
click model (a document at position ``p`` is examined with probability
``1 / p``, then clicked with a probability that grows with its true
relevance), from a logging ranker that leans on a feature unrelated to
relevance. ``XGBRanker(lambdarank_unbiased=True)`` learns on the clicks with
the display positions (``QueryRanker.fit(..., position=...)``) and is compared
with the same model trained on the clicks alone.

Both are scored on the true relevance (known here) and, as one would in
production, on held-out clicks reweighted by the inverse of their examination
propensity (:func:`~sklearn_rank.metrics.ipw_labels`): with linear gain, the
DCG of those labels is an unbiased estimate of the DCG on the true relevance.

Run: python examples/position_bias.py   (needs xgboost: pip install "sklearn-rank[xgboost]")
"""

import matplotlib.pyplot as plt
import numpy as np
from xgboost import XGBRanker

from sklearn_rank.datasets import make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import evaluate, ipw_labels

rng = np.random.default_rng(0)
N_DOCS, SESSIONS, TEST_SESSIONS, ETA = 10, 8, 10, 1.0
X, grade, qid = make_ranking(n_queries=400, n_docs=N_DOCS, random_state=0)
relevance = grade / grade.max()  # probability of a click once examined

# %%
# The logging ranker: partly relevance, mostly feature 19, which is pure noise
# (``make_ranking``'s relevance depends on its first 8 features only).
# Each query is shown SESSIONS times; every list shown is its own query (a
# session id), its documents at positions 1..10.
logging_score = relevance + 5 * X[:, 19] + rng.normal(scale=0.3, size=len(qid))
position = np.empty(len(qid), dtype=int)
for q in np.unique(qid):
    rows = np.flatnonzero(qid == q)
    position[rows[np.argsort(-logging_score[rows], kind="stable")]] = np.arange(1, N_DOCS + 1)
propensity = 1.0 / position**ETA  # examination probability at each row's position


def click_log(rows, sessions):
    """Rows, session ids, positions and clicks of ``sessions`` showings of each query."""
    rows = np.tile(rows, sessions)
    session = qid[rows] * sessions + np.repeat(np.arange(sessions), len(rows) // sessions)
    clicks = (rng.random(len(rows)) < propensity[rows] * relevance[rows]).astype(int)
    return rows, session, position[rows], clicks


train_q, test_q = np.arange(300), np.arange(300, 400)
train_rows = np.flatnonzero(np.isin(qid, train_q))
test_rows = np.flatnonzero(np.isin(qid, test_q))
rows, session, shown_at, clicks = click_log(train_rows, SESSIONS)
print(f"{len(rows)} training rows, {clicks.sum()} clicks, "
      f"{clicks[shown_at == 1].mean():.2f} click rate at position 1, "
      f"{clicks[shown_at == 10].mean():.3f} at position 10")

# %%
# Train on clicks: with positions (position-debiased lambdarank) and without.
params = dict(n_estimators=60, max_depth=4, learning_rate=0.2, tree_method="hist",
              n_jobs=1, random_state=0)
debiased = QueryRanker(XGBRanker(lambdarank_unbiased=True, **params))
debiased.fit(X[rows], clicks, qid=session, position=shown_at)
naive = QueryRanker(XGBRanker(**params)).fit(X[rows], clicks, qid=session)

# %%
# Score on the test queries: NDCG@10 on the true grades, the DCG@10 (linear
# gain) on the true click relevance, and its IPW estimate from one held-out
# click log (clicks / propensity of the position they were shown at).
t_rows, t_session, t_shown, t_clicks = click_log(test_rows, TEST_SESSIONS)
labels = ipw_labels(t_clicks, propensity[t_rows])
dcg = "dcg(gain='linear')@10"
per_session, true_ndcg = {}, {}
for name, model in [("clicks with positions", debiased), ("clicks only", naive)]:
    scores = model.predict(X[test_rows])
    truth = evaluate(grade[test_rows], scores, qid=qid[test_rows], metrics=["ndcg@10"])
    true_dcg = evaluate(relevance[test_rows], scores, qid=qid[test_rows], metrics=[dcg])
    ipw = evaluate(labels, model.predict(X[t_rows]), qid=t_session, metrics=[dcg])
    per_session[name] = ipw.per_query[dcg]
    print(f"{name:>22}: true ndcg@10 {truth.mean['ndcg@10']:.4f}, "
          f"true {dcg} {true_dcg.mean[dcg]:.4f}, IPW estimate {ipw.mean[dcg]:.4f}")
    true_ndcg[name] = truth.mean["ndcg@10"]
diff = per_session["clicks with positions"] - per_session["clicks only"]
print(f"IPW estimate of the gain from positions: {diff.mean():+.4f} "
      f"± {diff.std(ddof=1) / np.sqrt(len(diff)):.4f} (standard error, "
      f"{len(diff)} held-out sessions)")

fig, ax = plt.subplots(figsize=(5, 3))
ax.barh(list(true_ndcg), list(true_ndcg.values()), color=["tab:green", "tab:gray"])
ax.set_xlim(min(true_ndcg.values()) - 0.05, max(true_ndcg.values()) + 0.02)
ax.set_xlabel("NDCG@10 on the true grades (held-out queries)")
ax.set_title("Trained on clicks")
fig.tight_layout()
plt.show()

# %%
# The model trained with positions ranks better on the true relevance; the
# IPW estimate, computed from clicks alone, is unbiased but noisy: its
# standard error says how far to trust the difference. In a search, score the
# candidates on held-out clicks with
# ``make_click_scorer("dcg(gain='linear')@10", propensity=...)``: under
# metadata routing, ``search.fit(X, clicks, qid=session, position=shown_at)``
# hands the positions both to ``QueryRanker.fit`` and to the scorer.
