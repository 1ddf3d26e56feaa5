/* clock (policies.md §2): the resident pages in a circle, each with a
 * reference bit, and a hand. The circle is kept as a FIFO ring whose head
 * is the page under the hand: passing a page over moves it from the head
 * to the tail, the victim leaves the head, and a page that enters takes the
 * victim's place, which is the tail (just behind the hand). Pages that
 * fill frames in order go to the tail as well, so the hand starts at the
 * first. A hit sets the bit; a page enters with clock_load_bit. */
#include "analysis/policy.h"
#include "core/numbers.h"

#include <glib.h>
#include <string.h>

enum { LOAD_BIT }; /* its option: the bit of a page loaded */

typedef struct clock_state {
	lp_pageno *ring;  /* resident pages, ring[head] under the hand */
	uint64_t cap;     /* the ring's room, at most frames */
	uint64_t head, count;
	uint8_t *in;      /* per page: 1 when resident */
	uint8_t *bit;     /* per page: the reference bit */
	size_t pages;     /* room of in and bit */
	uint64_t frames;
	uint8_t load_bit;
} clock_state;

static void *clock_create(const lp_policy_params *params)
{
	clock_state *s = g_new(clock_state, 1);
	/* No more pages than there are can be resident. */
	s->cap = MAX(MIN(params->frames, (uint64_t)params->pages), 1);
	s->ring = g_new(lp_pageno, s->cap);
	s->head = s->count = 0;
	s->pages = (size_t)params->pages + 1;
	s->in = g_new0(uint8_t, s->pages);
	s->bit = g_new0(uint8_t, s->pages);
	s->frames = params->frames;
	s->load_bit = params->option[LOAD_BIT] ? 1 : 0;
	return s;
}

static void clock_destroy(void *state)
{
	clock_state *s = state;
	g_free(s->ring);
	g_free(s->in);
	g_free(s->bit);
	g_free(s);
}

/* Room for page and one more resident page (policy.h: arrive may take
 * pages beyond params.pages). The ring grows laid out from its head. */
static void clock_reserve(clock_state *s, lp_pageno page)
{
	if (page >= s->pages) {
		size_t n = MAX(s->pages * 2, (size_t)page + 1);
		s->in = g_renew(uint8_t, s->in, n);
		s->bit = g_renew(uint8_t, s->bit, n);
		memset(s->in + s->pages, 0, n - s->pages);
		memset(s->bit + s->pages, 0, n - s->pages);
		s->pages = n;
	}
	if (s->count < s->cap)
		return;
	uint64_t cap = MIN(s->cap * 2, s->frames);
	lp_pageno *ring = g_new(lp_pageno, cap);
	for (uint64_t i = 0; i < s->count; i++)
		ring[i] = s->ring[(s->head + i) % s->cap];
	g_free(s->ring);
	s->ring = ring;
	s->cap = cap;
	s->head = 0;
}

static void clock_arrive(void *state, lp_pageno page)
{
	clock_state *s = state;
	clock_reserve(s, page);
	uint64_t tail = s->head + s->count;
	s->ring[tail >= s->cap ? tail - s->cap : tail] = page;
	s->count++;
	s->in[page] = 1;
	s->bit[page] = s->load_bit;
}

static void clock_hit(void *state, lp_pageno page)
{
	clock_state *s = state;
	s->bit[page] = 1;
}

/* The scan from the hand: a held page is passed over with its bit as it
 * is, a set bit is cleared and passed over, the first unheld clear bit is
 * the victim. Passing over moves the head to the tail, which in a full
 * ring is only the hand's step. Once a whole turn has passed nothing but
 * held pages, every page is held. */
static lp_pageno clock_victim(void *state, const uint8_t *held)
{
	clock_state *s = state;
	uint64_t held_run = 0;
	while (s->count > 0 && held_run < s->count) {
		lp_pageno p = s->ring[s->head];
		if (held && held[p]) {
			held_run++;
		} else if (s->bit[p]) {
			s->bit[p] = 0;
			held_run = 0;
		} else {
			s->head = s->head + 1 == s->cap ? 0 : s->head + 1;
			s->count--;
			s->in[p] = 0;
			return p;
		}
		/* Head to tail: with count < cap the ring has a gap. */
		uint64_t tail = s->head + s->count;
		s->ring[tail >= s->cap ? tail - s->cap : tail] = p;
		s->head = s->head + 1 == s->cap ? 0 : s->head + 1;
	}
	return LP_NO_PAGE;
}

static bool clock_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	clock_state *s = state;
	(void)t;
	if (page < s->pages && s->in[page]) {
		clock_hit(s, page);
		return true;
	}
	*victim = s->count >= s->frames ? clock_victim(s, NULL) : LP_NO_PAGE;
	clock_arrive(s, page);
	return false;
}

static const lp_policy_ops clock_ops = {
	.create = clock_create,
	.destroy = clock_destroy,
	.access = clock_access,
	.arrive = clock_arrive,
	.hit = clock_hit,
	.victim = clock_victim,
};

static const lp_policy_option clock_options[] = {
	{"clock-load-bit", "B", "a page's reference bit when loaded, 0 or 1", "0"},
};

static int clock_parse(lp_policy_settings *s, size_t i, const char *text, lp_error *err)
{
	if (!lp_parse_decimal(text, 0, 1, &s->value[i]))
		return lp_fail(err, LP_EUSAGE, "--clock-load-bit must be 0 or 1, not '%s'", text);
	return 0;
}

static void clock_resolve(const lp_policy_settings *s, uint64_t k, lp_policy_params *params)
{
	(void)k;
	params->option[LOAD_BIT] = s->set[LOAD_BIT] ? s->value[LOAD_BIT] : 0;
}

const lp_policy_info lp_policy_clock = {
	.name = "clock",
	.space = LP_SPACE_FIXED,
	.rule = "second chance: a reference bit, a hand that clears it",
	.ops = &clock_ops,
	.options = clock_options,
	.noptions = G_N_ELEMENTS(clock_options),
	.parse = clock_parse,
	.resolve = clock_resolve,
	.miniature = true,
	.colour = "#895ad8",
	.dash = "12 3 3 3",
};
