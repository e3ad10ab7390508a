"""Metric specs: immutable, hashable metric specifications and their grammar.

A metric spec is ``name[(param=value, ...)][@k][-]``, parsed with :mod:`ast`
(never by substring matching; :mod:`~sklearn_rank.metrics._vocab.text` guards the text first) into
a :class:`MetricSpec` that prints canonically with defaults omitted::

    ndcg@10
    ndcg(gain='linear', discount='classic')@5
    ndcg@10-            # empty queries (no relevant document) score 0

trec_eval's measure names (:mod:`~sklearn_rank.metrics._vocab.trec_eval`) are read as the specs
they
stand for.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..._utils.queries import group_hint
from ..._utils.validation import validate_params
from .._engine.columns import is_pairs
from . import text as _spec_text
from .ir_measures import (
    IRM_ALIASES,
    IRM_MEASURES,
    IRM_OBJECT,
    RunLayout,
    irm_head,
    irm_spec,
    is_irm_object,
)
from .params import CONVENTIONS, PARAMS, check_options, convention_options
from .registry import ALIASES, METRICS, closest, lookup
from .text import SYNTAX, shown
from .trec_eval import (
    TREC_CUTOFF_MEASURES,
    TREC_MEASURES,
    glued_cutoff,
    refuse_engine_name,
    trec_labelled,
)

__all__ = ["MetricSpec", "build", "expand_metrics", "parse", "parse_metric", "spec_with"]


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
        if is_pairs(value):
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
    label : str or None
        How the spec prints when it was written in another vocabulary: the
        ``str()`` of an ir_measures measure (``"nDCG@10"``, whose registry
        spec is ``ndcg(gain='linear', empty='zero')@10``); None: canonically.
    judged_only : bool
        ir_measures' ``judged_only=True``: in :func:`~sklearn_rank.trec.evaluate_run`
        the unjudged retrieved documents are removed before ranking, for this
        metric only (trec_eval's ``-J``); flat rows are all judged.
    layout : RunLayout or None
        An ir_measures name's provider's way of reading a run (its order of
        tied scores; whether a negative qrels level is judged), which
        :func:`~sklearn_rank.trec.evaluate_run` follows for this metric, with
        ``ties='stable'`` on that order; None (every other spelling): the
        package's rules (trec_eval's order there, the ``ties`` option).
    trec : str or None
        The name trec_eval prints for the spec when it was written as a
        trec_eval measure (``"P_5"`` for ``"P.5"``, ``"ndcg_cut_10"``): how it
        prints and keys results. The spec equals the same metric written in
        the registry's spelling (``parse_metric("P.5") ==
        parse_metric("p@5")``).
    """

    name: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    label: str | None = None
    judged_only: bool = False
    layout: RunLayout | None = None
    trec: str | None = field(default=None, compare=False)

    @property
    def info(self):
        """The metric's registered definition (an installed package's metric is
        loaded by its name, as in a process that unpickled the spec)."""
        metric = METRICS.get(self.name)
        return lookup(self.name) if metric is None else metric

    @property
    def greater_is_better(self) -> bool:
        """True: every metric of the registry is better when larger."""
        return True

    def resolve(self, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """All options of the metric: explicit > ``options`` > convention > default."""
        options = {k: v for k, v in (options or {}).items() if v is not None}
        explicit = dict(self.params)
        convention = explicit.get("convention", options.get("convention"))
        values = {p: _default(self.info, p) for p in self.info.params if p != "k"}
        if convention is not None:
            values.update({p: v for p, v in convention_options(convention, self.name).items()
                           if p in values})
        values.update({p: v for p, v in options.items() if p in values})
        values.update(explicit)
        values["convention"] = convention
        return values

    def _shown_options(self) -> tuple[list[str], bool]:
        """The options the canonical spelling writes, and whether it ends in '-'."""
        explicit = dict(self.params)
        defaults = {p: _default(self.info, p) for p in self.info.params}
        if explicit.get("convention") is not None:
            defaults.update(convention_options(explicit["convention"], self.name))
        # Options some convention sets: written explicitly, they pin the meaning
        # whatever convention applies, so they are printed even when default.
        pinned = {p for c in CONVENTIONS for p in convention_options(c, self.name)}
        shown_options = [
            f"{name}={_format(explicit[name])}" for name in self.info.params
            if name in explicit and name != "k" and not (name == "empty"
                                                         and explicit[name] == "zero")
            and (explicit[name] != defaults[name] or callable(explicit[name])
                 or name in pinned)]
        return shown_options, explicit.get("empty") == "zero"  # '-' whatever the default

    def __str__(self) -> str:
        if self.label is not None:
            return self.label
        if self.trec is not None:
            return self.trec
        shown_options, minus = self._shown_options()
        text = self.name
        if shown_options:
            text += "(" + ", ".join(shown_options) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text + ("-" if minus else "")

    def __repr__(self) -> str:
        return f"MetricSpec({str(self)!r})"

    def with_options(self, **options) -> MetricSpec:
        """A copy with more explicit options (validated); ``k`` sets the cut-off."""
        return build(self.name, {**dict(self.params), "k": self.k, **options},
                     f"metric {shown(str(self))}")


MetricSpec.__module__ = "sklearn_rank.metrics"  # its public home (messages, pickles)


def _default(metric, option: str):
    """``metric``'s default of ``option``: its own (``Metric.defaults``; a
    metric registered by :func:`register_metric` has none), else the shared one."""
    return dict(getattr(metric, "defaults", ())).get(option, PARAMS[option].default)


def build(name: str, options: dict[str, Any], caller: str) -> MetricSpec:
    """A validated spec; ``caller`` names the function or spec in error messages."""
    metric = lookup(name)
    options = {k: v for k, v in options.items() if v is not None}
    unknown = [p for p in options if p not in metric.params]
    if unknown:
        bad = unknown[0]
        cutoff = (" It takes no cut-off ('@k'): it is computed over each query's whole "
                  "list." if bad == "k" else "")
        raise ValueError(
            f"Metric {metric.name!r} has no parameter {shown(bad)}.{cutoff}"
            f"{group_hint(bad) or closest(bad, metric.params)} Its parameters: "
            f"{', '.join(metric.params)}."
        )
    options = check_options(options, caller)
    k = options.pop("k", None)
    params = tuple(sorted((p, _freeze(v)) for p, v in options.items()))
    return MetricSpec(metric.name, None if k is None else int(k), params)


def listed_metrics(metrics) -> list:
    """``metrics`` as a list: one spec (a string, a MetricSpec or an
    ir_measures object) or an iterable of them."""
    if isinstance(metrics, str | MetricSpec) or is_irm_object(metrics):
        return [metrics]
    return list(metrics)


def expand_metrics(metrics) -> list[MetricSpec]:
    """Specs of metrics given as spec strings, MetricSpecs or trec_eval names
    (which may stand for several cut-offs: ``"P.5,10"``, ``"P"``)."""
    specs = []
    for metric in listed_metrics(metrics):
        metric = str(metric) if is_irm_object(metric) else metric
        names = trec_labelled(metric.strip()) if isinstance(metric, str) else None
        if names is None:
            specs.append(parse(metric))
        else:
            specs.extend(replace(parse(m), trec=label) for m, label in names)
    return specs


def parse(spec: str | MetricSpec) -> MetricSpec:
    """:func:`parse_metric` without its argument's validation (for internal callers)."""
    if isinstance(spec, MetricSpec):
        return spec
    if is_irm_object(spec):  # an ir_measures measure: its str() is its spec
        spec = str(spec)
    if not isinstance(spec, str):
        raise TypeError(f"A metric spec must be a str or MetricSpec, got {type(spec).__name__}.")
    text = spec.strip()
    _spec_text.check_text(text)
    trec = trec_labelled(text)
    if trec is not None:
        if len(trec) > 1:
            listed = ", ".join(m for m, _ in trec[:5]) + (", ..." if len(trec) > 5 else "")
            raise ValueError(
                f"trec_eval measure {shown(spec)} stands for {len(trec)} metrics ({listed}); "
                "pass it to evaluate / evaluate_run, which expand it, or name one cut-off."
            )
        return replace(parse(trec[0][0]), trec=trec[0][1])
    try:
        return _parse_text(text, spec)
    except ValueError:
        refuse_engine_name(text, spec)
        raise


def _parse_text(text: str, spec: str) -> MetricSpec:
    """:func:`parse` of a spec that is not a trec_eval name."""
    minus = text.endswith("-")
    node = _spec_text.parse_expression(text[:-1].rstrip() if minus else text, spec)
    if irm_head(node) is not None:
        if minus:
            raise ValueError(f"ir_measures measure {shown(spec)} takes no '-' suffix "
                             "(its empty queries score 0 already).")
        name, options, label = irm_spec(node, spec, build)
        judged_only = options.pop("judged_only", False)
        layout = options.pop("layout")
        return replace(build(name, options, f"metric {shown(spec)}"), label=label,
                       judged_only=judged_only, layout=layout)
    k, node = _cutoff(node, spec)
    options = _keywords(node, spec)
    if isinstance(node, ast.Call):
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError(f"Could not parse metric spec {shown(spec)}: {SYNTAX}.")
    _set_cutoff_and_minus(options, k, minus, spec)
    _check_name(node.id)
    parsed = build(node.id, options, f"metric {shown(spec)}")
    if len(str(parsed)) > _spec_text.MAX_LENGTH:  # so that every canonical spelling parses
        raise ValueError(
            f"Metric spec {shown(spec)} is too long once written canonically "
            f"({len(str(parsed))} characters, at most {_spec_text.MAX_LENGTH}). Pass long "
            "option values (a gain table, a discount array) as Python objects, e.g. "
            "ndcg_score(..., gain=array)."
        )
    return parsed


def _check_name(name: str) -> None:
    """Refuse a near miss of a name in another case, listing what each spelling means
    (names are case-sensitive: ``nDCG`` is ir_measures', ``ndcg`` the registry's)."""
    if name in METRICS or name in ALIASES:
        return
    if (meant := glued_cutoff(name)) is not None:
        raise ValueError(f"Unknown metric {shown(name)}: a cut-off follows '@' (or '.' in a "
                         f"trec_eval name). Did you mean {' or '.join(meant)}?")
    vocabularies = ((METRICS, "registry metric"), (ALIASES, "registry alias"),
                    (IRM_MEASURES, "ir_measures measure"), (IRM_ALIASES, "ir_measures alias"),
                    (TREC_MEASURES, "trec_eval measure"),
                    (TREC_CUTOFF_MEASURES, "trec_eval measure"))
    found = {}
    for names, what in vocabularies:
        for known in names:
            if known.lower() == name.lower():
                found.setdefault(known, what)
    candidates = [f"{known!r} ({what})" for known, what in found.items()]
    if candidates:
        raise ValueError(f"Unknown metric {shown(name)}: names are case-sensitive. Did you "
                         f"mean {' or '.join(candidates)}? See get_metric_names() and the "
                         "user guide's table of vocabularies (docs/user_guide/trec.rst).")


def _set_cutoff_and_minus(options: dict, k: int | None, minus: bool, spec: str) -> None:
    """Write the ``@k`` and the ``-`` suffix of a spec into its options."""
    if k is not None:
        if options.get("k") not in (None, k):
            raise ValueError(f"Metric spec {shown(spec)} gives two cut-offs.")
        options["k"] = k
    if minus:
        if options.get("empty") not in (None, "zero"):
            raise ValueError(f"Metric spec {shown(spec)} ends with '-' (empty queries score "
                             f"0) but sets empty={options['empty']!r}.")
        options["empty"] = "zero"


def _cutoff(node: ast.expr, spec: str) -> tuple[int | None, ast.expr]:
    """The ``@k`` of a parsed spec (or None) and the expression before it."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return None, node
    if not (isinstance(node.right, ast.Constant) and type(node.right.value) is int):
        raise ValueError(f"In metric spec {shown(spec)}, the cut-off after '@' must be an "
                         "integer >= 1.")
    k = node.right.value
    if k < 1:
        raise ValueError(f"In metric spec {shown(spec)}, the cut-off k must be >= 1, got {k}.")
    return k, node.left


def _keywords(node: ast.expr, spec: str) -> dict[str, Any]:
    """The options written in the call of a parsed spec (``{}`` without one)."""
    if not isinstance(node, ast.Call):
        return {}
    if node.args or not isinstance(node.func, ast.Name):
        raise ValueError(f"Could not parse metric spec {shown(spec)}: options must be "
                         f"written as keywords; {SYNTAX}.")
    options: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise ValueError(f"Could not parse metric spec {shown(spec)}: {SYNTAX}.")
        name = kw.arg.lower()
        if name in options:
            raise ValueError(f"Metric spec {shown(spec)} gives option {name!r} twice.")
        options[name] = _spec_text.literal(kw.value, kw.arg, spec)
    return options


def spec_with(metric: str | MetricSpec, options: dict) -> MetricSpec:
    """``parse_metric(metric)`` with ``options`` written into the spec."""
    spec = parse(metric)
    return spec.with_options(**options) if options else spec


def parse_specs(metrics: str | MetricSpec | Iterable) -> list[MetricSpec]:
    """The specs of ``metrics`` (spec strings, MetricSpecs or trec_eval names,
    validated by the public entry); at least one."""
    specs = expand_metrics(metrics)
    if not specs:
        raise ValueError("metrics is empty; name at least one metric, e.g. metrics=['ndcg@10'].")
    return specs


@validate_params({"spec": [str, MetricSpec, IRM_OBJECT]})
def parse_metric(spec: str | MetricSpec) -> MetricSpec:
    """Parse a metric spec string into a :class:`MetricSpec`.

    Parameters
    ----------
    spec : str or MetricSpec
        ``name[(param=value, ...)][@k][-]``: a registered metric name (see
        :func:`get_metric_names`), optional keyword options written as Python
        literals, an optional cut-off ``@k`` and an optional ``-`` suffix that
        scores queries without relevant documents 0 (XGBoost's ``ndcg@k-``).
        Names are case-sensitive: ir_measures' names in its capitalisation
        (``"nDCG@10"``, ``"AP(rel=2)"``, ``"RBP(rel=1)"``, ``"INST(max_rel=3)"``;
        its measure objects too) mean ir_measures' measures, with its grammar
        and parameters, and print as ir_measures prints them (see the user
        guide's table of vocabularies). trec_eval's measure names are accepted too,
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
        unknown metric (the closest valid name is suggested; a name in the
        wrong case lists the spellings it may mean), an unknown or
        repeated option or an invalid option value.

    Examples
    --------
    >>> from sklearn_rank.metrics import parse_metric
    >>> parse_metric("ndcg@10")
    MetricSpec('ndcg@10')
    >>> spec = parse_metric("nDCG@10")  # ir_measures': linear gain, empty queries 0
    >>> spec, spec.name, dict(spec.params)
    (MetricSpec('nDCG@10'), 'ndcg', {'empty': 'zero', 'gain': 'linear'})
    >>> str(parse_metric("ndcg(discount='log2', log_base=2)@5"))
    'ndcg@5'
    >>> str(parse_metric("ndcg(gain='exponential')@5"))  # a convention could change it
    "ndcg(gain='exponential')@5"
    >>> parse_metric("ndcg(convention='xgboost')@10-").resolve()["empty"]
    'zero'
    >>> spec = parse_metric("ndcg_cut.10")  # trec_eval's name (linear gain), as it prints
    >>> spec, spec == parse_metric("ndcg(gain='linear')@10")
    (MetricSpec('ndcg_cut_10'), True)
    """
    return parse(spec)
