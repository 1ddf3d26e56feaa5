/* Output byte streams. A regular file is staged (the staging invariants at
 * the top of src/io/staging.c; (3) is upheld here, in output_finish); pipes,
 * terminals and devices are written directly (staging invariant (9)).
 *
 * A compressed output is cut into pieces of OUTPUT_BUFFER_SIZE bytes, each
 * its own gzip member or zstd frame (as task files are, taskcodec.h),
 * compressed by a pool of one thread per processor (8 at most) and written
 * in order by the caller. Independent pieces compress on every core with
 * nothing shared (zstd's own workers took more CPU and time for the same
 * text: bench/RESULTS.md, "Outputs in pieces"), the bytes are the same
 * however many threads compress them, and a reader can decompress such a
 * file on every core too. gzip goes through ISA-L's igzip (several times
 * faster than zlib at a like ratio). */
#include "io/io.h"

#include "io/staging.h"
#include "io/taskcodec.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#define OUTPUT_BUFFER_SIZE (1u << 20)
/* Compressing threads of an output at most: 8 compress faster than any
 * merge writes, and each holds its pieces (2 MiB a thread). */
#define OUTPUT_THREADS_MAX 8u
struct lp_output {
	int fd;
	bool own_fd;
	char *name;      /* the path as given, or "<stdout>" */
	lp_staged *staged; /* NULL when writing directly */
	enum lp_compress compress;
	int level;
	unsigned char *buf; /* bytes waiting: a piece being filled when compressed */
	size_t used;
	lp_piece_pool *pool; /* compressed outputs only */
	size_t unstarted;    /* staged: bytes written since the writeback started */
	bool piece_sent;     /* an empty compressed output still gets one */
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

enum lp_compress lp_compress_for(const char *path, enum lp_compress compress)
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
	lp_piece_pool_free(out->pool);
	if (out->own_fd && out->fd >= 0)
		close(out->fd);
	lp_staged_discard(out->staged);
	g_free(out->name);
	g_free(out->buf);
	g_free(out);
}

/* The common part of opening: path for messages; fd the descriptor to
 * write to, or -1 with errno set. */
static lp_output *output_new(const char *path, int fd, enum lp_compress compress, int level)
{
	int open_errno = errno;
	lp_output *out = g_new0(lp_output, 1);
	out->fd = fd;
	out->name = g_strdup(path);
	out->compress = compress;
	out->level = level;
	out->buf = g_malloc(OUTPUT_BUFFER_SIZE);
	errno = open_errno;
	return out;
}

static int write_piece(void *ctx, void *file, const void *data, size_t n, lp_error *err);

/* Check the descriptor and start compressing; frees out on failure. */
static lp_output *output_start(lp_output *out, lp_error *err)
{
	if (out->fd < 0) {
		lp_fail(err, LP_EIO, "cannot open %s: %s", out->name, g_strerror(errno));
		output_free(out);
		return NULL;
	}
	if (out->compress != LP_COMPRESS_NONE) {
		int lowest, highest, level = lp_compress_level(out->compress, out->level);
		if (lp_compress_levels(out->compress, &lowest, &highest) && level >= lowest &&
		    level <= highest)
			out->pool = lp_piece_pool_new(out->compress, level, OUTPUT_BUFFER_SIZE,
						      MIN(g_get_num_processors(), OUTPUT_THREADS_MAX),
						      write_piece, out);
		if (!out->pool) {
			lp_fail(err, LP_EIO, "%s: cannot start compression", out->name);
			output_free(out);
			return NULL;
		}
	}
	return out;
}

/* A staged output: target names the file (as lp_stage_file takes it),
 * shown is the name for messages. */
static lp_output *open_staged(int dir_fd, const char *target, const char *shown,
			      enum lp_compress compress, int level, lp_error *err)
{
	lp_staged *staged = NULL;
	lp_output *out = output_new(shown, lp_stage_file(dir_fd, target, &staged),
				    lp_compress_for(shown, compress), level);
	out->own_fd = true;
	out->staged = staged;
	return output_start(out, err);
}

/* The descriptor, standard output's or error's, already open on the
 * regular file st describes (as /dev/stdout or /proc/self/fd/1 names it
 * when the shell redirected it to a file), or -1. Such a file is written
 * through that descriptor, not staged: a staged copy renamed over it would
 * drop what the descriptor wrote, and what it held before (>>). */
static int standard_fd(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return -1;
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		struct stat open_st;
		if (fstat(fd, &open_st) == 0 && open_st.st_dev == st->st_dev &&
		    open_st.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

lp_output *lp_output_open(const char *path, enum lp_compress compress, lp_error *err)
{
	return lp_output_open_level(path, compress, LP_LEVEL_DEFAULT, err);
}

lp_output *lp_output_open_level(const char *path, enum lp_compress compress, int level,
				lp_error *err)
{
	if (!path || !strcmp(path, "-"))
		return output_start(output_new("<stdout>", STDOUT_FILENO,
					       lp_compress_for(NULL, compress), level),
				    err);
	struct stat st;
	bool exists = stat(path, &st) == 0;
	int standard = exists ? standard_fd(&st) : -1;
	if (standard >= 0)
		return output_start(output_new(path, standard, lp_compress_for(path, compress),
					       level),
				    err);
	if (exists && !S_ISREG(st.st_mode)) {
		lp_output *out = output_new(path, open(path, O_WRONLY | O_CLOEXEC),
					    lp_compress_for(path, compress), level);
		out->own_fd = true;
		return output_start(out, err);
	}
	/* Replace what a symbolic link points to, not the link: renaming
	 * over /dev/stdout, say, would break the system. */
	char *resolved = realpath(path, NULL);
	lp_output *out = open_staged(AT_FDCWD, resolved ? resolved : path, path, compress, level,
				     err);
	free(resolved);
	return out;
}

lp_output *lp_output_open_in(int dir_fd, const char *path, enum lp_compress compress,
			     lp_error *err)
{
	return open_staged(dir_fd, path, path, compress, LP_LEVEL_DEFAULT, err);
}

lp_output *lp_output_open_in_level(int dir_fd, const char *path, enum lp_compress compress,
				   int level, lp_error *err)
{
	return open_staged(dir_fd, path, path, compress, level, err);
}

static int write_failed(lp_output *out, lp_error *err)
{
	return lp_fail(err, LP_EIO, "cannot write %s: %s", out->name, g_strerror(errno));
}

static int write_all(lp_output *out, const unsigned char *p, size_t n, lp_error *err)
{
	size_t total = n;
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
	if (out->staged)
		lp_stage_wrote(out->fd, &out->unstarted, total);
	return 0;
}

/* lp_piece_write_fn: a compressed piece, in order. */
static int write_piece(void *ctx, void *file, const void *data, size_t n, lp_error *err)
{
	(void)file;
	return write_all(ctx, data, n, err);
}

/* The bytes waiting in buf: to the pool as a piece, or to the file. */
static int flush_buf(lp_output *out, lp_error *err)
{
	int r;
	if (out->pool) {
		void *piece = out->buf; /* handed over, and another taken back */
		r = lp_piece_pool_give(out->pool, NULL, out->name, &piece, out->used, err);
		out->buf = piece;
		out->piece_sent = true;
	} else {
		r = write_all(out, out->buf, out->used, err);
	}
	out->used = 0;
	return r;
}

int lp_output_write(lp_output *out, const void *buf, size_t n, lp_error *err)
{
	/* A plain output's write of half a buffer or more goes straight out
	 * rather than being copied once more; a compressed one is cut into
	 * pieces of exactly OUTPUT_BUFFER_SIZE bytes, whatever the calls. */
	if (!out->pool && n >= OUTPUT_BUFFER_SIZE / 2) {
		int r = out->used ? flush_buf(out, err) : 0;
		return r ? r : write_all(out, buf, n, err);
	}
	const unsigned char *p = buf;
	while (n > 0) {
		if (out->used == OUTPUT_BUFFER_SIZE) {
			int r = flush_buf(out, err);
			if (r)
				return r;
		}
		size_t take = MIN(n, OUTPUT_BUFFER_SIZE - out->used);
		memcpy(out->buf + out->used, p, take);
		out->used += take;
		p += take;
		n -= take;
	}
	return 0;
}

bool lp_output_rereadable(const lp_output *out)
{
	return out->staged && !out->pool;
}

int lp_output_pwrite(lp_output *out, const void *buf, size_t n, uint64_t at, lp_error *err)
{
	int r = out->used ? flush_buf(out, err) : 0;
	for (const unsigned char *p = buf; !r && n > 0;) {
		ssize_t w = pwrite(out->fd, p, n, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0)
			errno = ENOSPC; /* nothing taken: as a full disk */
		if (w <= 0)
			return write_failed(out, err);
		p += w;
		n -= (size_t)w;
		at += (uint64_t)w;
	}
	return r;
}

int lp_output_pread(lp_output *out, void *buf, size_t n, uint64_t at, lp_error *err)
{
	int r = out->used ? flush_buf(out, err) : 0;
	for (unsigned char *p = buf; !r && n > 0;) {
		ssize_t got = pread(out->fd, p, n, (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return lp_fail(err, LP_EIO, "cannot read back %s: %s", out->name,
				       got < 0 ? g_strerror(errno) : "it is shorter than written");
		p += got;
		n -= (size_t)got;
		at += (uint64_t)got;
	}
	return r;
}

void lp_output_settled(lp_output *out, uint64_t at, size_t n)
{
	lp_stage_settled(out->fd, at, n);
}

/* Write what is left: the last piece (an empty output is one empty member
 * or frame) and every piece still being compressed. */
static int flush_all(lp_output *out, lp_error *err)
{
	if (!out->pool)
		return out->used ? flush_buf(out, err) : 0;
	int r = out->used || !out->piece_sent ? flush_buf(out, err) : 0;
	return r ? r : lp_piece_pool_drain(out->pool, err);
}

static int output_finish(lp_output *out, lp_error *err)
{
	int r = flush_all(out, err);
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
