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

import difflib
import sys
from typing import Any

from ..._utils.validation import validate_params
from .text import shown

__all__ = ["ALIASES", "ENTRY_POINTS", "METRICS", "closest", "get_metric_names", "lookup",
           "register", "unregister"]

#: Every registered metric (a :class:`~sklearn_rank.metrics._definition.Metric`) by canonical name.
METRICS: dict[str, Any] = {}
#: Other names of metrics: alias -> canonical name.
ALIASES: dict[str, str] = {}
#: The entry-point group of installed packages' metrics: an entry point's name is
#: the metric's name, its value a module that registers it when imported
#: (``my_dcg = my_package.metrics``) or a function that registers it when called.
ENTRY_POINTS = "sklearn_rank.metrics"
_LOADED: dict = {}  # sys.path -> the names of entry points tried already


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


@validate_params({})
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
    >>> names = get_metric_names()
    >>> names == sorted(names), "ndcg" in names, "map" in names
    (True, True, True)
    """
    return sorted(METRICS)


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
