"""Running the suite: every group's boot on every kernel, through the
executor (a run into an existing directory resumes), then the table."""

import json
import time
from dataclasses import dataclass
from pathlib import Path

from .. import executor, guest, kbuild, paths, qemu
from ..errors import UserError
from ..profiles import Target, Where, as_targets
from ..profiles import profile as profile_of
from ..progress import fmt_seconds
from .boot_checks import IDLE_SLAB_TOLERANCE
from .boots import CHECK_APPEND, boot_of, files_and_skips, make_plan
from .catalogue import Group, Test, catalogue
from .judges import judge_boot
from .render import markdown, order, plain_table, verdict_mismatches
from .verdict import FAIL, PASS, SKIP, Verdict, kernel_name


@dataclass(frozen=True)
class Unit:
    """The tests of a group that share a boot: those of one vCPU count
    (a group's tests may ask for other counts than the group's)."""
    group: Group
    smp: int

    @property
    def name(self) -> str:
        g = self.group
        return g.name if self.smp == g.smp else f"{g.name}@{self.smp}cpu"

    def tests(self, tests: list[Test], target: Target) -> list[Test]:
        """Its tests that run on target: of its arch, needing only
        features its profile has."""
        has = profile_of(target.profile).has
        return [t for t in tests if t.group == self.group.name
                and target.arch in t.arches and has(t.needs)
                and (t.vcpus or self.group.smp) == self.smp]


def units(groups: list[Group], tests: list[Test]) -> list[Unit]:
    out = []
    for g in groups:
        counts = dict.fromkeys(t.vcpus or g.smp for t in tests
                               if t.group == g.name)
        out += [Unit(g, n) for n in counts]
    return out


@dataclass(frozen=True)
class SuiteJob:
    job: executor.Job
    unit: Unit
    tests: list[Test]
    skipped: dict[str, str]

    @property
    def runs(self) -> list[Test]:
        """Its tests that run on its kernel."""
        return [t for t in self.tests if t.name not in self.skipped]

    def skips(self) -> list[Verdict]:
        """The verdicts of its tests that do not run on its kernel."""
        b = self.job.boot
        kernel = kernel_name(b.stack, Target(b.profile, b.arch).label())
        return [Verdict(t.name, kernel, SKIP, self.skipped[t.name])
                for t in self.tests if t.name in self.skipped]


def suite_job(stack: str, target: Target, unit: Unit, tests: list[Test]
              ) -> SuiteJob:
    arch = target.arch
    mine = unit.tests(tests, target)
    files, skipped = files_and_skips(mine, arch)
    runs = [t for t in mine if t.name not in skipped]
    boot = boot_of(stack, arch, unit.group, unit.smp,
                   make_plan(unit.name, runs), files, target.profile)
    key = "-".join([stack, *target.label().split(), unit.name])
    label = f"{stack} {target.label()} {unit.name}: {len(mine)} tests"
    return SuiteJob(executor.Job(key, label, boot), unit, mine, skipped)


def judge(sj: SuiteJob, run: guest.GuestRun) -> dict:
    kernel = kernel_name(run.stack, Target(run.profile, run.arch).label())
    runs = sj.runs
    verdicts = sj.skips() + judge_boot(run, make_plan(sj.unit.name, runs),
                                       runs, kernel)
    mem = run.console.meminfo_kb()
    info = {"kernel": kernel, "group": sj.unit.name, "log": str(run.boot.log),
            "mem_total_kb": mem.get("MemTotal"),
            "high_total_kb": mem.get("HighTotal", 0),
            "seconds": round(run.boot.seconds, 1),
            "scheme": run.console.section_pairs("rmapbench").get(
                "scheme", "unknown"),
            "mem_mb": sj.job.boot.mem_mb, "smp": sj.unit.smp,
            "failure": run.failure}
    return {"verdicts": [v.to_dict() for v in verdicts], "info": info}


def say(result: dict) -> None:
    v = [Verdict(**d) for d in result["verdicts"]]
    info = result["info"]
    bad = [x for x in v if x.verdict == FAIL]
    print(f"  {info['kernel'].replace('/', ' ')} {info['group']}: "
          f"{sum(x.verdict == PASS for x in v)} pass, {len(bad)} fail, "
          f"{sum(x.verdict == SKIP for x in v)} skip "
          f"({info['seconds']:.0f}s)", flush=True)
    for x in bad:
        print(f"    FAIL {x.test}: {x.reason}", flush=True)


def require_kernels(stacks: list[str], targets: list[Target]) -> None:
    for stack in stacks:
        for arch, profile in ((t.arch, t.profile) for t in targets):
            if not kbuild.kernel_image(stack, arch, profile).exists():
                raise UserError(f"no {stack} kernel for {arch} ({profile}):"
                                f" run 'harness.py build --stack {stack} "
                                f"--arch {arch} --profile {profile}' (or "
                                "'make kernels')")


def default_out_dir() -> Path:
    return paths.RESULTS / (f"check-{time.strftime('%Y%m%d-%H%M%S')}"
                            f"{paths.variant_suffix()}")


def select(tests: list[Test], names: tuple[str, ...]) -> list[Test]:
    """The tests named (all of them if none is); an unknown name is
    refused before any boot."""
    if not names:
        return tests
    known = [t.name for t in tests]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(f"no test named {', '.join(unknown)} in this suite; "
                        f"its tests: {', '.join(dict.fromkeys(known))}")
    return [t for t in tests if t.name in names]


@dataclass(frozen=True)
class Suite:
    """The boots of a suite on its kernels, with its tests and units,
    and the verdicts of the boots not made: a unit none of whose tests
    runs on a kernel is not booted there (the small-node guest would not
    even boot a KASAN kernel), its tests skipped with their reasons."""
    jobs: list[SuiteJob]
    tests: list[Test]
    units: list[Unit]
    targets: list[Target]
    unbooted: list[Verdict]


def plan(stacks: list[str], where: Where, quick: bool,
         only: tuple[str, ...] = ()) -> Suite:
    """Every boot of the quick or full suite (or only the tests named)
    on every stack x kernel, the kernels checked first."""
    groups, tests = catalogue(quick)
    tests = select(tests, only)
    targets = as_targets(where)
    require_kernels(stacks, targets)
    all_units = units(groups, tests)
    every = [suite_job(s, t, u, tests) for s in stacks for t in targets
             for u in all_units
             if t.arch in u.group.mem_mb and u.tests(tests, t)]
    return Suite([sj for sj in every if sj.runs], tests, all_units, targets,
                 [v for sj in every if not sj.runs for v in sj.skips()])


def boot(jobs: list[SuiteJob], out_dir: Path, accel: str) -> list[dict]:
    """The results of jobs: stored ones as they are, the others booted
    and stored (executor.execute)."""
    by_key = {sj.job.key: sj for sj in jobs}
    return executor.execute(
        [sj.job for sj in jobs], out_dir, accel,
        lambda job, run: judge(by_key[job.key], run),
        lambda job, result: say(result), what="check")


def run_check(stacks: list[str], where: Where, accel: str, quick: bool,
              out_dir: Path, only: tuple[str, ...] = (),
              since: float | None = None) -> int:
    """Run the quick or full suite (or only the tests named) on every
    stack x kernel (profiles.Target; a bare arch: its minimal kernel),
    named by arch and a profile other than minimal; write check.md and
    check.json into out_dir and print the table.  0: no test failed and
    anonmm's verdicts equal anon_vma's; else 1.  since: when the suite
    started (time.time(): a Slurm run's submission), if not now."""
    suite = plan(stacks, where, quick, only)
    accel = guest.choose_accel(accel)
    start = time.time() if since is None else since
    results = boot(suite.jobs, out_dir, accel)
    verdicts = [Verdict(**d) for r in results for d in r["verdicts"]]
    verdicts += suite.unbooted
    boots = [r["info"] for r in results]
    meta = metadata(quick, accel, boots, time.time() - start)
    rows = order(suite.tests, [u.name for u in suite.units])
    return write_outputs(out_dir, stacks, [t.label() for t in suite.targets],
                         suite.tests, rows, verdicts, meta)


def metadata(quick: bool, accel: str, boots: list[dict],
             seconds: float) -> dict:
    schemes: dict[str, str] = {}
    for b in boots:
        schemes.setdefault(b["kernel"], b["scheme"])
    return {"suite": "quick" if quick else "full", "accel": accel,
            "variant": paths.variant() or "none",
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "seconds": round(seconds, 1),
            "boots": len(boots), "boot_info": boots, "schemes": schemes,
            "qemu": qemu.qemu_version(), "slub_debug": CHECK_APPEND,
            "idle_slab_tolerance_objs": IDLE_SLAB_TOLERANCE}


def write_outputs(out_dir: Path, stacks: list[str], arches: list[str],
                  tests: list[Test], rows: list[str],
                  verdicts: list[Verdict], meta: dict) -> int:
    """arches: the kernels' names beside the stack ('i386', 'x86_64
    distro')."""
    kernels = [kernel_name(s, a) for s in stacks for a in arches]
    mismatches = verdict_mismatches(verdicts, stacks, arches)
    failed = [v for v in verdicts if v.verdict == FAIL]
    (out_dir / "check.md").write_text(markdown(verdicts, kernels, rows,
                                               meta, mismatches))
    (out_dir / "check.json").write_text(json.dumps({
        **meta, "kernels": kernels, "tests": rows,
        "verdicts": [v.to_dict() for v in verdicts],
        "mismatches": mismatches,
        "tests_info": [{"name": t.name, "kind": t.kind, "group": t.group,
                        "command": t.command, "what": t.what,
                        "arches": list(t.arches)} for t in tests]},
        indent=1) + "\n")
    print(plain_table(verdicts, kernels, rows))
    for m in mismatches:
        print(f"verdicts differ: {m}")
    print(f"{len(failed)} failed, {len(mismatches)} differing between the "
          f"stacks, in {fmt_seconds(meta['seconds'])}; "
          f"table: {out_dir / 'check.md'}", flush=True)
    return 1 if failed or mismatches else 0
