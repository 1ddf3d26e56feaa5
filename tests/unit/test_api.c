/* The library's interface, <laplace/laplace.h> alone: basic merge streams
 * (text, binary, compressed, standard input) and captures read through
 * it, with the exact references, statistics and messages, and every
 * error path: missing files, bad headers, torn records, bad lines, bad
 * options, reads after the end and after an error. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "scratch.h"
#include "laplace/laplace.h"

SCRATCH_SUITE(api);

static char *file_with(const char *name, const void *data, size_t n)
{
	return scratch_file(dir, name, data, n);
}

static char *text_file(const char *name, const char *text)
{
	return file_with(name, text, strlen(text));
}

/* ---- basic merge streams ---- */

/* A binary basic stream: the header, then one word per reference. */
static GByteArray *bin_stream(const uint64_t *words, size_t n)
{
	GByteArray *b = g_byte_array_new();
	g_byte_array_append(b, (const guint8 *)"LPBASIC\x01", 8);
	for (size_t i = 0; i < n; i++) {
		guint8 le[8];
		for (int k = 0; k < 8; k++)
			le[k] = (guint8)(words[i] >> (8 * k));
		g_byte_array_append(b, le, 8);
	}
	return b;
}

#define TYPE(t) ((uint64_t)(t) << 61)
#define CANON_MAX ((UINT64_C(1) << 61) - 1)

/* Every reference of path, read n at a time, as "type canonical" lines;
 * the last call's result (0 at the end, -1 on error) in *last. */
static char *read_basic(const char *path, size_t n, ssize_t *last)
{
	lp_basic_reader *r = lp_basic_open(path, &err);
	cr_assert_not_null(r, "%s", err.msg);
	lp_basic_ref *refs = g_new(lp_basic_ref, n);
	GString *out = g_string_new(NULL);
	ssize_t got;
	while ((got = lp_basic_read(r, refs, n, &err)) > 0) {
		cr_assert_leq((size_t)got, n);
		for (ssize_t i = 0; i < got; i++)
			g_string_append_printf(out, "%c %" G_GINT64_MODIFIER "x\n", refs[i].type,
					       refs[i].canonical);
	}
	*last = got;
	g_free(refs);
	lp_basic_close(r);
	return g_string_free(out, FALSE);
}

static void expect_basic(const char *path, const char *want)
{
	for (size_t n = 1; n <= 1000; n *= 10) {
		ssize_t last;
		char *got = read_basic(path, n, &last);
		cr_assert_eq(last, 0, "%s", err.msg);
		cr_assert_str_eq(got, want, "read %zu at a time", n);
		g_free(got);
	}
}

Test(api, basic_text)
{
	char *path = text_file("s.txt", "r 0\nW 1A \r\ni ffffffffffffffff\nw 00002\nR 3\nI 4");
	expect_basic(path, "r 0\nW 1a\ni ffffffffffffffff\nw 2\nR 3\nI 4\n");
	g_free(path);
}

Test(api, basic_binary)
{
	uint64_t words[] = {
		TYPE(0) | 0, TYPE(1) | 0x1a, TYPE(2) | CANON_MAX, TYPE(3) | 2, TYPE(4) | 3, TYPE(5) | 4,
	};
	GByteArray *b = bin_stream(words, 6);
	char *path = file_with("s.bin", b->data, b->len);
	expect_basic(path, "r 0\nw 1a\ni 1fffffffffffffff\nR 2\nW 3\nI 4\n");
	char *empty = file_with("empty.bin", b->data, 8);
	expect_basic(empty, "");
	g_free(empty);
	g_free(path);
	g_byte_array_free(b, TRUE);
}

Test(api, basic_compressed)
{
	uint64_t words[] = {TYPE(1) | 7, TYPE(0) | 7};
	GByteArray *b = bin_stream(words, 2);
	GByteArray *gz = scratch_gzip(b->data, b->len);
	GByteArray *zst = scratch_zstd("r 5\nw 6\n", 8);
	char *p1 = file_with("s.bin.gz", gz->data, gz->len);
	char *p2 = file_with("s.txt.zst", zst->data, zst->len);
	expect_basic(p1, "w 7\nr 7\n");
	expect_basic(p2, "r 5\nw 6\n");
	g_free(p1);
	g_free(p2);
	g_byte_array_free(b, TRUE);
	g_byte_array_free(gz, TRUE);
	g_byte_array_free(zst, TRUE);
}

Test(api, basic_standard_input)
{
	uint64_t words[] = {TYPE(2) | 0x10};
	GByteArray *b = bin_stream(words, 1);
	char *path = file_with("s.bin", b->data, b->len);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	ssize_t last;
	char *got = read_basic("-", 4, &last);
	cr_assert_eq(last, 0, "%s", err.msg);
	cr_assert_str_eq(got, "i 10\n");
	g_free(got);
	g_free(path);
	g_byte_array_free(b, TRUE);
}

Test(api, basic_read_after_the_end)
{
	char *path = text_file("s.txt", "r 1\n");
	lp_basic_reader *r = lp_basic_open(path, &err);
	lp_basic_ref refs[4];
	cr_assert_eq(lp_basic_read(r, refs, 4, &err), 1);
	cr_assert_eq(lp_basic_read(r, refs, 4, &err), 0);
	cr_assert_eq(lp_basic_read(r, refs, 4, &err), 0);
	cr_assert_eq(err.status, LP_OK);
	lp_basic_close(r);
	g_free(path);
}

Test(api, basic_missing_file)
{
	char *path = g_build_filename(dir, "absent", NULL);
	cr_assert_null(lp_basic_open(path, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot open %s: No such file or directory", path);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(path);
}

/* A NULL where the library needs something is the caller's mistake: a
 * usage error, never a crash; a NULL err only loses the message. */
static void expect_usage(const char *want)
{
	cr_assert_eq(err.status, LP_EUSAGE);
	cr_assert_str_eq(err.msg, want);
	err = (lp_error){0};
}

/* lp_simulate: NULLs refused, and the rows of a stream from a file and
 * of the same canonical numbers from an array, in laplace sim's order
 * (by hand: 1 2 1 3 1 faults 5 3 3 at 1 2 3 frames with lru and opt
 * alike; space_time 5, 1+2+2+2+2 = 9, 1+2+2+3+3 = 11). */
Test(api, simulate)
{
	lp_sim_row *rows = (lp_sim_row *)&err; /* set to NULL on failure */
	cr_assert_eq(lp_simulate(NULL, NULL, 0, NULL, NULL, NULL, NULL, &err), -1);
	expect_usage("lp_simulate: argument rows: NULL");
	cr_assert_eq(lp_simulate(NULL, NULL, 3, NULL, NULL, NULL, &rows, &err), -1);
	cr_assert_null(rows);
	expect_usage("lp_simulate: arguments path and canonical: NULL");
	cr_assert_eq(lp_simulate(NULL, NULL, 0, NULL, NULL, NULL, &rows, NULL), 0);
	cr_assert_null(rows);
	static const uint64_t pages[] = {1, 2, 1, 3, 1};
	cr_assert_eq(lp_simulate(NULL, pages, 5, "lru,opt", "all", NULL, &rows, &err), 6);
	static const struct { const char *policy; uint64_t size, faults, space; } want[] = {
		{"lru", 1, 5, 5}, {"lru", 2, 3, 9}, {"lru", 3, 3, 11},
		{"opt", 1, 5, 5}, {"opt", 2, 3, 9}, {"opt", 3, 3, 11},
	};
	for (size_t i = 0; i < 6; i++) {
		cr_assert_str_eq(rows[i].policy, want[i].policy);
		cr_assert_eq(rows[i].size, want[i].size);
		cr_assert_eq(rows[i].references, 5);
		cr_assert_eq(rows[i].faults, want[i].faults, "row %zu", i);
		cr_assert_eq(rows[i].space_time, want[i].space);
	}
	lp_sim_free(rows);
	char *path = text_file("s.txt", "r 1\nw 2\nR 1\ni 3\nr 1\n");
	cr_assert_eq(lp_simulate(path, NULL, 0, "opt", "2", NULL, &rows, &err), 1);
	cr_assert_eq(rows[0].faults, 3);
	lp_sim_free(rows);
	lp_sim_free(NULL);
	cr_assert_eq(lp_simulate(path, NULL, 0, "lru", "0", NULL, &rows, &err), -1);
	cr_assert_null(rows);
	expect_usage("--frames: a size must be at least 1, not 0");
	cr_assert_eq(lp_simulate(path, NULL, 0, "lru", "2,1-100000000000", NULL, &rows, &err), -1);
	expect_usage("--frames: more than 67108864 sizes named in '2,1-100000000000'");
	g_free(path);
}

/* lp_simulate_request: rows handed over a block of one policy at a time
 * with that policy's count; a stop flag or a callback's non-zero stops
 * it; sampling as laplace sim's; a request not set up is refused. */
typedef struct taken_rows {
	uint64_t rows, blocks, last_total;
	int stop_after; /* blocks, or 0: never */
} taken_rows;

static int take_rows(void *ctx, const lp_sim_row *rows, size_t n, uint64_t policy_rows)
{
	taken_rows *t = ctx;
	for (size_t i = 1; i < n; i++)
		cr_assert_str_eq(rows[i].policy, rows[0].policy);
	t->rows += n;
	t->blocks++;
	t->last_total = policy_rows;
	return t->stop_after && t->blocks >= (uint64_t)t->stop_after;
}

Test(api, simulate_request)
{
	static const uint64_t pages[] = {1, 2, 1, 3, 1};
	lp_sim_request rq;
	lp_sim_request_init(&rq);
	taken_rows got = {0};
	rq.policies = "lru,ws";
	rq.frames = "1-10000";
	rq.windows = "1-3";
	rq.rows = take_rows;
	rq.ctx = &got;
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, &rq, &err), 0);
	cr_assert_eq(got.rows, 10003);
	cr_assert_eq(got.blocks, 4); /* 4096 4096 1808, then ws's 3 */
	cr_assert_eq(got.last_total, 3);
	got = (taken_rows){.stop_after = 1};
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, &rq, &err), 1);
	cr_assert_eq(got.rows, 4096);
	volatile int stop = 1;
	rq.stop = &stop;
	got = (taken_rows){0};
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, &rq, &err), 1);
	cr_assert_eq(got.rows, 0);
	rq.stop = NULL;
	rq.policies = "eelru";
	rq.sample_pages = 2;
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, &rq, &err), -1);
	expect_usage("--sample-rate and --sample-pages do not go with eelru (fifo clock segq arc "
		     "run miniature simulations)");
	rq.sample_rate = 0.5;
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, &rq, &err), -1);
	expect_usage("--sample-rate and --sample-pages cannot both be given");
	rq.size = 8;
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, &rq, &err), -1);
	cr_assert_eq(err.status, LP_EUSAGE);
	err = (lp_error){0};
	cr_assert_eq(lp_simulate_request(NULL, pages, 5, NULL, &err), -1);
	expect_usage("lp_simulate_request: argument rq: NULL");
	lp_sim_request_init(NULL);
}

/* lp_sim_request.options (1.3.0): laplace sim's --NAME VALUE as
 * NAME=VALUE items, the same rows and the same refusals as the command
 * (laplace sim -q --policy segq,eelru --frames 3-4 --segq-lru-frames 0
 * --eelru-early 1 --eelru-late 5 over these 13 pages: faults 9 10 9 7);
 * a request of 1.2.0's size (no options field) still runs. */
static uint64_t faults_got[8];
static size_t nfaults_got;

static int take_faults(void *ctx, const lp_sim_row *rows, size_t n, uint64_t policy_rows)
{
	(void)ctx;
	(void)policy_rows;
	for (size_t i = 0; i < n && nfaults_got < 8; i++)
		faults_got[nfaults_got++] = rows[i].faults;
	return 0;
}

static int options_run(lp_sim_request *rq, const char *policies, const char *frames,
		       const char *options)
{
	static const uint64_t pages[] = {1, 2, 3, 1, 4, 1, 2, 5, 1, 2, 3, 4, 5};
	rq->policies = policies;
	rq->frames = frames;
	rq->options = options;
	rq->rows = take_faults;
	nfaults_got = 0;
	return lp_simulate_request(NULL, pages, 13, rq, &err);
}

Test(api, simulate_options)
{
	lp_sim_request rq;
	lp_sim_request_init(&rq);
	cr_assert_null(rq.options);
	cr_assert_eq(options_run(&rq, "segq,eelru", "3-4", NULL), 0);
	cr_assert_arr_eq(faults_got, ((uint64_t[]){10, 8, 9, 8}), 4 * sizeof(uint64_t));
	cr_assert_eq(options_run(&rq, "segq,eelru", "3-4",
				 "segq-lru-frames=0,eelru-early=1,eelru-late=5"), 0);
	cr_assert_eq(nfaults_got, 4);
	cr_assert_arr_eq(faults_got, ((uint64_t[]){9, 10, 9, 7}), 4 * sizeof(uint64_t));
	cr_assert_eq(options_run(&rq, NULL, "3", "eelru-early=1"), -1);
	expect_usage("--eelru-early applies only to eelru, and --policy names none of them "
		     "(the default is lru)");
	cr_assert_eq(options_run(&rq, "lru,fifo", "3", "eelru-early=1"), -1);
	expect_usage("--eelru-early applies only to eelru, and --policy names none of them");
	cr_assert_eq(options_run(&rq, "segq", "2", "segq-lru-frames=4"), -1);
	expect_usage("--segq-lru-frames 4 must be below the frames K (2)");
	cr_assert_eq(options_run(&rq, "segq", "2", "segq-lru-frames=x"), -1);
	expect_usage("--segq-lru-frames must be a whole number, not 'x'");
	cr_assert_eq(options_run(&rq, "segq", "2", "segq-lru-frames"), -1);
	expect_usage("options: 'segq-lru-frames' is not NAME=VALUE");
	cr_assert_eq(options_run(&rq, "segq", "2", "lru-frames=1"), -1);
	expect_usage("options: unknown option 'lru-frames' (clock-load-bit segq-lru-frames "
		     "eelru-early eelru-late)");
	cr_assert_eq(options_run(&rq, "segq", "2", "segq-lru-frames=1,segq-lru-frames=0"), -1);
	expect_usage("options: segq-lru-frames given twice");
	/* A caller built against 1.2.0's laplace.h: no options field. */
	lp_sim_request old;
	memset(&old, 0xff, sizeof old);
	lp_sim_request_init_sized(&old, offsetof(lp_sim_request, options));
	cr_assert_eq(old.size, offsetof(lp_sim_request, options));
	cr_assert_eq(options_run(&old, "segq,eelru", "3-4", NULL), 0);
	old.options = "segq-lru-frames=0"; /* past its size: not read */
	old.rows = take_faults;
	nfaults_got = 0;
	static const uint64_t pages[] = {1, 2, 3, 1, 4, 1, 2, 5, 1, 2, 3, 4, 5};
	cr_assert_eq(lp_simulate_request(NULL, pages, 13, &old, &err), 0);
	cr_assert_arr_eq(faults_got, ((uint64_t[]){10, 8, 9, 8}), 4 * sizeof(uint64_t));
}

/* lp_sweep_memory (1.3.0): the rows of laplace schedule --memory's
 * table, in the order of the sizes, for the case two-tasks of
 * laplace-formats(5), 9.4.6 (laplace schedule --policy rr --quantum 2
 * --fault-ticks 3 --memory 1,2,4 prints ticks 20 15 13, faults 6 5 4,
 * waits 1 1 0, evictions 5 3 0, idle 13 8 6, utilization 0.350000
 * 0.466667 0.538462); the command's refusals, NULLs, a stop. */
static char *two_tasks(void)
{
	char *pp = g_build_filename(dir, "pp", NULL);
	char *sub = g_build_filename(pp, "1", NULL);
	g_mkdir_with_parents(sub, 0755);
	g_free(sub);
	sub = g_build_filename(pp, "2", NULL);
	g_mkdir_with_parents(sub, 0755);
	g_free(sub);
	g_free(text_file("pp/index.yaml", "layout: task\nprocesses:\n- pid: \"1\"\n  tasks:\n"
			 "  - tid: \"1\"\n    path: 1/1\n- pid: \"2\"\n  tasks:\n  - tid: \"2\"\n"
			 "    path: 2/2\n"));
	g_free(text_file("pp/kernel", ""));
	g_free(text_file("pp/1/1", "r 1 4 10 0\nr 2 4 10 0\nr 3 4 11 1\nr 4 4 10 0\n"));
	g_free(text_file("pp/2/2", "r 5 4 20 2\nr 6 4 21 3\nr 7 4 10 0\n"));
	return pp;
}

typedef struct memory_rows {
	lp_memory_row rows[8];
	size_t n;
	size_t stop_after; /* rows, or 0: never */
} memory_rows;

static int take_memory_rows(void *ctx, const lp_memory_row *rows, size_t n)
{
	memory_rows *m = ctx;
	for (size_t i = 0; i < n && m->n < 8; i++)
		m->rows[m->n++] = rows[i];
	return m->stop_after && m->n >= m->stop_after;
}

Test(api, sweep_memory)
{
	char *pp = two_tasks();
	lp_sweep_request rq;
	lp_sweep_request_init(&rq);
	memory_rows got = {0};
	rq.memory = "1,2,4";
	rq.quantum = 2;
	rq.fault_ticks = 3;
	rq.rows = take_memory_rows;
	rq.ctx = &got;
	cr_assert_eq(lp_sweep_memory(pp, &rq, &err), 0, "%s", err.msg);
	cr_assert_eq(got.n, 3);
	static const lp_memory_row want[] = {
		{1, 20, 7, 6, 1, 5, 7, 13, 0.35},
		{2, 15, 7, 5, 1, 3, 7, 8, 0.466667},
		{4, 13, 7, 4, 0, 0, 7, 6, 0.538462},
	};
	for (size_t i = 0; i < 3; i++) {
		const lp_memory_row *r = &got.rows[i], *w = &want[i];
		cr_assert(r->memory == w->memory && r->ticks == w->ticks &&
			  r->references == w->references && r->faults == w->faults &&
			  r->waits == w->waits && r->evictions == w->evictions &&
			  r->busy_ticks == w->busy_ticks && r->idle_ticks == w->idle_ticks &&
			  r->utilization == w->utilization, "row %zu", i);
	}
	got = (memory_rows){.stop_after = 1};
	cr_assert_eq(lp_sweep_memory(pp, &rq, &err), 1);
	cr_assert_eq(got.n, 1);
	volatile int stop = 1;
	rq.stop = &stop;
	got = (memory_rows){0};
	cr_assert_eq(lp_sweep_memory(pp, &rq, &err), 1);
	cr_assert_eq(got.n, 0);
	rq.stop = NULL;
	rq.rows = NULL;
	cr_assert_eq(lp_sweep_memory(pp, &rq, NULL), 0);
	static const struct { const char *memory, *policy, *replacement; unsigned cpus;
			      uint64_t fault_ticks; const char *message; } bad[] = {
		{"0,2", NULL, NULL, 0, 0, "--memory: 0 is out of range (1 to 4294967295 frames)"},
		{"1,,2", NULL, NULL, 0, 0, "--memory must be a decimal number of frames from 1 to "
		 "4294967295, or several separated by commas, not '1,,2'"},
		{"2", "as-traced", NULL, 0, 0, "--memory goes with --policy rr or random"},
		{"2", "fifo", NULL, 0, 0, "--policy must be as-traced, rr or random, not 'fifo'"},
		{"2", NULL, "arc", 0, 0, "--replacement must be lru, fifo or clock, not 'arc'"},
		{"2", NULL, NULL, 1025, 0, "--cpus is out of range (1 to 1024), not 1025"},
		{"2", NULL, NULL, 0, UINT64_C(4294967296),
		 "--fault-ticks is out of range (1 to 4294967295), not 4294967296"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		lp_sweep_request_init(&rq);
		rq.memory = bad[i].memory;
		rq.policy = bad[i].policy;
		rq.replacement = bad[i].replacement;
		rq.cpus = bad[i].cpus;
		rq.fault_ticks = bad[i].fault_ticks;
		cr_assert_eq(lp_sweep_memory(pp, &rq, &err), -1, "case %zu", i);
		expect_usage(bad[i].message);
	}
	lp_sweep_request_init(&rq);
	rq.memory = "2";
	cr_assert_eq(lp_sweep_memory(dir, &rq, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	err = (lp_error){0};
	cr_assert_eq(lp_sweep_memory(NULL, &rq, &err), -1);
	expect_usage("lp_sweep_memory: argument dir: NULL");
	cr_assert_eq(lp_sweep_memory(pp, NULL, &err), -1);
	expect_usage("lp_sweep_memory: argument rq: NULL");
	rq.memory = NULL;
	cr_assert_eq(lp_sweep_memory(pp, &rq, &err), -1);
	expect_usage("lp_sweep_memory: field memory: NULL");
	rq.size = 8;
	rq.memory = "2";
	cr_assert_eq(lp_sweep_memory(pp, &rq, &err), -1);
	cr_assert_eq(err.status, LP_EUSAGE);
	err = (lp_error){0};
	lp_sweep_request_init(NULL);
	g_free(pp);
}

/* lp_reduce (1.3.0): laplace reduce's output, reference for reference
 * (laplace reduce -q --method olr --frames 2 over these 12 references
 * writes w 1, r 2, w 1, r 3, w 2, r 1; --method sad, nine of them), from
 * a file and from an array
 * alike; its refusals; NULLs. */
Test(api, reduce)
{
	static const lp_basic_ref in[] = {
		{'r', 1}, {'r', 1}, {'w', 1}, {'r', 2}, {'r', 2}, {'r', 1},
		{'r', 3}, {'r', 3}, {'r', 3}, {'w', 2}, {'r', 1}, {'r', 1},
	};
	static const lp_basic_ref olr2[] = {{'w', 1}, {'r', 2}, {'w', 1}, {'r', 3}, {'w', 2},
					    {'r', 1}};
	static const lp_basic_ref sad2[] = {{'w', 1}, {'r', 2}, {'r', 2}, {'r', 1}, {'r', 3},
					    {'r', 3}, {'w', 2}, {'r', 1}, {'r', 1}};
	char *path = text_file("s.txt", "r 1\nr 1\nw 1\nr 2\nr 2\nr 1\nr 3\nr 3\nr 3\nw 2\nr 1\n"
			       "r 1\n");
	lp_basic_ref *out = (lp_basic_ref *)&err; /* set to NULL on failure */
	for (int from_file = 0; from_file < 2; from_file++) {
		const char *source = from_file ? path : NULL;
		cr_assert_eq(lp_reduce(source, in, 12, "olr", 2, &out, &err), 6, "%s", err.msg);
		for (size_t i = 0; i < 6; i++)
			cr_assert(out[i].type == olr2[i].type && out[i].canonical == olr2[i].canonical,
				  "olr %zu", i);
		lp_reduce_free(out);
		cr_assert_eq(lp_reduce(source, in, 12, "sad", 2, &out, &err), 9, "%s", err.msg);
		for (size_t i = 0; i < 9; i++)
			cr_assert(out[i].type == sad2[i].type && out[i].canonical == sad2[i].canonical,
				  "sad %zu", i);
		lp_reduce_free(out);
	}
	lp_reduce_free(NULL);
	cr_assert_eq(lp_reduce(NULL, NULL, 0, "sad", 1, &out, &err), 0);
	cr_assert_null(out);
	cr_assert_eq(lp_reduce(NULL, in, 12, "lru", 2, &out, &err), -1);
	cr_assert_null(out);
	expect_usage("--method must be sad or olr, not 'lru'");
	cr_assert_eq(lp_reduce(NULL, in, 12, NULL, 2, &out, &err), -1);
	expect_usage("--method is required");
	cr_assert_eq(lp_reduce(NULL, in, 12, "olr", 0, &out, &err), -1);
	expect_usage("--frames is out of range (at least 1), not 0");
	static const lp_basic_ref bad[] = {{'r', 1}, {'x', 2}};
	cr_assert_eq(lp_reduce(NULL, bad, 2, "olr", 1, &out, &err), -1);
	expect_usage("lp_reduce: refs[1]: type: 120 is not one of r w i R W I");
	cr_assert_eq(lp_reduce(NULL, NULL, 2, "olr", 1, &out, &err), -1);
	expect_usage("lp_reduce: arguments path and refs: NULL");
	cr_assert_eq(lp_reduce(NULL, in, 12, "olr", 1, NULL, &err), -1);
	expect_usage("lp_reduce: argument reduced: NULL");
	char *absent = g_build_filename(dir, "absent", NULL);
	cr_assert_eq(lp_reduce(absent, NULL, 0, "olr", 1, &out, &err), -1);
	cr_assert_eq(err.status, LP_EIO);
	err = (lp_error){0};
	g_free(absent);
	g_free(path);
}

Test(api, basic_null_arguments)
{
	cr_assert_null(lp_basic_open(NULL, &err));
	expect_usage("lp_basic_open: argument path: NULL");
	cr_assert_null(lp_basic_open(NULL, NULL));
	lp_basic_ref refs[4];
	cr_assert_eq(lp_basic_read(NULL, refs, 4, &err), -1);
	expect_usage("lp_basic_read: argument r: NULL");
	cr_assert_eq(lp_basic_read(NULL, refs, 4, NULL), -1);
	char *path = text_file("s.txt", "r 1\nw 2\n");
	lp_basic_reader *r = lp_basic_open(path, NULL);
	cr_assert_not_null(r);
	cr_assert_eq(lp_basic_read(r, NULL, 4, &err), -1);
	expect_usage("lp_basic_read: argument refs: NULL, with n 4");
	/* Nothing to store, so nothing read; the stream is not failed. */
	cr_assert_eq(lp_basic_read(r, NULL, 0, &err), 0);
	cr_assert_eq(lp_basic_read(r, refs, 1, NULL), 1);
	cr_assert_eq(lp_basic_read(r, refs, 4, &err), 1);
	cr_assert_eq(refs[0].type, 'w');
	cr_assert_eq(err.status, LP_OK);
	lp_basic_close(r);
	lp_basic_close(NULL);
	g_free(path);
}

Test(api, basic_failure_without_err)
{
	char *path = text_file("s.txt", "r 1\nx 2\n");
	lp_basic_reader *r = lp_basic_open(path, NULL);
	lp_basic_ref refs[4];
	cr_assert_eq(lp_basic_read(r, refs, 4, NULL), 1);
	cr_assert_eq(lp_basic_read(r, refs, 4, NULL), -1);
	cr_assert_eq(lp_basic_read(r, refs, 4, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	lp_basic_close(r);
	char *absent = g_build_filename(dir, "absent", NULL);
	cr_assert_null(lp_basic_open(absent, NULL));
	g_free(absent);
	g_free(path);
}

static void expect_open_error(const char *name, const void *data, size_t n, const char *fmt)
{
	char *path = file_with(name, data, n);
	err = (lp_error){0};
	cr_assert_null(lp_basic_open(path, &err));
	cr_assert_eq(err.status, LP_EINPUT);
	char *want = g_strdup_printf(fmt, path);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(path);
}

Test(api, basic_bad_header)
{
	expect_open_error("v2.bin", "LPBASIC\x02", 8, "%s: header (byte 7): field version: 2 is not 1");
	expect_open_error("v0.bin", "LPBASIC\x00rest", 12, "%s: header (byte 7): field version: 0 is not 1");
	expect_open_error("cut.bin", "LPBASIC", 7, "%s: header (byte 7): field version: missing");
}

/* Read path 8 at a time: the references before the error (as lines), then
 * the error, which every later read repeats. */
static void expect_read_error(const char *path, const char *before, const char *fmt)
{
	ssize_t last;
	err = (lp_error){0};
	char *got = read_basic(path, 8, &last);
	cr_assert_eq(last, -1);
	cr_assert_str_eq(got, before);
	cr_assert_eq(err.status, LP_EINPUT);
	char *want = g_strdup_printf(fmt, path);
	cr_assert_str_eq(err.msg, want);
	g_free(got);

	lp_basic_reader *r = lp_basic_open(path, &err);
	lp_basic_ref refs[64];
	while (lp_basic_read(r, refs, 64, &err) > 0)
		;
	err = (lp_error){0};
	cr_assert_eq(lp_basic_read(r, refs, 64, &err), -1, "read after an error");
	cr_assert_str_eq(err.msg, want);
	lp_basic_close(r);
	g_free(want);
}

Test(api, basic_torn_binary_record)
{
	uint64_t words[] = {TYPE(0) | 1, TYPE(1) | 2};
	GByteArray *b = bin_stream(words, 2);
	char *path = file_with("torn.bin", b->data, b->len - 3);
	expect_read_error(path, "r 1\n",
			  "%s: torn last record: 5 bytes left over after 1 whole record, at byte 16");
	g_free(path);
	g_byte_array_free(b, TRUE);
}

Test(api, basic_bad_binary_type)
{
	uint64_t words[] = {TYPE(0) | 1, TYPE(5) | 2, TYPE(6) | 3, TYPE(0) | 4};
	GByteArray *b = bin_stream(words, 4);
	char *path = file_with("type.bin", b->data, b->len);
	expect_read_error(path, "r 1\nI 2\n",
			  "%s: record 2 (byte 24): field type: 6 is not one of 0 to 5 (r w i R W I)");
	g_free(path);
	g_byte_array_free(b, TRUE);
}

Test(api, basic_bad_text_lines)
{
	static const struct {
		const char *text, *before, *msg;
	} cases[] = {
		{"r 1\nx 2\n", "r 1\n", "%s:2: field type: not one of r w i R W I"},
		{"r 1\n\n", "r 1\n", "%s:2: field type: not one of r w i R W I"},
		{"rw 1\n", "", "%s:1: field type: not one of r w i R W I"},
		{"r\n", "", "%s:1: field canonical: missing"},
		{"r 1 2\n", "", "%s:1: field canonical: not a hex number of at most 64 bits"},
		{"w 1\nr 10000000000000000\n", "w 1\n",
		 "%s:2: field canonical: not a hex number of at most 64 bits"},
		{"LPBASI", "", "%s:1: field type: not one of r w i R W I"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *path = text_file("bad.txt", cases[i].text);
		expect_read_error(path, cases[i].before, cases[i].msg);
		g_free(path);
	}
	GString *longer = g_string_new("r 1\nr ");
	for (int i = 0; i < 4096; i++)
		g_string_append_c(longer, '0');
	char *path = text_file("long.txt", longer->str);
	expect_read_error(path, "r 1\n", "%s:2: line longer than 4096 bytes");
	g_free(path);
	g_string_free(longer, TRUE);
}

/* A task file (per-process merge output) read as a basic stream: its
 * references, its event lines skipped once the kernel trace's reader
 * takes them. */
Test(api, basic_task_file)
{
	char *path = text_file("task.txt", "S 10 1 a\nr 11 4 2 5\nM 12 1 1000 2000 0 2 3 0 a b \r\n"
					    "W 13 1 c0000 7\nC 14 5 6 7\nX 15 1\n");
	expect_basic(path, "r 5\nW 7\n");
	g_free(path);
}

/* The task file of a 64-bit capture: its vpns have up to 52 bits (a
 * stack's near 7ffffffff, the direct map's at ffff888000000); one of 53
 * is refused, naming the field. */
Test(api, basic_task_file_of_a_64_bit_capture)
{
	char *path = text_file("task.txt", "S 10 1 123456789\nw 11 8 7fffffffe 1a\n"
					    "R 12 8 ffff888000abc 1b\nr 13 1 fffffffffffff 1c\n");
	expect_basic(path, "w 1a\nR 1b\nr 1c\n");
	g_free(path);
	path = text_file("task.txt", "r 11 8 7fffffffe 1a\nr 12 8 10000000000000 1b\n");
	expect_read_error(path, "r 1a\n", "%s:2: field vpn: not a hex number of at most 52 bits");
	g_free(path);
}

Test(api, basic_task_file_bad_event_lines)
{
	static const struct {
		const char *text, *before, *msg;
		size_t len; /* 0: the text's strlen */
	} cases[] = {
		{"C \0\xb0\n", "", "%s:1: tag C: field timestamp: bad hex number '\\x00\\xb0'", 5},
		{"V r \n", "", "%s:1: tag V: field timestamp: bad hex number 'r'", 0},
		{"r 1 4 2 5\nQ 5 1 2\n", "r 5\n", "%s:2: tag Q: extra field '2'", 0},
		{"r 1 4 2 5\nM 30 1 1000 2000 0 2 3\n", "r 5\n", "%s:2: tag M: missing field file", 0},
		{"S 1 2 3\nF 2 1 10000000000000000\n", "",
		 "%s:2: tag F: field child: 10000000000000000 does not fit 64 bits", 0},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		char *path = file_with("bad.txt", cases[i].text, len);
		expect_read_error(path, cases[i].before, cases[i].msg);
		g_free(path);
	}
}

/* ---- captures ---- */

/* Task 1 runs from 10 (hex) on vas a; thread 2 joins it and runs from 14
 * until it exits at 16. The first and last references are made while no
 * task is current; the kernel reference at c0003000 is to the kernel
 * page c0003 (page offset c0000000) and belongs to task 1. */
static const char kernel_trace[] = "S 10 1 a\nT 13 1 2\nS 14 2 a\nX 16 2\n";
static const char reference_trace[] =
	"r 5 4 a 1000\nw 11 4 a 1004\nR 12 4 a c0003000\ni 15 2 a 2000\nr 17 4 a 1000\n";
static const char merged[] =
	"r 5 4 a 1000 0 - -\n"
	"w 11 4 a 1004 1 1 1\n"
	"R 12 4 a c0003000 2 1 1\n"
	"i 15 2 a 2000 3 1 2\n"
	"r 17 4 a 1000 1 - -\n";

static void put_task(GString *out, uint64_t id)
{
	if (id == LP_NO_TASK)
		g_string_append(out, " -");
	else
		g_string_append_printf(out, " %" G_GINT64_MODIFIER "x", id);
}

/* Every reference of an open capture, read n at a time, one line each:
 * type timestamp length vas address canonical pid tid (hex, "-" for
 * LP_NO_TASK); the last call's result in *last. */
static char *read_capture(lp_capture *c, size_t n, ssize_t *last)
{
	lp_merged_ref *refs = g_new(lp_merged_ref, n);
	GString *out = g_string_new(NULL);
	ssize_t got;
	while ((got = lp_capture_read(c, refs, n, &err)) > 0) {
		cr_assert_leq((size_t)got, n);
		for (ssize_t i = 0; i < got; i++) {
			const lp_merged_ref *m = &refs[i];
			g_string_append_printf(out, "%c %" G_GINT64_MODIFIER "x %x %" G_GINT64_MODIFIER "x %"
					       G_GINT64_MODIFIER "x %" G_GINT64_MODIFIER "x", m->type,
					       m->timestamp, m->length, m->vas, m->address, m->canonical);
			put_task(out, m->pid);
			put_task(out, m->tid);
			g_string_append_c(out, '\n');
		}
	}
	*last = got;
	g_free(refs);
	return g_string_free(out, FALSE);
}

static char *merge_all(const char *ref, const char *kern, const lp_capture_options *opt,
		       size_t n, lp_stats *stats)
{
	lp_capture *c = lp_capture_open(ref, kern, opt, &err);
	cr_assert_not_null(c, "%s", err.msg);
	ssize_t last;
	char *got = read_capture(c, n, &last);
	cr_assert_eq(last, 0, "%s", err.msg);
	if (stats)
		*stats = *lp_capture_stats(c);
	lp_capture_close(c);
	return got;
}

static void expect_stats(const lp_stats *st, const char *want)
{
	char *got = g_strdup_printf(
		"refs %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
		" %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "; S %" G_GUINT64_FORMAT " T %" G_GUINT64_FORMAT
		" X %" G_GUINT64_FORMAT "; private_anon %" G_GUINT64_FORMAT " kernel %" G_GUINT64_FORMAT
		"; unmapped %" G_GUINT64_FORMAT " orphan %" G_GUINT64_FORMAT " warnings %" G_GUINT64_FORMAT,
		st->refs[0], st->refs[1], st->refs[2], st->refs[3], st->refs[4], st->refs[5],
		st->events[LP_TAG_S], st->events[LP_TAG_T], st->events[LP_TAG_X],
		st->pages[LP_PAGE_PRIVATE_ANON], st->pages[LP_PAGE_KERNEL], st->unmapped_pages,
		st->orphan_spaces, st->warnings);
	cr_assert_str_eq(got, want);
	g_free(got);
}

Test(api, capture_with_default_options)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	cr_assert_eq(opt.ref_format, LP_REF_AUTO);
	cr_assert_eq(opt.endian, LP_LITTLE);
	cr_assert_eq(opt.page_offset, LP_PAGE_OFFSET_BY_WIDTH);
	cr_assert(!opt.user_only && !opt.strict && !opt.warn && !opt.warn_ctx);
	for (size_t n = 1; n <= 100; n *= 3) {
		lp_stats st;
		char *got = merge_all(ref, kern, NULL, n, &st);
		cr_assert_str_eq(got, merged, "NULL options, read %zu at a time", n);
		expect_stats(&st, "refs 2 1 1 1 0 0; S 2 T 1 X 1; private_anon 3 kernel 1; "
				  "unmapped 3 orphan 1 warnings 0");
		g_free(got);
		got = merge_all(ref, kern, &opt, n, NULL);
		cr_assert_str_eq(got, merged, "default options, read %zu at a time", n);
		g_free(got);
	}
	g_free(ref);
	g_free(kern);
}

Test(api, capture_user_only_and_page_offset)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	opt.user_only = true;
	lp_stats st;
	char *got = merge_all(ref, kern, &opt, 2, &st);
	cr_assert_str_eq(got, "r 5 4 a 1000 0 - -\n"
			      "w 11 4 a 1004 1 1 1\n"
			      "i 15 2 a 2000 3 1 2\n"
			      "r 17 4 a 1000 1 - -\n");
	expect_stats(&st, "refs 2 1 1 1 0 0; S 2 T 1 X 1; private_anon 3 kernel 1; "
			  "unmapped 3 orphan 1 warnings 0");
	g_free(got);
	/* Below the page offset, the kernel reference is to a page of task
	 * 1's address space. */
	lp_capture_options_init(&opt);
	opt.page_offset = 0xd0000000;
	got = merge_all(ref, kern, &opt, 2, &st);
	cr_assert_str_eq(got, merged);
	expect_stats(&st, "refs 2 1 1 1 0 0; S 2 T 1 X 1; private_anon 4 kernel 0; "
			  "unmapped 4 orphan 1 warnings 0");
	g_free(got);
	g_free(ref);
	g_free(kern);
}

/* A capture of a 64-bit machine (laplace-formats(5), section 10): vas
 * and address come whole, above 32 bits; the page offset is the direct
 * map's (ffff888000000000) unless one is given, when the kernel reference
 * below it is to a page of vas 123456789a. */
Test(api, capture_of_a_64_bit_machine)
{
	char *ref = text_file("r64.txt", "#laplace-ref 64\nr 5 8 123456789a 7fffffffeff8\n"
					 "R 6 8 123456789a ffff888000abc123\n"
					 "w 7 4 123456789a 7fffffffeffc\n");
	char *kern = text_file("k64.txt", "S 1 1 123456789a\n");
	static const char want[] = "r 5 8 123456789a 7fffffffeff8 0 1 1\n"
				   "R 6 8 123456789a ffff888000abc123 1 1 1\n"
				   "w 7 4 123456789a 7fffffffeffc 0 1 1\n";
	lp_stats st;
	char *got = merge_all(ref, kern, NULL, 2, &st);
	cr_assert_str_eq(got, want);
	cr_assert_eq(st.pages[LP_PAGE_KERNEL], 1);
	g_free(got);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	opt.page_offset = UINT64_C(0xffffffff80000000);
	got = merge_all(ref, kern, &opt, 2, &st);
	cr_assert_str_eq(got, want);
	cr_assert_eq(st.pages[LP_PAGE_KERNEL], 0);
	g_free(got);
	g_free(ref);
	g_free(kern);
}

/* The binary form of a raw reference in the given byte order. */
static void put_binary_ref(GByteArray *b, char type, uint64_t ts, uint8_t len, uint32_t vas,
			   uint32_t addr, bool big)
{
	guint8 rec[18];
	rec[0] = (guint8)type;
	for (int k = 0; k < 8; k++)
		rec[1 + k] = (guint8)(ts >> (8 * (big ? 7 - k : k)));
	rec[9] = len;
	for (int k = 0; k < 4; k++) {
		rec[10 + k] = (guint8)(vas >> (8 * (big ? 3 - k : k)));
		rec[14 + k] = (guint8)(addr >> (8 * (big ? 3 - k : k)));
	}
	g_byte_array_append(b, rec, 18);
}

static GByteArray *binary_references(bool big)
{
	GByteArray *b = g_byte_array_new();
	put_binary_ref(b, 'r', 0x5, 4, 0xa, 0x1000, big);
	put_binary_ref(b, 'w', 0x11, 4, 0xa, 0x1004, big);
	put_binary_ref(b, 'R', 0x12, 4, 0xa, 0xc0003000, big);
	put_binary_ref(b, 'i', 0x15, 2, 0xa, 0x2000, big);
	put_binary_ref(b, 'r', 0x17, 4, 0xa, 0x1000, big);
	return b;
}

Test(api, capture_binary_references_in_either_byte_order)
{
	char *kern = text_file("k.txt", kernel_trace);
	GByteArray *le = binary_references(false), *be = binary_references(true);
	GByteArray *zst = scratch_zstd(le->data, le->len);
	char *ref_le = file_with("r.bin.zst", zst->data, zst->len);
	char *ref_be = file_with("r.be", be->data, be->len);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	char *got = merge_all(ref_le, kern, &opt, 3, NULL);
	cr_assert_str_eq(got, merged);
	g_free(got);
	opt.endian = LP_BIG;
	opt.ref_format = LP_REF_BIN;
	got = merge_all(ref_be, kern, &opt, 3, NULL);
	cr_assert_str_eq(got, merged);
	g_free(got);
	g_free(ref_le);
	g_free(ref_be);
	g_free(kern);
	g_byte_array_free(le, TRUE);
	g_byte_array_free(be, TRUE);
	g_byte_array_free(zst, TRUE);
}

static void collect(void *ctx, const char *msg)
{
	g_string_append_printf(ctx, "%s\n", msg);
}

Test(api, capture_torn_record_warns_or_fails_when_strict)
{
	char *kern = text_file("k.txt", kernel_trace);
	GByteArray *b = binary_references(false);
	char *ref = file_with("r.bin", b->data, b->len - 13);
	GString *warnings = g_string_new(NULL);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	opt.warn = collect;
	opt.warn_ctx = warnings;
	lp_stats st;
	char *got = merge_all(ref, kern, &opt, 10, &st);
	cr_assert_str_eq(got, "r 5 4 a 1000 0 - -\n"
			      "w 11 4 a 1004 1 1 1\n"
			      "R 12 4 a c0003000 2 1 1\n"
			      "i 15 2 a 2000 3 1 2\n");
	char *want = g_strdup_printf("%s: torn last record: 5 bytes left over after 4 whole records\n",
				     ref);
	cr_assert_str_eq(warnings->str, want);
	cr_assert_eq(st.warnings, 1);
	g_free(got);

	g_string_truncate(warnings, 0);
	opt.strict = true;
	lp_capture *c = lp_capture_open(ref, kern, &opt, &err);
	lp_merged_ref refs[10];
	cr_assert_eq(lp_capture_read(c, refs, 10, &err), 4, "what was merged comes first");
	cr_assert_eq(lp_capture_read(c, refs, 10, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	want[strlen(want) - 1] = '\0';
	cr_assert_str_eq(err.msg, want);
	cr_assert_str_eq(warnings->str, "");
	lp_capture_close(c);
	g_free(want);
	g_free(ref);
	g_free(kern);
	g_byte_array_free(b, TRUE);
	g_string_free(warnings, TRUE);
}

Test(api, capture_read_after_the_end)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	lp_capture *c = lp_capture_open(ref, kern, NULL, &err);
	lp_merged_ref refs[8];
	cr_assert_eq(lp_capture_read(c, refs, 8, &err), 5);
	cr_assert_eq(lp_capture_read(c, refs, 8, &err), 0);
	cr_assert_eq(lp_capture_read(c, refs, 8, &err), 0);
	cr_assert_eq(err.status, LP_OK);
	cr_assert_eq(lp_capture_stats(c)->refs[0], 2);
	lp_capture_close(c);
	g_free(ref);
	g_free(kern);
}

Test(api, capture_missing_files)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	char *absent = g_build_filename(dir, "absent", NULL);
	char *want = g_strdup_printf("cannot open %s: No such file or directory", absent);
	cr_assert_null(lp_capture_open(absent, kern, NULL, &err));
	cr_assert_eq(err.status, LP_EIO);
	cr_assert_str_eq(err.msg, want);
	err = (lp_error){0};
	cr_assert_null(lp_capture_open(ref, absent, NULL, &err));
	cr_assert_eq(err.status, LP_EIO);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(absent);
	g_free(ref);
	g_free(kern);
}

Test(api, capture_null_arguments)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	cr_assert_null(lp_capture_open(NULL, kern, NULL, &err));
	expect_usage("lp_capture_open: argument ref: NULL");
	cr_assert_null(lp_capture_open(ref, NULL, NULL, &err));
	expect_usage("lp_capture_open: argument kern: NULL");
	cr_assert_null(lp_capture_open(NULL, NULL, NULL, &err));
	expect_usage("lp_capture_open: argument ref: NULL");
	cr_assert_null(lp_capture_open(NULL, NULL, NULL, NULL));
	lp_capture_options_init(NULL);
	lp_merged_ref refs[8];
	cr_assert_eq(lp_capture_read(NULL, refs, 8, &err), -1);
	expect_usage("lp_capture_read: argument c: NULL");
	cr_assert_eq(lp_capture_read(NULL, refs, 8, NULL), -1);
	cr_assert_null(lp_capture_stats(NULL));
	lp_capture *c = lp_capture_open(ref, kern, NULL, NULL);
	cr_assert_not_null(c);
	cr_assert_eq(lp_capture_read(c, NULL, 8, &err), -1);
	expect_usage("lp_capture_read: argument refs: NULL, with n 8");
	/* Nothing to store, so nothing merged; the capture is not failed. */
	cr_assert_eq(lp_capture_read(c, NULL, 0, &err), 0);
	cr_assert_eq(lp_capture_read(c, refs, 1, NULL), 1);
	cr_assert_eq(lp_capture_read(c, refs, 8, &err), 4);
	cr_assert_eq(err.status, LP_OK);
	cr_assert_eq(lp_capture_stats(c)->refs[0], 2);
	lp_capture_close(c);
	lp_capture_close(NULL);
	g_free(ref);
	g_free(kern);
}

Test(api, capture_failure_without_err)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", "S 10 1 a\nT 13 1\n");
	lp_capture *c = lp_capture_open(ref, kern, NULL, NULL);
	lp_merged_ref refs[8];
	cr_assert_eq(lp_capture_read(c, refs, 8, NULL), 1);
	cr_assert_eq(lp_capture_read(c, refs, 8, NULL), -1);
	cr_assert_eq(lp_capture_read(c, refs, 8, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	lp_capture_close(c);
	char *absent = g_build_filename(dir, "absent", NULL);
	cr_assert_null(lp_capture_open(absent, kern, NULL, NULL));
	cr_assert_null(lp_capture_open("-", "-", NULL, NULL));
	g_free(absent);
	g_free(ref);
	g_free(kern);
}

Test(api, capture_bad_options)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	cr_assert_null(lp_capture_open("-", "-", NULL, &err));
	cr_assert_eq(err.status, LP_EUSAGE);
	cr_assert_str_eq(err.msg, "the reference and kernel traces cannot both be standard input");
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	opt.ref_format = (enum lp_ref_format)7;
	cr_assert_null(lp_capture_open(ref, kern, &opt, &err));
	cr_assert_eq(err.status, LP_EUSAGE);
	cr_assert_str_eq(err.msg, "options: field ref_format: 7 is not LP_REF_AUTO, LP_REF_BIN "
				  "or LP_REF_TEXT");
	lp_capture_options_init(&opt);
	opt.endian = (enum lp_endian)-1;
	cr_assert_null(lp_capture_open(ref, kern, &opt, &err));
	cr_assert_eq(err.status, LP_EUSAGE);
	cr_assert_str_eq(err.msg, "options: field endian: -1 is not LP_LITTLE or LP_BIG");
	g_free(ref);
	g_free(kern);
}

/* The ABI (laplace.h): the options carry the caller's size, and a size
 * the library does not know is refused, never read past; the statistics
 * carry the library's. */
Test(api, capture_options_size)
{
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	char *want = g_strdup_printf("options: field size: %%zu is not the size of an lp_capture_options "
				     "(%zu bytes): not set up by lp_capture_options_init, or from a "
				     "newer laplace.h than this library's (%d.%d.%d)",
				     sizeof(lp_capture_options), LP_VERSION_MAJOR, LP_VERSION_MINOR,
				     LP_VERSION_PATCH);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	cr_assert_eq(opt.size, sizeof opt);
	size_t bad_sizes[] = {sizeof opt.size, sizeof opt - 1, sizeof opt + 8};
	for (size_t i = 0; i < G_N_ELEMENTS(bad_sizes); i++) {
		/* Set up for another layout: only the size is written. */
		memset(&opt, 0xa5, sizeof opt);
		lp_capture_options_init_sized(&opt, bad_sizes[i]);
		cr_assert_eq(opt.size, bad_sizes[i]);
		cr_assert_eq(opt.page_offset, 0xa5a5a5a5a5a5a5a5u);
		cr_assert_null(lp_capture_open(ref, kern, &opt, &err));
		cr_assert_eq(err.status, LP_EUSAGE);
		char *msg = g_strdup_printf(want, bad_sizes[i]);
		cr_assert_str_eq(err.msg, msg);
		g_free(msg);
		err = (lp_error){0};
	}
	/* Too small to hold even the size: nothing is written. */
	memset(&opt, 0xa5, sizeof opt);
	lp_capture_options_init_sized(&opt, 0);
	lp_capture_options_init_sized(&opt, sizeof opt.size - 1);
	cr_assert_eq(opt.size, (size_t)0xa5a5a5a5a5a5a5a5u);
	/* Options never set up: size 0. */
	opt = (lp_capture_options){0};
	cr_assert_null(lp_capture_open(ref, kern, &opt, &err));
	char *msg = g_strdup_printf(want, (size_t)0);
	cr_assert_str_eq(err.msg, msg);
	g_free(msg);
	err = (lp_error){0};
	lp_capture_options_init(&opt);
	lp_capture *c = lp_capture_open(ref, kern, &opt, &err);
	cr_assert_not_null(c);
	cr_assert_eq(lp_capture_stats(c)->size, sizeof(lp_stats));
	lp_capture_close(c);
	g_free(want);
	g_free(ref);
	g_free(kern);
}

Test(api, version)
{
	cr_assert_eq(lp_version(), LP_VERSION_NUMBER);
	cr_assert_eq(LP_VERSION_NUMBER, LP_VERSION_MAJOR * 10000 + LP_VERSION_MINOR * 100 +
					    LP_VERSION_PATCH);
	char *version = g_strdup_printf("%d.%d.%d", LP_VERSION_MAJOR, LP_VERSION_MINOR,
					LP_VERSION_PATCH);
	cr_assert_str_eq(version, LP_VERSION);
	g_free(version);
}

/* The names list every format lp_capture_open takes, and only those. */
Test(api, ref_format_names)
{
	cr_assert_str_eq(lp_ref_format_name(LP_REF_AUTO), "auto");
	cr_assert_str_eq(lp_ref_format_name(LP_REF_BIN), "bin");
	cr_assert_str_eq(lp_ref_format_name(LP_REF_TEXT), "text");
	cr_assert_null(lp_ref_format_name(-1));
	int n = 0;
	while (lp_ref_format_name(n))
		n++;
	char *ref = text_file("r.txt", reference_trace);
	char *kern = text_file("k.txt", kernel_trace);
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	for (int format = 0; format <= n; format++) {
		opt.ref_format = (enum lp_ref_format)format;
		lp_capture *c = lp_capture_open(ref, kern, &opt, &err);
		if (format < n) {
			cr_assert_not_null(c, "%s: %s", lp_ref_format_name(format), err.msg);
		} else {
			cr_assert_null(c);
			cr_assert_eq(err.status, LP_EUSAGE);
		}
		lp_capture_close(c);
	}
	g_free(ref);
	g_free(kern);
}

/* Open ref and kern, read 8 at a time: the references merged before the
 * error, then the error (fmt names the reference trace, or the kernel
 * trace when in_kernel), repeated by a read after it. */
static void expect_capture_error(const char *ref_text, const char *kern_text, const char *before,
				 bool in_kernel, const char *fmt)
{
	char *ref = text_file("r.txt", ref_text);
	char *kern = text_file("k.txt", kern_text);
	lp_capture *c = lp_capture_open(ref, kern, NULL, &err);
	cr_assert_not_null(c, "%s", err.msg);
	ssize_t last;
	char *got = read_capture(c, 8, &last);
	cr_assert_eq(last, -1);
	cr_assert_str_eq(got, before);
	cr_assert_eq(err.status, LP_EINPUT);
	char *want = g_strdup_printf(fmt, in_kernel ? kern : ref);
	cr_assert_str_eq(err.msg, want);
	err = (lp_error){0};
	lp_merged_ref refs[8];
	cr_assert_eq(lp_capture_read(c, refs, 8, &err), -1, "read after an error");
	cr_assert_str_eq(err.msg, want);
	lp_capture_close(c);
	g_free(want);
	g_free(got);
	g_free(ref);
	g_free(kern);
}

Test(api, capture_bad_input)
{
	/* The references before the bad line's event are merged first. */
	expect_capture_error(reference_trace, "S 10 1 a\nT 13 1 2\nS 14 2 a q\n",
			     "r 5 4 a 1000 0 - -\nw 11 4 a 1004 1 1 1\nR 12 4 a c0003000 2 1 1\n", true,
			     "%s:3: tag S: extra field 'q'");
	expect_capture_error(reference_trace, "S 10 1 a\nT 13 1\n", "r 5 4 a 1000 0 - -\n", true,
			     "%s:2: tag T: missing field child");
	/* A batch of references is checked whole when it is read. */
	expect_capture_error("r 5 4 a 1000\nw 11 4 a 1004\nr 10 4 a 1000\n", kernel_trace, "", false,
			     "%s:3: field timestamp: 10 is earlier than the previous reference's 11");
	expect_capture_error("r 5 4 a 1000\nw 11 4 a 100g\n", kernel_trace, "", false,
			     "%s:2: field address: bad hex number '100g'");
}
