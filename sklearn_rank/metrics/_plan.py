"""The evaluation plan: metrics and options, checked and resolved once.

Every way of evaluating — :func:`~sklearn_rank.metrics.evaluate`, the metric
functions, :func:`~sklearn_rank.metrics.evaluate_chunks`, TREC runs and Dask —
builds one :class:`Plan` from its metrics and options, then::

    plan.check(data)          # the labels each metric needs, once per column
    part = plan.per_query(data)   # raw per-query values: PerQuery
    plan.finish([part, ...])  # empty-query policies and means: Evaluation

Parts computed on disjoint sets of queries (chunks, partitions) are finished
together, which gives exactly the numbers of an in-memory evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._utils.queries import group_hint
from ._engine.aggregate import summarize, summary_weights
from ._engine.columns import checked_columns
from ._engine.data import scalar
from ._engine.qid import concatenate_ids
from ._engine.ranking import block_specs, in_trec_mode, rank_block
from ._engine.threads import n_threads, run_blocks
from ._engine.warn import warn
from ._evaluation import Evaluation
from ._vocab.params import MIN_DOCUMENTS, check_options, convention_options
from ._vocab.registry import closest
from ._vocab.spec import MetricSpec, parse_specs

__all__ = ["MIXED_WEIGHTS", "Entry", "PerQuery", "Plan"]

_EMPTY_VALUE = {"zero": 0.0, "one": 1.0, "skip": np.nan, "nan": np.nan}
MIXED_WEIGHTS = "sample_weight must be given for every chunk or for none."


class Entry(NamedTuple):
    """One metric of a plan: its result key, spec and resolved options."""

    key: str
    spec: MetricSpec
    options: Mapping[str, Any]

    @property
    def metric(self):
        """The metric's registered definition."""
        return self.spec.info


@dataclass(eq=False)
class PerQuery:
    """Raw per-query results of some queries, before empty policies and means.

    The unit of chunked and distributed evaluation: parts computed on disjoint
    sets of queries are concatenated and finished once (:meth:`Plan.finish`).
    ``ordered`` tells that the ids are sorted and unique (one prepared data
    set), so a single part needs no sort. ``lengths`` holds each query's
    number of rows (documents), the weights of a mean by impressions
    (``gauc``).
    """

    qids: np.ndarray
    values: dict  # metric key -> raw per-query values
    empty: dict  # metric key -> per-query bool: no relevant document
    weights: np.ndarray | None
    max_label: float
    ordered: bool = False
    lengths: np.ndarray | None = None


class Plan:
    """Metrics with their resolved options, in the order asked, duplicates merged.

    Build it with :meth:`of` (specs and options from a user) or
    :meth:`resolved` (specs already validated).
    """

    def __init__(self, entries: Iterable[Entry]):
        self.entries = tuple(entries)

    @classmethod
    def of(cls, metrics, options: Mapping[str, Any], *, caller: str) -> Plan:
        """Parse ``metrics``, check ``options`` against them (``caller``
        names the public function in messages) and resolve."""
        specs = parse_specs(metrics)
        accepted = {p for s in specs for p in s.info.params if p != "k"}
        for name in options:
            if name not in accepted:
                hint = (" Write the cut-off in the spec instead, e.g. 'ndcg@10'."
                        if name == "k" else group_hint(name) or closest(name, accepted))
                raise TypeError(
                    f"{caller}() got an option {name!r} that none of the metrics "
                    f"{[str(s) for s in specs]} takes.{hint} Options they take: "
                    f"{', '.join(sorted(accepted))}."
                )
        options = check_options(options, caller)
        return cls.resolved(specs, options)

    @classmethod
    def resolved(cls, specs: Iterable[MetricSpec], options: Mapping[str, Any] = None) -> Plan:
        """The plan of validated specs under validated ``options``."""
        options = options or {}
        entries: dict[str, Entry] = {}
        for spec in specs:
            key = str(spec)
            entry = Entry(key, spec, spec.resolve(options))
            if key in entries and entries[key].options != entry.options:
                raise ValueError(
                    f"Two metrics print as {key!r} but mean different things once the "
                    f"options {sorted(options)} apply; write the differing option in "
                    "both specs."
                )
            entries.setdefault(key, entry)
        return cls(entries.values())

    @property
    def keys(self) -> list[str]:
        """The result keys (canonical specs), in order."""
        return [entry.key for entry in self.entries]

    def check(self, data) -> None:
        """Refuse labels a metric cannot take (each column checked once), and
        queries shorter than a convention allows (:data:`MIN_DOCUMENTS`)."""
        checked = set()
        for entry in self.entries:
            for col in checked_columns(entry.options):
                if col not in checked:
                    col.check(data, entry.key)
                    checked.add(col)
            _check_lengths(entry, data)

    def per_query(self, data) -> PerQuery:
        """Check ``data`` and compute every metric per query, ranking each
        block once per tie policy."""
        self.check(data)
        m = data.n_queries
        values = {key: np.empty(m) for key in self.keys}
        empty = {key: np.empty(m, dtype=bool) for key in self.keys}
        policies = sorted({entry.options["ties"] for entry in self.entries})

        def work(spec) -> None:
            # Kernels may overflow only where the metric's value itself does (a
            # DCG beyond float64): that is reported below, not as NumPy warnings
            # (set per thread: NumPy's error state is thread-local).
            with np.errstate(over="ignore", invalid="ignore"):
                block = rank_block(data, *spec, policies)
                for entry in self.entries:
                    rank = block[entry.options["ties"]]
                    v, e = entry.metric.kernel(rank, entry.options, entry.spec.k)
                    values[entry.key][rank.segments] = v
                    empty[entry.key][rank.segments] = e

        specs = block_specs(data)
        # each block writes its own queries: the same numbers on any number of threads
        run_blocks(work, specs, n_threads(sum(s.shape[0] * w for s, w in specs)))
        values = {key: data.to_query_order(v) for key, v in values.items()}
        # (TREC mode prints trec_eval's own doubles: its inf for map under a negative -l)
        trec = {entry.key for entry in self.entries if in_trec_mode(entry.options)}
        for key, v in values.items():
            if key not in trec:
                _check_overflow(key, v, data)
        return PerQuery(data.qids, values,
                        {key: data.to_query_order(e) for key, e in empty.items()},
                        data.weights, float(data.labels.max()), ordered=True,
                        lengths=data.to_query_order(data.lengths))

    def evaluate(self, data) -> Evaluation:
        """:meth:`finish` of the :meth:`per_query` values of ``data``."""
        return self.finish([self.per_query(data)])

    def finish(self, parts: list[PerQuery], *, where: str = "the stream") -> Evaluation:
        """Concatenate parts over disjoint queries, sort by qid, apply the
        empty-query policies and average (``where`` names the source of the
        parts in messages)."""
        if not parts:
            raise ValueError("There is no row to evaluate: the chunks are empty.")
        if len(parts) == 1 and parts[0].ordered:
            part = parts[0]
        else:
            part = _concatenate(parts, self.keys, where)
        self._warn_no_relevant(max(p.max_label for p in parts))
        per_query, means, n_empty = {}, {}, {}
        for entry in self.entries:
            key = entry.key
            weights = summary_weights(entry.metric.aggregate, part.weights, part.lengths)
            per_query[key], means[key], n_empty[key] = _finish(
                entry, part.values[key], part.empty[key], part.qids, weights)
        return Evaluation(part.qids, per_query, means, n_empty, part.weights,
                          [entry.spec for entry in self.entries], lengths=part.lengths)

    def _warn_no_relevant(self, max_label: float) -> None:
        """Warn once per threshold that leaves no relevant document in any query."""
        thresholds: dict[float, list[str]] = {}
        for entry in self.entries:
            if "threshold" in entry.options:
                thresholds.setdefault(entry.options["threshold"], []).append(entry.key)
        for threshold, keys in thresholds.items():
            if not max_label >= threshold:
                warn(f"No document has a label >= threshold={threshold:g} (the highest label "
                     f"is {max_label:g}), so every query is empty for {', '.join(keys)}; "
                     "lower the threshold.", UserWarning)


def _check_lengths(entry: Entry, data) -> None:
    """Refuse a query with fewer documents than the metric's convention allows."""
    convention = entry.options.get("convention")
    least = MIN_DOCUMENTS.get(convention, {}).get(entry.metric.name)
    if least is None:
        return
    short = data.lengths < least
    if short.any():
        first = data.first_qid(np.repeat(short, data.lengths))
        preset = ", ".join(f"{k}={v!r}" for k, v in
                           convention_options(convention, entry.metric.name).items())
        raise ValueError(
            f"{entry.key}: query {first!r} has fewer than {least} documents "
            f"({int(short.sum())} quer{'y' if short.sum() == 1 else 'ies'} of "
            f"{short.shape[0]}), which convention={convention!r} refuses, as scikit-learn's "
            "ndcg_score and dcg_score do ('Computing NDCG is only meaningful when there is "
            f"more than 1 document'). Drop such queries, or pass the options it sets "
            f"({preset}) instead of convention={convention!r}."
        )


def _concatenate(parts: list[PerQuery], keys: list[str], where: str) -> PerQuery:
    """One part of the parts' queries, sorted by qid; a query in two parts is an error."""
    qids, order = _sorted_ids(parts, where)
    weights = None
    if any(p.weights is not None for p in parts):
        if not all(p.weights is not None for p in parts):
            raise ValueError(MIXED_WEIGHTS)
        weights = np.concatenate([p.weights for p in parts])[order]
    values = {k: np.concatenate([p.values[k] for p in parts])[order] for k in keys}
    empty = {k: np.concatenate([p.empty[k] for p in parts])[order] for k in keys}
    lengths = (None if any(p.lengths is None for p in parts)
               else np.concatenate([p.lengths for p in parts])[order])
    return PerQuery(qids, values, empty, weights, max(p.max_label for p in parts), True,
                    lengths)


def _sorted_ids(parts: list[PerQuery], where: str) -> tuple[np.ndarray, np.ndarray]:
    """The parts' query ids sorted, and the order that sorts them; each id once."""
    qids = concatenate_ids([p.qids for p in parts])
    try:
        order = np.argsort(qids, kind="stable")
    except TypeError as exc:
        raise TypeError(f"qid values cannot be compared with each other ({exc}); use "
                        "query ids of a single type.") from None
    qids = qids[order]
    repeated = np.flatnonzero(qids[1:] == qids[:-1])
    if repeated.shape[0]:
        raise ValueError(
            f"Query {scalar(qids[repeated[0]])!r} has rows in two places of "
            f"{where}: each query's rows must be contiguous (sort the data by qid) or "
            "kept in one partition."
        )
    return qids, order


def _check_overflow(key: str, values: np.ndarray, data) -> None:
    """Refuse a metric value beyond float64 (DESIGN §8: the right number or an error)."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    first = scalar(data.qids[np.flatnonzero(bad)[0]])
    raise ValueError(
        f"{key} of {int(bad.sum())} quer{'y' if bad.sum() == 1 else 'ies'} (first: query "
        f"{first!r}) exceeds float64 (about 1.8e308): the gains of y_true (highest label "
        f"{data.labels.max():g}) or the discounts are too large. NDCG, a ratio, is computed "
        "scale-free; for this metric use smaller gains (gain='linear' or a label -> gain "
        "mapping) or rescale y_true."
    )


def _finish(entry: Entry, values, empty, qids, weights):
    """Apply the empty-query policy and average over queries."""
    key, policy = entry.key, entry.options["empty"]
    n_empty = int(empty.sum())
    what = ("have one class only (no relevant or no non-relevant document)"
            if "pairwise" in entry.metric.capabilities else "have no relevant document")
    if n_empty:
        if policy == "raise":
            raise ValueError(
                f"{key}: {n_empty} of {values.shape[0]} queries {what} "
                f"(first: query {scalar(qids[empty][0])!r}) and "
                "empty='raise'; choose empty='zero', 'one', 'skip' or 'nan' to score them."
            )
        values[empty] = _EMPTY_VALUE[policy]
    if policy == "nan" and n_empty:
        return values, float("nan"), n_empty
    counted = ~np.isnan(values)
    w = None if weights is None else weights[counted]
    if not (counted.any() if w is None else (w > 0).any()):
        warn(f"{key} is undefined: no query is counted (all {n_empty} queries {what} "
             "and empty='skip', or their weights are zero); returning NaN.", RuntimeWarning)
        return values, float("nan"), n_empty
    return values, summarize(values[counted], entry.metric.aggregate, w), n_empty
