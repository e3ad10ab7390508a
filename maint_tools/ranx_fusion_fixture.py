"""Write tests/data/ranx_fusion.json: ranx's ``fuse`` on three small runs, for every
normalisation and method that :func:`sklearn_rank.fusion.fuse` shares with it.

ranx needs numba, which the test environment does not install; its outputs are pinned
here and tests/test_fusion.py compares ``fuse`` with them (and with ranx itself when it
is importable). Run with a Python that has ranx 0.3.x::

    python maint_tools/ranx_fusion_fixture.py tests/data/ranx_fusion.json
"""

import json
import sys
from importlib.metadata import version

import numpy as np
from ranx import Run, fuse

NORMS = [None, "min-max", "max", "sum", "zmuv", "rank"]
METHODS = ["sum", "mnz", "max", "min", "med", "anz", "rrf", "wsum", "wmnz"]
WEIGHTS = [0.5, 0.2, 0.3]


def runs() -> dict:
    """Three runs of five queries, over partly shared documents; tie-free, positive."""
    rng = np.random.default_rng(28)
    out = {}
    for name, scale in [("bm25", 20.0), ("dense", 1.0), ("splade", 40.0)]:
        out[name] = {}
        for q in range(5):
            docs = rng.choice(15, size=int(rng.integers(3, 10)), replace=False)
            scores = np.round(rng.uniform(0.01, 1.0, len(docs)) * scale, 6)
            out[name][f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        assert all(len(set(d.values())) == len(d) for d in out[name].values())
    return out


def main(path: str) -> None:
    inputs = runs()
    cases = []
    for norm in NORMS:
        for method in METHODS:
            params = {"weights": WEIGHTS} if method in ("wsum", "wmnz") else {}
            for k in ([60, 10] if method == "rrf" else [None]):
                if k is not None:
                    params = {"k": k}
                fused = fuse([Run(run, name=name) for name, run in inputs.items()],
                             norm=norm, method=method, params=params)
                cases.append({"norm": norm, "method": method, "params": params,
                              "fused": {q: dict(d) for q, d in fused.to_dict().items()}})
    with open(path, "w") as f:
        json.dump({"ranx": version("ranx"), "runs": inputs,
                   "cases": cases}, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
