/* The records of a per-process task, kernel or orphan file
 * (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"), both directions: a
 * reference line written by the per-process sink (formats/procdir.c) and
 * read back by the task directory reader (formats/taskdir.c), fast or
 * carefully; event lines are the kernel trace's, as they came. The hot
 * paths are inline here; the careful one is formats/taskline.c. */
#ifndef LAPLACE_TASKLINE_H
#define LAPLACE_TASKLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/byteorder.h"
#include "core/error.h"
#include "core/numbers.h"
#include "core/record.h"
#include "core/units.h"
#include "formats/forms.h"

/* Writing: a reference line "type timestamp length vpn canonical\n" at
 * p, and its length. At most 45 bytes
 * are stored (the virtual page has at most 5 digits, but the formatter
 * stores 16 at it). */
#define LP_TASK_LINE_MAX 48
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

/* One record of a task, kernel or orphan file: a reference (1, *ref
 * set) or an event (0, *ev set); -1 with err naming the field (no file or
 * line). line is NUL-terminated and may be changed. */
int lp_task_record_parse(char *line, size_t len, lp_sched_ref *ref, lp_sched_event *ev, lp_error *err);

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
 * most two digits is a byte and a vpn of at most five 20 bits: their
 * values are not needed, only their digits counted. */
static inline const char *lp_task_line_fast(const char *p, const char *end, lp_sched_ref *ref)
{
	static const bool is_type[256] = {['r'] = 1, ['w'] = 1, ['i'] = 1, ['R'] = 1, ['W'] = 1, ['I'] = 1};
	/* The longest line taken here, and the 16 bytes its last field reads. */
	if (end - p < 2 + 17 + 3 + 6 + 17 || !is_type[(unsigned char)p[0]] || p[1] != ' ')
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
	digits = others ? (unsigned)__builtin_ctzll(others) / 8 : lp_tl_hex_digit_run(lp_load_u64(q, false));
	if (digits - 1 > 4 || q[digits] != ' ')
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

#endif
