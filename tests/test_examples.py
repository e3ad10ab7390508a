"""Every script in examples/ runs and prints what it promises."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.py"))
EXPECTED = {  # a line each script must print
    "dask_lightgbm.py": "per-query ndcg@10 of the best model",
    "early_stopping.py": "stopped at iteration",
    "lightgbm_grid_search.py": "best parameters:",
    "metrics_quickstart.py": "convention='lightgbm'",
    "pointwise_regressor.py": "LGBMRanker (lambdarank)",
    "position_bias.py": "IPW estimate of the gain from positions:",
    "qid_column_without_routing.py": "DataFrame 'qid' column:",
    "significance_tests.py": "mean difference +",
    "trec_evaluation.py": "map                   \tall\t",
    "xgboost_ranker.py": "best parameters:",
}


def test_every_example_is_checked():
    assert sorted(p.name for p in EXAMPLES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path):
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert EXPECTED[path.name] in proc.stdout
