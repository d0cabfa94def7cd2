"""The four kernels, built by 'harness.py build' (make test does it first),
booted in QEMU: each names its scheme, shows its counters, and a kernel
or workload failure is reported as a failure, never as a result."""

import shutil

import pytest

from rmapbench import guest, kbuild, paths, postmortem, qemu, testbed
from rmapbench import smoke
from rmapbench.errors import UserError

KERNELS = [(s, a) for s in testbed.stack_names()
           for a in testbed.arch_names()]


def require_kernel(stack, arch):
    if not kbuild.kernel_image(stack, arch).exists():
        pytest.fail(f"{stack} {arch} kernel not built: run "
                    "'harness.py build' (make test does)")


@pytest.mark.parametrize("arch", testbed.arch_names())
def test_configs_differ_only_in_the_scheme(arch):
    lines, unfair = kbuild.config_diff(arch)
    assert unfair == [], lines


@pytest.mark.parametrize("stack,arch", KERNELS)
def test_fragments_hold_in_the_built_config(stack, arch):
    config = paths.build_dir(stack, arch) / ".config"
    kbuild.check_fragments(config, kbuild.config_fragments(stack, arch))


@pytest.mark.parametrize("stack,arch", KERNELS)
def test_smoke_boot(stack, arch, tmp_path):
    require_kernel(stack, arch)
    run = guest.run(smoke.boot_of(stack, arch), tmp_path / "console.log")
    assert smoke.check(run) == [], run.boot.log.read_text()[-3000:]
    sizes = run.console.section_pairs("rmapbench")
    assert int(sizes["sizeof_vm_area_struct"]) > 0
    if sizes["scheme"] == "anon_vma":
        assert int(sizes["sizeof_anon_vma_chain"]) > 0
        assert sizes["sizeof_anonmm"] == "0"
    else:
        assert int(sizes["sizeof_anonmm"]) > 0
        assert sizes["sizeof_anon_vma"] == "0"
        assert sizes["sizeof_anon_vma_chain"] == "0"
        slabs = {line.split()[0] for line in
                 run.console.sections.get("slabinfo", []) if line.strip()}
        assert "anonmm" in slabs
        assert not {"anon_vma", "anon_vma_chain"} & slabs


def boot_x86_64(tmp_path, plan, timeout_s=120.0, append=""):
    require_kernel("anon_vma", "x86_64")
    return guest.run(qemu.Boot("anon_vma", "x86_64", plan, mem_mb=128,
                               timeout_s=timeout_s, append=append),
                     tmp_path / "console.log")


def test_a_panic_is_a_failure(tmp_path):
    # No init to run: the kernel panics looking for a root file system.
    run = boot_x86_64(tmp_path, "info\n", append="rdinit=/no-such-init")
    assert run.failure is not None and "panic" in run.failure
    assert any("Kernel panic" in f.excerpt for f in run.console.faults)


def test_a_failing_step_is_a_failure(tmp_path):
    run = boot_x86_64(tmp_path, "run rmb-vma V=0\ninfo\n")
    assert run.failure is not None and "rmb-vma V=0" in run.failure
    assert run.console.steps[0].rc == 2
    assert run.console.steps[0].errors


def test_a_hung_guest_times_out(tmp_path):
    run = boot_x86_64(tmp_path, "sh sleep 600\n", timeout_s=15.0)
    assert run.boot.timed_out
    assert run.failure.startswith("timed out")
    # the guest, then QEMU, were asked before the kill what it was doing
    log = run.boot.log.read_text(errors="replace")
    assert postmortem.MARKER in log and "HLT=" in log
    guest_says, _ = log.split(postmortem.MARKER, 1)
    assert "sysrq: Show State" in guest_says
    assert "task:sleep" in guest_says         # the step, asleep


def test_a_broken_patch_stops_the_build(tmp_path):
    good = kbuild.read_series(kbuild.series_file("anon_vma"))[0]
    broken = tmp_path / "0099-broken.patch"
    # a context line no 6.1 tree has: the hunk cannot apply
    text = good.read_text().replace(" \tif (rwc->try_lock) {",
                                    " \tif (rwc->try_lock && no_such_thing) {", 1)
    broken.write_text(text)
    series = tmp_path / "series"
    series.write_text(f"{broken}\n")
    tree = tmp_path / "tree"
    try:
        with pytest.raises(UserError) as err:
            kbuild.prepare(series, tree)
        message = str(err.value)
        assert "patch 0099-broken.patch does not apply" in message
        assert "FAILED" in message and "no_such_thing" in message
        assert not (tree / kbuild.STAMP).exists()
    finally:
        shutil.rmtree(tree, ignore_errors=True)


# What anonmm saves in every vm_area_struct: anon_vma_chain (a list_head)
# and the anon_vma pointer, as DESIGN.md says.
SAVED_PER_VMA = {"i386": 12, "x86_64": 24}


@pytest.mark.parametrize("arch", testbed.arch_names())
def test_anonmm_vm_area_struct_is_smaller(arch, tmp_path):
    sizes = {}
    for stack in testbed.stack_names():
        require_kernel(stack, arch)
        run = guest.run(qemu.Boot(stack, arch, "info\n", mem_mb=256,
                                  timeout_s=smoke.SMOKE_TIMEOUT_S),
                        tmp_path / f"{stack}.log")
        assert run.failure is None, run.failure
        sizes[stack] = run.console.section_pairs("rmapbench")
    assert sizes["anon_vma"]["scheme"] == "anon_vma"
    assert sizes["anonmm"]["scheme"] == "anonmm"
    saved = int(sizes["anon_vma"]["sizeof_vm_area_struct"]) - \
        int(sizes["anonmm"]["sizeof_vm_area_struct"])
    assert saved == SAVED_PER_VMA[arch]
