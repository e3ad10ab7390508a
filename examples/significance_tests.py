"""
Is B really better? Significance tests
======================================

Three rankers scored on the same 200 queries: is the difference in mean
NDCG@10 more than the luck of which queries were asked?
:func:`~sklearn_rank.stats.compare` pairs the per-query values of each system
with the baseline's and reports, for every system and metric, the mean
difference with a bootstrap interval, a paired randomization test corrected
for the number of comparisons, and the wins and losses per query.

Run: python examples/significance_tests.py
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rank.datasets import make_ranking
from sklearn_rank.metrics import evaluate
from sklearn_rank.stats import bootstrap_ci, compare, randomization_test

# Three "systems": the same relevance signal seen through more or less noise.
rng = np.random.default_rng(0)
_, y, qid = make_ranking(n_queries=200, random_state=0)
noise = {"A": 1.5, "B": 1.2, "C": 1.45}
metrics = ["ndcg@10", "map"]
evaluations = {name: evaluate(y, y + rng.normal(scale=s, size=y.shape), qid=qid,
                              metrics=metrics)
               for name, s in noise.items()}

report = compare(evaluations, baseline="A", random_state=0)
print(report)

# %%
# The pieces, one at a time
# -------------------------
# The paired randomization test and the bootstrap interval of the mean
# difference that ``compare`` reports for B against A on NDCG@10.
test = randomization_test(evaluations["B"], evaluations["A"], metric="ndcg@10",
                          random_state=0)
ci = bootstrap_ci(evaluations["B"], evaluations["A"], metric="ndcg@10", random_state=0)
print(f"mean difference {test.statistic:+.4f}, p = {test.pvalue:.4f}; "
      f"95% interval [{ci.low:+.4f}, {ci.high:+.4f}]")

# %%
# Per-query differences
# ---------------------
# A mean hides how the queries split: sorted per-query differences to the
# baseline show how many queries each system wins and loses, and by how much.
fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
for name in ("B", "C"):
    diff = evaluations[name].per_query["ndcg@10"] - evaluations["A"].per_query["ndcg@10"]
    ax.plot(np.sort(diff), label=f"{name} - A")
ax.axhline(0, color="0.5", linewidth=0.8)
ax.set(xlabel="queries, sorted by difference", ylabel="NDCG@10 difference")
ax.legend()
plt.show()
