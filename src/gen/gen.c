/* The capture generator: a small model of a Unix machine (a shell
 * forking programs that exec, threads, shared libraries, heaps, anonymous
 * and file mappings, System V shared memory, a page cache and a round-robin
 * scheduler) that emits its kernel events and the memory references of
 * whatever task is running. The machine is a 32-bit i386 one, or (wide) an
 * x86-64 one: the same model in another layout, written in the 64-bit form.
 *
 * Two random streams keep the kernel trace independent of the reference
 * contents: `ctl` decides every event, every time slice and every set of
 * hot pages; `ref` only picks references among the hot pages. So the kernel
 * trace can be written alone, fast, and is the same either way. Every
 * reference is made by the current task, in its bound vas, to a page the
 * model knows to be mapped: the merge finds nothing unmapped. */
#include "gen/gen.h"

#include <stdatomic.h>

#include <string.h>

#include <glib.h>

#include "core/numbers.h"
#include "formats/kern.h"
#include "formats/refio.h"
#include "io/staging.h"

/* ---- random numbers: splitmix64 seeds xoshiro256** ---- */

typedef struct rng {
	uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
	return lp_mix64(*x += 0x9e3779b97f4a7c15ull);
}

static void rng_seed(rng *r, uint64_t *sm)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(sm);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) for n < 2^32 (multiply-shift; the bias is negligible). */
static uint32_t rng_below(rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

static uint32_t rng_range(rng *r, uint32_t lo, uint32_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* True with probability num/256. */
static bool rng_chance(rng *r, unsigned num) { return (rng_next(r) >> 56) < num; }

/* ---- the machine's layout ---- */

#define PAGE 4096u
#define KTEXT_PAGES 768u
#define KDATA_PAGES 1024u
#define CACHE_FRAME_BASE 0x10000u /* page-cache frames, above kernel memory */
#define SLOT_SIZE 0x01000000u   /* 16 MiB between slots */
#define TSTACK_SLOT 0x00200000u
#define TSTACK_PAGES 256u
#define STACK_PAGES 512u
/* A footprint is made of runs of this many pages, one slot each. */
#define FOOTPRINT_RUN_BITS 12
#define FOOTPRINT_RUN_PAGES (1u << FOOTPRINT_RUN_BITS)
#define MAX_FOOTPRINT_RUNS (int)(LP_GEN_MAX_FOOTPRINT_PAGES / FOOTPRINT_RUN_PAGES)

/* Where things lie in a process's address space and the kernel's. */
typedef struct layout {
	uint64_t page_offset;  /* the kernel's map of physical memory: frame f at
				* page_offset + (f << 12) */
	uint64_t ktext, kdata; /* KTEXT_PAGES of kernel text, KDATA_PAGES of data */
	uint64_t text;         /* the program's text and data, then its heap */
	uint64_t heap_limit;
	uint64_t lib;          /* the shared libraries, one after another */
	uint64_t anon, filemap, shm; /* slots of anonymous, file and segment maps */
	uint64_t shared_anon, tstack; /* a server's shared area; thread stacks */
	uint64_t stack;        /* the main stack: STACK_PAGES */
	/* The footprint's runs: in a row from here, or (0) spread over the
	 * user space (footprint_run). */
	uint64_t footprint;
	uint64_t first_vas;
} layout;

/* An i386 Linux machine: 3 GiB of user space below the kernel. */
static const layout layout32 = {
	.page_offset = 0xc0000000, .ktext = 0xc0100000, .kdata = 0xc0400000,
	.text = 0x08048000, .heap_limit = 0x30000000, .lib = 0x40000000,
	.anon = 0x50000000, .filemap = 0x70000000, .shm = 0x90000000,
	.shared_anon = 0xa0000000, .tstack = 0xb0000000,
	.stack = 0xbfe00000, /* its last page just below page_offset */
	.footprint = 0x60000000, /* free between the anonymous and file slots */
	.first_vas = 0x1f400,
};

/* An x86-64 Linux machine (laplace-formats(5) 10): a PIE program near
 * 0x555555554000, maps top-down below the libraries near 0x7ffff7..., the
 * stack ending at 0x7ffffffff000 (the 47-bit user space's last page is
 * left unmapped, as Linux does), the kernel's text at ffffffff81000000 and
 * its data and page cache in the direct map at ffff888000000000; address
 * spaces get ids past 32 bits. */
static const layout layout64 = {
	.page_offset = UINT64_C(0xffff888000000000), .ktext = UINT64_C(0xffffffff81000000),
	.kdata = UINT64_C(0xffff888001000000),
	.text = 0x555555554000, .heap_limit = 0x555555554000 + 0x28000000,
	.lib = 0x7ffff7c00000, .anon = 0x7fffe0000000, .filemap = 0x7fffd0000000,
	.shm = 0x7fffc0000000, .shared_anon = 0x7fffb0000000, .tstack = 0x7fffa0000000,
	.stack = 0x7ffffffff000 - STACK_PAGES * PAGE,
	.footprint = 0,
	.first_vas = UINT64_C(0x10001f400),
};

#define ANON_SLOTS 16
#define FILEMAP_SLOTS 8
#define SHM_SLOTS 4
#define MAX_REGIONS (64 + MAX_FOOTPRINT_RUNS)
#define MAX_SEGMENTS 8
#define MAX_WORKERS 2
#define MAX_PROCS (2 * LP_GEN_MAX_PROCESSES * (1 + MAX_WORKERS) + 1)
#define MAX_TASKS (MAX_PROCS * LP_GEN_MAX_THREADS)

/* Linux i386 mmap flags and protections (laplace-formats(5) 2.1). */
#define MAP_SHARED_ 0x01
#define MAP_PRIVATE_ 0x02
#define MAP_FIXED_ 0x10
#define MAP_ANON_ 0x20
#define PROT_R 1
#define PROT_W 2
#define PROT_X 4

#define NCODE 8  /* hot code pages per task (a power of two) */
#define NDATA 16 /* hot data pages per task (a power of two) */

/* Kernel entry points: each picks its own handful of kernel text pages. */
enum kcall { KC_TIMER, KC_READ, KC_WRITE, KC_MMAP, KC_BRK, KC_FORK, KC_EXEC, KC_EXIT,
	     KC_CLONE, KC_SHM };

enum region_kind { RK_TEXT, RK_DATA, RK_HEAP, RK_STACK, RK_ANON, RK_FILE, RK_SHM, RK_SHARED_ANON,
		   RK_FOOTPRINT };

typedef struct region {
	uint64_t start; /* page aligned */
	uint32_t pages;
	uint8_t kind;
	bool writable;
	int16_t owner; /* RK_STACK: thread stack slot, -1 for the main stack;
			  RK_ANON/RK_FILE/RK_SHM: slot */
} region;

typedef struct gfile {
	uint64_t id;
	const char *name;
	uint32_t pages;
	uint32_t size;   /* bytes */
	uint32_t *frame; /* per page: cache frame + 1, 0 when not cached */
} gfile;

enum trait { TR_THREADS = 1, TR_SERVER = 2, TR_MAPS_FILES = 4, TR_BIG_HEAP = 8 };

typedef struct program {
	const char *path;
	uint16_t text_pages, data_pages;
	uint8_t traits;
	uint8_t libs; /* bit i: libraries[i] */
} program;

typedef struct library {
	const char *path;
	uint16_t text_pages, data_pages;
} library;

static const library libraries[] = {
	{"/lib/ld-linux.so.2", 27, 2},
	{"/lib/libc.so.6", 310, 5},
	{"/lib/libm.so.6", 40, 1},
	{"/lib/libpthread.so.0", 22, 1},
	{"/lib/libz.so.1", 21, 1},
};
#define NLIBS (int)(sizeof libraries / sizeof libraries[0])
#define LIBS_BASIC 0x03 /* ld.so, libc */

/* The shell is first; its children are started in table order, then at
 * random, so every kind of program runs early in any capture. */
static const program programs[] = {
	{"/bin/sh", 180, 6, 0, LIBS_BASIC},
	{"/usr/sbin/postgres", 900, 30, TR_SERVER | TR_MAPS_FILES, LIBS_BASIC | 0x10},
	{"/usr/bin/python3", 700, 60, TR_THREADS | TR_BIG_HEAP, LIBS_BASIC | 0x0c | 0x10},
	{"/usr/lib/gcc/cc1", 2400, 40, TR_BIG_HEAP, LIBS_BASIC | 0x04},
	{"/bin/grep", 45, 2, TR_MAPS_FILES, LIBS_BASIC},
	{"/usr/bin/sort", 30, 2, TR_BIG_HEAP, LIBS_BASIC},
	{"/usr/bin/make", 60, 4, 0, LIBS_BASIC},
	{"/usr/bin/ld", 200, 6, TR_MAPS_FILES | TR_BIG_HEAP, LIBS_BASIC | 0x10},
	{"/usr/bin/java", 80, 8, TR_THREADS | TR_BIG_HEAP | TR_MAPS_FILES, LIBS_BASIC | 0x0c | 0x10},
	{"/bin/gzip", 25, 2, 0, LIBS_BASIC | 0x10},
};
#define NPROGRAMS (int)(sizeof programs / sizeof programs[0])
#define SHELL_PROGRAM 0

typedef struct proc {
	bool live;
	bool from_shell;    /* counts toward the multiprogramming level */
	bool exec_pending;  /* forked by the shell, execs exec_prog when first run */
	int exec_prog;
	int prog;
	uint64_t pid;
	uint64_t vas;
	region reg[MAX_REGIONS];
	int nreg;
	uint64_t brk_start, brk; /* heap: [brk_start, brk) */
	uint32_t footprint_pages;
	uint64_t footprint_run[MAX_FOOTPRINT_RUNS]; /* where each run starts */
	uint64_t age, life;      /* references run, and how many before exit */
	int main_task;
	int ntasks;
	uint32_t anon_used, filemap_used, shm_used, tstack_used; /* slot bitmaps */
	uint32_t tstack_dead;    /* thread stacks to unmap (thread has exited) */
	int workers;
	int created_seg;         /* segment this process created, or -1 */
	uint32_t created_instance;
	bool server_ready;
} proc;

typedef struct task {
	bool live;
	bool runnable;
	int proc;
	uint64_t tid;
	int tstack;              /* thread stack slot, -1 for the main task */
	uint64_t age, life;      /* threads other than the main one exit */
	uint64_t code[NCODE];
	uint64_t data[NDATA];
	bool data_writable[NDATA];
	uint64_t pc;             /* reference state only (see top comment) */
} task;

typedef struct segment {
	bool live;
	uint32_t shmid;
	uint32_t size;
	uint32_t instance;
} segment;

/* What a run of references is made of: the hot pages and type letters. */
typedef struct burst {
	uint64_t vas;
	char fetch, read;
	uint64_t code[NCODE];
	uint64_t data[NDATA];
	char write[NDATA]; /* the letter a write to data[k] uses: w/W or r/R */
	/* The footprint: writable pages, in runs of FOOTPRINT_RUN_PAGES from
	 * footprint_run[], that half the data references pick at random;
	 * footprint_pages 0: none. */
	uint32_t footprint_pages;
	uint64_t footprint_run[MAX_FOOTPRINT_RUNS];
} burst;

#define REF_BUF_RECORDS 65536
#define KERN_BUF_SIZE (1u << 18)

typedef struct gen {
	lp_gen_config cfg;
	const layout *lay;
	size_t record_size; /* of a reference in its binary form */
	rng ctl, ref;
	lp_output *ref_out, *kern_out;
	lp_error *err;
	lp_progress_fn progress;
	void *progress_ctx;

	uint64_t now;        /* timestamp of the next record */
	uint64_t refs_done, events_done;
	uint64_t life_mean;
	unsigned char *rbuf;
	size_t rcount;       /* records in rbuf */
	struct ref_writer *writer; /* jobs > 1: rbuf is wbuf's */
	struct ref_buffer *wbuf;
	char *kbuf;
	size_t klen;

	uint64_t next_tid;
	uint64_t next_vas;
	int spawned;         /* children the shell has started */
	int children;        /* of those, alive */

	proc *procs;
	task *tasks;
	int current;         /* task index, or -1 */

	gfile *files;
	int nfiles;          /* libraries, then programs, then data files */
	uint32_t cache_frames;
	int32_t *frame_file; /* per cache frame: file index or -1 */
	uint32_t *frame_page;
	uint32_t cache_hand;
	segment segs[MAX_SEGMENTS];
	uint32_t seg_instances;
} gen;

#define FILE_LIB(i) (i)
#define FILE_PROG(i) (NLIBS + (i))
#define FILE_DATA(g, i) (NLIBS + NPROGRAMS + (i))

/* ---- output ---- */

/* With jobs > 1, full reference buffers go to a writer thread and empty
 * ones come back: WRITE_BUFFERS in all, so generating runs at most that
 * far ahead of writing. After a failure the writer writes no more but
 * still hands buffers back, and the generator stops at its next flush. */
#define WRITE_BUFFERS 4

typedef struct ref_buffer {
	unsigned char *data;
	size_t len;          /* bytes; 0 ends the writer */
} ref_buffer;

typedef struct ref_writer {
	GThread *thread;
	GAsyncQueue *full, *empty;
	lp_output *out;
	ref_buffer buffers[WRITE_BUFFERS];
	atomic_bool failed;
	lp_error err;        /* the writer's, read after failed or the join */
} ref_writer;

static gpointer writer_main(gpointer data)
{
	ref_writer *w = data;
	for (;;) {
		ref_buffer *b = g_async_queue_pop(w->full);
		if (!b->len)
			return NULL;
		if (!atomic_load(&w->failed) && lp_output_write(w->out, b->data, b->len, &w->err))
			atomic_store(&w->failed, true);
		g_async_queue_push(w->empty, b);
	}
}

static ref_writer *writer_start(lp_output *out)
{
	ref_writer *w = g_new0(ref_writer, 1);
	w->out = out;
	w->full = g_async_queue_new();
	w->empty = g_async_queue_new();
	atomic_init(&w->failed, false);
	for (int i = 0; i < WRITE_BUFFERS; i++) {
		w->buffers[i].data = g_malloc((size_t)REF_BUF_RECORDS * LP_REF64_RECORD_SIZE);
		g_async_queue_push(w->empty, &w->buffers[i]);
	}
	w->thread = g_thread_new("laplace-gen-write", writer_main, w);
	return w;
}

/* Wait for the writer to finish; its failure, if any, into err. */
static int writer_stop(ref_writer *w, lp_error *err)
{
	ref_buffer end = {NULL, 0};
	g_async_queue_push(w->full, &end);
	g_thread_join(w->thread);
	int rc = atomic_load(&w->failed) ? (*err = w->err, err->status) : 0;
	for (int i = 0; i < WRITE_BUFFERS; i++)
		g_free(w->buffers[i].data);
	g_async_queue_unref(w->full);
	g_async_queue_unref(w->empty);
	g_free(w);
	return rc;
}

static int flush_refs(gen *g)
{
	int rc = 0;
	if (g->writer) {
		ref_writer *w = g->writer;
		if (atomic_load(&w->failed))
			return *g->err = w->err, g->err->status;
		if (g->rcount) {
			g->wbuf->len = g->rcount * g->record_size;
			g_async_queue_push(w->full, g->wbuf);
			g->wbuf = g_async_queue_pop(w->empty);
			g->rbuf = g->wbuf->data;
		}
	} else if (g->rcount) {
		rc = lp_output_write(g->ref_out, g->rbuf, g->rcount * g->record_size, g->err);
	}
	g->rcount = 0;
	return rc;
}

static int flush_kern(gen *g)
{
	int rc = 0;
	if (g->klen)
		rc = lp_output_write(g->kern_out, g->kbuf, g->klen, g->err);
	g->klen = 0;
	return rc;
}

/* One event line; the name (E, M) is NULL for other tags. Events take one
 * cycle each, after every reference written so far. */
static int event(gen *g, char tag, int nfields, const uint64_t *f, const char *name)
{
	uint64_t ts = g->now++;
	g->events_done++;
	if (!g->kern_out)
		return 0;
	if (g->klen + 512 > KERN_BUF_SIZE) {
		int rc = flush_kern(g);
		if (rc)
			return rc;
	}
	g->klen += lp_kern_format_line(g->kbuf + g->klen, tag, ts, f, nfields, name);
	return 0;
}

#define EV(g, tag, name, ...) \
	event((g), (tag), (int)(sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)), \
	      (uint64_t[]){__VA_ARGS__}, (name))

static uint64_t refs_left(const gen *g) { return g->cfg.refs - g->refs_done; }

/* Write n references drawn from b. Reference k of the run has timestamp
 * start + 2k or start + 2k + 1, so the run is ordered and the next record
 * (at start + 2n) comes after all of it. The bit layout of each random word:
 * 0-7 kind, 8-11 jump or first index, 12-15 target or second index, 16-27
 * offset, 28-30 length, 31 timestamp jitter; with a footprint, 63 sends a
 * data reference there and 32-62 pick its page. Inline and called with a
 * constant wide, so that each form has a loop of its own. */
static G_ALWAYS_INLINE inline int emit_burst_in(gen *g, const burst *b, uint64_t *pc, uint64_t n,
						const bool wide)
{
	if (n > refs_left(g))
		n = refs_left(g);
	uint64_t start = g->now;
	g->now += 2 * n;
	g->refs_done += n;
	if (!g->ref_out)
		return 0;
	uint64_t k = 0;
	uint64_t ip = *pc;
	const size_t record_size = wide ? LP_REF64_RECORD_SIZE : LP_REF_RECORD_SIZE;
	/* Locals, not b and g's fields: the records are written through a
	 * char pointer, which may alias anything, so fields would be loaded
	 * and stored again for every record. */
	rng r = g->ref;
	const burst bl = *b;
	while (k < n) {
		size_t room = REF_BUF_RECORDS - g->rcount;
		size_t chunk = n - k < room ? (size_t)(n - k) : room;
		unsigned char *p = g->rbuf + g->rcount * record_size;
		for (size_t j = 0; j < chunk; j++, k++, p += record_size) {
			uint64_t x = rng_next(&r);
			unsigned kind = x & 0xff;
			/* Both kinds are worked out and one is chosen without a
			 * branch: kind is random, and a branch on it would be
			 * mispredicted half the time. */
			/* Instruction fetch: straight-line code within a page,
			 * with a jump one time in sixteen. */
			unsigned fetch_len = 1 + ((x >> 28) & 7);
			uint64_t jump_to = bl.code[(x >> 12) & (NCODE - 1)] | ((x >> 16) & 0xfff);
			uint64_t fetch_addr = ((x >> 8) & 15) == 0 ? jump_to : ip;
			uint64_t next_ip = (fetch_addr & ~(uint64_t)0xfff) | ((fetch_addr + fetch_len) & 0xfff);
			/* Data: a hot page, or (with a footprint, bit 63) a page
			 * of the footprint picked by bits 32-62. */
			unsigned i1 = (x >> 8) & (NDATA - 1), i2 = (x >> 12) & (NDATA - 1);
			unsigned slot = i1 < i2 ? i1 : i2; /* favours the first slots */
			unsigned data_len = 1u << ((x >> 28) & 3);
			uint32_t offset = (x >> 16) & 0xfff & ~(data_len - 1);
			uint64_t page = (((x >> 32) & 0x7fffffff) * bl.footprint_pages) >> 31;
			bool in_region = bl.footprint_pages && (x >> 63);
			uint64_t data_base = in_region ? bl.footprint_run[page >> FOOTPRINT_RUN_BITS] +
								 ((page & (FOOTPRINT_RUN_PAGES - 1)) << 12)
						       : bl.data[slot];
			char write = in_region ? 'w' : bl.write[slot];
			bool fetch = kind < 120;
			uint64_t addr = fetch ? fetch_addr : data_base + offset;
			ip = fetch ? next_ip : ip;
			lp_ref ref = {
				.type = fetch ? bl.fetch : kind < 215 ? bl.read : write,
				.timestamp = start + 2 * k + ((x >> 31) & 1),
				.length = (uint8_t)(fetch ? fetch_len : data_len),
				.vas = bl.vas,
				.address = addr,
			};
			if (wide)
				lp_ref_encode_bin64(p, &ref);
			else
				lp_ref_encode_bin(p, &ref, false);
		}
		g->rcount += chunk;
		if (g->rcount == REF_BUF_RECORDS) {
			g->ref = r;
			int rc = flush_refs(g);
			if (rc)
				return rc;
		}
	}
	g->ref = r;
	*pc = ip;
	return 0;
}

static int emit_burst(gen *g, const burst *b, uint64_t *pc, uint64_t n)
{
	return g->cfg.wide ? emit_burst_in(g, b, pc, n, true) : emit_burst_in(g, b, pc, n, false);
}

/* ---- the address-space model ---- */

static region *region_at(proc *p, uint64_t addr)
{
	uint64_t vpn = addr >> 12;
	for (int i = 0; i < p->nreg; i++) {
		region *r = &p->reg[i];
		if (vpn >= r->start >> 12 && vpn < (r->start >> 12) + r->pages)
			return r;
	}
	return NULL;
}

static void region_add(proc *p, uint64_t start, uint32_t pages, int kind, bool writable, int owner)
{
	g_assert(p->nreg < MAX_REGIONS);
	p->reg[p->nreg++] = (region){start, pages, (uint8_t)kind, writable, (int16_t)owner};
}

static void region_drop(proc *p, int i) { p->reg[i] = p->reg[--p->nreg]; }

/* Remove pages [start, start + pages) from every region, as U does. */
static void region_remove(proc *p, uint64_t start, uint32_t pages)
{
	uint64_t lo = start >> 12, hi = lo + pages;
	for (int i = 0; i < p->nreg;) {
		region *r = &p->reg[i];
		uint64_t rlo = r->start >> 12, rhi = rlo + r->pages;
		if (rhi <= lo || rlo >= hi) {
			i++;
			continue;
		}
		if (rlo < lo && rhi > hi) {
			region tail = *r;
			tail.start = hi << 12;
			tail.pages = (uint32_t)(rhi - hi);
			r->pages = (uint32_t)(lo - rlo);
			region_add(p, tail.start, tail.pages, tail.kind, tail.writable, tail.owner);
			i++;
		} else if (rlo < lo) {
			r->pages = (uint32_t)(lo - rlo);
			i++;
		} else if (rhi > hi) {
			r->start = hi << 12;
			r->pages = (uint32_t)(rhi - hi);
			i++;
		} else {
			region_drop(p, i);
		}
	}
}

static region *region_find(proc *p, int kind, int owner)
{
	for (int i = 0; i < p->nreg; i++)
		if (p->reg[i].kind == kind && p->reg[i].owner == owner)
			return &p->reg[i];
	return NULL;
}

/* A page of p worth touching: code from a text region, or data from the
 * others (a thread's data favours its own stack and never another's). */
static uint64_t pick_page(gen *g, proc *p, const task *t, bool code, bool *writable)
{
	if (!code && p->brk > p->brk_start && rng_chance(&g->ctl, 96)) {
		*writable = true;
		return p->brk_start + rng_below(&g->ctl, (uint32_t)((p->brk - p->brk_start) >> 12)) * PAGE;
	}
	for (;;) {
		region *r = &p->reg[rng_below(&g->ctl, (uint32_t)p->nreg)];
		if ((r->kind == RK_TEXT) != code || r->pages == 0)
			continue;
		if (r->kind == RK_STACK && r->owner != t->tstack)
			continue;
		*writable = r->writable;
		uint32_t page;
		if (r->kind == RK_STACK) /* near the top of a downward stack */
			page = r->pages - 1 - rng_below(&g->ctl, r->pages < 12 ? r->pages : 12);
		else
			page = rng_below(&g->ctl, r->pages);
		return r->start + page * PAGE;
	}
}

static uint64_t stack_top(proc *p, const task *t)
{
	region *r = region_find(p, RK_STACK, t->tstack);
	return r->start + (r->pages - 1) * PAGE;
}

/* Make addr one of t's hot data pages (not the stack slots). */
static void hot_put(gen *g, task *t, uint64_t addr, bool writable)
{
	int i = 2 + (int)rng_below(&g->ctl, NDATA - 2);
	t->data[i] = addr;
	t->data_writable[i] = writable;
}

static void hot_rebuild(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	for (int i = 0; i < NCODE; i++)
		t->code[i] = pick_page(g, p, t, true, &(bool){0});
	t->data[0] = stack_top(p, t);
	t->data[1] = t->data[0] - PAGE;
	t->data_writable[0] = t->data_writable[1] = true;
	for (int i = 2; i < NDATA; i++)
		t->data[i] = pick_page(g, p, t, false, &t->data_writable[i]);
	t->pc = t->code[0];
}

/* Slow drift of the working set between time slices. */
static void hot_drift(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	if (rng_chance(&g->ctl, 64))
		t->code[rng_below(&g->ctl, NCODE)] = pick_page(g, p, t, true, &(bool){0});
	for (unsigned n = rng_below(&g->ctl, 4); n; n--) {
		int i = 2 + (int)rng_below(&g->ctl, NDATA - 2);
		t->data[i] = pick_page(g, p, t, false, &t->data_writable[i]);
	}
}

/* After a range left p, replace every hot page that is no longer mapped. */
static void hot_revalidate(gen *g, int pi)
{
	proc *p = &g->procs[pi];
	for (int ti = 0; ti < MAX_TASKS; ti++) {
		task *t = &g->tasks[ti];
		if (!t->live || t->proc != pi)
			continue;
		for (int i = 0; i < NCODE; i++)
			if (!region_at(p, t->code[i]))
				t->code[i] = pick_page(g, p, t, true, &(bool){0});
		for (int i = 0; i < NDATA; i++)
			if (!region_at(p, t->data[i]))
				t->data[i] = pick_page(g, p, t, false, &t->data_writable[i]);
		if (!region_at(p, t->pc))
			t->pc = t->code[0];
	}
}

/* ---- processes and tasks ---- */

static int slot_take(uint32_t *used, int nslots, gen *g)
{
	uint32_t start = rng_below(&g->ctl, (uint32_t)nslots);
	for (int k = 0; k < nslots; k++) {
		int s = (int)((start + (uint32_t)k) % (uint32_t)nslots);
		if (!(*used & (1u << s))) {
			*used |= 1u << s;
			return s;
		}
	}
	return -1;
}

static int proc_new(gen *g)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (!g->procs[i].live) {
			g->procs[i] = (proc){.live = true, .created_seg = -1, .main_task = -1};
			return i;
		}
	return -1;
}

static int task_new(gen *g, int pi, int tstack)
{
	for (int i = 0; i < MAX_TASKS; i++)
		if (!g->tasks[i].live) {
			g->tasks[i] = (task){.live = true, .runnable = true, .proc = pi,
					     .tid = g->next_tid++, .tstack = tstack};
			g->procs[pi].ntasks++;
			return i;
		}
	g_assert_not_reached();
}

static uint64_t life_draw(gen *g, uint64_t mean)
{
	return mean / 2 + rng_below(&g->ctl, (uint32_t)MIN(mean, UINT32_MAX));
}

/* ---- the page cache ---- */

/* Bring page `page` of file fi into the cache (C, after a V when the cache
 * must give a frame back); returns the frame. */
static int cache_page(gen *g, int fi, uint32_t page, uint32_t *frame)
{
	gfile *f = &g->files[fi];
	if (f->frame[page]) {
		*frame = f->frame[page] - 1;
		return 0;
	}
	uint32_t slot = g->cache_hand;
	g->cache_hand = (g->cache_hand + 1) % g->cache_frames;
	uint32_t fr = CACHE_FRAME_BASE + slot;
	int rc;
	if (g->frame_file[slot] >= 0) {
		g->files[g->frame_file[slot]].frame[g->frame_page[slot]] = 0;
		if ((rc = EV(g, 'V', NULL, fr)))
			return rc;
	}
	g->frame_file[slot] = fi;
	g->frame_page[slot] = page;
	f->frame[page] = fr + 1;
	*frame = fr;
	return EV(g, 'C', NULL, fr, f->id, page);
}

static uint64_t frame_address(const gen *g, uint32_t frame)
{
	return g->lay->page_offset + ((uint64_t)frame << 12);
}

/* ---- kernel work ---- */

/* A burst of kernel references on behalf of the current task t: kernel
 * text for entry point kc, t's kernel stack and kernel data, and up to
 * NDATA / 2 extra pages (page-cache frames, user buffers) with their write
 * letters. */
static int kernel_work(gen *g, task *t, enum kcall kc, uint64_t n, const uint64_t *extra,
		       const char *extra_write, int nextra)
{
	burst b = {.vas = g->procs[t->proc].vas, .fetch = 'I', .read = 'R'};
	for (int i = 0; i < NCODE; i++)
		b.code[i] = g->lay->ktext + ((kc * 61u + (uint32_t)i * 5 + rng_below(&g->ctl, 3)) % KTEXT_PAGES) * PAGE;
	b.data[0] = g->lay->kdata + (uint32_t)((t->tid * 7) % KDATA_PAGES) * PAGE;
	b.write[0] = 'W';
	for (int i = 1; i < NDATA; i++) {
		int e = i - NDATA / 2;
		if (e >= 0 && nextra) {
			b.data[i] = extra[e % nextra];
			b.write[i] = extra_write[e % nextra];
		} else {
			b.data[i] = g->lay->kdata + rng_below(&g->ctl, KDATA_PAGES) * PAGE;
			b.write[i] = 'W';
		}
	}
	uint64_t pc = b.code[0];
	return emit_burst(g, &b, &pc, n);
}

static int user_work(gen *g, task *t, uint64_t n)
{
	proc *p = &g->procs[t->proc];
	burst b = {.vas = p->vas, .fetch = 'i', .read = 'r'};
	memcpy(b.code, t->code, sizeof b.code);
	memcpy(b.data, t->data, sizeof b.data);
	for (int i = 0; i < NDATA; i++)
		b.write[i] = t->data_writable[i] ? 'w' : 'r';
	if (p->footprint_pages) {
		b.footprint_pages = p->footprint_pages;
		memcpy(b.footprint_run, p->footprint_run, sizeof b.footprint_run);
	}
	uint64_t before = g->refs_done;
	int rc = emit_burst(g, &b, &t->pc, n);
	p->age += g->refs_done - before;
	t->age += g->refs_done - before;
	return rc;
}

/* Up to four writable user pages of t (for read() to fill). */
static int user_buffers(task *t, uint64_t *buf)
{
	int n = 0;
	for (int i = 0; i < NDATA && n < 4; i++)
		if (t->data_writable[i])
			buf[n++] = t->data[i];
	return n;
}

/* read() or write() of a few pages of a data file through the cache. */
static int sys_file_io(gen *g, task *t, bool writing)
{
	int fi = FILE_DATA(g, rng_below(&g->ctl, g->cfg.files));
	gfile *f = &g->files[fi];
	uint32_t npages = rng_range(&g->ctl, 1, MIN(f->pages, 8u));
	uint32_t first = rng_below(&g->ctl, f->pages - npages + 1);
	uint64_t extra[NDATA / 2];
	char extra_write[NDATA / 2];
	int n = user_buffers(t, extra);
	for (int i = 0; i < n; i++)
		extra_write[i] = writing ? 'R' : 'W';
	for (uint32_t k = 0; k < npages; k++) {
		uint32_t frame;
		int rc = cache_page(g, fi, first + k, &frame);
		if (rc)
			return rc;
		if (n < NDATA / 2) {
			extra[n] = frame_address(g, frame);
			extra_write[n++] = writing ? 'W' : 'R';
		}
	}
	return kernel_work(g, t, writing ? KC_WRITE : KC_READ, 128 + 256 * npages, extra,
			   extra_write, n);
}

static int map_binary(gen *g, task *t, int fi, uint64_t base, uint32_t text_pages,
		      uint32_t data_pages)
{
	proc *p = &g->procs[t->proc];
	const gfile *f = &g->files[fi];
	int rc = EV(g, 'M', f->name, t->tid, base, text_pages * PAGE, 0,
		    MAP_PRIVATE_ | MAP_FIXED_, PROT_R | PROT_X, f->id);
	if (rc)
		return rc;
	region_add(p, base, text_pages, RK_TEXT, false, -1);
	uint64_t data = base + text_pages * PAGE;
	if ((rc = EV(g, 'M', f->name, t->tid, data, data_pages * PAGE, text_pages,
		     MAP_PRIVATE_ | MAP_FIXED_, PROT_R | PROT_W, f->id)))
		return rc;
	region_add(p, data, data_pages, RK_DATA, true, -1);
	/* The loader reads the headers and the first code through the cache. */
	uint64_t extra[NDATA / 2];
	char extra_write[NDATA / 2];
	int n = 0;
	for (uint32_t k = 0; k < MIN(text_pages, 4u); k++) {
		uint32_t frame;
		if ((rc = cache_page(g, fi, k, &frame)))
			return rc;
		extra[n] = frame_address(g, frame);
		extra_write[n++] = 'R';
	}
	return kernel_work(g, t, KC_MMAP, 96, extra, extra_write, n);
}

/* Each program's share of the footprint, in pages. */
static uint32_t footprint_pages(const lp_gen_config *cfg)
{
	return (uint32_t)((cfg->footprint + cfg->processes - 1) / cfg->processes);
}

/* Where the spread runs of a footprint may lie: the user space past its
 * first 4 GiB, below the maps near its top. */
#define SPREAD_FROM UINT64_C(0x100000000)
#define SPREAD_TO UINT64_C(0x7f0000000000)

/* Where run `run` of p's footprint starts: in a row from the layout's
 * footprint, or else at a slot of the spread that the run's vas and number
 * pick, past the program's text and heap and p's runs before it. No random
 * number is drawn: either layout makes the same choices. */
static uint64_t footprint_run(const gen *g, const proc *p, uint32_t run)
{
	const layout *lay = g->lay;
	if (lay->footprint)
		return lay->footprint + (uint64_t)run * FOOTPRINT_RUN_PAGES * PAGE;
	uint64_t nslots = (SPREAD_TO - SPREAD_FROM) / SLOT_SIZE;
	uint64_t seed = p->vas * MAX_FOOTPRINT_RUNS + run;
	for (uint64_t slot = splitmix64(&seed) % nslots;; slot = (slot + 1) % nslots) {
		uint64_t start = SPREAD_FROM + slot * SLOT_SIZE;
		bool taken = start + SLOT_SIZE > lay->text && start < lay->heap_limit;
		for (uint32_t i = 0; i < run && !taken; i++)
			taken = p->footprint_run[i] == start;
		if (!taken)
			return start;
	}
}

/* Map p's footprint, footprint_pages of the configuration: an M for each
 * stretch of runs in a row (all of them, in the 32-bit layout). */
static int map_footprint(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	uint32_t pages = footprint_pages(&g->cfg);
	p->footprint_pages = pages;
	for (uint32_t run = 0; run * FOOTPRINT_RUN_PAGES < pages; run++)
		p->footprint_run[run] = footprint_run(g, p, run);
	for (uint32_t run = 0; run * FOOTPRINT_RUN_PAGES < pages;) {
		uint64_t start = p->footprint_run[run];
		uint32_t stretch = 0;
		do {
			stretch += MIN(FOOTPRINT_RUN_PAGES, pages - run * FOOTPRINT_RUN_PAGES);
			run++;
		} while (run * FOOTPRINT_RUN_PAGES < pages &&
			 p->footprint_run[run] == start + (uint64_t)stretch * PAGE);
		int rc = EV(g, 'M', "-", t->tid, start, (uint64_t)stretch * PAGE, 0,
			    MAP_PRIVATE_ | MAP_FIXED_ | MAP_ANON_, PROT_R | PROT_W, 0);
		if (rc)
			return rc;
		region_add(p, start, stretch, RK_FOOTPRINT, true, -1);
	}
	return 0;
}

/* The current task t replaces its image with program prog: E, then the
 * loader's mappings, a stack and a first heap. */
static int sys_exec(gen *g, task *t, int prog)
{
	proc *p = &g->procs[t->proc];
	const program *pr = &programs[prog];
	int rc = kernel_work(g, t, KC_EXEC, 512, NULL, NULL, 0);
	p->vas = g->next_vas++;
	if (rc || (rc = EV(g, 'E', pr->path, t->tid, p->vas)))
		return rc;
	p->prog = prog;
	p->nreg = 0;
	p->anon_used = p->filemap_used = p->shm_used = 0;
	p->age = 0;
	const layout *lay = g->lay;
	if ((rc = map_binary(g, t, FILE_PROG(prog), lay->text, pr->text_pages, pr->data_pages)))
		return rc;
	if ((rc = EV(g, 'M', "-", t->tid, lay->stack, STACK_PAGES * PAGE, 0,
		     MAP_PRIVATE_ | MAP_FIXED_ | MAP_ANON_, PROT_R | PROT_W, 0)))
		return rc;
	region_add(p, lay->stack, STACK_PAGES, RK_STACK, true, -1);
	if ((rc = map_footprint(g, t)))
		return rc;
	uint64_t lib = lay->lib;
	for (int i = 0; i < NLIBS; i++) {
		if (!(pr->libs & (1u << i)))
			continue;
		const library *l = &libraries[i];
		if ((rc = map_binary(g, t, FILE_LIB(i), lib, l->text_pages, l->data_pages)))
			return rc;
		lib += (uint32_t)(l->text_pages + l->data_pages + 16) * PAGE;
	}
	p->brk_start = p->brk = lay->text + (uint32_t)(pr->text_pages + pr->data_pages + 1) * PAGE;
	uint32_t grow = rng_range(&g->ctl, 4, 32) * PAGE;
	if ((rc = EV(g, 'B', NULL, t->tid, p->brk, p->brk + grow)))
		return rc;
	p->brk += grow;
	hot_rebuild(g, t);
	return 0;
}

static int sys_brk(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	uint32_t heap = (uint32_t)((p->brk - p->brk_start) >> 12);
	uint64_t next;
	bool big = programs[p->prog].traits & TR_BIG_HEAP;
	if (heap > 8 && rng_chance(&g->ctl, 40))
		next = p->brk - rng_range(&g->ctl, 1, heap / 4) * PAGE;
	else
		next = p->brk + rng_range(&g->ctl, 1, big ? 64 : 8) * PAGE;
	if (next >= g->lay->heap_limit)
		return 0;
	int rc = kernel_work(g, t, KC_BRK, 64, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'B', NULL, t->tid, p->brk, next)))
		return rc;
	if (next < p->brk) {
		p->brk = next;
		hot_revalidate(g, t->proc);
	} else {
		p->brk = next;
	}
	return 0;
}

static int sys_mmap_anon(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	int s = slot_take(&p->anon_used, ANON_SLOTS, g);
	if (s < 0)
		return 0;
	uint64_t start = g->lay->anon + (uint64_t)s * SLOT_SIZE;
	uint32_t pages = rng_range(&g->ctl, 4, 256);
	int rc = kernel_work(g, t, KC_MMAP, 96, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'M', "-", t->tid, start, pages * PAGE, 0, MAP_PRIVATE_ | MAP_ANON_,
			   PROT_R | PROT_W, 0)))
		return rc;
	region_add(p, start, pages, RK_ANON, true, s);
	/* A fresh buffer gets used at once. */
	hot_put(g, t, start + rng_below(&g->ctl, pages) * PAGE, true);
	return 0;
}

static region *random_region(gen *g, proc *p, int kind)
{
	int n = 0;
	for (int i = 0; i < p->nreg; i++)
		n += p->reg[i].kind == kind;
	if (!n)
		return NULL;
	int k = (int)rng_below(&g->ctl, (uint32_t)n);
	for (int i = 0; i < p->nreg; i++)
		if (p->reg[i].kind == kind && k-- == 0)
			return &p->reg[i];
	return NULL;
}

/* mremap of an anonymous mapping: grow or shrink in place, or move it to
 * another slot. A split mapping is only remapped whole-piece. */
static int sys_mremap(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	region *r = random_region(g, p, RK_ANON);
	if (!r)
		return 0;
	uint64_t old_start = r->start, new_start = old_start;
	uint32_t old_pages = r->pages;
	uint32_t new_pages = rng_chance(&g->ctl, 200) ? old_pages + rng_range(&g->ctl, 1, 256)
						      : rng_range(&g->ctl, 1, old_pages);
	int owner = r->owner;
	if ((old_start - g->lay->anon) % SLOT_SIZE || new_pages * PAGE > SLOT_SIZE)
		return 0; /* a tail piece, or too big for its slot */
	if (rng_chance(&g->ctl, 96)) {
		int s = slot_take(&p->anon_used, ANON_SLOTS, g);
		if (s >= 0) {
			p->anon_used &= ~(1u << owner);
			owner = s;
			new_start = g->lay->anon + (uint64_t)s * SLOT_SIZE;
		}
	}
	int rc = kernel_work(g, t, KC_MMAP, 128, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'K', NULL, t->tid, old_start, old_pages * PAGE, new_start,
			   new_pages * PAGE)))
		return rc;
	r->start = new_start;
	r->pages = new_pages;
	r->owner = (int16_t)owner;
	hot_revalidate(g, t->proc);
	return 0;
}

static int sys_munmap(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	region *r = random_region(g, p, rng_chance(&g->ctl, 200) ? RK_ANON : RK_FILE);
	if (!r)
		return 0;
	uint64_t start = r->start;
	uint32_t pages = r->pages;
	bool whole = pages < 2 || rng_chance(&g->ctl, 160);
	if (whole && r->start % SLOT_SIZE == 0)
		*(r->kind == RK_ANON ? &p->anon_used : &p->filemap_used) &= ~(1u << r->owner);
	else if (whole)
		return 0; /* the tail piece of a split mapping stays */
	if (!whole) { /* drop the tail: the region splits */
		start += (pages / 2) * PAGE;
		pages -= pages / 2;
	}
	int rc = kernel_work(g, t, KC_MMAP, 64, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'U', NULL, t->tid, start, pages * PAGE)))
		return rc;
	region_remove(p, start, pages);
	hot_revalidate(g, t->proc);
	return 0;
}

/* mmap of a data file: shared read-write or private read-only; the length
 * is the file's size, which need not be a whole number of pages. */
static int sys_mmap_file(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	int s = slot_take(&p->filemap_used, FILEMAP_SLOTS, g);
	if (s < 0)
		return 0;
	int fi = FILE_DATA(g, rng_below(&g->ctl, g->cfg.files));
	const gfile *f = &g->files[fi];
	bool shared = rng_chance(&g->ctl, 128);
	uint64_t start = g->lay->filemap + (uint64_t)s * SLOT_SIZE;
	int rc = kernel_work(g, t, KC_MMAP, 96, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'M', f->name, t->tid, start, f->size, 0,
			   shared ? MAP_SHARED_ : MAP_PRIVATE_, shared ? PROT_R | PROT_W : PROT_R,
			   f->id)))
		return rc;
	region_add(p, start, f->pages, RK_FILE, shared, s);
	hot_put(g, t, start + rng_below(&g->ctl, f->pages) * PAGE, shared);
	return 0;
}

/* Task t forks: the child copies the address space. *child_task is -1
 * when the process table is full (then nothing happens). */
static int sys_fork(gen *g, task *t, bool exec_pending, bool from_shell, int *child_task)
{
	int ci = proc_new(g);
	*child_task = -1;
	if (ci < 0)
		return 0;
	int rc = kernel_work(g, t, KC_FORK, 384, NULL, NULL, 0);
	if (rc)
		return rc;
	proc *parent = &g->procs[t->proc], *c = &g->procs[ci];
	*c = *parent;
	c->live = true;
	c->ntasks = 0;
	c->tstack_used = c->tstack_dead = 0;
	c->workers = 0;
	c->created_seg = -1;
	c->from_shell = from_shell;
	c->exec_pending = exec_pending;
	c->age = 0;
	c->life = life_draw(g, from_shell ? g->life_mean : g->life_mean / 2);
	/* Only the forking task's stack exists in the child. */
	for (int i = 0; i < c->nreg;)
		if (c->reg[i].kind == RK_STACK && c->reg[i].owner != t->tstack)
			region_drop(c, i);
		else
			i++;
	if (t->tstack >= 0) /* the child's only task is its main one */
		region_find(c, RK_STACK, t->tstack)->owner = -1;
	int ct = task_new(g, ci, -1);
	task *child = &g->tasks[ct];
	c->main_task = ct;
	c->pid = child->tid;
	c->vas = g->next_vas++; /* bound by the child's first S */
	memcpy(child->code, t->code, sizeof child->code);
	memcpy(child->data, t->data, sizeof child->data);
	memcpy(child->data_writable, t->data_writable, sizeof child->data_writable);
	child->pc = t->pc;
	*child_task = ct;
	return EV(g, 'F', NULL, t->tid, child->tid);
}

static int sys_thread(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	if ((unsigned)p->ntasks >= g->cfg.threads)
		return 0;
	int s = slot_take(&p->tstack_used, LP_GEN_MAX_THREADS, g);
	if (s < 0)
		return 0;
	uint64_t start = g->lay->tstack + (uint64_t)s * TSTACK_SLOT;
	int rc = kernel_work(g, t, KC_CLONE, 256, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'M', "-", t->tid, start, TSTACK_PAGES * PAGE, 0,
			   MAP_PRIVATE_ | MAP_ANON_, PROT_R | PROT_W, 0)))
		return rc;
	region_add(p, start, TSTACK_PAGES, RK_STACK, true, s);
	int ni = task_new(g, t->proc, s);
	task *nt = &g->tasks[ni];
	nt->life = life_draw(g, g->life_mean / 3);
	hot_rebuild(g, nt);
	return EV(g, 'T', NULL, t->tid, nt->tid);
}

static int shm_attach(gen *g, task *t, int seg)
{
	proc *p = &g->procs[t->proc];
	int s = slot_take(&p->shm_used, SHM_SLOTS, g);
	if (s < 0)
		return 0;
	uint64_t start = g->lay->shm + (uint64_t)s * SLOT_SIZE;
	int rc = kernel_work(g, t, KC_SHM, 96, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'H', NULL, t->tid, g->segs[seg].shmid, start)))
		return rc;
	region_add(p, start, (g->segs[seg].size + PAGE - 1) / PAGE, RK_SHM, true, s);
	hot_put(g, t, start, true);
	return 0;
}

/* A server starts: it joins a live segment or creates one (G), attaches it
 * (H) and maps a shared anonymous area its workers will share. */
static int server_setup(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	int seg = -1, free_seg = -1;
	for (int i = 0; i < MAX_SEGMENTS; i++) {
		if (g->segs[i].live && seg < 0 && rng_chance(&g->ctl, 128))
			seg = i;
		if (!g->segs[i].live && free_seg < 0)
			free_seg = i;
	}
	int rc;
	if (seg < 0 && free_seg >= 0) {
		seg = free_seg;
		segment *sg = &g->segs[seg];
		/* The lowest free id, so ids come back after Q. */
		*sg = (segment){.live = true, .shmid = 0x8000u + (uint32_t)seg,
				.size = rng_range(&g->ctl, 2, 64) * PAGE - rng_below(&g->ctl, PAGE),
				.instance = ++g->seg_instances};
		if ((rc = EV(g, 'G', NULL, sg->shmid, sg->size)))
			return rc;
		p->created_seg = seg;
		p->created_instance = sg->instance;
	}
	if (seg >= 0 && (rc = shm_attach(g, t, seg)))
		return rc;
	uint32_t pages = rng_range(&g->ctl, 8, 64);
	if ((rc = EV(g, 'M', "-", t->tid, g->lay->shared_anon, pages * PAGE, 0,
		     MAP_SHARED_ | MAP_ANON_, PROT_R | PROT_W, 0)))
		return rc;
	region_add(p, g->lay->shared_anon, pages, RK_SHARED_ANON, true, -1);
	hot_put(g, t, g->lay->shared_anon, true);
	p->server_ready = true;
	return 0;
}

/* Unmap the stacks of threads that have exited (the main task joins). */
static int join_threads(gen *g, task *t)
{
	proc *p = &g->procs[t->proc];
	while (p->tstack_dead) {
		int s = __builtin_ctz(p->tstack_dead);
		region *r = region_find(p, RK_STACK, s);
		int rc = EV(g, 'U', NULL, t->tid, r->start, r->pages * PAGE);
		if (rc)
			return rc;
		region_remove(p, r->start, r->pages);
		p->tstack_dead &= ~(1u << s);
		p->tstack_used &= ~(1u << s);
	}
	hot_revalidate(g, t->proc);
	return 0;
}

static void task_end(gen *g, int ti)
{
	task *t = &g->tasks[ti];
	proc *p = &g->procs[t->proc];
	t->live = false;
	p->ntasks--;
	if (g->current == ti)
		g->current = -1;
}

/* A thread other than the main one returns: X, and its stack waits for
 * the main task to unmap it. */
static int thread_exit(gen *g, int ti)
{
	task *t = &g->tasks[ti];
	int rc = kernel_work(g, t, KC_EXIT, 128, NULL, NULL, 0);
	if (rc || (rc = EV(g, 'X', NULL, t->tid)))
		return rc;
	g->procs[t->proc].tstack_dead |= 1u << t->tstack;
	task_end(g, ti);
	return 0;
}

/* The process of the current task ti exits: shared memory is removed (Q,
 * when this process created it) and detached (D), then every task ends. */
static int proc_exit(gen *g, int ti)
{
	task *t = &g->tasks[ti];
	int pi = t->proc;
	proc *p = &g->procs[pi];
	int rc = kernel_work(g, t, KC_EXIT, 256, NULL, NULL, 0);
	if (rc)
		return rc;
	int cs = p->created_seg;
	if (cs >= 0 && g->segs[cs].live && g->segs[cs].instance == p->created_instance) {
		if ((rc = EV(g, 'Q', NULL, g->segs[cs].shmid)))
			return rc;
		g->segs[cs].live = false;
	}
	for (int i = 0; i < p->nreg; i++)
		if (p->reg[i].kind == RK_SHM && (rc = EV(g, 'D', NULL, t->tid, p->reg[i].start)))
			return rc;
	for (int i = 0; i < MAX_TASKS; i++) {
		if (i == ti || !g->tasks[i].live || g->tasks[i].proc != pi)
			continue;
		if ((rc = EV(g, 'X', NULL, g->tasks[i].tid)))
			return rc;
		task_end(g, i);
	}
	if ((rc = EV(g, 'X', NULL, t->tid)))
		return rc;
	task_end(g, ti);
	p->live = false;
	if (p->from_shell) {
		g->children--;
		g->tasks[g->procs[0].main_task].runnable = true;
	}
	return 0;
}

/* One system call of the current task, chosen by what its program does.
 * Returns 0 with *gone set when the task has exited. */
static int system_call(gen *g, int ti, bool *gone)
{
	task *t = &g->tasks[ti];
	proc *p = &g->procs[t->proc];
	const program *pr = &programs[p->prog];
	bool main_task = p->main_task == ti;
	int rc;
	*gone = false;

	if (p->prog == SHELL_PROGRAM && g->children < (int)g->cfg.processes) {
		int ct;
		if ((rc = sys_fork(g, t, true, true, &ct)) || ct < 0)
			return rc;
		g->children++;
		g->spawned++;
		g->procs[g->tasks[ct].proc].exec_prog =
			g->spawned < NPROGRAMS ? g->spawned : 1 + (int)rng_below(&g->ctl, NPROGRAMS - 1);
		if (g->children == (int)g->cfg.processes)
			t->runnable = false; /* waits for a child */
		return 0;
	}
	if (!main_task && t->age >= t->life) {
		*gone = true;
		return thread_exit(g, ti);
	}
	if (main_task && p->prog != SHELL_PROGRAM && p->age >= p->life) {
		*gone = true;
		return proc_exit(g, ti);
	}
	if (main_task && (pr->traits & TR_SERVER) && !p->server_ready)
		return server_setup(g, t);
	if (main_task && (pr->traits & TR_SERVER) && p->from_shell && p->workers < MAX_WORKERS &&
	    rng_chance(&g->ctl, 128)) {
		int ct;
		p->workers++;
		return sys_fork(g, t, false, false, &ct);
	}
	if (main_task && (pr->traits & TR_THREADS) && rng_chance(&g->ctl, 96))
		return sys_thread(g, t);

	unsigned roll = rng_below(&g->ctl, 100);
	if (roll < 30)
		return sys_file_io(g, t, false);
	if (roll < 40)
		return sys_file_io(g, t, true);
	if (roll < 60)
		return sys_brk(g, t);
	if (roll < 72)
		return sys_mmap_anon(g, t);
	if (roll < 80)
		return sys_mremap(g, t);
	if (roll < 88)
		return sys_munmap(g, t);
	if (roll < ((pr->traits & TR_MAPS_FILES) ? 98 : 90))
		return sys_mmap_file(g, t);
	return kernel_work(g, t, KC_TIMER, 64, NULL, NULL, 0);
}

/* ---- the scheduler ---- */

static int next_task(gen *g)
{
	int from = g->current >= 0 ? g->current : 0;
	/* Round robin, with an occasional skip as wakeups reorder the queue. */
	int skip = rng_chance(&g->ctl, 32) ? 1 : 0;
	for (int k = 1; k <= MAX_TASKS; k++) {
		int i = (from + k) % MAX_TASKS;
		if (g->tasks[i].live && g->tasks[i].runnable && skip-- == 0)
			return i;
	}
	for (int k = 1; k <= MAX_TASKS; k++) {
		int i = (from + k) % MAX_TASKS;
		if (g->tasks[i].live && g->tasks[i].runnable)
			return i;
	}
	g_assert_not_reached();
}

/* A shell child runs for the first time: a little work in the copy of the
 * shell (cow faults on its stack), then exec. */
static int child_exec(gen *g, int ti)
{
	task *t = &g->tasks[ti];
	proc *p = &g->procs[t->proc];
	p->exec_pending = false;
	int rc = user_work(g, t, rng_range(&g->ctl, 200, 2000));
	if (rc)
		return rc;
	p->life = life_draw(g, g->life_mean);
	return sys_exec(g, t, p->exec_prog);
}

static int time_slice(gen *g)
{
	int ti = next_task(g);
	task *t = &g->tasks[ti];
	proc *p = &g->procs[t->proc];
	int rc;
	if (ti != g->current) {
		g->current = ti;
		if ((rc = EV(g, 'S', NULL, t->tid, p->vas)))
			return rc;
	}
	if (p->exec_pending && (rc = child_exec(g, ti)))
		return rc;
	if (p->main_task == ti && p->tstack_dead && (rc = join_threads(g, t)))
		return rc;
	hot_drift(g, t);
	uint64_t length = rng_range(&g->ctl, 2048, 16384);
	unsigned calls = rng_below(&g->ctl, 5);
	for (unsigned c = 0; c <= calls && refs_left(g); c++) {
		if ((rc = user_work(g, t, length / (calls + 1))))
			return rc;
		if (c < calls || p->prog == SHELL_PROGRAM) {
			bool gone;
			if ((rc = system_call(g, ti, &gone)))
				return rc;
			if (gone)
				return 0;
		}
	}
	/* The timer ends the slice. */
	return kernel_work(g, t, KC_TIMER, rng_range(&g->ctl, 64, 256), NULL, NULL, 0);
}

/* ---- setup ---- */

static void files_init(gen *g)
{
	g->nfiles = NLIBS + NPROGRAMS + (int)g->cfg.files;
	g->files = g_new0(gfile, g->nfiles);
	uint32_t inode = 0x1001;
	for (int i = 0; i < g->nfiles; i++) {
		gfile *f = &g->files[i];
		/* Device 803 (a disk partition) in the high half, inode below. */
		f->id = (uint64_t)0x803 << 32 | (inode += 1 + rng_below(&g->ctl, 64));
		if (i < NLIBS) {
			f->name = g_strdup(libraries[i].path);
			f->pages = libraries[i].text_pages + libraries[i].data_pages;
		} else if (i < NLIBS + NPROGRAMS) {
			f->name = g_strdup(programs[i - NLIBS].path);
			f->pages = programs[i - NLIBS].text_pages + programs[i - NLIBS].data_pages;
		} else {
			f->name = g_strdup_printf("/home/user/data/file%03d.dat", i - NLIBS - NPROGRAMS);
			f->pages = rng_range(&g->ctl, 1, 64);
		}
		f->size = f->pages * PAGE - rng_below(&g->ctl, PAGE);
		f->frame = g_new0(uint32_t, f->pages);
	}
	g->cache_frames = 64 + g->cfg.files;
	g->frame_file = g_new(int32_t, g->cache_frames);
	g->frame_page = g_new0(uint32_t, g->cache_frames);
	for (uint32_t i = 0; i < g->cache_frames; i++)
		g->frame_file[i] = -1;
}

static void gen_free(gen *g)
{
	for (int i = 0; i < g->nfiles; i++) {
		g_free((char *)g->files[i].name);
		g_free(g->files[i].frame);
	}
	g_free(g->files);
	g_free(g->frame_file);
	g_free(g->frame_page);
	g_free(g->procs);
	g_free(g->tasks);
	g_free(g->rbuf);
	g_free(g->kbuf);
}

void lp_gen_config_init(lp_gen_config *cfg)
{
	*cfg = (lp_gen_config){.seed = 1, .refs = 1000000, .processes = 4, .threads = 4, .files = 64,
			       .jobs = 1};
}

int lp_gen_config_check(const lp_gen_config *cfg, lp_error *err)
{
	if (cfg->processes < 1 || cfg->processes > LP_GEN_MAX_PROCESSES)
		return lp_fail(err, LP_EUSAGE, "processes must be between 1 and %d, not %u",
			       LP_GEN_MAX_PROCESSES, cfg->processes);
	if (cfg->threads < 1 || cfg->threads > LP_GEN_MAX_THREADS)
		return lp_fail(err, LP_EUSAGE, "threads must be between 1 and %d, not %u",
			       LP_GEN_MAX_THREADS, cfg->threads);
	if (cfg->files < 1 || cfg->files > LP_GEN_MAX_FILES)
		return lp_fail(err, LP_EUSAGE, "files must be between 1 and %d, not %u",
			       LP_GEN_MAX_FILES, cfg->files);
	if (footprint_pages(cfg) > LP_GEN_MAX_FOOTPRINT_PAGES)
		return lp_fail(err, LP_EUSAGE, "footprint: %" G_GUINT64_FORMAT " pages are more than "
			       "%u process%s can hold (%d pages each); add --processes",
			       cfg->footprint, cfg->processes, cfg->processes == 1 ? "" : "es",
			       LP_GEN_MAX_FOOTPRINT_PAGES);
	return 0;
}

int lp_gen_run(const lp_gen_config *cfg, lp_output *refs, lp_output *kern,
	       lp_progress_fn progress, void *progress_ctx, lp_error *err)
{
	int rc = lp_gen_config_check(cfg, err);
	if (rc)
		return rc;
	gen *g = g_new0(gen, 1);
	g->cfg = *cfg;
	g->ref_out = refs;
	g->kern_out = kern;
	g->err = err;
	g->progress = progress;
	g->progress_ctx = progress_ctx;
	g->lay = cfg->wide ? &layout64 : &layout32;
	g->record_size = cfg->wide ? LP_REF64_RECORD_SIZE : LP_REF_RECORD_SIZE;
	uint64_t sm = cfg->seed;
	rng_seed(&g->ctl, &sm);
	rng_seed(&g->ref, &sm);
	if (refs && cfg->wide &&
	    (rc = lp_output_write(refs, LP_REF64_HEADER, LP_REF64_HEADER_SIZE, err))) {
		g_free(g);
		return rc;
	}
	if (refs && cfg->jobs > 1) {
		g->writer = writer_start(refs);
		g->wbuf = g_async_queue_pop(g->writer->empty);
		g->rbuf = g->wbuf->data;
	} else {
		g->rbuf = g_malloc((size_t)REF_BUF_RECORDS * g->record_size);
	}
	g->kbuf = g_malloc(KERN_BUF_SIZE);
	g->procs = g_new0(proc, MAX_PROCS);
	g->tasks = g_new0(task, MAX_TASKS);
	g->now = 0x100000;
	g->next_tid = 1;
	g->next_vas = g->lay->first_vas;
	/* A process lives for about a third of its share of the run, but no
	 * more than a few million references, so that long captures keep
	 * starting programs. */
	g->life_mean = CLAMP(cfg->refs / (3 * cfg->processes), 50000, 4000000);
	files_init(g);

	if (cfg->refs) {
		/* Task 1 appears by its first S (in an address space of its own),
		 * then execs the shell. */
		int pi = proc_new(g);
		int ti = task_new(g, pi, -1);
		proc *sh = &g->procs[pi];
		sh->main_task = ti;
		sh->pid = g->tasks[ti].tid;
		sh->vas = g->next_vas++;
		g->current = ti;
		rc = EV(g, 'S', NULL, sh->pid, sh->vas);
		if (!rc)
			rc = sys_exec(g, &g->tasks[ti], SHELL_PROGRAM);
	}
	while (!rc && refs_left(g)) {
		rc = time_slice(g);
		if (progress) {
			lp_progress_info info = {g->refs_done, g->events_done,
						 (double)g->refs_done / (double)g->cfg.refs};
			progress(progress_ctx, &info);
		}
	}
	if (!rc && refs)
		rc = flush_refs(g);
	if (g->writer) {
		int wrc = writer_stop(g->writer, rc ? &(lp_error){0} : err);
		rc = rc ? rc : wrc;
		g->rbuf = NULL; /* the writer's */
	}
	if (!rc && kern)
		rc = flush_kern(g);
	gen_free(g);
	g_free(g);
	return rc;
}

/* Write one trace (the references, or the kernel events) and finish it;
 * *staged is what is left to publish (NULL for standard output). */
static int write_trace(const lp_gen_config *cfg, const char *path, bool references,
		       lp_progress_fn progress, void *progress_ctx, lp_staged **staged,
		       lp_error *err)
{
	lp_output *out = lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!out)
		return err->status;
	int rc = lp_gen_run(cfg, references ? out : NULL, references ? NULL : out, progress,
			    progress_ctx, err);
	return lp_output_stage(out, rc, staged, err);
}

int lp_gen_write(const lp_gen_config *cfg, const char *ref_path, const char *kern_path,
		 lp_progress_fn progress, void *progress_ctx, lp_error *err)
{
	/* The kernel trace first (a fast pass that skips the references); it
	 * is removed again if the references fail or a signal comes. */
	lp_staged *kern_staged = NULL, *ref_staged = NULL;
	int rc = write_trace(cfg, kern_path, false, NULL, NULL, &kern_staged, err);
	if (!rc && kern_staged)
		rc = lp_stage_publish_early(kern_staged, err);
	if (!rc)
		rc = write_trace(cfg, ref_path, true, progress, progress_ctx, &ref_staged, err);
	if (!rc)
		rc = lp_stage_publish(&ref_staged, 1, err);
	if (rc)
		lp_staged_discard(kern_staged);
	else if (kern_staged)
		lp_staged_keep(kern_staged);
	return rc;
}
