"""The beyond-accuracy metrics of sklearn_rank.recsys._beyond.

Every metric equals a plain-Python computation of its definition on generated
data (several seeds: padded lists, users with empty lists, items outside the
catalog, items never seen in training, training users without a list), and
each library preset equals that library's numbers: Microsoft Recommenders,
rectools and RecBole on the fixed data of tests/_beyond_references.py (the
values its script printed), plus the worked examples of rectools'
docstrings and a hand-computed example of Kaminskas & Bridge's surprise.
"""

import itertools
import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from _beyond_references import FEATURES, REFERENCES, TEST, TOP, TRAIN

from sklearn_rank.recsys import _arrays, _diversity
from sklearn_rank.recsys._beyond import (
    BEYOND,
    Popularity,
    arp,
    catalog_coverage,
    cooccurrence_features,
    entropy,
    gini,
    ild,
    novelty,
    serendipity,
    tail_share,
)

SEEDS = range(6)
TOL = {"rel": 1e-12, "abs": 1e-12}


# -- generated data -------------------------------------------------------------------------

def generated(seed):
    """8 users (user 0's list empty), 14 items of which 11 in the catalog; k = 5
    with padded lists; training interactions with duplicate rows over items
    0..9 and users 0..9 (users 8, 9 have no list); item features with an
    all-zero row."""
    rng = np.random.default_rng(seed)
    n_users, n_items, n_catalog, k = 8, 14, 11, 5
    top = np.full((n_users, k), -1, dtype=np.int64)
    for u in range(1, n_users):
        length = rng.integers(1, k + 1)
        top[u, :length] = rng.choice(n_items, size=length, replace=False)
    train_users = rng.integers(0, 10, size=40)
    train_items = rng.integers(0, 10, size=40)
    train_items[:3] = [0, 0, 0]  # a popular item
    relevant = (rng.random(top.shape) < 0.5) & (top >= 0)
    expected = np.full((n_users, 4), -1, dtype=np.int64)
    for u in range(n_users):
        length = rng.integers(0, 5)
        expected[u, :length] = rng.choice(n_items, size=length, replace=False)
    features = rng.integers(0, 3, size=(n_items, 5)).astype(float)
    features[3] = 0.0
    return dict(top=top, n_items=n_items, n_catalog=n_catalog, users=train_users,
                items=train_items, relevant=relevant, expected=expected, features=features)


def lists(top):
    return [[int(i) for i in row if i >= 0] for row in np.asarray(top)]


def mean(values):
    return sum(values) / len(values) if values else math.nan


def assert_close(actual, expected):
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    keep = ~np.isnan(expected)
    assert actual[keep].tolist() == pytest.approx(expected[keep].tolist(), **TOL)


# -- brute force, from each definition ------------------------------------------------------

def bf_coverage(top, n_catalog, all_items=False):
    items = {i for row in lists(top) for i in row if all_items or i < n_catalog}
    return len(items) / n_catalog


def bf_gini(top, n_catalog):
    count = Counter(i for row in lists(top) for i in row if i < n_catalog)
    c = sorted(count.get(i, 0) for i in range(n_catalog))
    n = len(c)
    if sum(c) == 0:
        return math.nan
    return sum((2 * (i + 1) - n - 1) * c[i] for i in range(n)) / (n * sum(c))


def bf_entropy(top, recbole=False):
    count = Counter(i for row in lists(top) for i in row)
    total = sum(count.values())
    log = math.log if recbole else math.log2
    h = -sum(c / total * log(c / total) for c in count.values())
    return h / len(count) if recbole else h


def bf_novelty(data, unseen="max", recommenders=False):
    pairs = list(zip(data["users"].tolist(), data["items"].tolist(), strict=True))
    n_users = len({u for u, _ in pairs})
    out = []
    for row in lists(data["top"]):
        values = []
        for i in row:
            if recommenders:
                seen, total = sum(1 for _, j in pairs if j == i), len(pairs)
            else:
                seen, total = len({u for u, j in pairs if j == i}), n_users
            if seen:
                values.append(-math.log2(seen / total))
            elif unseen == "max":
                values.append(math.log2(total))
            elif unseen == "zero":
                values.append(0.0)
        out.append(mean(values))
    return out


def bf_arp(data):
    count = Counter(data["items"].tolist())
    return [mean([count.get(i, 0) for i in row]) for row in lists(data["top"])]


def bf_head(data, head):
    count = Counter(data["items"].tolist())
    total, running, threshold = sum(count.values()), 0, None
    for c in sorted(count.values(), reverse=True):
        running += c
        if running >= head * total:
            threshold = c
            break
    return {i for i, c in count.items() if c >= threshold}


def bf_tail_share(data, head):
    in_head = bf_head(data, head)
    return [mean([float(i not in in_head) for i in row]) for row in lists(data["top"])]


def bf_similarity(f, g, similarity):
    if similarity == "cosine":
        norm = math.sqrt(sum(x * x for x in f)) * math.sqrt(sum(x * x for x in g))
        return sum(x * y for x, y in zip(f, g, strict=True)) / norm if norm else 0.0
    a = {j for j, x in enumerate(f) if x}
    b = {j for j, x in enumerate(g) if x}
    return len(a & b) / len(a | b) if a | b else 0.0


def bf_distance(f, g, similarity):
    if similarity == "hamming":
        return float(sum(x != y for x, y in zip(f, g, strict=True)))
    return 1.0 - bf_similarity(f, g, similarity)


def bf_ild(top, features, similarity="cosine", rectools=False):
    features = np.asarray(features).tolist()
    out = []
    for row in lists(top):
        pairs = list(itertools.combinations(row, 2))
        value = mean([bf_distance(features[i], features[j], similarity) for i, j in pairs])
        out.append(0.0 if rectools and len(row) == 1 else value)
    return out


def bf_history(data, n_users):
    history = {}
    for u, i in zip(data["users"].tolist(), data["items"].tolist(), strict=True):
        if u < n_users:
            history.setdefault(u, set()).add(i)
    return history


def bf_serendipity(data, convention=None, features=None, similarity="cosine"):
    top, relevant = lists(data["top"]), np.asarray(data["relevant"])
    history = bf_history(data, len(top))
    if convention == "recommenders" and features is None:  # co-occurrence rows
        users = sorted(set(data["users"].tolist()))
        pairs = list(zip(data["users"].tolist(), data["items"].tolist(), strict=True))
        holders = {i: {u for u, j in pairs if j == i} for i in range(data["n_items"])}
        features = [[float(u in holders[i]) for u in users] for i in range(data["n_items"])]
    features = None if features is None else np.asarray(features).tolist()
    out = []
    for u, row in enumerate(top):
        if not row or (convention and u not in history):
            out.append(math.nan)
            continue
        terms = []
        for r, i in enumerate(row):
            if not relevant[u, r]:
                terms.append(0.0)
            elif convention is None:
                terms.append(float(i not in set(data["expected"][u].tolist())))
            elif convention == "recommenders":
                sims = [bf_similarity(features[i], features[j], similarity) for j in history[u]]
                terms.append(1.0 - mean(sims))
            else:
                terms.append(min(bf_distance(features[i], features[j], similarity)
                                 for j in history[u]))
        out.append(mean(terms))
    return out


def pop_of(data):
    return Popularity.from_codes(data["users"], data["items"], data["n_items"])


# -- brute force ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_system_metrics_equal_brute_force(seed):
    d = generated(seed)
    assert catalog_coverage(d["top"], d["n_catalog"]) == pytest.approx(
        bf_coverage(d["top"], d["n_catalog"]), **TOL)
    for convention in ("recommenders", "recbole", "rectools"):
        assert catalog_coverage(d["top"], d["n_catalog"], convention=convention) == \
            pytest.approx(bf_coverage(d["top"], d["n_catalog"], all_items=True), **TOL)
    assert gini(d["top"], d["n_catalog"]) == pytest.approx(bf_gini(d["top"], d["n_catalog"]),
                                                           **TOL)
    assert entropy(d["top"]) == pytest.approx(bf_entropy(d["top"]), **TOL)
    assert entropy(d["top"], convention="recommenders") == pytest.approx(bf_entropy(d["top"]),
                                                                         **TOL)
    assert entropy(d["top"], convention="recbole") == pytest.approx(
        bf_entropy(d["top"], recbole=True), **TOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_popularity_metrics_equal_brute_force(seed):
    d = generated(seed)
    pop = pop_of(d)
    assert (pop.users[10:] == 0).all() and (d["top"] >= 10).any()  # cold items recommended
    for unseen in ("max", "zero", "skip"):
        assert_close(novelty(d["top"], pop, unseen=unseen), bf_novelty(d, unseen))
    assert_close(novelty(d["top"], pop, convention="rectools"), bf_novelty(d, "max"))
    assert_close(novelty(d["top"], pop, convention="recommenders"),
                 bf_novelty(d, "zero", recommenders=True))
    assert_close(arp(d["top"], pop), bf_arp(d))
    for head in (0.8, 0.5, 0.95, 1.0, 1e-9):
        assert_close(tail_share(d["top"], pop, head=head), bf_tail_share(d, head))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("similarity", ["cosine", "jaccard", "hamming"])
@pytest.mark.parametrize("sparse", [False, True])
def test_ild_equals_brute_force(seed, similarity, sparse):
    d = generated(seed)
    features = sp.csr_array(d["features"]) if sparse else d["features"]
    expected = bf_ild(d["top"], d["features"], similarity)
    assert_close(ild(d["top"], features, similarity=similarity), expected)
    assert_close(ild(d["top"], features, similarity=similarity, convention="recommenders"),
                 expected)
    assert_close(ild(d["top"], features, similarity=similarity, convention="rectools"),
                 bf_ild(d["top"], d["features"], similarity, rectools=True))


@pytest.mark.parametrize("seed", SEEDS)
def test_serendipity_equals_brute_force(seed):
    d = generated(seed)
    history = (d["users"], d["items"])
    assert_close(serendipity(d["top"], d["relevant"], expected=d["expected"]),
                 bf_serendipity(d))
    assert_close(serendipity(d["top"], d["relevant"], history=history,
                             convention="recommenders"),
                 bf_serendipity(d, "recommenders"))
    for sparse in (False, True):
        features = sp.csr_array(d["features"]) if sparse else d["features"]
        assert_close(serendipity(d["top"], d["relevant"], history=history,
                                 convention="recommenders", item_features=features),
                     bf_serendipity(d, "recommenders", d["features"]))
        for similarity in ("jaccard", "cosine"):
            assert_close(serendipity(d["top"], d["relevant"], history=history,
                                     convention="kaminskas_bridge", item_features=features,
                                     similarity=similarity),
                         bf_serendipity(d, "kaminskas_bridge", d["features"], similarity))


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_chunk_boundaries_do_not_change_values(seed, monkeypatch):
    """With chunks of a few users, and without the sparse Gram lookups, the
    per-user metrics are unchanged."""
    d = generated(seed)
    history = (d["users"], d["items"])
    sparse = sp.csr_array(d["features"])

    def run():
        return [ild(d["top"], d["features"]), ild(d["top"], sparse),
                ild(d["top"], sparse, similarity="jaccard"),
                serendipity(d["top"], d["relevant"], expected=d["expected"]),
                serendipity(d["top"], d["relevant"], history=history, convention="recommenders"),
                serendipity(d["top"], d["relevant"], history=history, convention="recommenders",
                            item_features=d["features"]),
                serendipity(d["top"], d["relevant"], history=history,
                            convention="kaminskas_bridge", item_features=sparse),
                serendipity(d["top"], d["relevant"], history=history,
                            convention="kaminskas_bridge", item_features=d["features"])]

    whole = run()
    monkeypatch.setattr(_arrays, "CHUNK", 7)
    monkeypatch.setattr(_diversity, "_GRAM", 0)  # sparse pairs by row products, not lookups
    for chunked, full in zip(run(), whole, strict=True):
        assert_close(chunked, full)


def test_popularity_from_codes():
    pop = Popularity.from_codes([0, 0, 0, 1, 2], [1, 1, 0, 1, 3], n_items=5)
    assert pop.interactions.tolist() == [1, 3, 0, 1, 0]
    assert pop.users.tolist() == [1, 2, 0, 1, 0]
    assert pop.n_users == 3


def test_beyond_lists_every_metric():
    assert set(BEYOND) == {"catalog_coverage", "gini", "entropy", "novelty", "arp",
                           "tail_share", "ild", "serendipity"}
    assert {name for name, (_, level) in BEYOND.items() if level == "system"} == {
        "catalog_coverage", "gini", "entropy"}


def test_gini_bounds():
    assert gini([[0, 1], [2, 3]], n_catalog=4) == 0.0
    assert gini([[0], [0]], n_catalog=4) == pytest.approx(1 - 1 / 4, **TOL)
    assert math.isnan(gini([[-1], [7]], n_catalog=4))


# -- the libraries' numbers -----------------------------------------------------------------

def reference_inputs():
    users, items = (np.array(c) for c in zip(*TRAIN, strict=True))
    top = np.array(TOP)
    test = set(TEST)
    relevant = np.array([[(u, i) in test for i in row] for u, row in enumerate(TOP)])
    return top, (users, items), relevant, Popularity.from_codes(users, items, n_items=10)


def test_microsoft_recommenders():
    """recommenders 1.2.1, recommenders/evaluation/python_evaluation.py: catalog
    (= train items 0..8, so the cold item 9 is outside it), distributional
    coverage, novelty (one number: the mean over all rows), user_diversity with
    co-occurrence and with feature vectors, user_serendipity."""
    ref = REFERENCES["recommenders"]
    top, history, relevant, pop = reference_inputs()
    assert catalog_coverage(top, 9, convention="recommenders") == pytest.approx(
        ref["catalog_coverage"], **TOL)
    assert catalog_coverage(top, 9) == pytest.approx(8 / 9, **TOL)  # the difference
    assert entropy(top, convention="recommenders") == pytest.approx(
        ref["distributional_coverage"], **TOL)
    assert novelty(top, pop, convention="recommenders").mean() == pytest.approx(
        ref["novelty"], **TOL)
    cooccurrence = cooccurrence_features(*history, n_items=10)
    assert_close(ild(top, cooccurrence, convention="recommenders"),
                 ref["user_diversity_cooccurrence"])
    assert_close(ild(top, FEATURES, convention="recommenders"), ref["user_diversity_features"])
    assert_close(serendipity(top, relevant, history=history, convention="recommenders"),
                 ref["user_serendipity"])


def test_rectools():
    """rectools 0.19.0: MeanInvUserFreq, IntraListDiversity with
    PairwiseHammingDistanceCalculator, Serendipity, CatalogCoverage(normalize=True)."""
    ref = REFERENCES["rectools"]
    top, _, relevant, pop = reference_inputs()
    assert_close(novelty(top, pop, convention="rectools"), ref["miuf"])
    assert_close(novelty(top, pop), ref["miuf"])
    assert_close(ild(top, FEATURES, similarity="hamming", convention="rectools"),
                 ref["ild_hamming"])
    assert_close(serendipity(top, relevant, convention="rectools", popularity=pop,
                             n_catalog=10), ref["serendipity"])
    assert catalog_coverage(top, 10, convention="rectools") == pytest.approx(
        ref["catalog_coverage"], **TOL)


def test_recbole():
    """RecBole (commit 7b02be5) recbole/evaluator/metrics.py: ItemCoverage,
    GiniIndex, ShannonEntropy, AveragePopularity, TailPercentage (tail_ratio
    0.1, 0.5 and the count threshold 2)."""
    ref = REFERENCES["recbole"]
    top, _, _, pop = reference_inputs()
    assert catalog_coverage(top, 10, convention="recbole") == pytest.approx(
        ref["item_coverage"], **TOL)
    assert gini(top, 10) == pytest.approx(ref["gini"], **TOL)
    assert entropy(top, convention="recbole") == pytest.approx(ref["shannon_entropy"], **TOL)
    assert_close(arp(top, pop), ref["average_popularity"])
    for tail in (0.1, 0.5, 2):
        assert_close(tail_share(top, pop, convention="recbole", tail=tail),
                     ref[f"tail_percentage_{tail}"])


def test_rectools_docstring_examples():
    """The Examples of rectools/metrics/novelty.py (MeanInvUserFreq),
    diversity.py (IntraListDiversity) and serendipity.py (Serendipity), with
    ids mapped to codes (users 1, 2, 3 -> 0, 1, 2; item i -> i, or 'i1'.. -> 0..)."""
    pop = Popularity.from_codes([0, 0, 1, 2], [1, 2, 1, 1], n_items=4)
    assert_close(novelty([[3, -1], [2, 3], [1, 2]], pop, convention="rectools"),
                 [1.5849625007211563, 1.5849625007211563, 0.7924812503605781])
    assert_close(novelty([[3], [2], [1]], pop, convention="rectools"),
                 [1.5849625007211563, 1.5849625007211563, 0.0])
    features = [[0, 0], [0, 0], [0, 1], [1, 1], [0, 0]]  # row 0 unused
    top = np.array([[1, 2, 3], [1, 4, -1]])
    assert_close(ild(top, features, similarity="hamming", convention="rectools"), [4 / 3, 0])
    assert_close(ild(top[:, :2], features, similarity="hamming", convention="rectools"), [1, 0])
    assert_close(ild(top[:, :1], features, similarity="hamming", convention="rectools"), [0, 0])
    prev = Popularity.from_codes([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], n_items=4)
    top = np.array([[0, 1], [1, 2], [2, -1], [1, 2]])
    interactions = {(0, 0), (0, 1), (1, 1), (1, 2), (2, 1), (3, 1)}
    relevant = [[(u, i) in interactions for i in row] for u, row in enumerate(top)]
    assert_close(serendipity(top, relevant, convention="rectools", popularity=prev, n_catalog=4),
                 [0, 0.5, 0, 0.125])
    assert_close(serendipity(top[:, :1], [r[:1] for r in relevant], convention="rectools",
                             popularity=prev, n_catalog=4), [0, 0.25, 0, 0.25])


def test_kaminskas_bridge_worked_example():
    """Surprise = distance (1 - Jaccard of the feature sets) to the closest item
    of the user's profile (Kaminskas & Bridge, 2014), weighted by relevance,
    averaged over the list. Items: 0 {a, b}, 1 {b, c}, 2 {c}, 3 {a}."""
    features = [[1, 1, 0], [0, 1, 1], [0, 0, 1], [1, 0, 0]]
    top, relevant = [[1, 2, 3], [1, 2, 3]], [[True] * 3, [True, True, False]]
    # user 0's profile {0}: distances 2/3, 1, 1/2; user 1's {0, 2}: 1/2, 0, (1/2, not relevant)
    history = ([0, 1, 1], [0, 0, 2])
    assert_close(serendipity(top, relevant, history=history, convention="kaminskas_bridge",
                             item_features=features), [13 / 18, 1 / 6])


# -- edges and errors -----------------------------------------------------------------------

def test_empty_lists_have_no_value():
    pop = Popularity.from_codes([0], [0], n_items=2)
    top = [[-1, -1], [0, 1]]
    for values in (novelty(top, pop), arp(top, pop), tail_share(top, pop),
                   serendipity(top, [[False] * 2, [True] * 2], expected=[[1], [1]])):
        assert np.isnan(values[0]) and not np.isnan(values[1])
    assert math.isnan(entropy([[-1]]))
    assert catalog_coverage([[-1]], n_catalog=3) == 0.0


def test_users_without_history_have_no_history_serendipity():
    top, relevant = [[0, 1], [1, 0]], [[True, True], [True, False]]
    values = serendipity(top, relevant, history=([1], [0]), convention="recommenders")
    # user 1: item 1 (no training user: similarity 0) relevant, item 0 not
    assert np.isnan(values[0]) and values[1] == pytest.approx(0.5, **TOL)


@pytest.mark.parametrize("call, match", [
    (lambda: gini([1, 2], 3), "top must be a 2-D array"),
    (lambda: gini([[0.5]], 3), "integer item codes"),
    (lambda: gini([[-2]], 3), "negative item codes"),
    (lambda: gini([[0]], 0), "n_catalog"),
    (lambda: entropy([[0]], convention="ranx"), "convention"),
    (lambda: arp([[0]], {"a": 1}), "popularity"),
    (lambda: arp([[5]], Popularity.from_codes([0], [0], 2)), "item code 5 but popularity"),
    (lambda: novelty([[0]], Popularity.from_codes([], [], 2)), "training interactions"),
    (lambda: novelty([[0]], Popularity.from_codes([0], [0], 2), unseen="min"), "unseen"),
    (lambda: tail_share([[0]], Popularity.from_codes([0], [0], 2), head=0), "head"),
    (lambda: tail_share([[0]], Popularity.from_codes([0], [0], 2), tail=0.2), "recbole"),
    (lambda: ild([[0, 3]], [[1, 0]] * 2), "item_features covers only 2"),
    (lambda: ild([[0, 1]], [[1, 0]] * 2, similarity="euclid"), "similarity"),
    (lambda: serendipity([[0]], [[True, False]], expected=[[1]]), "shape of top"),
    (lambda: serendipity([[0]], [[True]]), "expected="),
    (lambda: serendipity([[0]], [[True]], expected=[[1], [2]]), "same users"),
    (lambda: serendipity([[0]], [[True]], convention="recommenders"), "history="),
    (lambda: serendipity([[0]], [[True]], history=([0], [0]), convention="kaminskas_bridge"),
     "needs item_features"),
    (lambda: serendipity([[0]], [[True]], convention="rectools"), "popularity"),
    (lambda: serendipity([[0]], [[True]], convention="rectools",
                         popularity=Popularity.from_codes([0], [0], 2)), "n_catalog"),
    (lambda: Popularity.from_codes([0], [3], 2), "item_codes must be in"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
