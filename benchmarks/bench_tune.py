"""Benchmark ``sklearn-rank tune`` (its defaults) against the same job in a serial loop.

What is measured
----------------
Two whole processes, each timed from its start to its exit with
``time.perf_counter`` around ``subprocess.run`` (interpreter start-up and
imports included on both sides):

* ``tune``: ``python -m sklearn_rank tune`` with its defaults: 300 generated
  queries (``make_ranking(n_queries=300, random_state=0)``), 20% of them held
  out, ``GridSearchCV`` over 8 candidates x 5 query-keeping folds = 40 fits of
  ``LGBMRanker(n_estimators=100, n_jobs=1)`` run one per usable core at a
  time, each fold scored by three NDCG@10 variants, the best candidate refit
  on the training queries, a model with LightGBM's default parameters trained
  beside it, both evaluated on the held-out queries and compared (paired
  randomization test, bootstrap interval).
* ``loop``: this script with ``--serial-loop``: the same job written as a
  plain serial Python loop, one thing after another on one core: the same
  data, held-out split and folds (the same seeds), then for each of the 8
  candidates and each of the 5 folds ``lightgbm.LGBMRanker(n_estimators=100,
  n_jobs=1, random_state=0, verbose=-1, **candidate).fit(X, y, group=sizes)``,
  one ``predict`` of the fold's held-out rows and one ``evaluate`` of the three
  metrics; then the best candidate (highest mean NDCG@10, the first on ties,
  as GridSearchCV) refit on the training queries, the default-parameter model,
  their held-out evaluations and the same comparison. Only the printing of
  the command's tables is left out (microseconds).

So both sides do the same 42 LightGBM fits (40 + refit + default model) and the
same held-out evaluation: the ratio is what running the fits at once, and
the command's own overheads (GridSearchCV, ``QueryRanker``, the scorer),
change. The loop prints its numbers and the script checks that they are the
command's: every candidate's cross-validated mean of each metric, the best
parameters and the held-out means (to the 4 decimals the command prints).

Timing: one untimed warm-up run of each (file caches), then ``--runs`` rounds
(default 3), each running ``tune`` then ``loop``. Reported: every run's wall
and CPU time (user + system of the process and its children) and the load
average before it; the best and the median of each side; the ratio of the
bests and of the medians. PASS when the ratio of the bests is <= 0.65 (issue
16, target 4). The machine may be shared: on a busy machine the fits at once
wait for cores, the CPU times tell how much work each side did, and the load
average is printed next to every run.

Usage (from the repository root)::

    python benchmarks/bench_tune.py              # 3 rounds
    python benchmarks/bench_tune.py --runs 5 --json tune.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Target, dump_json, environment, load_average, print_targets  # noqa: E402

TARGET = 0.65
N_QUERIES = 300
N_ESTIMATORS = 100
FOLDS = 5
K = 10
TEST_SIZE = 0.2
SEED = 0


# ---------------------------------------------------------------- the serial loop

def serial_loop() -> dict:
    """The job of ``sklearn-rank tune`` with its defaults, as a plain serial loop."""
    import numpy as np
    from lightgbm import LGBMRanker
    from sklearn.model_selection import ParameterGrid

    from sklearn_rank.cli._tune import GRID, METRICS
    from sklearn_rank.datasets import make_ranking
    from sklearn_rank.metrics import evaluate
    from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit
    from sklearn_rank.stats import compare

    names = [template.format(k=K) for template in METRICS.values()]
    refit = names[0]
    X, y, qid = make_ranking(n_queries=N_QUERIES, random_state=SEED)
    train, test = next(QueryShuffleSplit(n_splits=1, test_size=TEST_SIZE,
                                         random_state=SEED).split(qid=qid))
    Xt, yt, qt = X[train], y[train], qid[train]
    folds = list(QueryKFold(FOLDS, shuffle=True, random_state=SEED).split(qid=qt))

    def fit(rows_X, rows_y, rows_qid, **params):
        order = np.argsort(rows_qid, kind="stable")  # queries contiguous, as LightGBM needs
        _, sizes = np.unique(rows_qid[order], return_counts=True)
        model = LGBMRanker(n_estimators=N_ESTIMATORS, n_jobs=1, random_state=SEED,
                           verbose=-1, **params)
        return model.fit(rows_X[order], rows_y[order], group=sizes)

    candidates = list(ParameterGrid(GRID))
    means = []
    for params in candidates:
        scores = {name: [] for name in names}
        for fit_rows, score_rows in folds:
            model = fit(Xt[fit_rows], yt[fit_rows], qt[fit_rows],
                        **{k.removeprefix("estimator__"): v for k, v in params.items()})
            ev = evaluate(yt[score_rows], model.predict(Xt[score_rows]),
                          qid=qt[score_rows], metrics=names)
            for name in names:
                scores[name].append(ev.mean[name])
        means.append({name: float(np.mean(v)) for name, v in scores.items()})
    best = int(np.argmax([m[refit] for m in means]))  # the first on ties
    best_params = {k.removeprefix("estimator__"): v for k, v in candidates[best].items()}
    tuned = fit(Xt, yt, qt, **best_params)
    default = fit(Xt, yt, qt)
    ev = evaluate(y[test], tuned.predict(X[test]), qid=qid[test], metrics=names)
    default_ev = evaluate(y[test], default.predict(X[test]), qid=qid[test], metrics=names)
    compare({"default parameters": default_ev, "the best candidate": ev}, metrics=[refit],
            correction=None, random_state=SEED)
    return {"names": names, "params": [{k.removeprefix("estimator__"): v for k, v in c.items()}
                                       for c in candidates],
            "means": means, "best": best_params,
            "held_out": {name: float(ev.mean[name]) for name in names}}


# ---------------------------------------------------------------- checking the numbers

def _tune_numbers(out: str, names: list[str], params: list[dict]) -> dict:
    """The candidates' means, the best parameters and the held-out means printed by
    ``sklearn-rank tune``."""
    keys = list(params[0])
    means = {}
    for line in out.splitlines():
        cells = re.findall(r"\S+(?: ± \S+)?", line.strip())
        if len(cells) == 1 + len(keys) + len(names) and cells[0].isdigit():
            cand = tuple(cells[1:1 + len(keys)])
            means[cand] = [float(c.split(" ± ")[0]) for c in cells[1 + len(keys):]]
    best = re.search(r"^best parameters by \S+: (.*)$", out, re.M).group(1)
    held_out = {}
    for name in names:
        row = re.search(rf"^  {re.escape(name)}\s+(-?[\d.]+)", out, re.M)
        held_out[name] = float(row.group(1))
    return {"means": means, "best": best, "held_out": held_out}


def check_same_job(tune_out: str, loop: dict) -> list[str]:
    """Where the loop's numbers differ from the command's (empty: the same job)."""
    printed = _tune_numbers(tune_out, loop["names"], loop["params"])
    problems = []
    for params, means in zip(loop["params"], loop["means"], strict=True):
        cand = tuple(str(v) for v in params.values())
        got = printed["means"].get(cand)
        want = [round(means[name], 4) for name in loop["names"]]
        if got is None or any(abs(g - w) > 5.1e-5 for g, w in zip(got, want, strict=True)):
            problems.append(f"candidate {params}: tune printed {got}, the loop {want}")
    if printed["best"] != str(loop["best"]):
        problems.append(f"best parameters: tune {printed['best']}, the loop {loop['best']}")
    for name, value in loop["held_out"].items():
        if abs(printed["held_out"][name] - round(value, 4)) > 5.1e-5:
            problems.append(f"held-out {name}: tune {printed['held_out'][name]}, "
                            f"the loop {value:.4f}")
    return problems


# ---------------------------------------------------------------- timing

def timed(command: list[str]) -> tuple[float, float, str]:
    """``(wall seconds, CPU seconds, stdout)`` of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--serial-loop", action="store_true",
                        help="(internal) run the serial loop and print its numbers as JSON")
    args = parser.parse_args(argv)
    if args.serial_loop:
        print(json.dumps(serial_loop()))
        return 0

    import joblib

    commands = {"tune": [sys.executable, "-m", "sklearn_rank", "tune"],
                "loop": [sys.executable, os.path.abspath(__file__), "--serial-loop"]}
    info = environment("scikit-learn", "lightgbm", "numpy", "joblib")
    info["usable cores"] = joblib.cpu_count()
    print("environment:", ", ".join(f"{k} {v}" for k, v in info.items()))
    print("warm-up: one untimed run of each")
    _, _, tune_out = timed(commands["tune"])
    _, _, loop_out = timed(commands["loop"])
    problems = check_same_job(tune_out, json.loads(loop_out))

    runs = {name: [] for name in commands}
    print(f"\n{'run':>3}  {'side':<4}  {'wall s':>7}  {'CPU s':>7}  load before")
    for i in range(args.runs):
        for name, command in commands.items():
            load = load_average()
            wall, cpu, _ = timed(command)
            runs[name].append({"wall": wall, "cpu": cpu, "load": load})
            print(f"{i + 1:>3}  {name:<4}  {wall:>7.2f}  {cpu:>7.2f}  {load}", flush=True)

    best = {n: min(r["wall"] for r in rs) for n, rs in runs.items()}
    median = {n: statistics.median(r["wall"] for r in rs) for n, rs in runs.items()}
    ratio, median_ratio = best["tune"] / best["loop"], median["tune"] / median["loop"]
    print(f"\nbest:   tune {best['tune']:.2f} s, loop {best['loop']:.2f} s, "
          f"ratio {ratio:.3f}")
    print(f"median: tune {median['tune']:.2f} s, loop {median['loop']:.2f} s, "
          f"ratio {median_ratio:.3f}")
    targets = [
        Target("the loop did the command's job (same means, best parameters, held-out)",
               not problems, "; ".join(problems) or "all equal to 4 decimals"),
        Target(f"sklearn-rank tune <= {TARGET}x the serial loop (best of {args.runs})",
               ratio <= TARGET, f"{ratio:.3f} (median of runs {median_ratio:.3f})"),
    ]
    print_targets(targets)
    if args.json:
        dump_json(args.json, {"environment": info, "runs": runs, "best": best,
                              "median": median, "ratio": ratio,
                              "median_ratio": median_ratio, "problems": problems})
    return 0


if __name__ == "__main__":
    sys.exit(main())
