#!/bin/sh
# A Slurm cluster of this one machine, for the tests and for trying
# 'harness.py compare --slurm' without a cluster: munged, slurmctld and
# slurmd from Debian's packages (slurmctld, slurmd, slurm-client, munge:
# 'make setup'), every config, key, socket, log and state file in DIR,
# the daemons on the loopback address and on ports nothing else uses.
#
#   tools/slurm-cluster.sh start DIR   write DIR/slurm.conf, start all three,
#                                      wait for the node; print SLURM_CONF=...
#   tools/slurm-cluster.sh stop DIR    stop the daemons DIR's pid files name
#
# Then: export SLURM_CONF=DIR/slurm.conf, and sbatch, squeue, sinfo and
# the harness's --slurm use this cluster.  One node: the hostname, 2 CPUs
# (SLURM_CPUS, default the machine's cores), SLURM_MEM_MB of memory
# (default 20000), select/cons_tres on CPUs, no cgroups.
set -eu

usage() {
	echo "usage: $0 start|stop DIR" >&2
	exit 2
}

[ $# -eq 2 ] || usage
action=$1
dir=$2

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

need() {
	for prog in "$@"; do
		if ! command -v "$prog" >/dev/null 2>&1; then
			echo "slurm-cluster: no $prog on PATH: install Debian's slurmctld, slurmd, slurm-client and munge ('make setup')" >&2
			exit 1
		fi
	done
}

write_conf() {
	host=$(hostname -s)
	cpus=${SLURM_CPUS:-$(nproc)}
	mem=${SLURM_MEM_MB:-20000}
	cat >"$dir/slurm.conf" <<EOF
# A single-node cluster for rmapbench's tests (tools/slurm-cluster.sh)
ClusterName=rmapbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=rmapbench Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

start_munge() {
	mungekey --create --keyfile="$dir/munge.key" --force
	chmod 600 "$dir/munge.key"
	munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
		--seed-file="$dir/munged.seed"
}

wait_idle() {
	i=0
	while [ $i -lt 60 ]; do
		state=$(SLURM_CONF="$dir/slurm.conf" sinfo -h -o %t 2>/dev/null || true)
		case $state in
		idle* | mix* | alloc*) return 0 ;;
		esac
		sleep 1
		i=$((i + 1))
	done
	echo "slurm-cluster: the node did not come up in 60s (state '${state:-none}'): see $dir/slurmctld.log and $dir/slurmd.log" >&2
	return 1
}

start() {
	need munged mungekey slurmctld slurmd sinfo sbatch
	mkdir -p "$dir/state" "$dir/spool"
	chmod 700 "$dir"
	dir=$(cd "$dir" && pwd)
	write_conf
	start_munge
	slurmctld -c -f "$dir/slurm.conf"
	slurmd -f "$dir/slurm.conf"
	wait_idle
	echo "SLURM_CONF=$dir/slurm.conf"
}

stop_one() {
	pidfile=$1
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	if kill "$pid" 2>/dev/null; then
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.2
			i=$((i + 1))
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
}

stop() {
	for daemon in slurmd slurmctld munged; do
		stop_one "$dir/$daemon.pid"
	done
}

case $action in
start) start ;;
stop) stop ;;
*) usage ;;
esac
