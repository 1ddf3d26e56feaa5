/* Kernel event traces: every tag's fields, names with spaces, skipped
 * lines, and each rejection message (laplace-formats(5), "KERNEL EVENT TRACE"). */
#include <criterion/criterion.h>
#include <string.h>
#include <zlib.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "scratch.h"
#include "io/inbuf.h"
#include "formats/kern.h"

SCRATCH_SUITE(kern);

/* Parse a copy of text; returns lp_kern_parse_line's result. */
static char linebuf[4096];
static int parse(const char *text, lp_event *ev)
{
	g_strlcpy(linebuf, text, sizeof linebuf);
	return lp_kern_parse_line(linebuf, strlen(linebuf), ev, &err);
}

Test(kern, every_tag)
{
	struct {
		const char *line;
		enum lp_tag tag;
		int n;
		uint64_t f[7];
		const char *name;
	} cases[] = {
		{"F 1 a b", LP_TAG_F, 2, {0xa, 0xb}, NULL},
		{"T 2 a c", LP_TAG_T, 2, {0xa, 0xc}, NULL},
		{"E 3 a 9f8e7 /bin/sh", LP_TAG_E, 2, {0xa, 0x9f8e7}, "/bin/sh"},
		{"S 4 a 9f8e7", LP_TAG_S, 2, {0xa, 0x9f8e7}, NULL},
		{"X 5 a", LP_TAG_X, 1, {0xa}, NULL},
		{"M 123456789abcdefe 100 1a2b3c4d 9000 8efa5567 35 5 1029384756afbecd foobar.so",
		 LP_TAG_M, 7, {0x100, 0x1a2b3c4d, 0x9000, 0x8efa5567, 0x35, 0x5, 0x1029384756afbecd},
		 "foobar.so"},
		{"U 7 a 8000 2000", LP_TAG_U, 3, {0xa, 0x8000, 0x2000}, NULL},
		{"B 8 a 9000 b000", LP_TAG_B, 3, {0xa, 0x9000, 0xb000}, NULL},
		{"K 9 a 1000 2000 5000 3000", LP_TAG_K, 5, {0xa, 0x1000, 0x2000, 0x5000, 0x3000}, NULL},
		{"G a 3 5000", LP_TAG_G, 2, {0x3, 0x5000}, NULL},
		{"H b a 3 40000000", LP_TAG_H, 3, {0xa, 0x3, 0x40000000}, NULL},
		{"D c a 40000000", LP_TAG_D, 2, {0xa, 0x40000000}, NULL},
		{"Q d 3", LP_TAG_Q, 1, {0x3}, NULL},
		{"C e 1f ffffffffffffffff 7", LP_TAG_C, 3, {0x1f, UINT64_MAX, 0x7}, NULL},
		{"V f 1f", LP_TAG_V, 1, {0x1f}, NULL},
	};
	cr_assert_eq(G_N_ELEMENTS(cases), LP_TAG_COUNT);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		lp_event ev;
		cr_assert_eq(parse(cases[i].line, &ev), 1, "%s: %s", cases[i].line, err.msg);
		cr_assert_eq(ev.tag, cases[i].tag);
		for (int k = 0; k < cases[i].n; k++)
			cr_assert_eq(ev.f[k], cases[i].f[k], "%s field %d", cases[i].line, k);
		if (cases[i].name)
			cr_assert_str_eq(ev.name, cases[i].name);
		else
			cr_assert_null(ev.name);
		cr_assert_eq(ev.line_len, strlen(cases[i].line));
		cr_assert(memcmp(ev.line, cases[i].line, ev.line_len) == 0);
	}
	lp_event ev;
	cr_assert_eq(parse("M 123456789abcdefe 100 1a2b3c4d 9000 8efa5567 35 5 1029384756afbecd foobar.so", &ev), 1);
	cr_assert_eq(ev.timestamp, 0x123456789abcdefeull);
}

Test(kern, names_keep_spaces_and_lose_trailing_ones)
{
	lp_event ev;
	cr_assert_eq(parse("E 1 2 3 my program  name  \r", &ev), 1);
	cr_assert_str_eq(ev.name, "my program  name");
	cr_assert_eq(ev.line_len, strlen("E 1 2 3 my program  name"));
	cr_assert_str_eq(ev.line, "E 1 2 3 my program  name");
	cr_assert_eq(parse("X 1 2 \r", &ev), 1);
	cr_assert_eq(ev.line_len, 5);
}

Test(kern, uppercase_and_leading_zeros)
{
	lp_event ev;
	cr_assert_eq(parse("S 00000000000000000000ABC 0Ff 00", &ev), 1, "%s", err.msg);
	cr_assert_eq(ev.timestamp, 0xabc);
	cr_assert_eq(ev.f[0], 0xff);
	cr_assert_eq(ev.f[1], 0);
}

Test(kern, blank_and_comment_lines)
{
	lp_event ev;
	cr_assert_eq(parse("", &ev), 0);
	cr_assert_eq(parse("   ", &ev), 0);
	cr_assert_eq(parse("\r", &ev), 0);
	cr_assert_eq(parse("# F 1 2 3", &ev), 0);
	cr_assert_eq(parse("#", &ev), 0);
}

static void rejected(const char *line, const char *msg)
{
	lp_event ev;
	cr_assert_eq(parse(line, &ev), -1, "'%s' accepted", line);
	cr_assert_eq(err.status, LP_EINPUT);
	cr_assert_str_eq(err.msg, msg);
}

Test(kern, errors)
{
	rejected("Z 1 2", "unknown tag 'Z'");
	rejected("f 1 2 3", "unknown tag 'f'");
	rejected(" F 1 2 3", "bad tag '': a tag is one character followed by a space");
	rejected("FF 1 2 3", "bad tag 'FF': a tag is one character followed by a space");
	rejected("F\t1 2 3", "bad tag 'F\\x091': a tag is one character followed by a space");
	rejected("X", "tag X: missing field timestamp");
	rejected("X 1", "tag X: missing field task");
	rejected("K 1 2 3 4 5", "tag K: missing field new_length");
	rejected("E 1 2 3", "tag E: missing field name");
	rejected("M 1 2 3 4 5 6 7", "tag M: missing field file");
	rejected("M 1 2 3 4 5 6 7 8", "tag M: missing field name");
	rejected("X 1 2 3", "tag X: extra field '3'");
	rejected("V 1 2 3 4", "tag V: extra field '3'");
	rejected("S 1 zz 3", "tag S: field task: bad hex number 'zz'");
	rejected("S 0x1 2 3", "tag S: field timestamp: bad hex number '0x1'");
	rejected("C 1 2 -3 4", "tag C: field file: bad hex number '-3'");
	rejected("G 1 2 10000000000000000", "tag G: field size: 10000000000000000 does not fit 64 bits");
	rejected("E 1 2 3  ", "tag E: missing field name");
}

Test(kern, errors_escape_bytes_that_are_not_printable)
{
	rejected("S 1 \x1b[2J\x1b[H 3", "tag S: field task: bad hex number '\\x1b[2J\\x1b[H'");
	rejected("\x1b 1 2", "unknown tag '\\x1b'");
	rejected("\x9b 1 2", "unknown tag '\\x9b'");
	rejected("X 1 2 \x7f\x07", "tag X: extra field '\\x7f\\x07'");
}

Test(kern, name_keeps_its_leading_spaces)
{
	lp_event ev;
	cr_assert_eq(parse("E 1 2 3   two leading", &ev), 1, "%s", err.msg);
	cr_assert_str_eq(ev.name, "  two leading");
	cr_assert_eq(parse("M 1 2 3 4 5 6 7 8  lib.so", &ev), 1, "%s", err.msg);
	cr_assert_str_eq(ev.name, " lib.so");
	cr_assert_eq(ev.f[6], 8);
}

/* One space separates fields: a second one before a number makes an empty
 * field (laplace-formats(5), "KERNEL EVENT TRACE"). */
Test(kern, two_spaces_make_an_empty_field)
{
	rejected("E  1 2 3 sh", "tag E: field timestamp: empty (one space separates fields)");
	rejected("S 1  2 3", "tag S: field task: empty (one space separates fields)");
	rejected("S 1 2  3", "tag S: field vas: empty (one space separates fields)");
	rejected("M 1 2 3 4 5 6 7  8 lib.so", "tag M: field file: empty (one space separates fields)");
	rejected("X 1 2  3", "tag X: extra field '3'");
	lp_event ev;
	cr_assert_eq(parse("S 1 2 3  \r", &ev), 1, "%s", err.msg); /* trailing blanks: tolerated */
	cr_assert_eq(ev.f[1], 3);
}

Test(kern, reader_skips_lines_and_counts_them)
{
	const char *text =
		"# a kernel trace\n"
		"\n"
		"S 1 a 9f8e7\r\n"
		"   \n"
		"E 2 a 9f8e7 /usr/bin/two words\n"
		"X 3 a";
	char *p = scratch_file(dir, "k", text, strlen(text));
	lp_event_source *r = lp_kern_reader_open(p, &err);
	cr_assert_not_null(r);
	lp_event ev;
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 1);
	cr_assert_eq(ev.tag, LP_TAG_S);
	char *where = r->ops->where(r, &ev), *want = g_strdup_printf("%s:3", p);
	cr_assert_str_eq(where, want);
	g_free(where);
	g_free(want);
	cr_assert_eq(ev.line_no, 3);
	cr_assert_eq(ev.line_len, 11);
	cr_assert(memcmp(ev.line, "S 1 a 9f8e7", 11) == 0);
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 1);
	cr_assert_eq(ev.line_no, 5);
	cr_assert_str_eq(ev.name, "/usr/bin/two words");
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 1);
	cr_assert_eq(ev.tag, LP_TAG_X);
	cr_assert_eq(ev.line_no, 6);
	cr_assert_eq(ev.timestamp, 3);
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 0);
	lp_event_source_close(r);
	g_free(p);
}

Test(kern, reader_error_names_file_and_line)
{
	const char *text = "S 1 a 9f8e7\n# fine\nM 2 a 1000 zz 0 22 3 0 -\n";
	char *p = scratch_file(dir, "bad", text, strlen(text));
	lp_event_source *r = lp_kern_reader_open(p, &err);
	lp_event ev;
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 1);
	cr_assert_eq(lp_event_source_next(r, &ev, &err), -1);
	cr_assert_eq(err.status, LP_EINPUT);
	char *want = g_strdup_printf("%s:3: tag M: field length: bad hex number 'zz'", p);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	lp_event_source_close(r);
	g_free(p);
}

Test(kern, reader_missing_file)
{
	char *p = g_build_filename(dir, "nope", NULL);
	cr_assert_null(lp_kern_reader_open(p, &err));
	cr_assert_eq(err.status, LP_EIO);
	char *want = g_strdup_printf("cannot open %s: No such file or directory", p);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(p);
}

/* Comment lines up to offset `at` (a multiple of 64), then an E line of
 * line_len bytes, then an X line. */
static GString *trace_with_long_line(size_t at, size_t line_len)
{
	GString *s = g_string_new(NULL);
	while (s->len < at) {
		g_string_append_c(s, '#');
		for (int i = 0; i < 62; i++)
			g_string_append_c(s, ' ');
		g_string_append_c(s, '\n');
	}
	g_string_append(s, "E 2 a 1 ");
	while (s->len < at + line_len)
		g_string_append_c(s, (char)('a' + s->len % 26));
	g_string_append(s, "\nX 3 a\n");
	return s;
}

/* The E line of trace_with_long_line is read, or refused as too long. */
static void read_long_line(size_t at, size_t line_len)
{
	GString *s = trace_with_long_line(at, line_len);
	char *p = scratch_file(dir, "long", s->str, s->len);
	lp_event_source *r = lp_kern_reader_open(p, &err);
	lp_event ev;
	uint64_t line_no = at / 64 + 1;
	if (line_len <= LP_LINE_MAX) {
		cr_assert_eq(lp_event_source_next(r, &ev, &err), 1, "%s", err.msg);
		cr_assert_eq(ev.line_no, line_no);
		cr_assert_eq(strlen(ev.name), line_len - 8);
		cr_assert_eq(lp_event_source_next(r, &ev, &err), 1);
		cr_assert_eq(ev.tag, LP_TAG_X);
		cr_assert_eq(lp_event_source_next(r, &ev, &err), 0);
	} else {
		cr_assert_eq(lp_event_source_next(r, &ev, &err), -1);
		cr_assert_eq(err.status, LP_EINPUT);
		char *want = g_strdup_printf("%s:%" G_GUINT64_FORMAT ": line longer than 4096 bytes",
					     p, line_no);
		cr_assert_str_eq(err.msg, want);
		g_free(want);
	}
	lp_event_source_close(r);
	g_string_free(s, TRUE);
	g_free(p);
}

Test(kern, line_limit)
{
	read_long_line(0, LP_LINE_MAX);
	read_long_line(0, LP_LINE_MAX + 1);
	read_long_line(0, 3 << 20);
	/* The line straddles the first refill of the 1 MiB read buffer. */
	read_long_line((1 << 20) - 1024, LP_LINE_MAX);
	read_long_line((1 << 20) - 1024, LP_LINE_MAX + 1);
	read_long_line((1 << 20) - 64, LP_LINE_MAX + 1);
}

Test(kern, gzip_compressed_trace)
{
	const char *text = "F 1 a b\nQ 2 3\n";
	unsigned char gz[256];
	z_stream zs = {0};
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)text;
	zs.avail_in = (uInt)strlen(text);
	zs.next_out = gz;
	zs.avail_out = sizeof gz;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	char *p = scratch_file(dir, "k.txt", gz, zs.total_out);
	deflateEnd(&zs);
	lp_event_source *r = lp_kern_reader_open(p, &err);
	lp_event ev;
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 1, "%s", err.msg);
	cr_assert_eq(ev.tag, LP_TAG_F);
	cr_assert_eq(ev.f[1], 0xb);
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 1);
	cr_assert_eq(ev.tag, LP_TAG_Q);
	cr_assert_eq(lp_event_source_next(r, &ev, &err), 0);
	lp_event_source_close(r);
	g_free(p);
}

/* The writer's line is what the reader reads: an M event with a name
 * holding a space, and an X event with no name. */
Test(kern, format_line_reads_back)
{
	char line[256];
	uint64_t m[] = {0x100, 0x1a2b3c4d, 0x9000, 0, 0x35, 0x5, UINT64_MAX};
	size_t n = lp_kern_format_line(line, 'M', 0x123456789abcdefe, m, 7, "my lib.so");
	cr_assert_eq(n, strlen("M 123456789abcdefe 100 1a2b3c4d 9000 0 35 5 ffffffffffffffff my lib.so\n"));
	cr_assert_eq(memcmp(line, "M 123456789abcdefe 100 1a2b3c4d 9000 0 35 5 ffffffffffffffff my lib.so\n", n), 0);
	line[n - 1] = '\0';
	lp_event ev;
	lp_error err = {0};
	cr_assert_eq(lp_kern_parse_line(line, n - 1, &ev, &err), 1, "%s", err.msg);
	cr_assert_eq(ev.tag, LP_TAG_M);
	cr_assert_eq(ev.timestamp, 0x123456789abcdefe);
	cr_assert_arr_eq(ev.f, m, sizeof m);
	cr_assert_str_eq(ev.name, "my lib.so");
	uint64_t x[] = {0x2a};
	n = lp_kern_format_line(line, 'X', 0, x, 1, NULL);
	cr_assert_eq(n, 7);
	cr_assert_eq(memcmp(line, "X 0 2a\n", n), 0);
}
