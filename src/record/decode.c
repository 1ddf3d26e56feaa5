/* Merging the recorder's streams into a capture (decode.h). */
#include "decode.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "core/error.h"
#include "formats/refio.h"

#define TAG_SBDEF 1
#define TAG_BLOCK 2
#define TAG_TASK 3
#define TAG_EVENT 4
#define TAG_BLOCK_NEXT 5
#define STREAM_MAGIC "LPRSTRM1"
#define MAX_EVENT_TEXT 4200
#define PAGE_OFFSET UINT64_C(0xffff888000000000)
#define COPY_PIECE 64

typedef struct {
	char kind; /* 'i', 'r' or 'w' */
	uint8_t len;
	uint64_t addr; /* of an instruction */
} DefEvent;

typedef struct {
	uint32_t nevents;
	DefEvent *events;
	uint64_t *last; /* each data event's last address */
} BlockDef;

/* ITEM_WAIT: the stream's next record is not written yet (its file is
   read only as far as its slot says is written, README). */
enum item { ITEM_END, ITEM_WAIT, ITEM_BLOCK, ITEM_EVENT };

/* Read to its end: a stream whose instance has ended. */
#define WHOLE UINT64_MAX

typedef struct Decoder Decoder;

typedef struct {
	Decoder *d;
	char *path;
	const char *name; /* the file's name, the end of path */
	FILE *file;
	uint64_t offset;    /* of the next byte */
	uint64_t limit;     /* bytes that may be read: written whole records, or WHOLE */
	uint64_t record_at; /* where the record being read starts, for messages */
	uint64_t vas;
	uint64_t last_ts;
	uint64_t task;
	GPtrArray *defs; /* BlockDef *, by id */
	enum item item;
	uint64_t ts; /* of the item (a block's first reference) */
	BlockDef *block;
	uint64_t nrefs;
	char text[MAX_EVENT_TEXT + 1];
} Stream;

/* The merge's state. A malformed stream or a failed write is found deep in
   the reading of a record: fail() records it and jumps back to
   lp_record_decoder_step, which leaves the rest to lp_record_decoder_free. */
struct Decoder {
	jmp_buf failed;
	lp_error *err;
	GPtrArray *streams; /* every Stream open */
};

static G_NORETURN G_GNUC_PRINTF(3, 4) void fail(Decoder *d, int status, const char *fmt, ...)
{
	char msg[sizeof d->err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	lp_fail(d->err, status, "%s", msg);
	longjmp(d->failed, 1);
}

/* Malformed input: names the stream, the first byte of the record being
   read and the field. */
static G_NORETURN G_GNUC_PRINTF(3, 4) void bad_record(const Stream *s, const char *field,
						      const char *fmt, ...)
{
	char what[MAX_EVENT_TEXT + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	fail(s->d, LP_EINPUT, "%s: record at byte %" PRIu64 ": field %s: %s", s->path, s->record_at,
	     field, what);
}

/* ---- reading a stream ------------------------------------------------- */

static bool get_byte(Stream *s, uint8_t *b)
{
	/* Unlocked: one thread reads every stream, and the locking getc was
	   the decoder's largest cost. */
	int c = getc_unlocked(s->file);
	if (c == EOF) {
		if (ferror(s->file))
			fail(s->d, LP_EIO, "%s: %s", s->path, strerror(errno));
		return false;
	}
	s->offset++;
	*b = (uint8_t)c;
	return true;
}

static uint8_t need_byte(Stream *s, const char *field)
{
	uint8_t b;
	if (!get_byte(s, &b))
		bad_record(s, field, "the stream ends inside a record");
	return b;
}

static uint64_t need_varint(Stream *s, const char *field)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b = need_byte(s, field);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	bad_record(s, field, "a number longer than 64 bits");
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void block_def_free(BlockDef *def)
{
	g_free(def->events);
	g_free(def->last);
	g_free(def);
}

/* Definitions are numbered from 1 in a process: a bound on the table a
   damaged number could make the decoder allocate. */
#define MAX_BLOCK_ID (UINT64_C(1) << 24)

static void read_def(Stream *s)
{
	uint64_t id = need_varint(s, "block id");
	uint64_t n = need_varint(s, "event count");
	if (id == 0 || id > MAX_BLOCK_ID || n == 0 || n > 65535)
		bad_record(s, "block definition", "id %" PRIu64 " with %" PRIu64 " events", id, n);
	BlockDef *def = g_new(BlockDef, 1);
	def->nevents = (uint32_t)n;
	def->events = g_new0(DefEvent, n);
	def->last = g_new0(uint64_t, n);
	/* In the table before its events are read, so that a failure frees it. */
	if (id >= s->defs->len)
		g_ptr_array_set_size(s->defs, (guint)id + 1);
	BlockDef *old = g_ptr_array_index(s->defs, id);
	if (old)
		block_def_free(old);
	g_ptr_array_index(s->defs, id) = def;
	uint64_t next_insn = 0;
	for (uint64_t k = 0; k < n; k++) {
		DefEvent *e = &def->events[k];
		e->kind = (char)need_byte(s, "event kind");
		e->len = need_byte(s, "event length");
		if ((e->kind != 'i' && e->kind != 'r' && e->kind != 'w') || e->len == 0)
			bad_record(s, "event", "kind %d length %u", e->kind, e->len);
		if (e->kind == 'i') {
			e->addr = next_insn + (uint64_t)unzigzag(need_varint(s, "instruction address"));
			next_insn = e->addr + e->len;
		}
	}
}

/* Reads up to the next block or event (definitions and task changes are
   taken in on the way). */
static void advance(Stream *s)
{
	uint8_t tag;
	for (;;) {
		s->record_at = s->offset;
		if (s->offset >= s->limit) {
			s->item = ITEM_WAIT;
			return;
		}
		if (!get_byte(s, &tag)) {
			/* A live stream shorter than its slot says waits for the
			   rest, and ends only when whole. */
			s->item = s->limit == WHOLE ? ITEM_END : ITEM_WAIT;
			return;
		}
		switch (tag) {
		case TAG_SBDEF:
			read_def(s);
			break;
		case TAG_TASK:
			s->task = need_varint(s, "task");
			break;
		case TAG_BLOCK:
		case TAG_BLOCK_NEXT: {
			bool next = tag == TAG_BLOCK_NEXT;
			s->ts = s->last_ts + (next ? 1 : need_varint(s, "timestamp"));
			uint64_t id = need_varint(s, "block id");
			s->block = id < s->defs->len ? g_ptr_array_index(s->defs, id) : NULL;
			s->nrefs = next ? (s->block ? s->block->nevents : 1)
					: need_varint(s, "reference count");
			if (!s->block || s->nrefs == 0 || s->nrefs > s->block->nevents)
				bad_record(s, "block",
					   "block %" PRIu64 " undefined or shorter than %" PRIu64
					   " references",
					   id, s->nrefs);
			if (s->task == 0)
				bad_record(s, "block", "no task yet");
			s->last_ts = s->ts + s->nrefs - 1;
			s->item = ITEM_BLOCK;
			return;
		}
		case TAG_EVENT: {
			s->ts = s->last_ts + need_varint(s, "timestamp");
			uint64_t len = need_varint(s, "event length");
			if (len > MAX_EVENT_TEXT)
				bad_record(s, "event", "%" PRIu64 " bytes long", len);
			/* A name is the rest of a line of the kernel trace: a control
			   character in it (a newline in a path) becomes '?'. */
			for (uint64_t k = 0; k < len; k++) {
				uint8_t b = need_byte(s, "event text");
				s->text[k] = b < 0x20 || b == 0x7f ? '?' : (char)b;
			}
			s->text[len] = '\0';
			s->last_ts = s->ts;
			s->item = ITEM_EVENT;
			return;
		}
		default:
			bad_record(s, "tag", "unknown record tag %u", tag);
		}
	}
}

static void stream_close(Stream *s)
{
	if (s->defs) {
		for (guint k = 0; k < s->defs->len; k++) {
			BlockDef *def = g_ptr_array_index(s->defs, k);
			if (def)
				block_def_free(def);
		}
		g_ptr_array_free(s->defs, TRUE);
	}
	if (s->file)
		fclose(s->file);
	g_free(s->path);
	g_free(s);
}

/* Opens stream dir/name, to be read up to limit (its header is in the first
   bytes written), and reads up to its first block or event; the decoder
   closes it (it is in d->streams from the start). */
static Stream *stream_open(Decoder *d, const char *dir, const char *name, uint64_t limit)
{
	Stream *s = g_new0(Stream, 1);
	s->d = d;
	s->limit = limit;
	s->path = g_build_filename(dir, name, NULL);
	s->name = s->path + strlen(s->path) - strlen(name);
	s->defs = g_ptr_array_new();
	g_ptr_array_add(d->streams, s);
	s->file = fopen(s->path, "rb");
	if (!s->file)
		fail(d, LP_EIO, "%s: %s", s->path, strerror(errno));
	char magic[8];
	for (int k = 0; k < 8; k++)
		magic[k] = (char)need_byte(s, "magic");
	if (memcmp(magic, STREAM_MAGIC, 8) != 0)
		bad_record(s, "magic", "not a recorder stream");
	s->vas = need_varint(s, "vas");
	need_varint(s, "pid");
	advance(s);
	return s;
}

/* ---- the merged capture ------------------------------------------------- */

typedef struct {
	Decoder *d;
	lp_output *ref;
	lp_output *kern;
	uint8_t refbuf[2520 * LP_REF64_RECORD_SIZE]; /* references not yet written */
	size_t refbuf_len;
	uint64_t ts; /* the next timestamp */
	uint64_t cur_task, cur_vas;
	GHashTable *files;    /* "dev:ino" -> FileInfo */
	GHashTable *live_shm; /* the shmids of live segments */
	GHashTable *process;  /* live task -> its process's first task */
	uint64_t next_file, next_frame;
	lp_record_summary *sum;
} Capture;

static void write_out(Capture *c, lp_output *out, const void *buf, size_t n)
{
	if (lp_output_write(out, buf, n, c->d->err))
		longjmp(c->d->failed, 1);
}

static G_GNUC_PRINTF(2, 3) void kern_line(Capture *c, const char *fmt, ...)
{
	char line[MAX_EVENT_TEXT + 100];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	size_t len = MIN((size_t)n, sizeof line - 2);
	line[len++] = '\n';
	write_out(c, c->kern, line, len);
}

static G_GNUC_PRINTF(3, 4) void kern(Capture *c, char tag, const char *fmt, ...)
{
	char fields[MAX_EVENT_TEXT + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fields, sizeof fields, fmt, ap);
	va_end(ap);
	kern_line(c, "%c %" PRIx64 "%s%s", tag, c->ts++, *fields ? " " : "", fields);
	c->sum->events[(uint8_t)tag]++;
}

static void switch_to(Capture *c, uint64_t task, uint64_t vas)
{
	if (task == c->cur_task && vas == c->cur_vas)
		return;
	kern(c, 'S', "%" PRIx64 " %" PRIx64, task, vas);
	c->cur_task = task;
	c->cur_vas = vas;
}

static void reference(Capture *c, char type, unsigned len, uint64_t vas, uint64_t addr)
{
	if (c->refbuf_len + LP_REF64_RECORD_SIZE > sizeof c->refbuf) {
		write_out(c, c->ref, c->refbuf, c->refbuf_len);
		c->refbuf_len = 0;
	}
	const lp_ref ref = {.timestamp = c->ts++, .vas = vas, .address = addr,
			    .length = (uint8_t)len, .type = type};
	c->refbuf_len += lp_ref_encode_bin64(c->refbuf + c->refbuf_len, &ref);
	c->sum->refs[(uint8_t)type]++;
}

static void emit_block(Capture *c, Stream *s)
{
	switch_to(c, s->task, s->vas);
	for (uint64_t k = 0; k < s->nrefs; k++) {
		const DefEvent *e = &s->block->events[k];
		uint64_t addr = e->addr;
		if (e->kind != 'i') {
			addr = s->block->last[k] + (uint64_t)unzigzag(need_varint(s, "data address"));
			s->block->last[k] = addr;
		}
		reference(c, e->kind, e->len, s->vas, addr);
	}
}

/* A file of the capture: its number and which of its pages have frames. */
typedef struct {
	uint64_t id;
	GHashTable *frames; /* page index (uint64_t *) -> frame */
} FileInfo;

static void file_info_free(gpointer p)
{
	FileInfo *f = p;
	g_hash_table_destroy(f->frames);
	g_free(f);
}

static FileInfo *file_info(Capture *c, uint64_t dev, uint64_t ino, const char *path, bool create)
{
	char key[64];
	snprintf(key, sizeof key, "%" PRIx64 ":%" PRIx64, dev, ino);
	FileInfo *f = g_hash_table_lookup(c->files, key);
	if (f || !create)
		return f;
	f = g_new(FileInfo, 1);
	f->id = ++c->next_file;
	f->frames = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_hash_table_insert(c->files, g_strdup(key), f);
	kern_line(c, "# file %" PRIx64 " %s %s", f->id, key, path);
	return f;
}

static uint64_t frame_of(Capture *c, FileInfo *f, uint64_t index)
{
	gpointer frame = g_hash_table_lookup(f->frames, &index);
	if (frame)
		return (uint64_t)GPOINTER_TO_SIZE(frame);
	uint64_t fresh = ++c->next_frame;
	g_hash_table_insert(f->frames, g_memdup2(&index, sizeof index), GSIZE_TO_POINTER(fresh));
	kern(c, 'C', "%" PRIx64 " %" PRIx64 " %" PRIx64, fresh, f->id, index);
	return fresh;
}

static int by_value(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The file is cut to SIZE bytes: its pages from there on lose their frames
   (in page order). */
static void truncate_file(Capture *c, FileInfo *f, uint64_t size)
{
	uint64_t first = (size + 4095) >> 12;
	GArray *gone = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, f->frames);
	while (g_hash_table_iter_next(&it, &key, &value))
		if (*(uint64_t *)key >= first)
			g_array_append_val(gone, *(uint64_t *)key);
	g_array_sort(gone, by_value);
	for (guint k = 0; k < gone->len; k++) {
		uint64_t index = g_array_index(gone, uint64_t, k);
		kern(c, 'V', "%" PRIx64,
		     (uint64_t)GPOINTER_TO_SIZE(g_hash_table_lookup(f->frames, &index)));
		g_hash_table_remove(f->frames, &index);
	}
	g_array_free(gone, TRUE);
}

/* One side of a kernel copy: a user buffer (file NULL, address ADDR) or a
   file's page cache at offset ADDR. */
typedef struct {
	FileInfo *file;
	uint64_t addr;
} CopySide;

/* The kernel's copy of LEN bytes, COPY_PIECE bytes at a time, no piece
   crossing a page of either side; every file page touched gets a frame. */
static void kernel_copy(Capture *c, uint64_t task, uint64_t vas, CopySide from, CopySide to,
			uint64_t len)
{
	while (len > 0) {
		uint64_t piece = len < COPY_PIECE ? len : COPY_PIECE;
		uint64_t at[2];
		CopySide *side[2] = {&from, &to};
		for (int k = 0; k < 2; k++) {
			CopySide *cs = side[k];
			if (cs->file) {
				uint64_t in_page = 4096 - (cs->addr & 4095);
				if (piece > in_page)
					piece = in_page;
			}
		}
		for (int k = 0; k < 2; k++) {
			CopySide *cs = side[k];
			at[k] = cs->file ? PAGE_OFFSET + frame_of(c, cs->file, cs->addr >> 12) * 4096 +
					       (cs->addr & 4095)
					 : cs->addr;
		}
		switch_to(c, task, vas);
		reference(c, 'R', (unsigned)piece, vas, at[0]);
		reference(c, 'W', (unsigned)piece, vas, at[1]);
		from.addr += piece;
		to.addr += piece;
		len -= piece;
	}
}

static void task_born(Capture *c, uint64_t task, uint64_t process)
{
	if (!g_hash_table_contains(c->process, GSIZE_TO_POINTER(task)))
		c->sum->tasks++;
	g_hash_table_insert(c->process, GSIZE_TO_POINTER(task), GSIZE_TO_POINTER(process));
}

static void task_exit(Capture *c, uint64_t task)
{
	kern(c, 'X', "%" PRIx64, task);
	g_hash_table_remove(c->process, GSIZE_TO_POINTER(task));
	if (c->cur_task == task)
		c->cur_task = c->cur_vas = 0;
}

static G_NORETURN void bad_event(const Stream *s, const char *field)
{
	bad_record(s, field, "event \"%s\"", s->text);
}

/* An event of the recorder (README: its own words) in the kernel trace's. */
static void emit_event(Capture *c, Stream *s)
{
	const char *t = s->text;
	uint64_t a[8];
	int name_at = -1;
	switch (t[0]) {
	case 'E': {
		if (sscanf(t, "E %" SCNx64 " %n", &a[0], &name_at) != 1 || name_at < 0)
			bad_event(s, "E");
		/* The other threads of an exec'ing process end with it. */
		uint64_t process = a[0];
		gpointer p;
		if ((p = g_hash_table_lookup(c->process, GSIZE_TO_POINTER(a[0]))))
			process = GPOINTER_TO_SIZE(p);
		GList *tasks = g_hash_table_get_keys(c->process);
		for (GList *l = tasks; l; l = l->next) {
			uint64_t other = GPOINTER_TO_SIZE(l->data);
			if (other != a[0] &&
			    GPOINTER_TO_SIZE(g_hash_table_lookup(c->process, l->data)) == process)
				task_exit(c, other);
		}
		g_list_free(tasks);
		if (c->sum->processes == 0)
			c->sum->processes = 1; /* the first program */
		task_born(c, a[0], process);
		kern(c, 'E', "%" PRIx64 " %" PRIx64 " %s", a[0], s->vas, t + name_at);
		break;
	}
	case 'm':
	case 'M': {
		char tag;
		if (sscanf(t, "%c %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
			      " %" SCNx64 " %" SCNx64 " %" SCNx64 " %n",
			   &tag, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7],
			   &name_at) != 9 ||
		    name_at < 0)
			bad_event(s, "M");
		/* A mapping made before the first instruction: no switch before it
		   (E, M..., then S). */
		if (tag == 'M')
			switch_to(c, a[0], s->vas);
		uint64_t file = (a[4] & 0x20) ? 0 : file_info(c, a[6], a[7], t + name_at, true)->id;
		kern(c, 'M', "%" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
			     " %" PRIx64 " %s",
		     a[0], a[1], a[2], (a[4] & 0x20) ? 0 : a[3], a[4], a[5], file,
		     (a[4] & 0x20) ? "-" : t + name_at);
		break;
	}
	case 'U':
	case 'B':
	case 'D': {
		int want = t[0] == 'D' ? 2 : 3;
		if (sscanf(t + 1, " %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0], &a[1], &a[2]) != want)
			bad_event(s, "U/B/D");
		switch_to(c, a[0], s->vas);
		if (want == 2)
			kern(c, t[0], "%" PRIx64 " %" PRIx64, a[0], a[1]);
		else
			kern(c, t[0], "%" PRIx64 " %" PRIx64 " %" PRIx64, a[0], a[1], a[2]);
		break;
	}
	case 'K':
		if (sscanf(t, "K %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0],
			   &a[1], &a[2], &a[3], &a[4]) != 5)
			bad_event(s, "K");
		switch_to(c, a[0], s->vas);
		kern(c, 'K', "%" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64, a[0], a[1],
		     a[2], a[3], a[4]);
		break;
	case 'F':
	case 'T':
		if (sscanf(t + 1, " %" SCNx64 " %" SCNx64, &a[0], &a[1]) != 2)
			bad_event(s, "F/T");
		if (t[0] == 'T') {
			gpointer p = g_hash_table_lookup(c->process, GSIZE_TO_POINTER(a[0]));
			task_born(c, a[1], p ? GPOINTER_TO_SIZE(p) : a[0]);
		} else {
			task_born(c, a[1], a[1]);
			c->sum->processes++;
		}
		kern(c, t[0], "%" PRIx64 " %" PRIx64, a[0], a[1]);
		break;
	case 'X':
		if (sscanf(t, "X %" SCNx64, &a[0]) != 1)
			bad_event(s, "X");
		task_exit(c, a[0]);
		break;
	case 'G':
		if (sscanf(t, "G %" SCNx64 " %" SCNx64, &a[0], &a[1]) != 2)
			bad_event(s, "G");
		/* shmget also opens segments that exist: only a new one is a G. */
		if (!g_hash_table_contains(c->live_shm, GSIZE_TO_POINTER(a[0]))) {
			g_hash_table_insert(c->live_shm, GSIZE_TO_POINTER(a[0]), NULL);
			kern(c, 'G', "%" PRIx64 " %" PRIx64, a[0], a[1]);
		}
		break;
	case 'H':
		if (sscanf(t, "H %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0], &a[1], &a[2],
			   &a[3]) != 4)
			bad_event(s, "H");
		if (!g_hash_table_contains(c->live_shm, GSIZE_TO_POINTER(a[1]))) {
			g_hash_table_insert(c->live_shm, GSIZE_TO_POINTER(a[1]), NULL);
			kern(c, 'G', "%" PRIx64 " %" PRIx64, a[1], a[3]);
		}
		switch_to(c, a[0], s->vas);
		kern(c, 'H', "%" PRIx64 " %" PRIx64 " %" PRIx64, a[0], a[1], a[2]);
		break;
	case 'Q':
		if (sscanf(t, "Q %" SCNx64, &a[0]) != 1)
			bad_event(s, "Q");
		if (g_hash_table_remove(c->live_shm, GSIZE_TO_POINTER(a[0])))
			kern(c, 'Q', "%" PRIx64, a[0]);
		break;
	case 'P': {
		char dir;
		if (sscanf(t, "P %c %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
			      " %" SCNx64,
			   &dir, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]) != 7 ||
		    (dir != 'r' && dir != 'w'))
			bad_event(s, "P");
		CopySide cache = {file_info(c, a[1], a[2], "?", true), a[3]};
		CopySide user = {NULL, a[4]};
		if (dir == 'r')
			kernel_copy(c, a[0], s->vas, cache, user, a[5]);
		else
			kernel_copy(c, a[0], s->vas, user, cache, a[5]);
		break;
	}
	case 'Y': {
		/* Y task (dev ino offset | - - -) twice, length: file to file. */
		char side[2][3][24];
		if (sscanf(t, "Y %" SCNx64 " %23s %23s %23s %23s %23s %23s %" SCNx64, &a[0],
			   side[0][0], side[0][1], side[0][2], side[1][0], side[1][1], side[1][2],
			   &a[1]) != 8)
			bad_event(s, "Y");
		CopySide cs[2] = {{NULL, 0}, {NULL, 0}};
		for (int k = 0; k < 2; k++) {
			if (side[k][0][0] == '-')
				continue;
			uint64_t dev = strtoull(side[k][0], NULL, 16), ino = strtoull(side[k][1], NULL, 16);
			cs[k].file = file_info(c, dev, ino, "?", true);
			cs[k].addr = strtoull(side[k][2], NULL, 16);
		}
		if (cs[0].file && cs[1].file) {
			kernel_copy(c, a[0], s->vas, cs[0], cs[1], a[1]);
			break;
		}
		/* The other side (a pipe, a socket) has no page cache and no
		   reference: only the file side's is recorded. */
		int k = cs[0].file ? 0 : 1;
		for (uint64_t off = cs[k].addr, left = a[1]; left > 0;) {
			uint64_t piece = left < COPY_PIECE ? left : COPY_PIECE;
			if (piece > 4096 - (off & 4095))
				piece = 4096 - (off & 4095);
			uint64_t frame = frame_of(c, cs[k].file, off >> 12);
			switch_to(c, a[0], s->vas);
			reference(c, k == 0 ? 'R' : 'W', (unsigned)piece, s->vas,
				  PAGE_OFFSET + frame * 4096 + (off & 4095));
			off += piece;
			left -= piece;
		}
		break;
	}
	case 'u':
		/* A program that runs untraced (set-user-id, 32-bit): the capture
		   says so, the caller warns. */
		if (sscanf(t, "u %" SCNx64 " %n", &a[0], &name_at) != 1 || name_at < 0)
			bad_event(s, "u");
		kern_line(c, "# untraced %s: run without the recorder (set-user-id, set-group-id, "
			     "with capabilities or 32-bit): task %" PRIx64 " and what it starts "
			     "are missing",
			  t + name_at, a[0]);
		g_ptr_array_add(c->sum->untraced, g_strdup(t + name_at));
		break;
	case 'N':
		if (sscanf(t, "N %" SCNx64 " %" SCNx64 " %n", &a[0], &a[1], &name_at) != 2 ||
		    name_at < 0)
			bad_event(s, "N");
		file_info(c, a[0], a[1], t + name_at, true);
		break;
	case 'Z': {
		if (sscanf(t, "Z %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0], &a[1], &a[2]) != 3)
			bad_event(s, "Z");
		FileInfo *f = file_info(c, a[0], a[1], "?", false);
		if (f)
			truncate_file(c, f, a[2]);
		break;
	}
	default:
		bad_event(s, "tag");
	}
}

/* ---- merging ---------------------------------------------------------- */

static int by_path(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sift_down(Stream **heap, size_t n, size_t i)
{
	for (;;) {
		size_t least = i, l = 2 * i + 1, r = l + 1;
		if (l < n && heap[l]->ts < heap[least]->ts)
			least = l;
		if (r < n && heap[r]->ts < heap[least]->ts)
			least = r;
		if (least == i)
			return;
		Stream *t = heap[i];
		heap[i] = heap[least];
		heap[least] = t;
		i = least;
	}
}

static void sift_up(Stream **heap, size_t i)
{
	while (i > 0 && heap[i]->ts < heap[(i - 1) / 2]->ts) {
		Stream *t = heap[i];
		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* Following the streams (README, "Following the streams"): while the
   command runs, a record may be merged once no other can come before it.
   Every record whose timestamp precedes the clock's value C, read before
   the slots, has been taken; unless its stream's slot says it may be
   pending, it is in the stream's file within the bytes the slot says are
   written (or the whole file, its slot freed). So every record below
   bound = min(C, every live slot's pending bound) is in a file, and is
   merged; the rest wait for a later step. The words are read in the
   order the tool writes them in reverse: the clock, then each slot's vas,
   pending, written, and vas again (a slot that changed meanwhile was
   freed, its stream then whole). */
#define CLOCK_SIZE 4096
#define CLOCK_CPU 2 /* word: 1 + the processor of the traced processes */
#define SLOT_WORDS 4
#define SLOTS 126
#define SLOTS_AT 4  /* word of the first slot */
#define SLOT_CLAIMED UINT64_MAX

typedef struct {
	uint64_t pending, written;
} Slot;

struct lp_record_decoder {
	Decoder d;
	Capture *c;
	char *dir;
	const uint64_t *clock; /* DIR/clock, once the tool has made it */
	GHashTable *seen;      /* stream file names met -> Stream * (NULL once done) */
	GPtrArray *heap;       /* Stream *: those with a block or event to merge */
	GPtrArray *waiting;    /* Stream *: those whose next record is not written */
	GPtrArray *names;      /* char *: the stream files met in this step */
	GHashTable *live;      /* vas (uint64_t *) -> Slot *: this step's live slots */
	uint64_t last;         /* the last timestamp merged */
	bool started, any;
};

static void stream_done(Decoder *d, Stream *s)
{
	g_ptr_array_remove_fast(d->streams, s);
	stream_close(s);
}

/* Puts s where its item says: the heap, the waiting list, or done. */
static void place(lp_record_decoder *dec, Stream *s)
{
	if (s->item == ITEM_WAIT) {
		g_ptr_array_add(dec->waiting, s);
		return;
	}
	if (s->item == ITEM_END) {
		dec->c->sum->stream_bytes += s->offset;
		g_hash_table_insert(dec->seen, g_strdup(s->name), NULL);
		stream_done(&dec->d, s);
		return;
	}
	g_ptr_array_add(dec->heap, s);
	sift_up((Stream **)dec->heap->pdata, dec->heap->len - 1);
}

static const uint64_t *map_clock(const char *dir)
{
	char *path = g_build_filename(dir, "clock", NULL);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	g_free(path);
	struct stat st;
	void *p = MAP_FAILED;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= CLOCK_SIZE)
		p = mmap(NULL, CLOCK_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The live streams' slots, by vas (uint64_t * -> Slot *), and the bound
   below which every record is written; false when some stream has no
   slot (it can be merged only at the end). */
static bool read_slots(const uint64_t *clock, GHashTable *live, uint64_t *bound)
{
	*bound = __atomic_load_n(&clock[0], __ATOMIC_SEQ_CST);
	for (int i = 0; i < SLOTS; i++) {
		const uint64_t *w = clock + SLOTS_AT + SLOT_WORDS * i;
		uint64_t vas = __atomic_load_n(&w[0], __ATOMIC_SEQ_CST);
		uint64_t pending = __atomic_load_n(&w[2], __ATOMIC_SEQ_CST);
		uint64_t written = __atomic_load_n(&w[3], __ATOMIC_SEQ_CST);
		if (vas == 0 || vas == SLOT_CLAIMED || __atomic_load_n(&w[0], __ATOMIC_SEQ_CST) != vas)
			continue;
		Slot *slot = g_new(Slot, 1);
		slot->pending = pending;
		slot->written = written;
		g_hash_table_insert(live, g_memdup2(&vas, sizeof vas), slot);
		if (pending != 0 && pending - 1 < *bound)
			*bound = pending - 1;
	}
	return __atomic_load_n(&clock[3], __ATOMIC_SEQ_CST) == 0;
}

/* The stream file names of dir not met yet, in order (the order of the
   directory's entries must not matter), into dec->names. */
static void list_new_names(lp_record_decoder *dec)
{
	g_ptr_array_set_size(dec->names, 0);
	DIR *dh = opendir(dec->dir);
	if (!dh)
		fail(&dec->d, LP_EIO, "%s: %s", dec->dir, strerror(errno));
	struct dirent *de;
	while ((de = readdir(dh)))
		if (g_str_has_suffix(de->d_name, ".lps") && !g_hash_table_contains(dec->seen, de->d_name))
			g_ptr_array_add(dec->names, g_strdup(de->d_name));
	closedir(dh);
	g_ptr_array_sort(dec->names, by_path);
}

/* How far the stream of file name may be read: WHOLE without a live slot,
   else what the slot says is written. */
static uint64_t limit_of(GHashTable *live, const char *name)
{
	if (!live)
		return WHOLE;
	char *end;
	uint64_t vas = g_ascii_strtoull(name, &end, 10);
	const Slot *slot = strcmp(end, ".lps") ? NULL : g_hash_table_lookup(live, &vas);
	return slot ? slot->written : WHOLE;
}

/* Opens the streams met for the first time (dec->names, listed before the
   slots were read: a file listed then whose slot was not live is whole),
   and lets those that waited read further; live is NULL at the end (every
   stream whole). */
static void take_in(lp_record_decoder *dec, GHashTable *live)
{
	GPtrArray *names = dec->names;
	GHashTableIter it;
	gpointer key, value;
	if (live) {
		/* A stream written since the directory was read. */
		g_hash_table_iter_init(&it, live);
		while (g_hash_table_iter_next(&it, &key, &value)) {
			char *name = g_strdup_printf("%" PRIu64 ".lps", *(uint64_t *)key);
			bool listed = false;
			for (guint k = 0; k < names->len && !listed; k++)
				listed = !strcmp(g_ptr_array_index(names, k), name);
			if (!listed && ((Slot *)value)->written > 0 &&
			    !g_hash_table_contains(dec->seen, name))
				g_ptr_array_add(names, name);
			else
				g_free(name);
		}
	}
	for (guint k = 0; k < names->len; k++) {
		const char *name = g_ptr_array_index(names, k);
		uint64_t limit = limit_of(live, name);
		if (limit == 0)
			continue; /* not even its header written yet */
		Stream *s = stream_open(&dec->d, dec->dir, name, limit);
		dec->c->sum->streams++;
		g_hash_table_insert(dec->seen, g_strdup(name), s);
		place(dec, s);
	}
	/* Every open stream may now be read further: those with an item to
	   merge too, whose next record must not be taken for the last one
	   written once their slot is gone. */
	for (guint k = 0; k < dec->d.streams->len; k++) {
		Stream *s = g_ptr_array_index(dec->d.streams, k);
		s->limit = MAX(s->limit, limit_of(live, s->name));
	}
	GPtrArray *waiting = dec->waiting;
	guint still = 0;
	for (guint k = 0; k < waiting->len; k++) {
		Stream *s = g_ptr_array_index(waiting, k);
		if (s->offset < s->limit) {
			clearerr(s->file); /* its end, met before, has moved */
			advance(s);
		}
		if (s->item == ITEM_WAIT)
			waiting->pdata[still++] = s;
		else
			place(dec, s);
	}
	g_ptr_array_set_size(waiting, still);
}

/* Merges the items below bound. Everything below runs between a setjmp
   and the fail() that may jump back: what it allocates hangs from dec,
   freed either way. Not inlined: none of its variables lives in the frame
   that calls setjmp. */
static G_NO_INLINE void merge(lp_record_decoder *dec, bool last, bool *progress)
{
	Capture *c = dec->c;
	if (!dec->started) {
		write_out(c, c->ref, LP_REF64_HEADER, LP_REF64_HEADER_SIZE);
		kern_line(c, "# recorded by laplace-record %s, a Valgrind tool",
			  LP_RECORD_TOOL_VERSION);
		dec->started = true;
	}
	uint64_t bound = WHOLE;
	if (!last && !dec->clock && !(dec->clock = map_clock(dec->dir)))
		return;
	list_new_names(dec);
	g_hash_table_remove_all(dec->live);
	if (!last && !read_slots(dec->clock, dec->live, &bound))
		return;
	take_in(dec, last ? NULL : dec->live);
	if (last && g_hash_table_size(dec->seen) == 0)
		fail(&dec->d, LP_EINPUT, "%s: no streams", dec->dir);
	Stream **heap = (Stream **)dec->heap->pdata;
	while (dec->heap->len > 0 && heap[0]->ts < bound) {
		Stream *s = heap[0];
		if (dec->any && s->ts <= dec->last)
			bad_record(s, "timestamp",
				   "%" PRIu64 " is not after %" PRIu64 ", the clock went back", s->ts,
				   dec->last);
		if (s->item == ITEM_BLOCK) {
			emit_block(c, s);
			dec->last = s->ts + s->nrefs - 1;
		} else {
			emit_event(c, s);
			dec->last = s->ts;
		}
		dec->any = true;
		*progress = true;
		advance(s);
		if (s->item == ITEM_BLOCK || s->item == ITEM_EVENT) {
			sift_down(heap, dec->heap->len, 0);
			continue;
		}
		heap[0] = heap[dec->heap->len - 1];
		g_ptr_array_set_size(dec->heap, dec->heap->len - 1);
		sift_down(heap, dec->heap->len, 0);
		place(dec, s);
	}
	if (last) {
		write_out(c, c->ref, c->refbuf, c->refbuf_len);
		c->refbuf_len = 0;
	}
}

/* Every stream is open at once while they are merged, one a process. */
static void raise_open_files_limit(void)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
}

lp_record_decoder *lp_record_decoder_new(const char *dir, lp_output *ref, lp_output *kern,
					 lp_record_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	sum->untraced = g_ptr_array_new_with_free_func(g_free);
	raise_open_files_limit();
	lp_record_decoder *dec = g_new0(lp_record_decoder, 1);
	dec->d.streams = g_ptr_array_new();
	dec->dir = g_strdup(dir);
	dec->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	dec->heap = g_ptr_array_new();
	dec->waiting = g_ptr_array_new();
	dec->names = g_ptr_array_new_with_free_func(g_free);
	dec->live = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	Capture *c = dec->c = g_new0(Capture, 1);
	c->d = &dec->d;
	c->ref = ref;
	c->kern = kern;
	c->ts = 1;
	c->sum = sum;
	c->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_info_free);
	c->live_shm = g_hash_table_new(g_direct_hash, g_direct_equal);
	c->process = g_hash_table_new(g_direct_hash, g_direct_equal);
	return dec;
}

int lp_record_decoder_step(lp_record_decoder *dec, bool last, bool *progress, lp_error *err)
{
	bool merged = false;
	dec->d.err = err;
	int rc = 0;
	if (setjmp(dec->d.failed) == 0)
		merge(dec, last, &merged);
	else
		rc = err->status;
	if (progress)
		*progress = merged;
	return rc;
}

void lp_record_decoder_free(lp_record_decoder *dec)
{
	if (!dec)
		return;
	while (dec->d.streams->len > 0)
		stream_done(&dec->d, g_ptr_array_index(dec->d.streams, 0));
	g_ptr_array_free(dec->d.streams, TRUE);
	g_ptr_array_free(dec->heap, TRUE);
	g_ptr_array_free(dec->waiting, TRUE);
	g_ptr_array_free(dec->names, TRUE);
	g_hash_table_destroy(dec->live);
	g_hash_table_destroy(dec->seen);
	if (dec->clock)
		munmap((void *)dec->clock, CLOCK_SIZE);
	Capture *c = dec->c;
	g_hash_table_destroy(c->files);
	g_hash_table_destroy(c->live_shm);
	g_hash_table_destroy(c->process);
	g_free(c);
	g_free(dec->dir);
	g_free(dec);
}

int lp_record_clock_create(const char *dir, unsigned cpu, lp_error *err)
{
	uint64_t words[CLOCK_SIZE / sizeof(uint64_t)] = {0};
	words[CLOCK_CPU] = (uint64_t)cpu + 1;
	char *path = g_build_filename(dir, "clock", NULL);
	GError *gerr = NULL;
	int rc = 0;
	if (!g_file_set_contents(path, (const char *)words, sizeof words, &gerr))
		rc = lp_fail(err, LP_EIO, "%s", gerr->message);
	g_clear_error(&gerr);
	g_free(path);
	return rc;
}

int lp_record_decode(const char *dir, lp_output *ref, lp_output *kern, lp_record_summary *sum,
		     lp_error *err)
{
	lp_record_decoder *dec = lp_record_decoder_new(dir, ref, kern, sum);
	int rc = lp_record_decoder_step(dec, true, NULL, err);
	lp_record_decoder_free(dec);
	return rc;
}

void lp_record_summary_clear(lp_record_summary *sum)
{
	if (sum && sum->untraced) {
		g_ptr_array_free(sum->untraced, TRUE);
		sum->untraced = NULL;
	}
}

static void put_varint(GByteArray *b, uint64_t v)
{
	for (; v >= 0x80; v >>= 7) {
		uint8_t byte = (uint8_t)(v | 0x80);
		g_byte_array_append(b, &byte, 1);
	}
	uint8_t last = (uint8_t)v;
	g_byte_array_append(b, &last, 1);
}

int lp_record_write_untraced(const char *dir, uint64_t task, const char *path, lp_error *err)
{
	char *text = g_strdup_printf("u %" PRIx64 " %s", task, path);
	size_t len = MIN(strlen(text), (size_t)MAX_EVENT_TEXT);
	GByteArray *b = g_byte_array_new();
	const uint8_t event = TAG_EVENT;
	g_byte_array_append(b, (const uint8_t *)STREAM_MAGIC, 8);
	put_varint(b, 1); /* vas */
	put_varint(b, task);
	g_byte_array_append(b, &event, 1);
	put_varint(b, 1); /* timestamp */
	put_varint(b, len);
	g_byte_array_append(b, (const uint8_t *)text, (guint)len);
	char *stream = g_build_filename(dir, "0.lps", NULL);
	GError *gerr = NULL;
	int rc = 0;
	if (!g_file_set_contents(stream, (const char *)b->data, b->len, &gerr))
		rc = lp_fail(err, LP_EIO, "%s", gerr->message);
	g_clear_error(&gerr);
	g_free(stream);
	g_byte_array_free(b, TRUE);
	g_free(text);
	return rc;
}
