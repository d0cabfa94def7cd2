"""The package's imports form no loop: every import of every module of
rmapbench/, at the top or inside a function, and the modules a package
imports by importlib, are edges of one graph, and the graph is acyclic.
And the report reads results without loading the code that boots.

A submodule's implicit import of its parent package is no edge: Python
only needs the parent started, not finished, so a package importing its
own modules (workloads/__init__.py) is no loop.
"""

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rmapbench"

# Modules whose importlib calls name no module of the package, and why.
OUTSIDE = {"rmapbench.preflight": "tries the third-party modules of its "
                                  "MODULES"}


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, packages by their __init__.py."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def known(name: str, modules: dict[str, Path]) -> str | None:
    """The module of the package that importing name runs, if any."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def targets(node: ast.AST, here: str, is_package: bool) -> list[str]:
    """The dotted names an import statement imports, attributes of a
    module included (known() cuts them back to their module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        parts = here.split(".")[:len(here.split(".")) - (not is_package)]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" for a in node.names]


def dynamic(call: ast.Call, here: str, modules: dict[str, Path]
            ) -> list[str] | None:
    """What an importlib.import_module call imports: a constant name,
    or every module of this package for f"{__name__}.{...}"; None when
    the call names no module of the package the test can see."""
    arg = call.args[0] if call.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.JoinedStr) and arg.values and \
            isinstance(arg.values[0], ast.FormattedValue) and \
            getattr(arg.values[0].value, "id", "") == "__name__":
        return [m for m in modules if m.rpartition(".")[0] == here]
    return None


def imports(here: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module of the package that here imports."""
    is_package = path.name == "__init__.py"
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names += targets(node, here, is_package)
        elif isinstance(node, ast.Call) and \
                getattr(node.func, "attr", "") == "import_module":
            found = dynamic(node, here, modules)
            assert found is not None or here in OUTSIDE, \
                f"{here}: an importlib call the graph cannot follow"
            names += found or []
    return {m for m in map(lambda n: known(n, modules), names)
            if m and m != here}


def graph() -> dict[str, set[str]]:
    modules = module_files()
    return {m: imports(m, p, modules) for m, p in modules.items()}


def test_the_import_graph_is_acyclic():
    try:
        tuple(TopologicalSorter(graph()).static_order())
    except CycleError as err:    # args[1]: each node after its importer
        loop = " imports ".join(reversed(err.args[1]))
        raise AssertionError(f"an import loop: {loop}") from None


def test_the_graph_sees_every_kind_of_import():
    g = graph()
    assert "rmapbench.workloads.vma" in g["rmapbench.workloads"]
    assert "rmapbench.sizing" in g["rmapbench.cli"]        # in a function
    assert "rmapbench.stats" in g["rmapbench.analysis"]    # from . import
    assert g["rmapbench.stats"] == set()                   # mathematics


# What boots guests: a report of stored results needs none of it.
BOOT_STACK = ("runner", "executor", "guest", "qemu", "image", "kbuild",
              "sizing", "repetitions", "experiments")


def imported_by(name: str, g: dict[str, set[str]]) -> set[str]:
    """Every module importing name loads, directly or not."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        for m in g[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return seen


def test_the_report_does_not_load_the_boot_stack():
    loads = imported_by("rmapbench.report", graph())
    assert not loads & {f"rmapbench.{m}" for m in BOOT_STACK}


# docs/architecture.md's layers, top first: a module imports only from
# its own layer and those after it.
LAYERS = (
    ("cli", "clislurm", "cliargs"),
    ("status", "checkarray", "jobarray",
     "runner", "sizing", "reparse", "smoke", "check", "repetitions",
     "environment", "executor", "guest", "qemu", "experiments"),
    ("report", "plots", "analysis", "metrics"),
    ("workloads",),
    ("figures", "tables", "record", "store", "phases", "image", "extras",
     "debs", "qemusuite", "benchbuild", "kbuild", "debconfig", "programs",
     "iface",
     "testbed",
     "profiles", "settings",
     "scratch", "console", "plan", "stats", "paths", "errors", "progress",
     "postmortem", "preflight", "slurm"),
)


def layer(module: str) -> int:
    """The index in LAYERS of a module (a package's modules: its own)."""
    top = module.split(".")[1] if "." in module else ""
    return next((i for i, names in enumerate(LAYERS) if top in names), -1)


def test_imports_point_down_the_layers():
    g = graph()
    unplaced = [m for m in g if m != "rmapbench" and layer(m) < 0]
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"
    upward = [(m, n) for m, targets in g.items() for n in targets
              if m != "rmapbench" and layer(n) < layer(m)]
    assert not upward, f"imports of a higher layer: {upward}"
