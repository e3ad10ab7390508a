"""
A metric of your own
====================

:func:`~sklearn_rank.metrics.register_metric` turns a function of one query's
ranked labels into a metric of the registry: the name then works in specs,
:func:`~sklearn_rank.metrics.evaluate`, the scorers, TREC evaluation and the
command line, with cut-offs, tie policies, empty-query policies and weights.

Here the metric is *satisfaction@k*: the probability that a user scanning the
top k documents finds one that satisfies them, each document satisfying with
ERR's probability (2**label - 1) / 16. It is not a sum over ranks, so under
``ties="average"`` the engine enumerates the orders of tied documents.

Run: python examples/custom_metric.py
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rank.metrics import evaluate, register_metric


def satisfaction(labels, lengths):
    """Probability of a satisfying document in the ranking (ERR's stop probabilities)."""
    stop = (2.0**labels - 1) / 16  # zero beyond each row's length
    return 1 - np.prod(1 - stop, axis=1)


register_metric("satisfied", satisfaction, vectorized=True)

# %%
# Queries and two rankers
# -----------------------
# Labels 0-4, and two noisy rankers whose scores are rounded to quarters, so
# that some documents tie.
rng = np.random.default_rng(0)
lengths = rng.integers(5, 40, 500)
qid = np.repeat(np.arange(lengths.shape[0]), lengths)
y = rng.choice(5, qid.shape[0], p=[0.55, 0.25, 0.12, 0.06, 0.02])
rankers = {name: np.round(4 * (y + rng.normal(scale=noise, size=y.shape[0]))) / 4
           for name, noise in (("better", 1.0), ("worse", 2.5))}

for name, score in rankers.items():
    ev = evaluate(y, score, qid=qid, metrics=["satisfied@10", "err@10", "ndcg@10"])
    print(f"satisfied@10 of the {name} ranker: {ev.mean['satisfied@10']:.4f} "
          f"(err@10 {ev.mean['err@10']:.4f}, ndcg@10 {ev.mean['ndcg@10']:.4f})")
print(f"{ev.n_empty['satisfied@10']} of {ev.n_queries} queries have no relevant document "
      "(scored 0: the 'empty' option)")

# %%
# Tied scores
# -----------
# ``ties="average"`` is the expected value over the orders of tied
# documents; ``"pessimistic"`` and ``"optimistic"`` (least or most relevant
# first) bound it. The band is narrow where few ties straddle the cut-off.
ks = np.arange(1, 21)
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
for name, score in rankers.items():
    curves = {ties: evaluate(y, score, qid=qid, metrics=[f"satisfied@{k}" for k in ks],
                             ties=ties).mean
              for ties in ("average", "pessimistic", "optimistic")}
    mean = [curves["average"][f"satisfied@{k}"] for k in ks]
    line, = ax.plot(ks, mean, marker="o", ms=3, label=f"{name} ranker")
    ax.fill_between(ks, [curves["pessimistic"][f"satisfied@{k}"] for k in ks],
                    [curves["optimistic"][f"satisfied@{k}"] for k in ks],
                    color=line.get_color(), alpha=0.25)
ax.set(xlabel="cut-off k", ylabel="mean satisfied@k", xticks=ks[1::2],
       title="A registered metric: ties averaged, bounded by the tie orders")
ax.legend()
plt.show()
