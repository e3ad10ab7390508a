"""evaluate_recommendations against a plain Python loop over users, against
Microsoft Recommenders' values, and on its edges (ties, duplicates, users
without recommendations or test items, frames of three libraries)."""

import json
import math
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from sklearn_rank import stats
from sklearn_rank.recsys import RecommenderEvaluation, _frames, _lists, evaluate_recommendations

METRICS = ["ndcg@5", "precision@5", "recall@5", "map@5", "mrr@5", "hit_rate@5"]
DATA = Path(__file__).parent / "data"


def _data(seed=0, n_users=40, n_items=25, string_ids=False):
    """recs (scores rounded so that many tie), test with ratings 0..3, train;
    users 0-4 have no recommendation, users 35-39 no test item."""
    rng = np.random.default_rng(seed)
    recs, test, train = [], [], []
    for user in range(n_users):
        items = rng.permutation(n_items)
        if user >= 5:
            for item in items[:int(rng.integers(1, 15))]:
                recs.append((user, int(item), float(rng.integers(0, 6))))
        for item in items[int(rng.integers(3, 10)):][:int(rng.integers(0, 5))]:
            train.append((user, int(item)))
        if user < 35:
            for item in rng.choice(n_items, size=int(rng.integers(1, 6)), replace=False):
                test.append((user, int(item), int(rng.integers(0, 4))))
    recs = pd.DataFrame(recs, columns=["user", "item", "score"])
    test = pd.DataFrame(test, columns=["user", "item", "rating"])
    train = pd.DataFrame(train, columns=["user", "item"])
    if string_ids:
        for frame in (recs, test, train):
            frame["user"] = "u" + frame["user"].astype(str)
            frame["item"] = "i" + frame["item"].astype(str)
    return recs, test, train


def _brute(recs, test, train, k, exclude=True, threshold=1):
    """{metric: {user: value}}: each user's list and metrics in plain Python."""
    seen = {}
    for u, i in train[["user", "item"]].itertuples(index=False):
        seen.setdefault(u, set()).add(i)
    lists = {}
    for u, i, s in recs[["user", "item", "score"]].itertuples(index=False):
        lists.setdefault(u, []).append((i, s))
    truth = {}
    for u, i, r in test[["user", "item", "rating"]].itertuples(index=False):
        truth.setdefault(u, {})[i] = r
    out = {m: {} for m in ("ndcg", "p", "recall", "map", "mrr", "hit_rate")}
    for u, rated in truth.items():
        ranked = sorted(lists.get(u, []), key=lambda pair: (-pair[1], pair[0]))
        top = [i for i, _ in ranked if not (exclude and i in seen.get(u, ()))][:k]
        rel = [rated.get(i, 0) >= threshold for i in top]
        n_rel = sum(r >= threshold for r in rated.values())
        dcg = sum((2 ** rated.get(i, 0) - 1) / math.log2(r + 2) for r, i in enumerate(top))
        ideal = sorted(rated.values(), reverse=True)[:k]
        idcg = sum((2 ** g - 1) / math.log2(r + 2) for r, g in enumerate(ideal))
        out["ndcg"][u] = dcg / idcg if idcg > 0 else 0.0
        out["p"][u] = sum(rel) / k
        out["recall"][u] = sum(rel) / n_rel if n_rel else 0.0
        hits, ap = 0, 0.0
        for r, is_rel in enumerate(rel):
            if is_rel:
                hits += 1
                ap += hits / (r + 1)
        out["map"][u] = ap / n_rel if n_rel else 0.0
        first = next((r for r, is_rel in enumerate(rel) if is_rel), None)
        out["mrr"][u] = 0.0 if first is None else 1 / (first + 1)
        out["hit_rate"][u] = float(any(rel))
    return out


def _check_against_brute(ev, brute, k):
    names = {"ndcg": f"ndcg@{k}", "p": f"p@{k}", "recall": f"recall@{k}", "map": f"map@{k}",
             "mrr": f"mrr@{k}", "hit_rate": f"hit_rate@{k}"}
    for name, key in names.items():
        expected = [brute[name][u] for u in ev.qids.tolist()]
        assert ev.per_query[key] == pytest.approx(expected, rel=1e-12, abs=1e-15), key
        assert ev.mean[key] == pytest.approx(np.mean(expected), rel=1e-12, abs=1e-15)


@pytest.fixture(params=["padded", "blocks", "sorted"])
def layout(request, monkeypatch):
    """Both ways of ranking the lists: one padded row per user (in one block of
    users, or in blocks of a few), one global sort."""
    if request.param == "sorted":
        monkeypatch.setattr(_lists, "PAD_FACTOR", -10**9)
    if request.param == "blocks":
        monkeypatch.setattr(_lists, "_BLOCK_CELLS", 40)
    return request.param


@pytest.mark.parametrize("string_ids", [False, True])
@pytest.mark.parametrize("exclude", [True, False])
@pytest.mark.parametrize("k", [1, 5, 20])
def test_every_ranking_metric_equals_a_loop_over_users(layout, string_ids, exclude, k):
    recs, test, train = _data(seed=k, string_ids=string_ids)
    metrics = [m.replace("@5", f"@{k}") for m in METRICS]
    ev = evaluate_recommendations(recs, test, train=train, k=k, metrics=metrics,
                                  exclude_seen=exclude)
    brute = _brute(recs, test, train, k, exclude)
    assert sorted(ev.qids.tolist()) == ev.qids.tolist() == sorted(brute["p"])
    _check_against_brute(ev, brute, k)
    assert ev.n_users_without_recs == 5  # users 0-4: in test, scored 0 and counted
    assert ev.n_users_without_test == 5  # users 35-39: left out
    assert ev.n_queries == 35


def test_text_ids_without_pandas_routines(monkeypatch):
    # text ids are coded with pandas' hash table when pandas is there, else a dict
    recs, test, train = _data(seed=13, string_ids=True)
    want = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS)
    monkeypatch.setattr(_frames, "_pandas", lambda: None)
    got = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS)
    assert got == want
    _check_against_brute(got, _brute(recs, test, train, 5), 5)


def test_the_sorted_and_padded_layouts_agree_on_skewed_lists():
    recs, test, train = _data(seed=3)
    extra = pd.DataFrame({"user": 7, "item": np.arange(100, 400), "score": 0.5})
    recs = pd.concat([recs, extra], ignore_index=True)  # one long list: the sorted layout
    ev = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS)
    _check_against_brute(ev, _brute(recs, test, train, 5), 5)


def test_lists_of_one_length_are_ranked_as_the_loop_ranks_them(layout):
    recs, test, train = _data(seed=12)
    rng = np.random.default_rng(12)
    recs = pd.DataFrame({"user": np.repeat(np.arange(40), 8),
                         "item": np.concatenate([rng.permutation(25)[:8] for _ in range(40)]),
                         "score": rng.integers(0, 4, size=320).astype(float)})
    ev = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS)
    _check_against_brute(ev, _brute(recs, test, train, 5), 5)


def test_threshold_sets_relevance_of_the_binary_metrics():
    recs, test, train = _data(seed=4)
    ev = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS, threshold=2)
    brute = _brute(recs, test, train, 5, threshold=2)
    for name in ("p", "recall", "map", "mrr", "hit_rate"):
        expected = [brute[name][u] for u in ev.qids.tolist()]
        assert ev.per_query[f"{name}@5"] == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_metrics_without_cutoff_take_k_and_a_deeper_cutoff_is_refused():
    recs, test, train = _data()
    ev = evaluate_recommendations(recs, test, train=train, k=3, metrics=["ndcg", "recall@2"])
    assert list(ev.mean) == ["ndcg@3", "recall@2"]
    with pytest.raises(ValueError, match=r"cut at k=3: pass k=10"):
        evaluate_recommendations(recs, test, k=3, metrics=["ndcg@10"])


def test_pandas_polars_and_arrow_frames_give_equal_evaluations():
    recs, test, train = _data(seed=5, string_ids=True)
    want = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS)
    as_polars = [pl.from_pandas(f) for f in (recs, test, train)]
    as_arrow = [pa.Table.from_pandas(f, preserve_index=False) for f in (recs, test, train)]
    for frames in (as_polars, as_arrow):
        got = evaluate_recommendations(frames[0], frames[1], train=frames[2], k=5,
                                       metrics=METRICS)
        assert got == want


def test_ties_are_ranked_by_increasing_item_id_before_the_cut():
    # integer ids by value (2 before 10), strings as Python compares them ("10" < "2")
    recs = pd.DataFrame({"user": [1, 1, 1], "item": [10, 2, 3], "score": [1.0, 1.0, 0.5]})
    test = pd.DataFrame({"user": [1], "item": [2]})
    ev = evaluate_recommendations(recs, test, k=1, metrics=["p@1"])
    assert ev.per_query["p@1"].tolist() == [1.0]
    text = recs.assign(item=recs["item"].astype(str))
    ev = evaluate_recommendations(text, test.assign(item="2"), k=1, metrics=["p@1"])
    assert ev.per_query["p@1"].tolist() == [0.0]  # "10" comes first
    # the row order does not matter
    ev = evaluate_recommendations(recs.iloc[::-1], test, k=1, metrics=["p@1"])
    assert ev.per_query["p@1"].tolist() == [1.0]


def test_large_integer_scores_are_ranked_as_integers():
    # 2**60 and 2**60 + 1 are one float64: as integers the second ranks first
    recs = pd.DataFrame({"user": [1, 1], "item": [1, 2],
                         "score": np.array([2**60, 2**60 + 1], dtype=np.int64)})
    test = pd.DataFrame({"user": [1], "item": [2]})
    ev = evaluate_recommendations(recs, test, k=1, metrics=["p@1"])
    assert ev.per_query["p@1"].tolist() == [1.0]


def test_without_score_column_rows_are_in_rank_order():
    recs = pd.DataFrame({"user": [1, 1, 2, 2], "item": [5, 4, 4, 5]})
    test = pd.DataFrame({"user": [1, 2], "item": [4, 4]})
    ev = evaluate_recommendations(recs, test, k=2, metrics=["mrr"], score_col=None)
    assert ev.per_query["mrr@2"].tolist() == [0.5, 1.0]


def test_no_recommendation_at_all_and_no_test_row():
    recs, test, _ = _data()
    ev = evaluate_recommendations(recs.iloc[:0], test, metrics=["ndcg", "user_coverage"])
    assert ev.n_users_without_recs == ev.n_queries == test["user"].nunique()
    assert ev.mean["ndcg@10"] == 0 and ev.system["user_coverage@10"] == 0
    with pytest.raises(ValueError, match="test has no rows, so no user to evaluate"):
        evaluate_recommendations(recs, test.iloc[:0])


def test_k_larger_than_the_lists():
    recs, test, train = _data(seed=6)
    ev = evaluate_recommendations(recs, test, train=train, k=50,
                                  metrics=[m.replace("@5", "@50") for m in METRICS])
    _check_against_brute(ev, _brute(recs, test, train, 50), 50)


def test_a_duplicate_recommendation_is_refused_naming_rows_and_columns(layout):
    recs = pd.DataFrame({"uid": [1, 1, 1, 2], "iid": [7, 8, 7, 7], "s": [3.0, 2, 1, 0]})
    test = pd.DataFrame({"uid": [1], "iid": [7]})
    with pytest.raises(ValueError, match=r"recs lists user 1 and item 7 twice \(rows 0 and "
                                         r"2.*'uid' and 'iid'.*drop_duplicates"):
        evaluate_recommendations(recs, test, user_col="uid", item_col="iid", score_col="s")


def test_a_duplicate_test_interaction_is_refused():
    recs = pd.DataFrame({"user": [1], "item": [7], "score": [1.0]})
    test = pd.DataFrame({"user": [1, 1], "item": ["x", "x"]})
    with pytest.raises(ValueError, match=r"test lists user 1 and item 'x' twice \(rows 0 and 1"):
        evaluate_recommendations(recs.assign(item="x"), test)


@pytest.mark.parametrize(("frame", "kwargs", "message"), [
    ("recs", {"score_col": "prediction"},
     r"recs has no column 'prediction' \(its columns: \['user', 'item', 'score'\]\); rename "
     r"the column of scores to 'prediction' or pass score_col="),
    ("test", {"rating_col": "stars"}, r"test has no column 'stars'.*rating_col="),
])
def test_a_missing_column_names_the_frame_and_the_option(frame, kwargs, message):
    recs, test, train = _data()
    with pytest.raises(ValueError, match=message):
        evaluate_recommendations(recs, test, **kwargs)


def test_ids_of_different_kinds_across_frames_are_refused():
    recs, test, train = _data()
    with pytest.raises(ValueError, match=r"recs's 'user' holds integers, test's 'user' holds "
                                         "strings"):
        evaluate_recommendations(recs, test.assign(user=test["user"].astype(str)))


def test_missing_ids_and_scores_are_refused_naming_the_row():
    recs, test, _ = _data()
    bad = recs.astype({"score": float})
    bad.loc[3, "score"] = np.nan
    with pytest.raises(ValueError, match=r"recs: column 'score' holds nan at row 3"):
        evaluate_recommendations(bad, test)
    bad = recs.astype({"item": object})
    bad.loc[2, "item"] = None
    with pytest.raises(ValueError, match=r"recs: column 'item' has a missing id at row 2"):
        evaluate_recommendations(bad, test)


def test_the_result_works_with_compare_and_the_paired_tests():
    recs, test, train = _data(seed=8)
    other = recs.assign(score=-recs["score"])
    a = evaluate_recommendations(recs, test, train=train, k=5, metrics=METRICS)
    b = evaluate_recommendations(other, test, train=train, k=5, metrics=METRICS)
    report = stats.compare({"model": a, "reverse": b}, baseline="reverse")
    row = next(c for c in report.comparisons if c.metric == "ndcg@5")
    assert row.mean == pytest.approx(a.mean["ndcg@5"], rel=1e-12)
    assert row.baseline_mean == pytest.approx(b.mean["ndcg@5"], rel=1e-12)
    assert row.n_queries == a.n_queries
    result = stats.paired_ttest(a, b, metric="ndcg@5")
    d = a.per_query["ndcg@5"] - b.per_query["ndcg@5"]
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.shape[0]))
    assert result.statistic == pytest.approx(t, rel=1e-10)


def test_repr_shows_the_counts():
    recs, test, train = _data()
    text = repr(evaluate_recommendations(recs, test, train=train, k=5, metrics=["ndcg"]))
    assert text.startswith("RecommenderEvaluation(n_users=35, k=5, n_users_without_recs=5, "
                           "n_users_without_test=5)")
    assert "ndcg@5" in text


def test_microsoft_recommenders_values():
    """Values of Microsoft Recommenders 1.2.1's python_evaluation, stored by
    maint_tools/recsys_recommenders_fixture.py. Recommenders' precision_at_k,
    recall_at_k and map_at_k average over the users in both frames only (a
    test user without recommendations is dropped; here: scored 0 and
    counted), its ndcg_at_k over every test user, as here; relevance is binary
    unless score_type says otherwise, and MAP@k divides by min(R, k) (this
    package's capped=True)."""
    document = json.loads((DATA / "recsys_recommenders.json").read_text(encoding="utf-8"))
    recs = pd.DataFrame(document["data"]["recs"])
    test = pd.DataFrame(document["data"]["test"])
    common = test[test["user"].isin(set(recs["user"]))]  # Recommenders' common users
    values = document["values"]
    for k in (5, 10):
        binary = evaluate_recommendations(recs, common, k=k, rating_col=None,
                                          metrics=["p", "recall", "map(capped=True)"])
        assert binary.n_users_without_recs == 0
        assert binary.mean[f"p@{k}"] == pytest.approx(values[f"precision_at_k@{k}"], rel=1e-12)
        assert binary.mean[f"recall@{k}"] == pytest.approx(values[f"recall_at_k@{k}"],
                                                           rel=1e-12)
        assert binary.mean[f"map(capped=True)@{k}"] == pytest.approx(values[f"map_at_k@{k}"],
                                                                     rel=1e-12)
        every = evaluate_recommendations(recs, test, k=k, rating_col=None,
                                         metrics=["ndcg(gain='linear')"])
        assert every.n_users_without_recs == 5
        assert every.mean[f"ndcg(gain='linear')@{k}"] == pytest.approx(
            values[f"ndcg_at_k(binary)@{k}"], rel=1e-12)
        graded = evaluate_recommendations(recs, test, k=k,
                                          metrics=["ndcg", "ndcg(gain='linear')"])
        assert graded.mean[f"ndcg@{k}"] == pytest.approx(values[f"ndcg_at_k(exp)@{k}"],
                                                         rel=1e-12)
        assert graded.mean[f"ndcg(gain='linear')@{k}"] == pytest.approx(
            values[f"ndcg_at_k(raw)@{k}"], rel=1e-12)


# -- the list metrics, wired to recsys._beyond's interface (a fake until it is merged) --


@pytest.fixture
def fake_beyond(monkeypatch):
    return install_fake_beyond(monkeypatch)


def install_fake_beyond(monkeypatch) -> dict:
    """Install a stand-in for sklearn_rank.recsys._beyond with the interface's
    signatures; the dict it returns records what each function receives."""
    calls = {}
    module = types.ModuleType("sklearn_rank.recsys._beyond")

    class Popularity:
        def __init__(self, interactions, users, n_users):
            self.interactions, self.users, self.n_users = interactions, users, n_users

        @classmethod
        def from_codes(cls, user_codes, item_codes, n_items):
            interactions = np.bincount(item_codes, minlength=n_items).astype(float)
            pairs = np.unique(np.stack([user_codes, item_codes]), axis=1)
            users = np.bincount(pairs[1], minlength=n_items).astype(float)
            return cls(interactions, users, int(np.unique(user_codes).shape[0]))

    def catalog_coverage(top, n_catalog):
        calls["catalog_coverage"] = (top, n_catalog)
        return np.unique(top[top >= 0]).shape[0] / n_catalog

    def arp(top, popularity):
        calls["arp"] = (top, popularity)
        values = np.where(top >= 0, popularity.interactions[np.maximum(top, 0)], 0.0)
        n = (top >= 0).sum(axis=1)
        return np.where(n > 0, values.sum(axis=1) / np.maximum(n, 1), np.nan)

    def tail_share(top, popularity, *, head=0.8):
        calls["tail_share"] = head
        return np.full(top.shape[0], head)

    def serendipity(top, relevant, *, expected=None, history=None, convention="x"):
        calls["serendipity"] = (top, relevant, history)
        calls["expected"] = expected
        return relevant.sum(axis=1) / top.shape[1]

    def ild(top, item_features, *, similarity="cosine"):
        calls["ild"] = item_features
        return np.zeros(top.shape[0])

    module.Popularity = Popularity
    module.BEYOND = {"catalog_coverage": (catalog_coverage, "system"), "arp": (arp, "user"),
                     "tail_share": (tail_share, "user"),
                     "serendipity": (serendipity, "user"), "ild": (ild, "user")}
    monkeypatch.setitem(sys.modules, "sklearn_rank.recsys._beyond", module)
    return calls


def test_list_metrics_receive_the_cut_lists_of_the_evaluated_users(fake_beyond):
    recs, test, train = _data(seed=9)
    ev = evaluate_recommendations(
        recs, test, train=train, k=5,
        metrics=["ndcg", "catalog_coverage@3", "arp", "tail_share(head=0.9)", "user_coverage",
                 "serendipity"])
    top, n_catalog = fake_beyond["catalog_coverage"]
    assert top.shape == (35, 3) and n_catalog == train["item"].nunique()
    # the lists: each evaluated user's items by decreasing score, ties by item id,
    # seen items removed, as item codes (the catalog's in id order first)
    seen = train.groupby("user")["item"].apply(set).to_dict()
    top5, _ = fake_beyond["arp"]
    catalog = np.sort(train["item"].unique())
    others = np.sort(np.setdiff1d(np.union1d(recs["item"], test["item"]), catalog))
    ids = np.concatenate([catalog, others])
    for row, user in enumerate(ev.qids.tolist()):
        mine = recs[recs["user"] == user].sort_values(["score", "item"],
                                                      ascending=[False, True])
        want = [i for i in mine["item"] if i not in seen.get(user, ())][:5]
        got = [ids[c] for c in top5[row] if c >= 0]
        assert got == want
    assert ev.system["catalog_coverage@3"] == pytest.approx(
        np.unique(top[top >= 0]).shape[0] / n_catalog, rel=1e-12)
    popularity = fake_beyond["arp"][1]
    counts = train["item"].value_counts()
    assert popularity.interactions[:catalog.shape[0]].tolist() == [counts[i] for i in catalog]
    assert fake_beyond["tail_share"] == 0.9
    hits = ev.per_query["hit_rate@5"] if "hit_rate@5" in ev.per_query else None
    assert hits is None
    brute = _brute(recs, test, train, 5)
    assert ev.system["user_coverage@5"] == pytest.approx(
        np.mean([brute["hit_rate"][u] for u in ev.qids.tolist()]), rel=1e-12)
    top_s, relevant, history = fake_beyond["serendipity"]
    rows, items = history
    assert rows.shape == items.shape and rows.max() < 35
    assert list(ev.mean) == ["ndcg@5", "arp@5", "tail_share(head=0.9)@5", "serendipity@5"]
    assert list(ev.system) == ["catalog_coverage@3", "user_coverage@5"]
    assert np.isnan(ev.per_query["arp@5"]).sum() == ev.n_empty["arp@5"] > 0
    assert ev.mean["arp@5"] == pytest.approx(np.nanmean(ev.per_query["arp@5"]), rel=1e-12)
    stats.compare({"a": ev, "b": ev}, metrics=["arp@5"])  # per-user list metrics compare too


def test_list_metrics_say_what_they_need(fake_beyond):
    recs, test, _ = _data()
    with pytest.raises(ValueError, match=r"catalog_coverage@10 is a share of the catalog, "
                                         "which is empty: pass train="):
        evaluate_recommendations(recs, test, metrics=["catalog_coverage"])
    with pytest.raises(ValueError, match=r"arp@10 reads the items' popularity in training: "
                                         "pass train="):
        evaluate_recommendations(recs, test, metrics=["arp"])
    with pytest.raises(ValueError, match=r"ild compares .* pass item_features="):
        evaluate_recommendations(recs, test, metrics=["ild"])


def test_item_features_are_aligned_with_the_item_codes(fake_beyond):
    recs, test, train = _data()
    items = np.union1d(np.union1d(recs["item"], test["item"]), train["item"])
    features = pd.DataFrame({"item": items[::-1], "f1": items[::-1] * 10.0,
                             "f2": np.ones(items.shape[0])})
    evaluate_recommendations(recs, test, train=train, metrics=["ild"], item_features=features)
    matrix = fake_beyond["ild"]
    catalog = np.sort(train["item"].unique())
    others = np.sort(np.setdiff1d(items, catalog))
    ids = np.concatenate([catalog, others])
    assert matrix[:, 0].tolist() == (ids * 10.0).tolist()


def test_a_catalog_sets_the_coverage_denominator(fake_beyond):
    recs, test, train = _data()
    ev = evaluate_recommendations(recs, test, train=train, k=5,
                                  metrics=["catalog_coverage"], catalog=range(100))
    assert fake_beyond["catalog_coverage"][1] == 100
    assert isinstance(ev, RecommenderEvaluation) and ev.n_queries == 35


def test_a_baseline_frame_becomes_the_lists_serendipity_expects(fake_beyond):
    recs, test, train = _data(seed=11)
    baseline = recs.assign(score=-recs["score"])
    evaluate_recommendations(baseline, test, train=train, k=4, metrics=["arp"])
    want = fake_beyond["arp"][0]
    evaluate_recommendations(recs, test, train=train, k=4, metrics=["serendipity"],
                             metric_options={"serendipity": {"expected": baseline}})
    np.testing.assert_array_equal(fake_beyond["expected"], want)
    with pytest.raises(ValueError, match=r"metric_options names \['novelty'\]"):
        evaluate_recommendations(recs, test, train=train, metrics=["serendipity"],
                                 metric_options={"novelty": {}})


def _brute_lists(recs, train, k):
    """{user: [item, ...]}: each user's list as the loop of _brute makes it."""
    seen = train.groupby("user")["item"].apply(set).to_dict()
    out = {}
    for user, rows in recs.groupby("user"):
        ranked = sorted(zip(rows["item"], rows["score"], strict=True),
                        key=lambda pair: (-pair[1], pair[0]))
        out[user] = [i for i, _ in ranked if i not in seen.get(user, ())][:k]
    return out


def test_list_metrics_of_recsys_beyond_equal_a_loop_over_the_lists():
    """The merged recsys._beyond on the lists evaluate_recommendations makes:
    coverage, Gini, entropy and ARP written out in plain Python (the issue's
    definitions) on the evaluated users' lists."""
    recs, test, train = _data(seed=14)
    ev = evaluate_recommendations(recs, test, train=train, k=5,
                                  metrics=["catalog_coverage", "gini", "entropy", "arp"])
    lists = _brute_lists(recs, train, 5)
    evaluated = ev.qids.tolist()
    listed = [i for u in evaluated for i in lists.get(u, [])]
    catalog = sorted(set(train["item"]))
    assert ev.system["catalog_coverage@5"] == pytest.approx(
        len(set(listed) & set(catalog)) / len(catalog), rel=1e-12)
    counts = sorted(listed.count(i) for i in catalog)
    n = len(counts)
    gini = sum((2 * (r + 1) - n - 1) * c for r, c in enumerate(counts)) / (n * sum(counts))
    assert ev.system["gini@5"] == pytest.approx(gini, rel=1e-12)
    shares = [listed.count(i) / len(listed) for i in set(listed)]
    assert ev.system["entropy@5"] == pytest.approx(-sum(p * math.log2(p) for p in shares),
                                                   rel=1e-12)
    interactions = train["item"].value_counts().to_dict()
    for row, user in enumerate(evaluated):
        mine = lists.get(user, [])
        want = np.mean([interactions.get(i, 0) for i in mine]) if mine else np.nan
        assert ev.per_query["arp@5"][row] == pytest.approx(want, rel=1e-12, nan_ok=True)
