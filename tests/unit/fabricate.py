"""Fabricated records.jsonl dicts and metadata for the stats, plot and
report tests: every experiment, both stacks, both arches, no QEMU.

Values are made up but shaped like the real thing: slab bytes per VMA
are exact, timings carry noise from a seeded random generator, and the
anonmm kernel (when it runs anonmm) has smaller VMAs, no anon_vma_chain,
slower swap-out of big families and copies shared pages on mremap.
With orders, anonmm also runs anonmm_fork_order=after_parent (a stack
variant) in the fork, swap and bundle experiments, where its pair
pages are found next to the worker, as anon_vma finds them.
"""

import json
import random
from typing import Any

from rmapbench import workloads
from rmapbench.testbed import HOST

RUN_ID = "20250101-000000-abcdef12"
ARCHES = ("i386", "x86_64")
STACKS = ("anon_vma", "anonmm")
FAILURE_EXCERPT = ("[  12.345678] BUG: Bad rss-counter state mm:c1234567 "
                   "type:MM_ANONPAGES val:98765\n[  12.345999] Call Trace:")
FAILURE = "kernel fault (BUG) at console line 512"
AFTER_PARENT = "anonmm_fork_order=after_parent"
EXPERIMENTS = ("vma-cost", "lowmem", "capacity", "fork-breadth", "fork-depth",
               "fork-rate", "mremap-unshared", "mremap-shared",
               "mremap-swapped", "swap-mem", "swap-family",
               "swap-family-zram", "swap-ceiling",
               "bundle-private", "bundle-pair", "bundle-shared",
               "fork-chain", "swap-smp")


def record(experiment: str, stack: str, arch: str, workload: str, mode: str,
           params: dict, metrics: dict, *, rep: int = 0, mem_mb: int = 512,
           record_kind: str = "summary", scheme: str | None = None,
           accel: str = "tcg") -> dict:
    boot = f"{experiment}-{stack}-{arch}-{mem_mb}-{workload}-{mode}-" \
           f"{'-'.join(f'{k}{v}' for k, v in sorted(params.items()))}-r{rep}"
    rec = {"run_id": RUN_ID, "experiment": experiment, "stack": stack,
           "scheme": scheme or stack, "arch": arch, "mem_mb": mem_mb,
           "workload": workload, "mode": mode, "record": record_kind,
           "params": dict(params), "rep": rep, "boot": boot,
           "accel": accel, "failed": False, "metrics": dict(metrics)}
    # on the clock the workload runs the experiment on, as a run would
    clock = workloads.own_clock(experiment)
    if clock != HOST:
        rec["clock"] = clock
    # and with its kernel arguments (its guest settings: zram, say)
    found = [e.append for e in workloads.experiments()
             if e.name == experiment and e.append]
    if found:
        rec["kernel_args"] = found[0]
    return rec


def failed(experiment: str, stack: str, arch: str, workload: str, mode: str,
           params: dict, *, rep: int = 0, mem_mb: int = 512,
           failure: str = FAILURE, excerpt: str = FAILURE_EXCERPT) -> dict:
    rec = record(experiment, stack, arch, workload, mode, params, {},
                 rep=rep, mem_mb=mem_mb, scheme="unknown")
    rec.update(failed=True, failure=failure, excerpt=excerpt)
    return rec


class Fab:
    """Builds a run; anonmm_scheme is what the anonmm kernel says."""

    def __init__(self, reps: int = 3, anonmm_scheme: str = "anonmm",
                 seed: int = 1) -> None:
        self.reps = reps
        self.anonmm_scheme = anonmm_scheme
        self.rng = random.Random(seed)
        self.records: list[dict] = []
        self.variant = ""       # the stack variant anonmm's boots run

    def is_anonmm(self, stack: str) -> bool:
        return stack == "anonmm" and self.anonmm_scheme == "anonmm"

    def scheme(self, stack: str) -> str:
        return self.anonmm_scheme if stack == "anonmm" else stack

    def noisy(self, value: float, rel: float = 0.03) -> float:
        return round(value * (1 + self.rng.gauss(0, rel)), 3)

    def add(self, experiment: str, stack: str, arch: str, workload: str,
            mode: str, params: dict, make, mem_mb: int = 512,
            record_kind: str = "summary", vcpus: int = 1) -> None:
        for rep in range(self.reps):
            rec = record(
                experiment, stack, arch, workload, mode, params, make(rep),
                rep=rep, mem_mb=mem_mb, record_kind=record_kind,
                scheme=self.scheme(stack))
            if vcpus != 1:
                rec["vcpus"] = vcpus
                rec["boot"] += f"-smp{vcpus}"
            if self.variant:
                rec["variant"] = self.variant
                rec["boot"] += f"-{self.variant}"
            self.records.append(rec)

    # --- per-VMA structure bytes -----------------------------------
    def vma_bytes(self, stack: str, arch: str, kind: str) -> dict[str, float]:
        wide = arch == "x86_64"
        mm = self.is_anonmm(stack)
        vma = (184 if wide else 96) - ((24 if wide else 12) if mm else 0)
        out = {"vm_area_struct": vma, "maple_node": 12.5 if wide else 8.25,
               "anon_vma": 0.0, "anon_vma_chain": 0.0, "anonmm": 0.0}
        if not mm:
            out["anon_vma_chain"] = 64 if wide else 32
            out["anon_vma"] = (88 if wide else 44) if kind == "gap" else 0.01
        else:
            out["anonmm"] = 0.004
        return out

    def vma_count_metrics(self, stack: str, arch: str, kind: str,
                          v: int) -> dict:
        per = self.vma_bytes(stack, arch, kind)
        m = {f"slab_{c}_per_vma_bytes": b for c, b in per.items()}
        m["slab_total_per_vma_bytes"] = sum(per.values())
        m["page_tables_per_vma_bytes"] = 4.1
        low = m["slab_total_per_vma_bytes"] + 4.1 if arch == "i386" else 0.0
        m["lowfree_consumed_per_vma_bytes"] = low
        m["lowfree_consumed_kb"] = round(low * v / 1024)
        m["vmas_count"] = v
        return m

    def vma_cost(self) -> None:
        for arch in ARCHES:
            for stack in STACKS:
                for kind in ("split", "gap"):
                    p = {"V": 10000, "kind": kind, "seed": 1}

                    def make(rep, stack=stack, arch=arch, kind=kind):
                        m = self.vma_count_metrics(stack, arch, kind, 10000)
                        m["create_per_vma_ns"] = self.noisy(2100)
                        return m
                    self.add("vma-cost", stack, arch, "vma", "count", p, make)

    def lowmem(self) -> None:
        for stack in STACKS:
            for v in (1000, 10000, 50000, 100000):
                def make(rep, stack=stack, v=v):
                    m = self.vma_count_metrics(stack, "i386", "split", v)
                    m["lowfree_consumed_kb"] = round(self.noisy(
                        m["lowfree_consumed_kb"], 0.01))
                    m["create_per_vma_ns"] = self.noisy(2000)
                    return m
                self.add("lowmem", stack, "i386", "vma", "count",
                         {"V": v, "kind": "split"}, make, mem_mb=1024)

    def capacity(self) -> None:
        for stack in STACKS:
            count = 2400000 if self.is_anonmm(stack) else 2000000
            p = {"kind": "split", "low_floor_kb": 32768}
            for rep in range(self.reps):
                for step in range(1, 4):
                    self.records.append(record(
                        "capacity", stack, "i386", "vma", "capacity", p,
                        {"procs_count": step, "vmas_count": count * step // 3},
                        rep=rep, mem_mb=1024, record_kind="step",
                        scheme=self.scheme(stack)))
            self.add("capacity", stack, "i386", "vma", "capacity", p,
                     lambda rep, c=count: {"vmas_count": c, "procs_count": 3,
                                           "high_free_kb": 180000},
                     mem_mb=1024)

    def fork_breadth(self) -> None:
        for arch in ARCHES:
            for stack in STACKS:
                for n in (10, 100, 1000):
                    def make(rep, stack=stack, arch=arch, n=n):
                        per = self.vma_bytes(stack, arch, "split")
                        m = {f"slab_{c}_per_child_bytes": 1010 * b
                             for c, b in per.items()}
                        m["slab_total_per_child_bytes"] = 1010 * sum(
                            per.values())
                        m["page_tables_per_child_bytes"] = 8192.0
                        base = 90000 if self.is_anonmm(stack) else 100000
                        m["fork_median_ns"] = self.noisy(base * (1 + n / 5000))
                        m["fork_p90_ns"] = self.noisy(1.2 * base)
                        m["children_count"] = n
                        return m
                    self.add("fork-breadth", stack, arch, "fork", "breadth",
                             {"V": 1000, "N": n, "kind": "split"}, make)

    def fork_depth(self) -> None:
        p = {"D": 8, "pages": 256}
        for arch in ARCHES:
            for stack in STACKS:
                for gen in range(1, 8):
                    def make(rep, stack=stack, gen=gen):
                        mm = self.is_anonmm(stack)
                        m = {"generation": gen, "processes_count": gen + 1,
                             "slab_vm_area_struct_delta_bytes": 96 * 12 * gen,
                             "slab_anon_vma_chain_delta_bytes":
                                 0 if mm else 32 * 12 * gen * (gen + 1) // 2,
                             "slab_anon_vma_delta_bytes": 0 if mm else
                             44 * 12 * gen,
                             "slab_anonmm_delta_bytes": 24 * gen if mm else 0,
                             "slab_maple_node_delta_bytes": 256 * gen,
                             "page_tables_delta_kb": 8 * gen,
                             "cow_ns": self.noisy(400000)}
                        m["slab_total_delta_bytes"] = sum(
                            v for k, v in m.items() if k.startswith("slab_"))
                        return m
                    self.add("fork-depth", stack, arch, "fork", "depth", p,
                             make, record_kind="generation")
                self.add("fork-depth", stack, arch, "fork", "depth", p,
                         lambda rep: {"generations_count": 8,
                                      "slab_total_delta_bytes": 0})

    def fork_chain(self) -> None:
        """Bounded both: anon_vma about 2 objects per VMA, anonmm one per
        dead generation whose pages the chain has not rewritten yet."""
        p = {"D": 1000, "pages": 256, "touch": 8}
        for stack in STACKS:
            for gen in (1, 2, 5, 10, 100, 999):
                def make(rep, stack=stack, gen=gen):
                    objs = min(gen, 32) + 2 if self.is_anonmm(stack) \
                        else 29 + min(gen, 24)
                    size = 40 if self.is_anonmm(stack) else 80
                    return {"generation": gen, "processes_count": 1,
                            "rmap_slab_delta_objs_count": objs,
                            "rmap_slab_per_process_bytes": objs * size,
                            "fork_median_ns": self.noisy(300000),
                            "anon_rmap_orphan_pages":
                                248 * gen if self.is_anonmm(stack) else 0}
                self.add("fork-chain", stack, "x86_64", "fork", "chain", p,
                         make, mem_mb=128, record_kind="generation")

    def fork_rate(self) -> None:
        for arch in ARCHES:
            for stack in STACKS:
                rate = 1500 if self.is_anonmm(stack) else 1400
                self.add("fork-rate", stack, arch, "fork", "rate",
                         {"V": 1000, "N": 200, "kind": "split"},
                         lambda rep, r=rate: {"forks_per_s": self.noisy(r)})

    def mremap(self) -> None:
        modes = (("unshared", {}), ("shared", {"K": 4}),
                 ("swapped", {"swap_pct": 50}))
        for arch in ARCHES:
            for stack in STACKS:
                for mode, extra in modes:
                    def make(rep, stack=stack, mode=mode):
                        copies = 16384 if (self.is_anonmm(stack)
                                           and mode == "shared") else 0
                        t = 30000 + copies * 400
                        return {"move_median_ns": self.noisy(t),
                                "move_per_page_ns": self.noisy(t / 16384),
                                "mremap_anon_copy_pages": copies,
                                "memfree_consumed_kb": copies * 4,
                                "region_pages": 16384}
                    self.add(f"mremap-{mode}", stack, arch, "mremap", mode,
                             {"R_mb": 64, "moves": 10, **extra}, make)

    def swap_metrics(self, stack: str, mem: int, n: int) -> dict:
        mb = 256
        swapping = mem < 384
        rate = 0.0
        if swapping:
            rate = 20000 * (mem / 128) / (1 + (n / 16 if self.is_anonmm(stack)
                                               else n / 64))
        visits = (n if self.is_anonmm(stack) else 1.5) if swapping else 0
        # anonmm's walk: 3.6% longer at N=1, 46% at N=4
        walk = 1000 + 100 * n + (40 * n * n if self.is_anonmm(stack) else 0)
        return {"walk_mean_ns": self.noisy(walk) if swapping else 0.0,
                "swapout_per_s": self.noisy(rate) if rate else 0.0,
                "pswpout_pages": round(self.noisy(mb * 256 - mem * 200))
                if swapping else 0,
                "passes_ns": self.noisy(2e9 if swapping else 4e8),
                "anon_rmap_visit_per_swapout_count": self.noisy(visits),
                "anon_rmap_pte_per_swapout_count": self.noisy(visits),
                "members_majflt_count": round(self.noisy(3000)) if swapping
                else 0}

    def swap_mem(self) -> None:
        for arch in ARCHES:
            for stack in STACKS:
                for mem in (128, 192, 256, 384, 512):
                    self.add("swap-mem", stack, arch, "swap", "family",
                             {"N": 4, "mb": 256},
                             lambda rep, s=stack, m=mem:
                             self.swap_metrics(s, m, 4), mem_mb=mem)
        for rec in self.records:  # rep 0 boots sampled once a second
            if rec["experiment"] == "swap-mem" and rec["rep"] == 0:
                rate = rec["metrics"]["swapout_per_s"]
                rec["samples"] = [{"t_ms": 1000 * t, "pswpout": int(rate * t)}
                                  for t in range(10)]
        for stack in STACKS:     # fio runs on x86_64 only
            self.add("swap-ceiling", stack, "x86_64", "fio", "write4k", {},
                     lambda rep: {"write_bw_kb_per_s": self.noisy(400000),
                                  "write_iops_per_s": self.noisy(100000)})

    def swap_family(self) -> None:
        """The family swapping to zram across N (the headline), and on
        the disk at N = 4."""
        for arch in ARCHES:
            for stack in STACKS:
                for n in (1, 4, 16, 64):
                    self.add("swap-family-zram", stack, arch, "swap",
                             "family", {"N": n, "mb": 256, "exit_parent": 0},
                             lambda rep, s=stack, n=n:
                             self.swap_metrics(s, 192, n), mem_mb=192)
                self.add("swap-family", stack, arch, "swap", "family",
                         {"N": 4, "mb": 256, "exit_parent": 0},
                         lambda rep, s=stack: self.swap_metrics(s, 192, 4),
                         mem_mb=192)
        for stack in STACKS:
            for vcpus in (1, 2):
                self.add("swap-smp", stack, "x86_64", "swap", "family",
                         {"N": 4, "mb": 64, "passes": 2},
                         lambda rep, s=stack: self.swap_metrics(s, 80, 4),
                         mem_mb=80, vcpus=vcpus)

    def bundle(self) -> None:
        """Visits per reclaimed page: 2 walks of 1, 2 or W + 1 candidates,
        but anonmm's pair pages search the bundle (W + 1)."""
        for stack in STACKS:
            for mode in ("private", "pair", "shared"):
                for w in (8, 64):
                    def make(rep, stack=stack, mode=mode, w=w):
                        mms = {"private": 1, "pair": 2, "shared": w + 1}[mode]
                        if mode == "pair" and self.is_anonmm(stack) \
                                and not self.variant:
                            mms = w + 1
                        return {"visited_per_reclaimed_count":
                                self.noisy(1.9 * mms),
                                "walk_mean_ns":
                                self.noisy(1500 * (1 + mms / 200)),
                                "walk_per_reclaimed_ns":
                                self.noisy(3000 * (1 + mms / 200)),
                                "data_swapout_per_s":
                                self.noisy(5000 / (1 + mms / 200)),
                                "pswpout_pages": 2048,
                                "elapsed_ns": self.noisy(1e9)}
                    self.add(f"bundle-{mode}", stack, "x86_64", "bundle",
                             mode, {"W": w, "mb": 16}, make, mem_mb=128)
            for contend in (0, 1):
                def fails(rep, stack=stack, contend=contend):
                    f = 0.3 * contend if self.is_anonmm(stack) else 0.0
                    return {"anon_rmap_trylock_fail_per_walk_count":
                            self.noisy(f) if f else 0.0,
                            "anon_rmap_contended_keep_per_reclaimed_count":
                            self.noisy(f / 2) if f else 0.0,
                            "data_swapout_per_s": self.noisy(4000 * (1 - f)),
                            "visited_per_reclaimed_count": self.noisy(4.0),
                            "walk_mean_ns": self.noisy(1500 * (1 + f)),
                            "pswpout_pages": 2048}
                self.add("bundle-contend", stack, "x86_64", "bundle", "pair",
                         {"W": 8, "mb": 16, "contend": contend}, fails,
                         mem_mb=128, vcpus=2)

    def migrate(self) -> None:
        """move_pages(2) visits W + 1 mappings of a shared page in both
        schemes; of a cow page anon_vma still visits every worker's vma,
        anonmm the parent alone."""
        for stack in STACKS:
            for pattern in ("shared", "cow"):
                for w in (8, 64, 256):
                    def make(rep, stack=stack, pattern=pattern, w=w):
                        visits = 1 if pattern == "cow" and \
                            self.is_anonmm(stack) else w + 1
                        return {"move_per_page_ns":
                                self.noisy(20000 + 150 * visits),
                                "visited_per_moved_count":
                                float(2 * visits), "moved_pages": 2560,
                                "anon_rmap_visit_count": 5120 * visits,
                                "anon_rmap_trylock_fail_count": 0,
                                "pgmigrate_fail_pages": 0}
                    self.add("migrate-move", stack, "x86_64", "migrate",
                             "move", {"workers": w, "pattern": pattern,
                                      "pages": 128, "rounds": 10}, make)

    def fastpath(self) -> None:
        """Both schemes within a percent: the 2004 table's setting."""
        rates = {"fault": ("faults_per_s", 90000.0),
                 "brk": ("brk_ops_per_s", 30000.0),
                 "sdet": ("scripts_per_s", 12.0)}
        for arch in ARCHES:
            for stack in STACKS:
                for mode, (name, rate) in rates.items():
                    for t, v in ((1, 1), (2, 1), (2, 2)):
                        exp = f"fastpath-{mode}" + ("-smp" if v > 1 else "")
                        self.add(exp, stack, arch, "fastpath",
                                 mode, {"T": t, "L": 8},
                                 lambda rep, n=name, r=rate, t=t, v=v: {
                                     n: self.noisy(r * min(t, v)),
                                     "elapsed_ns": self.noisy(2e9)},
                                 vcpus=v)

    def stressng(self) -> None:
        for arch in ARCHES:
            for stack in STACKS:
                for mode, rate in (("vm", 4700.0), ("fork", 815.0)):
                    self.add(f"stressng-{mode}", stack, arch, "stressng",
                             mode, {}, lambda rep, r=rate: {
                                 "bogo_ops_per_s": self.noisy(r),
                                 "bogo_ops_count": round(2 * r)})

    def failures(self) -> None:
        """One failed rep in swap-mem, and fork-rate x86_64 anonmm failed
        in every rep (its cell must say failed, never a number)."""
        self.records = [r for r in self.records if not (
            r["experiment"] == "swap-mem" and r["stack"] == "anonmm"
            and r["arch"] == "i386" and r["mem_mb"] == 128
            and r["rep"] == self.reps - 1)]
        self.records.append(failed("swap-mem", "anonmm", "i386", "swap",
                                   "family", {"N": 4, "mb": 256},
                                   rep=self.reps - 1, mem_mb=128))
        rate = {"V": 1000, "N": 200, "kind": "split"}
        self.records = [r for r in self.records if not (
            r["experiment"] == "fork-rate" and r["arch"] == "x86_64"
            and r["stack"] == "anonmm")]
        for rep in range(self.reps):
            self.records.append(failed(
                "fork-rate", "anonmm", "x86_64", "fork", "rate", rate,
                rep=rep, failure="timed out after 600s",
                excerpt="RMB-STEP 2/2 run rmb-fork mode=rate\n"
                        "[ 600.1] rcu: INFO: rcu_sched detected stalls"))

    def fork_orders(self) -> None:
        """anonmm's boots of the fork, swap and bundle experiments again,
        booted with anonmm_fork_order=after_parent."""
        before = len(self.records)
        self.variant = AFTER_PARENT
        for build in (self.fork_breadth, self.fork_rate, self.swap_family,
                      self.bundle):
            build()
        self.variant = ""
        self.records[before:] = [r for r in self.records[before:]
                                 if r["stack"] == "anonmm"]

    def thp_ksm(self) -> list[dict]:
        """The distro profile's THP, collapse and KSM experiments (x86_64):
        kept apart from everything(), whose regime counts other tests
        pin."""
        for stack in STACKS:
            mm = self.is_anonmm(stack)
            for cow in (0, 1):
                self.add("fork-thp", stack, "x86_64", "fork", "thp",
                         {"cow": cow, "huge": 64, "N": 100},
                         lambda rep, mm=mm, cow=cow: {
                             "fork_median_ns": self.noisy(
                                 288000 if mm else 279000),
                             "round_median_ns": self.noisy(
                                 7e6 if cow else 1.7e6)})
            for aligned in (0, 1):
                for ptemap in (0, 1):
                    def move(rep, mm=mm, a=aligned, p=ptemap):
                        t = 19500 if a and not (mm and p) else 300000
                        return {"move_median_ns": self.noisy(
                                    t * (4.5 if mm and not a else 1)),
                                "thp_split_pmd_count":
                                    16 if not (a or p) else 0}
                    self.add("mremap-thp", stack, "x86_64", "mremap",
                             "unshared", {"R_mb": 32, "moves": 10,
                                          "aligned": aligned,
                                          "ptemap": ptemap}, move)
            for w in (8, 32):
                self.add("bundle-thp", stack, "x86_64", "bundle",
                         "private", {"W": w, "mb": 64, "aligned": 1},
                         lambda rep: {"walk_per_reclaimed_ns":
                                      self.noisy(780),
                                      "thp_swpout_count": 18})
            for pattern in ("cow", "shared"):
                self.add("ksm-merge", stack, "x86_64", "ksm", "merge",
                         {"workers": 64, "pattern": pattern, "procs": 4},
                         lambda rep, mm=mm: {
                             "ksm_walk_mean_ns": self.noisy(
                                 1.46e5 if mm else 1e5),
                             "saved_pages": 4080 if mm else 17584})
            for holes in (0, 64):
                self.add("collapse-khugepaged", stack, "x86_64", "collapse",
                         "khugepaged", {"W": 8, "mb": 8, "holes": holes},
                         lambda rep, mm=mm, h=holes: {
                             "collapsed_per_s": self.noisy(
                                 40 if mm and h else 300),
                             "full_scans_count": 9 if mm and h else 2})
        return self.records

    def everything(self, orders: bool = False) -> list[dict]:
        for build in (self.vma_cost, self.lowmem, self.capacity,
                      self.fork_breadth, self.fork_depth, self.fork_chain,
                      self.fork_rate,
                      self.mremap, self.swap_mem, self.swap_family,
                      self.bundle, self.migrate, self.fastpath,
                      self.stressng, self.failures):
            build()
        if orders:
            self.fork_orders()
        return self.records


def full_run(reps: int = 3, anonmm_scheme: str = "anonmm",
             seed: int = 1, orders: bool = False) -> list[dict]:
    """Records of every experiment with two planted failures (and
    anonmm's other fork order where the comparison runs it)."""
    return Fab(reps, anonmm_scheme, seed).everything(orders)


def thp_ksm_run(reps: int = 3) -> list[dict]:
    """Records of the THP and KSM experiments alone (Fab.thp_ksm)."""
    return Fab(reps).thp_ksm()


def metadata(accel: str = "tcg") -> dict[str, Any]:
    return {
        "run_id": RUN_ID, "created": "2025-01-01T00:00:00Z",
        "command": "harness.py compare --reps 3",
        "linux_source_version": "6.1.123-1",
        "series_digest": {"anon_vma": "aaaa1111", "anonmm": "bbbb2222"},
        "config_sha256": {"anon_vma/i386": "c0ffee01",
                          "anon_vma/x86_64": "c0ffee02",
                          "anonmm/i386": "c0ffee03",
                          "anonmm/x86_64": "c0ffee04"},
        "config_diff": {
            "i386": ["CONFIG_RMAP_ANONMM: anon_vma=n anonmm=y"],
            "x86_64": ["CONFIG_RMAP_ANONMM: anon_vma=n anonmm=y"]},
        "bench_digest": "deadbeef", "qemu_version": "QEMU emulator 7.2.15",
        "accel": accel, "host_cpu": "Fabricated CPU @ 2.0GHz",
        "host_kernel": "6.1.0-test", "host_cores": 2, "reps": 3,
        "swap_mb": 1024,
        # as workloads.describe() writes it: JSON of the experiments
        "experiments": json.dumps([{"name": n} for n in EXPERIMENTS])}


def only(records: list[dict], **match: Any) -> list[dict]:
    return [r for r in records if all(r.get(k) == v for k, v in match.items())]
