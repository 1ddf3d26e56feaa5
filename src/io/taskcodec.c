/* Pieces compressed one by one: see io/taskcodec.h. */
#include "io/taskcodec.h"

#include <string.h>

#include <glib.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include "io/workpool.h"

/* Defaults chosen for speed (bench/RESULTS.md, "Fast codecs"), for every
 * output and every piece of a task file: igzip's 1 was 6 times faster
 * than zlib's 1; on task files zstd's 1 compressed as well as its 3 (6.83
 * against 6.90 MB of 27.2) in a third of the time. */
#define GZIP_LEVEL 1
#define ZSTD_LEVEL 1
#define ZSTD_LEVEL_MAX 19 /* beyond it zstd wants --ultra's memory */
#define ZSTD_LEVEL_MIN (-7) /* zstd --fast=7: faster still, much larger */

bool lp_compress_levels(enum lp_compress codec, int *lowest, int *highest)
{
	switch (codec) {
	case LP_COMPRESS_GZIP:
		*lowest = ISAL_DEF_MIN_LEVEL;
		*highest = ISAL_DEF_MAX_LEVEL;
		return true;
	case LP_COMPRESS_ZSTD:
		*lowest = ZSTD_LEVEL_MIN;
		*highest = ZSTD_LEVEL_MAX;
		return true;
	default:
		return false;
	}
}

int lp_compress_level(enum lp_compress codec, int level)
{
	if (level != LP_LEVEL_DEFAULT)
		return level;
	return codec == LP_COMPRESS_GZIP ? GZIP_LEVEL : ZSTD_LEVEL;
}

/* The level buffer igzip needs at level (0 to 3). */
static uint32_t igzip_level_buf_size(int level)
{
	static const uint32_t size[ISAL_DEF_MAX_LEVEL + 1] = {
		ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
		ISAL_DEF_LVL3_DEFAULT,
	};
	return size[level];
}

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
		c->level_buf_size = igzip_level_buf_size(c->level);
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

/* The slot for the next piece, once free (the oldest written if none is),
 * or NULL with the status in *rc. */
static piece_slot *next_slot(lp_piece_pool *p, int *rc, lp_error *err)
{
	if (lp_workpool_full(p->work) && (*rc = write_oldest(p, err)))
		return NULL;
	piece_slot *s = &p->slots[p->next];
	p->next = (p->next + 1) % p->nslots;
	return s;
}

static void queue_piece(lp_piece_pool *p, piece_slot *s, void *file, const char *path, size_t n)
{
	s->n = n;
	s->file = file;
	s->path = g_strdup(path);
	lp_workpool_submit(p->work, s);
}

int lp_piece_pool_submit(lp_piece_pool *p, void *file, const char *path, const void *data, size_t n,
			 lp_error *err)
{
	int rc = 0;
	piece_slot *s = next_slot(p, &rc, err);
	if (!s)
		return rc;
	memcpy(s->data, data, n);
	queue_piece(p, s, file, path, n);
	return 0;
}

int lp_piece_pool_give(lp_piece_pool *p, void *file, const char *path, void **buf, size_t n,
		       lp_error *err)
{
	int rc = 0;
	piece_slot *s = next_slot(p, &rc, err);
	if (!s)
		return rc;
	char *mine = s->data;
	s->data = *buf;
	*buf = mine;
	queue_piece(p, s, file, path, n);
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
