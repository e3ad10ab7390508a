"""Typed per-row columns: what a metric reads of each document.

A column is a small frozen (hashable) description of one value per row —
the label, its gain, whether it is relevant at a threshold, whether it was
judged, ERR's stop probability. It knows how to compute its values from the
data (:meth:`Column.values`, once per :class:`~sklearn_rank.metrics._engine.data.Data`), whether
they are
a function of the label alone (:attr:`Column.elementwise`: a block then
computes them from its gathered labels instead of gathering another column),
its padding value (0: padding cells rank last and count for nothing) and its
validation (:meth:`Column.check`, run once per evaluation by the plan).

Kernels never compute columns themselves: they ask a
:class:`~sklearn_rank.metrics._engine.blocks.Ranking` for ``ranking.ranked(column, width)`` and
friends,
which caches every block array by column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["CODES", "JUDGED", "LABELS", "POSITIVE", "Column", "CwlGain", "Gain", "NamedGain",
           "PairGain", "Relevant", "StopProbability", "gain_pairs", "is_pairs", "refuse_negative",
           "stop_probability"]

_LN2 = math.log(2.0)


class Column:
    """A per-row column: a hashable key. Subclasses with fields are frozen
    dataclasses; those without (:data:`LABELS`, ...) are equal by class."""

    #: Whether a row's value is a vectorised function of its label alone
    #: (:meth:`of_labels`); a block then computes it from its own labels.
    elementwise: ClassVar[bool] = False
    #: Whether a block's cells hold the :meth:`values` of their rows (padding
    #: 0), so that a block in rank order can read the data's rows instead
    #: (:meth:`~sklearn_rank.metrics._engine.blocks.Ranking.reads_rows`).
    #: False for a column whose block depends on the block
    #: (:class:`~sklearn_rank.metrics._engine.scaled.Scaled`).
    per_row: ClassVar[bool] = True
    #: Whether every value is 0 or 1 (a count of them is exact in any order).
    flag: ClassVar[bool] = False

    def of_labels(self, labels: np.ndarray) -> np.ndarray:
        """The values of rows with these labels (elementwise columns)."""
        raise NotImplementedError

    def values(self, data) -> np.ndarray:
        """The value of every row of ``data``, in grouped order (float64)."""
        return np.asarray(self.of_labels(data.labels), dtype=np.float64)

    def nonzero(self, data) -> np.ndarray:
        """The rows of ``data`` whose value is nonzero, in order (kept by
        :meth:`~sklearn_rank.metrics._engine.data.Data.nonzero`)."""
        return np.flatnonzero(data.column(self) != 0)

    def block(self, ranking) -> np.ndarray | None:
        """The (q, w) values of a block's cells in input order, padding 0."""
        if not self.elementwise:
            return ranking.gathered(self)
        out = np.asarray(self.of_labels(ranking.unranked(LABELS)), dtype=np.float64)
        if ranking.padding is not None and self.of_labels(np.zeros(1))[0] != 0:
            np.copyto(out, 0.0, where=ranking.padding)  # padding cells hold label 0
        return out

    def check(self, data, metric: str) -> None:
        """Refuse data on which the column has no valid value (``metric``
        names the metric in the message)."""

    # (a column without fields: its class is its value; dataclasses replace these)
    def __eq__(self, other) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Labels(Column):
    """The labels themselves."""

    def values(self, data) -> np.ndarray:
        return data.labels


class Judged(Column):
    """1 for judged documents, 0 for unjudged ones (TREC mode)."""

    flag: ClassVar[bool] = True

    def values(self, data) -> np.ndarray:
        return np.asarray(data.judged, dtype=np.float64)

    def nonzero(self, data) -> np.ndarray:
        return np.flatnonzero(data.judged)


class Positive(Column):
    """1 for a positive label (ERR: a document the user may stop at)."""

    elementwise: ClassVar[bool] = True
    flag: ClassVar[bool] = True

    def of_labels(self, labels):
        return (labels > 0).astype(np.float64)


class Codes(Column):
    """trec_eval's relevance code of every row (TREC mode, :attr:`Data.codes`):
    its qrels level, -1 (not in the qrels) or -2 (a negative qrels level)."""

    def values(self, data) -> np.ndarray:
        return data.codes


LABELS, JUDGED, POSITIVE, CODES = Labels(), Judged(), Positive(), Codes()


@dataclass(frozen=True)
class Relevant(Column):
    """1 for a relevant document: label >= threshold, and judged (TREC mode:
    an unjudged document is neither relevant nor judged non-relevant).

    With ``unjudged`` (trec_eval's loops over ranks under a negative ``-l``), an
    unjudged document also counts when its trec_eval code (:data:`CODES`: -1,
    -2) is >= threshold, as trec_eval's ``rel >= relevance_level`` does."""

    threshold: float
    unjudged: bool = False
    elementwise: ClassVar[bool] = True
    flag: ClassVar[bool] = True

    def of_labels(self, labels):
        return (labels >= self.threshold).astype(np.float64)

    def values(self, data):
        flags = self.of_labels(data.labels)
        if data.judged is None:
            return flags
        flags *= data.judged
        if self._counts_codes(data):
            flags += (data.judged == 0) & (data.codes >= self.threshold)
        return flags

    def nonzero(self, data) -> np.ndarray:
        flags = data.labels >= self.threshold  # (the rows of values(data) != 0)
        if data.judged is not None:
            judged = data.judged.astype(bool, copy=False)
            flags &= judged
            if self._counts_codes(data):
                flags |= ~judged & (data.codes >= self.threshold)
        return np.flatnonzero(flags)

    def block(self, ranking):
        # with judgments (TREC mode) a row's flag is not its label's alone: its values
        return ranking.gathered(self) if ranking.has_judgments else super().block(ranking)

    def _counts_codes(self, data) -> bool:
        return self.unjudged and self.threshold < 0 and data.codes is not None


# -- gains ------------------------------------------------------------------------


def _exponential(labels):
    """2**l - 1 (inf beyond 1023: only the scale-free NDCG accepts such labels)."""
    with np.errstate(over="ignore"):
        gains = np.exp2(labels)
    gains -= 1.0
    fraction = (labels > 0) & (labels < 1)
    if fraction.any():  # 2**l - 1 cancels for small l
        gains[fraction] = np.expm1(labels[fraction] * _LN2)
    return gains


def is_pairs(gain) -> bool:
    """A mapping frozen into a tuple of (label, gain) pairs by the spec."""
    return (isinstance(gain, tuple) and len(gain) > 0
            and all(isinstance(p, tuple) and len(p) == 2 for p in gain))


class Gain(Column):
    """The gain of a label: :meth:`of` gives the column of a ``gain`` option."""

    @staticmethod
    def of(gain: Any) -> Gain:
        """The column of a gain option: a name, a mapping (or its frozen
        pairs), an array or a callable."""
        if isinstance(gain, str):
            return NamedGain(gain)
        if callable(gain):
            return CallableGain(gain)
        if isinstance(gain, Mapping) or is_pairs(gain):
            return MappedGain(tuple(sorted(dict(gain).items())))
        return TableGain(tuple(np.asarray(gain, dtype=np.float64).tolist()))

    def check(self, data, metric: str) -> None:
        labels = data.labels
        if labels.min() < 0:
            bad = labels < 0
            raise ValueError(
                f"y_true has {int(bad.sum())} negative label(s) (first in query "
                f"{data.first_qid(bad)!r}); {metric} needs relevance labels >= 0 "
                "(negative gains break 0 <= NDCG <= 1). Clip or shift the labels."
            )


@dataclass(frozen=True)
class NamedGain(Gain):
    """``'exponential'`` (2**l - 1) or ``'linear'`` (l). Any finite label works:
    NDCG is computed scale-free, and a DCG or CG beyond float64 is refused
    once computed."""

    name: str
    elementwise: ClassVar[bool] = True

    def of_labels(self, labels):
        return _exponential(labels) if self.name == "exponential" else labels


@dataclass(frozen=True)
class CallableGain(Gain):
    """A callable mapping an array of labels to an array of gains."""

    func: Callable

    def values(self, data):
        return np.asarray(self.func(data.labels.copy()), dtype=np.float64)

    def check(self, data, metric: str) -> None:
        super().check(data, metric)
        labels, values = data.labels, data.column(self)  # computed once: kept
        if values.shape != labels.shape:
            raise ValueError(
                f"gain callable must return one gain per label (an array of shape "
                f"{labels.shape}), got shape {values.shape}."
            )
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise ValueError(
                f"gain callable returned {int(bad.sum())} negative, NaN or infinite "
                f"gain(s) (first in query {data.first_qid(bad)!r}); gains must be "
                "finite and >= 0."
            )


def _check_gain_values(values: np.ndarray) -> None:
    if values.ndim != 1 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(
            "gain must map labels to finite gains >= 0; got "
            f"{np.array2string(values, threshold=8)}."
        )


@dataclass(frozen=True)
class MappedGain(Gain):
    """A ``{label: gain}`` mapping, as sorted pairs."""

    items: tuple

    def values(self, data):
        keys = np.array([k for k, _ in self.items], dtype=np.float64)
        gains = np.array([v for _, v in self.items], dtype=np.float64)
        return gains[np.searchsorted(keys, data.labels)]

    def check(self, data, metric: str) -> None:
        super().check(data, metric)
        labels = data.labels
        keys = np.array([k for k, _ in self.items], dtype=np.float64)
        missing = ~np.isin(labels, keys)
        if missing.any():
            raise ValueError(
                f"y_true has {int(missing.sum())} label(s) with no entry in the gain "
                f"mapping (first in query {data.first_qid(missing)!r}, label "
                f"{labels[missing][0]:g}); add them to the mapping."
            )
        _check_gain_values(np.array([v for _, v in self.items], dtype=np.float64))


@dataclass(frozen=True)
class TableGain(Gain):
    """An array of gains indexed by integer labels (LightGBM's ``label_gain``)."""

    table: tuple

    def values(self, data):
        return np.array(self.table, dtype=np.float64)[data.labels.astype(np.intp)]

    def check(self, data, metric: str) -> None:
        super().check(data, metric)
        table = np.array(self.table, dtype=np.float64)
        _check_gain_values(table)
        labels = data.labels
        bad = (labels != np.floor(labels)) | (labels >= table.shape[0])
        if bad.any():
            raise ValueError(
                f"y_true has {int(bad.sum())} label(s) that are not integers below "
                f"len(gain) = {table.shape[0]} (first in query {data.first_qid(bad)!r}); "
                "a gain array maps label i to gain[i], like LightGBM's label_gain."
            )


def gain_pairs(text: str) -> tuple[tuple[str, float], ...]:
    """The ``(level, gain)`` pairs of a ``gains`` option, in the order given:
    ``"1=0,2=3"`` is ``(("1", 0.0), ("2", 3.0))`` (levels kept as written,
    whole numbers; trec_eval's ``ndcg.1=0,2=3``). A ValueError says what is
    malformed."""
    pairs = []
    for part in text.split(","):
        name, eq, value = part.partition("=")
        name = name.strip()
        try:
            gain = float(value) if eq and re.fullmatch(r"[+-]?[0-9]+", name) else None
        except ValueError:
            gain = None
        if gain is None:
            raise ValueError(f"gains must be 'level=gain' pairs separated by commas, levels "
                             f"whole numbers (e.g. '1=0,2=3'); got {text!r} (at {part!r}).")
        pairs.append((name, gain))
    return tuple(pairs)


@dataclass(frozen=True)
class PairGain(Gain):
    """A gain column with the levels of ``pairs`` (:func:`gain_pairs`) at their
    gains (the first pair of a level wins), the other labels at ``base``'s."""

    base: Gain
    pairs: tuple

    def values(self, data):
        labels = data.labels
        out = np.array(data.column(self.base), dtype=np.float64)
        done: set[int] = set()
        for name, gain in self.pairs:
            level = int(name)
            if level not in done:
                done.add(level)
                out[labels == level] = gain
        return out

    def check(self, data, metric: str) -> None:
        self.base.check(data, metric)
        gains = np.array([g for _, g in self.pairs], dtype=np.float64)
        if not np.isfinite(gains).all() or (gains < 0).any():
            raise ValueError(f"{metric}: gains must be finite and >= 0, got {gains.tolist()} "
                             "(negative gains are trec_eval's, on its rankings: "
                             "sklearn_rank.trec.trec_eval(qrels, run, ['ndcg.1=-1']).")


# -- ERR's stop probability --------------------------------------------------------


def stop_probability(labels, max_grade: float) -> np.ndarray:
    """ERR's (2**l - 1) / 2**max_grade for 0 <= l <= max_grade, without overflow.

    Computed as 2**(l - m) - 2**-m (exact for integer grades below 2**53) or,
    for l < 1, as 2**(l - m) (1 - 2**-l) (no cancellation); any max_grade works
    (a probability below 2**-1074 is 0).
    """
    labels = np.asarray(labels, dtype=np.float64)
    head = np.exp2(labels - max_grade)
    out = head - np.exp2(-max_grade)
    low = (labels > 0) & (labels < 1)  # (label 0 gives exactly 0 above)
    if low.any():
        out[low] = head[low] * -np.expm1(-labels[low] * _LN2)
    return out


@dataclass(frozen=True)
class StopProbability(Column):
    """ERR's stop probability (2**l - 1) / 2**max_grade of grades in [0, max_grade]."""

    max_grade: float
    elementwise: ClassVar[bool] = True

    def of_labels(self, labels):
        return stop_probability(labels, self.max_grade)

    def check(self, data, metric: str) -> None:
        labels, max_grade = data.labels, self.max_grade
        for bad, what in ((labels < 0, "negative label(s)"),
                          (labels > max_grade, f"label(s) above max_grade={max_grade:g}")):
            if bad.any():
                raise ValueError(
                    f"y_true has {int(bad.sum())} {what} (first in query "
                    f"{data.first_qid(bad)!r}); {metric} needs grades 0..max_grade (ERR's "
                    "stop probability is (2**label - 1) / 2**max_grade); pass max_grade >= "
                    "the highest label."
                )


@dataclass(frozen=True)
class CwlGain(Column):
    """C/W/L's graded gain in [0, 1]; 0 for unjudged documents (TREC mode)."""

    min_rel: float
    max_rel: float
    elementwise: ClassVar[bool] = True

    def of_labels(self, labels):
        clipped = np.clip(np.maximum(labels, 0.0), self.min_rel, self.max_rel)
        return (clipped - self.min_rel) / (self.max_rel - self.min_rel)

    def values(self, data):
        out = self.of_labels(data.labels)
        return out if data.judged is None else out * data.judged

    def block(self, ranking):
        # with judgments (TREC mode) an unjudged row's gain is 0: its values
        return ranking.gathered(self) if ranking.has_judgments else super().block(ranking)

    def check(self, data, metric: str) -> None:
        if not self.min_rel < self.max_rel:
            raise ValueError(f"{metric} needs min_rel < max_rel, got min_rel={self.min_rel:g} "
                             f"and max_rel={self.max_rel:g}.")
        refuse_negative(data, metric)


def refuse_negative(data, metric: str) -> None:
    """Graded metrics take labels >= 0 (evaluate_run clips negative qrels levels)."""
    bad = data.labels < 0
    if bad.any():
        raise ValueError(
            f"y_true has {int(bad.sum())} negative label(s) (first in query "
            f"{data.first_qid(bad)!r}); {metric} needs relevance labels >= 0. Clip or shift "
            "the labels.")


def checked_columns(options: Mapping[str, Any]) -> tuple[Column, ...]:
    """The columns of a metric's resolved options whose values the data must
    allow (checked once per evaluation, whatever the number of metrics)."""
    out = []
    if options.get("gains") is not None and options.get("ties") != "trec":
        # (TREC mode, ranking.TREC_ORDER, computes trec_eval's gains, negative ones too)
        out.append(PairGain(Gain.of(options["gain"]), gain_pairs(options["gains"])))
    elif "gain" in options:
        out.append(Gain.of(options["gain"]))
    if "max_grade" in options:
        out.append(StopProbability(options["max_grade"]))
    if "max_rel" in options:  # C/W/L graded gains
        out.append(CwlGain(float(options["min_rel"]), float(options["max_rel"])))
    return tuple(out)
