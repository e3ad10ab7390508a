"""trec_eval's measures as entries of an :class:`~sklearn_rank.metrics.Evaluation`.

:class:`TrecMeasure` is such an entry's metric; :func:`trec_entries` computes a trec_eval
``-m`` argument and :func:`irm_entry` an ir_measures name computed on trec_eval's
definitions, on a :class:`~.ranked.Ranked` (built from qrels and a run by
:func:`sklearn_rank.trec.evaluate_run`, from flat rows by
:func:`sklearn_rank.metrics.evaluate`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..._vocab.trec_eval_table import STRINGS, parse_measures
from . import _measures as m
from . import _set as st
from .measures import compute, sequential_sum

__all__ = ["TrecMeasure", "irm_entry", "summary", "trec_entries"]


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


def summary(how: str, values: np.ndarray) -> float:
    """The ``"mean"``, ``"sum"``, ``"gmean"`` (of the values floored at 1e-5)
    or ``"count"`` of ``values``, added in order as trec_eval adds."""
    n = values.shape[0]
    if how == "count":
        return float(n)
    if how == "gmean":
        logs = np.array([math.log(max(v, 1e-5)) for v in values.tolist()])
        return math.exp(sequential_sum(logs) / n) if n else math.nan
    total = sequential_sum(values)
    return total if how == "sum" else (total / n if n else math.nan)


def trec_entries(text: str, data, level: int, keep: np.ndarray, complete: bool) -> list:
    """``[(TrecMeasure, per-query values, summary, n_empty)]`` of the trec_eval
    ``-m`` argument ``text`` (a family, with parameters, or a set) on the
    queries ``keep`` of ``data``; ``complete``: trec_eval's ``-c``."""
    parsed = {name: p for name, p in parse_measures([text]).items() if name not in STRINGS}
    rows = compute(data, parsed, relevance_level=level)
    per_query = {row.label: row.values for row in rows if row.values is not None}
    summaries = {row.label: row.summary for row in rows if row.summary is not None}
    c = m.Context(data, level, 0)
    empty = int((c.num_rel[keep] == 0).sum())
    full = bool(keep.all())
    out = []
    for label, values in per_query.items():
        how = "sum" if label.startswith("num_") else "gmean" if label.startswith("gm_") \
            else "mean"
        if label in ("gm_bpref", "gm_map"):  # the values, not their logs
            values = compute(data, {label[3:]: None}, relevance_level=level)[0].values
        values = np.asarray(values, dtype=np.float64)[keep]
        # trec_eval's own summary when it saw the same queries (-c); else
        # the same sum, in the same order, over the evaluated queries
        total = summaries[label] if full and complete else summary(how, values)
        out.append((TrecMeasure(label, how), values, total, empty if how == "mean" else 0))
    if "num_q" in parsed:
        n = int(keep.sum())
        out.insert(0, (TrecMeasure("num_q", "sum"), np.ones(n), float(n), 0))
    return out


def irm_entry(found: tuple, data, level: int, keep: np.ndarray):
    """``(TrecMeasure, per-query values, summary, n_empty)`` of ir_measures'
    ``name(params)`` (``found``) on trec_eval's definitions (9.0.8's IPrec cut
    rank); a query the run lacks scores 0, as ir_measures fills it."""
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
    else:  # SetP(relative=True): trec_eval's set_relative_P
        values = st.set_relative_p(c, None)[0][1]
    values = np.where(data.missing, 0.0, values)[keep]
    empty = int((c.num_rel[keep] == 0).sum()) if how == "mean" else 0
    return TrecMeasure(label, how, bool(params.get("judged_only")), True), values, \
        summary(how, values), empty
