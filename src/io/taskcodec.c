/* Pieces compressed one by one: see include/laplace/taskcodec.h. */
#include "laplace/taskcodec.h"

#include <glib.h>
#include <zlib.h>
#include <zstd.h>

/* The fastest levels: every byte of a per-process merge goes through
 * here. On its task files zstd -1 compressed as well as -3 (6.83 against
 * 6.90 MB of 27.2) in a third of the time; gzip -1 took a sixth of -6's
 * time for 30% more bytes. */
#define PIECE_GZIP_LEVEL 1
#define PIECE_ZSTD_LEVEL 1

struct lp_piece_coder {
	enum lp_compress method;
	z_stream zs;     /* gzip: reset for every member */
	ZSTD_CCtx *cctx; /* zstd: one frame a call */
	unsigned char *out;
	size_t out_cap;
};

lp_piece_coder *lp_piece_coder_new(enum lp_compress method, size_t max_piece)
{
	lp_piece_coder *c = g_new0(lp_piece_coder, 1);
	c->method = method;
	if (method == LP_COMPRESS_GZIP) {
		/* 15 + 16: a gzip wrapper, not zlib's. */
		if (deflateInit2(&c->zs, PIECE_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			g_free(c);
			return NULL;
		}
		c->out_cap = deflateBound(&c->zs, (uLong)max_piece);
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
	if (c->method == LP_COMPRESS_GZIP)
		deflateEnd(&c->zs);
	ZSTD_freeCCtx(c->cctx);
	g_free(c->out);
	g_free(c);
}

ssize_t lp_piece_encode(lp_piece_coder *c, const void *data, size_t n, const char *path,
			const void **out, lp_error *err)
{
	*out = c->out;
	if (c->method == LP_COMPRESS_GZIP) {
		/* The output buffer holds deflateBound's worst case: one call. */
		c->zs.next_in = (Bytef *)data;
		c->zs.avail_in = (uInt)n;
		c->zs.next_out = c->out;
		c->zs.avail_out = (uInt)c->out_cap;
		int zr = deflate(&c->zs, Z_FINISH);
		size_t len = c->out_cap - c->zs.avail_out;
		if (zr != Z_STREAM_END || deflateReset(&c->zs) != Z_OK)
			return lp_fail(err, LP_EIO, "cannot compress %s: gzip: %s", path,
				       c->zs.msg ? c->zs.msg : zError(zr)), -1;
		return (ssize_t)len;
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
