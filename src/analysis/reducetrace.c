/* laplace reduce's checks and reduction over a stream held whole
 * (reducetrace.h), and lp_reduce (laplace.h) over them. */
#include "analysis/reducetrace.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "laplace/laplace.h"

int lp_reduce_method_parse(const char *method, bool *olr, lp_error *err)
{
	if (!method)
		return lp_fail(err, LP_EUSAGE, "--method is required");
	*olr = !strcmp(method, "olr");
	if (!*olr && strcmp(method, "sad"))
		return lp_fail(err, LP_EUSAGE, "--method must be sad or olr, not '%s'", method);
	return 0;
}

int lp_reduce_trace(lp_trace *in, const char *name, bool olr, uint64_t frames,
		    uint64_t canon_max, const char *form, lp_refs *out, lp_error *err)
{
	if (in->n > LP_REDUCE_MAX_REFS)
		return lp_fail(err, LP_EINPUT, "%s: %" PRIu64 " references, more than the %" PRIu64
			       " laplace reduce takes", name, in->n, (uint64_t)LP_REDUCE_MAX_REFS);
	/* A page the form cannot carry is named at its first reference in
	 * the input, before any work: the reduced stream's own indices would
	 * tell the user nothing. Dense numbers follow first references, so
	 * the first such page is the smallest. */
	const lp_pageno *page;
	const char *type;
	int rc = lp_trace_map(in, &page, &type, err);
	if (rc)
		return rc;
	for (lp_pageno p = 0; p < in->pages; p++) {
		if (in->canonical[p] <= canon_max)
			continue;
		uint64_t t = 0;
		while (page[t] != p)
			t++;
		return lp_fail(err, LP_EINPUT, "%s: reference %" PRIu64 ": canonical number %" PRIx64
			       " does not fit the %s form", name, t, in->canonical[p], form);
	}
	(olr ? lp_reduce_olr : lp_reduce_sad)(page, type, in->n, in->pages, frames, out);
	return 0;
}

/* The stream held whole: from path, or from the caller's references. */
static int load(lp_trace *t, const char *path, const lp_basic_ref *refs, size_t n,
		lp_error *err)
{
	if (path)
		return lp_trace_load(t, path, 0, NULL, err);
	lp_trace_init(t, 0);
	for (size_t i = 0; i < n; i++) {
		int rc = refs[i].type && strchr("rwiRWI", refs[i].type)
			? lp_trace_add(t, refs[i].type, refs[i].canonical, err)
			: lp_fail(err, LP_EUSAGE, "type: %d is not one of r w i R W I",
				  (unsigned char)refs[i].type);
		if (rc) {
			lp_error inner = *err;
			lp_fail(err, rc, "lp_reduce: refs[%zu]: %s", i, inner.msg);
			lp_trace_clear(t);
			return rc;
		}
	}
	lp_trace_done(t);
	return 0;
}

ssize_t lp_reduce(const char *path, const lp_basic_ref *refs, size_t n, const char *method,
		  uint64_t frames, lp_basic_ref **reduced, lp_error *err)
{
	lp_error dropped = {0};
	if (!err)
		err = &dropped;
	if (!reduced)
		return lp_fail(err, LP_EUSAGE, "lp_reduce: argument reduced: NULL"), -1;
	*reduced = NULL;
	if (!path && !refs && n)
		return lp_fail(err, LP_EUSAGE, "lp_reduce: arguments path and refs: NULL"), -1;
	bool olr;
	if (lp_reduce_method_parse(method, &olr, err))
		return -1;
	if (frames < 1)
		return lp_fail(err, LP_EUSAGE, "--frames is out of range (at least 1), not 0"), -1;
	lp_trace in;
	if (load(&in, path, refs, n, err))
		return -1;
	lp_refs out = {0};
	int rc = lp_reduce_trace(&in, path ? (strcmp(path, "-") ? path : "<stdin>") : "lp_reduce: refs",
				 olr, frames, UINT64_MAX, NULL, &out, err);
	if (!rc && out.n) {
		lp_basic_ref *r = g_new(lp_basic_ref, out.n);
		for (size_t i = 0; i < out.n; i++)
			r[i] = (lp_basic_ref){out.types[i], in.canonical[out.pages[i]]};
		*reduced = r;
	}
	ssize_t count = rc ? -1 : (ssize_t)out.n;
	lp_refs_clear(&out);
	lp_trace_clear(&in);
	return count;
}

void lp_reduce_free(lp_basic_ref *reduced)
{
	g_free(reduced);
}
