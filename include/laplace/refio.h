/* Raw reference traces (laplace-formats(5), section 1): binary and text. */
#ifndef LAPLACE_REFIO_H
#define LAPLACE_REFIO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "laplace/error.h"
#include "laplace/io.h"
#include "laplace/record.h"

#define LP_REF_RECORD_SIZE 18

enum lp_ref_format { LP_REF_AUTO, LP_REF_BIN, LP_REF_TEXT };
enum lp_endian { LP_LITTLE, LP_BIG };

/* Parse "bin"/"text"/"auto" and "little"/"big"; -1 if unknown. */
int lp_ref_format_parse(const char *s);
int lp_endian_parse(const char *s);

typedef struct lp_ref_reader lp_ref_reader;

/* Open a raw reference trace. LP_REF_AUTO tells text from binary by the
 * content of the first bytes. The reader does not check timestamp order. */
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
 * zeros; returns the number of characters written (at most 16). Inline:
 * the writers call it several times per record. */
static inline size_t lp_fmt_hex(char *dst, uint64_t v)
{
	/* Two digits per step from a table of the 256 byte values. */
	static const char pairs[513] =
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
		"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
	char *p = dst + n;
	for (; v > 0xff; v >>= 8) {
		p -= 2;
		memcpy(p, pairs + 2 * (v & 0xff), 2);
	}
	if (v > 0xf) {
		memcpy(p - 2, pairs + 2 * v, 2);
	} else {
		p[-1] = pairs[2 * v + 1];
	}
	return n;
}

/* Parse hex (either case, leading zeros allowed) of [s, s+len) into *v;
 * returns 0, or -1 when empty, not hex, or over 64 bits. */
int lp_parse_hex(const char *s, size_t len, uint64_t *v);

#endif
