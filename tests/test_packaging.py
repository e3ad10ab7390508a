"""What the wheel and the sdist hold, as pyproject.toml and MANIFEST.in declare it.

Building needs setuptools >= 77 and the network, so these tests read the
declarations; ``python -m build`` was checked by hand against them.
"""

import fnmatch
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pytest itself depends on tomli there
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE = ROOT / "sklearn_rank"


def test_every_data_file_of_the_package_is_package_data():
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    files = [p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix not in {".py", ".pyc"}]
    assert PACKAGE / "py.typed" in files
    assert any(p.suffix == ".run" for p in files)
    for path in files:
        package = path.parent
        while not (package / "__init__.py").exists():
            package = package.parent
        name = ".".join(package.relative_to(ROOT).parts)
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in data.get(name, ())), (
            f"{path.relative_to(ROOT)} is not in [tool.setuptools.package-data]")


def test_license_is_declared_and_shipped():
    project = PYPROJECT["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License\n")
    assert "sklearn_rank developers" in text and "Neither the name of the copyright holder" in text
    # setuptools 76 refuses an SPDX string in project.license
    assert PYPROJECT["build-system"]["requires"] == ["setuptools>=77,<85"]


def test_sdist_holds_what_the_tests_docs_and_examples_need():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    grafted = set(re.findall(r"^graft (\S+)$", manifest, flags=re.M))
    assert {"sklearn_rank", "tests", "examples", "docs", "benchmarks", "maint_tools"} <= grafted
    assert all((ROOT / name).is_dir() for name in grafted)
    assert re.search(r"^include .*\bLICENSE\b", manifest, flags=re.M)


def test_urls_and_the_dev_extra():
    from sklearn_rank._utils.compat import DOCS_URL

    urls = PYPROJECT["project"]["urls"]
    assert set(urls) == {"Documentation", "Source", "Issues"}
    assert DOCS_URL.startswith(urls["Documentation"])
    assert urls["Issues"] == urls["Source"] + "/issues"
    dev = PYPROJECT["project"]["optional-dependencies"]["dev"]
    assert any(re.match(r"ruff>=[\d.]+,<[\d.]+$", req) for req in dev)
    assert "sklearn-rank[test]" in dev
