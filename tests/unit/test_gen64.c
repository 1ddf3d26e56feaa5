/* Captures of a 64-bit machine (laplace gen --wide) through the merge core.
 * The references are decoded here from the 64-bit binary form's 26-byte
 * records (laplace-formats(5) 10.1) and fed with the kernel events to the
 * core in merged order (3.1: an event first at the same timestamp), with
 * the page offset of a 64-bit capture, ffff888000000000 (10.2). */
#include <criterion/criterion.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/merge.h"
#include "formats/kern.h"
#include "formats/refio.h"
#include "gen/gen.h"
#include "pipeline/job.h"

static char *dir;

static void setup(void) { dir = g_dir_make_tmp("test-gen64-XXXXXX", NULL); }

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

TestSuite(gen64, .init = setup, .fini = teardown);

/* Generate DIR/name.ref and DIR/name.kern; the paths through ref, kern. */
static void generate(const lp_gen_config *cfg, const char *name, char **ref, char **kern)
{
	lp_error err = {0};
	*ref = g_strdup_printf("%s/%s.ref", dir, name);
	*kern = g_strdup_printf("%s/%s.kern", dir, name);
	lp_output *r = lp_output_open(*ref, LP_COMPRESS_NONE, &err);
	lp_output *k = lp_output_open(*kern, LP_COMPRESS_NONE, &err);
	cr_assert(r && k, "%s", err.msg);
	cr_assert_eq(lp_gen_run(cfg, r, k, NULL, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_output_commit(r, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_output_commit(k, &err), 0, "%s", err.msg);
}

/* The references of a 64-bit binary trace, its header checked. */
static lp_ref *read_wide(const char *path, size_t *n)
{
	gchar *data;
	gsize len;
	cr_assert(g_file_get_contents(path, &data, &len, NULL), "cannot read %s", path);
	cr_assert_geq(len, LP_REF64_HEADER_SIZE);
	cr_assert_eq(memcmp(data, LP_REF64_HEADER, LP_REF64_HEADER_SIZE), 0, "no LPREF64 header");
	cr_assert_eq((len - LP_REF64_HEADER_SIZE) % LP_REF64_RECORD_SIZE, 0, "a torn record");
	*n = (len - LP_REF64_HEADER_SIZE) / LP_REF64_RECORD_SIZE;
	lp_ref *refs = g_new(lp_ref, *n);
	for (size_t i = 0; i < *n; i++) {
		const unsigned char *p =
			(const unsigned char *)data + LP_REF64_HEADER_SIZE + i * LP_REF64_RECORD_SIZE;
		refs[i] = (lp_ref){.type = (char)p[0], .timestamp = lp_load_u64(p + 1, false),
				   .length = p[9], .vas = lp_load_u64(p + 10, false),
				   .address = lp_load_u64(p + 18, false)};
	}
	g_free(data);
	return refs;
}

/* Merge a wide capture in the core; its canonical numbers (one for each of
 * the *n references) and statistics. */
static uint64_t *merge_wide(const char *ref, const char *kern, size_t *n, lp_stats *st)
{
	lp_ref *refs = read_wide(ref, n);
	uint64_t *canon = g_new(uint64_t, *n);
	lp_error err = {0};
	lp_event_source *events = lp_kern_reader_open(kern, &err);
	cr_assert(events, "%s", err.msg);
	lp_merge *m = lp_merge_new(&(lp_merge_config){.page_offset = UINT64_C(0xffff888000000000)});
	lp_event ev;
	int more;
	size_t i = 0;
	while ((more = lp_event_source_next(events, &ev, &err)) > 0) {
		size_t j = i;
		while (j < *n && refs[j].timestamp < ev.timestamp)
			j++;
		cr_assert_eq(lp_merge_refs(m, refs + i, j - i, canon + i, &err), 0, "%s", err.msg);
		i = j;
		cr_assert_eq(lp_merge_event(m, &ev, NULL, &err), 0, "line %" PRIu64 ": %s", ev.line_no,
			     err.msg);
	}
	cr_assert_eq(more, 0, "%s", err.msg);
	cr_assert_eq(lp_merge_refs(m, refs + i, *n - i, canon + i, &err), 0, "%s", err.msg);
	*st = *lp_merge_stats(m);
	lp_merge_free(m);
	lp_event_source_close(events);
	g_free(refs);
	return canon;
}

static void assert_clean(const lp_stats *st)
{
	cr_assert_eq(st->unmapped_pages, 0);
	cr_assert_eq(st->orphan_spaces, 0);
	cr_assert_eq(st->mismatches, 0);
	cr_assert_eq(st->warnings, 0);
}

/* Without a footprint, the wide capture is the narrow one's workload in
 * another layout: the same canonical numbers, every tag, nothing unmapped. */
Test(gen64, the_narrow_capture_in_a_64_bit_layout)
{
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	char *nref, *nkern, *wref, *wkern;
	generate(&cfg, "narrow", &nref, &nkern);
	cfg.wide = true;
	generate(&cfg, "wide", &wref, &wkern);

	lp_merge_job job;
	lp_merge_job_init(&job);
	job.reference = nref;
	job.kernel = nkern;
	char *basic = g_strdup_printf("%s/narrow.basic", dir);
	job.output = basic;
	lp_stats nst, wst;
	lp_error err = {0};
	cr_assert_eq(lp_merge_job_run(&job, &nst, &err), 0, "%s", err.msg);

	size_t n;
	uint64_t *canon = merge_wide(wref, wkern, &n, &wst);
	cr_assert_eq(n, cfg.refs);
	FILE *f = fopen(basic, "r");
	cr_assert(f);
	char type;
	uint64_t want;
	size_t i = 0;
	while (fscanf(f, " %c %" SCNx64, &type, &want) == 2) {
		cr_assert_lt(i, n);
		cr_assert_eq(canon[i], want, "reference %zu: %" PRIx64 ", not %" PRIx64, i, canon[i], want);
		i++;
	}
	fclose(f);
	cr_assert_eq(i, n);
	for (int t = 0; t < LP_TAG_COUNT; t++)
		cr_expect(wst.events[t] > 0, "no %c event", lp_tag_chars[t]);
	for (int kind = 0; kind < LP_PAGE_KIND_COUNT; kind++)
		cr_assert_eq(wst.pages[kind], nst.pages[kind], "%s pages", lp_page_kind_names[kind]);
	assert_clean(&wst);
	g_free(canon);
	g_free(basic);
	g_free(nref), g_free(nkern), g_free(wref), g_free(wkern);
}

/* A footprint of runs spread over the 47-bit user space: the references
 * reach many 4 GiB blocks, all above 4 GiB and below 2^47 or in the
 * kernel's half, and merge clean. */
Test(gen64, a_footprint_spread_over_the_user_space)
{
	lp_gen_config cfg;
	lp_gen_config_init(&cfg);
	cfg.wide = true;
	cfg.refs = 2000000;
	cfg.processes = 4;
	cfg.footprint = 40000; /* 10000 pages a program: three runs */
	char *ref, *kern;
	generate(&cfg, "fp", &ref, &kern);
	size_t n;
	lp_stats st;
	uint64_t *canon = merge_wide(ref, kern, &n, &st);
	assert_clean(&st);
	cr_assert_gt(st.pages[LP_PAGE_PRIVATE_ANON], 20000);

	lp_ref *refs = read_wide(ref, &n);
	GHashTable *blocks = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = refs[i].address;
		if (refs[i].type < 'a')
			continue; /* kernel */
		cr_assert(a >= 0x100000000 && a < 0x800000000000, "reference %zu at %" PRIx64, i, a);
		g_hash_table_add(blocks, GSIZE_TO_POINTER(a >> 32));
	}
	/* Text and heap, libraries and stack, and three runs a program. */
	cr_assert_gt(g_hash_table_size(blocks), 12, "only %u blocks", g_hash_table_size(blocks));
	g_hash_table_destroy(blocks);
	g_free(refs);
	g_free(canon);
	g_free(ref), g_free(kern);
}
