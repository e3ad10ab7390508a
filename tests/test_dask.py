"""Chunked and Dask evaluation give exactly the in-memory numbers; so do distributed searches."""

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dask import distributed

from sklearn_rank.metrics import evaluate, evaluate_chunks

# Every metric, with options that make per-query values depend on the whole
# query (ties, cut-offs, empty policies, weights, the geometric mean of gmap).
METRICS = ["ndcg@10", "ndcg(gain='linear', discount='classic')@5", "dcg@3", "cg@3", "p@5",
           "recall@5", "f1@5", "hit_rate@3", "r_precision", "map", "map@5", "gmap", "mrr@5",
           "err@10", "rank_eff", "bpref", "ndcg(empty='skip')@5", "map(empty='one')"]


def _rows(seed, n_queries=60, qid_kind="int", weights=False):
    """Rows grouped by query (queries in a random order), with ties and empty queries."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, n_queries)
    order = rng.permutation(n_queries)
    qid = np.repeat(order * 7 + 3, sizes)
    if qid_kind == "str":
        qid = np.array([f"q{q}" for q in qid])
    n = qid.shape[0]
    y = np.where(rng.random(n) < 0.6, 0, rng.integers(1, 5, n))
    y[np.isin(qid, qid[rng.integers(0, n, 5)])] = 0  # some queries without relevant rows
    score = np.round(rng.normal(size=n), 1)  # many ties
    w = np.repeat(rng.uniform(0.5, 2.0, n_queries), sizes) if weights else None
    return y, score, qid, w


def _cuts(rng, n, n_chunks):
    return np.unique(np.concatenate(([0, n], rng.integers(0, n, n_chunks))))


def _assert_same(got, want):
    assert got == want
    for key in want.mean:  # == is exact; say where it is not
        assert got.mean[key] == want.mean[key] or np.isnan(want.mean[key]), key


@pytest.mark.parametrize("seed", range(6))
def test_chunks_equal_in_memory(seed):
    rng = np.random.default_rng(100 + seed)
    y, s, q, w = _rows(seed, qid_kind="str" if seed % 2 else "int", weights=seed % 3 == 0)
    want = evaluate(y, s, qid=q, metrics=METRICS, sample_weight=w)
    # Random cut points: chunks of one row, chunks inside a query, queries
    # straddling several chunks, empty chunks.
    cuts = _cuts(rng, y.shape[0], 25)
    cuts = np.sort(np.concatenate((cuts, cuts[:3])))
    chunks = [(y[a:b], s[a:b], q[a:b]) + (() if w is None else (w[a:b],))
              for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    got = evaluate_chunks(iter(chunks), metrics=METRICS)
    _assert_same(got, want)
    assert got.weights is None if w is None else np.array_equal(got.weights, want.weights)


def test_chunks_of_tables_and_options():
    y, s, q, w = _rows(7, weights=True)
    frame = pd.DataFrame({"rel": y, "pred": s, "query": q, "w": w})
    want = evaluate(y, s, qid=q, metrics=["ndcg@5", "map"], sample_weight=w, ties="stable",
                    gain="linear")
    names = dict(label="rel", score="pred", qid="query", weight="w")
    frames = (frame.iloc[i:i + 97] for i in range(0, len(frame), 97))
    _assert_same(evaluate_chunks(frames, metrics=["ndcg@5", "map"], ties="stable",
                                 gain="linear", **names), want)
    dicts = ({c: frame[c].to_numpy()[i:i + 50] for c in frame} for i in range(0, len(frame), 50))
    _assert_same(evaluate_chunks(dicts, metrics=["ndcg@5", "map"], ties="stable",
                                 gain="linear", **names), want)


@pytest.mark.parametrize("qid_kind", ["int", "str"])
def test_chunks_from_parquet(tmp_path, qid_kind):
    y, s, q, _ = _rows(11, n_queries=120, qid_kind=qid_kind)
    # Sorted by qid, as a parquet file meant for streaming would be.
    order = np.argsort(q, kind="stable")
    y, s, q = y[order], s[order], q[order]
    path = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"qid": q, "label": y, "score": s}), path, row_group_size=300)
    parquet = pq.ParquetFile(path)
    assert parquet.num_row_groups > 3
    want = evaluate(y, s, qid=q, metrics=METRICS)
    # Row groups cut through queries; batches are smaller than row groups.
    groups = (parquet.read_row_group(i) for i in range(parquet.num_row_groups))
    _assert_same(evaluate_chunks(groups, metrics=METRICS), want)
    batches = pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=128)
    _assert_same(evaluate_chunks(batches, metrics=METRICS), want)


def test_chunk_errors():
    y, s, q, _ = _rows(3, n_queries=5)
    with pytest.raises(ValueError, match=rf"Query {q[0]} has rows in two places of the stream"):
        evaluate_chunks([(y, s, q), (y[:3], s[:3], q[:3])])
    with pytest.raises(ValueError, match=r"no column 'qid'; its columns are \['label', "
                       r"'score'\]. Name the qid column with qid=\.\.\."):
        evaluate_chunks([{"label": y, "score": s}])
    with pytest.raises(ValueError, match=r"no query ids"):
        evaluate_chunks([(y, s, None)])
    with pytest.raises(ValueError, match=r"There is no row to evaluate"):
        evaluate_chunks([])
    with pytest.raises(ValueError, match=r"sample_weight must be given for every chunk"):
        evaluate_chunks([(y[:1], s[:1], q[:1], np.ones(1)), (y[1:], s[1:], q[1:])])
    with pytest.raises(ValueError, match=r"got 2 items"):
        evaluate_chunks([(y, s)])
    with pytest.raises(ValueError, match=r"Unknown metric 'ndgc'.*'ndcg'"):
        evaluate_chunks([(y, s, q)], metrics=["ndgc@10"])
    with pytest.raises(ValueError, match=r"y_score.*NaN"):
        evaluate_chunks([(y, np.full(s.shape, np.nan), q)])


def test_chunks_are_consumed_lazily():
    """Chunks are read one at a time: a chunk is released before the next is read."""
    import gc
    import weakref

    y, s, q, _ = _rows(5)
    alive = []

    def stream():
        for i in range(0, y.shape[0], 40):
            chunk = (y[i:i + 40].copy(), s[i:i + 40].copy(), q[i:i + 40].copy())
            alive.append(weakref.ref(chunk[1]))
            yield chunk
            gc.collect()
            # Earlier chunks are gone (the last query's rows are copied out).
            assert sum(r() is not None for r in alive[:-1]) == 0

    _assert_same(evaluate_chunks(stream(), metrics=["ndcg@10"]), evaluate(y, s, qid=q))


# --- Dask -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="2GiB") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _frame(seed, qid_kind="int", weights=False):
    y, s, q, w = _rows(seed, n_queries=80, qid_kind=qid_kind, weights=weights)
    frame = pd.DataFrame({"qid": q, "label": y, "score": s, "doc": np.arange(y.shape[0])})
    if weights:
        frame["w"] = w
    # Rows in a random order: queries spread over every partition.
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.mark.parametrize("qid_kind", ["int", "str"])
def test_dask_evaluate_equals_in_memory(client, qid_kind):
    from sklearn_rank.dask import evaluate as dask_evaluate

    frame = _frame(21, qid_kind=qid_kind, weights=True)
    ddf = dd.from_pandas(frame, npartitions=5)
    # The default ties="average" does not depend on the order of rows, which
    # the shuffle on qid changes.
    want = evaluate(frame["label"], frame["score"], qid=frame["qid"], metrics=METRICS,
                    sample_weight=frame["w"])
    got = dask_evaluate(ddf, metrics=METRICS, weight="w")
    _assert_same(got, want)
    assert got.n_empty == want.n_empty and got.n_empty["ndcg@10"] > 0


def test_dask_evaluate_aligned_partitions(client):
    from sklearn_rank.dask import evaluate as dask_evaluate

    frame = _frame(22).sort_values(["qid", "doc"])
    want = evaluate(frame["label"], frame["score"], qid=frame["qid"], metrics=METRICS,
                    ties="stable")
    # Partitioned on a sorted qid index: every query in one partition.
    aligned = dd.from_pandas(frame.set_index("qid"), npartitions=4).reset_index()
    _assert_same(dask_evaluate(aligned, metrics=METRICS, aligned=True, ties="stable"), want)
    # Row-wise partitions cut queries in two: refused, not silently wrong.
    cut = dd.from_pandas(frame.reset_index(drop=True), npartitions=4, sort=False)
    with pytest.raises(ValueError, match=r"has rows in two places of the Dask DataFrame"):
        dask_evaluate(cut, metrics=METRICS, aligned=True)
    _assert_same(dask_evaluate(cut, metrics=METRICS), evaluate(
        frame["label"], frame["score"], qid=frame["qid"], metrics=METRICS))


def test_dask_evaluate_errors(client):
    from sklearn_rank.dask import evaluate as dask_evaluate

    ddf = dd.from_pandas(_frame(23), npartitions=2)
    with pytest.raises(ValueError, match=r"no column 'relevance'.*label=, score=, qid="):
        dask_evaluate(ddf, label="relevance")
    with pytest.raises(ValueError, match=r"Unknown metric 'ndgc'"):
        dask_evaluate(ddf, metrics=["ndgc@10"])
    with pytest.raises(ValueError, match=r"ndcg@10 breaks ties by row order.*aligned=True"):
        dask_evaluate(ddf, convention="lightgbm")


def test_distributed_grid_search_equals_local(client):
    import joblib
    import sklearn
    from lightgbm import LGBMRanker
    from sklearn.model_selection import GridSearchCV

    from sklearn_rank.datasets import make_ranking
    from sklearn_rank.estimators import QueryRanker
    from sklearn_rank.metrics import make_ranking_scorer
    from sklearn_rank.model_selection import QueryKFold

    X, y, qid = make_ranking(n_queries=60, n_features=6, n_informative=4, shuffle=True,
                             random_state=0)
    grid = {"estimator__num_leaves": [3, 7], "estimator__learning_rate": [0.05, 0.3]}
    scoring = {"ndcg@5": make_ranking_scorer("ndcg@5"), "map": make_ranking_scorer("map")}

    def search(n_jobs):
        model = QueryRanker(LGBMRanker(n_estimators=15, min_child_samples=3, n_jobs=1,
                                       verbose=-1))
        return GridSearchCV(model, grid, scoring=scoring, refit="ndcg@5",
                            cv=QueryKFold(3, shuffle=True, random_state=0),
                            n_jobs=n_jobs).fit(X, y, qid=qid)

    with sklearn.config_context(enable_metadata_routing=True):
        local = search(1)
        with distributed.get_task_stream(client) as tasks, joblib.parallel_backend("dask"):
            remote = search(-1)
        # Large data is scattered to the workers once rather than sent per task.
        with joblib.parallel_backend("dask", scatter=[X, y, qid]):
            scattered = search(-1)
    # The fits really ran on the cluster's workers, not in this process.
    workers = {task["worker"] for task in tasks.data}
    assert workers and workers <= set(client.scheduler_info()["workers"])
    for run in (remote, scattered):
        for key, value in local.cv_results_.items():
            if "time" in key:
                continue
            got = run.cv_results_[key]
            if not isinstance(value, np.ndarray) or value.dtype == object:
                assert list(got) == list(value), key
            else:
                np.testing.assert_array_equal(got, value, err_msg=key)
        assert run.best_params_ == local.best_params_
        np.testing.assert_array_equal(run.predict(X), local.predict(X))

