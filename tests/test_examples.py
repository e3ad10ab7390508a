"""Every script in examples/ runs and prints what it promises: the score it computes."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.py"))
SCORE = r"[01]\.\d{4}"  # a score in [0, 1], printed with 4 or more decimals
EXPECTED = {  # a line each script must print: the score it computes (regular expressions)
    "custom_metric.py": rf"^satisfied@10 of the better ranker: {SCORE}",
    "dask_lightgbm.py": rf"^per-query ndcg@10 of the best model: median {SCORE}",
    "early_stopping.py": rf"^the refitted model stopped at iteration \d+ of 500, .* = {SCORE}",
    "lightgbm_grid_search.py": rf"^cross-validated NDCG@10: {SCORE}",
    "many_systems.py": r"^honestly significant difference \(ndcg@10, 95%\): \d\.\d{4}$",
    "metrics_quickstart.py": rf"^  convention='lightgbm'  {SCORE}",
    "pointwise_regressor.py": rf"^LGBMRanker \(lambdarank\) +NDCG@10 {SCORE} ± ",
    "position_bias.py": r"^IPW estimate of the gain from positions: [+-]\d\.\d{4} ± ",
    "qid_column_without_routing.py": rf"^DataFrame 'qid' column: .* NDCG@10 {SCORE}",
    "recommenders.py": r"^NDCG@10 difference [+-]\d\.\d{4}, p = ",
    "significance_tests.py": r"^mean difference \+\d\.\d{4}, p = ",
    "trec_evaluation.py": rf"^map                   \tall\t{SCORE}",
    "xgboost_ranker.py": rf"^best parameters: .* score {SCORE}",
}
# Examples another test runs in its own process, checking what they print: a run
# here, as a script, would start a second Spark JVM to repeat it.
RUN_ELSEWHERE = {"spark_xgboost_ranker.py": "test_spark_search.py"}


def test_every_example_is_checked():
    assert sorted(p.name for p in EXAMPLES) == sorted([*EXPECTED, *RUN_ELSEWHERE])
    for example, test in RUN_ELSEWHERE.items():
        assert example in (Path(__file__).parent / test).read_text(encoding="utf-8")


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.name not in RUN_ELSEWHERE],
                         ids=lambda p: p.name)
def test_example_runs(path):
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert re.search(EXPECTED[path.name], proc.stdout, re.M), proc.stdout
