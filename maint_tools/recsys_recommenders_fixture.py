"""Write the Microsoft Recommenders reference values of tests/test_recsys_evaluate.py.

Microsoft Recommenders 1.2.1 does not fit the ``test`` extra (its wheel
requires pandas < 3 and pulls in transformers, notebook, cornac), so its
ranking metrics are computed here, once, and stored with their inputs in
``tests/data/recsys_recommenders.json``. Its ``python_evaluation`` module
imports only pandas, NumPy and scikit-learn: unpack the wheel's
``recommenders/`` package (``pip download recommenders==1.2.1 --no-deps``;
``unzip`` it into a folder) and run, from the repository's root::

    PYTHONPATH=<that folder> python maint_tools/recsys_recommenders_fixture.py

The data (fixed seed, NumPy's PCG64): 60 users over 30 items; each of 55
users has 15 recommended items with distinct scores (Recommenders' top k
breaks ties by row order, this package by item id: tie-free data compares
the definitions, not the tie rules), each of 50 users 1 to 8 test items rated
1..5 (some users have recommendations but no test item, some test items but
no recommendation: Recommenders evaluates only the users in both frames).
"""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "recsys_recommenders.json"
SEED = 27
K = (5, 10)


def generate() -> dict:
    rng = np.random.default_rng(SEED)
    recs = {"user": [], "item": [], "score": []}
    for user in range(55):
        items = rng.choice(30, size=15, replace=False)
        recs["user"] += [user] * 15
        recs["item"] += items.tolist()
        recs["score"] += (rng.permutation(15) + 0.5).tolist()  # distinct scores
    test = {"user": [], "item": [], "rating": []}
    for user in range(10, 60):
        items = rng.choice(30, size=int(rng.integers(1, 9)), replace=False)
        test["user"] += [user] * items.shape[0]
        test["item"] += items.tolist()
        test["rating"] += rng.integers(1, 6, size=items.shape[0]).tolist()
    return {"recs": recs, "test": test}


def main() -> int:
    import pandas as pd
    from recommenders.evaluation import python_evaluation as pe

    data = generate()
    pred = pd.DataFrame(data["recs"]).rename(columns={"user": "userID", "item": "itemID",
                                                      "score": "prediction"})
    true = pd.DataFrame(data["test"]).rename(columns={"user": "userID", "item": "itemID"})
    values = {}
    for k in K:
        values[f"precision_at_k@{k}"] = pe.precision_at_k(true, pred, k=k)
        values[f"recall_at_k@{k}"] = pe.recall_at_k(true, pred, k=k)
        values[f"map_at_k@{k}"] = pe.map_at_k(true, pred, k=k)
        values[f"ndcg_at_k(binary)@{k}"] = pe.ndcg_at_k(true, pred, k=k)
        values[f"ndcg_at_k(exp)@{k}"] = pe.ndcg_at_k(true, pred, k=k, score_type="exp")
        values[f"ndcg_at_k(raw)@{k}"] = pe.ndcg_at_k(true, pred, k=k, score_type="raw")
    try:
        version = metadata.version("recommenders")
    except metadata.PackageNotFoundError:  # unpacked wheel: no distribution metadata
        import recommenders

        version = getattr(recommenders, "__version__", "unknown")
    document = {"library": f"recommenders {version} (recommenders.evaluation."
                           "python_evaluation)",
                "pandas": pd.__version__, "script": "maint_tools/recsys_recommenders_fixture.py",
                "data": data, "values": values}
    OUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
