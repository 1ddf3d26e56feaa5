/* Raw reference traces (laplace-formats(5), "RAW REFERENCE TRACE"): binary
 * and text. */
#ifndef LAPLACE_REFIO_H
#define LAPLACE_REFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "laplace/error.h"
#include "laplace/io.h"
#include "laplace/record.h"

#define LP_REF_RECORD_SIZE 18

/* enum lp_ref_format and enum lp_endian: laplace/laplace.h. */

/* Parse "bin"/"text"/"auto" and "little"/"big"; -1 if unknown. */
int lp_ref_format_parse(const char *s);
int lp_endian_parse(const char *s);

typedef struct lp_ref_reader lp_ref_reader;

/* Whether data[0, n), the start of a (decompressed) trace, is text
 * (laplace-formats(5), 1.3): its first line, the bytes before the first
 * '\n' and at most LP_REF_SNIFF_BYTES of them, is a valid text record as
 * the text reader checks it. Nothing after the first line counts. */
#define LP_REF_SNIFF_BYTES 64
bool lp_ref_starts_as_text(const char *data, size_t n);

/* Open a raw reference trace. LP_REF_AUTO reads it as text when
 * lp_ref_starts_as_text says so, else as binary. The reader does not check
 * timestamp order. */
lp_ref_reader *lp_ref_reader_open(const char *path, enum lp_ref_format format,
				  enum lp_endian endian, lp_error *err);
/* Decode up to cap records into out; returns the count, 0 at the end, -1 on
 * error (err names file, record index or line, and field). */
ssize_t lp_ref_reader_read(lp_ref_reader *r, lp_ref *out, size_t cap, lp_error *err);
/* Index (from 0) of the next record to be returned: the record index of
 * out[k] from the last read is lp_ref_reader_index() - count + k. */
uint64_t lp_ref_reader_index(const lp_ref_reader *r);
/* Text input: line number of record index i is i + 1. Binary input: after
 * the end, the bytes of a torn last record (0 if none). */
size_t lp_ref_reader_torn_bytes(const lp_ref_reader *r);
enum lp_ref_format lp_ref_reader_format(const lp_ref_reader *r);
const char *lp_ref_reader_name(const lp_ref_reader *r);
lp_input *lp_ref_reader_input(lp_ref_reader *r);
void lp_ref_reader_close(lp_ref_reader *r);

typedef struct lp_ref_writer lp_ref_writer;

/* Write references to out (not owned) as binary (in the given byte order)
 * or text. */
lp_ref_writer *lp_ref_writer_new(lp_output *out, enum lp_ref_format format,
				 enum lp_endian endian);
int lp_ref_writer_write(lp_ref_writer *w, const lp_ref *refs, size_t n, lp_error *err);
/* Flush buffered records into the output (does not commit it); frees w. */
int lp_ref_writer_finish(lp_ref_writer *w, lp_error *err);
void lp_ref_writer_free(lp_ref_writer *w);

/* Fast formatting shared by every text writer: lowercase hex, no leading
 * zeros; returns the number of characters written (at most 16). It may
 * store up to 16 bytes at dst whatever the length, so callers leave room
 * for the longest number. Inline: writers call it several times a record. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight hex digits of v as ASCII, most significant first in memory order:
 * spread the nibbles one to a byte, then add '0' or 'a' - 10 per byte. */
static inline uint64_t lp_hex8(uint32_t v)
{
	uint64_t x = v;
	x = ((x & 0xffff0000u) << 16) | (x & 0xffffu);
	x = ((x & 0x0000ff000000ff00u) << 8) | (x & 0x000000ff000000ffu);
	x = ((x & 0x00f000f000f000f0u) << 4) | (x & 0x000f000f000f000fu);
	uint64_t letters = ((x + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
	x += 0x3030303030303030u + letters * ('a' - '0' - 10);
	return __builtin_bswap64(x);
}

static inline size_t lp_fmt_hex(char *dst, uint64_t v)
{
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
	uint64_t lo = lp_hex8((uint32_t)v);
	if (n <= 8) {
		lo >>= 8 * (8 - n); /* shift the leading zeros out */
		memcpy(dst, &lo, 8);
		return n;
	}
	uint64_t hi = lp_hex8((uint32_t)(v >> 32));
	size_t skip = 16 - n;
	uint64_t first = skip ? (hi >> 8 * skip) | (lo << (64 - 8 * skip)) : hi;
	lo >>= 8 * skip;
	memcpy(dst, &first, 8);
	memcpy(dst + 8, &lo, 8);
	return n;
}
#else
static inline size_t lp_fmt_hex(char *dst, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
	char *p = dst + n;
	do {
		*--p = digits[v & 0xf];
		v >>= 4;
	} while (v);
	return n;
}
#endif

/* Parse hex (either case, leading zeros allowed) of [s, s+len) into *v;
 * returns 0, or -1 when empty, not hex, or over 64 bits. */
int lp_parse_hex(const char *s, size_t len, uint64_t *v);

#endif
