/* libFuzzer target: the kernel event reader (section 2). Checks: line
 * numbers grow; an event has a name exactly when its tag takes one; the
 * line as kept in the event parses again to the same event, and so does
 * the event written back in canonical form (lowercase hex, no leading
 * zeros, one space); a plain trace read to the end has one event per line
 * that is neither blank nor a comment, and no line over 4096 bytes. */
#include "fuzz_input.h"

#include <inttypes.h>
#include <stdbool.h>

#include <glib.h>

#include "io/inbuf.h"
#include "formats/kern.h"

static size_t name_len(const lp_event *ev)
{
	return ev->line_len - (size_t)(ev->name - ev->line);
}

static void check_same(const lp_event *a, const lp_event *b)
{
	FUZZ_CHECK(a->tag == b->tag && a->timestamp == b->timestamp);
	for (int f = 0; f < LP_EVENT_MAX_FIELDS; f++)
		FUZZ_CHECK(a->f[f] == b->f[f]);
	FUZZ_CHECK(!a->name == !b->name);
	if (a->name)
		FUZZ_CHECK(name_len(a) == name_len(b) && !memcmp(a->name, b->name, name_len(a)));
}

static void check_event(const lp_event *ev)
{
	FUZZ_CHECK((int)ev->tag >= 0 && ev->tag < LP_TAG_COUNT);
	const lp_tag_info *info = &lp_tag_table[ev->tag];
	FUZZ_CHECK(ev->line && ev->line_len > 0 && ev->line_len <= LP_LINE_MAX);
	FUZZ_CHECK(ev->line[0] == info->tag && ev->line[ev->line_len] == '\0');
	FUZZ_CHECK(!ev->name == !info->has_name);
	if (ev->name)
		FUZZ_CHECK(ev->name > ev->line && ev->name <= ev->line + ev->line_len);
	for (int f = info->nfields; f < LP_EVENT_MAX_FIELDS; f++)
		FUZZ_CHECK(ev->f[f] == 0);

	/* The line as kept parses to the same event. */
	static char line[LP_LINE_MAX + 1];
	memcpy(line, ev->line, ev->line_len + 1);
	lp_event again;
	lp_error err;
	FUZZ_CHECK(lp_kern_parse_line(line, ev->line_len, &again, &err) == 1);
	check_same(ev, &again);

	/* And so does its canonical form (longer than the original at most by
	 * the name's spaces, never by much: fields only lose padding). */
	static char canon[LP_LINE_MAX + 8 * 17 + 2];
	int len = snprintf(canon, sizeof canon, "%c %" PRIx64, info->tag, ev->timestamp);
	for (int f = 0; f < info->nfields; f++)
		len += snprintf(canon + len, sizeof canon - (size_t)len, " %" PRIx64, ev->f[f]);
	if (ev->name) {
		canon[len++] = ' ';
		memcpy(canon + len, ev->name, name_len(ev));
		len += (int)name_len(ev);
	}
	canon[len] = '\0';
	FUZZ_CHECK(lp_kern_parse_line(canon, (size_t)len, &again, &err) == 1);
	check_same(ev, &again);
}

/* Lines of a plain trace that are events: neither blank (after trailing
 * spaces and '\r') nor comments. -1 when a line is too long. */
static long event_lines(const uint8_t *data, size_t size)
{
	long events = 0;
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = (nl ? (size_t)(nl - data) : size) - at;
		if (len > LP_LINE_MAX)
			return -1;
		size_t end = len;
		while (end > 0 && (data[at + end - 1] == ' ' || data[at + end - 1] == '\r'))
			end--;
		if (end > 0 && data[at] != '#')
			events++;
		at += len + 1;
	}
	return events;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lp_error err;
	lp_event_source *r = lp_kern_reader_open(fuzz_file(data, size), &err);
	FUZZ_CHECK(r);
	lp_event ev;
	uint64_t prev_line = 0;
	long events = 0;
	int rc;
	while ((rc = lp_event_source_next(r, &ev, &err)) > 0) {
		FUZZ_CHECK(ev.line_no > prev_line);
		prev_line = ev.line_no;
		check_event(&ev);
		events++;
	}
	lp_event_source_close(r);
	if (rc < 0)
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
	if (!fuzz_compressed(data, size)) {
		long want = event_lines(data, size);
		if (rc == 0)
			FUZZ_CHECK(events == want);
		else
			FUZZ_CHECK(err.status == LP_EINPUT);
	}
	return 0;
}
