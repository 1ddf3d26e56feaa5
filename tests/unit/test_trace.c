/* Streams held as dense page numbers (analysis/trace.h). */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "scratch.h"

SCRATCH_SUITE(trace);

/* The pages of every reference, read through a block reader. */
static lp_pageno *read_pages(const lp_trace *t)
{
	lp_pageno *page = g_new(lp_pageno, t->n ? t->n : 1);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	uint64_t at = 0;
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;) {
		cr_assert_eq(b.at, at);
		cr_assert(b.len <= LP_TRACE_BLOCK_REFS && b.len <= t->n - at);
		memcpy(page + at, b.page, b.len * sizeof *page);
		at += b.len;
	}
	cr_assert_eq(at, t->n);
	lp_trace_iter_clear(&it);
	return page;
}

/* The same, read backward: blocks from the last, each ending where the
 * one read before it starts, within the files or within the window. */
static lp_pageno *read_pages_backward(const lp_trace *t)
{
	lp_pageno *page = g_new(lp_pageno, t->n ? t->n : 1);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, true);
	uint64_t end = t->n;
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;) {
		cr_assert_eq(b.at + b.len, end);
		cr_assert(b.len <= LP_TRACE_BLOCK_REFS);
		cr_assert(b.at >= t->filed || end <= t->filed, "a block across the files' end");
		memcpy(page + b.at, b.page, b.len * sizeof *page);
		end = b.at;
	}
	cr_assert_eq(end, 0);
	lp_trace_iter_clear(&it);
	return page;
}

/* Pages are numbered in order of first reference, types kept; --user-only
 * drops the kernel's references before numbering. */
Test(trace, dense_numbers_types_and_user_only)
{
	const char text[] = "r 7\nW ff\nw 7\ni 3\nR ff\nr 3\n";
	char *path = scratch_file(dir, "s.txt", text, strlen(text));
	lp_trace t;
	cr_assert_eq(lp_trace_load(&t, path, false, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 6);
	cr_assert_eq(t.pages, 3);
	lp_pageno want[] = {0, 1, 0, 2, 1, 2};
	lp_pageno *got = read_pages(&t);
	cr_assert_arr_eq(got, want, sizeof want);
	g_free(got);
	/* A stream that fits the window stays there: no file. */
	cr_assert_eq(t.spill[0], -1);
	const lp_pageno *page;
	const char *type;
	cr_assert_eq(lp_trace_map(&t, &page, &type, &err), 0, "%s", err.msg);
	cr_assert_arr_eq(page, want, sizeof want);
	cr_assert_arr_eq(type, "rWwiRr", 6);
	uint64_t canon[] = {7, 0xff, 3};
	cr_assert_arr_eq(t.canonical, canon, sizeof canon);
	uint64_t *next = lp_trace_next_use(&t);
	uint64_t want_next[] = {2, 4, LP_NEVER, 5, LP_NEVER, LP_NEVER};
	cr_assert_arr_eq(next, want_next, sizeof want_next);
	lp_trace_next_use_free(&t, next);
	lp_trace_clear(&t);

	cr_assert_eq(lp_trace_load(&t, path, true, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 4);
	cr_assert_eq(t.pages, 2);
	lp_pageno user[] = {0, 0, 1, 1};
	got = read_pages(&t);
	cr_assert_arr_eq(got, user, sizeof user);
	g_free(got);
	lp_trace_clear(&t);
	g_free(path);
}

/* A malformed stream: the reader's message, naming file and line. */
Test(trace, malformed_stream_names_the_line)
{
	const char text[] = "r 7\nq 1\n";
	char *path = scratch_file(dir, "bad.txt", text, strlen(text));
	lp_trace t;
	cr_assert_eq(lp_trace_load(&t, path, false, NULL, &err), LP_EINPUT);
	cr_assert(strstr(err.msg, "bad.txt:2"), "%s", err.msg);
	cr_assert_null(t.page);
	g_free(path);
}

/* Past window_refs references the stream goes to temporary files, a
 * window at a time, the rest staying in the window: the same numbers
 * through the reader (blocks from the files, then from the window) and
 * through lp_trace_map (the rest written out first), and nothing left
 * behind once cleared. */
Test(trace, long_streams_go_to_temporary_files)
{
	lp_trace t;
	lp_trace_init(&t, false);
	t.window_refs = 65536;
	t.next_use_refs = 65536;
	const uint64_t n = 300000;
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(lp_trace_add(&t, "rwiRWI"[i % 6], (i * 7919) % 1000, &err), 0, "%s",
			     err.msg);
	lp_trace_done(&t);
	cr_assert_geq(t.spill[0], 0);
	cr_assert_eq(t.filed, 4 * 65536);
	cr_assert_eq(t.cap, n - t.filed); /* the window trimmed to its rest */
	cr_assert_eq(t.n, n);
	cr_assert_eq(t.pages, 1000);
	lp_pageno *got = read_pages(&t);
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(t.canonical[got[i]], (i * 7919) % 1000, "reference %lu",
			     (unsigned long)i);
	lp_pageno *back = read_pages_backward(&t);
	cr_assert_arr_eq(back, got, n * sizeof *got);
	g_free(back);
	/* Past next_use_refs, next uses are mapped from a file too. */
	uint64_t *next = lp_trace_next_use(&t);
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(next[i], i + 1000 < n ? i + 1000 : LP_NEVER, "reference %lu",
			     (unsigned long)i);
	lp_trace_next_use_free(&t, next);
	const lp_pageno *page;
	const char *type;
	cr_assert_eq(lp_trace_map(&t, &page, &type, &err), 0, "%s", err.msg);
	cr_assert_eq(t.filed, n);
	cr_assert_null(t.page);
	cr_assert_arr_eq(page, got, n * sizeof *got);
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(type[i], "rwiRWI"[i % 6]);
	/* Mapped again: the same arrays; the reader reads the files whole. */
	const lp_pageno *again;
	cr_assert_eq(lp_trace_map(&t, &again, &type, &err), 0, "%s", err.msg);
	cr_assert_eq(again, page);
	lp_pageno *reread = read_pages(&t);
	cr_assert_arr_eq(reread, got, n * sizeof *got);
	g_free(reread);
	g_free(got);
	lp_trace_clear(&t);
	cr_assert_eq(t.spill[0], -1);
	cr_assert_null(t.map_page);
}

/* A stream of exactly one window: all of it filed when the next one
 * comes, none before; a full disk is LP_EIO from lp_trace_add. */
Test(trace, a_full_window_is_filed_by_the_next_reference)
{
	lp_trace t;
	lp_trace_init(&t, false);
	t.window_refs = 4;
	for (uint64_t i = 0; i < 4; i++)
		cr_assert_eq(lp_trace_add(&t, 'r', i, &err), 0, "%s", err.msg);
	cr_assert_eq(t.filed, 0);
	cr_assert_eq(t.spill[0], -1);
	cr_assert_eq(lp_trace_add(&t, 'w', 2, &err), 0, "%s", err.msg);
	cr_assert_eq(t.filed, 4);
	lp_trace_done(&t);
	lp_pageno want[] = {0, 1, 2, 3, 2};
	lp_pageno *got = read_pages(&t);
	cr_assert_arr_eq(got, want, sizeof want);
	g_free(got);
	lp_trace_clear(&t);

	lp_trace_init(&t, false);
	t.window_refs = 4;
	for (uint64_t i = 0; i < 4; i++)
		cr_assert_eq(lp_trace_add(&t, 'r', i, &err), 0, "%s", err.msg);
	t.spill[0] = open("/dev/full", O_WRONLY);
	t.spill[1] = open("/dev/full", O_WRONLY);
	cr_assert(t.spill[0] >= 0 && t.spill[1] >= 0);
	cr_assert_eq(lp_trace_add(&t, 'r', 9, &err), LP_EIO);
	cr_assert(strstr(err.msg, "cannot write the stream to its temporary file"), "%s",
		  err.msg);
	lp_trace_clear(&t);
}

/* With a curve alone (flags) the pages past the curve's most (most) are
 * refused as they come, in lp_sim_check_curves's words (want), the
 * loader adding the stream's name; a page seen before still counts (the
 * trace made to hold most pages by its count alone: the refusal comes
 * before the page is stored). */
static void refuses_pages_past(unsigned flags, uint64_t most, const char *want)
{
	lp_trace t;
	lp_trace_init(&t, flags);
	cr_assert_eq(lp_trace_add(&t, 'r', 7, &err), 0, "%s", err.msg);
	lp_pageno held = t.pages;
	t.pages = (lp_pageno)most;
	cr_assert_eq(lp_trace_add(&t, 'w', 7, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_trace_add(&t, 'r', 8, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, want);
	char named[sizeof err.msg];
	g_snprintf(named, sizeof named, "s.bin: %s", want);
	cr_assert_eq(lp_trace_name_failure("s.bin", &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, named);
	cr_assert_eq(t.n, 2);
	t.pages = held;
	lp_trace_clear(&t);
}

Test(trace, lru_only_refuses_more_pages_than_the_curve_holds)
{
	refuses_pages_past(LP_TRACE_LRU_ONLY, LP_STACKDIST_MAX_PAGES,
			   "1073741825 distinct pages, more than lru's whole curve holds (1073741824)");
}

Test(trace, opt_only_refuses_more_pages_than_the_curve_holds)
{
	refuses_pages_past(LP_TRACE_OPT_ONLY, LP_OPTDIST_MAX_PAGES,
			   "536870912 distinct pages, more than opt's whole curve holds (536870911)");
}
