"""trec_eval-engine measures inside :func:`~sklearn_rank.trec.evaluate_run`'s
:class:`~sklearn_rank.metrics.Evaluation`.

A measure the metrics registry does not compute — a trec_eval family
(``infAP``, ``iprec_at_recall.0.5``, ``utility``, ``G``, ``num_ret``, the sets
``official`` and ``all_trec``) or an ir_measures name on trec_eval's
definitions (``infAP``, ``IPrec@0.5``, ``NumRet``, ``NumRel``, ``NumQ``,
``SetAP``, ``SetP(relative=True)``, ``SetF(beta=2.0)``) — is computed by the
trec_eval 10.0 engine (:mod:`~sklearn_rank.trec._trec_eval.table`) and becomes one or more
:class:`TrecMeasure` entries: per-query values aligned with the evaluation's
queries, and the summary trec_eval prints (a mean; for the counts, a sum).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

import numpy as np

from ...metrics._vocab.ir_measures import DIVERSITY, irm_engine, is_irm_object
from . import _measures as m
from . import _set as st
from .rankings import ranked
from .table import MEASURES, NICKNAMES, Params, parse_measures
from .table import trec_eval as _compute

__all__ = ["TrecMeasure", "engine_item", "evaluate_engine"]

_STRINGS = ("runid", "relstring")


@dataclass(frozen=True)
class TrecMeasure:
    """A measure computed by the trec_eval engine, as an entry of an
    :class:`~sklearn_rank.metrics.Evaluation`'s ``metrics``.

    ``key`` is the result key (trec_eval's printed name, e.g.
    ``iprec_at_recall_0.50``, or ir_measures' ``str()``, e.g. ``IPrec@0.5``);
    ``summary`` says what the evaluation's ``mean`` holds: ``"mean"``,
    ``"sum"`` (num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, num_q,
    NumRet, NumRel, NumQ: trec_eval's and ir_measures' summaries are sums)
    or ``"gmean"`` (gm_bpref: the geometric mean of the per-query bpref,
    floored at 1e-5 as trec_eval does).
    """

    key: str
    summary: str = "mean"
    judged_only: bool = False
    irm: bool = False  # an ir_measures name
    k = None  # no cut-off family (plots)
    label = None

    def __str__(self) -> str:
        return self.key

    @property
    def safe_name(self) -> str:
        """The key in lower-case letters, digits and underscores
        (``iprec_at_recall_0_50``, ``utility_2_minus1_0_0``; ir_measures'
        names prefixed ``irm_``: ``irm_iprec_at_0_5``), for
        :meth:`Evaluation.to_dict(names="safe") <sklearn_rank.metrics.Evaluation.to_dict>`."""
        text = self.key.replace("@", "_at_").replace("-", "minus").lower()
        text = "_".join(part for part in re.split(r"[^a-z0-9]+", text) if part)
        return ("irm_" + text) if self.irm else text


@dataclass(frozen=True)
class _Item:
    """One requested engine measure: a trec_eval ``-m`` argument, or an
    ir_measures name with its parameters."""

    text: str
    irm: tuple | None = None  # (name, parameters, label)


def engine_item(metric) -> _Item | None:
    """The engine measure ``metric`` asks for, or None when the registry
    computes it (its errors then come from the registry's parser)."""
    if is_irm_object(metric):
        metric = str(metric)
    if not isinstance(metric, str):
        return None
    text = metric.strip()
    if len(text) > 2000 or not text.isascii():
        return None  # the registry's parser refuses it, saying why
    family = text.partition(".")[0]
    if family not in MEASURES and family not in NICKNAMES:
        # ir_measures' names (infAP(rel=2), IPrec@0.5, NumQ, ...); a bare
        # trec_eval family name (infAP) is trec_eval's, which honours -l
        try:
            found = irm_engine(ast.parse(text, mode="eval").body, text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # the registry's parser says why
        return None if found is None else _Item(text, found)
    from ...metrics._vocab.spec import parse_specs

    try:
        parse_specs([text])
        return None  # the registry computes it under this name (P.10, map, ...)
    except ValueError:
        # a registry family with whole-number cut-offs (P.0, P.99999...):
        # the registry's error says what is wrong with them
        if re.fullmatch(r"[0-9,]+", text.partition(".")[2]) and _registry_knows(family):
            return None
    if family in _STRINGS:
        raise ValueError(f"trec_eval's {family!r} is a string, not a number: "
                         f"sklearn_rank.trec.trec_eval(qrels, run, [{text!r}]) prints it.")
    parse_measures([text])  # trec_eval's grammar errors
    return _Item(text)


def _registry_knows(family: str) -> bool:
    from ...metrics._vocab.spec import parse_specs

    try:
        parse_specs([family])
        return True
    except ValueError:
        return False


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
            out.append([_irm(item.irm, get(judged_only or item.irm[1].get("judged_only")
                                           or False), level, keep)])
        else:
            out.append(_trec(item.text, get(judged_only), level, keep, complete))
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
                   _summary("mean", counted), empty)]
    return qids, [out[i] for i in range(len(items))]


def _summary(how: str, values: np.ndarray) -> float:
    n = values.shape[0]
    if how == "count":
        return float(n)
    total = 0.0
    if how == "gmean":
        for v in values.tolist():
            total += math.log(max(v, 1e-5))
        return math.exp(total / n) if n else math.nan
    for v in values.tolist():
        total += v
    return total if how == "sum" else (total / n if n else math.nan)


def _trec(text: str, data, level: int, keep: np.ndarray, complete: bool) -> list:
    """trec_eval's rows of ``text`` (a family, with parameters, or a set)."""
    parsed = {name: p for name, p in parse_measures([text]).items() if name not in _STRINGS}
    result = _compute(data, parsed, relevance_level=level)
    c = m.Context(data, level, 0)
    empty = int((c.num_rel[keep] == 0).sum())
    full = bool(keep.all())
    out = []
    for label, values in result.per_query.items():
        how = "sum" if label.startswith("num_") else "gmean" if label.startswith("gm_") \
            else "mean"
        if label == "gm_bpref":
            values = m.bpref(c, None)[0][1]
        elif label == "gm_map":
            values = m.map_(c, None)[0][1]
        values = np.asarray(values, dtype=np.float64)[keep]
        # trec_eval's own summary when it saw the same queries (-c); else
        # the same sum, in the same order, over the evaluated queries
        summary = result.summary[label] if full and complete else _summary(how, values)
        out.append((TrecMeasure(label, how), values, summary,
                    empty if how == "mean" else 0))
    if "num_q" in parsed:
        n = int(keep.sum())
        out.insert(0, (TrecMeasure("num_q", "sum"), np.ones(n), float(n), 0))
    return out


def _pairs(found: tuple, qrels, run, qids, judged_only: bool):
    """ir_measures' Compat (a mean, 0 for a query the run lacks) or Accuracy
    (the mean of the queries that have a value; see :mod:`~sklearn_rank.trec._trec_eval._irm`)."""
    from ._irm import accuracy, compat

    name, params, label = found
    if name == "Compat":
        values = compat(qrels, run, qids, params["p"], params["normalize"], judged_only)
        return TrecMeasure(label, "mean", False, True), values, _summary("mean", values), 0
    values = accuracy(qrels, run, qids, params["cutoff"], params["rel"], judged_only)
    counted = values[~np.isnan(values)]
    return (TrecMeasure(label, "mean", False, True), values, _summary("mean", counted),
            int(values.shape[0] - counted.shape[0]))


def _irm(found: tuple, data, level: int, keep: np.ndarray):
    """ir_measures' ``name(params)`` on trec_eval's definitions (9.0.8's
    IPrec cut rank); a query the run lacks scores 0, as ir_measures fills it."""
    name, params, label = found
    rel = params.get("rel")
    c = m.Context(data, rel if rel is not None else level, 0)
    how = "mean"
    if name == "infAP":
        values = m.infap(c, None)[0][1]
    elif name == "IPrec":
        values = m._iprec(c, [float(f"{params['recall']:.2f}")], truncate=True)[0]
    elif name == "NumRet":
        values = (c.n if rel is None else c.num_rel_ret).astype(np.float64)
        how = "sum"
    elif name == "NumRel":
        values, how = c.num_rel.astype(np.float64), "sum"
    elif name == "NumQ":
        values, how = np.ones(data.n_queries), "sum"
    elif name == "SetAP":
        values = st.set_map(c, None)[0][1]
    elif name == "SetP":
        values = st.set_relative_p(c, None)[0][1]
    else:  # SetF(beta=b): trec_eval's set_F.b
        values = st.set_f(c, Params(repr(params["beta"]), (params["beta"],)))[0][1]
    values = np.where(data.missing, 0.0, values)[keep]
    empty = int((c.num_rel[keep] == 0).sum()) if how == "mean" else 0
    return TrecMeasure(label, how, bool(params.get("judged_only")), True), values, \
        _summary(how, values), empty
