"""top_k: every source of scores (dense, sparse, a function, an estimator)
gives the lists a plain sort gives, and evaluating them equals evaluating
every candidate with the seen items excluded."""

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy import sparse
from sklearn.linear_model import LinearRegression

from sklearn_rank.recsys import evaluate_recommendations, top_k


def _scores(seed=0, n_users=30, n_items=20):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 5, size=(n_users, n_items)).astype(float)  # many ties


def _seen(seed=0, n_users=30, n_items=20):
    rng = np.random.default_rng(seed + 100)
    rows = [(u, int(i)) for u in range(n_users)
            for i in rng.choice(n_items, size=int(rng.integers(0, 6)), replace=False)]
    return pd.DataFrame(rows, columns=["user", "item"])


def _brute(scores, k, seen=None, items=None):
    items = np.arange(scores.shape[1]) if items is None else np.asarray(items)
    excluded = {} if seen is None else seen.groupby("user")["item"].apply(set).to_dict()
    out = []
    for u in range(scores.shape[0]):
        cells = [(items[j], scores[u, j]) for j in range(scores.shape[1])
                 if items[j] not in excluded.get(u, ())]
        cells.sort(key=lambda c: (-c[1], c[0]))
        out += [(u, i, s) for i, s in cells[:k]]
    return out


def _rows(frame):
    return list(frame[["user", "item", "score"]].itertuples(index=False, name=None))


@pytest.mark.parametrize("k", [1, 3, 25])
@pytest.mark.parametrize("batch_size", [None, 7])
def test_dense_scores_give_each_users_k_best_ties_by_item_id(k, batch_size):
    scores, seen = _scores(k), _seen(k)
    assert _rows(top_k(scores, k=k, batch_size=batch_size)) == _brute(scores, k)
    got = top_k(scores, k=k, exclude=seen, batch_size=batch_size)
    assert _rows(got) == _brute(scores, k, seen)


def test_item_ids_set_the_tie_order():
    scores = np.array([[1.0, 1.0, 1.0, 0.0]])
    got = top_k(scores, k=2, items=[30, 10, 20, 5])
    assert got["item"].tolist() == [10, 20]


def test_a_sparse_matrix_lists_its_stored_entries_only():
    scores = _scores(1)
    matrix = sparse.random(30, 20, density=0.3, random_state=0, format="csr")
    matrix.data = np.round(matrix.data * 3)  # ties, and explicit zeros
    got = top_k(matrix, k=4, exclude=_seen(1))
    dense = matrix.toarray()
    stored = matrix.copy()
    stored.data[:] = 1
    excluded = _seen(1).groupby("user")["item"].apply(set).to_dict()
    want = []
    for u in range(30):
        cells = [(j, dense[u, j]) for j in stored[u].indices if j not in excluded.get(u, ())]
        cells.sort(key=lambda c: (-c[1], c[0]))
        want += [(u, j, s) for j, s in cells[:4]]
    assert _rows(got) == want
    assert scores.shape == (30, 20)


def test_a_scoring_function_and_an_estimator_give_the_matrix_lists():
    rng = np.random.default_rng(3)
    user_f, item_f = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    X = np.concatenate([np.repeat(user_f, 20, axis=0), np.tile(item_f, (30, 1))], axis=1)
    model = LinearRegression().fit(X, rng.normal(size=X.shape[0]))
    matrix = model.predict(X).reshape(30, 20)
    want = top_k(matrix, k=5, exclude=_seen(3))
    items = np.arange(20)

    def pair_features(users, item_ids):
        return np.concatenate([np.repeat(user_f[users], len(item_ids), axis=0),
                               np.tile(item_f[item_ids], (len(users), 1))], axis=1)

    got = top_k(model, k=5, users=np.arange(30), items=items, pair_features=pair_features,
                exclude=_seen(3), batch_size=4)
    pd.testing.assert_frame_equal(got, want)
    got = top_k(lambda rows: matrix[rows], k=5, n_users=30, items=items, exclude=_seen(3),
                batch_size=8)
    pd.testing.assert_frame_equal(got, want)


def test_evaluating_the_top_k_equals_evaluating_every_candidate():
    scores, seen = _scores(5), _seen(5)
    rng = np.random.default_rng(5)
    test = pd.DataFrame([(u, int(i)) for u in range(30)
                         for i in rng.choice(20, size=3, replace=False)],
                        columns=["user", "item"])
    every = pd.DataFrame({"user": np.repeat(np.arange(30), 20),
                          "item": np.tile(np.arange(20), 30), "score": scores.ravel()})
    metrics = ["ndcg@5", "recall@5", "map@5"]
    want = evaluate_recommendations(every, test, train=seen, k=5, metrics=metrics)
    lists = top_k(scores, k=5, exclude=seen)
    got = evaluate_recommendations(lists, test, train=seen, k=5, metrics=metrics)
    assert got == want
    assert evaluate_recommendations(lists, test, k=5, metrics=metrics) == want


def test_outputs_and_errors():
    scores = _scores()
    assert isinstance(top_k(scores, k=2, output="polars"), pl.DataFrame)
    assert top_k(scores, k=2, output="arrow").num_rows == 60
    bad = scores.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"NaN \(user at row 3 of the chunk, item column 4\)"):
        top_k(bad)
    with pytest.raises(ValueError, match="integers beyond 2\\*\\*53"):
        top_k(np.array([[2**60, 2**60 + 1]]))
    with pytest.raises(ValueError, match="needs items="):
        top_k(lambda rows: scores[rows], n_users=30)
    with pytest.raises(ValueError, match="items has 3 ids but the scores have 20 columns"):
        top_k(scores, items=[1, 2, 3])
