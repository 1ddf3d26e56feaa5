/* Pieces compressed one by one: see include/laplace/taskcodec.h. */
#include "laplace/taskcodec.h"

#include <string.h>

#include <glib.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include "laplace/workpool.h"

struct lp_piece_coder {
	enum lp_compress method;
	int level;
	struct isal_zstream zs; /* gzip: started again for every member */
	uint8_t *level_buf;
	uint32_t level_buf_size;
	ZSTD_CCtx *cctx; /* zstd: one frame a call */
	unsigned char *out;
	size_t out_cap;
};

lp_piece_coder *lp_piece_coder_new(enum lp_compress method, int level, size_t max_piece)
{
	lp_piece_coder *c = g_new0(lp_piece_coder, 1);
	c->method = method;
	c->level = lp_compress_level(method, level);
	if (method == LP_COMPRESS_GZIP) {
		c->level_buf_size = lp_igzip_level_buf_size(c->level);
		c->level_buf = c->level_buf_size ? g_malloc(c->level_buf_size) : NULL;
		/* A member of incompressible bytes: stored blocks, a few bytes of
		 * header each, and the gzip header and trailer. */
		c->out_cap = max_piece + max_piece / 16 + 1024;
	} else {
		/* Every frame carries its content's checksum, as the zstd tool
		 * writes by default: a damaged file is then an error when read,
		 * never other bytes taken as the trace. */
		c->cctx = ZSTD_createCCtx();
		if (!c->cctx ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, c->level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1))) {
			ZSTD_freeCCtx(c->cctx);
			g_free(c);
			return NULL;
		}
		c->out_cap = ZSTD_compressBound(max_piece);
	}
	c->out = g_malloc(c->out_cap);
	return c;
}

void lp_piece_coder_free(lp_piece_coder *c)
{
	if (!c)
		return;
	g_free(c->level_buf);
	ZSTD_freeCCtx(c->cctx);
	g_free(c->out);
	g_free(c);
}

ssize_t lp_piece_encode(lp_piece_coder *c, const void *data, size_t n, const char *path,
			const void **out, lp_error *err)
{
	*out = c->out;
	if (c->method == LP_COMPRESS_GZIP) {
		isal_deflate_init(&c->zs);
		c->zs.gzip_flag = IGZIP_GZIP;
		c->zs.level = (uint32_t)c->level;
		c->zs.level_buf = c->level_buf;
		c->zs.level_buf_size = c->level_buf_size;
		c->zs.end_of_stream = 1;
		c->zs.flush = NO_FLUSH;
		c->zs.next_in = (uint8_t *)data;
		c->zs.avail_in = (uint32_t)n;
		c->zs.next_out = c->out;
		c->zs.avail_out = (uint32_t)c->out_cap;
		/* The output buffer holds the worst case: one call ends the member. */
		if (isal_deflate(&c->zs) != COMP_OK || c->zs.internal_state.state != ZSTATE_END)
			return lp_fail(err, LP_EIO, "cannot compress %s: gzip compression failed", path), -1;
		return (ssize_t)(c->out_cap - c->zs.avail_out);
	}
	size_t len = ZSTD_compress2(c->cctx, c->out, c->out_cap, data, n);
	if (ZSTD_isError(len))
		return lp_fail(err, LP_EIO, "cannot compress %s: zstd: %s", path, ZSTD_getErrorName(len)), -1;
	return (ssize_t)len;
}

/* ---- the pool: pieces as jobs of a work pool, a slot each ---- */

typedef struct piece_slot {
	lp_piece_coder *coder;
	char *data;
	size_t n;
	void *file;
	char *path;
	const void *out;
	ssize_t len;
} piece_slot;

struct lp_piece_pool {
	lp_workpool *work;
	piece_slot *slots;
	unsigned nslots;
	unsigned next; /* the slot of the next piece: the ring follows the pool's */
	lp_piece_write_fn write;
	void *ctx;
};

static int encode_piece(void *ctx, void *job, lp_error *err)
{
	(void)ctx;
	piece_slot *s = job;
	s->len = lp_piece_encode(s->coder, s->data, s->n, s->path, &s->out, err);
	return s->len < 0 ? err->status : 0;
}

lp_piece_pool *lp_piece_pool_new(enum lp_compress method, int level, size_t max_piece,
				 unsigned threads, lp_piece_write_fn write, void *ctx)
{
	lp_piece_pool *p = g_new0(lp_piece_pool, 1);
	p->nslots = 2 * threads + 2;
	p->slots = g_new0(piece_slot, p->nslots);
	p->write = write;
	p->ctx = ctx;
	for (unsigned i = 0; i < p->nslots; i++) {
		p->slots[i].data = g_malloc(max_piece);
		if (!(p->slots[i].coder = lp_piece_coder_new(method, level, max_piece))) {
			lp_piece_pool_free(p);
			return NULL;
		}
	}
	p->work = lp_workpool_new("laplace-zip", threads, p->nslots, encode_piece, NULL);
	return p;
}

/* Wait for the oldest piece and write it (or report its failure). */
static int write_oldest(lp_piece_pool *p, lp_error *err)
{
	int rc;
	piece_slot *s = lp_workpool_take(p->work, &rc, err);
	if (!rc)
		rc = p->write(p->ctx, s->file, s->out, (size_t)s->len, err);
	g_free(s->path);
	s->path = NULL;
	return rc;
}

int lp_piece_pool_submit(lp_piece_pool *p, void *file, const char *path, const void *data, size_t n,
			 lp_error *err)
{
	int rc;
	if (lp_workpool_full(p->work) && (rc = write_oldest(p, err)))
		return rc;
	piece_slot *s = &p->slots[p->next];
	p->next = (p->next + 1) % p->nslots;
	memcpy(s->data, data, n);
	s->n = n;
	s->file = file;
	s->path = g_strdup(path);
	lp_workpool_submit(p->work, s);
	return 0;
}

int lp_piece_pool_drain(lp_piece_pool *p, lp_error *err)
{
	int rc = 0;
	while (lp_workpool_pending(p->work) && !(rc = write_oldest(p, err)))
		;
	return rc;
}

void lp_piece_pool_free(lp_piece_pool *p)
{
	if (!p)
		return;
	lp_workpool_free(p->work);
	for (unsigned i = 0; i < p->nslots; i++) {
		lp_piece_coder_free(p->slots[i].coder);
		g_free(p->slots[i].data);
		g_free(p->slots[i].path);
	}
	g_free(p->slots);
	g_free(p);
}

const char *lp_compress_suffix(enum lp_compress method)
{
	switch (method) {
	case LP_COMPRESS_GZIP: return ".gz";
	case LP_COMPRESS_ZSTD: return ".zst";
	default: return "";
	}
}
