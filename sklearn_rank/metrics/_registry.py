"""The one registry of ranking metrics and the grammar of metric specs.

Everything that names a metric — the public ``*_score`` functions,
:func:`evaluate`, the scorers, the command line and reports — derives from the
tables in this module: :data:`PARAMS` (every option, its default, its
constraints and its documentation), :data:`CONVENTIONS` (presets that
reproduce a peer library) and :data:`METRICS` (one entry per metric).

A metric spec is ``name[(param=value, ...)][@k][-]``, parsed with :mod:`ast`
(never by substring matching) into an immutable, hashable :class:`MetricSpec`
that prints canonically with defaults omitted::

    ndcg@10
    ndcg(gain='linear', discount='classic')@5
    ndcg@10-            # empty queries (no relevant document) score 0
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from numbers import Integral, Real
from typing import Any

import numpy as np

from . import _spec_text
from ._columns import is_pairs as _is_pairs
from ._kernels import KERNELS
from ._spec_text import SYNTAX as _SYNTAX
from ._spec_text import shown as _shown

__all__ = [
    "CONVENTIONS",
    "METRICS",
    "PARAMS",
    "MetricSpec",
    "get_metric_names",
    "parse_metric",
]

GAINS = ("exponential", "linear")
DISCOUNTS = ("log2", "classic")
TIES = ("average", "stable", "pessimistic", "optimistic")
EMPTY = ("zero", "one", "skip", "nan", "raise")


@dataclass(frozen=True)
class Param:
    """One metric option: default, constraints and the line that documents it.

    ``declare`` returns scikit-learn parameter constraints (see
    ``sklearn.utils._param_validation``) given the :mod:`sklearn_rank._compat`
    module; it runs on first use, because importing scikit-learn's validation
    machinery takes about a second and ``import sklearn_rank.metrics`` must not.
    """

    name: str
    default: Any
    declare: Callable = None
    doc: str = ""

    @cached_property
    def constraints(self) -> list:
        from .. import _compat

        return list(self.declare(_compat))

    @cached_property
    def _plain_constraints(self) -> list:
        """The constraints, with intervals and string options as tuples."""
        return list(self.declare(_Plain))

    @cached_property
    def numeric(self) -> bool:
        """Whether the option is a number (a boolean is refused)."""
        return any(isinstance(c, tuple) and c[0] == "interval" for c in self._plain_constraints)

    def plainly_valid(self, value) -> bool:
        """Whether ``value`` meets a constraint that needs no scikit-learn to
        check: None, one of the string options, a number in the interval, a
        boolean. False leaves the verdict (and the message) to scikit-learn."""
        for c in self._plain_constraints:
            if c is None and value is None:
                return True
            if c == "boolean" and isinstance(value, bool | np.bool_):
                return True
            if not isinstance(c, tuple) or isinstance(value, bool | np.bool_):
                continue
            if c[0] == "options" and isinstance(value, str) and value in c[1]:
                return True
            if c[0] == "interval" and isinstance(value, c[1]) and _finite(value):
                _, _, left, right, closed = c
                if ((left is None or value > left or (value == left and closed in
                                                      ("left", "both")))
                        and (right is None or value < right or (value == right and closed in
                                                                ("right", "both")))):
                    return True
        return False


def _finite(value) -> bool:
    """A finite number (Python ints of any size are)."""
    if isinstance(value, Integral):
        return True
    try:
        return math.isfinite(value)
    except (TypeError, ValueError, OverflowError):
        return False


class _Plain:
    """Stands in for :mod:`sklearn_rank._compat` in :attr:`Param.declare`."""

    @staticmethod
    def Interval(type_, left, right, *, closed):  # noqa: N802 (scikit-learn's name)
        return ("interval", type_, left, right, closed)

    @staticmethod
    def StrOptions(options):  # noqa: N802
        return ("options", frozenset(options))


PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("k", None, lambda c: (c.Interval(Integral, 1, None, closed="left"), None),
              "cut-off: only the top k ranks count (None: the whole list)"),
        Param("gain", "exponential",
              lambda c: (c.StrOptions(set(GAINS)), dict, "array-like", callable, None),
              "'exponential' (2**label - 1), 'linear' (label), a label -> gain "
              "mapping or array, or a callable"),
        Param("discount", "log2",
              lambda c: (c.StrOptions(set(DISCOUNTS)), "array-like", callable),
              "'log2' (1 / log_b(r + 1)), 'classic' (Järvelin & Kekäläinen: "
              "1 / max(1, log_b r)), an array (discount[r - 1]) or a callable"),
        Param("log_base", 2.0, lambda c: (c.Interval(Real, 1, None, closed="neither"),),
              "base b of the logarithm of the discount"),
        Param("ties", "average", lambda c: (c.StrOptions(set(TIES)), None),
              "how tied scores are ordered: 'average' (expected value over all "
              "orderings), 'stable' (input order), 'pessimistic', 'optimistic'"),
        Param("empty", "zero", lambda c: (c.StrOptions(set(EMPTY)), None),
              "value of a query without relevant documents: 'zero', 'one', 'skip' "
              "(left out of the mean), 'nan', 'raise'"),
        Param("convention", None,
              lambda c: (c.StrOptions(set(CONVENTIONS)), None),
              "preset reproducing a peer library: 'sklearn', 'lightgbm', 'xgboost', "
              "'trec_eval'"),
        Param("threshold", 1.0, lambda c: (c.Interval(Real, None, None, closed="neither"),),
              "a document is relevant when its label >= threshold"),
        Param("capped", False, lambda c: ("boolean",),
              "cap the denominator at what the list allows: P@k divides by min(k, n) "
              "(XGBoost), AP@k by min(R, k) (LightGBM, XGBoost)"),
        Param("max_grade", 4.0, lambda c: (c.Interval(Real, 0, None, closed="neither"),),
              "highest relevance grade: ERR's stop probability is "
              "(2**label - 1) / 2**max_grade"),
    )
}


def validate_options(options: dict[str, Any], caller: str) -> None:
    """Check option values against the declared constraints (scikit-learn's).

    Plain valid values are recognised without importing scikit-learn's
    validation machinery (about a second, once per process: it would dominate
    a one-off ``sklearn-rank evaluate``); anything else goes to scikit-learn,
    which also words the error.
    """
    for p, v in options.items():
        _spec_text.check_number(p, v, caller, numeric=PARAMS[p].numeric)
    if all(PARAMS[p].plainly_valid(v) for p, v in options.items()):
        return
    from .._compat import validate_parameter_constraints

    validate_parameter_constraints(
        {p: PARAMS[p].constraints for p in options}, options, caller_name=caller)

#: Options each convention sets: for every metric ("*"), then per metric
#: (explicit options still win). Only the metrics a peer implements get
#: peer-specific rules; the others follow its tie order and gain.
CONVENTIONS: dict[str, dict[str, dict[str, Any]]] = {
    "sklearn": {"*": {"gain": "linear", "ties": "average", "empty": "zero"}},
    "lightgbm": {
        "*": {"gain": "exponential", "ties": "stable"},
        "ndcg": {"empty": "one"},
        "map": {"empty": "one", "capped": True},
    },
    "xgboost": {
        "*": {"gain": "exponential", "ties": "stable"},
        "ndcg": {"empty": "one"},
        "map": {"empty": "one", "capped": True},
        "p": {"capped": True},
    },
    # Linear gain (trec_eval's default gains are the relevance levels), empty
    # queries 0. trec_eval breaks score ties by document id; arrays carry no
    # document ids, so here ties keep input order (evaluate_run sorts by id).
    "trec_eval": {"*": {"gain": "linear", "ties": "stable", "empty": "zero"}},
}


def convention_options(convention: str, metric: str) -> dict[str, Any]:
    """The options a convention sets for a metric."""
    preset = CONVENTIONS[convention]
    return {**preset.get("*", {}), **preset.get(metric, {})}

_GAIN_OPTIONS = ("gain", "ties", "empty", "convention")


@dataclass(frozen=True)
class MetricInfo:
    """A registry entry."""

    name: str
    function: str
    summary: str
    params: tuple[str, ...]
    greater_is_better: bool = True
    aggregate: str = "mean"
    aliases: tuple[str, ...] = ()

    @property
    def kernel(self) -> Callable:
        return KERNELS[self.name]


_BINARY = ("threshold", "ties", "empty", "convention")
_DISCOUNTED = ("k", "gain", "discount", "log_base", "ties", "empty", "convention")
_CAPPABLE = ("k", "threshold", "capped", "ties", "empty", "convention")

METRICS: dict[str, MetricInfo] = {
    m.name: m
    for m in (
        MetricInfo("cg", "cumulative_gain_score", "cumulative gain: sum of the top-k gains",
                   ("k", *_GAIN_OPTIONS)),
        MetricInfo("dcg", "dcg_score", "discounted cumulative gain", _DISCOUNTED),
        MetricInfo("ndcg", "ndcg_score", "normalized DCG: DCG@k / ideal DCG@k", _DISCOUNTED),
        MetricInfo("p", "precision_at_k_score",
                   "precision: relevant documents in the top k / k", _CAPPABLE,
                   aliases=("precision",)),
        MetricInfo("recall", "recall_at_k_score",
                   "recall: relevant documents in the top k / relevant documents",
                   ("k", *_BINARY)),
        MetricInfo("f1", "f1_at_k_score", "harmonic mean of precision@k and recall@k",
                   _CAPPABLE),
        MetricInfo("hit_rate", "hit_rate_score",
                   "1 if a relevant document is in the top k (success@k)",
                   ("k", *_BINARY), aliases=("success",)),
        MetricInfo("r_precision", "r_precision_score",
                   "precision at R, the number of relevant documents", _BINARY),
        MetricInfo("map", "mean_average_precision_score",
                   "mean average precision: mean over relevant ranks r <= k of P@r",
                   _CAPPABLE, aliases=("ap",)),
        MetricInfo("gmap", "gmap_score",
                   "geometric mean of average precision (floor 1e-5, trec_eval's gm_map)",
                   _BINARY, aggregate="geometric"),
        MetricInfo("mrr", "mean_reciprocal_rank_score",
                   "mean reciprocal rank of the first relevant document within k",
                   ("k", *_BINARY), aliases=("rr",)),
        MetricInfo("err", "expected_reciprocal_rank_score",
                   "expected reciprocal rank (Chapelle et al., 2009)",
                   ("k", "max_grade", "ties", "empty", "convention")),
        MetricInfo("bpref", "bpref_score",
                   "binary preference (Buckley & Voorhees, 2004), trec_eval's bpref",
                   _BINARY),
        MetricInfo("rank_eff", "rank_eff_score",
                   "RankEff (Ahlgren & Grönqvist, 2008): relevant documents penalised "
                   "by the non-relevant ones above them", _BINARY),
    )
}

_ALIASES: dict[str, str] = {a: m.name for m in METRICS.values() for a in m.aliases}


def get_metric_names() -> list[str]:
    """Names of the registered metrics, usable in metric specs.

    Returns
    -------
    names : list of str
        Canonical metric names, sorted. Aliases are accepted by
        :func:`parse_metric` too but not listed.

    Examples
    --------
    >>> from sklearn_rank.metrics import get_metric_names
    >>> get_metric_names()  # doctest: +NORMALIZE_WHITESPACE
    ['bpref', 'cg', 'dcg', 'err', 'f1', 'gmap', 'hit_rate', 'map', 'mrr', 'ndcg', 'p',
     'r_precision', 'rank_eff', 'recall']
    """
    return sorted(METRICS)


def _closest(name: str, choices) -> str:
    match = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.4)
    return f" Did you mean {match[0]!r}?" if match else ""


def _lookup(name: str) -> MetricInfo:
    key = _ALIASES.get(name, name)
    if key not in METRICS:
        choices = sorted(METRICS) + sorted(_ALIASES)
        raise ValueError(
            f"Unknown metric {_shown(name)}.{_closest(name, choices)} Valid names: "
            f"{', '.join(sorted(METRICS))} (see get_metric_names())."
        )
    return METRICS[key]


def _freeze(value):
    """A hashable version of an option value (mappings and arrays become tuples)."""
    if isinstance(value, Mapping):
        return tuple(sorted((_freeze(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return tuple(value.tolist())
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _format(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple):
        if _is_pairs(value):
            return "{" + ", ".join(f"{_format(a)}: {_format(b)}" for a, b in value) + "}"
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if callable(value):
        return f"<{getattr(value, '__name__', type(value).__name__)}>"
    if isinstance(value, float) and value.is_integer():
        return repr(int(value)) if abs(value) < 1e15 else repr(value)
    return repr(value)


@dataclass(frozen=True)
class MetricSpec:
    """An immutable, hashable metric specification.

    Build one with :func:`parse_metric`; ``str(spec)`` is its canonical
    spelling, which :func:`evaluate` uses as the key of its results.

    Attributes
    ----------
    name : str
        Canonical metric name (aliases resolved).
    k : int or None
        Cut-off; None means the whole list.
    params : tuple of (str, value) pairs
        Options given explicitly, sorted by name. Options not given take the
        convention's value or the registry default when the metric is computed.
    """

    name: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def info(self) -> MetricInfo:
        return METRICS[self.name]

    @property
    def greater_is_better(self) -> bool:
        return self.info.greater_is_better

    def resolve(self, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """All options of the metric: explicit > ``options`` > convention > default."""
        options = {k: v for k, v in (options or {}).items() if v is not None}
        explicit = dict(self.params)
        accepted = self.info.params
        convention = explicit.get("convention", options.get("convention"))
        values = {p: PARAMS[p].default for p in accepted if p != "k"}
        if convention is not None:
            values.update({p: v for p, v in convention_options(convention, self.name).items()
                           if p in values})
        values.update({p: v for p, v in options.items() if p in values})
        values.update(explicit)
        values["convention"] = convention
        return values

    def _defaults(self) -> dict[str, Any]:
        explicit = dict(self.params)
        defaults = {p: PARAMS[p].default for p in self.info.params}
        if explicit.get("convention") is not None:
            defaults.update(convention_options(explicit["convention"], self.name))
        return defaults

    def __str__(self) -> str:
        defaults = self._defaults()
        # Options some convention sets: written explicitly, they pin the meaning
        # whatever convention applies, so they are printed even when default.
        pinned = {p for c in CONVENTIONS for p in convention_options(c, self.name)}
        minus = False
        shown = []
        for name in self.info.params:
            if name == "k" or name not in dict(self.params):
                continue
            value = dict(self.params)[name]
            if name == "empty" and value == "zero":
                minus = True  # printed as the '-' suffix whatever the default
                continue
            if value == defaults[name] and not callable(value) and name not in pinned:
                continue
            shown.append(f"{name}={_format(value)}")
        text = self.name
        if shown:
            text += "(" + ", ".join(shown) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        if minus:
            text += "-"
        return text

    def __repr__(self) -> str:
        return f"MetricSpec({str(self)!r})"

    def with_options(self, **options) -> MetricSpec:
        """A copy with more explicit options (validated); ``k`` sets the cut-off."""
        return _build(self.name, {**dict(self.params), "k": self.k, **options},
                      f"metric {_shown(str(self))}")


def _build(name: str, options: dict[str, Any], caller: str) -> MetricSpec:
    """A validated spec; ``caller`` names the function or spec in error messages."""
    info = _lookup(name)
    options = {k: v for k, v in options.items() if v is not None}
    unknown = [p for p in options if p not in info.params]
    if unknown:
        bad = unknown[0]
        raise ValueError(
            f"Metric {info.name!r} has no parameter {_shown(bad)}.{_closest(bad, info.params)} "
            f"Its parameters: {', '.join(info.params)}."
        )
    validate_options(options, caller)
    k = options.pop("k", None)
    params = tuple(sorted((p, _freeze(v)) for p, v in options.items()))
    return MetricSpec(info.name, None if k is None else int(k), params)


# trec_eval's measure names, as registry specs. A name means trec_eval's
# measure wherever it is used (linear gain for NDCG); cut-off families take
# ".k" or "_k", several cut-offs ".5,10", or none for trec_eval's defaults.
TREC_MEASURES: dict[str, str] = {
    "map": "map",
    "gm_map": "gmap",
    "Rprec": "r_precision",
    "bpref": "bpref",
    "recip_rank": "mrr",
    "ndcg": "ndcg(gain='linear')",
    "set_P": "p",
    "set_recall": "recall",
    "set_F": "f1",
}
TREC_CUTOFF_MEASURES: dict[str, str] = {
    "P": "p@{}",
    "recall": "recall@{}",
    "ndcg_cut": "ndcg(gain='linear')@{}",
    "map_cut": "map@{}",
    "success": "hit_rate@{}",
}
TREC_DEFAULT_CUTOFFS = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}
_TREC_PATTERN = re.compile(
    r"^(" + "|".join(TREC_CUTOFF_MEASURES) + r")(?:[._]([0-9]+(?:,[0-9]+)*))?$")


def _trec_specs(name: str) -> list[str] | None:
    """Registry spellings of a trec_eval measure name, or None if it is not one.

    Registry names win: ``"ndcg"``, ``"map"`` and ``"recall"`` keep their
    registry meaning (under ``convention="trec_eval"``, as in
    :func:`~sklearn_rank.trec.evaluate_run`, ``"ndcg"`` has trec_eval's linear
    gain; trec_eval's bare ``recall`` family is ``"recall.5,10,..."``).
    """
    _spec_text.check_text(name)
    if name.lower() in METRICS or name.lower() in _ALIASES:
        return None
    if name in TREC_MEASURES:
        return [TREC_MEASURES[name]]
    match = _TREC_PATTERN.match(name)
    if match is None:
        return None
    family, cutoffs = match.groups()
    ks = TREC_DEFAULT_CUTOFFS[family] if cutoffs is None else [int(c) for c in cutoffs.split(",")]
    return [TREC_CUTOFF_MEASURES[family].format(k) for k in ks]


def trec_name(spec: MetricSpec, options: Mapping[str, Any] | None = None) -> str | None:
    """trec_eval's name for a spec that is one of its measures, else None.

    The spec is compared with its options resolved (``options`` as for
    :meth:`MetricSpec.resolve`), leaving out the tie, empty-query and threshold
    options, which TREC evaluation sets itself.
    """
    resolved = spec.resolve(options)
    core = {p: v for p, v in resolved.items()
            if p not in ("convention", "ties", "empty", "threshold")
            and v != PARAMS[p].default}
    text = str(MetricSpec(spec.name, spec.k, tuple(sorted(core.items()))))
    for name, target in TREC_MEASURES.items():
        if text == target:
            return name
    for family, template in TREC_CUTOFF_MEASURES.items():
        if spec.k is not None and text == template.format(spec.k):
            return f"{family}_{spec.k}"
    return None


def expand_metrics(metrics) -> list[MetricSpec]:
    """Specs of metrics given as spec strings, MetricSpecs or trec_eval names
    (which may stand for several cut-offs: ``"P.5,10"``, ``"P"``)."""
    if isinstance(metrics, str | MetricSpec):
        metrics = [metrics]
    specs = []
    for metric in metrics:
        names = _trec_specs(metric.strip()) if isinstance(metric, str) else None
        specs.extend(parse_metric(m) for m in (names or [metric]))
    return specs


def parse_metric(spec: str | MetricSpec) -> MetricSpec:
    """Parse a metric spec string into a :class:`MetricSpec`.

    Parameters
    ----------
    spec : str or MetricSpec
        ``name[(param=value, ...)][@k][-]``: a registered metric name (see
        :func:`get_metric_names`), optional keyword options written as Python
        literals, an optional cut-off ``@k`` and an optional ``-`` suffix that
        scores queries without relevant documents 0 (XGBoost's ``ndcg@k-``).
        Names are case-insensitive. trec_eval's measure names are accepted too,
        with trec_eval's meaning (``"ndcg_cut.10"`` is NDCG@10 with linear
        gain, ``"P.5"``, ``"map_cut_10"``, ``"recip_rank"``, ``"gm_map"``,
        ``"Rprec"``, ``"bpref"``, ``"success.1"``, ``"set_P"``, ...). A
        :class:`MetricSpec` is returned as is. Option values are literals: a
        quoted string, a number, True / False / None, a flat list or a dict of
        finite numbers. A spec holds at most 2,000 ASCII characters and no
        ``#``; integers (``k`` included) are at most 2**63 - 1 in absolute
        value (a cut-off longer than a query is clipped to it anyway). Any
        string gives a spec or a ValueError within milliseconds.

    Returns
    -------
    spec : MetricSpec
        Immutable and hashable; ``str(spec)`` is the canonical spelling, with
        options equal to their defaults omitted — except those a convention
        sets (``gain``, ``ties``, ``empty``, ``capped``): written explicitly,
        they keep their meaning under any convention, so they are printed.

    Raises
    ------
    ValueError
        For text that is not a spec (too long, nested, not a literal, ...), an
        unknown metric (the closest valid name is suggested), an unknown or
        repeated option or an invalid option value.

    Examples
    --------
    >>> from sklearn_rank.metrics import parse_metric
    >>> parse_metric("NDCG@10")
    MetricSpec('ndcg@10')
    >>> str(parse_metric("ndcg(discount='log2', log_base=2)@5"))
    'ndcg@5'
    >>> str(parse_metric("ndcg(gain='exponential')@5"))  # a convention could change it
    "ndcg(gain='exponential')@5"
    >>> parse_metric("ndcg(convention='xgboost')@10-").resolve()["empty"]
    'zero'
    >>> parse_metric("ndcg_cut.10")
    MetricSpec("ndcg(gain='linear')@10")
    """
    if isinstance(spec, MetricSpec):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"A metric spec must be a str or MetricSpec, got {type(spec).__name__}.")
    text = spec.strip()
    _spec_text.check_text(text)
    trec = _trec_specs(text)
    if trec is not None:
        if len(trec) > 1:
            listed = ", ".join(trec[:5]) + (", ..." if len(trec) > 5 else "")
            raise ValueError(
                f"trec_eval measure {_shown(spec)} stands for {len(trec)} metrics ({listed}); "
                "pass it to evaluate / evaluate_run, which expand it, or name one cut-off."
            )
        return parse_metric(trec[0])
    minus = text.endswith("-")
    node = _spec_text.parse_expression(text[:-1].rstrip() if minus else text, spec)
    k, node = _cutoff(node, spec)
    options = _keywords(node, spec)
    if isinstance(node, ast.Call):
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError(f"Could not parse metric spec {_shown(spec)}: {_SYNTAX}.")
    if k is not None:
        if options.get("k") not in (None, k):
            raise ValueError(f"Metric spec {_shown(spec)} gives two cut-offs.")
        options["k"] = k
    if minus:
        if options.get("empty") not in (None, "zero"):
            raise ValueError(f"Metric spec {_shown(spec)} ends with '-' (empty queries score "
                             f"0) but sets empty={options['empty']!r}.")
        options["empty"] = "zero"
    parsed = _build(node.id.lower(), options, f"metric {_shown(spec)}")
    if len(str(parsed)) > _spec_text.MAX_LENGTH:  # so that every canonical spelling parses
        raise ValueError(
            f"Metric spec {_shown(spec)} is too long once written canonically "
            f"({len(str(parsed))} characters, at most {_spec_text.MAX_LENGTH}). Pass long "
            "option values (a gain table, a discount array) as Python objects, e.g. "
            "ndcg_score(..., gain=array)."
        )
    return parsed


def _cutoff(node: ast.expr, spec: str) -> tuple[int | None, ast.expr]:
    """The ``@k`` of a parsed spec (or None) and the expression before it."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return None, node
    if not (isinstance(node.right, ast.Constant) and type(node.right.value) is int):
        raise ValueError(f"In metric spec {_shown(spec)}, the cut-off after '@' must be an "
                         "integer >= 1.")
    k = node.right.value
    if k < 1:
        raise ValueError(f"In metric spec {_shown(spec)}, the cut-off k must be >= 1, got {k}.")
    return k, node.left


def _keywords(node: ast.expr, spec: str) -> dict[str, Any]:
    """The options written in the call of a parsed spec (``{}`` without one)."""
    if not isinstance(node, ast.Call):
        return {}
    if node.args or not isinstance(node.func, ast.Name):
        raise ValueError(f"Could not parse metric spec {_shown(spec)}: options must be "
                         f"written as keywords; {_SYNTAX}.")
    options: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise ValueError(f"Could not parse metric spec {_shown(spec)}: {_SYNTAX}.")
        name = kw.arg.lower()
        if name in options:
            raise ValueError(f"Metric spec {_shown(spec)} gives option {name!r} twice.")
        options[name] = _spec_text.literal(kw.value, kw.arg, spec)
    return options


def _spec_with(metric: str | MetricSpec, options: dict) -> MetricSpec:
    """``parse_metric(metric)`` with ``options`` written into the spec."""
    spec = parse_metric(metric)
    return spec.with_options(**options) if options else spec
