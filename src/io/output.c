/* Output byte streams. A regular file is staged (the staging invariants at
 * the top of src/io/staging.c; (3) is upheld here, in output_finish); pipes,
 * terminals and devices are written directly (staging invariant (9)).
 *
 * A compressed output is compressed and written by a thread of its own: the
 * caller fills buffers of a small fixed ring and hands each one over full,
 * so compressing overlaps the work that produces the bytes. gzip goes
 * through ISA-L's igzip (several times faster than zlib at a like ratio,
 * bench/RESULTS.md); zstd also runs the library's own workers. */
#include "laplace/io.h"

#include "laplace/staging.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <glib.h>

#define OUTPUT_BUFFER_SIZE (1u << 20)
/* Buffers between the caller and the compressing thread: one being filled,
 * one being compressed, and one spare so neither side waits on a swap. */
#define OUTPUT_RING 3
/* Defaults chosen for speed (bench/RESULTS.md, "Fast codecs"), for every
 * output and every piece of a task file: igzip's 1 was 6 times faster
 * than zlib's 1; on task files zstd's 1 compressed as well as its 3 (6.83
 * against 6.90 MB of 27.2) in a third of the time. */
#define GZIP_LEVEL 1
#define ZSTD_LEVEL 1
#define ZSTD_LEVEL_MAX 19 /* beyond it zstd wants --ultra's memory */
#define ZSTD_LEVEL_MIN (-7) /* zstd --fast=7: faster still, much larger */

/* A buffer passed to the compressing thread; finish marks the last. */
typedef struct out_chunk {
	unsigned char *data;
	size_t len;
	bool finish;
} out_chunk;

struct lp_output {
	int fd;
	bool own_fd;
	char *name;      /* the path as given, or "<stdout>" */
	lp_staged *staged; /* NULL when writing directly */
	enum lp_compress compress;
	int level;
	unsigned char *buf; /* uncompressed bytes waiting */
	size_t used;
	unsigned char *zbuf; /* compressed bytes on their way out */
	size_t zused;
	struct isal_zstream *gz;
	ZSTD_CStream *zcs;
	/* The compressing thread (compressed outputs only): chunks travel to
	 * it through full and come back through empty; current is the one
	 * being filled (its data is buf). */
	GThread *writer;
	GAsyncQueue *full, *empty;
	out_chunk chunks[OUTPUT_RING];
	out_chunk *current;
	/* Set by the thread when it fails, err_thread then final; the caller
	 * reports it at its next hand-over. */
	gint failed;
	lp_error err_thread;
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

/* Stop the compressing thread, if any, without ending the stream. */
static void writer_stop(lp_output *out)
{
	if (!out->writer)
		return;
	out_chunk *stop = out->current;
	stop->len = 0;
	stop->finish = false;
	g_async_queue_push(out->full, stop);
	g_thread_join(out->writer);
	out->writer = NULL;
	out->current = NULL;
}

static void output_free(lp_output *out)
{
	writer_stop(out);
	if (out->full)
		g_async_queue_unref(out->full);
	if (out->empty)
		g_async_queue_unref(out->empty);
	for (size_t i = 0; i < OUTPUT_RING; i++)
		if (out->chunks[i].data != out->buf)
			g_free(out->chunks[i].data);
	if (out->gz) {
		g_free(out->gz->level_buf);
		g_free(out->gz);
	}
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

int lp_compress_level(enum lp_compress codec, int level)
{
	if (level != LP_LEVEL_DEFAULT)
		return level;
	return codec == LP_COMPRESS_GZIP ? GZIP_LEVEL : ZSTD_LEVEL;
}

uint32_t lp_igzip_level_buf_size(int level)
{
	static const uint32_t size[ISAL_DEF_MAX_LEVEL + 1] = {
		ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
		ISAL_DEF_LVL3_DEFAULT,
	};
	return size[level];
}

static bool start_gzip(lp_output *out)
{
	int level = lp_compress_level(LP_COMPRESS_GZIP, out->level);
	if (level < ISAL_DEF_MIN_LEVEL || level > ISAL_DEF_MAX_LEVEL)
		return false;
	out->gz = g_new0(struct isal_zstream, 1);
	isal_deflate_init(out->gz);
	out->gz->gzip_flag = IGZIP_GZIP;
	out->gz->level = (uint32_t)level;
	out->gz->level_buf_size = lp_igzip_level_buf_size(level);
	out->gz->level_buf = out->gz->level_buf_size ? g_malloc(out->gz->level_buf_size) : NULL;
	return true;
}

static bool start_zstd(lp_output *out)
{
	int level = lp_compress_level(LP_COMPRESS_ZSTD, out->level);
	out->zcs = ZSTD_createCStream();
	/* Workers fail to start only in a zstd built without threads: it then
	 * compresses on the output's own thread, which is still correct. */
	return out->zcs &&
	       !ZSTD_isError(ZSTD_CCtx_setParameter(out->zcs, ZSTD_c_compressionLevel, level)) &&
	       (ZSTD_CCtx_setParameter(out->zcs, ZSTD_c_nbWorkers, (int)g_get_num_processors()),
		true);
}

static gpointer writer_main(gpointer data);

/* Check the descriptor and start compressing; frees out on failure. */
static lp_output *output_start(lp_output *out, lp_error *err)
{
	if (out->fd < 0) {
		lp_fail(err, LP_EIO, "cannot open %s: %s", out->name, g_strerror(errno));
		output_free(out);
		return NULL;
	}
	bool started = true;
	if (out->compress == LP_COMPRESS_GZIP)
		started = start_gzip(out);
	else if (out->compress == LP_COMPRESS_ZSTD)
		started = start_zstd(out);
	if (!started) {
		lp_fail(err, LP_EIO, "%s: cannot start compression", out->name);
		output_free(out);
		return NULL;
	}
	if (out->compress != LP_COMPRESS_NONE) {
		out->zbuf = g_malloc(OUTPUT_BUFFER_SIZE);
		out->full = g_async_queue_new();
		out->empty = g_async_queue_new();
		out->chunks[0].data = out->buf;
		for (size_t i = 1; i < OUTPUT_RING; i++) {
			out->chunks[i].data = g_malloc(OUTPUT_BUFFER_SIZE);
			g_async_queue_push(out->empty, &out->chunks[i]);
		}
		out->current = &out->chunks[0];
		out->writer = g_thread_new("laplace-output", writer_main, out);
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
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
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

/* Write the compressed bytes waiting in zbuf once it is full, or with
 * finish whatever is there: whole buffers only, so that how a compressed
 * file is cut into writes does not hang on the codec's timing. */
static int drain_zbuf(lp_output *out, bool finish, lp_error *err)
{
	if (out->zused < OUTPUT_BUFFER_SIZE && !(finish && out->zused > 0))
		return 0;
	int r = write_all(out, out->zbuf, out->zused, err);
	out->zused = 0;
	return r;
}

/* Push n bytes through the compressor (if any) to the file; with finish,
 * also end the compressed stream. */
static int emit(lp_output *out, const unsigned char *p, size_t n, bool finish, lp_error *err)
{
	if (out->compress == LP_COMPRESS_GZIP) {
		struct isal_zstream *gz = out->gz;
		gz->next_in = (uint8_t *)p;
		gz->avail_in = (uint32_t)n; /* n is at most OUTPUT_BUFFER_SIZE */
		gz->end_of_stream = finish;
		bool ended;
		do {
			gz->next_out = out->zbuf + out->zused;
			gz->avail_out = (uint32_t)(OUTPUT_BUFFER_SIZE - out->zused);
			if (isal_deflate(gz) != COMP_OK)
				return lp_fail(err, LP_EIO, "cannot write %s: gzip compression failed",
					       out->name);
			out->zused = OUTPUT_BUFFER_SIZE - gz->avail_out;
			ended = finish && gz->internal_state.state == ZSTATE_END;
			int r = drain_zbuf(out, ended, err);
			if (r)
				return r;
		} while (gz->avail_in > 0 || (finish && !ended));
		return 0;
	}
	if (out->compress == LP_COMPRESS_ZSTD) {
		ZSTD_inBuffer in = {p, n, 0};
		size_t left;
		do {
			ZSTD_outBuffer zout = {out->zbuf, OUTPUT_BUFFER_SIZE, out->zused};
			left = ZSTD_compressStream2(out->zcs, &zout, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left))
				return lp_fail(err, LP_EIO, "cannot write %s: zstd compression failed: %s",
					       out->name, ZSTD_getErrorName(left));
			out->zused = zout.pos;
			int r = drain_zbuf(out, finish && left == 0, err);
			if (r)
				return r;
		} while (in.pos < in.size || (finish && left != 0));
		return 0;
	}
	return write_all(out, p, n, err);
}

/* The compressing thread: emit every chunk handed over until the last one
 * (or a stop, len 0 without finish); after a failure, only hand the
 * chunks back. */
static gpointer writer_main(gpointer data)
{
	lp_output *out = data;
	for (;;) {
		out_chunk *c = g_async_queue_pop(out->full);
		bool stop = !c->finish && c->len == 0;
		if (!stop && !g_atomic_int_get(&out->failed) &&
		    emit(out, c->data, c->len, c->finish, &out->err_thread))
			g_atomic_int_set(&out->failed, 1);
		if (stop || c->finish)
			return NULL;
		g_async_queue_push(out->empty, c);
	}
}

static int writer_failure(lp_output *out, lp_error *err)
{
	if (err)
		*err = out->err_thread;
	return out->err_thread.status;
}

/* Hand the current chunk (its used bytes) to the compressing thread and
 * take an empty one. */
static int hand_over(lp_output *out, lp_error *err)
{
	out->current->len = out->used;
	out->current->finish = false;
	g_async_queue_push(out->full, out->current);
	out->current = g_async_queue_pop(out->empty);
	out->buf = out->current->data;
	out->used = 0;
	return g_atomic_int_get(&out->failed) ? writer_failure(out, err) : 0;
}

int lp_output_write(lp_output *out, const void *buf, size_t n, lp_error *err)
{
	if (out->writer) {
		const unsigned char *p = buf;
		while (n > 0) {
			if (out->used == OUTPUT_BUFFER_SIZE) {
				int r = hand_over(out, err);
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

/* Write what is left and end the stream: the compressing thread's last
 * chunk, or directly. */
static int flush_all(lp_output *out, lp_error *err)
{
	if (!out->writer) {
		int r = emit(out, out->buf, out->used, true, err);
		out->used = 0;
		return r;
	}
	out->current->len = out->used;
	out->current->finish = true;
	g_async_queue_push(out->full, out->current);
	g_thread_join(out->writer);
	out->writer = NULL;
	out->used = 0;
	/* The thread no longer hands chunks back: keep buf (freed with out)
	 * pointing at one it holds no more. */
	out->buf = out->current->data;
	out->current = NULL;
	return g_atomic_int_get(&out->failed) ? writer_failure(out, err) : 0;
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
