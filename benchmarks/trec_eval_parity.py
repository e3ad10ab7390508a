"""Compare ``sklearn-rank`` with the trec_eval binary's output, byte for byte.

Usage::

    python benchmarks/trec_eval_parity.py --trec-eval /path/to/trec_eval \\
        [--test-dir /path/to/trec_eval/test] [--out DIR] [--filter TEXT] [--jobs N]

Give the path of a trec_eval 10.0 binary (built from its source with ``make``;
this script neither builds it nor contains any of its code) and, optionally,
trec_eval's ``test/`` directory. For every comparison the script runs

* the binary: ``trec_eval FLAGS QRELS RUN``;
* ``python -m sklearn_rank evaluate FLAGS QRELS RUN --format trec``;
* ``python -m sklearn_rank trec_eval FLAGS QRELS RUN`` as well, if the package
  has that command (``sklearn-rank --help`` lists it);

and compares standard output byte for byte. When the binary fails (exit
status not 0, e.g. a judged query missing from the run without ``-c``) the
comparison passes if ours fails too, with a message that names what trec_eval's
names (the query id); standard output is not compared then (trec_eval may
leave the ``-q`` lines it printed before the error).

File pairs: trec_eval's test files (``qrels.test`` with ``results.test``, the
commented, 302, rel_level and truncated variants) when ``--test-dir`` is given,
and collections the script writes with a fixed seed: graded levels 0-4,
negative levels, unjudged retrieved documents, ties and float32-equal scores,
documents beyond rank 1000, queries without relevant documents, queries that
only the run or only the qrels have (``gen_missing``: a judged query the run
misses) and, in ``gen_format``, shuffled lines, bogus ranks, tabs, text after
the sixth field, ``#`` comments and blank lines.

Comparisons: the ``official`` set (no ``-m``) and ``-m all_trec`` with several
flag sets (``-q``, ``-c``, ``-l 2``, ``-l -1``, ``-J``, ``-M 10`` and combinations) on
every pair; on ``test``, ``gen`` and ``gen_missing`` also every ``all_trec``
family alone with ``-q`` (``-q -c`` for ``gen_missing``) and measure
parameters (``P.5,10``, ``ndcg.1=3,2=9``, ``ndcg_cut.10,20,23.4``, ...).

Output: one ``PASS``/``FAIL`` line per comparison (a failure shows the first
line that differs), then a summary; exit status 1 if any comparison fails.
Files are written only under ``--out`` (the collections, and both outputs of
every failure) or, without it, a temporary directory removed at the end.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ALL_TREC = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
    "iprec_at_recall P relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg "
    "ndcg relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P "
    "set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
).split()

FLAG_SETS = [
    [], ["-q"], ["-c"], ["-q", "-c"], ["-l", "2"], ["-J"], ["-M", "10"],
    ["-q", "-c", "-l", "2"], ["-q", "-J", "-M", "10"], ["-q", "-c", "-J"],
    ["-q", "-c", "-M", "10", "-l", "2"],
    # issue 14's other flags, and trec_eval's getopt grammar (grouped flags,
    # attached values, options after the files are permuted by both parsers)
    ["-n"], ["-q", "-n"], ["-q", "-M", "0"], ["-q", "-c", "-J", "-M", "1"], ["-l", "0"],
    ["-q", "-l", "3"], ["-qc", "-l2"], ["-qJ", "-M5"], ["-N", "1000"],
    # negative levels: unjudged documents (codes -1, -2) counted by rank
    ["-q", "-c", "-l", "-1"], ["-c", "-l", "-2"], ["-q", "-c", "-J", "-l", "-1"],
]

PARAMS = [
    ["-m", "P"], ["-m", "P.5,10"], ["-m", "P.5", "-m", "P.10"], ["-m", "P.5", "-m", "map"],
    ["-m", "ndcg.1=3,2=9"], ["-m", "ndcg.1=2.5,2=2.2"], ["-m", "ndcg_cut.10,20,23.4"],
    ["-m", "utility.2,-1,-0.5,0.01", "-N", "5000"], ["-m", "rbp.p=0.8"],
    ["-m", "rbp.p=0.5,1=3"], ["-m", "rbp_resid.p=0.95"], ["-m", "relstring.20"],
    ["-m", "Rprec_mult.0.5,1.5,3"], ["-m", "iprec_at_recall.0.25,0.5,.75"],
    ["-m", "11pt_avg.0.2,0.5,0.8"], ["-m", "relative_P.3,7"], ["-m", "success.3"],
    ["-m", "set_F.0.5"], ["-m", "unj.1,3"], ["-m", "map_cut.3,7"], ["-m", "recall.2,50"],
    ["-m", "G.1=2,2=5"], ["-m", "ndcg_rel.0=1,3=2"], ["-m", "Rndcg.2=5"],
    # first parameters win; sets; measures outside all_trec; odd parameters
    ["-mP.5"], ["-m", "P", "-m", "P.7"], ["-m", "P.7", "-m", "official"], ["-m", "set"],
    ["-m", "dcg"], ["-m", "ideal_dcg.1=2"], ["-m", "relstring.-1"], ["-m", "relstring.3.9"],
    ["-m", "set_F.0.5,2"], ["-m", "set_F.2"], ["-m", "set_F.0"], ["-m", "ndcg.a=3"],
    ["-m", "rbp.0=2,1=3,2=4"], ["-m", "rbp.0=-1"],
    ["-m", "ndcg.2=2.2,1=2.5"], ["-m", "ndcg.-1=1"], ["-m", "G.1=0.5,2=0.7"],
    ["-m", "dcg.1=3,2=9"], ["-m", "dcg.2=2.2,1=2.5"], ["-m", "dcg.-1=1", "-m", "dcg.0=1,1=-1"],
    ["-m", "Rndcg.0=1,1=0"], ["-m", "ndcg_rel.1=-1"], ["-m", "iprec_at_recall.0.333,0.334"],
    ["-m", "11pt_avg.0.9,0.1"], ["-m", "unj.1000,1"], ["-m", "success.1", "-m", "utility"],
    # errors: trec_eval refuses these, so must we (naming what it names)
    ["-m", "P.0"], ["-m", "P.5,5.5"], ["-m", "ndcg.1"], ["-m", "bogus"], ["-m", "P."],
    ["-m", "utility.1,2"], ["-m", "Rprec_mult.1,1.0"],
    # trec_eval's own parameter test (its Makefile's quicktest)
    "-miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
    "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
    "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20".split(),
]

TEST_PAIRS = {  # name: (qrels, run) in trec_eval's test/ directory
    "test": ("qrels.test", "results.test"),
    "test_with_comments": ("qrels.test.with-comments", "results.test"),
    "test_comment": ("qrels.comment.test", "results.comment.test"),
    "test_302": ("qrels-302.test", "results-302.test"),
    "test_rel_level": ("qrels.rel_level", "results.test"),
    "test_trunc": ("qrels.test", "results.trunc"),
}
DETAILED = ("test", "gen", "gen_missing")  # pairs that also get every family and PARAMS


# ----------------------------------------------------------------- collections
def _score(rng: random.Random) -> str:
    """A score with ties, written as a run file might write it."""
    value = round(rng.uniform(-2, 10), 1)
    return rng.choice([f"{value}", f"{value:.4f}", f"{value:e}", f"{value:.1f}"])


def _queries(rng: random.Random) -> list[tuple[str, dict[str, int], list[tuple[str, str]]]]:
    """(qid, judgments {docno: level}, run [(docno, score)]) for every query."""
    queries = []
    for qid in ("1", "2", "9", "10", "100", "B", "a"):  # strcmp order is not numeric
        docs = [f"d{n}" for n in rng.sample(range(1, 400), 120)]
        judged = {d: rng.choice([0, 0, 0, 0, 1, 1, 2, 2, 3, 4, -1, -2]) for d in docs[:50]}
        retrieved = rng.sample(docs[:50], 30) + docs[50:50 + rng.randint(5, 70)]
        queries.append((qid, judged, [(d, _score(rng)) for d in retrieved]))
    # ties: three scores for 30 documents, equal values written differently
    docs = [f"t{n}" for n in range(30)]
    judged = {d: rng.choice([0, 1, 2, -1]) for d in docs[::2]}
    queries.append(("ties", judged, [(d, rng.choice(["1", "1.0", "1e0", "0.5", "5e-1", "0"]))
                                     for d in docs]))
    # float32-equal scores that differ as doubles: the larger one has the
    # smaller docno, so a float32 sort (ties by decreasing docno) differs
    run = [("f1", "0.10000000149011612"), ("f2", "0.1"), ("f3", "0.30000001192092896"),
           ("f4", "0.3"), ("f5", "-0.5"), ("f6", "1e-3"), ("f7", "0.001")]
    queries.append(("f32", {"f1": 1, "f2": 0, "f3": 0, "f4": 2, "f6": 1}, run))
    # deep: 1200 retrieved, relevant documents around rank 1000
    run = [(f"x{n:04d}", str(3000 - n)) for n in range(1200)]
    judged = {f"x{n:04d}": 1 for n in (4, 299, 998, 999, 1000, 1099, 1199)}
    judged.update({"x9990": 2, "x9991": 1, f"x{10:04d}": 0})
    queries.append(("deep", judged, run))
    queries.append(("norel", {f"n{n}": 0 for n in range(8)},
                    [(f"n{n}", str(n)) for n in range(0, 12, 2)]))
    queries.append(("negonly", {"g1": -1, "g2": -2, "g3": -1}, [("g1", "2"), ("g4", "1")]))
    queries.append(("unjudged", {"u1": 1, "u2": 3, "u3": 0},
                    [(f"v{n}", str(n)) for n in range(15)]))
    queries.append(("one", {"o1": 4}, [("o1", "7")]))
    queries.append(("runonly", {}, [("r1", "1"), ("r2", "2")]))  # not in the qrels
    return queries


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="ascii")
    return path


def write_collections(directory: Path, seed: int = 14) -> dict[str, tuple[Path, Path]]:
    """Write the generated (qrels, run) pairs into ``directory``."""
    rng = random.Random(seed)
    queries = _queries(rng)
    qrels = [f"{q} 0 {d} {level}" for q, judged, _ in queries for d, level in judged.items()]
    run = []
    for q, _, docs in queries:
        ranked = sorted(docs, key=lambda item: -float(item[1]))  # trec_eval ignores the rank
        run += [f"{q} Q0 {d} {rank} {s} genrun" for rank, (d, s) in enumerate(ranked, 1)]
    pairs = {"gen": (_write(directory / "gen.qrels", qrels), _write(directory / "gen.run", run))}
    missing = qrels + ["missing 0 m1 1", "missing 0 m2 0"]
    pairs["gen_missing"] = (_write(directory / "gen_missing.qrels", missing), pairs["gen"][1])
    shuffled = run[:]
    rng.shuffle(shuffled)
    formatted = []
    for i, line in enumerate(shuffled):
        q, _, d, _, s, tag = line.split()
        sep = rng.choice([" ", "\t", "  \t "])
        extra = rng.choice(["", "", " trailing text", "\tmore junk at end"])
        if i % 97 == 0:
            formatted += ["# a comment line", ""]
        formatted.append(sep.join([q, "Q0", d, str(rng.randint(0, 9)), s, tag]) + extra)
    formatted[-1] = formatted[-1].replace("genrun", "lastrun")  # runid: the last line's
    pairs["gen_format"] = (_write(directory / "gen_format.qrels", ["# judged"] + qrels),
                           _write(directory / "gen_format.run", formatted))
    return pairs


# ----------------------------------------------------------------- comparisons
def cases(pairs: dict[str, tuple[Path, Path]]) -> list[tuple[str, str, list[str]]]:
    """(label, pair name, trec_eval flags) for every comparison."""
    out = []
    for name in pairs:
        for measures in ([], ["-m", "all_trec"]):
            for flags in FLAG_SETS:
                out.append((name, measures + flags))
        if name in DETAILED:
            q = ["-q", "-c"] if name == "gen_missing" else ["-q"]
            out += [(name, q + ["-m", family]) for family in ALL_TREC]
            out += [(name, q + params) for params in PARAMS]
    if "test_rel_level" in pairs:  # trec_eval's own -l test
        out.append(("test_rel_level", ["-m", "all_trec", "-m", "relstring.20", "-q", "-l", "2"]))
    return [(f"{name}: {' '.join(flags) or '(official)'}", name, flags) for name, flags in out]


def run(command: list[str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run(command, capture_output=True, cwd=ROOT, timeout=900)
    return done.returncode, done.stdout, done.stderr


def first_difference(expected: bytes, got: bytes) -> str:
    """Where two outputs first differ, as 'line N: expected ... got ...'."""
    want, have = expected.splitlines(keepends=True), got.splitlines(keepends=True)
    for n, (a, b) in enumerate(zip(want, have, strict=False), 1):
        if a != b:
            return f"line {n}: expected {a!r}, got {b!r}"
    n = min(len(want), len(have)) + 1
    if len(want) > len(have):
        return f"line {n}: expected {want[n - 1]!r}, got end of output"
    return f"line {n}: expected end of output, got {have[n - 1]!r}"


def compare(expected: tuple[int, bytes, bytes], got: tuple[int, bytes, bytes]) -> str | None:
    """None when ``got`` matches ``expected``, else what differs."""
    (rc_e, out_e, err_e), (rc_g, out_g, err_g) = expected, got
    last = (err_g.decode(errors="replace").strip().splitlines() or [""])[-1]
    if rc_e < 0:
        return f"trec_eval was killed by signal {-rc_e}"
    if rc_e != 0:  # ours must fail too, naming what trec_eval names ('qid', 'docno')
        reason = (err_e.decode(errors="replace").strip().splitlines() or [""])[0]
        named = reason.split("'")[1:2]
        if rc_g == 0:
            return f"trec_eval fails (exit {rc_e}: {reason}), ours exits 0"
        if named and named[0] not in err_g.decode(errors="replace"):
            return f"trec_eval fails ({reason}), ours fails otherwise: {last}"
        return None
    if rc_g != 0:
        return f"ours exits {rc_g}: {last}"
    return None if out_e == out_g else first_difference(out_e, out_g)


def has_trec_eval_command() -> bool:
    rc, out, _ = run([sys.executable, "-m", "sklearn_rank", "--help"])
    return rc == 0 and any(line.split()[:1] == [b"trec_eval"] for line in out.splitlines())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trec-eval", required=True, type=Path, metavar="PATH",
                        help="the trec_eval binary")
    parser.add_argument("--test-dir", type=Path, metavar="DIR",
                        help="trec_eval's test/ directory (its files are compared too)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="keep the collections and the outputs of failures here")
    parser.add_argument("--filter", default="", metavar="TEXT",
                        help="only the comparisons whose label contains TEXT")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="comparisons run at once (default 2)")
    args = parser.parse_args(argv)
    if not args.trec_eval.is_file():
        parser.error(f"--trec-eval {args.trec_eval}: no such file")
    # the commands run in the repository's root (so ``-m sklearn_rank`` is this checkout)
    trec_eval, test_dir, out = (p and p.resolve() for p in (args.trec_eval, args.test_dir,
                                                             args.out))
    with tempfile.TemporaryDirectory(prefix="trec_eval_parity_") as tmp:
        work = out or Path(tmp)
        (work / "collections").mkdir(parents=True, exist_ok=True)
        pairs = {}
        if test_dir:
            for name, (q, r) in TEST_PAIRS.items():
                if (test_dir / q).is_file() and (test_dir / r).is_file():
                    pairs[name] = (test_dir / q, test_dir / r)
        pairs.update(write_collections(work / "collections"))
        todo = [c for c in cases(pairs) if args.filter in c[0]]
        modes = ["evaluate"] + (["trec_eval"] if has_trec_eval_command() else [])
        print(f"{len(todo)} cases x modes {', '.join(modes)}; "
              f"trec_eval: {trec_eval}", flush=True)

        def one(case):
            label, name, flags = case
            qrels, run_file = map(str, pairs[name])
            expected = run([str(trec_eval), *flags, qrels, run_file])
            results = []
            for mode in modes:
                tail = ["--format", "trec"] if mode == "evaluate" else []
                got = run([sys.executable, "-m", "sklearn_rank", mode, *flags, qrels,
                           run_file, *tail])
                results.append((f"{mode} {label}", expected, got, compare(expected, got)))
            return results

        failed = total = 0
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for results in pool.map(one, todo):
                for label, expected, got, problem in results:
                    total += 1
                    print(f"PASS  {label}" if problem is None else f"FAIL  {label}: {problem}",
                          flush=True)
                    if problem is not None:
                        failed += 1
                        if out:
                            stem = out / "failures" / f"{total:04d}"
                            stem.parent.mkdir(exist_ok=True)
                            stem.with_suffix(".txt").write_text(label + "\n" + problem + "\n")
                            stem.with_suffix(".expected").write_bytes(expected[1] + expected[2])
                            stem.with_suffix(".got").write_bytes(got[1] + got[2])
        print(f"\n{total} comparisons: {total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
