/* Legacy formats: BYU, p6 and page-image records decoded and printed as
 * legacy-formats 1-3 say, torn records, bad tags and digits, detection,
 * conversion summaries. (Basic streams read back: test_api.c.) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "formats/legacy.h"
#include "formats/registry.h"

static char *dir;
static lp_error err;
static GString *warnings;

static void setup(void)
{
	dir = g_dir_make_tmp("laplace-legacy-XXXXXX", NULL);
	cr_assert_not_null(dir);
	err = (lp_error){0};
	warnings = g_string_new(NULL);
}

static void teardown(void)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *p = g_build_filename(dir, name, NULL);
		g_unlink(p);
		g_free(p);
	}
	g_dir_close(d);
	g_rmdir(dir);
	g_free(dir);
	g_string_free(warnings, TRUE);
}

TestSuite(legacy, .init = setup, .fini = teardown);

static void collect(void *ctx, const char *msg)
{
	(void)ctx;
	g_string_append_printf(warnings, "%s\n", msg);
}

/* Write bytes to a file in dir; returns its path (freed by the caller). */
static char *file_with(const char *name, const void *bytes, size_t n)
{
	char *path = g_build_filename(dir, name, NULL);
	cr_assert(g_file_set_contents(path, bytes, (gssize)n, NULL));
	return path;
}

static lp_byte_source *open_source(const char *path)
{
	lp_byte_source *s = lp_byte_source_open(path, &err);
	cr_assert_not_null(s, "%s", err.msg);
	return s;
}

/* ---- BYU ---- */

static char *byu_line(lp_byu_record rec)
{
	char buf[LP_BYU_LINE_MAX];
	return g_strndup(buf, lp_byu_format(buf, &rec, 1));
}

Test(legacy, byu_lines)
{
	char *a = byu_line((lp_byu_record){.addr = 0x0041f760, .reqtype = 0, .size = 8,
					  .time = 0xffffffff});
	cr_assert_str_eq(a, "0041f760 FETCH 8 0 0 ffffffff\n");
	char *b = byu_line((lp_byu_record){.addr = 0x1a, .reqtype = 0x42, .size = 0x20,
					  .attr = 3, .proc = 0xab, .time = 0});
	cr_assert_str_eq(b, "0000001a UNKNOWN_42 20 3 ab 0\n");
	char *c = byu_line((lp_byu_record){.addr = 0xffffffff, .reqtype = 0x37});
	cr_assert_str_eq(c, "ffffffff SMIACK 0 0 0 0\n");
	g_free(a);
	g_free(b);
	g_free(c);
}

Test(legacy, byu_request_types)
{
	static const struct { uint8_t v; const char *name; char ref; } types[] = {
		{0x00, "FETCH", 'i'}, {0x01, "MEMREAD", 'r'}, {0x02, "MEMREADINV", 'r'},
		{0x03, "MEMWRITE", 'w'}, {0x10, "IOREAD", 0}, {0x11, "IOWRITE", 0},
		{0x20, "DEFERREPLY", 0}, {0x21, "INTA", 0}, {0x22, "CNTRLAGNTRES", 0},
		{0x23, "BRTRACEREC", 0}, {0x31, "SHUTDOWN", 0}, {0x32, "FLUSH", 0},
		{0x33, "HALT", 0}, {0x34, "SYNC", 0}, {0x35, "FLUSHACK", 0},
		{0x36, "STOPCLKACK", 0}, {0x37, "SMIACK", 0},
	};
	int named = 0;
	for (int v = 0; v < 256; v++)
		named += lp_byu_reqtype_name((uint8_t)v) != NULL;
	cr_assert_eq(named, (int)G_N_ELEMENTS(types));
	for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
		cr_assert_str_eq(lp_byu_reqtype_name(types[i].v), types[i].name);
		cr_assert_eq(lp_byu_ref_type(types[i].v), types[i].ref, "%s", types[i].name);
	}
	cr_assert_eq(lp_byu_ref_type(0x04), 0);
}

static const unsigned char byu_two[] = {
	0x60, 0xf7, 0x41, 0x00, 0x00, 0x08, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x10, 0x03, 0x04, 0x01, 0x02, 0x00, 0x00, 0x01, 0x00,
	0xee, 0xee, /* torn */
};

Test(legacy, byu_reader_little_endian_and_torn_tail)
{
	char *path = file_with("t.byu", byu_two, sizeof byu_two);
	lp_byu_reader *r = lp_record_reader_new(open_source(path), LP_LITTLE);
	lp_torn_policy policy = {.warn = collect};
	lp_byu_record recs[4];
	cr_assert_eq(lp_byu_reader_read(r, recs, 4, &policy, &err), 2);
	cr_assert_eq(recs[0].addr, 0x0041f760);
	cr_assert_eq(recs[0].time, 0xffffffff);
	cr_assert_eq(recs[1].addr, 0x10000000);
	cr_assert_eq(recs[1].reqtype, 3);
	cr_assert_eq(recs[1].size, 4);
	cr_assert_eq(recs[1].attr, 1);
	cr_assert_eq(recs[1].proc, 2);
	cr_assert_eq(recs[1].time, 0x10000);
	cr_assert_eq(lp_byu_reader_read(r, recs, 4, &policy, &err), 0);
	cr_assert_eq(lp_byu_reader_read(r, recs, 4, &policy, &err), 0);
	char *want = g_strdup_printf("%s: torn last record: 2 bytes left over after 2 whole records\n",
				     path);
	cr_assert_str_eq(warnings->str, want);
	lp_record_reader_close(r);
	g_free(want);
	g_free(path);
}

Test(legacy, byu_reader_big_endian_strict)
{
	char *path = file_with("t.byu", byu_two, sizeof byu_two);
	lp_byu_reader *r = lp_record_reader_new(open_source(path), LP_BIG);
	lp_torn_policy policy = {.strict = true, .warn = collect};
	lp_byu_record recs[1];
	cr_assert_eq(lp_byu_reader_read(r, recs, 1, &policy, &err), 1);
	cr_assert_eq(recs[0].addr, 0x60f74100);
	cr_assert_eq(lp_byu_reader_read(r, recs, 1, &policy, &err), 1);
	cr_assert_eq(recs[0].time, 0x00000100);
	cr_assert_eq(lp_byu_reader_read(r, recs, 1, &policy, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	char *want = g_strdup_printf("%s: torn last record: 2 bytes left over after 2 whole records",
				     path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_str_eq(warnings->str, "");
	lp_record_reader_close(r);
	g_free(want);
	g_free(path);
}

/* ---- p6 ---- */

static char *p6_line(uint32_t addr, uint8_t be, uint8_t control)
{
	char buf[LP_P6_LINE_MAX];
	lp_p6_record rec = {addr, be, control};
	return g_strndup(buf, lp_p6_format(buf, &rec, 1));
}

Test(legacy, p6_lines)
{
	char *a = p6_line(0x0041f760, 0x0f, 0xc0);
	char *b = p6_line(0x1, 0x00, 0x9f); /* lower control bits ignored */
	char *c = p6_line(0xffffffff, 0xff, 0x20);
	cr_assert_str_eq(a, "0041f760 0f D_READ\n");
	cr_assert_str_eq(b, "00000001 00 NC_I_FETCH\n");
	cr_assert_str_eq(c, "ffffffff ff INVALID\n");
	g_free(a);
	g_free(b);
	g_free(c);
}

Test(legacy, p6_references)
{
	lp_ref ref;
	/* upper four bytes requested: address + 4, length 4 */
	cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0x1000, 0x0f, 0xc0}, 7, &ref), 1);
	cr_assert(ref.type == 'r' && ref.address == 0x1004 && ref.length == 4 &&
		  ref.timestamp == 7 && ref.vas == 0);
	/* bits 3 and 4 clear: bytes 3 and 4 */
	cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0x1000, 0xe7, 0xf0}, 0, &ref), 1);
	cr_assert(ref.type == 'w' && ref.address == 0x1003 && ref.length == 2);
	/* nothing requested: the address as is, length 0 */
	cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0x1000, 0xff, 0x80}, 0, &ref), 1);
	cr_assert(ref.type == 'i' && ref.address == 0x1000 && ref.length == 0);
	/* all eight bytes; and the address wraps modulo 2^32 */
	cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0x2000, 0x00, 0xe0}, 0, &ref), 1);
	cr_assert(ref.type == 'w' && ref.address == 0x2000 && ref.length == 8);
	cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0xffffffff, 0xfd, 0xd0}, 0, &ref), 1);
	cr_assert(ref.type == 'r' && ref.address == 0 && ref.length == 1);
	cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0x1000, 0x00, 0x90}, 0, &ref), 1);
	cr_assert_eq(ref.type, 'i');
	static const uint8_t skipped[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11};
	for (size_t i = 0; i < sizeof skipped; i++)
		cr_assert_eq(lp_p6_to_ref(&(lp_p6_record){0, 0, (uint8_t)(skipped[i] << 4)}, 0, &ref), 0);
}

Test(legacy, p6_reader_big_endian_default_and_torn)
{
	static const unsigned char bytes[] = {0x00, 0x41, 0xf7, 0x60, 0x0f, 0xc0,
					      0x12, 0x34, 0x56, 0x78, 0x00, 0xf0, 0x01, 0x02, 0x03};
	char *path = file_with("t.p6", bytes, sizeof bytes);
	lp_p6_reader *r = lp_record_reader_new(open_source(path), LP_BIG);
	lp_torn_policy policy = {.warn = collect};
	lp_p6_record recs[8];
	cr_assert_eq(lp_p6_reader_read(r, recs, 8, &policy, &err), 2);
	cr_assert_eq(recs[0].addr, 0x0041f760);
	cr_assert_eq(recs[1].addr, 0x12345678);
	cr_assert_eq(recs[1].control, 0xf0);
	cr_assert_eq(lp_p6_reader_read(r, recs, 8, &policy, &err), 0);
	char *want = g_strdup_printf("%s: torn last record: 3 bytes left over after 2 whole records\n",
				     path);
	cr_assert_str_eq(warnings->str, want);
	lp_record_reader_close(r);
	g_free(want);
	g_free(path);
}

Test(legacy, p6_reader_little_endian)
{
	static const unsigned char bytes[] = {0x60, 0xf7, 0x41, 0x00, 0x0f, 0xc0};
	char *path = file_with("t.p6", bytes, sizeof bytes);
	lp_p6_reader *r = lp_record_reader_new(open_source(path), LP_LITTLE);
	lp_p6_record rec;
	cr_assert_eq(lp_p6_reader_read(r, &rec, 1, NULL, &err), 1);
	cr_assert_eq(rec.addr, 0x0041f760);
	lp_record_reader_close(r);
	g_free(path);
}

/* ---- page-image ---- */

/* Append a record: fetch tag and page field, image of byte f; dirt and
 * evicted page field, image of byte e unless dirt is N. */
static void pi_append(GByteArray *a, const char *fetch, char f, const char *evict, char e)
{
	unsigned char img[LP_PAGE_BYTES];
	g_byte_array_append(a, (const guint8 *)fetch, 5);
	memset(img, f, sizeof img);
	g_byte_array_append(a, img, sizeof img);
	g_byte_array_append(a, (const guint8 *)evict, 5);
	if (evict[0] != 'N') {
		memset(img, e, sizeof img);
		g_byte_array_append(a, img, sizeof img);
	}
}

static char *pi_file(GByteArray *a)
{
	char *path = file_with("t.pi", a->data, a->len);
	g_byte_array_free(a, TRUE);
	return path;
}

Test(legacy, behaviour_lines)
{
	char buf[LP_BEHAVIOUR_LINE_MAX];
	cr_assert_eq(lp_behaviour_format(buf, 'C', 0x1a, 'N', 0), 9);
	cr_assert(!memcmp(buf, "C 1a N 0\n", 9));
	size_t n = lp_behaviour_format(buf, 'F', 3, 'W', 0x1a);
	cr_assert_eq(n, 9);
	cr_assert(!memcmp(buf, "F 3 W 1a\n", 9));
}

Test(legacy, page_image_reader)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C001A", 'x', "N0000", 0);
	pi_append(a, "Cbeef", 'y', "W001a", 'z');
	char *path = pi_file(a);
	lp_pi_reader *r = lp_pi_reader_new(open_source(path));
	lp_pi_record rec;
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 1);
	cr_assert(rec.tag == 'C' && rec.fetched == 0x1a && rec.dirt == 'N' && rec.evicted == 0);
	cr_assert_eq(rec.fetched_image[0], 'x');
	cr_assert_eq(rec.fetched_image[LP_PAGE_BYTES - 1], 'x');
	cr_assert_null(rec.evicted_image);
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 1);
	cr_assert(rec.tag == 'C' && rec.fetched == 0xbeef && rec.dirt == 'W' && rec.evicted == 0x1a);
	cr_assert_eq(rec.fetched_image[LP_PAGE_BYTES - 1], 'y');
	cr_assert_eq(rec.evicted_image[0], 'z');
	cr_assert_eq(rec.evicted_image[LP_PAGE_BYTES - 1], 'z');
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 0);
	cr_assert_eq(lp_pi_reader_index(r), 2);
	lp_pi_reader_close(r);
	g_free(path);
}

static void expect_pi_error(GByteArray *a, int skip, int status, const char *fmt)
{
	char *path = pi_file(a);
	lp_pi_reader *r = lp_pi_reader_new(open_source(path));
	lp_torn_policy strict = {.strict = true};
	lp_pi_record rec;
	for (int i = 0; i < skip; i++)
		cr_assert_eq(lp_pi_reader_next(r, &rec, &strict, &err), 1);
	cr_assert_eq(lp_pi_reader_next(r, &rec, &strict, &err), status);
	char *want = g_strdup_printf(fmt, path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(err.status, LP_EINPUT);
	g_free(want);
	lp_pi_reader_close(r);
	g_free(path);
}

Test(legacy, page_image_bad_fetch_tag_skips_the_record)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "X0002", 'x', "N0000", 0);
	pi_append(a, "C0003", 'x', "N0000", 0);
	char *path = pi_file(a);
	lp_pi_reader *r = lp_pi_reader_new(open_source(path));
	lp_pi_record rec;
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 1);
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), LP_PI_BAD);
	char *want = g_strdup_printf("%s: record 1: field tag: 'X' is not C or F", path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(err.status, LP_EINPUT);
	g_free(want);
	/* the record's length is known from its dirt tag: the next one is read */
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 1);
	cr_assert_eq(rec.fetched, 3);
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 0);
	lp_pi_reader_close(r);
	g_free(path);
}

Test(legacy, page_image_bad_dirt_tag)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "\n0000", 0);
	expect_pi_error(a, 0, LP_PI_FATAL, "%s: record 0: field dirt: byte 0a is not W, R or N");
}

/* Of several bad fields, the first in byte order is the one reported. */
Test(legacy, page_image_bad_dirt_tag_after_other_bad_fields)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "X0001", 'x', "Q0000", 0);
	expect_pi_error(a, 0, LP_PI_FATAL, "%s: record 0: field tag: 'X' is not C or F");
	a = g_byte_array_new();
	pi_append(a, "C000g", 'x', "Q0000", 0);
	expect_pi_error(a, 0, LP_PI_FATAL, "%s: record 0: field fetched page: 'g' is not a hex digit");
}

Test(legacy, page_image_bad_hex_skips_the_record)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C00g1", 'x', "N0000", 0);
	pi_append(a, "C0002", 'x', "R00-1", 'e');
	pi_append(a, "C0003", 'x', "N0000", 0);
	char *path = pi_file(a);
	lp_pi_reader *r = lp_pi_reader_new(open_source(path));
	lp_pi_record rec;
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), LP_PI_BAD);
	char *want = g_strdup_printf("%s: record 0: field fetched page: 'g' is not a hex digit", path);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), LP_PI_BAD);
	want = g_strdup_printf("%s: record 1: field evicted page: '-' is not a hex digit", path);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 1);
	cr_assert_eq(rec.fetched, 3);
	cr_assert_eq(lp_pi_reader_next(r, &rec, NULL, &err), 0);
	lp_pi_reader_close(r);
	g_free(path);
}

Test(legacy, page_image_torn_inside_the_evicted_image)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "C0002", 'x', "W0001", 'e');
	g_byte_array_set_size(a, a->len - 100);
	expect_pi_error(a, 1, LP_PI_FATAL,
			"%s: torn last record: 8102 bytes left over after 1 whole record");
}

Test(legacy, page_image_torn_before_the_dirt_tag_warns)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "C0002", 'x', "N0000", 0);
	g_byte_array_set_size(a, a->len - 4106 + 7);
	char *path = pi_file(a);
	lp_pi_reader *r = lp_pi_reader_new(open_source(path));
	lp_torn_policy policy = {.warn = collect};
	lp_pi_record rec;
	cr_assert_eq(lp_pi_reader_next(r, &rec, &policy, &err), 1);
	cr_assert_eq(lp_pi_reader_next(r, &rec, &policy, &err), 0);
	char *want = g_strdup_printf("%s: torn last record: 7 bytes left over after 1 whole record\n",
				     path);
	cr_assert_str_eq(warnings->str, want);
	g_free(want);
	lp_pi_reader_close(r);
	g_free(path);
}

/* ---- validation ---- */

/* Validate the trace in a; the report lines, with %s for the file. */
static lp_pi_validation validate(GByteArray *a, const char *fmt)
{
	char *path = pi_file(a);
	lp_pi_validation res;
	cr_assert_eq(lp_pi_validate(open_source(path), collect, NULL, &res, &err), 0, "%s", err.msg);
	char *want = g_strdup_printf(fmt, path, path, path, path, path, path, path, path, path);
	cr_assert_str_eq(warnings->str, want);
	g_free(want);
	g_free(path);
	return res;
}

Test(legacy, validate_applies_what_a_bad_hex_digit_leaves)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "C00g2", 'x', "N0000", 0);  /* a fill all the same: M = 2 */
	pi_append(a, "C0003", 'x', "W0001", 'e');
	pi_append(a, "C0004", 'x', "R000x", 'e'); /* 4 is resident now */
	pi_append(a, "C0005", 'x', "R0004", 'e'); /* so evicting it is right */
	pi_append(a, "F0001", 'x', "W0003", 'e');
	pi_append(a, "C0006", 'x', "N0000", 0);  /* a later error, still found */
	pi_append(a, "C0zz7", 'x', "R00q1", 'e'); /* both fields: two reports */
	pi_append(a, "C00h8", 'x', "W0009", 'e'); /* its readable field is checked */
	lp_pi_validation res = validate(a,
		"%s: record 1: field fetched page: 'g' is not a hex digit\n"
		"%s: record 3: field evicted page: 'x' is not a hex digit\n"
		"%s: record 6: field dirt: N after the first eviction\n"
		"%s: record 7: field fetched page: 'z' is not a hex digit\n"
		"%s: record 7: field evicted page: 'q' is not a hex digit\n"
		"%s: record 8: field fetched page: 'h' is not a hex digit\n"
		"%s: record 8: field evicted page: page 9 is not resident\n");
	cr_assert_eq(res.records, 9);
	cr_assert_eq(res.fills, 2);
	cr_assert(res.evicted);
	cr_assert_eq(res.problems, 7);
}

Test(legacy, validate_n_with_an_evicted_page)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "C0002", 'x', "N00A5", 0);
	pi_append(a, "C0003", 'x', "R0001", 'e');
	pi_append(a, "C0004", 'x', "N0002", 0);
	lp_pi_validation res = validate(a,
		"%s: record 1: field evicted page: N with evicted page a5, not 0000\n"
		"%s: record 3: field dirt: N after the first eviction\n"
		"%s: record 3: field evicted page: N with evicted page 2, not 0000\n");
	cr_assert_eq(res.records, 4);
	cr_assert_eq(res.fills, 2);
	cr_assert_eq(res.problems, 3);
}

/* A bad fetch tag hides nothing: the record's length depends on its dirt
 * tag alone, and the record is applied but for the C and F rule. */
Test(legacy, validate_goes_on_after_a_bad_fetch_tag)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "x0002", 'x', "N0000", 0);  /* a fill: M = 2, 2 resident */
	pi_append(a, "\0" "0003", 'x', "W0002", 'e'); /* 2 was resident */
	pi_append(a, "F0002", 'x', "R0003", 'e'); /* 2 was fetched before */
	pi_append(a, "C0001", 'x', "R0009", 'e'); /* later errors all found */
	pi_append(a, "Zzzzz", 'x', "W0001", 'e');
	pi_append(a, "F0004", 'x', "N0000", 0);
	lp_pi_validation res = validate(a,
		"%s: record 1: field tag: 'x' is not C or F\n"
		"%s: record 2: field tag: byte 00 is not C or F\n"
		"%s: record 4: field tag: C on page 1, which was fetched before\n"
		"%s: record 4: field fetched page: page 1 is resident already\n"
		"%s: record 4: field evicted page: page 9 is not resident\n"
		"%s: record 5: field tag: 'Z' is not C or F\n"
		"%s: record 5: field fetched page: 'z' is not a hex digit\n"
		"%s: record 6: field tag: F on page 4, which was never fetched\n"
		"%s: record 6: field dirt: N after the first eviction\n");
	cr_assert_eq(res.records, 7);
	cr_assert_eq(res.fills, 2);
	cr_assert_eq(res.problems, 9);
}

/* The fields before a bad dirt tag are checked; then the record
 * boundaries are lost. */
Test(legacy, validate_stops_at_a_bad_dirt_tag)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "f00x2", 'x', "?0000", 0);
	pi_append(a, "C0003", 'x', "N0000", 0);
	lp_pi_validation res = validate(a,
		"%s: record 1: field tag: 'f' is not C or F\n"
		"%s: record 1: field fetched page: 'x' is not a hex digit\n"
		"%s: record 1: field dirt: '?' is not W, R or N\n");
	cr_assert_eq(res.records, 1);
	cr_assert_eq(res.fills, 1);
	cr_assert_eq(res.problems, 3);
}

/* ---- detection ---- */

static int detect(const void *bytes, size_t n)
{
	char *path = file_with("d", bytes, n);
	lp_byte_source *s = open_source(path);
	bool failed;
	const lp_format *f = lp_format_detect(s, &failed, &err);
	cr_assert(!failed);
	lp_byte_source_close(s);
	g_free(path);
	return f ? (int)f->id : LP_FORMAT_UNKNOWN;
}

Test(legacy, detection)
{
	GByteArray *a = g_byte_array_new();
	pi_append(a, "C0001", 'x', "N0000", 0);
	pi_append(a, "F0002", 'x', "R0001", 'e');
	pi_append(a, "C0003", 'x', "W0002", 'e');
	cr_assert_eq(detect(a->data, a->len), LP_FORMAT_PAGE_IMAGE);
	/* a record followed by a byte that is no fetch tag: not page-image */
	a->data[LP_PI_SHORT_RECORD] = 'x';
	cr_assert_eq(detect(a->data, LP_PI_SHORT_RECORD + 1), LP_FORMAT_UNKNOWN);
	/* one whole record and nothing else: page-image */
	cr_assert_eq(detect(a->data, LP_PI_SHORT_RECORD), LP_FORMAT_PAGE_IMAGE);
	a->data[0] = 'c';
	cr_assert_eq(detect(a->data, a->len), LP_FORMAT_UNKNOWN);
	g_byte_array_free(a, TRUE);
	const char *text = "r 123456789abcdef0 4 9f8e7 9a8b7c6d\nw 1 1 1 1\n";
	cr_assert_eq(detect(text, strlen(text)), LP_FORMAT_REF);
	cr_assert_eq(detect("W 0 ff FFFFFFFF 0 \r\n", 20), LP_FORMAT_REF);
	cr_assert_eq(detect("r 0 100 0 0\n", 12), LP_FORMAT_UNKNOWN);   /* length over 8 bits */
	cr_assert_eq(detect("r 0 1 0\n", 8), LP_FORMAT_UNKNOWN);        /* a field short */
	cr_assert_eq(detect("r 0 1 0 0 0\n", 12), LP_FORMAT_UNKNOWN);   /* a field too many */
	cr_assert_eq(detect("\x60\xf7\x41\x00\x00\x08\x00\x00", 8), LP_FORMAT_UNKNOWN);
	cr_assert_eq(detect("", 0), LP_FORMAT_UNKNOWN);
	/* basic merge streams: a first line that is a basic record, or the
	 * binary form's header (its version is checked when it is read) */
	cr_assert_eq(detect("r 1a\nx\n", 7), LP_FORMAT_BASIC);
	cr_assert_eq(detect("I FFFFFFFFFFFFFFFF \r", 20), LP_FORMAT_BASIC);
	cr_assert_eq(detect("LPBASIC\x01", 8), LP_FORMAT_BASIC);
	cr_assert_eq(detect("LPBASIC\x02\x00", 9), LP_FORMAT_BASIC);
	cr_assert_eq(detect("r 10000000000000000\n", 20), LP_FORMAT_UNKNOWN);
	cr_assert_eq(detect("x 1\n", 4), LP_FORMAT_UNKNOWN);
	cr_assert_eq(detect("LPBASI", 6), LP_FORMAT_UNKNOWN);
	/* binary raw references: type bytes, timestamps in order, a 0 byte */
	static const unsigned char refs[] = {
		'r', 5, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0x40, 0x10, 0, 0,
		'I', 5, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0x44, 0x10, 0, 0xc0,
		'w', 6, 1};
	cr_assert_eq(detect(refs, sizeof refs), LP_FORMAT_REF);  /* a torn tail is not looked at */
	cr_assert_eq(detect(refs, LP_REF_RECORD_SIZE), LP_FORMAT_REF);
	cr_assert_eq(detect(refs, LP_REF_RECORD_SIZE - 1), LP_FORMAT_UNKNOWN);
	unsigned char bad[sizeof refs];
	memcpy(bad, refs, sizeof bad);
	bad[LP_REF_RECORD_SIZE] = 'x';
	cr_assert_eq(detect(bad, sizeof bad), LP_FORMAT_UNKNOWN);
	memcpy(bad, refs, sizeof bad);
	bad[1] = 6; /* the second record's timestamp is earlier */
	cr_assert_eq(detect(bad, sizeof bad), LP_FORMAT_UNKNOWN);
}

Test(legacy, format_names)
{
	cr_assert_eq(lp_format_find("ref")->id, LP_FORMAT_REF);
	cr_assert_eq(lp_format_find("byu")->id, LP_FORMAT_BYU);
	cr_assert_eq(lp_format_find("p6")->id, LP_FORMAT_P6);
	cr_assert_eq(lp_format_find("page-image")->id, LP_FORMAT_PAGE_IMAGE);
	cr_assert_eq(lp_format_find("basic")->id, LP_FORMAT_BASIC);
	cr_assert_eq(lp_format_find("task")->id, LP_FORMAT_TASK);
	cr_assert_eq(lp_format_find("task-bin")->id, LP_FORMAT_TASK_BIN);
	cr_assert_null(lp_format_find("auto"));
	for (size_t i = 0; i < lp_nformats; i++) {
		cr_assert_str_eq(lp_format_of(lp_formats[i].id)->name, lp_formats[i].name);
		cr_assert((lp_formats[i].dump == NULL) != (lp_formats[i].dump_path == NULL),
			  "%s: one way to dump it", lp_formats[i].name);
	}
	char *names = lp_format_names(NULL), *or_auto = lp_format_names("auto");
	cr_assert_str_eq(names, "ref, byu, p6, page-image, basic, task, task-bin or oracle-general");
	cr_assert_str_eq(or_auto,
			 "ref, byu, p6, page-image, basic, task, task-bin, oracle-general or auto");
	g_free(names);
	g_free(or_auto);
}

/* ---- conversion summaries ---- */

Test(legacy, summaries)
{
	lp_legacy_summary s = {.records = 10, .refs = {1, 2, 3}, .skipped = 4};
	s.skipped_by[0x10] = 1;
	s.skipped_by[0x20] = 2;
	s.skipped_by[0x99] = 1;
	char buf[256];
	lp_legacy_summary_text(&s, LP_FORMAT_BYU, buf, sizeof buf);
	cr_assert_str_eq(buf, "10 records, 6 references (i 1, r 2, w 3), 4 skipped "
			      "(IOREAD 1, DEFERREPLY 2, UNKNOWN_99 1)");
	lp_legacy_summary p = {.records = 5, .refs = {0, 0, 1}, .skipped = 4};
	p.skipped_by[0] = 1;
	p.skipped_by[10] = 2;
	p.skipped_by[5] = 1;
	lp_legacy_summary_text(&p, LP_FORMAT_P6, buf, sizeof buf);
	cr_assert_str_eq(buf, "5 records, 1 reference (i 0, r 0, w 1), 4 skipped "
			      "(INVALID 3, IO_READ 1)");
	lp_legacy_summary none = {.records = 1, .refs = {1, 0, 0}};
	lp_legacy_summary_text(&none, LP_FORMAT_BYU, buf, sizeof buf);
	cr_assert_str_eq(buf, "1 record, 1 reference (i 1, r 0, w 0), 0 skipped");
}

/* ---- the real BYU trace (../shared/data/byu/README.md) ---- */

#define REAL_BYU SOURCE_ROOT "/../shared/data/byu/trace.sample.tr"

Test(legacy, real_byu_trace)
{
	if (!g_file_test(REAL_BYU, G_FILE_TEST_IS_REGULAR)) {
		/* Criterion shows a skip's reason only with --verbose. */
		fprintf(stderr, "legacy::real_byu_trace skipped: %s is absent\n", REAL_BYU);
		cr_skip_test("%s is absent", REAL_BYU);
	}
	lp_byu_reader *r = lp_record_reader_new(open_source(REAL_BYU), LP_LITTLE);
	lp_torn_policy policy = {.warn = collect};
	lp_byu_record recs[4096];
	uint64_t by_type[256] = {0}, total = 0, first_time = 0;
	ssize_t n;
	while ((n = lp_byu_reader_read(r, recs, 4096, &policy, &err)) > 0) {
		if (total == 0)
			first_time = recs[0].time;
		for (ssize_t i = 0; i < n; i++)
			by_type[recs[i].reqtype]++;
		total += (uint64_t)n;
	}
	cr_assert_eq(n, 0, "%s", err.msg);
	lp_record_reader_close(r);
	/* counts from the README and an independent decoding of the file */
	cr_assert_eq(total, 224449);
	cr_assert_eq(first_time, 0xffffffff);
	cr_assert_eq(by_type[0x00], 134719); /* FETCH */
	cr_assert_eq(by_type[0x01], 54866);  /* MEMREAD */
	cr_assert_eq(by_type[0x02], 5657);   /* MEMREADINV */
	cr_assert_eq(by_type[0x03], 26928);  /* MEMWRITE */
	cr_assert_eq(by_type[0x10], 4);      /* IOREAD */
	cr_assert_eq(by_type[0x11], 4);      /* IOWRITE */
	cr_assert_eq(by_type[0x20], 2271);   /* DEFERREPLY */
	cr_assert_str_eq(warnings->str, REAL_BYU ": torn last record: 2 bytes left over after "
					     "224449 whole records\n");
}
