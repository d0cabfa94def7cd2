"""Running cases: boot each, turn its console into records, store them.

A failed boot (kernel fault, timeout, failed step, data mismatch) gives
one record with failed=true and the console excerpt; the run goes on.
"""

from pathlib import Path

from . import console as consolemod
from . import environment, executor, experiments, extras, guest, kbuild
from . import paths, programs, qemu, record, store, workloads
from .errors import UserError
from .experiments import SWAP_MB, Case

TAIL_LINES = 30


def base_record(case: Case, run_id: str, accel: str) -> dict:
    """What every record of the case's boot carries."""
    return {**case.config.fields(), "run_id": run_id, "stack": case.stack,
            "rep": case.rep, "boot": case.key(), "accel": accel}


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
    program = str(workloads.workload(base["workload"]).program)
    out = []
    for result in (r for step in con.steps for r in step.results):
        params, metrics = record.split(
            result, lambda: programs.names(program))
        out.append(record.measured(base, result, params, metrics))
    return out


def records_of(case: Case, run: guest.GuestRun, run_id: str,
               accel: str) -> list[dict]:
    """The records of a case's boot: its workload's, or one failed."""
    base = base_record(case, run_id, accel)
    if run.failure:
        return [failed_record(base, run)]
    make = workloads.workload(case.workload).records or result_records
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
    return records


def job_of(case: Case) -> executor.Job:
    """The boot of a case: its plan, its machine, its image extras."""
    return executor.Job(case.key(), case.key(), guest.Boot(
        case.stack, case.arch, case.plan(), mem_mb=case.mem_mb,
        timeout_s=case.timeout_s, swap_mb=SWAP_MB, append=case.append,
        files=extras.require(case.extras(), case.arch)))


def execute(cases: list[Case], rdir: Path, run_id: str, accel: str,
            jobs: int = 1) -> list[dict]:
    """Run every case not yet finished, jobs at a time, with progress;
    rebuild records.jsonl."""
    by_key = {c.key(): c for c in cases}

    def judge(job: executor.Job, run: guest.GuestRun) -> dict:
        return {"records": records_of(by_key[job.key], run, run_id, accel)}

    def say(job: executor.Job, boot: dict) -> None:
        state = f"FAILED: {boot['failure']}" if boot["failure"] else "ok"
        print(f"  {job.key}: {state} ({boot['seconds']:.0f}s)", flush=True)

    boots = executor.execute([job_of(c) for c in cases], rdir, accel,
                             judge, say, jobs)
    store.write_records(rdir)
    return boots


def check_memory(cases: list[Case]) -> None:
    """Refuse sizes a guest cannot boot in before starting anything."""
    for case in cases:
        if case.mem_mb < qemu.MIN_MEM_MB:
            raise UserError(f"guest memory {case.mem_mb} MB "
                            f"({case.experiment}, {case.arch}) is below "
                            f"the {qemu.MIN_MEM_MB} MB a guest needs")


def require_kernels(cases: list[Case]) -> None:
    for stack, arch in sorted({(c.stack, c.arch) for c in cases}):
        if not paths.kernel_image(stack, arch).exists():
            raise UserError(f"no {stack} kernel for {arch}: run "
                            f"'harness.py build --stack {stack} "
                            f"--arch {arch}' (or 'make kernels')")


def run_experiments(exps: list, stacks: list[str], arches: list[str],
                    reps: int, run_id: str | None, prefix: str,
                    accel: str, jobs: int) -> Path:
    """Expand, check, run (resuming) and store; return the run directory."""
    if paths.variant():
        raise UserError(f"RMAPBENCH_VARIANT={paths.variant()} builds debug "
                        "kernels, whose timings mean nothing: measure with "
                        "it unset (debug variants are for 'check' only)")
    if reps < 1:
        raise UserError(f"--reps must be at least 1, not {reps}")
    cases = experiments.expand(exps, stacks, arches, reps)
    if not cases:
        raise UserError("nothing to run: no experiment applies to arch(es) "
                        f"{', '.join(arches)}")
    check_memory(cases)
    require_kernels(cases)
    accel = guest.choose_accel(accel)
    if run_id is None:
        # the same inputs give the same id, so a re-run resumes
        what = (experiments.describe(exps), environment.inputs_digest(),
                stacks, arches, reps, accel)
        run_id = f"{prefix}-{kbuild.digest([], extra=repr(what))[:10]}"
    rdir = store.run_dir(run_id)
    meta = rdir / "metadata.json"
    if not meta.exists():
        store.write_json(meta, environment.collect(
            run_id, accel, reps, arches, experiments.describe(exps)))
    print(f"run {run_id}: {len(cases)} boots in {rdir}", flush=True)
    execute(cases, rdir, run_id, accel, jobs)
    return rdir
