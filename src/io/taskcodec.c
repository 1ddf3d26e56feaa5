/* Pieces compressed one by one: see include/laplace/taskcodec.h. */
#include "laplace/taskcodec.h"

#include <glib.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

/* The fastest levels: every byte of a per-process merge goes through
 * here. On its task files zstd -1 compressed as well as -3 (6.83 against
 * 6.90 MB of 27.2) in a third of the time. gzip is ISA-L's igzip, as for
 * every gzip output, at its level 1 (zlib's -1 was 6 times slower on a
 * basic merge). */
#define PIECE_GZIP_LEVEL 1
#define PIECE_ZSTD_LEVEL 1

struct lp_piece_coder {
	enum lp_compress method;
	struct isal_zstream zs; /* gzip: started again for every member */
	uint8_t *level_buf;
	ZSTD_CCtx *cctx; /* zstd: one frame a call */
	unsigned char *out;
	size_t out_cap;
};

lp_piece_coder *lp_piece_coder_new(enum lp_compress method, size_t max_piece)
{
	lp_piece_coder *c = g_new0(lp_piece_coder, 1);
	c->method = method;
	if (method == LP_COMPRESS_GZIP) {
		c->level_buf = g_malloc(ISAL_DEF_LVL1_DEFAULT);
		/* A member of incompressible bytes: stored blocks, a few bytes of
		 * header each, and the gzip header and trailer. */
		c->out_cap = max_piece + max_piece / 16 + 1024;
	} else {
		c->cctx = ZSTD_createCCtx();
		if (!c->cctx ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, PIECE_ZSTD_LEVEL))) {
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
		c->zs.level = PIECE_GZIP_LEVEL;
		c->zs.level_buf = c->level_buf;
		c->zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
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

const char *lp_compress_suffix(enum lp_compress method)
{
	switch (method) {
	case LP_COMPRESS_GZIP: return ".gz";
	case LP_COMPRESS_ZSTD: return ".zst";
	default: return "";
	}
}
