/* The capture generator: determinism, the shape of what it writes, and
 * that the merge places every reference it makes. */
#include <criterion/criterion.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gen/gen.h"
#include "pipeline/job.h"

static char *dir;

static void setup(void) { dir = g_dir_make_tmp("test-gen-XXXXXX", NULL); }

static void teardown(void)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL);
		g_unlink(path);
		g_free(path);
	}
	g_dir_close(d);
	g_rmdir(dir);
	g_free(dir);
}

TestSuite(gen, .init = setup, .fini = teardown);

/* Generate into DIR/name.ref and DIR/name.kern (either skipped when its
 * flag is false); returns the paths through ref and kern. */
static void generate(const lp_gen_config *cfg, const char *name, bool with_refs, bool with_kern,
		     char **ref, char **kern)
{
	lp_error err = {0};
	*ref = g_strdup_printf("%s/%s.ref", dir, name);
	*kern = g_strdup_printf("%s/%s.kern", dir, name);
	lp_output *r = with_refs ? lp_output_open(*ref, LP_COMPRESS_NONE, &err) : NULL;
	lp_output *k = with_kern ? lp_output_open(*kern, LP_COMPRESS_NONE, &err) : NULL;
	cr_assert_eq(lp_gen_run(cfg, r, k, NULL, NULL, &err), 0, "%s", err.msg);
	if (r)
		cr_assert_eq(lp_output_commit(r, &err), 0, "%s", err.msg);
	if (k)
		cr_assert_eq(lp_output_commit(k, &err), 0, "%s", err.msg);
}

static GBytes *slurp(const char *path)
{
	gchar *data;
	gsize len;
	cr_assert(g_file_get_contents(path, &data, &len, NULL), "cannot read %s", path);
	return g_bytes_new_take(data, len);
}

static bool same_file(const char *a, const char *b)
{
	GBytes *x = slurp(a), *y = slurp(b);
	bool same = g_bytes_equal(x, y);
	g_bytes_unref(x);
	g_bytes_unref(y);
	return same;
}

static lp_gen_config small(uint64_t seed)
{
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	cfg.seed = seed;
	cfg.refs = 200000;
	return cfg;
}

Test(gen, defaults)
{
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	cr_assert_eq(cfg.seed, 1);
	cr_assert_eq(cfg.refs, 1000000);
	cr_assert_eq(cfg.processes, 4);
	cr_assert_eq(cfg.threads, 4);
	cr_assert_eq(cfg.files, 64);
}

Test(gen, same_seed_same_bytes)
{
	lp_gen_config cfg = small(7);
	char *r1, *k1, *r2, *k2;
	generate(&cfg, "a", true, true, &r1, &k1);
	generate(&cfg, "b", true, true, &r2, &k2);
	cr_assert(same_file(r1, r2));
	cr_assert(same_file(k1, k2));
	g_free(r1), g_free(k1), g_free(r2), g_free(k2);
}

Test(gen, other_seed_other_bytes)
{
	lp_gen_config a = small(7), b = small(8);
	char *r1, *k1, *r2, *k2;
	generate(&a, "a", true, true, &r1, &k1);
	generate(&b, "b", true, true, &r2, &k2);
	cr_assert(!same_file(r1, r2));
	cr_assert(!same_file(k1, k2));
	g_free(r1), g_free(k1), g_free(r2), g_free(k2);
}

/* Each trace written alone is the same as when both are written: what the
 * piping mode (kernel trace first, then references) relies on. */
Test(gen, traces_written_alone_are_the_same)
{
	lp_gen_config cfg = small(3);
	char *r1, *k1, *r2, *k2, *r3, *k3;
	generate(&cfg, "both", true, true, &r1, &k1);
	generate(&cfg, "kern", false, true, &r2, &k2);
	generate(&cfg, "refs", true, false, &r3, &k3);
	cr_assert(same_file(k1, k2));
	cr_assert(same_file(r1, r3));
	g_free(r1), g_free(k1), g_free(r2), g_free(k2), g_free(r3), g_free(k3);
}

Test(gen, exact_reference_count_and_ordered_timestamps)
{
	lp_gen_config cfg = small(5);
	cfg.refs = 123457;
	char *r, *k;
	generate(&cfg, "c", true, true, &r, &k);
	GBytes *refs = slurp(r);
	gsize len;
	const unsigned char *p = g_bytes_get_data(refs, &len);
	cr_assert_eq(len, 123457u * 18);
	uint64_t last = 0;
	for (gsize i = 0; i < len; i += 18) {
		uint64_t ts = 0;
		for (int b = 7; b >= 0; b--)
			ts = ts << 8 | p[i + 1 + b];
		cr_assert(ts >= last, "record %zu goes back in time", i / 18);
		cr_assert(strchr("rwiRWI", p[i]) && p[i], "record %zu has type %02x", i / 18, p[i]);
		last = ts;
	}
	g_bytes_unref(refs);

	gchar *text;
	cr_assert(g_file_get_contents(k, &text, NULL, NULL));
	gchar **lines = g_strsplit(text, "\n", -1);
	last = 0;
	for (int i = 0; lines[i] && *lines[i]; i++) {
		uint64_t ts = g_ascii_strtoull(lines[i] + 2, NULL, 16);
		cr_assert(ts >= last, "kernel line %d goes back in time", i + 1);
		last = ts;
	}
	g_strfreev(lines);
	g_free(text);
	g_free(r), g_free(k);
}

Test(gen, no_references_no_events)
{
	lp_gen_config cfg = small(1);
	cfg.refs = 0;
	char *r, *k;
	generate(&cfg, "empty", true, true, &r, &k);
	GBytes *a = slurp(r), *b = slurp(k);
	cr_assert_eq(g_bytes_get_size(a), 0);
	cr_assert_eq(g_bytes_get_size(b), 0);
	g_bytes_unref(a), g_bytes_unref(b);
	g_free(r), g_free(k);
}

/* At default settings every event tag occurs, and the merge places every
 * reference: no unmapped page, no orphan space, no mismatch, no warning. */
Test(gen, default_capture_has_every_tag_and_merges_clean)
{
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	char *r, *k;
	generate(&cfg, "default", true, true, &r, &k);
	lp_merge_job job;
	lp_merge_job_init(&job);
	job.reference = r;
	job.kernel = k;
	job.output = "/dev/null";
	lp_stats st;
	lp_error err = {0};
	cr_assert_eq(lp_merge_job_run(&job, &st, &err), 0, "%s", err.msg);
	for (int t = 0; t < LP_TAG_COUNT; t++)
		cr_expect(st.events[t] > 0, "no %c event", lp_tag_chars[t]);
	for (int i = 0; i < 6; i++)
		cr_expect(st.refs[i] > 0, "no %c reference", lp_ref_types[i]);
	cr_assert_eq(lp_stats_total_refs(&st), cfg.refs);
	for (int kind = 0; kind < LP_PAGE_KIND_COUNT; kind++)
		cr_expect(st.pages[kind] > 0, "no %s page", lp_page_kind_names[kind]);
	cr_expect(st.cow_copies > 0);
	cr_assert_eq(st.unmapped_pages, 0);
	cr_assert_eq(st.orphan_spaces, 0);
	cr_assert_eq(st.mismatches, 0);
	cr_assert_eq(st.warnings, 0);
	g_free(r), g_free(k);
}

/* Many processes and threads, few files: still clean. */
Test(gen, crowded_capture_merges_clean)
{
	lp_gen_config cfg = small(11);
	cfg.processes = 64;
	cfg.threads = 16;
	cfg.files = 1;
	cfg.refs = 3000000;
	char *r, *k;
	generate(&cfg, "crowded", true, true, &r, &k);
	lp_merge_job job;
	lp_merge_job_init(&job);
	job.reference = r;
	job.kernel = k;
	job.output = "/dev/null";
	lp_stats st;
	lp_error err = {0};
	cr_assert_eq(lp_merge_job_run(&job, &st, &err), 0, "%s", err.msg);
	cr_assert(st.events[LP_TAG_T] > 0);
	cr_assert_eq(st.unmapped_pages, 0);
	cr_assert_eq(st.orphan_spaces, 0);
	cr_assert_eq(st.mismatches, 0);
	cr_assert_eq(st.warnings, 0);
	g_free(r), g_free(k);
}

Test(gen, settings_out_of_range)
{
	static const struct {
		unsigned processes, threads, files;
		const char *msg;
	} cases[] = {
		{0, 4, 64, "processes must be between 1 and 64, not 0"},
		{65, 4, 64, "processes must be between 1 and 64, not 65"},
		{4, 0, 64, "threads must be between 1 and 16, not 0"},
		{4, 17, 64, "threads must be between 1 and 16, not 17"},
		{4, 4, 0, "files must be between 1 and 4096, not 0"},
		{4, 4, 4097, "files must be between 1 and 4096, not 4097"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		lp_gen_config cfg = small(1);
		cfg.processes = cases[i].processes;
		cfg.threads = cases[i].threads;
		cfg.files = cases[i].files;
		lp_error err = {0};
		cr_assert_eq(lp_gen_config_check(&cfg, &err), LP_EUSAGE);
		cr_assert_str_eq(err.msg, cases[i].msg);
		err = (lp_error){0};
		cr_assert_eq(lp_gen_run(&cfg, NULL, NULL, NULL, NULL, &err), LP_EUSAGE);
		cr_assert_str_eq(err.msg, cases[i].msg);
	}
}

static void count_calls(void *ctx, const lp_progress_info *info)
{
	uint64_t *last = ctx;
	cr_assert(info->records >= last[0] && info->events >= last[1]);
	cr_assert_float_eq(info->fraction, (double)info->records / 200000, 1e-9);
	last[0] = info->records;
	last[1] = info->events;
	last[2]++;
}

Test(gen, progress_reports_grow_to_the_total)
{
	lp_gen_config cfg = small(2);
	uint64_t seen[3] = {0};
	lp_error err = {0};
	cr_assert_eq(lp_gen_run(&cfg, NULL, NULL, count_calls, seen, &err), 0);
	cr_assert_eq(seen[0], cfg.refs);
	cr_assert(seen[1] > 0);
	cr_assert(seen[2] > 1);
}
