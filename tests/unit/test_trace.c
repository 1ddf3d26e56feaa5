/* Streams held as dense page numbers (analysis/trace.h). */
#include <criterion/criterion.h>

#include <glib.h>
#include <string.h>

#include "analysis/trace.h"
#include "scratch.h"

SCRATCH_SUITE(trace);

/* Pages are numbered in order of first reference, types kept; --user-only
 * drops the kernel's references before numbering. */
Test(trace, dense_numbers_types_and_user_only)
{
	const char text[] = "r 7\nW ff\nw 7\ni 3\nR ff\nr 3\n";
	char *path = scratch_file(dir, "s.txt", text, strlen(text));
	lp_trace t;
	cr_assert_eq(lp_trace_load(&t, path, false, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 6);
	cr_assert_eq(t.pages, 3);
	lp_pageno want[] = {0, 1, 0, 2, 1, 2};
	cr_assert_arr_eq(t.page, want, sizeof want);
	cr_assert_arr_eq(t.type, "rWwiRr", 6);
	uint64_t canon[] = {7, 0xff, 3};
	cr_assert_arr_eq(t.canonical, canon, sizeof canon);
	uint64_t *next = lp_trace_next_use(&t);
	uint64_t want_next[] = {2, 4, LP_NEVER, 5, LP_NEVER, LP_NEVER};
	cr_assert_arr_eq(next, want_next, sizeof want_next);
	lp_trace_next_use_free(&t, next);
	lp_trace_clear(&t);

	cr_assert_eq(lp_trace_load(&t, path, true, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 4);
	cr_assert_eq(t.pages, 2);
	lp_pageno user[] = {0, 0, 1, 1};
	cr_assert_arr_eq(t.page, user, sizeof user);
	lp_trace_clear(&t);
	g_free(path);
}

/* A malformed stream: the reader's message, naming file and line. */
Test(trace, malformed_stream_names_the_line)
{
	const char text[] = "r 7\nq 1\n";
	char *path = scratch_file(dir, "bad.txt", text, strlen(text));
	lp_trace t;
	cr_assert_eq(lp_trace_load(&t, path, false, &err), LP_EINPUT);
	cr_assert(strstr(err.msg, "bad.txt:2"), "%s", err.msg);
	cr_assert_null(t.page);
	g_free(path);
}

/* Past memory_refs references the arrays live in a temporary file: the
 * same numbers and types, and nothing left behind once cleared. */
Test(trace, long_streams_go_to_a_temporary_file)
{
	lp_trace t;
	lp_trace_init(&t, false);
	t.memory_refs = 65536;
	const uint64_t n = 300000;
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(lp_trace_add(&t, "rwiRWI"[i % 6], (i * 7919) % 1000, &err), 0, "%s",
			     err.msg);
	lp_trace_done(&t);
	cr_assert_geq(t.spill[0], 0);
	cr_assert_eq(t.n, n);
	cr_assert_eq(t.pages, 1000);
	for (uint64_t i = 0; i < n; i++) {
		cr_assert_eq(t.canonical[t.page[i]], (i * 7919) % 1000);
		cr_assert_eq(t.type[i], "rwiRWI"[i % 6]);
	}
	/* Past memory_refs, next uses are mapped too. */
	uint64_t *next = lp_trace_next_use(&t);
	cr_assert_eq(next[0], 1000);
	cr_assert_eq(next[n - 1], LP_NEVER);
	lp_trace_next_use_free(&t, next);
	lp_trace_clear(&t);
	cr_assert_eq(t.spill[0], -1);
	cr_assert_null(t.page);
}
