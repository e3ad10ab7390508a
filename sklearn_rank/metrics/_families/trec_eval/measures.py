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

from ..._engine.ranking import TREC_ORDER
from ..._vocab.trec_eval_table import LONG, MEASURES, PAIRS, PARAMS, TWINS
from . import _gain as gain
from . import _measures as m
from . import _set as st
from ._measures import Context
from .ranked import Ranked

__all__ = ["KERNELS", "Context", "Row", "compute", "sequential_sum", "twin_specs"]

# trec_eval's measures a registry metric computes (the table's TWINS: the registry
# spec of each, a template of the cut-off for the cut-off families; set_F.beta is
# f1(beta=...), ndcg's gain pairs ndcg(gains=...)) are evaluated under
# convention="trec_eval" (linear gain, empty queries 0) with -l as the
# threshold, on the rankings in trec_eval's order (TREC_ORDER).
_LOGGED = ("gm_map", "gm_bpref")  # per query: the log of the value, floored at 1e-5

#: The kernel of every measure of the table that no registry metric computes
#: (:data:`TWINS`), but runid and num_q (the run's tag and the number of
#: queries): ``(Context, parameters) -> [(printed name, per-query values)]``.
#: No measure is in both: one kernel each, trec_eval's parameters included.
KERNELS = {
    "num_ret": m.num_ret, "num_rel": m.num_rel, "num_rel_ret": m.num_rel_ret,
    "iprec_at_recall": m.iprec_at_recall, "relstring": st.relstring, "infAP": m.infap,
    "Rprec_mult": m.rprec_mult, "utility": st.utility, "11pt_avg": m.pt11_avg,
    "binG": m.bin_g, "G": gain.g_measure,
    "ideal_dcg": gain.ideal_dcg_measure, "ndcg_rel": gain.ndcg_rel, "Rndcg": gain.rndcg,
    "relative_P": m.relative_p, "set_relative_P": st.set_relative_p,
    "set_map": st.set_map,
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
    _evaluate_twins(c, [spec for name, params in measures.items() for _, spec in
                        twin_specs(name, params if params is not None
                                   else MEASURES[name].default) or ()])
    rows = []
    for name, params in measures.items():
        if name == "runid":
            rows.append(Row("runid", "S", None, data.runid))
        elif name == "num_q":
            rows.append(Row("num_q", "L", None, float(data.n_queries)))
        else:
            rows += _measure_rows(c, name, params)
    return rows


def _measure_rows(c: Context, name: str, params) -> list[Row]:
    """The rows of one measure ``name`` with ``params`` (None: its defaults)."""
    measure, data = MEASURES[name], c.data
    arg = params if params is not None or measure.params in (PARAMS, PAIRS) \
        else measure.default
    twins = twin_specs(name, params if params is not None else measure.default)
    found = KERNELS[name](c, arg) if twins is None else _registry(c, name, twins)
    rows = []
    for label, values in found:
        if data.missing.any() and _forced(label):
            values = np.where(data.missing, "" if label == "relstring" else 0.0, values)
        total = None if measure.summary is None else _summary(measure.summary, values,
                                                              data, name)
        rows.append(Row(label, measure.kind, values, total))
    return rows


def twin_specs(name: str, params) -> list[tuple[str, str]] | None:
    """``[(printed name, registry spec)]`` of trec_eval's measure ``name``
    with ``params`` (its cut-offs, or a :class:`Params`), or None when no
    registry metric computes it."""
    template = TWINS.get(name)
    if template is None:
        return None
    if MEASURES[name].params == LONG:
        return [(f"{name}_{k}", template.format(k)) for k in params]
    if not params:  # (the defaults of a measure without parameters are ())
        return [(name, template)]
    if name == "set_F":  # trec_eval reads the first value only
        return [(f"set_F_{params.text}", f"f1(beta={_literal(params.values[0])})")]
    # ndcg's and dcg's gain pairs: those of a whole-number level (trec_eval
    # ignores the others), in the order given (its ideal ranking depends on it)
    pairs = ",".join(f"{n.strip()}={v!r}" for n, v in params.pairs if _whole(n))
    spec = f"{name}(gain='linear', gains={pairs!r})" if pairs else template
    return [(f"{name}_{params.text}", spec)]


def _whole(name: str) -> bool:
    """trec_eval's ``valid_int``: an optional sign, then digits only."""
    body = name[1:] if name[:1] in "+-" else name
    return body.isdigit()


def _literal(value: float) -> str:
    """``value`` as a spec's literal: a finite number (trec_eval prints nan for
    an infinite or nan parameter; the registry refuses it, saying so)."""
    if not math.isfinite(value):
        raise ValueError(f"trec_eval measure parameter {value!r}: give a finite number "
                         "(e.g. set_F.0.5); trec_eval would print nan for every query")
    return repr(value)


def _registry(c: Context, name: str, twins: list) -> list:
    """The per-query values of ``twins`` (from :func:`twin_specs`) by the
    registry's kernels on ``c``'s rankings, under trec_eval's convention and
    relevance level; the logs of the values for gm_map and gm_bpref."""
    _evaluate_twins(c, [spec for _, spec in twins])
    if name in _LOGGED:
        return [(label, m.log_floor(c.cache[spec])) for label, spec in twins]
    return [(label, c.cache[spec]) for label, spec in twins]


def _evaluate_twins(c: Context, texts: list[str]) -> None:
    """Compute the registry specs ``texts`` not in ``c.cache`` yet, in one
    plan (each block of queries ranked once for all), into ``c.cache``."""
    from ..._plan import Entry, Plan
    from ..._vocab.spec import parse_specs

    texts = [text for text in dict.fromkeys(texts) if text not in c.cache]
    if not texts:
        return
    gains = any("gains=" in text for text in texts)
    key = ("data", c.level < 0 or gains, gains)
    if key not in c.cache:
        c.cache[key] = c.data.as_data(codes=key[1], trec_levels=gains)
    specs = parse_specs(texts)
    plan = Plan.resolved(specs, {"convention": "trec_eval", "threshold": c.level})
    plan = Plan(Entry(e.key, e.spec, {**e.options, "ties": TREC_ORDER}) for e in plan.entries)
    part = plan.per_query(c.cache[key])
    for text, spec in zip(texts, specs, strict=True):
        values = part.values[str(spec)].copy()
        values[part.empty[str(spec)]] = 0.0  # trec_eval's 0 (convention: empty="zero")
        c.cache[text] = values


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
