/* The per-process merge output (laplace-formats(5), "PER-PROCESS MERGE
 * OUTPUT"): one file per task under the directory of its process, plus
 * kernel, orphan and an index.yaml manifest. The tree is staged: built in
 * DIR.partial-XXXXXX beside DIR and published by the caller with the run's
 * other outputs (staging invariants, src/io/staging.c); sync_tree upholds
 * staging invariant (3) for it. */
#include "formats/procdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/procindex.h"
#include "io/lrulist.h"
#include "io/staging.h"
#include "formats/stats.h"
#include "io/taskcodec.h"
#include "io/workpool.h"
#include "core/numbers.h"
#include "formats/taskline.h"

/* Captures may hold far more tasks than a process may open files, so only a
 * bounded set of task files is open (least recently written closed first,
 * reopened in append mode); only open files own a write buffer.
 * Compressed, every flush of a buffer is one gzip member or zstd frame
 * (src/io/taskcodec.c), appended like plain bytes: a closed file keeps no
 * compressor state, one coder serves them all, and memory stays one buffer
 * per open file whatever the number of tasks. */
#define PD_MAX_OPEN 256
#define PD_FD_RESERVE 32 /* descriptors left for inputs and the rest */
#define PD_BUF_SIZE (64 * 1024)

/* What index.yaml says of a file, or of one task's records in it. */
typedef struct pd_counts {
	uint64_t records, references;
	uint64_t first_ts, last_ts;
} pd_counts;

typedef struct pd_file {
	lp_task_id id;      /* for task files: the hash key (pid and tid) */
	char *path;         /* relative to the directory: "1a/1b", "kernel", "orphan" */
	int fd;             /* -1 while closed */
	char *buf;          /* PD_BUF_SIZE bytes while open, else NULL */
	size_t used;
	bool created;
	bool compressed_any; /* a member or frame was written (compressed output) */
	bool in_process_dir; /* a task file, under its process's directory */
	size_t unstarted;   /* bytes written since its writeback was started */
	pd_counts counts;   /* kernel and orphan; task files count by member */
	lp_lru_link open;   /* in lp_procdir.open while open */
} pd_file;

/* A task of one process. A pid reused for a new process while tasks of the
 * old one live on makes two processes whose tasks may share a file (the
 * same pid and tid): each counts its own records. */
typedef struct pd_member {
	lp_task_id id;      /* the hash key: pid, tid and process */
	pd_file *file;
	pd_counts counts;
} pd_member;

typedef struct pd_process {
	lp_task_id id;      /* the hash key: pid and process (tid 0) */
	GPtrArray *programs; /* char *, names of its E events in order */
	GPtrArray *members;  /* pd_member *, owned by lp_procdir.members */
} pd_process;

struct lp_procdir {
	lp_staged *staged; /* until released to the caller */
	const char *partial; /* where it is built: the staged path */
	int dirfd;      /* the partial directory */
	bool user_only;
	enum lp_layout layout;
	bool binary;    /* the binary task form */
	char *reference, *kernel_input;
	GHashTable *tasks;     /* lp_task_id * (pid, tid) -> pd_file * (owns the files) */
	GHashTable *members;   /* lp_task_id * -> pd_member * (owns them) */
	GHashTable *processes; /* lp_task_id * (pid, process) -> pd_process * (owns them) */
	pd_file kernel, orphan;
	lp_lru_list open;      /* the open files, most recently written first */
	unsigned nopen, max_open;
	GPtrArray *spare_bufs; /* buffers of closed files, for reuse */
	const char *suffix;    /* of every file but index.yaml: "", ".gz", ".zst" */
	lp_piece_coder *coder; /* NULL: plain files, or the pool's */
	lp_piece_pool *pool;   /* compressed files with threads */
};

static guint task_id_hash(gconstpointer p)
{
	const lp_task_id *id = p;
	uint64_t h = id->pid * 0x9e3779b97f4a7c15u ^ id->tid;
	return (guint)(h ^ h >> 32);
}

static gboolean task_id_equal(gconstpointer a, gconstpointer b)
{
	const lp_task_id *x = a, *y = b;
	return x->pid == y->pid && x->tid == y->tid;
}

static guint member_hash(gconstpointer p)
{
	const lp_task_id *id = p;
	return task_id_hash(p) ^ (guint)(id->process * 0x9e3779b97f4a7c15u >> 32);
}

static gboolean member_equal(gconstpointer a, gconstpointer b)
{
	const lp_task_id *x = a, *y = b;
	return task_id_equal(a, b) && x->process == y->process;
}

static void file_free(gpointer p)
{
	pd_file *f = p;
	g_free(f->path);
	g_free(f);
}

static void process_free(gpointer p)
{
	pd_process *proc = p;
	g_ptr_array_free(proc->programs, TRUE);
	g_ptr_array_free(proc->members, TRUE);
	g_free(proc);
}

/* ---- the open-file set ---- */

/* The file of link (of lp_procdir.open), or NULL. */
static pd_file *file_of(lp_lru_link *link)
{
	return link ? LP_LRU_ENTRY(link, pd_file, open) : NULL;
}

static int write_all(const lp_procdir *pd, int fd, const char *path, const char *data, size_t n,
		     lp_error *err)
{
	while (n > 0) {
		ssize_t k = write(fd, data, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return lp_fail(err, LP_EIO, "cannot write %s/%s: %s", pd->partial, path,
				       g_strerror(errno));
		}
		data += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Every this many bytes written to a file, its writeback to disk is
 * started (when outputs are synced): the disk then writes while the merge
 * goes on, instead of taking the whole directory at the fsyncs of the end
 * (nothing would start it before: the kernel waits for a tenth of memory
 * to be dirty). */
#define WRITEBACK_STEP (4u << 20)

/* Write to an open file of the tree, starting its writeback now and then. */
static int write_file(const lp_procdir *pd, pd_file *f, const char *data, size_t n, lp_error *err)
{
	int rc = write_all(pd, f->fd, f->path, data, n, err);
	f->unstarted += n;
	if (!rc && f->unstarted >= WRITEBACK_STEP) {
		f->unstarted = 0;
#ifdef SYNC_FILE_RANGE_WRITE
		/* Only a start: the fsync of the end waits and says what failed. */
		if (lp_stage_syncs())
			sync_file_range(f->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
	}
	return rc;
}

static int sync_at(const lp_procdir *pd, int fd, const char *path, lp_error *err)
{
	if (lp_fsync(fd) < 0)
		return lp_fail(err, LP_EIO, "cannot sync %s/%s to disk: %s", pd->partial, path,
			       g_strerror(errno));
	return 0;
}

/* The bytes of f's buffer as they go to disk: as they are, or as one
 * member or frame (an empty one too, so that a compressed file is never
 * empty), the buffer then handed to the compressing threads and another
 * taken back. The buffer is empty after. */
static int file_flush(lp_procdir *pd, pd_file *f, lp_error *err)
{
	size_t n = f->used;
	f->used = 0;
	if (!pd->coder && !pd->pool)
		return write_file(pd, f, f->buf, n, err);
	if (!n && f->compressed_any)
		return 0;
	f->compressed_any = true;
	char *path = g_strconcat(pd->partial, "/", f->path, NULL);
	int rc;
	if (pd->pool) {
		void *buf = f->buf;
		rc = lp_piece_pool_give(pd->pool, f, path, &buf, n, err);
		f->buf = buf;
	} else {
		const void *piece;
		ssize_t len = lp_piece_encode(pd->coder, f->buf, n, path, &piece, err);
		rc = len < 0 ? err->status : write_file(pd, f, piece, (size_t)len, err);
	}
	g_free(path);
	return rc;
}

/* lp_piece_write_fn: a compressed piece of file f, in order. Its file is
 * open: a file is closed only after the pool is drained. */
static int write_pooled(void *ctx, void *file, const void *data, size_t n, lp_error *err)
{
	return write_file(ctx, file, data, n, err);
}

/* Append data[0, n) to f's buffer, writing the buffer out each time it is
 * full: for a line longer than the buffer (a caller of the library may
 * give one), which thus goes out in pieces no larger than any other. */
static int file_append(lp_procdir *pd, pd_file *f, const char *data, size_t n, lp_error *err)
{
	while (n > PD_BUF_SIZE - f->used) {
		size_t part = PD_BUF_SIZE - f->used;
		memcpy(f->buf + f->used, data, part);
		f->used = PD_BUF_SIZE;
		int rc = file_flush(pd, f, err);
		if (rc)
			return rc;
		data += part;
		n -= part;
	}
	memcpy(f->buf + f->used, data, n);
	f->used += n;
	return 0;
}

/* Flush and close an open file, keeping its buffer for the next one. */
static int file_close(lp_procdir *pd, pd_file *f, lp_error *err)
{
	int rc = file_flush(pd, f, err);
	if (!rc && pd->pool)
		rc = lp_piece_pool_drain(pd->pool, err);
	if (close(f->fd) && !rc)
		rc = lp_fail(err, LP_EIO, "cannot write %s/%s: %s", pd->partial, f->path,
			     g_strerror(errno));
	f->fd = -1;
	g_ptr_array_add(pd->spare_bufs, f->buf);
	f->buf = NULL;
	lp_lru_unlink(&pd->open, &f->open);
	pd->nopen--;
	return rc;
}

/* The directory of a pid, before its first file; processes that reuse the
 * pid share it. */
static int make_process_dir(lp_procdir *pd, uint64_t pid, lp_error *err)
{
	char name[17];
	name[lp_fmt_hex(name, pid)] = '\0';
	if (mkdirat(pd->dirfd, name, 0777) && errno != EEXIST)
		return lp_fail(err, LP_EIO, "cannot create %s/%s: %s", pd->partial, name,
			       g_strerror(errno));
	return 0;
}

/* Make f open and the most recently used; the first opening creates it. */
static int file_open(lp_procdir *pd, pd_file *f, lp_error *err)
{
	if (f->fd >= 0) {
		lp_lru_touch(&pd->open, &f->open);
		return 0;
	}
	if (pd->nopen >= pd->max_open) {
		int rc = file_close(pd, file_of(pd->open.oldest), err);
		if (rc)
			return rc;
	}
	if (!f->created && f->in_process_dir) {
		int rc = make_process_dir(pd, f->id.pid, err);
		if (rc)
			return rc;
	}
	for (;;) {
		f->fd = openat(pd->dirfd, f->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
		if (f->fd >= 0)
			break;
		/* Out of descriptors despite the bound (inputs hold some too):
		 * give back one more of ours and try again. */
		if ((errno == EMFILE || errno == ENFILE) && pd->open.oldest) {
			int rc = file_close(pd, file_of(pd->open.oldest), err);
			if (rc)
				return rc;
			continue;
		}
		return lp_fail(err, LP_EIO, "cannot open %s/%s: %s", pd->partial, f->path,
			       g_strerror(errno));
	}
	f->buf = pd->spare_bufs->len ? g_ptr_array_steal_index_fast(pd->spare_bufs, pd->spare_bufs->len - 1)
				      : g_malloc(PD_BUF_SIZE);
	f->used = 0;
	/* A binary file begins with its header, a part of its first piece. */
	if (!f->created && pd->binary) {
		memcpy(f->buf, LP_TASK_BIN_HEADER, LP_TASK_BIN_HEADER_SIZE);
		f->used = LP_TASK_BIN_HEADER_SIZE;
	}
	f->created = true;
	pd->nopen++;
	lp_lru_push_newest(&pd->open, &f->open);
	return 0;
}

/* The file of a task: PID/TID, or with the process layout PID, which all
 * the process's tasks share (keyed then by the pid alone, as tid = pid). */
static pd_file *task_file(lp_procdir *pd, const lp_task_id *id)
{
	bool by_process = pd->layout == LP_LAYOUT_PROCESS;
	lp_task_id key = {.pid = id->pid, .tid = by_process ? id->pid : id->tid};
	pd_file *f = g_hash_table_lookup(pd->tasks, &key);
	if (f)
		return f;
	f = g_new0(pd_file, 1);
	f->id = key;
	char pid[17], tid[17];
	pid[lp_fmt_hex(pid, id->pid)] = '\0';
	tid[lp_fmt_hex(tid, id->tid)] = '\0';
	f->path = by_process ? g_strconcat(pid, pd->suffix, NULL)
			     : g_strconcat(pid, "/", tid, pd->suffix, NULL);
	f->fd = -1;
	f->in_process_dir = !by_process;
	g_hash_table_insert(pd->tasks, &f->id, f);
	return f;
}

static pd_process *process_of(lp_procdir *pd, const lp_task_id *id)
{
	lp_task_id key = {.pid = id->pid, .process = id->process};
	pd_process *proc = g_hash_table_lookup(pd->processes, &key);
	if (!proc) {
		proc = g_new0(pd_process, 1);
		proc->id = key;
		proc->programs = g_ptr_array_new_with_free_func(g_free);
		proc->members = g_ptr_array_new();
		g_hash_table_insert(pd->processes, &proc->id, proc);
	}
	return proc;
}

static pd_member *member_of(lp_procdir *pd, const lp_task_id *id)
{
	pd_member *m = g_hash_table_lookup(pd->members, id);
	if (m)
		return m;
	m = g_new0(pd_member, 1);
	m->id = *id;
	m->file = task_file(pd, id);
	g_hash_table_insert(pd->members, &m->id, m);
	g_ptr_array_add(process_of(pd, id)->members, m);
	return m;
}

static void count_records(pd_counts *c, uint64_t first_ts, uint64_t last_ts, uint64_t records,
			  uint64_t references)
{
	if (!c->records)
		c->first_ts = first_ts;
	c->last_ts = last_ts;
	c->records += records;
	c->references += references;
}

/* ---- the sink ---- */

/* An event line (at most LP_LINE_MAX bytes, as the kernel trace's
 * reader takes them) as a record of f: a line, or a binary event record. */
static int put_line(lp_procdir *pd, pd_file *f, pd_counts *c, const char *line, size_t len,
		    uint64_t timestamp, lp_error *err)
{
	/* The kernel trace's reader takes no longer line; a caller that
	   gives one gets an error, not a record the form cannot hold. */
	if (pd->binary && len > LP_TASK_BIN_EVENT_MAX)
		return lp_fail(err, LP_EINPUT,
			       "%s: an event line of %zu bytes: the binary task form holds at most %d",
			       f->path, len, LP_TASK_BIN_EVENT_MAX);
	int rc = file_open(pd, f, err);
	if (rc)
		return rc;
	size_t size = pd->binary ? LP_TASK_BIN_EVENT_HEAD + len : len + 1;
	if (size > PD_BUF_SIZE - f->used && (rc = file_flush(pd, f, err)))
		return rc;
	if (pd->binary) {
		f->used += lp_task_bin_encode_event((unsigned char *)f->buf + f->used, line, len);
	} else if (len + 1 > PD_BUF_SIZE) {
		if ((rc = file_append(pd, f, line, len, err)) || (rc = file_append(pd, f, "\n", 1, err)))
			return rc;
	} else {
		memcpy(f->buf + f->used, line, len);
		f->buf[f->used + len] = '\n';
		f->used += len + 1;
	}
	count_records(c, timestamp, timestamp, 1, 0);
	return 0;
}

/* Write refs[0, n) into f as binary reference records: as many as the
 * buffer has room for with no check of its room each, then the buffer
 * written out, and again. */
static int put_bin_refs(lp_procdir *pd, pd_file *f, const lp_ref *refs, const uint64_t *canon,
			size_t n, lp_error *err)
{
	size_t i = 0;
	for (;;) {
		size_t fit = MIN((PD_BUF_SIZE - f->used) / LP_TASK_BIN_REF_SIZE, n - i);
		unsigned char *p = (unsigned char *)f->buf + f->used;
		for (size_t end = i + fit; i < end; i++, p += LP_TASK_BIN_REF_SIZE)
			lp_task_bin_encode(p, &refs[i], canon[i]);
		f->used += fit * LP_TASK_BIN_REF_SIZE;
		if (i == n)
			return 0;
		int rc = file_flush(pd, f, err);
		if (rc)
			return rc;
	}
}

/* Write refs[0, n), all bound for f, as "type timestamp length vpn
 * canonical" lines, or binary records. The counts are updated once for
 * the whole run. */
static int put_refs(lp_procdir *pd, pd_file *f, pd_counts *c, const lp_ref *refs,
		    const uint64_t *canon, size_t n, lp_error *err)
{
	int rc = file_open(pd, f, err);
	if (rc)
		return rc;
	if (pd->binary) {
		if ((rc = put_bin_refs(pd, f, refs, canon, n, err)))
			return rc;
		count_records(c, refs[0].timestamp, refs[n - 1].timestamp, n, n);
		return 0;
	}
	/* As many lines as surely fit with no check of the room each (at
	 * least half of what fits), again and again until the buffer is full. */
	size_t i = 0;
	while (i < n) {
		size_t fit = MIN((PD_BUF_SIZE - f->used) / LP_TASK_LINE_MAX, n - i);
		char *p = f->buf + f->used;
		for (size_t end = i + fit; i < end; i++)
			p += lp_task_line_encode(p, &refs[i], canon[i]);
		f->used = (size_t)(p - f->buf);
		if (!fit && (rc = file_flush(pd, f, err)))
			return rc;
	}
	count_records(c, refs[0].timestamp, refs[n - 1].timestamp, n, n);
	return 0;
}

/* References go in runs to one file: the current task's (or orphan) for
 * user references, kernel for kernel ones (none with --user-only). */
static int procdir_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
			const lp_task_id *who, lp_error *err)
{
	lp_procdir *pd = ctx;
	pd_member *m = who ? member_of(pd, who) : NULL;
	pd_file *user = m ? m->file : &pd->orphan;
	pd_counts *user_counts = m ? &m->counts : &pd->orphan.counts;
	size_t i = 0;
	while (i < n) {
		bool kernel = lp_ref_is_kernel(refs[i].type);
		size_t end = i + 1;
		while (end < n && lp_ref_is_kernel(refs[end].type) == kernel)
			end++;
		if (!(kernel && pd->user_only)) {
			int rc = kernel ? put_refs(pd, &pd->kernel, &pd->kernel.counts, refs + i,
						   canon + i, end - i, err)
					: put_refs(pd, user, user_counts, refs + i, canon + i, end - i, err);
			if (rc)
				return rc;
		}
		i = end;
	}
	return 0;
}

static int procdir_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	lp_procdir *pd = ctx;
	if (route->ntasks == 0)
		return put_line(pd, &pd->kernel, &pd->kernel.counts, ev->line, ev->line_len,
				ev->timestamp, err);
	for (int k = 0; k < route->ntasks; k++) {
		pd_member *m = member_of(pd, &route->task[k]);
		/* A record for two tasks of one process (T) goes once into the
		 * process's file, yet counts for both tasks. */
		bool written = false;
		for (int j = 0; j < k && !written; j++)
			written = member_of(pd, &route->task[j])->file == m->file;
		if (written) {
			count_records(&m->counts, ev->timestamp, ev->timestamp, 1, 0);
			continue;
		}
		int rc = put_line(pd, m->file, &m->counts, ev->line, ev->line_len, ev->timestamp, err);
		if (rc)
			return rc;
	}
	if (ev->tag == LP_TAG_E)
		g_ptr_array_add(process_of(pd, &route->task[0])->programs, g_strdup(ev->name));
	return 0;
}

/* ---- index.yaml ---- */

static int compare_members(gconstpointer a, gconstpointer b)
{
	const pd_member *x = *(pd_member *const *)a, *y = *(pd_member *const *)b;
	return x->id.tid < y->id.tid ? -1 : x->id.tid > y->id.tid;
}

/* By pid, and processes that reused a pid in the order they began. */
static int compare_processes(gconstpointer a, gconstpointer b)
{
	const pd_process *x = *(pd_process *const *)a, *y = *(pd_process *const *)b;
	if (x->id.pid != y->id.pid)
		return x->id.pid < y->id.pid ? -1 : 1;
	return x->id.process < y->id.process ? -1 : x->id.process > y->id.process;
}

/* The processes in index order, their members sorted by tid. */
static GPtrArray *sorted_processes(lp_procdir *pd)
{
	GPtrArray *procs = g_ptr_array_new();
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, pd->processes);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		g_ptr_array_sort(((pd_process *)value)->members, compare_members);
		g_ptr_array_add(procs, value);
	}
	g_ptr_array_sort(procs, compare_processes);
	return procs;
}

static lp_index_file index_file(const char *path, const pd_counts *c)
{
	return (lp_index_file){
		.path = (char *)path,
		.records = c->records,
		.references = c->references,
		.first_ts = c->first_ts,
		.last_ts = c->last_ts,
	};
}

/* What index.yaml says, as lp_index: a view of the directory's state (its
 * strings are borrowed; index_view_free frees only the arrays). */
static lp_index *index_view(lp_procdir *pd)
{
	lp_index *ix = g_new0(lp_index, 1);
	ix->reference = pd->reference;
	ix->kernel_input = pd->kernel_input;
	ix->layout = pd->layout;
	ix->binary = pd->binary;
	GPtrArray *procs = sorted_processes(pd);
	ix->nprocesses = procs->len;
	ix->processes = g_new0(lp_index_process, procs->len);
	for (guint i = 0; i < procs->len; i++) {
		const pd_process *proc = g_ptr_array_index(procs, i);
		lp_index_process *p = &ix->processes[i];
		p->pid = proc->id.pid;
		p->programs = g_new0(char *, proc->programs->len + 1);
		for (guint k = 0; k < proc->programs->len; k++)
			p->programs[k] = g_ptr_array_index(proc->programs, k);
		p->ntasks = proc->members->len;
		p->tasks = g_new0(lp_index_task, proc->members->len);
		for (guint k = 0; k < proc->members->len; k++) {
			const pd_member *m = g_ptr_array_index(proc->members, k);
			p->tasks[k].tid = m->id.tid;
			p->tasks[k].file = index_file(m->file->path, &m->counts);
		}
	}
	g_ptr_array_free(procs, TRUE);
	ix->kernel = index_file(pd->kernel.created ? pd->kernel.path : NULL, &pd->kernel.counts);
	ix->orphan = index_file(pd->orphan.created ? pd->orphan.path : NULL, &pd->orphan.counts);
	return ix;
}

static void index_view_free(lp_index *ix)
{
	for (size_t i = 0; i < ix->nprocesses; i++) {
		g_free(ix->processes[i].programs);
		g_free(ix->processes[i].tasks);
	}
	g_free(ix->processes);
	g_free(ix);
}

static int write_index(lp_procdir *pd, const lp_stats *stats, lp_error *err)
{
	lp_index *ix = index_view(pd);
	int rc = lp_index_write_at(pd->dirfd, pd->partial, ix, stats, err);
	index_view_free(ix);
	return rc;
}

/* The files and directories of the tree flushed at once: one after
 * another, each fsync waits for a journal commit of its own; from several
 * threads the file system commits them together (10,000 one-reference
 * tasks: 8.5-10.2 s one by one, 4.9-6.4 s with 16 threads). The first
 * failure in the list's order is reported. */
#define SYNC_THREADS 16

typedef struct sync_list {
	const lp_procdir *pd;
	GPtrArray *paths;  /* char *, relative to pd->dirfd */
	int *open_errno;   /* per path: 0, or why it could not be opened */
	int *sync_errno;   /* per path: 0, or why its fsync failed */
} sync_list;

static void sync_one(sync_list *l, guint i)
{
	int fd = openat(l->pd->dirfd, g_ptr_array_index(l->paths, i), O_RDONLY | O_CLOEXEC);
	l->open_errno[i] = fd < 0 ? errno : 0;
	if (fd < 0)
		return;
	if (lp_fsync(fd) < 0)
		l->sync_errno[i] = errno;
	close(fd);
}

/* lp_work_fn: job is the path's index + 1; its errors are kept by index. */
static int sync_job(void *ctx, void *job, lp_error *err)
{
	(void)err;
	sync_one(ctx, GPOINTER_TO_UINT(job) - 1);
	return 0;
}

static int sync_all(const lp_procdir *pd, GPtrArray *paths, lp_error *err)
{
	sync_list l = {pd, paths, g_new0(int, paths->len), g_new0(int, paths->len)};
	/* This thread runs paths too (those no worker has begun when it
	 * takes them), so threads that cannot start only make it slower. */
	lp_workpool *pool = lp_workpool_new("laplace-sync", MAX(MIN(paths->len, SYNC_THREADS), 1u) - 1,
					    SYNC_THREADS, sync_job, &l);
	int ignored;
	for (guint i = 0; i < paths->len; i++) {
		if (lp_workpool_full(pool))
			lp_workpool_take(pool, &ignored, NULL);
		lp_workpool_submit(pool, GUINT_TO_POINTER(i + 1));
	}
	while (lp_workpool_take(pool, &ignored, NULL))
		;
	lp_workpool_free(pool);
	/* Out of descriptors with every thread holding one (a low ulimit -n):
	 * those again, one at a time. */
	for (guint i = 0; i < paths->len; i++)
		if (l.open_errno[i] == EMFILE || l.open_errno[i] == ENFILE)
			sync_one(&l, i);
	int rc = 0;
	for (guint i = 0; !rc && i < paths->len; i++) {
		const char *path = g_ptr_array_index(paths, i);
		if (l.open_errno[i])
			rc = lp_fail(err, LP_EIO, "cannot open %s/%s: %s", pd->partial, path,
				     g_strerror(l.open_errno[i]));
		else if (l.sync_errno[i])
			rc = lp_fail(err, LP_EIO, "cannot sync %s/%s to disk: %s", pd->partial, path,
				     g_strerror(l.sync_errno[i]));
	}
	g_free(l.open_errno);
	g_free(l.sync_errno);
	return rc;
}

/* Every file of a process directory and the directory, pid by pid; kernel
 * and orphan; then, once they are all on disk, the top: what the rename
 * into place publishes must already be there. Files closed early (the
 * open-file bound) are opened again just to be flushed. */
static int sync_tree(lp_procdir *pd, lp_error *err)
{
	if (!lp_stage_syncs())
		return 0;
	GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *procs = sorted_processes(pd);
	for (guint i = 0; i < procs->len; i++) {
		const pd_process *proc = g_ptr_array_index(procs, i);
		for (guint k = 0; k < proc->members->len; k++)
			g_ptr_array_add(paths, g_strdup(((pd_member *)g_ptr_array_index(proc->members, k))
							    ->file->path));
		/* Processes that reuse a pid share its directory: once is enough.
		 * (By process there is none: the file PID, listed above.) */
		const pd_process *next = i + 1 < procs->len ? g_ptr_array_index(procs, i + 1) : NULL;
		if (pd->layout == LP_LAYOUT_TASK && (!next || next->id.pid != proc->id.pid)) {
			char name[17];
			name[lp_fmt_hex(name, proc->id.pid)] = '\0';
			g_ptr_array_add(paths, g_strdup(name));
		}
	}
	g_ptr_array_free(procs, TRUE);
	g_ptr_array_add(paths, g_strdup(pd->kernel.path));
	if (pd->orphan.created)
		g_ptr_array_add(paths, g_strdup(pd->orphan.path));
	int rc = sync_all(pd, paths, err);
	g_ptr_array_free(paths, TRUE);
	return rc ? rc : sync_at(pd, pd->dirfd, ".", err);
}

static int procdir_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	lp_procdir *pd = ctx;
	int rc = 0;
	while (pd->open.newest && !rc)
		rc = file_close(pd, file_of(pd->open.newest), err);
	if (!rc)
		rc = write_index(pd, stats, err);
	return rc ? rc : sync_tree(pd, err);
}

const lp_sink lp_procdir_sink_ops = {
	.refs = procdir_refs,
	.event = procdir_event,
	.finish = procdir_finish,
};

/* ---- opening and closing ---- */

static unsigned open_file_bound(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= PD_MAX_OPEN + PD_FD_RESERVE)
		return PD_MAX_OPEN;
	return rl.rlim_cur > 2 * PD_FD_RESERVE ? (unsigned)(rl.rlim_cur - PD_FD_RESERVE)
					       : (unsigned)(rl.rlim_cur / 2 ? rl.rlim_cur / 2 : 1);
}

lp_procdir *lp_procdir_open(int parent_fd, const char *dir, bool force, bool user_only,
			    enum lp_layout layout, bool binary, enum lp_compress compress, int level,
			    unsigned threads, const lp_procdir_inputs *inputs, lp_error *err)
{
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	char *name = g_strndup(dir, len);
	char *base = g_path_get_basename(name);
	struct stat st;
	int found = fstatat(parent_fd, parent_fd == AT_FDCWD ? name : base, &st, AT_SYMLINK_NOFOLLOW);
	g_free(base);
	if (found == 0) {
		if (!force) {
			lp_fail(err, LP_EUSAGE, "%s: already exists; use --force to replace it", name);
			g_free(name);
			return NULL;
		}
	} else if (errno != ENOENT) {
		lp_fail(err, LP_EIO, "cannot check %s: %s", name, g_strerror(errno));
		g_free(name);
		return NULL;
	}
	lp_staged *staged = lp_stage_dir(parent_fd, name, force);
	if (!staged) {
		int saved = errno;
		char *pattern = lp_tmp_pattern(name, true);
		lp_fail(err, LP_EIO, "cannot create %s: %s", pattern, g_strerror(saved));
		g_free(pattern);
		g_free(name);
		return NULL;
	}
	g_free(name);
	int dirfd = lp_staged_open_dir(staged);
	if (dirfd < 0) {
		lp_fail(err, LP_EIO, "cannot open %s: %s", lp_staged_path(staged), g_strerror(errno));
		lp_staged_discard(staged);
		return NULL;
	}

	lp_procdir *pd = g_new0(lp_procdir, 1);
	pd->staged = staged;
	pd->partial = lp_staged_path(staged);
	pd->dirfd = dirfd;
	pd->user_only = user_only;
	pd->layout = layout;
	pd->binary = binary;
	pd->reference = g_strdup(inputs->reference);
	pd->kernel_input = g_strdup(inputs->kernel);
	pd->tasks = g_hash_table_new_full(task_id_hash, task_id_equal, NULL, file_free);
	pd->members = g_hash_table_new_full(member_hash, member_equal, NULL, g_free);
	pd->processes = g_hash_table_new_full(member_hash, member_equal, NULL, process_free);
	pd->suffix = lp_compress_suffix(compress);
	pd->kernel = (pd_file){.path = g_strconcat("kernel", pd->suffix, NULL), .fd = -1};
	pd->orphan = (pd_file){.path = g_strconcat("orphan", pd->suffix, NULL), .fd = -1};
	pd->max_open = open_file_bound();
	pd->spare_bufs = g_ptr_array_new_with_free_func(g_free);
	/* With threads, pieces are compressed by as many workers while the
	 * merge goes on; written in order, the files are the same bytes. */
	if (*pd->suffix && threads > 1)
		pd->pool = lp_piece_pool_new(compress, level, PD_BUF_SIZE, threads, write_pooled, pd);
	else if (*pd->suffix)
		pd->coder = lp_piece_coder_new(compress, level, PD_BUF_SIZE);
	if (*pd->suffix && !pd->coder && !pd->pool) {
		lp_fail(err, LP_EIO, "cannot start %s compression for %s", pd->suffix + 1, pd->partial);
		lp_procdir_free(pd);
		return NULL;
	}
	/* The kernel file exists even when nothing goes to it. */
	if (file_open(pd, &pd->kernel, err)) {
		lp_procdir_free(pd);
		return NULL;
	}
	return pd;
}

lp_staged *lp_procdir_release(lp_procdir *pd)
{
	lp_staged *s = pd->staged;
	pd->staged = NULL;
	lp_procdir_free(pd);
	return s;
}

void lp_procdir_free(lp_procdir *pd)
{
	if (!pd)
		return;
	lp_piece_pool_free(pd->pool);
	while (pd->open.newest) {
		pd_file *f = file_of(pd->open.newest);
		close(f->fd);
		f->fd = -1;
		g_free(f->buf);
		lp_lru_unlink(&pd->open, &f->open);
	}
	close(pd->dirfd);
	lp_staged_discard(pd->staged);
	g_hash_table_destroy(pd->tasks);
	g_hash_table_destroy(pd->processes);
	g_hash_table_destroy(pd->members);
	g_ptr_array_free(pd->spare_bufs, TRUE);
	lp_piece_coder_free(pd->coder);
	g_free(pd->kernel.path);
	g_free(pd->orphan.path);
	g_free(pd->reference);
	g_free(pd->kernel_input);
	g_free(pd);
}
