/* laplace sim's computation (sim.h). */
#include "analysis/sim.h"

#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "analysis/optdist.h"
#include "analysis/recency.h"
#include "analysis/shards.h"
#include "analysis/stackdist.h"
#include "core/prevuse.h"
#include "core/numbers.h"
#include "io/workpool.h"

/* ---- size lists ---- */

/* Whether s is decimal digits only: a number, though maybe past 64 bits. */
static bool digits_only(const char *s)
{
	return s[0] && !s[strspn(s, "0123456789")];
}

int lp_sim_list_parse(const char *option, const char *text, lp_sim_list *list, lp_error *err)
{
	*list = (lp_sim_list){0};
	/* Not g_strsplit: its strstr measures the rest of the text at each
	 * item under AddressSanitizer, a time quadratic in a long list. */
	char **items = g_strsplit_set(text, ",", -1);
	size_t count = g_strv_length(items);
	list->items = g_new(lp_sim_item, count ? count : 1);
	int rc = count ? 0 : lp_fail(err, LP_EUSAGE, "%s: no size given", option);
	char q[LP_QUOTE_SIZE];
	for (size_t k = 0; k < count && !rc; k++) {
		const char *it = items[k];
		lp_sim_item *item = &list->items[list->n++];
		const char *dash = strchr(it, '-');
		*item = (lp_sim_item){.kind = LP_SIM_RANGE};
		if (!strcmp(it, "pow2")) {
			item->kind = LP_SIM_POW2;
		} else if (!strcmp(it, "all")) {
			item->kind = LP_SIM_ALL;
		} else if (!*it) {
			rc = lp_fail(err, LP_EUSAGE, "%s: an empty item in '%s'", option,
				     lp_quote(q, text, strlen(text)));
		} else if (dash) {
			char *from = g_strndup(it, (size_t)(dash - it));
			bool ok = lp_parse_decimal(from, 0, UINT64_MAX, &item->from) &&
				  lp_parse_decimal(dash + 1, 0, UINT64_MAX, &item->to);
			bool huge = !ok && digits_only(from) && digits_only(dash + 1);
			g_free(from);
			if (huge)
				rc = lp_fail(err, LP_EUSAGE, "%s: '%s' is out of range (sizes at most %"
					     G_GUINT64_FORMAT ")", option, it, UINT64_MAX);
			else if (!ok)
				rc = lp_fail(err, LP_EUSAGE, "%s: '%s' is not N, A-B, pow2 or all",
					     option, lp_quote(q, it, strlen(it)));
			else if (!item->from || !item->to)
				rc = lp_fail(err, LP_EUSAGE, "%s: a size must be at least 1, not 0 "
					     "(in '%s')", option, it);
			else if (item->from > item->to)
				rc = lp_fail(err, LP_EUSAGE, "%s: '%s' runs backwards", option, it);
		} else if (digits_only(it) && !lp_parse_decimal(it, 0, UINT64_MAX, &item->from)) {
			rc = lp_fail(err, LP_EUSAGE, "%s: '%s' is out of range (sizes at most %"
				     G_GUINT64_FORMAT ")", option, it, UINT64_MAX);
		} else if (!lp_parse_decimal(it, 0, UINT64_MAX, &item->from)) {
			rc = lp_fail(err, LP_EUSAGE, "%s: '%s' is not N, A-B, pow2 or all", option,
				     lp_quote(q, it, strlen(it)));
		} else if (!item->from) {
			rc = lp_fail(err, LP_EUSAGE, "%s: a size must be at least 1, not 0", option);
		} else {
			item->to = item->from;
		}
	}
	uint64_t named = 0;
	for (size_t k = 0; k < list->n && !rc; k++)
		if (list->items[k].kind == LP_SIM_RANGE &&
		    (named += MIN(list->items[k].to - list->items[k].from, LP_SIM_SIZES_MAX) + 1) >
			    LP_SIM_SIZES_MAX)
			rc = lp_fail(err, LP_EUSAGE, "%s: more than %" G_GUINT64_FORMAT " sizes named "
				     "in '%s'", option, LP_SIM_SIZES_MAX, lp_quote(q, text, strlen(text)));
	g_strfreev(items);
	if (rc)
		lp_sim_list_clear(list);
	return rc;
}

void lp_sim_list_clear(lp_sim_list *list)
{
	g_free(list->items);
	*list = (lp_sim_list){0};
}

static gint compare_ranges(gconstpointer a, gconstpointer b)
{
	const lp_sim_range *x = a, *y = b;
	return x->from < y->from ? -1 : x->from > y->from;
}

lp_sim_range *lp_sim_list_ranges(const lp_sim_list *list, uint64_t top, size_t *n)
{
	GArray *ranges = g_array_new(FALSE, FALSE, sizeof(lp_sim_range));
	for (size_t k = 0; k < list->n; k++) {
		const lp_sim_item *it = &list->items[k];
		lp_sim_range r = {it->from, it->to};
		switch (it->kind) {
		case LP_SIM_POW2:
			for (r.from = 1; r.from < top; r.from *= 2) {
				r.to = r.from;
				g_array_append_val(ranges, r);
			}
			r.from = r.to = top;
			if (top) /* D = 0: an empty stream's pow2 is no size */
				g_array_append_val(ranges, r);
			break;
		case LP_SIM_ALL:
			r.from = 1;
			r.to = top;
			if (top)
				g_array_append_val(ranges, r);
			break;
		case LP_SIM_RANGE:
			g_array_append_val(ranges, r);
			break;
		}
	}
	g_array_sort(ranges, compare_ranges);
	size_t kept = 0;
	lp_sim_range *v = (lp_sim_range *)(void *)ranges->data;
	for (size_t k = 0; k < ranges->len; k++)
		if (kept && v[k].from <= v[kept - 1].to + 1 && v[kept - 1].to != UINT64_MAX)
			v[kept - 1].to = MAX(v[kept - 1].to, v[k].to);
		else if (!kept || v[kept - 1].to != UINT64_MAX)
			v[kept++] = v[k];
	*n = kept;
	return (lp_sim_range *)(void *)g_array_free(ranges, FALSE);
}

uint64_t lp_sim_range_count(const lp_sim_range *ranges, size_t m)
{
	uint64_t count = 0;
	for (size_t k = 0; k < m; k++)
		count += ranges[k].to - ranges[k].from + 1;
	return count;
}

uint64_t *lp_sim_list_sizes(const lp_sim_list *list, uint64_t top, size_t *n)
{
	size_t m;
	lp_sim_range *ranges = lp_sim_list_ranges(list, top, &m);
	uint64_t *sizes = lp_sim_sizes_upto(ranges, m, UINT64_MAX, n);
	g_free(ranges);
	return sizes;
}

uint64_t *lp_sim_sizes_upto(const lp_sim_range *ranges, size_t m, uint64_t cap, size_t *n)
{
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	for (size_t k = 0; k < m && ranges[k].from <= cap; k++)
		for (uint64_t s = ranges[k].from;; s++) {
			g_array_append_val(sizes, s);
			if (s == ranges[k].to || s == cap)
				break;
		}
	if (m && ranges[m - 1].to > cap && (!sizes->len ||
					    g_array_index(sizes, uint64_t, sizes->len - 1) != cap))
		g_array_append_val(sizes, cap);
	*n = sizes->len;
	return (uint64_t *)(void *)g_array_free(sizes, FALSE);
}

void lp_sim_size_walk_init(lp_sim_size_walk *w, const lp_sim_range *ranges, size_t m,
			   uint64_t cap)
{
	*w = (lp_sim_size_walk){.ranges = ranges, .m = m, .cap = cap};
	if (m)
		w->next = ranges[0].from;
}

bool lp_sim_size_walk_next(lp_sim_size_walk *w, uint64_t *size, size_t *index)
{
	if (w->range == w->m)
		return false;
	uint64_t s = w->next;
	/* Each size up to cap has the next row, and the first past cap
	 * cap's, which serves every size past it. */
	if (w->started && w->last < w->cap)
		w->index++;
	w->started = true;
	w->last = s;
	*size = s;
	*index = w->index;
	if (s == w->ranges[w->range].to) {
		if (++w->range < w->m)
			w->next = w->ranges[w->range].from;
	} else {
		w->next = s + 1;
	}
	return true;
}

void lp_sim_params(const lp_sim_options *o, const lp_policy_info *policy, uint64_t frames,
		   const lp_trace *t, const uint64_t *next_use, lp_policy_params *p)
{
	const lp_policy_settings *s =
		o && o->settings ? &o->settings[lp_policy_index(policy)] : NULL;
	lp_policy_params_at(policy, s, frames, t->pages, next_use, p);
}

/* ---- lru: stack distances are recency positions ---- */

uint64_t *lp_sim_lru_distances(const lp_trace *t, const lp_curve_tick *tick)
{
	if (t->flags & LP_TRACE_LRU_ONLY) { /* counted while the stream was read */
		lp_curve_ticked(tick, t->n);
		return g_memdup2(t->curve_hist, ((size_t)t->pages + 1) * sizeof *t->curve_hist);
	}
	uint64_t *hist = g_new0(uint64_t, (size_t)t->pages + 1);
	lp_stackdist s;
	lp_stackdist_init(&s, t->pages);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;) {
		lp_stackdist_count(&s, b.page, b.len, hist);
		if (!lp_curve_ticked(tick, b.len))
			break;
	}
	lp_trace_iter_clear(&it);
	lp_stackdist_clear(&s);
	hist[0] = 0; /* first references: no distance */
	return hist;
}

/* ---- opt: the critical stack algorithm (optdist.h) ---- */

uint64_t *lp_sim_opt_distances(const lp_trace *t, const lp_curve_tick *tick)
{
	if (t->flags & LP_TRACE_OPT_ONLY) { /* counted while the stream was read */
		lp_curve_ticked(tick, t->n);
		return g_memdup2(t->curve_hist, ((size_t)t->pages + 1) * sizeof *t->curve_hist);
	}
	uint64_t *hist = g_new0(uint64_t, (size_t)t->pages + 1);
	lp_optdist o;
	lp_optdist_init(&o, t->pages);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;) {
		lp_optdist_count(&o, b.page, b.len, hist);
		if (!lp_curve_ticked(tick, b.len))
			break;
	}
	lp_trace_iter_clear(&it);
	lp_optdist_clear(&o);
	hist[0] = 0; /* first references: no distance */
	return hist;
}

void lp_sim_stack_faults(const uint64_t *hist, lp_pageno pages, const uint64_t *sizes, size_t m,
			 uint64_t *faults)
{
	/* Downwards from the largest size: deeper references accumulate. */
	uint64_t deeper = 0, d = pages;
	for (size_t k = m; k-- > 0;) {
		for (; d > sizes[k]; d--)
			deeper += hist[d];
		faults[k] = pages + deeper;
	}
}

bool lp_sim_space_fits(const lp_trace *t)
{
	return (lp_u128)t->n * ((lp_u128)t->pages + 1) <= UINT64_MAX;
}

int lp_sim_check_space(const lp_trace *t, const char *name, lp_error *err)
{
	if (lp_sim_space_fits(t))
		return 0;
	return lp_fail(err, LP_EINPUT,
		       "%s: %" PRIu64 " references of %" PRIu64 " pages: a space_time could pass "
		       "2^64 - 1, the largest count laplace sim writes",
		       name, t->n, (uint64_t)t->pages);
}

int lp_sim_check_curves(const lp_trace *t, const lp_policy_info *const *policies, size_t n,
			const char *name, lp_error *err)
{
	for (size_t k = 0; k < n; k++) {
		const lp_policy_info *p = policies[k];
		if (p->curve && p->curve_pages && t->pages > p->curve_pages)
			return lp_policy_refuse_pages(p, name, t->pages, err);
	}
	return 0;
}

void lp_sim_fixed_space(const lp_trace *t, const uint64_t *sizes, size_t m, uint64_t *space)
{
	/* Σ_t min(K, c_t) = Σ_{k <= K} #{t : c_t >= k} = Σ_{k <= min(K, D)}
	 * (n - the time of the k-th first reference), page k - 1's. */
	uint64_t sum = 0;
	lp_pageno seen = 0;
	for (size_t s = 0; s < m; s++) {
		for (lp_pageno goal = (lp_pageno)MIN(sizes[s], (uint64_t)t->pages); seen < goal; seen++)
			sum += t->n - t->first[seen];
		space[s] = sum;
	}
}

/* ---- ws and vmin: distance histograms ---- */

/* One walk of previous uses (prevuse.h): the largest backward distance,
 * then the largest gap from a reference to the next one to its page, or
 * to the end (at least 1). */
void lp_sim_window_bounds(const lp_trace *t, uint64_t *most, uint64_t *cap)
{
	lp_prev_use_walk w;
	lp_prev_use_walk_init(&w, t->pages);
	uint64_t far = 0;
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;)
		for (size_t k = 0; k < b.len; k++) {
			uint64_t d = lp_prev_use_step(&w, b.page[k], b.at + k);
			far = MAX(far, d);
		}
	lp_trace_iter_clear(&it);
	*most = far;
	for (lp_pageno p = 0; p < t->pages; p++)
		far = MAX(far, t->n - w.last[p]);
	*cap = MAX(far, 1);
	lp_prev_use_walk_clear(&w);
}

uint64_t lp_sim_max_backward(const lp_trace *t)
{
	uint64_t most, cap;
	lp_sim_window_bounds(t, &most, &cap);
	return most;
}

/* A page is in W(t, tau) from each reference s for min(f_s, tau, n - s)
 * references, so Σ_t |W(t, tau)| = Σ_s min(g_s, tau), g_s being f_s, or
 * n - s after a page's last reference. The finite forward distances are
 * the finite backward ones, so one pass serves the faults and every
 * window row's space_time (lp_window_sums). Only the windows asked
 * matter: each distance is counted (and summed) in the bucket of the
 * first window at least as large, so memory is O(windows), not O(largest
 * window). */

/* The first k with taus[k] >= v, or m. */
static size_t bucket(const uint64_t *taus, size_t m, uint64_t v)
{
	size_t lo = 0, hi = m;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (taus[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void lp_sim_windows(const lp_trace *t, const uint64_t *taus, size_t m, uint64_t *faults,
		    const lp_policy_info *const *rows, uint64_t *const *space, size_t nrows,
		    const lp_curve_tick *tick)
{
	if (!m)
		return;
	/* [k]: distances in (taus[k - 1], taus[k]]; [m]: past the last. */
	uint64_t *d_count = g_new0(uint64_t, m + 1), *d_sum = g_new0(uint64_t, m + 1);
	uint64_t *g_count = g_new0(uint64_t, m + 1), *g_sum = g_new0(uint64_t, m + 1);
	lp_prev_use_walk w;
	lp_prev_use_walk_init(&w, t->pages);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;) {
		for (size_t j = 0; j < b.len; j++) {
			uint64_t d = lp_prev_use_step(&w, b.page[j], b.at + j);
			if (d) {
				size_t k = bucket(taus, m, d);
				d_count[k]++;
				d_sum[k] += d;
			}
		}
		if (!lp_curve_ticked(tick, b.len))
			break;
	}
	lp_trace_iter_clear(&it);
	uint64_t finite = t->n - t->pages;
	for (lp_pageno p = 0; p < t->pages; p++) {
		uint64_t g = t->n - w.last[p];
		size_t k = bucket(taus, m, g);
		g_count[k]++;
		g_sum[k] += g;
	}
	lp_prev_use_walk_clear(&w);
	/* Up to each tau: counts and sums of distances, finite and tails. */
	lp_window_sums sums = {.n = t->n, .pages = t->pages, .finite = finite};
	for (size_t k = 0; k < m; k++) {
		sums.tau = taus[k];
		sums.near += d_count[k];
		sums.near_sum += d_sum[k];
		sums.tails += g_count[k];
		sums.tail_sum += g_sum[k];
		faults[k] = t->pages + (finite - sums.near);
		for (size_t r = 0; r < nrows; r++)
			space[r][k] = rows[r]->window_space(&sums);
	}
	g_free(d_count);
	g_free(d_sum);
	g_free(g_count);
	g_free(g_sum);
}

/* ---- a run's progress ---- */

/* Jobs given to the pool and not yet taken, at most. */
#define SIM_IN_FLIGHT 1024u

typedef struct sim_run {
	const lp_trace *t;
	const lp_sim_options *o;
	const uint64_t *next_use; /* opt's, when it runs size by size */
	/* References read by every job so far, out of total; drawn under
	 * draw (tried, never waited for). */
	atomic_uint_fast64_t done;
	uint64_t total;
	GMutex draw;
	atomic_bool stopped;
} sim_run;

/* Whether the run is to stop (told by o->stop). */
static bool sim_stopped(sim_run *r)
{
	if (r->o->stop && g_atomic_int_get(r->o->stop))
		atomic_store(&r->stopped, true);
	return atomic_load(&r->stopped);
}

/* refs more references read: false when the run is to stop. */
static bool sim_tick(sim_run *r, uint64_t refs)
{
	if (!r)
		return true;
	uint64_t done = atomic_fetch_add(&r->done, refs) + refs;
	if (r->o->progress && g_mutex_trylock(&r->draw)) {
		lp_progress_info info = {
			.records = done,
			.fraction = r->total ? MIN((double)done / (double)r->total, 1.0) : -1,
		};
		r->o->progress(r->o->progress_ctx, &info);
		g_mutex_unlock(&r->draw);
	}
	return !sim_stopped(r);
}

/* ---- the other fixed-space policies, one size at a time ---- */

static uint64_t fixed_run(sim_run *r, const lp_trace *t, const lp_policy_info *policy,
			  const lp_policy_params *p, lp_sim_fault_fn fault_fn, void *ctx)
{
	const lp_policy_ops *ops = policy->ops;
	void *state = ops->create(p);
	uint64_t faults = 0;
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;) {
		const lp_pageno *page = b.page;
		uint64_t at = b.at;
		for (size_t k = 0; k < b.len; k++) {
			lp_pageno victim;
			if (!ops->access(state, page[k], at + k, &victim)) {
				faults++;
				if (fault_fn)
					fault_fn(ctx, at + k, page[k], victim);
			}
		}
		if (!sim_tick(r, b.len))
			break;
	}
	lp_trace_iter_clear(&it);
	ops->destroy(state);
	return faults;
}

uint64_t lp_sim_fixed(const lp_trace *t, const lp_policy_info *policy, const lp_policy_params *p,
		      lp_sim_fault_fn fault_fn, void *ctx)
{
	return fixed_run(NULL, t, policy, p, fault_fn, ctx);
}

/* ---- miniature simulation ---- */

bool lp_sim_miniature(const lp_policy_info *policy)
{
	return policy->miniature;
}

uint64_t lp_sim_mini_frames(uint64_t frames, double rate)
{
	if (rate >= 1)
		return frames;
	double k = nearbyint((double)frames * rate);
	return k < 1 ? 1 : (uint64_t)k;
}

/* The s-th smallest h over t's pages (s < D): a max-heap of the s
 * smallest so far. */
static uint64_t smallest_hash(const lp_trace *t, uint64_t s)
{
	uint64_t *heap = g_new(uint64_t, s);
	size_t n = 0;
	for (lp_pageno p = 0; p < t->pages; p++) {
		uint64_t h = lp_shards_hash(t->canonical[p]);
		size_t i;
		if (n < s) {
			for (i = n++; i > 0 && heap[(i - 1) / 2] < h; i = (i - 1) / 2)
				heap[i] = heap[(i - 1) / 2];
		} else if (h < heap[0]) {
			for (i = 0;;) {
				size_t c = 2 * i + 1;
				if (c >= n)
					break;
				if (c + 1 < n && heap[c + 1] > heap[c])
					c++;
				if (heap[c] <= h)
					break;
				heap[i] = heap[c];
				i = c;
			}
		} else {
			continue;
		}
		heap[i] = h;
	}
	uint64_t top = heap[0];
	g_free(heap);
	return top;
}

int lp_sim_sample(const lp_trace *t, double rate, uint64_t pages, lp_trace *sample, double *r,
		  lp_error *err)
{
	/* A page is sampled iff all, or h < limit. */
	bool all;
	uint64_t limit = 0;
	if (pages) {
		all = t->pages <= pages;
		if (!all)
			limit = smallest_hash(t, pages);
		*r = all ? 1 : ldexp((double)limit, -64);
	} else {
		*r = rate;
		/* h < R * 2^64 iff h < ceil(R * 2^64), exactly. */
		double bound = ceil(ldexp(rate, 64));
		all = rate >= 1 || bound >= 0x1p64;
		if (!all)
			limit = (uint64_t)bound;
	}
	bool *keep = g_new(bool, t->pages ? t->pages : 1);
	for (lp_pageno p = 0; p < t->pages; p++)
		keep[p] = all || lp_shards_hash(t->canonical[p]) < limit;
	lp_trace_init(sample, 0);
	int rc = 0;
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; !rc && (b = lp_trace_iter_next(&it)).len;)
		for (size_t k = 0; k < b.len && !rc; k++)
			if (keep[b.page[k]])
				rc = lp_trace_add(sample, 'r', t->canonical[b.page[k]], err);
	lp_trace_iter_clear(&it);
	g_free(keep);
	lp_trace_done(sample);
	/* Estimates are at most the sampled references scaled. */
	if (!rc && sample->n && (double)sample->n / *r >= 0x1p64)
		rc = lp_fail(err, LP_EINPUT, "the %" G_GUINT64_FORMAT " sampled references scaled by "
			     "1/R (R = %g) pass 2^64: sample more pages", sample->n, *r);
	if (rc)
		lp_trace_clear(sample);
	return rc;
}

/* The estimate of faults' faults of a miniature memory: scaled by 1/R,
 * rounded (below 2^64: lp_sim_sample checked the largest). */
static uint64_t mini_scale(uint64_t faults, double rate)
{
	return faults ? (uint64_t)nearbyint((double)faults / rate) : 0;
}

uint64_t lp_sim_fixed_cap(const lp_trace *t, const lp_policy_info *policy,
			  const lp_sim_options *o)
{
	uint64_t cap = MAX(t->pages, 1);
	if (!o->sample || !lp_sim_miniature(policy))
		return cap;
	/* The smallest K whose K' holds every sampled page. */
	uint64_t pages = o->sample->pages, k = 1;
	if (pages > 1) {
		double guess = ceil((double)pages / o->sample_rate);
		k = guess >= 0x1p63 ? UINT64_C(1) << 63 : MAX((uint64_t)guess, 1);
		while (k > 1 && lp_sim_mini_frames(k - 1, o->sample_rate) >= pages)
			k--;
		while (lp_sim_mini_frames(k, o->sample_rate) < pages && k < UINT64_MAX)
			k++;
	}
	return MAX(cap, k);
}

/* ---- a run: its jobs in a work pool ---- */

typedef struct sim_job {
	lp_sim_task *task;
	size_t size; /* the size of a per-size job; SIZE_MAX: the whole task */
	/* A window job: the variable-space tasks of the same sizes, task
	 * first, whose curves are its one pass (lp_sim_windows). */
	lp_sim_task **windows;
	size_t nwindows;
} sim_job;

static bool curve_tick(void *ctx, uint64_t refs)
{
	return sim_tick(ctx, refs);
}

/* The variable-space tasks of job's window pass: the task's rows and
 * where their space_time goes. */
static void run_windows(sim_run *r, const sim_job *j, const lp_curve_tick *tick)
{
	const lp_policy_info **rows = g_new(const lp_policy_info *, j->nwindows);
	uint64_t **space = g_new(uint64_t *, j->nwindows);
	for (size_t k = 0; k < j->nwindows; k++) {
		rows[k] = j->windows[k]->policy;
		space[k] = j->windows[k]->space_time;
	}
	lp_sim_task *task = j->task;
	lp_sim_windows(r->t, task->sizes, task->nsizes, task->faults, rows, space, j->nwindows,
		       tick);
	for (size_t k = 1; k < j->nwindows; k++)
		memcpy(j->windows[k]->faults, task->faults, task->nsizes * sizeof *task->faults);
	g_free(rows);
	g_free(space);
}

/* A miniature simulation's estimate of task's faults at its size s. */
static uint64_t mini_at(sim_run *r, const lp_sim_task *task, size_t s)
{
	const lp_trace *sample = r->o->sample;
	double rate = r->o->sample_rate;
	if (!sample->n)
		return 0;
	uint64_t frames = task->sizes[s];
	uint64_t k = lp_sim_mini_frames(frames, rate);
	lp_policy_params p;
	lp_sim_params(r->o, task->policy, k, sample, NULL, &p);
	if (task->policy->mini_scale)
		task->policy->mini_scale(r->o->settings ? &r->o->settings[lp_policy_index(task->policy)]
							: NULL,
					 frames, rate, &p);
	return mini_scale(fixed_run(r, sample, task->policy, &p, NULL, NULL), rate);
}

static int run_job(void *ctx, void *job, lp_error *err)
{
	(void)err;
	sim_run *r = ctx;
	sim_job *j = job;
	lp_sim_task *task = j->task;
	if (!sim_tick(r, 0)) /* stopped: the jobs not begun are dropped */
		return 0;
	lp_curve_tick tick = {curve_tick, r};
	if (j->size != SIZE_MAX && r->o->sample && lp_sim_miniature(task->policy)) {
		task->faults[j->size] = mini_at(r, task, j->size);
	} else if (j->size != SIZE_MAX) {
		lp_policy_params p;
		lp_sim_params(r->o, task->policy, task->sizes[j->size], r->t, r->next_use, &p);
		task->faults[j->size] = fixed_run(r, r->t, task->policy, &p, NULL, NULL);
	} else if (j->windows) {
		run_windows(r, j, &tick);
	} else {
		lp_policy_curve c = {.t = r->t, .sizes = task->sizes, .nsizes = task->nsizes,
				     .faults = task->faults, .tick = &tick};
		task->policy->curve(&c);
	}
	return 0;
}

/* Whether task's sizes are other's. */
static bool same_sizes(const lp_sim_task *task, const lp_sim_task *other)
{
	return task->nsizes == other->nsizes &&
	       !memcmp(task->sizes, other->sizes, task->nsizes * sizeof *task->sizes);
}

int lp_sim_run(const lp_trace *t, lp_sim_task *tasks, size_t ntasks, const lp_sim_options *o,
	       unsigned threads)
{
	sim_run r = {.t = t, .o = o};
	g_mutex_init(&r.draw);
	GArray *jobs = g_array_new(FALSE, FALSE, sizeof(sim_job));
	/* The window jobs' tasks: each job's windows a run of them. */
	lp_sim_task **windows = g_new(lp_sim_task *, ntasks ? ntasks : 1);
	size_t nwindows = 0;
	bool *joined = g_new0(bool, ntasks ? ntasks : 1);
	for (size_t k = 0; k < ntasks; k++) {
		lp_sim_task *task = &tasks[k];
		if (!task->nsizes || joined[k])
			continue;
		if (task->policy->window_space) {
			/* Every variable-space task of the same sizes joins the
			 * pass. */
			sim_job j = {task, SIZE_MAX, windows + nwindows, 0};
			for (size_t i = k; i < ntasks; i++)
				if (tasks[i].policy->window_space && !joined[i] &&
				    same_sizes(task, &tasks[i])) {
					joined[i] = true;
					windows[nwindows++] = &tasks[i];
					j.nwindows++;
				}
			g_array_append_val(jobs, j);
			r.total += t->n;
			continue;
		}
		/* opt size by size (as the report asks) needs next uses; its
		 * whole curve does not. */
		bool whole = task->policy->curve && !task->per_size;
		if (!whole && task->policy->needs_next_use && !r.next_use)
			r.next_use = lp_trace_next_use(t);
		if (whole) {
			sim_job j = {task, SIZE_MAX, NULL, 0};
			g_array_append_val(jobs, j);
			r.total += t->n;
		} else {
			bool mini = o->sample && lp_sim_miniature(task->policy);
			for (size_t s = 0; s < task->nsizes; s++) {
				sim_job j = {task, s, NULL, 0};
				g_array_append_val(jobs, j);
				r.total += mini ? o->sample->n : t->n;
			}
		}
		lp_sim_fixed_space(t, task->sizes, task->nsizes, task->space_time);
	}
	g_free(joined);
	unsigned n = jobs->len;
	if (n) {
		/* A job per size can mean a million jobs: given a few at a
		 * time (a slot each in the pool) and none once stopped, the
		 * jobs given then ending at once. */
		lp_workpool *pool = lp_workpool_new("laplace-sim", MIN(threads, n),
						    MIN(n, SIM_IN_FLIGHT), run_job, &r);
		unsigned given = 0;
		lp_error err = {0};
		int rc;
		do {
			while (given < n && !lp_workpool_full(pool) && !sim_stopped(&r))
				lp_workpool_submit(pool, &g_array_index(jobs, sim_job, given++));
		} while (lp_workpool_take(pool, &rc, &err));
		lp_workpool_free(pool);
	}
	g_array_free(jobs, TRUE);
	g_free(windows);
	if (r.next_use)
		lp_trace_next_use_free(t, (uint64_t *)r.next_use);
	g_mutex_clear(&r.draw);
	return atomic_load(&r.stopped);
}
