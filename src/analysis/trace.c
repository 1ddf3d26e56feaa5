/* A reference stream as dense page numbers (trace.h). */
#include "analysis/trace.h"

#include <string.h>

#include "core/record.h"

#define LOAD_BATCH 65536

void lp_trace_init(lp_trace *t, bool user_only)
{
	memset(t, 0, sizeof *t);
	t->user_only = user_only;
	pairmap_init(&t->ids);
	for (uint64_t h = 0; h < LP_TRACE_RECENT; h++)
		t->recent_key[h] = ~h;
}

int lp_trace_add(lp_trace *t, char type, uint64_t canonical, lp_error *err)
{
	if (t->user_only && lp_ref_is_kernel(type))
		return 0;
	uint64_t h = canonical & (LP_TRACE_RECENT - 1);
	lp_pageno p;
	if (t->recent_key[h] == canonical) {
		p = t->recent_page[h];
		goto append;
	}
	pairmap_slot *slot = pairmap_find(&t->ids, canonical, 0);
	if (!slot)
		return lp_fail(err, LP_EINPUT, "out of memory numbering %" G_GUINT32_FORMAT
			       " distinct pages", t->pages);
	if (slot->value) {
		p = (lp_pageno)(slot->value - 1);
	} else {
		if (t->pages == LP_TRACE_MAX_PAGES)
			return lp_fail(err, LP_EINPUT, "more than %" G_GUINT32_FORMAT
				       " distinct pages", (uint32_t)LP_TRACE_MAX_PAGES);
		if (t->pages == t->pages_cap) {
			t->pages_cap = t->pages_cap ? t->pages_cap * 2 : 1024;
			t->canonical = g_renew(uint64_t, t->canonical, t->pages_cap);
		}
		p = t->pages++;
		t->canonical[p] = canonical;
		slot->a = canonical;
		slot->b = 0;
		slot->value = (uint64_t)p + 1;
		pairmap_added(&t->ids);
	}
	t->recent_key[h] = canonical;
	t->recent_page[h] = p;
append:
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 65536;
		t->page = g_renew(lp_pageno, t->page, t->cap);
		t->type = g_renew(char, t->type, t->cap);
	}
	t->page[t->n] = p;
	t->type[t->n++] = type;
	return 0;
}

void lp_trace_done(lp_trace *t)
{
	pairmap_free(&t->ids);
	memset(&t->ids, 0, sizeof t->ids);
	if (t->n < t->cap) {
		t->page = g_renew(lp_pageno, t->page, t->n);
		t->type = g_renew(char, t->type, t->n);
		t->cap = t->n;
	}
	if (t->pages < t->pages_cap) {
		t->canonical = g_renew(uint64_t, t->canonical, t->pages);
		t->pages_cap = t->pages;
	}
}

int lp_trace_load(lp_trace *t, const char *path, bool user_only, lp_error *err)
{
	lp_trace_init(t, user_only);
	lp_basic_reader *in = lp_basic_open(path, err);
	if (!in) {
		lp_trace_clear(t);
		return err->status;
	}
	lp_basic_ref *batch = g_new(lp_basic_ref, LOAD_BATCH);
	ssize_t got;
	int rc = 0;
	while (!rc && (got = lp_basic_read(in, batch, LOAD_BATCH, err)) > 0)
		for (ssize_t k = 0; k < got && !rc; k++)
			if ((rc = lp_trace_add(t, batch[k].type, batch[k].canonical, err))) {
				char what[sizeof err->msg];
				g_strlcpy(what, err->msg, sizeof what);
				lp_fail(err, rc, "%s: %s", strcmp(path, "-") ? path : "standard input",
					what);
			}
	if (!rc && got < 0)
		rc = err->status;
	g_free(batch);
	lp_basic_close(in);
	if (rc)
		lp_trace_clear(t);
	else
		lp_trace_done(t);
	return rc;
}

void lp_trace_clear(lp_trace *t)
{
	g_free(t->page);
	g_free(t->type);
	g_free(t->canonical);
	pairmap_free(&t->ids);
	memset(t, 0, sizeof *t);
}

uint64_t *lp_trace_next_use(const lp_trace *t)
{
	uint64_t *next = g_new(uint64_t, t->n ? t->n : 1);
	uint64_t *seen = g_new(uint64_t, t->pages ? t->pages : 1);
	for (lp_pageno p = 0; p < t->pages; p++)
		seen[p] = LP_NEVER;
	for (uint64_t i = t->n; i-- > 0;) {
		next[i] = seen[t->page[i]];
		seen[t->page[i]] = i;
	}
	g_free(seen);
	return next;
}
