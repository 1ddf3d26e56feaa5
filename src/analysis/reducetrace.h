/* laplace reduce over a stream held whole (trace.h): its checks and its
 * reduction (reduce.h), which the command and lp_reduce (laplace.h)
 * share. No I/O: the command writes the reduced stream, the library
 * returns it. */
#ifndef LAPLACE_REDUCETRACE_H
#define LAPLACE_REDUCETRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/reduce.h"
#include "analysis/trace.h"
#include "core/error.h"

/* --method: "sad" or "olr" (*olr set); 0, or LP_EUSAGE with err set
 * (NULL: "--method is required"). */
int lp_reduce_method_parse(const char *method, bool *olr, lp_error *err);

/* The references of in reduced by SAD or OLR for frames >= 1 into out
 * (dense pages of in, in->canonical their numbers). 0, or LP_EINPUT with
 * err set naming name: more than LP_REDUCE_MAX_REFS references, or a
 * canonical number above canon_max (the output form's, form naming it)
 * at its first reference, said before any work; or LP_EIO (lp_trace_map). */
int lp_reduce_trace(lp_trace *in, const char *name, bool olr, uint64_t frames,
		    uint64_t canon_max, const char *form, lp_refs *out, lp_error *err);

#endif
