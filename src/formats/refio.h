/* Raw reference traces (laplace-formats(5), "RAW REFERENCE TRACE"): binary
 * and text. */
#ifndef LAPLACE_REFIO_H
#define LAPLACE_REFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "core/byteorder.h"
#include "core/error.h"
#include "io/io.h"
#include "core/record.h"

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
/* With handoff set, the records a read decodes are for another thread,
 * not for this one's next steps: binary records are then stored past this
 * processor's caches where the processor can (x86-64). */
void lp_ref_reader_set_handoff(lp_ref_reader *r, bool handoff);
/* Binary input: how many records decoded so far had an earlier timestamp
 * than the record before them (counted as they are decoded, so that a
 * caller that must check the order need not read them all again while
 * there are none). Text input: 0. */
uint64_t lp_ref_reader_order_breaks(const lp_ref_reader *r);
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

/* Text references in chunks of whole lines, parsed elsewhere (by several
 * threads at once) with the same results, line for line and error for
 * error, as lp_ref_reader_read. */
typedef struct lp_text_chunk {
	char *text;          /* its lines, each ended by '\n' */
	size_t len, cap;
	uint64_t first_line; /* the first one's number, from 1 */
	size_t lines;
	bool long_line;      /* the line after them is longer than LP_LINE_MAX */
} lp_text_chunk;
void lp_text_chunk_free(lp_text_chunk *c);
/* Move the next lines, at most max_lines, of a text reader into c
 * (replacing what it held). Returns how many (0 at the end, or when the
 * next line is too long), or -1 with err set. */
ssize_t lp_ref_reader_take_lines(lp_ref_reader *r, lp_text_chunk *c, size_t max_lines,
				 lp_error *err);
/* Parse c's lines into refs[0, c->lines); name is the reader's. Returns
 * c->lines, or -1 with err set as lp_ref_reader_read would set it. */
ssize_t lp_ref_parse_lines(const char *name, const lp_text_chunk *c, lp_ref *refs, lp_error *err);

/* Longest text record: "t " + 16 + " " + 2 + " " + 8 + " " + 8 + "\n". */
#define LP_REF_TEXT_RECORD_MAX 40

typedef struct lp_ref_writer lp_ref_writer;

/* Write references to out (not owned) as binary (in the given byte order)
 * or text. */
/* One reference as an 18-byte binary record at p (laplace-formats(5),
 * "Raw reference trace"); returns LP_REF_RECORD_SIZE. Inline: the
 * generator writes with it too, a billion times a run. */
static inline size_t lp_ref_encode_bin(unsigned char *p, const lp_ref *ref, bool big)
{
	p[0] = (unsigned char)ref->type;
	lp_store_u64(p + 1, ref->timestamp, big);
	p[9] = ref->length;
	lp_store_u32(p + 10, ref->vas, big);
	lp_store_u32(p + 14, ref->address, big);
	return LP_REF_RECORD_SIZE;
}

lp_ref_writer *lp_ref_writer_new(lp_output *out, enum lp_ref_format format,
				 enum lp_endian endian);
int lp_ref_writer_write(lp_ref_writer *w, const lp_ref *refs, size_t n, lp_error *err);
/* Flush buffered records into the output (does not commit it); frees w. */
int lp_ref_writer_finish(lp_ref_writer *w, lp_error *err);
void lp_ref_writer_free(lp_ref_writer *w);



#endif
