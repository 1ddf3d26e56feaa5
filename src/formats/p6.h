/* Pentium bus (p6) traces, 6-byte records (laplace-formats(5),
 * "NEIGHBOURING FORMATS"). */
#ifndef LAPLACE_P6_H
#define LAPLACE_P6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/byteorder.h"
#include "core/error.h"
#include "core/record.h"
#include "io/bytesrc.h"

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

/* A record reader (io/bytesrc.h: lp_record_reader_new and _close) whose
 * endian is the address's byte order (big-endian in real traces). */
typedef lp_record_reader lp_p6_reader;
ssize_t lp_p6_reader_read(lp_p6_reader *r, lp_p6_record *out, size_t cap,
			  const lp_torn_policy *policy, lp_error *err);

#endif
