/* One pass over a basic merge stream: stack distances (mrc.c), counted
 * by type and bucket. */
#include "analysis/reuse.h"

#include <string.h>

#include "analysis/mrc.h"
#include "core/record.h"
#include "formats/legacy.h"

#define STREAM_BATCH 65536

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

int lp_reuse_of_stream(const char *path, lp_reuse *r, lp_error *err)
{
	memset(r, 0, sizeof *r);
	lp_basic_reader *in = lp_basic_open(path, err);
	if (!in)
		return err->status;
	lp_mrc *mrc = lp_mrc_new();
	lp_basic_ref *batch = g_new(lp_basic_ref, STREAM_BATCH);
	type_pages pages = {0};
	/* Counted here, not through r: the compiler then knows that the
	 * counts are not the batch's. */
	lp_reuse acc = {0};
	ssize_t n;
	while ((n = lp_basic_read(in, batch, STREAM_BATCH, err)) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			uint64_t id;
			uint64_t distance = lp_mrc_access(mrc, batch[k].canonical, &id);
			count(&acc, &pages, lp_ref_type_index(batch[k].type), id, distance);
		}
	}
	g_free(batch);
	g_free(pages.types_of_page);
	lp_basic_close(in);
	if (n == 0) {
		*r = acc;
		r->references = lp_mrc_references(mrc);
		r->distinct = lp_mrc_distinct_pages(mrc);
		r->misses = g_new(uint64_t, r->distinct + 1);
		lp_mrc_misses(mrc, r->misses);
	}
	lp_mrc_free(mrc);
	return n < 0 ? err->status : 0;
}

void lp_reuse_clear(lp_reuse *r)
{
	g_free(r->misses);
	r->misses = NULL;
}

int lp_reuse_stage_curve(const lp_reuse *r, const char *path, lp_staged **done, lp_error *err)
{
	const uint64_t *misses = r->misses, distinct = r->distinct, refs = r->references;
	lp_output *out = lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!out)
		return err->status;
	GString *buf = g_string_sized_new(1 << 16);
	g_string_append(buf, "frames,misses,miss_ratio\n");
	int rc = 0;
	for (uint64_t f = 1; f <= distinct && !rc; f++) {
		g_string_append_printf(buf, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f\n", f,
				       misses[f], (double)misses[f] / (double)refs);
		if (buf->len >= 1 << 16) {
			rc = lp_output_write(out, buf->str, buf->len, err);
			g_string_truncate(buf, 0);
		}
	}
	if (!rc)
		rc = lp_output_write(out, buf->str, buf->len, err);
	g_string_free(buf, TRUE);
	return lp_output_stage(out, rc, done, err);
}
