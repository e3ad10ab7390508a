"""Beyond-accuracy metrics of top-k recommendation lists, as array functions.

Items are integer codes ``0..n_items-1``; the catalog is the codes
``0..n_catalog-1`` (larger codes are items recommended but outside it). The
top lists are one 2-D int64 array ``top`` of shape ``(n_users, k)``: row ``u``
holds user ``u``'s recommended item codes in rank order, padded with ``-1``
where the user has fewer than ``k``. System-level metrics return one float;
per-user metrics return a float64 array of length ``n_users``, NaN where the
metric has no value for that user (an empty list, a single item for ILD, no
training history for the history-based serendipity).

Each metric follows the issue's definition unless ``convention=`` names the
library (or paper) whose definition to follow instead; the differences are in
each function's Notes and in ``docs/user_guide/_recsys_definitions.rst``. The
arithmetic is vectorised NumPy over users, in chunks of users where a
temporary would otherwise grow with ``n_users * k * d``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

import numpy as np

from .._utils.validation import Interval, StrOptions, validate_params
from ._arrays import COUNT, Popularity, check_codes, popularity_of, top_array, user_mean
from ._diversity import cooccurrence_features, ild
from ._serendipity import serendipity

__all__ = ["BEYOND", "Popularity", "arp", "catalog_coverage", "cooccurrence_features", "entropy",
           "gini", "ild", "novelty", "serendipity", "short_head", "tail_share"]


@validate_params({"top": ["array-like"], "n_catalog": [COUNT],
                  "convention": [StrOptions({"recommenders", "recbole", "rectools"}), None]})
def catalog_coverage(top, n_catalog: int, *, convention: str | None = None) -> float:
    r"""Share of the catalog recommended to at least one user.

    .. math:: \mathrm{coverage@k} = \frac{|\bigcup_u \mathrm{top}_k(u) \cap C|}{|C|}

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    n_catalog : int
        Size of the catalog ``C``: item codes ``0..n_catalog-1``.
    convention : {'recommenders', 'recbole', 'rectools'}, default=None
        None counts only catalog items. The libraries count every distinct
        recommended item, in or out of the catalog (so their value can exceed
        1): Microsoft Recommenders' ``catalog_coverage`` (catalog = items of
        ``train``), RecBole's ``ItemCoverage``, rectools'
        ``CatalogCoverage(normalize=True)``.

    Returns
    -------
    float

    Examples
    --------
    >>> catalog_coverage([[0, 1], [1, -1], [7, 2]], n_catalog=4)
    0.75
    >>> catalog_coverage([[0, 1], [1, -1], [7, 2]], n_catalog=4, convention="recommenders")
    1.0
    """
    counts = np.bincount(top_array(top).ravel() + 1)[1:]  # (+1: the padding -1 lands at 0)
    return float(np.count_nonzero(counts[:n_catalog] if convention is None else counts)
                 / n_catalog)


def _catalog_counts(top: np.ndarray, n_catalog: int) -> np.ndarray:
    items = top[(top >= 0) & (top < n_catalog)]
    return np.bincount(items, minlength=n_catalog).astype(np.float64)


@validate_params({"top": ["array-like"], "n_catalog": [COUNT]})
def gini(top, n_catalog: int) -> float:
    r"""Gini index of the recommendation counts over the catalog.

    With the counts of every catalog item (0 for items never recommended)
    sorted ascending, :math:`c_1 \le \dots \le c_n`,

    .. math:: G = \frac{\sum_{i=1}^{n} (2i - n - 1)\, c_i}{n \sum_{i=1}^{n} c_i}

    0 when every item is recommended equally often, :math:`1 - 1/n` when one
    item takes every slot. Recommendations of items outside the catalog are
    not counted; NaN when no catalog item is recommended.

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    n_catalog : int
        Number of catalog items ``n`` (codes ``0..n_catalog-1``).

    Returns
    -------
    float

    Notes
    -----
    RecBole's ``GiniIndex`` computes the same formula with ``n`` its number of
    items and the counts of its full (unpadded) top-k matrix.

    Examples
    --------
    >>> gini([[0, 1], [0, 2]], n_catalog=4)
    0.375
    """
    counts = np.sort(_catalog_counts(top_array(top), n_catalog))
    total = counts.sum()
    if total == 0:
        return math.nan
    n = counts.size
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    return float(weights @ counts / (n * total))


@validate_params({"top": ["array-like"], "convention": [StrOptions({"recommenders", "recbole"}),
                                                        None]})
def entropy(top, *, convention: str | None = None) -> float:
    r"""Shannon entropy of the recommendation counts (distributional coverage).

    With :math:`p(i)` the share of all recommendation slots that item ``i``
    fills (padding excluded, items outside the catalog included),

    .. math:: H = -\sum_i p(i) \log_2 p(i)

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    convention : {'recommenders', 'recbole'}, default=None
        None and 'recommenders' (Microsoft Recommenders'
        ``distributional_coverage``) are the formula above. 'recbole' is
        RecBole's ``ShannonEntropy``: natural logarithm, divided by the number
        of distinct recommended items.

    Returns
    -------
    float
        NaN when nothing is recommended.

    Examples
    --------
    >>> entropy([[0, 1], [0, 2]])
    1.5
    """
    top = top_array(top)
    counts = np.bincount(top[top >= 0])
    counts = counts[counts > 0].astype(np.float64)
    if counts.size == 0:
        return math.nan
    p = counts / counts.sum()
    if convention == "recbole":
        return float(-(p * np.log(p)).sum() / counts.size)
    return float(-(p * np.log2(p)).sum())


_UNSEEN = {None: "max", "rectools": "max", "recommenders": "zero"}


@validate_params({"top": ["array-like"], "popularity": [Popularity],
                  "unseen": [StrOptions({"max", "zero", "skip"}), None],
                  "convention": [StrOptions({"recommenders", "rectools"}), None]})
def novelty(top, popularity: Popularity, *, unseen: str | None = None,
            convention: str | None = None) -> np.ndarray:
    r"""Per user, the mean self-information of the recommended items.

    .. math:: \mathrm{novelty@k}(u) = \frac{1}{|L_u|}\sum_{i \in L_u} -\log_2 p(i),
              \qquad p(i) = \frac{|\{v : v \text{ saw } i \text{ in training}\}|}{|U_{train}|}

    with :math:`L_u` the user's list (at most k items; padding excluded).

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    popularity : Popularity
        Training popularity of every item code.
    unseen : {'max', 'zero', 'skip'}, default=None
        The rule for items no training user saw (:math:`p(i) = 0`): 'max'
        counts them as seen by one user, :math:`\log_2 |U_{train}|`, the
        largest finite novelty (rectools' rule for cold items); 'zero' gives
        them novelty 0; 'skip' leaves them out of the user's mean. None takes
        the convention's rule ('max', or 'zero' for 'recommenders').
    convention : {'recommenders', 'rectools'}, default=None
        None and 'rectools' (``MeanInvUserFreq``) are the formula above.
        'recommenders' is Microsoft Recommenders' ``novelty``:
        :math:`p(i)` the item's share of all training interactions (rows),
        unseen items 0.

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list (or only skipped items).

    Notes
    -----
    Recommenders returns one number, the mean over all recommendation rows;
    it equals the mean of these per-user values when every list has the same
    length. Its unseen items count 0 but stay in the denominator, as 'zero'.

    References
    ----------
    P. Castells, S. Vargas and J. Wang, "Novelty and diversity metrics for
    recommender systems: choice, discovery and relevance", ECIR 2011.

    Examples
    --------
    >>> pop = Popularity.from_codes([0, 0, 1, 2, 3], [0, 1, 0, 0, 0], n_items=3)
    >>> novelty([[0, 1], [2, -1], [-1, -1]], pop)
    array([ 1.,  2., nan])
    """
    top = top_array(top)
    pop = popularity_of(popularity)
    check_codes(top, pop.users.size, "popularity")
    if pop.n_users == 0:
        raise ValueError("novelty needs training interactions: popularity has no users.")
    unseen = _UNSEEN[convention] if unseen is None else unseen
    if convention == "recommenders":
        seen, total = pop.interactions, pop.interactions.sum()
    else:
        seen, total = pop.users, float(pop.n_users)
    with np.errstate(divide="ignore"):
        info = -np.log2(seen / total)
    cold = seen == 0
    info[cold] = {"max": math.log2(total), "zero": 0.0, "skip": math.nan}[unseen]
    valid = top >= 0
    values = info[np.where(valid, top, 0)]
    return user_mean(values, valid & ~np.isnan(values))


@validate_params({"top": ["array-like"], "popularity": [Popularity]})
def arp(top, popularity: Popularity) -> np.ndarray:
    r"""Per user, the average recommendation popularity (ARP).

    .. math:: \mathrm{ARP@k}(u) = \frac{1}{|L_u|}\sum_{i \in L_u} \phi(i)

    with :math:`\phi(i)` the item's number of training interactions (0 for
    items never seen in training) and :math:`L_u` the user's list.

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    popularity : Popularity
        Training popularity of every item code.

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list.

    Notes
    -----
    RecBole's ``AveragePopularity`` is the same (its lists are never short).

    References
    ----------
    H. Abdollahpouri, R. Burke and B. Mobasher, "Managing popularity bias in
    recommender systems with personalized re-ranking", FLAIRS 2019.

    Examples
    --------
    >>> pop = Popularity.from_codes([0, 0, 1, 2, 3], [0, 1, 0, 0, 0], n_items=3)
    >>> arp([[0, 1], [2, -1], [-1, -1]], pop)
    array([2.5, 0. , nan])
    """
    top = top_array(top)
    pop = popularity_of(popularity)
    check_codes(top, pop.interactions.size, "popularity")
    valid = top >= 0
    return user_mean(pop.interactions[np.where(valid, top, 0)], valid)


def short_head(interactions: np.ndarray, head: float) -> np.ndarray:
    """Boolean mask of the short-head items: the most popular items that
    together hold at least ``head`` of the training interactions, with every
    item tied with the last one included (so the head does not depend on the
    order of ties); items without interactions are never in it."""
    total = interactions.sum()
    order = np.sort(interactions)[::-1]
    reached = np.flatnonzero(np.cumsum(order) >= head * total)
    threshold = order[reached[0]] if reached.size else order[-1]
    return (interactions >= threshold) & (interactions > 0)


def _recbole_tail(interactions: np.ndarray, tail: float) -> np.ndarray:
    """RecBole's ``TailPercentage`` long tail: items with at most ``tail``
    training interactions when ``tail > 1``, else the ``max(int(m * tail), 1)``
    least popular of the ``m`` items seen in training (ties by item code)."""
    seen = np.flatnonzero(interactions > 0)
    if tail > 1:
        return np.isin(np.arange(interactions.size), seen[interactions[seen] <= tail])
    order = seen[np.lexsort((seen, interactions[seen]))]
    mask = np.zeros(interactions.size, dtype=bool)
    mask[order[:max(int(seen.size * tail), 1)]] = True
    return mask


@validate_params({"top": ["array-like"], "popularity": [Popularity],
                  "head": [Interval(Real, 0, 1, closed="right")],
                  "convention": [StrOptions({"recbole"}), None],
                  "tail": [Interval(Real, 0, None, closed="neither"), None]})
def tail_share(top, popularity: Popularity, *, head: float = 0.8, convention: str | None = None,
               tail: float | None = None) -> np.ndarray:
    r"""Per user, the share of the list outside the short head (long-tail share).

    The short head is the set of most popular items that together hold at
    least ``head`` (80%) of the training interactions; items tied in
    popularity with the last head item are in the head too, and items with no
    training interaction are in the tail.

    .. math:: \mathrm{tail@k}(u) = \frac{|L_u \setminus \mathrm{Head}|}{|L_u|}

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    popularity : Popularity
        Training popularity of every item code.
    head : float in (0, 1], default=0.8
        Share of the training interactions the short head holds.
    convention : {'recbole'}, default=None
        'recbole' is RecBole's ``TailPercentage``: the tail is the ``tail``
        share (default 0.1) of least popular items seen in training (ties by
        item code), or the items with at most ``tail`` interactions when
        ``tail > 1``; items never seen in training are *not* in its tail.
    tail : float, default=None
        RecBole's ``tail_ratio`` (only with ``convention='recbole'``).

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list.

    References
    ----------
    H. Abdollahpouri, R. Burke and B. Mobasher, "Controlling popularity bias
    in learning-to-rank recommendation", RecSys 2017.

    Examples
    --------
    >>> pop = Popularity.from_codes([0, 1, 2, 3, 0], [0, 0, 0, 0, 1], n_items=3)
    >>> tail_share([[0, 1], [2, -1]], pop)
    array([0.5, 1. ])
    """
    top = top_array(top)
    pop = popularity_of(popularity)
    check_codes(top, pop.interactions.size, "popularity")
    if convention == "recbole":
        in_tail = _recbole_tail(pop.interactions, 0.1 if tail is None else tail)
    else:
        if tail is not None:
            raise ValueError("tail= is RecBole's tail_ratio: pass it with convention='recbole' "
                             "(the default convention's option is head=).")
        if pop.interactions.sum() == 0:
            raise ValueError("tail_share needs training interactions: popularity is empty.")
        in_tail = ~short_head(pop.interactions, head)
    valid = top >= 0
    return user_mean(in_tail[np.where(valid, top, 0)].astype(np.float64), valid)


#: name -> (function, "system" | "user")
BEYOND: dict[str, tuple[Callable, str]] = {
    "catalog_coverage": (catalog_coverage, "system"),
    "gini": (gini, "system"),
    "entropy": (entropy, "system"),
    "novelty": (novelty, "user"),
    "arp": (arp, "user"),
    "tail_share": (tail_share, "user"),
    "ild": (ild, "user"),
    "serendipity": (serendipity, "user"),
}
