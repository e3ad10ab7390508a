"""trec_eval-engine measures inside :func:`~sklearn_rank.trec.evaluate_run`'s
:class:`~sklearn_rank.metrics.Evaluation`.

A measure the metrics registry does not compute — a trec_eval family
(``infAP``, ``iprec_at_recall.0.5``, ``utility``, ``G``, ``num_ret``, the sets
``official`` and ``all_trec``) or an ir_measures name on trec_eval's
definitions (``infAP``, ``IPrec@0.5``, ``NumRet``, ``NumRel``, ``NumQ``,
``SetAP``, ``SetP(relative=True)``, ``SetF(beta=2.0)``) — is computed by the
trec_eval 10.0 engine (:mod:`sklearn_rank.metrics._families.trec_eval`) on the run's
rankings (:func:`~.rankings.ranked`) and becomes one or more
:class:`~sklearn_rank.metrics._families.trec_eval.entries.TrecMeasure` entries: per-query
values aligned with the evaluation's queries, and the summary trec_eval prints (a mean; for
the counts, a sum). Which names are engine measures is
:func:`~sklearn_rank.metrics._vocab.trec_eval_table.engine_item`'s answer.
"""

from __future__ import annotations

import math

import numpy as np

from ...metrics._families.trec_eval.entries import (
    TrecMeasure,
    irm_entry,
    summary,
    trec_entries,
)
from ...metrics._vocab.ir_measures import DIVERSITY
from .rankings import ranked

__all__ = ["evaluate_engine"]


def evaluate_engine(items: list, qrels, run, qids: np.ndarray | None, *, relevance_level,
                    complete: bool, judged_only: bool, subtopics=None):
    """``(qids, [[(TrecMeasure, per-query values, summary, n_empty)] for
    every item])`` of the engine ``items`` on the evaluated queries: those of ``qids`` when given
    (the registry's), else the judged queries (with ``complete``) or the
    judged and retrieved ones. The diversity measures read ``subtopics``
    (:mod:`~sklearn_rank.trec._diversity`)."""
    diverse = [item.irm is not None and item.irm[0] in DIVERSITY for item in items]
    if any(diverse):
        return _with_diversity(items, diverse, qrels, run, qids, subtopics,
                               relevance_level=relevance_level, complete=complete,
                               judged_only=judged_only)
    level = math.ceil(relevance_level)
    data = {}  # judged_only -> Ranked (every judged query; -c for the missing ones)

    def get(only):
        if only not in data:
            data[only] = ranked(qrels, run, complete=True, judged_only=only)
        return data[only]

    first = get(judged_only)
    keep = np.ones(first.n_queries, dtype=bool) if complete else ~first.missing
    names = np.asarray(first.qids, dtype=object)[keep]
    if qids is not None and [str(q) for q in qids] != names.tolist():
        raise AssertionError("evaluate_run: the engine's queries differ from the registry's")
    out = []
    for item in items:
        if item.irm is not None and item.irm[0] in ("Compat", "Accuracy"):
            out.append([_pairs(item.irm, qrels, run, names, judged_only)])
        elif item.irm is not None:
            only = judged_only or item.irm[1].get("judged_only") or False
            out.append([irm_entry(item.irm, get(only), level, keep)])
        else:
            out.append(trec_entries(item.text, get(judged_only), level, keep, complete))
    return (names if qids is None else qids), out


def _with_diversity(items: list, diverse: list, qrels, run, qids, subtopics, **options):
    """:func:`evaluate_engine` of ``items``, the ``diverse`` ones by
    :func:`~sklearn_rank.trec._diversity.diversity` on the subtopic judgments."""
    from .._diversity import diversity

    out = {}
    others = [i for i, d in enumerate(diverse) if not d]
    if others:
        qids, found = evaluate_engine([items[i] for i in others], qrels, run, qids, **options)
        out.update(zip(others, found, strict=True))
    at = [i for i, d in enumerate(diverse) if d]
    qids, found = diversity([items[i].irm[:2] for i in at], subtopics, run, qids,
                            complete=options["complete"], judged_only=options["judged_only"])
    for i, (values, empty) in zip(at, found, strict=True):
        _, params, label = items[i].irm
        counted = values[~np.isnan(values)]  # nNRBP: NaN without relevant subtopics
        out[i] = [(TrecMeasure(label, "mean", bool(params.get("judged_only")), True), values,
                   summary("mean", counted), empty)]
    return qids, [out[i] for i in range(len(items))]


def _pairs(found: tuple, qrels, run, qids, judged_only: bool):
    """ir_measures' Compat (a mean, 0 for a query the run lacks) or Accuracy
    (the mean of the queries that have a value; see :mod:`~sklearn_rank.trec._trec_eval._irm`)."""
    from ._irm import accuracy, compat

    name, params, label = found
    if name == "Compat":
        values = compat(qrels, run, qids, params["p"], params["normalize"], judged_only)
        return TrecMeasure(label, "mean", False, True), values, summary("mean", values), 0
    values = accuracy(qrels, run, qids, params["cutoff"], params["rel"], judged_only)
    counted = values[~np.isnan(values)]
    return (TrecMeasure(label, "mean", False, True), values, summary("mean", counted),
            int(values.shape[0] - counted.shape[0]))
