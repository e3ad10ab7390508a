"""Helpers shared by the benchmark scripts (run as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import dataclass
from importlib import metadata


@dataclass
class Target:
    name: str
    passed: bool | None  # None: could not be checked
    detail: str


def print_targets(targets: list[Target]) -> None:
    print("\nTargets")
    for t in targets:
        status = {True: "PASS", False: "FAIL", None: "N/A "}[t.passed]
        print(f"{status}  {t.name}: {t.detail}")


def fmt(value, spec: str, width: int) -> str:
    """``value`` formatted with ``spec``, right-aligned; ``-`` for None."""
    return f"{'-' if value is None else format(value, spec):>{width}}"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "n/a"


def environment(*distributions: str) -> dict:
    """Python, platform, CPU count and the versions of ``distributions``."""
    info = {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpus": os.cpu_count()}
    for dist in distributions:
        try:
            info[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            info[dist] = None
    return info


def dump_json(path: str, payload: dict) -> None:
    """Write ``payload`` as indented JSON and say so."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2)
    print(f"\nwrote {path}")
