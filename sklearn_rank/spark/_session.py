"""The Spark session: a Java runtime checked first (:func:`get_session`,
:func:`require_java`, :data:`JAVA_HINT`), and what every public function of the
package does at its boundary: :func:`check_columns` (the columns named exist)
and :func:`quiet` (no PySpark warning about pandas 3)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from functools import wraps

from .._utils.validation import validate_params

__all__ = ["JAVA_HINT", "check_columns", "get_session", "java_version", "quiet",
           "require_java"]

#: Said by every error about the Java runtime Spark needs.
JAVA_HINT = ("Spark needs a Java runtime 17 or newer: install one (Debian/Ubuntu: "
             "apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17) and "
             "put its java on the PATH or set JAVA_HOME.")


def quiet(func: Callable) -> Callable:
    """``func`` without PySpark's warning that pandas >= 3 is not fully supported
    (the conversions this package makes are tested with it)."""
    @wraps(func)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="PySpark does not yet fully support",
                                    category=FutureWarning)
            return func(*args, **kwargs)

    return wrapper


def _java_command() -> str | None:
    """The java that PySpark starts: ``$JAVA_HOME/bin/java``, else the PATH's."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.access(candidate, os.X_OK) else None
    return shutil.which("java")


def java_version() -> int | None:
    """The major version of the Java runtime PySpark would start, None when
    there is none (or it does not run)."""
    java = _java_command()
    if java is None:
        return None
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if proc.returncode != 0 or found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def require_java() -> None:
    """Raise the error naming the Java runtime Spark needs if it is missing or too old."""
    version = java_version()
    if version is None:
        where = (f"JAVA_HOME={os.environ['JAVA_HOME']!r} has no runnable bin/java"
                 if os.environ.get("JAVA_HOME") else "no java command is on the PATH")
        raise RuntimeError(f"{JAVA_HINT} ({where}.)")
    if version < 17:
        raise RuntimeError(f"{JAVA_HINT} (The java found is Java {version}.)")


@validate_params({"master": [str, None], "app_name": [str], "config": [dict, None]})
def get_session(master: str | None = None, *, app_name: str = "sklearn_rank",
                config: dict | None = None):
    """The active Spark session, or a new one once the Java runtime is checked.

    Parameters
    ----------
    master : str, default=None
        Spark's master URL (``"local[2]"``, ``"spark://host:7077"``, ``"yarn"``);
        None leaves it to ``spark-submit`` or Spark's default (``local[*]``).
    app_name : str, default="sklearn_rank"
        The application's name, shown in Spark's UI.
    config : dict, default=None
        Spark settings (``{"spark.driver.memory": "2g"}``), applied when the
        session is created. On a local master the Python workers run this
        interpreter: ``PYSPARK_PYTHON`` is set to it unless already set.

    Returns
    -------
    spark : pyspark.sql.SparkSession
        The active session when there is one (``master`` and ``config`` do not
        change it), else a new one.

    Raises
    ------
    RuntimeError
        When no Java runtime 17 or newer is found (Spark runs on the JVM), with
        what to install, instead of PySpark's "Java gateway process exited".

    Examples
    --------
    >>> from sklearn_rank.spark import get_session
    >>> spark = get_session("local[2]", config={"spark.ui.enabled": "false"})  # doctest: +SKIP
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    require_java()
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    if (master is None or master.startswith("local")) and "PYSPARK_PYTHON" not in os.environ:
        # local workers run this interpreter (with this package, NumPy and pyarrow),
        # not whatever "python3" the PATH has (PySpark reads the variable, not a setting)
        os.environ["PYSPARK_PYTHON"] = sys.executable
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:  # PySpark's gateway errors say nothing about Java
        if "JAVA_GATEWAY" in str(exc) or "Java gateway" in str(exc):
            raise RuntimeError(f"{JAVA_HINT} (Starting Spark failed: {exc})") from None
        raise


def check_columns(df, columns: dict, *, what: str = "the DataFrame") -> None:
    """Refuse a column of ``columns`` (``{argument name: column name}``) that
    ``df`` lacks, naming the argument and the columns it has."""
    for argument, column in columns.items():
        if column is not None and column not in df.columns:
            raise ValueError(f"{what} has no column {column!r} ({argument}={column!r}); its "
                             f"columns are {df.columns}. Pass {argument}=<the column's name>.")
