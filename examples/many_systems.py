"""
Which of many systems is better? Every pair, Tukey's HSD
========================================================

Five rankers scored on the same 300 queries, and no obvious baseline: which
differences are more than the luck of the queries?
:func:`~sklearn_rank.stats.compare` without a baseline compares every pair.
With ``test="tukey"`` the p-values are Tukey's honestly significant
difference (HSD), simultaneous over all ten pairs; ``test="randomized_tukey"``
is Carterette's randomized form, which assumes no distribution.
:meth:`~sklearn_rank.stats.Report.plot_means` draws each system's mean with
its simultaneous interval: two intervals are disjoint exactly when the test
calls the pair significant. Last, the same runs as pilot data: how many
queries a new collection needs to detect a given difference
(:func:`~sklearn_rank.stats.topic_set_size`), and what difference these 300
queries can detect (:func:`~sklearn_rank.stats.minimum_detectable_difference`).

Run: python examples/many_systems.py
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rank.datasets import make_ranking
from sklearn_rank.metrics import evaluate
from sklearn_rank.stats import compare, minimum_detectable_difference, topic_set_size

# Five "systems": the same relevance signal seen through more or less noise.
rng = np.random.default_rng(0)
_, y, qid = make_ranking(n_queries=300, random_state=0)
noise = {"bm25": 1.6, "rm3": 1.5, "splade": 1.15, "colbert": 1.1, "mono-t5": 0.9}
evaluations = {name: evaluate(y, y + rng.normal(scale=s, size=y.shape), qid=qid,
                              metrics=["ndcg@10"])
               for name, s in noise.items()}

report = compare(evaluations, test="tukey", random_state=0)
print(report)

# %%
# The honestly significant difference
# -----------------------------------
# One distribution, that of the range of five means, judges every pair: two
# systems differ (at the 5% level, over all ten pairs at once) when their
# means differ by more than the HSD.
result = report.tukey["ndcg@10"]
print(f"honestly significant difference (ndcg@10, 95%): {result.critical(0.95):.4f}")

# %%
# Means with simultaneous intervals
# ---------------------------------
# The best system on top; those that differ significantly from it in grey.
ax = report.plot_means()
plt.show()

# %%
# Carterette's randomized Tukey HSD
# ---------------------------------
# The same question without the normal model: the five scores of each query
# are permuted among the systems, and the range of the means recorded.
randomized = compare(evaluations, test="randomized_tukey", n_resamples=2000, random_state=0)
for c in randomized.comparisons:
    print(f"{c.system:>8} vs {c.baseline:<8} {c.difference:+.4f}  p = {c.pvalue:.4f}"
          f"{'  *' if c.significant else ''}")

# %%
# How many queries? Sakai's topic-set-size design
# -----------------------------------------------
# With the five runs as pilot data (the variance of a per-query difference
# between two systems), the number of queries a paired t-test needs to detect
# a true difference of 0.02 in NDCG@10 with 80% power at the 5% level, and the
# smallest difference the 300 queries here detect with that power.
pilot = list(evaluations.values())
n_needed = topic_set_size(pilot, delta=0.02, metric="ndcg@10")
detectable = minimum_detectable_difference(pilot, n=300, metric="ndcg@10")
print(f"queries needed to detect a difference of 0.02: {n_needed}")
print(f"difference 300 queries detect (80% power, alpha 0.05): {detectable:.4f}")
