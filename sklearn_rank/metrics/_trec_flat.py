"""trec_eval's own measures on flat rows, for :func:`~sklearn_rank.metrics.evaluate`.

trec_eval 10.0's families that no registry metric computes (``num_ret``,
``iprec_at_recall``, ``11pt_avg``, ``Rprec_mult``, ``relative_P``, ``G``,
``infAP``, ``utility``, the sets ``official`` and ``all_trec``, ...) and
ir_measures' names computed on trec_eval's definitions (``IPrec@0.5``,
``NumRet``, ``infAP``, ``SetAP``, ...) are computed by the trec_eval engine of
:func:`~sklearn_rank.trec.evaluate_run` (:mod:`sklearn_rank.metrics._families.trec_eval`),
on the rankings that flat rows stand for:

* every row is a retrieved document that is judged, its label being its
  relevance level (an integer >= 0); there is no unjudged document and no
  relevant document left unretrieved, so ``num_rel_ret == num_rel``, ``unj``
  is 0 and ``infAP`` is computed with every document judged;
* a document is relevant when its label is >= ``threshold`` (default 1,
  trec_eval's ``-l``: a threshold is rounded up to an integer, as there);
* each query is ranked by decreasing score; ``ties`` orders equal scores as
  it does for the registry's metrics (``"stable"``: input order,
  ``"pessimistic"`` / ``"optimistic"``: least / most relevant first). The
  measures that depend on the order of tied documents have no tie-averaged
  form here: under ``ties="average"`` (the default) a query with tied scores
  is a ValueError that names ``ties="stable"``; the counts and set measures
  (``num_*``, ``set_*``, ``utility``, ``unj``) take any ``ties``.

The values are those of :func:`~sklearn_rank.trec.evaluate_run` on the
qrels and run the rows describe, and of the trec_eval binary on those files
when no two scores of a query tie (trec_eval breaks ties by document id).
"""

from __future__ import annotations

import math

import numpy as np

from ._engine.data import scalar
from ._families.trec_eval.entries import irm_entry, trec_entries
from ._families.trec_eval.ranked import Ranked
from ._vocab.ir_measures import DIVERSITY, is_irm_object
from ._vocab.params import check_options, convention_options
from ._vocab.spec import MetricSpec, parse_specs
from ._vocab.trec_eval_table import MEASURES, engine_item, parse_measures

__all__ = ["ENGINE_OPTIONS", "engine_items", "flat_engine"]

#: The options of :func:`evaluate` the engine's measures read.
ENGINE_OPTIONS = ("threshold", "ties", "convention")
#: trec_eval families whose value does not depend on the order of tied documents.
_TIE_FREE = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
                       "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "utility",
                       "unj"})
_IRM_TIE_FREE = frozenset({"NumRet", "NumRel", "NumQ", "SetAP", "SetP", "SetF"})
#: Most cells of the per-query table of label counts (queries x (largest label + 1)).
_MAX_LEVEL_CELLS = 20_000_000


def engine_items(listed: list) -> dict:
    """``{position: engine item}`` of the metrics of ``listed`` the trec_eval
    engine computes on flat rows; the others are the registry's (whose
    parser then says what is wrong with a bad one)."""
    out = {}
    for i, metric in enumerate(listed):
        if isinstance(metric, MetricSpec):
            continue
        text = str(metric) if is_irm_object(metric) else metric
        if not isinstance(text, str):
            continue
        try:
            parse_specs([text])
            continue  # the registry computes it (the common case: no engine import)
        except ValueError as error:
            refused = error
        family = text.strip().partition(".")[0]
        if family in ("runid", "relstring"):
            raise ValueError(_refusal(text, family))
        item = engine_item(text)
        if item is not None and item.irm is not None and item.irm[0] in DIVERSITY:
            raise refused  # subtopic judgments: the registry parser's refusal names the fix
        if item is not None and item.irm is not None and item.irm[0] in ("Compat", "Accuracy"):
            raise ValueError(
                f"ir_measures' {item.irm[0]} compares a run with the qrels' ideal ranking "
                "and is not computed on flat rows: sklearn_rank.trec.evaluate_run(qrels, run, "
                f"[{text!r}]) gives it.")
        if item is not None:
            out[i] = item
        elif family in MEASURES:  # a registry family with bad cut-offs: its own error
            parse_specs([text])
    return out


def _refusal(text: str, family: str) -> str:
    what = ("names the run file (its sixth column)" if family == "runid"
            else "is a string of relevance levels, not a number")
    return (f"trec_eval's {family!r} {what}; flat rows have no run file: "
            f"sklearn_rank.trec.trec_eval(qrels, run, [{text!r}]) prints it, and "
            "sklearn_rank.trec.evaluate_run computes every other trec_eval measure on a run.")


def _ties(options) -> str:
    ties = options.get("ties")
    if ties is None and options.get("convention") is not None:
        ties = convention_options(options["convention"], "").get("ties")
    return ties or "average"


def _tie_bound(items: list) -> list[str]:
    """The names of ``items`` whose value depends on the order of tied documents."""
    out = []
    for item in items:
        if item.irm is not None:
            if item.irm[0] not in _IRM_TIE_FREE:
                out.append(item.text)
        elif set(parse_measures([item.text])) - _TIE_FREE - {"runid", "relstring"}:
            out.append(item.text)
    return out


def flat_engine(items: list, data, options) -> list:
    """For every engine item, its ``[(TrecMeasure, per-query values,
    summary, n_empty)]`` on the prepared flat rows ``data`` (queries in the
    order of ``data.qids``) under ``options`` (see the module's doc)."""
    options = {k: v for k, v in options.items() if v is not None}
    options = check_options(options, "evaluate")
    if data.weights is not None:
        raise ValueError(
            "sample_weight is not supported with trec_eval's own measures "
            f"({', '.join(item.text for item in items)}): trec_eval averages (or sums) "
            "over queries unweighted. Evaluate them in a call without sample_weight.")
    level = math.ceil(options.get("threshold", 1.0))
    ranked = _ranked(data, _ties(options), _tie_bound(items), [item.text for item in items])
    keep = np.ones(ranked.n_queries, dtype=bool)
    out = []
    for item in items:
        if item.irm is not None:
            out.append([irm_entry(item.irm, ranked, level, keep)])
        else:
            out.append(trec_entries(item.text, ranked, level, keep, False))
    return out


def _check_labels(data, names: list[str]) -> np.ndarray:
    labels = data.labels
    bad = (labels < 0) | (labels != np.floor(labels))
    if bad.any():
        first = np.flatnonzero(bad)[0]
        raise ValueError(
            f"y_true has {int(bad.sum())} label(s) that are not integers >= 0 (first: "
            f"{labels[first]:g} in query {data.first_qid(bad)!r}); trec_eval's measures "
            f"({', '.join(names)}) read relevance levels as whole numbers >= 0 (a negative "
            "qrels level means 'not judged', which a flat row cannot be): round or clip "
            "y_true, or use sklearn_rank.trec.evaluate_run on qrels and a run.")
    top = int(labels.max())
    if (top + 1) * data.n_queries > _MAX_LEVEL_CELLS:
        raise ValueError(
            f"y_true's labels go up to {top}: trec_eval's measures count the documents of "
            f"every level 0..{top} of every query ({data.n_queries} queries), too large a "
            "table; relevance levels are small integers (map the labels to 0, 1, 2, ...).")
    return labels.astype(np.int64)


def _ranked(data, ties: str, tie_bound: list[str], names: list[str]):
    """The :class:`~sklearn_rank.metrics._families.trec_eval.ranked.Ranked` rankings of the
    queries of ``data``, in the order of ``data.qids``."""
    labels = _check_labels(data, names)
    nq = data.n_queries
    segment = np.repeat(np.arange(nq), data.lengths)  # grouped rows: their segment
    position = data.query_position(segment)  # query index
    neg = -data.scores
    if ties == "pessimistic":
        second = labels
    elif ties == "optimistic":
        second = -labels
    else:
        second = np.zeros(1, dtype=np.int64).repeat(labels.shape[0])
    # by query, decreasing score, the tie key, then grouped (= input) order
    order = np.lexsort((np.arange(labels.shape[0]), second, neg, position))
    s, q = neg[order], position[order]
    tied = (s[1:] == s[:-1]) & (q[1:] == q[:-1])
    if ties == "average" and tie_bound and tied.any():
        row = order[np.flatnonzero(tied)[0]]
        raise ValueError(
            f"Query {scalar(data.qids[position[row]])!r} has tied scores and the value of "
            f"{', '.join(map(repr, tie_bound))} depends on the order of tied documents, "
            "which ties='average' (the default) would average over: trec_eval's own "
            "measures have no tie-averaged form here. Pass ties='stable' (input order, as "
            "trec_eval's convention), 'pessimistic' or 'optimistic', or break the ties "
            "in y_score.")
    rel = labels[order]
    lengths = np.bincount(position, minlength=nq)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    top_level = int(labels.max())
    levels = np.bincount(position * (top_level + 1) + labels,
                         minlength=nq * (top_level + 1)).reshape(nq, top_level + 1)
    top = np.full(nq, -1, dtype=np.int64)
    np.maximum.at(top, position, labels)
    return Ranked(qids=[str(i) for i in range(nq)], rel=rel, offsets=offsets, levels=levels,
                  top=top, missing=np.zeros(nq, dtype=bool), runid="",
                  rel_gt0=int((labels > 0).sum()), complete=False,
                  unleveled=np.zeros(nq, dtype=bool))
