/* The fixed-space policies lru, fifo and clock (policies.md §2) through
 * their table of operations (policy.h): fault and victim sequences derived
 * by hand, Belady's FIFO anomaly, clock's two load bits, victims that pass
 * over held pages (laplace-formats(5) §9.4.4), and access() checked
 * against its composition of hit(), victim() and arrive(). */
#include <criterion/criterion.h>
#include <glib.h>
#include <string.h>

#include "analysis/policy.h"

static const lp_policy_ops *ops_of(const char *name)
{
	const lp_policy_info *info = lp_policy_find(name);
	cr_assert(info && info->ops, "%s", name);
	return info->ops;
}

static void *create(const char *name, uint64_t frames, lp_pageno pages, unsigned load_bit)
{
	lp_policy_params params = {.frames = frames, .pages = pages, .option = {load_bit}};
	return ops_of(name)->create(&params);
}

/* Feed pages through access(): "h" for a hit, "F-" for a fill, "Fv" for
 * a fault that evicted v, space separated. */
static char *run(const char *name, uint64_t frames, unsigned load_bit, const char *refs)
{
	const lp_policy_ops *ops = ops_of(name);
	void *s = create(name, frames, 10, load_bit);
	GString *out = g_string_new(NULL);
	uint64_t t = 0;
	for (const char *c = refs; *c; c++, t++) {
		lp_pageno victim = 0;
		if (out->len)
			g_string_append_c(out, ' ');
		if (ops->access(s, (lp_pageno)(*c - '0'), t, &victim))
			g_string_append(out, "h");
		else if (victim == LP_NO_PAGE)
			g_string_append(out, "F-");
		else
			g_string_append_printf(out, "F%u", victim);
	}
	ops->destroy(s);
	return g_string_free(out, FALSE);
}

static unsigned faults(const char *name, uint64_t frames, const char *refs)
{
	char *out = run(name, frames, 0, refs);
	unsigned n = 0;
	for (const char *c = out; *c; c++)
		n += *c == 'F';
	g_free(out);
	return n;
}

#define EXPECT(name, frames, load_bit, refs, want)                                          \
	do {                                                                                \
		char *got_ = run(name, frames, load_bit, refs);                             \
		cr_expect_str_eq(got_, want, "%s K=%u bit=%u %s", name, (unsigned)(frames), \
				 (unsigned)(load_bit), refs);                               \
		g_free(got_);                                                               \
	} while (0)

Test(policy_basic, lru_by_hand)
{
	/* 1 2 3 fill; 1 hit (order 2 3 1); 4 evicts 2; 2 evicts 3 (order 1 4 2);
	 * 1 hit (4 2 1); 5 evicts 4 */
	EXPECT("lru", 3, 0, "12314215", "F- F- F- h F2 F3 h F4");
}

Test(policy_basic, fifo_by_hand)
{
	/* hits change nothing: 4 evicts 1 although 1 was just referenced */
	EXPECT("fifo", 3, 0, "12314215", "F- F- F- h F1 h F2 F3");
}

Test(policy_basic, belady_anomaly)
{
	/* Belady, Nelson and Shedler's string: FIFO faults more with more
	 * frames; LRU, a stack algorithm, cannot. */
	const char *refs = "123412512345";
	cr_expect_eq(faults("fifo", 3, refs), 9);
	cr_expect_eq(faults("fifo", 4, refs), 10);
	EXPECT("fifo", 3, 0, refs, "F- F- F- F1 F2 F3 F4 h h F1 F2 h");
	EXPECT("fifo", 4, 0, refs, "F- F- F- F- h h F1 F2 F3 F4 F5 F1");
	cr_expect_eq(faults("lru", 3, refs), 10);
	cr_expect_eq(faults("lru", 4, refs), 8);
}

Test(policy_basic, clock_load_bit_0)
{
	/* 1 2 3 fill, bits 0, hand at 1; 1 hit sets its bit; 4: 1's bit is
	 * cleared, 2 is the victim, 4 takes its place behind the hand (at 3);
	 * 2 evicts 3; 5 evicts 1 (its bit cleared by the first scan) */
	EXPECT("clock", 3, 0, "1231425", "F- F- F- h F2 F3 F1");
}

Test(policy_basic, clock_load_bit_1)
{
	/* bits 1 on load: 4's scan clears 1, 2, 3 and comes back to 1; 2 is
	 * then a hit (bit set again); 5 clears 2 and takes 3 */
	EXPECT("clock", 3, 1, "1231425", "F- F- F- h F1 h F3");
}

Test(policy_basic, one_frame)
{
	EXPECT("lru", 1, 0, "1121", "F- h F1 F2");
	EXPECT("fifo", 1, 0, "1121", "F- h F1 F2");
	EXPECT("clock", 1, 0, "1121", "F- h F1 F2");
	EXPECT("clock", 1, 1, "1121", "F- h F1 F2");
}

Test(policy_basic, frames_beyond_pages)
{
	/* K far above the pages: never full, no victim, nothing sized by K */
	EXPECT("lru", UINT32_MAX, 0, "0123456789", "F- F- F- F- F- F- F- F- F- F-");
	EXPECT("clock", UINT64_C(1) << 40, 0, "01230", "F- F- F- F- h");
}

/* Arrive pages 0 .. n-1 in order. */
static void *arrived(const char *name, lp_pageno n)
{
	void *s = create(name, n, n + 2, 0);
	for (lp_pageno p = 0; p < n; p++)
		ops_of(name)->arrive(s, p);
	return s;
}

Test(policy_basic, lru_victim_passes_held)
{
	const lp_policy_ops *ops = ops_of("lru");
	void *s = arrived("lru", 3);
	ops->hit(s, 0); /* recency, least first: 1 2 0 */
	uint8_t held[5] = {0};
	held[1] = 1;
	cr_expect_eq(ops->victim(s, held), 2);
	held[1] = 0;
	held[0] = 1;
	cr_expect_eq(ops->victim(s, held), 1);
	cr_expect_eq(ops->victim(s, held), LP_NO_PAGE);
	cr_expect_eq(ops->victim(s, NULL), 0);
	cr_expect_eq(ops->victim(s, NULL), LP_NO_PAGE);
	ops->destroy(s);
}

Test(policy_basic, fifo_victim_passes_held)
{
	const lp_policy_ops *ops = ops_of("fifo");
	void *s = arrived("fifo", 3);
	ops->hit(s, 0);
	uint8_t held[5] = {1, 0, 0, 0, 0};
	cr_expect_eq(ops->victim(s, held), 1);
	/* the held page keeps its place: still the oldest once released */
	ops->arrive(s, 3);
	cr_expect_eq(ops->victim(s, NULL), 0);
	cr_expect_eq(ops->victim(s, NULL), 2);
	ops->destroy(s);
}

Test(policy_basic, clock_victim_passes_held_with_bit_unchanged)
{
	const lp_policy_ops *ops = ops_of("clock");
	void *s = arrived("clock", 2); /* circle 0 1, bits 0, hand at 0 */
	ops->hit(s, 0);                /* 0's bit set */
	uint8_t held[5] = {1, 0, 0, 0, 0};
	/* 0 held: passed over, bit kept; 1 is the victim; hand back at 0 */
	cr_expect_eq(ops->victim(s, held), 1);
	ops->arrive(s, 2); /* behind the hand: circle 0 2 */
	/* 0's bit, kept through the held pass, is cleared now: 2 goes */
	cr_expect_eq(ops->victim(s, NULL), 2);
	ops->arrive(s, 3); /* circle 0 3 */
	held[3] = 1;
	/* every page held: no victim, and the circle as it was */
	cr_expect_eq(ops->victim(s, held), LP_NO_PAGE);
	held[0] = 0;
	cr_expect_eq(ops->victim(s, held), 0);
	ops->destroy(s);
}

Test(policy_basic, clock_held_pass_moves_the_hand)
{
	/* circle 0 1 2, bit of 2 set; 0 held: passed over to the tail; 1 goes;
	 * 3 enters behind the hand: circle 2 0 3; then 2's bit is cleared and
	 * 2 goes behind 3: 0 (no longer held, bit 0) is the victim, then 3,
	 * then 2 */
	const lp_policy_ops *ops = ops_of("clock");
	void *s = arrived("clock", 3);
	ops->hit(s, 2);
	uint8_t held[5] = {1, 0, 0, 0, 0};
	cr_expect_eq(ops->victim(s, held), 1);
	ops->arrive(s, 3);
	cr_expect_eq(ops->victim(s, NULL), 0);
	cr_expect_eq(ops->victim(s, NULL), 3);
	cr_expect_eq(ops->victim(s, NULL), 2);
	cr_expect_eq(ops->victim(s, NULL), LP_NO_PAGE);
	ops->destroy(s);
}

/* access(p) is hit(p) when p is resident, else victim() when memory is
 * full, then arrive(p) (policy.h): both ways on the same random streams,
 * the second with a first guess of one page, its state growing. */
Test(policy_basic, access_is_the_composition)
{
	static const char *const names[] = {"lru", "fifo", "clock"};
	GRand *rng = g_rand_new_with_seed(36);
	for (size_t n = 0; n < G_N_ELEMENTS(names); n++)
		for (unsigned bit = 0; bit <= 1; bit++)
			for (uint64_t frames = 1; frames <= 8; frames++) {
				const lp_policy_ops *ops = ops_of(names[n]);
				lp_pageno pages = 12;
				void *a = create(names[n], frames, pages, bit);
				void *b = create(names[n], frames, 1, bit);
				uint8_t resident[12] = {0};
				uint64_t count = 0;
				for (uint64_t t = 0; t < 2000; t++) {
					lp_pageno p = (lp_pageno)g_rand_int_range(rng, 0, (gint32)pages);
					lp_pageno va = 0, vb = LP_NO_PAGE;
					bool hit = ops->access(a, p, t, &va);
					cr_assert_eq(hit, resident[p] == 1, "%s t=%lu", names[n],
						     (unsigned long)t);
					if (hit) {
						ops->hit(b, p);
						continue;
					}
					if (count == frames) {
						vb = ops->victim(b, NULL);
						cr_assert_neq(vb, LP_NO_PAGE);
						resident[vb] = 0;
						count--;
					}
					ops->arrive(b, p);
					resident[p] = 1;
					count++;
					cr_assert_eq(va, vb, "%s K=%lu t=%lu", names[n],
						     (unsigned long)frames, (unsigned long)t);
				}
				ops->destroy(a);
				ops->destroy(b);
			}
	g_rand_free(rng);
}
