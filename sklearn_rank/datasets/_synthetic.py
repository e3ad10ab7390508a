"""Synthetic learning-to-rank data shaped like MSLR-WEB and Yahoo! LTR."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .._utils.validation import Interval, validate_params

__all__ = ["make_ranking"]

#: Share of label 0 (irrelevant); the higher grades split the rest 1 : 1/2 : 1/4 : ...
_P_IRRELEVANT = 0.55

#: Standard deviation of the per-query offset, relative to that of the rest of the
#: latent relevance; about 4.5% of the queries of the default settings have no relevant
#: document (and about 2% only relevant ones), whatever the noise.
_OFFSET_SCALE = 0.8

#: Standard deviation of the log of the per-query noise multiplier (mean 1).
_DIFFICULTY_SPREAD = 0.3

#: Weights of the linear, interaction and threshold parts of the signal.
_LINEAR, _INTERACTION, _THRESHOLD = 0.6, 0.6, 0.5


def _label_proportions(n_relevance: int) -> np.ndarray:
    """Target share of each grade 0..n_relevance-1."""
    halves = 0.5 ** np.arange(n_relevance - 1)
    return np.concatenate([[_P_IRRELEVANT], (1 - _P_IRRELEVANT) * halves / halves.sum()])


def _check_n_docs(n_docs) -> tuple[int, int]:
    """(low, high) of the query lengths; n_docs is an int >= 1 or a tuple/list."""
    if isinstance(n_docs, Integral):
        return int(n_docs), int(n_docs)
    ok = (len(n_docs) == 2
          and all(isinstance(v, Integral) and not isinstance(v, bool) for v in n_docs)
          and 1 <= n_docs[0] <= n_docs[1])
    if not ok:
        raise ValueError(
            f"n_docs={n_docs!r} must be an int >= 1 (every query has that many documents) "
            "or a (low, high) pair of ints with 1 <= low <= high (inclusive range of "
            "query lengths).")
    return int(n_docs[0]), int(n_docs[1])


def _signal(Z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A mildly non-linear, unit-variance function of the informative features.

    ``Z`` holds one informative feature per row (standard normal). The result is
    the sum of three parts of unit variance: a linear term; products of pairs of
    features x_j * x_{j+1} (cyclic), invisible to a linear model; and steps
    1{x_j > c_j}, which trees find at once.
    """
    m, n = Z.shape
    if m == 0:
        return np.zeros(n)
    w = rng.standard_normal(m)
    u = rng.standard_normal(m)
    v = rng.standard_normal(m)
    cut = rng.uniform(-1.0, 1.0, m)

    total = math.sqrt(_LINEAR**2 + _INTERACTION**2 + _THRESHOLD**2)
    # For m == 2 the cyclic pairs (0, 1) and (1, 0) coincide: keep one.
    pairs = m if m > 2 else 1
    u = _INTERACTION / total * u[:pairs] / np.linalg.norm(u[:pairs])
    above = np.array([0.5 * math.erfc(c / math.sqrt(2)) for c in cut])  # P(x > c)
    v = _THRESHOLD / total * v / math.sqrt(np.sum(v**2 * above * (1 - above)))

    # Row by row: temporaries of n values, not (n, m) blocks.
    out = (_LINEAR / total * w / np.linalg.norm(w)) @ Z
    out -= v @ above
    for j in range(m):
        if m == 1:
            out += u[0] / math.sqrt(2) * (Z[0] ** 2 - 1)
        elif j < pairs:
            out += u[j] * (Z[j] * Z[(j + 1) % m])
        out += v[j] * (Z[j] > cut[j])
    return out


@validate_params({
    "n_queries": [Interval(Integral, 1, None, closed="left")],
    "n_docs": [Interval(Integral, 1, None, closed="left"), tuple, list],
    "n_features": [Interval(Integral, 1, None, closed="left")],
    "n_informative": [Interval(Integral, 0, None, closed="left")],
    "n_relevance": [Interval(Integral, 2, None, closed="left")],
    "noise": [Interval(Real, 0, None, closed="left")],
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
})
def make_ranking(
    n_queries: int = 200,
    *,
    n_docs: int | tuple[int, int] = (5, 60),
    n_features: int = 20,
    n_informative: int = 8,
    n_relevance: int = 5,
    noise: float = 1.0,
    shuffle: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate a learning-to-rank dataset with graded, skewed relevance labels.

    Queries have varied numbers of documents, most documents are irrelevant and
    a few queries have no relevant document at all, as in MSLR-WEB and Yahoo!
    LTR; the labels follow a learnable, mildly non-linear function of a few
    features, so gradient-boosted rankers beat linear models, which beat chance.

    Parameters
    ----------
    n_queries : int, default=200
        Number of queries; their ids are 0 .. n_queries - 1.
    n_docs : int or tuple of (int, int), default=(5, 60)
        Documents per query: an int gives every query that many; a pair
        ``(low, high)`` draws each query's length uniformly from the inclusive
        range.
    n_features : int, default=20
        Number of features (columns of ``X``).
    n_informative : int, default=8
        Number of features the relevance depends on: the first
        ``n_informative`` columns. The others are pure noise. 0 gives labels
        unrelated to the features.
    n_relevance : int, default=5
        Number of relevance grades; labels are 0 .. n_relevance - 1.
    noise : float, default=1.0
        Standard deviation of the Gaussian noise added to the latent relevance,
        relative to the signal's (1). The default gives a realistic difficulty:
        trained on 150 queries and tested on 50 others, LightGBM's
        ``LGBMRanker`` reaches an NDCG@10 about 0.65, some 0.3 above random
        scores and 0.05 to 0.1 above a linear model, and below the 0.71 of the
        noise-free latent relevance. 0 makes the labels a function of the
        features and the query.
    shuffle : bool, default=False
        If False, rows are grouped by query in increasing query id. If True,
        rows are randomly permuted, so a query's rows are no longer contiguous.
    random_state : int, RandomState instance or None, default=None
        Controls all randomness; pass an int for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), dtype float64
        Standard normal features; ``n_rows`` is the total number of documents.
    y : ndarray of shape (n_rows,), dtype int64
        Relevance labels in 0 .. n_relevance - 1.
    qid : ndarray of shape (n_rows,), dtype int64
        Query id of each row.

    See Also
    --------
    load_svmlight_ranking : Real LETOR, MSLR, Yahoo! or LightGBM ranking files.
    sklearn.datasets.make_regression : The pointwise analogue.

    Notes
    -----
    Document i of query q gets a latent relevance

        z_i = f(x_i) + o_q + noise * s_q * e_i,

    where f is a unit-variance function of the informative features (the sum
    of a linear term, products of pairs of features and step functions, with
    random coefficients), o_q a per-query offset (queries differ in how many
    relevant documents they have), s_q a per-query noise multiplier (log-normal,
    mean 1: queries differ in difficulty) and e_i standard normal.

    The labels are quantiles of z over the whole dataset, so the label
    proportions match these targets up to rounding, whatever ``noise``: 55% of
    the documents get label 0, and the grades 1, 2, ... share the other 45% in
    proportions 1 : 1/2 : 1/4 : ... For ``n_relevance=5`` that is
    55%, 24%, 12%, 6% and 3% (MSLR-WEB has roughly 52%, 32%, 13%, 2% and 1%).
    The spread of the offsets is chosen so that about 4.5% of the queries of the
    default settings have no relevant document (fewer with longer queries) --
    their NDCG is set by a metric's ``empty`` policy, as in real data.

    The draws come from a :class:`numpy.random.Generator` seeded from
    ``random_state``, which is fast: 100,000 queries (3.2 million rows) take
    about a second, most of it drawing ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=3, n_docs=4, n_features=5, n_informative=2,
    ...                          random_state=0)
    >>> X.shape, y.dtype, qid
    ((12, 5), dtype('int64'), array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]))
    >>> X, y, qid = make_ranking(n_queries=1000, random_state=0)
    >>> X.shape
    (32828, 20)
    >>> np.bincount(y) / y.size
    array([0.55, 0.24, 0.12, 0.06, 0.03])
    """
    from sklearn.utils import check_random_state

    low, high = _check_n_docs(n_docs)
    if n_informative > n_features:
        raise ValueError(
            f"n_informative={n_informative} must be <= n_features={n_features}.")

    # A Generator draws normals ~3x faster than the RandomState that scikit-learn's
    # convention hands out; seed one from it (an int seed stays reproducible).
    seed = check_random_state(random_state).randint(0, 2**32, size=4, dtype=np.uint64)
    rng = np.random.default_rng(seed)

    lengths = (np.full(n_queries, low) if low == high
               else rng.integers(low, high, size=n_queries, endpoint=True))
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), lengths)
    offset = _OFFSET_SCALE * math.sqrt(1 + noise**2) * rng.standard_normal(n_queries)
    scale = noise * rng.lognormal(-_DIFFICULTY_SPREAD**2 / 2, _DIFFICULTY_SPREAD, n_queries)
    if shuffle:
        # Rows of X are i.i.d., so permuting the query ids permutes the rows.
        qid = rng.permutation(qid)

    X = rng.standard_normal((qid.shape[0], n_features))
    z = _signal(np.ascontiguousarray(X[:, :n_informative].T), rng)
    z += offset[qid]
    if noise:
        z += scale[qid] * rng.standard_normal(qid.shape[0])

    cuts = np.quantile(z, np.cumsum(_label_proportions(n_relevance))[:-1])
    y = np.searchsorted(cuts, z, side="right").astype(np.int64)
    return X, y, qid
