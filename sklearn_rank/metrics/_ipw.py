"""Inverse-propensity-weighted labels: scoring rankings on logged clicks."""

from __future__ import annotations

import numpy as np

from .._utils.validation import validate_params

__all__ = ["ipw_labels"]


@validate_params({"clicks": ["array-like"], "propensity": ["array-like"]})
def ipw_labels(clicks, propensity) -> np.ndarray:
    """Clicks divided by the examination propensity of the position they were shown at.

    Under the position-based click model — a document shown at position ``p``
    is examined with probability ``propensity(p)`` and, once examined, clicked
    with probability ``rel`` — a click divided by its propensity has
    expectation ``rel``. Used as real-valued labels with linear gain, these
    make ``dcg(gain='linear')@k`` of any ranking an unbiased estimate of its
    DCG@k on the true relevance ``rel`` (Joachims, Swaminathan and Schnabel,
    "Unbiased learning-to-rank with biased feedback", WSDM 2017), so a search
    can be scored on clicks: pass these labels as ``y`` and
    ``scoring="dcg(gain='linear')@10"``.

    Parameters
    ----------
    clicks : array-like of shape (n_rows,)
        Clicks of each row (0 or 1, or counts), non-negative.
    propensity : array-like of shape (n_rows,)
        Examination propensity of the position each row was *shown* at in the
        log, in (0, 1]: e.g. ``(1 / position) ** eta`` for positions 1, 2, ...
        (estimated, e.g., by result randomisation).

    Returns
    -------
    labels : ndarray of shape (n_rows,)
        ``clicks / propensity`` as float64 (0 where there was no click).

    Raises
    ------
    ValueError
        When the arrays differ in length, a click is negative or not finite, or
        a propensity is not in (0, 1].

    Notes
    -----
    Only DCG (and CG) with ``gain='linear'`` is unbiased this way: each
    document's term is linear in its label. NDCG divides by the ideal DCG of
    the same noisy labels, and exponential gain ``2**l - 1`` is not linear, so
    both are biased (though often still used to compare models). Documents
    never shown in the log have no click and count as irrelevant; small
    propensities make the estimate unbiased but noisy (clip them from below
    to trade a bias for less variance).

    Examples
    --------
    >>> from sklearn_rank.metrics import dcg_score, ipw_labels
    >>> position = [1, 2, 3, 4]
    >>> clicks = [0, 1, 0, 1]
    >>> labels = ipw_labels(clicks, [1 / p for p in position])
    >>> labels.tolist()
    [0.0, 2.0, 0.0, 4.0]
    >>> round(dcg_score(labels, [0.1, 0.4, 0.2, 0.3], qid=[7, 7, 7, 7],
    ...                 gain="linear", k=2), 6)
    4.523719
    """
    clicks = _vector(clicks, "clicks")
    propensity = _vector(propensity, "propensity")
    if clicks.shape != propensity.shape:
        raise ValueError(
            f"clicks has {clicks.shape[0]} rows but propensity has {propensity.shape[0]}; "
            "pass the propensity of the position each row was shown at, one per row.")
    bad = ~np.isfinite(clicks) | (clicks < 0)
    if bad.any():
        raise ValueError(
            f"clicks has {int(bad.sum())} value(s) that are negative or not finite "
            f"(first at row {int(np.flatnonzero(bad)[0])}); pass click counts >= 0.")
    bad = ~((propensity > 0) & (propensity <= 1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"propensity must be in (0, 1]; row {row} has {propensity[row]!r}. Pass the "
            "probability that the position the row was shown at is examined.")
    return clicks / propensity


def _vector(values, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a 1-D numeric array; got shape {array.shape} "
                         f"and dtype {array.dtype}.")
    return array.astype(np.float64)
