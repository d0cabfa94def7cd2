"""Series, patches and configs, on small fabricated inputs."""

import subprocess

import pytest

from rmapbench import kbuild, paths
from rmapbench.errors import UserError
from rmapbench.profiles import Target


def test_read_series_skips_comments_and_resolves(tmp_path):
    (tmp_path / "a.patch").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.patch").write_text("")
    series = tmp_path / "series"
    series.write_text("# head\n\na.patch\nsub/b.patch  # trailing\n")
    assert kbuild.read_series(series) == [
        (tmp_path / "a.patch").resolve(), (tmp_path / "sub/b.patch").resolve()]


def test_read_series_names_the_missing_patch(tmp_path):
    series = tmp_path / "series"
    series.write_text("gone.patch\n")
    with pytest.raises(UserError, match=r"series:1: patch 'gone.patch'"):
        kbuild.read_series(series)


def make_patch(tmp_path, old, new, name="fix.patch"):
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    (tmp_path / "a" / "f.c").write_text(old)
    (tmp_path / "b" / "f.c").write_text(new)
    diff = subprocess.run(["diff", "-u", "a/f.c", "b/f.c"], cwd=tmp_path,
                          capture_output=True, text=True).stdout
    patch = tmp_path / name
    patch.write_text(diff)
    return patch


def test_apply_patch_applies(tmp_path):
    patch = make_patch(tmp_path, "one\ntwo\nthree\n", "one\n2\nthree\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "f.c").write_text("one\ntwo\nthree\n")
    kbuild.apply_patch(tree, patch)
    assert (tree / "f.c").read_text() == "one\n2\nthree\n"


def test_apply_patch_refuses_fuzz_and_shows_the_hunk(tmp_path):
    old = "".join(f"l{i}\n" for i in range(10))
    patch = make_patch(tmp_path, old, old.replace("l5", "five"),
                       name="0003-broken.patch")
    tree = tmp_path / "tree"
    tree.mkdir()
    # context differs by one line: fuzz 1 would apply it, we must not
    (tree / "f.c").write_text(old.replace("l3", "other"))
    with pytest.raises(UserError) as err:
        kbuild.apply_patch(tree, patch)
    text = str(err.value)
    assert "0003-broken.patch does not apply" in text
    assert "+five" in text and "FAILED" in text


def test_parse_config():
    text = ("#\n# comment\nCONFIG_A=y\n# CONFIG_B is not set\n"
            'CONFIG_C="x y"\nCONFIG_D=12\n')
    assert kbuild.parse_config(text) == {
        "CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"x y"',
        "CONFIG_D": "12"}


def test_check_fragments_lists_every_miss(tmp_path):
    frag = tmp_path / "base.config"
    frag.write_text("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n")
    config = tmp_path / ".config"
    config.write_text("CONFIG_A=y\nCONFIG_B=y\n")
    with pytest.raises(UserError) as err:
        kbuild.check_fragments(config, [frag])
    assert "CONFIG_B=n (base.config) but .config has CONFIG_B=y" in str(
        err.value)
    assert "CONFIG_C=y (base.config) but .config has CONFIG_C=n" in str(
        err.value)
    config.write_text("CONFIG_A=y\nCONFIG_C=y\n")
    kbuild.check_fragments(config, [frag])


def write_configs(monkeypatch, tmp_path, anon_vma, anonmm):
    for stack, text in (("anon_vma", anon_vma), ("anonmm", anonmm)):
        out = tmp_path / stack / "out-x86_64"
        out.mkdir(parents=True)
        (out / ".config").write_text(text)
    monkeypatch.setenv("RMAPBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(kbuild.paths, "build_dir",
                        lambda s, a, suffix="": tmp_path / s / f"out-{a}")


def test_config_diff_allows_only_the_scheme(monkeypatch, tmp_path):
    write_configs(monkeypatch, tmp_path, "CONFIG_A=y\n",
                  "CONFIG_A=y\nCONFIG_ANONMM=y\n")
    lines, unfair = kbuild.config_diff("x86_64")
    assert lines == ["CONFIG_ANONMM: anon_vma=n anonmm=y"]
    assert unfair == []


def test_config_diff_flags_other_options(monkeypatch, tmp_path):
    write_configs(monkeypatch, tmp_path, "CONFIG_A=y\n", "CONFIG_A=m\n")
    lines, unfair = kbuild.config_diff("x86_64")
    assert unfair == ["CONFIG_A"]


def test_config_diff_without_builds_says_what_to_run(monkeypatch, tmp_path):
    monkeypatch.setattr(kbuild.paths, "build_dir",
                        lambda s, a, suffix="": tmp_path / s / f"out-{a}")
    with pytest.raises(UserError, match="harness.py build"):
        kbuild.config_diff("i386")


# ---- debug variants ---------------------------------------------------------

def test_a_variant_adds_its_fragment_last_and_its_own_cache(monkeypatch):
    monkeypatch.delenv("RMAPBENCH_CACHE", raising=False)
    monkeypatch.setenv("RMAPBENCH_VARIANT", "lockdep")
    for stack in ("anon_vma", "anonmm"):
        frags = kbuild.config_fragments(stack, "x86_64")
        assert frags[-1] == kbuild.paths.KERNELS / "debug" / "lockdep.config"
    assert kbuild.paths.cache_dir().name == "rmapbench-lockdep"
    monkeypatch.delenv("RMAPBENCH_VARIANT")
    assert kbuild.paths.cache_dir().name == "rmapbench"
    assert all("debug" not in str(f)
               for f in kbuild.config_fragments("anonmm", "i386"))


def test_an_unknown_variant_names_the_known_ones(monkeypatch):
    monkeypatch.setenv("RMAPBENCH_VARIANT", "kasan-typo")
    with pytest.raises(UserError, match="kasan-typo.*known variants: "
                                        ".*lockdep"):
        kbuild.paths.variant()


def test_runs_refuse_a_debug_variant(monkeypatch):
    from rmapbench import experiments, runner
    monkeypatch.setenv("RMAPBENCH_VARIANT", "lockdep")
    with pytest.raises(UserError, match="timings mean nothing"):
        runner.run_experiments(experiments.by_name(["vma-cost"]),
                               ["anon_vma"], ["i386"], 1, None, "t", "tcg", 1)


def test_measured_kernels_carry_no_debug_option(tmp_path):
    """Whatever a debug variant switches on (DEBUG_VM, lockdep, KASAN,
    fault injection) is refused in a measured kernel's config."""
    symbols = kbuild.debug_symbols()
    assert {"CONFIG_DEBUG_VM", "CONFIG_PROVE_LOCKING", "CONFIG_KASAN",
            "CONFIG_FAULT_INJECTION"} <= symbols
    assert not kbuild.SUPPORT & symbols
    config = tmp_path / ".config"
    config.write_text("CONFIG_DEBUG_KERNEL=y\nCONFIG_SLUB_DEBUG=y\n"
                      "CONFIG_DEBUG_FS=y\n# CONFIG_DEBUG_VM is not set\n")
    kbuild.check_measured(config)
    config.write_text("CONFIG_DEBUG_VM=y\nCONFIG_FAILSLAB=y\n")
    with pytest.raises(UserError) as err:
        kbuild.check_measured(config)
    assert "CONFIG_DEBUG_VM" in str(err.value)
    assert "CONFIG_FAILSLAB" in str(err.value)
    assert "kernels/debug" in str(err.value)


@pytest.mark.parametrize("name", ["base.config", "minimal.config",
                                  "distro.config"])
def test_the_common_fragments_are_free_of_debug_options(name):
    frag = kbuild.parse_config((kbuild.paths.KERNELS / "common" / "config" /
                                name).read_text())
    assert not {k for k, v in frag.items() if v != "n"} & \
        kbuild.debug_symbols()


def test_an_unchanged_kernel_is_not_rebuilt(monkeypatch, tmp_path):
    monkeypatch.setenv("RMAPBENCH_CACHE", str(tmp_path))
    monkeypatch.delenv("RMAPBENCH_VARIANT", raising=False)
    tree = paths.tree_dir("anonmm")
    tree.mkdir(parents=True)
    (tree / kbuild.STAMP).write_text("series-digest\n")
    image = kbuild.kernel_image("anonmm", "x86_64")
    image.parent.mkdir(parents=True)
    image.write_text("bzImage")
    monkeypatch.setattr(kbuild, "prepare_tree",
                        lambda stack, profile="minimal": tree)

    def refuse(*args):
        raise AssertionError("configured an up-to-date kernel")
    monkeypatch.setattr(kbuild, "configure", refuse)
    inputs = kbuild.build_inputs("anonmm", "x86_64")
    (paths.build_dir("anonmm", "x86_64") / kbuild.BUILT).write_text(inputs)
    assert kbuild.build_all(["anonmm"], ["x86_64"]) == [image]
    (tree / kbuild.STAMP).write_text("another series\n")
    assert not kbuild.up_to_date("anonmm", Target("minimal", "x86_64"),
                                 kbuild.build_inputs("anonmm", "x86_64"))
    with pytest.raises(AssertionError, match="configured"):
        kbuild.build_all(["anonmm"], ["x86_64"])
