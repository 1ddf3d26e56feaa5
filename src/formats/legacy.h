/* Neighbouring legacy trace formats (laplace-formats(5), "NEIGHBOURING
 * FORMATS"): BYU address traces, Pentium bus (p6) traces and page-image LRU
 * behaviour sequences; plus the basic merge stream read back as input for
 * lru. */
#ifndef LAPLACE_LEGACY_H
#define LAPLACE_LEGACY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "core/record.h"
#include "io/bytesrc.h"
#include "io/io.h"
#include "formats/refio.h"
#include "formats/registry.h"

/* The readers, each of which takes an lp_byte_source over (io/bytesrc.h):
 * its first bytes can be looked at before, so that formats are detected on
 * standard input too. */
#include "formats/basicin.h"
#include "formats/byu.h"
#include "formats/p6.h"
#include "formats/pageimage.h"

/* Each format's id, enum lp_format_id: registry.h. */

/* ---- conversion of BYU and p6 traces to raw references ---- */

typedef struct lp_legacy_summary {
	uint64_t records;
	uint64_t refs[3];       /* written, as 'i', 'r', 'w' */
	uint64_t skipped;
	uint64_t skipped_by[256]; /* by BYU request type or p6 operation */
} lp_legacy_summary;

/* One line (no newline) telling what a conversion did: records,
 * references by type, skipped records by request type or operation. */
size_t lp_legacy_summary_text(const lp_legacy_summary *sum, enum lp_format_id format,
			      char *buf, size_t size);
/* Read all of src as BYU or p6 (src is closed) and write its references
 * to w; *sum counts records, references and skipped records. Records of
 * which none is a reference are an error (LP_EINPUT, naming the file and
 * what was skipped): such an input is no trace of the format. */
int lp_legacy_to_refs(lp_byte_source *src, enum lp_format_id format,
		      enum lp_endian endian, const lp_torn_policy *policy,
		      lp_ref_writer *w, lp_legacy_summary *sum, lp_error *err);
/* Read all of src (closed) in format and write its text dump to out
 * (a basic merge stream: its text form): the format's row's dump().
 * LP_FORMAT_REF is not handled here (src cannot be handed to the raw
 * reference reader). */
int lp_legacy_dump(lp_byte_source *src, enum lp_format_id format,
		   enum lp_endian endian, const lp_torn_policy *policy,
		   lp_output *out, lp_error *err);

/* The rows' dump()s (registry.h). */
int lp_byu_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		lp_output *out, lp_error *err);
int lp_p6_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
	       lp_output *out, lp_error *err);
int lp_page_image_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		       lp_output *out, lp_error *err);
int lp_basic_dump(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		  lp_output *out, lp_error *err);

#endif
