"""The package's structure, read from its source: layers that import nothing above them,
bounded complexity, no reads of other objects' private attributes, names that cross modules
are part of their module's interface, and an interpreter without docstrings (``-OO``) runs it.

The layers (DESIGN.md §9), bottom to top:

0. base: the package's ``__init__`` and ``_utils/`` (validation, compat shims, speed devices);
1. core: ``metrics/_engine/`` (inputs, query grouping, ranked blocks);
2. metrics and what builds on them alone: the rest of ``metrics/`` (definitions, the spec and
   vocabulary layer, the families, scorers), ``stats``, ``datasets``, ``model_selection``,
   ``estimators``, ``inspection``, ``dask`` and the plots;
3. trec: ``trec/`` (files, frames, trec_eval's formats and drop-in), ``recsys``,
   ``fusion`` (runs fused) and ``spark`` (Spark DataFrames and Spark ML, which nothing
   imports);
4. commands: ``cli/`` and ``__main__``.

Every import, also one inside a function, goes to the same layer or a lower one.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sklearn_rank"
_LAYERS = [  # (name, module prefixes), bottom first; the longest matching prefix wins
    ("base", ("sklearn_rank", "sklearn_rank._utils")),
    ("core", ("sklearn_rank.metrics._engine",)),
    ("metrics", ("sklearn_rank.metrics", "sklearn_rank.stats", "sklearn_rank.datasets",
                 "sklearn_rank.model_selection", "sklearn_rank.estimators",
                 "sklearn_rank.inspection", "sklearn_rank.dask", "sklearn_rank._plots")),
    ("trec", ("sklearn_rank.trec", "sklearn_rank.recsys", "sklearn_rank.fusion",
              "sklearn_rank.spark")),
    ("commands", ("sklearn_rank.cli", "sklearn_rank.__main__")),
]
_MAX_COMPLEXITY = 15


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, tuple[Path, ast.Module]]:
    return {_module_name(p): (p, ast.parse(p.read_text(encoding="utf-8"), str(p)))
            for p in sorted(PACKAGE.rglob("*.py"))}


def _is_module(name: str) -> bool:
    return name in _modules()


def _layer(module: str) -> int:
    best, layer = -1, None
    for i, (_, prefixes) in enumerate(_LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, layer = len(prefix), i
    assert layer is not None, f"{module} is in no layer: add it to _LAYERS"
    return layer


def _imports(module: str, path: Path, tree: ast.Module):
    """``(line, imported module)`` of every import of the package's own modules."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sklearn_rank":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "sklearn_rank":
                target = node.module
            else:
                continue
            for alias in node.names:  # ``from . import _x``: the submodule itself
                sub = f"{target}.{alias.name}"
                yield node.lineno, (sub if _is_module(sub) else target)


def test_nothing_imports_a_layer_above_its_own():
    upward = []
    for module, (path, tree) in _modules().items():
        for line, target in _imports(module, path, tree):
            if _layer(target) > _layer(module):
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} "
                              f"({_LAYERS[_layer(module)][0]}) imports {target} "
                              f"({_LAYERS[_layer(target)][0]})")
    assert not upward, "imports that go up a layer:\n" + "\n".join(upward)


def test_nothing_imports_spark():
    """``spark`` sits beside ``dask``: it imports the metrics, trec and base layers, and
    no module outside it imports it (PySpark stays an optional extra)."""
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: {module} imports {target}"
             for module, (path, tree) in _modules().items()
             if not (module + ".").startswith("sklearn_rank.spark.")
             for line, target in _imports(module, path, tree)
             if (target + ".").startswith("sklearn_rank.spark.")]
    assert not found, "\n".join(found)


def test_the_layer_test_sees_an_upward_import():
    """The check above can fail: a core module importing the trec layer is caught."""
    tree = ast.parse("def f():\n    from ...trec import read_run\n")
    path = PACKAGE / "metrics" / "_engine" / "inputs.py"
    found = list(_imports("sklearn_rank.metrics._engine.inputs", path, tree))
    assert found == [(2, "sklearn_rank.trec")]
    assert _layer(found[0][1]) > _layer("sklearn_rank.metrics._engine.inputs")


def test_every_block_has_a_cyclomatic_complexity_of_at_most_15():
    from radon.complexity import cc_visit

    over = []
    for path, _ in _modules().values():
        for block in cc_visit(path.read_text(encoding="utf-8")):
            for item in [block, *getattr(block, "methods", [])]:
                if item.complexity > _MAX_COMPLEXITY:
                    over.append(f"{path.relative_to(PACKAGE.parent)}:{item.lineno}: "
                                f"{item.name} {item.complexity}")
    assert not over, f"blocks over complexity {_MAX_COMPLEXITY}:\n" + "\n".join(over)


def _module_aliases(tree: ast.Module, module: str, path: Path) -> set[str]:
    """Names that stand for a module in ``tree`` (``import os``, ``from . import _x``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.update(a.asname or a.name for a in node.names
                         if _is_module(f"{target}.{a.name}"))
    return names


def _private_reads(tree: ast.Module, aliases: set[str]):
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__"):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ({"self", "cls"} | aliases):
            continue
        if (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                and owner.func.id == "super"):
            continue
        yield node.lineno, ast.unparse(node)


#: The one place that reads a third party's private attributes, and why.
_THIRD_PARTY = {
    "sklearn_rank/estimators/_position.py": (
        # LightGBM 4.x's scikit-learn fit takes no position=: QueryRanker trains through
        # lightgbm.train with the parameters the model's own fit would use, and leaves a
        # fitted LGBMRanker; tests/test_position.py compares it with the booster API.
        "model._process_params(stage='fit')",
        "train_set._has_non_default_feature_names"),
}


def test_no_module_reads_another_objects_private_attribute():
    """An object's ``_name`` is read only by its own class (``self``, ``cls``, ``super()``);
    a module's own private names are the concern of the next test."""
    reads = []
    for module, (path, tree) in _modules().items():
        aliases = _module_aliases(tree, module, path)
        where = str(path.relative_to(PACKAGE.parent))
        allowed = {text.partition("(")[0] for text in _THIRD_PARTY.get(where, ())}
        reads += [f"{where}:{line}: {text}" for line, text in _private_reads(tree, aliases)
                  if text not in allowed]
    assert not reads, "reads of another object's private attribute:\n" + "\n".join(reads)


def test_the_private_attribute_check_sees_a_read():
    tree = ast.parse("import os\nclass A:\n    def f(self, other):\n"
                     "        return self._a, other._b, os._exit, super()._c\n")
    found = list(_private_reads(tree, _module_aliases(tree, "sklearn_rank.x",
                                                      PACKAGE / "x.py")))
    assert found == [(4, "other._b")]


def test_names_other_modules_import_are_their_modules_interface():
    """``from .x import name`` takes a public name of ``x`` (one without a leading
    underscore): what crosses a module boundary is part of that module's interface. A
    private module (``from . import _x``) is imported as a whole."""
    crossing = []
    for module, (path, tree) in _modules().items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not (
                    node.level or (node.module or "").startswith("sklearn_rank")):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and not (
                        _is_module(f"{target}.{alias.name}")):
                    crossing.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: "
                                    f"{alias.name} from {target}")
    assert not crossing, "private names imported from another module:\n" + "\n".join(crossing)


@pytest.mark.parametrize("optimize", ["-OO"])
def test_the_package_imports_and_runs_without_docstrings(optimize, tmp_path):
    """Under ``python -OO`` (docstrings stripped) every subpackage imports, a metric, a
    scorer and the command line run (but ``spark``: PySpark itself does not import under
    ``-OO``, its ``@since`` decorator reads the docstrings)."""
    code = (
        "import sklearn_rank.metrics as m, sklearn_rank.trec, sklearn_rank.stats, "
        "sklearn_rank.dask, sklearn_rank.estimators, sklearn_rank.model_selection, "
        "sklearn_rank.datasets, sklearn_rank.inspection, sklearn_rank.fusion\n"
        "assert m.ndcg_score.__doc__ is None\n"
        "print(round(m.ndcg_score([[3, 2, 1]], [[1, 2, 3]], k=2), 6))\n"
        "print(m.make_ranking_scorer('ndcg@10'))\n")
    proc = subprocess.run([sys.executable, optimize, "-c", code], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "0.325296"
    sample = PACKAGE / "datasets" / "data" / "sample_trec"
    proc = subprocess.run([sys.executable, optimize, "-m", "sklearn_rank", "evaluate",
                           str(sample / "qrels.txt"), str(sample / "bm25.run"), "-m", "map"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert any(line.split()[:1] == ["map"] for line in proc.stdout.splitlines()), proc.stdout
