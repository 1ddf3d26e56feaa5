/* The formats' rows (registry.h), and detection: each row's sniff()
 * looks at the first bytes of a trace. */
#include "formats/registry.h"

#include <string.h>

#include <glib.h>

#include "core/byteorder.h"
#include "formats/forms.h"
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

/* A binary raw reference trace, little-endian, starts at p (n bytes
 * available): every whole record there, and there is one, has a type byte
 * and a timestamp no smaller than the one before, and some byte is 0, as
 * in no text (a timestamp's top byte, a small vas). BYU and p6 records
 * pass by chance about never: a type byte is 6 values of 256. */
static bool looks_binary_ref(const unsigned char *p, size_t n)
{
	size_t records = n / LP_REF_RECORD_SIZE;
	if (records == 0 || !memchr(p, 0, records * LP_REF_RECORD_SIZE))
		return false;
	uint64_t before = 0;
	for (size_t i = 0; i < records; i++, p += LP_REF_RECORD_SIZE) {
		uint64_t timestamp = lp_load_u64(p + 1, false);
		if (lp_ref_type_index((char)p[0]) < 0 || timestamp < before)
			return false;
		before = timestamp;
	}
	return true;
}

static enum lp_sniff sniff_page_image(const unsigned char *p, size_t n)
{
	return looks_page_image(p, n) ? LP_SNIFF_SURE : LP_SNIFF_NO;
}

/* Text is sure (its first line parses); binary records only likely, and
 * tried after the sure rows: a basic merge stream's text comes first. */
static enum lp_sniff sniff_ref(const unsigned char *p, size_t n)
{
	if (lp_ref_starts_as_text((const char *)p, n))
		return LP_SNIFF_SURE;
	return looks_binary_ref(p, n) ? LP_SNIFF_LIKELY : LP_SNIFF_NO;
}

static enum lp_sniff sniff_basic(const unsigned char *p, size_t n)
{
	if ((n >= LP_BIN_MAGIC_SIZE && !memcmp(p, LP_BIN_HEADER, LP_BIN_MAGIC_SIZE)) ||
	    lp_basic_starts_as_text((const char *)p, MIN(n, (size_t)LP_LINE_MAX)))
		return LP_SNIFF_SURE;
	return LP_SNIFF_NO;
}

/* The binary task form has a header; its text form is a basic stream's
 * too (basic streams' readers take task files). */
static enum lp_sniff sniff_task_bin(const unsigned char *p, size_t n)
{
	return n >= LP_TASK_BIN_MAGIC_SIZE && !memcmp(p, LP_TASK_BIN_HEADER, LP_TASK_BIN_MAGIC_SIZE)
		       ? LP_SNIFF_SURE : LP_SNIFF_NO;
}

const lp_format lp_formats[] = {
	{.name = "ref", .id = LP_LEGACY_REF, .what = "a raw reference trace", .sniff = sniff_ref,
	 .byte_order = LP_LITTLE, .dump_path = lp_ref_dump},
	{.name = "byu", .id = LP_LEGACY_BYU, .what = "a BYU address trace", .byte_order = LP_LITTLE,
	 .dump = lp_byu_dump, .to_refs = true},
	{.name = "p6", .id = LP_LEGACY_P6, .what = "a Pentium bus trace", .byte_order = LP_BIG,
	 .dump = lp_p6_dump, .to_refs = true},
	{.name = "page-image", .id = LP_LEGACY_PAGE_IMAGE, .what = "a page-image trace",
	 .sniff = sniff_page_image, .byte_order = LP_LITTLE, .dump = lp_page_image_dump},
	{.name = "basic", .id = LP_LEGACY_BASIC, .what = "a basic merge stream",
	 .sniff = sniff_basic, .byte_order = LP_LITTLE, .dump = lp_basic_dump},
	{.name = "task", .id = LP_LEGACY_TASK, .what = "a per-process task file",
	 .byte_order = LP_LITTLE, .dump = lp_task_dump},
	{.name = "task-bin", .id = LP_LEGACY_TASK_BIN,
	 .what = "a per-process task file in the binary task form", .sniff = sniff_task_bin,
	 .byte_order = LP_LITTLE, .dump = lp_task_dump},
};
const size_t lp_nformats = sizeof lp_formats / sizeof lp_formats[0];

const lp_format *lp_format_find(const char *name)
{
	for (size_t i = 0; i < lp_nformats; i++)
		if (!strcmp(lp_formats[i].name, name))
			return &lp_formats[i];
	return NULL;
}

const lp_format *lp_format_of(enum lp_legacy_format id)
{
	for (size_t i = 0; i < lp_nformats; i++)
		if (lp_formats[i].id == id)
			return &lp_formats[i];
	return NULL;
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
		enum lp_sniff says = f->sniff ? f->sniff(p, (size_t)n) : LP_SNIFF_NO;
		if (says == LP_SNIFF_SURE)
			return f;
		if (says == LP_SNIFF_LIKELY && !likely)
			likely = f;
	}
	return likely;
}

char *lp_format_names(const char *last)
{
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < lp_nformats; i++) {
		if (i > 0)
			g_string_append(s, !last && i == lp_nformats - 1 ? " or " : ", ");
		g_string_append(s, lp_formats[i].name);
	}
	if (last)
		g_string_append_printf(s, " or %s", last);
	return g_string_free(s, FALSE);
}
