"""Evaluating a Dask DataFrame: per-partition per-query values, exact aggregation."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .._utils.validation import HasMethods, validate_params
from ..metrics import MetricSpec
from ..metrics._engine.ids import qid_array as _qid_array
from ..metrics._engine.inputs import prepare
from ..metrics._evaluation import Evaluation
from ..metrics._plan import PerQuery, Plan

__all__ = ["evaluate"]


def _partition(frame, *, plan, label, score, qid, weight, keys):
    """Per-query values of one partition, as a pandas DataFrame (a row per query)."""
    import pandas as pd

    if len(frame) == 0:
        return _meta(frame[qid].dtype, keys)
    part = plan.per_query(prepare(np.asarray(frame[label]), np.asarray(frame[score]),
                                  np.asarray(frame[qid]),
                                  None if weight is None else np.asarray(frame[weight])))
    columns = {"qid": part.qids,
               "weight": np.nan if part.weights is None else part.weights,
               "length": part.lengths,
               "max_label": part.max_label}
    for i, key in enumerate(keys):
        columns[f"value{i}"] = part.values[key]
        columns[f"empty{i}"] = part.empty[key]
    out = pd.DataFrame(columns)
    out["qid"] = out["qid"].astype(frame[qid].dtype)
    return out


def _meta(qid_dtype, keys):
    import pandas as pd

    columns = {"qid": pd.Series([], dtype=qid_dtype),
               "weight": pd.Series([], dtype="float64"),
               "length": pd.Series([], dtype="int64"),
               "max_label": pd.Series([], dtype="float64")}
    for i in range(len(keys)):
        columns[f"value{i}"] = pd.Series([], dtype="float64")
        columns[f"empty{i}"] = pd.Series([], dtype="bool")
    return pd.DataFrame(columns)


@validate_params({
    "ddf": [HasMethods(("map_partitions", "compute"))],
    "label": [str],
    "score": [str],
    "qid": [str],
    "weight": [str, None],
    "metrics": [str, MetricSpec, Iterable],
    "aligned": ["boolean"],
})
def evaluate(ddf, *, label="label", score="score", qid="qid", weight=None,
             metrics=("ndcg@10",), aligned=False, **options) -> Evaluation:
    """Evaluate ranking metrics on a Dask DataFrame, per query, exactly.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        One row per (query, document).
    label, score, qid : str, default="label", "score", "qid"
        Column names of the relevance labels, the scores and the query ids.
    weight : str, default=None
        Column of sample weights (a query's weight is the mean of its rows').
    metrics : str or list of str, default=("ndcg@10",)
        Metric specs, as for :func:`sklearn_rank.metrics.evaluate`.
    aligned : bool, default=False
        Whether every query's rows already live in one partition (e.g. data
        written partitioned by query, or ``ddf.set_index(qid)``). If False, the
        DataFrame is shuffled on ``qid`` first (``ddf.shuffle(on=qid)``), which
        moves every row once across the cluster. A shuffle does not keep the
        order of rows within a query, so ``ties="stable"`` (also set by the
        ``lightgbm`` and ``xgboost`` conventions) needs ``aligned=True``.
    **options
        Options of the metrics, as for :func:`sklearn_rank.metrics.evaluate`.

    Returns
    -------
    evaluation : Evaluation
        Exactly what :func:`sklearn_rank.metrics.evaluate` returns on the same
        rows in memory.

    Notes
    -----
    Each partition computes the per-query values of its queries with the same
    engine as in memory (a query's value does not depend on its neighbours);
    only those per-query values — a few numbers per query — travel to the
    client, which concatenates them and takes the (weighted) means, the
    geometric mean of ``gmap`` and the counts of empty queries once, as the
    in-memory evaluation does. A query split across partitions with
    ``aligned=True`` is reported as an error.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd
    >>> from sklearn_rank.dask import evaluate
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"qid": np.repeat(np.arange(40), 10),
    ...                    "label": rng.integers(0, 3, 400), "score": rng.random(400)})
    >>> ev = evaluate(dd.from_pandas(df, npartitions=4), metrics=["ndcg@10", "map"])
    >>> ev.n_queries
    40
    """
    plan = Plan.of(metrics, options, caller="evaluate")
    keys = plan.keys
    columns = [label, score, qid] + ([] if weight is None else [weight])
    missing = [c for c in columns if c not in ddf.columns]
    if missing:
        raise ValueError(f"The Dask DataFrame has no column {missing[0]!r}; its columns are "
                         f"{list(ddf.columns)}. Name the columns with label=, score=, qid=.")
    ddf = ddf[columns]
    if not aligned:
        stable = [e.key for e in plan.entries if e.options["ties"] == "stable"]
        if stable:
            raise ValueError(
                f"{stable[0]} breaks ties by row order (ties='stable'), which the shuffle on "
                f"{qid!r} does not keep: pass aligned=True for data whose queries each sit "
                "in one partition in their order, or use ties='average'.")
        ddf = ddf.shuffle(on=qid)
    parts = ddf.map_partitions(_partition, plan=plan, label=label, score=score, qid=qid,
                               weight=weight, keys=keys, meta=_meta(ddf[qid].dtype, keys))
    frame = parts.compute()
    weights = None if weight is None else np.asarray(frame["weight"], dtype=np.float64)
    max_label = float(frame["max_label"].max()) if len(frame) else float("nan")
    part = PerQuery(_qid_array(np.asarray(frame["qid"])),
                    {k: np.asarray(frame[f"value{i}"], dtype=np.float64)
                     for i, k in enumerate(keys)},
                    {k: np.asarray(frame[f"empty{i}"], dtype=bool) for i, k in enumerate(keys)},
                    weights, max_label, lengths=np.asarray(frame["length"], dtype=np.int64))
    return plan.finish([part] if len(frame) else [], where="the Dask DataFrame's partitions")
