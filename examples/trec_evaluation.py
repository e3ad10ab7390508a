"""
Evaluating TREC runs as trec_eval does
======================================

Writes a small test collection — relevance judgments (qrels) and two runs —
to a temporary directory, evaluates the runs with trec_eval's measure names
and with metric specs of this package
(:func:`~sklearn_rank.trec.evaluate_run`), and runs the ``sklearn-rank``
command line on the same files.

Run: python examples/trec_evaluation.py
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rank.trec import evaluate_run, read_qrels, read_run

# %%
# A collection of 25 queries: 40 judged documents each (levels 0, 1, 2), and
# two runs of 100 documents per query, the second closer to the judgments.
rng = np.random.default_rng(0)
folder = Path(tempfile.mkdtemp())
with open(folder / "qrels.txt", "w") as qrels_file:
    runs = {"bm25": [], "dense": []}
    for q in range(1, 26):
        levels = rng.choice(3, 100, p=[0.8, 0.15, 0.05])
        for d in range(40):  # the first 40 documents of each query were judged
            qrels_file.write(f"q{q} 0 D{q}-{d} {levels[d]}\n")
        for tag, noise in (("bm25", 1.2), ("dense", 0.8)):
            scores = levels + rng.normal(scale=noise, size=100)
            for rank, d in enumerate(np.argsort(-scores), start=1):
                runs[tag].append(f"q{q} Q0 D{q}-{d} {rank} {scores[d]:.4f} {tag}\n")
for tag, lines in runs.items():
    (folder / f"{tag}.run").write_text("".join(lines))

qrels = read_qrels(folder / "qrels.txt")
bm25, dense = read_run(folder / "bm25.run"), read_run(folder / "dense.run")
print(qrels, bm25, dense, sep="\n")

# %%
# trec_eval's names and this package's specs, side by side
# ---------------------------------------------------------
# ``ndcg_cut.10`` is trec_eval's NDCG@10 (linear gain, ties by decreasing
# document id); ``ndcg@10`` is this package's NDCG@10 everywhere, inside
# ``evaluate_run`` too (gain 2^l - 1, tied scores averaged), and
# ``ndcg(gain='linear')@10`` is linear NDCG with ties averaged. ``map`` and
# ``bpref`` are the registry's (ties averaged); ``convention="trec_eval"``
# or ``sklearn-rank trec_eval`` give trec_eval's. Documents the judges never
# saw count as non-relevant, as in trec_eval.
measures = ["map", "P.5,10", "ndcg_cut.10", "recip_rank", "bpref",
            "ndcg@10", "ndcg(gain='linear')@10", "err@10"]
for tag, run in (("bm25", bm25), ("dense", dense)):
    print(tag, evaluate_run(qrels, run, measures))

# %%
# Per-query values, as ``trec_eval -q`` prints them, in a pandas table:
print(evaluate_run(qrels, dense, ["map", "ndcg_cut.10"]).to_frame().head())

# %%
# Precision and NDCG at every cut-off k = 1..20: one ``evaluate_run`` call per
# run computes all forty measures (``sklearn-rank evaluate --plot`` draws the
# same curves).
ks = range(1, 21)
fig, axes = plt.subplots(1, 2, figsize=(7, 3), layout="constrained")
for tag, run in (("bm25", bm25), ("dense", dense)):
    ev = evaluate_run(qrels, run, [f"P.{k}" for k in ks] + [f"ndcg_cut.{k}" for k in ks])
    axes[0].plot(ks, [ev.mean[f"P.{k}"] for k in ks], marker="o", ms=3, label=tag)
    axes[1].plot(ks, [ev.mean[f"ndcg_cut.{k}"] for k in ks], marker="o", ms=3, label=tag)
axes[0].set(xlabel="k", ylabel="P@k (P.k)")
axes[1].set(xlabel="k", ylabel="NDCG@k (ndcg_cut.k)")
axes[1].legend()
plt.show()

# %%
# The command line
# ----------------
# ``sklearn-rank evaluate`` prints one column per run; ``--format trec``
# prints trec_eval's own three-column lines. ``sklearn-rank compare`` adds
# a paired significance test against the first run.
cli = [sys.executable, "-m", "sklearn_rank"]
files = [str(folder / name) for name in ("qrels.txt", "bm25.run", "dense.run")]
for args in (["evaluate", *files, "-m", "map", "-m", "P.5,10", "-m", "ndcg_cut.10"],
             ["evaluate", *files[:2], "-m", "map", "-m", "P.10", "--format", "trec"],
             ["compare", *files, "-m", "map", "-m", "ndcg_cut.10", "--seed", "0"]):
    print("$ sklearn-rank", " ".join(Path(a).name if "/" in a else a for a in args))
    print(subprocess.run(cli + args, capture_output=True, text=True, check=True).stdout)

# %%
# The files were only for this example.
shutil.rmtree(folder)
