/* Output byte streams. A regular file is staged (the staging invariants at
 * the top of src/io/staging.c; (3) is upheld here, in output_finish); pipes,
 * terminals and devices are written directly (staging invariant (9)). */
#include "laplace/io.h"

#include "laplace/staging.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <glib.h>

#define OUTPUT_BUFFER_SIZE (1u << 20)
#define GZIP_LEVEL 6
#define ZSTD_LEVEL 3

struct lp_output {
	int fd;
	bool own_fd;
	char *name;      /* the path as given, or "<stdout>" */
	lp_staged *staged; /* NULL when writing directly */
	enum lp_compress compress;
	unsigned char *buf; /* uncompressed bytes waiting */
	size_t used;
	unsigned char *zbuf; /* compressed bytes on their way out */
	z_stream zs;
	ZSTD_CStream *zcs;
};

int lp_compress_parse(const char *s)
{
	if (!strcmp(s, "gz") || !strcmp(s, "gzip"))
		return LP_COMPRESS_GZIP;
	if (!strcmp(s, "zst") || !strcmp(s, "zstd"))
		return LP_COMPRESS_ZSTD;
	if (!strcmp(s, "none"))
		return LP_COMPRESS_NONE;
	return -1;
}

static enum lp_compress compress_for(const char *path, enum lp_compress compress)
{
	if (compress != LP_COMPRESS_AUTO)
		return compress;
	if (path && g_str_has_suffix(path, ".gz"))
		return LP_COMPRESS_GZIP;
	if (path && g_str_has_suffix(path, ".zst"))
		return LP_COMPRESS_ZSTD;
	return LP_COMPRESS_NONE;
}

static void output_free(lp_output *out)
{
	if (out->compress == LP_COMPRESS_GZIP)
		deflateEnd(&out->zs);
	ZSTD_freeCStream(out->zcs);
	if (out->own_fd && out->fd >= 0)
		close(out->fd);
	lp_staged_discard(out->staged);
	g_free(out->name);
	g_free(out->buf);
	g_free(out->zbuf);
	g_free(out);
}

/* The common part of opening: path for messages; fd the descriptor to
 * write to, or -1 with errno set. */
static lp_output *output_new(const char *path, int fd, enum lp_compress compress)
{
	int open_errno = errno;
	lp_output *out = g_new0(lp_output, 1);
	out->fd = fd;
	out->name = g_strdup(path);
	out->compress = compress;
	out->buf = g_malloc(OUTPUT_BUFFER_SIZE);
	errno = open_errno;
	return out;
}

/* Check the descriptor and start compressing; frees out on failure. */
static lp_output *output_start(lp_output *out, lp_error *err)
{
	if (out->fd < 0) {
		lp_fail(err, LP_EIO, "cannot open %s: %s", out->name, g_strerror(errno));
		output_free(out);
		return NULL;
	}
	bool started = true;
	if (out->compress == LP_COMPRESS_GZIP) {
		/* 15 + 16: gzip wrapper around the deflate stream. */
		started = deflateInit2(&out->zs, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
				       Z_DEFAULT_STRATEGY) == Z_OK;
		if (!started)
			out->compress = LP_COMPRESS_NONE; /* nothing to deflateEnd */
	} else if (out->compress == LP_COMPRESS_ZSTD) {
		out->zcs = ZSTD_createCStream();
		started = out->zcs && !ZSTD_isError(ZSTD_initCStream(out->zcs, ZSTD_LEVEL));
	}
	if (!started) {
		lp_fail(err, LP_EIO, "%s: cannot start compression", out->name);
		output_free(out);
		return NULL;
	}
	if (out->compress != LP_COMPRESS_NONE)
		out->zbuf = g_malloc(OUTPUT_BUFFER_SIZE);
	return out;
}

/* A staged output: target names the file (as lp_stage_file takes it),
 * shown is the name for messages. */
static lp_output *open_staged(int dir_fd, const char *target, const char *shown,
			      enum lp_compress compress, lp_error *err)
{
	lp_staged *staged = NULL;
	lp_output *out = output_new(shown, lp_stage_file(dir_fd, target, &staged),
				    compress_for(shown, compress));
	out->own_fd = true;
	out->staged = staged;
	return output_start(out, err);
}

lp_output *lp_output_open(const char *path, enum lp_compress compress, lp_error *err)
{
	if (!path || !strcmp(path, "-"))
		return output_start(output_new("<stdout>", STDOUT_FILENO, compress_for(NULL, compress)),
				    err);
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		lp_output *out = output_new(path, open(path, O_WRONLY | O_CLOEXEC),
					    compress_for(path, compress));
		out->own_fd = true;
		return output_start(out, err);
	}
	/* Replace what a symbolic link points to, not the link: renaming
	 * over /dev/stdout, say, would break the system. */
	char *resolved = realpath(path, NULL);
	lp_output *out = open_staged(AT_FDCWD, resolved ? resolved : path, path, compress, err);
	free(resolved);
	return out;
}

lp_output *lp_output_open_in(int dir_fd, const char *path, enum lp_compress compress,
			     lp_error *err)
{
	return open_staged(dir_fd, path, path, compress, err);
}

static int write_failed(lp_output *out, lp_error *err)
{
	return lp_fail(err, LP_EIO, "cannot write %s: %s", out->name, g_strerror(errno));
}

static int write_all(lp_output *out, const unsigned char *p, size_t n, lp_error *err)
{
	while (n > 0) {
		ssize_t w = write(out->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return write_failed(out, err);
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Push n bytes through the compressor (if any) to the file; with finish,
 * also end the compressed stream. */
static int emit(lp_output *out, const unsigned char *p, size_t n, bool finish, lp_error *err)
{
	if (out->compress == LP_COMPRESS_GZIP) {
		out->zs.next_in = (Bytef *)p;
		out->zs.avail_in = (uInt)n;
		int zr;
		do {
			out->zs.next_out = out->zbuf;
			out->zs.avail_out = OUTPUT_BUFFER_SIZE;
			zr = deflate(&out->zs, finish ? Z_FINISH : Z_NO_FLUSH);
			if (zr == Z_STREAM_ERROR)
				return lp_fail(err, LP_EIO, "cannot write %s: gzip compression failed",
					       out->name);
			int r = write_all(out, out->zbuf, OUTPUT_BUFFER_SIZE - out->zs.avail_out, err);
			if (r)
				return r;
		} while (out->zs.avail_in > 0 || out->zs.avail_out == 0 || (finish && zr != Z_STREAM_END));
		return 0;
	}
	if (out->compress == LP_COMPRESS_ZSTD) {
		ZSTD_inBuffer in = {p, n, 0};
		size_t left;
		do {
			ZSTD_outBuffer zout = {out->zbuf, OUTPUT_BUFFER_SIZE, 0};
			left = ZSTD_compressStream2(out->zcs, &zout, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left))
				return lp_fail(err, LP_EIO, "cannot write %s: zstd compression failed: %s",
					       out->name, ZSTD_getErrorName(left));
			int r = write_all(out, out->zbuf, zout.pos, err);
			if (r)
				return r;
		} while (in.pos < in.size || (finish && left != 0));
		return 0;
	}
	return write_all(out, p, n, err);
}

int lp_output_write(lp_output *out, const void *buf, size_t n, lp_error *err)
{
	/* Writers buffer on their own; a write of half a buffer or more goes
	 * straight out rather than being copied once more. */
	bool large = n >= OUTPUT_BUFFER_SIZE / 2;
	if (!large && out->used + n <= OUTPUT_BUFFER_SIZE) {
		memcpy(out->buf + out->used, buf, n);
		out->used += n;
		return 0;
	}
	int r = emit(out, out->buf, out->used, false, err);
	out->used = 0;
	if (r)
		return r;
	if (large)
		return emit(out, buf, n, false, err);
	memcpy(out->buf, buf, n);
	out->used = n;
	return 0;
}

static int output_finish(lp_output *out, lp_error *err)
{
	int r = emit(out, out->buf, out->used, true, err);
	out->used = 0;
	if (!r && out->staged)
		r = lp_sync_fd(out->fd, out->name, err);
	if (!r && out->own_fd) {
		int fd = out->fd;
		out->fd = -1;
		if (close(fd) < 0)
			r = write_failed(out, err);
	}
	return r;
}

int lp_output_stage(lp_output *out, int rc, lp_staged **staged, lp_error *err)
{
	if (!rc)
		rc = output_finish(out, err);
	*staged = NULL;
	if (!rc) {
		*staged = out->staged;
		out->staged = NULL;
	}
	output_free(out);
	return rc;
}

int lp_output_commit(lp_output *out, lp_error *err)
{
	lp_staged *s;
	int rc = lp_output_stage(out, 0, &s, err);
	return rc ? rc : lp_stage_publish(&s, 1, err);
}

void lp_output_abort(lp_output *out)
{
	if (out)
		output_free(out);
}

const char *lp_output_name(const lp_output *out) { return out->name; }
