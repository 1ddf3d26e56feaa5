/* BYU address traces, 12-byte records (laplace-formats(5), "NEIGHBOURING
 * FORMATS"). */
#ifndef LAPLACE_BYU_H
#define LAPLACE_BYU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/byteorder.h"
#include "core/error.h"
#include "io/bytesrc.h"

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

/* A record reader (io/bytesrc.h: lp_record_reader_new and _close) whose
 * endian is the input's order. */
typedef lp_record_reader lp_byu_reader;
/* Decode up to cap records; the count, 0 at the end, -1 on error. At the
 * end a torn last record is reported under policy (an error if strict). */
ssize_t lp_byu_reader_read(lp_byu_reader *r, lp_byu_record *out, size_t cap,
			   const lp_torn_policy *policy, lp_error *err);

#endif
