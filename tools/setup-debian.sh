#!/bin/sh
# Install what rmapbench needs on a Debian 12 machine: the kernel source,
# the toolchain for two arches, QEMU (and bookworm-backports in apt's
# sources, for a newer QEMU downloaded, never installed), the Python
# libraries, and Slurm
# (the tests start a cluster of this machine: tools/slurm-cluster.sh;
# Debian's packages may start system daemons of their own, which the
# tests' cluster leaves alone: its own socket, ports and files).  Only
# missing packages are installed; apt-get update runs only then.
set -eu

PACKAGES="linux-source-6.1 qemu-system-x86 gcc gcc-multilib make bc bison
flex libelf-dev libssl-dev cpio rsync patch xz-utils ccache busybox-static
fio stress-ng python3 python3-matplotlib python3-pytest python3-scipy
linux-config-6.1
dpkg-dev diffstat flake8 shellcheck libnuma-dev slurmctld slurmd
slurm-client munge"

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done

# i386 packages (busybox-static:i386) are downloaded, never installed,
# but apt must know the architecture to find them.
need_update=""
if ! dpkg --print-foreign-architectures | grep -qx i386; then
	dpkg --add-architecture i386
	need_update=1
fi
# bookworm-backports: the QEMU of the icount-rr clock is downloaded from
# it, never installed (rmapbench/qemusuite.py).  apt installs nothing
# from backports unless asked for it by name.
BACKPORTS=/etc/apt/sources.list.d/rmapbench-bookworm-backports.sources
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d; then
	if [ "$(id -u)" -eq 0 ]; then
		printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" \
			"Suites: bookworm-backports" "Components: main" \
			"Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
			>"$BACKPORTS"
		need_update=1
	else
		echo "setup: no bookworm-backports in apt's sources (root adds it): the icount-rr clock cannot download its QEMU" >&2
	fi
fi
[ -z "$missing" ] || need_update=1

if [ -n "$need_update" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: need root to install:$missing (and the i386 dpkg architecture)" >&2
		exit 1
	fi
	# A mirror caught mid-sync fails one index (seen: bookworm-security's
	# i386 Packages, "File has unexpected size") and apt-get update exits
	# 100 though every other index arrived.  Try again once; then go on
	# with the indexes apt has: the install below fails, naming the
	# package, if one of ours was only in the index that failed.
	if ! apt-get update -q; then
		sleep 10
		apt-get update -q ||
			echo "setup: apt-get update failed for an index (above); installing from the indexes that arrived" >&2
	fi
fi
if [ -n "$missing" ]; then
	echo "setup: installing:$missing"
	# shellcheck disable=SC2086  # one word per package
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi
echo "setup: all packages present"
