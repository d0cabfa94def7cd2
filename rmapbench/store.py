"""results/<run-id>/: one JSON file per finished boot, written atomically.

A boot's file appears only when the boot is over and its records are
complete, so an interrupted run keeps what it finished and the next run of
the same command skips it.  records.jsonl is rebuilt from the boot files.
"""

import json
import os
import re
import tempfile
from pathlib import Path

from . import paths
from .errors import UserError

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def run_dir(run_id: str) -> Path:
    if not RUN_ID.match(run_id):
        raise UserError(f"bad run id '{run_id}': use letters, digits, "
                        "'.', '_' and '-'")
    return paths.RESULTS / run_id


def write_atomic(path: Path, text: str) -> None:
    """Write text to path via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, value: object) -> None:
    write_atomic(path, json.dumps(value, indent=1, sort_keys=True) + "\n")


def boot_file(rdir: Path, key: str) -> Path:
    return rdir / "boots" / f"{key}.json"


def log_file(rdir: Path, key: str) -> Path:
    return rdir / "logs" / f"{key}.log"


def boot_done(rdir: Path, key: str) -> bool:
    return boot_file(rdir, key).exists()


def save_boot(rdir: Path, key: str, boot: dict) -> None:
    write_json(boot_file(rdir, key), boot)


def load_boots(rdir: Path) -> list[dict]:
    boots = []
    for path in sorted((rdir / "boots").glob("*.json")):
        try:
            boots.append(json.loads(path.read_text()))
        except json.JSONDecodeError as err:
            raise UserError(f"{path} is corrupt ({err}): delete it to run "
                            "that boot again") from err
    return boots


def load_records(rdir: Path) -> list[dict]:
    if not rdir.exists():
        raise UserError(f"no results at {rdir}: run 'harness.py run' or "
                        "'harness.py compare' first")
    return [r for boot in load_boots(rdir) for r in boot["records"]]


def write_records(rdir: Path) -> Path:
    """records.jsonl from every finished boot."""
    out = rdir / "records.jsonl"
    lines = [json.dumps(r, sort_keys=True) for r in load_records(rdir)]
    write_atomic(out, "".join(line + "\n" for line in lines))
    return out


def load_metadata(rdir: Path) -> dict:
    path = rdir / "metadata.json"
    return json.loads(path.read_text()) if path.exists() else {}


def update_metadata(rdir: Path, fields: dict) -> None:
    """metadata.json with fields set (written atomically)."""
    write_json(rdir / "metadata.json", {**load_metadata(rdir), **fields})
