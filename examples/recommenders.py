"""
Comparing two recommenders: accuracy, coverage and novelty
==========================================================

Two recommenders on the same generated users: a matrix-factorisation-like
model that sees each user's taste through noise, and a baseline that
recommends the most popular items. Each user's training items are removed
from the lists before the top 10 is cut
(:func:`~sklearn_rank.recsys.evaluate_recommendations`); the per-user NDCG@10
values are compared with a paired test (:func:`~sklearn_rank.stats.compare`),
and the plot sets accuracy against what the lists cover of the catalog and how
novel their items are.

Run: python examples/recommenders.py
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_rank.recsys import evaluate_recommendations, top_k
from sklearn_rank.stats import compare

# %%
# Users, items and interactions
# -----------------------------
# 1,000 users and 500 items whose popularity falls as 1/rank. A user's taste
# is a vector; the items a user likes most (seen through Gumbel noise) are
# split: 10 for training, 5 held out for the test.
rng = np.random.default_rng(0)
n_users, n_items, dim = 1000, 500, 16
log_popularity = -np.log(np.arange(1, n_items + 1))
users, items = rng.normal(size=(n_users, dim)), rng.normal(size=(n_items, dim))
affinity = users @ items.T / np.sqrt(dim) + 1.5 * log_popularity
liked = np.argsort(-(affinity + rng.gumbel(size=affinity.shape)), axis=1)
train = pd.DataFrame({"user": np.repeat(np.arange(n_users), 10),
                      "item": liked[:, :10].ravel()})
test = pd.DataFrame({"user": np.repeat(np.arange(n_users), 5), "item": liked[:, 10:15].ravel()})

# %%
# Two recommenders, as recommendation frames
# -------------------------------------------
# :func:`~sklearn_rank.recsys.top_k` turns a users x items score matrix into
# (user, item, score) rows: each user's 10 best items once the training items
# are removed.
model_scores = affinity + rng.normal(scale=0.5, size=affinity.shape)
popular_scores = np.tile(log_popularity, (n_users, 1))
recs = {"model": top_k(model_scores, k=10, exclude=train),
        "popular": top_k(popular_scores, k=10, exclude=train)}

metrics = ["ndcg", "recall", "catalog_coverage", "novelty"]
evaluations = {name: evaluate_recommendations(frame, test, train=train, k=10,
                                              metrics=metrics)
               for name, frame in recs.items()}
for name, ev in evaluations.items():
    print(f"{name}:")
    print(ev)

# %%
# Is the model really better? A paired test over users
# ----------------------------------------------------
# The per-user values are an Evaluation's per-query values, so the tests of
# sklearn_rank.stats pair the two recommenders user by user.
report = compare(evaluations, baseline="popular", metrics=["ndcg@10", "novelty@10"],
                 random_state=0)
print(report)
row = report.comparisons[0]
print(f"NDCG@10 difference {row.difference:+.4f}, p = {row.pvalue:.4f}")

# %%
# Accuracy against coverage and novelty
# -------------------------------------
# The popularity baseline lists a few items for everybody: low catalog
# coverage, low novelty. The model spreads its lists over the catalog and
# reaches less popular items while being more accurate.
fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), layout="constrained")
for name, ev in evaluations.items():
    ndcg = ev.mean["ndcg@10"]
    axes[0].scatter(ev.system["catalog_coverage@10"], ndcg, s=60, label=name)
    axes[1].scatter(ev.mean["novelty@10"], ndcg, s=60, label=name)
axes[0].set(xlabel="catalog coverage@10", ylabel="NDCG@10")
axes[1].set(xlabel="novelty@10 (bits)", ylabel="NDCG@10")
axes[0].legend()
plt.show()
