# Shared by the reader-* cases.
#
# Memory must stay bounded whatever the input: a 300 MB address-space
# limit, or, for a sanitizer build (it reserves terabytes of address space
# and cannot start under such a limit), AddressSanitizer's own limit of
# 300 MB of resident memory. Neither possible: the case fails, loudly.
bound_memory() {
	# (A child killed by a signal is reported by the shell that waits for it:
	# here the subshell, whose own stderr is discarded.)
	if (ulimit -v 300000 && laplace --version; exit $?) >/dev/null 2>&1; then
		ulimit -v 300000
	elif ASAN_OPTIONS=help=1 laplace --version 2>&1 | grep -q hard_rss_limit_mb; then
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=300"
	else
		echo "cannot bound the memory of laplace" >&2
		exit 1
	fi
}
