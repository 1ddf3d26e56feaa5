/* A per-process merge directory read for re-scheduling: index.yaml, the
 * units of every task file, and their records as streams. Each file is
 * text or in the binary task form (told by its header, found when its
 * units are): lines parsed, or binary records copied.
 *
 * A stream remembers where it stands in its file (byte offset, line,
 * previous timestamp); only the streams being read hold an open file, at
 * most max_open of them, the least recently read closed first. A plain
 * file is reopened with a seek; a compressed one is decompressed again up
 * to the offset. A plain file in the binary form is mapped instead, once,
 * and its records copied straight from the mapping.
 *
 * With threads, worker threads parse the streams ahead of the engine, a
 * block at a time (see "read-ahead" below), and the files are searched
 * for units in parallel; the records, and any error, are the same. */
#include "formats/taskdir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "formats/taskline.h"
#include "io/bytesrc.h"
#include "io/io.h"
#include "io/lrulist.h"
#include "io/mapped.h"
#include "formats/kern.h"
#include "formats/procindex.h"
#include "core/record.h"
#include "formats/refio.h"
#include "core/numbers.h"
#include "io/workpool.h"

/* Buffers of an open stream: small, as many streams may be open. */
#define STREAM_INPUT_BUFFER (64 * 1024)
#define STREAM_LINE_BUFFER (64 * 1024)

/* Read-ahead (see below): the most blocks parsed ahead of a stream, the
 * fewest blocks workers may fill, references all blocks may hold at once
 * (with few streams), and a block's size. */
#define AHEAD_BLOCKS_MAX 16
#define AHEAD_LOW 2 /* blocks left when a stream being read is parsed next */
#define AHEAD_POOL_MIN 32
#define AHEAD_BUDGET_REFS (512 * 1024) /* 12 MiB of lp_sched_ref */
/* Fuzz builds make blocks tiny, so that streams cross many. */
#ifndef BLOCK_REFS_MAX
#define BLOCK_REFS_MAX 4096
#endif
#define BLOCK_REFS_MIN MIN(64, BLOCK_REFS_MAX)

typedef struct td_file {
	char *path;   /* dir/relative path */
	uint64_t pid, tid;
	bool binary;  /* in the binary task form (its header is bytes [0, 8)) */
	lp_mapped map; /* a plain file of the binary form mapped whole (io/mapped.h), or not */
} td_file;

typedef struct td_reader td_reader;

typedef struct td_stream {
	size_t file;
	uint64_t offset;   /* bytes of the (decompressed) file before the next record */
	uint64_t line_base_offset; /* where line counting began: a unit's start */
	uint64_t line;     /* lines read since then */
	uint64_t prev_ts;  /* timestamp of the last record read */
	uint64_t released; /* a mapped file: its pages before this byte are let go */
	bool ended;        /* its file's end, or a unit stream's X, was read */
	enum { PENDING_NONE, PENDING_REF, PENDING_EVENT } pending; /* read, not yet taken */
	lp_sched_ref pending_ref;
	lp_sched_event pending_event;
	td_reader *reader; /* NULL while closed */
	/* Read-ahead (threads > 1), under lp_taskdir.lock. */
	struct td_block *head, *tail; /* parsed, not yet taken */
	struct td_block *reading;     /* head, once the engine reads it (the engine's) */
	unsigned nblocks;
	bool busy;        /* a thread is parsing it (and may use its reader) */
	bool queued;      /* in the workers' queue */
	bool parsed_all;  /* its end or an error has been parsed: no more blocks */
	bool at_end;      /* the engine has taken its end */
	lp_error *error;  /* the engine has taken this error */
} td_stream;

struct td_reader {
	lp_byte_source src;
	td_stream *stream;
	lp_lru_link open; /* in lp_taskdir.open */
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
	lp_lru_list open;       /* the open files' readers, most recently read first */
	unsigned nopen;
	uint64_t page;          /* the system's page size */
	bool release;           /* let go of mapped pages as they are read (see release_read) */
	char **paths;           /* lp_taskdir_paths */
	bool form_bin;          /* index.yaml says form: bin */
	lp_sched_input input;
	/* A share (lp_taskdir_share): its own streams, the rest its owner's. */
	const lp_taskdir *owner;
	bool keep_mapped;       /* shares read the pages too: a stream's end lets none go */
	/* Read-ahead (threads > 1). */
	bool threaded;
	GMutex lock;            /* the open set and every stream's read-ahead fields */
	GCond changed;          /* a block parsed, a stream no longer busy */
	unsigned waiting;       /* threads waiting for changed */
	GCond work_ready;       /* a stream queued, a block back in the pool */
	unsigned idle_workers;  /* workers waiting for work_ready */
	GQueue work;            /* streams to parse ahead (index + 1) */
	struct td_block *free_blocks;
	size_t blocks_in_use;
	size_t pool;            /* blocks in use before workers wait */
	size_t block_refs;      /* references a block holds */
	unsigned ahead_blocks;  /* blocks parsed ahead of a stream */
	bool stopping;
	GThread **workers;
	unsigned nworkers;
};

/* The open set is shared by the threads of the read-ahead. */
static void td_lock(lp_taskdir *t)
{
	if (t->threaded)
		g_mutex_lock(&t->lock);
}

static void td_unlock(lp_taskdir *t)
{
	if (t->threaded)
		g_mutex_unlock(&t->lock);
}

/* ---- lines ---- */

/* The records' text: formats/taskline.h. */

/* ---- the open set ---- */

/* The reader of link (of lp_taskdir.open), or NULL. */
static td_reader *reader_of(lp_lru_link *link)
{
	return link ? LP_LRU_ENTRY(link, td_reader, open) : NULL;
}

/* Bytes of a mapped file a stream reads before it lets go of their pages. */
#define RELEASE_BYTES (4u << 20)

/* Let go of the whole pages of s's mapped file that s has read, from where
 * it let go last up to byte to: they leave the process (not the page
 * cache), and a stream that comes to them later maps them again. No other
 * stream reads them: the units of a file do not overlap, and the pages two
 * share are kept. A stream does so at its end, that the pages do not all
 * wait for the last to be let go; and, when the directory is too large to
 * stay mapped (lp_taskdir_options.map_hold, t->release), as it reads, and
 * the search for units likewise. */
static void release_read(const lp_taskdir *t, td_stream *s, uint64_t to)
{
	const td_file *f = &t->files[s->file];
	uint64_t from = (s->released + t->page - 1) / t->page * t->page, end = to / t->page * t->page;
	if (!f->map.data || end <= from)
		return;
	madvise((void *)(f->map.data + from), (size_t)(end - from), MADV_DONTNEED);
	s->released = end;
}

/* At the end of s's unit or file: its pages, unless other readings of
 * the directory may still want them (and it is small enough to stay
 * mapped). */
static void release_ended(const lp_taskdir *t, td_stream *s)
{
	if (t->release || !t->keep_mapped)
		release_read(t, s, s->offset);
}

static void reader_close(lp_taskdir *t, td_reader *r)
{
	if (t->release)
		release_read(t, r->stream, r->stream->offset);
	lp_lru_unlink(&t->open, &r->open);
	r->stream->reader = NULL;
	lp_byte_source_clear(&r->src);
	g_free(r);
	t->nopen--;
}

/* Wake-ups cost a system call each (and more in a virtual machine):
 * a thread is woken only if one waits. Under the lock. */
static void wait_for_change(lp_taskdir *t)
{
	t->waiting++;
	g_cond_wait(&t->changed, &t->lock);
	t->waiting--;
}

static void announce_change(lp_taskdir *t)
{
	if (t->waiting)
		g_cond_broadcast(&t->changed);
}

/* Workers wait while the pool is full and are woken only when a quarter
 * of it is free again, not block by block. */
static void announce_work(lp_taskdir *t)
{
	if (t->idle_workers && t->blocks_in_use <= t->pool - t->pool / 4 && !g_queue_is_empty(&t->work))
		g_cond_signal(&t->work_ready);
}

/* The least recently read open file whose stream no thread is parsing;
 * NULL if there is none. */
static td_reader *closable_reader(lp_taskdir *t)
{
	lp_lru_link *l = t->open.oldest;
	while (l && reader_of(l)->stream->busy)
		l = l->newer;
	return reader_of(l);
}

/* File f's bytes from offset on into src: its mapping, or the file read
 * from there. Returns 0 or -1 with err set. */
static int source_open(const lp_taskdir *t, size_t f, uint64_t offset, lp_byte_source *src,
		       lp_error *err)
{
	const td_file *file = &t->files[f];
	if (file->map.data) {
		src->in = NULL;
		lp_inbuf_init_bytes(&src->b, file->map.data, file->map.size);
		src->b.pos = (size_t)MIN(offset, (uint64_t)file->map.size);
		return 0;
	}
	if (lp_byte_source_init_sized(src, file->path, STREAM_INPUT_BUFFER, STREAM_LINE_BUFFER, err))
		return -1;
	if (offset && lp_input_skip(src->in, offset, err)) {
		lp_byte_source_clear(src);
		return -1;
	}
	return 0;
}

/* Open s's file (closing the least recently read one if need be) and
 * skip to where s stands. Returns 0 or an lp_status. With threads, every
 * open file may belong to a stream being parsed: then wait for one. */
static int stream_open(lp_taskdir *t, td_stream *s, lp_error *err)
{
	td_lock(t);
	while (t->nopen >= t->opt.max_open) {
		td_reader *victim = closable_reader(t);
		if (victim)
			reader_close(t, victim);
		else
			wait_for_change(t);
	}
	t->nopen++; /* its place is taken; the file is opened unlocked */
	td_unlock(t);
	td_reader *r = g_new0(td_reader, 1);
	bool opened = !source_open(t, s->file, s->offset, &r->src, err);
	td_lock(t);
	if (!opened) {
		t->nopen--;
		td_unlock(t);
		g_free(r);
		return err->status;
	}
	r->stream = s;
	s->reader = r;
	lp_lru_push_newest(&t->open, &r->open);
	td_unlock(t);
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
static int next_line(const lp_taskdir *t, td_stream *s, char **line, size_t *len, lp_error *err)
{
	int got = lp_inbuf_line(&s->reader->src.b, line, len, err);
	if (got == LP_INBUF_LONG_LINE)
		return lp_inbuf_long_line(err, t->files[s->file].path, line_number(t, s) + 1);
	if (got > 0) {
		s->line++;
		s->offset += *len + 1;
	}
	return got;
}

enum record_kind { RECORD_ERROR = -1, RECORD_END, RECORD_REF, RECORD_EVENT };

/* After an error or the end read from file f: if it is mapped and shrank
 * since, zeros were read where its records were, and the error is that.
 * Pages past its new end vanished (io/mapped.h put zeros there), or,
 * when it shrank within its last page, the page's tail reads as zeros
 * with no fault: its size tells. Returns 0, or LP_EINPUT with err set. */
static int check_shrunk(const lp_taskdir *t, size_t f, lp_error *err)
{
	const td_file *file = &t->files[f];
	struct stat st;
	if (!file->map.data || (!lp_mapped_shrunk(&file->map) &&
				(stat(file->path, &st) || (uint64_t)st.st_size >= file->map.size)))
		return 0;
	return lp_fail(err, LP_EINPUT, "%s: shrank while being read (from %zu bytes)", file->path,
		       file->map.size);
}

/* Where the record of s that began at byte offset is, for a message
 * (g_free it): "FILE: byte N" in the binary form, "FILE:LINE" (the line
 * read last) in the text form. */
static char *record_where(const lp_taskdir *t, const td_stream *s, uint64_t offset)
{
	const td_file *f = &t->files[s->file];
	return f->binary ? g_strdup_printf("%s: byte %" PRIu64, f->path, offset)
			 : g_strdup_printf("%s:%" PRIu64, f->path, line_number(t, s));
}

/* The next record of s's file into *rec: a line of the text form, or a
 * record of the binary form. */
static enum lp_task_kind read_record(const lp_taskdir *t, td_stream *s, lp_task_record *rec,
				     lp_error *err)
{
	const td_file *f = &t->files[s->file];
	if (f->binary) {
		size_t size = 0;
		enum lp_task_kind kind = lp_task_bin_next(&s->reader->src.b, f->path, s->offset, rec,
							  &size, err);
		s->offset += size;
		return kind;
	}
	char *line;
	size_t len;
	int got = next_line(t, s, &line, &len, err);
	if (got <= 0)
		return got < 0 ? LP_TASK_ERROR : LP_TASK_END;
	lp_error why;
	enum lp_task_kind kind = lp_task_record_parse(line, len, rec, &why);
	if (kind == LP_TASK_ERROR)
		lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": %s", f->path, line_number(t, s), why.msg);
	return kind;
}

/* The next record of s into *ref or *ev (kernel references skipped with
 * user_only), its timestamp order checked. */
static enum record_kind next_record(lp_taskdir *t, td_stream *s, lp_sched_ref *ref, lp_sched_event *ev,
				    lp_error *err)
{
	for (;;) {
		lp_task_record rec;
		uint64_t offset = s->offset;
		enum lp_task_kind kind = read_record(t, s, &rec, err);
		if (kind == LP_TASK_ERROR) {
			check_shrunk(t, s->file, err); /* the error's cause, when it is */
			return RECORD_ERROR;
		}
		if (kind == LP_TASK_END)
			return check_shrunk(t, s->file, err) ? RECORD_ERROR : RECORD_END;
		bool is_ref = kind == LP_TASK_REF;
		uint64_t ts = is_ref ? rec.ref.timestamp : rec.ev.timestamp;
		if (ts < s->prev_ts) {
			char *where = record_where(t, s, offset);
			lp_fail(err, LP_EINPUT, "%s: timestamp %" PRIx64 " is earlier than the previous "
				"record's, %" PRIx64, where, ts, s->prev_ts);
			g_free(where);
			check_shrunk(t, s->file, err);
			return RECORD_ERROR;
		}
		s->prev_ts = ts;
		if (is_ref && t->opt.user_only && lp_ref_is_kernel(rec.ref.type))
			continue;
		if (is_ref)
			*ref = rec.ref;
		else
			*ev = rec.ev;
		return is_ref ? RECORD_REF : RECORD_EVENT;
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
		release_ended(t, s);
		td_lock(t);
		reader_close(t, s->reader); /* nothing more is read here */
		td_unlock(t);
	}
	s->pending = kind == RECORD_REF ? PENDING_REF : kind == RECORD_EVENT ? PENDING_EVENT : PENDING_NONE;
	return 0;
}

/* A reference the fast path read: into refs[*n] (kernel references
 * dropped with user_only), or left pending when refs is full or it is
 * past last_ts (false: stop). */
static inline bool take_ref(const lp_taskdir *t, td_stream *s, const lp_sched_ref *ref, lp_sched_ref *refs,
			    size_t *n, size_t cap, uint64_t last_ts)
{
	if (t->opt.user_only && lp_ref_is_kernel(ref->type))
		return true;
	if (*n == cap || ref->timestamp > last_ts) {
		s->pending_ref = *ref;
		s->pending = PENDING_REF;
		return false;
	}
	refs[(*n)++] = *ref;
	return true;
}

/* stream_parse's fast path for the binary form: reference records are
 * copied, not parsed, into refs[n, cap) (the one that does not fit left
 * pending); the new n. A function of its own, so that the text form's
 * loop is compiled as it was without it. */
static __attribute__((noinline)) size_t copy_bin_refs(const lp_taskdir *t, td_stream *s, lp_sched_ref *refs,
						      size_t n, size_t cap, uint64_t last_ts)
{
	lp_inbuf *b = &s->reader->src.b;
	const unsigned char *start = (const unsigned char *)b->data + b->pos, *p = start;
	const unsigned char *end = (const unsigned char *)b->data + b->len;
	uint64_t prev_ts = s->prev_ts;
	lp_sched_ref ref;
	/* rr and random take references up to cap alone: those the buffer
	 * holds whole, copied without other tests. */
	if (last_ts == UINT64_MAX && !t->opt.user_only) {
		size_t k = lp_task_bin_copy(p, MIN(cap - n, (size_t)(end - p) / LP_TASK_BIN_REF_SIZE), refs + n,
					    &prev_ts);
		n += k;
		p += k * LP_TASK_BIN_REF_SIZE;
	}
	while (end - p >= LP_TASK_BIN_REF_SIZE && lp_task_bin_copy(p, 1, &ref, &prev_ts)) {
		p += LP_TASK_BIN_REF_SIZE;
		if (!take_ref(t, s, &ref, refs, &n, cap, last_ts))
			break;
	}
	b->pos += (size_t)(p - start);
	s->offset += (uint64_t)(p - start);
	s->prev_ts = prev_ts;
	return n;
}

/* lp_sched_source.read over the streams, parsing their files, except
 * that a failure (*failed set, err set) returns the references taken
 * before it: the read-ahead keeps them. */
static size_t stream_parse(lp_taskdir *t, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			   lp_sched_event *ev, bool *failed, lp_error *err)
{
	td_stream *s = &t->streams[stream];
	td_lock(t);
	if (s->reader)
		lp_lru_touch(&t->open, &s->reader->open);
	td_unlock(t);
	size_t n = 0;
	for (;;) {
		/* Well-formed reference lines straight into refs; the one that
		 * does not fit is left pending, anything else to the careful path. */
		if (s->pending == PENDING_NONE && s->reader && t->files[s->file].binary) {
			n = copy_bin_refs(t, s, refs, n, cap, last_ts);
			if (t->release && s->offset - s->released >= RELEASE_BYTES)
				release_read(t, s, s->offset);
		} else if (s->pending == PENDING_NONE && s->reader) {
			lp_inbuf *b = &s->reader->src.b;
			const char *start = b->data + b->pos, *p = start, *end = b->data + b->len, *next;
			uint64_t prev_ts = s->prev_ts, lines = 0;
			lp_sched_ref ref;
			while ((next = lp_task_line_fast(p, end, &ref)) && ref.timestamp >= prev_ts) {
				p = next;
				lines++;
				prev_ts = ref.timestamp;
				if (!take_ref(t, s, &ref, refs, &n, cap, last_ts))
					break;
			}
			b->pos += (size_t)(p - start);
			s->offset += (uint64_t)(p - start);
			s->line += lines;
			s->prev_ts = prev_ts;
		}
		if (s->pending == PENDING_NONE && !s->ended && stream_fill(t, s, err)) {
			*failed = true;
			return n;
		}
		if (s->pending == PENDING_REF) {
			if (n == cap || s->pending_ref.timestamp > last_ts)
				break;
			refs[n++] = s->pending_ref;
			s->pending = PENDING_NONE;
			continue;
		}
		if (n)
			return n; /* the event or the end is the next call's */
		if (s->pending == PENDING_NONE) {
			ev->tag = LP_SCHED_END;
			return 0;
		}
		*ev = s->pending_event;
		s->pending = PENDING_NONE;
		/* A unit ends with its task's X. */
		if (t->opt.unit_streams && ev->tag == 'X' && ev->task == t->files[s->file].tid && !s->ended) {
			s->ended = true;
			release_ended(t, s);
			td_lock(t);
			if (s->reader)
				reader_close(t, s->reader);
			td_unlock(t);
		}
		return 0;
	}
	if (n)
		return n;
	ev->tag = LP_SCHED_MORE;
	return 0;
}

/* lp_sched_source.read without threads. */
static ssize_t stream_read(void *ctx, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			   lp_sched_event *ev, lp_error *err)
{
	bool failed = false;
	size_t n = stream_parse(ctx, stream, refs, cap, last_ts, ev, &failed, err);
	return failed ? -1 : (ssize_t)n;
}

/* ---- read-ahead (threads > 1) ----
 *
 * Parsing the task files' text is most of a schedule's work, and the
 * engine needs one stream at a time, so worker threads parse streams
 * ahead of it: a block is what stream_parse gives over calls, up to
 * block_refs references and then, if it came first, an event, the end or
 * an error. The engine takes blocks in order (ahead_read), so it sees the
 * same records and the same error at the same point as without threads.
 *
 * Workers take streams from a queue, in the order the engine names them
 * as they join its ready queue (lp_sched_source.soon: under rr, the order
 * it will read them), and parse each to ahead_blocks (a slice's worth);
 * a stream the engine is reading and that runs low goes first.
 * Memory is bounded whatever the trace's length: workers parse only while
 * fewer than pool blocks are in use; the engine parses a stream itself
 * when it finds it empty and no worker on it, so a stream holds at most
 * one block more; block and pool sizes are chosen so that the pool and a
 * block a stream fit in AHEAD_BUDGET_REFS (with very many streams, in
 * AHEAD_POOL_MIN + 1 blocks a stream of BLOCK_REFS_MIN). */

typedef struct td_block {
	struct td_block *next;
	size_t n, taken;         /* references parsed, and taken by the engine */
	bool has_tail;           /* after them: tail_event, or tail_error */
	lp_sched_event tail_event;
	lp_error *tail_error;
	lp_sched_ref refs[];
} td_block;

/* Under the lock. */
static td_block *block_get(lp_taskdir *t)
{
	td_block *b = t->free_blocks;
	if (b)
		t->free_blocks = b->next;
	t->blocks_in_use++;
	return b;
}

/* Under the lock. */
static void block_put(lp_taskdir *t, td_block *b)
{
	g_free(b->tail_error);
	b->tail_error = NULL;
	b->next = t->free_blocks;
	t->free_blocks = b;
	t->blocks_in_use--;
}

/* Parse s's next block into b: unlocked, with s busy. */
static void block_fill(lp_taskdir *t, size_t stream, td_block *b)
{
	b->n = b->taken = 0;
	b->has_tail = false;
	b->tail_error = NULL;
	b->next = NULL;
	while (b->n < t->block_refs) {
		lp_error err = {0};
		bool failed = false;
		size_t got = stream_parse(t, stream, b->refs + b->n, t->block_refs - b->n, UINT64_MAX,
					  &b->tail_event, &failed, &err);
		b->n += got;
		if (got && !failed)
			continue;
		b->has_tail = true;
		if (failed)
			b->tail_error = g_memdup2(&err, sizeof err);
		break;
	}
}

/* Under the lock: queue s for a worker, first (the engine is reading it)
 * or last, unless it is queued, being parsed, parsed to its end or far
 * enough. */
static void want_ahead(lp_taskdir *t, size_t stream, bool first)
{
	td_stream *s = &t->streams[stream];
	if (s->busy || s->queued || s->parsed_all || s->nblocks >= t->ahead_blocks)
		return;
	s->queued = true;
	if (first)
		g_queue_push_head(&t->work, GSIZE_TO_POINTER(stream + 1));
	else
		g_queue_push_tail(&t->work, GSIZE_TO_POINTER(stream + 1));
	announce_work(t);
}

/* lp_sched_source.soon: the engine's order of streams is the workers'. */
static void ahead_soon(void *ctx, size_t stream)
{
	lp_taskdir *t = ctx;
	g_mutex_lock(&t->lock);
	want_ahead(t, stream, false);
	g_mutex_unlock(&t->lock);
}

/* Parse s's next block (s busy, the lock held, and dropped meanwhile),
 * append it and let s go. b: a block from block_get, or NULL for a new one. */
static void parse_block(lp_taskdir *t, size_t stream, td_block *b)
{
	td_stream *s = &t->streams[stream];
	g_mutex_unlock(&t->lock);
	if (!b)
		b = g_malloc(sizeof *b + t->block_refs * sizeof b->refs[0]);
	block_fill(t, stream, b);
	g_mutex_lock(&t->lock);
	if (s->tail)
		s->tail->next = b;
	else
		s->head = b;
	s->tail = b;
	s->nblocks++;
	if (b->has_tail && (b->tail_error || b->tail_event.tag == LP_SCHED_END))
		s->parsed_all = true;
	s->busy = false;
	announce_change(t);
}

/* Under the lock: parse a block of the first stream queued, if the pool
 * has room; the stream stays first until it is far enough ahead. Returns
 * false when there was nothing to do. */
static bool parse_queued(lp_taskdir *t)
{
	while (!g_queue_is_empty(&t->work) && t->blocks_in_use < t->pool) {
		size_t stream = GPOINTER_TO_SIZE(g_queue_pop_head(&t->work)) - 1;
		td_stream *s = &t->streams[stream];
		s->queued = false;
		if (s->busy || s->parsed_all || s->nblocks >= t->ahead_blocks)
			continue;
		s->busy = true;
		parse_block(t, stream, block_get(t));
		want_ahead(t, stream, true);
		return true;
	}
	return false;
}

static gpointer ahead_worker(gpointer data)
{
	lp_taskdir *t = data;
	g_mutex_lock(&t->lock);
	while (!t->stopping)
		if (!parse_queued(t)) {
			t->idle_workers++;
			g_cond_wait(&t->work_ready, &t->lock);
			t->idle_workers--;
		}
	g_mutex_unlock(&t->lock);
	return NULL;
}

/* Under the lock: the engine is done with s's first block; s is parsed
 * next if it is running low. */
static void block_taken(lp_taskdir *t, size_t stream)
{
	td_stream *s = &t->streams[stream];
	td_block *b = s->head;
	s->head = b->next;
	if (!s->head)
		s->tail = NULL;
	s->reading = NULL;
	s->nblocks--;
	block_put(t, b);
	announce_work(t);
	if (s->nblocks < AHEAD_LOW)
		want_ahead(t, stream, true);
}

/* Take references from b into refs[n, cap), up to last_ts; the new n. */
static size_t take_refs(td_block *b, lp_sched_ref *refs, size_t n, size_t cap, uint64_t last_ts)
{
	size_t i = b->taken;
	if (last_ts == UINT64_MAX) { /* rr, random: no timestamp to stop at */
		size_t k = MIN(b->n - i, cap - n);
		memcpy(refs + n, b->refs + i, k * sizeof *refs);
		n += k;
		i += k;
	}
	while (i < b->n && n < cap && b->refs[i].timestamp <= last_ts)
		refs[n++] = b->refs[i++];
	b->taken = i;
	return n;
}

/* Under the lock: s's block after `after` (NULL: its first), parsed here
 * if no worker is on it. */
static td_block *parsed_block(lp_taskdir *t, size_t stream, const td_block *after)
{
	td_stream *s = &t->streams[stream];
	for (;;) {
		td_block *b = after ? after->next : s->head;
		if (b)
			return b;
		/* A worker is on it: help with the queue meanwhile, rather
		 * than sleep (a wake-up is dear). */
		if (s->busy) {
			if (!parse_queued(t))
				wait_for_change(t);
			continue;
		}
		s->busy = true;
		parse_block(t, stream, block_get(t));
	}
}

/* Under the lock, once a block's references are all taken: its tail, the
 * error that becomes the stream's or the event read, and the block goes
 * back. */
static void take_tail(lp_taskdir *t, size_t stream, td_block *b, lp_sched_event *ev)
{
	td_stream *s = &t->streams[stream];
	if (b->tail_error) {
		s->error = b->tail_error;
		b->tail_error = NULL;
	} else {
		*ev = b->tail_event;
		s->at_end = ev->tag == LP_SCHED_END;
	}
	block_taken(t, stream);
}

/* lp_sched_source.read from the parsed blocks. Without threads, a read
 * parses the record after the references it returns (to know where they
 * stop) and fails if that record is bad, returning none; so does this,
 * which therefore looks past an exhausted block before returning. */
static ssize_t ahead_read(void *ctx, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			  lp_sched_event *ev, lp_error *err)
{
	lp_taskdir *t = ctx;
	td_stream *s = &t->streams[stream];
	size_t n = 0;
	/* The block being read, first in s's list, is the engine's alone:
	 * no lock while it lasts (a quantum of 1 reads a reference a call). */
	td_block *b = s->reading;
	if (b) {
		n = take_refs(b, refs, 0, cap, last_ts);
		if (b->taken < b->n) { /* stopped by cap or last_ts */
			if (!n)
				ev->tag = LP_SCHED_MORE;
			return (ssize_t)n;
		}
	}
	bool end = false;
	g_mutex_lock(&t->lock);
	for (;;) {
		if (s->error) {
			*err = *s->error;
			g_mutex_unlock(&t->lock);
			return -1;
		}
		if (s->at_end && !n) {
			end = true;
			break;
		}
		b = s->reading = parsed_block(t, stream, NULL);
		if (b->taken < b->n) {
			g_mutex_unlock(&t->lock);
			n = take_refs(b, refs, n, cap, last_ts);
			g_mutex_lock(&t->lock);
			if (b->taken < b->n)
				break; /* cap or last_ts */
		}
		if (!b->has_tail) {
			block_taken(t, stream);
			continue;
		}
		if (n && !b->tail_error)
			break; /* the tail is the next call's */
		take_tail(t, stream, b, ev);
		if (!s->error) {
			g_mutex_unlock(&t->lock);
			return 0;
		}
	}
	g_mutex_unlock(&t->lock);
	if (!n)
		ev->tag = end ? LP_SCHED_END : LP_SCHED_MORE;
	return (ssize_t)n;
}

/* Under the lock: whether a read of cap references would fail, as it does
 * when the record after those it takes is bad (see ahead_read). The blocks
 * that hold them are parsed if need be: no more than cap references. */
static bool read_fails(lp_taskdir *t, size_t stream, size_t cap)
{
	size_t refs = 0;
	for (const td_block *b = parsed_block(t, stream, NULL);; b = parsed_block(t, stream, b)) {
		refs += b->n - b->taken;
		if (refs > cap)
			return false;
		if (b->has_tail)
			return b->tail_error != NULL;
	}
}

/* lp_sched_source.view from the parsed blocks: ahead_read's references
 * where the block holds them, the rest of one block at most. The block is
 * let go at the stream's next read. */
static ssize_t ahead_view(void *ctx, size_t stream, const lp_sched_ref **refs, size_t cap,
			  lp_sched_event *ev, lp_error *err)
{
	lp_taskdir *t = ctx;
	td_stream *s = &t->streams[stream];
	/* The block being read is the engine's alone: while more than cap
	 * references are left in it, no lock (the next record is one of them). */
	td_block *b = s->reading;
	if (b && b->n - b->taken > cap) {
		*refs = b->refs + b->taken;
		b->taken += cap;
		if (!cap)
			ev->tag = LP_SCHED_MORE;
		return (ssize_t)cap;
	}
	ssize_t n = 0;
	g_mutex_lock(&t->lock);
	for (;;) {
		if (s->error) {
			*err = *s->error;
			n = -1;
			break;
		}
		if (s->at_end) {
			ev->tag = LP_SCHED_END;
			break;
		}
		b = s->reading = parsed_block(t, stream, NULL);
		if (b->taken < b->n && !cap) {
			ev->tag = LP_SCHED_MORE;
			break;
		}
		if (b->taken < b->n && !read_fails(t, stream, cap)) {
			n = (ssize_t)MIN(b->n - b->taken, cap);
			*refs = b->refs + b->taken;
			b->taken += (size_t)n;
			break;
		}
		/* The error the read fails with follows the block's references
		 * (or the next block's): they go, unread. */
		b->taken = b->n;
		if (!b->has_tail) {
			block_taken(t, stream);
			continue;
		}
		take_tail(t, stream, b, ev);
		if (!s->error)
			break;
	}
	g_mutex_unlock(&t->lock);
	return n;
}

/* Start the workers. */
static void ahead_start(lp_taskdir *t, unsigned threads)
{
	t->block_refs = CLAMP(AHEAD_BUDGET_REFS / (2 * (t->nstreams + AHEAD_POOL_MIN)), BLOCK_REFS_MIN,
			      BLOCK_REFS_MAX);
	size_t blocks = AHEAD_BUDGET_REFS / t->block_refs;
	t->pool = blocks > t->nstreams + AHEAD_POOL_MIN ? blocks - t->nstreams : AHEAD_POOL_MIN;
	/* A slice's blocks, and the one it may end in. */
	t->ahead_blocks = (unsigned)CLAMP(t->opt.slice / t->block_refs + 2, 2, AHEAD_BLOCKS_MAX);
	g_mutex_init(&t->lock);
	g_cond_init(&t->changed);
	g_cond_init(&t->work_ready);
	g_queue_init(&t->work);
	t->threaded = true;
	/* Workers that cannot start (short of memory or threads) are done
	 * without: the engine parses a stream itself when no worker has. */
	t->workers = g_new0(GThread *, threads);
	while (t->nworkers < threads &&
	       (t->workers[t->nworkers] = g_thread_try_new("laplace-parse", ahead_worker, t, NULL)))
		t->nworkers++;
	t->input.source.read = ahead_read;
	t->input.source.view = ahead_view;
	/* Hints cost a lock each: only when a slice is a block or more. */
	if (t->opt.slice >= t->block_refs)
		t->input.source.soon = ahead_soon;
}

static void ahead_stop(lp_taskdir *t)
{
	g_mutex_lock(&t->lock);
	t->stopping = true;
	g_cond_broadcast(&t->work_ready);
	g_mutex_unlock(&t->lock);
	for (unsigned i = 0; i < t->nworkers; i++)
		g_thread_join(t->workers[i]);
	g_free(t->workers);
	for (size_t i = 0; i < t->nstreams; i++) {
		td_stream *s = &t->streams[i];
		while (s->head) {
			td_block *b = s->head;
			s->head = b->next;
			g_free(b->tail_error);
			g_free(b);
		}
		g_free(s->error);
	}
	while (t->free_blocks) {
		td_block *b = t->free_blocks;
		t->free_blocks = b->next;
		g_free(b);
	}
	g_queue_clear(&t->work);
	g_cond_clear(&t->changed);
	g_cond_clear(&t->work_ready);
	g_mutex_clear(&t->lock);
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

/* A listed file must be there: missing, the directory is incomplete. A
 * FIFO, a device or a directory in its place is refused as laplace index
 * refuses it (a FIFO would hold the reader up forever). Its size is added
 * to *bytes, unless NULL. */
static int check_listed(const char *path, const char *index, uint64_t *bytes, lp_error *err)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return lp_fail(err, LP_EINPUT, "%s: not a regular file", path);
		if (bytes)
			*bytes += (uint64_t)st.st_size;
		return 0;
	}
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
	lp_inbuf *b = &s->reader->src.b;
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

/* The form of file f, from its first bytes in b (the binary form's header
 * consumed); with form: bin in index.yaml, every file must be binary. */
static int file_form(lp_taskdir *t, size_t f, lp_inbuf *b, lp_error *err)
{
	lp_task_file tf;
	if (lp_task_file_start(&tf, b, t->files[f].path, t->form_bin, err))
		return err->status;
	t->files[f].binary = tf.binary;
	return 0;
}

/* Map file f if it is a plain file in the binary form: the search for
 * units and the schedule then read its records where the page cache
 * holds them, rather than copy them to buffers, twice. Any other file
 * (compressed, text, or not to be mapped) is read; one that cannot be
 * opened is reported by that read. A mapped file must not shrink while
 * the run lasts, as no input read by a merge should. */
static void map_file(td_file *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= LP_TASK_BIN_HEADER_SIZE &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		if (!lp_mapped_open(&f->map, fd, (size_t)st.st_size) &&
		    memcmp(f->map.data, LP_TASK_BIN_HEADER, LP_TASK_BIN_MAGIC_SIZE))
			lp_mapped_close(&f->map);
	}
	close(fd);
}

/* The form of file f (kernel, orphan), which no search for units reads. */
static int detect_form(lp_taskdir *t, size_t f, lp_error *err)
{
	lp_byte_source src;
	map_file(&t->files[f]);
	if (source_open(t, f, 0, &src, err))
		return err->status;
	int rc = file_form(t, f, &src.b, err);
	lp_byte_source_clear(&src);
	if (rc != LP_EIO && check_shrunk(t, f, err))
		rc = LP_EINPUT;
	return rc;
}

/* Skip the binary form's reference records ahead of s (only their type
 * byte looked at: they are read when the schedule runs), up to the next
 * other record, or one cut short, or the end; a mapped file's pages let
 * go behind, a piece at a time. Returns 0 or -1. */
static int skip_bin_references(const lp_taskdir *t, td_stream *s, lp_error *err)
{
	static const bool is_type[256] = {['r'] = 1, ['w'] = 1, ['i'] = 1, ['R'] = 1, ['W'] = 1, ['I'] = 1};
	lp_inbuf *b = &s->reader->src.b;
	for (;;) {
		ssize_t avail = lp_inbuf_fill(b, LP_TASK_BIN_REF_SIZE, err);
		if (avail < 0)
			return -1;
		const unsigned char *start = (const unsigned char *)b->data + b->pos, *p = start;
		const unsigned char *end = p + MIN((size_t)avail, (size_t)RELEASE_BYTES);
		while (end - p >= LP_TASK_BIN_REF_SIZE && is_type[*p])
			p += LP_TASK_BIN_REF_SIZE;
		b->pos += (size_t)(p - start);
		s->offset += (uint64_t)(p - start);
		if (t->release)
			release_read(t, s, s->offset);
		if (p == start)
			return 0;
	}
}

/* Read task file f once: a unit begins at its first record and after each
 * X of its task that more records follow. Only the records that are X
 * events, and the first of each unit, are parsed here (in the text form,
 * the lines that begin with X; in the binary form, every event): the rest
 * are read when the schedule runs. The file's form is found here too. */
static int find_units(lp_taskdir *t, size_t f, GArray *units, GArray *starts, lp_error *err)
{
	td_stream s = {.file = f};
	/* Small buffers: the heap hands the same ones back file after file,
	 * where large ones would be mapped in afresh for each. */
	td_reader r = {.stream = &s};
	map_file(&t->files[f]);
	if (source_open(t, f, 0, &r.src, err))
		return err->status;
	s.reader = &r;
	bool unit_starts = true, at_line_start = true;
	uint64_t incarnation = 0;
	int rc = file_form(t, f, &r.src.b, err);
	s.offset = t->files[f].binary ? LP_TASK_BIN_HEADER_SIZE : 0;
	while (!rc) {
		bool binary = t->files[f].binary;
		if (!unit_starts && (binary ? skip_bin_references(t, &s, err)
					    : skip_to_exit_line(&s, &at_line_start, err))) {
			rc = err->status;
			break;
		}
		uint64_t offset = s.offset;
		lp_task_record rec;
		enum lp_task_kind kind = read_record(t, &s, &rec, err);
		if (kind == LP_TASK_ERROR || kind == LP_TASK_END) {
			rc = kind == LP_TASK_ERROR ? err->status : 0;
			break;
		}
		at_line_start = true;
		bool is_ref = kind == LP_TASK_REF;
		if (unit_starts) {
			lp_sched_unit u = {
				.pid = t->files[f].pid,
				.tid = t->files[f].tid,
				.incarnation = incarnation++,
				.first_ts = is_ref ? rec.ref.timestamp : rec.ev.timestamp,
				.file = f,
			};
			if (!is_ref && (rec.ev.tag == 'F' || rec.ev.tag == 'T') && rec.ev.child == u.tid) {
				u.creator = rec.ev.tag;
				u.creator_parent = rec.ev.parent;
			}
			td_stream start = {.file = f, .offset = offset, .line_base_offset = offset,
					   .released = offset};
			g_array_append_val(units, u);
			g_array_append_val(starts, start);
		}
		unit_starts = !is_ref && rec.ev.tag == 'X' && rec.ev.task == t->files[f].tid;
	}
	if (t->release)
		release_read(t, &s, t->files[f].map.size);
	lp_byte_source_clear(&r.src);
	/* An error or the end read where pages had vanished: the file shrank. */
	if (rc != LP_EIO && check_shrunk(t, f, err))
		rc = LP_EINPUT;
	return rc;
}

/* The units of files [first, t->nfiles), searched by several threads at
 * once (a job of the work pool a file, each file's units to arrays of its
 * own), appended in file order. Files are given in order and none after a
 * failure, so the first failing file is the error reported, as without
 * threads; files searched after it are dropped. */
typedef struct file_units {
	lp_taskdir *t;
	size_t file;
	GArray *units, *unit_starts;
} file_units;

static int search_file(void *ctx, void *job, lp_error *err)
{
	(void)ctx;
	file_units *fu = job;
	return find_units(fu->t, fu->file, fu->units, fu->unit_starts, err);
}

static int find_all_units(lp_taskdir *t, size_t first, unsigned threads, lp_error *err)
{
	/* A search holds a file open: threads of them at most (this one
	 * searches too, while it waits); twice as many files in flight keep
	 * them all busy. */
	threads = MIN(threads, t->opt.max_open);
	unsigned in_flight = 2 * threads;
	lp_workpool *pool = lp_workpool_new("laplace-units", threads - 1, in_flight, search_file, NULL);
	file_units *found = g_new0(file_units, in_flight);
	for (unsigned i = 0; i < in_flight; i++) {
		found[i].t = t;
		found[i].units = g_array_new(FALSE, FALSE, sizeof(lp_sched_unit));
		found[i].unit_starts = g_array_new(FALSE, FALSE, sizeof(td_stream));
	}
	int rc = 0;
	for (size_t f = first, given = 0; !rc && (f < t->nfiles || lp_workpool_pending(pool));) {
		if (f < t->nfiles && !lp_workpool_full(pool)) {
			file_units *fu = &found[given++ % in_flight];
			fu->file = f++;
			g_array_set_size(fu->units, 0);
			g_array_set_size(fu->unit_starts, 0);
			lp_workpool_submit(pool, fu);
			continue;
		}
		file_units *fu = lp_workpool_take(pool, &rc, err);
		if (!rc && fu->units->len) {
			t->sched_files[fu->file].first_unit = t->units->len;
			g_array_append_vals(t->units, fu->units->data, fu->units->len);
			g_array_append_vals(t->unit_starts, fu->unit_starts->data, fu->unit_starts->len);
		}
	}
	/* After a failure: the searches under way end, their results unread. */
	lp_workpool_free(pool);
	for (unsigned i = 0; i < in_flight; i++) {
		g_array_free(found[i].units, TRUE);
		g_array_free(found[i].unit_starts, TRUE);
	}
	g_free(found);
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
	uint64_t bytes = 0;
	for (size_t f = 0; f < t->nfiles && !rc; f++)
		rc = check_listed(t->files[f].path, index, &bytes, err);
	t->page = (uint64_t)sysconf(_SC_PAGESIZE);
	t->release = bytes > (opt->map_hold ? opt->map_hold
				 : (uint64_t)sysconf(_SC_PHYS_PAGES) / 4 * t->page);
	t->form_bin = ix->binary;
	for (size_t f = 0; f < first_task && !rc; f++)
		rc = detect_form(t, f, err);
	t->sched_files = g_new0(lp_sched_file, t->nfiles);
	for (size_t f = 0; f < t->nfiles; f++)
		t->sched_files[f] = (lp_sched_file){t->files[f].path, SIZE_MAX, t->files[f].tid};
	unsigned threads = MAX(opt->threads, 1);
	if (rc || (rc = find_all_units(t, first_task, threads, err)))
		goto out;
	if (opt->unit_streams) {
		t->nstreams = t->unit_starts->len;
		t->streams = g_memdup2(t->unit_starts->data, sizeof(td_stream) * t->nstreams);
	} else {
		t->nstreams = t->nfiles;
		t->streams = g_new0(td_stream, t->nfiles);
		for (size_t f = 0; f < t->nfiles; f++) {
			t->streams[f].file = f;
			t->streams[f].offset = t->files[f].binary ? LP_TASK_BIN_HEADER_SIZE : 0;
		}
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
		.source = {.ctx = t, .read = stream_read},
	};
	if (threads > 1 && !opt->search_only)
		ahead_start(t, threads);
out:
	g_free(index);
	lp_index_free(ix);
	if (rc) {
		lp_taskdir_close(t);
		return NULL;
	}
	return t;
}

lp_taskdir *lp_taskdir_share(lp_taskdir *t, unsigned max_open)
{
	g_assert(t->opt.unit_streams && !t->threaded && !t->owner);
	lp_taskdir *s = g_new0(lp_taskdir, 1);
	s->opt = t->opt;
	s->opt.max_open = MAX(max_open, 1u);
	s->files = t->files;
	s->nfiles = t->nfiles;
	s->sched_files = t->sched_files;
	s->units = t->units;
	s->unit_starts = t->unit_starts;
	s->nstreams = t->unit_starts->len;
	s->streams = g_memdup2(t->unit_starts->data, sizeof(td_stream) * s->nstreams);
	s->page = t->page;
	s->release = t->release;
	s->paths = t->paths;
	s->form_bin = t->form_bin;
	s->input = t->input;
	s->input.source.ctx = s;
	s->owner = t;
	s->keep_mapped = true;
	return s;
}

const lp_sched_input *lp_taskdir_input(lp_taskdir *t) { return &t->input; }

const char *const *lp_taskdir_paths(const lp_taskdir *t) { return (const char *const *)t->paths; }

void lp_taskdir_close(lp_taskdir *t)
{
	if (!t)
		return;
	if (t->threaded)
		ahead_stop(t);
	while (t->open.oldest)
		reader_close(t, reader_of(t->open.oldest));
	if (t->owner) {
		g_free(t->streams);
		g_free(t);
		return;
	}
	for (size_t f = 0; f < t->nfiles; f++) {
		g_free(t->files[f].path);
		lp_mapped_close(&t->files[f].map);
	}
	g_free(t->files);
	g_free(t->sched_files);
	g_array_free(t->units, TRUE);
	g_array_free(t->unit_starts, TRUE);
	g_free(t->streams);
	g_strfreev(t->paths);
	g_free(t);
}

/* ---- counting a directory's files, for index.yaml ---- */

/* An E record of a process's files: the program it ran. */
typedef struct exec_record {
	uint64_t timestamp;
	size_t order; /* among the process's E records as read, for equal timestamps */
	char *program;
} exec_record;

static int exec_cmp(gconstpointer a, gconstpointer b)
{
	const exec_record *x = a, *y = b;
	if (x->timestamp != y->timestamp)
		return x->timestamp < y->timestamp ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The form of the files counted so far: none yet, or the first's. */
typedef struct count_form {
	const char *first; /* the first file counted (g_free it), NULL: none yet */
	bool binary;
} count_form;

/* Read the file rel of dir, listed in index, whole: its counts into *f
 * (unless NULL), its E records onto execs (unless NULL). Every file of
 * a directory is in one form: form's. */
static int count_file(const char *dir, const char *rel, const char *index, lp_index_file *f,
		      GArray *execs, bool need_binary, count_form *form, lp_error *err)
{
	char *path = g_build_filename(dir, rel, NULL);
	lp_byte_source src;
	if (check_listed(path, index, NULL, err) ||
	    lp_byte_source_init_sized(&src, path, STREAM_INPUT_BUFFER, STREAM_LINE_BUFFER, err)) {
		g_free(path);
		return err->status;
	}
	lp_index_file c = {.path = f ? f->path : NULL, .counted = true};
	lp_task_file tf;
	int rc = lp_task_file_start(&tf, &src.b, path, need_binary, err) ? err->status : 0;
	if (!rc && form->first && tf.binary != form->binary)
		rc = lp_fail(err, LP_EINPUT, "%s: the %s task form, where %s is in the %s form: the "
			     "files of a directory are in one form", path, tf.binary ? "binary" : "text",
			     form->first, form->binary ? "binary" : "text");
	if (!rc && !form->first) {
		form->first = g_strdup(path);
		form->binary = tf.binary;
	}
	lp_task_record *rec = g_new(lp_task_record, 1);
	while (!rc) {
		uint64_t offset = tf.offset;
		enum lp_task_kind kind = lp_task_file_next(&tf, rec, err);
		if (kind == LP_TASK_ERROR)
			rc = err->status;
		if (kind == LP_TASK_ERROR || kind == LP_TASK_END)
			break;
		bool is_ref = kind == LP_TASK_REF;
		uint64_t ts = is_ref ? rec->ref.timestamp : rec->ev.timestamp;
		if (c.records && ts < c.last_ts) {
			char *where = tf.binary ? g_strdup_printf("%s: byte %" PRIu64, path, offset)
						: g_strdup_printf("%s:%" PRIu64, path, tf.line);
			rc = lp_fail(err, LP_EINPUT, "%s: timestamp %" PRIx64 " is earlier than the "
				     "previous record's, %" PRIx64, where, ts, c.last_ts);
			g_free(where);
			break;
		}
		if (!c.records)
			c.first_ts = ts;
		c.last_ts = ts;
		c.records++;
		c.references += is_ref;
		if (execs && !is_ref && rec->ev.tag == 'E') {
			/* The line again, for the program's name, which the
			 * record does not keep. */
			char *line = g_strndup(rec->line, rec->len);
			lp_event event;
			lp_error why;
			if (lp_kern_parse_line(line, rec->len, &event, &why) > 0) {
				exec_record e = {ts, execs->len, g_strdup(event.name)};
				g_array_append_val(execs, e);
			}
			g_free(line);
		}
	}
	g_free(rec);
	lp_byte_source_clear(&src);
	g_free(path);
	if (!rc && f)
		*f = c;
	return rc;
}

int lp_index_count(const char *dir, lp_index *ix, lp_error *err)
{
	char *index = g_build_filename(dir, "index.yaml", NULL);
	count_form form = {0};
	int rc = 0;
	for (size_t i = 0; i < ix->nprocesses && !rc; i++) {
		lp_index_process *p = &ix->processes[i];
		GArray *execs = p->programs ? NULL : g_array_new(FALSE, FALSE, sizeof(exec_record));
		for (size_t k = 0; k < p->ntasks && !rc; k++) {
			lp_index_file *f = &p->tasks[k].file;
			/* A process file's records are its tasks' together. */
			if (!f->counted && ix->layout == LP_LAYOUT_PROCESS)
				rc = lp_fail(err, LP_EINPUT, "%s: task %" PRIx64 " of process %" PRIx64
					     ": no records and references given, which a file per "
					     "process does not tell apart", index, p->tasks[k].tid, p->pid);
			else if (!f->counted || execs)
				rc = count_file(dir, f->path, index, f->counted ? NULL : f, execs,
						ix->binary, &form, err);
		}
		if (execs) {
			g_array_sort(execs, exec_cmp);
			p->programs = g_new0(char *, execs->len + 1);
			for (guint k = 0; k < execs->len; k++)
				p->programs[k] = g_array_index(execs, exec_record, k).program;
			g_array_free(execs, TRUE);
		}
	}
	lp_index_file *own[] = {&ix->kernel, &ix->orphan};
	for (size_t i = 0; i < G_N_ELEMENTS(own) && !rc; i++)
		if (!own[i]->counted)
			rc = count_file(dir, own[i]->path, index, own[i], NULL, ix->binary, &form,
					err);
	if (form.first)
		ix->binary = form.binary;
	g_free((char *)form.first);
	g_free(index);
	return rc;
}
