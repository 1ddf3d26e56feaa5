/* Input byte streams: a file or standard input, with gzip and zstd content
 * decompressed on the fly. The compression is told by magic bytes, so a
 * renamed or piped file is read correctly.
 *
 * An input opened with the default buffer decompresses on a thread of its
 * own, a chunk ahead of its reader: a small fixed ring of chunks goes to
 * the reader full and comes back empty. The thread decodes exactly as the
 * reader would (decode below); a chunk whose decoding failed carries the
 * error instead of its bytes, so the reader sees the same bytes, then the
 * same error, as without the thread.
 *
 * zstd content in many frames whose headers give their size (as laplace
 * writes its compressed outputs, or pzstd does) is decompressed on every
 * core: that thread only cuts the input into frames, a chunk each, and
 * hands them in order both to a work pool (lp_workpool) and to the
 * reader, which takes each from the pool once done. The pool's workers
 * start at the first such frame, as many as can (a memory limit may allow
 * none: then the reader decompresses each frame as it takes it).
 * One zstd frame decompresses on one core at best (a 5*10^7-reference
 * capture: 0.9 s of a 2-CPU machine's 1.6 s for the whole merge), so a
 * capture in one frame cannot go faster than that.
 * At the first frame that does not fit (no size, over 8 MiB, cut short,
 * not a frame at all) the thread goes on decoding the rest as a stream,
 * which reports whatever is wrong as it always did; a frame that fails in
 * a worker is reported as corrupt in its chunk's turn.
 *
 * Every wait has an end, whatever fails: the pool's (see workpool.h) for
 * a frame; the thread puts every chunk it takes on full and ends only
 * after the last one (the reader's pop); the reader, on closing, hands
 * chunks back until that last one, an error or not (the thread's pop of
 * empty, then its join); the pool's workers end when it is freed after
 * that (their join). The pool holds as many frames as there are chunks,
 * so the thread never waits to give one. */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <glib.h>

#include "io/workpool.h"

#ifndef INPUT_BUFFER_SIZE /* fuzz builds make it small: a buffer per input */
#define INPUT_BUFFER_SIZE (1u << 20)
#endif

/* Chunks between the decompressing thread and the reader: one being
 * read, one being filled, one spare; and one more for each frame worker. */
#define INPUT_RING 3
#define FRAME_WORKERS_MAX 4
/* The largest frame given to a worker: its content, and its compressed
 * bytes (ZSTD_compressBound of it, rounded up). laplace's frames hold 1
 * MiB, pzstd's (at its default level) just under 8 MiB. A chunk holds one
 * frame of each: with the raw buffer, at most 8 * 17 MiB in all. */
#define FRAME_MAX (8u << 20)
#define FRAME_RAW_MAX (FRAME_MAX + (FRAME_MAX >> 7) + (1u << 20))
/* zstd.h's ZSTD_FRAMEHEADERSIZE_MAX, outside its stable interface. */
#define FRAME_HEADER_MAX 18

enum input_codec { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD };

/* Decompressed bytes on their way to the reader. failed: the error is in
 * err instead of bytes. last: the decompressing thread made it and has
 * ended, the input ended or failed; only that thread sets it, so that a
 * reader stopping at a frame a worker could not decompress still hands
 * chunks back until then (stop_decoder) and never waits for a thread that
 * waits for a chunk. A zstd frame (is_frame) is in frame until the pool
 * has decompressed it with the chunk's own context. */
typedef struct in_chunk {
	unsigned char *data;
	size_t cap;           /* data's size */
	size_t len, pos;
	uint64_t file_offset; /* compressed bytes consumed once it was full */
	bool last, failed;
	lp_error err;
	bool is_frame;
	unsigned char *frame;
	size_t frame_len, frame_cap;
	ZSTD_DCtx *dctx;
} in_chunk;

struct lp_input {
	int fd;
	bool own_fd;
	char *name;
	enum input_codec codec;
	/* Raw (possibly compressed) bytes read from fd but not consumed yet. */
	unsigned char *raw;
	size_t raw_size;      /* the buffer's size */
	size_t chunk_size;    /* what a chunk of the stream decoder holds */
	size_t raw_pos, raw_len;
	bool raw_eof;
	uint64_t raw_total;   /* bytes read from fd so far */
	int64_t file_size;
	/* gzip, through ISA-L's inflate (faster than zlib's): a member is in
	 * progress (between its header and its end). */
	struct inflate_state *gz;
	bool gz_in_member;
	ZSTD_DStream *zds;
	size_t zstd_pending;  /* last ZSTD_decompressStream result: 0 between frames */
	bool done;
	/* The decompressing thread, when there is one: chunks go to the reader
	 * through full and come back through empty; current is the one being
	 * read. Once the reader has the last chunk, the thread has ended. */
	GThread *decoder;
	GAsyncQueue *full, *empty;
	in_chunk chunks[INPUT_RING + FRAME_WORKERS_MAX];
	unsigned nchunks;
	in_chunk *current;
	bool decoder_ended;
	gint stop;            /* the reader closes early: the thread ends */
	uint64_t offset_read; /* lp_input_file_offset under the thread */
	/* zstd frames are decompressed on this pool, once a frame is found. */
	lp_workpool *frames;
};

static int read_failed(lp_input *in, lp_error *err)
{
	return lp_fail(err, LP_EIO, "cannot read %s: %s", in->name, g_strerror(errno));
}

/* At the end of a regular file's bytes: a file now shorter than what was
 * read from it shrank while being read (another program truncated it).
 * The bytes read past its new end are no longer the file's, and the end
 * met is not the file's: a torn last record, or none, would be told of
 * bytes that are not there. Returns 0, or LP_EINPUT with err set. */
static int check_shrunk(lp_input *in, lp_error *err)
{
	struct stat st;
	if (in->file_size < 0 || fstat(in->fd, &st) || (uint64_t)st.st_size >= in->raw_total)
		return 0;
	return lp_fail(err, LP_EINPUT, "%s: shrank while being read (to %jd bytes, after %" PRIu64
		       " had been read)", in->name, (intmax_t)st.st_size, in->raw_total);
}

/* Read from fd until n bytes or end of file; returns the count or -1. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Refill the raw buffer once it is empty. Returns 0 or -1 (err set). */
static int refill_raw(lp_input *in, lp_error *err)
{
	if (in->raw_pos < in->raw_len || in->raw_eof)
		return 0;
	ssize_t r = read_full(in->fd, in->raw, in->raw_size);
	if (r < 0)
		return read_failed(in, err), -1;
	in->raw_pos = 0;
	in->raw_len = (size_t)r;
	in->raw_total += (uint64_t)r;
	if ((size_t)r < in->raw_size) {
		in->raw_eof = true;
		if (check_shrunk(in, err))
			return -1;
	}
	return 0;
}

static int corrupt(lp_input *in, const char *codec, const char *what, lp_error *err)
{
	return lp_fail(err, LP_EINPUT, "%s: corrupt %s data: %s", in->name, codec, what);
}

static void start_decoder(lp_input *in);

/* Open path with a raw buffer of buffer_size bytes; threaded: compressed
 * content is decompressed on a thread of its own. */
static lp_input *open_input(const char *path, size_t buffer_size, bool threaded, lp_error *err)
{
	bool is_stdin = !strcmp(path, "-");
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		lp_fail(err, LP_EIO, "cannot open %s: %s", path, g_strerror(errno));
		return NULL;
	}
	lp_input *in = g_new0(lp_input, 1);
	in->fd = fd;
	in->own_fd = !is_stdin;
	in->name = g_strdup(is_stdin ? "<stdin>" : path);
	in->raw_size = buffer_size;
	in->chunk_size = buffer_size;
	in->raw = g_malloc(buffer_size);
	struct stat st;
	in->file_size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
	/* A pipe of 1 MiB (the most an unprivileged process may ask for)
	 * instead of 64 KiB: far fewer wake-ups of the writer and of us, the
	 * system time of `gen --ref - | merge -` down by a third. A refusal
	 * only keeps the default. */
	if (S_ISFIFO(st.st_mode))
		fcntl(fd, F_SETPIPE_SZ, 1 << 20);
	if (refill_raw(in, err) < 0) {
		lp_input_close(in);
		return NULL;
	}
	const unsigned char *m = in->raw;
	if (in->raw_len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
		in->codec = CODEC_GZIP;
		in->gz = g_new(struct inflate_state, 1);
		isal_inflate_init(in->gz);
	} else if (in->raw_len >= 4 && ((m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) ||
					 /* a skippable frame first, as pzstd writes */
					 ((m[0] & 0xf0) == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18))) {
		in->codec = CODEC_ZSTD;
		in->zds = ZSTD_createDStream();
		if (!in->zds || ZSTD_isError(ZSTD_initDStream(in->zds))) {
			lp_fail(err, LP_EIO, "%s: cannot start zstd decompression", in->name);
			lp_input_close(in);
			return NULL;
		}
	}
	if (threaded && in->codec != CODEC_NONE)
		start_decoder(in);
	return in;
}

/* The one input of a reader (a capture's REF or KERN, a file converted):
 * worth a thread. */
lp_input *lp_input_open(const char *path, lp_error *err)
{
	return open_input(path, INPUT_BUFFER_SIZE, true, err);
}

/* One of many inputs open at once (a directory of task files): a thread
 * each, and its chunks, would cost more than they give. */
lp_input *lp_input_open_sized(const char *path, size_t buffer_size, lp_error *err)
{
	return open_input(path, buffer_size, false, err);
}

static ssize_t read_plain(lp_input *in, unsigned char *buf, size_t n, lp_error *err)
{
	size_t got = 0;
	size_t buffered = in->raw_len - in->raw_pos;
	if (buffered) {
		got = MIN(buffered, n);
		memcpy(buf, in->raw + in->raw_pos, got);
		in->raw_pos += got;
	}
	if (got < n && !in->raw_eof) {
		/* Large requests go straight to the caller's buffer. */
		ssize_t r = read_full(in->fd, buf + got, n - got);
		if (r < 0)
			return read_failed(in, err), -1;
		in->raw_total += (uint64_t)r;
		if ((size_t)r < n - got) {
			in->raw_eof = true;
			if (check_shrunk(in, err))
				return -1;
		}
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* What is wrong with gzip data, by isal_inflate's status; the wording is
 * zlib's where it has one. */
static const char *gzip_fault(int status)
{
	switch (status) {
	case ISAL_INVALID_BLOCK: return "invalid block";
	case ISAL_INVALID_SYMBOL: return "invalid code";
	case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER: return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
	case ISAL_NEED_DICT: return "needs a dictionary";
	default: return "cannot decompress";
	}
}

static ssize_t read_gzip(lp_input *in, unsigned char *buf, size_t n, lp_error *err)
{
	struct inflate_state *gz = in->gz;
	size_t got = 0;
	while (got < n) {
		if (refill_raw(in, err) < 0)
			return -1;
		size_t avail = in->raw_len - in->raw_pos;
		if (avail == 0) {
			if (in->gz_in_member)
				return corrupt(in, "gzip", "unexpected end of file", err), -1;
			break;
		}
		if (!in->gz_in_member) {
			/* Another member follows (gzip allows concatenation). */
			isal_inflate_reset(gz);
			gz->crc_flag = ISAL_GZIP;
			in->gz_in_member = true;
		}
		gz->next_in = in->raw + in->raw_pos;
		gz->avail_in = (uint32_t)avail; /* the raw buffer is far smaller */
		gz->next_out = buf + got;
		gz->avail_out = (uint32_t)MIN(n - got, (size_t)UINT32_MAX);
		uint32_t out_before = gz->avail_out;
		int status = isal_inflate(gz);
		if (status < 0 || status == ISAL_NEED_DICT)
			return corrupt(in, "gzip", gzip_fault(status), err), -1;
		/* At a member's end, bytes read ahead are handed back in avail_in. */
		in->raw_pos += avail - gz->avail_in;
		got += out_before - gz->avail_out;
		if (gz->block_state == ISAL_BLOCK_FINISH)
			in->gz_in_member = false;
	}
	return (ssize_t)got;
}

static ssize_t read_zstd(lp_input *in, unsigned char *buf, size_t n, lp_error *err)
{
	ZSTD_outBuffer out = {buf, n, 0};
	while (out.pos < out.size) {
		if (refill_raw(in, err) < 0)
			return -1;
		size_t avail = in->raw_len - in->raw_pos;
		if (avail == 0 && in->zstd_pending == 0)
			break;
		ZSTD_inBuffer zin = {in->raw + in->raw_pos, avail, 0};
		size_t before = out.pos;
		size_t zr = ZSTD_decompressStream(in->zds, &out, &zin);
		if (ZSTD_isError(zr))
			return corrupt(in, "zstd", ZSTD_getErrorName(zr), err), -1;
		in->raw_pos += zin.pos;
		in->zstd_pending = zr;
		/* No input left, no progress, frame unfinished: the file was cut. */
		if (avail == 0 && out.pos == before && zr != 0)
			return corrupt(in, "zstd", "unexpected end of file", err), -1;
	}
	return (ssize_t)out.pos;
}

/* Up to n bytes of content, short only at the end: the decoding itself. */
static ssize_t decode(lp_input *in, void *buf, size_t n, lp_error *err)
{
	switch (in->codec) {
	case CODEC_GZIP: return read_gzip(in, buf, n, err);
	case CODEC_ZSTD: return read_zstd(in, buf, n, err);
	default: return read_plain(in, buf, n, err);
	}
}

/* Frames: read more raw bytes after those not consumed yet, the buffer
 * grown up to FRAME_RAW_MAX if it is full. 0, or -1 (err set). */
static int read_more_raw(lp_input *in, lp_error *err)
{
	size_t avail = in->raw_len - in->raw_pos;
	memmove(in->raw, in->raw + in->raw_pos, avail);
	in->raw_pos = 0;
	in->raw_len = avail;
	if (avail == in->raw_size) {
		in->raw_size = MIN(2 * in->raw_size, (size_t)FRAME_RAW_MAX);
		in->raw = g_realloc(in->raw, in->raw_size);
	}
	ssize_t r = read_full(in->fd, in->raw + avail, in->raw_size - avail);
	if (r < 0)
		return read_failed(in, err), -1;
	in->raw_len += (size_t)r;
	in->raw_total += (uint64_t)r;
	if ((size_t)r < in->raw_size - avail) {
		in->raw_eof = true;
		if (check_shrunk(in, err))
			return -1;
	}
	return 0;
}

/* Cut the next zstd frame into c for a worker: true if there is one that
 * fits, false if the rest is for the stream decoder (or the input ended). */
static bool next_frame(lp_input *in, in_chunk *c)
{
	for (;;) {
		const unsigned char *p = in->raw + in->raw_pos;
		size_t avail = in->raw_len - in->raw_pos;
		if (avail >= FRAME_HEADER_MAX || (in->raw_eof && avail > 0)) {
			/* Skippable frames (pzstd's) have a content size of 0. */
			unsigned long long content = ZSTD_getFrameContentSize(p, avail);
			if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
			    content > FRAME_MAX)
				return false;
			size_t size = ZSTD_findFrameCompressedSize(p, avail);
			if (!ZSTD_isError(size)) {
				if (c->frame_cap < size)
					c->frame = g_realloc(c->frame, c->frame_cap = size);
				memcpy(c->frame, p, size);
				c->frame_len = size;
				in->raw_pos += size;
				if (c->cap < content)
					c->data = g_realloc(c->data, c->cap = (size_t)content);
				c->len = (size_t)content;
				c->pos = 0;
				c->file_offset = in->raw_total - (in->raw_len - in->raw_pos);
				c->last = c->failed = false;
				return true;
			}
		}
		/* Cut short, or not a frame: the stream decoder says which. */
		if (in->raw_eof || avail >= FRAME_RAW_MAX)
			return false;
		lp_error ignored;
		/* A failed read is read again, and reported, by the stream decoder. */
		if (read_more_raw(in, &ignored) < 0)
			return false;
	}
}

/* lp_work_fn: decompress chunk job's frame. */
static int decompress_frame(void *ctx, void *job, lp_error *err)
{
	in_chunk *c = job;
	size_t r = ZSTD_decompressDCtx(c->dctx, c->data, c->len, c->frame, c->frame_len);
	if (!ZSTD_isError(r) && r == c->len)
		return 0;
	c->len = 0;
	return corrupt(ctx, "zstd", ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong frame size", err);
}

/* Ready c, holding a frame, for the pool: the pool and a chunk more for
 * each of its workers, once a frame is found (a stream in one frame needs
 * neither), and c's context. false if c cannot have one. */
static bool frame_job(lp_input *in, in_chunk *c)
{
	if (!in->frames) {
		in->frames = lp_workpool_new("laplace-unzstd", MIN(g_get_num_processors(), FRAME_WORKERS_MAX),
					     INPUT_RING + FRAME_WORKERS_MAX, decompress_frame, in);
		for (unsigned i = 0; i < lp_workpool_threads(in->frames); i++) {
			in_chunk *more = &in->chunks[in->nchunks++];
			more->data = g_malloc(in->chunk_size);
			more->cap = in->chunk_size;
			g_async_queue_push(in->empty, more);
		}
	}
	if (!c->dctx)
		c->dctx = ZSTD_createDCtx();
	return c->is_frame = c->dctx != NULL;
}

static gpointer decoder_main(gpointer data)
{
	lp_input *in = data;
	bool frames = in->codec == CODEC_ZSTD;
	for (;;) {
		in_chunk *c = g_async_queue_pop(in->empty);
		if (frames && !g_atomic_int_get(&in->stop) && next_frame(in, c)) {
			if (frame_job(in, c)) {
				lp_workpool_submit(in->frames, c);
				g_async_queue_push(in->full, c);
				continue;
			}
			in->raw_pos -= c->frame_len; /* no context: a stream after all */
		}
		frames = false;
		c->is_frame = false;
		ssize_t r = g_atomic_int_get(&in->stop) ? 0 : decode(in, c->data, in->chunk_size, &c->err);
		c->failed = r < 0;
		c->len = r < 0 ? 0 : (size_t)r;
		c->pos = 0;
		c->file_offset = in->raw_total - (in->raw_len - in->raw_pos);
		c->last = c->failed || c->len < in->chunk_size;
		g_async_queue_push(in->full, c);
		if (c->last)
			return NULL;
	}
}

static void start_decoder(lp_input *in)
{
	in->full = g_async_queue_new();
	in->empty = g_async_queue_new();
	in->nchunks = INPUT_RING;
	for (size_t i = 0; i < in->nchunks; i++) {
		in->chunks[i].data = g_malloc(in->chunk_size);
		in->chunks[i].cap = in->chunk_size;
		g_async_queue_push(in->empty, &in->chunks[i]);
	}
	in->decoder = g_thread_new("laplace-input", decoder_main, in);
}

/* The next chunk from the decompressing thread, once decompressed: a
 * frame is the oldest in the pool. */
static in_chunk *take_chunk(lp_input *in)
{
	in_chunk *c = g_async_queue_pop(in->full);
	if (c->is_frame) {
		int rc;
		lp_workpool_take(in->frames, &rc, &c->err); /* c: given to both in order */
		c->failed = rc != 0;
	}
	return c;
}

/* lp_input_read from the decompressing thread's chunks. */
static ssize_t read_chunks(lp_input *in, unsigned char *buf, size_t n, lp_error *err)
{
	size_t got = 0;
	while (got < n) {
		if (!in->current) {
			in->current = take_chunk(in);
			in->decoder_ended = in->current->last;
			in->offset_read = in->current->file_offset;
		}
		in_chunk *c = in->current;
		if (c->failed) {
			if (err)
				*err = c->err;
			return -1;
		}
		size_t take = MIN(n - got, c->len - c->pos);
		memcpy(buf + got, c->data + c->pos, take);
		c->pos += take;
		got += take;
		if (c->pos < c->len)
			continue;
		if (c->last)
			break;
		g_async_queue_push(in->empty, c);
		in->current = NULL;
	}
	return (ssize_t)got;
}

/* Stop the decompressing thread: hand back every chunk until the last
 * (a failed one included: the thread has not ended at a frame that failed
 * in the pool); then the pool. */
static void stop_decoder(lp_input *in)
{
	g_atomic_int_set(&in->stop, 1);
	while (!in->decoder_ended) {
		if (in->current)
			g_async_queue_push(in->empty, in->current);
		in->current = take_chunk(in);
		in->decoder_ended = in->current->last;
	}
	g_thread_join(in->decoder);
	in->decoder = NULL;
	lp_workpool_free(in->frames);
	in->frames = NULL;
}

ssize_t lp_input_read(lp_input *in, void *buf, size_t n, lp_error *err)
{
	if (in->done || n == 0)
		return 0;
	ssize_t r = in->decoder ? read_chunks(in, buf, n, err) : decode(in, buf, n, err);
	if (r >= 0 && (size_t)r < n)
		in->done = true;
	return r;
}

int lp_input_skip(lp_input *in, uint64_t n, lp_error *err)
{
	if (in->codec == CODEC_NONE && in->own_fd) {
		size_t buffered = in->raw_len - in->raw_pos;
		if (n <= buffered) {
			in->raw_pos += (size_t)n;
			return 0;
		}
		n -= buffered;
		in->raw_pos = in->raw_len;
		if (lseek(in->fd, (off_t)n, SEEK_CUR) < 0)
			return read_failed(in, err);
		in->raw_total += n;
		return 0;
	}
	unsigned char scratch[16384];
	while (n > 0) {
		ssize_t r = lp_input_read(in, scratch, (size_t)MIN(n, (uint64_t)sizeof scratch), err);
		if (r < 0)
			return err->status;
		if (r == 0)
			break;
		n -= (uint64_t)r;
	}
	return 0;
}

const char *lp_input_name(const lp_input *in) { return in->name; }

int64_t lp_input_file_size(const lp_input *in) { return in->file_size; }

uint64_t lp_input_file_offset(const lp_input *in)
{
	if (in->decoder)
		return in->offset_read;
	return in->raw_total - (in->raw_len - in->raw_pos);
}

void lp_input_close(lp_input *in)
{
	if (!in)
		return;
	if (in->decoder)
		stop_decoder(in);
	if (in->full) {
		g_async_queue_unref(in->full);
		g_async_queue_unref(in->empty);
	}
	for (size_t i = 0; i < in->nchunks; i++) {
		g_free(in->chunks[i].data);
		g_free(in->chunks[i].frame);
		ZSTD_freeDCtx(in->chunks[i].dctx);
	}
	g_free(in->gz);
	ZSTD_freeDStream(in->zds);
	if (in->own_fd)
		close(in->fd);
	g_free(in->raw);
	g_free(in->name);
	g_free(in);
}
