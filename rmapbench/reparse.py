"""Records rebuilt from a run's stored consoles (harness.py reparse RUN).

Every finished boot keeps its raw console (logs/<key>.log): parsing it
again with today's parser and today's workload modules gives the records
a fix would have given, without booting anything, as mmtests parses its
logs at compare time.  The boot's identity comes from its stored
records; records.jsonl is saved as records.jsonl.before-reparse first.
"""

import shutil
from pathlib import Path

from . import console, guest, qemu, runner, store
from .errors import UserError
from .experiments import Case
from .record import Config


def case_of(boot: dict) -> Case:
    """The case a stored boot ran, from the identity of its records."""
    if not boot.get("records"):
        raise UserError(f"boot {boot.get('key')} has no records: its "
                        "identity is unknown (delete it to run it again)")
    rec = boot["records"][0]
    case = Case(Config.of(rec), rec["stack"], int(rec["rep"]), 0.0,
                variant=rec.get("variant") or "")
    if case.key() != boot["key"]:
        raise UserError(f"boot {boot['key']}: its records describe boot "
                        f"{case.key()}; the run is inconsistent")
    return case


def boot_result(qemu_side: dict, log: Path) -> qemu.BootResult:
    """What QEMU did, as the executor stored it."""
    return qemu.BootResult(log, float(qemu_side["seconds"]),
                           qemu_side["timed_out"], qemu_side["qemu_rc"],
                           list(qemu_side["command"]))


def reparse_boot(rdir: Path, boot: dict, qemu_side: dict) -> dict:
    """boot's records from its console; qemu_side: the stored boot that
    ran QEMU for it (itself, or the one it shared)."""
    case = case_of(boot)
    first = boot["records"][0]
    log = store.log_file(rdir, boot["key"])
    if not log.exists():
        raise UserError(f"{log} is missing: the records of boot "
                        f"{boot['key']} cannot be rebuilt")
    result = boot_result(qemu_side, log)
    con = console.parse(log.read_text(errors="replace"))
    run = guest.GuestRun(case.stack, case.config.arch, result, con,
                         guest.verdict(result, con))
    records, failure = runner.case_records(case, run, first["run_id"],
                                           first["accel"])
    return {**boot, "records": records, "failure": failure}


def reparse(rdir: Path) -> tuple[int, int]:
    """Rebuild every boot's records of run rdir; (boots, records)."""
    boots = store.load_boots(rdir)
    if not boots:
        raise UserError(f"no finished boots in {rdir}: nothing to reparse")
    old = rdir / "records.jsonl"
    if old.exists():
        shutil.copy2(old, rdir / "records.jsonl.before-reparse")
    by_key = {b["key"]: b for b in boots}
    count = 0
    for boot in boots:
        new = reparse_boot(rdir, boot,
                           by_key[boot.get("shared_with", boot["key"])])
        store.save_boot(rdir, boot["key"], new)
        count += len(new["records"])
    store.write_records(rdir)
    return len(boots), count
