/* The per-process directory reader of laplace schedule: its reference
 * lines, read eight bytes at a time on the hot path and byte by byte on
 * the careful one, give the same records whatever the digits' number and
 * case. Expected values are the numbers the test itself formatted. */
#include <criterion/criterion.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>

#include "core/error.h"
#include "formats/taskdir.h"
#include "formats/taskline.h"
#include "scratch.h"
#include "threads.h"

SCRATCH_SUITE(taskdir);

/* The task file's counts left out: the tests write files of many sizes
 * (a count given would be checked). */
static const char index_yaml[] =
	"format: laplace-per-process\nversion: 1\nlayout: task\n"
	"inputs:\n  reference: ref.txt\n  kernel: kern.txt\n"
	"processes:\n- pid: \"1\"\n  programs: []\n  tasks:\n  - tid: \"1\"\n    path: 1/1\n"
	"kernel:\n  path: kernel\n  records: 0\n  references: 0\n"
	"orphan:\n  records: 0\n  references: 0\n";

/* Threads for the reader (0: none). */
static unsigned read_threads;
/* Read through the source's view (parsed ahead only), asking for a
 * number of references that varies from call to call. */
static bool viewed;
/* lp_taskdir_options.map_hold and unit_streams of the reader. */
static uint64_t map_hold;
static bool unit_streams;

/* A directory whose one task file is data[0, len), index.yaml saying
 * form: bin when bin, opened (its task file is stream 1). */
static lp_taskdir *open_dir(const char *data, size_t len, bool bin, lp_error *e)
{
	char *sub = g_build_filename(dir, "d", "1", NULL);
	g_mkdir_with_parents(sub, 0755);
	g_free(sub);
	char *index = g_strconcat(bin ? "form: bin\n" : "", index_yaml, NULL);
	g_free(scratch_file(dir, "d/index.yaml", index, strlen(index)));
	g_free(index);
	g_free(scratch_file(dir, "d/kernel", LP_TASK_BIN_HEADER, bin ? LP_TASK_BIN_HEADER_SIZE : 0));
	g_free(scratch_file(dir, "d/1/1", data, len));
	char *d = g_build_filename(dir, "d", NULL);
	lp_taskdir_options opt = {.max_open = 4, .threads = read_threads, .slice = 100,
				  .map_hold = map_hold, .unit_streams = unit_streams};
	lp_taskdir *t = lp_taskdir_open(d, &opt, e);
	g_free(d);
	return t;
}

/* Its references read back. */
static GArray *read_back_bytes(const char *data, size_t len, bool bin, lp_error *e)
{
	lp_taskdir *t = open_dir(data, len, bin, e);
	if (!t)
		return NULL;
	const lp_sched_input *in = lp_taskdir_input(t);
	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_sched_ref));
	lp_sched_ref batch[64];
	cr_assert(!viewed || in->source.view);
	for (size_t call = 0;; call++) {
		lp_sched_event ev;
		const lp_sched_ref *got = batch;
		ssize_t n = viewed ? in->source.view(in->source.ctx, 1, &got, call * 37 % 5000, &ev, e)
				   : in->source.read(in->source.ctx, 1, batch, 64, UINT64_MAX, &ev, e);
		if (n < 0) {
			g_array_free(refs, TRUE);
			refs = NULL;
			break;
		}
		g_array_append_vals(refs, got, (guint)n);
		if (!n && ev.tag == LP_SCHED_END)
			break;
	}
	lp_taskdir_close(t);
	return refs;
}

/* The same for a text file. */
static GArray *read_back(const char *text, lp_error *e)
{
	return read_back_bytes(text, strlen(text), false, e);
}

/* text[0, len) in the binary task form, by lp_task_convert (g_free it). */
static char *to_binary(const char *text, size_t len, size_t *out_len)
{
	g_free(scratch_file(dir, "text", text, len));
	char *in = g_build_filename(dir, "text", NULL), *out = g_build_filename(dir, "bin", NULL);
	lp_byte_source *src = lp_byte_source_open(in, &err);
	cr_assert_not_null(src, "%s", err.msg);
	lp_output *o = lp_output_open(out, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(o, "%s", err.msg);
	cr_assert_eq(lp_task_convert(src, false, true, NULL, o, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_output_commit(o, &err), 0, "%s", err.msg);
	lp_byte_source_close(src);
	gchar *data;
	gsize n;
	cr_assert(g_file_get_contents(out, &data, &n, NULL));
	*out_len = n;
	g_free(in);
	g_free(out);
	return data;
}

static void assert_same_refs(GArray *got, GArray *want)
{
	cr_assert_eq(got->len, want->len);
	for (guint i = 0; i < got->len; i++) {
		lp_sched_ref *g = &g_array_index(got, lp_sched_ref, i), *w = &g_array_index(want, lp_sched_ref, i);
		cr_assert(g->type == w->type && g->timestamp == w->timestamp && g->canonical == w->canonical,
			  "reference %u", i);
	}
}

/* A task file in the binary task form gives the references of its text,
 * read by this thread or parsed ahead; events among them (other tasks' X
 * do not end the stream) and vpns of 64-bit addresses; plain (the file
 * mapped) or compressed with either codec (read). Cut short, all fail
 * alike, naming the record's byte. */
static void binary_form_reads_as_text(void)
{
	GString *text = g_string_new("S 0 1 100\n");
	uint64_t ts = 1;
	for (int i = 0; i < 20000; i++, ts += (uint64_t)(i % 3)) {
		if (i % 997 == 0)
			g_string_append_printf(text, "X %" PRIx64 " 2\n", ts);
		g_string_append_printf(text, "%c %" PRIx64 " %x %" PRIx64 " %" PRIx64 "\n", "rwiRWI"[i % 6], ts,
				       i % 256, (UINT64_C(0x7ffffffde) + (uint64_t)i) >> (i % 40),
				       UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)i);
	}
	GArray *want = read_back(text->str, &err);
	cr_assert_not_null(want, "%s", err.msg);
	cr_assert_eq(want->len, 20000);
	size_t len;
	char *bin = to_binary(text->str, text->len, &len);
	GArray *got = read_back_bytes(bin, len, true, &err);
	cr_assert_not_null(got, "%s", err.msg);
	assert_same_refs(got, want);
	g_array_free(got, TRUE);
	char *want_msg = g_strdup_printf("%s/d/1/1: byte %zu: field canonical: the reference record is "
					 "cut short (20 of 26 bytes)", dir, len - LP_TASK_BIN_REF_SIZE);
	cr_assert_null(read_back_bytes(bin, len - 6, true, &err));
	cr_assert_str_eq(err.msg, want_msg);
	GByteArray *(*const codecs[])(const void *, size_t) = {scratch_zstd, scratch_gzip};
	for (size_t c = 0; c < G_N_ELEMENTS(codecs); c++) {
		GByteArray *packed = codecs[c](bin, len);
		got = read_back_bytes((const char *)packed->data, packed->len, true, &err);
		cr_assert_not_null(got, "%s", err.msg);
		assert_same_refs(got, want);
		g_array_free(got, TRUE);
		g_byte_array_free(packed, TRUE);
		packed = codecs[c](bin, len - 6);
		cr_assert_null(read_back_bytes((const char *)packed->data, packed->len, true, &err));
		cr_assert_str_eq(err.msg, want_msg);
		g_byte_array_free(packed, TRUE);
	}
	g_free(want_msg);
	g_free(bin);
	g_array_free(want, TRUE);
	g_string_free(text, TRUE);
}

Test(taskdir, binary_form_reads_as_text) { binary_form_reads_as_text(); }
Test(taskdir, binary_form_reads_as_text_parsed_ahead)
{
	read_threads = 4;
	binary_form_reads_as_text();
}
Test(taskdir, binary_form_reads_as_text_viewed)
{
	read_threads = 4;
	viewed = true;
	binary_form_reads_as_text();
}

/* A read of cap references fails when the record after them is bad, and
 * a view, which may take fewer (those of one parsed block), fails where
 * the read would: at every position, before, at and after the ends of
 * blocks (4096 references here), whatever cap. The file holds 10000
 * references, then a bad one. */
Test(taskdir, view_fails_where_read_fails)
{
	enum { REFS = 10000 };
	size_t len = LP_TASK_BIN_HEADER_SIZE + REFS * LP_TASK_BIN_REF_SIZE + LP_TASK_BIN_REF_SIZE;
	unsigned char *bin = g_malloc0(len), *p = bin + LP_TASK_BIN_HEADER_SIZE;
	memcpy(bin, LP_TASK_BIN_HEADER, LP_TASK_BIN_HEADER_SIZE);
	for (uint64_t i = 0; i <= REFS; i++, p += LP_TASK_BIN_REF_SIZE)
		lp_task_bin_encode(p, &(lp_ref){.type = 'r', .timestamp = i, .length = 4}, i);
	/* A vpn too wide: the search for units looks at record types only. */
	lp_store_u64(p - LP_TASK_BIN_REF_SIZE + 10, UINT64_MAX, false);
	static const size_t positions[] = {0, 1, 4095, 4096, 4097, 8191, 8192, 9000, 9989, 9999};
	static const size_t caps[] = {0, 1, 10, 11, 4095, 4096, 5000};
	read_threads = 4;
	for (int viewing = 0; viewing < 2; viewing++)
		for (size_t i = 0; i < G_N_ELEMENTS(positions); i++)
			for (size_t c = 0; c < G_N_ELEMENTS(caps); c++) {
				size_t at = 0, cap = caps[c];
				lp_taskdir *t = open_dir((const char *)bin, len, true, &err);
				cr_assert_not_null(t, "%s", err.msg);
				const lp_sched_input *in = lp_taskdir_input(t);
				lp_sched_ref buf[5000];
				const lp_sched_ref *refs = buf;
				lp_sched_event ev;
				ssize_t n = 0;
				/* To the position, then one call. */
				while (at < positions[i]) {
					n = in->source.view(in->source.ctx, 1, &refs, positions[i] - at, &ev, &err);
					cr_assert_gt(n, 0, "to %zu, at %zu: %s", positions[i], at, err.msg);
					at += (size_t)n;
				}
				if (!viewing)
					refs = buf;
				n = viewing ? in->source.view(in->source.ctx, 1, &refs, cap, &ev, &err)
					    : in->source.read(in->source.ctx, 1, buf, cap, UINT64_MAX, &ev, &err);
				cr_assert_eq(n < 0, at + cap >= REFS, "%s at %zu, cap %zu: %zd",
					     viewing ? "view" : "read", at, cap, n);
				cr_assert(n < 0 || (n > 0) == (cap > 0 && at < REFS));
				for (ssize_t k = 0; k < n; k++)
					cr_assert_eq(refs[k].canonical, at + (size_t)k);
				lp_taskdir_close(t);
			}
	g_free(bin);
}

/* The KiB of the task file's mapping in memory (/proc/self/smaps); -1
 * if it is not mapped. */
static long mapped_kib(void)
{
	char *path = g_build_filename(dir, "d", "1", "1", NULL), *smaps;
	cr_assert(g_file_get_contents("/proc/self/smaps", &smaps, NULL, NULL));
	long kib = -1;
	char *at = strstr(smaps, path), *rss = at ? strstr(at, "\nRss:") : NULL;
	if (rss)
		kib = strtol(rss + 5, NULL, 10);
	g_free(smaps);
	g_free(path);
	return kib;
}

/* The references of every unit of a directory whose one task file is
 * data[0, len) (binary), in unit order; the number of units in *units,
 * the KiB of the file's mapping in memory once units are found and once
 * they are read in kib[0] and kib[1]. */
static GArray *read_units(const char *data, size_t len, size_t *units, long kib[2])
{
	lp_taskdir *t = open_dir(data, len, true, &err);
	cr_assert_not_null(t, "%s", err.msg);
	kib[0] = mapped_kib();
	const lp_sched_input *in = lp_taskdir_input(t);
	GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_sched_ref));
	lp_sched_ref batch[1000];
	for (size_t u = 0; u < in->nunits; u++)
		for (;;) {
			lp_sched_event ev;
			const lp_sched_ref *got = batch;
			ssize_t n = viewed ? in->source.view(in->source.ctx, u, &got, 1000, &ev, &err)
					   : in->source.read(in->source.ctx, u, batch, 1000, UINT64_MAX, &ev, &err);
			cr_assert_geq(n, 0, "%s", err.msg);
			g_array_append_vals(refs, got, (guint)n);
			if (!n && ev.tag == LP_SCHED_END)
				break;
		}
	*units = in->nunits;
	kib[1] = mapped_kib();
	lp_taskdir_close(t);
	return refs;
}

/* The pages of a mapped task file stay mapped from the search for units
 * until each unit's stream has read them; a directory too large to stay
 * mapped (here, any: map_hold is 1 byte) lets go of them as they are
 * read, by the search and by each stream, a few MiB at a time: its units
 * read the same, one thread or parsed ahead, copied or viewed, and little
 * of the file is ever left in memory. The file (11 MiB) has five units,
 * and other tasks' events among them. */
Test(taskdir, pages_let_go_read_the_same)
{
	GString *text = g_string_new("S 0 1 100\n");
	for (int i = 0; i < 420000; i++) {
		if (i % 100000 == 99999)
			g_string_append_printf(text, "X %x 1\nS %x 1 100\n", i, i);
		if (i % 7919 == 0)
			g_string_append_printf(text, "X %x 2\n", i);
		g_string_append_printf(text, "%c %x 4 %x %x\n", "rwiRWI"[i % 6], i, i % 977, i * 13);
	}
	size_t len, units;
	long kib[2];
	char *bin = to_binary(text->str, text->len, &len);
	unit_streams = true;
	GArray *want = read_units(bin, len, &units, kib);
	cr_assert_eq(units, 5);
	cr_assert_eq(want->len, 420000);
	cr_assert_gt(kib[0], (long)(len / 1024 - 64), "%ld KiB of %zu in memory", kib[0], len / 1024);
	cr_assert_leq(kib[1], 64, "%ld KiB in memory once read", kib[1]);
	map_hold = 1;
	for (int mode = 0; mode < 3; mode++) {
		read_threads = mode ? 4 : 0;
		viewed = mode == 2;
		GArray *got = read_units(bin, len, &units, kib);
		assert_same_refs(got, want);
		cr_assert_leq(MAX(kib[0], kib[1]), 64, "mode %d: %ld, %ld KiB in memory", mode, kib[0], kib[1]);
		g_array_free(got, TRUE);
	}
	g_array_free(want, TRUE);
	g_free(bin);
	g_string_free(text, TRUE);
}

/* Unit u of a share's input, read to its end (the events skipped) in
 * batches of n, appended to refs; at most max references (then false). */
static bool read_unit(const lp_sched_input *in, size_t u, size_t n, size_t max, GArray *refs)
{
	lp_sched_ref batch[1000];
	for (size_t taken = 0;;) {
		lp_sched_event ev;
		ssize_t got = in->source.read(in->source.ctx, u, batch, MIN(n, max - taken), UINT64_MAX,
					      &ev, &err);
		cr_assert_geq(got, 0, "%s", err.msg);
		g_array_append_vals(refs, batch, (guint)got);
		taken += (size_t)got;
		if (!got && ev.tag == LP_SCHED_END)
			return true;
		if (taken == max)
			return false;
	}
}

/* Shares of one directory (the sweep's readings, lp_taskdir_share) read
 * their units from the start, each on its own, whatever the others have
 * read: two shares interleaved, a third after them, each unit the same
 * as one reading gives. Their ends let no page of the mapping go (other
 * shares may still read them); a directory too large to stay mapped
 * reads the same (its pages let go as pages_let_go_read_the_same says). */
Test(taskdir, shares_read_on_their_own)
{
	GString *text = g_string_new("S 0 1 100\n");
	for (int i = 0; i < 60000; i++) {
		if (i % 20000 == 19999)
			g_string_append_printf(text, "X %x 1\nS %x 1 100\n", i, i);
		if (i % 7919 == 0)
			g_string_append_printf(text, "X %x 2\n", i);
		g_string_append_printf(text, "%c %x 4 %x %x\n", "rwiRWI"[i % 6], i, i % 977, i * 13);
	}
	size_t len, units;
	long kib[2];
	char *bin = to_binary(text->str, text->len, &len);
	unit_streams = true;
	GArray *want = read_units(bin, len, &units, kib);
	cr_assert_eq(units, 4);
	for (int hold = 0; hold < 2; hold++) {
		map_hold = hold ? 1 : 0;
		lp_taskdir *t = open_dir(bin, len, true, &err);
		cr_assert_not_null(t, "%s", err.msg);
		lp_taskdir *a = lp_taskdir_share(t, 2), *b = lp_taskdir_share(t, 1);
		GArray *ga = g_array_new(FALSE, FALSE, sizeof(lp_sched_ref));
		GArray *gb = g_array_new(FALSE, FALSE, sizeof(lp_sched_ref));
		/* a: half of unit 0; b: all of it and of unit 1; a: the rest. */
		cr_assert(!read_unit(lp_taskdir_input(a), 0, 333, 10000, ga));
		cr_assert(read_unit(lp_taskdir_input(b), 0, 1000, SIZE_MAX, gb));
		cr_assert(read_unit(lp_taskdir_input(b), 1, 7, SIZE_MAX, gb));
		cr_assert(read_unit(lp_taskdir_input(a), 0, 1000, SIZE_MAX, ga));
		for (size_t u = 1; u < units; u++)
			cr_assert(read_unit(lp_taskdir_input(a), u, 1000, SIZE_MAX, ga));
		for (size_t u = 2; u < units; u++)
			cr_assert(read_unit(lp_taskdir_input(b), u, 1000, SIZE_MAX, gb));
		assert_same_refs(ga, want);
		assert_same_refs(gb, want);
		long left = mapped_kib();
		if (!hold)
			cr_assert_gt(left, (long)(len / 1024 - 64), "%ld KiB of %zu in memory", left, len / 1024);
		lp_taskdir_close(a);
		lp_taskdir_close(b);
		lp_taskdir *c = lp_taskdir_share(t, 1);
		g_array_set_size(ga, 0);
		for (size_t u = 0; u < units; u++)
			cr_assert(read_unit(lp_taskdir_input(c), u, 999, SIZE_MAX, ga));
		assert_same_refs(ga, want);
		lp_taskdir_close(c);
		lp_taskdir_close(t);
		g_array_free(ga, TRUE);
		g_array_free(gb, TRUE);
	}
	g_array_free(want, TRUE);
	g_free(bin);
	g_string_free(text, TRUE);
}

/* Numbers of every width from 1 to 16 hex digits, in either case, in the
 * timestamp and canonical fields; lengths of one and two digits, vpns of
 * one to five; and lines only the careful path takes (more digits through
 * leading zeros, trailing spaces, '\r'). The first round has timestamps of
 * every width; the file is larger than the reader's buffer, so that lines
 * fall both inside it and near its end. */
static void reference_lines_of_every_width(void)
{
	GString *text = g_string_new("S 0 1 100\n");
	GArray *want = g_array_new(FALSE, FALSE, sizeof(lp_sched_ref));
	uint64_t ts = 0;
	static const char *const tails[] = {"", "", "", " ", "\r", " \r"};
	for (int round = 0; round < 200; round++)
		for (int digits = 1; digits <= 16; digits++) {
			/* A value of exactly that many digits, growing past ts. */
			uint64_t canonical = (UINT64_C(0x9a3c5e7f1b2d4f60) | 1) >> (64 - 4 * digits);
			canonical |= UINT64_C(1) << (4 * digits - 1);
			uint64_t next = MAX(ts + 1, (UINT64_C(1) << (4 * digits - 1)) + (uint64_t)round);
			ts = next;
			bool upper = (round + digits) % 2;
			char type = "rwiRWI"[(round + digits) % 6];
			char line[128];
			const char *fmt = upper ? "%c %" PRIX64 " %s %s %" PRIX64 "%s\n"
					       : "%c %" PRIx64 " %s %s %" PRIx64 "%s\n";
			static const char *const lengths[] = {"4", "a", "Ff", "00a", "08"};
			static const char *const vpns[] = {"0", "1f", "abc", "Fffff", "12345", "00001", "000fffff"};
			snprintf(line, sizeof line, fmt, type, ts, lengths[(round + digits) % 5],
				 vpns[(round * 3 + digits) % 7], canonical, tails[(round + 2 * digits) % 6]);
			/* A seventeen-digit number with a leading zero. */
			if (digits == 16 && round % 4 == 0)
				snprintf(line, sizeof line, "%c 0%016" PRIx64 " 4 1 0%016" PRIx64 "\n", type, ts,
					 canonical);
			g_string_append(text, line);
			lp_sched_ref r = {.canonical = canonical, .timestamp = ts, .type = type};
			g_array_append_val(want, r);
		}
	GArray *got = read_back(text->str, &err);
	cr_assert_not_null(got, "%s", err.msg);
	cr_assert_eq(got->len, want->len);
	for (guint i = 0; i < got->len; i++) {
		lp_sched_ref *g = &g_array_index(got, lp_sched_ref, i), *w = &g_array_index(want, lp_sched_ref, i);
		cr_assert(g->type == w->type && g->timestamp == w->timestamp && g->canonical == w->canonical,
			  "reference %u: got %c %" PRIx64 " %" PRIx64 ", want %c %" PRIx64 " %" PRIx64, i,
			  g->type, g->timestamp, g->canonical, w->type, w->timestamp, w->canonical);
	}
	g_array_free(got, TRUE);
	g_array_free(want, TRUE);
	g_string_free(text, TRUE);
}

Test(taskdir, reference_lines_of_every_width) { reference_lines_of_every_width(); }
Test(taskdir, reference_lines_of_every_width_parsed_ahead)
{
	read_threads = 4;
	reference_lines_of_every_width();
}
Test(taskdir, reference_lines_of_every_width_viewed)
{
	read_threads = 4;
	viewed = true;
	reference_lines_of_every_width();
}

/* Threads cannot start (their stacks cannot be mapped): the reader asked
 * for four parses every stream itself, and the files' units are searched
 * in this thread. */
Test(taskdir, reference_lines_parsed_ahead_without_threads)
{
	thread_stacks(THREAD_STACK_TOO_LARGE);
	read_threads = 4;
	reference_lines_of_every_width();
}

/* Lines that look like references but are not: each is the careful
 * path's error, naming the file, line and field, whether it lies amid
 * others (the hot path looked at it first) or not. */
Test(taskdir, malformed_reference_lines)
{
	static const struct {
		const char *line, *message;
	} bad[] = {
		{"r 10 4 1 g", "field canonical: not a hex number of at most 64 bits"},
		{"r 10 100 1 2", "field length: not a hex number of at most 8 bits"},
		{"r 10 4 10000000000000 2", "field vpn: not a hex number of at most 52 bits"},
		{"r 1g 4 1 2", "field timestamp: not a hex number of at most 64 bits"},
		{"r 10 4 1 10000000000000000", "field canonical: not a hex number of at most 64 bits"},
		{"r 10 4  1 2", "field vpn: not a hex number of at most 52 bits"},
		{"r 10 4 1", "field canonical: missing"},
		{"r 10 4 1 2 3", "more than five fields"},
		{"x 10 4 1 2", "field type: not one of r w i R W I, nor an event tag"},
		{"r 10 4 1 \xff", "field canonical: not a hex number of at most 64 bits"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		GString *text = g_string_new("S 0 1 100\n");
		for (int k = 0; k < 20; k++)
			g_string_append(text, "r f 4 1 2\n");
		g_string_append_printf(text, "%s\n", bad[i].line);
		for (int k = 0; k < 20; k++)
			g_string_append(text, "r 10 4 1 2\n");
		err = (lp_error){0};
		GArray *got = read_back(text->str, &err);
		cr_assert_null(got, "line %zu was read", i);
		char *want = g_strdup_printf("%s/d/1/1:22: %s", dir, bad[i].message);
		cr_assert_str_eq(err.msg, want);
		cr_assert_eq(err.status, LP_EINPUT);
		g_free(want);
		g_string_free(text, TRUE);
	}
}
