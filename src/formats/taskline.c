/* The records of a per-process task file read carefully: any line or
 * binary record, with a message naming the field it refuses
 * (formats/taskline.h). */
#include "formats/taskline.h"

#include <inttypes.h>
#include <string.h>

#include "formats/kern.h"

static const char event_tags[] = "FTESXMUBKGHDQCV";

/* Parse a reference line "type timestamp length vpn canonical" into *rec;
 * -1 with err naming the field (no file or line). */
static int parse_reference(const char *s, size_t len, lp_task_record *rec, lp_error *err)
{
	static const char *const fields[] = {"timestamp", "length", "vpn", "canonical"};
	static const int field_bits[] = {64, 8, LP_TASK_VPN_BITS, 64}; /* a byte; a page */
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
	rec->ref = (lp_sched_ref){.type = s[0], .timestamp = values[0], .canonical = values[3]};
	rec->length = (uint8_t)values[1];
	rec->vpn = values[2];
	return 0;
}

/* An event line (trailing spaces and '\r' removed, NUL-terminated) into
 * rec->ev; -1 with err naming the field. */
static int parse_event(char *line, size_t len, lp_task_record *rec, lp_error *err)
{
	lp_event event;
	if (lp_kern_parse_line(line, len, &event, err) < 0)
		return -1;
	rec->ev = (lp_sched_event){.tag = line[0], .timestamp = event.timestamp};
	if (event.tag == LP_TAG_F || event.tag == LP_TAG_T) {
		rec->ev.parent = event.f[0];
		rec->ev.child = event.f[1];
	} else if (event.tag == LP_TAG_X) {
		rec->ev.task = event.f[0];
	}
	rec->line = line;
	rec->len = len;
	return 0;
}

static bool is_event_line(const char *line, size_t len)
{
	return len >= 2 && line[1] == ' ' && line[0] && strchr(event_tags, line[0]);
}

/* lp_task_record_parse: the careful path, which explains what it refuses. */
enum lp_task_kind lp_task_record_parse(char *line, size_t len, lp_task_record *rec, lp_error *err)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (len == 0)
		return lp_fail(err, LP_EINPUT, "an empty line is not a per-process record"), LP_TASK_ERROR;
	if (!is_event_line(line, len))
		return parse_reference(line, len, rec, err) ? LP_TASK_ERROR : LP_TASK_REF;
	return parse_event(line, len, rec, err) ? LP_TASK_ERROR : LP_TASK_EVENT;
}

int lp_task_form_start(lp_inbuf *b, const char *name, lp_error *err)
{
	ssize_t avail = lp_inbuf_fill(b, LP_TASK_BIN_HEADER_SIZE, err);
	if (avail < 0)
		return -1;
	const char *p = b->data + b->pos;
	if (avail < LP_TASK_BIN_MAGIC_SIZE || memcmp(p, LP_TASK_BIN_HEADER, LP_TASK_BIN_MAGIC_SIZE))
		return 0;
	if (avail < LP_TASK_BIN_HEADER_SIZE)
		return lp_fail(err, LP_EINPUT, "%s: byte %d: field version: cut short (the binary task "
			       "form's header is 8 bytes)", name, LP_TASK_BIN_MAGIC_SIZE), -1;
	if (memcmp(p + LP_TASK_BIN_MAGIC_SIZE, &LP_TASK_BIN_HEADER[LP_TASK_BIN_MAGIC_SIZE], 2))
		return lp_fail(err, LP_EINPUT, "%s: byte %d: field version: %02x %02x is not 01 00",
			       name, LP_TASK_BIN_MAGIC_SIZE, (unsigned char)p[LP_TASK_BIN_MAGIC_SIZE],
			       (unsigned char)p[LP_TASK_BIN_MAGIC_SIZE + 1]), -1;
	b->pos += LP_TASK_BIN_HEADER_SIZE;
	return 1;
}

/* The field of a reference record that byte k of it belongs to. */
static const char *ref_field_at(size_t k)
{
	return k < 1 ? "type" : k < 2 ? "length" : k < 10 ? "timestamp" : k < 18 ? "vpn" : "canonical";
}

enum lp_task_kind lp_task_bin_next(lp_inbuf *b, const char *name, uint64_t offset,
				   lp_task_record *rec, size_t *size, lp_error *err)
{
	ssize_t avail = lp_inbuf_fill(b, LP_TASK_BIN_REF_SIZE, err);
	if (avail <= 0)
		return avail < 0 ? LP_TASK_ERROR : LP_TASK_END;
	const unsigned char *p = (const unsigned char *)b->data + b->pos;
	if (lp_ref_type_index((char)p[0]) >= 0) {
		if (avail < LP_TASK_BIN_REF_SIZE)
			return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field %s: the reference record "
				       "is cut short (%zd of %d bytes)", name, offset,
				       ref_field_at((size_t)avail), avail, LP_TASK_BIN_REF_SIZE),
			       LP_TASK_ERROR;
		uint64_t vpn = lp_load_u64(p + 10, false);
		if (vpn >> LP_TASK_VPN_BITS)
			return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field vpn: %" PRIx64 " has "
				       "more than %d bits", name, offset, vpn, LP_TASK_VPN_BITS),
			       LP_TASK_ERROR;
		rec->ref = (lp_sched_ref){
			.type = (char)p[0],
			.timestamp = lp_load_u64(p + 2, false),
			.canonical = lp_load_u64(p + 18, false),
		};
		rec->length = p[1];
		rec->vpn = vpn;
		b->pos += LP_TASK_BIN_REF_SIZE;
		*size = LP_TASK_BIN_REF_SIZE;
		return LP_TASK_REF;
	}
	if (p[0] != LP_TASK_BIN_EVENT) {
		char shown[8];
		if (p[0] > ' ' && p[0] < 0x7f)
			g_snprintf(shown, sizeof shown, "'%c'", p[0]);
		else
			g_snprintf(shown, sizeof shown, "\\x%02x", p[0]);
		return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field type: %s is not a record "
			       "type (r w i R W I, or K for an event)", name, offset, shown),
		       LP_TASK_ERROR;
	}
	if (avail < LP_TASK_BIN_EVENT_HEAD)
		return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field length: the event record is "
			       "cut short (%zd of %d bytes)", name, offset, avail, LP_TASK_BIN_EVENT_HEAD),
		       LP_TASK_ERROR;
	size_t len = (size_t)p[1] | (size_t)p[2] << 8;
	if (len > LP_TASK_BIN_EVENT_MAX)
		return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field length: %zu is more than %d",
			       name, offset, len, LP_TASK_BIN_EVENT_MAX), LP_TASK_ERROR;
	*size = LP_TASK_BIN_EVENT_HEAD + len;
	if ((avail = lp_inbuf_fill(b, *size, err)) < 0)
		return LP_TASK_ERROR;
	p = (const unsigned char *)b->data + b->pos;
	if ((size_t)avail < *size)
		return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field line: the event record is "
			       "cut short (%zd of %zu bytes)", name, offset, avail, *size), LP_TASK_ERROR;
	memcpy(rec->copy, p + LP_TASK_BIN_EVENT_HEAD, len);
	rec->copy[len] = '\0';
	/* As the text form holds it: one line, nothing that its reader
	 * would remove. */
	lp_error why;
	if (!is_event_line(rec->copy, len) || memchr(rec->copy, '\n', len) || memchr(rec->copy, '\0', len) ||
	    rec->copy[len - 1] == ' ' || rec->copy[len - 1] == '\r')
		return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": field line: not an event line "
			       "(a tag, a space, its fields; no newline, no trailing space)", name,
			       offset), LP_TASK_ERROR;
	if (parse_event(rec->copy, len, rec, &why))
		return lp_fail(err, LP_EINPUT, "%s: byte %" PRIu64 ": %s", name, offset, why.msg),
		       LP_TASK_ERROR;
	b->pos += *size;
	return LP_TASK_EVENT;
}

int lp_task_file_start(lp_task_file *f, lp_inbuf *b, const char *name, bool need_binary,
		       lp_error *err)
{
	*f = (lp_task_file){.b = b, .name = name};
	int form = lp_task_form_start(b, name, err);
	if (form < 0)
		return -1;
	if (!form && need_binary)
		return lp_fail(err, LP_EINPUT, "%s: byte 0: field header: not the binary task form "
			       "(no LPTASK header)", name), -1;
	f->binary = form;
	f->offset = form ? LP_TASK_BIN_HEADER_SIZE : 0;
	return 0;
}

enum lp_task_kind lp_task_file_next(lp_task_file *f, lp_task_record *rec, lp_error *err)
{
	if (f->binary) {
		size_t size = 0;
		enum lp_task_kind kind = lp_task_bin_next(f->b, f->name, f->offset, rec, &size, err);
		f->offset += size;
		return kind;
	}
	char *line;
	size_t len;
	int got = lp_inbuf_line(f->b, &line, &len, err);
	if (got == LP_INBUF_LONG_LINE)
		return lp_inbuf_long_line(err, f->name, f->line + 1), LP_TASK_ERROR;
	if (got <= 0)
		return got < 0 ? LP_TASK_ERROR : LP_TASK_END;
	f->line++;
	f->offset += len + 1;
	lp_error why;
	enum lp_task_kind kind = lp_task_record_parse(line, len, rec, &why);
	if (kind == LP_TASK_ERROR)
		lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": %s", f->name, f->line, why.msg);
	return kind;
}

/* Bytes gathered before they are written out. */
#define CONVERT_BUFFER (256 * 1024)

int lp_task_convert(lp_byte_source *src, bool need_binary, bool to_binary,
		    const lp_progress *progress, lp_output *out, lp_error *err)
{
	lp_progress_info done = {.fraction = -1};
	lp_task_file tf;
	if (lp_task_file_start(&tf, &src->b, lp_byte_source_name(src), need_binary, err))
		return err->status;
	lp_task_record *rec = g_new(lp_task_record, 1);
	/* Room for the longest record of either form after the bytes held. */
	char *buf = g_malloc(CONVERT_BUFFER + LP_TASK_BIN_EVENT_HEAD + LP_TASK_BIN_EVENT_MAX + 1);
	size_t used = 0;
	if (to_binary) {
		memcpy(buf, LP_TASK_BIN_HEADER, LP_TASK_BIN_HEADER_SIZE);
		used = LP_TASK_BIN_HEADER_SIZE;
	}
	int rc = 0;
	for (;;) {
		enum lp_task_kind kind = lp_task_file_next(&tf, rec, err);
		if (kind == LP_TASK_ERROR)
			rc = err->status;
		if (kind == LP_TASK_ERROR || kind == LP_TASK_END)
			break;
		char *p = buf + used;
		if (kind == LP_TASK_EVENT) {
			done.events++;
			if (to_binary) {
				p += lp_task_bin_encode_event((unsigned char *)p, rec->line, rec->len);
			} else {
				memcpy(p, rec->line, rec->len);
				p += rec->len;
				*p++ = '\n';
			}
		} else {
			done.records++;
			lp_ref ref = {
				.type = rec->ref.type,
				.timestamp = rec->ref.timestamp,
				.length = rec->length,
				.address = rec->vpn << LP_PAGE_SHIFT,
			};
			if (to_binary) {
				lp_task_bin_encode((unsigned char *)p, &ref, rec->ref.canonical);
				p += LP_TASK_BIN_REF_SIZE;
			} else {
				p += lp_task_line_encode(p, &ref, rec->ref.canonical);
			}
		}
		used = (size_t)(p - buf);
		if (used >= CONVERT_BUFFER) {
			if ((rc = lp_output_write(out, buf, used, err)))
				break;
			used = 0;
			if (progress && progress->fn)
				progress->fn(progress->ctx, &done);
		}
	}
	if (!rc && used)
		rc = lp_output_write(out, buf, used, err);
	g_free(buf);
	g_free(rec);
	return rc;
}

int lp_task_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		 lp_output *out, lp_error *err)
{
	(void)endian; /* the binary form is little-endian */
	(void)policy; /* a record cut short is an error, never a warning */
	int rc = lp_task_convert(src, false, false, NULL, out, err);
	lp_byte_source_close(src);
	return rc;
}
