/* Basic merge streams read back (laplace-formats(5), "BASIC MERGE OUTPUT" and
 * "FORMS FOR SIMULATORS"): "type canonical" lines, or the binary form; and
 * the LRU behaviour sequence of one. */
#include "formats/basicin.h"

#include <inttypes.h>
#include <string.h>

#include "core/byteorder.h"
#include "formats/forms.h"
#include "formats/kern.h"
#include "formats/taskline.h"
#include "core/numbers.h"

/* The text forms: basic lines, or the lines of a per-process task file
 * (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"), told apart by the first
 * line. */
enum text_form { TEXT_UNKNOWN, TEXT_BASIC, TEXT_TASK };

struct lp_basic_reader {
	lp_byte_source *src;
	bool binary;
	lp_task_file task;        /* a task file in the binary task form... */
	lp_task_record *task_rec; /* ...and its record, when one is read */
	enum text_form text;
	uint64_t done;    /* lines (text) or records (binary) read so far */
	lp_error failed;  /* once status is set, what every read returns */
};

/* Tell the forms apart by the header; check its version. */
static int read_header(lp_basic_reader *r, lp_error *err)
{
	if (lp_task_file_start(&r->task, &r->src->b, lp_byte_source_name(r->src), false, err))
		return err->status;
	if (r->task.binary) {
		r->task_rec = g_new(lp_task_record, 1);
		return 0;
	}
	ssize_t avail = lp_inbuf_fill(&r->src->b, LP_BIN_HEADER_SIZE, err);
	if (avail < 0)
		return err->status;
	const unsigned char *p = lp_byte_source_data(r->src);
	if (avail < LP_BIN_MAGIC_SIZE || memcmp(p, LP_BIN_HEADER, LP_BIN_MAGIC_SIZE))
		return 0;
	const char *name = lp_byte_source_name(r->src);
	if (avail < LP_BIN_HEADER_SIZE)
		return lp_fail(err, LP_EINPUT, "%s: header (byte %d): field version: missing", name,
			       LP_BIN_MAGIC_SIZE);
	if (p[LP_BIN_MAGIC_SIZE] != LP_BIN_HEADER[LP_BIN_MAGIC_SIZE])
		return lp_fail(err, LP_EINPUT, "%s: header (byte %d): field version: %u is not %u", name,
			       LP_BIN_MAGIC_SIZE,
			       p[LP_BIN_MAGIC_SIZE], (unsigned char)LP_BIN_HEADER[LP_BIN_MAGIC_SIZE]);
	r->src->b.pos += LP_BIN_HEADER_SIZE;
	r->binary = true;
	return 0;
}

lp_basic_reader *lp_basic_reader_new(lp_byte_source *src, lp_error *err)
{
	lp_basic_reader *r = g_new0(lp_basic_reader, 1);
	r->src = src;
	if (read_header(r, err)) {
		lp_basic_close(r);
		return NULL;
	}
	return r;
}

bool lp_basic_reader_binary(const lp_basic_reader *r) { return r->binary; }

lp_basic_reader *lp_basic_open(const char *path, lp_error *err)
{
	lp_error dropped = {0}; /* where an unwanted message goes */
	if (!err)
		err = &dropped;
	if (!path)
		return lp_fail(err, LP_EUSAGE, "lp_basic_open: argument path: NULL"), NULL;
	lp_byte_source *src = lp_byte_source_open(path, err);
	return src ? lp_basic_reader_new(src, err) : NULL;
}

void lp_basic_close(lp_basic_reader *r)
{
	if (!r)
		return;
	lp_byte_source_close(r->src);
	g_free(r->task_rec);
	g_free(r);
}

/* The length of s[0, len) without its trailing spaces and '\r'. */
static size_t trimmed_length(const char *s, size_t len)
{
	while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	return len;
}

/* Parse the line s[0, len) (its '\n' removed) into *ref; on error the
 * message names the field but neither file nor line. */
static int parse_line(const char *s, size_t len, lp_basic_ref *ref, lp_error *err)
{
	len = trimmed_length(s, len);
	if (len == 0 || lp_ref_type_index(s[0]) < 0 || (len > 1 && s[1] != ' '))
		return lp_fail(err, LP_EINPUT, "field type: not one of r w i R W I");
	if (len < 3)
		return lp_fail(err, LP_EINPUT, "field canonical: missing");
	if (lp_parse_hex(s + 2, len - 2, &ref->canonical) < 0)
		return lp_fail(err, LP_EINPUT, "field canonical: not a hex number of at most 64 bits");
	ref->type = s[0];
	return 0;
}

/* Whether the line s[0, len) (trailing spaces and '\r' removed) is meant
 * as a kernel event, whose lines a task file holds too: a tag, then a space. */
static bool is_event_line(const char *s, size_t len)
{
	return len >= 2 && s[1] == ' ' && s[0] && strchr(lp_tag_chars, s[0]);
}

/* Parse a reference line of a task file, "type timestamp length vpn
 * canonical" (trailing spaces and '\r' removed), into *ref; -1 with err
 * set (field named) if it is none. */
static int parse_task_reference(const char *s, size_t len, lp_basic_ref *ref, lp_error *err)
{
	static const char *const fields[] = {"timestamp", "length", "vpn", "canonical"};
	/* A length is a byte, a vpn a 64-bit address's page number. */
	static const int field_bits[] = {64, 8, LP_TASK_VPN_BITS, 64};
	if (len == 0 || lp_ref_type_index(s[0]) < 0 || (len > 1 && s[1] != ' '))
		return lp_fail(err, LP_EINPUT, "field type: not one of r w i R W I, nor an event");
	const char *p = s + 1, *end = s + len;
	uint64_t value = 0;
	for (size_t f = 0; f < G_N_ELEMENTS(fields); f++) {
		if (p >= end || *p != ' ' || p + 1 >= end)
			return lp_fail(err, LP_EINPUT, "field %s: missing", fields[f]);
		const char *start = ++p;
		while (p < end && *p != ' ')
			p++;
		if (lp_parse_hex(start, (size_t)(p - start), &value) < 0 ||
		    (field_bits[f] < 64 && value >> field_bits[f]))
			return lp_fail(err, LP_EINPUT, "field %s: not a hex number of at most %d bits",
				       fields[f], field_bits[f]);
	}
	if (p != end)
		return lp_fail(err, LP_EINPUT, "more than five fields");
	ref->type = s[0];
	ref->canonical = value;
	return 0;
}

/* Parse a line of a task file (s[len] is its NUL; the line may be
 * changed): a reference into *ref (1), or an event line (0, skipped, but
 * checked as the kernel trace's reader checks it, so that a damaged line
 * is not dropped unread); -1 with err set (field named) if it is neither. */
static int parse_task_line(char *s, size_t len, lp_basic_ref *ref, lp_error *err)
{
	size_t trimmed = trimmed_length(s, len);
	if (is_event_line(s, trimmed)) {
		lp_event ev;
		return lp_kern_parse_line(s, len, &ev, err) < 0 ? -1 : 0;
	}
	return parse_task_reference(s, trimmed, ref, err) ? -1 : 1;
}

/* Which text form the line s[0, len) begins: basic if it is a basic line,
 * a task file if it is a line of one; a bad line of four fields or more
 * gets the task file's error, which names the field. */
static enum text_form text_form_of(const char *s, size_t len)
{
	lp_basic_ref ref;
	if (parse_line(s, len, &ref, NULL) == 0)
		return TEXT_BASIC;
	len = trimmed_length(s, len);
	size_t spaces = 0;
	for (size_t i = 0; i < len; i++)
		spaces += s[i] == ' ';
	return is_event_line(s, len) || parse_task_reference(s, len, &ref, NULL) == 0 || spaces >= 3
		       ? TEXT_TASK : TEXT_BASIC;
}

bool lp_basic_starts_as_text(const char *data, size_t n)
{
	const char *nl = memchr(data, '\n', n);
	size_t len = nl ? (size_t)(nl - data) : n;
	lp_basic_ref ref;
	if (parse_line(data, len, &ref, NULL) == 0)
		return true;
	len = trimmed_length(data, len);
	return is_event_line(data, len) || parse_task_reference(data, len, &ref, NULL) == 0;
}

/* Up to cap references into out, *count of them; 0 or an lp_status. */
static int read_text(lp_basic_reader *r, lp_basic_ref *out, size_t cap, size_t *count,
		     lp_error *err)
{
	while (*count < cap) {
		char *line;
		size_t len;
		int got = lp_inbuf_line(&r->src->b, &line, &len, err);
		if (got == LP_INBUF_LONG_LINE) {
			lp_inbuf_long_line(err, lp_byte_source_name(r->src), r->done + 1);
			return err->status;
		}
		if (got < 0)
			return err->status;
		if (got == 0)
			break;
		r->done++;
		if (r->text == TEXT_UNKNOWN)
			r->text = text_form_of(line, len);
		lp_error why;
		int got_ref = r->text == TEXT_TASK ? parse_task_line(line, len, &out[*count], &why)
						   : parse_line(line, len, &out[*count], &why) ? -1 : 1;
		if (got_ref < 0)
			return lp_fail(err, LP_EINPUT, "%s:%" PRIu64 ": %s", lp_byte_source_name(r->src),
				       r->done, why.msg);
		*count += (size_t)got_ref;
	}
	return 0;
}

/* The references of a task file in the binary task form, its events
 * read (and checked) but left out. */
static int read_task_binary(lp_basic_reader *r, lp_basic_ref *out, size_t cap, size_t *count,
			    lp_error *err)
{
	while (*count < cap) {
		enum lp_task_kind kind = lp_task_file_next(&r->task, r->task_rec, err);
		if (kind == LP_TASK_ERROR)
			return err->status;
		if (kind == LP_TASK_END)
			break;
		if (kind == LP_TASK_REF)
			out[(*count)++] = (lp_basic_ref){.type = r->task_rec->ref.type,
							 .canonical = r->task_rec->ref.canonical};
	}
	return 0;
}

/* Where record index of the bin form starts in the stream. */
static uint64_t bin_offset(uint64_t index)
{
	return LP_BIN_HEADER_SIZE + index * LP_BIN_WORD_SIZE;
}

static int read_binary(lp_basic_reader *r, lp_basic_ref *out, size_t cap, size_t *count,
		       lp_error *err)
{
	static const lp_torn_policy torn_is_an_error = {.strict = true};
	while (*count < cap) {
		ssize_t n = lp_byte_source_records(r->src, LP_BIN_WORD_SIZE, cap - *count, r->done,
						   &torn_is_an_error, err);
		if (n < 0 && err->status == LP_EINPUT) {
			/* The torn last record: say where it starts. */
			char torn[sizeof err->msg];
			g_strlcpy(torn, err->msg, sizeof torn);
			return lp_fail(err, LP_EINPUT, "%s, at byte %" PRIu64, torn, bin_offset(r->done));
		}
		if (n < 0)
			return err->status;
		if (n == 0)
			break;
		/* Locals, not *count and r->done: the stores into out could
		 * alias them, and reloading them each record halves the rate. */
		const unsigned char *p = lp_byte_source_data(r->src);
		lp_basic_ref *to = out + *count;
		for (ssize_t i = 0; i < n; i++, p += LP_BIN_WORD_SIZE) {
			uint64_t word = lp_load_u64(p, false);
			unsigned type = (unsigned)(word >> LP_BIN_TYPE_SHIFT);
			if (type >= 6) {
				r->src->b.pos += (size_t)i * LP_BIN_WORD_SIZE;
				*count += (size_t)i;
				r->done += (uint64_t)i;
				return lp_fail(err, LP_EINPUT,
					       "%s: record %" PRIu64 " (byte %" PRIu64 "): field type: %u is not "
					       "one of 0 to 5 (r w i R W I)", lp_byte_source_name(r->src),
					       r->done, bin_offset(r->done), type);
			}
			to[i] = (lp_basic_ref){
				.type = lp_ref_types[type],
				.canonical = word & LP_BIN_CANON_MAX,
			};
		}
		*count += (size_t)n;
		r->done += (uint64_t)n;
		r->src->b.pos += (size_t)n * LP_BIN_WORD_SIZE;
	}
	return 0;
}

ssize_t lp_basic_read(lp_basic_reader *r, lp_basic_ref *refs, size_t n, lp_error *err)
{
	lp_error dropped = {0}; /* where an unwanted message goes */
	if (!err)
		err = &dropped;
	/* A caller's mistake, not the stream's: later reads are not failed. */
	if (!r)
		return lp_fail(err, LP_EUSAGE, "lp_basic_read: argument r: NULL"), -1;
	if (!refs && n > 0)
		return lp_fail(err, LP_EUSAGE, "lp_basic_read: argument refs: NULL, with n %zu", n), -1;
	if (r->failed.status) {
		*err = r->failed;
		return -1;
	}
	size_t count = 0;
	int rc = r->task_rec ? read_task_binary(r, refs, n, &count, &r->failed)
		 : r->binary ? read_binary(r, refs, n, &count, &r->failed)
			     : read_text(r, refs, n, &count, &r->failed);
	if (rc && count == 0) {
		*err = r->failed;
		return -1;
	}
	return (ssize_t)count;
}

void lp_basic_iter_init(lp_basic_iter *it, lp_basic_reader *r, size_t block_refs, lp_error *err)
{
	*it = (lp_basic_iter){.r = r, .buf = g_new(lp_basic_ref, block_refs), .block_refs = block_refs,
			      .err = err};
}

int lp_basic_iter_open(lp_basic_iter *it, const char *path, size_t block_refs, lp_error *err)
{
	lp_basic_reader *r = lp_basic_open(path, err);
	if (!r)
		return err->status;
	lp_basic_iter_init(it, r, block_refs, err);
	return 0;
}

lp_basic_block lp_basic_iter_next(lp_basic_iter *it)
{
	if (it->status)
		return (lp_basic_block){NULL, 0};
	ssize_t n = lp_basic_read(it->r, it->buf, it->block_refs, it->err);
	if (n < 0) {
		it->status = it->err->status;
		return (lp_basic_block){NULL, 0};
	}
	it->done += (uint64_t)n;
	return (lp_basic_block){it->buf, (size_t)n};
}

int lp_basic_iter_clear(lp_basic_iter *it)
{
	int status = it->status;
	g_free(it->buf);
	lp_basic_close(it->r);
	*it = (lp_basic_iter){0};
	return status;
}
