# rmapbench: compare the anonmm and anon_vma anon rmap schemes on Linux 6.1.
#
#   make compare   fresh Debian machine -> kernels, runs, report (the main job)
#   make test      the project's tests (unit + kernels built and booted)
#
# Kernel trees and builds live in $(RMAPBENCH_CACHE) (default
# ~/.cache/rmapbench), never in the repository.

PYTHON  ?= /usr/bin/python3
HARNESS := $(PYTHON) harness.py
PYTEST  := $(PYTHON) -m pytest -q -p no:cacheprovider

.PHONY: all setup kernels smoke config-diff compare check-kernels \
	check-kernels-quick check-lockdep check-variant test test-unit lint \
	checkpatch clean clean-cache

all: kernels

setup:
	sh tools/setup-debian.sh

kernels: setup
	$(HARNESS) build

smoke: kernels
	$(HARNESS) smoke

config-diff: kernels
	$(HARNESS) config-diff

# set-up and builds are phases of the run: their wall times go to the
# run's metadata.json with the boots' (rmapbench/phases.py)
compare:
	started=$$(date +%s.%N); sh tools/setup-debian.sh && \
	RMAPBENCH_SETUP_STARTED=$$started $(HARNESS) compare --build

# The correctness suite on the four kernels (docs/correctness.md).
check-kernels: kernels
	$(HARNESS) check

check-kernels-quick: kernels
	$(HARNESS) check --quick

# The full suite on debug kernels of both stacks (kernels/debug/
# $(VARIANT).config), built in their own cache ~/.cache/rmapbench-$(VARIANT):
# more cold builds, about 10 minutes a kernel.
VARIANT ?= lockdep
VARIANT_ARCH ?= i386,x86_64
check-variant: setup
	RMAPBENCH_VARIANT=$(VARIANT) $(HARNESS) build --arch $(VARIANT_ARCH)
	RMAPBENCH_VARIANT=$(VARIANT) $(HARNESS) check --arch $(VARIANT_ARCH)

# lockdep on both arches (about 45 minutes); LOCKDEP_ARCH=x86_64 halves it
LOCKDEP_ARCH ?= i386,x86_64
check-lockdep:
	$(MAKE) check-variant VARIANT=lockdep VARIANT_ARCH=$(LOCKDEP_ARCH)

# The kernels are built first (incremental, ccache): the comparison's
# (i386 minimal, x86_64 distro) and x86_64 minimal, on which the
# integration tests boot the harness's own checks; then the linters, then
# one pytest run: unit tests (seconds), then the integration tests that
# boot the kernels.
test: setup
	$(HARNESS) build --profile minimal,distro
	$(MAKE) lint checkpatch
	$(PYTEST) tests/unit tests/integration

test-unit:
	$(PYTEST) tests/unit

# flake8 (.flake8) on the Python, shellcheck on the shell scripts.
lint:
	flake8
	shellcheck bench/init.sh tools/*.sh

# The kernel's checkpatch.pl on every patch of the series (the pristine
# tree is extracted by the build).  Its trailing-whitespace check also
# fires on empty context lines of these patches, so added lines are
# checked for it apart.
CHECKPATCH = $${RMAPBENCH_CACHE:-$$HOME/.cache/rmapbench}/linux-source-6.1/scripts/checkpatch.pl
checkpatch:
	perl $(CHECKPATCH) --no-tree --quiet --ignore TRAILING_WHITESPACE \
		kernels/*/patches/*.patch
	! grep -n '^+.*[[:space:]]$$' kernels/*/patches/*.patch

clean:
	rm -rf bench/out
	find . -name __pycache__ -prune -exec rm -rf {} +

# Removes the kernel trees, builds, images and ccache.
clean-cache:
	rm -rf "$${RMAPBENCH_CACHE:-$$HOME/.cache/rmapbench}"
