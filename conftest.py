"""Fixtures shared by the test suite and the package's doctests.

One local Spark session for the whole run (the Spark tests and the doctests of
:mod:`sklearn_rank.spark`, whose examples use ``spark``), started only when a
test asks for it: Spark's JVM takes seconds to start.
"""

import pytest


@pytest.fixture(scope="session")
def spark():
    """A small local Spark session: two cores, four shuffle partitions, no UI."""
    from sklearn_rank.spark import get_session

    session = get_session("local[2]", app_name="sklearn_rank-tests", config={
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.driver.memory": "1g",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.adaptive.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    })
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_in_doctests(request, doctest_namespace):
    """The ``spark`` session in the doctests of ``sklearn_rank/spark``."""
    path = str(getattr(request.node, "path", ""))
    if type(request.node).__name__ == "DoctestItem" and "sklearn_rank/spark/" in path.replace(
            "\\", "/"):
        doctest_namespace["spark"] = request.getfixturevalue("spark")
