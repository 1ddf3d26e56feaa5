# A one-node Slurm cluster of its own, for tests/check-slurm: munged,
# slurmctld and slurmd run in the foreground as root, everything (key,
# sockets, state, logs, slurm.conf) in one scratch directory, on ports
# nobody else listens on, so that it neither needs nor disturbs a cluster
# of the machine.
#
#   cluster_start DIR   start it; exports SLURM_CONF so that sbatch, squeue
#                       and scancel talk to it; waits until its node is idle
#   cluster_stop        stop what cluster_start started

cluster_pids=()

# A TCP port nobody listens on, from a range clear of Slurm's own (6817-8).
free_port() {
	local port
	while :; do
		port=$((20000 + RANDOM % 20000))
		ss -Hltn "sport = :$port" | grep -q . || ss -Hltn "sport = :$((port + 1))" | grep -q . ||
			{ echo "$port"; return; }
	done
}

cluster_start() {
	local dir=$1 node port cpus
	node=$(hostname -s)
	port=$(free_port)
	cpus=$(nproc)
	mkdir -p "$dir/state" "$dir/spool"
	chmod 711 "$dir" # munged wants its socket's directory searchable
	mungekey --create --keyfile="$dir/munge.key" || return
	munged --foreground --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
		--seed-file="$dir/munged.seed" >"$dir/munged.out" 2>&1 &
	cluster_pids+=($!)
	cat >"$dir/slurm.conf" <<-CONF
	ClusterName=laplacecheck
	SlurmctldHost=$node(127.0.0.1)
	SlurmctldPort=$port
	SlurmdPort=$((port + 1))
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	CredType=cred/munge
	AuthInfo=socket=$dir/munge.socket
	StateSaveLocation=$dir/state
	SlurmdSpoolDir=$dir/spool
	SlurmctldPidFile=$dir/slurmctld.pid
	SlurmdPidFile=$dir/slurmd.pid
	SlurmctldLogFile=$dir/slurmctld.log
	SlurmdLogFile=$dir/slurmd.log
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	SchedulerType=sched/backfill
	SelectType=select/cons_tres
	SelectTypeParameters=CR_CPU
	MpiDefault=none
	ReturnToService=2
	KillWait=10
	NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
	PartitionName=check Nodes=$node Default=YES MaxTime=INFINITE State=UP
	CONF
	export SLURM_CONF=$dir/slurm.conf
	local _
	for _ in $(seq 50); do [ -S "$dir/munge.socket" ] && break; sleep 0.1; done
	slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
	cluster_pids+=($!)
	slurmd -D -f "$SLURM_CONF" -N "$node" >"$dir/slurmd.out" 2>&1 &
	cluster_pids+=($!)
	for _ in $(seq 120); do
		[ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ] && return 0
		sleep 0.5
	done
	echo "check-slurm: the cluster did not come up; its logs:" >&2
	tail -n 20 "$dir"/*.log >&2
	return 1
}

cluster_stop() {
	[ ${#cluster_pids[@]} -gt 0 ] || return 0
	kill "${cluster_pids[@]}" 2>/dev/null
	wait "${cluster_pids[@]}" 2>/dev/null
	cluster_pids=()
}
