"""Every code block of README.md runs as written, with only what it says it needs.

Each ```python block runs alone, as a script in a fresh process (its own
imports and data; a block that starts a Dask LocalCluster needs the script's
``__main__``), from an empty working directory. The ```bash blocks that do not
install anything run in bash with ``python`` and ``sklearn-rank`` pointing at
this interpreter and this checkout. A block that cannot run here is preceded
in README.md by ``<!-- readme-test: skip (reason) -->``; ``SKIPPED`` lists
them, so a new one is a decision made here, not a silent skip.

**Only the extras a block names.** A Python block must run after the README's
``pip install .``, or be preceded (last non-blank line before its fence) by the
sentence ``Needs `pip install "sklearn-rank[EXTRA,...]"`.`` naming the extras
it needs (more text may follow on that line). Building a virtual environment
per combination of extras would take minutes per block, so each block instead
runs in this (full) environment with every other distribution hidden: the
distributions that ``pip install ".[EXTRA,...]"`` would install are resolved
from pyproject.toml and the installed packages' own requirements (markers and
extras evaluated), and a ``sitecustomize`` module in a temporary folder on
``PYTHONPATH`` puts a finder first on ``sys.meta_path`` that raises
``ModuleNotFoundError`` for the top-level modules of every other installed
distribution (pandas, matplotlib, pyarrow, polars, dask, xgboost, pytest, ...).
``PYTHONPATH`` reaches the processes a block starts (Dask workers, the CLI), so
they see the same environment. A block that imports an extra it does not name
fails, and so does a package function that imports an optional module its
caller did not ask for.

**Printed output.** What the README shows a block printing is checked against
what it prints: an unlabelled fenced block right after a Python block (blank
lines between at most) is its output, each line of which it must print; and a
``print(...)  # VALUE`` comment whose ``VALUE`` is a Python literal (``True``,
a number) or an ellipsis pattern (``{'ndcg_at_10': ..., ...}``) must match a
line it prints (doctest's ``ELLIPSIS`` rules; numbers as shown, since the
README shows them rounded).
"""

from __future__ import annotations

import ast
import doctest
import importlib.metadata
import itertools
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging import requirements  # pytest's own dependency
from packaging.utils import canonicalize_name

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->")
# the line above a block that needs extras: Needs `pip install "sklearn-rank[dask]"`.
NEEDS_MARK = re.compile(r'^Needs `pip install "sklearn-rank\[(?P<extras>[\w,-]+)\]"`')


def _project() -> dict:
    """pyproject.toml's [project] table; on Python 3.10 (no tomllib), its name,
    dependencies and extras from the installed package's metadata (the
    checkout's, after the README's ``pip install -e``)."""
    if tomllib is not None:
        return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    meta = importlib.metadata.metadata("sklearn-rank")
    reqs = [requirements.Requirement(text) for text in meta.get_all("Requires-Dist") or ()]
    plain = [req for req in reqs if not req.marker or "extra" not in str(req.marker)]
    optional = {extra: [] for extra in meta.get_all("Provides-Extra") or ()}
    for req in (req for req in reqs if req not in plain):
        for extra in optional:
            if req.marker.evaluate({"extra": extra}):  # and this platform's markers
                extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
                optional[extra].append(f"{req.name}{extras}{req.specifier}")
    return {"name": meta["Name"], "dependencies": [str(req) for req in plain],
            "optional-dependencies": optional}


PYPROJECT = _project()
# Bash blocks that install packages (they need the network and a fresh venv): the
# commands they show are what .ci/run runs.
INSTALLS = re.compile(r"\bpip install\b|\bpython3? -m venv\b")
# Blocks marked as not runnable here: {(language, first line of code): reason}.
SKIPPED: dict[tuple[str, str], str] = {}
TIMEOUT = 900  # seconds; a busy 2-core machine runs the slowest block in about 30 s


@dataclass(frozen=True)
class Block:
    language: str
    line: int  # line number of the opening fence
    code: str
    skip: str | None  # the reason given by a skip mark before the block
    extras: tuple[str, ...] = ()  # the extras named by a "Needs `pip install ...`" line
    output: str | None = field(default=None, compare=False)  # the unlabelled block after it

    @property
    def id(self) -> str:
        return f"{self.language}-L{self.line}"


def code_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, with their language and skip mark."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        if end is None:
            raise ValueError(f"README.md line {i + 1}: the code block is never closed")
        before = next((line for line in reversed(lines[:i]) if line.strip()), "")
        mark, needs = SKIP_MARK.search(before), NEEDS_MARK.match(before.strip())
        blocks.append(Block(fence.group(1), i + 1, "\n".join(lines[i + 1:end]) + "\n",
                            mark.group("reason").strip() if mark else None,
                            tuple(needs.group("extras").split(",")) if needs else ()))
        i = end + 1
    # an unlabelled block right after a block is what that block prints
    for block, after in itertools.pairwise(blocks):
        between = lines[block.line + block.code.count("\n") + 1:after.line - 1]  # after the fence
        if after.language == "" and not any(line.strip() for line in between):
            object.__setattr__(block, "output", after.code)
    return blocks


BLOCKS = code_blocks(README.read_text(encoding="utf-8"))
PYTHON = [b for b in BLOCKS if b.language == "python"]
BASH = [b for b in BLOCKS if b.language == "bash" and not INSTALLS.search(b.code)]


def _env(*first: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [*map(str, first), str(ROOT), env.get("PYTHONPATH")]))
    return env


def _run(args, cwd: Path, *path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=_env(*path), capture_output=True, text=True,
                          timeout=TIMEOUT)


# -- an environment with only the named extras ---------------------------------------------

def _project_requirements(extras) -> list:
    """The requirements of ``pip install ".[extras]"``, the project's own extras expanded."""
    optional, reqs, todo, seen = PYPROJECT["optional-dependencies"], [], list(extras), set()
    for text in PYPROJECT["dependencies"]:
        reqs.append(requirements.Requirement(text))
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        if extra not in optional:
            raise ValueError(f"pyproject.toml has no extra {extra!r}")
        seen.add(extra)
        for text in optional[extra]:
            req = requirements.Requirement(text)
            if canonicalize_name(req.name) == canonicalize_name(PYPROJECT["name"]):
                todo.extend(req.extras)
            else:
                reqs.append(req)
    return reqs


def installed_with(extras) -> set[str]:
    """Canonical names of the installed distributions that ``pip install
    ".[extras]"`` would install: the requirements' closure, markers evaluated."""
    allowed = {canonicalize_name(PYPROJECT["name"])}
    todo = [(req, ("",)) for req in _project_requirements(extras)]
    while todo:
        req, active = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in active):
            continue
        name = canonicalize_name(req.name)
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here (another platform's variant)
        key = (name, frozenset(req.extras))
        if key in allowed:
            continue
        allowed |= {name, key}
        todo += [(requirements.Requirement(text), ("", *req.extras))
                 for text in dist.requires or ()]
    return {name for name in allowed if isinstance(name, str)}


def hidden_modules(extras) -> set[str]:
    """Top-level modules of the installed distributions ``.[extras]`` lacks."""
    allowed = installed_with(extras)
    return {module for module, dists in importlib.metadata.packages_distributions().items()
            if not {canonicalize_name(d) for d in dists} & allowed}


SITECUSTOMIZE = '''"""Written by tests/test_readme.py: these modules are not installed."""
import sys

HIDDEN = frozenset({hidden!r})


class _NotInstalled:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled)
'''


def only_extras(folder: Path, extras) -> Path:
    """A folder whose sitecustomize hides what ``pip install ".[extras]"`` lacks."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(hidden=sorted(hidden_modules(extras))), encoding="utf-8")
    return folder


# -- what the README shows a block printing ------------------------------------------------

def shown_output(block: Block) -> list[str]:
    """Lines the README shows the block printing: its output block's lines, and
    the literal or ellipsis pattern after ``# `` on a ``print(...)`` line."""
    shown = [line for line in (block.output or "").splitlines() if line.strip()]
    for line in block.code.splitlines():
        match = re.match(r"\s*print\(.*\)\s+# (?P<value>.+)$", line)
        if not match:
            continue
        value = match.group("value").strip()
        try:
            ast.literal_eval(value)
        except (ValueError, SyntaxError):
            if "..." not in value or value[0] not in "{[(":
                continue  # a remark, not output
        shown.append(value)
    return shown


def missing_output(shown: list[str], stdout: str) -> list[str]:
    """The shown lines that no printed line matches (doctest's ELLIPSIS rules)."""
    checker, printed = doctest.OutputChecker(), stdout.splitlines()
    return [want for want in shown
            if not any(checker.check_output(want.strip() + "\n", got.strip() + "\n",
                                            doctest.ELLIPSIS) for got in printed)]


def test_the_skip_mark_is_read():
    text = ("intro\n\n<!-- readme-test: skip (needs a GPU) -->\n\n```python\nimport cupy\n```\n"
            "<!-- readme-test: skip () -->\n```python\nx = 1\n```\n```bash\nls\n```\n")
    blocks = code_blocks(text)
    assert [(b.language, b.line, b.skip) for b in blocks] == [
        ("python", 5, "needs a GPU"), ("python", 9, ""), ("bash", 12, None)]
    assert blocks[0].code == "import cupy\n"


def test_the_needs_sentence_and_the_output_block_are_read():
    text = ('Needs `pip install "sklearn-rank[pandas,plot]"`.\n\n```python\nprint(1)\n```\n\n'
            "```\n1\n```\nprose\n\n```python\nprint(2)  # 2\n```\nprose\n```\nnot 2\n```\n")
    first, output, second, text_block = code_blocks(text)
    assert (first.extras, first.output) == (("pandas", "plot"), "1\n")
    assert (second.extras, second.output) == ((), None)
    assert shown_output(first) == ["1"] and shown_output(second) == ["2"]
    assert output.language == text_block.language == ""


def test_shown_output_is_matched_line_by_line():
    code = ('print(x)  # True\nprint(d)  # {\'a\': ..., \'b\': ...}\n'
            'print(y)  # a float: the mean\n')
    block = Block("python", 1, code, None, (), "mean 0.5\n")
    assert shown_output(block) == ["mean 0.5", "True", "{'a': ..., 'b': ...}"]
    assert missing_output(shown_output(block), "{'a': 1, 'b': 2}\nTrue\nmean 0.5\n") == []
    assert missing_output(shown_output(block), "False\n{'a': 1}\nmean 0.50\n") == [
        "mean 0.5", "True", "{'a': ..., 'b': ...}"]


def test_the_environment_hides_what_the_extras_lack(tmp_path):
    for module in ("pandas", "pyarrow", "matplotlib"):
        pytest.importorskip(module)
    assert {"pandas", "pyarrow", "matplotlib", "pytest"} <= hidden_modules(())
    assert {"numpy", "scipy", "sklearn", "lightgbm"}.isdisjoint(hidden_modules(()))
    hidden = hidden_modules(("pandas",))
    assert "pandas" not in hidden and {"pyarrow", "matplotlib"} <= hidden
    assert "pyarrow" not in hidden_modules(("dask",))  # the dask extra includes fast
    code = "import numpy, sklearn_rank\nimport pandas\nprint(pandas.__name__)\n"
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    bare = _run([sys.executable, str(script)], tmp_path, only_extras(tmp_path / "a", ()))
    assert bare.returncode != 0 and "No module named 'pandas'" in bare.stderr
    named = _run([sys.executable, str(script)], tmp_path, only_extras(tmp_path / "b", ["pandas"]))
    assert named.returncode == 0 and named.stdout == "pandas\n", named.stderr


def test_every_named_extra_exists():
    # (the landing page's blocks need no extra today; the guide's pages show the rest)
    named = {extra for b in PYTHON for extra in b.extras}
    assert named <= set(PYPROJECT["optional-dependencies"])


def test_skipped_blocks_are_the_listed_ones_with_a_reason():
    marked = {(b.language, b.code.splitlines()[0]): b.skip for b in BLOCKS if b.skip is not None}
    assert marked == SKIPPED
    assert all(reason for reason in marked.values())


def test_the_blocks_are_found():
    # A block spelled ```py or ```sh, or a broken fence, would leave the test unnoticed;
    # unlabelled blocks are program output.
    assert {b.language for b in BLOCKS} <= {"python", "bash", ""}
    assert len(PYTHON) >= 3  # the three common uses: tuning, metrics, a TREC run
    assert len(BASH) >= 2  # evaluate, and the trec_eval drop-in, on the sample TREC files


@pytest.mark.parametrize("block", [b for b in PYTHON if b.skip is None], ids=lambda b: b.id)
def test_python_block_runs(block, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = work / f"readme_{block.id}.py"
    script.write_text(block.code, encoding="utf-8")
    proc = _run([sys.executable, str(script)], work, only_extras(tmp_path / "site", block.extras))
    extras = f"pip install \".[{','.join(block.extras)}]\"" if block.extras else "pip install ."
    assert proc.returncode == 0, f"README.md line {block.line} after {extras}:\n{proc.stderr}"
    assert proc.stdout.strip(), f"README.md line {block.line} prints nothing"
    assert missing_output(shown_output(block), proc.stdout) == [], (
        f"README.md line {block.line} shows output it does not print; it prints:\n{proc.stdout}")


@pytest.mark.parametrize("block", [b for b in BASH if b.skip is None], ids=lambda b: b.id)
def test_bash_block_runs(block, tmp_path):
    prelude = (f'python() {{ "{sys.executable}" "$@"; }}\n'
               f'sklearn-rank() {{ "{sys.executable}" -m sklearn_rank "$@"; }}\n')
    proc = _run(["bash", "-euo", "pipefail", "-c", prelude + block.code], cwd=tmp_path)
    assert proc.returncode == 0, f"README.md line {block.line}:\n{proc.stderr}"
    assert proc.stdout.strip()
    assert missing_output(shown_output(block), proc.stdout) == [], proc.stdout
    for name in re.findall(r"--plot (\S+)", block.code):
        assert (tmp_path / name).stat().st_size > 0
