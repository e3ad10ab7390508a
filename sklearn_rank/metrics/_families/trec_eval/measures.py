"""trec_eval 10.0's measures on its rankings: per-query values and summaries.

:func:`compute` evaluates the measures that
:func:`~sklearn_rank.metrics._vocab.trec_eval_table.parse_measures` read on a
:class:`~.ranked.Ranked`, with trec_eval's flags (``-l``, ``-N``, ``-c``'s missing queries),
and returns one :class:`Row` per value trec_eval prints, in its order, with its summary added
in trec_eval's order (:func:`sequential_sum`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..._vocab.trec_eval_table import MEASURES, PAIRS, PARAMS
from . import _gain as gain
from . import _measures as m
from . import _set as st
from ._measures import Context
from .ranked import Ranked

__all__ = ["KERNELS", "Context", "Row", "compute", "sequential_sum"]

#: The kernel of every measure of the table but runid and num_q (the run's
#: tag and the number of queries): ``(Context, parameters) -> [(printed name,
#: per-query values)]``.
KERNELS = {
    "num_ret": m.num_ret, "num_rel": m.num_rel, "num_rel_ret": m.num_rel_ret,
    "map": m.map_, "gm_map": m.gm_map, "Rprec": m.rprec, "bpref": m.bpref,
    "recip_rank": m.recip_rank, "iprec_at_recall": m.iprec_at_recall, "P": m.P,
    "relstring": st.relstring, "recall": m.recall, "infAP": m.infap, "gm_bpref": m.gm_bpref,
    "Rprec_mult": m.rprec_mult, "utility": st.utility, "11pt_avg": m.pt11_avg,
    "binG": m.bin_g, "G": gain.g_measure, "dcg": gain.dcg, "ideal_dcg": gain.ideal_dcg,
    "ndcg": gain.ndcg, "ndcg_rel": gain.ndcg_rel, "Rndcg": gain.rndcg,
    "ndcg_cut": gain.ndcg_cut, "map_cut": m.map_cut, "relative_P": m.relative_p,
    "success": m.success, "set_P": st.set_p, "set_relative_P": st.set_relative_p,
    "set_recall": st.set_recall, "set_map": st.set_map, "set_F": st.set_f,
    "num_nonrel_judged_ret": m.num_nonrel_judged_ret, "rbp": gain.rbp,
    "rbp_resid": gain.rbp_resid, "unj": st.unj,
}


class Row(NamedTuple):
    """One name trec_eval prints: its kind (``"D"``, ``"L"``, ``"S"``, ``"Q"``,
    as :data:`~sklearn_rank.metrics._vocab.trec_eval_table.MEASURES`), its
    per-query values (None: a summary only) and its summary (None: none)."""

    label: str
    kind: str
    values: np.ndarray | None
    summary: object


def _forced(label: str) -> bool:
    """Whether trec_eval -c sets this value of a missing query to 0 (or ''):
    it compares the printed names, so ``utility_2,-1,0,0`` is not."""
    return label in ("num_ret", "utility", "relstring", "rbp_resid") or label.startswith("unj")


def compute(data: Ranked, measures: dict, *, relevance_level: int = 1,
            n_docs: int = 0) -> list[Row]:
    """trec_eval's per-query values and summary of ``measures`` (``{name:
    parameters or None}``, from :func:`parse_measures`) on ``data``."""
    c = Context(data, relevance_level, n_docs)
    nq = data.n_queries
    rows = []
    for name, params in measures.items():
        measure = MEASURES[name]
        if name == "runid":
            rows.append(Row("runid", "S", None, data.runid))
            continue
        if name == "num_q":
            rows.append(Row("num_q", "L", None, float(nq)))
            continue
        arg = params if params is not None or measure.params in (PARAMS, PAIRS) \
            else measure.default
        for label, values in KERNELS[name](c, arg):
            if data.missing.any() and _forced(label):
                values = np.where(data.missing, "" if label == "relstring" else 0.0, values)
            total = None if measure.summary is None else _summary(measure.summary, values,
                                                                  data, name)
            rows.append(Row(label, measure.kind, values, total))
    return rows


def sequential_sum(values) -> float:
    """The sum of ``values`` added one after the other, as trec_eval's loops add."""
    total = 0.0
    for v in values.tolist():
        total += v
    return total


def _summary(how: str, values: np.ndarray, data: Ranked, name: str):
    n = data.n_queries
    if how == "mean":
        if values.shape[0] > 1000:  # np.cumsum adds in order too
            return float(np.cumsum(values)[-1]) / n
        return sequential_sum(values) / n
    if how == "gmean":
        return math.exp(sequential_sum(values) / n)
    if name == "num_rel" and data.complete:
        return float(data.rel_gt0)  # trec_eval -c: every qrels line of level > 0
    return float(sequential_sum(values))
