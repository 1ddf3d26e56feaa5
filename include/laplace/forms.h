/* The forms of a merged reference stream (laplace-formats(5), "FORMS FOR
 * SIMULATORS"): the basic merge's "type canonical" lines and the three
 * forms simulators read, which carry the same references in the same order. */
#ifndef LAPLACE_FORMS_H
#define LAPLACE_FORMS_H

#include <stdint.h>

enum lp_form {
	LP_FORM_BASIC, /* type canonical */
	LP_FORM_ADDR,  /* type byte-address length */
	LP_FORM_DIN,   /* Dinero: label byte-address */
	LP_FORM_BIN,   /* header, then one little-endian word per reference */
	LP_FORM_COUNT
};
extern const char *const lp_form_names[LP_FORM_COUNT];
/* The form named name; -1 if there is none. */
int lp_form_parse(const char *name);

/* bin: the 8-byte header, then words whose bits 0-60 are the canonical
 * number and bits 61-63 the type's code. */
#define LP_BIN_HEADER "LPBASIC\x01"
#define LP_BIN_HEADER_SIZE 8
#define LP_BIN_WORD_SIZE 8
#define LP_BIN_TYPE_SHIFT 61
#define LP_BIN_CANON_MAX ((UINT64_C(1) << LP_BIN_TYPE_SHIFT) - 1)
/* A type's code is its index in lp_ref_types ("rwiRWI", laplace/record.h);
 * codes 6 and 7 are invalid. */
#define LP_BIN_MAGIC_SIZE 7 /* "LPBASIC", before the version byte */

/* addr and din: the canonical page's byte address, with the raw address's
 * offset in the page; the largest canonical number that has one. */
#define LP_ADDR_CANON_MAX (UINT64_MAX >> 12)
/* din's label of a reference type: 0 read, 1 write, 2 instruction fetch. */
char lp_din_label(char type);

#endif
