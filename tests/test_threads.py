"""The engine's threads (issue 16): they never change a number, never outlive
the call that started them, and follow the user's limits.

The blocks of an evaluation are computed on up to ``SKLEARN_RANK_NUM_THREADS``
threads (see ``sklearn_rank.metrics._engine.threads``). These tests lower the size a
thread needs (``MIN_CELLS``) so that small inputs use several threads, and
compare every value bit for bit with a run on one thread. Thread tests are run
many times before being trusted (``pytest --count`` is not installed: the
repeats are in the tests).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate, ndcg_score
from sklearn_rank.metrics._engine import threads as _threads
from sklearn_rank.metrics._engine.threads import ENV, run_blocks, thread_limit

METRICS = ("ndcg@10", "ndcg", "dcg@5", "map", "map@10", "mrr", "err@10", "p@5", "recall@10",
           "r_precision", "bpref", "rank_eff", "gmap", "hit_rate@3")


def _data(seed: int, n_queries: int = 300, shuffled: bool = True, str_ids: bool = True):
    """Queries of 1..120 documents, labels 0..4, scores with many ties."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 121, n_queries)
    qid = np.repeat(np.arange(n_queries), lengths)
    n = qid.shape[0]
    y = rng.choice(5, size=n, p=(0.5, 0.25, 0.15, 0.07, 0.03)).astype(float)
    s = rng.integers(0, 8, n).astype(float)  # ties in every query
    w = rng.random(n)
    if shuffled:
        perm = rng.permutation(n)
        y, s, qid, w = y[perm], s[perm], qid[perm], w[perm]
    if str_ids:
        qid = np.char.mod("q%05d", qid)
    return y, s, qid, w


@pytest.fixture
def small_blocks(monkeypatch):
    """Threads for inputs of a few thousand cells (the default needs 2**18 each)."""
    monkeypatch.setattr(_threads, "MIN_CELLS", 256)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)


def _run(monkeypatch, threads: int, y, s, qid, w, ties: str):
    monkeypatch.setenv(ENV, str(threads))
    return evaluate(y, s, qid=qid, metrics=METRICS, sample_weight=w, ties=ties)


@pytest.mark.parametrize("ties", ["average", "stable", "pessimistic"])
def test_threads_never_change_a_number(small_blocks, monkeypatch, ties):
    for seed in range(20):  # 20 repeats: thread scheduling differs run to run
        y, s, qid, w = _data(seed, shuffled=seed % 2 == 0, str_ids=seed % 3 != 0)
        one = _run(monkeypatch, 1, y, s, qid, w, ties)
        for threads in (2, 3, 4):
            many = _run(monkeypatch, threads, y, s, qid, w, ties)
            for key in METRICS:
                np.testing.assert_array_equal(many.per_query[key], one.per_query[key])
                assert many.mean[key] == one.mean[key]  # bit for bit
            np.testing.assert_array_equal(many.qids, one.qids)


def test_several_threads_really_run(small_blocks, monkeypatch):
    """The blocks of one call are spread over threads (so the test above
    compares a threaded run, not two serial ones)."""
    seen = set()
    real = _threads.run_blocks

    def spy(work, blocks, threads):
        def recorded(block):
            seen.add(threading.get_ident())
            work(block)

        return real(recorded, blocks, threads)

    import sklearn_rank.metrics._plan as plan

    monkeypatch.setattr(plan, "run_blocks", spy)
    monkeypatch.setenv(ENV, "2")
    y, s, qid, _ = _data(0, n_queries=600)
    for _ in range(20):
        evaluate(y, s, qid=qid, metrics=METRICS)
        if len(seen) > 1:
            break
    assert len(seen) == 2


def test_no_thread_outlives_the_call(small_blocks, monkeypatch):
    monkeypatch.setenv(ENV, "4")
    before = set(threading.enumerate())
    y, s, qid, w = _data(1)
    for _ in range(20):
        evaluate(y, s, qid=qid, metrics=METRICS, sample_weight=w)
        assert set(threading.enumerate()) == before


def test_an_error_in_a_block_is_the_first_blocks_and_joins_every_thread(monkeypatch):
    """The error raised is the one of the first failing block in block order,
    whatever the thread that met it, and no thread is left running."""
    before = set(threading.enumerate())
    for _ in range(20):
        done = []

        def work(i, done=done):
            if i in (3, 7):
                raise ValueError(f"block {i}")
            done.append(i)

        with pytest.raises(ValueError, match="block 3"):
            run_blocks(work, list(range(12)), 4)
        assert set(threading.enumerate()) == before
        assert set(done) >= {0, 1, 2}  # every block before the first failure ran


def test_run_blocks_calls_every_block_once():
    for threads in (1, 2, 3, 8):
        seen = []
        lock = threading.Lock()

        def work(i, seen=seen, lock=lock):
            with lock:
                seen.append(i)

        run_blocks(work, list(range(50)), threads)
        assert sorted(seen) == list(range(50))


def test_thread_limit_follows_the_environment(monkeypatch):
    for name in (ENV, "OMP_NUM_THREADS", "OMP_THREAD_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    default = thread_limit()
    assert 1 <= default <= _threads.MAX_THREADS
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert thread_limit() == 1  # joblib's workers, a user's cap
    monkeypatch.setenv("OMP_NUM_THREADS", "3,2")  # nested levels: the outer one
    assert thread_limit() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "junk")  # OpenMP's own variable: ignored
    assert thread_limit() == default
    monkeypatch.setenv(ENV, "7")  # ours comes first
    assert thread_limit() == 7
    monkeypatch.setenv(ENV, "0")
    with pytest.raises(ValueError, match=f"{ENV}='0' is not a positive integer"):
        thread_limit()


def test_a_call_from_another_thread_runs_on_it_alone(monkeypatch):
    monkeypatch.setenv(ENV, "4")
    out = []
    t = threading.Thread(target=lambda: out.append(thread_limit()))
    t.start()
    t.join()
    assert out == [1]


def test_small_inputs_start_no_thread(monkeypatch):
    """Below MIN_CELLS cells per thread everything runs on the calling thread."""
    monkeypatch.setenv(ENV, "4")
    started = []
    real_start = threading.Thread.start

    def start(self):
        started.append(self.name)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    y, s, qid, _ = _data(2)  # ~18k rows: far below 2 * 2**18 cells
    ndcg_score(y, s, qid=qid, k=10)
    assert started == []
    assert _threads.n_threads(_threads.MIN_CELLS * 2 - 1) == 1
    assert _threads.n_threads(_threads.MIN_CELLS * 100) == 4
