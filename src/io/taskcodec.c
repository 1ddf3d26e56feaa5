/* Pieces compressed one by one: see io/taskcodec.h. */
#include "io/taskcodec.h"

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

/* A coder whose output buffer holds that many pieces of at most max_piece
 * bytes once compressed, one after another. */
static lp_piece_coder *coder_new(enum lp_compress method, int level, size_t max_piece,
				 unsigned pieces)
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
	c->out_cap *= pieces;
	c->out = g_malloc(c->out_cap);
	return c;
}

lp_piece_coder *lp_piece_coder_new(enum lp_compress method, int level, size_t max_piece)
{
	return coder_new(method, level, max_piece, 1);
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

/* data[0, n) as one member or frame at c->out + at: its length, or -1 with
 * err set. The room from at on holds the worst case of n bytes. */
static ssize_t encode_at(lp_piece_coder *c, const void *data, size_t n, size_t at, const char *path,
			 lp_error *err)
{
	unsigned char *dst = c->out + at;
	size_t room = c->out_cap - at;
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
		c->zs.next_out = dst;
		c->zs.avail_out = (uint32_t)room;
		/* The output buffer holds the worst case: one call ends the member. */
		if (isal_deflate(&c->zs) != COMP_OK || c->zs.internal_state.state != ZSTATE_END)
			return lp_fail(err, LP_EIO, "cannot compress %s: gzip compression failed", path), -1;
		return (ssize_t)(room - c->zs.avail_out);
	}
	size_t len = ZSTD_compress2(c->cctx, dst, room, data, n);
	if (ZSTD_isError(len))
		return lp_fail(err, LP_EIO, "cannot compress %s: zstd: %s", path, ZSTD_getErrorName(len)), -1;
	return (ssize_t)len;
}

ssize_t lp_piece_encode(lp_piece_coder *c, const void *data, size_t n, const char *path,
			const void **out, lp_error *err)
{
	*out = c->out;
	return encode_at(c, data, n, 0, path, err);
}

/* ---- the pool: batches of pieces as jobs of a work pool, a slot each ----
 *
 * A job is a batch of consecutive pieces, up to BATCH_BYTES of them (one
 * piece at least), compressed one after another by one coder: task files'
 * pieces are 64 KiB, and handing each over alone (a wake-up and a thread
 * switch a piece, a coder's tables brought into another cache) cost the
 * per-process merge 6% more CPU time (bench/RESULTS.md, issue 28). Each
 * piece is still its own member or frame: the bytes are the same. */
#define BATCH_BYTES (1u << 20)

typedef struct piece {
	void *file;
	char *path;
	size_t n;      /* its bytes, in the batch's bufs[its index] */
	size_t out_at; /* compressed, at the coder's out + out_at */
	ssize_t len;
} piece;

typedef struct piece_batch {
	lp_piece_coder *coder;
	char **bufs;       /* piece k's bytes in bufs[k], max_piece bytes each */
	piece *pieces;
	unsigned npieces;
	unsigned ndone;    /* compressed; short of npieces if one failed */
} piece_batch;

struct lp_piece_pool {
	lp_workpool *work;
	piece_batch *slots;
	unsigned nslots;
	unsigned next;        /* the slot of the next batch: the ring follows the pool's */
	piece_batch *open;    /* being filled, not yet given to the work pool */
	unsigned batch_pieces; /* pieces a batch holds at most */
	lp_piece_write_fn write;
	void *ctx;
};

static int encode_batch(void *ctx, void *job, lp_error *err)
{
	(void)ctx;
	piece_batch *b = job;
	size_t at = 0;
	for (b->ndone = 0; b->ndone < b->npieces; b->ndone++) {
		piece *pc = &b->pieces[b->ndone];
		pc->out_at = at;
		pc->len = encode_at(b->coder, b->bufs[b->ndone], pc->n, at, pc->path, err);
		if (pc->len < 0)
			return err->status;
		at += (size_t)pc->len;
	}
	return 0;
}

lp_piece_pool *lp_piece_pool_new(enum lp_compress method, int level, size_t max_piece,
				 unsigned threads, lp_piece_write_fn write, void *ctx)
{
	lp_piece_pool *p = g_new0(lp_piece_pool, 1);
	p->nslots = 2 * threads + 2;
	p->slots = g_new0(piece_batch, p->nslots);
	p->batch_pieces = (unsigned)MAX(BATCH_BYTES / MAX(max_piece, 1), 1);
	p->write = write;
	p->ctx = ctx;
	for (unsigned i = 0; i < p->nslots; i++) {
		piece_batch *b = &p->slots[i];
		b->bufs = g_new(char *, p->batch_pieces);
		for (unsigned k = 0; k < p->batch_pieces; k++)
			b->bufs[k] = g_malloc(max_piece);
		b->pieces = g_new0(piece, p->batch_pieces);
		if (!(b->coder = coder_new(method, level, max_piece, p->batch_pieces))) {
			lp_piece_pool_free(p);
			return NULL;
		}
	}
	p->work = lp_workpool_new("laplace-zip", threads, p->nslots, encode_batch, NULL);
	return p;
}

static void batch_clear(piece_batch *b)
{
	for (unsigned k = 0; k < b->npieces; k++) {
		g_free(b->pieces[k].path);
		b->pieces[k].path = NULL;
	}
	b->npieces = 0;
}

/* Wait for the oldest batch and write its pieces (or report the failure
 * of its first piece that failed, after the pieces before it). */
static int write_oldest(lp_piece_pool *p, lp_error *err)
{
	int rc;
	piece_batch *b = lp_workpool_take(p->work, &rc, err);
	int wrc = 0;
	for (unsigned k = 0; !wrc && k < b->ndone; k++)
		wrc = p->write(p->ctx, b->pieces[k].file, b->coder->out + b->pieces[k].out_at,
			       (size_t)b->pieces[k].len, err);
	batch_clear(b);
	return wrc ? wrc : rc;
}

/* Give the open batch to the work pool. */
static void queue_open(lp_piece_pool *p)
{
	if (p->open) {
		lp_workpool_submit(p->work, p->open);
		p->open = NULL;
	}
}

/* Room in the open batch for one more piece (a new batch in the next slot,
 * once free, if none is open: a full one has gone at once), or a write's
 * or compression's failure. */
static int make_room(lp_piece_pool *p, lp_error *err)
{
	if (p->open)
		return 0;
	int rc;
	if (lp_workpool_full(p->work) && (rc = write_oldest(p, err)))
		return rc;
	p->open = &p->slots[p->next];
	p->next = (p->next + 1) % p->nslots;
	return 0;
}

/* The open batch's new last piece: the address of its buffer. */
static char **add_piece(lp_piece_pool *p, void *file, const char *path, size_t n)
{
	piece_batch *b = p->open;
	piece *pc = &b->pieces[b->npieces];
	pc->file = file;
	pc->path = g_strdup(path);
	pc->n = n;
	return &b->bufs[b->npieces++];
}

/* A full batch goes at once: its compression need not wait for the next
 * piece. */
static void queue_if_full(lp_piece_pool *p)
{
	if (p->open->npieces == p->batch_pieces)
		queue_open(p);
}

int lp_piece_pool_give(lp_piece_pool *p, void *file, const char *path, void **buf, size_t n,
		       lp_error *err)
{
	int rc = make_room(p, err);
	if (rc)
		return rc;
	char **slot = add_piece(p, file, path, n);
	char *mine = *slot;
	*slot = *buf;
	*buf = mine;
	queue_if_full(p);
	return 0;
}

int lp_piece_pool_drain(lp_piece_pool *p, lp_error *err)
{
	queue_open(p);
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
		batch_clear(&p->slots[i]);
		lp_piece_coder_free(p->slots[i].coder);
		for (unsigned k = 0; p->slots[i].bufs && k < p->batch_pieces; k++)
			g_free(p->slots[i].bufs[k]);
		g_free(p->slots[i].bufs);
		g_free(p->slots[i].pieces);
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
