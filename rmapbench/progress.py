"""Progress lines for long steps: step n of m, what runs, elapsed, ETA."""

import sys
import time


def fmt_seconds(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """Counts steps of a long job and prints one line per event.

    The ETA is the time per unit of work of the finished steps times
    the work left; a step's work is its weight (1 unless the caller
    knows better: a boot running 14 packed cases weighs 14).  An
    estimate the caller knows better (a previous build's duration) can
    be passed to note().
    """

    def __init__(self, total: int, label: str, stream=None,
                 work: float | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.work = float(total if work is None else work)
        self.work_done = 0.0
        self.start = time.monotonic()
        self.stream = stream or sys.stderr

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def eta(self) -> float | None:
        if self.work_done <= 0:
            return None
        return self.elapsed() / self.work_done * \
            max(0.0, self.work - self.work_done)

    def note(self, what: str, eta: float | None = None) -> None:
        eta = self.eta() if eta is None else eta
        eta_text = "?" if eta is None else fmt_seconds(eta)
        print(f"[{self.label} {min(self.done + 1, self.total)}/{self.total}]"
              f" {what} (elapsed {fmt_seconds(self.elapsed())},"
              f" ETA {eta_text})", file=self.stream, flush=True)

    def step_done(self, weight: float = 1.0) -> None:
        self.done += 1
        self.work_done += weight
