"""swap: a working set larger than guest RAM in a family of N processes
(shared COW pages, private pages, pages of exited parents): the mean
rmap walk under reclaim, rmap work per page, pages swapped out per
second, faults (bench/rmb-swap.c); fio's write ceiling of the same swap
device (fio.py) is drawn beside host-clock swap-out rates.  Its
boots are sampled every second for the swap-out timeline, and the
swap-mem sweep gives the report's memory-size recommendation.
"""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import figures as fg
from .. import stats, testbed
from ..record import is_failed, metric_values
from ..record import swapped_out as pswpout
from ..settings import with_setting
from ..testbed import BASE, ICOUNT, ICOUNT_RR, NEW
from ..tables import cell, fmt, params_text, table
from .base import (FORK_ORDERS, NEUTRAL, Crossover, Experiment, Figure, Mode,
                   SizeSearch, Workload, metric)

PAGE_KB = 4          # fio's kB/s -> pages/s
# the family swap-mem and the size searches run, and its 'compare --full'
FAMILY = {"N": 4, "mb": 64, "passes": 2}
FULL_FAMILY = {"N": 4, "mb": 256, "passes": 2}
# A family's pages are walked round its bundle's list, but its ratios
# under either fork order of anonmm agree within their intervals
# (docs/measurements.md, "The bundle list order"): each experiment boots
# the other order (FORK_ORDERS) in 'compare --full' only


def fio_ceiling(records: list[dict]) -> dict[str, float]:
    """arch -> fio's 4k write throughput in pages/s (mean of its runs)."""
    out = {}
    recs = [r for r in records if r.get("workload") == "fio"
            and not is_failed(r)]
    for arch in fg.arches(recs):
        s = fg.summary_of([r for r in recs if r.get("arch") == arch],
                          fg.metric("write_bw_kb_per_s", 1 / PAGE_KB))
        if s is not None:
            out[arch] = s.mean
    return out


def plot_swap(records: list[dict], out_dir: Path, experiment: str,
              x: Callable[[dict], Any], x_skip: str, xlabel: str,
              title: str) -> list[Path]:
    """Per arch: the mean rmap walk (the headline) and the swap-out
    throughput (context), one line per stack and clock; fio's ceiling
    (host clock) only beside host-clock rates, the one clock it
    bounds."""
    recs = fg.select(records, experiment, "swap")
    if not recs:
        return fg.skipped(experiment, f"no records of experiment {experiment}")
    plt = fg._pyplot()
    archs = fg.arches(recs)
    fig, axes = plt.subplots(len(archs), 2, squeeze=False,
                             figsize=(13, 5 * len(archs)))
    ceiling = fio_ceiling(records)
    labels = fg.stack_labels(records)
    for arch, (ax1, ax2) in zip(archs, axes):
        mine = [r for r in recs if r.get("arch") == arch]
        clocks = sorted({str(r.get("clock") or testbed.HOST)
                         for r in mine})
        bound = arch in ceiling and testbed.HOST in clocks
        for ax, name, what, ylabel in (
                (ax1, "walk_mean_ns", "mean rmap walk under reclaim",
                 "ns per walk"),
                (ax2, "swapout_per_s", "swap-out throughput, context",
                 "pages swapped out per second")):
            data = fg.series(mine, x, fg.metric(name),
                             skip=(x_skip, "arch"))
            fg.draw_series(ax, data, labels)
            if ax is ax2 and bound:
                ax.axhline(ceiling[arch], color="black", linestyle="--",
                           linewidth=1, label=f"fio 4k write ceiling, host "
                           f"clock ({ceiling[arch]:,.0f} pages/s)")
            fg.log_x_if_wide(ax, data)
            ax.set_ylim(bottom=0)
            fg.finish(ax, f"{title}: {what} ({', '.join(clocks)} clock, "
                      f"{arch})", xlabel, ylabel)
    fig.tight_layout()
    return fg.save(fig, out_dir, experiment)


def plot_swap_mem(records: list[dict], out_dir: Path) -> list[Path]:
    return plot_swap(records, out_dir, "swap-mem",
                     lambda r: r.get("mem_mb"), "mem", "guest memory (MB)",
                     "Memory size")


def plot_swap_family(records: list[dict], out_dir: Path) -> list[Path]:
    return plot_swap(records, out_dir, FAMILY_ZRAM.name, fg.param("N"), "N",
                     "processes in the family (N)",
                     "Family size")


def plot_swap_smp(records: list[dict], out_dir: Path) -> list[Path]:
    """The same family on 1 and 2 vCPUs: swap-out throughput and rmap
    visits per swapped page."""
    recs = fg.select(records, "swap-smp", "swap")
    if not recs:
        return fg.skipped("swap-smp", "no records of experiment swap-smp")
    plt = fg._pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    cells = fg.cells_by(recs, fg.clock_vcpus)
    labels = [fg.clock_vcpus_label(k) for k in cells]
    fg.draw_grouped(ax1, cells, labels, fg.metric("swapout_per_s"))
    fg.finish(ax1, "Swap-out throughput, 1 and 2 vCPUs (x86_64)",
              "guest clock and vCPUs", "pages swapped out per second")
    fg.draw_grouped(ax2, cells, labels,
                    fg.metric("anon_rmap_visit_per_swapout_count"))
    fg.finish(ax2, "rmap visits per swapped page", "guest clock and vCPUs",
              "visits per page")
    fg.stack_legend(fig, fg.stack_labels(records))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fg.save(fig, out_dir, "swap-smp")


def timeline(samples: list[dict], name: str) -> tuple[list, list]:
    """Seconds since the first sample, and name's growth since then."""
    rows = [s for s in samples if "t_ms" in s and name in s]
    if len(rows) < 2:
        return [], []
    t0, v0 = rows[0]["t_ms"], rows[0][name]
    return ([(r["t_ms"] - t0) / 1000 for r in rows],
            [r[name] - v0 for r in rows])


def plot_swap_timeline(records: list[dict], out_dir: Path) -> list[Path]:
    recs = [r for r in fg.select(records, "swap-mem", "swap")
            if r.get("rep") == 0 and r.get("samples")]
    if not recs:
        return fg.skipped("swap-timeline", "no sampled swap-mem records")
    plt = fg._pyplot()
    labels = fg.stack_labels(records)
    sizes = sorted({r["mem_mb"] for r in recs})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4.5),
                             squeeze=False)
    for ax, mem in zip(axes[0], sizes):
        for rec in (r for r in recs if r["mem_mb"] == mem):
            x, y = timeline(rec["samples"], "pswpout")
            ax.plot(x, y, color=fg.colour(rec["stack"]),
                    label=labels.get(rec["stack"], rec["stack"]))
        fg.finish(ax, f"Pages swapped out over time ({mem} MB guest)",
                  "time since the first sample (s)", "pswpout (pages)")
    fig.tight_layout()
    return fg.save(fig, out_dir, "swap-timeline")


# --- the memory-size recommendation (a report section) --------------------

def swap_groups(records: list[dict]) -> dict[tuple, dict[int, list[dict]]]:
    """(arch, params text) -> mem_mb -> swap-mem records (failed too)."""
    out: dict[tuple, dict[int, list[dict]]] = {}
    for rec in records:
        if rec.get("experiment") == "swap-mem" and \
                rec.get("workload") == "swap":
            key = (str(rec.get("arch")), params_text(
                {k: v for k, v in (rec.get("params") or {}).items()
                 if k != "seed"}))
            out.setdefault(key, {}).setdefault(
                int(rec.get("mem_mb") or 0), []).append(rec)
    return out


def no_swap_from(sizes: dict[int, list[dict]], stack: str) -> int | None:
    """The smallest memory size at which no measured boot of stack
    swapped out a page (pswpout_pages == 0)."""
    for mem in sorted(sizes):
        vals = [pswpout(r) for r in sizes[mem] if r.get("stack") == stack
                and not is_failed(r)]
        vals = [v for v in vals if v is not None]
        if vals and all(v == 0 for v in vals):
            return mem
    return None


def swap_cell(recs: list[dict], stack: str) -> list[str]:
    mine = [r for r in recs if r.get("stack") == stack]
    ok = [r for r in mine if not is_failed(r)]
    nfail = len(mine) - len(ok)
    s = stats.summarize(metric_values(ok, "swapout_per_s"))
    swapped = [v for v in (pswpout(r) for r in ok) if v is not None]
    state = "—" if not swapped else (
        "no swap" if all(v == 0 for v in swapped) else "swaps")
    return [cell(s, nfail), state if ok else ""]


def memory_recommendation(records: list[dict]) -> list[str]:
    out = ["## Memory-size recommendation (swap-mem)", ""]
    groups = swap_groups(records)
    if not groups:
        return out + ["Not measured.", ""]
    for (arch, ptext), sizes in sorted(groups.items()):
        out += [f"**{arch}**, swap {ptext}:", ""]
        for stack in (BASE, NEW):
            out.append("- " + recommend(stack, sizes))
        rows = [[f"{mem} MB"] + swap_cell(sizes[mem], BASE) +
                swap_cell(sizes[mem], NEW) for mem in sorted(sizes)]
        out += [""] + table(["guest memory", f"{BASE} swap-out (pages/s)",
                             BASE, f"{NEW} swap-out (pages/s)", NEW],
                            rows) + [""]
    return out


def sizing(records: list[dict]) -> list[str]:
    """The decision section's advice: recommend() per stack, of each
    swap-mem family measured."""
    return [f"{arch}, swap {ptext}: {recommend(stack, sizes)}"
            for (arch, ptext), sizes in sorted(swap_groups(records).items())
            for stack in (BASE, NEW)]


def mean0(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def recommend(stack: str, sizes: dict[int, list[dict]]) -> str:
    measured = {mem: [r for r in recs if r.get("stack") == stack
                      and not is_failed(r)]
                for mem, recs in sizes.items()}
    measured = {m: rs for m, rs in measured.items() if rs}
    if not measured:
        return f"{stack}: not measured."
    mem = no_swap_from(sizes, stack)
    rates = {m: mean0(metric_values(rs, "swapout_per_s"))
             for m, rs in measured.items()}
    best = max(rates, key=lambda m: rates[m])
    rate = rates[best]
    fastest = f"fastest swap-out at {best} MB ({fmt(rate)} pages/s)" \
        if rate > 0 else "no size swapped out a page"
    if mem is None:
        return (f"{stack}: swaps at every size tried (up to "
                f"{max(measured)} MB); {fastest}. Give it more memory to "
                f"stop swapping.")
    tried = f"sizes tried: {', '.join(str(m) for m in sorted(measured))} MB"
    below = [m for m in measured if m < mem]
    if not below:
        return (f"{stack}: no swap-out from {mem} MB, the smallest size "
                f"({tried}): {mem} MB is enough for a run that must not "
                f"swap; {fastest}.")
    return (f"{stack}: swap-out at {max(below)} MB, none at {mem} MB "
            f"({tried}): a run that must not swap needs more than "
            f"{max(below)} MB, and {mem} MB is enough (a size search "
            f"narrows it to 16 MB); {fastest}.")


def family_search(name: str, family: dict, lo: int, hi: int,
                  full_only: bool = False) -> SizeSearch:
    """The no-swap size of a swapping family, to 16 MB, on icount."""
    passes = family["passes"]
    times = {1: "once", 2: "twice"}.get(passes, f"{passes} times")
    return SizeSearch(
        Experiment(name, "swap", "family", ("x86_64",), fixed=family,
                   timeout_s=900.0, clocks=(ICOUNT,)),
        "no-swap", lo, hi, 16,
        f"a family of {family['N']} swapping {family['mb']} MB {times} "
        "(icount clock)", full_only)


FAMILY_EXP = Experiment(
    "swap-family", "swap", "family", ("x86_64",),
    sweep={"N": [1, 4, 16]}, fixed={"mb": 64, "passes": 2},
    mem_mb={"x86_64": [64]}, timeout_s=900.0,
    clocks=(ICOUNT,), max_reps=3,
    full={"fixed": {"mb": 256, "passes": 2},
          "mem_mb": {"x86_64": [192]},
          "clocks": (ICOUNT, testbed.HOST),
          "variants": FORK_ORDERS},
    text="a swapping family as it grows: the rmap walk under reclaim, "
         "swap-out throughput")
# The family that decides swaps to zram: with no host I/O in the guest's
# time its mean walk and swap-out rate repeat between icount boots far
# more closely than on the disk (docs/measurements.md, "Repeatable
# pressure and SMP").  On the disk it stays at N = 4 as context, the
# point swap-mem boots anyway (one boot serves both).
FAMILY_ZRAM = with_setting(FAMILY_EXP, "zram")
FAMILY_DISK = replace(FAMILY_EXP, sweep={"N": [4]})

WORKLOAD = Workload(
    "swap", "rmb-swap",
    # The mean walk decides, as in the bundles: on the icount clock it is
    # the instructions one rmap walk of reclaim takes, and it repeats far
    # more closely between boots than the swap-out rate of the same
    # boots (icount: the timer jumps of a guest waiting on its disk;
    # host: the host's I/O and load)
    modes=(Mode("family", (
        metric("walk_mean_ns", "mean time of one rmap walk under reclaim",
               "ns/walk"),
        metric("walk_slept_per_walk_count", "share of rmap walks switched "
               "out (timed apart: not in the mean walk)", "walks/walk",
               NEUTRAL),
        metric("walk_slept_mean_ns", "mean time of a switched-out rmap "
               "walk (other tasks' time included)", "ns/walk", NEUTRAL),
        metric("swapout_per_s", "swap-out throughput", "pages/s", NEUTRAL),
        metric("passes_ns", "time of the passes", "ns", NEUTRAL),
        metric("anon_rmap_visit_per_swapout_count",
               "rmap visits per swapped page", "visits/page"),
        metric("anon_rmap_pte_per_swapout_count",
               "ptes examined per swapped page", "ptes/page"),
        metric("members_majflt_count", "major faults of the members",
               "faults"),
        metric("anon_swapin_copy_pages", "pages copied at swap-in", "pages"),
        metric("anon_rmap_orphan_pages", "orphan pages re-pointed", "pages",
               NEUTRAL)), main=(FAMILY_ZRAM.name,), regime="reclaim"),),
    experiments=(
        # 64 MB of data, within the default comparison's time: guests
        # of 64, 80 and 112 MB swap heavily, lightly and not at all;
        # 'compare --full' swaps 256 MB of data in larger guests
        Experiment("swap-mem", "swap", "family", ("x86_64",),
                   fixed=FAMILY,
                   mem_mb={"x86_64": [64, 80, 112]}, timeout_s=900.0,
                   clocks=(ICOUNT,), max_reps=3,
                   full={"fixed": FULL_FAMILY,
                         "mem_mb": {"x86_64": [160, 224, 384]},
                         "clocks": (ICOUNT, testbed.HOST),
                         "variants": FORK_ORDERS},
                   text="a swapping family across guest memory sizes"),
        FAMILY_ZRAM,
        FAMILY_DISK,
        # the family of 4 with each guest setting of the distro kernels
        # that changes reclaim: in a memory cgroup and with MGLRU off on
        # zram, as the headline; zswap on the disk it writes back to
        *(with_setting(FAMILY_ZRAM, s, name=f"{FAMILY_EXP.name}-{s}",
                       sweep={"N": [4]}, full={})
          for s in ("memcg", "classic")),
        with_setting(FAMILY_EXP, "zswap", sweep={"N": [4]}, full={}),
        # the family on 1 and 2 vCPUs, as small as swap-mem's, 80 MB:
        # the guest in which it swaps lightly.  On the icount-rr clock
        # and zram a boot replays for its seed, so the 2-vCPU row decides
        # beside the one-vCPU ones; 'compare --full' adds the host clock (each
        # boot runs alone), where the vCPUs run at once
        with_setting(Experiment(
            "swap-smp", "swap", "family", ("x86_64",), fixed=FAMILY,
            mem_mb={"x86_64": [80]}, vcpus=(1, 2), timeout_s=900.0,
            max_reps=3, clocks=(ICOUNT_RR,),
            full={"clocks": (ICOUNT_RR, testbed.HOST),
                  "variants": FORK_ORDERS},
            text="a swapping family of 4 on 1 and on 2 vCPUs"),
            "zram", name="swap-smp")),
    # swap-mem samples three sizes; the searches bisect the no-swap
    # point to 16 MB (the default's family, and in 'compare --full' the
    # 256 MB family too)
    searches=(
        family_search("size-swap-family", FAMILY, 64, 128),
        family_search("size-swap-family-256", FULL_FAMILY, 160, 416,
                      full_only=True)),
    figures=(
        Figure("swap-mem", ("swap-mem", "swap-ceiling"), plot_swap_mem),
        Figure(FAMILY_ZRAM.name, (FAMILY_ZRAM.name,), plot_swap_family),
        Figure("swap-smp", ("swap-smp",), plot_swap_smp),
        Figure("swap-timeline", ("swap-mem",), plot_swap_timeline)),
    sample_s=1,
    sections=(memory_recommendation,),
    crossovers=(Crossover(FAMILY_ZRAM.name, "N", "walk_mean_ns", 5.0,
                          "the family size N at which anonmm's rmap walk "
                          "under reclaim takes more than 5% longer than "
                          "anon_vma's"),),
    sizing=sizing,
    order=40)
