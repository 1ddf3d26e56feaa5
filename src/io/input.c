/* Input byte streams: a file or standard input, with gzip and zstd content
 * decompressed on the fly. The compression is told by magic bytes, so a
 * renamed or piped file is read correctly. */
#include "laplace/io.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <glib.h>

#ifndef INPUT_BUFFER_SIZE /* fuzz builds make it small: a buffer per input */
#define INPUT_BUFFER_SIZE (1u << 20)
#endif

enum input_codec { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD };

struct lp_input {
	int fd;
	bool own_fd;
	char *name;
	enum input_codec codec;
	/* Raw (possibly compressed) bytes read from fd but not consumed yet. */
	unsigned char *raw;
	size_t raw_size;      /* the buffer's size */
	size_t raw_pos, raw_len;
	bool raw_eof;
	uint64_t raw_total;   /* bytes read from fd so far */
	int64_t file_size;
	/* gzip: a member is in progress (between its header and its end). */
	z_stream zs;
	bool gz_in_member;
	ZSTD_DStream *zds;
	size_t zstd_pending;  /* last ZSTD_decompressStream result: 0 between frames */
	bool done;
};

static int read_failed(lp_input *in, lp_error *err)
{
	return lp_fail(err, LP_EIO, "cannot read %s: %s", in->name, g_strerror(errno));
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
	if ((size_t)r < in->raw_size)
		in->raw_eof = true;
	return 0;
}

static int corrupt(lp_input *in, const char *codec, const char *what, lp_error *err)
{
	return lp_fail(err, LP_EINPUT, "%s: corrupt %s data: %s", in->name, codec, what);
}

lp_input *lp_input_open(const char *path, lp_error *err)
{
	return lp_input_open_sized(path, INPUT_BUFFER_SIZE, err);
}

lp_input *lp_input_open_sized(const char *path, size_t buffer_size, lp_error *err)
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
		/* 15 + 16: a gzip wrapper, not zlib or raw deflate. */
		if (inflateInit2(&in->zs, 15 + 16) != Z_OK) {
			lp_fail(err, LP_EIO, "%s: cannot start gzip decompression", in->name);
			lp_input_close(in);
			return NULL;
		}
	} else if (in->raw_len >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
		in->codec = CODEC_ZSTD;
		in->zds = ZSTD_createDStream();
		if (!in->zds || ZSTD_isError(ZSTD_initDStream(in->zds))) {
			lp_fail(err, LP_EIO, "%s: cannot start zstd decompression", in->name);
			lp_input_close(in);
			return NULL;
		}
	}
	return in;
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
		if ((size_t)r < n - got)
			in->raw_eof = true;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static ssize_t read_gzip(lp_input *in, unsigned char *buf, size_t n, lp_error *err)
{
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
			if (inflateReset(&in->zs) != Z_OK)
				return corrupt(in, "gzip", "cannot restart", err), -1;
			in->gz_in_member = true;
		}
		in->zs.next_in = in->raw + in->raw_pos;
		in->zs.avail_in = (uInt)avail;
		in->zs.next_out = buf + got;
		in->zs.avail_out = (uInt)MIN(n - got, (size_t)UINT32_MAX);
		uInt out_before = in->zs.avail_out;
		int zr = inflate(&in->zs, Z_NO_FLUSH);
		in->raw_pos += avail - in->zs.avail_in;
		got += out_before - in->zs.avail_out;
		if (zr == Z_STREAM_END)
			in->gz_in_member = false;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return corrupt(in, "gzip", in->zs.msg ? in->zs.msg : zError(zr), err), -1;
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

ssize_t lp_input_read(lp_input *in, void *buf, size_t n, lp_error *err)
{
	if (in->done || n == 0)
		return 0;
	ssize_t r;
	switch (in->codec) {
	case CODEC_GZIP: r = read_gzip(in, buf, n, err); break;
	case CODEC_ZSTD: r = read_zstd(in, buf, n, err); break;
	default: r = read_plain(in, buf, n, err); break;
	}
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
	return in->raw_total - (in->raw_len - in->raw_pos);
}

void lp_input_close(lp_input *in)
{
	if (!in)
		return;
	if (in->codec == CODEC_GZIP)
		inflateEnd(&in->zs);
	ZSTD_freeDStream(in->zds);
	if (in->own_fd)
		close(in->fd);
	g_free(in->raw);
	g_free(in->name);
	g_free(in);
}
