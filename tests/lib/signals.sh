# Shared by the signal-* cases: interrupt a run half-way and show its exit
# status and what it left (laplace-formats(5), Exit status: SIGINT, SIGTERM
# and SIGHUP end a run with 130, 143 and 129 after removing its temporary
# files and partial directories).
#
#   feed FILE [FIFO]   make FIFO (default in.fifo) and keep it open, fed
#                      with FILE's first half and then nothing, until the
#                      interrupted run ends
#   interrupt SIG CMD  start CMD in the background, wait until it has staged
#                      an output (or a second), send SIG, print the status
#                      and the entries left beside the inputs
#
# CMD runs with SIGINT, SIGTERM and SIGHUP at their default disposition,
# whatever this shell inherited: laplace rightly keeps ignoring a SIGHUP
# that was ignored when it started (nohup), and bash ignores SIGINT in the
# commands it starts in the background, so without the reset the cases
# would test the caller's dispositions, not laplace.

wait_for() { for _ in $(seq 200); do "$@" && return 0; sleep 0.05; done; return 1; }

staged() { find . -name '*.tmp-*' -o -name '*.partial-*' | grep -q .; }

feeders=()
feed() {
	local fifo=${2:-in.fifo}
	rm -f "$fifo"
	mkfifo "$fifo"
	local half=$(($(wc -c <"$1") / 2))
	{ head -c "$half" "$1"; exec sleep 60; } >"$fifo" &
	feeders+=($!)
}

stop_feeding() {
	[ ${#feeders[@]} -gt 0 ] && kill "${feeders[@]}" 2>/dev/null
	wait "${feeders[@]}" 2>/dev/null
	feeders=()
}

interrupt() {
	local sig=$1
	shift
	local before
	before=$(find . -mindepth 1 | sort)
	env --default-signal=INT,TERM,HUP "$@" >/dev/null 2>signal.err &
	local pid=$!
	wait_for staged || sleep 1
	kill -s "$sig" "$pid"
	wait "$pid"
	local rc=$?
	stop_feeding
	local after
	after=$(find . -mindepth 1 ! -name signal.err | sort)
	if [ "$after" = "$(echo "$before" | grep -v '^./signal.err$')" ]; then
		echo "$sig: status $rc, nothing left"
	else
		echo "$sig: status $rc, left: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"
	fi
}
