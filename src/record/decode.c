/* Merging the recorder's streams into a capture (decode.h). */
#include "decode.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/falloc.h>
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
/* The most events a block definition has (the tool's pieces have fewer). */
#define MAX_DEF_EVENTS 65535

typedef struct dc_def_event {
	char kind; /* 'i', 'r' or 'w' */
	uint8_t len;
	uint64_t addr; /* of an instruction */
} dc_def_event;

typedef struct dc_def {
	uint32_t nevents;
	dc_def_event *events;
	uint64_t *last; /* each data event's last address */
} dc_def;

/* ITEM_WAIT: the stream's next record is not written yet (its file is
   read only as far as its slot says is written, README). ITEM_NONE: the
   record read (a definition, a task) is taken in, and the next follows. */
enum item { ITEM_END, ITEM_WAIT, ITEM_BLOCK, ITEM_EVENT, ITEM_NONE };

/* Read to its end: a stream whose instance has ended. */
#define WHOLE UINT64_MAX

typedef struct dc_capture dc_capture;

typedef struct dc_stream {
	dc_capture *c;
	char *path;
	const char *name; /* the file's name, the end of path */
	FILE *file;
	uint64_t offset;    /* of the next byte */
	uint64_t limit;     /* bytes that may be read: written whole records, or WHOLE */
	uint64_t record_at; /* where the record being read starts, for messages */
	uint64_t vas, pid;
	uint64_t last_ts;
	uint64_t task;
	GPtrArray *defs; /* dc_def *, by id */
	/* The reading of a record: it ended inside it (cut), or failed (rc,
	   with the capture's err set); what follows reads nothing. */
	bool cut;
	int rc;
	enum item item;
	uint64_t ts; /* of the item (a block's first reference) */
	dc_def *block;
	uint64_t nrefs;
	uint64_t *addrs; /* the block's references' addresses */
	uint64_t addrs_size;
	uint64_t released; /* bytes of the file given back (pacing) */
	char text[MAX_EVENT_TEXT + 1];
} dc_stream;

/* The merged capture: its outputs and what the kernel trace numbers. A
   failure to write is kept (rc, err) and ends the step that made it. */
struct dc_capture {
	lp_error *err;
	int rc;
	lp_output *ref;
	lp_output *kern;
	uint8_t refbuf[2520 * LP_REF64_RECORD_SIZE]; /* references not yet written */
	size_t refbuf_len;
	uint64_t ts; /* the next timestamp */
	uint64_t cur_task, cur_vas;
	GHashTable *files;    /* "dev:ino" -> dc_file */
	GHashTable *live_shm; /* the shmids of live segments */
	GHashTable *process;  /* live task -> its process's first task */
	GHashTable *program;  /* process -> the path of its program (char *) */
	uint64_t next_file, next_frame;
	lp_record_summary *sum;
	bool consume; /* what is merged of the streams is removed (pacing) */
};

/* Malformed input: names the stream, the first byte of the record being
   read and the field; the stream reads nothing more. */
static G_GNUC_PRINTF(3, 4) int bad_record(dc_stream *s, const char *field, const char *fmt, ...)
{
	if (s->rc)
		return s->rc;
	char what[MAX_EVENT_TEXT + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return s->rc = lp_fail(s->c->err, LP_EINPUT, "%s: record at byte %" PRIu64 ": field %s: %s",
			       s->path, s->record_at, field, what);
}

/* ---- reading a stream ------------------------------------------------- */

/* The next byte of the record being read; 0 once it is cut or failed. */
static uint8_t need_byte(dc_stream *s)
{
	if (s->cut || s->rc)
		return 0;
	/* Unlocked: one thread reads every stream, and the locking getc was
	   the decoder's largest cost. */
	int c = getc_unlocked(s->file);
	if (c == EOF) {
		if (ferror(s->file))
			s->rc = lp_fail(s->c->err, LP_EIO, "%s: %s", s->path, strerror(errno));
		else
			s->cut = true;
		return 0;
	}
	s->offset++;
	return (uint8_t)c;
}

static uint64_t need_varint(dc_stream *s, const char *field)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b = need_byte(s);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	bad_record(s, field, "a number longer than 64 bits");
	return 0;
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static bool stopped(const dc_stream *s)
{
	return s->cut || s->rc;
}

static void def_free(dc_def *def)
{
	if (!def)
		return;
	g_free(def->events);
	g_free(def->last);
	g_free(def);
}

/* Definitions are numbered from 1 in a process: a bound on the table a
   damaged number could make the decoder allocate. */
#define MAX_BLOCK_ID (UINT64_C(1) << 24)

/* A definition, taken in once read whole. */
static void read_def(dc_stream *s)
{
	uint64_t id = need_varint(s, "block id");
	uint64_t n = need_varint(s, "event count");
	if (stopped(s))
		return;
	if (id == 0 || id > MAX_BLOCK_ID || n == 0 || n > MAX_DEF_EVENTS) {
		bad_record(s, "block definition", "id %" PRIu64 " with %" PRIu64 " events", id, n);
		return;
	}
	dc_def *def = g_new(dc_def, 1);
	def->nevents = (uint32_t)n;
	def->events = g_new0(dc_def_event, n);
	def->last = g_new0(uint64_t, n);
	uint64_t next_insn = 0;
	for (uint64_t k = 0; k < n && !stopped(s); k++) {
		dc_def_event *e = &def->events[k];
		e->kind = (char)need_byte(s);
		e->len = need_byte(s);
		if (stopped(s))
			break;
		if ((e->kind != 'i' && e->kind != 'r' && e->kind != 'w') || e->len == 0)
			bad_record(s, "event", "kind %d length %u", e->kind, e->len);
		else if (e->kind == 'i') {
			e->addr = next_insn + (uint64_t)unzigzag(need_varint(s, "instruction address"));
			next_insn = e->addr + e->len;
		}
	}
	if (stopped(s)) {
		def_free(def);
		return;
	}
	if (id >= s->defs->len)
		g_ptr_array_set_size(s->defs, (guint)id + 1);
	def_free(g_ptr_array_index(s->defs, id));
	g_ptr_array_index(s->defs, id) = def;
}

/* A block: its header, then its references' addresses into s->addrs; the
   definition's last addresses change only once it is read whole. */
static void read_block(dc_stream *s, bool next)
{
	uint64_t ts = s->last_ts + (next ? 1 : need_varint(s, "timestamp"));
	uint64_t id = need_varint(s, "block id");
	dc_def *def = id < s->defs->len ? g_ptr_array_index(s->defs, id) : NULL;
	uint64_t n = next ? (def ? def->nevents : 1) : need_varint(s, "reference count");
	if (stopped(s))
		return;
	if (!def || n == 0 || n > def->nevents) {
		bad_record(s, "block", "block %" PRIu64 " undefined or shorter than %" PRIu64 " references",
			   id, n);
		return;
	}
	if (s->task == 0) {
		bad_record(s, "block", "no task yet");
		return;
	}
	if (n > s->addrs_size) {
		s->addrs = g_renew(uint64_t, s->addrs, n);
		s->addrs_size = n;
	}
	for (uint64_t k = 0; k < n && !stopped(s); k++) {
		const dc_def_event *e = &def->events[k];
		s->addrs[k] = e->kind == 'i' ? e->addr
					     : def->last[k] + (uint64_t)unzigzag(need_varint(s, "data address"));
	}
	if (stopped(s))
		return;
	for (uint64_t k = 0; k < n; k++)
		if (def->events[k].kind != 'i')
			def->last[k] = s->addrs[k];
	s->ts = ts;
	s->block = def;
	s->nrefs = n;
	s->last_ts = ts + n - 1;
	s->item = ITEM_BLOCK;
}

static void read_event(dc_stream *s)
{
	uint64_t ts = s->last_ts + need_varint(s, "timestamp");
	uint64_t len = need_varint(s, "event length");
	if (stopped(s))
		return;
	if (len > MAX_EVENT_TEXT) {
		bad_record(s, "event", "%" PRIu64 " bytes long", len);
		return;
	}
	/* A name is the rest of a line of the kernel trace: a control
	   character in it (a newline in a path) becomes '?'. */
	for (uint64_t k = 0; k < len; k++) {
		uint8_t b = need_byte(s);
		s->text[k] = b < 0x20 || b == 0x7f ? '?' : (char)b;
	}
	s->text[len] = '\0';
	if (stopped(s))
		return;
	s->ts = ts;
	s->last_ts = ts;
	s->item = ITEM_EVENT;
}

static void read_record(dc_stream *s, uint8_t tag)
{
	s->item = ITEM_NONE;
	switch (tag) {
	case TAG_SBDEF:
		read_def(s);
		break;
	case TAG_TASK: {
		uint64_t task = need_varint(s, "task");
		if (!stopped(s))
			s->task = task;
		break;
	}
	case TAG_BLOCK:
	case TAG_BLOCK_NEXT:
		read_block(s, tag == TAG_BLOCK_NEXT);
		break;
	case TAG_EVENT:
		read_event(s);
		break;
	default:
		bad_record(s, "tag", "unknown record tag %u", tag);
	}
}

static const char *program_of(dc_capture *c, uint64_t process)
{
	const char *path = g_hash_table_lookup(c->program, GSIZE_TO_POINTER(process));
	return path ? path : "?";
}

/* A record cut short: while its writer may still write it (a limit), the
   stream waits for it, to be read again from its start; once the stream
   is whole, its writer died inside the record (SIGKILL while it wrote):
   the rest is dropped, and counted. */
static int cut_short(dc_stream *s)
{
	s->cut = false;
	if (s->limit != WHOLE) {
		if (fseeko(s->file, (off_t)s->record_at, SEEK_SET) != 0)
			return s->rc = lp_fail(s->c->err, LP_EIO, "%s: %s", s->path, strerror(errno));
		s->offset = s->record_at;
		s->item = ITEM_WAIT;
		return 0;
	}
	lp_record_summary *sum = s->c->sum;
	uint64_t left = s->offset - s->record_at;
	sum->torn_records++;
	sum->torn_bytes += left;
	g_ptr_array_add(sum->torn, g_strdup_printf("process %" PRIu64 " (%s): torn last record: %" PRIu64
						   " byte%s left over, dropped",
						   s->pid, program_of(s->c, s->pid), left,
						   left == 1 ? "" : "s"));
	s->item = ITEM_END;
	return 0;
}

/* Reads up to the next block or event (definitions and task changes are
   taken in on the way). */
static int advance(dc_stream *s)
{
	do {
		s->record_at = s->offset;
		if (s->offset >= s->limit) {
			s->item = ITEM_WAIT;
			return 0;
		}
		uint8_t tag = need_byte(s);
		if (s->rc)
			return s->rc;
		if (s->cut) {
			/* A live stream shorter than its slot says waits for the
			   rest, and ends only when whole. */
			s->cut = false;
			s->item = s->limit == WHOLE ? ITEM_END : ITEM_WAIT;
			return 0;
		}
		read_record(s, tag);
		if (s->rc)
			return s->rc;
		if (s->cut)
			return cut_short(s);
	} while (s->item == ITEM_NONE);
	return 0;
}

static void stream_close(dc_stream *s)
{
	if (s->defs) {
		for (guint k = 0; k < s->defs->len; k++)
			def_free(g_ptr_array_index(s->defs, k));
		g_ptr_array_free(s->defs, TRUE);
	}
	if (s->file)
		fclose(s->file);
	g_free(s->addrs);
	g_free(s->path);
	g_free(s);
}

/* Opens stream dir/name, to be read up to limit (its header is in the first
   bytes written), and reads up to its first block or event, into *out,
   whatever the result (to be closed by the caller). A header cut short is
   a stream whose process died before its first write ended: it ends
   there. */
static int stream_open(dc_capture *c, const char *dir, const char *name, uint64_t limit,
		       dc_stream **out)
{
	dc_stream *s = *out = g_new0(dc_stream, 1);
	s->c = c;
	s->limit = limit;
	s->path = g_build_filename(dir, name, NULL);
	s->name = s->path + strlen(s->path) - strlen(name);
	s->defs = g_ptr_array_new();
	/* Writable when what is merged of it is given back (release_merged). */
	s->file = fopen(s->path, c->consume ? "r+b" : "rb");
	if (!s->file)
		return lp_fail(c->err, LP_EIO, "%s: %s", s->path, strerror(errno));
	char magic[8];
	for (int k = 0; k < 8; k++)
		magic[k] = (char)need_byte(s);
	if (!stopped(s) && memcmp(magic, STREAM_MAGIC, 8) != 0)
		return bad_record(s, "magic", "not a recorder stream");
	s->vas = need_varint(s, "vas");
	s->pid = need_varint(s, "pid");
	if (s->rc)
		return s->rc;
	if (s->cut) {
		s->limit = WHOLE; /* what a slot says is written holds the header */
		return cut_short(s);
	}
	return advance(s);
}

/* ---- the merged capture ------------------------------------------------- */

static void write_out(dc_capture *c, lp_output *out, const void *buf, size_t n)
{
	if (!c->rc)
		c->rc = lp_output_write(out, buf, n, c->err);
}

static G_GNUC_PRINTF(2, 3) void kern_line(dc_capture *c, const char *fmt, ...)
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

static G_GNUC_PRINTF(3, 4) void kern(dc_capture *c, char tag, const char *fmt, ...)
{
	char fields[MAX_EVENT_TEXT + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fields, sizeof fields, fmt, ap);
	va_end(ap);
	kern_line(c, "%c %" PRIx64 "%s%s", tag, c->ts++, *fields ? " " : "", fields);
	c->sum->events[(uint8_t)tag]++;
}

static void switch_to(dc_capture *c, uint64_t task, uint64_t vas)
{
	if (task == c->cur_task && vas == c->cur_vas)
		return;
	kern(c, 'S', "%" PRIx64 " %" PRIx64, task, vas);
	c->cur_task = task;
	c->cur_vas = vas;
}

static void reference(dc_capture *c, char type, unsigned len, uint64_t vas, uint64_t addr)
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

static void emit_block(dc_capture *c, dc_stream *s)
{
	switch_to(c, s->task, s->vas);
	for (uint64_t k = 0; k < s->nrefs; k++) {
		const dc_def_event *e = &s->block->events[k];
		reference(c, e->kind, e->len, s->vas, s->addrs[k]);
	}
}

/* A file of the capture: its number and which of its pages have frames. */
typedef struct dc_file {
	uint64_t id;
	GHashTable *frames; /* page index (uint64_t *) -> frame */
} dc_file;

static void file_free(gpointer p)
{
	dc_file *f = p;
	g_hash_table_destroy(f->frames);
	g_free(f);
}

static dc_file *file_of(dc_capture *c, uint64_t dev, uint64_t ino, const char *path, bool create)
{
	char key[64];
	snprintf(key, sizeof key, "%" PRIx64 ":%" PRIx64, dev, ino);
	dc_file *f = g_hash_table_lookup(c->files, key);
	if (f || !create)
		return f;
	f = g_new(dc_file, 1);
	f->id = ++c->next_file;
	f->frames = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_hash_table_insert(c->files, g_strdup(key), f);
	kern_line(c, "# file %" PRIx64 " %s %s", f->id, key, path);
	return f;
}

static uint64_t frame_of(dc_capture *c, dc_file *f, uint64_t index)
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
static void truncate_file(dc_capture *c, dc_file *f, uint64_t size)
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
typedef struct dc_side {
	dc_file *file;
	uint64_t addr;
} dc_side;

/* The kernel's copy of LEN bytes, COPY_PIECE bytes at a time, no piece
   crossing a page of either side; every file page touched gets a frame. */
static void kernel_copy(dc_capture *c, uint64_t task, uint64_t vas, dc_side from, dc_side to,
			uint64_t len)
{
	while (len > 0) {
		uint64_t piece = len < COPY_PIECE ? len : COPY_PIECE;
		uint64_t at[2];
		dc_side *side[2] = {&from, &to};
		for (int k = 0; k < 2; k++) {
			dc_side *cs = side[k];
			if (cs->file) {
				uint64_t in_page = 4096 - (cs->addr & 4095);
				if (piece > in_page)
					piece = in_page;
			}
		}
		for (int k = 0; k < 2; k++) {
			dc_side *cs = side[k];
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

static void task_born(dc_capture *c, uint64_t task, uint64_t process)
{
	if (!g_hash_table_contains(c->process, GSIZE_TO_POINTER(task)))
		c->sum->tasks++;
	g_hash_table_insert(c->process, GSIZE_TO_POINTER(task), GSIZE_TO_POINTER(process));
}

static uint64_t process_of(dc_capture *c, uint64_t task)
{
	gpointer p = g_hash_table_lookup(c->process, GSIZE_TO_POINTER(task));
	return p ? GPOINTER_TO_SIZE(p) : task;
}

static void task_exit(dc_capture *c, uint64_t task)
{
	kern(c, 'X', "%" PRIx64, task);
	g_hash_table_remove(c->process, GSIZE_TO_POINTER(task));
	if (c->cur_task == task)
		c->cur_task = c->cur_vas = 0;
}

static int bad_event(dc_stream *s, const char *field)
{
	return bad_record(s, field, "event \"%s\"", s->text);
}

/* The recorder's events (README: its own words), each in the kernel
   trace's: one function a tag, the text in s->text. */

/* E task name: an exec, or the first program. */
static int event_exec(dc_capture *c, dc_stream *s)
{
	uint64_t task;
	int name_at = -1;
	if (sscanf(s->text, "E %" SCNx64 " %n", &task, &name_at) != 1 || name_at < 0)
		return bad_event(s, "E");
	const char *name = s->text + name_at;
	/* The other threads of an exec'ing process end with it. */
	uint64_t process = process_of(c, task);
	GList *tasks = g_hash_table_get_keys(c->process);
	for (GList *l = tasks; l; l = l->next) {
		uint64_t other = GPOINTER_TO_SIZE(l->data);
		if (other != task && process_of(c, other) == process)
			task_exit(c, other);
	}
	g_list_free(tasks);
	if (c->sum->processes == 0)
		c->sum->processes = 1; /* the first program */
	task_born(c, task, process);
	g_hash_table_insert(c->program, GSIZE_TO_POINTER(process), g_strdup(name));
	kern(c, 'E', "%" PRIx64 " %" PRIx64 " %s", task, s->vas, name);
	return 0;
}

/* m|M task start length pgoff flags prot dev ino name */
static int event_map(dc_capture *c, dc_stream *s)
{
	char tag;
	uint64_t a[8];
	int name_at = -1;
	if (sscanf(s->text, "%c %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
			    " %" SCNx64 " %" SCNx64 " %n",
		   &tag, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &name_at) != 9 ||
	    name_at < 0)
		return bad_event(s, "M");
	/* A mapping made before the first instruction: no switch before it
	   (E, M..., then S). */
	if (tag == 'M')
		switch_to(c, a[0], s->vas);
	bool anon = a[4] & 0x20;
	const char *name = s->text + name_at;
	uint64_t file = anon ? 0 : file_of(c, a[6], a[7], name, true)->id;
	kern(c, 'M', "%" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
		     " %s",
	     a[0], a[1], a[2], anon ? 0 : a[3], a[4], a[5], file, anon ? "-" : name);
	return 0;
}

/* U task start length, B task old new, D task start */
static int event_range(dc_capture *c, dc_stream *s)
{
	uint64_t a[3];
	char tag = s->text[0];
	int want = tag == 'D' ? 2 : 3;
	if (sscanf(s->text + 1, " %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0], &a[1], &a[2]) != want)
		return bad_event(s, "U/B/D");
	switch_to(c, a[0], s->vas);
	if (want == 2)
		kern(c, tag, "%" PRIx64 " %" PRIx64, a[0], a[1]);
	else
		kern(c, tag, "%" PRIx64 " %" PRIx64 " %" PRIx64, a[0], a[1], a[2]);
	return 0;
}

/* K task old_start old_length new_start new_length */
static int event_remap(dc_capture *c, dc_stream *s)
{
	uint64_t a[5];
	if (sscanf(s->text, "K %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0], &a[1],
		   &a[2], &a[3], &a[4]) != 5)
		return bad_event(s, "K");
	switch_to(c, a[0], s->vas);
	kern(c, 'K', "%" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64, a[0], a[1], a[2], a[3],
	     a[4]);
	return 0;
}

/* F parent child, T parent child */
static int event_child(dc_capture *c, dc_stream *s)
{
	uint64_t parent, child;
	char tag = s->text[0];
	if (sscanf(s->text + 1, " %" SCNx64 " %" SCNx64, &parent, &child) != 2)
		return bad_event(s, "F/T");
	if (tag == 'T') {
		task_born(c, child, process_of(c, parent));
	} else {
		task_born(c, child, child);
		c->sum->processes++;
		const char *program = g_hash_table_lookup(c->program,
							  GSIZE_TO_POINTER(process_of(c, parent)));
		if (program)
			g_hash_table_insert(c->program, GSIZE_TO_POINTER(child), g_strdup(program));
	}
	kern(c, tag, "%" PRIx64 " %" PRIx64, parent, child);
	return 0;
}

/* X task */
static int event_exit(dc_capture *c, dc_stream *s)
{
	uint64_t task;
	if (sscanf(s->text, "X %" SCNx64, &task) != 1)
		return bad_event(s, "X");
	task_exit(c, task);
	return 0;
}

/* A System V segment that this capture has not seen yet gets its G. */
static void shm_new(dc_capture *c, uint64_t shmid, uint64_t size)
{
	if (g_hash_table_contains(c->live_shm, GSIZE_TO_POINTER(shmid)))
		return;
	g_hash_table_insert(c->live_shm, GSIZE_TO_POINTER(shmid), NULL);
	kern(c, 'G', "%" PRIx64 " %" PRIx64, shmid, size);
}

/* G shmid size: shmget also opens segments that exist, only a new one is
   a G. */
static int event_shmget(dc_capture *c, dc_stream *s)
{
	uint64_t shmid, size;
	if (sscanf(s->text, "G %" SCNx64 " %" SCNx64, &shmid, &size) != 2)
		return bad_event(s, "G");
	shm_new(c, shmid, size);
	return 0;
}

/* H task shmid start size */
static int event_shmat(dc_capture *c, dc_stream *s)
{
	uint64_t a[4];
	if (sscanf(s->text, "H %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &a[0], &a[1], &a[2],
		   &a[3]) != 4)
		return bad_event(s, "H");
	shm_new(c, a[1], a[3]);
	switch_to(c, a[0], s->vas);
	kern(c, 'H', "%" PRIx64 " %" PRIx64 " %" PRIx64, a[0], a[1], a[2]);
	return 0;
}

/* Q shmid */
static int event_shmrm(dc_capture *c, dc_stream *s)
{
	uint64_t shmid;
	if (sscanf(s->text, "Q %" SCNx64, &shmid) != 1)
		return bad_event(s, "Q");
	if (g_hash_table_remove(c->live_shm, GSIZE_TO_POINTER(shmid)))
		kern(c, 'Q', "%" PRIx64, shmid);
	return 0;
}

/* P r|w task dev ino offset address length: a read or write of a regular
   file. */
static int event_file_copy(dc_capture *c, dc_stream *s)
{
	char dir;
	uint64_t a[6];
	if (sscanf(s->text, "P %c %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
		   &dir, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]) != 7 ||
	    (dir != 'r' && dir != 'w'))
		return bad_event(s, "P");
	dc_side cache = {file_of(c, a[1], a[2], "?", true), a[3]};
	dc_side user = {NULL, a[4]};
	if (dir == 'r')
		kernel_copy(c, a[0], s->vas, cache, user, a[5]);
	else
		kernel_copy(c, a[0], s->vas, user, cache, a[5]);
	return 0;
}

/* Y task SIDE SIDE length: file to file, SIDE dev ino offset or - - -. */
static int event_file_to_file(dc_capture *c, dc_stream *s)
{
	uint64_t task, len;
	char side[2][3][24];
	if (sscanf(s->text, "Y %" SCNx64 " %23s %23s %23s %23s %23s %23s %" SCNx64, &task, side[0][0],
		   side[0][1], side[0][2], side[1][0], side[1][1], side[1][2], &len) != 8)
		return bad_event(s, "Y");
	dc_side cs[2] = {{NULL, 0}, {NULL, 0}};
	for (int k = 0; k < 2; k++) {
		if (side[k][0][0] == '-')
			continue;
		uint64_t dev = strtoull(side[k][0], NULL, 16), ino = strtoull(side[k][1], NULL, 16);
		cs[k].file = file_of(c, dev, ino, "?", true);
		cs[k].addr = strtoull(side[k][2], NULL, 16);
	}
	if (cs[0].file && cs[1].file) {
		kernel_copy(c, task, s->vas, cs[0], cs[1], len);
		return 0;
	}
	/* The other side (a pipe, a socket) has no page cache and no
	   reference: only the file side's is recorded. */
	int k = cs[0].file ? 0 : 1;
	for (uint64_t off = cs[k].addr, left = len; left > 0;) {
		uint64_t piece = left < COPY_PIECE ? left : COPY_PIECE;
		if (piece > 4096 - (off & 4095))
			piece = 4096 - (off & 4095);
		uint64_t frame = frame_of(c, cs[k].file, off >> 12);
		switch_to(c, task, s->vas);
		reference(c, k == 0 ? 'R' : 'W', (unsigned)piece, s->vas,
			  PAGE_OFFSET + frame * 4096 + (off & 4095));
		off += piece;
		left -= piece;
	}
	return 0;
}

/* u task path: a program that runs untraced (set-user-id, 32-bit): the
   capture says so, the caller warns. */
static int event_untraced(dc_capture *c, dc_stream *s)
{
	uint64_t task;
	int name_at = -1;
	if (sscanf(s->text, "u %" SCNx64 " %n", &task, &name_at) != 1 || name_at < 0)
		return bad_event(s, "u");
	const char *path = s->text + name_at;
	kern_line(c, "# untraced %s: run without the recorder (set-user-id, set-group-id, "
		     "with capabilities or 32-bit): task %" PRIx64 " and what it starts "
		     "are missing",
		  path, task);
	g_ptr_array_add(c->sum->untraced, g_strdup(path));
	return 0;
}

/* L task what: the process fails on a limit of Valgrind (README): the
   capture says so, the caller warns. */
static int event_limit(dc_capture *c, dc_stream *s)
{
	uint64_t task;
	int what_at = -1;
	if (sscanf(s->text, "L %" SCNx64 " %n", &task, &what_at) != 1 || what_at < 0)
		return bad_event(s, "L");
	uint64_t process = process_of(c, task);
	char *line = g_strdup_printf("process %" PRIu64 " (%s) fails on a limit of Valgrind: %s",
				     process, program_of(c, process), s->text + what_at);
	kern_line(c, "# %s", line);
	g_ptr_array_add(c->sum->limits, line);
	return 0;
}

/* N dev ino path */
static int event_name(dc_capture *c, dc_stream *s)
{
	uint64_t dev, ino;
	int name_at = -1;
	if (sscanf(s->text, "N %" SCNx64 " %" SCNx64 " %n", &dev, &ino, &name_at) != 2 || name_at < 0)
		return bad_event(s, "N");
	file_of(c, dev, ino, s->text + name_at, true);
	return 0;
}

/* Z dev ino size */
static int event_truncate(dc_capture *c, dc_stream *s)
{
	uint64_t dev, ino, size;
	if (sscanf(s->text, "Z %" SCNx64 " %" SCNx64 " %" SCNx64, &dev, &ino, &size) != 3)
		return bad_event(s, "Z");
	dc_file *f = file_of(c, dev, ino, "?", false);
	if (f)
		truncate_file(c, f, size);
	return 0;
}

static int emit_event(dc_capture *c, dc_stream *s)
{
	switch (s->text[0]) {
	case 'E':
		return event_exec(c, s);
	case 'm':
	case 'M':
		return event_map(c, s);
	case 'U':
	case 'B':
	case 'D':
		return event_range(c, s);
	case 'K':
		return event_remap(c, s);
	case 'F':
	case 'T':
		return event_child(c, s);
	case 'X':
		return event_exit(c, s);
	case 'G':
		return event_shmget(c, s);
	case 'H':
		return event_shmat(c, s);
	case 'Q':
		return event_shmrm(c, s);
	case 'P':
		return event_file_copy(c, s);
	case 'Y':
		return event_file_to_file(c, s);
	case 'u':
		return event_untraced(c, s);
	case 'L':
		return event_limit(c, s);
	case 'N':
		return event_name(c, s);
	case 'Z':
		return event_truncate(c, s);
	default:
		return bad_event(s, "tag");
	}
}

/* ---- merging ---------------------------------------------------------- */

static int by_path(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sift_down(dc_stream **heap, size_t n, size_t i)
{
	for (;;) {
		size_t least = i, l = 2 * i + 1, r = l + 1;
		if (l < n && heap[l]->ts < heap[least]->ts)
			least = l;
		if (r < n && heap[r]->ts < heap[least]->ts)
			least = r;
		if (least == i)
			return;
		dc_stream *t = heap[i];
		heap[i] = heap[least];
		heap[least] = t;
		i = least;
	}
}

static void sift_up(dc_stream **heap, size_t i)
{
	while (i > 0 && heap[i]->ts < heap[(i - 1) / 2]->ts) {
		dc_stream *t = heap[i];
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
/* Words after the slots: how far the merge has gone (the tool paces the
   traced processes by it, 0: no pacing), and the pid of the process that
   merges (0: none; the tool does not wait for a process that is gone). */
#define CLOCK_MERGED (SLOTS_AT + SLOT_WORDS * SLOTS)
#define CLOCK_FRONTEND (CLOCK_MERGED + 1)
#define SLOT_CLAIMED UINT64_MAX

typedef struct dc_slot {
	uint64_t pending, written;
} dc_slot;

struct lp_record_decoder {
	dc_capture *c;
	GPtrArray *streams;    /* dc_stream *: every stream open */
	char *dir;
	uint64_t *clock;       /* DIR/clock, once the tool has made it */
	GHashTable *seen;      /* stream file names met -> dc_stream * (NULL once done) */
	GPtrArray *heap;       /* dc_stream *: those with a block or event to merge */
	GPtrArray *waiting;    /* dc_stream *: those whose next record is not written */
	GPtrArray *names;      /* char *: the stream files met in this step */
	GHashTable *live;      /* vas (uint64_t *) -> dc_slot *: this step's live slots */
	uint64_t last;         /* the last timestamp merged */
	bool started, any;
	bool pacing; /* lp_record_decoder_pace */
};

static void stream_done(lp_record_decoder *dec, dc_stream *s)
{
	g_ptr_array_remove_fast(dec->streams, s);
	stream_close(s);
}

/* Pacing: what is merged of a stream, the bytes before its record being
   read, is given back to the file system RELEASE_STEP bytes at a time
   (a hole punched in the file; a file system that cannot punch holes
   keeps them); a stream merged whole is unlinked. */
#define RELEASE_STEP (UINT64_C(8) << 20)

static void release_merged(dc_stream *s)
{
	uint64_t upto = s->record_at & ~UINT64_C(4095);
	if (!s->c->consume || upto < s->released + RELEASE_STEP)
		return;
	if (fallocate(fileno(s->file), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->released,
		      (off_t)(upto - s->released)) == 0)
		s->released = upto;
}

/* Puts s where its item says: the heap, the waiting list, or done. */
static void place(lp_record_decoder *dec, dc_stream *s)
{
	if (s->item == ITEM_WAIT) {
		release_merged(s);
		g_ptr_array_add(dec->waiting, s);
		return;
	}
	if (s->item == ITEM_END) {
		dec->c->sum->stream_bytes += s->offset;
		g_hash_table_insert(dec->seen, g_strdup(s->name), NULL);
		if (dec->c->consume)
			unlink(s->path);
		stream_done(dec, s);
		return;
	}
	g_ptr_array_add(dec->heap, s);
	sift_up((dc_stream **)dec->heap->pdata, dec->heap->len - 1);
}

/* DIR/clock, writable when pacing (its word CLOCK_MERGED). */
static uint64_t *map_clock(const char *dir, bool writable)
{
	char *path = g_build_filename(dir, "clock", NULL);
	int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	g_free(path);
	struct stat st;
	void *p = MAP_FAILED;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= CLOCK_SIZE)
		p = mmap(NULL, CLOCK_SIZE, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Whether process pid (a slot's: 0 while a fork makes it) is gone, or a
   zombie: killed (SIGKILL) before it freed its slot, it writes nothing
   more (and its parent, which would reap it, may be waiting for the
   merge, the tool's pacing). */
#define PID_LIMIT (UINT64_C(1) << 22) /* the kernel's largest pid_max */
static bool process_gone(uint64_t pid)
{
	if (pid == 0 || pid >= PID_LIMIT)
		return false;
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%" PRIu64 "/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* pid (comm) state ...: the name ends at the last parenthesis. */
	const char *end = strrchr(buf, ')');
	return end && (end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X'));
}

/* The live streams' slots, by vas (uint64_t * -> dc_slot *), and the bound
   below which every record is written; false when some stream has no
   slot (it can be merged only at the end). A slot whose process is gone
   is not live: its stream is whole. */
static bool read_slots(const uint64_t *clock, GHashTable *live, uint64_t *bound)
{
	*bound = __atomic_load_n(&clock[0], __ATOMIC_SEQ_CST);
	for (int i = 0; i < SLOTS; i++) {
		const uint64_t *w = clock + SLOTS_AT + SLOT_WORDS * i;
		uint64_t vas = __atomic_load_n(&w[0], __ATOMIC_SEQ_CST);
		uint64_t pending = __atomic_load_n(&w[2], __ATOMIC_SEQ_CST);
		uint64_t written = __atomic_load_n(&w[3], __ATOMIC_SEQ_CST);
		/* Only a slot with records pending can hold the merge back. */
		if (vas == 0 || vas == SLOT_CLAIMED || __atomic_load_n(&w[0], __ATOMIC_SEQ_CST) != vas ||
		    (pending != 0 && process_gone(__atomic_load_n(&w[1], __ATOMIC_SEQ_CST))))
			continue;
		dc_slot *slot = g_new(dc_slot, 1);
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
static int list_new_names(lp_record_decoder *dec)
{
	g_ptr_array_set_size(dec->names, 0);
	DIR *dh = opendir(dec->dir);
	if (!dh)
		return lp_fail(dec->c->err, LP_EIO, "%s: %s", dec->dir, strerror(errno));
	struct dirent *de;
	while ((de = readdir(dh)))
		if (g_str_has_suffix(de->d_name, ".lps") && !g_hash_table_contains(dec->seen, de->d_name))
			g_ptr_array_add(dec->names, g_strdup(de->d_name));
	closedir(dh);
	g_ptr_array_sort(dec->names, by_path);
	return 0;
}

/* How far the stream of file name may be read: WHOLE without a live slot,
   else what the slot says is written. */
static uint64_t limit_of(GHashTable *live, const char *name)
{
	if (!live)
		return WHOLE;
	char *end;
	uint64_t vas = g_ascii_strtoull(name, &end, 10);
	const dc_slot *slot = strcmp(end, ".lps") ? NULL : g_hash_table_lookup(live, &vas);
	return slot ? slot->written : WHOLE;
}

/* A stream written since the directory was read (its slot is live) joins
   the names to open. */
static void add_unlisted(lp_record_decoder *dec, GHashTable *live)
{
	GPtrArray *names = dec->names;
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, live);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		char *name = g_strdup_printf("%" PRIu64 ".lps", *(uint64_t *)key);
		bool listed = false;
		for (guint k = 0; k < names->len && !listed; k++)
			listed = !strcmp(g_ptr_array_index(names, k), name);
		if (!listed && ((dc_slot *)value)->written > 0 && !g_hash_table_contains(dec->seen, name))
			g_ptr_array_add(names, name);
		else
			g_free(name);
	}
}

/* Opens the streams met for the first time (dec->names, listed before the
   slots were read: a file listed then whose slot was not live is whole),
   and lets those that waited read further; live is NULL at the end (every
   stream whole). */
static int take_in(lp_record_decoder *dec, GHashTable *live)
{
	if (live)
		add_unlisted(dec, live);
	for (guint k = 0; k < dec->names->len; k++) {
		const char *name = g_ptr_array_index(dec->names, k);
		uint64_t limit = limit_of(live, name);
		if (limit == 0)
			continue; /* not even its header written yet */
		dc_stream *s;
		int rc = stream_open(dec->c, dec->dir, name, limit, &s);
		g_ptr_array_add(dec->streams, s);
		if (rc)
			return rc;
		dec->c->sum->streams++;
		g_hash_table_insert(dec->seen, g_strdup(name), s);
		place(dec, s);
	}
	/* Every open stream may now be read further: those with an item to
	   merge too, whose next record must not be taken for the last one
	   written once their slot is gone. */
	for (guint k = 0; k < dec->streams->len; k++) {
		dc_stream *s = g_ptr_array_index(dec->streams, k);
		s->limit = MAX(s->limit, limit_of(live, s->name));
	}
	GPtrArray *waiting = dec->waiting;
	guint still = 0;
	int rc = 0;
	for (guint k = 0; k < waiting->len; k++) {
		dc_stream *s = g_ptr_array_index(waiting, k);
		if (!rc && s->offset < s->limit) {
			clearerr(s->file); /* its end, met before, has moved */
			rc = advance(s);
		}
		if (rc || s->item == ITEM_WAIT)
			waiting->pdata[still++] = s;
		else
			place(dec, s);
	}
	g_ptr_array_set_size(waiting, still);
	return rc;
}

/* Merges the heap's items below bound. */
static int merge_below(lp_record_decoder *dec, uint64_t bound, bool *progress)
{
	dc_capture *c = dec->c;
	dc_stream **heap = (dc_stream **)dec->heap->pdata;
	while (dec->heap->len > 0 && heap[0]->ts < bound) {
		dc_stream *s = heap[0];
		if (dec->any && s->ts <= dec->last)
			return bad_record(s, "timestamp",
					  "%" PRIu64 " is not after %" PRIu64 ", the clock went back",
					  s->ts, dec->last);
		int rc = 0;
		if (s->item == ITEM_BLOCK) {
			emit_block(c, s);
			dec->last = s->ts + s->nrefs - 1;
		} else {
			rc = emit_event(c, s);
			dec->last = s->ts;
		}
		if (rc || (rc = c->rc) || (rc = advance(s)))
			return rc;
		dec->any = true;
		*progress = true;
		if (s->item == ITEM_BLOCK || s->item == ITEM_EVENT) {
			release_merged(s);
			sift_down(heap, dec->heap->len, 0);
			continue;
		}
		heap[0] = heap[dec->heap->len - 1];
		g_ptr_array_set_size(dec->heap, dec->heap->len - 1);
		sift_down(heap, dec->heap->len, 0);
		place(dec, s);
	}
	return 0;
}

/* Pacing: every record below bound is merged (0: no pacing). */
static void publish_merged(lp_record_decoder *dec, uint64_t bound)
{
	if (dec->pacing && dec->clock)
		__atomic_store_n(&dec->clock[CLOCK_MERGED], bound, __ATOMIC_SEQ_CST);
}

static int merge(lp_record_decoder *dec, bool last, bool *progress)
{
	dc_capture *c = dec->c;
	if (!dec->started) {
		write_out(c, c->ref, LP_REF64_HEADER, LP_REF64_HEADER_SIZE);
		kern_line(c, "# recorded by laplace-record %s, a Valgrind tool",
			  LP_RECORD_TOOL_VERSION);
		dec->started = true;
	}
	uint64_t bound = WHOLE;
	if (!last && !dec->clock && !(dec->clock = map_clock(dec->dir, dec->pacing)))
		return c->rc;
	int rc = list_new_names(dec);
	if (rc)
		return rc;
	g_hash_table_remove_all(dec->live);
	if (!last && !read_slots(dec->clock, dec->live, &bound)) {
		/* Streams without a slot are merged at the end: no pacing. */
		publish_merged(dec, 0);
		return c->rc;
	}
	if ((rc = take_in(dec, last ? NULL : dec->live)))
		return rc;
	if (last && g_hash_table_size(dec->seen) == 0)
		return lp_fail(c->err, LP_EINPUT, "%s: no streams", dec->dir);
	if ((rc = merge_below(dec, bound, progress)))
		return rc;
	publish_merged(dec, last ? 0 : bound);
	if (last) {
		write_out(c, c->ref, c->refbuf, c->refbuf_len);
		c->refbuf_len = 0;
	}
	return c->rc;
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
	sum->torn = g_ptr_array_new_with_free_func(g_free);
	sum->limits = g_ptr_array_new_with_free_func(g_free);
	raise_open_files_limit();
	lp_record_decoder *dec = g_new0(lp_record_decoder, 1);
	dec->streams = g_ptr_array_new();
	dec->dir = g_strdup(dir);
	dec->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	dec->heap = g_ptr_array_new();
	dec->waiting = g_ptr_array_new();
	dec->names = g_ptr_array_new_with_free_func(g_free);
	dec->live = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	dc_capture *c = dec->c = g_new0(dc_capture, 1);
	c->ref = ref;
	c->kern = kern;
	c->ts = 1;
	c->sum = sum;
	c->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_free);
	c->live_shm = g_hash_table_new(g_direct_hash, g_direct_equal);
	c->process = g_hash_table_new(g_direct_hash, g_direct_equal);
	c->program = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	return dec;
}

int lp_record_decoder_step(lp_record_decoder *dec, bool last, bool *progress, lp_error *err)
{
	bool merged = false;
	dec->c->err = err;
	int rc = merge(dec, last, &merged);
	/* A merge that failed goes no further: nothing waits for it. */
	if (rc)
		publish_merged(dec, 0);
	if (progress)
		*progress = merged;
	return rc;
}

void lp_record_decoder_free(lp_record_decoder *dec)
{
	if (!dec)
		return;
	while (dec->streams->len > 0)
		stream_done(dec, g_ptr_array_index(dec->streams, 0));
	g_ptr_array_free(dec->streams, TRUE);
	g_ptr_array_free(dec->heap, TRUE);
	g_ptr_array_free(dec->waiting, TRUE);
	g_ptr_array_free(dec->names, TRUE);
	g_hash_table_destroy(dec->live);
	g_hash_table_destroy(dec->seen);
	if (dec->clock)
		munmap((void *)dec->clock, CLOCK_SIZE);
	dc_capture *c = dec->c;
	g_hash_table_destroy(c->files);
	g_hash_table_destroy(c->live_shm);
	g_hash_table_destroy(c->process);
	g_hash_table_destroy(c->program);
	g_free(c);
	g_free(dec->dir);
	g_free(dec);
}

void lp_record_decoder_pace(lp_record_decoder *dec)
{
	dec->pacing = true;
	dec->c->consume = true;
}

int lp_record_clock_create(const char *dir, unsigned cpu, lp_error *err)
{
	uint64_t words[CLOCK_SIZE / sizeof(uint64_t)] = {0};
	words[CLOCK_CPU] = (uint64_t)cpu + 1;
	words[CLOCK_FRONTEND] = (uint64_t)getpid();
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
	if (!sum)
		return;
	GPtrArray **lists[] = {&sum->untraced, &sum->torn, &sum->limits};
	for (size_t k = 0; k < G_N_ELEMENTS(lists); k++)
		if (*lists[k]) {
			g_ptr_array_free(*lists[k], TRUE);
			*lists[k] = NULL;
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
