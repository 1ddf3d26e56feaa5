/* Kernel event traces (laplace-formats(5), "KERNEL EVENT TRACE"): one event
 * per line, a one-character tag, then hex fields, then for E and M a name
 * running to the end of the line, at most LP_LINE_MAX bytes in all. */
#include "formats/kern.h"

#include <stdbool.h>
#include <string.h>

#include <glib.h>

#include "io/bytesrc.h"
#include "formats/refio.h"
#include "core/numbers.h"

typedef struct kern_reader {
	lp_event_source base; /* first: the source is the reader */
	lp_byte_source src;
	uint64_t line_no;
} kern_reader;

static bool all_hex_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!g_ascii_isxdigit(s[i]))
			return false;
	return len > 0;
}


static size_t token_end(const char *line, size_t len, size_t i)
{
	while (i < len && line[i] != ' ')
		i++;
	return i;
}

int lp_kern_parse_line(char *line, size_t len, lp_event *ev, lp_error *err)
{
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (len == 0 || line[0] == '#')
		return 0;
	char q[LP_QUOTE_SIZE];
	size_t tag_len = token_end(line, len, 0);
	if (tag_len != 1)
		return lp_fail(err, LP_EINPUT, "bad tag '%s': a tag is one character followed by a space",
			       lp_quote(q, line, tag_len)), -1;
	int tag = lp_tag_from_char(line[0]);
	if (tag < 0)
		return lp_fail(err, LP_EINPUT, "unknown tag '%s'", lp_quote(q, line, 1)), -1;
	const lp_tag_info *info = &lp_tag_table[tag];
	memset(ev, 0, sizeof *ev);
	ev->tag = (enum lp_tag)tag;
	ev->line = line;
	ev->line_len = len;
	size_t i = 1;
	/* Field -1 is the timestamp, then the tag's numeric fields, each after
	 * exactly one space: a second one makes an empty field. */
	for (int f = -1; f < info->nfields; f++) {
		const char *field = f < 0 ? "timestamp" : info->fields[f];
		if (i++ == len)
			return lp_fail(err, LP_EINPUT, "tag %c: missing field %s", info->tag, field), -1;
		size_t end = token_end(line, len, i);
		if (end == i)
			return lp_fail(err, LP_EINPUT, "tag %c: field %s: empty (one space separates "
				       "fields)", info->tag, field), -1;
		uint64_t v;
		if (lp_parse_hex(line + i, end - i, &v) < 0) {
			lp_quote(q, line + i, end - i);
			if (all_hex_digits(line + i, end - i))
				return lp_fail(err, LP_EINPUT, "tag %c: field %s: %s does not fit 64 bits",
					       info->tag, field, q), -1;
			return lp_fail(err, LP_EINPUT, "tag %c: field %s: bad hex number '%s'",
				       info->tag, field, q), -1;
		}
		if (f < 0)
			ev->timestamp = v;
		else
			ev->f[f] = v;
		i = end;
	}
	if (info->has_name) {
		/* The name is everything after the one space that ends the last
		 * number, spaces included (the trailing ones are gone already). */
		if (i == len)
			return lp_fail(err, LP_EINPUT, "tag %c: missing field name", info->tag), -1;
		ev->name = line + i + 1;
		return 1;
	}
	if (i < len) {
		while (line[i] == ' ')
			i++;
		size_t end = token_end(line, len, i);
		return lp_fail(err, LP_EINPUT, "tag %c: extra field '%s'", info->tag,
			       lp_quote(q, line + i, end - i)), -1;
	}
	return 1;
}

static int kern_next(lp_event_source *s, lp_event *ev, lp_error *err)
{
	kern_reader *r = (kern_reader *)s;
	for (;;) {
		char *line;
		size_t len;
		int got = lp_inbuf_line(&r->src.b, &line, &len, err);
		if (got == LP_INBUF_LONG_LINE)
			return lp_inbuf_long_line(err, lp_input_name(r->src.in), r->line_no + 1);
		if (got <= 0)
			return got;
		r->line_no++;
		lp_error why;
		int parsed = lp_kern_parse_line(line, len, ev, &why);
		if (parsed < 0)
			return lp_fail(err, LP_EINPUT, "%s:%" G_GUINT64_FORMAT ": %s",
				       lp_input_name(r->src.in), r->line_no, why.msg), -1;
		if (parsed > 0) {
			ev->line_no = r->line_no;
			return 1;
		}
	}
}

static char *kern_where(const lp_event_source *s, const lp_event *ev)
{
	const kern_reader *r = (const kern_reader *)s;
	return g_strdup_printf("%s:%" G_GUINT64_FORMAT, lp_input_name(r->src.in), ev->line_no);
}

static void kern_close(lp_event_source *s)
{
	kern_reader *r = (kern_reader *)s;
	lp_byte_source_clear(&r->src);
	g_free(r);
}

static const lp_event_source_ops kern_ops = {
	.next = kern_next,
	.where = kern_where,
	.close = kern_close,
};

lp_event_source *lp_kern_reader_open(const char *path, lp_error *err)
{
	kern_reader *r = g_new0(kern_reader, 1);
	if (lp_byte_source_init(&r->src, path, err)) {
		g_free(r);
		return NULL;
	}
	r->base.ops = &kern_ops;
	return &r->base;
}

size_t lp_kern_format_line(char *dst, char tag, uint64_t timestamp, const uint64_t *fields,
			   int nfields, const char *name)
{
	char *p = dst;
	*p++ = tag;
	*p++ = ' ';
	p += lp_fmt_hex(p, timestamp);
	for (int i = 0; i < nfields; i++) {
		*p++ = ' ';
		p += lp_fmt_hex(p, fields[i]);
	}
	if (name) {
		size_t n = strlen(name);
		*p++ = ' ';
		memcpy(p, name, n);
		p += n;
	}
	*p++ = '\n';
	return (size_t)(p - dst);
}
