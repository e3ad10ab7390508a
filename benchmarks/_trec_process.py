"""Whole-process timing of ``sklearn-rank evaluate`` against the trec_eval binary.

Used by ``bench_trec.py --trec-eval PATH``. Every measurement is one child
process, from its start to its exit (interpreter start-up and imports
included), timed by a small Python process that forks and waits for it; its
peak resident memory is the command's own ``ru_maxrss`` (``os.wait4``), which
is at least that small process's (~10 MiB) and never counts this script's.

Three commands, run side by side in every round (so the ratios of a round
share the machine's load):

* ``trec_eval``: ``trec_eval -m MEASURE ... qrels run``;
* ``sklearn-rank``: ``python -m sklearn_rank evaluate --format trec -m
  MEASURE ... qrels run`` (the commands read with the NumPy reader, on up
  to ``SKLEARN_RANK_NUM_THREADS`` threads, whether pyarrow is installed or
  not: importing pyarrow costs a one-shot process more than its parser saves);
* ``sklearn-rank (no pyarrow)``: the same command in an interpreter where
  ``import pyarrow`` fails (``sys.modules["pyarrow"] = None``), as for a
  user without pyarrow (the same reader: this row shows that having pyarrow
  installed costs the command nothing).

The children get the parent's environment without ``PYTHONDONTWRITEBYTECODE``
and one untimed run of each command comes first, so the package's bytecode is
cached as in an installed package (compiling the sources costs ~0.1 s a run).
Each command's printed values must equal trec_eval's (4 decimals).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

TREC_EVAL = "trec_eval"
CLI = "sklearn-rank"
CLI_NUMPY = "sklearn-rank (no pyarrow)"
SPEED_TARGET = 0.33  # sklearn-rank / trec_eval wall time, whole process
SPEED_TARGET_NUMPY = 0.5  # the same without pyarrow
MEMORY_TARGET = 2.0  # peak RSS, sklearn-rank / trec_eval

_NO_PYARROW = ("import sys; sys.modules['pyarrow'] = None; "
               "from sklearn_rank.cli._entry import program; sys.exit(program())")


@dataclass
class ProcessRow:
    """The runs of one command."""

    name: str
    command: list[str]
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + system seconds
    peak_mib: list[float] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # measure -> printed value

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def peak(self) -> float:
        return max(self.peak_mib)


def commands(trec_eval: str, measures: list[str], qrels: str, run: str) -> list[ProcessRow]:
    flags = [arg for m in measures for arg in ("-m", m)]
    cli = ["evaluate", "--format", "trec", *flags, qrels, run]
    return [ProcessRow(TREC_EVAL, [trec_eval, *flags, qrels, run]),
            ProcessRow(CLI, [sys.executable, "-m", "sklearn_rank", *cli]),
            ProcessRow(CLI_NUMPY, [sys.executable, "-c", _NO_PYARROW, *cli])]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# Runs a command and reports its wall time, exit status and peak RSS. A small
# process of its own forks the command, as the command's ru_maxrss keeps the
# peak of the memory it was forked from (this script's, hundreds of MiB).
_TIMER = """\
import os, sys, time
out = os.open(sys.argv[1], os.O_WRONLY)
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out, 1)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
print(seconds, os.waitstatus_to_exitcode(status), usage.ru_maxrss,
      usage.ru_utime + usage.ru_stime)
"""


def run_once(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS (MiB) and stdout
    of one run of ``command``."""
    with tempfile.NamedTemporaryFile() as out:
        timer = subprocess.run([sys.executable, "-c", _TIMER, out.name, *command],
                               capture_output=True, env=_child_env(), check=True)
        seconds, code, maxrss, cpu = timer.stdout.split()
        if int(code):
            raise RuntimeError(f"{command[0]} ... failed (exit {int(code)}): "
                               f"{timer.stderr.decode(errors='replace').strip()}")
        text = out.read().decode()
    # ru_maxrss: KiB on Linux, bytes on macOS
    peak = int(maxrss) / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return float(seconds), float(cpu), peak, text


def _values(text: str) -> dict[str, str]:
    """``measure -> value`` of trec_eval's ``measure all value`` lines."""
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all" and parts[0] != "runid":
            values[parts[0]] = parts[2]
    return values


def measure(rows: list[ProcessRow], repeats: int) -> None:
    """One untimed run of each command, then ``repeats`` rounds of all of them."""
    for row in rows:
        run_once(row.command)
    for r in range(repeats):
        for row in rows:
            seconds, cpu, peak, text = run_once(row.command)
            row.seconds.append(seconds)
            row.cpu.append(cpu)
            row.peak_mib.append(peak)
            row.values = _values(text)
        reference = rows[0].seconds[-1]
        print(f"  round {r + 1}/{repeats}: " + "  ".join(
            f"{row.name} {row.seconds[-1]:.3f} s ({row.seconds[-1] / reference:.2f}x, "
            f"{row.peak_mib[-1]:.0f} MiB)" for row in rows), flush=True)


def report(rows: list[ProcessRow]) -> None:
    reference = rows[0]
    header = (f"{'command':<26} {'best s':>7} {'/trec_eval':>10} {'rounds s':<24} "
              f"{'cpu s':>6} {'/trec_eval':>10} {'peak MiB':>8} {'/trec_eval':>10}")
    print(header)
    print("-" * len(header))
    for row in rows:
        rounds = " ".join(f"{s:.3f}" for s in row.seconds)
        cpu = min(row.cpu)
        print(f"{row.name:<26} {row.best:7.3f} {row.best / reference.best:10.2f} "
              f"{rounds:<24} {cpu:6.3f} {cpu / min(reference.cpu):10.2f} "
              f"{row.peak:8.1f} {row.peak / reference.peak:10.2f}")
    print("(whole process, start-up included; best: the fastest round; /trec_eval: ratio "
          "of the bests; cpu: the least user + system time of the rounds, less sensitive to "
          "the load than wall time (informative: the targets are on wall time); peak: the "
          "largest peak RSS of the rounds)")


def targets(rows: list[ProcessRow], lines: int, target_class) -> list:
    """The three targets of issue 16 item 3, and the values' agreement."""
    s = f"[{lines:,} lines, whole process]"
    te, cli, cli_numpy = rows
    out = []
    for row, limit in ((cli, SPEED_TARGET), (cli_numpy, SPEED_TARGET_NUMPY)):
        ratio = row.best / te.best
        per_round = ", ".join(f"{a / b:.2f}" for a, b in zip(row.seconds, te.seconds,
                                                               strict=True))
        out.append(target_class(
            f"{s} {row.name} wall time <= {limit:g}x trec_eval's", ratio <= limit,
            f"{ratio:.2f}x ({row.best:.3f} s vs {te.best:.3f} s; rounds {per_round})"))
    ratio = cli.peak / te.peak
    out.append(target_class(
        f"{s} {cli.name} peak RSS <= {MEMORY_TARGET:g}x trec_eval's",
        ratio <= MEMORY_TARGET,
        f"{ratio:.2f}x ({cli.peak:.1f} MiB vs {te.peak:.1f} MiB; without pyarrow "
        f"{cli_numpy.peak:.1f} MiB, {cli_numpy.peak / te.peak:.2f}x)"))
    for row in (cli, cli_numpy):
        same = row.values == te.values and bool(te.values)
        differ = sorted(k for k in te.values.keys() | row.values.keys()
                        if te.values.get(k) != row.values.get(k))
        out.append(target_class(
            f"{s} {row.name} prints trec_eval's values", same,
            f"{len(te.values)} measures identical" if same else f"differ: {differ}"))
    return out
