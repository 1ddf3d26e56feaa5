/* The per-process directory sink, driven directly with hand-made events,
 * routes and reference runs. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zstd.h>

#include "formats/procindex.h"
#include "formats/procdir.h"
#include "io/yamlout.h"

static char *scratch;

static void make_scratch(void)
{
	scratch = g_dir_make_tmp("procdir-XXXXXX", NULL);
	cr_assert(scratch);
}

static void remove_scratch(void)
{
	char *cmd = g_strdup_printf("rm -rf '%s'", scratch);
	cr_assert_eq(system(cmd), 0);
	g_free(cmd);
	g_free(scratch);
}

TestSuite(procdir, .init = make_scratch, .fini = remove_scratch);

static char *path_in(const char *rel)
{
	return g_build_filename(scratch, rel, NULL);
}

static void assert_file(const char *rel, const char *want)
{
	char *path = path_in(rel), *got = NULL;
	cr_assert(g_file_get_contents(path, &got, NULL, NULL), "%s is missing", path);
	cr_assert_str_eq(got, want, "%s", path);
	g_free(got);
	g_free(path);
}

static bool exists(const char *rel)
{
	char *path = path_in(rel);
	bool yes = g_file_test(path, G_FILE_TEST_EXISTS);
	g_free(path);
	return yes;
}

/* Number of entries of the scratch directory (the output, leftovers...). */
static int scratch_entries(void)
{
	GDir *d = g_dir_open(scratch, 0, NULL);
	int n = 0;
	while (g_dir_read_name(d))
		n++;
	g_dir_close(d);
	return n;
}

static lp_procdir *open_out(const char *rel, bool force, bool user_only, lp_error *err)
{
	char *dir = path_in(rel);
	lp_procdir_inputs in = {.reference = "r.bin", .kernel = "k.txt"};
	lp_procdir *pd = lp_procdir_open(AT_FDCWD, dir, force, user_only, LP_LAYOUT_TASK, false, LP_COMPRESS_NONE,
					 LP_LEVEL_DEFAULT, 1, &in, err);
	g_free(dir);
	return pd;
}

static void event(lp_procdir *pd, enum lp_tag tag, uint64_t ts, const char *line, const char *name,
		  int ntasks, lp_task_id a, lp_task_id b)
{
	lp_event ev = {.tag = tag, .timestamp = ts, .line = line, .line_len = strlen(line), .name = name};
	lp_event_route route = {.ntasks = ntasks, .task = {a, b}};
	lp_error err = {0};
	cr_assert_eq(lp_procdir_sink_ops.event(pd, &ev, &route, &err), 0, "%s", err.msg);
}

static void refs(lp_procdir *pd, const lp_ref *r, const uint64_t *canon, size_t n, const lp_task_id *who)
{
	lp_error err = {0};
	cr_assert_eq(lp_procdir_sink_ops.refs(pd, r, canon, n, who, &err), 0, "%s", err.msg);
}

/* Finish the tree and publish it, as a merge job does; frees pd. */
static void finish(lp_procdir *pd, const lp_stats *st)
{
	lp_error err = {0};
	cr_assert_eq(lp_procdir_sink_ops.finish(pd, st, &err), 0, "%s", err.msg);
	lp_staged *tree = lp_procdir_release(pd);
	cr_assert_eq(lp_stage_publish(&tree, 1, &err), 0, "%s", err.msg);
}

static const lp_task_id none = {0, 0, 0};

Test(procdir, routes_every_record_and_writes_the_index)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	lp_task_id t11 = {1, 1, 0}, t22 = {2, 2, 0}, t13 = {1, 3, 0};

	event(pd, LP_TAG_F, 1, "F 1 1 2", NULL, 2, t11, t22);
	event(pd, LP_TAG_T, 1, "T 1 1 3", NULL, 2, t11, t13);
	lp_ref run1[] = {
		{.type = 'r', .timestamp = 2, .length = 4, .address = 0x12345678, .vas = 9},
		{.type = 'W', .timestamp = 3, .length = 1, .address = 0xc0001000, .vas = 9},
		{.type = 'i', .timestamp = 3, .length = 0x10, .address = 0xfff, .vas = 9},
	};
	uint64_t canon1[] = {0, 1, 0x8888ffff3e456a21u};
	refs(pd, run1, canon1, 3, &t11);
	lp_ref run2[] = {{.type = 'w', .timestamp = 4, .length = 8, .address = 0x1000}};
	uint64_t canon2[] = {2};
	refs(pd, run2, canon2, 1, NULL);
	event(pd, LP_TAG_E, 5, "E 5 2 9 my shell", "my shell", 1, t22, none);
	event(pd, LP_TAG_E, 6, "E 6 2 a ls", "ls", 1, t22, none);
	event(pd, LP_TAG_C, 6, "C 6 1 2 3", NULL, 0, none, none);
	event(pd, LP_TAG_X, 7, "X 7 3", NULL, 1, t13, none);

	lp_stats st = {.refs = {1, 1, 1, 0, 1, 0}, .events = {[LP_TAG_F] = 1, [LP_TAG_X] = 1},
		       .pages = {[LP_PAGE_PRIVATE_ANON] = 2, [LP_PAGE_KERNEL] = 1}, .cow_copies = 3,
		       .unmapped_pages = 4, .orphan_spaces = 5, .mismatches = 6, .warnings = 7};
	finish(pd, &st);

	assert_file("out/1/1", "F 1 1 2\nT 1 1 3\nr 2 4 12345 0\ni 3 10 0 8888ffff3e456a21\n");
	assert_file("out/1/3", "T 1 1 3\nX 7 3\n");
	assert_file("out/2/2", "F 1 1 2\nE 5 2 9 my shell\nE 6 2 a ls\n");
	assert_file("out/kernel", "W 3 1 c0001 1\nC 6 1 2 3\n");
	assert_file("out/orphan", "w 4 8 1 2\n");
	assert_file("out/index.yaml",
		    "format: laplace-per-process\n"
		    "version: 1\n"
		    "layout: task\n"
		    "inputs:\n"
		    "  reference: r.bin\n"
		    "  kernel: k.txt\n"
		    "processes:\n"
		    "- pid: \"1\"\n"
		    "  programs: []\n"
		    "  tasks:\n"
		    "  - tid: \"1\"\n"
		    "    path: 1/1\n"
		    "    records: 4\n"
		    "    references: 2\n"
		    "    first_timestamp: \"1\"\n"
		    "    last_timestamp: \"3\"\n"
		    "  - tid: \"3\"\n"
		    "    path: 1/3\n"
		    "    records: 2\n"
		    "    references: 0\n"
		    "    first_timestamp: \"1\"\n"
		    "    last_timestamp: \"7\"\n"
		    "- pid: \"2\"\n"
		    "  programs: [my shell, ls]\n"
		    "  tasks:\n"
		    "  - tid: \"2\"\n"
		    "    path: 2/2\n"
		    "    records: 3\n"
		    "    references: 0\n"
		    "    first_timestamp: \"1\"\n"
		    "    last_timestamp: \"6\"\n"
		    "kernel:\n"
		    "  path: kernel\n"
		    "  records: 2\n"
		    "  references: 1\n"
		    "  first_timestamp: \"3\"\n"
		    "  last_timestamp: \"6\"\n"
		    "orphan:\n"
		    "  path: orphan\n"
		    "  records: 1\n"
		    "  references: 1\n"
		    "  first_timestamp: \"4\"\n"
		    "  last_timestamp: \"4\"\n"
		    "statistics:\n"
		    "  references: {r: 1, w: 1, i: 1, R: 0, W: 1, I: 0}\n"
		    "  events: {F: 1, T: 0, E: 0, S: 0, X: 1, M: 0, U: 0, B: 0, K: 0, G: 0, H: 0, D: 0, "
		    "Q: 0, C: 0, V: 0}\n"
		    "  canonical_pages: {total: 3, file: 0, segment: 0, shared_anon: 0, private_anon: 2, "
		    "kernel: 1}\n"
		    "  cow_copies: 3\n"
		    "  unmapped_pages: 4\n"
		    "  orphan_spaces: 5\n"
		    "  mismatches: 6\n"
		    "  warnings: 7\n");
	/* Only the finished directory is left: no partial one beside it. */
	cr_assert_eq(scratch_entries(), 1);
}

Test(procdir, empty_capture_has_an_empty_kernel_file_and_no_orphan)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out/", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	finish(pd, &(lp_stats){0});
	assert_file("out/kernel", "");
	cr_assert(!exists("out/orphan"));
	char *index = path_in("out/index.yaml"), *text = NULL;
	cr_assert(g_file_get_contents(index, &text, NULL, NULL));
	cr_assert(strstr(text, "processes: []\n"
			       "kernel:\n  path: kernel\n  records: 0\n  references: 0\n"
			       "orphan:\n  records: 0\n  references: 0\nstatistics:\n"), "%s", text);
	g_free(text);
	g_free(index);
}

Test(procdir, user_only_keeps_kernel_references_out)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, true, &err);
	cr_assert(pd, "%s", err.msg);
	lp_task_id t = {5, 6, 0};
	lp_ref run[] = {
		{.type = 'R', .timestamp = 1, .length = 4, .address = 0xc0000000},
		{.type = 'r', .timestamp = 2, .length = 4, .address = 0x5000},
		{.type = 'I', .timestamp = 3, .length = 4, .address = 0x1000},
	};
	uint64_t canon[] = {0, 1, 2};
	refs(pd, run, canon, 3, &t);
	event(pd, LP_TAG_V, 4, "V 4 1", NULL, 0, none, none);
	finish(pd, &(lp_stats){0});
	assert_file("out/5/6", "r 2 4 5 1\n");
	assert_file("out/kernel", "V 4 1\n");
}

Test(procdir, an_existing_directory_is_refused_without_force)
{
	char *dir = path_in("out");
	cr_assert_eq(g_mkdir(dir, 0777), 0);
	lp_error err = {0};
	cr_assert_null(open_out("out", false, false, &err));
	cr_assert_eq(err.status, LP_EUSAGE);
	char *want = g_strdup_printf("%s: already exists; use --force to replace it", dir);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(scratch_entries(), 1);
	g_free(want);
	g_free(dir);
}

Test(procdir, force_replaces_the_directory_only_when_complete)
{
	char *old = path_in("out/old-file");
	char *dir = path_in("out");
	cr_assert_eq(g_mkdir(dir, 0777), 0);
	cr_assert(g_file_set_contents(old, "old\n", -1, NULL));
	lp_error err = {0};
	lp_procdir *pd = open_out("out", true, false, &err);
	cr_assert(pd, "%s", err.msg);
	event(pd, LP_TAG_Q, 1, "Q 1 2", NULL, 0, none, none);
	/* Until finish(), the old directory is still the one in place. */
	cr_assert(exists("out/old-file"));
	cr_assert(!exists("out/kernel"));
	finish(pd, &(lp_stats){0});
	cr_assert(!exists("out/old-file"));
	assert_file("out/kernel", "Q 1 2\n");
	cr_assert_eq(scratch_entries(), 1);
	g_free(dir);
	g_free(old);
}

Test(procdir, force_also_replaces_a_regular_file)
{
	char *file = path_in("out");
	cr_assert(g_file_set_contents(file, "x", -1, NULL));
	lp_error err = {0};
	lp_procdir *pd = open_out("out", true, false, &err);
	cr_assert(pd, "%s", err.msg);
	finish(pd, &(lp_stats){0});
	assert_file("out/kernel", "");
	cr_assert_eq(scratch_entries(), 1);
	g_free(file);
}

Test(procdir, a_failed_run_leaves_nothing)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	lp_task_id t = {1, 1, 0};
	event(pd, LP_TAG_S, 1, "S 1 1 2", NULL, 1, t, none);
	/* The pipeline gives up without calling finish(). */
	lp_procdir_free(pd);
	cr_assert_eq(scratch_entries(), 0);
}

/* What a run killed outright (SIGKILL) leaves behind neither blocks the
 * next run nor is taken for output: the next run removes it, as no live
 * run holds its lock; one that a live run holds stays (laplace(1),
 * OUTPUTS). */
Test(procdir, a_leftover_partial_directory_is_removed_by_the_next_run)
{
	char *left = path_in("out.partial-AbC123"), *live = path_in("out.partial-LiVe12");
	cr_assert_eq(g_mkdir(left, 0777), 0);
	cr_assert_eq(g_mkdir(live, 0777), 0);
	int held = open(live, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(held >= 0 && flock(held, LOCK_EX) == 0);
	lp_error err = {0};
	lp_procdir *pd = open_out("out", true, false, &err);
	cr_assert_not_null(pd, "%s", err.msg);
	finish(pd, &(lp_stats){0});
	cr_assert_eq(scratch_entries(), 2);
	cr_assert_not(g_file_test(left, G_FILE_TEST_EXISTS));
	cr_assert(g_file_test(live, G_FILE_TEST_IS_DIR));
	char *index = path_in("out/index.yaml");
	cr_assert(g_file_test(index, G_FILE_TEST_IS_REGULAR));
	close(held);
	g_free(index);
	g_free(left);
	g_free(live);
}

Test(procdir, a_missing_parent_is_an_io_error)
{
	lp_error err = {0};
	cr_assert_null(open_out("no/such/out", false, false, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot create %s/no/such/out.partial-XXXXXX: "
				     "No such file or directory", scratch);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
}

/* Far more tasks than descriptors: files are closed and reopened in append
 * mode, and every line still lands in its own file, in order. */
Test(procdir, many_tasks_with_few_descriptors)
{
	struct rlimit rl = {.rlim_cur = 40, .rlim_max = 40};
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	enum { NTASKS = 300 };
	char line[64];
	for (int round = 0; round < 2; round++) {
		for (uint64_t t = 1; t <= NTASKS; t++) {
			lp_task_id id = {t % 7 + 1, t, 0};
			snprintf(line, sizeof line, "S %d %" G_GINT64_MODIFIER "x 1", round,
				 (guint64)t);
			event(pd, LP_TAG_S, (uint64_t)round, line, NULL, 1, id, none);
			lp_ref r = {.type = 'r', .timestamp = (uint64_t)round, .length = 1,
				    .address = (uint32_t)t << 12};
			uint64_t c = t;
			refs(pd, &r, &c, 1, &id);
		}
	}
	finish(pd, &(lp_stats){0});
	for (uint64_t t = 1; t <= NTASKS; t += 37) {
		char rel[64], want[128];
		snprintf(rel, sizeof rel, "out/%" G_GINT64_MODIFIER "x/%" G_GINT64_MODIFIER "x",
			 (guint64)(t % 7 + 1), (guint64)t);
		snprintf(want, sizeof want,
			 "S 0 %" G_GINT64_MODIFIER "x 1\nr 0 1 %" G_GINT64_MODIFIER "x %" G_GINT64_MODIFIER "x\n"
			 "S 1 %" G_GINT64_MODIFIER "x 1\nr 1 1 %" G_GINT64_MODIFIER "x %" G_GINT64_MODIFIER "x\n",
			 (guint64)t, (guint64)t, (guint64)t, (guint64)t, (guint64)t, (guint64)t);
		assert_file(rel, want);
	}
}

/* An event line longer than a file buffer is written through. */
Test(procdir, long_event_lines)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	size_t n = 200000;
	char *line = g_malloc(n + 1);
	memset(line, 'a', n);
	memcpy(line, "E 1 1 1 ", 8);
	line[n] = '\0';
	lp_task_id t = {1, 1, 0};
	event(pd, LP_TAG_S, 1, "S 1 1 1", NULL, 1, t, none);
	event(pd, LP_TAG_E, 1, line, line + 8, 1, t, none);
	event(pd, LP_TAG_X, 2, "X 2 1", NULL, 1, t, none);
	finish(pd, &(lp_stats){0});
	char *want = g_strdup_printf("S 1 1 1\n%s\nX 2 1\n", line);
	assert_file("out/1/1", want);
	g_free(want);
	g_free(line);
}

/* The binary form holds event lines of at most 4096 bytes: a longer one
 * given to the sink is an error naming the file, not a record. */
Test(procdir, long_event_line_binary)
{
	char *dir = path_in("out");
	lp_procdir_inputs in = {.reference = "r.bin", .kernel = "k.txt"};
	lp_error err = {0};
	lp_procdir *pd = lp_procdir_open(AT_FDCWD, dir, false, false, LP_LAYOUT_TASK, true, LP_COMPRESS_NONE,
					 LP_LEVEL_DEFAULT, 1, &in, &err);
	g_free(dir);
	cr_assert(pd, "%s", err.msg);
	char line[5000];
	memset(line, 'a', sizeof line - 1);
	memcpy(line, "E 1 1 1 ", 8);
	line[sizeof line - 1] = '\0';
	lp_task_id t = {1, 1, 0};
	event(pd, LP_TAG_S, 1, "S 1 1 1", NULL, 1, t, none);
	lp_event ev = {.tag = LP_TAG_E, .timestamp = 2, .line = line, .line_len = strlen(line),
		       .name = line + 8};
	lp_event_route route = {.ntasks = 1, .task = {t, none}};
	cr_assert_eq(lp_procdir_sink_ops.event(pd, &ev, &route, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "1/1: an event line of 4999 bytes: the binary task form holds at most 4096");
	lp_procdir_free(pd);
}

/* Compressed by threads, such a line goes through the file's buffer, in
 * pieces no larger than any other (each a frame of its own). */
Test(procdir, long_event_lines_compressed)
{
	char *dir = path_in("out");
	lp_procdir_inputs in = {.reference = "r.bin", .kernel = "k.txt"};
	lp_error err = {0};
	lp_procdir *pd = lp_procdir_open(AT_FDCWD, dir, false, false, LP_LAYOUT_TASK, false, LP_COMPRESS_ZSTD,
					 LP_LEVEL_DEFAULT, 2, &in, &err);
	g_free(dir);
	cr_assert(pd, "%s", err.msg);
	size_t n = 200000;
	char *line = g_malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		line[i] = (char)('a' + i % 26);
	memcpy(line, "E 1 1 1 ", 8);
	line[n] = '\0';
	lp_task_id t = {1, 1, 0};
	event(pd, LP_TAG_S, 1, "S 1 1 1", NULL, 1, t, none);
	for (int k = 0; k < 20; k++) /* more than a batch of pieces */
		event(pd, LP_TAG_E, 1, line, line + 8, 1, t, none);
	event(pd, LP_TAG_X, 2, "X 2 1", NULL, 1, t, none);
	finish(pd, &(lp_stats){0});
	GString *want = g_string_new("S 1 1 1\n");
	for (int k = 0; k < 20; k++)
		g_string_append_printf(want, "%s\n", line);
	g_string_append(want, "X 2 1\n");
	char *path = path_in("out/1/1.zst"), *packed = NULL;
	gsize len = 0;
	cr_assert(g_file_get_contents(path, &packed, &len, NULL), "%s is missing", path);
	char *got = g_malloc(want->len + 1);
	size_t got_len = ZSTD_decompress(got, want->len + 1, packed, len);
	cr_assert(!ZSTD_isError(got_len), "%s: %s", path, ZSTD_getErrorName(got_len));
	cr_assert_eq(got_len, want->len);
	cr_assert(memcmp(got, want->str, want->len) == 0, "%s differs", path);
	g_free(got);
	g_free(packed);
	g_free(path);
	g_string_free(want, TRUE);
	g_free(line);
}

/* What the sink writes into index.yaml, lp_index_read gives back. */
Test(procdir, index_reads_back)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	lp_task_id t = {0x1a, 0x1b, 0}, u = {0x1a, 0x2, 0};
	event(pd, LP_TAG_T, 0x10, "T 10 1a 2", NULL, 2, (lp_task_id){0x1a, 0x1a, 0}, u);
	event(pd, LP_TAG_E, 0x11, "E 11 1b 5 first", "first", 1, t, none);
	event(pd, LP_TAG_E, 0x12, "E 12 2 6 second: \"quoted\"", "second: \"quoted\"", 1, u, none);
	lp_ref r = {.type = 'w', .timestamp = 0xffffffffffffffffu, .length = 1, .address = 0x2000};
	uint64_t c = 0;
	refs(pd, &r, &c, 1, &t);
	finish(pd, &(lp_stats){0});

	char *dir = path_in("out");
	lp_index *ix = lp_index_read(dir, &err);
	cr_assert(ix, "%s", err.msg);
	cr_assert_str_eq(ix->reference, "r.bin");
	cr_assert_str_eq(ix->kernel_input, "k.txt");
	cr_assert_eq(ix->nprocesses, 1);
	const lp_index_process *p = &ix->processes[0];
	cr_assert_eq(p->pid, 0x1a);
	cr_assert_str_eq(p->programs[0], "first");
	cr_assert_str_eq(p->programs[1], "second: \"quoted\"");
	cr_assert_null(p->programs[2]);
	cr_assert_eq(p->ntasks, 3);
	uint64_t tids[] = {0x2, 0x1a, 0x1b};
	const char *paths[] = {"1a/2", "1a/1a", "1a/1b"};
	uint64_t records[] = {2, 1, 2}, references[] = {0, 0, 1};
	uint64_t last[] = {0x12, 0x10, 0xffffffffffffffffu};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(p->tasks[i].tid, tids[i]);
		cr_assert_str_eq(p->tasks[i].file.path, paths[i]);
		cr_assert_eq(p->tasks[i].file.records, records[i]);
		cr_assert_eq(p->tasks[i].file.references, references[i]);
		cr_assert_eq(p->tasks[i].file.first_ts, i == 2 ? 0x11 : 0x10);
		cr_assert_eq(p->tasks[i].file.last_ts, last[i]);
	}
	cr_assert_str_eq(ix->kernel.path, "kernel");
	cr_assert_eq(ix->kernel.records, 0);
	cr_assert_null(ix->orphan.path);
	lp_index_free(ix);
	g_free(dir);
}

/* A manifest with only the tasks' paths: ids come from the paths, the
 * kernel file from the directory, and lp_index_count gives the counts and
 * programs the merge's manifest has (the programs in timestamp order, not
 * in the order their files are read). */
Test(procdir, minimal_index_is_counted)
{
	lp_error err = {0};
	lp_procdir *pd = open_out("out", false, false, &err);
	cr_assert(pd, "%s", err.msg);
	lp_task_id t = {0x1a, 0x1b, 0}, u = {0x1a, 0x2, 0};
	event(pd, LP_TAG_T, 0x10, "T 10 1a 2", NULL, 2, (lp_task_id){0x1a, 0x1a, 0}, u);
	event(pd, LP_TAG_E, 0x11, "E 11 1b 5 first", "first", 1, t, none);
	event(pd, LP_TAG_E, 0x12, "E 12 2 6 second", "second", 1, u, none);
	lp_ref r = {.type = 'w', .timestamp = 0x20, .length = 1, .address = 0x2000};
	uint64_t c = 0;
	refs(pd, &r, &c, 1, &t);
	finish(pd, &(lp_stats){0});
	char *dir = path_in("out");
	char *index = g_build_filename(dir, "index.yaml", NULL);
	cr_assert(g_file_set_contents(index, "processes:\n- tasks: [{path: 1a/2}, {path: 1a/1a}, "
				      "{path: 1a/1b}]\n", -1, NULL));
	lp_index *ix = lp_index_read(dir, &err);
	cr_assert(ix, "%s", err.msg);
	cr_assert_eq(ix->layout, LP_LAYOUT_TASK);
	cr_assert_eq(ix->nprocesses, 1);
	lp_index_process *p = &ix->processes[0];
	cr_assert_eq(p->pid, 0x1a);
	cr_assert_null(p->programs);
	uint64_t tids[] = {0x2, 0x1a, 0x1b};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(p->tasks[i].tid, tids[i]);
		cr_assert_not(p->tasks[i].file.counted);
	}
	cr_assert_str_eq(ix->kernel.path, "kernel");
	cr_assert_not(ix->kernel.counted);
	cr_assert_null(ix->orphan.path);
	cr_assert(ix->orphan.counted);
	cr_assert_eq(lp_index_count(dir, ix, &err), 0, "%s", err.msg);
	cr_assert_str_eq(p->programs[0], "first");
	cr_assert_str_eq(p->programs[1], "second");
	cr_assert_null(p->programs[2]);
	uint64_t records[] = {2, 1, 2}, references[] = {0, 0, 1}, first[] = {0x10, 0x10, 0x11},
		 last[] = {0x12, 0x10, 0x20};
	for (int i = 0; i < 3; i++) {
		cr_assert(p->tasks[i].file.counted);
		cr_assert_eq(p->tasks[i].file.records, records[i]);
		cr_assert_eq(p->tasks[i].file.references, references[i]);
		cr_assert_eq(p->tasks[i].file.first_ts, first[i]);
		cr_assert_eq(p->tasks[i].file.last_ts, last[i]);
	}
	cr_assert(ix->kernel.counted);
	cr_assert_eq(ix->kernel.records, 0);
	lp_index_free(ix);
	g_free(index);
	g_free(dir);
}

/* The writer's side of index.yaml and its reader agree: an index with a
 * program name that is not UTF-8 (mended), a file with no records (no
 * timestamps) and no orphan file reads back as written. */
Test(procdir, index_emit_reads_back)
{
	char *programs[] = {"/bin/sh", "caf\xe9", NULL};
	lp_index_task tasks[] = {
		{.tid = 0x1b, .file = {.path = "1a/1b", .records = 3, .references = 2,
				       .first_ts = 0x10, .last_ts = 0xffffffffffffffff}},
		{.tid = 0x1c, .file = {.path = "1a/1c"}},
	};
	lp_index_process proc = {.pid = 0x1a, .programs = programs, .tasks = tasks, .ntasks = 2};
	lp_index ix = {
		.reference = "r.ref", .kernel_input = "k.kern", .layout = LP_LAYOUT_TASK,
		.processes = &proc, .nprocesses = 1,
		.kernel = {.path = "kernel", .records = 1, .first_ts = 5, .last_ts = 5},
	};
	lp_stats stats;
	memset(&stats, 0, sizeof stats);
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	cr_assert_eq(lp_yaml_start(&em, text), 0);
	cr_assert_eq(lp_index_emit(&em, &ix, &stats), 0);
	cr_assert_eq(lp_yaml_finish(&em), 0);
	char *path = g_build_filename(scratch, "index.yaml", NULL);
	cr_assert(g_file_set_contents(path, text->str, (gssize)text->len, NULL));
	lp_error err = {0};
	lp_index *back = lp_index_read(scratch, &err);
	cr_assert(back, "%s", err.msg);
	cr_assert_str_eq(back->reference, "r.ref");
	cr_assert_str_eq(back->kernel_input, "k.kern");
	cr_assert_eq(back->layout, LP_LAYOUT_TASK);
	cr_assert_eq(back->nprocesses, 1);
	const lp_index_process *p = &back->processes[0];
	cr_assert_eq(p->pid, 0x1a);
	cr_assert_str_eq(p->programs[0], "/bin/sh");
	cr_assert_str_eq(p->programs[1], "caf\xef\xbf\xbd"); /* U+FFFD */
	cr_assert_null(p->programs[2]);
	cr_assert_eq(p->ntasks, 2);
	cr_assert_eq(p->tasks[0].tid, 0x1b);
	cr_assert_str_eq(p->tasks[0].file.path, "1a/1b");
	cr_assert_eq(p->tasks[0].file.records, 3);
	cr_assert_eq(p->tasks[0].file.references, 2);
	cr_assert_eq(p->tasks[0].file.first_ts, 0x10);
	cr_assert_eq(p->tasks[0].file.last_ts, 0xffffffffffffffff);
	cr_assert_eq(p->tasks[1].file.records, 0);
	cr_assert_str_eq(back->kernel.path, "kernel");
	cr_assert_eq(back->kernel.first_ts, 5);
	cr_assert_null(back->orphan.path);
	cr_assert(strstr(text->str, "pid: \"1a\"\n"), "%s", text->str);
	lp_index_free(back);
	g_free(path);
	g_string_free(text, TRUE);
}
