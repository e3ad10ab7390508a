"""An independent, deliberately naive reference for every ranking metric.

Written from DESIGN.md §3 and the docstrings of :mod:`sklearn_rank.metrics`,
never from the package's code, and importing nothing from it: one query at a
time, documents ranked with :func:`sorted`, ranks visited in a plain loop,
exact arithmetic (:class:`fractions.Fraction`) wherever a value is rational
(discounts and fractional powers of two enter as the exact value of their
float). ``ties="average"`` is the mean over every ordering of the tied
documents, enumerated by brute force. NumPy is used only to call the user's
gain and discount callables, which take arrays by contract.

:func:`evaluate` returns one :class:`Result` per metric, or raises
:class:`Invalid` when the package must raise ValueError, or
:class:`Unsupported` for inputs this reference cannot compute exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

_COMMON = {"ties", "empty", "convention"}
_BINARY = {"threshold"} | _COMMON
#: The options the reference implements for each metric (DESIGN §3, docstrings).
METRIC_PARAMS = {
    "cg": {"k", "gain"} | _COMMON,
    "dcg": {"k", "gain", "gains", "discount", "log_base"} | _COMMON,
    "ndcg": {"k", "gain", "gains", "discount", "log_base"} | _COMMON,
    "p": {"k", "capped"} | _BINARY,
    "recall": {"k"} | _BINARY,
    "f1": {"k", "capped", "beta"} | _BINARY,
    "hit_rate": {"k"} | _BINARY,
    "r_precision": _BINARY,
    "map": {"k", "capped"} | _BINARY,
    "gmap": _BINARY,
    "mrr": {"k"} | _BINARY,
    "err": {"k", "max_grade"} | _COMMON,
    "bpref": _BINARY,
    "rank_eff": _BINARY,
    "rbp": {"k", "p"} | _BINARY,
    # C/W/L (Moffat et al.; ir_measures' cwl_eval measures) and Judged@k
    "judged": {"k"} | _COMMON,
    "cwl_rbp": {"depth", "p", "residual"} | _BINARY,
    "sdcg": {"depth", "min_rel", "max_rel", "residual"} | _COMMON,
    "nerr8": {"depth", "min_rel", "max_rel", "residual"} | _COMMON,
    "nerr9": {"depth", "min_rel", "max_rel", "residual"} | _COMMON,
    "nerr10": {"depth", "p", "min_rel", "max_rel", "residual"} | _COMMON,
    "nerr11": {"depth", "target", "min_rel", "max_rel", "residual"} | _COMMON,
    "inst": {"depth", "target", "min_rel", "max_rel", "residual"} | _COMMON,
    "insq": {"depth", "target", "min_rel", "max_rel", "residual"} | _COMMON,
    "bpm": {"depth", "target", "min_rel", "max_rel", "residual"} | _COMMON,
    # per-user ROC AUC (its mean: uAUC) and DIN's GAUC (weighted by rows)
    "auc": _BINARY,
    "gauc": _BINARY,
}
CWL = {"cwl_rbp", "sdcg", "nerr8", "nerr9", "nerr10", "nerr11", "inst", "insq", "bpm"}
#: Orderings of tied documents the package enumerates at most for a C/W/L metric.
MAX_ORDERINGS = 40320
DEFAULTS = {"k": None, "gain": "exponential", "discount": "log2", "log_base": 2.0,
            "ties": "average", "empty": "zero", "convention": None, "threshold": 1.0,
            "capped": False, "max_grade": 4.0, "p": 0.8, "min_rel": 0.0, "max_rel": 4.0,
            "depth": 1000, "target": 1.0, "residual": False, "gains": None, "beta": 1.0}
#: A metric's own defaults: a user with one class has no AUC (left out of the mean).
METRIC_DEFAULTS = {"auc": {"empty": "skip"}, "gauc": {"empty": "skip"}}
#: Metrics whose mean weighs each query by its number of rows (times its weight).
BY_IMPRESSIONS = {"gauc"}
TIES = ("average", "stable", "pessimistic", "optimistic")
EMPTY = ("zero", "one", "skip", "nan", "raise")
GAINS = ("exponential", "linear")
DISCOUNTS = ("log2", "classic")
#: What each convention sets: for every metric ("*"), then per metric.
CONVENTIONS = {
    "sklearn": {"*": {"gain": "linear", "ties": "average", "empty": "zero"},
                "auc": {"empty": "raise"}, "gauc": {"empty": "raise"}},
    "lightgbm": {"*": {"gain": "exponential", "ties": "stable"},
                 "ndcg": {"empty": "one"}, "map": {"empty": "one", "capped": True}},
    "xgboost": {"*": {"gain": "exponential", "ties": "stable"},
                "ndcg": {"empty": "one"}, "map": {"empty": "one", "capped": True},
                "p": {"capped": True}},
    "trec_eval": {"*": {"gain": "linear", "ties": "stable", "empty": "zero"},
                  "auc": {"empty": "skip"}, "gauc": {"empty": "skip"}},
}
GMAP_FLOOR = 1e-5
# Gains or stop probabilities this large may be refused instead of computed
# (DESIGN §8: "computed scale-free ... or refused with a message").
_HUGE = 1e300


class Invalid(Exception):
    """The input is invalid: the package must raise ValueError."""


class Unsupported(Exception):
    """This reference cannot compute the value exactly (e.g. 2**1e300)."""


@dataclass
class Result:
    per_query: list  # floats in sorted-qid order; NaN where skipped or 'nan'
    mean: float
    n_empty: int
    may_refuse: bool  # extreme magnitudes: a clear ValueError is acceptable too


# -- inputs ---------------------------------------------------------------------


def _tolist(a):
    return a.tolist() if hasattr(a, "tolist") else list(a)


def _finite(values, name):
    for v in values:
        if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v):
            raise Invalid(f"{name}: {v!r} is not a finite number")


def queries(y_true, y_score, qid=None, sample_weight=None):
    """``[(qid, [(label, score), ...], weight)]`` in sorted qid order, rows in
    input order; weight None when unweighted."""
    labels, scores = _tolist(y_true), _tolist(y_score)
    weights = None if sample_weight is None else _tolist(sample_weight)
    if qid is None:  # the 2-D layout: row i is query i, sample_weight[i] its weight
        qid = [i for i, row in enumerate(labels) for _ in row]
        if weights is not None:
            weights = [w for w, row in zip(weights, labels, strict=True) for _ in row]
        labels = [v for row in labels for v in _tolist(row)]
        scores = [v for row in scores for v in _tolist(row)]
    rows, row_weights = {}, {}
    for i, q in enumerate(_tolist(qid)):
        rows.setdefault(q, []).append((labels[i], scores[i]))
        row_weights.setdefault(q, []).append(None if weights is None else weights[i])
    _finite(labels, "y_true")
    _finite(scores, "y_score")
    if weights is None:
        return [(q, rows[q], None) for q in sorted(rows)]
    _finite(weights, "sample_weight")
    if any(w < 0 for w in weights):
        raise Invalid("negative sample_weight")
    # A query's weight is the mean of its rows' weights.
    mean = {q: sum(Fraction(w) for w in ws) / len(ws) for q, ws in row_weights.items()}
    if sum(mean.values()) == 0:
        raise Invalid("sample_weight sums to zero")
    return [(q, rows[q], mean[q]) for q in sorted(rows)]


# -- options ----------------------------------------------------------------------


def resolve(name, explicit, options):
    """All options of a metric: explicit > evaluate's options > convention > default."""
    accepted = METRIC_PARAMS[name]
    convention = explicit.get("convention", options.get("convention"))
    values = {p: METRIC_DEFAULTS.get(name, {}).get(p, DEFAULTS[p]) for p in accepted}
    if convention is not None:
        preset = {**CONVENTIONS[convention].get("*", {}),
                  **CONVENTIONS[convention].get(name, {})}
        values.update({p: v for p, v in preset.items() if p in accepted})
    values.update({p: v for p, v in options.items() if p in accepted and v is not None})
    values.update({p: v for p, v in explicit.items() if v is not None})
    values["convention"] = convention
    return values


def check_option(name, value):
    """Raise Invalid for an option value outside its declared domain."""
    number = isinstance(value, Real) and not isinstance(value, bool)
    text = isinstance(value, str)
    if name == "k":
        ok = value is None or (isinstance(value, Integral) and not isinstance(value, bool)
                               and value >= 1)
    elif name == "p":
        ok = number and 0 < value < 1
    elif name in ("log_base", "max_grade", "threshold"):
        ok = number and math.isfinite(value) and value > {"log_base": 1, "max_grade": 0,
                                                          "threshold": -math.inf}[name]
    elif name == "depth":
        ok = isinstance(value, Integral) and not isinstance(value, bool) and 1 <= value <= 1e5
    elif name in ("min_rel", "max_rel"):
        ok = number and math.isfinite(value)
    elif name == "target":
        ok = number and math.isfinite(value) and value > 0
    elif name in ("capped", "residual"):
        ok = isinstance(value, bool)
    elif name == "beta":
        ok = number and math.isfinite(value)
    elif name == "gains":  # 'level=gain' pairs (their gains checked where used)
        ok = value is None or text
    elif name in ("ties", "empty", "convention"):
        ok = text and value in {"ties": TIES, "empty": EMPTY, "convention": CONVENTIONS}[name]
    else:  # gain, discount: a name, a table (checked where used) or a callable
        ok = not text or value in (GAINS if name == "gain" else DISCOUNTS)
    if not ok:
        raise Invalid(f"{name}={value!r}")


def _nonnegative(values, name):
    _finite(values, name)
    if any(v < 0 for v in values):
        raise Invalid(f"{name} has a negative value")


def _pow2(x):
    """2**x exactly for integers, else the exact integer power times the float
    of the fractional one."""
    if x > 1e5:
        raise Unsupported(f"2**{x}")
    whole = math.floor(x)
    return Fraction(2) ** whole * Fraction(2.0 ** (x - whole))


def _with_pairs(table: dict, gains: str) -> dict:
    """The gains of ``table`` with the levels of ``gains`` ('1=3,2=9': whole
    levels, the first pair of a level wins) at their gains (finite, >= 0)."""
    out, done = dict(table), set()
    for part in gains.split(","):
        level, _, value = part.partition("=")
        gain = float(value)
        if not math.isfinite(gain) or gain < 0:
            raise Invalid("a gain pair's gain is negative or not finite")
        if int(level) in done:
            continue
        done.add(int(level))
        for lab in out:
            if lab == int(level):
                out[lab] = Fraction(gain)
    return out


def gain_function(gain, labels):
    """``label -> Fraction`` for every label of the data (checked here), and
    whether the gains are large enough to be refused."""
    if any(lab < 0 for lab in labels):
        raise Invalid("negative label for a gain-based metric")
    if gain == "linear":
        table = {lab: Fraction(lab) for lab in labels}
    elif gain == "exponential":
        table = {lab: _pow2(lab) - 1 for lab in labels}
    elif callable(gain):
        table = {}
        for lab in labels:
            out = np.asarray(gain(np.array([lab], dtype=float)), dtype=float)
            if out.shape != (1,) or not math.isfinite(out[0]) or out[0] < 0:
                raise Invalid("gain callable gave a bad gain")
            table[lab] = Fraction(float(out[0]))
    elif isinstance(gain, Mapping):
        _nonnegative(list(gain.values()), "gain")
        if any(lab not in gain for lab in labels):
            raise Invalid("label missing from the gain mapping")
        table = {lab: Fraction(gain[lab]) for lab in labels}
    else:
        _nonnegative(list(gain), "gain")
        if any(lab != int(lab) or lab >= len(gain) for lab in labels):
            raise Invalid("label not an index of the gain array")
        table = {lab: Fraction(gain[int(lab)]) for lab in labels}
    huge = any(g >= _HUGE for g in table.values()) or (
        gain == "exponential" and any(lab >= 1024 for lab in labels))
    return table, huge


def discounts(discount, log_base, size):
    """Discount of ranks 1..size as Fractions (the exact value of each float)."""
    if size == 0:
        return []
    if discount == "log2":
        values = [1 / math.log(r + 1, log_base) if log_base != 2 else 1 / math.log2(r + 1)
                  for r in range(1, size + 1)]
    elif discount == "classic":
        values = [1 / max(1.0, math.log(r, log_base)) for r in range(1, size + 1)]
    elif callable(discount):
        out = np.asarray(discount(np.arange(1, size + 1, dtype=float)), dtype=float)
        if out.shape != (size,):
            raise Invalid("discount callable gave the wrong shape")
        values = out.tolist()
        _nonnegative(values, "discount")
    else:
        _nonnegative(list(discount), "discount")
        if len(discount) < size:
            raise Invalid(f"discount array shorter than rank {size}")
        values = list(discount[:size])
    return [Fraction(v) for v in values]


# -- orderings --------------------------------------------------------------------


def orderings(rows, ties):
    """``[(labels in rank order, probability)]`` of a query under a tie policy."""
    keys = {"stable": lambda row: -row[1],  # input order (sorted is stable)
            "pessimistic": lambda row: (-row[1], row[0]),  # least relevant first
            "optimistic": lambda row: (-row[1], -row[0])}
    if ties in keys:
        return [(tuple(lab for lab, _ in sorted(rows, key=keys[ties])), Fraction(1))]
    # 'average': every ordering of each tie group, all equally likely. Each
    # distinct sequence of labels of a group comes from the same number of
    # orderings (the product of the factorials of the label counts), so the
    # mean over the distinct sequences is the mean over all orderings.
    groups = []
    for score in sorted({s for _, s in rows}, reverse=True):
        members = [lab for lab, s in rows if s == score]
        groups.append(sorted(set(itertools.permutations(members))))
    combos = list(itertools.product(*groups))
    return [(tuple(lab for part in combo for lab in part), Fraction(1, len(combos)))
            for combo in combos]


# -- per-query metrics: (labels in rank order, query, options, k) -> value --------


def _top(seq, k):
    return seq if k is None else seq[:k]


def _gain_sum(seq, k, q, p):
    return sum((q["gain"][lab] for lab in _top(seq, k)), Fraction(0))


def _dcg(seq, k, q, p):
    return sum((q["gain"][lab] * d for lab, d in zip(_top(seq, k), q["discount"],
                                                     strict=False)), Fraction(0))


def _ndcg(seq, k, q, p):
    return _dcg(seq, k, q, p) / q["idcg"]


def _hits(seq, k, p):
    return sum(1 for lab in _top(seq, k) if lab >= p["threshold"])


def _p(seq, k, q, p):
    n = len(seq)
    return Fraction(_hits(seq, k, p), n if k is None else (min(k, n) if p["capped"] else k))


def _recall(seq, k, q, p):
    return Fraction(_hits(seq, k, p), q["R"])


def _f1(seq, k, q, p):
    """F-beta: (1 + w) P R / (w P + R), w = beta**2 (trec_eval's convention: w = beta)."""
    precision, recall = _p(seq, k, q, p), _recall(seq, k, q, p)
    beta = Fraction(p["beta"])
    w = beta if p["convention"] == "trec_eval" else beta * beta
    if precision * recall == 0:
        return Fraction(0)
    return (1 + w) * precision * recall / (w * precision + recall)


def _hit_rate(seq, k, q, p):
    return Fraction(int(_hits(seq, k, p) > 0))


def _r_precision(seq, k, q, p):
    return Fraction(_hits(seq, q["R"], p), q["R"])


def _ap(seq, k, q, p):
    total, found = Fraction(0), 0
    for r, lab in enumerate(_top(seq, k), start=1):
        if lab >= p["threshold"]:
            found += 1
            total += Fraction(found, r)
    return total / (min(q["R"], k) if p.get("capped") and k is not None else q["R"])


def _mrr(seq, k, q, p):
    for r, lab in enumerate(_top(seq, k), start=1):
        if lab >= p["threshold"]:
            return Fraction(1, r)
    return Fraction(0)


def _err(seq, k, q, p):
    value, go_on = Fraction(0), Fraction(1)
    for r, lab in enumerate(_top(seq, k), start=1):
        stop = q["stop"][lab]
        value += go_on * stop / r
        go_on *= 1 - stop
    return value


def _pairs(seq, p, q, credit):
    """(1/R) sum over relevant ranks of credit(non-relevant documents above)."""
    total, above = Fraction(0), 0
    for lab in seq:
        if lab >= p["threshold"]:
            total += credit(above)
        else:
            above += 1
    return total / q["R"]


def _bpref(seq, k, q, p):
    big_r, n = q["R"], len(seq) - q["R"]
    return _pairs(seq, p, q, lambda above: 1 - Fraction(min(above, big_r), min(n, big_r))
                  if above > 0 else Fraction(1))


def _rank_eff(seq, k, q, p):
    n = len(seq) - q["R"]
    return _pairs(seq, p, q, lambda above: 1 - Fraction(above, n) if n else Fraction(1))


def _rbp(seq, k, q, p):
    """Moffat & Zobel's (1 - p) sum over relevant ranks r <= k of p**(r - 1)."""
    persistence = Fraction(p["p"])
    return (1 - persistence) * sum((persistence ** (r - 1) for r, lab in
                                    enumerate(_top(seq, k), start=1) if lab >= p["threshold"]),
                                   Fraction(0))


def _judged(seq, k, q, p):
    """Flat rows: every row is a judged document."""
    return Fraction(1)


def _cwl_gain(lab, p):
    return (min(max(lab, 0, p["min_rel"]), p["max_rel"]) - p["min_rel"]) / (
        p["max_rel"] - p["min_rel"])


def _continuation(name, p, i, g, total):
    """C_i of the C/W/L user at rank i (gain g, total gain so far ``total``)."""
    t = p.get("target")
    if name == "cwl_rbp":
        return p["p"]
    if name == "sdcg":
        return math.log2(i + 1) / math.log2(i + 2)
    if name == "insq":
        return ((i + 2 * t - 1) / (i + 2 * t)) ** 2
    if name == "inst":
        return ((i + 2 * t - total - 1) / (i + 2 * t - total)) ** 2
    if name == "bpm":
        return 1.0 if total < t else 0.0
    factor = {"nerr8": 1.0, "nerr9": i / (i + 1), "nerr10": p.get("p"),
              "nerr11": ((i + 2 * t - 1) / (i + 2 * t)) ** 2 if t else None}[name]
    return factor * (1 - g)


def _cwl(name):
    """Expected utility per document, sum_i W_i g_i, W_i = prod_{j<i} C_j normalised
    over ranks 1..depth (floats: the products of 1000 ranks are not rational here)."""
    def utility(gains, p):
        reach, total, numerator, denominator = 1.0, 0.0, 0.0, 0.0
        for i, g in enumerate(gains, start=1):
            total += g
            numerator += reach * g
            denominator += reach
            reach *= _continuation(name, p, i, g, total)
        return numerator / denominator

    def kernel(seq, k, q, p):
        gains = [float(lab >= p["threshold"]) if name == "cwl_rbp" else float(_cwl_gain(lab, p))
                 for lab in seq][:p["depth"]]
        missing = p["depth"] - len(gains)
        value = utility(gains + [0.0] * missing, p)
        if not p["residual"]:
            return value
        # residual: the ranks the list lacks at gain 1 (flat rows: every row is judged)
        return max(utility(gains + [1.0] * missing, p) - value, 0.0)

    return kernel


def _auc(seq, k, q, p):
    """The share of (relevant, non-relevant) pairs in which the relevant one
    ranks first (the mean over orderings counts a tied pair 1/2)."""
    above = wins = 0
    for lab in seq:
        if lab >= p["threshold"]:
            above += 1
        else:
            wins += above
    return Fraction(wins, q["R"] * (len(seq) - q["R"]))


KERNELS = {"cg": _gain_sum, "dcg": _dcg, "ndcg": _ndcg, "p": _p, "recall": _recall,
           "f1": _f1, "hit_rate": _hit_rate, "r_precision": _r_precision, "map": _ap,
           "gmap": _ap, "mrr": _mrr, "err": _err, "bpref": _bpref, "rank_eff": _rank_eff,
           "rbp": _rbp, "judged": _judged, **{name: _cwl(name) for name in CWL},
           "auc": _auc, "gauc": _auc}
GEOMETRIC = {"gmap"}


# -- one metric over all queries ------------------------------------------------------


def _query_facts(name, p, k, rows, data_labels):
    """What a metric needs of a query besides its ranking; (facts, empty)."""
    labels = [lab for lab, _ in rows]
    if name in ("cg", "dcg", "ndcg"):
        facts = {"gain": data_labels["gain"]}
        gains = sorted((facts["gain"][lab] for lab in labels), reverse=True)
        if name == "cg":
            return facts, not any(gains)
        facts["discount"] = data_labels["discount"]
        facts["idcg"] = sum((g * d for g, d in zip(_top(gains, k), facts["discount"],
                                                   strict=False)), Fraction(0))
        return facts, (facts["idcg"] == 0 if name == "ndcg" else not any(gains))
    if name == "err":
        return {"stop": data_labels["stop"]}, not any(lab > 0 for lab in labels)
    if name == "judged":
        return {}, False
    if name in CWL and p["residual"]:
        return {}, False
    if name in CWL and name != "cwl_rbp":
        return {}, not any(_cwl_gain(lab, p) > 0 for lab in labels)
    big_r = sum(1 for lab in labels if lab >= p["threshold"])
    if name in ("auc", "gauc"):  # one class only: no AUC
        return {"R": big_r}, big_r in (0, len(labels))
    return {"R": big_r}, big_r == 0


def _data_checks(name, p, k, all_queries):
    """Per-data tables (gains, discounts, stop probabilities), checked; and
    whether the magnitudes allow a refusal."""
    labels = sorted({lab for _, rows, _ in all_queries for lab, _ in rows})
    if name in ("cg", "dcg", "ndcg"):
        if (name != "cg" and p["convention"] == "sklearn"
                and any(len(rows) < 2 for _, rows, _ in all_queries)):
            raise Invalid("a one-document query: scikit-learn's ndcg_score refuses it")
        table, huge = gain_function(p["gain"], labels)
        if p.get("gains") is not None:
            table = _with_pairs(table, p["gains"])
        longest = max(len(rows) for _, rows, _ in all_queries)
        size = longest if k is None else min(k, longest)
        d = discounts(p["discount"], p["log_base"], size) if name != "cg" else []
        return {"gain": table, "discount": d}, huge
    if name == "err":
        if any(lab < 0 or lab > p["max_grade"] for lab in labels):
            raise Invalid("ERR label outside [0, max_grade]")
        scale = _pow2(p["max_grade"])
        stop = {lab: (_pow2(lab) - 1) / scale for lab in labels}
        return {"stop": stop}, p["max_grade"] >= 1024
    if name == "judged" or (name in CWL and name != "cwl_rbp"):
        if any(lab < 0 for lab in labels):
            raise Invalid(f"{name}: negative label")
        if name != "judged" and not p["min_rel"] < p["max_rel"]:
            raise Invalid("min_rel >= max_rel")
    if name in CWL and p["ties"] == "average" and name not in ("cwl_rbp", "sdcg", "insq"):
        for _, rows, _ in all_queries:  # the package enumerates the orderings
            if len(orderings(rows, "average")) > MAX_ORDERINGS:
                raise Unsupported("too many orderings of tied documents")
    return {}, False


def _metric(name, k, explicit, options, all_queries, cache):
    p = resolve(name, explicit, options)
    for option, value in {**explicit, "k": k}.items():
        check_option(option, value)
    tables, huge = _data_checks(name, p, k, all_queries)
    values, empty, weights = [], [], []
    for i, (_, rows, weight) in enumerate(all_queries):
        facts, is_empty = _query_facts(name, p, k, rows, tables)
        key = (i, p["ties"])
        if key not in cache:
            cache[key] = orderings(rows, p["ties"])
        value = None
        if not is_empty:
            value = sum((w * KERNELS[name](seq, k, facts, p) for seq, w in cache[key]),
                        Fraction(0))
        values.append(value)
        empty.append(is_empty)
        weight = Fraction(1) if weight is None else weight
        weights.append(weight * len(rows) if name in BY_IMPRESSIONS else weight)
    return _finish(name, p["empty"], values, empty, weights, huge)


def _float(x):
    try:
        return float(x)
    except OverflowError:
        raise Invalid("the value overflows float64") from None


def _finish(name, policy, values, empty, weights, huge):
    n_empty = sum(empty)
    if n_empty and policy == "raise":
        raise Invalid("empty query under empty='raise'")
    fill = {"zero": Fraction(0), "one": Fraction(1)}.get(policy)  # skip, nan: None
    values = [fill if e else v for v, e in zip(values, empty, strict=True)]
    per_query = [math.nan if v is None else _float(v) for v in values]
    counted = [(v, w) for v, w in zip(values, weights, strict=True) if v is not None]
    total = sum((w for _, w in counted), Fraction(0))
    if (policy == "nan" and n_empty) or total == 0:
        return Result(per_query, math.nan, n_empty, huge)
    if name in GEOMETRIC:
        logs = sum(float(w) * math.log(max(float(v), GMAP_FLOOR)) for v, w in counted)
        mean = math.exp(logs / float(total))
    else:
        mean = _float(sum((v * w for v, w in counted), Fraction(0)) / total)
    return Result(per_query, mean, n_empty, huge)


def evaluate(y_true, y_score, qid=None, metrics=(), options=None, sample_weight=None):
    """One :class:`Result` per metric ``(name, k, explicit options)``, with
    ``options`` applied to every metric that takes them and does not set them.

    Raises :class:`Invalid` if any metric cannot be computed on the input.
    """
    options = dict(options or {})
    for option, value in options.items():
        check_option(option, value)
    all_queries = queries(y_true, y_score, qid, sample_weight)
    cache = {}
    return [_metric(name, k, dict(explicit), options, all_queries, cache)
            for name, k, explicit in metrics]
