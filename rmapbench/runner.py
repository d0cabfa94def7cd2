"""Running cases: boot each, turn its console into records, store them.

A run goes in rounds: repetitions.py decides from the stored records
how many boots each point wants, the missing ones boot (two at a time
where timing is not at stake, the rest alone), and again, until no
point wants more.  A failed boot (kernel fault, timeout, failed step,
data mismatch) gives one record with failed=true and the console
excerpt; the run goes on.
"""

import os
import socket
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from . import console as consolemod
from . import plan as guestplan
from . import environment, executor, experiments, extras, guest, kbuild
from . import paths, qemu, record, repetitions, settings, store, testbed
from . import workloads
from .errors import UserError
from .experiments import SWAP_MB, Case, Point
from .profiles import Where, as_targets, names

# Guests at a time for boots whose timing is not at stake
SHARED_JOBS = 2

TAIL_LINES = 30


def base_record(case: Case, run_id: str, accel: str) -> dict:
    """What every record of the case's boot carries (a variant's boot:
    its kernel arguments too, which set its lane apart)."""
    accel = qemu.accel_of(accel, testbed.clock(case.config.clock))
    variant = {"variant": case.variant} if case.variant else {}
    return {**case.config.fields(), "run_id": run_id, "stack": case.stack,
            **variant, "rep": case.rep, "boot": case.key(), "accel": accel}


def unconfirmed(case: Case, run: guest.GuestRun) -> str | None:
    """Why a boot does not count as what it was booted for: its guest
    did not confirm a setting (settings.py) in force, or its kernel did
    not log a variant's option value (a kernel without the option keeps
    its default, and its numbers would be the headline's under the
    variant's name)."""
    unset = settings.unconfirmed(case.config.kernel_args,
                                 run.console.features)
    if unset or not case.variant:
        return unset
    variant = testbed.stack_variant(case.variant)
    if variant.confirmed(run.console.preamble):
        return None
    want = variant.option.shows.format(value=variant.value)
    return f"the kernel did not confirm {case.variant} (no '{want}' line)"


def excerpt(run: guest.GuestRun) -> str:
    if run.console.faults:
        return run.console.faults[0].excerpt
    lines = run.boot.log.read_text(errors="replace").splitlines()
    return "\n".join(lines[-TAIL_LINES:])


def failed_record(base: dict, run: guest.GuestRun) -> dict:
    scheme = run.console.section_pairs("rmapbench").get("scheme", "unknown")
    return record.failed(base, scheme, str(run.failure), excerpt(run))


def result_records(base: dict, con: consolemod.Console) -> list[dict]:
    """A record per RMB-RESULT line (the default of a workload)."""
    out = []
    for result in (r for step in con.steps for r in step.results):
        params, metrics = record.split(result)
        out.append(record.measured(base, result, params, metrics))
    return out


def records_of(case: Case, run: guest.GuestRun, run_id: str,
               accel: str) -> list[dict]:
    """The records of a case's boot: its workload's, or one failed."""
    base = base_record(case, run_id, accel)
    run.failure = run.failure or unconfirmed(case, run)
    if run.failure:
        return [failed_record(base, run)]
    make = workloads.workload(case.config.workload).records or result_records
    try:
        records = make(base, run.console)
    except (ValueError, KeyError, IndexError) as err:
        run.failure = f"unreadable results: {err}"
        return [failed_record(base, run)]
    if not records:
        run.failure = "the workload printed no result"
        return [failed_record(base, run)]
    if run.console.samples:
        records[-1]["samples"] = run.console.samples
    if run.console.features:
        for rec in records:
            rec["features"] = dict(run.console.features)
    return records


def job_of(case: Case) -> executor.Job:
    """The boot of a case: its plan, its machine, its image extras;
    repetition r boots with seed r + 1 (qemu.Boot.seed), so a point's
    repetitions on a repeatable clock sample the guest's randomness."""
    c = case.config
    return executor.Job(case.key(), case.key(), qemu.Boot(
        case.stack, c.arch, case.plan(), mem_mb=c.mem_mb,
        timeout_s=case.timeout_s,
        swap_mb=settings.swap_disk_mb(case.kernel_args(), SWAP_MB),
        append=case.kernel_args(), files=extras.require(case.extras(), c.arch),
        clock=c.clock, smp=c.vcpus, profile=c.profile, seed=case.rep + 1))


def pack_head(plan: str) -> str:
    """The plan line a pack runs once for all its cases: a plan's
    leading swapon ("" if it has none)."""
    first = plan.split("\n", 1)[0]
    return first if first == guestplan.swapon() else ""


def boot_key(case: Case) -> tuple:
    """What cases that may share a boot have in common: the boot, or for
    a packing case (Experiment.packs) the machine and its shared plan
    line; and the repetition (each is a boot of its own)."""
    boot = job_of(case).boot
    if case.packs:
        return ("pack", replace(boot, plan=pack_head(boot.plan),
                                timeout_s=0.0), case.rep)
    return ("boot", boot, case.rep)


def shared_boots(cases: list[Case]) -> dict[str, list[Case]]:
    """The cases grouped by the boot they need, each group under its
    first case's key: a configuration two experiments both sweep (a
    swap family of 4 in 64 MB is a point of swap-mem and of
    swap-family) boots once per repetition and serves both, and packing
    cases of one machine and repetition run in one boot, in order."""
    groups: dict[tuple, list[Case]] = {}
    for case in cases:
        groups.setdefault(boot_key(case), []).append(case)
    return {group[0].key(): group for group in groups.values()}


def group_job(cases: list[Case]) -> executor.Job:
    """The boot of a group: its first case's, or for a pack of several,
    the pack's shared line, then each case's lines after its mark, with
    the sum of their timeouts."""
    job = job_of(cases[0])
    if len(cases) == 1 or not cases[0].packs:
        return job
    head = pack_head(job.boot.plan)
    lines = [head] if head else []
    for case in cases:
        own = case.plan().splitlines()
        lines += [guestplan.mark(case.key()), *(own[1:] if head else own)]
    boot = replace(job.boot, plan=guestplan.of(*lines),
                   timeout_s=sum(c.timeout_s for c in cases))
    return executor.Job(job.key, f"{job.key} and {len(cases) - 1} more",
                        boot)


def case_records(case: Case, run: guest.GuestRun, run_id: str,
                 accel: str) -> tuple[list[dict], str | None]:
    """The records of case from a boot that may have served others too
    (its own steps only, guest.view) and why it failed, if it did."""
    seen = guest.view(run, case.key())
    records = records_of(case, seen, run_id, accel)
    return records, seen.failure


def save_shared(rdir: Path, key: str, case: Case, records: list[dict],
                failure: str | None) -> None:
    """Store case as served by boot key: its own records (read from the
    same console, which its log name links to) and no time of its own,
    so reparse rebuilds it and the boot-time table counts the boot once."""
    log = store.log_file(rdir, case.key())
    log.unlink(missing_ok=True)
    if store.log_file(rdir, key).exists():
        os.link(store.log_file(rdir, key), log)
    store.save_boot(rdir, case.key(), {
        "key": case.key(), "shared_with": key, "seconds": 0.0,
        "failure": failure, "node": socket.gethostname(),
        "records": records})


def execute(cases: list[Case], rdir: Path, run_id: str, accel: str,
            jobs: int = 1) -> list[dict]:
    """Run every case not yet finished, jobs at a time, with progress
    (cases sharing a boot get one); rebuild records.jsonl."""
    groups = shared_boots(cases)

    def judge(job: executor.Job, run: guest.GuestRun) -> dict:
        first, *others = groups[job.key]
        for other in others:
            records, failure = case_records(other, run, run_id, accel)
            save_shared(rdir, job.key, other, records, failure)
            if failure:
                print(f"  {other.key()}: FAILED: {failure} (in the boot "
                      f"of {job.key})", flush=True)
        records, run.failure = case_records(first, run, run_id, accel)
        return {"records": records}

    def say(job: executor.Job, boot: dict) -> None:
        state = f"FAILED: {boot['failure']}" if boot["failure"] else "ok"
        others = groups[job.key][1:]
        also = "".join(f", also {c.config.experiment}" for c in others) \
            if len(others) < 3 else f", and {len(others)} more cases"
        print(f"  {job.key}: {state} ({boot['seconds']:.0f}s{also})",
              flush=True)

    boots = executor.execute([group_job(g) for g in groups.values()], rdir,
                             accel, judge, say, jobs)
    store.write_records(rdir)
    return boots


def check_memory(cases: list[Case]) -> None:
    """Refuse sizes a guest cannot boot in before starting anything."""
    for c in (case.config for case in cases):
        if c.mem_mb < qemu.MIN_MEM_MB:
            raise UserError(f"guest memory {c.mem_mb} MB ({c.experiment}, "
                            f"{c.arch}) is below the {qemu.MIN_MEM_MB} MB "
                            "a guest needs")


def require_kernels(cases: list[Case]) -> None:
    for stack, arch, profile in sorted({
            (c.stack, c.config.arch, c.config.profile) for c in cases}):
        if not kbuild.kernel_image(stack, arch, profile).exists():
            raise UserError(f"no {stack} kernel for {arch} ({profile}): "
                            f"run 'harness.py build --stack {stack} "
                            f"--arch {arch} --profile {profile}' (or "
                            "'make kernels')")


def round_cases(points: list[Point], decided: dict, stacks: list[str],
                rdir: Path) -> list[Case]:
    """The boots the decisions want that are not stored yet,
    repetition-major so an early stop still compares."""
    most = max((d.boots for d in decided.values()), default=0)
    return [case for rep in range(most) for p in points
            if rep < decided[p].boots for case in p.cases(stacks, rep)
            if not store.boot_done(rdir, case.key())]


def say_resumed(rdir: Path, todo: int) -> None:
    """A run started again says what it keeps of the killed one."""
    done = len(list((rdir / "boots").glob("*.json"))) \
        if (rdir / "boots").exists() else 0
    if done:
        print(f"resuming {rdir.name}: {done} of {done + todo} boots "
              f"already finished", flush=True)


@dataclass(frozen=True)
class Run:
    """A planned run: its points and stacks, where its boots are
    stored, and what it was asked (reps None: decided per point)."""
    points: list[Point]
    stacks: list[str]
    rdir: Path
    run_id: str
    accel: str
    reps: int | None


def wanted(run: Run) -> tuple[dict, list[Case]]:
    """What the stored records decide: each point's repetitions
    (repetitions.Decision) and the cases of the next round, the boots
    the decisions want that are not stored yet (none: the run is
    done)."""
    records = store.load_records(run.rdir) \
        if (run.rdir / "boots").exists() else []
    decided = repetitions.decisions(run.points, records, run.stacks,
                                    run.reps)
    return decided, round_cases(run.points, decided, run.stacks, run.rdir)


def shares(run: Run, cases: list[Case]) -> tuple[list[Case], list[Case]]:
    """cases split into those whose boots may share a host (their
    timing is not at stake) and those that must run alone."""
    ok = {p.config: repetitions.shares_host(p.exp, p.config.clock)
          for p in run.points}
    return ([c for c in cases if ok[c.config]],
            [c for c in cases if not ok[c.config]])


def run_rounds(run: Run, jobs: int) -> dict:
    """Boot round after round until no point wants more; the last
    decisions (repetitions.Decision per point)."""
    rounds = 0
    while True:
        decided, todo = wanted(run)
        if not todo:
            return decided
        rounds += 1
        if rounds == 1:
            say_resumed(run.rdir, len(todo))
        together, alone = shares(run, todo)
        boots = [len(shared_boots(cs)) for cs in (together, alone)]
        print(f"round {rounds}: {sum(boots)} boots ({boots[0]} "
              f"{jobs} at a time, timing not at stake; {boots[1]} "
              f"alone) for {len(todo)} cases", flush=True)
        if together:
            execute(together, run.rdir, run.run_id, run.accel, jobs)
        if alone:
            execute(alone, run.rdir, run.run_id, run.accel, 1)


def decisions_metadata(decided: dict) -> list[dict]:
    """What metadata.json keeps of each point's repetitions."""
    return [{**p.config.fields(), "boots": d.boots, "why": d.why,
             "policy": d.policy.kind, "start": d.policy.start,
             "cap": d.policy.cap, "target": d.policy.target}
            for p, d in decided.items()]


def run_id_of(exps: list, stacks: list[str], where: Where,
              reps: int | None, accel: str, prefix: str) -> str:
    """The same inputs give the same id, so a re-run resumes (a run of
    minimal kernels only is named as it was before profiles)."""
    policy = reps or ("auto", repetitions.TARGET, repetitions.START,
                      repetitions.CAP)
    # what a clock does to a guest is part of what was measured
    clocks = sorted({c for e in exps for c in e.clocks})
    what = (experiments.describe(exps), environment.inputs_digest(where),
            stacks, names(where), policy, accel, qemu.BASE_APPEND,
            [asdict(testbed.clock(c)) for c in clocks])
    return f"{prefix}-{kbuild.digest([], extra=repr(what))[:10]}"


def prepare(exps: list, stacks: list[str], where: Where,
            reps: int | None, run_id: str | None, prefix: str,
            accel: str) -> Run:
    """Check the inputs (before any boot), name the run and write its
    metadata.json if it is new.  where: the kernels (profiles.Target,
    or bare arches for the minimal ones).  reps None: repetitions.py
    decides per point."""
    if paths.variant():
        raise UserError(f"RMAPBENCH_VARIANT={paths.variant()} builds debug "
                        "kernels, whose timings mean nothing: measure with "
                        "it unset (debug variants are for 'check' only)")
    if reps is not None and reps < 1:
        raise UserError(f"--reps must be at least 1, not {reps}")
    points = [p for e in exps for p in experiments.sweep_points(e, where)]
    first = [c for p in points for c in p.cases(stacks, 0)]
    if not first:
        raise UserError("nothing to run: no experiment applies to "
                        f"{', '.join(t.label() for t in as_targets(where))}")
    check_memory(first)
    require_kernels(first)
    accel = guest.choose_accel(accel)
    run_id = run_id or run_id_of(exps, stacks, where, reps, accel, prefix)
    rdir = store.run_dir(run_id)
    meta = rdir / "metadata.json"
    if not meta.exists():
        store.write_json(meta, environment.collect(
            run_id, accel, reps or "auto", as_targets(where),
            experiments.describe(exps)))
    extra = len(first) - len(points) * len(stacks)
    variants = f", {extra} more on stack variants" if extra else ""
    print(f"run {run_id}: {len(points)} points on {len(stacks)} stack(s)"
          f"{variants}, repetitions {reps or 'decided per point'}, in "
          f"{rdir}", flush=True)
    return Run(points, stacks, rdir, run_id, accel, reps)


def conclude(run: Run, decided: dict) -> None:
    """What a finished run keeps of its points' repetitions."""
    store.update_metadata(run.rdir,
                          {"repetitions": decisions_metadata(decided)})


def run_experiments(exps: list, stacks: list[str], where: Where,
                    reps: int | None, run_id: str | None, prefix: str,
                    accel: str, jobs: int = SHARED_JOBS) -> Path:
    """Check, run in rounds (resuming) and store; return the run
    directory (prepare() tells the arguments)."""
    run = prepare(exps, stacks, where, reps, run_id, prefix, accel)
    conclude(run, run_rounds(run, max(1, jobs)))
    return run.rdir
