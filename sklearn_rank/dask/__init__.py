"""Dask integration: evaluating ranking metrics on Dask DataFrames.

Requires the ``dask`` extra (``pip install "sklearn-rank[dask]"``). Distributed
grid searches need nothing from here: scikit-learn's searches run on a
``dask.distributed`` cluster through ``joblib.parallel_backend("dask")``, with
this package's scorers, splitters and ``QueryRanker`` unchanged.
"""

from ._evaluate import evaluate

__all__ = ["evaluate"]
