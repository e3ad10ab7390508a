"""trec_eval 10.0's measure table, ``-m`` grammar, summaries and output lines.

:func:`parse_measures` reads ``-m`` arguments as trec_eval does (nicknames
``official``, ``all_trec``, ``set``; ``name.params`` with the first
parameters given winning); :func:`trec_eval` computes the requested measures
on :mod:`~sklearn_rank.trec._trec_eval.rankings`'s rankings and returns a :class:`TrecResult`,
whose
:meth:`~TrecResult.lines` are trec_eval's output, byte for byte.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from . import _gain as gain
from . import _measures as m
from . import _set as st
from .rankings import Ranked

__all__ = ["MEASURES", "NICKNAMES", "Params", "TrecEvalError", "TrecResult", "parse_measures",
           "trec_eval"]


class TrecEvalError(ValueError):
    """A measure list trec_eval refuses (the message says why)."""


_LONG, _DOUBLE, _PARAMS, _PAIRS = "long cut-offs", "double cut-offs", "parameters", "pairs"
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_POINTS = tuple(i / 10 for i in range(11))


@dataclass(frozen=True)
class _Measure:
    name: str
    compute: object  # (Context, params or defaults) -> [(name, values)]
    kind: str  # "D" double, "L" long, "S" summary only, "Q" per query only
    summary: str | None  # mean, sum, gmean, count, string, or None
    params: str | None = None
    default: tuple = ()


def _runid(c, _):
    return []


M = _Measure
MEASURES = {x.name: x for x in [
    M("runid", _runid, "S", "string"),
    M("num_q", _runid, "S", "count"),
    M("num_ret", m.num_ret, "L", "sum"),
    M("num_rel", m.num_rel, "L", "sum"),
    M("num_rel_ret", m.num_rel_ret, "L", "sum"),
    M("map", m.map_, "D", "mean"),
    M("gm_map", m.gm_map, "S", "gmean"),
    M("Rprec", m.rprec, "D", "mean"),
    M("bpref", m.bpref, "D", "mean"),
    M("recip_rank", m.recip_rank, "D", "mean"),
    M("iprec_at_recall", m.iprec_at_recall, "D", "mean", _DOUBLE, _POINTS),
    M("P", m.P, "D", "mean", _LONG, _CUTS),
    M("relstring", st.relstring, "Q", None, _PARAMS),
    M("recall", m.recall, "D", "mean", _LONG, _CUTS),
    M("infAP", m.infap, "D", "mean"),
    M("gm_bpref", m.gm_bpref, "S", "gmean"),
    M("Rprec_mult", m.rprec_mult, "D", "mean", _DOUBLE, tuple(i / 5 for i in range(1, 11))),
    M("utility", st.utility, "D", "mean", _PARAMS),
    M("11pt_avg", m.pt11_avg, "D", "mean", _PARAMS),
    M("binG", m.bin_g, "D", "mean"),
    M("G", gain.g_measure, "D", "mean", _PAIRS),
    M("dcg", gain.dcg, "D", "mean", _PAIRS),
    M("ideal_dcg", gain.ideal_dcg, "D", "mean", _PAIRS),
    M("ndcg", gain.ndcg, "D", "mean", _PAIRS),
    M("ndcg_rel", gain.ndcg_rel, "D", "mean", _PAIRS),
    M("Rndcg", gain.rndcg, "D", "mean", _PAIRS),
    M("ndcg_cut", gain.ndcg_cut, "D", "mean", _LONG, _CUTS),
    M("map_cut", m.map_cut, "D", "mean", _LONG, _CUTS),
    M("relative_P", m.relative_p, "D", "mean", _LONG, _CUTS),
    M("success", m.success, "D", "mean", _LONG, (1, 5, 10)),
    M("set_P", st.set_p, "D", "mean"),
    M("set_relative_P", st.set_relative_p, "D", "mean"),
    M("set_recall", st.set_recall, "D", "mean"),
    M("set_map", st.set_map, "D", "mean"),
    M("set_F", st.set_f, "D", "mean", _PARAMS),
    M("num_nonrel_judged_ret", m.num_nonrel_judged_ret, "L", "sum"),
    M("rbp", gain.rbp, "D", "mean", _PAIRS),
    M("rbp_resid", gain.rbp_resid, "D", "mean", _PAIRS),
    M("unj", st.unj, "D", "mean", _LONG, (5, 10, 20)),
]}
del M

_OFFICIAL = ("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
             "iprec_at_recall P").split()
NICKNAMES = {
    "official": _OFFICIAL,
    "all_trec": _OFFICIAL + (
        "relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P "
        "Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall "
        "set_relative_P set_map set_F num_nonrel_judged_ret").split(),
    "set": ("runid num_q num_ret num_rel num_rel_ret utility set_P set_recall "
            "set_relative_P set_map set_F").split(),
}


@dataclass(frozen=True)
class Params:
    """A measure's parameter string as given (``text``) and as read."""

    text: str
    values: tuple = ()
    pairs: tuple = field(default=())


_NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                     re.IGNORECASE)


def atof(text: str) -> float:
    """C's ``atof``: the longest number at the start of ``text``, else 0."""
    match = _NUMBER.match(text)
    return float(match.group(0)) if match else 0.0


def atol(text: str) -> int:
    match = re.match(r"\s*[+-]?\d+", text)
    return int(match.group(0)) if match else 0


def _parse_params(measure: _Measure, text: str) -> Params | tuple:
    """The cut-offs (a sorted tuple) or the :class:`Params` of ``measure.text``."""
    parts = text.split(",")
    if measure.params == _LONG:
        cuts = sorted(atol(p) for p in parts)
        if any(k <= 0 for k in cuts):
            raise TrecEvalError(f"measure '{measure.name}.{text}': negative cutoff detected "
                                "(cut-offs are whole numbers > 0)")
        if len(set(cuts)) < len(cuts):
            raise TrecEvalError(f"measure '{measure.name}.{text}': duplicate cutoffs detected")
        return tuple(cuts)
    if measure.params == _DOUBLE:
        cuts = sorted(atof(p) for p in parts)
        if len(set(cuts)) < len(cuts):
            raise TrecEvalError(f"measure '{measure.name}.{text}': duplicate cutoffs detected")
        return tuple(cuts)
    if measure.params == _PARAMS:
        return Params(text, tuple(atof(p) for p in parts))
    pairs = []
    for part in parts:
        name, eq, value = part.partition("=")
        if not eq or "=" in value:
            raise TrecEvalError(f"measure '{measure.name}.{text}': malformed pair parameters "
                                f"in '{text}' (give level=gain pairs: ndcg.1=3,2=9)")
        pairs.append((name, atof(value)))
    return Params(text, (), tuple(pairs))


def _glued(name: str) -> str:
    """"; did you mean 'P.10'?" for a cut-off glued to the name of a measure
    with cut-offs (``P10``; ``ndcg_cut_10``, as trec_eval prints it), else ""."""
    match = re.fullmatch(r"([A-Za-z][A-Za-z_]*?)_?([0-9]+)", name)
    if match is None or getattr(MEASURES.get(match[1]), "params", None) != _LONG:
        return ""
    return f"; did you mean '{match[1]}.{match[2]}'?"


def parse_measures(arguments) -> dict:
    """``{measure name: parameters or None}`` for trec_eval ``-m`` arguments
    (None: the defaults), in the measure table's order; no argument means
    ``official``."""
    arguments = list(arguments) or ["official"]
    marked: set[str] = set()
    params: dict = {}
    for argument in arguments:
        name, dot, text = argument.partition(".")
        if dot and not text and (name in NICKNAMES or name in MEASURES):
            raise TrecEvalError(f"improper measure in parameter '{argument}': nothing after "
                                "the '.'")
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
            continue
        measure = MEASURES.get(name)
        if measure is None:
            raise TrecEvalError(f"illegal measure '{name}'{_glued(name)} (trec_eval measures: "
                                f"{', '.join(MEASURES)}; sets: {', '.join(NICKNAMES)})")
        marked.add(name)
        if text and measure.params is None:
            continue  # trec_eval ignores parameters of a measure without any
        if text and name not in params:
            params[name] = _parse_params(measure, text)
    return {name: params.get(name) for name in MEASURES if name in marked}


class TrecResult:
    """trec_eval's values: ``per_query[name]`` (one value per query of
    ``qids``; a str array for relstring; for gm_map and gm_bpref the logs
    their summary averages) and ``summary[name]``, under the names trec_eval
    prints, in its order. (Two cut-offs can print alike, as
    ``iprec_at_recall.0.333,0.334``: the dicts keep the last, :meth:`lines`
    both.)"""

    def __init__(self, qids: list, rows: list):
        self.qids = qids
        self._rows = rows
        self.per_query = {label: v for label, _, v, _ in rows if v is not None}
        self.summary = {label: s for label, _, _, s in rows if s is not None}

    def __repr__(self) -> str:
        return f"TrecResult({len(self.qids)} queries, {len(self._rows)} values)"

    def lines(self, per_query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output lines (with ``-q``: ``per_query``; ``-n``:
        ``summary=False``)."""
        out = []
        if per_query:
            for i, qid in enumerate(self.qids):
                out += [_line(label, qid, values[i], kind)
                        for label, kind, values, _ in self._rows
                        if values is not None and kind in "DLQ"]
        if summary:
            out += [_line(label, "all", total, kind)
                    for label, kind, _, total in self._rows if total is not None]
        return out


def _line(name: str, qid: str, value, kind: str) -> str:
    if kind == "Q":
        return f"{name:<22}\t{qid}\t'{value}'"
    if isinstance(value, str):
        return f"{name:<22}\t{qid}\t{value}"
    if kind == "L":
        return f"{name:<22}\t{qid}\t{int(value)}"
    value = float(value)
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{name:<22}\t{qid}\t{text:>6}"
    return f"{name:<22}\t{qid}\t{value:6.4f}"


def _forced(label: str) -> bool:
    """Whether trec_eval -c sets this value of a missing query to 0 (or ''):
    it compares the printed names, so ``utility_2,-1,0,0`` is not."""
    return label in ("num_ret", "utility", "relstring", "rbp_resid") or label.startswith("unj")


def trec_eval(data: Ranked, measures: dict, *, relevance_level: int = 1,
              n_docs: int = 0) -> TrecResult:
    """trec_eval's per-query values and summary of ``measures`` (from
    :func:`parse_measures`) on ``data``."""
    c = m.Context(data, relevance_level, n_docs)
    nq = data.n_queries
    rows = []  # (label, kind, per-query values or None, summary value or None)
    for name, params in measures.items():
        measure = MEASURES[name]
        if name == "runid":
            rows.append(("runid", "S", None, data.runid))
            continue
        if name == "num_q":
            rows.append(("num_q", "L", None, float(nq)))
            continue
        arg = params if params is not None or measure.params in (_PARAMS, _PAIRS) \
            else measure.default
        for label, values in measure.compute(c, arg):
            if data.missing.any() and _forced(label):
                values = np.where(data.missing, "" if label == "relstring" else 0.0, values)
            total = None if measure.summary is None else _summary(measure.summary, values,
                                                                  data, name)
            rows.append((label, measure.kind, values, total))
    return TrecResult(data.qids, rows)


def _sequential_sum(values) -> float:
    total = 0.0
    for v in values.tolist():
        total += v
    return total


def _summary(how: str, values: np.ndarray, data: Ranked, name: str):
    n = data.n_queries
    if how == "mean":
        if values.shape[0] > 1000:  # np.cumsum adds in order too
            return float(np.cumsum(values)[-1]) / n
        return _sequential_sum(values) / n
    if how == "gmean":
        return math.exp(_sequential_sum(values) / n)
    if name == "num_rel" and data.complete:
        return float(data.rel_gt0)  # trec_eval -c: every qrels line of level > 0
    return float(_sequential_sum(values))
