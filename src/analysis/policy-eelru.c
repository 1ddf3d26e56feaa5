/* eelru: early-eviction LRU (Smaragdakis, Kaplan and Wilson, SIGMETRICS
 * 1999) with one pair of eviction points, e and l, and counters that never
 * age (policies.md §2). Only three sums of the counters h[1..l] are ever
 * read (up to e, K and l), so they are kept instead of h. The recency
 * list of every page, and which of them are resident, are recency.h's
 * trees: a victim is found by position in O(log D). */
#include <glib.h>
#include <inttypes.h>

#include "analysis/recency.h"

enum { EARLY, LATE }; /* e, l */

typedef struct eelru {
	uint64_t frames, early, late;
	uint64_t upto_early, upto_frames, upto_late; /* sums of h[d] */
	uint64_t resident;
	lp_recency list; /* its second tree: the resident pages */
} eelru;

static void *eelru_create(const lp_policy_params *params)
{
	eelru *r = g_new0(eelru, 1);
	r->frames = params->frames;
	r->early = params->option[EARLY];
	r->late = params->option[LATE];
	lp_recency_init(&r->list, params->pages, true);
	return r;
}

static void eelru_destroy(void *state)
{
	eelru *r = state;
	lp_recency_clear(&r->list);
	g_free(r);
}

/* Early eviction pays, in integers: (l - e) * up to e + (K - e) * (e, l]
 * > (l - e) * up to K, that is (K - e) * (e, l] > (l - e) * (e, K]. With
 * e >= K (K = 1 and the default e = 1) both sides are 0: LRU. */
static bool early(const eelru *r)
{
	if (r->early >= r->frames)
		return false;
	unsigned __int128 gain = (unsigned __int128)(r->frames - r->early) *
				 (r->upto_late - r->upto_early);
	unsigned __int128 loss = (unsigned __int128)(r->late - r->early) *
				 (r->upto_frames - r->upto_early);
	return gain > loss;
}

static bool eelru_access(void *state, lp_pageno page, uint64_t t, lp_pageno *victim)
{
	(void)t;
	eelru *r = state;
	uint64_t d = lp_recency_position(&r->list, page);
	if (d) {
		r->upto_early += d <= r->early;
		r->upto_frames += d <= r->frames;
		r->upto_late += d <= r->late;
	}
	bool hit = d && r->list.in_sub[page];
	if (!hit) {
		*victim = LP_NO_PAGE;
		if (r->resident == r->frames) {
			/* With e < K resident pages, one is past position e. */
			*victim = early(r) ? lp_recency_sub_after(&r->list, r->early)
					   : lp_recency_sub_last(&r->list);
			lp_recency_sub_set(&r->list, *victim, false);
		} else {
			r->resident++;
		}
	}
	lp_recency_touch(&r->list, page);
	if (!hit)
		lp_recency_sub_set(&r->list, page, true);
	return hit;
}

static const lp_policy_ops eelru_ops = {
	.create = eelru_create,
	.destroy = eelru_destroy,
	.access = eelru_access,
};

static const lp_policy_option eelru_options[] = {
	{"eelru-early", "E", "the early eviction point e, 1 <= e < K", "max(1,floor(K/2))"},
	{"eelru-late", "L", "the late eviction point l > K", "2K"},
};

static int eelru_parse(lp_policy_settings *s, size_t i, const char *text, lp_error *err)
{
	return lp_policy_parse_count(&eelru_options[i], text, 1, &s->value[i], err);
}

static int eelru_check(const lp_policy_settings *s, uint64_t from, uint64_t to, lp_error *err)
{
	if (s->set[EARLY] && s->value[EARLY] >= from)
		return lp_fail(err, LP_EUSAGE, "--eelru-early %" PRIu64 " must be below the frames "
			       "K (%" PRIu64 ")", s->value[EARLY], from);
	if (s->set[LATE] && s->value[LATE] <= to)
		return lp_fail(err, LP_EUSAGE, "--eelru-late %" PRIu64 " must be above the frames "
			       "K (%" PRIu64 ")", s->value[LATE], MAX(from, s->value[LATE]));
	return 0;
}

static void eelru_resolve(const lp_policy_settings *s, uint64_t k, lp_policy_params *params)
{
	params->option[EARLY] = s->set[EARLY] ? s->value[EARLY] : MAX(1, k / 2);
	params->option[LATE] = s->set[LATE] ? MAX(s->value[LATE], k + 1) : 2 * k;
}

const lp_policy_info lp_policy_eelru = {
	.name = "eelru",
	.space = LP_SPACE_FIXED,
	.rule = "early-eviction LRU, one pair of eviction points",
	.ops = &eelru_ops,
	.options = eelru_options,
	.noptions = G_N_ELEMENTS(eelru_options),
	.parse = eelru_parse,
	.check = eelru_check,
	.resolve = eelru_resolve,
	.colour = "#ae298c",
	.dash = "14 3 3 3 3 3",
};
