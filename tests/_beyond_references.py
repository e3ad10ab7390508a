"""A small fixed recommendation set and the numbers the recsys libraries give for it.

tests/test_recsys_beyond.py pins the values of ``REFERENCES`` against
``sklearn_rank.recsys._beyond``. They were produced by running this file as a
script in scratch virtual environments, because neither library can join the
``test`` extra: Microsoft Recommenders 1.2.1 pulls in ~150 packages (Jupyter,
transformers, cornac, ...) and rectools 0.19.0 pins ``numpy<2`` and
``pandas<3`` on Python 3.11. RecBole needs PyTorch, so its metric kernels
(pure NumPy methods of ``recbole/evaluator/metrics.py``, RecBole commit
7b02be5) are extracted from the source file and run as they are::

    python -m venv /tmp/v-rec && /tmp/v-rec/bin/pip install recommenders==1.2.1
    python -m venv /tmp/v-rt && /tmp/v-rt/bin/pip install rectools==0.19.0
    /tmp/v-rec/bin/python tests/_beyond_references.py recommenders
    /tmp/v-rt/bin/python tests/_beyond_references.py rectools
    python tests/_beyond_references.py recbole path/to/recbole/evaluator/metrics.py

Item codes are the ids the libraries see. The catalog is items 0..9; item 9
never occurs in training (a cold item); Recommenders' catalog is the items of
``TRAIN`` (0..8), so for it item 9 is outside the catalog.
"""

import sys

TRAIN = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 3), (2, 0), (2, 1), (2, 4), (3, 5), (3, 0), (4, 1),
         (4, 6), (4, 7), (5, 0), (5, 2), (5, 8), (1, 1)]
TOP = [[3, 9, 4], [2, 5, 6], [3, 5, 9], [1, 2, 7], [0, 2, 3], [1, 3, 9]]
TEST = [(0, 3), (0, 4), (1, 6), (2, 9), (3, 1), (3, 7), (4, 3), (5, 7)]
FEATURES = [[1, 0, 0, 1], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 1, 1],
            [0, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]]
N_CATALOG = 10

# Values printed by this script (see the module docstring); per-user lists are
# in user order 0..5.
REFERENCES = {'recommenders': {'catalog_coverage': 1.0,
                  'distributional_coverage': 2.974937501201927,
                  'novelty': 2.888334140214874,
                  'user_diversity_cooccurrence': [1.0,
                                                  1.0,
                                                  1.0,
                                                  0.7154822031355754,
                                                  0.6401102908221221,
                                                  0.8333333333333334],
                  'user_diversity_features': [0.8075499102701247,
                                              0.2890022793815161,
                                              0.5285954792089684,
                                              0.5976310729378176,
                                              0.8333333333333334,
                                              0.7642977396044842],
                  'user_serendipity': [0.4561747565555649,
                                       0.2777777777777778,
                                       0.3333333333333333,
                                       0.5548632677916772,
                                       0.2777777777777778,
                                       0.0]},
 'rectools': {'miuf': [2.584962500721156,
                       2.2516291673878226,
                       2.584962500721156,
                       1.584962500721156,
                       1.4776531357587022,
                       1.9182958340544893],
              'ild_hamming': [2.6666666666666665,
                              1.3333333333333333,
                              1.3333333333333333,
                              2.0,
                              2.6666666666666665,
                              2.0],
              'serendipity': [0.1333333333333334,
                              0.03333333333333336,
                              0.26666666666666666,
                              0.0666666666666667,
                              0.03333333333333336,
                              0.0],
              'catalog_coverage': 0.9},
 'recbole': {'item_coverage': 0.9,
             'gini': 0.3555555555555555,
             'shannon_entropy': 0.2291188379222405,
             'average_popularity': [0.6666666666666666,
                                    1.3333333333333333,
                                    0.6666666666666666,
                                    2.3333333333333335,
                                    2.6666666666666665,
                                    1.6666666666666667],
             'tail_percentage_0.1': [0.3333333333333333,
                                     0.0,
                                     0.3333333333333333,
                                     0.0,
                                     0.3333333333333333,
                                     0.3333333333333333],
             'tail_percentage_0.5': [0.6666666666666666,
                                     0.6666666666666666,
                                     0.6666666666666666,
                                     0.0,
                                     0.3333333333333333,
                                     0.3333333333333333],
             'tail_percentage_2': [0.6666666666666666,
                                   1.0,
                                   0.6666666666666666,
                                   0.6666666666666666,
                                   0.6666666666666666,
                                   0.3333333333333333]}}


def _frames():
    import numpy as np
    import pandas as pd

    train = pd.DataFrame(TRAIN, columns=["user", "item"])
    reco = pd.DataFrame([(u, i, r + 1) for u, row in enumerate(TOP) for r, i in enumerate(row)],
                        columns=["user", "item", "rank"])
    test = pd.DataFrame(TEST, columns=["user", "item"])
    features = np.array(FEATURES, dtype=float)
    return train, reco, test, features


def recommenders() -> dict:
    import pandas as pd
    from recommenders.evaluation import python_evaluation as pe

    train, reco, test, features = _frames()
    relevant = set(map(tuple, test[["user", "item"]].to_numpy().tolist()))
    pairs = zip(reco.user, reco.item, strict=True)
    reco["relevance"] = [float(pair in relevant) for pair in pairs]
    reco = reco[["user", "item", "relevance"]]
    item_features = pd.DataFrame({"item": range(len(features)), "features": list(features)})
    kw = {"col_user": "user", "col_item": "item"}
    out = {
        "catalog_coverage": pe.catalog_coverage(train, reco, **kw),
        "distributional_coverage": pe.distributional_coverage(train, reco, **kw),
        "novelty": pe.novelty(train, reco, **kw),
        "user_diversity_cooccurrence": pe.user_diversity(
            train, reco, col_relevance="relevance", **kw)["user_diversity"].tolist(),
        "user_diversity_features": pe.user_diversity(
            train, reco, item_feature_df=item_features, item_sim_measure="item_feature_vector",
            col_relevance="relevance", **kw)["user_diversity"].tolist(),
        "user_serendipity": pe.user_serendipity(
            train, reco, col_relevance="relevance", **kw)["user_serendipity"].tolist(),
    }
    return {k: float(v) if not isinstance(v, list) else v for k, v in out.items()}


def rectools() -> dict:
    import pandas as pd
    from rectools import Columns
    from rectools.metrics import CatalogCoverage, IntraListDiversity, MeanInvUserFreq, Serendipity
    from rectools.metrics.distances import PairwiseHammingDistanceCalculator

    train, reco, test, features = _frames()
    rename = {"user": Columns.User, "item": Columns.Item, "rank": Columns.Rank}
    train, reco, test = (df.rename(columns=rename) for df in (train, reco, test))
    features_df = pd.DataFrame(features, index=pd.Index(range(len(features)), name=Columns.Item))
    catalog = list(range(N_CATALOG))
    return {
        "miuf": MeanInvUserFreq(k=3).calc_per_user(reco, train).tolist(),
        "ild_hamming": IntraListDiversity(
            k=3, distance_calculator=PairwiseHammingDistanceCalculator(features_df)
        ).calc_per_user(reco).tolist(),
        "serendipity": Serendipity(k=3).calc_per_user(reco, test, train, catalog).tolist(),
        "catalog_coverage": float(CatalogCoverage(k=3, normalize=True).calc(reco, catalog)),
    }


def recbole(metrics_py: str) -> dict:
    """Run RecBole's metric kernels, taken from its source, on ``TOP``."""
    import ast
    import types
    from collections import Counter

    import numpy as np

    tree = ast.parse(open(metrics_py, encoding="utf-8").read())
    kernels = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            if fn.name in ("get_coverage", "get_gini", "get_entropy", "get_pop", "get_tail",
                           "metric_info"):
                scope = {"np": np, "Counter": Counter}
                exec(compile(ast.Module([fn], []), metrics_py, "exec"), scope)
                kernels[(cls.name, fn.name)] = scope[fn.name]
    matrix = np.array(TOP)
    counts = dict(Counter(item for _, item in TRAIN))
    per_user = kernels[("AveragePopularity", "metric_info")]

    def at_k(values):  # metric_info's cumulative mean, read at k = 3
        return per_user(None, values.astype(float))[:, 2].tolist()

    out = {
        "item_coverage": kernels[("ItemCoverage", "get_coverage")](None, matrix, N_CATALOG),
        "gini": kernels[("GiniIndex", "get_gini")](None, matrix, N_CATALOG),
        "shannon_entropy": kernels[("ShannonEntropy", "get_entropy")](None, matrix),
        "average_popularity": at_k(kernels[("AveragePopularity", "get_pop")](None, matrix,
                                                                            counts)),
    }
    for tail in (0.1, 0.5, 2):
        self = types.SimpleNamespace(tail=tail)
        out[f"tail_percentage_{tail}"] = at_k(
            kernels[("TailPercentage", "get_tail")](self, matrix, dict(counts)))
    return {k: float(v) if not isinstance(v, list) else v for k, v in out.items()}


if __name__ == "__main__":
    which = sys.argv[1]
    result = {"recommenders": recommenders, "rectools": rectools}.get(which)
    print(repr(result() if result else recbole(sys.argv[2])))
