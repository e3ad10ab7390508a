"""ir_measures' measure names, as registry specs with ir_measures' meaning (DESIGN §10).

A spec whose head is an ir_measures registry name in its own capitalisation
(``nDCG``, ``AP``, ``P``, ``RBP``, ``INST``, ...) is read with ir_measures'
grammar (``Name(k=v, ...)@x``, values written as Python literals, no unary
minus) and parameters, and means what ir_measures 0.4.3 computes: it becomes
the registry spec that computes it, with every option a convention could
change pinned, printed as ir_measures prints the measure (``str()``). Only
ir_measures' parameters are accepted (tie and empty-query options belong to
the lower-case registry metric, named in the message). ``P`` without a
cut-off is not an ir_measures measure: it stays trec_eval's ``P`` family.

ir_measures measure objects (``ir_measures.nDCG@10``) are read through their
``str()``, without importing ir_measures.

Each name also keeps its provider's way of reading a run (:class:`RunLayout`,
``MetricSpec.layout``), which :func:`~sklearn_rank.trec.evaluate_run` follows
when it ranks the run for it: the order of documents with equal scores, and
whether a negative qrels level counts as judged.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..._utils.validation import HasMethods
from .text import shown

__all__ = ["DIVERSITY", "ENGINE", "IRM_ALIASES", "IRM_MEASURES", "IRM_OBJECT", "TREC_LAYOUT",
           "RunLayout", "declare_measures", "irm_engine", "irm_head", "irm_label", "irm_layout",
           "irm_spec", "is_engine", "is_irm_object"]

#: The constraint an ir_measures measure object satisfies (for validate_params).
IRM_OBJECT = HasMethods(("iter_calc", "calc_aggregate"))
_NONE = object()  # no default: the parameter is optional and absent, or required

# name -> (AT parameter, {parameter: (type, default, required)} in ir_measures' order)
_CUT = ("cutoff", (int, _NONE, False))
_CUT_REQUIRED = ("cutoff", (int, _NONE, True))
_REL = ("rel", (int, 1, False))
_JUDGED = ("judged_only", (bool, False, False))
_GRADED = (("min_rel", (int, 0, False)), ("max_rel", (int, _NONE, True)))
_T = ("T", (float, 1.0, False))
_ALPHA = ("alpha", (float, 0.5, False))
_BETA = ("beta", (float, 0.5, False))
IRM_MEASURES: dict[str, dict[str, tuple]] = {
    "nDCG": dict((_CUT, ("dcg", (str, "log2", False)), ("gains", (dict, _NONE, False)), _JUDGED)),
    "AP": dict((_CUT, _REL, _JUDGED)),
    "RR": dict((_CUT, _REL, _JUDGED)),
    "P": dict((_CUT_REQUIRED, _REL, _JUDGED)),
    "R": dict((_CUT_REQUIRED, _REL, _JUDGED)),
    "Rprec": dict((_REL, _JUDGED)),
    "Bpref": dict((_REL,)),
    "Judged": dict((_CUT,)),
    "Success": dict((_CUT_REQUIRED, _REL, _JUDGED)),
    "SetP": dict((_REL, ("relative", (bool, False, False)), _JUDGED)),
    "SetR": dict((_REL,)),
    "SetF": dict((_REL, ("beta", (float, 1.0, False)), _JUDGED)),
    "SetAP": dict((_REL, _JUDGED)),
    "ERR": dict((_CUT,)),
    "RBP": dict((_CUT, ("p", (float, 0.8, False)), ("rel", (int, _NONE, False)))),
    "SDCG": dict((_CUT_REQUIRED, ("dcg", (str, "log2", False)), *_GRADED)),
    "NERR8": dict((_CUT_REQUIRED, *_GRADED)),
    "NERR9": dict((_CUT_REQUIRED, *_GRADED)),
    "NERR10": dict((("p", (float, 0.9, False)), *_GRADED)),
    "NERR11": dict((_T, *_GRADED)),
    "INST": dict((_T, *_GRADED)),
    "INSQ": dict((_T, *_GRADED)),
    "BPM": dict((_CUT_REQUIRED, _T, *_GRADED)),
    "infAP": dict((_REL,)),
    "IPrec": dict((("recall", (float, _NONE, True)), _REL, _JUDGED)),
    "NumRet": dict((("rel", (int, _NONE, False)),)),
    "NumRel": dict((_REL,)),
    "NumQ": {},
    "Compat": dict((("p", (float, 0.95, False)), ("normalize", (bool, True, False)))),
    "Accuracy": dict((_CUT, _REL)),
    # diversity (ndeval through pyndeval; sklearn_rank.trec._diversity)
    "ERR_IA": dict((_CUT_REQUIRED, _REL, _JUDGED)),
    "nERR_IA": dict((_CUT_REQUIRED, _REL, _JUDGED)),
    "alpha_DCG": dict((_CUT_REQUIRED, _REL, _ALPHA, _JUDGED)),
    "alpha_nDCG": dict((_CUT_REQUIRED, _REL, _ALPHA, _JUDGED)),
    "NRBP": dict((_REL, _ALPHA, _BETA)),
    "nNRBP": dict((_REL, _ALPHA, _BETA)),
    "AP_IA": dict((_REL, _JUDGED)),
    "P_IA": dict((_CUT_REQUIRED, _REL, _JUDGED)),
    "StRecall": dict((_CUT_REQUIRED, _REL)),
}
#: ir_measures' other names: alias -> (canonical name, parameters it binds).
IRM_ALIASES: dict[str, tuple[str, dict]] = {
    "NDCG": ("nDCG", {}), "MAP": ("AP", {}), "MRR": ("RR", {}), "Precision": ("P", {}),
    "Recall": ("R", {}), "RPrec": ("Rprec", {}), "BPref": ("Bpref", {}),
    "NumRelRet": ("NumRet", {"rel": 1}), "SetRelP": ("SetP", {"relative": True}),
    "MAP_IA": ("AP_IA", {}),
}
#: ir_measures' diversity measures (subtopic judgments: evaluate_run only)
DIVERSITY = ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "AP_IA",
             "P_IA", "StRecall")
#: ir_measures names computed by the trec_eval engine (they need qrels: evaluate_run).
ENGINE = {"infAP": "infAP", "IPrec": "iprec_at_recall", "NumRet": "num_ret / num_rel_ret",
          "NumRel": "num_rel", "NumQ": "num_q", "SetAP": "set_map"}
_SYNTAX = "ir_measures' grammar is Name(param=value, ...)@cutoff, e.g. 'nDCG(dcg=\"log2\")@10'"


class RunLayout(NamedTuple):
    """How an ir_measures provider reads a run: ``ties`` orders the documents
    of a query with equal scores (``"docno_desc"``: by decreasing document
    id, as trec_eval; ``"docno_asc"``: by increasing id; ``"input"``: in the
    run's own row order), and ``negative_judged`` tells whether a document
    with a negative qrels level counts as judged (at level 0) rather than as
    trec_eval's "in the pool, unjudged"."""

    ties: str = "docno_desc"
    negative_judged: bool = False


#: trec_eval's (and pytrec_eval's, gdeval's): the layout of every other name.
TREC_LAYOUT = RunLayout()
# cwl_eval sorts each query's rows by score, stably, and clips negative levels
# to 0; judged sorts by (-score, docno) and counts every qrels entry; compat,
# msmarco (RR@k) and pyndeval rank by (-score, docno); accuracy sorts stably.
_CWL_LAYOUT = RunLayout("input", negative_judged=True)
_LAYOUTS = {"RBP": _CWL_LAYOUT, "SDCG": _CWL_LAYOUT, "NERR8": _CWL_LAYOUT,
            "NERR9": _CWL_LAYOUT, "NERR10": _CWL_LAYOUT, "NERR11": _CWL_LAYOUT,
            "INST": _CWL_LAYOUT, "INSQ": _CWL_LAYOUT, "BPM": _CWL_LAYOUT,
            "Judged": RunLayout("docno_asc", negative_judged=True),
            "Compat": RunLayout("docno_asc"), "Accuracy": RunLayout("input"),
            **dict.fromkeys(DIVERSITY, RunLayout("docno_asc"))}  # pyndeval


def irm_layout(name: str, params: dict) -> RunLayout:
    """The layout of the provider ir_measures 0.4.3 computes ``name`` with
    (its default pipeline's first provider that supports the parameters)."""
    if name == "RR" and params.get("cutoff") is not None:
        return RunLayout("docno_asc")  # msmarco (pytrec_eval's RR takes no cut-off)
    return _LAYOUTS.get(name, TREC_LAYOUT)


def irm_head(node: ast.expr) -> str | None:
    """The ir_measures name a parsed spec starts with, or None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        node = node.left
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name) and (node.id in IRM_MEASURES or node.id in IRM_ALIASES):
        return node.id
    return None


def is_irm_object(value: Any) -> bool:
    """An ir_measures measure object (read through its ``str()``)."""
    return type(value).__module__.startswith("ir_measures.")


def _value(node: ast.expr, spec: str, param: str):
    if isinstance(node, ast.Constant) and not isinstance(node.value, bytes | complex):
        return node.value
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return {_value(k, spec, param): _value(v, spec, param)
                for k, v in zip(node.keys, node.values, strict=True)}
    raise ValueError(f"In ir_measures measure {shown(spec)}, the value of {param!r} must be a "
                     "literal (a number, string, True/False or a {int: int} dict; ir_measures "
                     "takes no negative literals).")


def _read(node: ast.expr, spec: str) -> tuple[str, dict]:
    """The canonical name and the parameters written in ``spec``."""
    at = _NONE
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at, node = _value(node.right, spec, "@"), node.left
    params: dict[str, Any] = {}
    if isinstance(node, ast.Call):
        if node.args or any(kw.arg is None for kw in node.keywords):
            raise ValueError(f"Could not parse ir_measures measure {shown(spec)}: parameters "
                             f"are named; {_SYNTAX}.")
        for kw in node.keywords:
            if kw.arg in params:
                raise ValueError(f"ir_measures measure {shown(spec)} gives {kw.arg!r} twice.")
            params[kw.arg] = _value(kw.value, spec, kw.arg)
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError(f"Could not parse ir_measures measure {shown(spec)}: {_SYNTAX}.")
    name = node.id
    name, bound = IRM_ALIASES.get(name, (name, {}))
    params = {**bound, **params}
    if at is not _NONE:
        at_param = "recall" if name == "IPrec" else "cutoff"
        if params.get(at_param, at) != at:
            raise ValueError(f"ir_measures measure {shown(spec)} gives two {at_param}s.")
        params[at_param] = at
    return name, params


def _check(name: str, params: dict, spec: str) -> None:
    """ir_measures' validation (types, choices, required), and cut-offs >= 1."""
    declared = IRM_MEASURES[name]
    for param, value in params.items():
        _check_param(name, declared, param, value, spec)
    for param, (_, _, required) in declared.items():
        if required and param not in params:
            at = "@" if param == "cutoff" else ""
            raise ValueError(f"ir_measures' {name} requires {param!r} (e.g. {name}"
                             f"{'@10' if at else f'({param}=...)'}), as ir_measures does.")
    _check_ranges(name, params, spec)


def _check_ranges(name: str, params: dict, spec: str) -> None:
    """Cut-offs >= 1, diversity probabilities in [0, 1], and the DCG forms ir_measures has."""
    if isinstance(params.get("cutoff"), int) and params["cutoff"] < 1:
        raise ValueError(f"In ir_measures measure {shown(spec)}, the cut-off must be >= 1.")
    for param in ("alpha", "beta") if name in DIVERSITY else ():
        if isinstance(params.get(param), float) and not 0.0 <= params[param] <= 1.0:
            raise ValueError(f"In ir_measures measure {shown(spec)}, {param} must be in "
                             "[0, 1] (a probability).")
    if "dcg" in params and params["dcg"] not in (("log2", "exp-log2") if name == "nDCG"
                                                 else ("log2",)):
        raise ValueError(f"ir_measures' {name} has no dcg={params['dcg']!r}.")


def _check_param(name: str, declared: dict, param: str, value, spec: str) -> None:
    """One parameter: declared by ir_measures' ``name``, and of its type."""
    if param not in declared:
        hint = (f" Options such as ties=, gain= and empty= belong to the registry metric "
                f"{_REGISTRY_NAME.get(name, name.lower())!r} (lower case)."
                if param in ("ties", "gain", "empty", "k", "threshold", "convention",
                             "discount", "capped") else "")
        listed = ", ".join(declared) or "none"
        raise ValueError(f"ir_measures' {name} has no parameter {param!r} (its parameters: "
                         f"{listed}).{hint}")
    dtype = declared[param][0]
    if not isinstance(value, dtype):
        raise ValueError(f"In ir_measures measure {shown(spec)}, {param}={value!r} must be "
                         f"of type {dtype.__name__}, as ir_measures requires"
                         + (" (write 1.0, not 1)." if dtype is float else "."))


def _format(value) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{v!r}" for k, v in sorted(value.items()) if k != v) + "}"
    return repr(value)


def irm_label(name: str, params: dict) -> str:
    """ir_measures' ``str()`` of a measure (parameters in its declared order)."""
    declared = IRM_MEASURES[name]
    at_param = "recall" if name == "IPrec" else "cutoff"
    shown_params = [f"{p}={_format(params[p])}" for p in declared
                    if p in params and p != at_param and params[p] != declared[p][1]]
    text = name + (f"({','.join(shown_params)})" if shown_params else "")
    return text + (f"@{params[at_param]!r}" if at_param in params else "")


@dataclass(frozen=True)
class IrmGains:
    """ir_measures' ``gains=``: each judged level l becomes ``gains.get(l, l)``
    (a negative result gains 0); unjudged documents gain 0 (label 0's gain is 0)."""

    items: tuple

    def __call__(self, labels: np.ndarray) -> np.ndarray:
        out = np.asarray(labels, dtype=np.float64).copy()
        for level, gain in self.items:
            out[labels == level] = gain
        return np.maximum(out, 0.0)

    @property
    def __name__(self) -> str:
        return "gains"


_REGISTRY_NAME = {"nDCG": "ndcg", "AP": "map", "RR": "mrr", "P": "p", "R": "recall",
                  "Rprec": "r_precision", "Bpref": "bpref", "Judged": "judged",
                  "Success": "hit_rate", "SetP": "p", "SetR": "recall", "SetF": "f1",
                  "ERR": "err", "RBP": "cwl_rbp", "SDCG": "sdcg", "NERR8": "nerr8",
                  "NERR9": "nerr9", "NERR10": "nerr10", "NERR11": "nerr11", "INST": "inst",
                  "INSQ": "insq", "BPM": "bpm"}
#: What each measure computed by an engine is, for the catalogue (:data:`~.registry.OTHER`).
_ENGINE_ABOUT = {
    "infAP": ("trec_eval", "trec_eval's inferred AP"),
    "IPrec": ("trec_eval", "interpolated precision at a recall level (9.0.8's cut rank)"),
    "NumRet": ("trec_eval", "documents retrieved (with rel=: relevant documents retrieved)"),
    "NumRel": ("trec_eval", "relevant documents in the qrels"),
    "NumQ": ("trec_eval", "the number of queries"),
    "SetAP": ("trec_eval", "trec_eval's set_map: set precision times set recall"),
    "Compat": ("ir_measures", "compatibility with an ideal ranking (Clarke, Vtyurina & "
                              "Smucker 2021)"),
    "Accuracy": ("ir_measures", "the fraction of (relevant, non-relevant) pairs in the right "
                                "order"),
    "ERR_IA": ("ndeval", "intent-aware expected reciprocal rank"),
    "nERR_IA": ("ndeval", "normalised intent-aware expected reciprocal rank"),
    "alpha_DCG": ("ndeval", "alpha-DCG (Clarke et al. 2008): novelty-discounted gain"),
    "alpha_nDCG": ("ndeval", "normalised alpha-DCG"),
    "NRBP": ("ndeval", "novelty- and rank-biased precision"),
    "nNRBP": ("ndeval", "normalised NRBP"),
    "AP_IA": ("ndeval", "intent-aware average precision"),
    "P_IA": ("ndeval", "intent-aware precision at k"),
    "StRecall": ("ndeval", "subtopic recall at k"),
}


def declare_measures() -> None:
    """Declare every ir_measures name in the registry's catalogue."""
    from .registry import METRICS, OtherMeasure, register_other

    for name in IRM_MEASURES:
        if name in _ENGINE_ABOUT:
            engine, about = _ENGINE_ABOUT[name]
            register_other(OtherMeasure(name, "ir_measures", about, engine=engine))
        else:
            twin = _REGISTRY_NAME[name]
            about = METRICS[twin].summary if twin in METRICS else twin
            if name == "SetP":
                about += " (relative=True: trec_eval's set_relative_P, by its engine)"
            register_other(OtherMeasure(name, "ir_measures", about, twin=twin))


def _refuse(name: str, why: str) -> None:
    raise ValueError(f"ir_measures' {name}: {why}")


def _options(name: str, params: dict) -> dict:
    """The registry options that compute ``name`` with ``params`` (ir_measures' meaning)."""
    declared = IRM_MEASURES[name]
    value = {p: params.get(p, d[1]) for p, d in declared.items()}
    options: dict[str, Any] = {"k": params.get("cutoff"), "empty": "zero",
                               "layout": irm_layout(name, params)}  # MetricSpec.layout
    if value.get("judged_only"):  # MetricSpec.judged_only: evaluate_run's -J for it alone
        if name == "nDCG" and value["dcg"] == "exp-log2":
            _refuse(name, "dcg='exp-log2' with judged_only=True has no ir_measures provider.")
        if name == "RR" and "cutoff" in params:
            _refuse(name, "RR(judged_only=True)@k has no ir_measures provider.")
        options["judged_only"] = True
    if "rel" in declared and name != "RBP":
        options["threshold"] = value["rel"]
    if name in ("AP", "P", "SetP", "SetF"):
        options["capped"] = False
    if name == "nDCG":
        options["gain"] = _ndcg_gain(value, params)
    elif name == "SetF":
        _set_f_options(options, value["beta"])
    elif name == "ERR":
        options["max_grade"] = 4.0
    elif name == "RBP":
        _rbp_options(options, value, params)
    elif name in _CWL:
        _cwl_options(name, options, value, declared)
    return options


_CWL = ("SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM")


def _ndcg_gain(value: dict, params: dict):
    """The registry gain of ``nDCG`` with ``dcg=`` / ``gains=``."""
    if value["dcg"] == "exp-log2":
        if "gains" in params:
            _refuse("nDCG", "dcg='exp-log2' with gains= has no ir_measures provider.")
        return "exponential"
    if "gains" not in params:
        return "linear"
    gains = params["gains"]
    if not all(type(k) is int and type(v) is int for k, v in gains.items()):
        _refuse("nDCG", "gains= maps integer levels to integer gains, as ir_measures "
                        "requires (e.g. gains={0: 0, 1: 1, 2: 3}).")
    if gains.get(0, 0) != 0:
        _refuse("nDCG", "a non-zero gain for level 0 is not supported (unjudged "
                        "documents hold label 0 and gain 0); use ndcg(gain={...}).")
    return IrmGains(tuple(sorted((k, v) for k, v in gains.items() if k != v)))


def _set_f_options(options: dict, beta: float) -> None:
    """``SetF(beta=b)`` is pytrec_eval's, trec_eval's ``set_F.b``: the registry's
    ``f1(beta=b)`` in trec_eval's form (w = beta, not beta**2)."""
    if beta != 1.0:
        options.update(beta=beta, convention="trec_eval")


def _rbp_options(options: dict, value: dict, params: dict) -> None:
    if value["rel"] is _NONE:
        _refuse("RBP", "write RBP(rel=1): graded RBP has no ir_measures provider.")
    if "cutoff" in params:
        _refuse("RBP", "RBP@k has no ir_measures provider; use cwl_rbp(depth=k).")
    options.update(threshold=value["rel"], p=value["p"], depth=options.pop("k"))


def _cwl_options(name: str, options: dict, value: dict, declared: dict) -> None:
    options.update(min_rel=value["min_rel"], max_rel=value["max_rel"],
                   depth=options.pop("k"))
    if "T" in declared:
        options["target"] = value["T"]
    if "p" in declared:
        options["p"] = value["p"]
    if not value["min_rel"] < value["max_rel"]:
        _refuse(name, "min_rel must be below max_rel, as ir_measures requires.")
    if options["depth"] is not None:  # cwl_eval reads at most 1000 ranks
        options["depth"] = min(options["depth"], 1000)


def is_engine(name: str, params: dict) -> bool:
    """Whether ir_measures' ``name`` with ``params`` is computed by the
    trec_eval engine (:mod:`sklearn_rank.metrics._families.trec_eval`), not the registry."""
    return (name in ENGINE or name in ("Compat", "Accuracy") or name in DIVERSITY
            or (name == "SetP" and params.get("relative", False)))


def irm_engine(node: ast.expr, spec: str) -> tuple[str, dict, str] | None:
    """``(name, parameters with defaults, label)`` of an ir_measures spec the
    trec_eval engine computes, None for any other spec."""
    if irm_head(node) is None:
        return None
    name, params = _read(node, spec)
    _check(name, params, spec)
    if not is_engine(name, params):
        return None
    values = {p: params.get(p, d[1]) for p, d in IRM_MEASURES[name].items()}
    return name, {p: None if v is _NONE else v for p, v in values.items()}, irm_label(name, params)


def irm_spec(node: ast.expr, spec: str, build: Callable) -> tuple[str, dict, str]:
    """``(registry name, options, label)`` of an ir_measures spec parsed as ``node``."""
    name, params = _read(node, spec)
    _check(name, params, spec)
    if is_engine(name, params):
        family = ENGINE.get(name) or {"SetP": "set_relative_P"}.get(name)
        label = irm_label(name, params)
        if family:
            _refuse(name, f"it is trec_eval's {family} with ir_measures' conventions, which no "
                          "registry spec computes: sklearn_rank.metrics.evaluate(y_true, "
                          f"y_score, qid=qid, metrics=[{label!r}]) gives it on flat rows, "
                          f"sklearn_rank.trec.evaluate_run(qrels, run, [{label!r}]) or "
                          "sklearn-rank evaluate on a run (a metric function or a scorer "
                          "takes registry specs only).")
        if name in DIVERSITY:
            _refuse(name, "it reads subtopic judgments (the second field of a diversity qrels "
                          "file), which flat rows do not have: sklearn_rank.trec.evaluate_run("
                          f"qrels, run, [{label!r}]) or sklearn-rank evaluate give it.")
        _refuse(name, "it compares the run with the qrels' ideal ranking, computed from "
                      f"qrels and a run: sklearn_rank.trec.evaluate_run(qrels, run, [{label!r}]) "
                      "or sklearn-rank evaluate give it.")
    return _REGISTRY_NAME[name], _options(name, params), irm_label(name, params)
