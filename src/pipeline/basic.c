/* The basic merge writer, in any form of laplace-formats(5), "FORMS FOR
 * SIMULATORS": "type canonical" lines (basic), "type address length" lines
 * (addr), Dinero's "label address" (din), or 8-byte words after a header
 * (bin). */
#include "laplace/sinks.h"

#include <string.h>

#include "laplace/byteorder.h"
#include "laplace/forms.h"
#include "laplace/numbers.h"

/* Flush before fewer bytes than the longest record remain: addr's type,
 * space, 16 digits, space, 2 digits, newline. */
#define BUF_SIZE (1u << 20)
#define MAX_RECORD 22

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

/* The byte address of addr and din, in hex at p: the canonical page's
 * address and the offset of the raw address in its page. */
static size_t put_byte_address(char *p, uint64_t canon, uint32_t address)
{
	return lp_fmt_hex(p, canon << LP_PAGE_SHIFT | (address & ((1u << LP_PAGE_SHIFT) - 1)));
}

/* One reference in the sink's form at p; returns its length. */
static size_t put_record(const lp_basic_sink *s, char *p, const lp_ref *ref, uint64_t canon)
{
	static const char digits[] = "0123456789abcdef";
	size_t len = 0;
	switch (s->form) {
	case LP_FORM_BASIC:
		p[len++] = ref->type;
		p[len++] = ' ';
		len += lp_fmt_hex(p + len, canon);
		break;
	case LP_FORM_ADDR:
		p[len++] = ref->type;
		p[len++] = ' ';
		len += put_byte_address(p + len, canon, ref->address);
		p[len++] = ' ';
		if (ref->length > 0xf)
			p[len++] = digits[ref->length >> 4];
		p[len++] = digits[ref->length & 0xf];
		break;
	case LP_FORM_DIN:
		p[len++] = lp_din_label(ref->type);
		p[len++] = ' ';
		len += put_byte_address(p + len, canon, ref->address);
		break;
	default: { /* LP_FORM_BIN */
		uint64_t code = (uint64_t)lp_ref_type_index(ref->type);
		lp_store_u64((unsigned char *)p, canon | code << LP_BIN_TYPE_SHIFT, false);
		return LP_BIN_WORD_SIZE;
	}
	}
	p[len++] = '\n';
	return len;
}

/* The largest canonical number each form can carry. */
static const uint64_t canon_max[LP_FORM_COUNT] = {
	[LP_FORM_BASIC] = UINT64_MAX,
	[LP_FORM_ADDR] = LP_ADDR_CANON_MAX,
	[LP_FORM_DIN] = LP_ADDR_CANON_MAX,
	[LP_FORM_BIN] = LP_BIN_CANON_MAX,
};

static int basic_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		      const lp_task_id *who, lp_error *err)
{
	(void)who;
	lp_basic_sink *s = ctx;
	for (size_t i = 0; i < n; i++) {
		if (s->user_only && lp_ref_is_kernel(refs[i].type))
			continue;
		if (canon[i] > canon_max[s->form])
			return lp_fail(err, LP_EINPUT, "reference %" G_GUINT64_FORMAT ": canonical "
				       "number %" G_GINT64_MODIFIER "x does not fit the %s form",
				       s->written, canon[i], lp_form_names[s->form]);
		if (s->used > BUF_SIZE - MAX_RECORD) {
			int rc = flush(s, err);
			if (rc)
				return rc;
		}
		s->used += put_record(s, s->buf + s->used, &refs[i], canon[i]);
		s->written++;
	}
	return 0;
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
