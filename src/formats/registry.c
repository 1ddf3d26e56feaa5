/* The formats' rows (registry.h), and detection: each row's sniff()
 * looks at the first bytes of a trace. */
#include "formats/registry.h"

#include <string.h>

#include <glib.h>

#include "core/byteorder.h"
#include "formats/forms.h"
#include "formats/legacy.h"
#include "formats/oracle.h"
#include "formats/taskline.h"

static bool all_hex(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isxdigit(p[i]))
			return false;
	return true;
}

/* A page-image record starts at p (n bytes available from there): true
 * when its tags and page numbers are well formed and the next record, if
 * any byte follows, starts with a fetch tag. */
static bool looks_page_image(const unsigned char *p, size_t n)
{
	if (n < LP_PI_SHORT_RECORD || (p[0] != 'C' && p[0] != 'F') || !all_hex(p + 1, 4))
		return false;
	const unsigned char *ev = p + 5 + LP_PAGE_BYTES;
	if ((ev[0] != 'W' && ev[0] != 'R' && ev[0] != 'N') || !all_hex(ev + 1, 4))
		return false;
	size_t size = ev[0] == 'N' ? LP_PI_SHORT_RECORD : LP_PI_LONG_RECORD;
	if (n < size)
		return false;
	return n == size || p[size] == 'C' || p[size] == 'F';
}

static enum lp_sniff sniff_page_image(const unsigned char *p, size_t n)
{
	return looks_page_image(p, n) ? LP_SNIFF_SURE : LP_SNIFF_NO;
}

static enum lp_sniff sniff_basic(const unsigned char *p, size_t n)
{
	if ((n >= LP_BIN_MAGIC_SIZE && !memcmp(p, LP_BIN_HEADER, LP_BIN_MAGIC_SIZE)) ||
	    lp_basic_starts_as_text((const char *)p, MIN(n, (size_t)LP_LINE_MAX)))
		return LP_SNIFF_SURE;
	return LP_SNIFF_NO;
}

/* oracle-general has no header, but its records count the time from 1
 * and give every object the size 4096: the first records (at most 4)
 * must, and there must be one. */
static enum lp_sniff sniff_oracle(const unsigned char *p, size_t n)
{
	size_t records = MIN(n / LP_ORACLE_RECORD_SIZE, (size_t)4);
	for (size_t i = 0; i < records; i++, p += LP_ORACLE_RECORD_SIZE)
		if (lp_load_u32(p, false) != i + 1 || lp_load_u64(p + 4, false) == 0 ||
		    lp_load_u32(p + 12, false) != LP_ORACLE_OBJ_SIZE)
			return LP_SNIFF_NO;
	return records ? LP_SNIFF_SURE : LP_SNIFF_NO;
}

/* The binary task form has a header; its text form is a basic stream's
 * too (basic streams' readers take task files). */
static enum lp_sniff sniff_task_bin(const unsigned char *p, size_t n)
{
	return n >= LP_TASK_BIN_MAGIC_SIZE && !memcmp(p, LP_TASK_BIN_HEADER, LP_TASK_BIN_MAGIC_SIZE)
		       ? LP_SNIFF_SURE : LP_SNIFF_NO;
}

/* A form of the raw reference trace: each is dumped by the reader of
 * them all, which opens the file itself (lp_ref_open). */
#define REF_FORM .name = "ref", .id = LP_FORMAT_REF, .what = "a raw reference trace", \
	.byte_order = LP_LITTLE, .dump_path = lp_ref_dump

const lp_format lp_formats[] = {
	/* In lp_ref_forms' order: sure forms first, the headed 64-bit ones
	 * (laplace-formats(5) 10.1) before all; the 32-bit binary form, which
	 * any bytes are, last. */
	{REF_FORM, .ref = &lp_ref_forms[0], .open_sink = lp_ref64_bin_writer_new},
	{REF_FORM, .ref = &lp_ref_forms[1], .open_sink = lp_ref64_text_writer_new},
	{REF_FORM, .ref = &lp_ref_forms[2], .open_sink = lp_ref_text_writer_new},
	{REF_FORM, .ref = &lp_ref_forms[3], .open_sink = lp_ref_bin_writer_new},
	{.name = "byu", .id = LP_FORMAT_BYU, .what = "a BYU address trace", .byte_order = LP_LITTLE,
	 .dump = lp_byu_dump, .to_refs = true},
	{.name = "p6", .id = LP_FORMAT_P6, .what = "a Pentium bus trace", .byte_order = LP_BIG,
	 .dump = lp_p6_dump, .to_refs = true},
	{.name = "page-image", .id = LP_FORMAT_PAGE_IMAGE, .what = "a page-image trace",
	 .sniff = sniff_page_image, .byte_order = LP_LITTLE, .dump = lp_page_image_dump},
	{.name = "basic", .id = LP_FORMAT_BASIC, .what = "a basic merge stream",
	 .sniff = sniff_basic, .byte_order = LP_LITTLE, .dump = lp_basic_dump},
	{.name = "task", .id = LP_FORMAT_TASK, .what = "a per-process task file",
	 .byte_order = LP_LITTLE, .dump = lp_task_dump},
	{.name = "task-bin", .id = LP_FORMAT_TASK_BIN,
	 .what = "a per-process task file in the binary task form", .sniff = sniff_task_bin,
	 .byte_order = LP_LITTLE, .dump = lp_task_dump},
	{.name = "oracle-general", .id = LP_FORMAT_ORACLE,
	 .what = "a libCacheSim oracleGeneral trace", .sniff = sniff_oracle, .byte_order = LP_LITTLE,
	 .dump = lp_oracle_dump},
};
const size_t lp_nformats = sizeof lp_formats / sizeof lp_formats[0];

const lp_format *lp_format_find(const char *name)
{
	for (size_t i = 0; i < lp_nformats; i++)
		if (!strcmp(lp_formats[i].name, name))
			return &lp_formats[i];
	return NULL;
}

const lp_format *lp_format_of(enum lp_format_id id)
{
	for (size_t i = 0; i < lp_nformats; i++)
		if (lp_formats[i].id == id)
			return &lp_formats[i];
	return NULL;
}

enum lp_sniff lp_format_sniff(const lp_format *f, const unsigned char *data, size_t n)
{
	if (f->ref)
		return f->ref->sniff(data, n);
	return f->sniff ? f->sniff(data, n) : LP_SNIFF_NO;
}

const lp_format *lp_format_detect(lp_byte_source *src, bool *failed, lp_error *err)
{
	*failed = false;
	ssize_t n = lp_inbuf_fill(&src->b, LP_SNIFF_BYTES, err);
	if (n < 0) {
		*failed = true;
		return NULL;
	}
	const unsigned char *p = lp_byte_source_data(src);
	const lp_format *likely = NULL;
	for (size_t i = 0; i < lp_nformats; i++) {
		const lp_format *f = &lp_formats[i];
		enum lp_sniff says = lp_format_sniff(f, p, (size_t)n);
		if (says == LP_SNIFF_SURE)
			return f;
		if (says == LP_SNIFF_LIKELY && !likely)
			likely = f;
	}
	return likely;
}

char *lp_name_list(const char *const *names, size_t n)
{
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < n; i++)
		g_string_append_printf(s, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
	return g_string_free(s, FALSE);
}

char *lp_format_names(const char *last)
{
	const char *names[G_N_ELEMENTS(lp_formats) + 1];
	size_t n = 0;
	for (size_t i = 0; i < lp_nformats; i++)
		if (i == 0 || strcmp(lp_formats[i].name, lp_formats[i - 1].name))
			names[n++] = lp_formats[i].name;
	if (last)
		names[n++] = last;
	return lp_name_list(names, n);
}

const lp_stream_form lp_stream_forms[LP_FORM_COUNT] = {
	[LP_FORM_BASIC] = {.name = "basic", .id = LP_FORM_BASIC, .what = "type canonical lines",
			   .record_max = LP_BASIC_RECORD_MAX, .canon_max = UINT64_MAX,
			   .open_sink = lp_encoded_sink_new},
	[LP_FORM_ADDR] = {.name = "addr", .id = LP_FORM_ADDR, .what = "type address length lines",
			  .record_max = LP_ADDR_RECORD_MAX, .canon_max = LP_ADDR_CANON_MAX,
			  .addresses = true, .open_sink = lp_encoded_sink_new},
	[LP_FORM_DIN] = {.name = "din", .id = LP_FORM_DIN, .what = "Dinero's label address lines",
			 .record_max = LP_DIN_RECORD_MAX, .canon_max = LP_ADDR_CANON_MAX,
			 .addresses = true, .open_sink = lp_encoded_sink_new},
	[LP_FORM_BIN] = {.name = "bin", .id = LP_FORM_BIN,
			 .what = "8-byte words after an LPBASIC header",
			 .record_max = LP_BIN_RECORD_MAX, .canon_max = LP_BIN_CANON_MAX,
			 .header = LP_BIN_HEADER, .header_size = LP_BIN_HEADER_SIZE,
			 .open_sink = lp_encoded_sink_new},
	[LP_FORM_ORACLE] = {.name = "oracle-general", .id = LP_FORM_ORACLE,
			    .what = "libCacheSim's oracleGeneral, 24-byte records",
			    .record_max = LP_ORACLE_RECORD_MAX, .canon_max = LP_ORACLE_CANON_MAX,
			    .open_sink = lp_oracle_sink_new},
};
_Static_assert(LP_ORACLE_RECORD_MAX == LP_ORACLE_RECORD_SIZE, "oracle-general's record");

int lp_form_parse(const char *name)
{
	for (int f = 0; f < LP_FORM_COUNT; f++)
		if (!strcmp(name, lp_stream_forms[f].name))
			return f;
	return -1;
}

char *lp_form_names_list(bool addresses)
{
	const char *names[LP_FORM_COUNT];
	size_t n = 0;
	for (int f = 0; f < LP_FORM_COUNT; f++)
		if (addresses || !lp_stream_forms[f].addresses)
			names[n++] = lp_stream_forms[f].name;
	return lp_name_list(names, n);
}

const lp_format *lp_ref_row(enum lp_ref_format encoding, unsigned width)
{
	for (size_t i = 0; i < lp_nformats; i++) {
		const lp_ref_form *ref = lp_formats[i].ref;
		if (ref && ref->encoding == encoding && ref->width == width)
			return &lp_formats[i];
	}
	return NULL;
}
