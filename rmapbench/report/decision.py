"""The decision section, first in the report, and the plain-text summary.

For each regime (workloads.REGIMES) the headline comparison of every
mode that names it, at the mode's main configuration on each kernel
(arch, and build profile: profiles.PROFILES): who wins, by how much,
how surely, on which clock, under memory pressure or not; then the
regime's outcome from those rows alone, per profile when the run
measured several.  Beside them, the
stack variants the experiments also ran (testbed.BOOT_OPTIONS: anonmm
booted with another fork order) against the same anon_vma boots, as
context the outcome does not count.  Then the crossover points the
workloads declare (the smallest swept value at which anonmm, and each
variant, falls behind), and their memory-size advice.  Nothing here
is written by hand: a regime no experiment measured says so.

text_summary() renders the same rows and the summary table in fixed
width columns, for a mailing-list post (harness.py report --text).
"""

from dataclasses import dataclass, replace

from .. import metrics, profiles, settings, stats, testbed, workloads
from ..analysis import ConfigStats
from ..record import headline, swapped_out, variant_lanes
from ..testbed import BASE, NEW
from ..tables import fmt_ratio, ratio_cell, table
from . import compare

STACKS = (BASE, NEW)
# A significant difference whose whole 95% interval (or exact ratio)
# lies within this fraction of 1 decides nothing: on the icount clock a
# code path 0.3% longer is significant at two boots, yet a reader
# choosing a scheme would call the two equal.  Such a headline is
# counted as PARITY, apart from the wins.
PARITY_MARGIN = 0.01
PARITY = "parity"


@dataclass(frozen=True)
class Headline:
    """One mode's headline comparison on one kernel, or (lane not NEW)
    a stack variant's at the same configuration, against the same BASE
    boots, beside: the headline's ratio there."""
    regime: str
    what: str           # workload/mode
    arch: str           # the kernel: 'i386', 'x86_64 distro'
    config: str         # its configuration, as the summary table names it
    metric: str         # the headline metric's label
    outcome: str        # NEW, BASE, PARITY, 'same' or 'untested'
    ratio: str          # NEW/BASE [95% CI]
    sure: str           # 'exact', '*' or why there is no test
    clock: str
    pressure: bool | None   # some boot swapped out (None: not counted)
    vcpus: int = 1
    lane: str = NEW
    beside: str = ""
    profile: str = profiles.MINIMAL


def swapped(cs: ConfigStats, lanes: tuple[str, ...] = STACKS
            ) -> bool | None:
    """Whether some boot of the configuration's lanes (the headline's
    stacks) swapped a page out; None when its records count none."""
    counts = [swapped_out(r) for lane in lanes
              for r in cs.records.get(lane, [])]
    known = [c for c in counts if c is not None]
    return any(c > 0 for c in known) if known else None


def within_parity(r: stats.Ratio) -> bool:
    """The ratio's interval (its value, if exact) lies within
    PARITY_MARGIN of 1."""
    if r.value is None:
        return False
    low = r.value if r.low is None else r.low
    high = r.value if r.high is None else r.high
    return 1 - PARITY_MARGIN <= low and high <= 1 + PARITY_MARGIN


def headline_of(regime: str, workload: str, entry: metrics.Mode,
                cs: ConfigStats, lane: str = NEW) -> Headline:
    """The comparison of lane (NEW: the headline) against BASE; a
    variant that wins is named by its lane."""
    m = entry.metrics[0]
    c = cs.versus(lane).get(m.name)
    if c is None or any(not cs.records.get(s) for s in (BASE, lane)):
        outcome, ratio, sure = "untested", "—", "a stack not measured"
    else:
        outcome = compare.outcome(c, m)
        if outcome in STACKS and within_parity(c.ratio):
            outcome = PARITY
        outcome = lane if outcome == NEW else outcome
        ratio = ratio_cell(c.ratio)
        if c.mark:
            sure = c.mark
        elif outcome == "untested":
            sure = compare.untested_reason(c)
        else:
            sure = "equal" if c.note == "equal" else "not significant"
    own = cs.comparisons.get(m.name)
    beside = ratio_cell(own.ratio) if lane != NEW and own else ""
    return Headline(regime, f"{workload}/{entry.name}",
                    compare.kernel(cs.key).label(),
                    compare.config_text(cs.key), compare.metric_text(m),
                    outcome, ratio, sure, cs.key.clock,
                    swapped(cs, (BASE, lane)), cs.key.vcpus, lane, beside,
                    cs.key.profile)


Main = tuple[str, metrics.Mode, ConfigStats]


def main_configs(analysis: list[ConfigStats]) -> list[Main]:
    """(workload, mode, its main configuration on a kernel) of every
    regime-naming mode, in the workloads' order."""
    kernels = compare.kernels(analysis)
    out = []
    for workload, entry in metrics.declared_modes():
        for k in kernels if entry.regime else ():
            cs = compare.main_config(analysis, workload, entry.name, k)
            if cs is not None:
                out.append((workload, entry, cs))
    return out


def smp_configs(analysis: list[ConfigStats]) -> list[Main]:
    """(workload, mode, configuration on a kernel) of each experiment of a
    regime-naming mode that boots several vCPUs on a repeatable clock
    (icount-rr): its boots replay as the one-vCPU rows' do, and its
    repetitions' seeds give it an interval as theirs do, so it decides
    beside them.  Host-clock SMP experiments stay context."""
    kernels = compare.kernels(analysis)
    out = []
    for exp in workloads.experiments():
        entry = metrics.entry(exp.workload, exp.mode)
        if entry is None or not entry.regime or exp.name in entry.main or \
                max(exp.vcpus) < 2 or \
                not testbed.clock(exp.clocks[0]).repeatable:
            continue
        mine = [c for c in analysis if c.key.experiment == exp.name
                and c.key.vcpus > 1]
        for k in kernels:
            cs = compare.main_config(mine, exp.workload, exp.mode, k)
            if cs is not None:
                out.append((exp.workload, entry, cs))
    return out


def headlines(analysis: list[ConfigStats]) -> list[Headline]:
    """Every regime-naming mode's headline, in the workloads' order, then
    the SMP rows on a repeatable clock (named with their vCPUs) that are
    not a headline already (a run of the SMP experiment alone)."""
    main = main_configs(analysis)
    taken = {cs.key for _, _, cs in main}
    smp = [replace(h, what=f"{h.what} ({h.vcpus} vCPUs)")
           for h in (headline_of(e.regime, w, e, cs)
                     for w, e, cs in smp_configs(analysis)
                     if cs.key not in taken)]
    return [headline_of(e.regime, w, e, cs) for w, e, cs in main] + smp


def variant_headlines(analysis: list[ConfigStats],
                      records: list[dict]) -> list[Headline]:
    """The stack variants' rows at the headlines' configurations (a
    variant whose boots there all failed: a row with no test)."""
    booted = variant_lanes(records)
    return [headline_of(e.regime, w, e, cs, lane)
            for w, e, cs in main_configs(analysis)
            for lane in sorted(set(cs.variants) |
                               booted.get(cs.key.config(), set()))]


def regime_outcome(rows: list[Headline]) -> str:
    """The regime's outcome in words, from its rows only."""
    if not rows:
        return "not measured in this run (no experiment of this regime ran)"
    wins = {s: [h for h in rows if h.outcome == s] for s in STACKS}
    tested = [h for h in rows if h.outcome != "untested"]
    if not tested:
        return "no test possible (one repetition or a stack missing)"
    even = [h for h in rows if h.outcome == PARITY]
    same = len(tested) - len(wins[NEW]) - len(wins[BASE]) - len(even)
    rest = ", ".join(
        ([f"within ±{PARITY_MARGIN:.0%} in {len(even)} "
          f"({', '.join(names(even))})"] if even else []) +
        ([f"no significant difference in {same}"] if same else []))
    if wins[NEW] and wins[BASE]:
        return (f"mixed: {NEW} wins {len(wins[NEW])} of {len(tested)} "
                f"({', '.join(names(wins[NEW]))}), {BASE} "
                f"{len(wins[BASE])} ({', '.join(names(wins[BASE]))})" +
                (f"; {rest}" if rest else ""))
    for s in STACKS:
        if wins[s]:
            return (f"**{s}** wins {len(wins[s])} of {len(tested)} "
                    f"headline comparison(s)" + (f", {rest}" if rest
                                                 else ""))
    if even:
        return f"no difference beyond ±{PARITY_MARGIN:.0%}: {rest}"
    return f"no significant difference in any of {len(tested)}"


def names(rows: list[Headline]) -> list[str]:
    return [f"{h.what} {h.arch}" for h in rows]


def winner_cell(h: Headline) -> str:
    """Who wins in words (a variant by its lane)."""
    return {"same": "no difference", "untested": "no test",
            PARITY: f"within ±{PARITY_MARGIN:.0%}"}.get(h.outcome,
                                                        h.outcome)


# swapped()'s answer in words
PRESSURE = {True: "under swap", False: "no swap-out",
            None: "swap-out not counted"}


def setting(h: Headline) -> str:
    return f"{h.clock} clock, {h.vcpus} vCPU, {PRESSURE[h.pressure]}"


def headline_rows(rows: list[Headline]) -> list[list[str]]:
    return [[h.what, h.arch, h.metric, h.config, winner_cell(h), h.ratio,
             h.sure, setting(h)] for h in rows]


HEADER = ["workload/mode", "arch", "headline metric", "configuration",
          "winner", f"{NEW}/{BASE} [95% CI]", "mark", "setting"]
VARIANT_HEADER = ["workload/mode", "arch", "configuration", "variant",
                  f"{NEW}/{BASE} (headline)", f"variant/{BASE} [95% CI]",
                  "mark", "winner"]


def variant_rows(rows: list[Headline]) -> list[list[str]]:
    return [[h.what, h.arch, h.config, h.lane, h.beside or "—", h.ratio,
             h.sure, winner_cell(h)] for h in rows]


def variants_intro() -> list[str]:
    """What the headline boots run of each boot option, what a variant
    row is, and what the options choose."""
    options = testbed.BOOT_OPTIONS
    defaults = ", ".join(f"{o.stack} with `{o.name}={o.default}`"
                         for o in options)
    chooses = "; ".join(f"`{o.name}` {o.text}" for o in options)
    return [f"Headline rows boot each stack with its defaults ({defaults})"
            f" and alone decide each outcome.  A variant row boots one "
            f"stack with another value, against the same {BASE} boots: "
            f"context, showing how much of a difference is the option's "
            f"({chooses}).", ""]


def variant_table(rows: list[Headline]) -> list[str]:
    """The variants of a regime (none: nothing)."""
    if not rows:
        return []
    return ["Variants (context, not counted):", ""] + \
        table(VARIANT_HEADER, variant_rows(rows)) + [""]


SETTINGS_HEADER = ["guest setting", "workload/mode", "arch",
                   "configuration", "headline metric",
                   f"{NEW}/{BASE} without", f"{NEW}/{BASE} with [95% CI]",
                   "mark", "winner with"]


def without_setting(analysis: list[ConfigStats], cs: ConfigStats,
                    setting: settings.Setting) -> ConfigStats | None:
    """The configuration cs is but for setting: the same workload, mode,
    parameters, machine and other settings, booted without it."""
    words = set(setting.args.split())
    args = " ".join(w for w in cs.key.kernel_args.split()
                    if w not in words)
    want = replace(cs.key, kernel_args=args, experiment="")
    return next((o for o in analysis
                 if replace(o.key, experiment="") == want), None)


def settings_rows(analysis: list[ConfigStats]) -> list[list[str]]:
    """A row per configuration and guest setting (settings.py) in force
    whose same point ran without that setting too: the headline's ratio
    with it beside the ratio without (a family on zram in a memory
    cgroup beside the same family on zram)."""
    rows = []
    for cs in analysis:
        entry = workloads.mode(cs.key.workload, cs.key.mode)
        if entry is None or not entry.metrics:
            continue
        for setting in settings.in_force(cs.key.kernel_args):
            base = without_setting(analysis, cs, setting)
            own = base.comparisons.get(entry.metrics[0].name) \
                if base else None
            if own is None:
                continue
            h = headline_of(entry.regime, cs.key.workload, entry, cs)
            rows.append([setting.name, h.what, h.arch, h.config, h.metric,
                         ratio_cell(own.ratio), h.ratio, h.sure,
                         winner_cell(h)])
    return rows


def settings_table(analysis: list[ConfigStats]) -> list[str]:
    """The guest settings' rows (context, not counted), with what each
    setting does; nothing when the run booted none."""
    rows = settings_rows(analysis)
    if not rows:
        return []
    named = {n for r in rows for n in r[0].split(", ")}
    what = [f"- `{s.name}` ({s.args}): {s.text}." for s in settings.SETTINGS
            if s.name in named]
    return ["### Guest settings", "",
            "Configurations run with a feature of the kernels switched "
            "another way, in both stacks' guests alike, beside the same "
            "point run without that one setting (context: only a mode's "
            "main configuration counts in the outcomes above):", "",
            *what, "", *table(SETTINGS_HEADER, rows), ""]


@dataclass(frozen=True)
class Point:
    """A declared crossover, found or not, on one arch."""
    what: str
    arch: str
    text: str


def crossover_points(analysis: list[ConfigStats]) -> list[Point]:
    out = []
    for w in workloads.WORKLOADS.values():
        for x in w.crossovers:
            cands = [c for c in analysis if c.key.experiment == x.experiment
                     and c.key.clock == workloads.own_clock(x.experiment)
                     and c.key.record == "summary"]
            for k in compare.kernels(cands):
                mine = sorted((c for c in cands if compare.kernel(c.key) == k),
                              key=lambda c: c.key.sort_key())
                out += [Point(lane_what(x.what, lane), k.label(),
                              crossing(x, w.name, mine, lane))
                        for lane in lanes(mine)]
    return out


def lanes(mine: list[ConfigStats]) -> list[str]:
    """NEW, then every variant lane of the configurations."""
    return [NEW] + sorted({v for c in mine for v in c.variants})


def lane_what(what: str, lane: str) -> str:
    """A crossover's words, naming the variant lane it is found for."""
    return what if lane == NEW else f"{what}, variant {lane} (context)"


def behind(c: stats.Comparison, m: metrics.Metric, pct: float) -> bool:
    """NEW significantly behind BASE by more than pct percent."""
    r = c.ratio.value
    if compare.outcome(c, m) != BASE or r is None:
        return False
    return r < 1 - pct / 100 if m.direction == metrics.HIGHER \
        else r > 1 + pct / 100


def crossing(x: workloads.Crossover, workload: str,
             mine: list[ConfigStats], lane: str = NEW) -> str:
    """Where lane (NEW, or a variant) first falls behind BASE in the
    sweep, in words."""
    tested = [(c.key.param(x.param), c.versus(lane)[x.metric])
              for c in mine if x.metric in c.versus(lane)]
    tested = [(v, c) for v, c in tested if c.base and c.new]
    if not tested:
        return "not measured"
    m = metrics.lookup(x.metric, workload, mine[0].key.mode)
    for value, c in tested:
        if behind(c, m, x.pct):
            return (f"{x.param} = {value} (ratio {ratio_cell(c.ratio)}; "
                    f"measured {x.param} = {swept(tested)})")
    last_v, last = tested[-1]
    r = last.ratio.value
    mark = f", {last.mark}" if last.mark else ", no significant difference"
    return (f"not within the sweep ({x.param} = {swept(tested)}; at "
            f"{last_v}: ratio {fmt_ratio(r) if r is not None else '—'}"
            f"{mark})")


def swept(tested: list) -> str:
    return ", ".join(str(v) for v, _ in tested)


def sizing_lines(records: list[dict]) -> list[str]:
    """The workloads' memory-size advice, from the headline boots."""
    main = headline(records)
    return [line for w in workloads.WORKLOADS.values() if w.sizing
            for line in w.sizing(main)]


def run_profiles(analysis: list[ConfigStats]) -> list[str]:
    """The build profiles the run measured, in PROFILES' order."""
    return list(dict.fromkeys(k.profile for k in compare.kernels(analysis)))


def per_profile(rows: list[Headline], names: list[str]
                ) -> list[tuple[str, list[Headline]]]:
    """A regime's rows as one outcome counts them: all of them for a
    run of one profile (named ""), else each profile's apart (the
    profiles' kernels are not one population)."""
    if len(names) < 2:
        return [("", rows)]
    return [(p, [h for h in rows if h.profile == p]) for p in names]


def outcomes(rows: list[Headline], names: list[str]) -> list[str]:
    return [f"Outcome{f', {p} profile' if p else ''}: "
            f"{regime_outcome(mine)}." for p, mine in per_profile(rows, names)]


def profiles_intro(names: list[str]) -> list[str]:
    """What each profile's kernels are and leave off in both stacks,
    unless the run measured the minimal profile alone."""
    if names in ([], [profiles.MINIMAL]):
        return []
    out = ["Each profile's kernels are one comparison; the outcomes are "
           "given per profile:", ""]
    for p in (profiles.profile(n) for n in names):
        off = f" {p.off}." if p.off else ""
        out.append(f"- **{p.name}**: {p.text}.{off}")
    return out + [""]


def leaning(rows: list[Headline]) -> str:
    """Who a regime's rows favour, in a word: a stack, mixed, or even."""
    won = [s for s in STACKS if any(h.outcome == s for h in rows)]
    return won[0] if len(won) == 1 else "mixed" if won else "even"


def mode_needs(h: Headline) -> tuple[str, ...]:
    """The profile features the headline's mode needs."""
    mode = workloads.mode(*h.what.split("/", 1))
    return mode.needs if mode else ()


def profile_changes(rows: list[Headline], names: list[str]) -> list[str]:
    """One paragraph, for a run of several profiles: which regimes'
    outcomes moved between them, which held, and which one profile
    alone measured (with the features their modes need)."""
    if len(names) < 2:
        return []
    moved, held, alone = [], [], []
    for title, mine in by_regime(rows):
        got = [(p, theirs) for p, theirs in per_profile(mine, names)
               if theirs]
        if len(got) == len(names):
            leans = [(p, leaning(theirs)) for p, theirs in got]
            if len({lean for _, lean in leans}) > 1:
                moved.append(f"{title} (" + ", ".join(
                    f"{p}: {lean}" for p, lean in leans) + ")")
            else:
                held.append(f"{title} ({leans[0][1]})")
        elif got:
            needs = sorted({n for h in mine for n in mode_needs(h)})
            alone.append(f"{title} ({got[0][0]} only" +
                         (f": needs {', '.join(needs)})" if needs else ")"))
    said = [f"{what}: {'; '.join(items)}." for what, items in (
        ("Outcomes that moved between them", moved),
        ("Outcomes that held", held),
        ("Measured in one profile only", alone)) if items]
    return ["**Between the profiles.** The profiles differ in the "
            "memory-management features both stacks are built with "
            "(above), the same in either stack.  " + "  ".join(said) +
            "  Per point, the guest settings table shows what MGLRU off, "
            "a memcg limit and zswap do to a ratio.", ""]


def by_regime(rows: list[Headline]) -> list[tuple[str, list[Headline]]]:
    """(title, its rows) of every regime, in REGIMES' order, empty ones
    included: a regime no experiment measured is said, not dropped."""
    return [(title, [h for h in rows if h.regime == key])
            for key, title in workloads.REGIMES]


def decision(records: list[dict], analysis: list[ConfigStats],
             searched: list[str] = ()) -> list[str]:
    """The report's decision section (Markdown); searched: the answers
    of memory-size searches in the run (store.answer_lines)."""
    rows = headlines(analysis)
    others = variant_headlines(analysis, records)
    out = ["## Decision", "",
           "Per regime, the headline metric of each of its modes at the "
           "mode's main configuration (the Summary's rows), and where a "
           "mode also runs on several vCPUs on a repeatable clock "
           "(icount-rr), there too; the regime's "
           "outcome counts those rows and nothing else.  Mark: `*` Welch "
           "p < 0.05, `exact` a value that never varied between boots "
           "(a count, or an icount timing whose boots repeat).  A "
           "significant "
           f"difference whose whole interval stays within "
           f"±{PARITY_MARGIN:.0%} is counted as that, not as a win: on "
           "the icount clock two boots make 0.3% significant, and nobody "
           "chooses a scheme for it.", ""]
    names = run_profiles(analysis)
    out += profiles_intro(names)
    out += profile_changes(rows, names)
    out += variants_intro() if others else []
    for (title, mine), (_, theirs) in zip(by_regime(rows),
                                          by_regime(others)):
        out += [f"### {title}", ""]
        for line in outcomes(mine, names):
            out += [line, ""]
        if mine:
            out += table(HEADER, headline_rows(mine)) + [""]
        out += variant_table(theirs)
    points = crossover_points(analysis)
    if points:
        out += ["### Crossover points", ""]
        out += [f"- {p.what} ({p.arch}): {p.text}." for p in points]
        out.append("")
    out += settings_table(analysis)
    sizing = sizing_lines(records) + list(searched)
    if sizing:
        out += ["### Memory size", ""] + [f"- {s}" for s in sizing] + [""]
    return out


# --- plain text ------------------------------------------------------------

def text_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Fixed-width columns, left-aligned, two spaces apart."""
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    line = ("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip()
            for row in [header, ["-" * w for w in widths]] + rows)
    return list(line)


def plain(text: str) -> str:
    return text.replace("**", "").replace("`", "")


def text_summary(title: str, records: list[dict],
                 analysis: list[ConfigStats], failed: list[dict],
                 searched: list[str] = ()) -> str:
    """The decision and the summary table with no Markdown: a plain-text
    post in the manner of mmtests' compare output."""
    rows = headlines(analysis)
    names = run_profiles(analysis)
    out = [title, "=" * len(title), ""]
    out += [plain(line) for line in profiles_intro(names)]
    for title, mine in by_regime(rows):
        out += [f"{title}{f' ({p})' if p else ''}: "
                f"{plain(regime_outcome(theirs))}"
                for p, theirs in per_profile(mine, names)]
    out.append("")
    if rows:
        out += text_table(HEADER, headline_rows(rows)) + [""]
    others = variant_headlines(analysis, records)
    if others:
        out += ["Variants (context, not counted in the outcomes above)",
                ""] + text_table(VARIANT_HEADER, variant_rows(others))
        out += [""]
    points = crossover_points(analysis)
    out += [f"{p.what} ({p.arch}): {p.text}" for p in points]
    out += [""] + [plain(s) for s in sizing_lines(records) + list(searched)]
    out += [""]
    summary = compare.summary_rows(analysis,
                                   compare.failed_counts(failed))
    if summary:
        out += ["Summary (each workload/mode at its main configuration)", ""]
        out += text_table(compare.SUMMARY_HEADER, summary)
        out += ["", plain(compare.LEGEND)]
    return "\n".join(out).rstrip() + "\n"
