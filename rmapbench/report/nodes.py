"""Where a run's boots ran (each stored boot names its node): a
host-clock configuration whose boots came from more than one machine
(a Slurm run over rounds or resubmissions, jobarray.py) compares
numbers of different hosts, and the report says so."""

from ..record import ConfigKey, config_key, is_failed
from ..testbed import HOST


def split_points(boots: list[dict]) -> dict[ConfigKey, set[str]]:
    """The host-clock configurations whose boots name more than one
    node, with those nodes (boots naming none: older runs, left out)."""
    seen: dict[ConfigKey, set[str]] = {}
    for boot in boots:
        node = boot.get("node")
        for rec in boot.get("records") or []:
            if node and not is_failed(rec) and \
                    (rec.get("clock") or HOST) == HOST:
                seen.setdefault(config_key(rec), set()).add(node)
    return {c: nodes for c, nodes in seen.items() if len(nodes) > 1}


def warnings(boots: list[dict]) -> list[str]:
    split = split_points(boots)
    if not split:
        return []
    first = min(split, key=lambda c: c.label())
    return [f"> **WARNING: {len(split)} host-clock configuration(s) were "
            "measured on more than one machine**, so their stacks' "
            "timings are not from one host: e.g. "
            f"{first.experiment} {first.label()} on "
            f"{', '.join(sorted(split[first]))}.  Rerun them on one node "
            "(a --slurm run keeps a point's boots of one round on one "
            "node).", ""]
