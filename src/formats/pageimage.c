/* Page-image LRU behaviour sequences (laplace-formats(5), "Page-image LRU
 * behaviour sequence"). */
#include "formats/pageimage.h"
#include "core/numbers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>


size_t lp_behaviour_format(char *dst, char tag, uint64_t page, char dirt, uint64_t evicted)
{
	char *p = dst;
	*p++ = tag;
	*p++ = ' ';
	p += lp_fmt_hex(p, page);
	*p++ = ' ';
	*p++ = dirt;
	*p++ = ' ';
	p += lp_fmt_hex(p, evicted);
	*p++ = '\n';
	return (size_t)(p - dst);
}

/* ---- reader ---- */

struct lp_pi_reader {
	lp_byte_source *src;
	uint64_t index;
	bool done;
};

lp_pi_reader *lp_pi_reader_new(lp_byte_source *src)
{
	lp_pi_reader *r = g_new0(lp_pi_reader, 1);
	r->src = src;
	return r;
}

uint64_t lp_pi_reader_index(const lp_pi_reader *r) { return r->index; }
const char *lp_pi_reader_name(const lp_pi_reader *r) { return lp_byte_source_name(r->src); }

void lp_pi_reader_close(lp_pi_reader *r)
{
	if (!r)
		return;
	lp_byte_source_close(r->src);
	g_free(r);
}

/* A byte for a message: itself when printable, else its code. */
static void describe_byte(char *buf, size_t n, unsigned char c)
{
	if (g_ascii_isprint(c) && c != '\'')
		snprintf(buf, n, "'%c'", c);
	else
		snprintf(buf, n, "byte %02x", c);
}

/* Parse the 4 hex digits of field of record index; on a bad one, fail
 * naming it. */
static int parse_page(const lp_pi_reader *r, uint64_t index, const unsigned char *p,
		      const char *field, uint16_t *page, lp_error *err)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int d = g_ascii_xdigit_value((char)p[i]);
		if (d < 0) {
			char what[16];
			describe_byte(what, sizeof what, p[i]);
			return lp_fail(err, LP_EINPUT, "%s: record %" PRIu64 ": field %s: %s is not a hex digit",
				       lp_pi_reader_name(r), index, field, what);
		}
		v = v << 4 | (unsigned)d;
	}
	*page = (uint16_t)v;
	return 0;
}

static int bad_tag(const lp_pi_reader *r, uint64_t index, const char *field, const char *allowed,
		   unsigned char c, lp_error *err)
{
	char what[16];
	describe_byte(what, sizeof what, c);
	return lp_fail(err, LP_EINPUT, "%s: record %" PRIu64 ": field %s: %s is not %s",
		       lp_pi_reader_name(r), index, field, what, allowed);
}

/* The fetch tag of record index; on a bad one, fail naming it. */
static int check_tag(const lp_pi_reader *r, uint64_t index, char tag, lp_error *err)
{
	return tag == 'C' || tag == 'F' ? 0 : bad_tag(r, index, "tag", "C or F", (unsigned char)tag, err);
}

/* The two page fields of a record, as read: fetched, evicted. */
typedef const unsigned char *page_fields[2];

/* next_record's answer to a bad dirt tag: err names it, rec->tag and
 * (*fields)[0] are the record's fetch tag and fetched page as read, and
 * the record boundaries are lost. */
enum { BAD_DIRT = -3 };

/* Read the next record past its dirt tag and size: rec is filled but for
 * its page numbers (left 0), whose raw fields go to *fields, and its fetch
 * tag is as read (not checked). 1, 0 at the end (after a torn record is
 * reported under policy), LP_PI_FATAL or BAD_DIRT. */
static int next_record(lp_pi_reader *r, lp_pi_record *rec, page_fields *fields,
		       const lp_torn_policy *policy, lp_error *err)
{
	if (r->done)
		return 0;
	ssize_t avail = lp_inbuf_fill(&r->src->b, LP_PI_LONG_RECORD, err);
	if (avail < 0)
		return LP_PI_FATAL;
	const unsigned char *p = lp_byte_source_data(r->src);
	if (avail == 0) {
		r->done = true;
		return 0;
	}
	size_t size = LP_PI_LONG_RECORD;
	const unsigned char *ev = p + 5 + LP_PAGE_BYTES;
	if ((size_t)avail > (size_t)(ev - p)) {
		if (*ev != 'W' && *ev != 'R' && *ev != 'N') {
			r->done = true;
			rec->tag = (char)p[0];
			(*fields)[0] = p + 1;
			bad_tag(r, r->index, "dirt", "W, R or N", *ev, err);
			return BAD_DIRT;
		}
		if (*ev == 'N')
			size = LP_PI_SHORT_RECORD;
	}
	if ((size_t)avail < size) {
		r->done = true;
		return lp_torn_record(policy, lp_pi_reader_name(r), r->index, (size_t)avail, err)
			       ? LP_PI_FATAL : 0;
	}
	r->src->b.pos += size;
	r->index++;
	*rec = (lp_pi_record){
		.tag = (char)p[0],
		.dirt = (char)*ev,
		.fetched_image = p + 5,
		.evicted_image = *ev == 'N' ? NULL : ev + 5,
	};
	(*fields)[0] = p + 1;
	(*fields)[1] = ev + 1;
	return 1;
}

int lp_pi_reader_next(lp_pi_reader *r, lp_pi_record *rec, const lp_torn_policy *policy,
		      lp_error *err)
{
	page_fields f;
	int got = next_record(r, rec, &f, policy, err);
	if (got == BAD_DIRT) {
		/* the first bad field in byte order is the one reported */
		uint16_t page;
		if (!check_tag(r, r->index, rec->tag, err))
			parse_page(r, r->index, f[0], "fetched page", &page, err);
		return LP_PI_FATAL;
	}
	if (got <= 0)
		return got;
	uint64_t index = r->index - 1;
	if (check_tag(r, index, rec->tag, err) ||
	    parse_page(r, index, f[0], "fetched page", &rec->fetched, err) ||
	    parse_page(r, index, f[1], "evicted page", &rec->evicted, err))
		return LP_PI_BAD;
	return 1;
}

/* ---- writer ---- */

struct lp_pi_writer {
	lp_output *out;
	bool text;
};

lp_pi_writer *lp_pi_writer_new(lp_output *out, bool text)
{
	lp_pi_writer *w = g_new(lp_pi_writer, 1);
	*w = (lp_pi_writer){out, text};
	return w;
}

void lp_pi_writer_free(lp_pi_writer *w) { g_free(w); }

static void page_field(char *dst, char tag, uint16_t page)
{
	static const char hexdigits[] = "0123456789abcdef";
	dst[0] = tag;
	for (int i = 0; i < 4; i++)
		dst[1 + i] = hexdigits[(page >> (12 - 4 * i)) & 0xf];
}

int lp_pi_writer_write(lp_pi_writer *w, const lp_pi_record *rec, lp_error *err)
{
	if (w->text) {
		char line[LP_BEHAVIOUR_LINE_MAX];
		size_t n = lp_behaviour_format(line, rec->tag, rec->fetched, rec->dirt, rec->evicted);
		return lp_output_write(w->out, line, n, err);
	}
	char field[5];
	int st;
	page_field(field, rec->tag, rec->fetched);
	if ((st = lp_output_write(w->out, field, 5, err)) ||
	    (st = lp_output_write(w->out, rec->fetched_image, LP_PAGE_BYTES, err)))
		return st;
	page_field(field, rec->dirt, rec->dirt == 'N' ? 0 : rec->evicted);
	if ((st = lp_output_write(w->out, field, 5, err)))
		return st;
	if (rec->dirt != 'N')
		st = lp_output_write(w->out, rec->evicted_image, LP_PAGE_BYTES, err);
	return st;
}

/* ---- the rules of the format ---- */

struct lp_pi_check {
	bool seen[LP_PI_PAGES];
	bool resident[LP_PI_PAGES];
	uint64_t fills;
	bool evicted;
};

lp_pi_check *lp_pi_check_new(void) { return g_new0(lp_pi_check, 1); }
void lp_pi_check_free(lp_pi_check *c) { g_free(c); }
uint64_t lp_pi_check_fills(const lp_pi_check *c) { return c->fills; }
bool lp_pi_check_evicted(const lp_pi_check *c) { return c->evicted; }

static void rule_broken(lp_warn_fn problem, void *ctx, const char *fmt, unsigned page)
{
	char msg[128];
	snprintf(msg, sizeof msg, fmt, page);
	problem(ctx, msg);
}

unsigned lp_pi_check_record(lp_pi_check *c, const lp_pi_record *rec, unsigned known,
			    lp_warn_fn problem, void *ctx)
{
	unsigned broken = 0;
	uint16_t p = rec->fetched, e = rec->evicted;
	if (known & LP_PI_FETCHED_KNOWN) {
		if (!(known & LP_PI_TAG_KNOWN)) {
			/* a damaged tag says nothing about C or F */
		} else if (rec->tag == 'C' && c->seen[p]) {
			rule_broken(problem, ctx, "field tag: C on page %x, which was fetched before", p);
			broken++;
		} else if (rec->tag == 'F' && !c->seen[p]) {
			rule_broken(problem, ctx, "field tag: F on page %x, which was never fetched", p);
			broken++;
		}
		if (c->resident[p]) {
			rule_broken(problem, ctx, "field fetched page: page %x is resident already", p);
			broken++;
		}
	}
	if (rec->dirt == 'N') {
		if (c->evicted) {
			problem(ctx, "field dirt: N after the first eviction");
			broken++;
		} else {
			c->fills++;
		}
		if ((known & LP_PI_EVICTED_KNOWN) && e != 0) {
			rule_broken(problem, ctx, "field evicted page: N with evicted page %x, not 0000", e);
			broken++;
		}
	} else {
		if (known & LP_PI_EVICTED_KNOWN) {
			if (!c->resident[e]) {
				rule_broken(problem, ctx, "field evicted page: page %x is not resident", e);
				broken++;
			}
			c->resident[e] = false;
		}
		c->evicted = true;
	}
	if (known & LP_PI_FETCHED_KNOWN)
		c->resident[p] = c->seen[p] = true;
	return broken;
}

/* ---- validation ---- */

typedef struct validation {
	lp_warn_fn report;
	void *ctx;
	const char *name;
	uint64_t index;   /* of the record being checked */
	uint64_t problems;
} validation;

/* A broken rule of the record being checked, as lp_pi_check words it. */
static void broken_rule(void *ctx, const char *what)
{
	validation *v = ctx;
	char line[1200];
	snprintf(line, sizeof line, "%s: record %" PRIu64 ": %s", v->name, v->index, what);
	v->report(v->ctx, line);
	v->problems++;
}

/* A damaged field, reported in full by the reader. */
static void damaged_field(validation *v, const lp_error *bad)
{
	v->report(v->ctx, bad->msg);
	v->problems++;
}

int lp_pi_validate(lp_byte_source *src, lp_warn_fn report, void *ctx, lp_pi_validation *res,
		   lp_error *err)
{
	memset(res, 0, sizeof *res);
	lp_pi_reader *r = lp_pi_reader_new(src);
	lp_pi_check *check = lp_pi_check_new();
	validation v = {.report = report, .ctx = ctx, .name = lp_pi_reader_name(r)};
	/* a torn record is one more broken rule here, never just a warning */
	lp_torn_policy strict = {.strict = true};
	lp_pi_record rec;
	page_fields f;
	int got, st = 0;
	while ((got = next_record(r, &rec, &f, &strict, err)) != 0) {
		/* A record's length depends on its dirt tag alone: a damaged
		 * field is reported, and the record still applied as far as
		 * its readable fields go; the fields before a bad dirt tag are
		 * still checked, then the boundaries are lost. */
		if (got < 0 && got != BAD_DIRT) {
			if (err->status != LP_EINPUT)
				st = err->status;
			else
				damaged_field(&v, err);
			break;
		}
		v.index = lp_pi_reader_index(r) - (got == BAD_DIRT ? 0 : 1);
		unsigned known = LP_PI_ALL_KNOWN;
		lp_error bad;
		if (check_tag(r, v.index, rec.tag, &bad)) {
			damaged_field(&v, &bad);
			known &= ~(unsigned)LP_PI_TAG_KNOWN;
		}
		if (parse_page(r, v.index, f[0], "fetched page", &rec.fetched, &bad)) {
			damaged_field(&v, &bad);
			known &= ~(unsigned)LP_PI_FETCHED_KNOWN;
		}
		if (got == BAD_DIRT) {
			damaged_field(&v, err);
			break;
		}
		if (parse_page(r, v.index, f[1], "evicted page", &rec.evicted, &bad)) {
			damaged_field(&v, &bad);
			known &= ~(unsigned)LP_PI_EVICTED_KNOWN;
		}
		lp_pi_check_record(check, &rec, known, broken_rule, &v);
	}
	res->records = lp_pi_reader_index(r);
	res->fills = lp_pi_check_fills(check);
	res->evicted = lp_pi_check_evicted(check);
	res->problems = v.problems;
	lp_pi_check_free(check);
	lp_pi_reader_close(r);
	return st;
}
