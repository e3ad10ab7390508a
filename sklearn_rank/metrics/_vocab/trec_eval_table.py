"""trec_eval 10.0's measure table and ``-m`` grammar.

:data:`MEASURES` declares every trec_eval measure (its output kind, summary and parameters), in
trec_eval's print order; :data:`NICKNAMES` its sets; :func:`parse_measures` reads ``-m``
arguments as trec_eval does (nicknames ``official``, ``all_trec``, ``set``; ``name.params``
with the first parameters given winning); :func:`engine_item` tells which names the
trec_eval engine computes rather than a registry spec. The kernels are in
:mod:`sklearn_rank.metrics._families.trec_eval`; trec_eval's output lines in
:mod:`sklearn_rank.trec._trec_eval.table`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from .ir_measures import irm_engine, is_irm_object
from .registry import OtherMeasure, register_other
from .trec_eval import TREC_CUTOFF_MEASURES, TREC_MEASURES

__all__ = ["DOUBLE", "TWINS", "EngineItem", "LONG", "MEASURES", "NICKNAMES", "PAIRS", "PARAMS",
           "STRINGS", "Params", "TrecEvalError", "atof", "atol", "engine_item", "parse_measures"]


class TrecEvalError(ValueError):
    """A measure list trec_eval refuses (the message says why)."""


#: The kinds of parameters of a measure (``_Measure.params``).
LONG, DOUBLE, PARAMS, PAIRS = "long cut-offs", "double cut-offs", "parameters", "pairs"
#: trec_eval's measures whose values are strings (the run's tag, the relevance string).
STRINGS = ("runid", "relstring")
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_POINTS = tuple(i / 10 for i in range(11))


class _Measure(NamedTuple):
    """One trec_eval measure: its name, the kind of value it prints (``"D"``
    double, ``"L"`` long, ``"S"`` summary only, ``"Q"`` per-query string), its
    summary (``"mean"``, ``"sum"``, ``"gmean"``, ``"count"``, ``"string"`` or
    None), the kind of its parameters and their default."""

    name: str
    kind: str
    summary: str | None
    params: str | None = None
    default: tuple = ()


M = _Measure
#: trec_eval 10.0's measures, in its print order.
MEASURES = {x.name: x for x in [
    M("runid", "S", "string"),
    M("num_q", "S", "count"),
    M("num_ret", "L", "sum"),
    M("num_rel", "L", "sum"),
    M("num_rel_ret", "L", "sum"),
    M("map", "D", "mean"),
    M("gm_map", "S", "gmean"),
    M("Rprec", "D", "mean"),
    M("bpref", "D", "mean"),
    M("recip_rank", "D", "mean"),
    M("iprec_at_recall", "D", "mean", DOUBLE, _POINTS),
    M("P", "D", "mean", LONG, _CUTS),
    M("relstring", "Q", None, PARAMS),
    M("recall", "D", "mean", LONG, _CUTS),
    M("infAP", "D", "mean"),
    M("gm_bpref", "S", "gmean"),
    M("Rprec_mult", "D", "mean", DOUBLE, tuple(i / 5 for i in range(1, 11))),
    M("utility", "D", "mean", PARAMS),
    M("11pt_avg", "D", "mean", PARAMS),
    M("binG", "D", "mean"),
    M("G", "D", "mean", PAIRS),
    M("dcg", "D", "mean", PAIRS),
    M("ideal_dcg", "D", "mean", PAIRS),
    M("ndcg", "D", "mean", PAIRS),
    M("ndcg_rel", "D", "mean", PAIRS),
    M("Rndcg", "D", "mean", PAIRS),
    M("ndcg_cut", "D", "mean", LONG, _CUTS),
    M("map_cut", "D", "mean", LONG, _CUTS),
    M("relative_P", "D", "mean", LONG, _CUTS),
    M("success", "D", "mean", LONG, (1, 5, 10)),
    M("set_P", "D", "mean"),
    M("set_relative_P", "D", "mean"),
    M("set_recall", "D", "mean"),
    M("set_map", "D", "mean"),
    M("set_F", "D", "mean", PARAMS),
    M("num_nonrel_judged_ret", "L", "sum"),
    M("rbp", "D", "mean", PAIRS),
    M("rbp_resid", "D", "mean", PAIRS),
    M("unj", "D", "mean", LONG, (5, 10, 20)),
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


#: What each measure is, for the catalogue (:data:`~.registry.OTHER`).
_ABOUT = {
    "runid": "the run's tag (a string, printed as the summary)",
    "num_q": "the number of queries evaluated",
    "num_ret": "documents retrieved",
    "num_rel": "relevant documents in the qrels (level >= -l)",
    "num_rel_ret": "relevant documents retrieved",
    "map": "mean average precision",
    "gm_map": "geometric mean of the per-query AP (floored at 1e-5)",
    "Rprec": "precision at rank R, the number of relevant documents",
    "bpref": "binary preference: relevant documents ranked above judged non-relevant ones",
    "recip_rank": "reciprocal rank of the first relevant document",
    "iprec_at_recall": "interpolated precision at recall levels (0.0, 0.1, ..., 1.0)",
    "P": "precision at cut-offs k",
    "relstring": "the levels of the top documents, as a string (per query)",
    "recall": "recall at cut-offs k",
    "infAP": "inferred AP (Yilmaz & Aslam 2006): AP estimated from a sampled pool",
    "gm_bpref": "geometric mean of the per-query bpref (floored at 1e-5)",
    "Rprec_mult": "precision at multiples of R",
    "utility": "set utility a*rel_ret + b*nonrel_ret + c*rel_nonret + d*nonrel_nonret",
    "11pt_avg": "mean interpolated precision at the 11 recall levels 0.0 .. 1.0",
    "binG": "Kishida's G with binary gains",
    "G": "Kishida's normalised G (generalised average precision) with gain pairs",
    "dcg": "discounted cumulative gain with trec_eval's gain pairs",
    "ideal_dcg": "DCG of the ideal ranking, with trec_eval's gain pairs",
    "ndcg": "normalised DCG, linear gain (or trec_eval's gain pairs)",
    "ndcg_rel": "NDCG averaged over the ranks of the relevant documents",
    "Rndcg": "NDCG averaged over the ranks where the ideal gain changes",
    "ndcg_cut": "normalised DCG at cut-offs k, linear gain",
    "map_cut": "average precision at cut-offs k",
    "relative_P": "precision at k over the best possible: relevant in top k / min(k, R)",
    "success": "1 if a relevant document is in the top k",
    "set_P": "precision of the whole retrieved set",
    "set_relative_P": "relevant retrieved / min(retrieved, R)",
    "set_recall": "recall of the whole retrieved set",
    "set_map": "set precision times set recall",
    "set_F": "F-measure of set precision and set recall (beta=1 by default)",
    "num_nonrel_judged_ret": "judged non-relevant documents retrieved",
    "rbp": "rank-biased precision (Moffat & Zobel 2008) with gain pairs and persistence p",
    "rbp_resid": "RBP's residual: the weight left to the unjudged ranks",
    "unj": "the fraction of the top k that is unjudged",
}
#: The registry metric of each measure a registry metric computes (per-query
#: values: gm_map and gm_bpref are map's and bpref's, averaged geometrically).
TWINS = {**TREC_MEASURES, **TREC_CUTOFF_MEASURES, "gm_map": "map", "gm_bpref": "bpref"}
for _name in MEASURES:
    register_other(OtherMeasure(_name, "trec_eval", _ABOUT[_name], twin=TWINS.get(_name),
                                engine=None if _name in TWINS else "trec_eval"))
del _name


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
    if measure.params == LONG:
        cuts = sorted(atol(p) for p in parts)
        if any(k <= 0 for k in cuts):
            raise TrecEvalError(f"measure '{measure.name}.{text}': negative cutoff detected "
                                "(cut-offs are whole numbers > 0)")
        if len(set(cuts)) < len(cuts):
            raise TrecEvalError(f"measure '{measure.name}.{text}': duplicate cutoffs detected")
        return tuple(cuts)
    if measure.params == DOUBLE:
        cuts = sorted(atof(p) for p in parts)
        if len(set(cuts)) < len(cuts):
            raise TrecEvalError(f"measure '{measure.name}.{text}': duplicate cutoffs detected")
        return tuple(cuts)
    if measure.params == PARAMS:
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
    if match is None or getattr(MEASURES.get(match[1]), "params", None) != LONG:
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


class EngineItem(NamedTuple):
    """One measure the trec_eval engine computes: a trec_eval ``-m`` argument
    (``text``), or an ir_measures name with its parameters (``irm``: name,
    parameters, label)."""

    text: str
    irm: tuple | None = None


def engine_item(metric) -> EngineItem | None:
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
        return None if found is None else EngineItem(text, found)
    from .spec import parse_specs

    try:
        parse_specs([text])
        return None  # the registry computes it under this name (P.10, map, ...)
    except ValueError:
        # a registry family with whole-number cut-offs (P.0, P.99999...):
        # the registry's error says what is wrong with them
        if re.fullmatch(r"[0-9,]+", text.partition(".")[2]) and _registry_knows(family):
            return None
    if family in STRINGS:
        raise ValueError(f"trec_eval's {family!r} is a string, not a number: "
                         f"sklearn_rank.trec.trec_eval(qrels, run, [{text!r}]) prints it.")
    parse_measures([text])  # trec_eval's grammar errors
    return EngineItem(text)


def _registry_knows(family: str) -> bool:
    from .spec import parse_specs

    try:
        parse_specs([family])
        return True
    except ValueError:
        return False
