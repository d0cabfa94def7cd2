"""Slurm's commands as the harness uses them: sbatch command lines,
submission, the jobs of a run still queued, the cluster's size, and
whether a directory is one every node sees.  It knows nothing of runs
(jobarray.py does); every function that runs a command takes its
output apart in a function of its own, so the tests need no cluster.
"""

import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError

# Filesystems that live on one machine: a run directory on one of them
# is seen by the tasks of that machine only.
LOCAL_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs",
                      "overlay", "zfs", "f2fs", "vfat", "ramfs"})


def require() -> None:
    """sbatch, squeue and sinfo on PATH, or a UserError before any
    planning."""
    missing = [c for c in ("sbatch", "squeue", "sinfo")
               if not shutil.which(c)]
    if missing:
        raise UserError(f"--slurm: no {', '.join(missing)} on PATH: "
                        "install Slurm's client (Debian's slurm-client) "
                        "on this machine and point SLURM_CONF at the "
                        "cluster's slurm.conf, or run without --slurm")


def run(cmd: list[str], what: str) -> str:
    """A Slurm command's standard output; its failure is a UserError
    naming the command and its own message."""
    try:
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=120)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise UserError(f"{what}: '{cmd[0]}' did not run ({err}): is "
                        "Slurm's controller up (sinfo)?") from err
    if res.returncode != 0:
        said = (res.stderr.strip() or res.stdout.strip()).splitlines()
        raise UserError(f"{what}: {shlex.join(cmd[:3])}... failed: "
                        f"{said[-1] if said else f'exit {res.returncode}'}")
    return res.stdout


@dataclass(frozen=True)
class Array:
    """One sbatch submission: an array of tasks (first..last), or a
    single job (first None)."""
    name: str
    command: str            # the shell line each task runs
    output: str             # sbatch's --output pattern
    first: int | None = None
    last: int | None = None
    exclusive: bool = False  # the whole node for each task
    cpus: int = 1           # CPUs a task uses (when not exclusive)
    mem_mb: int = 1024
    minutes: int = 60
    after: tuple[str, ...] = ()   # job ids this waits for (afterany)


def sbatch_command(job: Array, chdir: Path, extra: list[str]) -> list[str]:
    """The sbatch command line of job (extra: the user's own options,
    last, so they win)."""
    cmd = ["sbatch", "--parsable", f"--job-name={job.name}",
           f"--output={job.output}", f"--chdir={chdir}",
           f"--mem={job.mem_mb}M", f"--time={job.minutes}"]
    if job.first is not None:
        cmd.append(f"--array={job.first}-{job.last}")
    cmd.append("--exclusive" if job.exclusive
               else f"--cpus-per-task={job.cpus}")
    if job.after:
        cmd.append(f"--dependency=afterany:{':'.join(job.after)}")
    return cmd + extra + [f"--wrap={job.command}"]


def job_id(parsable: str) -> str:
    """The job id of sbatch --parsable's answer ('123' or '123;cluster')."""
    first = parsable.strip().split(";", 1)[0]
    if not first.isdigit():
        raise UserError(f"sbatch answered '{parsable.strip()}', not a job "
                        "id")
    return first


def submit(job: Array, chdir: Path, extra: list[str]) -> str:
    """Submit job; its id."""
    return job_id(run(sbatch_command(job, chdir, extra),
                      f"submitting {job.name}"))


def queued(output: str) -> list[tuple[str, str, str]]:
    """(job id, state, reason) of each line of squeue -h -o '%i|%T|%r'."""
    rows = []
    for line in output.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3:
            rows.append((parts[0], parts[1], parts[2]))
    return rows


def jobs_named(name: str) -> list[tuple[str, str, str]]:
    """The jobs (array tasks apart) of that name still queued or
    running: (job id, state, reason)."""
    return queued(run(["squeue", "-h", "-r", f"--name={name}",
                       "-o", "%i|%T|%r"], "asking squeue"))


def node_names(output: str) -> set[str]:
    """The nodes of sinfo -h -N -o %N (a node is listed per partition)."""
    return {line.strip() for line in output.splitlines() if line.strip()}


def nodes() -> set[str]:
    return node_names(run(["sinfo", "-h", "-N", "-o", "%N"],
                          "asking sinfo for the nodes"))


def mount_of(path: Path, mounts: str) -> tuple[str, str]:
    """(mount point, filesystem type) of path in /proc/mounts' text: the
    longest mount point above it."""
    best = ("/", "unknown")
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = str(path) == point or str(path).startswith(
            point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, fields[2])
    return best


def local_dirs(dirs: dict[str, Path], mounts: str) -> list[str]:
    """What of dirs (what -> path) lies on a filesystem of one machine."""
    out = []
    for what, path in dirs.items():
        point, fs = mount_of(path, mounts)
        if fs in LOCAL_FS:
            out.append(f"{what} {path} ({fs} at {point})")
    return out


def require_shared(dirs: dict[str, Path], hosts: set[str],
                   mounts: str) -> None:
    """On a cluster of more than one node, every directory the tasks
    read and write must be one all nodes see; one node sees its own."""
    if len(hosts) <= 1:
        return
    local = local_dirs(dirs, mounts)
    if local:
        raise UserError(f"--slurm: the cluster has {len(hosts)} nodes, but "
                        f"{'; '.join(local)} is on a filesystem of this "
                        "machine only: put the repository, the results "
                        "(RMAPBENCH_RESULTS) and the cache "
                        "(RMAPBENCH_CACHE) on a directory every node "
                        "mounts (NFS, Lustre...)")
