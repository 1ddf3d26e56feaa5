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
#include "formats/stream.h"
#include "io/bytesrc.h"

#define LP_REF_RECORD_SIZE 18
/* The 64-bit binary form (laplace-formats(5), 10.1): this 8-byte header
 * (magic and version byte 1), then 26-byte little-endian records. */
#define LP_REF64_MAGIC "LPREF64"
#define LP_REF64_MAGIC_SIZE 7
#define LP_REF64_HEADER LP_REF64_MAGIC "\x01"
#define LP_REF64_HEADER_SIZE 8
#define LP_REF64_RECORD_SIZE 26
/* The 64-bit text form's first line (a trailing '\r' or spaces tolerated). */
#define LP_REF64_TEXT_HEADER "#laplace-ref 64"

/* enum lp_ref_format and enum lp_endian: laplace/laplace.h. */

/* --ref-format's names, "bin", "text" and "auto", and the library's
 * constants for them, from the forms (lp_ref_forms). Parse one; -1 if
 * unknown. */
int lp_ref_format_parse(const char *s);
/* The names lp_ref_format_parse takes, for help and messages: "bin, text
 * or auto". g_free it. */
char *lp_ref_format_names(void);
/* 0 when format is an enum lp_ref_format; else LP_EUSAGE with err saying
 * "FIELD: N is not" the library's names for them. */
int lp_ref_format_check(int format, const char *field, lp_error *err);
/* "little" or "big"; -1 if unknown. */
int lp_endian_parse(const char *s);

/* Whether data[0, n), the start of a (decompressed) trace, is text
 * (laplace-formats(5), 1.3): its first line, the bytes before the first
 * '\n' and at most LP_REF_SNIFF_BYTES of them, is a valid text record as
 * the text reader checks it. Nothing after the first line counts. */
#define LP_REF_SNIFF_BYTES 64
bool lp_ref_starts_as_text(const char *data, size_t n);

/* A form of the raw reference trace as it is read: the encoding
 * --ref-format names, the width of its vas ids and addresses (32, or 64:
 * laplace-formats(5) 10), how sure the first bytes of a (decompressed)
 * trace are of it, and its source, which takes over the input and buffer
 * src holds (leaving src empty; src itself stays the caller's), or
 * returns NULL with err set. Each is the reading half of a row of the
 * registry (registry.h), which adds its writer; apart, so that the
 * library reads traces without the registry's writers and dumps.
 * Binary sources count order breaks and take handoff; text sources cut
 * and decode apart. Text: the reference of index i is on line i + 1 (i +
 * 2 in the 64-bit form, after its first line), and nothing is ever torn.
 * The 64-bit binary form is little-endian whatever endian says. */
typedef struct lp_ref_form {
	enum lp_ref_format encoding;
	const char *encoding_name;
	unsigned width;
	enum lp_sniff (*sniff)(const unsigned char *data, size_t n);
	lp_ref_source *(*open_source)(lp_byte_source *src, enum lp_endian endian, lp_error *err);
} lp_ref_form;
/* The forms in the order lp_ref_open tries them: the 64-bit ones, sure of
 * their header, first; the 32-bit binary form, which any bytes are, last. */
extern const lp_ref_form lp_ref_forms[];
extern const size_t lp_nref_forms;

/* Open the raw reference trace at path as a source, in the form its
 * first bytes show among those of encoding (LP_REF_AUTO: any): the first
 * form sure of them, else the last form of the encoding (the 32-bit
 * binary form for LP_REF_AUTO, laplace-formats(5) 1.3 and 10.1). NULL
 * with err set when it cannot be opened or read, or encoding is none
 * (LP_EUSAGE). */
lp_ref_source *lp_ref_open(const char *path, enum lp_ref_format encoding, enum lp_endian endian,
			   lp_error *err);
/* The same of an open source, whose first bytes may have been looked at
 * (not consumed); it takes src over. */
lp_ref_source *lp_ref_open_source(lp_byte_source *src, enum lp_ref_format encoding,
				  enum lp_endian endian, lp_error *err);
/* LP_REF_TEXT or LP_REF_BIN, as opened; s must be a raw reference
 * trace's source. */
enum lp_ref_format lp_ref_reader_format(const lp_ref_source *s);

/* Longest text record: "t " + 16 + " " + 2 + " " + 8 + " " + 8 + "\n";
 * in the 64-bit form, with 16 digits of vas and of address. */
#define LP_REF_TEXT_RECORD_MAX 40
#define LP_REF64_TEXT_RECORD_MAX 56

typedef struct lp_ref_writer lp_ref_writer;

/* One reference as an 18-byte binary record at p (laplace-formats(5),
 * "Raw reference trace"); returns LP_REF_RECORD_SIZE. Inline: the
 * generator writes with it too, a billion times a run. */
static inline size_t lp_ref_encode_bin(unsigned char *p, const lp_ref *ref, bool big)
{
	p[0] = (unsigned char)ref->type;
	lp_store_u64(p + 1, ref->timestamp, big);
	p[9] = ref->length;
	/* The 32-bit form: its readers fill only 32 bits. */
	lp_store_u32(p + 10, (uint32_t)ref->vas, big);
	lp_store_u32(p + 14, (uint32_t)ref->address, big);
	return LP_REF_RECORD_SIZE;
}

/* One reference as a 26-byte record of the 64-bit binary form at p;
 * returns LP_REF64_RECORD_SIZE. */
static inline size_t lp_ref_encode_bin64(unsigned char *p, const lp_ref *ref)
{
	p[0] = (unsigned char)ref->type;
	lp_store_u64(p + 1, ref->timestamp, false);
	p[9] = ref->length;
	lp_store_u64(p + 10, ref->vas, false);
	lp_store_u64(p + 18, ref->address, false);
	return LP_REF64_RECORD_SIZE;
}

/* The forms' writers (their rows' open_sink): references written to out
 * (not owned), binary in the given byte order, or text. The 64-bit forms
 * start with their header (the binary one, little-endian, ignores
 * endian); the 32-bit ones keep the low 32 bits of vas and address. */
lp_ref_writer *lp_ref_bin_writer_new(lp_output *out, enum lp_endian endian);
lp_ref_writer *lp_ref_text_writer_new(lp_output *out, enum lp_endian endian);
lp_ref_writer *lp_ref64_bin_writer_new(lp_output *out, enum lp_endian endian);
lp_ref_writer *lp_ref64_text_writer_new(lp_output *out, enum lp_endian endian);
int lp_ref_writer_write(lp_ref_writer *w, const lp_ref *refs, size_t n, lp_error *err);
/* Flush buffered records into the output (does not commit it); frees w. */
int lp_ref_writer_finish(lp_ref_writer *w, lp_error *err);
void lp_ref_writer_free(lp_ref_writer *w);

/* laplace dump: the trace at path (any raw reference form, detected) in
 * text on out; a torn last record as policy says. */
int lp_ref_dump(const char *path, enum lp_endian endian, const lp_torn_policy *policy,
		lp_output *out, lp_error *err);

#endif
