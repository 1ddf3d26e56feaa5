/* The records that flow through laplace: raw references and kernel events. */
#ifndef LAPLACE_RECORD_H
#define LAPLACE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "laplace/laplace.h" /* enum lp_tag */

#define LP_PAGE_SHIFT 12

/* One raw reference (laplace-formats(5), "RAW REFERENCE TRACE"). */
typedef struct lp_ref {
	uint64_t timestamp;
	uint64_t vas;     /* address-space id: the page-directory frame */
	uint64_t address; /* virtual address: 32 bits, or 64 in a 64-bit
			   * capture (laplace-formats(5), section 10) */
	uint8_t length;   /* bytes touched */
	char type;        /* r w i (user) or R W I (kernel) */
} lp_ref;

static inline int lp_ref_is_kernel(char type) { return type >= 'A' && type <= 'Z'; }
static inline int lp_ref_is_write(char type) { return type == 'w' || type == 'W'; }
/* Index of a valid type in "rwiRWI", or -1. */
int lp_ref_type_index(char type);
extern const char lp_ref_types[7]; /* "rwiRWI" */

extern const char lp_tag_chars[LP_TAG_COUNT + 1]; /* "FTESXMUBKGHDQCV" */
/* What readers are shown: the reference types in lp_ref_types order
 * ("read", ..., "kernel instruction fetch") and the kernel events in
 * lp_tag_chars order ("fork", ..., "page cache drop"; the event table of
 * laplace-formats(5)). */
extern const char *const lp_ref_type_words[6];
extern const char *const lp_tag_words[LP_TAG_COUNT];

#define LP_EVENT_MAX_FIELDS 7

/* One kernel event (laplace-formats(5), "KERNEL EVENT TRACE"). Numeric fields
 * follow the timestamp in table order; for E and M the last field, the name,
 * is text and is not in f[]. */
typedef struct lp_event {
	enum lp_tag tag;
	uint64_t timestamp;
	uint64_t f[LP_EVENT_MAX_FIELDS];
	const char *name;  /* E, M: runs to the end of the line; else NULL */
	const char *line;  /* the line as read, trailing spaces and \r removed */
	size_t line_len;
	uint64_t line_no;  /* 1-based line number in its file */
} lp_event;

/* Field layout of a tag: how many numeric fields follow the timestamp,
 * their names (for error messages), and whether a name ends the line. */
typedef struct lp_tag_info {
	char tag;
	int nfields;
	int has_name;
	const char *fields[LP_EVENT_MAX_FIELDS];
} lp_tag_info;
extern const lp_tag_info lp_tag_table[LP_TAG_COUNT];
/* Tag for a character, or -1. */
int lp_tag_from_char(char c);

#endif
