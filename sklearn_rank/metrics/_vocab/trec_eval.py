"""trec_eval's measure names, as registry specs (DESIGN §10).

A trec_eval name means trec_eval's measure wherever it is used (linear gain
for NDCG); cut-off families take ``.k`` or ``_k``, several cut-offs
``.5,10``, or none for trec_eval's default cut-offs. Registry names win where
the spellings collide (``ndcg``, ``map``, ``recall``, ``bpref``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import text as _spec_text
from .params import PARAMS
from .registry import ALIASES, METRICS

__all__ = ["TREC_CUTOFF_MEASURES", "TREC_DEFAULT_CUTOFFS", "TREC_MEASURES",
           "glued_cutoff",
           "refuse_engine_name", "trec_labelled", "trec_name", "trec_specs"]

TREC_MEASURES: dict[str, str] = {
    "map": "map",
    "gm_map": "gmap",
    "Rprec": "r_precision",
    "bpref": "bpref",
    "recip_rank": "mrr",
    "ndcg": "ndcg(gain='linear')",
    "dcg": "dcg(gain='linear')",
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
#: The registry metric of each trec_eval cut-off family (the same measure
#: under convention="trec_eval", but for NDCG's gain).
_FAMILY_OF = {"p": "P", "recall": "recall", "ndcg": "ndcg_cut", "map": "map_cut",
              "hit_rate": "success"}
_GLUED = re.compile(r"^([A-Za-z][A-Za-z_]*?)_?([0-9]+)$")
_TREC_PATTERN = re.compile(
    r"^(" + "|".join(TREC_CUTOFF_MEASURES) + r")(?:[._]([0-9]+(?:,[0-9]+)*))?$")


def trec_specs(name: str) -> list[str] | None:
    """Registry spellings of a trec_eval measure name, or None if it is not one.

    Registry names win: ``"ndcg"``, ``"map"`` and ``"recall"`` keep their
    registry meaning (under ``convention="trec_eval"``, as in
    :func:`~sklearn_rank.trec.evaluate_run`, ``"ndcg"`` has trec_eval's linear
    gain; trec_eval's bare ``recall`` family is ``"recall.5,10,..."``).
    """
    found = trec_labelled(name)
    return None if found is None else [spec for spec, _ in found]


def trec_labelled(name: str) -> list[tuple[str, str]] | None:
    """``[(registry spelling, name trec_eval prints)]`` of a trec_eval
    measure name (``"P.5,10"`` -> ``[("p@5", "P_5"), ("p@10", "P_10")]``), or
    None if it is not one (see :func:`trec_specs`)."""
    _spec_text.check_text(name)
    if name in METRICS or name in ALIASES:
        return None
    if name in TREC_MEASURES:
        return [(TREC_MEASURES[name], name)]
    match = _TREC_PATTERN.match(name)
    if match is None:
        return None
    family, cutoffs = match.groups()
    ks = TREC_DEFAULT_CUTOFFS[family] if cutoffs is None else [int(c) for c in cutoffs.split(",")]
    return [(TREC_CUTOFF_MEASURES[family].format(k), f"{family}_{k}") for k in ks]


def glued_cutoff(name: str) -> list[str] | None:
    """What a name with its cut-off glued on may mean: ``"P10"`` ->
    ``["'P.10' (trec_eval)", "'p@10' (registry)"]``, ``"map5"`` ->
    ``["'map@5' (registry)", "'map_cut.5' (trec_eval)"]``; None for any
    other name.

    The name is a trec_eval cut-off family (``P``, ``ndcg_cut``, ...) or a
    registry metric with a cut-off (``ndcg``, ``err``, ...) followed by
    digits (after an ``_`` or not) that is no measure; the spelling of its
    own vocabulary comes first, then the other's.
    """
    match = _GLUED.match(name)
    if match is None or int(match.group(2)) < 1:
        return None
    base, k = match.group(1), int(match.group(2))
    metric = ALIASES.get(base, base)
    if base in TREC_CUTOFF_MEASURES:
        return [f"'{base}.{k}' (trec_eval)",
                f"{TREC_CUTOFF_MEASURES[base].format(k)!r} (registry)"]
    if metric in METRICS and "k" in METRICS[metric].params:
        family = _FAMILY_OF.get(metric)
        return [f"'{base}@{k}' (registry)",
                *([f"'{family}.{k}' (trec_eval)"] if family is not None else [])]
    return None


def trec_name(spec, options: Mapping[str, Any] | None = None) -> str | None:
    """trec_eval's name for a spec that is one of its measures, else None.

    The spec is compared with its options resolved (``options`` as for
    :meth:`MetricSpec.resolve`), leaving out the tie, empty-query and threshold
    options, which TREC evaluation sets itself.
    """
    resolved = spec.resolve(options)
    core = {p: v for p, v in resolved.items()
            if p not in ("convention", "ties", "empty", "threshold")
            and v != PARAMS[p].default}
    text = str(replace(spec, params=tuple(sorted(core.items())), trec=None))
    for name, target in TREC_MEASURES.items():
        if text == target:
            return name
    for family, template in TREC_CUTOFF_MEASURES.items():
        if spec.k is not None and text == template.format(spec.k):
            return f"{family}_{spec.k}"
    return None


def refuse_engine_name(text: str, spec: str) -> None:
    """A trec_eval family no registry spec computes (``num_ret``,
    ``iprec_at_recall.0.5``, ``official``, ...): say which entry points do."""
    family = text.partition(".")[0]
    if not family.replace("_", "").isalnum():
        return
    from .trec_eval_table import MEASURES, NICKNAMES, parse_measures

    if family in MEASURES or family in NICKNAMES:
        try:
            parse_measures([text])
        except ValueError:
            return  # not trec_eval's grammar either: the registry's message
        raise ValueError(
            f"{_spec_text.shown(spec)} is a trec_eval measure that no registry spec computes: "
            "sklearn_rank.metrics.evaluate(y_true, y_score, qid=qid, "
            f"metrics=[{_spec_text.shown(text)}]) computes it on flat rows and "
            "sklearn_rank.trec.evaluate_run on a run (a metric function or a scorer "
            "takes registry specs only).") from None
