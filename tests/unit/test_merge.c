/* The merge core fed directly, without readers: each test replays a few
 * events and references and checks the canonical numbers derived by hand
 * from laplace-formats(5), "MERGE SEMANTICS". */
#include <criterion/criterion.h>
#include <stdarg.h>

#include "core/merge.h"

static lp_merge *m;
static lp_error err;
static uint64_t now;

static void setup(void)
{
	m = lp_merge_new(&(lp_merge_config){.page_offset = LP_DEFAULT_PAGE_OFFSET});
	err = (lp_error){0};
	now = 0;
}

static void teardown(void)
{
	lp_merge_free(m);
}

TestSuite(merge, .init = setup, .fini = teardown);

/* Apply an event given as its tag and numeric fields; returns the status. */
static int event_route(lp_event_route *route, char tag, ...)
{
	lp_event ev = {.tag = lp_tag_from_char(tag), .timestamp = ++now, .line = "", .line_no = now};
	const lp_tag_info *info = &lp_tag_table[ev.tag];
	va_list ap;
	va_start(ap, tag);
	for (int i = 0; i < info->nfields; i++)
		ev.f[i] = va_arg(ap, uint64_t);
	va_end(ap);
	if (info->has_name)
		ev.name = "name";
	return lp_merge_event(m, &ev, route, &err);
}

#define EV(tag, ...) cr_assert_eq(event_route(NULL, tag, __VA_ARGS__), 0, "%s", err.msg)

static uint64_t ref(char type, uint64_t vas, uint64_t address)
{
	lp_ref r = {.timestamp = ++now, .vas = vas, .address = address, .length = 4, .type = type};
	uint64_t canon = ~0ull;
	cr_assert_eq(lp_merge_refs(m, &r, 1, &canon, &err), 0);
	return canon;
}

#define U64(x) ((uint64_t)(x))
#define PRIVATE_ANON_MAP 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */

Test(merge, cow_through_fork_copies_once_then_clears_the_mark)
{
	EV('M', U64(1), U64(0x1000), U64(0x1000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	EV('F', U64(1), U64(2));
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('r', 0xb, 0x1004), 0, "the child reads the parent's page");
	cr_assert_eq(ref('w', 0xb, 0x1008), 1, "two translations: the child's write copies");
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0, "the last holder keeps its page");
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->cow_copies, 1);
	cr_assert_eq(st->pages[LP_PAGE_PRIVATE_ANON], 2);
	cr_assert_eq(st->unmapped_pages, 0);
}

/* Counts of holders go down as holders go: an unmap and an exit of cow
 * holders leave the last one its page, while a page still held elsewhere
 * is copied on write. */
Test(merge, holders_leaving_by_unmap_and_exit_decide_the_copies)
{
	EV('M', U64(1), U64(0x1000), U64(0x3000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	cr_assert_eq(ref('w', 0xa, 0x2000), 1);
	EV('F', U64(1), U64(2));
	EV('F', U64(1), U64(3));
	EV('S', U64(2), U64(0xb));
	EV('U', U64(2), U64(0x1000), U64(0x1000));
	EV('X', U64(3));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0, "the other holders of page 0 are gone");
	cr_assert_eq(ref('w', 0xa, 0x2000), 2, "task 2 still holds page 1: a copy");
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('w', 0xb, 0x2000), 1, "task 2 is now page 1's last holder");
	cr_assert_eq(ref('r', 0xb, 0x1000), 3, "task 2 unmapped page 0: a new page");
	cr_assert_eq(lp_merge_stats(m)->cow_copies, 1);
}

/* The translation tables of dead spaces are reused: nothing of them may
 * show through in the spaces that get them. */
Test(merge, a_dead_space_leaves_nothing_behind)
{
	EV('M', U64(1), U64(0x1000), U64(0xf000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	cr_assert_eq(ref('w', 0xa, 0x5000), 1);
	EV('X', U64(1));
	EV('M', U64(2), U64(0x1000), U64(0xf000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('r', 0xb, 0x5000), 2);
	cr_assert_eq(ref('r', 0xb, 0x1000), 3);
	EV('E', U64(2), U64(0xc));
	EV('S', U64(2), U64(0xc));
	cr_assert_eq(ref('r', 0xc, 0x5000), 4, "exec: a new space, nothing mapped");
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 1);
}

Test(merge, private_file_write_numbers_only_the_copy)
{
	/* Pages 0 and 1 of task 1 are pages 5 and 6 of file f00, private. */
	EV('M', U64(1), U64(0), U64(0x2000), U64(5), U64(2), U64(1), U64(0xf00));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x0), 0, "a write through a fresh cow translation copies");
	cr_assert_eq(ref('r', 0xa, 0x1000), 1, "file page 6");
	EV('M', U64(2), U64(0x5000), U64(0x2000), U64(5), U64(1), U64(1), U64(0xf00));
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('r', 0xb, 0x5000), 2, "file page 5 was never referenced");
	cr_assert_eq(ref('r', 0xb, 0x6000), 1, "file page 6 again");
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->pages[LP_PAGE_FILE], 2);
	cr_assert_eq(st->pages[LP_PAGE_PRIVATE_ANON], 1);
	cr_assert_eq(st->cow_copies, 1);
}

Test(merge, mremap_moves_translations_and_drops_past_a_shrunken_end)
{
	EV('M', U64(1), U64(0x10000), U64(0x3000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x10000), 0);
	cr_assert_eq(ref('w', 0xa, 0x12000), 1);
	EV('K', U64(1), U64(0x10000), U64(0x3000), U64(0x20000), U64(0x1000));
	cr_assert_eq(ref('r', 0xa, 0x20000), 0, "page 0 moved");
	cr_assert_eq(ref('r', 0xa, 0x10000), 2, "the old range is gone: unmapped");
	cr_assert_eq(ref('r', 0xa, 0x21000), 3, "past the new end: unmapped");
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 2);
}

Test(merge, mremap_grown_tail_reaches_further_into_the_file)
{
	EV('M', U64(1), U64(0x10000), U64(0x1000), U64(7), U64(1), U64(1), U64(0xf1));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xa, 0x10000), 0, "file page 7");
	EV('K', U64(1), U64(0x10000), U64(0x1000), U64(0x30000), U64(0x2000));
	cr_assert_eq(ref('r', 0xa, 0x31000), 1, "file page 8");
	EV('M', U64(2), U64(0x8000), U64(0x2000), U64(7), U64(1), U64(1), U64(0xf1));
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('r', 0xb, 0x9000), 1, "file page 8 through another mapping");
	cr_assert_eq(ref('r', 0xb, 0x8000), 0, "file page 7 through another mapping");
}

Test(merge, detach_removes_every_piece_of_the_segment_at_its_start)
{
	EV('G', U64(7), U64(0x3000));
	EV('H', U64(1), U64(7), U64(0x40000));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xa, 0x42000), 0, "segment page 2");
	EV('U', U64(1), U64(0x40000), U64(0x1000));
	EV('D', U64(1), U64(0x40000));
	cr_assert_eq(ref('r', 0xa, 0x41000), 1, "the piece is gone: unmapped");
	cr_assert_eq(lp_merge_stats(m)->warnings, 0);
	EV('D', U64(1), U64(0x40000));
	cr_assert_eq(lp_merge_stats(m)->warnings, 1, "nothing attached: a warning");
}

Test(merge, a_reused_shmid_is_a_new_segment)
{
	EV('G', U64(7), U64(0x1000));
	EV('H', U64(1), U64(7), U64(0x50000));
	EV('Q', U64(7));
	EV('G', U64(7), U64(0x1000));
	EV('H', U64(2), U64(7), U64(0x50000));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xa, 0x50000), 0);
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('r', 0xb, 0x50000), 1);
	cr_assert_eq(lp_merge_stats(m)->pages[LP_PAGE_SEGMENT], 2);
}

Test(merge, page_cache_frames_and_kernel_pages)
{
	EV('C', U64(5), U64(0xf00), U64(3));
	cr_assert_eq(ref('R', 0, 0xc0005000), 0, "frame 5 holds file page 3");
	EV('M', U64(1), U64(0x1000), U64(0x1000), U64(3), U64(1), U64(1), U64(0xf00));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xa, 0x1000), 0, "the same file page through mmap");
	EV('V', U64(5));
	cr_assert_eq(ref('W', 0, 0xc0005000), 1, "kernel page c0005");
	cr_assert_eq(ref('R', 0xa, 0x1000), 0, "below page_offset: the user space");
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->pages[LP_PAGE_KERNEL], 1);
	cr_assert_eq(st->pages[LP_PAGE_FILE], 1);
	cr_assert_eq(st->orphan_spaces, 0);
}

Test(merge, unbound_vas_gets_an_orphan_space_and_counts_a_mismatch)
{
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xb, 0x1000), 0);
	cr_assert_eq(ref('r', 0xb, 0x1000), 0);
	cr_assert_eq(ref('r', 0xa, 0x1000), 1);
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->orphan_spaces, 1);
	cr_assert_eq(st->mismatches, 2);
	cr_assert_eq(st->unmapped_pages, 2);
}

Test(merge, a_new_binding_replaces_older_ones_on_either_side)
{
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	EV('S', U64(2), U64(0xa)); /* vas a now names task 2's space */
	cr_assert_eq(ref('w', 0xa, 0x1000), 1);
	EV('S', U64(1), U64(0xc)); /* task 1's space, rebound */
	cr_assert_eq(ref('w', 0xc, 0x1000), 0);
	cr_assert_eq(lp_merge_stats(m)->mismatches, 0);
}

Test(merge, exec_keeps_the_old_space_for_the_other_threads)
{
	EV('T', U64(1), U64(2));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	EV('E', U64(2), U64(0xb));
	lp_task_id who;
	cr_assert(lp_merge_current_task(m, &who));
	cr_assert_eq(who.tid, 1, "E does not change the current task");
	cr_assert_eq(ref('w', 0xa, 0x1000), 0, "task 1 keeps the old space");
	cr_assert_eq(ref('w', 0xb, 0x1000), 1, "the new space is empty");
}

Test(merge, exit_releases_translations_and_unbinds)
{
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	EV('X', U64(1));
	lp_task_id who;
	cr_assert_not(lp_merge_current_task(m, &who));
	cr_assert_eq(ref('w', 0xa, 0x1000), 1, "vas a is unbound: a new orphan space");
	cr_assert_eq(lp_merge_stats(m)->orphan_spaces, 1);
}

Test(merge, routes_name_the_tasks_of_each_event)
{
	lp_event_route route;
	cr_assert_eq(event_route(&route, 'T', U64(1), U64(2)), 0);
	cr_assert_eq(route.ntasks, 2);
	cr_assert_eq(route.task[0].pid, 1);
	cr_assert_eq(route.task[0].tid, 1);
	cr_assert_eq(route.task[1].pid, 1, "a thread joins its parent's process");
	cr_assert_eq(route.task[1].tid, 2);
	cr_assert_eq(event_route(&route, 'F', U64(2), U64(3)), 0);
	cr_assert_eq(route.task[0].pid, 1);
	cr_assert_eq(route.task[0].tid, 2);
	cr_assert_eq(route.task[1].pid, 3, "fork starts a process");
	cr_assert_eq(event_route(&route, 'G', U64(9), U64(0x1000)), 0);
	cr_assert_eq(route.ntasks, 0, "G goes to the kernel file");
	cr_assert_eq(event_route(&route, 'X', U64(2)), 0);
	cr_assert_eq(route.ntasks, 1);
	cr_assert_eq(route.task[0].pid, 1);
}

Test(merge, inconsistent_events_are_errors_naming_the_field)
{
	EV('T', U64(1), U64(2));
	cr_assert_eq(event_route(NULL, 'F', U64(1), U64(2)), LP_EINPUT);
	cr_assert_str_eq(err.msg, "field child: task 0x2 is alive");
	cr_assert_eq(event_route(NULL, 'H', U64(1), U64(8), U64(0)), LP_EINPUT);
	cr_assert_str_eq(err.msg, "field shmid: no segment 0x8");
	cr_assert_eq(event_route(NULL, 'Q', U64(8)), LP_EINPUT);
	cr_assert_str_eq(err.msg, "field shmid: no segment 0x8");
	EV('G', U64(8), U64(1));
	cr_assert_eq(event_route(NULL, 'G', U64(8), U64(1)), LP_EINPUT);
	cr_assert_str_eq(err.msg, "field shmid: segment 0x8 already exists");
	EV('B', U64(1), U64(0x1000), U64(0x3000));
	EV('B', U64(1), U64(0x3000), U64(0x4000));
	cr_assert_eq(event_route(NULL, 'K', U64(1), U64(0x2000), U64(0x2000), U64(0x9000), U64(0x2000)),
		     LP_EINPUT);
	cr_assert_str_eq(err.msg,
			 "field old_start: range 0x2000+0x2000 of task 0x1 is not inside one region");
	cr_assert_eq(event_route(NULL, 'K', U64(1), U64(0x1000), U64(0), U64(0x9000), U64(0x1000)),
		     LP_EINPUT);
	cr_assert_str_eq(err.msg, "field old_length: mremap of an empty range");
}

/* ---- many regions in one space (the treap of regions) ---- */

#define SHARED_FILE_MAP 0x1 /* MAP_SHARED of a file */
#define REGION_FILE 0xf1
#define REGION_PAGES 1000u
#define REGION_BASE 0x100u /* first page of task 1's mapping of the file */
#define PAGE(vpn) ((uint32_t)(vpn) << 12)

/* The canonical number of each page of file REGION_FILE, numbered first
 * through task 2's mapping of the whole file at page 0x10000, in an order
 * unlike any of task 1's. Task 1's pieces of its own mapping must then
 * reach exactly these numbers: a piece left by splits keeps its index
 * into the file. */
static uint64_t file_canon[REGION_PAGES];

static void number_the_file_through_task_2(void)
{
	EV('M', U64(2), U64(0x10000000), U64(REGION_PAGES << 12), U64(0), U64(SHARED_FILE_MAP), U64(1),
	   U64(REGION_FILE));
	EV('S', U64(2), U64(0xb));
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint32_t index = (k * 7919u) % REGION_PAGES;
		file_canon[index] = ref('r', 0xb, PAGE(0x10000 + index));
		cr_assert_eq(file_canon[index], k);
	}
	EV('S', U64(1), U64(0xa));
}

/* Task 1 maps the whole file as one region, then unmaps every odd page of
 * its first 600 in a jumping order (300 splits, each through the middle
 * of a piece), remaps pages 100-199 anonymous over 50 pieces and 50
 * holes, and moves pages 700-799 of the last piece elsewhere. */
Test(merge, many_splits_keep_every_piece_on_its_file_page)
{
	number_the_file_through_task_2();
	EV('M', U64(1), U64(PAGE(REGION_BASE)), U64(REGION_PAGES << 12), U64(0), U64(SHARED_FILE_MAP),
	   U64(1), U64(REGION_FILE));
	for (uint32_t k = 0; k < 300; k++) {
		uint32_t odd = 2 * ((k * 7u) % 300) + 1;
		EV('U', U64(1), U64(PAGE(REGION_BASE + odd)), U64(0x1000));
	}
	EV('M', U64(1), U64(PAGE(REGION_BASE + 100)), U64(100 << 12), U64(0), U64(PRIVATE_ANON_MAP),
	   U64(3), U64(0));
	EV('K', U64(1), U64(PAGE(REGION_BASE + 700)), U64(100 << 12), U64(PAGE(0x50000)),
	   U64(100 << 12));
	uint64_t fresh = REGION_PAGES; /* the next new number */
	for (uint32_t p = 0; p < REGION_PAGES; p++) {
		uint64_t c = ref('r', 0xa, PAGE(REGION_BASE + p));
		if (p >= 100 && p < 200)
			cr_assert_eq(c, fresh++, "page %u: anonymous now", p);
		else if (p < 600 && p % 2)
			cr_assert_eq(c, fresh++, "page %u: unmapped", p);
		else if (p >= 700 && p < 800)
			cr_assert_eq(c, fresh++, "page %u: moved away, unmapped", p);
		else
			cr_assert_eq(c, file_canon[p], "page %u: file page %u", p, p);
	}
	for (uint32_t p = 700; p < 800; p++)
		cr_assert_eq(ref('r', 0xa, PAGE(0x50000 + p - 700)), file_canon[p], "moved page %u", p);
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->unmapped_pages, 250 + 100, "250 odd pages outside 100-199, 100 moved away");
	cr_assert_eq(st->pages[LP_PAGE_PRIVATE_ANON], 100 + 250 + 100);
	cr_assert_eq(st->pages[LP_PAGE_FILE], REGION_PAGES);
}

/* Task 1 maps each page of the file as a region of its own, in a jumping
 * order, then replaces every third one with an anonymous page and unmaps
 * pages 500-899 in one U across 400 regions and their gaps. */
Test(merge, a_thousand_one_page_regions_added_replaced_and_removed)
{
	number_the_file_through_task_2();
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint32_t p = (k * 7919u) % REGION_PAGES;
		EV('M', U64(1), U64(PAGE(REGION_BASE + p)), U64(0x1000), U64(p), U64(SHARED_FILE_MAP), U64(1),
		   U64(REGION_FILE));
	}
	for (uint32_t p = 0; p < REGION_PAGES; p += 3)
		EV('M', U64(1), U64(PAGE(REGION_BASE + p)), U64(0x1000), U64(0), U64(PRIVATE_ANON_MAP),
		   U64(3), U64(0));
	EV('U', U64(1), U64(PAGE(REGION_BASE + 500)), U64(400 << 12));
	uint64_t fresh = REGION_PAGES, anon = 0, unmapped = 0;
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint32_t p = (k * 13u) % REGION_PAGES; /* yet another order */
		uint64_t c = ref('r', 0xa, PAGE(REGION_BASE + p));
		if (p >= 500 && p < 900) {
			cr_assert_eq(c, fresh++, "page %u: unmapped", p);
			unmapped++;
		} else if (p % 3 == 0) {
			cr_assert_eq(c, fresh++, "page %u: anonymous", p);
			anon++;
		} else {
			cr_assert_eq(c, file_canon[p], "page %u: file page %u", p, p);
		}
	}
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->unmapped_pages, unmapped);
	cr_assert_eq(st->pages[LP_PAGE_PRIVATE_ANON], anon + unmapped);
	cr_assert_eq(unmapped, 400);
}

/* A fork copies every region: the child reaches the same file pages
 * through each piece, and its own unmapping leaves the parent's pieces. */
Test(merge, fork_copies_many_regions)
{
	number_the_file_through_task_2();
	for (uint32_t k = 0; k < REGION_PAGES; k++) {
		uint32_t p = (k * 7919u) % REGION_PAGES;
		EV('M', U64(1), U64(PAGE(REGION_BASE + p)), U64(0x1000), U64(p), U64(SHARED_FILE_MAP), U64(1),
		   U64(REGION_FILE));
	}
	EV('F', U64(1), U64(3));
	EV('U', U64(3), U64(PAGE(REGION_BASE)), U64(REGION_PAGES << 11)); /* the first half */
	EV('S', U64(3), U64(0xc));
	for (uint32_t p = REGION_PAGES / 2; p < REGION_PAGES; p++)
		cr_assert_eq(ref('r', 0xc, PAGE(REGION_BASE + p)), file_canon[p], "child page %u", p);
	cr_assert_eq(ref('r', 0xc, PAGE(REGION_BASE)), REGION_PAGES, "the child's page 0 is unmapped");
	EV('S', U64(1), U64(0xa));
	for (uint32_t p = 0; p < REGION_PAGES; p++)
		cr_assert_eq(ref('r', 0xa, PAGE(REGION_BASE + p)), file_canon[p], "parent page %u", p);
}

/* A batch of references in one call, as the pipeline gives them (the core
 * keeps the last space and block between references of a batch). */
typedef struct batch_ref {
	char type;
	uint64_t vas, address;
} batch_ref;

static void refs(const batch_ref *in, size_t n, uint64_t *canon)
{
	lp_ref *r = g_new(lp_ref, n);
	for (size_t i = 0; i < n; i++)
		r[i] = (lp_ref){.timestamp = ++now, .vas = in[i].vas, .address = in[i].address, .length = 4,
				.type = in[i].type};
	cr_assert_eq(lp_merge_refs(m, r, n, canon, &err), 0, "%s", err.msg);
	g_free(r);
}

#define NREFS(a) (sizeof(a) / sizeof((a)[0]))

Test(merge, mismatches_are_the_user_references_of_other_spaces_in_a_batch)
{
	EV('S', U64(1), U64(0xa));
	static const batch_ref in[] = {
		{'r', 0xa, 0x1000}, {'r', 0xb, 0x1000}, {'R', 0xb, 0x2000}, {'w', 0xb, 0x3000},
		{'W', 0, 0xc0001000}, {'i', 0xa, 0x1000}, {'r', 0xb, 0x1000},
	};
	uint64_t canon[NREFS(in)];
	refs(in, NREFS(in), canon);
	static const uint64_t want[] = {0, 1, 2, 3, 4, 0, 1};
	for (size_t i = 0; i < NREFS(in); i++)
		cr_assert_eq(canon[i], want[i], "reference %zu", i);
	/* r, w and the last r to vas b; not its kernel reference R. */
	cr_assert_eq(lp_merge_stats(m)->mismatches, 3);
	cr_assert_eq(ref('w', 0xb, 0x3000), 3);
	cr_assert_eq(lp_merge_stats(m)->mismatches, 4, "and in the next batch");
}

/* 64-bit address spaces (laplace-formats(5) 10): vpns of up to 52 bits,
 * sparse over the user space and the direct map at ffff888000000000. Each
 * pair of addresses or vas ids below differs only above bit 32 (bit 20 of
 * the vpn), where a table indexed by the low bits would confuse them. */
#define DIRECT_MAP UINT64_C(0xffff888000000000)
#define VAS_HIGH UINT64_C(0x100000000a)

static void setup64(void)
{
	m = lp_merge_new(&(lp_merge_config){.page_offset = DIRECT_MAP});
	err = (lp_error){0};
	now = 0;
}

TestSuite(merge64, .init = setup64, .fini = teardown);

Test(merge64, vas_ids_differing_only_in_high_bits_name_other_spaces)
{
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	cr_assert_eq(ref('w', VAS_HIGH, 0x1000), 1, "bit 36: another orphan space");
	cr_assert_eq(ref('w', UINT64_C(0x800000000000000a), 0x1000), 2, "bit 63");
	cr_assert_eq(ref('w', UINT64_MAX, 0x1000), 3, "every bit: a vas like any other");
	cr_assert_eq(ref('r', 0xa, 0x1000), 0);
	cr_assert_eq(ref('r', VAS_HIGH, 0x1000), 1);
	cr_assert_eq(ref('r', UINT64_C(0x800000000000000a), 0x1000), 2);
	cr_assert_eq(ref('r', UINT64_MAX, 0x1000), 3);
	cr_assert_eq(lp_merge_stats(m)->orphan_spaces, 4);
	/* The same in one batch, whose first vas is all ones. */
	static const batch_ref in[] = {
		{'r', UINT64_MAX, 0x1000}, {'r', 0xa, 0x1000}, {'r', VAS_HIGH, 0x1000},
		{'r', UINT64_C(0x800000000000000a), 0x1000}, {'r', 0xa, 0x1000},
	};
	uint64_t canon[NREFS(in)];
	refs(in, NREFS(in), canon);
	static const uint64_t want[] = {3, 0, 1, 2, 0};
	for (size_t i = 0; i < NREFS(in); i++)
		cr_assert_eq(canon[i], want[i], "reference %zu", i);
	cr_assert_eq(lp_merge_stats(m)->orphan_spaces, 4);
}

Test(merge64, pages_differing_above_bit_20_of_the_vpn_are_apart)
{
	EV('S', U64(1), U64(VAS_HIGH));
	cr_assert_eq(ref('w', VAS_HIGH, 0x555555554000), 0);
	cr_assert_eq(ref('w', VAS_HIGH, 0x555455554000), 1, "bit 44");
	cr_assert_eq(ref('w', VAS_HIGH, 0x100001000), 2, "bit 32");
	cr_assert_eq(ref('w', VAS_HIGH, 0x1000), 3);
	cr_assert_eq(ref('r', VAS_HIGH, 0x555555554000), 0);
	cr_assert_eq(ref('r', VAS_HIGH, 0x555455554000), 1);
	cr_assert_eq(ref('r', VAS_HIGH, 0x100001000), 2);
	cr_assert_eq(ref('r', VAS_HIGH, 0x1000), 3);
	/* In one batch, jumping between the four blocks and a new page in
	 * a fifth, at bit 46. */
	static const batch_ref in[] = {
		{'r', VAS_HIGH, 0x1000}, {'r', VAS_HIGH, 0x100001000}, {'w', VAS_HIGH, 0x555555554000},
		{'r', VAS_HIGH, 0x400000001000}, {'r', VAS_HIGH, 0x555455554000}, {'r', VAS_HIGH, 0x1000},
		{'r', VAS_HIGH, 0x400000001000},
	};
	uint64_t canon[NREFS(in)];
	refs(in, NREFS(in), canon);
	static const uint64_t want[] = {3, 2, 0, 4, 1, 3, 4};
	for (size_t i = 0; i < NREFS(in); i++)
		cr_assert_eq(canon[i], want[i], "reference %zu", i);
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 5);
	cr_assert_eq(lp_merge_stats(m)->mismatches, 0);
}

Test(merge64, regions_differing_only_above_bit_32_are_apart)
{
	/* Shared file maps at 0x10000001000 (file f00 from page 5) and
	 * 0x1000 (file f01 from page 9): the same low 32 bits. */
	EV('M', U64(1), U64(0x10000001000), U64(0x2000), U64(5), U64(1), U64(3), U64(0xf00));
	EV('M', U64(1), U64(0x1000), U64(0x2000), U64(9), U64(1), U64(3), U64(0xf01));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xa, 0x10000002000), 0, "file f00 page 6");
	cr_assert_eq(ref('r', 0xa, 0x2000), 1, "file f01 page 10");
	EV('C', U64(0x42), U64(0xf00), U64(6));
	cr_assert_eq(ref('R', 0xa, DIRECT_MAP + 0x42000), 0, "f00 page 6 through the page cache");
	EV('U', U64(1), U64(0x1000), U64(0x2000));
	cr_assert_eq(ref('r', 0xa, 0x10000002000), 0, "the munmap of the low one left it");
	cr_assert_eq(ref('r', 0xa, 0x2000), 2, "unmapped");
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->pages[LP_PAGE_FILE], 2);
	cr_assert_eq(st->unmapped_pages, 1);
}

/* A space's first pages in its first 4 GiB, then ever higher up to the
 * kernel's half below the direct map: what it had stays where it was. */
Test(merge64, pages_first_low_then_ever_higher)
{
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	cr_assert_eq(ref('w', 0xa, 0x555555554000), 1);
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	cr_assert_eq(ref('W', 0xa, 0xffff800000001000), 2, "below page_offset: the space's");
	cr_assert_eq(ref('w', 0xa, 0x1000), 0);
	cr_assert_eq(ref('w', 0xa, 0x555555554000), 1);
	cr_assert_eq(ref('R', 0xa, 0xffff800000001000), 2);
	EV('F', U64(1), U64(2));
	EV('S', U64(2), U64(0xb));
	cr_assert_eq(ref('r', 0xb, 0xffff800000001000), 2, "forked with the whole tree");
	cr_assert_eq(ref('r', 0xb, 0x1000), 0);
	EV('U', U64(2), U64(0), U64(0xffff888000000000));
	cr_assert_eq(ref('r', 0xb, 0xffff800000001000), 3, "an munmap of all below the direct map");
	cr_assert_eq(ref('r', 0xb, 0x1000), 4);
	cr_assert_eq(ref('r', 0xa, 0x1000), 0, "the parent keeps its own");
}

Test(merge64, a_stack_ending_at_7ffffffff000)
{
	EV('M', U64(1), U64(0x7ffffffde000), U64(0x21000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x7fffffffeff8), 0, "the stack's last page");
	cr_assert_eq(ref('w', 0xa, 0x7ffffffde000), 1, "its first");
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 0);
	cr_assert_eq(ref('r', 0xa, 0x7ffffffff000), 2, "past the end: unmapped");
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 1);
	EV('U', U64(1), U64(0x7fffffffe000), U64(0x1000));
	cr_assert_eq(ref('r', 0xa, 0x7fffffffe000), 3, "unmapped: a new page");
	cr_assert_eq(ref('r', 0xa, 0x7ffffffde000), 1, "the rest stays");
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 2);
}

Test(merge64, fork_mremap_and_munmap_across_blocks)
{
	EV('M', U64(1), U64(0x555555554000), U64(0x2000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('M', U64(1), U64(0x7f0000000000), U64(0x2000), U64(0), U64(PRIVATE_ANON_MAP), U64(3), U64(0));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x555555554000), 0);
	cr_assert_eq(ref('w', 0xa, 0x7f0000001000), 1);
	EV('F', U64(1), U64(2));
	EV('S', U64(2), U64(VAS_HIGH));
	cr_assert_eq(ref('r', VAS_HIGH, 0x555555554000), 0, "shared with the parent");
	cr_assert_eq(ref('w', VAS_HIGH, 0x7f0000001000), 2, "the child's cow copy");
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('w', 0xa, 0x7f0000001000), 1, "the parent's is its own again");
	/* The parent's second page moves to a block far off. */
	EV('K', U64(1), U64(0x7f0000000000), U64(0x2000), U64(0x5555556f0000), U64(0x2000));
	cr_assert_eq(ref('r', 0xa, 0x5555556f1000), 1, "moved with its identity");
	cr_assert_eq(ref('r', 0xa, 0x7f0000001000), 3, "the old range is gone");
	cr_assert_eq(ref('w', 0xa, 0x800000000000), 4, "past the 47-bit user space");
	/* An munmap of the whole user space reaches every block in it. */
	EV('U', U64(1), U64(0), U64(0x800000000000));
	cr_assert_eq(ref('r', 0xa, 0x555555554000), 5);
	cr_assert_eq(ref('r', 0xa, 0x5555556f1000), 6);
	cr_assert_eq(ref('r', 0xa, 0x7f0000001000), 7);
	cr_assert_eq(ref('r', 0xa, 0x800000000000), 4, "past the munmap's range: kept");
	EV('S', U64(2), U64(VAS_HIGH));
	cr_assert_eq(ref('r', VAS_HIGH, 0x555555554000), 0, "the child keeps its pages");
	cr_assert_eq(ref('r', VAS_HIGH, 0x7f0000001000), 2);
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->cow_copies, 1);
	cr_assert_eq(st->mismatches, 0);
}

Test(merge64, page_cache_through_the_direct_map_and_kernel_pages)
{
	EV('C', U64(0x12345), U64(0xf00), U64(7));
	EV('C', U64(0x112345), U64(0xf00), U64(8));
	cr_assert_eq(ref('R', 0, 0xffff888012345000), 0, "frame 12345: file page 7");
	cr_assert_eq(ref('R', 0, 0xffff888112345000), 1, "frame 112345: file page 8");
	cr_assert_eq(ref('R', 0, 0xffff988012345000), 2, "frame 100012345: no file page, a kernel page");
	EV('M', U64(1), U64(0x7f1234560000), U64(0x1000), U64(7), U64(1), U64(1), U64(0xf00));
	EV('S', U64(1), U64(0xa));
	cr_assert_eq(ref('r', 0xa, 0x7f1234560000), 0, "the same file page through mmap");
	cr_assert_eq(ref('I', 0xa, 0xffffffff81000000), 3, "kernel text");
	cr_assert_eq(ref('I', 0xa, 0xfffffffe81000000), 4, "a kernel page apart at bit 32");
	cr_assert_eq(ref('R', 0xa, 0xffff887ffffff000), 5, "below page_offset: the user space");
	cr_assert_eq(ref('R', 0xa, 0xffffffff81000000), 3);
	EV('V', U64(0x112345));
	cr_assert_eq(ref('W', 0xa, 0xffff888112345000), 6, "dropped: kernel page ffff888112345");
	/* Frames no reference can reach: harmless. */
	EV('C', U64(0x10000000000000), U64(0xf00), U64(9));
	EV('V', U64(0xffffffffffffffff));
	cr_assert_eq(ref('R', 0xa, 0xffff888012345000), 0);
	const lp_stats *st = lp_merge_stats(m);
	cr_assert_eq(st->pages[LP_PAGE_KERNEL], 4);
	cr_assert_eq(st->pages[LP_PAGE_FILE], 2);
	cr_assert_eq(st->unmapped_pages, 1);
	cr_assert_eq(st->orphan_spaces, 0);
}

/* Past 2^17 pages numbered, the core prefetches translations a batch
 * ahead: two blocks far apart, read back in a batch that alternates. */
#define MANY_PAGES ((1u << 17) + 1000)

Test(merge64, a_large_footprint_over_two_blocks)
{
	EV('S', U64(1), U64(0xa));
	batch_ref *in = g_new(batch_ref, 2 * MANY_PAGES);
	uint64_t *canon = g_new(uint64_t, 2 * MANY_PAGES);
	for (uint32_t p = 0; p < MANY_PAGES; p++) {
		in[p] = (batch_ref){'w', 0xa, 0x555555554000 + (uint64_t)p * 0x1000};
		in[MANY_PAGES + p] = (batch_ref){'w', 0xa, 0x7ffff7000000 - (uint64_t)p * 0x1000};
	}
	refs(in, 2 * MANY_PAGES, canon);
	for (uint32_t i = 0; i < 2 * MANY_PAGES; i++)
		cr_assert_eq(canon[i], i, "first touch %u", i);
	for (uint32_t p = 0; p < MANY_PAGES; p++) {
		in[2 * p] = (batch_ref){'r', 0xa, 0x7ffff7000000 - (uint64_t)p * 0x1000};
		in[2 * p + 1] = (batch_ref){'r', 0xa, 0x555555554000 + (uint64_t)p * 0x1000};
	}
	refs(in, 2 * MANY_PAGES, canon);
	for (uint32_t p = 0; p < MANY_PAGES; p++) {
		cr_assert_eq(canon[2 * p], MANY_PAGES + p, "stack page %u", p);
		cr_assert_eq(canon[2 * p + 1], p, "heap page %u", p);
	}
	g_free(in);
	g_free(canon);
	cr_assert_eq(lp_merge_stats(m)->unmapped_pages, 2 * MANY_PAGES);
}
