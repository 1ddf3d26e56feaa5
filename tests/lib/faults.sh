# Shared by the fault-* cases: run a command under the I/O fault shim
# (tests/faultinject.c) with a write or an fsync failing at points spread
# over the whole run, and show, for each, the exit status, the error named
# and whether anything was left beside the inputs.
#
#   spread_faults CMD...   (run in the directory the outputs go to)

# ASan wants its runtime first among the loaded libraries; the shim only
# forwards calls, so the order does not matter here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

snapshot() { find . -mindepth 1 ! -name 'fault.*' | sort; }

# The K values for a run of n operations: every one of a short run, else
# first, second, a quarter, half, three quarters, second last, last.
fault_points() {
	local n=$1
	if [ "$n" -le 12 ]; then
		seq "$n" | awk '{print $1, $1}'
		return
	fi
	printf '%s\n' "first 1" "second 2" "quarter $((n / 4))" "half $((n / 2))" \
		"three-quarters $((3 * n / 4))" "second-last $((n - 1))" "last $n" |
		awk '$2 >= 1 && !seen[$2]++'
}

try_fault() { # LABEL VAR K CMD...
	local label=$1 var=$2 k=$3
	shift 3
	env LD_PRELOAD="$FAULTINJECT" "$var=$k" "$@" >/dev/null 2>fault.err
	local rc=$? named left
	case "$(cat fault.err)" in
	*"No space left on device"*) named="no space" ;;
	*"Input/output error"*) named="I/O error" ;;
	*) named="unexpected message: $(head -c 200 fault.err)" ;;
	esac
	if [ "$(snapshot)" = "$before" ]; then left="nothing left"; else left="left: $(snapshot | tr '\n' ' ')"; fi
	echo "$label: status $rc, $named, $left"
}

spread_faults() {
	local before
	before=$(snapshot)
	rm -f fault.count
	if ! env LD_PRELOAD="$FAULTINJECT" LP_FAULT_COUNT="$PWD/fault.count" "$@" >/dev/null 2>fault.err; then
		echo "the run without faults failed: $(cat fault.err)"
		return
	fi
	local writes syncs
	read -r _ writes _ syncs <fault.count
	[ "$writes" -ge 2 ] && [ "$syncs" -ge 2 ] || echo "too few operations: $writes writes, $syncs fsyncs"
	# Back to the inputs alone before each faulty run.
	clean() { find . -mindepth 1 ! -name 'fault.*' | sort | comm -13 <(echo "$before") - |
		xargs -r rm -rf; }
	clean
	while read -r label k; do
		try_fault "write $label" LP_FAULT_WRITE "$k" "$@"
		clean
	done < <(fault_points "$writes")
	while read -r label k; do
		try_fault "fsync $label" LP_FAULT_FSYNC "$k" "$@"
		clean
	done < <(fault_points "$syncs")
}
