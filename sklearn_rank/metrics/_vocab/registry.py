"""The registry of metrics: a passive collection of their definitions.

Each family module (``_gain_metrics.py``, ``_binary_metrics.py``, ...)
registers its metrics when it is imported (``sklearn_rank.metrics`` imports
them all); this module imports none of them. Names, the spec parser, the
public functions, the scorers, the command line and the test tables derive
from :data:`METRICS`.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..._utils.validation import validate_params
from .text import shown

__all__ = ["ALIASES", "METRICS", "closest", "get_metric_names", "lookup", "register"]

#: Every registered metric (a :class:`~sklearn_rank.metrics._definition.Metric`) by canonical name.
METRICS: dict[str, Any] = {}
#: Other names of metrics: alias -> canonical name.
ALIASES: dict[str, str] = {}


def register(metric):
    """Add a metric (refusing a name or alias already taken)."""
    for name in (metric.name, *metric.aliases):
        if name in METRICS or name in ALIASES:
            raise ValueError(f"A metric named {name!r} is registered already.")
    METRICS[metric.name] = metric
    ALIASES.update(dict.fromkeys(metric.aliases, metric.name))
    return metric


def closest(name: str, choices) -> str:
    """" Did you mean ...?" for the closest of ``choices``, or ""."""
    match = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.4)
    return f" Did you mean {match[0]!r}?" if match else ""


def lookup(name: str):
    """The metric called ``name`` (or an alias of it)."""
    key = ALIASES.get(name, name)
    if key not in METRICS:
        choices = sorted(METRICS) + sorted(ALIASES)
        raise ValueError(
            f"Unknown metric {shown(name)}.{closest(name, choices)} Valid names: "
            f"{', '.join(sorted(METRICS))} (see get_metric_names())."
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
