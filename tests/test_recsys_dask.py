"""evaluate_recommendations on Dask DataFrames equals the in-memory evaluation."""

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")

from test_recsys_evaluate import METRICS, _data, install_fake_beyond  # noqa: E402

from sklearn_rank.recsys import evaluate_recommendations  # noqa: E402


@pytest.fixture
def fake_beyond(monkeypatch):
    return install_fake_beyond(monkeypatch)


@pytest.mark.parametrize("string_ids", [False, True])
@pytest.mark.parametrize(("n_recs", "n_other"), [(1, 1), (3, 2), (5, None)])
def test_dask_frames_give_the_in_memory_evaluation(string_ids, n_recs, n_other):
    recs, test, train = _data(seed=n_recs, string_ids=string_ids)
    metrics = [*METRICS, "user_coverage@3"]
    want = evaluate_recommendations(recs, test, train=train, k=5, metrics=metrics)
    if n_other is not None:
        test, train = (dd.from_pandas(f, npartitions=n_other) for f in (test, train))
    got = evaluate_recommendations(dd.from_pandas(recs, npartitions=n_recs), test,
                                   train=train, k=5, metrics=metrics)
    assert got == want
    assert got.n_users_without_recs == want.n_users_without_recs == 5
    assert got.n_users_without_test == want.n_users_without_test == 5
    assert got.system == want.system


def test_dask_list_metrics_see_the_same_lists_popularity_and_history(fake_beyond):
    recs, test, train = _data(seed=7)
    metrics = ["catalog_coverage", "arp", "serendipity"]
    want = evaluate_recommendations(recs, test, train=train, k=5, metrics=metrics)
    seen = {name: fake_beyond[name] for name in metrics}
    got = evaluate_recommendations(dd.from_pandas(recs, npartitions=4),
                                   dd.from_pandas(test, npartitions=3),
                                   train=dd.from_pandas(train, npartitions=2), k=5,
                                   metrics=metrics)
    assert got == want
    np.testing.assert_array_equal(fake_beyond["arp"][0], seen["arp"][0])
    np.testing.assert_array_equal(fake_beyond["arp"][1].interactions,
                                  seen["arp"][1].interactions)
    np.testing.assert_array_equal(fake_beyond["arp"][1].users, seen["arp"][1].users)
    rows, items = fake_beyond["serendipity"][2]
    want_rows, want_items = seen["serendipity"][2]
    assert sorted(zip(rows.tolist(), items.tolist(), strict=True)) == sorted(
        zip(want_rows.tolist(), want_items.tolist(), strict=True))
