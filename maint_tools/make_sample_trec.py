"""Write the sample TREC collection that ``load_sample_trec`` returns.

Run from the repository's root: ``python maint_tools/make_sample_trec.py``.
The files are generated from a fixed seed with NumPy's PCG64 generator, whose
stream is stable across NumPy releases; ``tests/test_sample_trec.py`` checks
that the shipped files are byte for byte what this script writes.

The collection imitates a small ad hoc TREC task: 25 topics (401-425), a
document pool per topic with graded judgments (0 non-relevant, 1 relevant,
2 highly relevant), and three runs of 20 documents per topic. Each run ranks
the topic's candidate documents by their latent relevance seen through its own
noise: ``dense`` sees it most clearly, ``rm3`` (query expansion over ``bm25``)
shares most of ``bm25``'s noise and sees a little more. As in a real pool, the
qrels hold the top 10 documents of every run plus the relevant documents other
systems found, so every run retrieves some unjudged documents and misses some
relevant ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).resolve().parents[1] / "sklearn_rank" / "datasets" / "data" / "sample_trec"
SEED = 29
TOPICS = range(401, 426)
CANDIDATES = 100  # documents per topic that a run could retrieve
DEPTH = 20  # documents per topic in each run
POOL_DEPTH = 10  # top documents of each run that were judged
# Noise of each run, relative to the topic's difficulty: rm3 keeps 1.4 of bm25's 1.5
# lexical noise and adds its own 0.6; dense has noise 1.0 of its own.
RM3 = (1.4, 0.6)
DENSE = 1.0
EXTRA_JUDGED = 5  # non-relevant documents other systems brought into the pool


def _runs_and_qrels(rng: np.random.Generator):
    qrels, runs = [], {"bm25": [], "rm3": [], "dense": []}
    for topic in TOPICS:
        docs = rng.choice(1_000_000, CANDIDATES, replace=False)
        # Topics differ in how many relevant documents they have (3 to 30 or so).
        p_relevant = rng.uniform(0.02, 0.2)
        grades = rng.choice(3, CANDIDATES, p=[1 - p_relevant, 0.6 * p_relevant,
                                              0.4 * p_relevant])
        grades[rng.integers(CANDIDATES)] = max(grades.max(), 1)  # at least one relevant
        difficulty = rng.lognormal(0, 0.3)
        signal = grades + rng.normal(scale=0.5, size=CANDIDATES)
        lexical = rng.normal(scale=difficulty, size=CANDIDATES)
        scores = {
            "bm25": 9 + 2.0 * (signal + 1.5 * lexical),
            "rm3": 9 + 2.0 * (signal + RM3[0] * lexical
                              + rng.normal(scale=RM3[1] * difficulty, size=CANDIDATES)),
            "dense": 0.55 + 0.08 * (signal + rng.normal(scale=DENSE * difficulty,
                                                        size=CANDIDATES)),
        }
        judged = set(np.flatnonzero(grades > 0))
        judged |= set(rng.choice(np.flatnonzero(grades == 0), EXTRA_JUDGED, replace=False))
        for tag, score in scores.items():
            top = np.argsort(-score, kind="stable")[:DEPTH]
            judged |= set(top[:POOL_DEPTH])
            runs[tag] += [f"{topic} Q0 D{docs[i]:06d} {rank} {score[i]:.4f} {tag}\n"
                          for rank, i in enumerate(top, start=1)]
        qrels += [f"{topic} 0 D{docs[i]:06d} {grades[i]}\n"
                  for i in sorted(judged, key=lambda i: docs[i])]
    return qrels, runs


def write(folder: Path = FOLDER) -> list[Path]:
    """Write qrels.txt and one ``<tag>.run`` per run into ``folder``."""
    qrels, runs = _runs_and_qrels(np.random.default_rng(SEED))
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "qrels.txt"]
    written[0].write_text("".join(qrels), encoding="ascii", newline="\n")
    for tag, lines in runs.items():
        written.append(folder / f"{tag}.run")
        written[-1].write_text("".join(lines), encoding="ascii", newline="\n")
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER):
        print(path, sum(1 for _ in path.open()), "lines")
