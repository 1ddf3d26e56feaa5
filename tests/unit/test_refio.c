/* Raw reference traces: hex helpers, binary and text readers and writers,
 * format detection, torn records and every rejection message. Expected
 * bytes and lines are worked out by hand from laplace-formats(5), "RAW REFERENCE TRACE". */
#include <criterion/criterion.h>
#include <string.h>
#include <zlib.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "scratch.h"
#include "io/inbuf.h"
#include "formats/refio.h"
#include "formats/registry.h"
#include "core/numbers.h"

SCRATCH_SUITE(refio);

/* The first record of the spec's example, in both byte orders. */
static const unsigned char example_le[18] = {
	'r', 0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12, 0x04,
	0xe7, 0xf8, 0x09, 0x00, 0x6d, 0x7c, 0x8b, 0x9a};
static const unsigned char example_be[18] = {
	'r', 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x04,
	0x00, 0x09, 0xf8, 0xe7, 0x9a, 0x8b, 0x7c, 0x6d};
static const lp_ref example = {
	.type = 'r', .timestamp = 0x123456789abcdef0ull, .length = 4,
	.vas = 0x9f8e7, .address = 0x9a8b7c6d};

static void assert_ref(const lp_ref *got, const lp_ref *want)
{
	cr_assert_eq(got->type, want->type);
	cr_assert_eq(got->timestamp, want->timestamp, "timestamp %llx",
		     (unsigned long long)got->timestamp);
	cr_assert_eq(got->length, want->length);
	cr_assert_eq(got->vas, want->vas, "vas %x", got->vas);
	cr_assert_eq(got->address, want->address, "address %x", got->address);
}

/* Open path, read everything into refs (at most cap); returns the count, or
 * -1 with err set. */
static ssize_t read_refs(const char *path, enum lp_ref_format format, enum lp_endian endian,
			 lp_ref *refs, size_t cap, size_t *torn, enum lp_ref_format *detected)
{
	lp_ref_source *r = lp_ref_open(path, format, endian, &err);
	if (!r)
		return -1;
	size_t total = 0;
	ssize_t n;
	while ((n = lp_ref_source_read(r, refs + total, cap - total, &err)) > 0)
		total += (size_t)n;
	if (torn)
		*torn = lp_ref_source_torn_bytes(r);
	if (detected)
		*detected = lp_ref_reader_format(r);
	lp_ref_source_close(r);
	return n < 0 ? -1 : (ssize_t)total;
}

/* The error message expected for path: "PATH" + suffix. */
static void assert_error(int status, const char *path, const char *suffix)
{
	cr_assert_eq(err.status, status);
	char *want = g_strconcat(path, suffix, NULL);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
}

Test(refio, fmt_hex)
{
	char buf[17];
	struct { uint64_t v; const char *s; } cases[] = {
		{0, "0"}, {1, "1"}, {0xf, "f"}, {0x10, "10"}, {0xabc, "abc"},
		{0x9a8b7c6d, "9a8b7c6d"}, {0x8000000000000000ull, "8000000000000000"},
		{UINT64_MAX, "ffffffffffffffff"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		size_t n = lp_fmt_hex(buf, cases[i].v);
		buf[n] = '\0';
		cr_assert_str_eq(buf, cases[i].s);
	}
}

Test(refio, parse_hex)
{
	uint64_t v;
	cr_assert_eq(lp_parse_hex("0", 1, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(lp_parse_hex("00fF", 4, &v), 0);
	cr_assert_eq(v, 0xff);
	cr_assert_eq(lp_parse_hex("ABCdef", 6, &v), 0);
	cr_assert_eq(v, 0xabcdef);
	cr_assert_eq(lp_parse_hex("ffffffffffffffff", 16, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(lp_parse_hex("0000000000000000000001", 22, &v), 0);
	cr_assert_eq(v, 1);
	/* Only the given length counts. */
	cr_assert_eq(lp_parse_hex("12zz", 2, &v), 0);
	cr_assert_eq(v, 0x12);
	cr_assert_eq(lp_parse_hex("", 0, &v), -1);
	cr_assert_eq(lp_parse_hex("g", 1, &v), -1);
	cr_assert_eq(lp_parse_hex("0x1", 3, &v), -1);
	cr_assert_eq(lp_parse_hex("-1", 2, &v), -1);
	cr_assert_eq(lp_parse_hex("10000000000000000", 17, &v), LP_HEX_OVERFLOW);
}

Test(refio, option_names)
{
	cr_assert_eq(lp_ref_format_parse("auto"), LP_REF_AUTO);
	cr_assert_eq(lp_ref_format_parse("bin"), LP_REF_BIN);
	cr_assert_eq(lp_ref_format_parse("text"), LP_REF_TEXT);
	cr_assert_eq(lp_ref_format_parse("binary"), -1);
	cr_assert_eq(lp_endian_parse("little"), LP_LITTLE);
	cr_assert_eq(lp_endian_parse("big"), LP_BIG);
	cr_assert_eq(lp_endian_parse("Big"), -1);
	char *names = lp_ref_format_names();
	cr_assert_str_eq(names, "bin, text or auto");
	g_free(names);
	cr_assert_eq(lp_ref_format_check(LP_REF_TEXT, "f", &err), 0);
	cr_assert_eq(lp_ref_format_check(-1, "f", &err), LP_EUSAGE);
	cr_assert_str_eq(err.msg, "f: -1 is not LP_REF_AUTO, LP_REF_BIN or LP_REF_TEXT");
}

Test(refio, binary_little_and_big_endian)
{
	lp_ref got[2];
	char *le = scratch_file(dir, "le.bin", example_le, 18);
	char *be = scratch_file(dir, "be.bin", example_be, 18);
	cr_assert_eq(read_refs(le, LP_REF_BIN, LP_LITTLE, got, 2, NULL, NULL), 1, "%s", err.msg);
	assert_ref(&got[0], &example);
	cr_assert_eq(read_refs(be, LP_REF_BIN, LP_BIG, got, 2, NULL, NULL), 1, "%s", err.msg);
	assert_ref(&got[0], &example);
	g_free(le);
	g_free(be);
}

Test(refio, binary_every_type_and_index)
{
	unsigned char data[6 * 18] = {0};
	for (int i = 0; i < 6; i++) {
		data[i * 18] = (unsigned char)"rwiRWI"[i];
		data[i * 18 + 1] = (unsigned char)i; /* timestamp i */
	}
	char *p = scratch_file(dir, "all.bin", data, sizeof data);
	lp_ref_source *r = lp_ref_open(p, LP_REF_BIN, LP_LITTLE, &err);
	cr_assert_not_null(r);
	lp_ref got[4];
	cr_assert_eq(lp_ref_source_read(r, got, 4, &err), 4);
	cr_assert_eq(lp_ref_source_index(r), 4);
	cr_assert_eq(got[3].type, 'R');
	cr_assert_eq(got[3].timestamp, 3);
	cr_assert_eq(lp_ref_source_read(r, got, 4, &err), 2);
	cr_assert_eq(got[1].type, 'I');
	cr_assert_eq(lp_ref_source_index(r), 6);
	cr_assert_eq(lp_ref_source_read(r, got, 4, &err), 0);
	cr_assert_eq(lp_ref_source_torn_bytes(r), 0);
	cr_assert_str_eq(lp_ref_source_name(r), p);
	cr_assert_eq(r->ops->fraction(r), 1.0, "read to its end");
	char *where = r->ops->where(r, 5), *want = g_strdup_printf("%s: record 5", p);
	cr_assert_str_eq(where, want);
	g_free(where);
	g_free(want);
	lp_ref_source_close(r);
	g_free(p);
}

Test(refio, binary_bad_type_names_the_record)
{
	unsigned char data[3 * 18] = {0};
	data[0] = 'r';
	data[18] = 'w';
	data[36] = 'A';
	char *p = scratch_file(dir, "bad.bin", data, sizeof data);
	lp_ref got[8];
	cr_assert_eq(read_refs(p, LP_REF_BIN, LP_LITTLE, got, 8, NULL, NULL), -1);
	assert_error(LP_EINPUT, p, ": record 2: field type: bad reference type 0x41");
	g_free(p);
}

Test(refio, binary_torn_last_record)
{
	unsigned char data[2 * 18 + 7] = {0};
	data[0] = 'r';
	data[18] = 'w';
	char *p = scratch_file(dir, "torn.bin", data, sizeof data);
	lp_ref got[8];
	size_t torn = 0;
	cr_assert_eq(read_refs(p, LP_REF_BIN, LP_LITTLE, got, 8, &torn, NULL), 2);
	cr_assert_eq(torn, 7);
	g_free(p);
}

Test(refio, binary_across_buffer_boundaries)
{
	/* More records than fit one read buffer, and 18 does not divide 1 MiB. */
	size_t n = 200000;
	unsigned char *data = g_malloc0(n * 18);
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = data + i * 18;
		p[0] = (unsigned char)"rwiRWI"[i % 6];
		memcpy(p + 1, &(uint64_t){i * 3}, 8); /* the test host is little-endian */
		p[9] = (unsigned char)i;
		memcpy(p + 14, &(uint32_t){(uint32_t)i << 12}, 4);
	}
	char *path = scratch_file(dir, "many.bin", data, n * 18);
	lp_ref *got = g_new(lp_ref, n);
	cr_assert_eq(read_refs(path, LP_REF_BIN, LP_LITTLE, got, n, NULL, NULL), (ssize_t)n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(got[i].type, "rwiRWI"[i % 6]);
		cr_assert_eq(got[i].timestamp, i * 3);
		cr_assert_eq(got[i].length, (uint8_t)i);
		cr_assert_eq(got[i].address, (uint32_t)i << 12);
	}
	g_free(got);
	g_free(data);
	g_free(path);
}

/* Records handed to another thread are stored otherwise (past the cache)
 * but are the same records, in either byte order, and a bad one is still
 * named. */
Test(refio, handed_off_records_are_the_same)
{
	unsigned char data[3 * 18];
	memcpy(data, example_be, 18);
	memcpy(data + 18, example_be, 18);
	memcpy(data + 36, example_be, 18);
	data[36] = 'x';
	char *p = scratch_file(dir, "handoff.bin", data, sizeof data);
	lp_ref_source *r = lp_ref_open(p, LP_REF_BIN, LP_BIG, &err);
	cr_assert_not_null(r);
	r->ops->set_handoff(r, true);
	lp_ref got[3];
	memset(got, 0xa5, sizeof got);
	cr_assert_eq(lp_ref_source_read(r, got, 2, &err), 2);
	assert_ref(&got[0], &example);
	assert_ref(&got[1], &example);
	cr_assert_eq(lp_ref_source_read(r, got, 1, &err), -1);
	cr_assert_eq(lp_ref_source_index(r), 2);
	lp_ref_source_close(r);
	assert_error(LP_EINPUT, p, ": record 2: field type: bad reference type 0x78");
	g_free(p);
}

/* Records out of time order are counted as they are decoded, across
 * reads; text input counts none. */
Test(refio, binary_order_breaks_are_counted)
{
	const uint8_t stamps[6] = {1, 3, 2, 5, 4, 4};
	unsigned char data[6 * 18] = {0};
	for (int i = 0; i < 6; i++) {
		data[i * 18] = 'r';
		data[i * 18 + 1] = stamps[i];
	}
	char *p = scratch_file(dir, "order.bin", data, sizeof data);
	lp_ref_source *r = lp_ref_open(p, LP_REF_BIN, LP_LITTLE, &err);
	cr_assert_not_null(r);
	lp_ref got[6];
	cr_assert_eq(lp_ref_source_read(r, got, 2, &err), 2);
	cr_assert_eq(r->ops->order_breaks(r), 0);
	cr_assert_eq(lp_ref_source_read(r, got, 2, &err), 2);
	cr_assert_eq(r->ops->order_breaks(r), 1, "3 then 2");
	cr_assert_eq(lp_ref_source_read(r, got, 6, &err), 2);
	cr_assert_eq(r->ops->order_breaks(r), 2, "5 then 4; 4 then 4 is in order");
	lp_ref_source_close(r);
	g_free(p);
	p = scratch_file(dir, "order.txt", "r 3 4 1 1000\nr 2 4 1 1000\n", 26);
	r = lp_ref_open(p, LP_REF_TEXT, LP_LITTLE, &err);
	cr_assert_not_null(r);
	cr_assert_eq(lp_ref_source_read(r, got, 6, &err), 2);
	cr_assert_eq((void *)r->ops->order_breaks, NULL, "text is checked by its caller");
	char *where = r->ops->where(r, 1), *want = g_strdup_printf("%s:2", p);
	cr_assert_str_eq(where, want, "index 1 is line 2");
	g_free(where);
	g_free(want);
	lp_ref_source_close(r);
	g_free(p);
}

Test(refio, text_records)
{
	const char *text =
		"r 123456789abcdef0 4 9f8e7 9a8b7c6d\n"
		"W 00FF 0 0 FFFFFFFF\r\n"
		"i 0 ff 000000001 2   \n"
		"I ffffffffffffffff 1 ffffffff 0";
	char *p = scratch_file(dir, "t.txt", text, strlen(text));
	lp_ref got[8];
	cr_assert_eq(read_refs(p, LP_REF_TEXT, LP_LITTLE, got, 8, NULL, NULL), 4, "%s", err.msg);
	assert_ref(&got[0], &example);
	assert_ref(&got[1], &(lp_ref){.type = 'W', .timestamp = 0xff, .address = 0xffffffff});
	assert_ref(&got[2], &(lp_ref){.type = 'i', .length = 0xff, .vas = 1, .address = 2});
	assert_ref(&got[3], &(lp_ref){.type = 'I', .timestamp = UINT64_MAX, .length = 1,
				      .vas = 0xffffffff});
	g_free(p);
}

/* Lines as writers write them take a one-pass parser, any other line the
 * general one: mixed, across many refills of the read buffer, each line
 * must read the same. Irregular lines: leading zeros beyond a field's
 * width, CRLF, upper case, trailing blanks. */
Test(refio, text_plain_and_irregular_lines_across_buffer_boundaries)
{
	size_t n = 200000;
	GString *text = g_string_new(NULL);
	for (size_t i = 0; i < n; i++) {
		char type = "rwiRWI"[i % 6];
		uint64_t ts = (uint64_t)i * 0x100000001ull;
		unsigned length = (unsigned)(i % 256), vas = (unsigned)(i * 7), address = (unsigned)(i << 12);
		switch (i % 7) {
		case 3:
			g_string_append_printf(text, "%c %017" G_GINT64_MODIFIER "x %03x %x %x\n", type,
					       ts, length, vas, address);
			break;
		case 4:
			g_string_append_printf(text, "%c %" G_GINT64_MODIFIER "X %X %X %X\r\n", type,
					       ts, length, vas, address);
			break;
		case 5:
			g_string_append_printf(text, "%c %" G_GINT64_MODIFIER "x %x %09x %x  \n", type,
					       ts, length, vas, address);
			break;
		default:
			g_string_append_printf(text, "%c %" G_GINT64_MODIFIER "x %x %x %x\n", type,
					       ts, length, vas, address);
		}
	}
	char *path = scratch_file(dir, "mixed.txt", text->str, text->len);
	lp_ref *got = g_new(lp_ref, n);
	cr_assert_eq(read_refs(path, LP_REF_TEXT, LP_LITTLE, got, n, NULL, NULL), (ssize_t)n, "%s",
		     err.msg);
	for (size_t i = 0; i < n; i++)
		assert_ref(&got[i], &(lp_ref){.type = "rwiRWI"[i % 6],
					      .timestamp = (uint64_t)i * 0x100000001ull,
					      .length = (uint8_t)(i % 256), .vas = (uint32_t)(i * 7),
					      .address = (uint32_t)(i << 12)});
	g_free(path);

	/* A damaged line far in (line 100003, a plain one: 100002 % 7 == 0): its
	 * number and field, whichever parser met it. */
	char *at = text->str;
	for (size_t i = 0; i < 100002; i++)
		at = strchr(at, '\n') + 1;
	strchr(at, '\n')[-1] = 'z';
	size_t line = 100003;
	path = scratch_file(dir, "damaged.txt", text->str, text->len);
	cr_assert_eq(read_refs(path, LP_REF_TEXT, LP_LITTLE, got, n, NULL, NULL), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	char *want = g_strdup_printf("%s:%zu: field address: bad hex number", path, line);
	cr_assert(g_str_has_prefix(err.msg, want), "%s", err.msg);
	g_free(want);
	g_free(path);
	g_free(got);
	g_string_free(text, TRUE);
}

/* A one-line text trace must fail with message "PATH" + suffix. */
static void text_rejected(const char *line, const char *suffix)
{
	char *text = g_strconcat("r 1 1 1 1\n", line, "\nr 2 2 2 2\n", NULL);
	char *p = scratch_file(dir, "bad.txt", text, strlen(text));
	lp_ref got[8];
	cr_assert_eq(read_refs(p, LP_REF_TEXT, LP_LITTLE, got, 8, NULL, NULL), -1, "%s accepted", line);
	assert_error(LP_EINPUT, p, suffix);
	g_free(p);
	g_free(text);
}

Test(refio, text_errors)
{
	text_rejected("r 10 zz 1 1000", ":2: field length: bad hex number 'zz'");
	text_rejected("r 1g 4 1 1000", ":2: field timestamp: bad hex number '1g'");
	text_rejected("r 10 4 -1 1000", ":2: field vas: bad hex number '-1'");
	text_rejected("r 10 4 1 0x10", ":2: field address: bad hex number '0x10'");
	text_rejected("r 10 4 1 123456789", ":2: field address: 123456789 does not fit 32 bits");
	text_rejected("r 10 4 100000000 0", ":2: field vas: 100000000 does not fit 32 bits");
	text_rejected("r 10 100 1 0", ":2: field length: 100 does not fit 8 bits");
	text_rejected("r 10000000000000000 1 1 0",
		      ":2: field timestamp: 10000000000000000 does not fit 64 bits");
	text_rejected("x 10 4 1 0", ":2: field type: bad reference type 'x'");
	text_rejected("rw 10 4 1 0", ":2: field type: bad reference type 'rw'");
}

Test(refio, text_errors_name_the_missing_or_extra_field)
{
	text_rejected("", ":2: field type: missing");
	text_rejected("   \r", ":2: field type: missing");
	text_rejected("r", ":2: field timestamp: missing");
	text_rejected("r 10", ":2: field length: missing");
	text_rejected("r 10 4", ":2: field vas: missing");
	text_rejected("r 10 4 1", ":2: field address: missing");
	text_rejected("r 10 4 1 0 xyz", ":2: extra field 'xyz' after address");
	text_rejected("r 10 4 1 0 0 0", ":2: extra field '0' after address");
}

/* One space separates fields: a leading space or a second one makes an
 * empty field; trailing spaces and a CR are tolerated. */
Test(refio, text_errors_name_the_empty_field)
{
	text_rejected(" r 10 4 1 0", ":2: field type: empty (one space separates fields)");
	text_rejected("r  10 4 1 0", ":2: field timestamp: empty (one space separates fields)");
	text_rejected("r 10  4 1 0", ":2: field length: empty (one space separates fields)");
	text_rejected("r 10 4  1 0", ":2: field vas: empty (one space separates fields)");
	text_rejected("r 10 4 1  0", ":2: field address: empty (one space separates fields)");
	text_rejected("r 10 4 1 0  0", ":2: extra field '0' after address");
}

Test(refio, text_errors_escape_bytes_that_are_not_printable)
{
	text_rejected("r\t10 4 1 0 0", ":2: field type: bad reference type 'r\\x0910'");
	text_rejected("r 10 \x1b[2J 1 0", ":2: field length: bad hex number '\\x1b[2J'");
	text_rejected("r 10 4 1 \xc3\xa9", ":2: field address: bad hex number '\\xc3\\xa9'");
	/* A NUL is shown, not taken for the end of the token. */
	const char text[] = "r 1 1 1 1\nr 10 4 1 1\0002\n";
	char *p = scratch_file(dir, "nul.txt", text, sizeof text - 1);
	lp_ref got[4];
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, NULL), -1);
	assert_error(LP_EINPUT, p, ":2: field address: bad hex number '1\\x002'");
	g_free(p);
}

Test(refio, text_error_quotes_at_most_40_characters)
{
	char *line = g_strconcat("r 10 4 1 ", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", NULL);
	text_rejected(line, ":2: field address: bad hex number 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'");
	g_free(line);
}

Test(refio, auto_detects_text_binary_and_empty)
{
	lp_ref got[4];
	enum lp_ref_format detected;
	const char *text = "r 123456789abcdef0 4 9f8e7 9a8b7c6d\n";
	char *t = scratch_file(dir, "t", text, strlen(text));
	cr_assert_eq(read_refs(t, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, &detected), 1);
	cr_assert_eq(detected, LP_REF_TEXT);
	assert_ref(&got[0], &example);
	char *b = scratch_file(dir, "b", example_le, 18);
	cr_assert_eq(read_refs(b, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, &detected), 1);
	cr_assert_eq(detected, LP_REF_BIN);
	assert_ref(&got[0], &example);
	char *e = scratch_file(dir, "e", "", 0);
	cr_assert_eq(read_refs(e, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, &detected), 0);
	cr_assert_eq(detected, LP_REF_BIN);
	g_free(t);
	g_free(b);
	g_free(e);
}

static void assert_detected(const char *data, size_t n, bool text)
{
	cr_assert_eq(lp_ref_starts_as_text(data, n), text, "'%.*s'", (int)n, data);
}

Test(refio, detection_looks_at_the_first_line_only)
{
	/* Valid first lines, tolerated endings, whatever follows. */
	assert_detected("r 1 4 1 1000", 12, true);
	assert_detected("r 1 4 1 1000\n", 13, true);
	assert_detected("r 1 4 1 1000 \r\n\0\0\0", 18, true);
	assert_detected("I ffffffffffffffff ff ffffffff ffffffff\n\xff", 41, true);
	/* Anything else is binary, however printable. */
	assert_detected("", 0, false);
	assert_detected("\n", 1, false);
	assert_detected("r 1 4 1\nr 1 4 1 1000\n", 21, false);
	assert_detected("r 1 4 1 1000 0\n", 15, false);
	assert_detected("r 1 100 1 1000\n", 15, false);
	assert_detected("x 1 4 1 1000\n", 13, false);
	assert_detected("r 1 4 1 1\0\n", 11, false);
	/* Only 64 bytes are looked at: a valid start padded with spaces past
	 * them is text, a valid record starting past them is not. */
	char padded[100];
	memset(padded, ' ', sizeof padded);
	memcpy(padded, "r 1 4 1 1000", 12);
	assert_detected(padded, sizeof padded, true);
	memset(padded, ' ', sizeof padded);
	memcpy(padded + 70, "r 1 4 1 1000", 12);
	assert_detected(padded, sizeof padded, false);
}

Test(refio, text_damaged_after_the_first_line_names_line_and_field)
{
	/* A NUL on line 3 no longer turns the whole trace binary. */
	const char text[] = "r 1 4 1 1000\nw 2 4 1 2000\nr 3 4 1 30\00000\n";
	char *p = scratch_file(dir, "nul", text, sizeof text - 1);
	lp_ref got[4];
	enum lp_ref_format detected;
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, &detected), -1);
	cr_assert_eq(detected, LP_REF_TEXT);
	assert_error(LP_EINPUT, p, ":3: field address: bad hex number '30\\x0000'");
	g_free(p);
}

Test(refio, binary_record_that_prints_as_text_is_binary)
{
	/* 18 printable bytes, no '\n': type 'r', then digits and spaces. */
	const char rec[] = "r 1 4 1 1000 5 6 7";
	char *p = scratch_file(dir, "printable", rec, 18);
	lp_ref got[2];
	enum lp_ref_format detected;
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_LITTLE, got, 2, NULL, &detected), 1, "%s", err.msg);
	cr_assert_eq(detected, LP_REF_BIN);
	cr_assert_eq(got[0].type, 'r');
	cr_assert_eq(got[0].length, '0'); /* byte 9 */
	g_free(p);
}

Test(refio, text_line_limit)
{
	/* A longest line (spaces before the '\n' count) is read; one byte more
	 * is refused, naming the line. */
	GString *s = g_string_new("r 1 4 1 1000\nr 2 4 1 2000");
	while (s->len < 13 + LP_LINE_MAX)
		g_string_append_c(s, ' ');
	g_string_append(s, "\nr 3 4 1 3000");
	char *ok = scratch_file(dir, "ok", s->str, s->len);
	lp_ref got[4];
	cr_assert_eq(read_refs(ok, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, NULL), 3, "%s", err.msg);
	g_string_insert_c(s, 14, ' ');
	char *bad = scratch_file(dir, "bad", s->str, s->len);
	cr_assert_eq(read_refs(bad, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, NULL), -1);
	assert_error(LP_EINPUT, bad, ":2: line longer than 4096 bytes");
	g_string_free(s, TRUE);
	g_free(ok);
	g_free(bad);
}

Test(refio, auto_detects_inside_gzip)
{
	unsigned char gz[256];
	z_stream zs = {0};
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)example_be;
	zs.avail_in = 18;
	zs.next_out = gz;
	zs.avail_out = sizeof gz;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	char *p = scratch_file(dir, "be.gz", gz, zs.total_out);
	deflateEnd(&zs);
	lp_ref got[2];
	enum lp_ref_format detected;
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_BIG, got, 2, NULL, &detected), 1, "%s", err.msg);
	cr_assert_eq(detected, LP_REF_BIN);
	assert_ref(&got[0], &example);
	g_free(p);
}

Test(refio, unknown_form)
{
	char *p = scratch_file(dir, "t.txt", "r 1 1 1 1\n", 10);
	cr_assert_null(lp_ref_open(p, (enum lp_ref_format)3, LP_LITTLE, &err));
	cr_assert_eq(err.status, LP_EUSAGE);
	cr_assert_str_eq(err.msg, "reference trace form: 3 is not LP_REF_AUTO, LP_REF_BIN or "
				  "LP_REF_TEXT");
	g_free(p);
}

Test(refio, missing_file)
{
	char *p = g_build_filename(dir, "nope", NULL);
	cr_assert_null(lp_ref_open(p, LP_REF_AUTO, LP_LITTLE, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot open %s: No such file or directory", p);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(p);
}

/* Write refs with a writer into path; returns the file's contents. */
static char *write_refs(const char *name, enum lp_ref_format format, enum lp_endian endian,
			const lp_ref *refs, size_t n, gsize *len)
{
	char *p = g_build_filename(dir, name, NULL);
	lp_output *out = lp_output_open(p, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out);
	lp_ref_writer *w = lp_ref_row(format, 32)->open_sink(out, endian);
	cr_assert_eq(lp_ref_writer_write(w, refs, n, &err), 0);
	cr_assert_eq(lp_ref_writer_finish(w, &err), 0);
	cr_assert_eq(lp_output_commit(out, &err), 0);
	char *data;
	cr_assert(g_file_get_contents(p, &data, len, NULL));
	g_free(p);
	return data;
}

Test(refio, text_writer)
{
	lp_ref refs[] = {
		example,
		{.type = 'W', .timestamp = 0, .length = 0, .vas = 0, .address = 0},
		{.type = 'I', .timestamp = UINT64_MAX, .length = 0xff, .vas = 0xffffffff, .address = 0x10},
	};
	gsize n;
	char *data = write_refs("o.txt", LP_REF_TEXT, LP_LITTLE, refs, 3, &n);
	cr_assert_str_eq(data, "r 123456789abcdef0 4 9f8e7 9a8b7c6d\n"
			       "W 0 0 0 0\n"
			       "I ffffffffffffffff ff ffffffff 10\n");
	g_free(data);
}

Test(refio, binary_writer_both_orders)
{
	gsize n;
	char *le = write_refs("le", LP_REF_BIN, LP_LITTLE, &example, 1, &n);
	cr_assert_eq(n, 18);
	cr_assert(memcmp(le, example_le, 18) == 0);
	char *be = write_refs("be", LP_REF_BIN, LP_BIG, &example, 1, &n);
	cr_assert_eq(n, 18);
	cr_assert(memcmp(be, example_be, 18) == 0);
	g_free(le);
	g_free(be);
}

Test(refio, writer_free_discards)
{
	char *p = g_build_filename(dir, "o", NULL);
	lp_output *out = lp_output_open(p, LP_COMPRESS_NONE, &err);
	lp_ref_writer *w = lp_ref_row(LP_REF_TEXT, 32)->open_sink(out, LP_LITTLE);
	cr_assert_eq(lp_ref_writer_write(w, &example, 1, &err), 0);
	lp_ref_writer_free(w);
	cr_assert_eq(lp_output_commit(out, &err), 0);
	char *data;
	gsize n;
	cr_assert(g_file_get_contents(p, &data, &n, NULL));
	cr_assert_eq(n, 0);
	g_free(data);
	g_free(p);
}

Test(refio, round_trips_through_both_forms)
{
	size_t n = 50000; /* several writer buffers of text */
	lp_ref *refs = g_new(lp_ref, n);
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		refs[i] = (lp_ref){.type = "rwiRWI"[x % 6], .timestamp = x, .length = (uint8_t)(x >> 8),
				   .vas = (uint32_t)(x >> 16), .address = (uint32_t)(x >> 32)};
	}
	lp_ref *got = g_new(lp_ref, n);
	enum lp_ref_format forms[] = {LP_REF_TEXT, LP_REF_BIN, LP_REF_BIN};
	enum lp_endian orders[] = {LP_LITTLE, LP_LITTLE, LP_BIG};
	for (int k = 0; k < 3; k++) {
		gsize len;
		g_free(write_refs("rt", forms[k], orders[k], refs, n, &len));
		char *p = g_build_filename(dir, "rt", NULL);
		enum lp_ref_format detected;
		cr_assert_eq(read_refs(p, LP_REF_AUTO, orders[k], got, n, NULL, &detected), (ssize_t)n);
		cr_assert_eq(detected, forms[k]);
		for (size_t i = 0; i < n; i++)
			assert_ref(&got[i], &refs[i]);
		g_free(p);
	}
	g_free(got);
	g_free(refs);
}

/* ---- the 64-bit forms (laplace-formats(5) 10.1) ---- */

/* A record of the 64-bit binary form, worked out by hand: little-endian
 * whatever the reader's byte order. */
static const unsigned char example64[26] = {
	'W', 0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12, 0xff,
	0x00, 0xd0, 0xbc, 0x0a, 0x80, 0x88, 0xff, 0xff,
	0x00, 0xf0, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x00};
static const lp_ref wide_example = {
	.type = 'W', .timestamp = 0x123456789abcdef0ull, .length = 0xff,
	.vas = 0xffff88800abcd000ull, .address = 0x7ffffffff000ull};

Test(refio, binary64_records_torn_and_handed_off)
{
	unsigned char data[8 + 2 * 26 + 25];
	memcpy(data, "LPREF64\x01", 8);
	memcpy(data + 8, example64, 26);
	memcpy(data + 34, example64, 26);
	memcpy(data + 60, example64, 25);
	char *p = scratch_file(dir, "t.ref64", data, sizeof data);
	for (int handoff = 0; handoff < 2; handoff++) {
		lp_ref_source *r = lp_ref_open(p, LP_REF_BIN, LP_BIG, &err);
		cr_assert_not_null(r, "%s", err.msg);
		cr_assert_eq(lp_ref_source_width(r), 64);
		r->ops->set_handoff(r, handoff);
		lp_ref got[4];
		cr_assert_eq(lp_ref_source_read(r, got, 4, &err), 2, "%s", err.msg);
		assert_ref(&got[0], &wide_example);
		assert_ref(&got[1], &wide_example);
		cr_assert_eq(lp_ref_source_read(r, got, 4, &err), 0);
		cr_assert_eq(lp_ref_source_torn_bytes(r), 25);
		char *where = r->ops->where(r, 1), *want = g_strconcat(p, ": record 1", NULL);
		cr_assert_str_eq(where, want);
		g_free(where);
		g_free(want);
		lp_ref_source_close(r);
	}
	g_free(p);
}

Test(refio, binary64_header_errors)
{
	unsigned char v2[8 + 26];
	memcpy(v2, "LPREF64\x02", 8);
	memcpy(v2 + 8, example64, 26);
	char *p = scratch_file(dir, "v2.ref64", v2, sizeof v2);
	lp_ref got[2];
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_LITTLE, got, 2, NULL, NULL), -1);
	assert_error(LP_EINPUT, p, ": header (byte 7): field version: 2 is not 1");
	g_free(p);
	p = scratch_file(dir, "short.ref64", "LPREF64", 7);
	cr_assert_eq(read_refs(p, LP_REF_BIN, LP_LITTLE, got, 2, NULL, NULL), -1);
	assert_error(LP_EINPUT, p, ": header (byte 7): field version: missing");
	g_free(p);
	/* A bad type byte is named by its record, from 0 after the header. */
	unsigned char bad[8 + 2 * 26];
	memcpy(bad, "LPREF64\x01", 8);
	memcpy(bad + 8, example64, 26);
	memcpy(bad + 34, example64, 26);
	bad[34] = 'q';
	p = scratch_file(dir, "bad.ref64", bad, sizeof bad);
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_LITTLE, got, 2, NULL, NULL), -1);
	assert_error(LP_EINPUT, p, ": record 1: field type: bad reference type 0x71");
	g_free(p);
}

Test(refio, text64_header_and_line_numbers)
{
	const char text[] = "#laplace-ref 64 \r\n"
			    "W 123456789abcdef0 ff ffff88800abcd000 7ffffffff000\r\n"
			    "W 123456789ABCDEF0 FF FFFF88800ABCD000 00007FFFFFFFF000\n"
			    "r 1 1 1 10000000000000000\n";
	char *p = scratch_file(dir, "t.txt", text, strlen(text));
	lp_ref got[4];
	enum lp_ref_format detected;
	cr_assert_eq(read_refs(p, LP_REF_AUTO, LP_LITTLE, got, 4, NULL, &detected), -1);
	cr_assert_eq(detected, LP_REF_TEXT);
	assert_error(LP_EINPUT, p, ":4: field address: 10000000000000000 does not fit 64 bits");
	/* Cut and decoded apart: the same records, the same line numbers. */
	lp_ref_source *r = lp_ref_open(p, LP_REF_TEXT, LP_LITTLE, &err);
	cr_assert_not_null(r, "%s", err.msg);
	cr_assert_eq(lp_ref_source_width(r), 64);
	lp_text_chunk c = {0};
	cr_assert_eq(r->ops->cut(r, &c, 2, &err), 2);
	cr_assert_eq(c.first_line, 2);
	cr_assert_eq(r->ops->decode(r, &c, got, &err), 2, "%s", err.msg);
	assert_ref(&got[0], &wide_example);
	assert_ref(&got[1], &wide_example);
	cr_assert_eq(r->ops->cut(r, &c, 2, &err), 1);
	cr_assert_eq(r->ops->decode(r, &c, got, &err), -1);
	assert_error(LP_EINPUT, p, ":4: field address: 10000000000000000 does not fit 64 bits");
	char *where = r->ops->where(r, 0), *want = g_strconcat(p, ":2", NULL);
	cr_assert_str_eq(where, want);
	g_free(where);
	g_free(want);
	lp_text_chunk_free(&c);
	lp_ref_source_close(r);
	g_free(p);
}

/* lp_ref_copy into a narrower form: the first vas or address past 32 bits
 * is refused, naming its record and field; into the same width, every
 * reference is kept. */
Test(refio, copy_narrows_or_names_what_does_not_fit)
{
	const char text[] = "#laplace-ref 64\n"
			    "r 1 4 ffffffff ffffffff\n"
			    "r 2 4 100000000 100000000\n";
	char *p = scratch_file(dir, "w.txt", text, strlen(text));
	char *out_path = g_build_filename(dir, "narrow.txt", NULL);
	const lp_torn_policy strict = {.strict = true};
	for (int narrow = 1; narrow >= 0; narrow--) {
		lp_ref_source *s = lp_ref_open(p, LP_REF_AUTO, LP_LITTLE, &err);
		cr_assert_not_null(s, "%s", err.msg);
		lp_output *out = lp_output_open(out_path, LP_COMPRESS_NONE, &err);
		cr_assert_not_null(out, "%s", err.msg);
		int rc = lp_ref_copy(s, lp_ref_row(LP_REF_TEXT, narrow ? 32 : 64), LP_LITTLE,
				     &strict, NULL, out, &err);
		lp_ref_source_close(s);
		if (narrow) {
			cr_assert_eq(rc, LP_EINPUT);
			assert_error(LP_EINPUT, p, ":3: field vas: 100000000 does not fit 32 bits");
			lp_output_abort(out);
			cr_assert_not(g_file_test(out_path, G_FILE_TEST_EXISTS));
			continue;
		}
		cr_assert_eq(rc, 0, "%s", err.msg);
		cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
		gchar *got = NULL;
		cr_assert(g_file_get_contents(out_path, &got, NULL, NULL));
		cr_assert_str_eq(got, text);
		g_free(got);
	}
	g_free(out_path);
	g_free(p);
}
