"""Parsing guest consoles: sections, steps, results, faults."""

from rmapbench import console

GOOD = """\
[    0.000000] Linux version 6.1.192
RMB-SWAP /dev/vda
RMB-STEP 1/2 info
RMB-BEGIN rmapbench
scheme anon_vma
sizeof_vm_area_struct 136
RMB-END rmapbench
RMB-BEGIN meminfo
MemTotal:         245956 kB
LowTotal:         870000 kB
HugePages_Total:       0
RMB-END meminfo
RMB-STEP-END 1 rc=0 ms=12
RMB-STEP 2/2 run rmb-vma V=10
RMB-RESULT {"workload": "vma", "vmas_count": 10}
RMB-STEP-END 2 rc=0 ms=340
RMB-DONE rc=0
"""


def test_sections_and_pairs():
    con = console.parse(GOOD)
    assert con.section_pairs("rmapbench") == {
        "scheme": "anon_vma", "sizeof_vm_area_struct": "136"}
    assert con.meminfo_kb()["LowTotal"] == 870000
    assert con.meminfo_kb()["HugePages_Total"] == 0
    assert con.swap == "/dev/vda"
    assert con.done_rc == 0
    assert con.faults == []


def test_steps_carry_their_results():
    con = console.parse(GOOD)
    assert [s.number for s in con.steps] == [1, 2]
    assert con.steps[1].command == "run rmb-vma V=10"
    assert con.steps[1].rc == 0 and con.steps[1].ms == 340
    assert con.steps[1].results == [{"workload": "vma", "vmas_count": 10}]
    assert con.steps[0].results == []


def test_crlf_and_bad_json_are_tolerated():
    con = console.parse(GOOD.replace("\n", "\r\n") +
                        "RMB-RESULT {not json\r\nRMB-STEP-END x\r\n")
    assert con.done_rc == 0
    assert "{not json" in con.bad_lines
    assert "RMB-STEP-END x" in con.bad_lines


def fault_kinds(text):
    return [f.kind for f in console.parse(text).faults]


def test_each_fault_kind_is_found():
    lines = {
        "[ 1.0] BUG: unable to handle page fault for address": "BUG",
        "[ 1.0] kernel BUG at mm/rmap.c:1234!": "BUG",
        "[ 1.0] WARNING: CPU: 0 PID: 1 at mm/rmap.c:99": "WARNING",
        "[ 1.0] Oops: 0000 [#1] SMP": "Oops",
        "[ 1.0] Kernel panic - not syncing: Attempted to kill init!":
            "panic",
        "[ 1.0] general protection fault, probably for non-canonical":
            "general protection fault",
        "[ 1.0] BUG: Bad page state in process x  pfn:1234": "BUG",
        "[ 1.0] Bad page map in process x  pte:1": "Bad page",
        "[ 1.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!": "BUG",
        "[ 1.0] INFO: task x:1 blocked for more than 120 seconds.":
            "hung task",
        "[ 1.0] rmb-vma[55]: segfault at 0 ip 0 sp 0 error 4":
            "user segfault",
        "[ 1.0] BUG kmalloc-64 (Not tainted): Poison overwritten": "BUG",
    }
    for line, kind in lines.items():
        assert fault_kinds(line + "\n") == [kind], line


def test_soft_lockup_alone_is_a_fault():
    assert fault_kinds("[ 1.0] soft lockup on CPU 0\n") == ["soft lockup"]


def test_clean_boot_lines_are_not_faults():
    text = ("[ 0.0] Built 1 zonelists, mobility grouping on.\n"
            "[ 0.0] CONFIG_DEBUG_VM=y\n"
            "[ 0.0] x86/fpu: Supporting XSAVE feature 0x001\n"
            "RMB-ERROR {\"message\": \"BUG: our own words are not faults\"}\n")
    assert fault_kinds(text) == []


def test_fault_excerpt_keeps_context():
    text = "\n".join(f"line {i}" for i in range(20)) + \
        "\n[ 2.0] Oops: 0002 [#1]\n" + "\n".join(
            f"trace {i}" for i in range(60))
    fault = console.parse(text).faults[0]
    assert fault.line_number == 21
    assert "line 19" in fault.excerpt and "trace 0" in fault.excerpt
    assert "trace 59" not in fault.excerpt


def test_clocksource_is_read_and_a_jiffies_clock_fails_the_boot(tmp_path):
    from rmapbench import guest, qemu
    text = ("[    0.400000] clocksource: Switched to clocksource "
            "refined-jiffies\n"
            "[    1.800000] clocksource: Switched to clocksource tsc\n" + GOOD)
    con = console.parse(text)
    assert con.clocksource == "tsc"
    boot = qemu.BootResult(tmp_path / "log", 1.0, False, 0, [])
    assert guest.verdict(boot, con) is None
    con = console.parse(text.replace("clocksource tsc", "clocksource pit")
                        .replace("pit\n", "jiffies\n"))
    assert con.clocksource == "jiffies"
    assert "guest clock is jiffies" in guest.verdict(boot, con)


def test_samples_are_parsed_and_bad_ones_kept_aside():
    con = console.parse("RMB-SAMPLE t_ms=1200 LowFree_kb=800 pswpout=5\n"
                        "RMB-SAMPLE t_ms=2200 LowFree_kb=700 pswpout=9\n"
                        "RMB-SAMPLE t_ms=x\n")
    assert con.samples == [{"t_ms": 1200, "LowFree_kb": 800, "pswpout": 5},
                           {"t_ms": 2200, "LowFree_kb": 700, "pswpout": 9}]
    assert con.bad_lines == ["RMB-SAMPLE t_ms=x"]


def test_each_step_keeps_its_output_and_lines_map_to_steps():
    con = console.parse("boot line\n" + GOOD)
    assert con.preamble == ["boot line",
                            "[    0.000000] Linux version 6.1.192",
                            "RMB-SWAP /dev/vda"]
    assert con.output(1)[0] == "RMB-STEP 1/2 info"
    assert "MemTotal:         245956 kB" in con.output(1)
    assert con.output(2) == ["RMB-STEP 2/2 run rmb-vma V=10",
                             '{"workload": "vma", "vmas_count": 10}'.join(
                                 ["RMB-RESULT ", ""]),
                             "RMB-STEP-END 2 rc=0 ms=340", "RMB-DONE rc=0"]
    assert con.output(3) == []
    assert con.step_of_line(1) == 0 and con.step_of_line(4) == 1
    assert con.step_of_line(len(con.line_steps)) == 2


def test_kernel_messages_stay_out_of_sections_even_mid_line():
    """The kernel writes a message whole, but into the middle of a line a
    program is writing (as seen on the serial console)."""
    text = ("RMB-STEP 1/1 info\n"
            "RMB-BEGIN meminfo\n"
            "MemTotal:  500 kB\n"
            "[    1.721052] input: ImExPS/2 Generic Explorer Mouse as /dev\n"
            "MemFree:   400 kB\n"
            "RMB-END meminfo\n"
            "RMB-BEGIN vmstat\n"
            "pswpout 1024\n"
            "anon_rmap_walk 204[    1.781443] clocksource: Switched to "
            "clocksource tsc\n"
            "[    1.790000] another message\n"
            "8\n"
            "anon_rmap_visit 2048\n"
            "RMB-END vmstat\n"
            "RMB-RESULT {\"a\": [    1.000001] k: cut\n"
            "1}\n"
            "RMB-STEP-END 1 rc=0 ms=5\n")
    con = console.parse(text)
    assert con.meminfo_kb() == {"MemTotal": 500, "MemFree": 400}
    assert con.section_pairs("vmstat") == {
        "pswpout": "1024", "anon_rmap_walk": "2048",
        "anon_rmap_visit": "2048"}
    assert con.clocksource == "tsc"
    assert con.steps[-1].results == [{"a": 1}] and not con.bad_lines
    assert "[    1.790000] another message" in con.steps[-1].lines


def test_the_cpus_the_kernel_brought_up():
    line = "[    0.641915] smp: Brought up 2 nodes, 4 CPUs\n"
    assert console.parse(line + GOOD).online_cpus() == 4
    assert console.parse("[ 0.1] smp: Brought up 1 node, 1 CPU\n" +
                         GOOD).online_cpus() == 1
    assert console.parse(GOOD).online_cpus() == 1


def test_a_step_failed_after_oom_kills_says_what_the_killer_took(tmp_path):
    from rmapbench import guest, qemu
    kills = ("[   11.832658] Out of memory: Killed process 92 (rmb-swap) "
             "total-vm:38328kB, anon-rss:32kB\n"
             "[   12.404539] Memory cgroup out of memory: Killed process 91 "
             "(rmb-swap) total-vm:38328kB\n")
    text = GOOD.replace("RMB-STEP-END 2 rc=0", kills + "RMB-STEP-END 2 rc=1")
    con = console.parse(text)
    assert con.oom_kills() == ["rmb-swap (pid 92)", "rmb-swap (pid 91)"]
    boot = qemu.BootResult(tmp_path / "log", 1.0, False, 0, [])
    assert guest.verdict(boot, con) == (
        "failed step(s): 2 'run rmb-vma V=10' rc=1; the OOM killer killed "
        "rmb-swap (pid 92), rmb-swap (pid 91)")
    # killed, yet the plan ended well: the boot passes, as before
    assert guest.verdict(boot, console.parse(
        GOOD.replace("RMB-STEP-END 2", kills + "RMB-STEP-END 2"))) is None
