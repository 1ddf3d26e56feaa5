# Shared by the task-bin-* cases: task files of the binary task form
# (laplace-formats(5), "PER-PROCESS MERGE OUTPUT") written byte by byte.
#
#   task_header                       the 8-byte header
#   task_ref TYPE TS LEN VPN CANON    a 26-byte reference record (hex numbers)
#   task_event LINE                   an event record: K, length, the line
#   task_dir DIR                      DIR/kernel (a header alone) and an
#                                     index.yaml with form: bin, listing 1/1
#   damaged_readers DIR               every reader of DIR, and of DIR/1/1,
#                                     its messages and exit statuses

# The bytes of a number as printf escapes: width bytes, little-endian.
le_bytes() { # HEX WIDTH
	local hex i out=
	hex=$(printf "%0$(($2 * 2))x" "0x$1")
	for ((i = $2 - 1; i >= 0; i--)); do out+="\\x${hex:$((i * 2)):2}"; done
	printf '%s' "$out"
}

task_header() { printf 'LPTASK\x01\x00'; }

task_ref() {
	printf "%s$(le_bytes "$3" 1)$(le_bytes "$2" 8)$(le_bytes "$4" 8)$(le_bytes "$5" 8)" "$1"
}

task_event() {
	printf "K$(le_bytes "$(printf %x ${#1})" 2)%s" "$1"
}

task_dir() {
	mkdir -p "$1/1"
	task_header > "$1/kernel"
	printf 'form: bin\nprocesses:\n- tasks: [{path: 1/1}]\n' > "$1/index.yaml"
}

damaged_readers() {
	laplace schedule -o /dev/null "$1"
	echo "schedule: status $?"
	laplace schedule --policy rr -o /dev/null "$1"
	echo "schedule --policy rr: status $?"
	laplace stat "$1"
	echo "stat of the directory: status $?"
	laplace stat "$1/1/1"
	echo "stat of the file: status $?"
	laplace convert --from task-bin --to task -o converted "$1/1/1"
	echo "convert: status $?"
	[ -e converted ] && echo "convert left converted behind"
	laplace dump "$1/1/1" > /dev/null
	echo "dump: status $?"
	cp -r "$1" unindexed && rm unindexed/index.yaml
	laplace index unindexed
	echo "index: status $?"
	rm -rf unindexed
}
