#!/bin/busybox sh
# shellcheck shell=dash
# rmapbench guest init: set up the guest, report its state, run /plan,
# power off.  Everything the harness reads is behind an RMB- prefix:
#   RMB-BEGIN name / RMB-END name   a verbatim section (a /proc file)
#   RMB-STEP n/m cmd                a plan step starts
#   RMB-STEP-END n rc=R ms=T        it ended
#   RMB-DONE rc=R                   the plan ended (R: failed steps)
# Plan lines ('#' lines are skipped):
#   swapon / swapoff        swap on the virtio disk /dev/vda (mkswap first),
#                           or on /dev/zram0 with rmb.swap=zram
#   run PROGRAM ARGS...     runs /bench/PROGRAM
#   info                    prints the state sections
#   section NAME CMD...     runs CMD, its output as section NAME
#   sh CMD...               runs a shell command
#   mark NAME               does nothing: the lines after it, up to the
#                           next mark, are NAME's (a boot that serves
#                           several cases runs each one's lines in turn)
#   sample SECONDS          from now on, every SECONDS print one line
#                           RMB-SAMPLE t_ms=.. name=value.. for time
#                           series: the /proc/meminfo fields (as
#                           <field>_kb), counters and slab caches
#                           (slab_<cache>_objs) that bench/lib/rmb-iface.h
#                           flags RMB_F_SAMPLE (the image writes their
#                           names into /etc/rmb-iface.sh)
#   settle SECONDS          waits up to SECONDS for every user process
#                           but init to end, prints RMB-PROCS with those
#                           left (or "none"), then sleeps 3 s for RCU

/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
export PATH=/bench:/bin:/sbin:/usr/bin:/usr/sbin

section() {
	echo "RMB-BEGIN $1"
	cat "$2" 2>&1
	echo "RMB-END $1"
}

info() {
	section rmapbench /proc/rmapbench
	section meminfo /proc/meminfo
	section vmstat /proc/vmstat
	section slabinfo /proc/slabinfo
	section swaps /proc/swaps
	[ -z "$zram" ] || section zram /sys/block/zram0/mm_stat
}

now_ms() {
	awk '{ printf "%d", $1 * 1000 }' /proc/uptime
}

swap_on() {
	if [ ! -b "$swapdev" ]; then
		echo "RMB-SWAP none"
		return 1
	fi
	mkswap "$swapdev" >/dev/null && swapon "$swapdev" &&
		echo "RMB-SWAP $swapdev" && return
	echo "RMB-SWAP failed"
	return 1
}

run_section() {
	name=$1
	shift
	echo "RMB-BEGIN $name"
	"$@"
	rc=$?
	echo "RMB-END $name"
	return $rc
}

# User processes other than init, as " pid:comm ..." in $left: kernel
# threads and zombies have no maps (and hold no mm).  No command
# substitution: a subshell would count itself.
others() {
	left=
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = 1 ] && continue
		# shellcheck disable=SC2034  # only whether a line exists
		read -r m <"$p/maps" 2>/dev/null || continue
		read -r comm <"$p/comm" 2>/dev/null || continue
		left="$left ${p#/proc/}:$comm"
	done
}

# Wait up to $1 s for every user process but init to end, say which are
# left, then give RCU-deferred frees (anonmm objects) 3 s.
settle() {
	i=0
	others
	while [ -n "$left" ] && [ "$i" -lt "$1" ]; do
		sleep 1
		i=$((i + 1))
		others
	done
	echo "RMB-PROCS ${left:- none} waited=${i}s"
	sleep 3
	[ -z "$left" ]
}

# RMB_SAMPLE_MEMINFO, RMB_SAMPLE_VMSTAT, RMB_SAMPLE_SLABS: what to sample
if [ -r /etc/rmb-iface.sh ]; then
	# shellcheck source=/dev/null
	. /etc/rmb-iface.sh
fi

sample_once() {
	{
		printf 't_ms=%s' "$(now_ms)"
		awk -v re="^($RMB_SAMPLE_MEMINFO):" '$0 ~ re {
			sub(":", "", $1); printf " %s_kb=%s", $1, $2 }' /proc/meminfo
		awk -v re="^($RMB_SAMPLE_VMSTAT)\$" '$1 ~ re {
			printf " %s=%s", $1, $2 }' /proc/vmstat
		awk -v re="^($RMB_SAMPLE_SLABS)\$" '$1 ~ re {
			printf " slab_%s_objs=%s", $1, $2 }' /proc/slabinfo
		echo
	} | sed 's/^/RMB-SAMPLE /'
}

sampler() {
	while :; do
		sample_once
		sleep "$1"
	done
}

# The value of rmb.NAME=VALUE on the kernel command line ("" if absent):
# the guest settings of rmapbench/settings.py
rmb_arg() {
	read -r cmdline </proc/cmdline
	for word in $cmdline; do
		case "$word" in "rmb.$1="*) echo "${word#*=}"; return ;; esac
	done
}

# rmb.memcg=PCT: this shell, and so the whole plan, runs in a memory
# cgroup whose memory.max is PCT% of MemTotal; prints memcg_max=BYTES
memcg_limit() {
	total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	max=$((total_kb * 1024 * $1 / 100))
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
		mkdir /sys/fs/cgroup/rmb &&
		echo "$max" >/sys/fs/cgroup/rmb/memory.max &&
		echo $$ >/sys/fs/cgroup/rmb/cgroup.procs &&
		echo " memcg_max=$(cat /sys/fs/cgroup/rmb/memory.max)"
}

# rmb.swap=zram (the guest setting zram): swap goes to /dev/zram0 instead
# (the harness attaches no disk), twice the guest's memory: more than any
# workload here swaps, and a slot table of 0.4% of that.  If zram cannot
# be set up, swapon fails.
swapdev=/dev/vda
zram=
if [ "$(rmb_arg swap)" = zram ]; then
	swapdev=/dev/zram0
	total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) &&
		echo $((total_kb * 2048)) >/sys/block/zram0/disksize &&
		zram=" swap=zram"
fi

# The features of the distro profile's kernels, where the kernel has
# them (a minimal kernel has none: nothing is done, nothing printed
# unless zram swap is set up): cgroup v2 mounted, MGLRU on (off with
# rmb.lru_gen=n), THP always, the plan in a memory cgroup with
# rmb.memcg=PCT; then
# one line saying what is on:
#   RMB-FEATURES [swap=zram] numa_nodes=N cgroup2=0|1 memcg=0|1
#                [memcg_max=BYTES] lru_gen=0x.. [thp=MODE] [ksm=RUN]
#                [debugfs=1] zswap=Y|N
features() {
	on=$zram
	if grep -qw cgroup2 /proc/filesystems && [ -d /sys/fs/cgroup ]; then
		mount -t cgroup2 cgroup2 /sys/fs/cgroup && on="$on cgroup2=1"
		if grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
			on="$on memcg=1"
			pct=$(rmb_arg memcg)
			[ -z "$pct" ] || on="$on$(memcg_limit "$pct")"
		fi
	fi
	if [ -d /sys/devices/system/node ]; then
		nodes=0
		for node in /sys/devices/system/node/node[0-9]*; do
			[ -d "$node" ] && nodes=$((nodes + 1))
		done
		on="$on numa_nodes=$nodes"
	fi
	if [ -e /sys/kernel/mm/lru_gen/enabled ]; then
		{ rmb_arg lru_gen | grep -x n || echo y; } \
			>/sys/kernel/mm/lru_gen/enabled
		on="$on lru_gen=$(cat /sys/kernel/mm/lru_gen/enabled)"
	fi
	# THP always, as distro.config (and Debian) configure it: 6.1 turns
	# it off at boot below 512 MB of RAM (hugepage_init()), which every
	# guest here has, so it is put back (rmb.thp=never or =madvise
	# chooses otherwise); khugepaged starts with it.
	thp=/sys/kernel/mm/transparent_hugepage/enabled
	if [ -e $thp ]; then
		mode=$(rmb_arg thp)
		echo "${mode:-always}" >$thp
		on="$on thp=$(sed 's/.*\[\(.*\)\].*/\1/' $thp)"
	fi
	# KSM built, ksmd stopped (run=0) as 6.1 and Debian boot it; rmb.ksm=1
	# starts it for the whole boot.
	ksm=/sys/kernel/mm/ksm/run
	if [ -e $ksm ]; then
		mode=$(rmb_arg ksm)
		[ -z "$mode" ] || echo "$mode" >$ksm
		on="$on ksm=$(cat $ksm)"
	fi
	# debugfs, where the kernel has it (6.1's NUMA balancing tunables)
	if grep -qw debugfs /proc/filesystems; then
		mount -t debugfs debugfs /sys/kernel/debug && on="$on debugfs=1"
	fi
	if [ -r /sys/module/zswap/parameters/enabled ]; then
		on="$on zswap=$(cat /sys/module/zswap/parameters/enabled)"
	fi
	[ -z "$on" ] || echo "RMB-FEATURES$on"
}

# Workloads create VMAs by the hundred thousand.
echo 1048576 >/proc/sys/vm/max_map_count
features
echo "RMB-CMDLINE $(cat /proc/cmdline)"

failed=0
total=$(grep -cv '^[[:space:]]*\(#\|$\)' /plan 2>/dev/null || echo 0)
n=0
while read -r verb rest; do
	case "$verb" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	echo "RMB-STEP $n/$total $verb $rest"
	start=$(now_ms)
	# shellcheck disable=SC2086  # a plan line's words are its arguments
	case "$verb" in
	info) info ;;
	swapon) swap_on ;;
	swapoff) swapoff "$swapdev" ;;
	settle) settle "$rest" ;;
	run) set -- $rest; prog=$1; shift; "/bench/$prog" "$@" ;;
	section) set -- $rest; run_section "$@" ;;
	sample) sampler "$rest" & sampler_pid=$! ;;
	sh) sh -c "$rest" ;;
	mark) : ;;
	*) echo "RMB-ERROR {\"message\":\"unknown plan verb '$verb'\"}"; false ;;
	esac
	rc=$?
	[ $rc -eq 0 ] || failed=$((failed + 1))
	echo "RMB-STEP-END $n rc=$rc ms=$(($(now_ms) - start))"
done </plan

[ -z "$sampler_pid" ] || kill "$sampler_pid"
sync
echo "RMB-DONE rc=$failed"
reboot -f
