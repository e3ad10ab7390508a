"""The metrics of :func:`evaluate_recommendations`: registry specs, and the
metrics of the lists themselves (beyond accuracy), with their own small spec.

A list metric is written as a registry spec is, ``name[(option=value, ...)][@k]``
(``"tail_share(head=0.9)@10"``), parsed with :mod:`ast`; its options are
keyword arguments of its function in :mod:`~sklearn_rank.recsys._beyond`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..metrics._vocab.spec import MetricSpec, parse_specs

__all__ = ["LIST_METRICS", "SYSTEM_METRICS", "ListMetric", "split_metrics"]

#: The list metrics and what each reads besides the lists: ``system`` ones
#: give one value for the whole system, the others one value per user.
LIST_METRICS = {
    "catalog_coverage": ("system", ("n_catalog",)),
    "gini": ("system", ("n_catalog",)),
    "entropy": ("system", ()),
    "user_coverage": ("system", ("relevant",)),
    "novelty": ("user", ("popularity",)),
    "arp": ("user", ("popularity",)),
    "tail_share": ("user", ("popularity",)),
    "ild": ("user", ("item_features",)),
    "serendipity": ("user", ("relevant",)),
}
SYSTEM_METRICS = tuple(name for name, (level, _) in LIST_METRICS.items() if level == "system")


@dataclass(frozen=True)
class ListMetric:
    """A metric of the top-k lists (beyond accuracy), printed canonically.

    Attributes
    ----------
    name : str
    k : int
        The cut-off: the first k items of each list.
    params : tuple of (str, value) pairs
        Options, sorted by name (keywords of the metric's function).
    """

    name: str
    k: int
    params: tuple[tuple[str, Any], ...] = ()

    #: (``aggregate_of`` reads it) per-user values are averaged over users
    summary = "mean"

    @property
    def level(self) -> str:
        """``"system"`` or ``"user"``."""
        return LIST_METRICS[self.name][0]

    @property
    def greater_is_better(self) -> bool:
        return self.name not in ("gini", "arp")

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ", ".join(f"{p}={v!r}" for p, v in self.params) + ")"
        return f"{text}@{self.k}"

    def __repr__(self) -> str:
        return f"ListMetric({str(self)!r})"


def _list_metric(text: str, k: int) -> ListMetric | None:
    """The list metric ``text`` spells (None: not one), at ``k`` unless it has a cut-off."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        node, right = node.left, node.right
        if not (isinstance(right, ast.Constant) and type(right.value) is int
                and right.value >= 1):
            raise ValueError(f"In metric {text!r}, the cut-off after '@' must be an integer "
                             ">= 1.")
        cutoff = right.value
    name = node.func if isinstance(node, ast.Call) else node
    if not (isinstance(name, ast.Name) and name.id in LIST_METRICS):
        return None
    params = {}
    if isinstance(node, ast.Call):
        if node.args:
            raise ValueError(f"Metric {text!r}: options are written as keywords, e.g. "
                             "tail_share(head=0.9)@10.")
        for keyword in node.keywords:
            try:
                params[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                raise ValueError(f"Metric {text!r}: the value of {keyword.arg!r} must be a "
                                 "literal (a number or a quoted string).") from None
    return ListMetric(name.id, k if cutoff is None else cutoff, tuple(sorted(params.items())))


def split_metrics(metrics, k: int) -> list:
    """Each metric of ``metrics`` (a str, a spec, or a list of them) as a
    :class:`MetricSpec` (cut at ``k`` when it has no cut-off) or a
    :class:`ListMetric`, in order; a cut-off beyond ``k`` is an error."""
    listed = [metrics] if isinstance(metrics, str | MetricSpec) else list(metrics)
    if not listed:
        raise ValueError("metrics is empty; name at least one metric, e.g. ['ndcg@10'].")
    out = []
    for metric in listed:
        found = _list_metric(metric, k) if isinstance(metric, str) else None
        if found is None:
            (found,) = parse_specs([metric])
            if found.k is None and "k" in found.info.params:
                found = found.with_options(k=k)
        if found.k is not None and found.k > k:
            raise ValueError(
                f"Metric {str(found)!r} reads the first {found.k} items of each list, but the "
                f"lists are cut at k={k}: pass k={found.k} (or more), or a cut-off <= {k}.")
        out.append(found)
    return out
