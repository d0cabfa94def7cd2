"""The interpreter check that runs before a command plans or boots.

The statistics, plots and report import third-party modules lazily, so
an interpreter without them (a venv's or pyenv's python3 first on PATH)
would otherwise boot every kernel and fail only at the report.  The
commands that lead to a report check first and refuse in one line.
"""

import importlib
import importlib.util
import os
import sys

from .errors import UserError

# What rmapbench/ imports beyond the standard library: scipy.stats
# (stats.py), matplotlib and its pyplot, ticker and patches (figures.py);
# both import numpy, listed apart so that its absence is named itself.
MODULES = ("numpy", "scipy", "scipy.stats", "matplotlib",
           "matplotlib.pyplot", "matplotlib.ticker", "matplotlib.patches")

# The interpreter harness.py's first line names, the one `make setup`
# installs the Debian packages for.
SYSTEM_PYTHON = "/usr/bin/python3"


def problem(name: str) -> str | None:
    """Why name cannot be imported ("" when it is absent), or None when
    it can.

    find_spec answers for an absent module without importing it; a
    top-level package is imported too, since one that is present but
    broken (or shadowed by a stub that raises) is found all the same.
    A dotted name's find_spec imports its parents, which may raise.
    """
    try:
        if importlib.util.find_spec(name) is None:
            return ""
        if "." not in name:
            importlib.import_module(name)
    except Exception as err:  # any failure of a third-party import
        return f"{name} does not import ({one_line(err)})"
    return None


def problems(modules: tuple[str, ...] = MODULES) -> str | None:
    """Every module that cannot be imported, in one phrase, or None.
    A package's submodules are not tried once the package failed."""
    absent: list[str] = []
    broken: list[str] = []
    failed: list[str] = []
    for name in modules:
        if any(name.startswith(f"{f}.") for f in failed):
            continue
        why = problem(name)
        if why is not None:
            failed.append(name)
            (broken if why else absent).append(why or name)
    if absent:
        broken.insert(0, f"no module named {', '.join(absent)}")
    return "; ".join(broken) or None


def one_line(err: BaseException) -> str:
    """The exception's type and the first line of its message (numpy's
    import errors run to a page)."""
    text = str(err).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


def fix(command: str) -> str:
    """What to do: the system interpreter, or its packages when it is the
    one that ran."""
    if os.path.realpath(sys.executable) == os.path.realpath(SYSTEM_PYTHON):
        return "make setup installs the Debian packages"
    return (f"run {SYSTEM_PYTHON} harness.py {command} ... (or ./harness.py "
            f"{command} ...), after make setup if it lacks them too")


def require(command: str, modules: tuple[str, ...] = MODULES) -> None:
    """Raise a one-line UserError when the running interpreter lacks one
    of modules: which, which interpreter, and what to do instead."""
    found = problems(modules)
    if found:
        raise UserError(f"{found} in {sys.executable} (the statistics, "
                        f"plots and report import them): {fix(command)}")
