/* The forms of a merged reference stream (laplace-formats(5), "FORMS FOR
 * SIMULATORS"), and their writer, the basic merge sink: "type canonical"
 * lines (basic), "type address length" lines (addr), Dinero's "label
 * address" (din), or 8-byte words after a header (bin). Their reader is
 * basicin.c. */
#include "formats/forms.h"

#include <string.h>

#include <glib.h>

const char *const lp_form_names[LP_FORM_COUNT] = {"basic", "addr", "din", "bin"};

int lp_form_parse(const char *name)
{
	for (int f = 0; f < LP_FORM_COUNT; f++)
		if (!strcmp(name, lp_form_names[f]))
			return f;
	return -1;
}

/* ---- the writer ---- */

/* Flushed before fewer bytes than the longest record remain. */
#define BUF_SIZE (1u << 20)
#define MAX_RECORD LP_FORM_RECORD_MAX

struct lp_basic_sink {
	lp_output *out;
	bool user_only;
	enum lp_form form;
	uint64_t written; /* references, for messages */
	size_t used;
	char buf[BUF_SIZE];
};

lp_basic_sink *lp_basic_sink_new(lp_output *out, bool user_only, enum lp_form form)
{
	lp_basic_sink *s = g_malloc(sizeof *s);
	s->out = out;
	s->user_only = user_only;
	s->form = form;
	s->written = 0;
	s->used = 0;
	if (form == LP_FORM_BIN) {
		memcpy(s->buf, LP_BIN_HEADER, LP_BIN_HEADER_SIZE);
		s->used = LP_BIN_HEADER_SIZE;
	}
	return s;
}

void lp_basic_sink_free(lp_basic_sink *s)
{
	g_free(s);
}

static int flush(lp_basic_sink *s, lp_error *err)
{
	int rc = lp_output_write(s->out, s->buf, s->used, err);
	s->used = 0;
	return rc;
}

const uint64_t lp_form_canon_max[LP_FORM_COUNT] = {
	[LP_FORM_BASIC] = UINT64_MAX,
	[LP_FORM_ADDR] = LP_ADDR_CANON_MAX,
	[LP_FORM_DIN] = LP_ADDR_CANON_MAX,
	[LP_FORM_BIN] = LP_BIN_CANON_MAX,
};

int lp_form_canon_error(lp_error *err, enum lp_form form, uint64_t index, uint64_t canon)
{
	return lp_fail(err, LP_EINPUT, "reference %" G_GUINT64_FORMAT ": canonical number %"
		       G_GINT64_MODIFIER "x does not fit the %s form", index, canon, lp_form_names[form]);
}

/* The references in one form; inline and called with a constant form, so
 * that each form gets a loop of its own with no switch inside. */
static inline int encode_refs(lp_basic_sink *s, const enum lp_form form, const lp_ref *refs,
			      const uint64_t *canon, size_t n, lp_error *err)
{
	/* In locals: the compiler must assume that every store into s->buf
	 * may change s's other fields, and would reload them each time. */
	size_t used = s->used;
	uint64_t written = s->written;
	bool user_only = s->user_only;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (user_only && lp_ref_is_kernel(refs[i].type))
			continue;
		if (canon[i] > lp_form_canon_max[form]) {
			rc = lp_form_canon_error(err, form, written, canon[i]);
			break;
		}
		if (used > BUF_SIZE - MAX_RECORD) {
			s->used = used;
			rc = flush(s, err);
			used = 0;
			if (rc)
				break;
		}
		used += lp_form_encode(form, s->buf + used, refs[i].type, canon[i], refs[i].address,
				       refs[i].length);
		written++;
	}
	s->used = used;
	s->written = written;
	return rc;
}

static int basic_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		      const lp_task_id *who, lp_error *err)
{
	(void)who;
	lp_basic_sink *s = ctx;
	switch (s->form) {
	case LP_FORM_BASIC: return encode_refs(s, LP_FORM_BASIC, refs, canon, n, err);
	case LP_FORM_ADDR: return encode_refs(s, LP_FORM_ADDR, refs, canon, n, err);
	case LP_FORM_DIN: return encode_refs(s, LP_FORM_DIN, refs, canon, n, err);
	default: return encode_refs(s, LP_FORM_BIN, refs, canon, n, err);
	}
}

static int basic_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	(void)ctx, (void)ev, (void)route, (void)err;
	return 0; /* kernel events produce no records */
}

static int basic_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	(void)stats;
	return flush(ctx, err);
}

const lp_sink lp_basic_sink_ops = {
	.refs = basic_refs,
	.event = basic_event,
	.finish = basic_finish,
};
