# Shared by the schedule-memory-* cases: a per-process directory made by
# hand, with the minimal index.yaml readers need (laplace-formats(5) §5).
#
#   make_taskdir DIR PID/TID:RECORD;RECORD;... ...
#
# Each argument is one task file (ids in hex), its records separated by
# ';', listed in index.yaml in the order given.
make_taskdir() {
	local dir=$1 spec path
	shift
	mkdir -p "$dir"
	: >"$dir/kernel"
	printf 'layout: task\nprocesses:\n' >"$dir/index.yaml"
	for spec in "$@"; do
		path=${spec%%:*}
		mkdir -p "$dir/${path%/*}"
		tr ';' '\n' <<<"${spec#*:}" >"$dir/$path"
		printf -- '- pid: "%s"\n  tasks:\n  - tid: "%s"\n    path: %s\n' \
			"${path%/*}" "${path#*/}" "$path" >>"$dir/index.yaml"
	done
	printf 'kernel:\n  path: kernel\n' >>"$dir/index.yaml"
}
