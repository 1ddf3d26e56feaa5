/* The records of a per-process task file read carefully: any line, with
 * a message naming the field it refuses (formats/taskline.h). */
#include "formats/taskline.h"

#include <string.h>

#include "formats/kern.h"

static const char event_tags[] = "FTESXMUBKGHDQCV";

/* Parse a reference line "type timestamp length vpn canonical" into *ref;
 * -1 with err naming the field (no file or line). */
static int parse_reference(const char *s, size_t len, lp_sched_ref *ref, lp_error *err)
{
	static const char *const fields[] = {"timestamp", "length", "vpn", "canonical"};
	static const int field_bits[] = {64, 8, 20, 64}; /* a byte; a 32-bit address's page */
	if (lp_ref_type_index(s[0]) < 0 || (len > 1 && s[1] != ' '))
		return lp_fail(err, LP_EINPUT, "field type: not one of r w i R W I, nor an event tag");
	const char *p = s + 1, *end = s + len;
	uint64_t values[4];
	for (size_t f = 0; f < 4; f++) {
		if (p >= end || *p != ' ' || p + 1 >= end)
			return lp_fail(err, LP_EINPUT, "field %s: missing", fields[f]);
		const char *start = ++p;
		p = memchr(start, ' ', (size_t)(end - start));
		if (!p)
			p = end;
		if (lp_parse_hex(start, (size_t)(p - start), &values[f]) < 0 ||
		    (field_bits[f] < 64 && values[f] >> field_bits[f]))
			return lp_fail(err, LP_EINPUT, "field %s: not a hex number of at most %d bits",
				       fields[f], field_bits[f]);
	}
	if (p != end)
		return lp_fail(err, LP_EINPUT, "more than five fields");
	ref->type = s[0];
	ref->timestamp = values[0];
	ref->canonical = values[3];
	return 0;
}

/* lp_task_record_parse: the careful path, which explains what it refuses. */
int lp_task_record_parse(char *line, size_t len, lp_sched_ref *ref, lp_sched_event *ev, lp_error *err)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (len == 0)
		return lp_fail(err, LP_EINPUT, "an empty line is not a per-process record"), -1;
	if (!(len >= 2 && line[1] == ' ' && strchr(event_tags, line[0])))
		return parse_reference(line, len, ref, err) ? -1 : 1;
	lp_event event;
	if (lp_kern_parse_line(line, len, &event, err) < 0)
		return -1;
	*ev = (lp_sched_event){.tag = line[0], .timestamp = event.timestamp};
	if (event.tag == LP_TAG_F || event.tag == LP_TAG_T) {
		ev->parent = event.f[0];
		ev->child = event.f[1];
	} else if (event.tag == LP_TAG_X) {
		ev->task = event.f[0];
	}
	return 0;
}
