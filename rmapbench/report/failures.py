"""The report's failures: every failed boot with why and its console
excerpt; none of them is a number in any table."""

from ..record import lane
from ..tables import params_text


def fence(text: str) -> str:
    """A code fence longer than any run of backticks in text."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def failures(failed: list[dict]) -> list[str]:
    out = ["## Failures", ""]
    if not failed:
        return out + ["None: every boot finished.", ""]
    out += [f"{len(failed)} failed boot(s); none of them is a number in "
            "any table.", ""]
    for i, rec in enumerate(failed, 1):
        out += [f"### Failure {i}: {lane(rec)} {rec.get('arch')} "
                f"{rec.get('mem_mb')} MB {rec.get('workload')}/"
                f"{rec.get('mode')} rep {rec.get('rep')}", "",
                f"- experiment: {rec.get('experiment')}",
                f"- stack: {lane(rec)}, arch: {rec.get('arch')}, "
                f"memory: {rec.get('mem_mb')} MB",
                f"- workload: {rec.get('workload')}, mode: {rec.get('mode')}, "
                f"params: {params_text(rec.get('params'))}",
                f"- repetition: {rec.get('rep')}, boot: `{rec.get('boot')}`",
                f"- failure: {rec.get('failure') or 'unknown'}", ""]
        excerpt = str(rec.get("excerpt") or "(no excerpt)")
        f = fence(excerpt)
        out += [f, excerpt, f, ""]
    return out
