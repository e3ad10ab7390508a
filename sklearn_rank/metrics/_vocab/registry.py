"""The registry of metrics: a passive collection of their definitions.

Each family module (``_gain_metrics.py``, ``_binary_metrics.py``, ...)
registers its metrics when it is imported (``sklearn_rank.metrics`` imports
them all); this module imports none of them. Names, the spec parser, the
public functions, the scorers, the command line and the test tables derive
from :data:`METRICS`.

Users add metrics with :func:`~sklearn_rank.metrics.register_metric`; an
installed package adds them through the entry-point group
:data:`ENTRY_POINTS`, loaded by :func:`lookup` the first time a name is not
found (so ``import sklearn_rank.metrics`` imports no plugin, and a plugin is
imported only when one of its names is used).
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from ..._utils.validation import StrOptions, validate_params
from .text import shown

__all__ = ["ALIASES", "ENTRY_POINTS", "METRICS", "OTHER", "VOCABULARIES", "OtherMeasure",
           "closest", "get_metric_names", "lookup", "register", "register_other", "unregister"]

#: Every registered metric (a :class:`~sklearn_rank.metrics._definition.Metric`) by canonical name.
METRICS: dict[str, Any] = {}
#: Other names of metrics: alias -> canonical name.
ALIASES: dict[str, str] = {}
#: The entry-point group of installed packages' metrics: an entry point's name is
#: the metric's name, its value a module that registers it when imported
#: (``my_dcg = my_package.metrics``) or a function that registers it when called.
ENTRY_POINTS = "sklearn_rank.metrics"
_LOADED: dict = {}  # sys.path -> the names of entry points tried already


#: The vocabularies of :func:`get_metric_names`.
VOCABULARIES = ("registry", "trec_eval", "ir_measures")


class OtherMeasure(NamedTuple):
    """A measure of trec_eval's or ir_measures' vocabulary, declared beside the
    registry's metrics so that one catalogue lists every measure the package
    computes, and which kernel computes it.

    ``twin`` is the registry metric that computes it (a spec, ``{}`` for the
    cut-off: ``"p@{}"``), or None when an engine does: ``"trec_eval"`` (its
    kernels on trec_eval's rankings, :mod:`sklearn_rank.metrics._families.trec_eval`:
    files, or flat rows through :func:`~sklearn_rank.metrics.evaluate`),
    ``"ndeval"`` (the diversity measures, on subtopic judgments:
    :func:`~sklearn_rank.trec.evaluate_run`) or ``"ir_measures"`` (Compat and
    Accuracy, which read document ids and scores: ``evaluate_run``).
    """

    name: str
    vocabulary: str
    summary: str
    twin: str | None = None
    engine: str | None = None


#: Every measure of trec_eval's and ir_measures' vocabularies, by (vocabulary, name).
OTHER: dict[tuple[str, str], OtherMeasure] = {}


def register_other(measure: OtherMeasure) -> OtherMeasure:
    """Declare a measure of another vocabulary (refusing one declared already)."""
    key = (measure.vocabulary, measure.name)
    if measure.vocabulary not in VOCABULARIES[1:] or key in OTHER:
        raise ValueError(f"{measure.vocabulary}'s {measure.name!r} is declared already "
                         "(or the vocabulary is not trec_eval or ir_measures).")
    if (measure.twin is None) == (measure.engine is None):
        raise ValueError(f"{measure.name!r}: give its registry twin or its engine, not both.")
    OTHER[key] = measure
    return measure


def register(metric):
    """Add a metric (refusing a name or alias already taken)."""
    for name in (metric.name, *metric.aliases):
        if name in METRICS or name in ALIASES:
            raise ValueError(f"A metric named {name!r} is registered already.")
    METRICS[metric.name] = metric
    ALIASES.update(dict.fromkeys(metric.aliases, metric.name))
    return metric


def unregister(name: str) -> None:
    """Remove a metric and its aliases (a registration's context manager ends)."""
    metric = METRICS.pop(name)
    for alias in metric.aliases:
        ALIASES.pop(alias, None)


def _entry_point(name: str) -> None:
    """Load the entry points of :data:`ENTRY_POINTS` called ``name`` (once
    per name and ``sys.path``): installed packages' metrics."""
    tried = _LOADED.setdefault(tuple(sys.path), {})
    if name not in tried:
        tried[name] = None
        tried[name] = _load(name)
    if tried[name] is not None:  # the same error every time the name is asked for
        raise ValueError(tried[name])


def _load(name: str) -> str | None:
    """Load the entry points called ``name``; the error message, or None."""
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINTS, name=name):
        where = (f"Metric {shown(name)}: the entry point {point.name} = {point.value} of "
                 f"group {ENTRY_POINTS!r}")
        try:
            loaded = point.load()
            if callable(loaded) and not isinstance(loaded, type(sys)):
                loaded()
        except Exception as exc:
            return f"{where} failed to load: {type(exc).__name__}: {exc}"
        if name not in METRICS:
            return (f"{where} loaded but registered no metric {name!r} (it should call "
                    "sklearn_rank.metrics.register_metric).")
    return None


def closest(name: str, choices) -> str:
    """" Did you mean ...?" for the closest of ``choices``, or ""."""
    import difflib  # (only for a message: its import is not paid by every command)

    match = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.4)
    return f" Did you mean {match[0]!r}?" if match else ""


def lookup(name: str):
    """The metric called ``name`` (or an alias of it)."""
    key = ALIASES.get(name, name)
    if key not in METRICS:
        _entry_point(name)
    if key not in METRICS:
        choices = sorted(METRICS) + sorted(ALIASES)
        raise ValueError(
            f"Unknown metric {shown(name)}.{closest(name, choices)} Valid names: "
            f"{', '.join(sorted(METRICS))} (see get_metric_names()). A metric of your own: "
            "sklearn_rank.metrics.register_metric (sklearn-rank evaluate --plugin MODULE)."
        )
    return METRICS[key]


@validate_params({"vocabulary": [StrOptions(set(VOCABULARIES))]})
def get_metric_names(vocabulary: str = "registry") -> list[str]:
    """Names of the registered metrics, usable in metric specs.

    Parameters
    ----------
    vocabulary : {"registry", "trec_eval", "ir_measures"}, default="registry"
        Whose names: the registry's metrics (the spec grammar's names, each a
        metric function and a scorer), or the measures of trec_eval's or
        ir_measures' vocabulary, which :func:`evaluate` and
        :func:`~sklearn_rank.trec.evaluate_run` also accept (each computed by a
        registry metric under that vocabulary's convention, or by an engine
        where no registry metric computes it: ``infAP``, ``utility``, ``G``,
        the diversity measures, ...).

    Returns
    -------
    names : list of str
        Canonical metric names, sorted. Aliases are accepted by
        :func:`parse_metric` too but not listed.

    Examples
    --------
    >>> from sklearn_rank.metrics import get_metric_names
    >>> names = get_metric_names()
    >>> names == sorted(names), "ndcg" in names, "map" in names
    (True, True, True)
    >>> "infAP" in get_metric_names("trec_eval"), "alpha_nDCG" in get_metric_names("ir_measures")
    (True, True)
    """
    if vocabulary == "registry":
        return sorted(METRICS)
    return sorted(name for vocab, name in OTHER if vocab == vocabulary)


def summaries() -> dict[str, str]:
    """The one-line summary of every registered metric, by sorted name."""
    return {name: METRICS[name].summary for name in sorted(METRICS)}


def document_metrics() -> None:
    """List the registered metrics in :func:`get_metric_names`' docstring
    (called once every family is registered)."""
    doc = get_metric_names.__doc__
    if doc:  # None under python -OO
        lines = "".join(f"    - ``{name}``: {summary}\n" for name, summary in summaries().items())
        notes = f"    Notes\n    -----\n    The registered metrics:\n\n{lines}\n"
        get_metric_names.__doc__ = doc.replace("    Examples\n", notes + "    Examples\n", 1)
