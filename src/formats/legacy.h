/* Neighbouring legacy trace formats (laplace-formats(5), "NEIGHBOURING
 * FORMATS"): BYU address traces, Pentium bus (p6) traces and page-image LRU
 * behaviour sequences; plus the basic merge stream read back as input for
 * lru. */
#ifndef LAPLACE_LEGACY_H
#define LAPLACE_LEGACY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "core/error.h"
#include "core/record.h"
#include "io/bytesrc.h"
#include "io/io.h"
#include "formats/refio.h"

enum lp_legacy_format {
	LP_LEGACY_UNKNOWN = -1,
	LP_LEGACY_REF,        /* a raw reference trace, binary or text */
	LP_LEGACY_BYU,
	LP_LEGACY_P6,
	LP_LEGACY_PAGE_IMAGE,
	LP_LEGACY_BASIC,      /* a basic merge stream, text or binary */
};
/* "ref", "byu", "p6", "page-image", "basic"; -1 if unknown. */
int lp_legacy_format_parse(const char *s);

/* The readers take an lp_byte_source over (io/bytesrc.h): its first bytes
 * can be looked at before, so that formats are detected on standard input
 * too. */

/* Names copied 16 bytes at a time (the destination needs that much room)
 * and then cut to their length: a fixed-size copy the compiler inlines. */
typedef struct lp_padded_name {
	char text[16];
	uint8_t len;
} lp_padded_name;

static inline char *lp_put_name(char *p, const lp_padded_name *name)
{
	memcpy(p, name->text, 16);
	return p + name->len;
}

/* Detect page-image (tags, hex page numbers and the 4106/8202-byte record
 * structure), raw reference text (the first line parses as one), a basic
 * merge stream (the binary form's header, or a first line that parses as
 * a text record) or a little-endian binary raw reference trace (every
 * whole record of the first 16 KiB has a type byte, their timestamps
 * never decrease, and a byte is 0); LP_LEGACY_UNKNOWN when none holds,
 * -2 on a read error (err set). BYU and p6 records are arbitrary bytes
 * and are never detected. */
int lp_legacy_detect(lp_byte_source *s, lp_error *err);

/* ---- BYU address traces, 12-byte records ---- */

#define LP_BYU_RECORD_SIZE 12
typedef struct lp_byu_record {
	uint32_t addr;
	uint32_t time;    /* ticks since the previous record */
	uint8_t reqtype;
	uint8_t size;
	uint8_t attr;
	uint8_t proc;
} lp_byu_record;

/* Name of a request type ("FETCH"), or NULL when it has none. */
const char *lp_byu_reqtype_name(uint8_t reqtype);
/* The reference type a request becomes ('i', 'r', 'w'), or 0: skipped. */
char lp_byu_ref_type(uint8_t reqtype);
/* The text dump lines of n records, '\n' included, into dst (room for
 * n * LP_BYU_LINE_MAX bytes); returns their length. */
#define LP_BYU_LINE_MAX 64
size_t lp_byu_format(char *dst, const lp_byu_record *recs, size_t n);

typedef struct lp_byu_reader lp_byu_reader;
/* Take over src (closed with the reader); endian is the input's order. */
lp_byu_reader *lp_byu_reader_new(lp_byte_source *src, enum lp_endian endian);
/* Decode up to cap records; the count, 0 at the end, -1 on error. At the
 * end a torn last record is reported under policy (an error if strict). */
ssize_t lp_byu_reader_read(lp_byu_reader *r, lp_byu_record *out, size_t cap,
			   const lp_torn_policy *policy, lp_error *err);
void lp_byu_reader_close(lp_byu_reader *r);

/* ---- Pentium bus traces, 6-byte records ---- */

#define LP_P6_RECORD_SIZE 6
typedef struct lp_p6_record {
	uint32_t addr;
	uint8_t be;      /* byte enables: bit n clear = byte n requested */
	uint8_t control; /* operation in the upper four bits */
} lp_p6_record;

extern const char *const lp_p6_op_names[16];
/* The reference a record becomes: 1 with *ref filled (timestamp = index),
 * or 0 when its operation is skipped. */
int lp_p6_to_ref(const lp_p6_record *rec, uint64_t index, lp_ref *ref);
/* The seed's "%08x %02x %s\n" lines of n records into dst (room for
 * n * LP_P6_LINE_MAX bytes); returns their length. */
#define LP_P6_LINE_MAX 32
size_t lp_p6_format(char *dst, const lp_p6_record *recs, size_t n);

typedef struct lp_p6_reader lp_p6_reader;
/* endian is the address's byte order (big-endian in real traces). */
lp_p6_reader *lp_p6_reader_new(lp_byte_source *src, enum lp_endian endian);
ssize_t lp_p6_reader_read(lp_p6_reader *r, lp_p6_record *out, size_t cap,
			  const lp_torn_policy *policy, lp_error *err);
void lp_p6_reader_close(lp_p6_reader *r);

/* ---- conversion of BYU and p6 traces to raw references ---- */

typedef struct lp_legacy_summary {
	uint64_t records;
	uint64_t refs[3];       /* written, as 'i', 'r', 'w' */
	uint64_t skipped;
	uint64_t skipped_by[256]; /* by BYU request type or p6 operation */
} lp_legacy_summary;

/* One line (no newline) telling what a conversion did: records,
 * references by type, skipped records by request type or operation. */
size_t lp_legacy_summary_text(const lp_legacy_summary *sum, enum lp_legacy_format format,
			      char *buf, size_t size);
/* Read all of src as BYU or p6 (src is closed) and write its references
 * to w; *sum counts records, references and skipped records. Records of
 * which none is a reference are an error (LP_EINPUT, naming the file and
 * what was skipped): such an input is no trace of the format. */
int lp_legacy_to_refs(lp_byte_source *src, enum lp_legacy_format format,
		      enum lp_endian endian, const lp_torn_policy *policy,
		      lp_ref_writer *w, lp_legacy_summary *sum, lp_error *err);
/* Read all of src (closed) in format and write its text dump to out
 * (a basic merge stream: its text form). LP_LEGACY_REF is not handled here
 * (src cannot be handed to the raw reference reader). */
int lp_legacy_dump(lp_byte_source *src, enum lp_legacy_format format,
		   enum lp_endian endian, const lp_torn_policy *policy,
		   lp_output *out, lp_error *err);

/* ---- page-image LRU behaviour sequences ---- */

#define LP_PAGE_BYTES 4096
#define LP_PI_SHORT_RECORD (1 + 4 + LP_PAGE_BYTES + 1 + 4)          /* 4106 */
#define LP_PI_LONG_RECORD (LP_PI_SHORT_RECORD + LP_PAGE_BYTES)       /* 8202 */

typedef struct lp_pi_record {
	char tag;      /* 'C' or 'F' */
	char dirt;     /* 'W', 'R' or 'N' */
	uint16_t fetched;
	uint16_t evicted; /* 0 with 'N' */
	const unsigned char *fetched_image;
	const unsigned char *evicted_image; /* NULL with 'N' */
} lp_pi_record;

/* A line of an LRU behaviour sequence in text form, "tag page dirt
 * evicted\n" (page-image text dump, and lru output); returns its length. */
#define LP_BEHAVIOUR_LINE_MAX 40
size_t lp_behaviour_format(char *dst, char tag, uint64_t page, char dirt, uint64_t evicted);

typedef struct lp_pi_reader lp_pi_reader;
lp_pi_reader *lp_pi_reader_new(lp_byte_source *src);
enum {
	LP_PI_FATAL = -1, /* err set; the record structure is lost */
	LP_PI_BAD = -2,   /* err set; a bad fetch tag or page number, the record
			   * was skipped */
};
/* Next record: 1 (its images stay valid until the next call), 0 at the end
 * (a torn record is reported under policy first), or LP_PI_FATAL or
 * LP_PI_BAD. Messages name file, record index and field. */
int lp_pi_reader_next(lp_pi_reader *r, lp_pi_record *rec, const lp_torn_policy *policy,
		      lp_error *err);
/* Index of the next record (the number read so far). */
uint64_t lp_pi_reader_index(const lp_pi_reader *r);
const char *lp_pi_reader_name(const lp_pi_reader *r);
void lp_pi_reader_close(lp_pi_reader *r);

/* Check every rule of a page-image trace (src is closed), reporting each
 * broken one through report with file and record index. A record with a
 * bad fetch tag or hex digit is reported (once per bad field) and then
 * applied as far as it can be read: its tags always (a bad fetch tag only
 * skips the C and F rules), a page only when it is valid. Only a bad dirt
 * tag, on which a record's length depends, ends the checking.
 * Returns 0 when the whole trace was read (broken rules or not), else an
 * lp_status. */
typedef struct lp_pi_validation {
	uint64_t records;  /* whole records read */
	uint64_t fills;    /* leading N records: M when evicted is true */
	bool evicted;      /* an eviction was seen, so M is known exactly */
	uint64_t problems; /* broken rules reported */
} lp_pi_validation;
int lp_pi_validate(lp_byte_source *src, lp_warn_fn report, void *ctx, lp_pi_validation *res,
		   lp_error *err);
typedef struct lp_pi_writer lp_pi_writer;
/* Write page-image records to out (not owned), binary or as text dump. */
lp_pi_writer *lp_pi_writer_new(lp_output *out, bool text);
int lp_pi_writer_write(lp_pi_writer *w, const lp_pi_record *rec, lp_error *err);
void lp_pi_writer_free(lp_pi_writer *w);

/* ---- basic merge streams read back (read with lp_basic_open) ---- */

/* The reader of a basic merge stream whose first bytes src may already
 * hold; it takes src over (and closes it on failure). */
lp_basic_reader *lp_basic_reader_new(lp_byte_source *src, lp_error *err);
/* Whether the stream is in the bin form (it began with the LPBASIC header). */
bool lp_basic_reader_binary(const lp_basic_reader *r);
/* Whether the first line of data[0, n) (the bytes before the first '\n')
 * is a text record of a basic merge stream. */
bool lp_basic_starts_as_text(const char *data, size_t n);

#endif
