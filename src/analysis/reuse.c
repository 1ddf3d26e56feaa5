/* One pass over a basic merge stream: stack distances (mrc.c), counted
 * by type and bucket. */
#include "analysis/reuse.h"

#include <stdio.h>
#include <string.h>

#include "analysis/mrc.h"
#include "core/record.h"
#include "formats/basicin.h"
#include "formats/legacy.h"

/* The pages each type referenced, as the stream goes. */
typedef struct type_pages {
	uint8_t *types_of_page; /* page id -> bit per type that referenced it */
	uint64_t cap;
} type_pages;

static void count(lp_reuse *r, type_pages *p, int type, uint64_t id, uint64_t distance)
{
	r->refs[type]++;
	if (distance)
		r->buckets[g_bit_nth_msf(distance, -1)][type]++;
	else
		r->first[type]++;
	if (id >= p->cap) {
		uint64_t cap = p->cap ? p->cap * 2 : 4096;
		p->types_of_page = g_realloc_n(p->types_of_page, cap, 1);
		memset(p->types_of_page + p->cap, 0, cap - p->cap);
		p->cap = cap;
	}
	uint8_t bit = (uint8_t)(1u << type);
	if (!(p->types_of_page[id] & bit)) {
		p->types_of_page[id] |= bit;
		r->distinct_of[type]++;
	}
}

int lp_reuse_of_stream(const char *path, const lp_progress *progress, lp_reuse *r,
		       lp_error *err)
{
	memset(r, 0, sizeof *r);
	lp_basic_iter in;
	if (lp_basic_iter_open(&in, path, LP_BASIC_BLOCK_REFS, err))
		return err->status;
	lp_mrc *mrc = lp_mrc_new();
	type_pages pages = {0};
	/* Counted here, not through r: the compiler then knows that the
	 * counts are not the batch's. */
	lp_reuse acc = {0};
	for (lp_basic_block b; (b = lp_basic_iter_next(&in)).len;) {
		for (size_t k = 0; k < b.len; k++) {
			uint64_t id;
			uint64_t distance = lp_mrc_access(mrc, b.ref[k].canonical, &id);
			count(&acc, &pages, lp_ref_type_index(b.ref[k].type), id, distance);
		}
		lp_progress_records(progress, lp_mrc_references(mrc));
	}
	g_free(pages.types_of_page);
	int rc = lp_basic_iter_clear(&in);
	if (!rc)
		rc = lp_mrc_check(mrc, path, err);
	if (!rc) {
		*r = acc;
		r->references = lp_mrc_references(mrc);
		r->distinct = lp_mrc_distinct_pages(mrc);
		r->misses = g_new(uint64_t, r->distinct + 1);
		lp_mrc_misses(mrc, r->misses);
	}
	lp_mrc_free(mrc);
	return rc;
}

void lp_reuse_clear(lp_reuse *r)
{
	g_free(r->misses);
	r->misses = NULL;
}

int lp_sampled_of_stream(const char *path, double rate, uint64_t pages,
			 const lp_progress *progress, lp_sampled *r, lp_error *err)
{
	memset(r, 0, sizeof *r);
	lp_basic_iter in;
	if (lp_basic_iter_open(&in, path, LP_BASIC_BLOCK_REFS, err))
		return err->status;
	lp_shards *shards = lp_shards_new(rate, pages);
	uint64_t refs[6] = {0};
	for (lp_basic_block b; (b = lp_basic_iter_next(&in)).len;) {
		for (size_t k = 0; k < b.len; k++) {
			refs[lp_ref_type_index(b.ref[k].type)]++;
			lp_shards_access(shards, b.ref[k].canonical);
		}
		lp_progress_records(progress, in.done);
	}
	int rc = lp_basic_iter_clear(&in);
	if (rc) {
		lp_shards_free(shards);
		return rc;
	}
	r->shards = shards;
	memcpy(r->refs, refs, sizeof refs);
	return 0;
}

void lp_sampled_clear(lp_sampled *r)
{
	lp_shards_free(r->shards);
	r->shards = NULL;
}

/* Rows of "frames,misses,miss_ratio" for frames 1 .. count, misses[f]
 * from next(ctx), to out. */
static int write_curve(lp_output *out, uint64_t count, uint64_t refs,
		       uint64_t (*next)(void *ctx, uint64_t f), void *ctx, lp_error *err)
{
	GString *buf = g_string_sized_new(1 << 16);
	g_string_append(buf, "frames,misses,miss_ratio\n");
	int rc = 0;
	for (uint64_t f = 1; f <= count && !rc; f++) {
		uint64_t misses = next(ctx, f);
		/* Formatted on the stack: g_string_append_printf allocates a
		 * string a row, millions of them for a large curve. */
		char row[96];
		int len = snprintf(row, sizeof row, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f\n",
				   f, misses, (double)misses / (double)refs);
		g_string_append_len(buf, row, len);
		if (buf->len >= 1 << 16) {
			rc = lp_output_write(out, buf->str, buf->len, err);
			g_string_truncate(buf, 0);
		}
	}
	if (!rc)
		rc = lp_output_write(out, buf->str, buf->len, err);
	g_string_free(buf, TRUE);
	return rc;
}

static uint64_t sampled_next(void *ctx, uint64_t f)
{
	(void)f;
	return lp_shards_curve_next(ctx);
}

int lp_sampled_stage_curve(const lp_sampled *r, const char *path, lp_staged **done,
			   lp_error *err)
{
	lp_output *out = lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!out)
		return err->status;
	lp_shards_summary sum;
	lp_shards_summarize(r->shards, &sum);
	lp_shards_curve c;
	lp_shards_curve_start(&c, r->shards);
	int rc = write_curve(out, sum.frames, sum.references, sampled_next, &c, err);
	return lp_output_stage(out, rc, done, err);
}

static uint64_t exact_next(void *ctx, uint64_t f)
{
	return ((const uint64_t *)ctx)[f];
}

int lp_reuse_stage_curve(const lp_reuse *r, const char *path, lp_staged **done, lp_error *err)
{
	lp_output *out = lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!out)
		return err->status;
	int rc = write_curve(out, r->distinct, r->references, exact_next, r->misses, err);
	return lp_output_stage(out, rc, done, err);
}
