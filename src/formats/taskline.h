/* The records of a per-process task, kernel or orphan file
 * (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"), in its two forms and
 * both directions: a reference line or binary record written by the
 * per-process sink (formats/procdir.c) and read back by the task directory
 * reader (formats/taskdir.c), fast or carefully; event lines are the
 * kernel trace's, as they came. The hot paths are inline here; the
 * careful ones, the reader of either form and convert's, are
 * formats/taskline.c. */
#ifndef LAPLACE_TASKLINE_H
#define LAPLACE_TASKLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/byteorder.h"
#include "core/error.h"
#include "core/numbers.h"
#include "core/progress.h"
#include "core/record.h"
#include "core/units.h"
#include "formats/forms.h"
#include "io/bytesrc.h"
#include "io/inbuf.h"
#include "io/io.h"

/* Writing: a reference line "type timestamp length vpn canonical\n" at
 * p, and its length. At most 53 bytes are stored (a vpn has at most 13
 * digits, 52 bits, but the formatter stores 16 at it). */
#define LP_TASK_LINE_MAX 56
static inline size_t lp_task_line_encode(char *p, const lp_ref *ref, uint64_t canon)
{
	char *q = p;
	*q++ = ref->type;
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->timestamp);
	*q++ = ' ';
	q = lp_form_put_length(q, ref->length);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->address >> LP_PAGE_SHIFT);
	*q++ = ' ';
	q += lp_fmt_hex(q, canon);
	*q++ = '\n';
	return (size_t)(q - p);
}

/* The binary task form: an 8-byte header, then records that each begin
 * with a byte saying what they are: a reference (its type), 26 bytes
 * (type, length, then timestamp, vpn and canonical, 8 bytes each,
 * little-endian); or 'K', an event: 3 + n bytes ('K', n in 2 bytes
 * little-endian, at most 4096, then the event line as the text form
 * holds it, no newline). */
#define LP_TASK_BIN_HEADER "LPTASK\x01\x00"
#define LP_TASK_BIN_MAGIC_SIZE 6
#define LP_TASK_BIN_HEADER_SIZE 8
#define LP_TASK_BIN_REF_SIZE 26
#define LP_TASK_BIN_EVENT 'K'
#define LP_TASK_BIN_EVENT_HEAD 3
#define LP_TASK_BIN_EVENT_MAX 4096
/* A vpn: a 64-bit address's page number. */
#define LP_TASK_VPN_BITS 52

/* Writing the binary form: a reference record at p (26 bytes). */
static inline void lp_task_bin_encode(unsigned char *p, const lp_ref *ref, uint64_t canon)
{
	p[0] = (unsigned char)ref->type;
	p[1] = ref->length;
	lp_store_u64(p + 2, ref->timestamp, false);
	lp_store_u64(p + 10, ref->address >> LP_PAGE_SHIFT, false);
	lp_store_u64(p + 18, canon, false);
}

/* An event record of the line [line, line + len) at p (3 + len bytes,
 * len at most LP_TASK_BIN_EVENT_MAX); its length. */
static inline size_t lp_task_bin_encode_event(unsigned char *p, const char *line, size_t len)
{
	p[0] = LP_TASK_BIN_EVENT;
	p[1] = (unsigned char)len;
	p[2] = (unsigned char)(len >> 8);
	memcpy(p + LP_TASK_BIN_EVENT_HEAD, line, len);
	return LP_TASK_BIN_EVENT_HEAD + len;
}

/* One record of a task file, in either form. */
enum lp_task_kind {
	LP_TASK_ERROR = -1,
	LP_TASK_END,
	LP_TASK_REF,
	LP_TASK_EVENT,
};
typedef struct lp_task_record {
	lp_sched_ref ref;   /* a reference: its type, timestamp, canonical */
	uint8_t length;     /* and its length and vpn */
	uint64_t vpn;
	lp_sched_event ev;  /* an event */
	const char *line;   /* its line (len bytes, NUL-terminated), valid
			       until the next record is read */
	size_t len;
	char copy[LP_TASK_BIN_EVENT_MAX + 1]; /* a binary event's line */
} lp_task_record;

/* One line of a text task, kernel or orphan file: LP_TASK_REF or
 * LP_TASK_EVENT with *rec set, or LP_TASK_ERROR with err naming the field
 * (no file or line). line is NUL-terminated and may be changed. */
enum lp_task_kind lp_task_record_parse(char *line, size_t len, lp_task_record *rec, lp_error *err);

/* Whether b, at the start of a file, holds the binary form: 1, its header
 * consumed; 0, the text form (a file not beginning with "LPTASK"),
 * nothing consumed; -1 with err naming name, the byte and the field for a
 * header cut short or of another version. */
int lp_task_form_start(lp_inbuf *b, const char *name, lp_error *err);

/* The next record of the binary form in b, whose byte offset in the file
 * is offset: LP_TASK_REF or LP_TASK_EVENT with *rec set (the event line
 * copied and checked as the text form's reader checks it) and its bytes
 * consumed, *size of them; LP_TASK_END; or LP_TASK_ERROR with err naming
 * name, the record's byte offset and the field. */
enum lp_task_kind lp_task_bin_next(lp_inbuf *b, const char *name, uint64_t offset,
				   lp_task_record *rec, size_t *size, lp_error *err);

/* A task file of either form read record by record, with messages
 * naming the file and the line (text) or byte (binary). */
typedef struct lp_task_file {
	lp_inbuf *b;
	const char *name;
	bool binary;
	uint64_t offset;    /* of the next record, in the (decompressed) file */
	uint64_t line;      /* text: lines read */
} lp_task_file;
/* Start reading b (at the start of the file name): 0, or -1 with err set
 * (a bad header; with need_binary, a file of the text form). */
int lp_task_file_start(lp_task_file *f, lp_inbuf *b, const char *name, bool need_binary,
		       lp_error *err);
enum lp_task_kind lp_task_file_next(lp_task_file *f, lp_task_record *rec, lp_error *err);

/* laplace convert --from task or task-bin (need_binary: the file must be
 * in the binary form) --to task or task-bin: the records of the task file
 * src, in either form, written to out in the binary form (to_binary) or
 * as text. 0, or an lp_status with err set (the first bad record named).
 * References and events done are told to progress (NULL: none) as each
 * buffer is written. */
int lp_task_convert(lp_byte_source *src, bool need_binary, bool to_binary,
		    const lp_progress *progress, lp_output *out, lp_error *err);
/* laplace dump of a task file of either form: its text form (the rows
 * task and task-bin of registry.h; src is closed). */
int lp_task_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		 lp_output *out, lp_error *err);

/* The hot path reads eight bytes at a time: a field's digits are
 * classified, counted and packed into its value with no loop over them,
 * so that neither their number nor their case costs a branch. */
#define LP_TL_BYTES(b) (UINT64_C(0x0101010101010101) * (b))

/* 0x80 in each byte of w that is a hex digit (either case), 0 elsewhere:
 * with the high bit cleared, adding 0x80 - lo sets a byte's high bit
 * exactly when the byte is at least lo, and no byte carries into the next. */
static inline uint64_t lp_tl_hex_digit_bytes(uint64_t w)
{
	uint64_t x = w & ~LP_TL_BYTES(0x80), folded = x | LP_TL_BYTES(0x20);
	uint64_t digit = (x + LP_TL_BYTES(0x80 - '0')) & ~(x + LP_TL_BYTES(0x80 - '9' - 1));
	uint64_t letter = (folded + LP_TL_BYTES(0x80 - 'a')) & ~(folded + LP_TL_BYTES(0x80 - 'f' - 1));
	return (digit | letter) & ~w & LP_TL_BYTES(0x80);
}

/* The value of the hex digits in w's bytes, the first the most
 * significant; bytes that are 0 count as leading zeros. Each byte becomes
 * its digit's value ('a' to 'f' and 'A' to 'F' have bit 6 set and a low
 * nibble 9 less), then neighbours merge: pairs, quads, the eight. */
static inline uint64_t lp_tl_hex_digits_value(uint64_t w, unsigned digits)
{
	uint64_t x = (w & LP_TL_BYTES(0x0f)) + ((w >> 6) & LP_TL_BYTES(1)) * 9;
	x <<= 8 * (8 - digits); /* the bytes past the digits out, zeros in front */
	x = ((x << 4) | (x >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
	x = ((x << 8) | (x >> 16)) & UINT64_C(0x0000ffff0000ffff);
	return ((x << 16) | (x >> 32)) & UINT64_C(0xffffffff);
}

/* How many of w's bytes, from the first, are hex digits (8: all). */
static inline unsigned lp_tl_hex_digit_run(uint64_t w)
{
	uint64_t others = ~lp_tl_hex_digit_bytes(w) & LP_TL_BYTES(0x80);
	return others ? (unsigned)__builtin_ctzll(others) / 8 : 8;
}

/* The number of hex digits at s, from 1 to 16, with their value in
 * *value; 0 for none or more than 16. Reads 16 bytes. Inlined by force:
 * called, it cost a quarter of the hot path's instructions in saving
 * registers and reloading its constants. */
static inline __attribute__((always_inline)) unsigned lp_tl_hex_number(const unsigned char *s, uint64_t *value)
{
	uint64_t w = lp_load_u64(s, false);
	unsigned digits = lp_tl_hex_digit_run(w);
	if (digits < 8) {
		*value = digits ? lp_tl_hex_digits_value(w, digits) : 0;
		return digits;
	}
	uint64_t w2 = lp_load_u64(s + 8, false);
	unsigned more = lp_tl_hex_digit_run(w2);
	*value = lp_tl_hex_digits_value(w, 8);
	if (more == 8)
		return 0;
	if (more)
		*value = *value << 4 * more | lp_tl_hex_digits_value(w2, more);
	return 8 + more;
}

/* The hot path: a well-formed reference line "type ts length vpn
 * canonical\n" lying whole in [p, end). Returns the byte after its '\n'
 * with *ref set, or NULL for anything else (another record, a line near
 * the end of the buffer, a line with an error, trailing spaces, a length
 * or vpn written with leading zeros), which the careful path
 * (lp_task_record_parse) then reads and, if need be, explains. A length of at
 * most two digits is a byte and a vpn of at most 13 digits 52 bits: their
 * values are not needed, only their digits counted. */
static inline const char *lp_task_line_fast(const char *p, const char *end, lp_sched_ref *ref)
{
	static const bool is_type[256] = {['r'] = 1, ['w'] = 1, ['i'] = 1, ['R'] = 1, ['W'] = 1, ['I'] = 1};
	/* The longest line taken here, up to the 16 bytes its last field reads. */
	if (end - p < 2 + 17 + 3 + 14 + 16 || !is_type[(unsigned char)p[0]] || p[1] != ' ')
		return NULL;
	const unsigned char *q = (const unsigned char *)p + 2;
	uint64_t timestamp, canonical;
	unsigned digits = lp_tl_hex_number(q, &timestamp);
	if (!digits || q[digits] != ' ')
		return NULL;
	q += digits + 1;
	/* The length and the vpn from one word, unless the vpn ends past it. */
	uint64_t others = ~lp_tl_hex_digit_bytes(lp_load_u64(q, false)) & LP_TL_BYTES(0x80);
	digits = others ? (unsigned)__builtin_ctzll(others) / 8 : 8;
	if (digits - 1 > 1 || q[digits] != ' ') /* unsigned: 0 digits fails too */
		return NULL;
	q += digits + 1;
	others >>= 8 * (digits + 1);
	if (others) {
		digits = (unsigned)__builtin_ctzll(others) / 8;
	} else { /* a vpn past the word: 64-bit addresses' */
		digits = lp_tl_hex_digit_run(lp_load_u64(q, false));
		if (digits == 8)
			digits += lp_tl_hex_digit_run(lp_load_u64(q + 8, false));
	}
	if (digits - 1 > LP_TASK_VPN_BITS / 4 - 1 || q[digits] != ' ')
		return NULL;
	q += digits + 1;
	digits = lp_tl_hex_number(q, &canonical);
	if (!digits || q[digits] != '\n')
		return NULL;
	ref->type = p[0];
	ref->timestamp = timestamp;
	ref->canonical = canonical;
	return (const char *)q + digits + 1;
}

/* The hot path of the binary form: up to records reference records at p
 * (lying whole in the buffer) copied into refs, as long as each is a
 * reference, its vpn of at most 52 bits, whose timestamp is no earlier
 * than *prev_ts (updated); how many. Anything else (an event, a record
 * cut by the buffer's end, an error) is the careful path's,
 * lp_task_bin_next. The tests are combined: one branch a record. */
static inline size_t lp_task_bin_copy(const unsigned char *p, size_t records, lp_sched_ref *refs,
				      uint64_t *prev_ts)
{
	static const bool is_type[256] = {['r'] = 1, ['w'] = 1, ['i'] = 1, ['R'] = 1, ['W'] = 1, ['I'] = 1};
	uint64_t prev = *prev_ts;
	size_t i;
	for (i = 0; i < records; i++, p += LP_TASK_BIN_REF_SIZE) {
		uint64_t ts = lp_load_u64(p + 2, false);
		if (!is_type[p[0]] | (lp_load_u64(p + 10, false) >> LP_TASK_VPN_BITS != 0) | (ts < prev))
			break;
		refs[i] = (lp_sched_ref){.canonical = lp_load_u64(p + 18, false), .timestamp = ts,
					 .type = (char)p[0]};
		prev = ts;
	}
	*prev_ts = prev;
	return i;
}

#endif
