"""The constraints of the parameters the statistics functions share."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from .._utils.validation import Interval, StrOptions
from ..metrics._evaluation import Evaluation

__all__ = ["LEVEL", "PAIRED", "RESAMPLES", "SEED"]

#: The parameters of :func:`~sklearn_rank.stats.paired_values`, which every
#: paired test shares.
PAIRED = {
    "a": ["array-like", Evaluation],
    "b": ["array-like", Evaluation],
    "metric": [str, None],
    "missing": [StrOptions({"raise", "drop", "zero"})],
}

#: Seeds of NumPy's ``default_rng``.
SEED = [Interval(Integral, 0, None, closed="left"), np.random.Generator,
        np.random.BitGenerator, np.random.SeedSequence, None]

#: At least 2 resamples: a standard error, an interval.
RESAMPLES = [Interval(Integral, 2, None, closed="left")]

#: Strictly between 0 and 1: a confidence level, a significance level.
LEVEL = [Interval(Real, 0, 1, closed="neither")]
