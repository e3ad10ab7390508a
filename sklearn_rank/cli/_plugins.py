"""``--plugin MODULE``: import modules that register metrics before a command runs.

A plugin is a Python module that calls
:func:`sklearn_rank.metrics.register_metric` when imported; ``--plugin`` names
it by its dotted path (found on ``sys.path``, ``PYTHONPATH`` and the current
directory) or by the path of its ``.py`` file. Installed packages need no
option: their entry points (group ``sklearn_rank.metrics``) load when one of
their names is first used. A module that cannot be imported, for whatever
reason (not found, a syntax error, an exception while it runs), is one line
on stderr and exit status 2, like every bad input.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from ._support import CommandError

__all__ = ["add_plugin_option", "load_plugins"]


def add_plugin_option(parser) -> None:
    """The repeatable ``--plugin`` option of a command."""
    parser.add_argument("--plugin", action="append", dest="plugins", default=[],
                        metavar="MODULE",
                        help="import MODULE first (repeatable): a module, by its dotted "
                             "path or the path of its .py file, that registers metrics "
                             "with sklearn_rank.metrics.register_metric")


def _import(name: str):
    if name.endswith(".py"):
        if not os.path.isfile(name):
            raise FileNotFoundError(f"no such file: {name}")
        module_name = os.path.splitext(os.path.basename(name))[0]
        spec = importlib.util.spec_from_file_location(module_name, name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # as ``python -m`` finds modules of the directory
    return importlib.import_module(name)


def load_plugins(names) -> None:
    """Import every ``--plugin`` module, in order; a failure is a
    :class:`~sklearn_rank.cli._support.CommandError` naming the module."""
    for name in names:
        try:
            _import(name)
        except (Exception, SystemExit) as exc:  # a plugin's own code may raise anything
            message = " ".join(str(exc).split()) or "no message"
            raise CommandError(f"cannot import the plugin: {type(exc).__name__}: {message}",
                               ("--plugin", name)) from None
