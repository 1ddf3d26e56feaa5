/* Page-image LRU behaviour sequences (laplace-formats(5), "NEIGHBOURING
 * FORMATS"): reader, checker and writer. */
#ifndef LAPLACE_PAGEIMAGE_H
#define LAPLACE_PAGEIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "io/bytesrc.h"
#include "io/io.h"

#define LP_PAGE_BYTES 4096
#define LP_PI_PAGES 65536 /* page numbers of page-image traces are 16-bit */
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

/* ---- the rules of a page-image trace (laplace-formats(5),
 * "Page-image LRU behaviour sequence") ---- */

typedef struct lp_pi_check lp_pi_check;
lp_pi_check *lp_pi_check_new(void);
/* Which fields of a record could be read (its dirt tag always is). */
enum {
	LP_PI_TAG_KNOWN = 1,
	LP_PI_FETCHED_KNOWN = 2,
	LP_PI_EVICTED_KNOWN = 4,
	LP_PI_ALL_KNOWN = 7,
};
/* Check one record against those before it, then apply it, as far as the
 * fields known says were readable go (the rules of validate, and of every
 * reader of the format). Each broken rule is passed to problem (a field
 * and what is wrong); returns how many. */
unsigned lp_pi_check_record(lp_pi_check *c, const lp_pi_record *rec, unsigned known,
			    lp_warn_fn problem, void *ctx);
/* N records before the first eviction; whether an eviction was seen. */
uint64_t lp_pi_check_fills(const lp_pi_check *c);
bool lp_pi_check_evicted(const lp_pi_check *c);
void lp_pi_check_free(lp_pi_check *c);

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

#endif
