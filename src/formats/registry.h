/* The formats laplace reads traces in, one row each: the names that
 * --from, --format, their help and messages list, how a format is told
 * from its first bytes, and what dump and convert do with it. A new format
 * is its own file under formats/ and a row here. */
#ifndef LAPLACE_REGISTRY_H
#define LAPLACE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/progress.h"
#include "formats/forms.h"
#include "formats/pageimage.h"
#include "formats/refio.h"
#include "io/bytesrc.h"
#include "io/io.h"

/* The formats' ids, one a format (its rows share it). */
enum lp_format_id {
	LP_FORMAT_UNKNOWN = -1,
	LP_FORMAT_REF,        /* a raw reference trace, binary or text */
	LP_FORMAT_BYU,
	LP_FORMAT_P6,
	LP_FORMAT_PAGE_IMAGE,
	LP_FORMAT_BASIC,      /* a basic merge stream, text or binary */
	LP_FORMAT_TASK,       /* a per-process task file, either form */
	LP_FORMAT_TASK_BIN,   /* one in the binary task form */
	LP_FORMAT_ORACLE,     /* libCacheSim's oracleGeneral (policies.md §6) */
};

/* Bytes a sniff() is given when the input is that long. */
#define LP_SNIFF_BYTES (2 * LP_PI_LONG_RECORD)

typedef struct lp_format {
	const char *name;
	enum lp_format_id id;
	const char *what;            /* for messages: "a raw reference trace" */
	/* How surely data[0, n) starts a trace of this format; NULL: never
	 * detected (the format's records are arbitrary bytes), or its
	 * reference form's (ref). */
	enum lp_sniff (*sniff)(const unsigned char *data, size_t n);
	enum lp_endian byte_order;   /* of its binary input, unless told */
	/* laplace dump: the whole trace in text on out. Exactly one is set:
	 * dump reads src (and closes it); dump_path opens the trace itself,
	 * so that it cannot be detected on standard input. */
	int (*dump)(lp_byte_source *src, enum lp_endian endian, const lp_torn_policy *policy,
		    lp_output *out, lp_error *err);
	int (*dump_path)(const char *path, enum lp_endian endian, const lp_torn_policy *policy,
			 lp_output *out, lp_error *err);
	/* laplace convert --to text|bin turns its records into raw references
	 * (lp_legacy_to_refs). */
	bool to_refs;
	/* A form of the raw reference trace (name "ref", a row each): how it
	 * is read (its encoding, width, sniff() and source: refio.h), and its
	 * writer. NULL ref: a format the merge does not read. */
	const lp_ref_form *ref;
	lp_ref_writer *(*open_sink)(lp_output *out, enum lp_endian endian);
} lp_format;

/* The rows, in the order detection tries them; the rows of one format
 * are next to each other. */
extern const lp_format lp_formats[];
extern const size_t lp_nformats;

/* The (first) row named name, or NULL. */
const lp_format *lp_format_find(const char *name);
const lp_format *lp_format_of(enum lp_format_id id);
/* The first row whose sniff() is sure of src's first bytes, else the
 * first that finds them likely; NULL when none does, or on a read error
 * (*failed and err set). */
const lp_format *lp_format_detect(lp_byte_source *src, bool *failed, lp_error *err);
/* How surely data[0, n) starts a trace of f's format: its sniff(), or its
 * reference form's; LP_SNIFF_NO when it has none. */
enum lp_sniff lp_format_sniff(const lp_format *f, const unsigned char *data, size_t n);
/* The row of the raw reference form of encoding (LP_REF_BIN or
 * LP_REF_TEXT) and width, or NULL. */
const lp_format *lp_ref_row(enum lp_ref_format encoding, unsigned width);

/* laplace convert and dump: every reference of s written to out by form's
 * writer (a raw reference form; endian for the 32-bit binary form), then
 * a torn last record reported as policy says. A form narrower than s
 * refuses the first vas or address that does not fit it (LP_EINPUT,
 * naming its record and field) before anything of its batch is written.
 * s stays open; out is neither committed nor aborted. References done
 * are told to progress (NULL: none) after each batch. */
int lp_ref_copy(lp_ref_source *s, const lp_format *form, enum lp_endian endian,
		const lp_torn_policy *policy, const lp_progress *progress, lp_output *out,
		lp_error *err);

/* The output forms of a basic stream (forms.h, laplace-formats(5) §8,
 * policies.md §6), a row each, indexed by their id: what --format takes
 * and lists in merge, schedule, convert and reduce, and the sink that
 * writes each. */
typedef struct lp_stream_form {
	const char *name;
	enum lp_form id;
	const char *what;      /* for help: "type canonical lines" */
	size_t record_max;     /* its longest record, in bytes (forms.h) */
	uint64_t canon_max;    /* the largest canonical number it carries */
	bool addresses;        /* it carries the raw address's offset and length */
	const char *header;    /* the bytes before its first record, or NULL */
	size_t header_size;
	/* Its sink, with about buffer bytes for what is not yet written. */
	lp_basic_sink *(*open_sink)(lp_output *out, bool user_only, enum lp_form form,
				    size_t buffer);
	/* A batch of references written by that sink (lp_basic_sink_put). */
	int (*put)(lp_basic_sink *s, const lp_form_batch *b, lp_error *err);
} lp_stream_form;
extern const lp_stream_form lp_stream_forms[LP_FORM_COUNT];

/* The form named name; -1 if there is none. */
int lp_form_parse(const char *name);
/* The forms' names, those with addresses only when addresses is true,
 * as "a, b or c" for help and messages. g_free it. */
char *lp_form_names_list(bool addresses);

/* names[0, n) as a list for help and messages: "a, b, c or d". g_free it. */
char *lp_name_list(const char *const *names, size_t n);

/* The formats' names as a list for help and messages: "ref, byu, p6,
 * page-image, basic", then " or last" when last is given, else the last
 * name after " or ". g_free it. */
char *lp_format_names(const char *last);

#endif
