"""
Per-query NDCG@k on flat rows
=============================

Per-query NDCG@k on flat ``(y, score, qid)`` rows, as every peer library means
it: :func:`~sklearn_rank.metrics.evaluate` groups the rows once and computes
several metrics; ``convention=`` reproduces scikit-learn's, LightGBM's and
XGBoost's meaning of "NDCG@10".

Run: python examples/metrics_quickstart.py
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rank.metrics import evaluate, ndcg_score

rng = np.random.default_rng(0)
n_queries = 1_000
lengths = rng.integers(2, 60, n_queries)  # scikit-learn refuses one-document lists
qid = np.repeat([f"q{i:04d}" for i in range(n_queries)], lengths)
y = rng.choice(5, qid.shape[0], p=[0.5, 0.25, 0.15, 0.07, 0.03])
score = y + rng.normal(scale=2.0, size=qid.shape[0])  # a noisy ranker
perm = rng.permutation(qid.shape[0])  # rows in any order
y, score, qid = y[perm], score[perm], qid[perm]

ev = evaluate(y, score, qid=qid, metrics=["ndcg@10", "ndcg(gain='linear')@10",
                                           "ndcg(discount='classic')@10", "dcg@5"])
print(ev)
per_query = ev.per_query["ndcg@10"]
print(f"\nper-query NDCG@10: min {per_query.min():.3f}, median {np.median(per_query):.3f}, "
      f"max {per_query.max():.3f} over {ev.n_queries} queries")
print("\nWhat 'NDCG@10' means in each library:")
for convention in ("sklearn", "lightgbm", "xgboost"):
    value = ndcg_score(y, score, qid=qid, k=10, convention=convention)
    print(f"  convention={convention!r:11} {value:.6f}")

# %%
# NDCG@k for k = 1..20
# --------------------
# One call to ``evaluate`` ranks every query once for all sixty metrics.
ks = np.arange(1, 21)
variants = {"exponential gain (default)": "ndcg@{k}",
            "linear gain": "ndcg(gain='linear')@{k}",
            "classic discount": "ndcg(discount='classic')@{k}"}
curves = evaluate(y, score, qid=qid,
                  metrics=[spec.format(k=k) for spec in variants.values() for k in ks])
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
for label, spec in variants.items():
    ax.plot(ks, [curves.mean[spec.format(k=k)] for k in ks], marker="o", ms=3, label=label)
ax.set(xlabel="cut-off k", ylabel="mean NDCG@k", xticks=ks[1::2],
       title=f"{ev.n_queries} queries, a noisy ranker")
ax.legend()
plt.show()
