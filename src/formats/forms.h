/* The forms of a merged reference stream (laplace-formats(5), "FORMS FOR
 * SIMULATORS", and policies.md §6): the basic merge's "type canonical"
 * lines and the forms simulators read, which carry the same references in
 * the same order. Each is a row of the registry (registry.h,
 * lp_stream_forms): its name, largest record, limit and sink. */
#ifndef LAPLACE_FORMS_H
#define LAPLACE_FORMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/byteorder.h"
#include "core/numbers.h"
#include "core/record.h"
#include "formats/stream.h"
#include "io/bytesrc.h"
#include "io/io.h"

enum lp_form {
	LP_FORM_BASIC, /* type canonical */
	LP_FORM_ADDR,  /* type byte-address length */
	LP_FORM_DIN,   /* Dinero: label byte-address */
	LP_FORM_BIN,   /* header, then one little-endian word per reference */
	LP_FORM_ORACLE, /* libCacheSim's oracleGeneral: 24-byte records (oracle.h) */
	LP_FORM_COUNT
};

/* bin: the 8-byte header, then words whose bits 0-60 are the canonical
 * number and bits 61-63 the type's code. */
#define LP_BIN_HEADER "LPBASIC\x01"
#define LP_BIN_HEADER_SIZE 8
#define LP_BIN_WORD_SIZE 8
#define LP_BIN_TYPE_SHIFT 61
#define LP_BIN_CANON_MAX ((UINT64_C(1) << LP_BIN_TYPE_SHIFT) - 1)
/* A type's code is its index in lp_ref_types ("rwiRWI", core/record.h);
 * codes 6 and 7 are invalid. */
#define LP_BIN_MAGIC_SIZE 7 /* "LPBASIC", before the version byte */

/* addr and din: the canonical page's byte address, with the raw address's
 * offset in the page; the largest canonical number that has one. */
#define LP_ADDR_CANON_MAX (UINT64_MAX >> 12)
/* din's label of a reference type: 0 read, 1 write, 2 instruction fetch. */
static inline char lp_din_label(char type)
{
	char lower = (char)(type | 0x20);
	return lower == 'r' ? '0' : lower == 'w' ? '1' : '2'; /* 'i' */
}

/* Each form's longest record, every store of its encoder included (the
 * hex formatter's 16 bytes at each number, whatever its length): basic's
 * type, space, 16 digits, newline; addr's type, space, 16 digits, space,
 * 2 digits, newline; din's label, space, 16 digits, newline; bin's word;
 * oracle-general's record. */
#define LP_BASIC_RECORD_MAX 19
#define LP_ADDR_RECORD_MAX 22
#define LP_DIN_RECORD_MAX 19
#define LP_BIN_RECORD_MAX LP_BIN_WORD_SIZE
#define LP_ORACLE_RECORD_MAX 24
/* The longest record of any form: buffers leave this much room. */
#define LP_FORM_RECORD_MAX 24
_Static_assert(LP_BASIC_RECORD_MAX <= LP_FORM_RECORD_MAX, "basic's record fits");
_Static_assert(LP_ADDR_RECORD_MAX <= LP_FORM_RECORD_MAX, "addr's record fits");
_Static_assert(LP_DIN_RECORD_MAX <= LP_FORM_RECORD_MAX, "din's record fits");
_Static_assert(LP_BIN_RECORD_MAX <= LP_FORM_RECORD_MAX, "bin's record fits");
_Static_assert(LP_ORACLE_RECORD_MAX <= LP_FORM_RECORD_MAX, "oracle-general's record fits");

/* A length byte in hex without leading zeros: one or two digits. */
static inline char *lp_form_put_length(char *p, uint8_t length)
{
	static const char digits[] = "0123456789abcdef";
	if (length > 0xf)
		*p++ = digits[length >> 4];
	*p++ = digits[length & 0xf];
	return p;
}

/* One merged reference in form at p: its type, canonical number, and (for
 * addr and din) the raw address, of 32 or 64 bits, whose offset in its
 * page alone is written, and length. Returns its length. Inline: the
 * basic merge writes a hundred million a second. oracle-general's records
 * need the stream's next uses: its sink (oracle.h) writes them, and this
 * encoder writes none. */
static inline size_t lp_form_encode(enum lp_form form, char *p, char type, uint64_t canon,
				    uint64_t address, uint8_t length)
{
	char *q = p;
	switch (form) {
	case LP_FORM_BASIC:
		*q++ = type;
		*q++ = ' ';
		q += lp_fmt_hex(q, canon);
		break;
	case LP_FORM_ADDR:
		*q++ = type;
		*q++ = ' ';
		q += lp_fmt_hex(q, canon << LP_PAGE_SHIFT | (address & ((UINT64_C(1) << LP_PAGE_SHIFT) - 1)));
		*q++ = ' ';
		q = lp_form_put_length(q, length);
		break;
	case LP_FORM_DIN:
		*q++ = lp_din_label(type);
		*q++ = ' ';
		q += lp_fmt_hex(q, canon << LP_PAGE_SHIFT | (address & ((UINT64_C(1) << LP_PAGE_SHIFT) - 1)));
		break;
	case LP_FORM_BIN: {
		uint64_t code = (uint64_t)lp_ref_type_index(type);
		lp_store_u64((unsigned char *)p, canon | code << LP_BIN_TYPE_SHIFT, false);
		return LP_BIN_WORD_SIZE;
	}
	case LP_FORM_ORACLE:
	case LP_FORM_COUNT:
		return 0;
	}
	*q++ = '\n';
	return (size_t)(q - p);
}

/* "reference INDEX: canonical number CANON does not fit the FORM form":
 * the stream's reference index (from 0) cannot be written. Returns LP_EINPUT. */
int lp_form_canon_error(lp_error *err, enum lp_form form, uint64_t index, uint64_t canon);

/* Basic merge (laplace-formats(5), "BASIC MERGE OUTPUT"): the merge's sink
 * writing references in a form to out, made by the form's row's
 * constructor (lp_basic_sink_new calls it): every writer of a basic
 * stream (merge, schedule, convert, reduce) writes through one. */
typedef struct lp_basic_sink lp_basic_sink;
lp_basic_sink *lp_basic_sink_new(lp_output *out, bool user_only, enum lp_form form);
/* The rows' constructors, with about buffer bytes of memory for what is
 * not yet written: the encoder's forms (basic, addr, din, bin), and
 * oracle-general's writer (oracle.h), which holds that much of the
 * last references' pages beside a table of the distinct pages. */
lp_basic_sink *lp_encoded_sink_new(lp_output *out, bool user_only, enum lp_form form,
				   size_t buffer);
lp_basic_sink *lp_oracle_sink_new(lp_output *out, bool user_only, enum lp_form form,
				  size_t buffer);
void lp_basic_sink_free(lp_basic_sink *s);
extern const lp_sink lp_basic_sink_ops;

/* laplace dump of an oracle-general file (its registry row): the basic
 * stream's text form, one line a record (oracle.h reads them). */
int lp_oracle_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		   lp_output *out, lp_error *err);

#endif
