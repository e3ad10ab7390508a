"""Every code block of README.md runs as written.

Each ```python block runs alone, as a script in a fresh process (its own
imports and data; a block that starts a Dask LocalCluster needs the script's
``__main__``), from an empty working directory. The ```bash blocks that do not
install anything run in bash with ``python`` and ``sklearn-rank`` pointing at
this interpreter and this checkout. A block that cannot run here is preceded
in README.md by ``<!-- readme-test: skip (reason) -->``; ``SKIPPED`` lists
them, so a new one is a decision made here, not a silent skip.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->")
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
        mark = SKIP_MARK.search(before)
        blocks.append(Block(fence.group(1), i + 1, "\n".join(lines[i + 1:end]) + "\n",
                            mark.group("reason").strip() if mark else None))
        i = end + 1
    return blocks


BLOCKS = code_blocks(README.read_text(encoding="utf-8"))
PYTHON = [b for b in BLOCKS if b.language == "python"]
BASH = [b for b in BLOCKS if b.language == "bash" and not INSTALLS.search(b.code)]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _run(args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def test_the_skip_mark_is_read():
    text = ("intro\n\n<!-- readme-test: skip (needs a GPU) -->\n\n```python\nimport cupy\n```\n"
            "<!-- readme-test: skip () -->\n```python\nx = 1\n```\n```bash\nls\n```\n")
    blocks = code_blocks(text)
    assert [(b.language, b.line, b.skip) for b in blocks] == [
        ("python", 5, "needs a GPU"), ("python", 9, ""), ("bash", 12, None)]
    assert blocks[0].code == "import cupy\n"


def test_skipped_blocks_are_the_listed_ones_with_a_reason():
    marked = {(b.language, b.code.splitlines()[0]): b.skip for b in BLOCKS if b.skip is not None}
    assert marked == SKIPPED
    assert all(reason for reason in marked.values())


def test_the_blocks_are_found():
    # A block spelled ```py or ```sh, or a broken fence, would leave the test unnoticed;
    # unlabelled blocks are program output.
    assert {b.language for b in BLOCKS} <= {"python", "bash", ""}
    assert len(PYTHON) >= 9
    assert len(BASH) >= 2  # evaluate and compare on the sample TREC files


@pytest.mark.parametrize("block", [b for b in PYTHON if b.skip is None], ids=lambda b: b.id)
def test_python_block_runs(block, tmp_path):
    script = tmp_path / f"readme_{block.id}.py"
    script.write_text(block.code, encoding="utf-8")
    proc = _run([sys.executable, str(script)], cwd=tmp_path)
    assert proc.returncode == 0, f"README.md line {block.line}:\n{proc.stderr}"
    assert proc.stdout.strip(), f"README.md line {block.line} prints nothing"


@pytest.mark.parametrize("block", [b for b in BASH if b.skip is None], ids=lambda b: b.id)
def test_bash_block_runs(block, tmp_path):
    prelude = (f'python() {{ "{sys.executable}" "$@"; }}\n'
               f'sklearn-rank() {{ "{sys.executable}" -m sklearn_rank "$@"; }}\n')
    proc = _run(["bash", "-euo", "pipefail", "-c", prelude + block.code], cwd=tmp_path)
    assert proc.returncode == 0, f"README.md line {block.line}:\n{proc.stderr}"
    assert proc.stdout.strip()
    for name in re.findall(r"--plot (\S+)", block.code):
        assert (tmp_path / name).stat().st_size > 0
