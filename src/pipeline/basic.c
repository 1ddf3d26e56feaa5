/* The basic merge writer: one "type canonical" line per reference. */
#include "laplace/sinks.h"

/* Flush before fewer bytes than one line (type, space, 16 digits,
 * newline) remain. */
#define BUF_SIZE (1u << 20)
#define MAX_LINE 19

struct lp_basic_sink {
	lp_output *out;
	bool user_only;
	size_t used;
	char buf[BUF_SIZE];
};

lp_basic_sink *lp_basic_sink_new(lp_output *out, bool user_only)
{
	lp_basic_sink *s = g_malloc(sizeof *s);
	s->out = out;
	s->user_only = user_only;
	s->used = 0;
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

static int basic_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		      const lp_task_id *who, lp_error *err)
{
	(void)who;
	lp_basic_sink *s = ctx;
	for (size_t i = 0; i < n; i++) {
		if (s->user_only && lp_ref_is_kernel(refs[i].type))
			continue;
		if (s->used > BUF_SIZE - MAX_LINE) {
			int rc = flush(s, err);
			if (rc)
				return rc;
		}
		char *p = s->buf + s->used;
		p[0] = refs[i].type;
		p[1] = ' ';
		size_t len = 2 + lp_fmt_hex(p + 2, canon[i]);
		p[len] = '\n';
		s->used += len + 1;
	}
	return 0;
}

static int basic_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	(void)ctx, (void)ev, (void)route, (void)err;
	return 0; /* kernel events produce no lines */
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
