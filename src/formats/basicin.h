/* Basic merge streams read back as input (read with lp_basic_open). */
#ifndef LAPLACE_BASICIN_H
#define LAPLACE_BASICIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "laplace/laplace.h"
#include "core/error.h"
#include "io/bytesrc.h"

/* The reader of a basic merge stream whose first bytes src may already
 * hold; it takes src over (and closes it on failure). */
lp_basic_reader *lp_basic_reader_new(lp_byte_source *src, lp_error *err);
/* Whether the stream is in the bin form (it began with the LPBASIC header). */
bool lp_basic_reader_binary(const lp_basic_reader *r);
/* Whether the first line of data[0, n) (the bytes before the first '\n')
 * is a text record of a basic merge stream. */
bool lp_basic_starts_as_text(const char *data, size_t n);

#endif
