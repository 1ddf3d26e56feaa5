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
 * - Each address space maps vpn -> translation in a radix tree, as the
 *   hardware's page tables do: vpns have up to 52 bits (64-bit captures,
 *   laplace-formats(5) 10), sparse over a 47-bit user space and the direct
 *   map at ffff888000000000. A leaf holds 1024 translations; a block's mid
 *   level 1024 leaves (a block is 2^20 pages, 4 GiB: the whole of a 32-bit
 *   space); directories of 256 entries above find a block by its number,
 *   as many levels as the tree's blocks need (struct radix): a 32-bit
 *   space's tree is its one mid level, as big as the top level of the
 *   two-level table over 20-bit vpns that this replaces, a 47-bit user
 *   space's has two directories above its blocks. Nothing exists before
 *   the space's first translation, so that a space that has none (most of
 *   a kernel trace's processes) costs a few dozen bytes. The loop over a
 *   batch holds two blocks of the last space (held_blocks): a reference
 *   costs a subtraction and a compare that find its leaf in the first,
 *   then two loads, as before; another block is the second held one, or a
 *   walk of the directories. Ranges (an munmap of the whole user space, a
 *   fork, a death) walk the parts of the tree that exist.
 *   Why a radix tree: instructions counted by bench/core64 (its driver
 *   merging gen --wide captures of 2*10^7 references, small: the default
 *   options, 6,826 pages; huge: --processes 32 --footprint 2000000,
 *   3.1*10^6 pages) and on the fixed 32-bit capture of 10^7 references
 *   (laplace merge -j 1, basic):
 *                         32-bit capture   small 64-bit   huge 64-bit
 *     20-bit table        1.2972e9         -              -
 *     radix tree          1.3078e9 +0.8%   1.6856e9       3.5671e9
 *     blocks in a hash    1.3078e9         1.6857e9       3.6660e9 +2.8%
 *   ("blocks in a hash": the earlier design's areas, found by an idmap
 *   when the held blocks miss, bench/core64-areas.patch; peak RSS on the
 *   huge capture 51.5 MB either way, 17 bytes a page). The two are even
 *   where processes keep to two blocks; where they do not, the walk, two
 *   loads that stay in the cache, costs less than a hash's multiply and
 *   probe. A hash keyed by vpn was not built: at every reference it costs
 *   a multiply and a probe of a table far larger than the caches where the
 *   tree costs two loads, and the 2% allowed on the 32-bit capture is
 *   about three instructions a reference. And the tree is one structure
 *   for the spaces and the kernel's tables alike, walked in order.
 * - Regions are a treap keyed by start: insert, remove and split cost
 *   O(log n) in a space of n regions.
 * - The copy-on-write rule needs, for private anonymous pages only, the
 *   number of translations pointing at a page; page_refs[] holds it indexed
 *   by canonical number, with NOT_PRIVATE for every other kind of page
 *   (exact for every page a translation still reaches: see release()).
 * - An allocation that fails is recorded in m->oom (what could not be had)
 *   and ends the event or batch with LP_EIO; the merge is then only fit to
 *   be freed.
 */
#include "core/merge.h"

#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/idmap.h"
#include "core/pairmap.h"

/* Vpns have up to 52 bits (64-bit addresses). Tables over them are radix
 * trees (see the top comment): a leaf holds LEAF_SIZE entries, the mid level
 * of a block MID_SIZE leaves (a block is 2^20 pages, 4 GiB, the whole of a
 * 32-bit address space), and up to DIR_LEVELS levels of directories (as
 * many as a tree's blocks need) find a block by its number, 8 bits a
 * level. */
#define VPN_BITS 52
#define VPN_LIMIT (UINT64_C(1) << VPN_BITS)
#define LEAF_BITS 10
#define LEAF_SIZE (1u << LEAF_BITS)
#define LEAF_MASK (LEAF_SIZE - 1)
#define MID_BITS 10
#define MID_SIZE (1u << MID_BITS)
#define MID_MASK (MID_SIZE - 1)
#define BLOCK_SHIFT (LEAF_BITS + MID_BITS)
#define DIR_BITS 8
#define DIR_SIZE (1u << DIR_BITS)
#define DIR_MASK (DIR_SIZE - 1)
#define DIR_LEVELS ((VPN_BITS - BLOCK_SHIFT) / DIR_BITS)
_Static_assert(BLOCK_SHIFT + DIR_LEVELS * DIR_BITS == VPN_BITS, "the directories cover every block");
/* No block has this number (they have 32 bits). */
#define NO_BLOCK UINT64_MAX
/* A mid base ((block << MID_BITS)) that no vpn's leaf number lies within
 * MID_SIZE above (leaf numbers have 42 bits): the look-up misses. */
#define NO_MID_BASE (UINT64_C(1) << 63)

/* What the merge could not allocate when a task or address space could not
 * be made: one message for both, since which of the two a process's
 * creation runs out on is an accident of the allocator. */
#define PROCESS_STATE "the tasks and address spaces"

#define NOT_PRIVATE UINT32_MAX
/* Canonical numbers must leave room for the +1 and the cow bit. */
#define CANON_LIMIT ((UINT64_C(1) << 63) - 1)

typedef uint64_t xlat;

static inline xlat xlat_make(uint64_t canon, int cow) { return ((canon + 1) << 1) | (xlat)cow; }
static inline uint64_t xlat_canon(xlat x) { return (x >> 1) - 1; }
static inline int xlat_cow(xlat x) { return (int)(x & 1); }

/* lp_stats' arrays keep their size when tags or page kinds are added
 * (laplace.h, the ABI): their room must hold them all. */
_Static_assert(LP_TAG_COUNT <= LP_STATS_TAGS, "lp_stats.events: no room for every tag");
_Static_assert(LP_PAGE_KIND_COUNT <= LP_STATS_PAGE_KINDS, "lp_stats.pages: no room for every kind");

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

/* A node of a space's treap of regions: in-order by start (regions never
 * overlap), and a heap by priority, which keeps the tree balanced. */
typedef struct region_node {
	region r;
	struct region_node *left, *right;
	uint32_t priority;
} region_node;

/* A radix tree over vpns. Its height grows with the blocks it holds (as
 * Linux's radix trees do): a root of level h covers the blocks below
 * 2^(8h), so that the root of a 32-bit space is the mid level of its one
 * block, as the top level of its table was before vpns had 52 bits, and
 * a 47-bit user space has two directories. */
typedef struct radix {
	void **root; /* NULL while the tree is empty */
	int height;  /* the root's level (see level_shift) */
} radix;

/* A radix tree outside any space (kernel pages, page-cache frames), with
 * the mid level of the last block looked up, since every kernel reference
 * reaches both. */
typedef struct global_table {
	radix tree;
	uint64_t block; /* of mid, or NO_BLOCK */
	void *const *mid;
} global_table;

typedef struct space {
	radix xlats; /* vpn -> translation (leaves of xlat) */
	region_node *regions;
	uint64_t ntasks;
	bool bound;
	uint64_t vas; /* the binding, when bound */
} space;

typedef struct task {
	uint64_t tid;
	uint64_t pid;
	uint64_t process; /* serial number of its process */
	space *space;
} task;

typedef struct segment {
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

	idmap tasks;    /* tid -> task */
	idmap bindings; /* vas -> space */
	idmap segments; /* shmid -> segment */
	task *current;
	uint64_t next_instance;
	uint64_t next_process;

	uint64_t next_canon;
	uint32_t *page_refs; /* by canonical number; see the top comment */
	uint64_t cap_pages;

	pairmap file_pages;     /* (file, index) -> canonical + 1 */
	pairmap instance_pages; /* (instance, index) -> canonical + 1 */
	global_table kernel_pages; /* vpn -> canonical + 1 (leaves of uint64_t) */
	global_table frames;       /* frame -> file page (leaves of frame_entry) */

	/* Leaves are cut from chunks of one huge page each and live as long as
	 * the merge. */
	xlat **leaf_chunks;
	size_t nchunks, cap_chunks;
	size_t chunk_leaves_left; /* in the last chunk */
	xlat *spare_leaves; /* cleared leaves of dead spaces, linked through
			     * their first entry (leaf_new) */

	uint32_t next_priority; /* of the next region node, before mixing */

	/* What could not be allocated, once an allocation has failed. */
	const char *oom;

	/* lp_merge_free: no count will be read again, so spaces are freed
	 * without releasing their translations one by one. */
	bool tearing_down;
};

/* The mid level of every block that has none: all NULL, so that the
 * per-reference path needs no test of its own for it. */
static void *const empty_mid[MID_SIZE];

/* Record that `what` could not be allocated (the first failure is the one
 * reported) and return NULL, for `return out_of_memory(m, ...)`. */
static void *out_of_memory(lp_merge *m, const char *what)
{
	if (!m->oom)
		m->oom = what;
	return NULL;
}

/* g_try_malloc0, recording a failure. */
static void *try_alloc0(lp_merge *m, size_t bytes, const char *what)
{
	void *p = g_try_malloc0(bytes);
	return p ? p : out_of_memory(m, what);
}

static int oom_fail(const lp_merge *m, lp_error *err)
{
	return lp_fail(err, LP_EIO, "out of memory: %s", m->oom);
}

/* ---------------------------------------------------------- radix trees */

/* Levels are numbered from the bottom: 0 is a block's mid level (its
 * entries are leaves), 1 to DIR_LEVELS directories; the root's is the
 * tree's height. */
static size_t level_entries(int level) { return level ? DIR_SIZE : MID_SIZE; }

/* log2 of the pages an entry of a node of this level covers. */
static unsigned level_shift(int level)
{
	return level ? BLOCK_SHIFT + (unsigned)(level - 1) * DIR_BITS : LEAF_BITS;
}

/* Whether a tree of this height covers block. */
static inline bool height_covers(int height, uint64_t block)
{
	return !(block >> (DIR_BITS * (unsigned)height));
}

/* The mid level of block `block` of t, or empty_mid (for any 64-bit
 * block number: past the 52-bit vpns there is none). */
static inline void *const *radix_mid(const radix *t, uint64_t block)
{
	if (!height_covers(t->height, block))
		return empty_mid;
	void **n = t->root;
	for (int level = t->height; n && level > 0; level--)
		n = n[(block >> ((unsigned)(level - 1) * DIR_BITS)) & DIR_MASK];
	return n ? (void *const *)n : empty_mid;
}

/* The node at *slot, made (with `entries` NULL entries) if need be; NULL
 * with the failure recorded. */
static void **node_at(lp_merge *m, void **slot, size_t entries, const char *what)
{
	if (!*slot)
		*slot = try_alloc0(m, entries * sizeof(void *), what);
	return *slot;
}

/* The mid level of block `block` (below 2^32) of t, made with its
 * directories if need be, the tree grown as high as it needs (the old
 * root becomes entry 0 of a new one); NULL with the failure recorded. */
static void **radix_mid_make(lp_merge *m, radix *t, uint64_t block, const char *what)
{
	if (!t->root)
		for (t->height = 0; !height_covers(t->height, block); t->height++)
			;
	while (!height_covers(t->height, block)) {
		void **up = try_alloc0(m, DIR_SIZE * sizeof(void *), what);
		if (!up)
			return NULL;
		up[0] = t->root;
		t->root = up;
		t->height++;
	}
	void **n = node_at(m, (void **)&t->root, level_entries(t->height), what);
	for (int level = t->height; n && level > 0; level--)
		n = node_at(m, &n[(block >> ((unsigned)(level - 1) * DIR_BITS)) & DIR_MASK],
			    level_entries(level - 1), what);
	return n;
}

/* What radix_visit calls for each leaf holding pages of its range: the
 * leaf, the vpn of its entry 0, and the part [from, to) of the range in
 * it. */
typedef void leaf_fn(lp_merge *m, void *leaf, uint64_t first, uint64_t from, uint64_t to, void *ctx);

static void visit_node(lp_merge *m, void **node, int level, uint64_t base, uint64_t start, uint64_t end,
		       leaf_fn *fn, void *ctx)
{
	unsigned shift = level_shift(level);
	for (size_t k = start > base ? (start - base) >> shift : 0; k < level_entries(level); k++) {
		uint64_t lo = base + ((uint64_t)k << shift), hi = lo + (UINT64_C(1) << shift);
		if (lo >= end)
			break;
		if (!node[k])
			continue;
		if (level)
			visit_node(m, node[k], level - 1, lo, start, end, fn, ctx);
		else
			fn(m, node[k], lo, start > lo ? start : lo, end < hi ? end : hi, ctx);
	}
}

/* Call fn for every leaf of t that holds pages of [start, end): only the
 * parts of the tree that exist are walked, so a range may span the whole
 * 64-bit space. */
static void radix_visit(lp_merge *m, const radix *t, uint64_t start, uint64_t end, leaf_fn *fn, void *ctx)
{
	if (t->root && start < end)
		visit_node(m, t->root, t->height, 0, start, end < VPN_LIMIT ? end : VPN_LIMIT, fn, ctx);
}

static void free_node(void **node, int level, bool free_leaves)
{
	for (size_t k = 0; k < level_entries(level); k++) {
		if (!node[k])
			continue;
		if (level)
			free_node(node[k], level - 1, free_leaves);
		else if (free_leaves)
			g_free(node[k]);
	}
	g_free(node);
}

/* Free t's directories and mid levels, and its leaves when free_leaves
 * (those of translations are cut from chunks, and are not). */
static void radix_free(radix *t, bool free_leaves)
{
	if (t->root)
		free_node(t->root, t->height, free_leaves);
	*t = (radix){0};
}

/* Entry vpn's leaf in a global table, or NULL. */
static inline void *global_leaf(global_table *t, uint64_t vpn)
{
	uint64_t block = vpn >> BLOCK_SHIFT;
	if (G_UNLIKELY(block != t->block)) {
		t->block = block;
		t->mid = radix_mid(&t->tree, block);
	}
	return t->mid[(vpn >> LEAF_BITS) & MID_MASK];
}

/* Where entry vpn (of entry_size bytes) of a global table lies, made if
 * need be; NULL with the failure recorded. */
static void *global_slot(lp_merge *m, global_table *t, uint64_t vpn, size_t entry_size, const char *what)
{
	void **mid = radix_mid_make(m, &t->tree, vpn >> BLOCK_SHIFT, what);
	t->block = NO_BLOCK; /* the last look-up may have found no block */
	if (!mid)
		return NULL;
	void **leaf = &mid[(vpn >> LEAF_BITS) & MID_MASK];
	if (!*leaf && !(*leaf = try_alloc0(m, LEAF_SIZE * entry_size, what)))
		return NULL;
	return (char *)*leaf + (vpn & LEAF_MASK) * entry_size;
}

/* ----------------------------------------------------------- big tables */

/* The tables that every reference or page reaches (the leaves of the
 * translation tables, the page counts) are laid in huge pages where the
 * system gives them: over millions of pages, a table in 4 KiB pages is a
 * TLB miss at nearly every reference, and growing it a page fault every
 * 4 KiB, both dear in a virtual machine. */
#define HUGE_PAGE ((size_t)2 << 20)

/* A table of at least `bytes`, in huge pages where the system has them (a
 * hint: where it has none, nothing changes), or NULL with the failure
 * recorded. Freed with table_free. */
static void *table_alloc(lp_merge *m, size_t bytes, const char *what)
{
	bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p;
	if (posix_memalign(&p, HUGE_PAGE, bytes))
		return out_of_memory(m, what);
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void table_free(void *p)
{
	free(p);
}

/* ---------------------------------------------------------------- pages */

/* A new canonical number, or (out of memory) 0 with the failure recorded:
 * the caller's result is then never used. */
static uint64_t new_canon(lp_merge *m, enum lp_page_kind kind)
{
	uint64_t c = m->next_canon;
	if (c >= m->cap_pages) {
		uint64_t cap = m->cap_pages ? m->cap_pages * 2 : HUGE_PAGE / sizeof *m->page_refs;
		uint32_t *grown = table_alloc(m, cap * sizeof *grown, "the table of page counts");
		if (!grown)
			return 0;
		if (m->page_refs)
			memcpy(grown, m->page_refs, m->cap_pages * sizeof *grown);
		table_free(m->page_refs);
		m->page_refs = grown;
		m->cap_pages = cap;
	}
	m->next_canon++;
	m->page_refs[c] = kind == LP_PAGE_PRIVATE_ANON ? 1 : NOT_PRIVATE;
	m->stats.pages[kind]++;
	return c;
}

static uint64_t pair_page(lp_merge *m, pairmap *map, uint64_t a, uint64_t b, enum lp_page_kind kind)
{
	pairmap_slot *s = pairmap_find(map, a, b);
	if (!s) {
		out_of_memory(m, kind == LP_PAGE_FILE ? "the table of file pages" : "the table of shared pages");
		return 0;
	}
	if (!s->value) {
		uint64_t c = new_canon(m, kind);
		if (m->oom)
			return 0;
		s->a = a;
		s->b = b;
		s->value = c + 1;
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
#define XLAT_TABLE "the translation table of an address space"

static xlat *leaf_new(lp_merge *m)
{
	xlat *leaf = m->spare_leaves;
	if (leaf) {
		memcpy(&m->spare_leaves, leaf, sizeof leaf);
		leaf[0] = 0;
		return leaf;
	}
	if (m->chunk_leaves_left == 0) {
		if (m->nchunks == m->cap_chunks) {
			size_t cap = m->cap_chunks ? m->cap_chunks * 2 : 16;
			xlat **grown = g_try_renew(xlat *, m->leaf_chunks, cap);
			if (!grown)
				return out_of_memory(m, XLAT_TABLE);
			m->leaf_chunks = grown;
			m->cap_chunks = cap;
		}
		xlat *chunk = table_alloc(m, HUGE_PAGE, XLAT_TABLE);
		if (!chunk)
			return NULL;
		m->leaf_chunks[m->nchunks++] = chunk;
		m->chunk_leaves_left = LEAVES_PER_CHUNK;
	}
	xlat *chunk = m->leaf_chunks[m->nchunks - 1];
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

/* Where vpn's translation is kept in sp, its leaf (and the levels above
 * it) made if need be; NULL with the failure recorded. */
static xlat *slot_for(lp_merge *m, space *sp, uint64_t vpn)
{
	void **mid = radix_mid_make(m, &sp->xlats, vpn >> BLOCK_SHIFT, XLAT_TABLE);
	if (!mid)
		return NULL;
	void **leaf = &mid[(vpn >> LEAF_BITS) & MID_MASK];
	if (!*leaf && !(*leaf = leaf_new(m)))
		return NULL;
	return &((xlat *)*leaf)[vpn & LEAF_MASK];
}

/* radix_visit: release and clear the translations of [from, to). */
static void drop_leaf_translations(lp_merge *m, void *leaf_, uint64_t first, uint64_t from, uint64_t to,
				   void *ctx)
{
	(void)ctx;
	xlat *leaf = leaf_;
	for (size_t k = from - first; k < to - first; k++) {
		__builtin_prefetch(count_ahead(m, leaf, k + COUNT_PREFETCH_AHEAD, COW_TRANSLATION), 1);
		if (leaf[k]) {
			release(m, leaf[k]);
			leaf[k] = 0;
		}
	}
}

/* Remove the translations of pages [start, end), releasing them. */
static void drop_translations(lp_merge *m, space *sp, uint64_t start, uint64_t end)
{
	radix_visit(m, &sp->xlats, start, end, drop_leaf_translations, NULL);
}

/* ---------------------------------------------------------------- regions */

static region_node *region_node_new(lp_merge *m, const region *r)
{
	region_node *n = g_try_new(region_node, 1);
	if (!n)
		return out_of_memory(m, "a region");
	n->r = *r;
	n->left = n->right = NULL;
	/* Priorities need only look random (murmur3's finaliser over a
	 * counter): the same input always builds the same trees. */
	uint32_t x = m->next_priority++ * 0x9e3779b9u;
	x = (x ^ (x >> 16)) * 0x85ebca6bu;
	x = (x ^ (x >> 13)) * 0xc2b2ae35u;
	n->priority = x ^ (x >> 16);
	return n;
}

static void regions_free(region_node *t)
{
	while (t) {
		regions_free(t->left);
		region_node *right = t->right;
		g_free(t);
		t = right;
	}
}

/* Split t into the regions that start before `start` and the others. */
static void regions_split(region_node *t, uint64_t start, region_node **before, region_node **from)
{
	if (!t) {
		*before = *from = NULL;
	} else if (t->r.start < start) {
		regions_split(t->right, start, &t->right, from);
		*before = t;
	} else {
		regions_split(t->left, start, before, &t->left);
		*from = t;
	}
}

/* Join two treaps, every region of a before every region of b. */
static region_node *regions_join(region_node *a, region_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->priority > b->priority) {
		a->right = regions_join(a->right, b);
		return a;
	}
	b->left = regions_join(a, b->left);
	return b;
}

static region_node *last_region(region_node *t)
{
	while (t && t->right)
		t = t->right;
	return t;
}

static const region *find_region(const space *sp, uint64_t vpn)
{
	const region_node *best = NULL; /* the last region starting at or before vpn */
	for (const region_node *t = sp->regions; t;) {
		if (t->r.start <= vpn) {
			best = t;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	return best && best->r.end > vpn ? &best->r : NULL;
}

/* Cut pages [start, end) out of every region (splitting where needed) and
 * drop their translations. Returns false, having changed nothing, when a
 * split cannot get its node. */
static bool remove_range(lp_merge *m, space *sp, uint64_t start, uint64_t end)
{
	if (start >= end)
		return true;
	region_node *before, *inside, *after;
	regions_split(sp->regions, start, &before, &inside);
	regions_split(inside, end, &inside, &after);
	region_node *left = last_region(before);
	if (left && left->r.end > start) {
		if (left->r.end > end) { /* the range is a hole in one region */
			region right = left->r;
			right.start = end;
			right.base = left->r.base + (end - left->r.start);
			region_node *n = region_node_new(m, &right);
			if (!n) { /* nothing starts inside: the hole's region is around it */
				sp->regions = regions_join(before, after);
				return false;
			}
			after = regions_join(n, after);
		}
		left->r.end = start;
	}
	/* The last region starting inside may reach past the range: its tail
	 * stays, the rest of them go. */
	region_node *last = last_region(inside);
	if (last && last->r.end > end) {
		region_node *tail;
		regions_split(inside, last->r.start, &inside, &tail);
		tail->r.base += end - tail->r.start;
		tail->r.start = end;
		after = regions_join(tail, after);
	}
	regions_free(inside);
	sp->regions = regions_join(before, after);
	drop_translations(m, sp, start, end);
	return true;
}

/* Add a region over [start, end), replacing whatever was there. Returns
 * false when out of memory. */
static bool map_region(lp_merge *m, space *sp, const region *r)
{
	if (r->start >= r->end)
		return true;
	region_node *n = region_node_new(m, r);
	if (!n)
		return false;
	if (!remove_range(m, sp, r->start, r->end)) {
		g_free(n);
		return false;
	}
	region_node *before, *after;
	regions_split(sp->regions, r->start, &before, &after);
	sp->regions = regions_join(regions_join(before, n), after);
	return true;
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

/* Pages of the 64-bit address space: no range may end past them. */
#define ADDRESS_PAGES (UINT64_C(1) << (64 - LP_PAGE_SHIFT))

/* laplace-formats(5) 10.2: a range whose last byte would lie past the last
 * address is an error, in captures of either width. Returns 0, or
 * LP_EINPUT naming field. */
static int check_range(const char *field, uint64_t start, uint64_t length, lp_error *err)
{
	if (length && length - 1 > UINT64_MAX - start)
		return lp_fail(err, LP_EINPUT,
			       "field %s: range 0x%" PRIx64 "+0x%" PRIx64 " ends past 0xffffffffffffffff",
			       field, start, length);
	return 0;
}

/* ---------------------------------------------------------- address spaces */

static space *space_new(lp_merge *m)
{
	return try_alloc0(m, sizeof(space), PROCESS_STATE);
}

static void unbind(lp_merge *m, space *sp)
{
	if (sp->bound) {
		idmap_remove(&m->bindings, sp->vas);
		sp->bound = false;
	}
}

/* radix_visit: release a dead space's leaf and keep it for another. */
static void spare_leaf(lp_merge *m, void *leaf, uint64_t first, uint64_t from, uint64_t to, void *ctx)
{
	(void)first, (void)from, (void)to, (void)ctx;
	release_leaf(m, leaf);
	leaf_spare(m, leaf);
}

static void space_free(lp_merge *m, space *sp)
{
	unbind(m, sp);
	if (!m->tearing_down)
		radix_visit(m, &sp->xlats, 0, VPN_LIMIT, spare_leaf, NULL);
	radix_free(&sp->xlats, false);
	regions_free(sp->regions);
	g_free(sp);
}

/* Bind sp to vas: "a new binding replaces older ones on either side". A
 * space left with neither tasks nor a binding can never be reached again
 * (only orphan spaces can be in that state), so it is freed. Out of memory,
 * returns false with nothing changed. */
static bool bind(lp_merge *m, space *sp, uint64_t vas)
{
	if (sp->bound && sp->vas == vas)
		return true;
	space *other = idmap_get(&m->bindings, vas);
	if (!idmap_put(&m->bindings, vas, sp)) {
		out_of_memory(m, "the table of bindings");
		return false;
	}
	if (other) {
		other->bound = false; /* vas is sp's now */
		if (other->ntasks == 0)
			space_free(m, other);
	}
	unbind(m, sp);
	sp->vas = vas;
	sp->bound = true;
	return true;
}

/* A copy of the regions of t. Out of memory, *failed is set and the copy
 * is partial (but a tree, for regions_free). */
static region_node *regions_copy(lp_merge *m, const region_node *t, bool *failed)
{
	if (!t || *failed)
		return NULL;
	region_node *n = g_try_new(region_node, 1);
	if (!n) {
		*failed = true;
		return out_of_memory(m, "a region");
	}
	*n = *t;
	n->left = regions_copy(m, t->left, failed);
	n->right = regions_copy(m, t->right, failed);
	return n;
}

/* Copy the node pn of a parent's translations, of the given level, into
 * *slot, a child's: translations to private anonymous pages become cow on
 * both sides. False when out of memory (what was copied is in *slot, for
 * space_free). */
static bool copy_node(lp_merge *m, void **slot, void **pn, int level)
{
	void **cn = node_at(m, slot, level_entries(level), XLAT_TABLE);
	if (!cn)
		return false;
	for (size_t t = 0; t < level_entries(level); t++) {
		if (!pn[t])
			continue;
		if (level) {
			if (!copy_node(m, &cn[t], pn[t], level - 1))
				return false;
			continue;
		}
		xlat *pl = pn[t];
		xlat *cl = cn[t] = leaf_new(m);
		if (!cl)
			return false;
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
	return true;
}

/* F: the child's space copies the parent's regions and translations;
 * private anonymous pages become copy-on-write on both sides. NULL when out
 * of memory. */
static space *space_fork(lp_merge *m, space *parent)
{
	space *child = space_new(m);
	if (!child)
		return NULL;
	bool failed = false;
	child->regions = regions_copy(m, parent->regions, &failed);
	if (failed)
		goto fail;
	child->xlats.height = parent->xlats.height;
	if (parent->xlats.root &&
	    !copy_node(m, (void **)&child->xlats.root, parent->xlats.root, parent->xlats.height))
		goto fail;
	return child;
fail:
	space_free(m, child);
	return NULL;
}

/* ------------------------------------------------------------------ tasks */

static task *live_task(lp_merge *m, uint64_t tid)
{
	return idmap_get(&m->tasks, tid);
}

/* A task joining the process of parent, or (parent NULL) the first task of
 * a new process; NULL when out of memory. */
static task *add_task(lp_merge *m, uint64_t tid, const task *parent, space *sp)
{
	task *t = g_try_new(task, 1);
	if (!t || !idmap_put(&m->tasks, tid, t)) {
		g_free(t);
		return out_of_memory(m, PROCESS_STATE);
	}
	t->tid = tid;
	t->pid = parent ? parent->pid : tid;
	t->process = parent ? parent->process : m->next_process++;
	t->space = sp;
	sp->ntasks++;
	return t;
}

/* A task named by a record: the live one, or a new process of its own;
 * NULL when out of memory. */
static task *named_task(lp_merge *m, uint64_t tid)
{
	task *t = live_task(m, tid);
	if (t)
		return t;
	space *sp = space_new(m);
	if (!sp)
		return NULL;
	t = add_task(m, tid, NULL, sp);
	if (!t)
		space_free(m, sp);
	return t;
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
	idmap_remove(&m->tasks, t->tid);
	g_free(t);
}

/* ------------------------------------------------------------------ public */

lp_merge *lp_merge_new(const lp_merge_config *cfg)
{
	lp_merge *m = g_new0(lp_merge, 1);
	m->cfg = *cfg;
	m->stats.size = sizeof m->stats;
	pairmap_init(&m->file_pages);
	pairmap_init(&m->instance_pages);
	m->kernel_pages.block = m->frames.block = NO_BLOCK;
	return m;
}

void lp_merge_free(lp_merge *m)
{
	if (!m)
		return;
	m->tearing_down = true;
	/* Free every space once: through its tasks, then the task-less ones
	 * that are still bound (orphans), unbound first so that freeing them
	 * leaves the map of bindings as it is during the walk. */
	size_t pos = 0;
	void *value;
	while ((value = idmap_next(&m->tasks, &pos))) {
		task *t = value;
		leave_space(m, t);
		g_free(t);
	}
	for (pos = 0; (value = idmap_next(&m->bindings, &pos));) {
		space *sp = value;
		sp->bound = false;
		space_free(m, sp);
	}
	for (pos = 0; (value = idmap_next(&m->segments, &pos));)
		g_free(value);
	idmap_free(&m->tasks);
	idmap_free(&m->bindings);
	idmap_free(&m->segments);
	pairmap_free(&m->file_pages);
	pairmap_free(&m->instance_pages);
	radix_free(&m->kernel_pages.tree, true);
	radix_free(&m->frames.tree, true);
	for (size_t i = 0; i < m->nchunks; i++)
		table_free(m->leaf_chunks[i]);
	g_free(m->leaf_chunks);
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

/* The translations that mremap moves: each with its offset in the old
 * range, which starts at `start`. */
typedef struct carried_xlat {
	uint64_t offset;
	xlat x;
} carried_xlat;

typedef struct carrying {
	uint64_t start;
	carried_xlat *carried; /* NULL while counting */
	size_t n;
} carrying;

/* radix_visit: count the translations of [from, to) in c->n. */
static void count_translations(lp_merge *m, void *leaf_, uint64_t first, uint64_t from, uint64_t to, void *c_)
{
	(void)m;
	const xlat *leaf = leaf_;
	carrying *c = c_;
	for (uint64_t v = from; v < to; v++)
		c->n += leaf[v - first] != 0;
}

/* radix_visit: move the translations of [from, to) into c->carried. */
static void lift_translations(lp_merge *m, void *leaf_, uint64_t first, uint64_t from, uint64_t to, void *c_)
{
	(void)m;
	xlat *leaf = leaf_;
	carrying *c = c_;
	for (uint64_t v = from; v < to; v++) {
		xlat *x = &leaf[v - first];
		if (*x) {
			c->carried[c->n++] = (carried_xlat){v - c->start, *x};
			*x = 0;
		}
	}
}

static int event_mremap(lp_merge *m, task *t, const lp_event *ev, lp_error *err)
{
	uint64_t old_start = ev->f[1], old_length = ev->f[2];
	uint64_t new_start = ev->f[3], new_length = ev->f[4];
	space *sp = t->space;
	if (old_length == 0)
		return lp_fail(err, LP_EINPUT, "field old_length: mremap of an empty range");
	int rc = check_range("old_start", old_start, old_length, err);
	if (rc || (rc = check_range("new_start", new_start, new_length, err)))
		return rc;
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
	carrying c = {.start = os};
	radix_visit(m, &sp->xlats, os, oe, count_translations, &c);
	c.carried = g_try_new(carried_xlat, c.n);
	if (c.n && !c.carried) {
		out_of_memory(m, "the translations that mremap moves");
		return 0;
	}
	c.n = 0;
	radix_visit(m, &sp->xlats, os, oe, lift_translations, &c);
	carried_xlat *carried = c.carried;
	size_t ncarried = c.n;
	bool ok = remove_range(m, sp, os, oe);
	uint64_t ns = 0, ne = 0;
	if (ok && new_length) {
		page_range(new_start, new_length, &ns, &ne);
		moved.start = ns;
		moved.end = ne;
		ok = map_region(m, sp, &moved);
	}
	for (size_t k = 0; ok && k < ncarried; k++) {
		uint64_t v = ns + carried[k].offset;
		xlat *slot;
		if (!new_length || v >= ne)
			release(m, carried[k].x);
		else if ((slot = slot_for(m, sp, v)))
			*slot = carried[k].x;
		else
			ok = false;
	}
	g_free(carried);
	return 0; /* out of memory (when !ok) is in m->oom */
}

/* D: remove from the treap t of sp every piece of a segment region whose
 * page 0 lies at vpn (pieces moved by mremap may lie anywhere, so every
 * region is looked at), setting *any if there was one; returns what is
 * left of t. */
static region_node *detach(lp_merge *m, space *sp, region_node *t, uint64_t vpn, bool *any)
{
	if (!t)
		return NULL;
	t->left = detach(m, sp, t->left, vpn, any);
	t->right = detach(m, sp, t->right, vpn, any);
	if (t->r.kind != REGION_SEGMENT || t->r.start - t->r.base != vpn)
		return t;
	drop_translations(m, sp, t->r.start, t->r.end);
	region_node *rest = regions_join(t->left, t->right);
	g_free(t);
	*any = true;
	return rest;
}

/* The page-cache entry of frame, or NULL when it has none (no C has
 * reached its part of the table, or no reference can reach it). */
static inline frame_entry *frame_find(lp_merge *m, uint64_t frame)
{
	frame_entry *leaf = global_leaf(&m->frames, frame);
	return leaf ? &leaf[frame & LEAF_MASK] : NULL;
}

/* frame_find, making the entry's part of the table if need be (NULL, with
 * the failure recorded, when out of memory). */
static frame_entry *frame_slot(lp_merge *m, uint64_t frame)
{
	if (frame >= VPN_LIMIT)
		return NULL;
	return global_slot(m, &m->frames, frame, sizeof(frame_entry), "the table of the page cache");
}

/* Whether an event's first field is the task it happens in. */
static bool names_task(enum lp_tag tag)
{
	switch (tag) {
	case LP_TAG_G:
	case LP_TAG_Q:
	case LP_TAG_C:
	case LP_TAG_V:
	case LP_TAG_COUNT:
		return false;
	default:
		return true;
	}
}

int lp_merge_event(lp_merge *m, const lp_event *ev, lp_event_route *route, lp_error *err)
{
	const uint64_t *f = ev->f;
	task *t = NULL;
	space *sp;
	uint64_t first, end;
	segment *seg;

	if (route)
		route->ntasks = 0;
	if (names_task(ev->tag)) {
		if (!(t = named_task(m, f[0])))
			return oom_fail(m, err);
		route_to(route, t);
	}

	switch (ev->tag) {
	case LP_TAG_F:
	case LP_TAG_T: {
		if (live_task(m, f[1]))
			return lp_fail(err, LP_EINPUT, "field child: task 0x%" PRIx64 " is alive", f[1]);
		bool fork = ev->tag == LP_TAG_F;
		if (!(sp = fork ? space_fork(m, t->space) : t->space))
			break;
		task *child = add_task(m, f[1], fork ? NULL : t, sp);
		if (child)
			route_to(route, child);
		else if (fork)
			space_free(m, sp);
		break;
	}
	case LP_TAG_E:
		if (!(sp = space_new(m)))
			break;
		if (!bind(m, sp, f[1])) {
			space_free(m, sp);
			break;
		}
		leave_space(m, t);
		t->space = sp;
		sp->ntasks = 1;
		break;
	case LP_TAG_S:
		bind(m, t->space, f[1]);
		m->current = t;
		break;
	case LP_TAG_X:
		end_task(m, t);
		break;
	case LP_TAG_M: {
		int rc = check_range("start", f[1], f[2], err);
		if (rc)
			return rc;
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
	case LP_TAG_U: {
		int rc = check_range("start", f[1], f[2], err);
		if (rc)
			return rc;
		page_range(f[1], f[2], &first, &end);
		remove_range(m, t->space, first, end);
		break;
	}
	case LP_TAG_B:
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
		int rc = event_mremap(m, t, ev, err);
		if (rc)
			return rc;
		break;
	}
	case LP_TAG_G:
		if (idmap_get(&m->segments, f[0]))
			return lp_fail(err, LP_EINPUT, "field shmid: segment 0x%" PRIx64 " already exists", f[0]);
		if (!(seg = try_alloc0(m, sizeof *seg, "a shared-memory segment")))
			break;
		if (!idmap_put(&m->segments, f[0], seg)) {
			g_free(seg);
			out_of_memory(m, "a shared-memory segment");
			break;
		}
		seg->instance = m->next_instance++;
		seg->npages = (f[1] >> LP_PAGE_SHIFT) + ((f[1] & 0xfff) != 0);
		break;
	case LP_TAG_H: {
		seg = idmap_get(&m->segments, f[1]);
		if (!seg)
			return lp_fail(err, LP_EINPUT, "field shmid: no segment 0x%" PRIx64, f[1]);
		region r = {.kind = REGION_SEGMENT, .backing = seg->instance};
		r.start = f[2] >> LP_PAGE_SHIFT;
		if (seg->npages > ADDRESS_PAGES - r.start)
			return lp_fail(err, LP_EINPUT,
				       "field start: segment 0x%" PRIx64 " of 0x%" PRIx64
				       " pages at 0x%" PRIx64 " ends past 0xffffffffffffffff",
				       f[1], seg->npages, f[2]);
		r.end = r.start + seg->npages;
		map_region(m, t->space, &r);
		break;
	}
	case LP_TAG_D: {
		bool any = false;
		sp = t->space;
		sp->regions = detach(m, sp, sp->regions, f[1] >> LP_PAGE_SHIFT, &any);
		if (!any)
			warn(m, "D: no segment attached at 0x%" PRIx64 " in task 0x%" PRIx64, f[1], f[0]);
		break;
	}
	case LP_TAG_Q:
		if (!(seg = idmap_remove(&m->segments, f[0])))
			return lp_fail(err, LP_EINPUT, "field shmid: no segment 0x%" PRIx64, f[0]);
		g_free(seg);
		break;
	case LP_TAG_C: {
		frame_entry *fe = frame_slot(m, f[0]);
		if (fe)
			*fe = (frame_entry){.file = f[1], .index = f[2], .used = true};
		break;
	}
	case LP_TAG_V: {
		frame_entry *fe = frame_find(m, f[0]);
		if (fe)
			fe->used = false;
		break;
	}
	default:
		return lp_fail(err, LP_EINPUT, "unknown event tag");
	}
	if (m->oom)
		return oom_fail(m, err);
	m->stats.events[ev->tag]++;
	return 0;
}

/* The first reference to vpn in sp, or a write through a cow translation
 * (laplace-formats(5) 3.4, rules 1 and 2). Once out of memory, it does
 * nothing and returns 0: lp_merge_refs fails at the end of the batch. */
static uint64_t translate_slow(lp_merge *m, space *sp, uint64_t vpn, bool write)
{
	xlat *slot;
	if (m->oom || !(slot = slot_for(m, sp, vpn)))
		return 0;
	uint64_t c;
	if (*slot) {
		c = xlat_canon(*slot);
		if (m->page_refs[c] == NOT_PRIVATE || m->page_refs[c] > 1) {
			uint64_t copy = new_canon(m, LP_PAGE_PRIVATE_ANON);
			if (m->oom)
				return 0;
			release(m, *slot);
			c = copy;
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
	if (m->oom)
		return 0;
	*slot = xlat_make(c, cow);
	return c;
}

/* The two blocks of a space that a translation loop holds, the one of the
 * last reference first: each one's mid level and base, the number of its
 * leaf 0 (block << MID_BITS). Two, because a 64-bit process's references
 * jump between two blocks above all, one with its text and heap (near
 * 0x555555554000), one with its libraries, maps and stack (near
 * 0x7ffff7...): one held block missed on a quarter of the references of
 * a `gen --wide` capture, each miss a walk of the directories (9% of the
 * merge core's instructions). */
typedef struct held_blocks {
	void *const *mid, *const *other_mid;
	uint64_t base, other_base;
} held_blocks;

/* The mid level of sp's block `block`: radix_mid, out of line, as the
 * rare path it is in the translation loop (inline, the loop had a worse
 * allocation of its registers). */
static G_NO_INLINE void *const *space_mid(const space *sp, uint64_t block)
{
	return radix_mid(&sp->xlats, block);
}

/* Hold vpn's block first: the other held one if it is that, else a walk
 * of sp's directories. */
static inline void hold_block(const space *sp, held_blocks *held, uint64_t vpn)
{
	void *const *mid = held->other_mid;
	uint64_t base = held->other_base;
	held->other_mid = held->mid;
	held->other_base = held->base;
	if ((vpn >> LEAF_BITS) - base >= MID_SIZE) {
		base = (vpn >> BLOCK_SHIFT) << MID_BITS;
		mid = space_mid(sp, vpn >> BLOCK_SHIFT);
	}
	held->mid = mid;
	held->base = base;
}

/* vpn's canonical page in sp. The caller keeps *held in registers: vpn's
 * leaf number less the first block's base is the leaf's index there when
 * below MID_SIZE, else the block is held first (the slow path may make
 * it). */
static inline uint64_t translate(lp_merge *m, space *sp, held_blocks *held, uint64_t vpn, xlat write)
{
	uint64_t k = (vpn >> LEAF_BITS) - held->base;
	if (G_UNLIKELY(k >= MID_SIZE)) {
		hold_block(sp, held, vpn);
		k = (vpn >> LEAF_BITS) - held->base;
	}
	const xlat *leaf = held->mid[k];
	if (leaf) {
		xlat x = leaf[vpn & LEAF_MASK];
		/* No translation, or a write through a cow one, in one test:
		 * whether a reference writes follows no pattern, and a branch
		 * on it was nearly every mispredicted branch of the merge. */
		if (!((x == 0) | (x & write)))
			return xlat_canon(x);
	}
	uint64_t c = translate_slow(m, sp, vpn, write != 0);
	if (held->mid == empty_mid) /* the slow path may have made the block */
		held->mid = space_mid(sp, vpn >> BLOCK_SHIFT);
	return c;
}

/* What space_of_vas gives when out of memory: a space without translations
 * or regions, which translate_slow does not touch once m->oom is set. */
static space no_space;

/* The space bound to vas, or a new orphan space bound to it. */
static space *space_of_vas(lp_merge *m, uint64_t vas)
{
	space *sp = idmap_get(&m->bindings, vas);
	if (!sp) {
		if (!(sp = space_new(m)))
			return &no_space;
		if (!bind(m, sp, vas)) {
			space_free(m, sp);
			return &no_space;
		}
		m->stats.orphan_spaces++;
	}
	return sp;
}

static uint64_t kernel_page(lp_merge *m, uint64_t address)
{
	uint64_t frame = (address - m->cfg.page_offset) >> LP_PAGE_SHIFT;
	frame_entry *fe = frame_find(m, frame);
	if (fe && fe->used) {
		if (!fe->canon1) {
			uint64_t c = file_page(m, fe->file, fe->index);
			if (m->oom)
				return 0;
			fe->canon1 = c + 1;
		}
		return fe->canon1 - 1;
	}
	uint64_t vpn = address >> LP_PAGE_SHIFT;
	uint64_t *leaf = global_leaf(&m->kernel_pages, vpn);
	uint64_t *k = leaf ? &leaf[vpn & LEAF_MASK]
			   : global_slot(m, &m->kernel_pages, vpn, sizeof *k, "the table of kernel pages");
	if (!k)
		return 0;
	if (!*k) {
		uint64_t c = new_canon(m, LP_PAGE_KERNEL);
		if (m->oom)
			return 0;
		*k = c + 1;
	}
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

/* The leaf of r's page in sp for a prefetch, found by a walk of sp's
 * directories, or NULL if r is not a user reference of vas (a kernel
 * address has no leaf in any space; another space's is not looked up).
 * Out of line, and vas passed as the current reference's: either way
 * inline in the loop, or the loop's own vas, cost the loop without
 * prefetching (the 32-bit basic merge) an instruction a reference, from
 * the allocation of its registers. */
static G_NO_INLINE const xlat *leaf_ahead(const space *sp, uint64_t vas, uint64_t page_offset, const lp_ref *r)
{
	if (r->vas != vas || (!(r->type & 0x20) && r->address >= page_offset))
		return NULL;
	uint64_t leaf_number = r->address >> (LP_PAGE_SHIFT + LEAF_BITS);
	return radix_mid(&sp->xlats, leaf_number >> MID_BITS)[leaf_number & MID_MASK];
}

/* 1 for the writes, w and W, by type character: one load, where the test
 * of the character took four instructions. */
static const uint8_t write_of_type[256] = {['w'] = 1, ['W'] = 1};

/* User references counted in by_type (by type character). */
static inline uint64_t user_refs(const uint64_t *by_type)
{
	return by_type['r'] + by_type['w'] + by_type['i'];
}

/* The translation loop; inline and called with a constant prefetch, so
 * that a small footprint runs a loop without the prefetching's cost.
 * The space of the last vas looked up, the block last looked up in it and
 * whether it is a mismatch (laplace-formats(5) 3.2) are kept in locals: no
 * event comes between two references of a batch, so no binding changes. */
static G_ALWAYS_INLINE inline void translate_refs(lp_merge *m, const lp_ref *refs, size_t n, uint64_t *canon,
				  const bool prefetch)
{
	const space *current = m->current ? m->current->space : NULL;
	const uint64_t page_offset = m->cfg.page_offset;
	uint64_t by_type[128] = {0}; /* reference counts by type character */
	/* Every 64-bit value is a vas: any but the first reference's will do
	 * for none yet. */
	uint64_t vas = n ? ~refs[0].vas : 0;
	space *sp = &no_space;
	held_blocks held = {empty_mid, empty_mid, NO_MID_BASE, NO_MID_BASE};
	/* Mismatches are counted a run of references to one vas at a time,
	 * from the counts by type: whether the run's user references are
	 * mismatches, and how many user references came before it. */
	bool mismatch = false;
	uint64_t run_from = 0;
	for (size_t i = 0; i < n; i++) {
		const lp_ref *r = &refs[i];
		/* Where the translation of the reference PREFETCH_AHEAD on would
		 * lie, if that part of its block has translations: in the last
		 * block (a 32-bit space's only one), else by a walk of the
		 * space's directories, since a 64-bit footprint's references
		 * land in blocks all over its 47 bits, and without the walk
		 * their translations were not fetched ahead at all (bench/wide:
		 * merge 2.00 s, 1.53 s with it). Only a hint: for a kernel
		 * address in a 32-bit space's block, or another space (at a
		 * change of vas), a useless but harmless one. */
		if (prefetch && i + PREFETCH_AHEAD < n) {
			uint64_t ahead = refs[i + PREFETCH_AHEAD].address >> LP_PAGE_SHIFT;
			uint64_t k = (ahead >> LEAF_BITS) - held.base;
			const xlat *leaf = k < MID_SIZE ? held.mid[k]
							: leaf_ahead(sp, r->vas, page_offset, &refs[i + PREFETCH_AHEAD]);
			if (leaf)
				__builtin_prefetch(&leaf[ahead & LEAF_MASK]);
		}
		xlat write = write_of_type[(unsigned char)r->type];
		if (!(r->type & 0x20) && r->address >= page_offset) {
			canon[i] = kernel_page(m, r->address);
		} else {
			if (r->vas != vas) {
				uint64_t users = user_refs(by_type);
				if (mismatch)
					m->stats.mismatches += users - run_from;
				run_from = users;
				vas = r->vas;
				sp = space_of_vas(m, r->vas);
				held = (held_blocks){empty_mid, empty_mid, NO_MID_BASE, NO_MID_BASE};
				mismatch = current && sp != current;
			}
			canon[i] = translate(m, sp, &held, r->address >> LP_PAGE_SHIFT, write);
		}
		by_type[r->type & 0x7f]++;
	}
	if (mismatch)
		m->stats.mismatches += user_refs(by_type) - run_from;
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
	return m->oom ? oom_fail(m, err) : 0;
}
