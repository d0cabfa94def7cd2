"""tools/boot-timeline.py: a stored boot's QEMU command made new."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_timeline():
    spec = importlib.util.spec_from_file_location(
        "boot_timeline", ROOT / "tools" / "boot-timeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stored_command_gets_a_new_initrd_swap_and_arguments(tmp_path):
    tl = load_timeline()
    stored = ["qemu-system-x86_64", "-kernel", "bzImage", "-initrd",
              "/gone/initrd.cpio", "-append", "console=ttyS0 noapictimer",
              "-drive", "file=/gone/swap.img,if=virtio,format=raw",
              "-qmp", "unix:/gone/qmp.sock,server=on,wait=off"]
    cmd = tl.command(stored, tmp_path / "i.cpio", tmp_path / "s.img",
                     "acpi=off")
    assert cmd[cmd.index("-initrd") + 1] == str(tmp_path / "i.cpio")
    assert cmd[cmd.index("-append") + 1] == "console=ttyS0 noapictimer " \
        "acpi=off"
    assert cmd[cmd.index("-drive") + 1].startswith(
        f"file={tmp_path / 's.img'},")
    assert "-qmp" not in cmd and stored[4] == "/gone/initrd.cpio"
