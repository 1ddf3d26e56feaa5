/* A per-process merge directory read for re-scheduling: index.yaml, the
 * units of every task file, and their records as streams.
 *
 * A stream remembers where it stands in its file (byte offset, line,
 * previous timestamp); only the streams being read hold an open file, at
 * most max_open of them, the least recently read closed first. A plain
 * file is reopened with a seek; a compressed one is decompressed again up
 * to the offset. */
#include "laplace/taskdir.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "laplace/byteorder.h"
#include "laplace/inbuf.h"
#include "laplace/io.h"
#include "laplace/kern.h"
#include "laplace/procindex.h"
#include "laplace/record.h"
#include "laplace/refio.h"
#include "laplace/numbers.h"

/* Buffers of an open stream: small, as many streams may be open. */
#define STREAM_INPUT_BUFFER (64 * 1024)
#define STREAM_LINE_BUFFER (64 * 1024)

typedef struct td_file {
	char *path;   /* dir/relative path */
	uint64_t pid, tid;
} td_file;

typedef struct td_reader td_reader;

typedef struct td_stream {
	size_t file;
	uint64_t offset;   /* bytes of the (decompressed) file before the next line */
	uint64_t line_base_offset; /* where line counting began: a unit's start */
	uint64_t line;     /* lines read since then */
	uint64_t prev_ts;  /* timestamp of the last record read */
	bool ended;        /* its file's end, or a unit stream's X, was read */
	enum { PENDING_NONE, PENDING_REF, PENDING_EVENT } pending; /* read, not yet taken */
	lp_sched_ref pending_ref;
	lp_sched_event pending_event;
	td_reader *reader; /* NULL while closed */
} td_stream;

struct td_reader {
	lp_input *in;
	lp_inbuf buf;
	td_stream *stream;
	td_reader *newer, *older;
};

struct lp_taskdir {
	lp_taskdir_options opt;
	td_file *files;
	size_t nfiles;
	lp_sched_file *sched_files;
	GArray *units;          /* lp_sched_unit */
	GArray *unit_starts;    /* td_stream: where each unit begins */
	td_stream *streams;
	size_t nstreams;
	td_reader *newest, *oldest;
	unsigned nopen;
	char **paths;           /* lp_taskdir_paths */
	lp_sched_input input;
};

/* ---- lines ---- */

static const char event_tags[] = "FTESXMUBKGHDQCV";

/* Parse a reference line "type timestamp length vpn canonical" into *ref;
 * -1 with err naming the field (no file or line). */
static int parse_reference(const char *s, size_t len, lp_sched_ref *ref, lp_error *err)
{
	static const char *const fields[] = {"timestamp", "length", "vpn", "canonical"};
	static const int field_bits[] = {64, 8, 20, 64}; /* a byte; a 32-bit address's page */
	if (lp_ref_type_index(s[0]) < 0 || (len > 1 && s[1] != ' '))
		return lp_fail(err, LP_EINPUT, "field type: not one of r w i R W I, nor an event tag");
	const char *p = s + 1, *end = s + len;
	uint64_t values[4];
	for (size_t f = 0; f < 4; f++) {
		if (p >= end || *p != ' ' || p + 1 >= end)
			return lp_fail(err, LP_EINPUT, "field %s: missing", fields[f]);
		const char *start = ++p;
		p = memchr(start, ' ', (size_t)(end - start));
		if (!p)
			p = end;
		if (lp_parse_hex(start, (size_t)(p - start), &values[f]) < 0 ||
		    (field_bits[f] < 64 && values[f] >> field_bits[f]))
			return lp_fail(err, LP_EINPUT, "field %s: not a hex number of at most %d bits",
				       fields[f], field_bits[f]);
	}
	if (p != end)
		return lp_fail(err, LP_EINPUT, "more than five fields");
	ref->type = s[0];
	ref->timestamp = values[0];
	ref->canonical = values[3];
	return 0;
}

/* One record of a task, kernel or orphan file: a reference (1, *ref
 * set) or an event (0, *ev set); -1 with err naming the field. line is
 * NUL-terminated and may be changed. */
static int parse_record(char *line, size_t len, lp_sched_ref *ref, lp_sched_event *ev, lp_error *err)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (len == 0)
		return lp_fail(err, LP_EINPUT, "an empty line is not a per-process record"), -1;
	if (!(len >= 2 && line[1] == ' ' && strchr(event_tags, line[0])))
		return parse_reference(line, len, ref, err) ? -1 : 1;
	lp_event event;
	if (lp_kern_parse_line(line, len, &event, err) < 0)
		return -1;
	*ev = (lp_sched_event){.tag = line[0], .timestamp = event.timestamp};
	if (event.tag == LP_TAG_F || event.tag == LP_TAG_T) {
		ev->parent = event.f[0];
		ev->child = event.f[1];
	} else if (event.tag == LP_TAG_X) {
		ev->task = event.f[0];
	}
	return 0;
}

/* The hot path reads eight bytes at a time: a field's digits are
 * classified, counted and packed into its value with no loop over them,
 * so that neither their number nor their case costs a branch. */
#define BYTES(b) (UINT64_C(0x0101010101010101) * (b))

/* 0x80 in each byte of w that is a hex digit (either case), 0 elsewhere:
 * with the high bit cleared, adding 0x80 - lo sets a byte's high bit
 * exactly when the byte is at least lo, and no byte carries into the next. */
static inline uint64_t hex_digit_bytes(uint64_t w)
{
	uint64_t x = w & ~BYTES(0x80), folded = x | BYTES(0x20);
	uint64_t digit = (x + BYTES(0x80 - '0')) & ~(x + BYTES(0x80 - '9' - 1));
	uint64_t letter = (folded + BYTES(0x80 - 'a')) & ~(folded + BYTES(0x80 - 'f' - 1));
	return (digit | letter) & ~w & BYTES(0x80);
}

/* The value of the hex digits in w's bytes, the first the most
 * significant; bytes that are 0 count as leading zeros. Each byte becomes
 * its digit's value ('a' to 'f' and 'A' to 'F' have bit 6 set and a low
 * nibble 9 less), then neighbours merge: pairs, quads, the eight. */
static inline uint64_t hex_digits_value(uint64_t w, unsigned digits)
{
	uint64_t x = (w & BYTES(0x0f)) + ((w >> 6) & BYTES(1)) * 9;
	x <<= 8 * (8 - digits); /* the bytes past the digits out, zeros in front */
	x = ((x << 4) | (x >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
	x = ((x << 8) | (x >> 16)) & UINT64_C(0x0000ffff0000ffff);
	return ((x << 16) | (x >> 32)) & UINT64_C(0xffffffff);
}

/* How many of w's bytes, from the first, are hex digits (8: all). */
static inline unsigned hex_digit_run(uint64_t w)
{
	uint64_t others = ~hex_digit_bytes(w) & BYTES(0x80);
	return others ? (unsigned)__builtin_ctzll(others) / 8 : 8;
}

/* The number of hex digits at s, from 1 to 16, with their value in
 * *value; 0 for none or more than 16. Reads 16 bytes. Inlined by force:
 * called, it cost a quarter of the hot path's instructions in saving
 * registers and reloading its constants. */
static inline __attribute__((always_inline)) unsigned hex_number(const unsigned char *s, uint64_t *value)
{
	uint64_t w = lp_load_u64(s, false);
	unsigned digits = hex_digit_run(w);
	if (digits < 8) {
		*value = digits ? hex_digits_value(w, digits) : 0;
		return digits;
	}
	uint64_t w2 = lp_load_u64(s + 8, false);
	unsigned more = hex_digit_run(w2);
	*value = hex_digits_value(w, 8);
	if (more == 8)
		return 0;
	if (more)
		*value = *value << 4 * more | hex_digits_value(w2, more);
	return 8 + more;
}

/* The hot path: a well-formed reference line "type ts length vpn
 * canonical\n" lying whole in [p, end). Returns the byte after its '\n'
 * with *ref set, or NULL for anything else (another record, a line near
 * the end of the buffer, a line with an error, trailing spaces, a length
 * or vpn written with leading zeros), which the careful path
 * (next_record) then reads and, if need be, explains. A length of at
 * most two digits is a byte and a vpn of at most five 20 bits: their
 * values are not needed, only their digits counted. */
static inline const char *fast_reference(const char *p, const char *end, lp_sched_ref *ref)
{
	static const bool is_type[256] = {['r'] = 1, ['w'] = 1, ['i'] = 1, ['R'] = 1, ['W'] = 1, ['I'] = 1};
	/* The longest line taken here, and the 16 bytes its last field reads. */
	if (end - p < 2 + 17 + 3 + 6 + 17 || !is_type[(unsigned char)p[0]] || p[1] != ' ')
		return NULL;
	const unsigned char *q = (const unsigned char *)p + 2;
	uint64_t timestamp, canonical;
	unsigned digits = hex_number(q, &timestamp);
	if (!digits || q[digits] != ' ')
		return NULL;
	q += digits + 1;
	/* The length and the vpn from one word, unless the vpn ends past it. */
	uint64_t others = ~hex_digit_bytes(lp_load_u64(q, false)) & BYTES(0x80);
	digits = others ? (unsigned)__builtin_ctzll(others) / 8 : 8;
	if (digits - 1 > 1 || q[digits] != ' ') /* unsigned: 0 digits fails too */
		return NULL;
	q += digits + 1;
	others >>= 8 * (digits + 1);
	digits = others ? (unsigned)__builtin_ctzll(others) / 8 : hex_digit_run(lp_load_u64(q, false));
	if (digits - 1 > 4 || q[digits] != ' ')
		return NULL;
	q += digits + 1;
	digits = hex_number(q, &canonical);
	if (!digits || q[digits] != '\n')
		return NULL;
	ref->type = p[0];
	ref->timestamp = timestamp;
	ref->canonical = canonical;
	return (const char *)q + digits + 1;
}

/* ---- the open set ---- */

static void list_unlink(lp_taskdir *t, td_reader *r)
{
	if (r->newer)
		r->newer->older = r->older;
	else
		t->newest = r->older;
	if (r->older)
		r->older->newer = r->newer;
	else
		t->oldest = r->newer;
	r->newer = r->older = NULL;
}

static void list_push_newest(lp_taskdir *t, td_reader *r)
{
	r->older = t->newest;
	r->newer = NULL;
	if (t->newest)
		t->newest->newer = r;
	else
		t->oldest = r;
	t->newest = r;
}

static void reader_close(lp_taskdir *t, td_reader *r)
{
	list_unlink(t, r);
	r->stream->reader = NULL;
	lp_inbuf_free(&r->buf);
	lp_input_close(r->in);
	g_free(r);
	t->nopen--;
}

/* Open s's file (closing the least recently read one if need be) and
 * skip to where s stands. Returns 0 or an lp_status. */
static int stream_open(lp_taskdir *t, td_stream *s, lp_error *err)
{
	if (t->nopen >= t->opt.max_open)
		reader_close(t, t->oldest);
	const char *path = t->files[s->file].path;
	lp_input *in = lp_input_open_sized(path, STREAM_INPUT_BUFFER, err);
	if (!in)
		return err->status;
	if (s->offset && lp_input_skip(in, s->offset, err)) {
		lp_input_close(in);
		return err->status;
	}
	td_reader *r = g_new0(td_reader, 1);
	r->in = in;
	r->stream = s;
	lp_inbuf_init_sized(&r->buf, in, STREAM_LINE_BUFFER);
	s->reader = r;
	list_push_newest(t, r);
	t->nopen++;
	return 0;
}

static uint64_t count_newlines(const char *p, const char *end);

/* The number of the line s read last, for a message. Streams that begin
 * within a file count from there; the lines before are counted only
 * now, that an error needs them. */
static uint64_t line_number(const lp_taskdir *t, const td_stream *s)
{
	uint64_t before = 0, left = s->line_base_offset;
	lp_error ignored;
	lp_input *in = left ? lp_input_open_sized(t->files[s->file].path, STREAM_INPUT_BUFFER, &ignored)
			    : NULL;
	char buf[16384];
	ssize_t got;
	while (in && left && (got = lp_input_read(in, buf, (size_t)MIN(left, (uint64_t)sizeof buf),
						   &ignored)) > 0) {
		before += count_newlines(buf, buf + got);
		left -= (uint64_t)got;
	}
	lp_input_close(in);
	return before + s->line;
}

/* The next line of s: 1 with *line and *len set, 0 at the end of its
 * file, -1 with err set. */
static int next_line(lp_taskdir *t, td_stream *s, char **line, size_t *len, lp_error *err)
{
	int got = lp_inbuf_line(&s->reader->buf, line, len, err);
	if (got == LP_INBUF_LONG_LINE)
		return lp_inbuf_long_line(err, t->files[s->file].path, line_number(t, s) + 1);
	if (got > 0) {
		s->line++;
		s->offset += *len + 1;
	}
	return got;
}

enum record_kind { RECORD_ERROR = -1, RECORD_END, RECORD_REF, RECORD_EVENT };

/* The next record of s into *ref or *ev (kernel references skipped with
 * user_only), its timestamp order checked. */
static enum record_kind next_record(lp_taskdir *t, td_stream *s, lp_sched_ref *ref, lp_sched_event *ev,
				    lp_error *err)
{
	for (;;) {
		char *line;
		size_t len;
		int got = next_line(t, s, &line, &len, err);
		if (got <= 0)
			return got < 0 ? RECORD_ERROR : RECORD_END;
		lp_error why;
		int kind = parse_record(line, len, ref, ev, &why);
		if (kind < 0)
			return lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": %s", t->files[s->file].path,
				       line_number(t, s), why.msg), RECORD_ERROR;
		uint64_t ts = kind ? ref->timestamp : ev->timestamp;
		if (ts < s->prev_ts)
			return lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": timestamp %" PRIx64 " is earlier "
				       "than the previous record's, %" PRIx64, t->files[s->file].path,
				       line_number(t, s), ts, s->prev_ts), RECORD_ERROR;
		s->prev_ts = ts;
		if (kind && t->opt.user_only && lp_ref_is_kernel(ref->type))
			continue;
		return kind ? RECORD_REF : RECORD_EVENT;
	}
}

/* Make s's next record pending, unless s has ended. Returns 0 or -1. */
static int stream_fill(lp_taskdir *t, td_stream *s, lp_error *err)
{
	if (!s->reader && stream_open(t, s, err))
		return -1;
	enum record_kind kind = next_record(t, s, &s->pending_ref, &s->pending_event, err);
	if (kind == RECORD_ERROR)
		return -1;
	if (kind == RECORD_END) {
		s->ended = true;
		reader_close(t, s->reader); /* nothing more is read here */
	}
	s->pending = kind == RECORD_REF ? PENDING_REF : kind == RECORD_EVENT ? PENDING_EVENT : PENDING_NONE;
	return 0;
}

/* lp_sched_source.read over the streams. */
static ssize_t stream_read(void *ctx, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			   lp_sched_event *ev, lp_error *err)
{
	lp_taskdir *t = ctx;
	td_stream *s = &t->streams[stream];
	if (s->reader && t->newest != s->reader) {
		list_unlink(t, s->reader);
		list_push_newest(t, s->reader);
	}
	size_t n = 0;
	for (;;) {
		/* Well-formed reference lines straight into refs; the one that
		 * does not fit is left pending, anything else to the careful path. */
		if (s->pending == PENDING_NONE && s->reader) {
			lp_inbuf *b = &s->reader->buf;
			const char *start = b->data + b->pos, *p = start, *end = b->data + b->len, *next;
			uint64_t prev_ts = s->prev_ts, lines = 0;
			lp_sched_ref ref;
			while ((next = fast_reference(p, end, &ref)) && ref.timestamp >= prev_ts) {
				p = next;
				lines++;
				prev_ts = ref.timestamp;
				if (t->opt.user_only && lp_ref_is_kernel(ref.type))
					continue;
				if (n == cap || ref.timestamp > last_ts) {
					s->pending_ref = ref;
					s->pending = PENDING_REF;
					break;
				}
				refs[n++] = ref;
			}
			b->pos += (size_t)(p - start);
			s->offset += (uint64_t)(p - start);
			s->line += lines;
			s->prev_ts = prev_ts;
		}
		if (s->pending == PENDING_NONE && !s->ended && stream_fill(t, s, err))
			return -1;
		if (s->pending == PENDING_REF) {
			if (n == cap || s->pending_ref.timestamp > last_ts)
				break;
			refs[n++] = s->pending_ref;
			s->pending = PENDING_NONE;
			continue;
		}
		if (n)
			return (ssize_t)n; /* the event or the end is the next call's */
		if (s->pending == PENDING_NONE) {
			ev->tag = LP_SCHED_END;
			return 0;
		}
		*ev = s->pending_event;
		s->pending = PENDING_NONE;
		/* A unit ends with its task's X. */
		if (t->opt.unit_streams && ev->tag == 'X' && ev->task == t->files[s->file].tid && !s->ended) {
			s->ended = true;
			if (s->reader)
				reader_close(t, s->reader);
		}
		return 0;
	}
	if (n)
		return (ssize_t)n;
	ev->tag = LP_SCHED_MORE;
	return 0;
}

/* ---- opening: files and units ---- */

typedef struct task_entry {
	uint64_t pid, tid;
	const char *path; /* relative, from the index */
} task_entry;

static int task_entry_cmp(const void *a, const void *b)
{
	const task_entry *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void add_file(lp_taskdir *t, const char *dir, const char *rel, uint64_t pid, uint64_t tid)
{
	td_file *f = &t->files[t->nfiles++];
	f->path = g_build_filename(dir, rel, NULL);
	f->pid = pid;
	f->tid = tid;
}

/* A listed file must be there: missing, the directory is incomplete. */
static int check_listed(const char *path, const char *index, lp_error *err)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return 0;
	if (errno == ENOENT)
		return lp_fail(err, LP_EINPUT, "%s: listed in %s but missing", path, index);
	return lp_fail(err, LP_EIO, "cannot open %s: %s", path, g_strerror(errno));
}

/* Newlines in [p, end), eight bytes at a time: a byte of w ^ ONES('\n')
 * is zero where w holds a newline, and a zero byte is one whose low seven
 * bits plus 0x7f do not carry into its high bit, which is clear too. */
static uint64_t count_newlines(const char *p, const char *end)
{
	const uint64_t newlines = 0x0a0a0a0a0a0a0a0aull, low7 = 0x7f7f7f7f7f7f7f7full;
	uint64_t n = 0;
	for (; end - p >= 8; p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t x = w ^ newlines;
		uint64_t found = (~(((x & low7) + low7) | x) & ~low7) >> 7; /* 1 per newline byte */
		n += found * 0x0101010101010101ull >> 56;                     /* their sum */
	}
	for (; p < end; p++)
		n += *p == '\n';
	return n;
}

/* Skip ahead to the next line that begins with 'X' (or to the end of the
 * file); line numbers in s count from there. Returns 0 or -1. */
static int skip_to_exit_line(td_stream *s, bool *at_line_start, lp_error *err)
{
	lp_inbuf *b = &s->reader->buf;
	for (;;) {
		char *p = b->data + b->pos, *end = b->data + b->len;
		for (char *x = p; (x = memchr(x, 'X', (size_t)(end - x))); x++) {
			if (x == p ? !*at_line_start : x[-1] != '\n')
				continue; /* an X inside a name */
			s->offset += (uint64_t)(x - p);
			s->line_base_offset = s->offset;
			s->line = 0;
			b->pos += (size_t)(x - p);
			return 0;
		}
		if (p < end) {
			s->offset += (uint64_t)(end - p);
			*at_line_start = end[-1] == '\n';
			b->pos = b->len;
		}
		ssize_t avail = lp_inbuf_fill(b, 1, err);
		if (avail <= 0)
			return (int)avail;
	}
}

/* Read task file f once: a unit begins at its first record and after each
 * X of its task that more records follow. Only the lines that begin
 * with X, and the first of each unit, are parsed here: the rest are read
 * when the schedule runs. */
static int find_units(lp_taskdir *t, size_t f, lp_error *err)
{
	td_stream s = {.file = f};
	/* Small buffers: the heap hands the same ones back file after file,
	 * where large ones would be mapped in afresh for each. */
	lp_input *in = lp_input_open_sized(t->files[f].path, STREAM_INPUT_BUFFER, err);
	if (!in)
		return err->status;
	td_reader r = {.in = in, .stream = &s};
	lp_inbuf_init_sized(&r.buf, in, STREAM_LINE_BUFFER);
	s.reader = &r;
	bool unit_starts = true, at_line_start = true;
	uint64_t incarnation = 0;
	int rc = 0;
	for (;;) {
		if (!unit_starts && skip_to_exit_line(&s, &at_line_start, err)) {
			rc = err->status;
			break;
		}
		uint64_t offset = s.offset;
		char *line;
		size_t len;
		int got = next_line(t, &s, &line, &len, err);
		if (got <= 0) {
			rc = got < 0 ? err->status : 0;
			break;
		}
		at_line_start = true;
		lp_sched_ref ref;
		lp_sched_event ev;
		lp_error why;
		int kind = parse_record(line, len, &ref, &ev, &why);
		if (kind < 0) {
			rc = lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": %s", t->files[f].path,
				     line_number(t, &s), why.msg);
			break;
		}
		if (unit_starts) {
			lp_sched_unit u = {
				.pid = t->files[f].pid,
				.tid = t->files[f].tid,
				.incarnation = incarnation++,
				.first_ts = kind ? ref.timestamp : ev.timestamp,
				.file = f,
			};
			if (!kind && (ev.tag == 'F' || ev.tag == 'T') && ev.child == u.tid) {
				u.creator = ev.tag;
				u.creator_parent = ev.parent;
			}
			td_stream start = {.file = f, .offset = offset, .line_base_offset = offset};
			g_array_append_val(t->units, u);
			g_array_append_val(t->unit_starts, start);
		}
		unit_starts = !kind && ev.tag == 'X' && ev.task == t->files[f].tid;
	}
	lp_inbuf_free(&r.buf);
	lp_input_close(in);
	return rc;
}

lp_taskdir *lp_taskdir_open(const char *dir, const lp_taskdir_options *opt, lp_error *err)
{
	lp_index *ix = lp_index_read(dir, err);
	if (!ix)
		return NULL;
	char *index = g_build_filename(dir, "index.yaml", NULL);
	lp_taskdir *t = g_new0(lp_taskdir, 1);
	t->opt = *opt;
	t->units = g_array_new(FALSE, FALSE, sizeof(lp_sched_unit));
	t->unit_starts = g_array_new(FALSE, FALSE, sizeof(td_stream));
	int rc = 0;
	if (ix->layout != LP_LAYOUT_TASK) {
		rc = lp_fail(err, LP_EINPUT, "%s: layout: %s: schedule reads one file per task; make the "
			     "directory with 'laplace merge --per-process DIR --by task'", index,
			     lp_layout_names[ix->layout]);
		goto out;
	}
	/* Task files by pid and tid; a file listed twice (a reused pid) once. */
	GArray *tasks = g_array_new(FALSE, FALSE, sizeof(task_entry));
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t p = 0; p < ix->nprocesses; p++)
		for (size_t k = 0; k < ix->processes[p].ntasks; k++) {
			const lp_index_task *task = &ix->processes[p].tasks[k];
			if (!g_hash_table_add(seen, task->file.path))
				continue;
			task_entry e = {ix->processes[p].pid, task->tid, task->file.path};
			g_array_append_val(tasks, e);
		}
	g_array_sort(tasks, task_entry_cmp);
	t->files = g_new0(td_file, tasks->len + 2);
	add_file(t, dir, ix->kernel.path, 0, 0);
	if (ix->orphan.path)
		add_file(t, dir, ix->orphan.path, 0, 0);
	size_t first_task = t->nfiles;
	for (guint i = 0; i < tasks->len; i++) {
		task_entry *e = &g_array_index(tasks, task_entry, i);
		add_file(t, dir, e->path, e->pid, e->tid);
	}
	g_array_free(tasks, TRUE);
	g_hash_table_destroy(seen);
	for (size_t f = 0; f < t->nfiles && !rc; f++)
		rc = check_listed(t->files[f].path, index, err);
	t->sched_files = g_new0(lp_sched_file, t->nfiles);
	for (size_t f = 0; f < t->nfiles && !rc; f++) {
		t->sched_files[f] = (lp_sched_file){t->files[f].path, SIZE_MAX, t->files[f].tid};
		size_t before = t->units->len;
		if (f >= first_task && !(rc = find_units(t, f, err)) && t->units->len > before)
			t->sched_files[f].first_unit = before;
	}
	if (rc)
		goto out;
	if (opt->unit_streams) {
		t->nstreams = t->unit_starts->len;
		t->streams = g_memdup2(t->unit_starts->data, sizeof(td_stream) * t->nstreams);
	} else {
		t->nstreams = t->nfiles;
		t->streams = g_new0(td_stream, t->nfiles);
		for (size_t f = 0; f < t->nfiles; f++)
			t->streams[f].file = f;
	}
	t->paths = g_new0(char *, t->nfiles + 2);
	t->paths[0] = g_strdup(index);
	for (size_t f = 0; f < t->nfiles; f++)
		t->paths[f + 1] = g_strdup(t->files[f].path);
	t->input = (lp_sched_input){
		.units = (const lp_sched_unit *)t->units->data,
		.nunits = t->units->len,
		.files = t->sched_files,
		.nfiles = t->nfiles,
		.source = {t, stream_read},
	};
out:
	g_free(index);
	lp_index_free(ix);
	if (rc) {
		lp_taskdir_close(t);
		return NULL;
	}
	return t;
}

const lp_sched_input *lp_taskdir_input(lp_taskdir *t) { return &t->input; }

const char *const *lp_taskdir_paths(const lp_taskdir *t) { return (const char *const *)t->paths; }

void lp_taskdir_close(lp_taskdir *t)
{
	if (!t)
		return;
	while (t->oldest)
		reader_close(t, t->oldest);
	for (size_t f = 0; f < t->nfiles; f++)
		g_free(t->files[f].path);
	g_free(t->files);
	g_free(t->sched_files);
	g_array_free(t->units, TRUE);
	g_array_free(t->unit_starts, TRUE);
	g_free(t->streams);
	g_strfreev(t->paths);
	g_free(t);
}
