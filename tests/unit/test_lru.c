/* LRU logic: behaviour sequences of a stream (hand-checked), the rules of
 * page-image traces, and re-reduction and reference streams checked
 * against traces built directly by a naive LRU stack simulation. */
#include <criterion/criterion.h>
#include <string.h>

#include <glib.h>

#include "analysis/lru.h"
#include "scratch.h"

/* ---- section 4: behaviour sequence of a stream ---- */

/* Feed "type page" pairs, collect the faults as text lines. */
static char *run_lru(uint64_t frames, const char *types, const uint64_t *pages)
{
	lp_lru *l = lp_lru_new(frames);
	GString *s = g_string_new(NULL);
	for (size_t i = 0; types[i]; i++) {
		lp_lru_fault f;
		if (lp_lru_ref(l, pages[i], lp_ref_is_write(types[i]), &f)) {
			char line[LP_BEHAVIOUR_LINE_MAX];
			g_string_append_len(s, line,
					    (gssize)lp_behaviour_format(line, f.tag, f.page, f.dirt,
									f.evicted));
		}
	}
	lp_lru_free(l);
	return g_string_free(s, FALSE);
}

Test(lru, hand_checked_two_frames)
{
	/* M = 2: a(r) b(w) a(r) c(r): evicts b, written -> W;
	 * b(r): evicts a (never written) -> R, b seen before -> F;
	 * c(W) hit, a kernel write; b(r) hit, so c is the LRU page;
	 * a(r): evicts c, dirty -> W */
	const char *types = "rwrrrWrr";
	const uint64_t pages[] = {0xa, 0xb, 0xa, 0xc, 0xb, 0xc, 0xb, 0xa};
	char *out = run_lru(2, types, pages);
	cr_assert_str_eq(out, "C a N 0\n"
			      "C b N 0\n"
			      "C c W b\n"
			      "F b R a\n"
			      "F a W c\n");
	g_free(out);
}

Test(lru, dirtiness_is_per_stay)
{
	/* M = 1: a written, evicted W; fetched again and only read: R */
	const char *types = "wrrr";
	const uint64_t pages[] = {1, 2, 1, 2};
	char *out = run_lru(1, types, pages);
	cr_assert_str_eq(out, "C 1 N 0\nC 2 W 1\nF 1 R 2\nF 2 R 1\n");
	g_free(out);
}

Test(lru, sixty_four_bit_pages)
{
	const char *types = "rir";
	const uint64_t pages[] = {UINT64_MAX, 0, UINT64_MAX};
	char *out = run_lru(1, types, pages);
	cr_assert_str_eq(out, "C ffffffffffffffff N 0\nC 0 R ffffffffffffffff\n"
			      "F ffffffffffffffff R 0\n");
	g_free(out);
}

Test(lru, many_pages_grow_the_table)
{
	lp_lru *l = lp_lru_new(3000);
	lp_lru_fault f;
	for (uint64_t p = 0; p < 5000; p++)
		cr_assert(lp_lru_ref(l, p * 4096, false, &f));
	/* 5000 distinct pages through 3000 frames: the last evicted 1999 */
	cr_assert_eq(f.dirt, 'R');
	cr_assert_eq(f.evicted, 1999 * 4096);
	cr_assert(!lp_lru_ref(l, 4999 * 4096, true, &f)); /* still resident */
	cr_assert(lp_lru_ref(l, 0, false, &f));
	cr_assert_eq(f.tag, 'F');
	cr_assert_eq(f.evicted, 2000 * 4096);
	lp_lru_free(l);
}

/* ---- page-image rules ---- */

static GString *problems;
static void collect(void *ctx, const char *msg)
{
	(void)ctx;
	g_string_append_printf(problems, "%s\n", msg);
}

static lp_pi_record pr(char tag, uint16_t page, char dirt, uint16_t evicted)
{
	return (lp_pi_record){.tag = tag, .fetched = page, .dirt = dirt, .evicted = evicted};
}

Test(lru, check_rules_each_reported)
{
	problems = g_string_new(NULL);
	lp_pi_check *c = lp_pi_check_new();
	const lp_pi_record recs[] = {
		pr('C', 1, 'N', 0), pr('C', 2, 'N', 0),
		pr('C', 1, 'R', 2),  /* 1 fetched before, and resident */
		pr('F', 3, 'W', 2),  /* 3 never fetched; 2 not resident any more */
		pr('C', 4, 'N', 0),  /* N after an eviction */
		pr('F', 2, 'R', 1),  /* fine: 2 was fetched, 1 is resident */
	};
	unsigned expect[] = {0, 0, 2, 2, 1, 0};
	for (size_t i = 0; i < G_N_ELEMENTS(recs); i++)
		cr_assert_eq(lp_pi_check_record(c, &recs[i], LP_PI_ALL_KNOWN, collect, NULL), expect[i],
			     "record %zu", i);
	cr_assert_str_eq(problems->str,
			 "field tag: C on page 1, which was fetched before\n"
			 "field fetched page: page 1 is resident already\n"
			 "field tag: F on page 3, which was never fetched\n"
			 "field evicted page: page 2 is not resident\n"
			 "field dirt: N after the first eviction\n");
	cr_assert_eq(lp_pi_check_fills(c), 2);
	cr_assert(lp_pi_check_evicted(c));
	lp_pi_check_free(c);
	g_string_free(problems, TRUE);
}

Test(lru, check_n_with_an_evicted_page)
{
	problems = g_string_new(NULL);
	lp_pi_check *c = lp_pi_check_new();
	cr_assert_eq(lp_pi_check_record(c, &(lp_pi_record){.tag = 'C', .fetched = 1, .dirt = 'N',
							   .evicted = 5},
					LP_PI_ALL_KNOWN, collect, NULL), 1);
	cr_assert_str_eq(problems->str, "field evicted page: N with evicted page 5, not 0000\n");
	cr_assert_eq(lp_pi_check_fills(c), 1);
	lp_pi_check_free(c);
	g_string_free(problems, TRUE);
}

/* Fields that could not be read are neither checked nor applied; the
 * rules of the others still are. */
Test(lru, check_only_known_fields)
{
	problems = g_string_new(NULL);
	lp_pi_check *c = lp_pi_check_new();
	const struct {
		lp_pi_record rec;
		unsigned known;
		unsigned broken;
	} steps[] = {
		{pr('C', 1, 'N', 0), LP_PI_ALL_KNOWN, 0},
		/* a damaged tag: no C or F rule, but 2 is fetched */
		{pr('F', 2, 'N', 0), LP_PI_FETCHED_KNOWN | LP_PI_EVICTED_KNOWN, 0},
		{pr('F', 2, 'R', 1), LP_PI_ALL_KNOWN, 1},     /* 2 is resident */
		/* a damaged fetched page: not applied, its evicted page is */
		{pr('C', 1, 'W', 1), LP_PI_TAG_KNOWN | LP_PI_EVICTED_KNOWN, 1}, /* 1 went already */
		{pr('C', 3, 'R', 9), LP_PI_TAG_KNOWN | LP_PI_FETCHED_KNOWN, 0},
		{pr('C', 4, 'N', 7), LP_PI_TAG_KNOWN, 1},     /* N after an eviction */
	};
	for (size_t i = 0; i < G_N_ELEMENTS(steps); i++)
		cr_assert_eq(lp_pi_check_record(c, &steps[i].rec, steps[i].known, collect, NULL),
			     steps[i].broken, "record %zu", i);
	cr_assert_str_eq(problems->str,
			 "field fetched page: page 2 is resident already\n"
			 "field evicted page: page 1 is not resident\n"
			 "field dirt: N after the first eviction\n");
	cr_assert_eq(lp_pi_check_fills(c), 2);
	lp_pi_check_free(c);
	g_string_free(problems, TRUE);
}

/* ---- traces built directly, by a naive LRU stack ---- */

#define NPAGES 12

typedef struct built {
	lp_pi_record *recs;
	unsigned char (*fimg)[LP_PAGE_BYTES];
	unsigned char (*eimg)[LP_PAGE_BYTES];
	size_t n;
} built;

/* Distinct for every (page, version): both are spelled out at the start. */
static void image(unsigned char *dst, unsigned page, unsigned version)
{
	memset(dst, (int)(page * 31 + version * 7), LP_PAGE_BYTES);
	memcpy(dst, &page, sizeof page);
	memcpy(dst + sizeof page, &version, sizeof version);
}

/* The page-image trace of an M-page LRU memory on refs; page contents
 * change with every write, images are the contents at fetch (before the
 * write) and at eviction. */
/* Images go to pool (room for 2 * nrefs of them), or nowhere when NULL;
 * reusing one pool keeps the test from spending its time faulting in
 * fresh memory. */
static built build(const uint16_t *page, const bool *write, size_t nrefs, unsigned frames,
		   unsigned char (*pool)[LP_PAGE_BYTES])
{
	built b = {g_new0(lp_pi_record, nrefs), pool, pool ? pool + nrefs : NULL, 0};
	bool images = pool != NULL;
	uint16_t stack[NPAGES];
	bool dirty[NPAGES];
	unsigned depth = 0, version[NPAGES] = {0};
	bool seen[NPAGES] = {false};
	for (size_t t = 0; t < nrefs; t++) {
		uint16_t p = page[t];
		unsigned pos = 0;
		while (pos < depth && stack[pos] != p)
			pos++;
		bool d = write[t];
		if (pos == depth) {
			lp_pi_record *r = &b.recs[b.n];
			r->tag = seen[p] ? 'F' : 'C';
			r->fetched = p;
			if (images) {
				image(b.fimg[b.n], p, version[p]);
				r->fetched_image = b.fimg[b.n];
			}
			if (depth < frames) {
				r->dirt = 'N';
				depth++;
			} else {
				uint16_t v = stack[depth - 1];
				r->dirt = dirty[depth - 1] ? 'W' : 'R';
				r->evicted = v;
				if (images) {
					image(b.eimg[b.n], v, version[v]);
					r->evicted_image = b.eimg[b.n];
				}
				pos = depth - 1;
			}
			b.n++;
			seen[p] = true;
		} else {
			d = d || dirty[pos];
		}
		memmove(stack + 1, stack, pos * sizeof *stack);
		memmove(dirty + 1, dirty, pos * sizeof *dirty);
		stack[0] = p;
		dirty[0] = d;
		if (write[t])
			version[p]++;
	}
	return b;
}

static void built_free(built *b) { g_free(b->recs); }

/* A skewed stream: a few hot pages, a cold tail, some writes. */
static void random_refs(GRand *rng, uint16_t *page, bool *write, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		page[i] = (uint16_t)(g_rand_boolean(rng) ? g_rand_int_range(rng, 0, 4)
							 : g_rand_int_range(rng, 0, NPAGES));
		page[i] = (uint16_t)(page[i] * 0x111); /* spread the page numbers */
		write[i] = g_rand_int_range(rng, 0, 5) == 0;
	}
}

/* build() indexes its arrays by page: map the spread numbers back */
static void compact(uint16_t *page, size_t n)
{
	for (size_t i = 0; i < n; i++)
		page[i] = (uint16_t)(page[i] / 0x111);
}

#define NREFS 1000

Test(lru, reduce_matches_direct_traces)
{
	GRand *rng = g_rand_new_with_seed(42);
	unsigned char (*small_pool)[LP_PAGE_BYTES] = g_malloc(2 * NREFS * LP_PAGE_BYTES);
	unsigned char (*big_pool)[LP_PAGE_BYTES] = g_malloc(2 * NREFS * LP_PAGE_BYTES);
	uint16_t page[NREFS];
	bool write[NREFS];
	for (int round = 0; round < 2; round++) {
		random_refs(rng, page, write, NREFS);
		compact(page, NREFS);
		for (unsigned m = 1; m <= 5; m++) {
			built small = build(page, write, NREFS, m, small_pool);
			for (unsigned m2 = m; m2 <= m + 7; m2++) {
				built big = build(page, write, NREFS, m2, big_pool);
				lp_pi_reduce *red = lp_pi_reduce_new(m2);
				size_t k = 0;
				for (size_t i = 0; i < small.n; i++) {
					lp_pi_record out;
					lp_error err = {0};
					int got = lp_pi_reduce_record(red, &small.recs[i], &out, &err);
					cr_assert_geq(got, 0, "%s", err.msg);
					if (!got)
						continue;
					cr_assert_lt(k, big.n);
					const lp_pi_record *want = &big.recs[k++];
					cr_assert(out.tag == want->tag && out.fetched == want->fetched &&
						  out.dirt == want->dirt && out.evicted == want->evicted,
						  "M=%u M'=%u fault %zu: got %c %x %c %x, want %c %x %c %x",
						  m, m2, k - 1, out.tag, out.fetched, out.dirt, out.evicted,
						  want->tag, want->fetched, want->dirt, want->evicted);
					cr_assert(!memcmp(out.fetched_image, want->fetched_image,
							  LP_PAGE_BYTES));
					if (want->dirt != 'N')
						cr_assert(!memcmp(out.evicted_image, want->evicted_image,
								  LP_PAGE_BYTES),
							  "M=%u M'=%u fault %zu: evicted image", m, m2, k - 1);
				}
				cr_assert_eq(k, big.n, "M=%u M'=%u", m, m2);
				lp_pi_reduce_free(red);
				built_free(&big);
			}
			built_free(&small);
		}
	}
	g_free(small_pool);
	g_free(big_pool);
	g_rand_free(rng);
}

Test(lru, reduce_refuses_smaller_memory)
{
	lp_pi_reduce *red = lp_pi_reduce_new(1);
	unsigned char img[LP_PAGE_BYTES] = {0};
	lp_pi_record a = {.tag = 'C', .fetched = 1, .dirt = 'N', .fetched_image = img};
	lp_pi_record b = {.tag = 'C', .fetched = 2, .dirt = 'N', .fetched_image = img};
	lp_pi_record out;
	lp_error err = {0};
	cr_assert_eq(lp_pi_reduce_record(red, &a, &out, &err), 1);
	cr_assert_eq(lp_pi_reduce_record(red, &b, &out, &err), -1);
	cr_assert_eq(err.status, LP_EUSAGE);
	cr_assert_str_eq(err.msg, "the trace's memory has at least 2 pages, more than 1; "
				  "re-reduction only goes to larger memories");
	lp_pi_reduce_free(red);
}

Test(lru, reduce_refuses_broken_rule)
{
	lp_pi_reduce *red = lp_pi_reduce_new(4);
	unsigned char img[LP_PAGE_BYTES] = {0};
	lp_pi_record a = {.tag = 'F', .fetched = 1, .dirt = 'N', .fetched_image = img};
	lp_pi_record out;
	lp_error err = {0};
	cr_assert_eq(lp_pi_reduce_record(red, &a, &out, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	cr_assert_str_eq(err.msg, "field tag: F on page 1, which was never fetched");
	lp_pi_reduce_free(red);
}

/* ---- the reference stream of a trace ---- */

static char *stream_text(const lp_pi_record *recs, size_t n)
{
	lp_pi_stream *s = lp_pi_stream_new();
	lp_error err = {0};
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(lp_pi_stream_add(s, &recs[i], &err), 0, "%s", err.msg);
	GString *out = g_string_new(NULL);
	lp_basic_ref refs[3]; /* small, to resume mid-record */
	size_t got;
	while ((got = lp_pi_stream_next(s, refs, 3)) > 0)
		for (size_t i = 0; i < got; i++)
			g_string_append_printf(out, "%c %" G_GINT64_MODIFIER "x\n", refs[i].type,
					       refs[i].canonical);
	lp_pi_stream_free(s);
	return g_string_free(out, FALSE);
}

Test(lru, stream_of_the_spec_example)
{
	/* a b a c d with M = 2: the trace says c evicts b, d evicts a; the
	 * stream must touch a again before c so that b is the LRU page */
	const lp_pi_record recs[] = {pr('C', 0xa, 'N', 0), pr('C', 0xb, 'N', 0),
				     pr('C', 0xc, 'R', 0xb), pr('C', 0xd, 'R', 0xa)};
	char *out = stream_text(recs, 4);
	cr_assert_str_eq(out, "r a\nr b\nr a\nr c\nr d\n");
	g_free(out);
}

Test(lru, stream_marks_stays_that_end_dirty)
{
	/* M = 1: a's first stay ends W, b's ends R, a's second never ends */
	const lp_pi_record recs[] = {pr('C', 1, 'N', 0), pr('C', 2, 'W', 1), pr('F', 1, 'R', 2)};
	char *out = stream_text(recs, 3);
	cr_assert_str_eq(out, "w 1\nr 2\nr 1\n");
	g_free(out);
}

Test(lru, stream_refuses_broken_rule)
{
	lp_pi_stream *s = lp_pi_stream_new();
	lp_error err = {0};
	lp_pi_record a = pr('C', 1, 'N', 0), b = pr('C', 2, 'R', 3);
	cr_assert_eq(lp_pi_stream_add(s, &a, &err), 0);
	cr_assert_eq(lp_pi_stream_add(s, &b, &err), -1);
	cr_assert_str_eq(err.msg, "field evicted page: page 3 is not resident");
	lp_pi_stream_free(s);
}

Test(lru, stream_replays_every_larger_memory)
{
	GRand *rng = g_rand_new_with_seed(7);
	uint16_t page[NREFS];
	bool write[NREFS];
	for (int round = 0; round < 4; round++) {
		random_refs(rng, page, write, NREFS);
		compact(page, NREFS);
		for (unsigned m = 1; m <= 5; m++) {
			built small = build(page, write, NREFS, m, NULL);
			lp_pi_stream *s = lp_pi_stream_new();
			lp_error err = {0};
			for (size_t i = 0; i < small.n; i++)
				cr_assert_eq(lp_pi_stream_add(s, &small.recs[i], &err), 0);
			GArray *refs = g_array_new(FALSE, FALSE, sizeof(lp_basic_ref));
			lp_basic_ref buf[64];
			size_t got;
			while ((got = lp_pi_stream_next(s, buf, 64)) > 0)
				g_array_append_vals(refs, buf, (guint)got);
			lp_pi_stream_free(s);
			uint16_t *sp = g_new(uint16_t, refs->len);
			bool *sw = g_new(bool, refs->len);
			for (guint i = 0; i < refs->len; i++) {
				sp[i] = (uint16_t)g_array_index(refs, lp_basic_ref, i).canonical;
				sw[i] = g_array_index(refs, lp_basic_ref, i).type == 'w';
			}
			for (unsigned m2 = m; m2 <= m + 7; m2++) {
				built want = build(page, write, NREFS, m2, NULL);
				built got2 = build(sp, sw, refs->len, m2, NULL);
				cr_assert_eq(got2.n, want.n, "M=%u M'=%u", m, m2);
				for (size_t i = 0; i < want.n; i++)
					cr_assert(got2.recs[i].tag == want.recs[i].tag &&
						  got2.recs[i].fetched == want.recs[i].fetched &&
						  got2.recs[i].dirt == want.recs[i].dirt &&
						  got2.recs[i].evicted == want.recs[i].evicted,
						  "M=%u M'=%u fault %zu", m, m2, i);
				built_free(&want);
				built_free(&got2);
			}
			g_free(sp);
			g_free(sw);
			g_array_free(refs, TRUE);
			built_free(&small);
		}
	}
	g_rand_free(rng);
}

/* ---- laplace lru's run: a whole trace in, the output published only
 * when whole ---- */

Test(lru, run_writes_the_sequence_of_a_stream)
{
	char *dir = scratch_dir_new();
	const char stream[] = "r 1\nw 2\nr 1\nr 3\n";
	char *in = scratch_file(dir, "s.txt", stream, sizeof stream - 1);
	char *out = g_build_filename(dir, "out.txt", NULL);
	lp_lru_request rq = {.input = in, .text = true, .frames = 1, .output = out,
			     .level = LP_LEVEL_DEFAULT};
	lp_error err = {0};
	cr_assert_eq(lp_lru_run(&rq, &err), 0, "%s", err.msg);
	char *text;
	cr_assert(g_file_get_contents(out, &text, NULL, NULL));
	cr_assert_str_eq(text, "C 1 N 0\nC 2 R 1\nF 1 W 2\nC 3 R 1\n");
	g_free(text);
	g_free(out);
	g_free(in);
	scratch_dir_free(dir);
}

Test(lru, run_leaves_no_output_after_an_error)
{
	char *dir = scratch_dir_new();
	const char stream[] = "r 1\nq 2\n";
	char *in = scratch_file(dir, "bad.txt", stream, sizeof stream - 1);
	char *out = g_build_filename(dir, "out.txt", NULL);
	lp_lru_request rq = {.input = in, .text = true, .frames = 2, .output = out,
			     .level = LP_LEVEL_DEFAULT};
	lp_error err = {0};
	cr_assert_eq(lp_lru_run(&rq, &err), LP_EINPUT);
	cr_assert(strstr(err.msg, "bad.txt:2:"), "%s", err.msg);
	cr_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
	char *missing = g_build_filename(dir, "missing.pi", NULL);
	rq = (lp_lru_request){.input = missing, .page_image = true, .frames = 2, .output = out,
			      .level = LP_LEVEL_DEFAULT};
	cr_assert_eq(lp_lru_run(&rq, &err), LP_EIO);
	cr_assert(strstr(err.msg, "missing.pi"), "%s", err.msg);
	cr_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
	g_free(missing);
	g_free(out);
	g_free(in);
	scratch_dir_free(dir);
}
