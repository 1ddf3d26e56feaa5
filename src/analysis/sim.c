/* laplace sim's computation (sim.h). */
#include "analysis/sim.h"

#include <glib.h>
#include <string.h>

#include "analysis/recency.h"
#include "analysis/stackdist.h"
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
	char **items = g_strsplit(text, ",", -1);
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

static gint compare_sizes(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t *lp_sim_list_sizes(const lp_sim_list *list, uint64_t top, size_t *n)
{
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	for (size_t k = 0; k < list->n; k++) {
		const lp_sim_item *it = &list->items[k];
		uint64_t s;
		switch (it->kind) {
		case LP_SIM_POW2:
			for (s = 1; s < top; s *= 2)
				g_array_append_val(sizes, s);
			if (top) /* D = 0: an empty stream's pow2 is no size */
				g_array_append_val(sizes, top);
			break;
		case LP_SIM_ALL:
			for (s = 1; s <= top; s++)
				g_array_append_val(sizes, s);
			break;
		case LP_SIM_RANGE:
			for (s = it->from;; s++) {
				g_array_append_val(sizes, s);
				if (s == it->to)
					break;
			}
			break;
		}
	}
	g_array_sort(sizes, compare_sizes);
	size_t kept = 0;
	uint64_t *v = (uint64_t *)(void *)sizes->data;
	for (size_t k = 0; k < sizes->len; k++)
		if (!kept || v[kept - 1] != v[k])
			v[kept++] = v[k];
	*n = kept;
	return (uint64_t *)(void *)g_array_free(sizes, FALSE);
}

void lp_sim_params(const lp_sim_options *o, uint64_t frames, const lp_trace *t,
		   const uint64_t *next_use, lp_policy_params *p)
{
	/* With K >= D nothing is ever evicted, whatever the policy and its
	 * options: the policy gets D frames then (no room for pages that
	 * never come, no 2K to overflow), its options kept in range. */
	uint64_t k = MIN(frames, MAX((uint64_t)t->pages, 1));
	*p = (lp_policy_params){
		.frames = k,
		.pages = t->pages,
		.next_use = next_use,
		.clock_load_bit = o->clock_load_bit,
		.segq_lru_frames = o->segq_set ? MIN(o->segq_lru_frames, k - 1) : k / 2,
		.eelru_early = o->early_set ? o->eelru_early : MAX(1, k / 2),
		.eelru_late = o->late_set ? MAX(o->eelru_late, k + 1) : 2 * k,
	};
}

/* ---- lru: stack distances are recency positions ---- */

uint64_t *lp_sim_lru_distances(const lp_trace *t)
{
	uint64_t *hist = g_new0(uint64_t, (size_t)t->pages + 1);
	lp_stackdist s;
	lp_stackdist_init(&s, t->pages);
	lp_trace_reader r;
	lp_trace_reader_init(&r, t);
	lp_trace_block b = {0};
	for (uint64_t at = 0; at < t->n; at += b.len) {
		b = lp_trace_read(&r, at);
		for (size_t k = 0; k < b.len; k++)
			hist[lp_stackdist_access(&s, b.page[k])]++;
	}
	lp_trace_reader_clear(&r);
	lp_stackdist_clear(&s);
	hist[0] = 0; /* first references: no distance */
	return hist;
}

/* ---- opt: Mattson's priority stack ----
 * After each reference, the top k pages of the stack are the memory of an
 * OPT memory of k frames, for every k. A reference moves its page x to
 * the top; the page pushed out of level i (the carry, first the old top)
 * is compared with the page at level i + 1: the one of larger eviction
 * key (lp_opt_key) goes on down, until x's old level, which the last
 * carry takes. The carry changes only at a page of larger key than its
 * own, so those are found with a max tree over levels, and the stack is
 * touched only where a page changes level. */

typedef struct opt_stack {
	lp_pageno *level;  /* level -> page */
	uint64_t *tree;    /* max of keys over levels: leaves at size + i */
	uint64_t size;     /* leaves: a power of two */
} opt_stack;

static void stack_set(opt_stack *s, uint64_t i, lp_pageno p, uint64_t key)
{
	s->level[i] = p;
	uint64_t n = s->size + i;
	s->tree[n] = key;
	for (n /= 2; n >= 1; n /= 2) {
		uint64_t m = MAX(s->tree[2 * n], s->tree[2 * n + 1]);
		if (s->tree[n] == m)
			break;
		s->tree[n] = m;
	}
}

/* The first level in [from, to] holding a key above key, or UINT64_MAX. */
static uint64_t first_above(const opt_stack *s, uint64_t from, uint64_t to, uint64_t key)
{
	/* Up from the leaf of from while the subtrees right of the path
	 * have no larger key, then down into the first that has. */
	uint64_t n = s->size + from;
	if (s->tree[n] > key)
		return from <= to ? from : UINT64_MAX;
	for (;;) {
		while (n & 1) {
			n /= 2;
			if (n <= 1)
				return UINT64_MAX;
		}
		n++; /* the right sibling */
		if (s->tree[n] > key)
			break;
	}
	while (n < s->size)
		n = s->tree[2 * n] > key ? 2 * n : 2 * n + 1;
	uint64_t at = n - s->size;
	return at <= to ? at : UINT64_MAX;
}

uint64_t *lp_sim_opt_distances(const lp_trace *t, const uint64_t *next_use, uint64_t budget)
{
	uint64_t *hist = g_new0(uint64_t, (size_t)t->pages + 1);
	opt_stack s = {0};
	s.size = 1;
	while (s.size < t->pages)
		s.size *= 2;
	s.level = g_new(lp_pageno, s.size);
	s.tree = g_new0(uint64_t, 2 * s.size);
	uint64_t *key = g_new(uint64_t, t->pages ? t->pages : 1);
	uint64_t *at = g_new(uint64_t, t->pages ? t->pages : 1);
	uint64_t depth = 0, work = 0, log_levels = 1;
	while ((UINT64_C(1) << log_levels) < s.size)
		log_levels++;
	lp_trace_reader r;
	lp_trace_reader_init(&r, t);
	lp_trace_block b = {0};
	for (uint64_t base = 0; base < t->n && hist; base += b.len) {
		b = lp_trace_read(&r, base);
		for (size_t k = 0; k < b.len; k++) {
			uint64_t i = base + k;
			lp_pageno x = b.page[k];
			uint64_t old;
			if (x == depth) { /* first reference: dense numbers come in order */
				old = depth++;
			} else {
				old = at[x];
				hist[old + 1]++;
			}
			uint64_t xkey = lp_opt_key(next_use[i], i);
			if (old > 0) {
				lp_pageno carry = s.level[0];
				uint64_t from = 1;
				for (;;) {
					uint64_t j = from < old
							     ? first_above(&s, from, old - 1, key[carry])
							     : UINT64_MAX;
					if (j == UINT64_MAX)
						break;
					work += log_levels;
					lp_pageno down = s.level[j];
					stack_set(&s, j, carry, key[carry]);
					at[carry] = j;
					carry = down;
					from = j + 1;
				}
				stack_set(&s, old, carry, key[carry]);
				at[carry] = old;
			}
			key[x] = xkey;
			stack_set(&s, 0, x, xkey);
			at[x] = 0;
			if ((work += log_levels) > budget) {
				g_free(hist);
				hist = NULL;
				break;
			}
		}
	}
	lp_trace_reader_clear(&r);
	g_free(s.level);
	g_free(s.tree);
	g_free(key);
	g_free(at);
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

void lp_sim_fixed_space(const lp_trace *t, const uint64_t *sizes, size_t m, uint64_t *space)
{
	/* Σ_t min(K, c_t) = Σ_{k <= K} #{t : c_t >= k} = Σ_{k <= min(K, D)}
	 * (n - the time of the k-th first reference). */
	uint64_t sum = 0, at = 0;
	size_t k = 0;
	lp_pageno seen = 0; /* the k-th first reference is page k - 1's */
	lp_trace_reader r;
	lp_trace_reader_init(&r, t);
	lp_trace_block b = {0};
	for (size_t s = 0; s < m; s++) {
		lp_pageno goal = (lp_pageno)MIN(sizes[s], (uint64_t)t->pages);
		while (seen < goal) {
			if (k == b.len) {
				at += b.len;
				b = lp_trace_read(&r, at);
				k = 0;
			}
			for (; k < b.len && seen < goal; k++)
				if (b.page[k] == seen) {
					seen++;
					sum += t->n - (at + k);
				}
		}
		space[s] = sum;
	}
	lp_trace_reader_clear(&r);
}

/* ---- ws and vmin: distance histograms ---- */

uint64_t lp_sim_max_backward(const lp_trace *t)
{
	uint64_t *last = g_new(uint64_t, t->pages ? t->pages : 1);
	uint64_t most = 0;
	lp_pageno seen = 0;
	lp_trace_reader r;
	lp_trace_reader_init(&r, t);
	lp_trace_block b = {0};
	for (uint64_t at = 0; at < t->n; at += b.len) {
		b = lp_trace_read(&r, at);
		for (size_t k = 0; k < b.len; k++) {
			lp_pageno p = b.page[k];
			uint64_t i = at + k;
			if (p == seen)
				seen++;
			else
				most = MAX(most, i - last[p]);
			last[p] = i;
		}
	}
	lp_trace_reader_clear(&r);
	g_free(last);
	return most;
}

/* A page is in W(t, tau) from each reference s for min(f_s, tau, n - s)
 * references, so Σ_t |W(t, tau)| = Σ_s min(g_s, tau), g_s being f_s, or
 * n - s after a page's last reference. The finite forward distances are
 * the finite backward ones, so one pass serves faults, ws and vmin. Only
 * the windows asked matter: each distance is counted (and summed) in the
 * bucket of the first window at least as large, so memory is O(windows),
 * not O(largest window). */

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
		    uint64_t *ws_space, uint64_t *vmin_space)
{
	if (!m)
		return;
	/* [k]: distances in (taus[k - 1], taus[k]]; [m]: past the last. */
	uint64_t *d_count = g_new0(uint64_t, m + 1), *d_sum = g_new0(uint64_t, m + 1);
	uint64_t *g_count = g_new0(uint64_t, m + 1), *g_sum = g_new0(uint64_t, m + 1);
	uint64_t *last = g_new(uint64_t, t->pages ? t->pages : 1);
	lp_pageno seen = 0;
	uint64_t finite = 0;
	lp_trace_reader r;
	lp_trace_reader_init(&r, t);
	lp_trace_block b = {0};
	for (uint64_t at = 0; at < t->n; at += b.len) {
		b = lp_trace_read(&r, at);
		for (size_t j = 0; j < b.len; j++) {
			lp_pageno p = b.page[j];
			uint64_t i = at + j;
			if (p == seen) {
				seen++;
			} else {
				uint64_t d = i - last[p];
				size_t k = bucket(taus, m, d);
				d_count[k]++;
				d_sum[k] += d;
				finite++;
			}
			last[p] = i;
		}
	}
	lp_trace_reader_clear(&r);
	for (lp_pageno p = 0; p < t->pages; p++) {
		uint64_t g = t->n - last[p];
		size_t k = bucket(taus, m, g);
		g_count[k]++;
		g_sum[k] += g;
	}
	g_free(last);
	/* Up to each tau: counts and sums of distances, finite and tails. */
	uint64_t dc = 0, ds = 0, gc = 0, gs = 0;
	for (size_t k = 0; k < m; k++) {
		uint64_t tau = taus[k];
		dc += d_count[k];
		ds += d_sum[k];
		gc += g_count[k];
		gs += g_sum[k];
		faults[k] = t->pages + (finite - dc);
		if (ws_space)
			ws_space[k] = ds + tau * (finite - dc) + gs + tau * (t->pages - gc);
		if (vmin_space)
			vmin_space[k] = t->n + ds - dc;
	}
	g_free(d_count);
	g_free(d_sum);
	g_free(g_count);
	g_free(g_sum);
}

/* ---- the other fixed-space policies, one size at a time ---- */

uint64_t lp_sim_fixed(const lp_trace *t, const lp_policy_info *policy, const lp_policy_params *p,
		      lp_sim_fault_fn fault_fn, void *ctx)
{
	const lp_policy_ops *ops = policy->ops;
	void *state = ops->create(p);
	uint64_t faults = 0;
	lp_trace_reader r;
	lp_trace_reader_init(&r, t);
	lp_trace_block b = {0};
	for (uint64_t at = 0; at < t->n; at += b.len) {
		b = lp_trace_read(&r, at);
		const lp_pageno *page = b.page;
		for (size_t k = 0; k < b.len; k++) {
			lp_pageno victim;
			if (!ops->access(state, page[k], at + k, &victim)) {
				faults++;
				if (fault_fn)
					fault_fn(ctx, at + k, page[k], victim);
			}
		}
	}
	lp_trace_reader_clear(&r);
	ops->destroy(state);
	return faults;
}

/* ---- a run: its jobs in a work pool ---- */

/* References opt's stack is tried on before a run chooses it. */
#define OPT_TRIAL_REFS (UINT64_C(1) << 20)

typedef struct sim_run {
	const lp_trace *t;
	const lp_sim_options *o;
	const uint64_t *next_use;
} sim_run;

typedef struct sim_job {
	lp_sim_task *task;
	size_t size; /* the size of a per-size job; SIZE_MAX: the whole task */
} sim_job;

/* The priority stack costs a tree search wherever a page changes level,
 * which deep stacks of far next uses make most levels; a heap at each
 * size costs log K a reference. The stack's budget, over refs references:
 * twice the heaps'. */
static uint64_t opt_budget(const lp_sim_task *task, uint64_t refs, lp_pageno pages)
{
	uint64_t budget = 0;
	for (size_t s = 0; s < task->nsizes && budget < UINT64_MAX / 4; s++) {
		uint64_t log_k = 1;
		while (log_k < 63 && (UINT64_C(1) << log_k) < MIN(task->sizes[s], pages))
			log_k++;
		budget += refs * 2 * log_k;
	}
	return budget;
}

static void opt_at(const sim_run *r, lp_sim_task *task, size_t s)
{
	lp_policy_params p;
	lp_sim_params(r->o, task->sizes[s], r->t, r->next_use, &p);
	task->faults[s] = lp_sim_fixed(r->t, task->policy, &p, NULL, NULL);
}

/* Whether opt's stack over the first references keeps within its budget
 * (then the whole curve is one job; otherwise a job at each size, side
 * by side). The whole run keeps its own budget all the same. */
static bool opt_stack_pays(const sim_run *r, const lp_sim_task *task)
{
	lp_trace head = *r->t;
	head.n = MIN(head.n, OPT_TRIAL_REFS);
	uint64_t *hist = lp_sim_opt_distances(&head, r->next_use,
					      opt_budget(task, head.n, head.pages));
	bool pays = hist != NULL;
	g_free(hist);
	return pays;
}

static int run_job(void *ctx, void *job, lp_error *err)
{
	(void)err;
	const sim_run *r = ctx;
	sim_job *j = job;
	lp_sim_task *task = j->task;
	const char *name = task->policy->name;
	if (j->size != SIZE_MAX) {
		lp_policy_params p;
		lp_sim_params(r->o, task->sizes[j->size], r->t, r->next_use, &p);
		task->faults[j->size] = lp_sim_fixed(r->t, task->policy, &p, NULL, NULL);
	} else if (task->policy->space == LP_SPACE_VARIABLE) {
		bool ws = !strcmp(name, "ws");
		lp_sim_windows(r->t, task->sizes, task->nsizes, task->faults,
			       ws ? task->space_time : NULL, ws ? NULL : task->space_time);
	} else if (strcmp(name, "opt")) {
		uint64_t *hist = lp_sim_lru_distances(r->t);
		lp_sim_stack_faults(hist, r->t->pages, task->sizes, task->nsizes, task->faults);
		g_free(hist);
	} else {
		uint64_t *hist = lp_sim_opt_distances(r->t, r->next_use, opt_budget(task, r->t->n,
										 r->t->pages));
		if (hist) {
			lp_sim_stack_faults(hist, r->t->pages, task->sizes, task->nsizes,
					    task->faults);
			g_free(hist);
		} else {
			for (size_t s = 0; s < task->nsizes; s++)
				opt_at(r, task, s);
		}
	}
	return 0;
}

void lp_sim_run(const lp_trace *t, lp_sim_task *tasks, size_t ntasks, const lp_sim_options *o,
		unsigned threads)
{
	sim_run r = {.t = t, .o = o};
	GArray *jobs = g_array_new(FALSE, FALSE, sizeof(sim_job));
	for (size_t k = 0; k < ntasks; k++) {
		lp_sim_task *task = &tasks[k];
		if (!task->nsizes)
			continue;
		if (!strcmp(task->policy->name, "opt") && !r.next_use)
			r.next_use = lp_trace_next_use(t);
		if (task->policy->stack &&
		    (strcmp(task->policy->name, "opt") || opt_stack_pays(&r, task))) {
			sim_job j = {task, SIZE_MAX};
			g_array_append_val(jobs, j);
		} else {
			for (size_t s = 0; s < task->nsizes; s++) {
				sim_job j = {task, s};
				g_array_append_val(jobs, j);
			}
		}
		if (task->policy->space == LP_SPACE_FIXED)
			lp_sim_fixed_space(t, task->sizes, task->nsizes, task->space_time);
	}
	unsigned n = jobs->len;
	if (n) {
		lp_workpool *pool = lp_workpool_new("laplace-sim", MIN(threads, n), n, run_job, &r);
		for (unsigned k = 0; k < n; k++)
			lp_workpool_submit(pool, &g_array_index(jobs, sim_job, k));
		lp_error err = {0};
		int rc;
		while (lp_workpool_take(pool, &rc, &err))
			;
		lp_workpool_free(pool);
	}
	g_array_free(jobs, TRUE);
	if (r.next_use)
		lp_trace_next_use_free(t, (uint64_t *)r.next_use);
}
