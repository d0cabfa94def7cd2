"""A verdict: one test (or boot check) on one kernel."""

from dataclasses import asdict, dataclass, field

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass
class Verdict:
    test: str
    kernel: str                 # "<stack>/<arch>"
    verdict: str                # PASS, FAIL or SKIP
    reason: str = ""            # why (a pass with a reason is a pass*)
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def kernel_name(stack: str, arch: str) -> str:
    return f"{stack}/{arch}"
