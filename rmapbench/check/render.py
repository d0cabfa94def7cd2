"""The suite's outputs: the table of verdicts (Markdown and plain) and
the comparison of the stacks' verdicts."""

from pathlib import Path

from .. import testbed
from ..progress import fmt_seconds
from .boots import BOOT_ROWS
from .catalogue import Test
from .verdict import FAIL, PASS, Verdict, kernel_name


def order(tests: list[Test], boots: list[str]) -> list[str]:
    """The table's rows: the tests, then each boot's checks (a boot is
    named after its group)."""
    names = [t.name for t in tests]
    for name in boots:
        names += [f"{name}: {row}" for row in BOOT_ROWS]
    return names


def verdict_mismatches(verdicts: list[Verdict], stacks: list[str],
                       arches: list[str]) -> list[str]:
    """Tests whose verdict on the new stack differs from the base's
    (same arch)."""
    base, new = testbed.BASE, testbed.NEW
    if not {base, new} <= set(stacks):
        return []
    table = {(v.test, v.kernel): v.verdict for v in verdicts}
    out = []
    for test in sorted({v.test for v in verdicts}):
        for arch in arches:
            a = table.get((test, kernel_name(base, arch)))
            b = table.get((test, kernel_name(new, arch)))
            if a != b:
                out.append(f"{test} on {arch}: {base} {a}, {new} {b}")
    return out


def markdown(verdicts: list[Verdict], kernels: list[str], rows: list[str],
             meta: dict, mismatches: list[str]) -> str:
    table = {(v.test, v.kernel): v for v in verdicts}
    schemes = meta.get("schemes", {})
    head = [f"{k} (runs {schemes[k]})" if schemes.get(k) not in
            (None, k.split("/")[0]) else k for k in kernels]
    variant = meta.get("variant", "none")
    lines = [f"# rmapbench correctness suite ({meta['suite']}"
             + ("" if variant == "none" else f", variant {variant}") + ")",
             "",
             f"{meta['date']}, accel {meta['accel']}, "
             f"{fmt_seconds(meta['seconds'])} in {meta['boots']} boots.", "",
             "| test | " + " | ".join(head) + " |",
             "|---|" + "---|" * len(kernels)]
    for row in rows:
        cells = []
        for k in kernels:
            v = table.get((row, k))
            cells.append("" if v is None else
                         {"pass": "pass", "fail": "**FAIL**",
                          "skip": "skip"}[v.verdict] +
                         ("*" if v and v.verdict == PASS and v.reason else ""))
        if any(cells):
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
    notes = [v for v in verdicts if v.verdict != PASS or v.reason]
    if notes:
        lines += ["", "## Not plain passes", ""]
        for v in sorted(notes, key=lambda v: (rows.index(v.test)
                                              if v.test in rows else 999,
                                              v.kernel)):
            mark = "pass*" if v.verdict == PASS else v.verdict
            lines.append(f"- {v.test} on {v.kernel}: {mark}: {v.reason}")
    lines += ["", f"## {testbed.NEW} against {testbed.BASE}", ""]
    lines.append("Every test has the same verdict on both stacks."
                 if not mismatches else
                 "Verdicts differ: " + "; ".join(mismatches))
    lines += ["", "Consoles: " + ", ".join(
        f"`{Path(b['log']).name}`" for b in meta["boot_info"]), ""]
    return "\n".join(lines)


def plain_table(verdicts: list[Verdict], kernels: list[str],
                rows: list[str]) -> str:
    table = {(v.test, v.kernel): v.verdict for v in verdicts}
    width = max(len(r) for r in rows) if rows else 10
    cols = [max(len(k), 4) for k in kernels]
    out = ["  ".join([" " * width] + [k.ljust(c) for k, c in
                                      zip(kernels, cols)])]
    for row in rows:
        cells = [table.get((row, k), "") for k in kernels]
        if any(cells):
            out.append("  ".join([row.ljust(width)] + [
                (c.upper() if c == FAIL else c).ljust(w)
                for c, w in zip(cells, cols)]))
    return "\n".join(out)
