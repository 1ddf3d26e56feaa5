/* The merge core: address spaces, regions, translations and canonical
 * pages, exactly as laplace-formats(5), "MERGE SEMANTICS" defines them.
 *
 * Representation, chosen for the per-reference path:
 * - Every identity is numbered the moment it is first referenced, and a
 *   translation is only ever created by a reference (or copied or moved from
 *   one that was), so a translation can simply hold the canonical number.
 *   Identities that exist before any reference (file pages reached through
 *   the page cache, segment and shared-anonymous pages) live in maps keyed
 *   by what they are, and get their number on first use.
 * - A translation is one uint64_t: ((canonical + 1) << 1) | cow, 0 = none.
 * - Each address space maps vpn -> translation with a two-level table over
 *   the 20-bit vpn of a 32-bit address: a reference costs two loads.
 * - The copy-on-write rule needs, for private anonymous pages only, the
 *   number of translations pointing at a page; page_refs[] holds it indexed
 *   by canonical number, with NOT_PRIVATE for every other kind of page
 *   (exact for every page a translation still reaches: see release()).
 */
#include "laplace/merge.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include "pairmap.h"

#define VPN_BITS 20 /* references carry 32-bit addresses */
#define LEAF_BITS 10
#define LEAF_SIZE (1u << LEAF_BITS)
#define LEAF_MASK (LEAF_SIZE - 1)
#define TOP_SIZE (1u << (VPN_BITS - LEAF_BITS))
#define VPN_LIMIT (1ull << VPN_BITS)

#define NOT_PRIVATE UINT32_MAX
/* Canonical numbers must leave room for the +1 and the cow bit. */
#define CANON_LIMIT ((UINT64_C(1) << 63) - 1)

typedef uint64_t xlat;

static inline xlat xlat_make(uint64_t canon, int cow) { return ((canon + 1) << 1) | (xlat)cow; }
static inline uint64_t xlat_canon(xlat x) { return (x >> 1) - 1; }
static inline int xlat_cow(xlat x) { return (int)(x & 1); }

const char *const lp_page_kind_names[LP_PAGE_KIND_COUNT] = {
	"file", "segment", "shared_anon", "private_anon", "kernel",
};

const char *const lp_page_kind_words[LP_PAGE_KIND_COUNT] = {
	"file", "shared-memory segment", "shared anonymous", "private anonymous", "kernel",
};

enum region_kind {
	REGION_PRIVATE_ANON,
	REGION_SHARED_ANON,
	REGION_PRIVATE_FILE,
	REGION_SHARED_FILE,
	REGION_SEGMENT,
};

/* Pages [start, end) backed by `backing` (a file identity, or a segment or
 * shared-anonymous instance); page `start` is index `base` of the backing.
 * Splits and moves keep base consistent, so index = base + vpn - start. */
typedef struct region {
	uint64_t start, end;
	enum region_kind kind;
	uint64_t backing;
	uint64_t base;
} region;

typedef struct space {
	xlat *leaf[TOP_SIZE];
	region *regions; /* sorted by start, non-overlapping */
	size_t nregions, cap_regions;
	uint64_t ntasks;
	bool bound;
	uint64_t vas; /* the binding, when bound; also the key in m->bindings */
} space;

typedef struct task {
	uint64_t tid; /* key in m->tasks */
	uint64_t pid;
	uint64_t process; /* serial number of its process */
	space *space;
} task;

typedef struct segment {
	uint64_t shmid; /* key in m->segments */
	uint64_t instance;
	uint64_t npages;
} segment;

/* Page-cache frame: which file page it holds, and that page's canonical
 * number once known (0 = not yet; else canonical + 1). */
typedef struct frame_entry {
	uint64_t file, index;
	uint64_t canon1;
	bool used;
} frame_entry;

struct lp_merge {
	lp_merge_config cfg;
	lp_warn_fn warn;
	void *warn_ctx;
	lp_stats stats;

	GHashTable *tasks;    /* tid -> task */
	GHashTable *bindings; /* vas -> space */
	GHashTable *segments; /* shmid -> segment */
	task *current;
	uint64_t next_instance;
	uint64_t next_process;

	uint64_t next_canon;
	uint32_t *page_refs; /* by canonical number; see the top comment */
	uint64_t cap_pages;

	pairmap file_pages;     /* (file, index) -> canonical + 1 */
	pairmap instance_pages; /* (instance, index) -> canonical + 1 */
	uint64_t *kernel_pages[TOP_SIZE]; /* vpn -> canonical + 1 */
	frame_entry *frames[TOP_SIZE];    /* frame -> file page */

	/* Leaves are cut from chunks of one huge page each and live as long as
	 * the merge. */
	GPtrArray *leaf_chunks;
	size_t chunk_leaves_left; /* in the last chunk */
	xlat *spare_leaves; /* cleared leaves of dead spaces, linked through
			     * their first entry (leaf_new) */

	/* The space of the last reference's vas; reset by every event, since
	 * only events change bindings. */
	bool cache_valid;
	uint32_t cache_vas;
	space *cache_space;

	/* lp_merge_free: no count will be read again, so spaces are freed
	 * without releasing their translations one by one. */
	bool tearing_down;
};

/* ----------------------------------------------------------- big tables */

/* The tables that every reference or page reaches (the leaves of the
 * translation tables, the page counts) are laid in huge pages where the
 * system gives them: over millions of pages, a table in 4 KiB pages is a
 * TLB miss at nearly every reference, and growing it a page fault every
 * 4 KiB, both dear in a virtual machine. */
#define HUGE_PAGE ((size_t)2 << 20)

/* A table of at least `bytes`, in huge pages where the system has them (a
 * hint: where it has none, nothing changes). Freed with table_free. */
static void *table_alloc(size_t bytes)
{
	bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p = g_aligned_alloc(1, bytes, HUGE_PAGE);
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void table_free(void *p)
{
	g_aligned_free(p);
}

/* ---------------------------------------------------------------- pages */

static uint64_t new_canon(lp_merge *m, enum lp_page_kind kind)
{
	uint64_t c = m->next_canon++;
	if (c >= m->cap_pages) {
		uint64_t cap = m->cap_pages ? m->cap_pages * 2 : HUGE_PAGE / sizeof *m->page_refs;
		uint32_t *grown = table_alloc(cap * sizeof *grown);
		if (m->page_refs)
			memcpy(grown, m->page_refs, m->cap_pages * sizeof *grown);
		table_free(m->page_refs);
		m->page_refs = grown;
		m->cap_pages = cap;
	}
	m->page_refs[c] = kind == LP_PAGE_PRIVATE_ANON ? 1 : NOT_PRIVATE;
	m->stats.pages[kind]++;
	return c;
}

static uint64_t pair_page(lp_merge *m, pairmap *map, uint64_t a, uint64_t b, enum lp_page_kind kind)
{
	pairmap_slot *s = pairmap_find(map, a, b);
	if (!s->value) {
		s->a = a;
		s->b = b;
		s->value = new_canon(m, kind) + 1;
		pairmap_added(map);
	}
	return s->value - 1;
}

static uint64_t file_page(lp_merge *m, uint64_t file, uint64_t index)
{
	return pair_page(m, &m->file_pages, file, index, LP_PAGE_FILE);
}

/* Drop one translation's hold on its page. Only a cow translation can
 * share a private page: one that is not cow is its page's only holder (a
 * count of 1; cow is cleared only at that count, and only fork makes a
 * second holder, marking both cow). Gone, it leaves a count that no
 * translation can reach and nothing reads again, so it is left as it is:
 * a dying process with a large footprint then costs no look-up of counts
 * scattered over the whole table. */
static inline void release(lp_merge *m, xlat x)
{
	if (!xlat_cow(x))
		return;
	uint64_t c = xlat_canon(x);
	if (m->page_refs[c] != NOT_PRIVATE)
		m->page_refs[c]--;
}

/* How many translations ahead the loops over a whole leaf (release, fork)
 * fetch the page counts they will touch. A process's private pages are
 * numbered in the order it first touched them, which over a large
 * footprint is nothing like the order of their addresses: each count is a
 * cache miss, and fetched early the misses overlap. */
#define COUNT_PREFETCH_AHEAD 16

/* Which translations a loop touches the counts of. */
#define ANY_TRANSLATION (~(xlat)0)
#define COW_TRANSLATION ((xlat)1)

/* The count that leaf[k] will touch, for a prefetch, if leaf[k] has a bit
 * of `which`; else any count (the first), as a harmless target. (The
 * callers prefetch: GCC 12 drops a prefetch that is an inline function's
 * only effect.) */
static inline const uint32_t *count_ahead(const lp_merge *m, const xlat *leaf, size_t k,
					  xlat which)
{
	return k < LEAF_SIZE && (leaf[k] & which) ? &m->page_refs[xlat_canon(leaf[k])]
						   : m->page_refs;
}

/* Release every translation of a leaf and clear it. */
static void release_leaf(lp_merge *m, xlat *leaf)
{
	for (size_t k = 0; k < LEAF_SIZE; k++) {
		__builtin_prefetch(count_ahead(m, leaf, k + COUNT_PREFETCH_AHEAD, COW_TRANSLATION), 1);
		release(m, leaf[k]);
	}
	memset(leaf, 0, LEAF_SIZE * sizeof *leaf);
}

/* Leaves of dead spaces are kept for new ones: a process that dies with a
 * large footprint is often followed by another that builds one, and a
 * recycled leaf is cleared in the cache instead of faulted in anew. */
#define LEAVES_PER_CHUNK (HUGE_PAGE / (LEAF_SIZE * sizeof(xlat)))

static xlat *leaf_new(lp_merge *m)
{
	xlat *leaf = m->spare_leaves;
	if (leaf) {
		memcpy(&m->spare_leaves, leaf, sizeof leaf);
		leaf[0] = 0;
		return leaf;
	}
	if (m->chunk_leaves_left == 0) {
		g_ptr_array_add(m->leaf_chunks, table_alloc(HUGE_PAGE));
		m->chunk_leaves_left = LEAVES_PER_CHUNK;
	}
	xlat *chunk = g_ptr_array_index(m->leaf_chunks, m->leaf_chunks->len - 1);
	leaf = chunk + (LEAVES_PER_CHUNK - m->chunk_leaves_left--) * LEAF_SIZE;
	memset(leaf, 0, LEAF_SIZE * sizeof *leaf);
	return leaf;
}

/* Keep a cleared leaf for leaf_new. */
static void leaf_spare(lp_merge *m, xlat *leaf)
{
	memcpy(leaf, &m->spare_leaves, sizeof leaf);
	m->spare_leaves = leaf;
}

static xlat *slot_for(lp_merge *m, space *sp, uint64_t vpn)
{
	xlat **leaf = &sp->leaf[vpn >> LEAF_BITS];
	if (!*leaf)
		*leaf = leaf_new(m);
	return &(*leaf)[vpn & LEAF_MASK];
}

/* Remove the translations of pages [start, end), releasing them. */
static void drop_translations(lp_merge *m, space *sp, uint64_t start, uint64_t end)
{
	if (end > VPN_LIMIT)
		end = VPN_LIMIT;
	for (uint64_t v = start; v < end;) {
		xlat *leaf = sp->leaf[v >> LEAF_BITS];
		uint64_t leaf_end = (v | LEAF_MASK) + 1;
		if (leaf_end > end)
			leaf_end = end;
		if (leaf) {
			for (; v < leaf_end; v++) {
				__builtin_prefetch(count_ahead(m, leaf, (v & LEAF_MASK) + COUNT_PREFETCH_AHEAD,
									COW_TRANSLATION), 1);
				xlat *x = &leaf[v & LEAF_MASK];
				if (*x) {
					release(m, *x);
					*x = 0;
				}
			}
		}
		v = leaf_end;
	}
}

/* ---------------------------------------------------------------- regions */

/* Index of the first region whose end is past vpn. */
static size_t first_region_after(const space *sp, uint64_t vpn)
{
	size_t lo = 0, hi = sp->nregions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp->regions[mid].end <= vpn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const region *find_region(const space *sp, uint64_t vpn)
{
	size_t i = first_region_after(sp, vpn);
	if (i < sp->nregions && sp->regions[i].start <= vpn)
		return &sp->regions[i];
	return NULL;
}

static void insert_region_at(space *sp, size_t i, const region *r)
{
	if (sp->nregions == sp->cap_regions) {
		sp->cap_regions = sp->cap_regions ? sp->cap_regions * 2 : 8;
		sp->regions = g_renew(region, sp->regions, sp->cap_regions);
	}
	memmove(&sp->regions[i + 1], &sp->regions[i], (sp->nregions - i) * sizeof(region));
	sp->regions[i] = *r;
	sp->nregions++;
}

static void delete_region_at(space *sp, size_t i)
{
	memmove(&sp->regions[i], &sp->regions[i + 1], (sp->nregions - i - 1) * sizeof(region));
	sp->nregions--;
}

/* Cut pages [start, end) out of every region (splitting where needed) and
 * drop their translations. */
static void remove_range(lp_merge *m, space *sp, uint64_t start, uint64_t end)
{
	if (start >= end)
		return;
	size_t i = first_region_after(sp, start);
	while (i < sp->nregions && sp->regions[i].start < end) {
		region r = sp->regions[i];
		delete_region_at(sp, i);
		if (r.start < start) {
			region left = r;
			left.end = start;
			insert_region_at(sp, i++, &left);
		}
		if (r.end > end) {
			region right = r;
			right.start = end;
			right.base = r.base + (end - r.start);
			insert_region_at(sp, i++, &right);
		}
	}
	drop_translations(m, sp, start, end);
}

/* Add a region over [start, end), replacing whatever was there. */
static void map_region(lp_merge *m, space *sp, const region *r)
{
	if (r->start >= r->end)
		return;
	remove_range(m, sp, r->start, r->end);
	insert_region_at(sp, first_region_after(sp, r->start), r);
}

/* Pages covered by `start, length` (laplace-formats(5) 2.1): [first, end).
 * Computed without overflow for any 64-bit start and length. */
static void page_range(uint64_t start, uint64_t length, uint64_t *first, uint64_t *end)
{
	*first = start >> LP_PAGE_SHIFT;
	if (length == 0) {
		*end = *first;
		return;
	}
	uint64_t last_off = length - 1;
	uint64_t carry = ((start & 0xfff) + (last_off & 0xfff)) >> LP_PAGE_SHIFT;
	*end = *first + (last_off >> LP_PAGE_SHIFT) + carry + 1;
}

/* ---------------------------------------------------------- address spaces */

static space *space_new(void)
{
	return g_new0(space, 1);
}

static void unbind(lp_merge *m, space *sp)
{
	if (sp->bound) {
		g_hash_table_remove(m->bindings, &sp->vas);
		sp->bound = false;
	}
}

static void space_free(lp_merge *m, space *sp)
{
	unbind(m, sp);
	for (size_t t = 0; t < TOP_SIZE; t++) {
		xlat *leaf = sp->leaf[t];
		if (!leaf)
			continue;
		if (!m->tearing_down) {
			release_leaf(m, leaf);
			leaf_spare(m, leaf);
		}
	}
	g_free(sp->regions);
	g_free(sp);
}

/* Bind sp to vas: "a new binding replaces older ones on either side". A
 * space left with neither tasks nor a binding can never be reached again
 * (only orphan spaces can be in that state), so it is freed. */
static void bind(lp_merge *m, space *sp, uint64_t vas)
{
	if (sp->bound && sp->vas == vas)
		return;
	space *other = g_hash_table_lookup(m->bindings, &vas);
	if (other) {
		unbind(m, other);
		if (other->ntasks == 0)
			space_free(m, other);
	}
	unbind(m, sp);
	sp->vas = vas;
	sp->bound = true;
	g_hash_table_insert(m->bindings, &sp->vas, sp);
}

/* F: the child's space copies the parent's regions and translations;
 * private anonymous pages become copy-on-write on both sides. */
static space *space_fork(lp_merge *m, space *parent)
{
	space *child = space_new();
	child->regions = g_memdup2(parent->regions, parent->nregions * sizeof(region));
	child->nregions = child->cap_regions = parent->nregions;
	for (size_t t = 0; t < TOP_SIZE; t++) {
		xlat *pl = parent->leaf[t];
		if (!pl)
			continue;
		xlat *cl = child->leaf[t] = leaf_new(m);
		for (size_t k = 0; k < LEAF_SIZE; k++) {
			__builtin_prefetch(count_ahead(m, pl, k + COUNT_PREFETCH_AHEAD, ANY_TRANSLATION), 1);
			xlat x = pl[k];
			if (x) {
				uint64_t c = xlat_canon(x);
				if (m->page_refs[c] != NOT_PRIVATE) {
					m->page_refs[c]++;
					x |= 1;
					pl[k] = x;
				}
			}
			cl[k] = x;
		}
	}
	return child;
}

/* ------------------------------------------------------------------ tasks */

static task *live_task(lp_merge *m, uint64_t tid)
{
	return g_hash_table_lookup(m->tasks, &tid);
}

/* A task joining the process of parent, or (parent NULL) the first task of
 * a new process. */
static task *add_task(lp_merge *m, uint64_t tid, const task *parent, space *sp)
{
	task *t = g_new(task, 1);
	t->tid = tid;
	t->pid = parent ? parent->pid : tid;
	t->process = parent ? parent->process : m->next_process++;
	t->space = sp;
	sp->ntasks++;
	g_hash_table_insert(m->tasks, &t->tid, t);
	return t;
}

/* A task named by a record: the live one, or a new process of its own. */
static task *named_task(lp_merge *m, uint64_t tid)
{
	task *t = live_task(m, tid);
	return t ? t : add_task(m, tid, NULL, space_new());
}

/* A task leaves its space; a space with no tasks left dies. */
static void leave_space(lp_merge *m, task *t)
{
	space *sp = t->space;
	t->space = NULL;
	if (--sp->ntasks == 0)
		space_free(m, sp);
}

static void end_task(lp_merge *m, task *t)
{
	if (m->current == t)
		m->current = NULL;
	leave_space(m, t);
	g_hash_table_remove(m->tasks, &t->tid);
	g_free(t);
}

/* ------------------------------------------------------------------ public */

lp_merge *lp_merge_new(const lp_merge_config *cfg)
{
	lp_merge *m = g_new0(lp_merge, 1);
	m->cfg = *cfg;
	m->tasks = g_hash_table_new(g_int64_hash, g_int64_equal);
	m->bindings = g_hash_table_new(g_int64_hash, g_int64_equal);
	m->segments = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	pairmap_init(&m->file_pages);
	pairmap_init(&m->instance_pages);
	m->leaf_chunks = g_ptr_array_new();
	return m;
}

void lp_merge_free(lp_merge *m)
{
	if (!m)
		return;
	m->tearing_down = true;
	GHashTableIter it;
	gpointer key, value;
	/* Free every space once: through its tasks, then the task-less ones
	 * that are still bound (orphans). */
	g_hash_table_iter_init(&it, m->tasks);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		task *t = value;
		g_hash_table_iter_steal(&it);
		leave_space(m, t);
		g_free(t);
	}
	GList *orphans = g_hash_table_get_values(m->bindings);
	for (GList *l = orphans; l; l = l->next)
		space_free(m, l->data);
	g_list_free(orphans);
	g_hash_table_destroy(m->tasks);
	g_hash_table_destroy(m->bindings);
	g_hash_table_destroy(m->segments);
	pairmap_free(&m->file_pages);
	pairmap_free(&m->instance_pages);
	for (size_t t = 0; t < TOP_SIZE; t++) {
		g_free(m->kernel_pages[t]);
		g_free(m->frames[t]);
	}
	for (guint i = 0; i < m->leaf_chunks->len; i++)
		table_free(g_ptr_array_index(m->leaf_chunks, i));
	g_ptr_array_free(m->leaf_chunks, TRUE);
	table_free(m->page_refs);
	g_free(m);
}

void lp_merge_set_warn(lp_merge *m, lp_warn_fn warn, void *ctx)
{
	m->warn = warn;
	m->warn_ctx = ctx;
}

const lp_stats *lp_merge_stats(const lp_merge *m) { return &m->stats; }
void lp_merge_add_warning(lp_merge *m) { m->stats.warnings++; }

bool lp_merge_current_task(const lp_merge *m, lp_task_id *who)
{
	if (!m->current)
		return false;
	who->pid = m->current->pid;
	who->tid = m->current->tid;
	who->process = m->current->process;
	return true;
}

uint64_t lp_stats_total_pages(const lp_stats *st)
{
	uint64_t n = 0;
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		n += st->pages[k];
	return n;
}

uint64_t lp_stats_total_refs(const lp_stats *st)
{
	uint64_t n = 0;
	for (int i = 0; i < 6; i++)
		n += st->refs[i];
	return n;
}

static void route_to(lp_event_route *route, const task *t)
{
	if (route) {
		route->task[route->ntasks].pid = t->pid;
		route->task[route->ntasks].tid = t->tid;
		route->task[route->ntasks].process = t->process;
		route->ntasks++;
	}
}

static void warn(lp_merge *m, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(lp_merge *m, const char *fmt, ...)
{
	m->stats.warnings++;
	if (!m->warn)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	m->warn(m->warn_ctx, msg);
	g_free(msg);
}

static int event_mremap(lp_merge *m, task *t, const lp_event *ev, lp_error *err)
{
	uint64_t old_start = ev->f[1], old_length = ev->f[2];
	uint64_t new_start = ev->f[3], new_length = ev->f[4];
	space *sp = t->space;
	if (old_length == 0)
		return lp_fail(err, LP_EINPUT, "field old_length: mremap of an empty range");
	uint64_t os, oe;
	page_range(old_start, old_length, &os, &oe);
	const region *found = find_region(sp, os);
	if (!found || found->end < oe)
		return lp_fail(err, LP_EINPUT,
			       "field old_start: range 0x%" PRIx64 "+0x%" PRIx64 " of task 0x%" PRIx64
			       " is not inside one region",
			       old_start, old_length, t->tid);
	region moved = *found;
	moved.base = found->base + (os - found->start);

	/* Lift the old range's translations out before any removal, so that
	 * a new range overlapping the old one cannot drop them. */
	uint64_t ocap = (oe < VPN_LIMIT ? oe : VPN_LIMIT);
	typedef struct { uint64_t offset; xlat x; } carried_xlat;
	GArray *carried = g_array_new(FALSE, FALSE, sizeof(carried_xlat));
	for (uint64_t v = os; v < ocap; v++) {
		xlat *leaf = sp->leaf[v >> LEAF_BITS];
		if (!leaf) {
			v |= LEAF_MASK;
			continue;
		}
		xlat *x = &leaf[v & LEAF_MASK];
		if (*x) {
			carried_xlat c = {v - os, *x};
			g_array_append_val(carried, c);
			*x = 0;
		}
	}
	remove_range(m, sp, os, oe);

	uint64_t ns = 0, ne = 0;
	if (new_length) {
		page_range(new_start, new_length, &ns, &ne);
		moved.start = ns;
		moved.end = ne;
		map_region(m, sp, &moved);
	}
	for (guint k = 0; k < carried->len; k++) {
		carried_xlat c = g_array_index(carried, carried_xlat, k);
		uint64_t v = ns + c.offset;
		if (new_length && v < ne && v < VPN_LIMIT)
			*slot_for(m, sp, v) = c.x;
		else
			release(m, c.x);
	}
	g_array_free(carried, TRUE);
	return 0;
}

/* D: remove every piece of a segment region whose page 0 lies at vpn. */
static bool detach(lp_merge *m, space *sp, uint64_t vpn)
{
	bool any = false;
	for (size_t i = 0; i < sp->nregions;) {
		region r = sp->regions[i];
		if (r.kind == REGION_SEGMENT && r.start - r.base == vpn) {
			delete_region_at(sp, i);
			drop_translations(m, sp, r.start, r.end);
			any = true;
		} else {
			i++;
		}
	}
	return any;
}

static frame_entry *frame_slot(lp_merge *m, uint64_t frame, bool create)
{
	if (frame >= VPN_LIMIT)
		return NULL; /* no reference can reach it */
	frame_entry **leaf = &m->frames[frame >> LEAF_BITS];
	if (!*leaf) {
		if (!create)
			return NULL;
		*leaf = g_new0(frame_entry, LEAF_SIZE);
	}
	return &(*leaf)[frame & LEAF_MASK];
}

int lp_merge_event(lp_merge *m, const lp_event *ev, lp_event_route *route, lp_error *err)
{
	const uint64_t *f = ev->f;
	task *t;
	space *sp;
	uint64_t first, end;
	segment *seg;

	if (route)
		route->ntasks = 0;
	m->cache_valid = false;

	switch (ev->tag) {
	case LP_TAG_F:
	case LP_TAG_T:
		t = named_task(m, f[0]);
		if (live_task(m, f[1]))
			return lp_fail(err, LP_EINPUT, "field child: task 0x%" PRIx64 " is alive", f[1]);
		route_to(route, t);
		if (ev->tag == LP_TAG_F)
			t = add_task(m, f[1], NULL, space_fork(m, t->space));
		else
			t = add_task(m, f[1], t, t->space);
		route_to(route, t);
		break;
	case LP_TAG_E:
		t = named_task(m, f[0]);
		route_to(route, t);
		sp = space_new();
		bind(m, sp, f[1]);
		leave_space(m, t);
		t->space = sp;
		sp->ntasks = 1;
		break;
	case LP_TAG_S:
		t = named_task(m, f[0]);
		route_to(route, t);
		bind(m, t->space, f[1]);
		m->current = t;
		break;
	case LP_TAG_X:
		t = named_task(m, f[0]);
		route_to(route, t);
		end_task(m, t);
		break;
	case LP_TAG_M: {
		t = named_task(m, f[0]);
		route_to(route, t);
		uint64_t flags = f[4];
		region r = {0};
		page_range(f[1], f[2], &r.start, &r.end);
		if (flags & 0x20) {
			if (flags & 0x1) {
				r.kind = REGION_SHARED_ANON;
				r.backing = m->next_instance++;
			} else {
				r.kind = REGION_PRIVATE_ANON;
			}
		} else {
			r.kind = (flags & 0x1) ? REGION_SHARED_FILE : REGION_PRIVATE_FILE;
			r.backing = f[6];
			r.base = f[3];
		}
		map_region(m, t->space, &r);
		break;
	}
	case LP_TAG_U:
		t = named_task(m, f[0]);
		route_to(route, t);
		page_range(f[1], f[2], &first, &end);
		remove_range(m, t->space, first, end);
		break;
	case LP_TAG_B:
		t = named_task(m, f[0]);
		route_to(route, t);
		if (f[2] > f[1]) {
			region r = {.kind = REGION_PRIVATE_ANON};
			page_range(f[1], f[2] - f[1], &r.start, &r.end);
			map_region(m, t->space, &r);
		} else if (f[2] < f[1]) {
			page_range(f[2], f[1] - f[2], &first, &end);
			remove_range(m, t->space, first, end);
		}
		break;
	case LP_TAG_K: {
		t = named_task(m, f[0]);
		route_to(route, t);
		int rc = event_mremap(m, t, ev, err);
		if (rc)
			return rc;
		break;
	}
	case LP_TAG_G:
		if (g_hash_table_contains(m->segments, &f[0]))
			return lp_fail(err, LP_EINPUT, "field shmid: segment 0x%" PRIx64 " already exists", f[0]);
		seg = g_new(segment, 1);
		seg->shmid = f[0];
		seg->instance = m->next_instance++;
		seg->npages = (f[1] >> LP_PAGE_SHIFT) + ((f[1] & 0xfff) != 0);
		g_hash_table_insert(m->segments, &seg->shmid, seg);
		break;
	case LP_TAG_H: {
		t = named_task(m, f[0]);
		route_to(route, t);
		seg = g_hash_table_lookup(m->segments, &f[1]);
		if (!seg)
			return lp_fail(err, LP_EINPUT, "field shmid: no segment 0x%" PRIx64, f[1]);
		region r = {.kind = REGION_SEGMENT, .backing = seg->instance};
		r.start = f[2] >> LP_PAGE_SHIFT;
		r.end = r.start + seg->npages;
		map_region(m, t->space, &r);
		break;
	}
	case LP_TAG_D:
		t = named_task(m, f[0]);
		route_to(route, t);
		if (!detach(m, t->space, f[1] >> LP_PAGE_SHIFT))
			warn(m, "D: no segment attached at 0x%" PRIx64 " in task 0x%" PRIx64, f[1], f[0]);
		break;
	case LP_TAG_Q:
		if (!g_hash_table_remove(m->segments, &f[0]))
			return lp_fail(err, LP_EINPUT, "field shmid: no segment 0x%" PRIx64, f[0]);
		break;
	case LP_TAG_C: {
		frame_entry *fe = frame_slot(m, f[0], true);
		if (fe)
			*fe = (frame_entry){.file = f[1], .index = f[2], .used = true};
		break;
	}
	case LP_TAG_V: {
		frame_entry *fe = frame_slot(m, f[0], false);
		if (fe)
			fe->used = false;
		break;
	}
	default:
		return lp_fail(err, LP_EINPUT, "unknown event tag");
	}
	m->stats.events[ev->tag]++;
	return 0;
}

/* The first reference to vpn in sp, or a write through a cow translation
 * (laplace-formats(5) 3.4, rules 1 and 2). */
static uint64_t translate_slow(lp_merge *m, space *sp, uint64_t vpn, bool write)
{
	xlat *slot = slot_for(m, sp, vpn);
	uint64_t c;
	if (*slot) {
		c = xlat_canon(*slot);
		if (m->page_refs[c] == NOT_PRIVATE || m->page_refs[c] > 1) {
			release(m, *slot);
			c = new_canon(m, LP_PAGE_PRIVATE_ANON);
			m->stats.cow_copies++;
		}
		*slot = xlat_make(c, 0);
		return c;
	}
	const region *r = find_region(sp, vpn);
	int cow = 0;
	if (!r) {
		c = new_canon(m, LP_PAGE_PRIVATE_ANON);
		m->stats.unmapped_pages++;
	} else {
		uint64_t index = r->base + (vpn - r->start);
		switch (r->kind) {
		case REGION_SHARED_FILE:
			c = file_page(m, r->backing, index);
			break;
		case REGION_PRIVATE_FILE:
			/* A write would replace the file page at once: the file
			 * page itself is not referenced, so it gets no number. */
			if (write) {
				c = new_canon(m, LP_PAGE_PRIVATE_ANON);
				m->stats.cow_copies++;
			} else {
				c = file_page(m, r->backing, index);
				cow = 1;
			}
			break;
		case REGION_SEGMENT:
			c = pair_page(m, &m->instance_pages, r->backing, index, LP_PAGE_SEGMENT);
			break;
		case REGION_SHARED_ANON:
			c = pair_page(m, &m->instance_pages, r->backing, index, LP_PAGE_SHARED_ANON);
			break;
		default:
			c = new_canon(m, LP_PAGE_PRIVATE_ANON);
			break;
		}
	}
	*slot = xlat_make(c, cow);
	return c;
}

static inline uint64_t translate(lp_merge *m, space *sp, uint64_t vpn, bool write)
{
	const xlat *leaf = sp->leaf[vpn >> LEAF_BITS];
	if (leaf) {
		xlat x = leaf[vpn & LEAF_MASK];
		/* No translation, or a write through a cow one, in one test:
		 * whether a reference writes follows no pattern, and a branch
		 * on it was nearly every mispredicted branch of the merge. */
		if (!((x == 0) | (x & (xlat)write)))
			return xlat_canon(x);
	}
	return translate_slow(m, sp, vpn, write);
}

static space *space_of_vas_slow(lp_merge *m, uint32_t vas)
{
	uint64_t key = vas;
	space *sp = g_hash_table_lookup(m->bindings, &key);
	if (!sp) {
		sp = space_new();
		bind(m, sp, key);
		m->stats.orphan_spaces++;
	}
	m->cache_valid = true;
	m->cache_vas = vas;
	m->cache_space = sp;
	return sp;
}

static inline space *space_of_vas(lp_merge *m, uint32_t vas)
{
	if (m->cache_valid && m->cache_vas == vas)
		return m->cache_space;
	return space_of_vas_slow(m, vas);
}

static uint64_t kernel_page(lp_merge *m, uint32_t address)
{
	uint64_t frame = ((uint64_t)address - m->cfg.page_offset) >> LP_PAGE_SHIFT;
	frame_entry *fe = frame_slot(m, frame, false);
	if (fe && fe->used) {
		if (!fe->canon1)
			fe->canon1 = file_page(m, fe->file, fe->index) + 1;
		return fe->canon1 - 1;
	}
	uint64_t vpn = address >> LP_PAGE_SHIFT;
	uint64_t **leaf = &m->kernel_pages[vpn >> LEAF_BITS];
	if (!*leaf)
		*leaf = g_new0(uint64_t, LEAF_SIZE);
	uint64_t *k = &(*leaf)[vpn & LEAF_MASK];
	if (!*k)
		*k = new_canon(m, LP_PAGE_KERNEL) + 1;
	return *k - 1;
}

/* How far ahead lp_merge_refs fetches translations into the cache. Over a
 * footprint larger than the caches nearly every reference's translation
 * is a cache (and TLB) miss; asked for this many references early, the
 * misses overlap instead of stalling one after another. */
#define PREFETCH_AHEAD 64
/* Below this many pages numbered so far the translations fit the caches
 * and prefetching only costs (9% more instructions on a gen capture of
 * 5,000 pages). 2^17 pages' translations take 1 MiB. */
#define PREFETCH_FROM_PAGES (1u << 17)

/* Where the translation of r would lie in the address space last looked
 * up (r's own nearly always, inside a batch), if that part of the space
 * has translations; else NULL. Only a hint for a prefetch: for a kernel
 * address or another space it is a useless but harmless one. (The caller
 * prefetches: GCC 12 drops a prefetch that is a function's only effect.) */
static inline const xlat *translation_hint(const lp_merge *m, const lp_ref *r)
{
	if (!m->cache_valid)
		return NULL;
	uint32_t vpn = r->address >> LP_PAGE_SHIFT;
	const xlat *leaf = m->cache_space->leaf[vpn >> LEAF_BITS];
	return leaf ? &leaf[vpn & LEAF_MASK] : NULL;
}

/* The translation loop; inline and called with a constant prefetch, so
 * that a small footprint runs a loop without the prefetching's cost. */
static G_ALWAYS_INLINE inline void translate_refs(lp_merge *m, const lp_ref *refs, size_t n, uint64_t *canon,
				  const bool prefetch)
{
	const space *current = m->current ? m->current->space : NULL;
	uint64_t by_type[128] = {0}; /* reference counts by type character */
	for (size_t i = 0; i < n; i++) {
		const lp_ref *r = &refs[i];
		const xlat *ahead;
		if (prefetch && i + PREFETCH_AHEAD < n &&
		    (ahead = translation_hint(m, &refs[i + PREFETCH_AHEAD])))
			__builtin_prefetch(ahead);
		by_type[r->type & 0x7f]++;
		/* 'w' and 'W' differ only in the case bit, as do kernel and user. */
		bool write = (r->type | 0x20) == 'w';
		if (!(r->type & 0x20)) {
			if (r->address >= m->cfg.page_offset) {
				canon[i] = kernel_page(m, r->address);
				continue;
			}
			canon[i] = translate(m, space_of_vas(m, r->vas), r->address >> LP_PAGE_SHIFT, write);
			continue;
		}
		space *sp = space_of_vas(m, r->vas);
		if (current && sp != current)
			m->stats.mismatches++;
		canon[i] = translate(m, sp, r->address >> LP_PAGE_SHIFT, write);
	}
	for (int t = 0; t < 6; t++)
		m->stats.refs[t] += by_type[(unsigned char)lp_ref_types[t]];
}

int lp_merge_refs(lp_merge *m, const lp_ref *refs, size_t n, uint64_t *canon, lp_error *err)
{
	/* Each reference creates at most one identity. */
	if (m->next_canon > CANON_LIMIT - n)
		return lp_fail(err, LP_EINPUT, "the canonical page space is exhausted");
	if (m->next_canon > PREFETCH_FROM_PAGES)
		translate_refs(m, refs, n, canon, true);
	else
		translate_refs(m, refs, n, canon, false);
	return 0;
}
