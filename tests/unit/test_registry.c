/* The formats' registry walked row by row: for every format laplace reads,
 * a small trace written by the format's own writer (BYU and p6, which
 * laplace never writes, byte by byte as legacy-formats 1 and 2 say) is
 * sniffed, dumped and converted through its row, and read back through the
 * format's reader as exactly the records written. A row this test does not
 * know fails it. */
#include <criterion/criterion.h>
#include <string.h>

#include <glib.h>

#include "formats/forms.h"
#include "formats/legacy.h"
#include "formats/oracle.h"
#include "formats/registry.h"
#include "formats/taskline.h"
#include "scratch.h"

SCRATCH_SUITE(registry);

static const lp_torn_policy strict = {.strict = true};

static char *file_contents(const char *path)
{
	gchar *text = NULL;
	cr_assert(g_file_get_contents(path, &text, NULL, NULL), "%s", path);
	return text;
}

static lp_byte_source *open_source(const char *path)
{
	lp_byte_source *s = lp_byte_source_open(path, &err);
	cr_assert_not_null(s, "%s", err.msg);
	return s;
}

/* What the row's sniff() says of the trace's first LP_SNIFF_BYTES bytes,
 * and, when it is sure or likely, that detection picks the row. */
static void check_sniff(const lp_format *row, const char *path, enum lp_sniff expected)
{
	gchar *data = NULL;
	gsize n = 0;
	cr_assert(g_file_get_contents(path, &data, &n, NULL));
	cr_assert_eq(lp_format_sniff(row, (const unsigned char *)data, MIN(n, (gsize)LP_SNIFF_BYTES)),
		     expected, "%s: %s", row->name, path);
	if (expected == LP_SNIFF_NO) {
		g_free(data);
		return;
	}
	g_free(data);
	lp_byte_source *src = open_source(path);
	bool failed = true;
	cr_assert_eq(lp_format_detect(src, &failed, &err), row, "%s: %s", row->name, path);
	cr_assert_not(failed);
	lp_byte_source_close(src);
}

/* The row's dump of the trace at path, exactly. */
static void check_dump(const lp_format *row, const char *path, const char *expected)
{
	cr_assert((row->dump != NULL) != (row->dump_path != NULL), "%s: one dump", row->name);
	char *out_path = g_build_filename(dir, "dump.txt", NULL);
	lp_output *out = lp_output_open(out_path, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out, "%s", err.msg);
	int rc = row->dump ? row->dump(open_source(path), row->byte_order, &strict, out, &err)
			   : row->dump_path(path, row->byte_order, &strict, out, &err);
	cr_assert_eq(rc, 0, "%s: %s", row->name, err.msg);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	char *got = file_contents(out_path);
	cr_assert_str_eq(got, expected, "%s dump of %s", row->name, path);
	g_free(got);
	g_free(out_path);
}

/* The row's conversion to raw references, as text, exactly; and that a
 * row without one says so. */
static void check_to_refs(const lp_format *row, const char *path, bool to_refs,
			  const char *expected)
{
	cr_assert_eq(row->to_refs, to_refs, "%s: to_refs", row->name);
	if (!to_refs)
		return;
	char *out_path = g_build_filename(dir, "refs.txt", NULL);
	lp_output *out = lp_output_open(out_path, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out, "%s", err.msg);
	lp_ref_writer *w = lp_ref_text_writer_new(out, LP_LITTLE);
	lp_legacy_summary sum = {0};
	cr_assert_eq(lp_legacy_to_refs(open_source(path), row->id, row->byte_order, &strict, w,
				       &sum, &err),
		     0, "%s: %s", row->name, err.msg);
	cr_assert_eq(lp_ref_writer_finish(w, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	char *got = file_contents(out_path);
	cr_assert_str_eq(got, expected, "%s to references", row->name);
	g_free(got);
	g_free(out_path);
}

/* ---- ref: lp_ref_writer, in text and in binary ---- */

static const lp_ref ref_records[] = {
	{.type = 'r', .timestamp = 1, .length = 4, .vas = 0x9f8e7, .address = 0x9a8b7c6d},
	{.type = 'I', .timestamp = 0x123456789abcdef0, .length = 0, .vas = 0, .address = 0xc0001000},
	{.type = 'W', .timestamp = 0x123456789abcdef0, .length = 0xff, .vas = 1, .address = 0},
};
#define N_REF (sizeof ref_records / sizeof ref_records[0])
static const char ref_text[] = "r 1 4 9f8e7 9a8b7c6d\n"
			       "I 123456789abcdef0 0 0 c0001000\n"
			       "W 123456789abcdef0 ff 1 0\n";
/* The 64-bit forms' (laplace-formats(5) 10.1): every bit of vas and
 * address used somewhere. */
static const lp_ref ref64_records[] = {
	{.type = 'r', .timestamp = 1, .length = 4, .vas = 0xffff88800abcd000,
	 .address = 0x7ffffffff000},
	{.type = 'I', .timestamp = 0x123456789abcdef0, .length = 0, .vas = 0,
	 .address = 0xffffffffffffffff},
	{.type = 'W', .timestamp = 0x123456789abcdef0, .length = 0xff, .vas = 1, .address = 0},
};
static const char ref64_text[] = "#laplace-ref 64\n"
				 "r 1 4 ffff88800abcd000 7ffffffff000\n"
				 "I 123456789abcdef0 0 0 ffffffffffffffff\n"
				 "W 123456789abcdef0 ff 1 0\n";

/* The row's form written by its writer, the records given. */
static char *write_refs(const lp_format *row, const lp_ref *refs, size_t n)
{
	char *path = g_build_filename(dir, "t.ref", NULL);
	lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out, "%s", err.msg);
	lp_ref_writer *w = row->open_sink(out, LP_LITTLE);
	cr_assert_eq(lp_ref_writer_write(w, refs, n, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_ref_writer_finish(w, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	return path;
}

/* Read back through the row's source, and through detection. */
static void read_refs_back(const lp_format *row, const char *path, const lp_ref *refs, size_t n)
{
	for (int detect = 0; detect < 2; detect++) {
		lp_ref_source *s;
		if (detect) {
			s = lp_ref_open(path, LP_REF_AUTO, LP_LITTLE, &err);
		} else {
			lp_byte_source src;
			cr_assert_eq(lp_byte_source_init(&src, path, &err), 0, "%s", err.msg);
			s = row->ref->open_source(&src, LP_LITTLE, &err);
			lp_byte_source_clear(&src);
		}
		cr_assert_not_null(s, "%s", err.msg);
		cr_assert_eq(lp_ref_reader_format(s), row->ref->encoding, "%s", row->ref->encoding_name);
		cr_assert_eq(lp_ref_source_width(s), row->ref->width, "%s", row->ref->encoding_name);
		lp_ref got[8];
		cr_assert_eq(lp_ref_source_read(s, got, 8, &err), (ssize_t)n, "%s", err.msg);
		cr_assert_eq(lp_ref_source_read(s, got, 8, &err), 0, "%s", err.msg);
		for (size_t i = 0; i < n; i++) {
			const char *f = row->ref->encoding_name;
			cr_assert_eq(got[i].type, refs[i].type, "%s: ref %zu", f, i);
			cr_assert_eq(got[i].timestamp, refs[i].timestamp, "%s: ref %zu", f, i);
			cr_assert_eq(got[i].length, refs[i].length, "%s: ref %zu", f, i);
			cr_assert_eq(got[i].vas, refs[i].vas, "%s: ref %zu", f, i);
			cr_assert_eq(got[i].address, refs[i].address, "%s: ref %zu", f, i);
		}
		lp_ref_source_close(s);
	}
}

/* Each form of the raw reference trace: its writer's output is sniffed
 * (binary records only plausibly), detected, dumped as text and read back
 * through its source. */
static void cover_ref(const lp_format *row)
{
	const lp_ref_form *form = row->ref;
	cr_assert_eq(lp_ref_row(form->encoding, form->width), row, "%s", form->encoding_name);
	cr_assert_eq(lp_ref_format_parse(form->encoding_name), (int)form->encoding);
	bool wide = form->width == 64;
	cr_assert(wide || form->width == 32, "%s: width %u", form->encoding_name, form->width);
	const lp_ref *refs = wide ? ref64_records : ref_records;
	char *path = write_refs(row, refs, N_REF);
	/* Binary records without a header are only plausible. */
	check_sniff(row, path, form->encoding == LP_REF_BIN && !wide ? LP_SNIFF_LIKELY : LP_SNIFF_SURE);
	check_dump(row, path, wide ? ref64_text : ref_text);
	check_to_refs(row, path, false, NULL);
	read_refs_back(row, path, refs, N_REF);
	g_free(path);
}

/* ---- byu: written byte by byte (legacy-formats 1) ---- */

static const lp_byu_record byu_records[] = {
	{.addr = 0x0041f760, .reqtype = 0x00, .size = 8, .time = 0xffffffff},
	{.addr = 0x12345678, .reqtype = 0x03, .size = 4, .attr = 3, .proc = 1, .time = 0x10},
	{.addr = 0x00001000, .reqtype = 0x10, .size = 1, .time = 0x20},
	{.addr = 0xfffffff0, .reqtype = 0x01, .size = 0x20, .attr = 2, .proc = 0xff, .time = 1},
};
#define N_BYU G_N_ELEMENTS(byu_records)

static void cover_byu(const lp_format *row)
{
	/* addr (u32), reqtype, size, attr, proc (u8 each), time (u32), LE */
	unsigned char bytes[N_BYU * LP_BYU_RECORD_SIZE];
	for (size_t i = 0; i < N_BYU; i++) {
		const lp_byu_record *r = &byu_records[i];
		unsigned char *p = bytes + i * LP_BYU_RECORD_SIZE;
		for (int b = 0; b < 4; b++) {
			p[b] = (unsigned char)(r->addr >> 8 * b);
			p[8 + b] = (unsigned char)(r->time >> 8 * b);
		}
		p[4] = r->reqtype;
		p[5] = r->size;
		p[6] = r->attr;
		p[7] = r->proc;
	}
	char *path = scratch_file(dir, "t.byu", bytes, sizeof bytes);
	check_sniff(row, path, LP_SNIFF_NO);
	check_dump(row, path,
		   "0041f760 FETCH 8 0 0 ffffffff\n"
		   "12345678 MEMWRITE 4 3 1 10\n"
		   "00001000 IOREAD 1 0 0 20\n"
		   "fffffff0 MEMREAD 20 2 ff 1\n");
	/* The first time is no delta; the IOREAD is skipped but its time counts. */
	check_to_refs(row, path, true,
		      "i 0 8 0 41f760\n"
		      "w 10 4 1 12345678\n"
		      "r 31 20 ff fffffff0\n");
	lp_byu_reader *r = lp_record_reader_new(open_source(path), row->byte_order);
	lp_byu_record got[N_BYU + 1];
	cr_assert_eq(lp_byu_reader_read(r, got, N_BYU + 1, &strict, &err), (ssize_t)N_BYU,
		     "%s", err.msg);
	cr_assert_eq(lp_byu_reader_read(r, got, N_BYU + 1, &strict, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < N_BYU; i++) {
		const lp_byu_record *w = &byu_records[i];
		cr_assert(got[i].addr == w->addr && got[i].time == w->time &&
				  got[i].reqtype == w->reqtype && got[i].size == w->size &&
				  got[i].attr == w->attr && got[i].proc == w->proc,
			  "byu record %zu", i);
	}
	lp_record_reader_close(r);
	g_free(path);
}

/* ---- p6: written byte by byte (legacy-formats 2) ---- */

static const lp_p6_record p6_records[] = {
	{.addr = 0x0041f760, .be = 0x0f, .control = 0xc0}, /* D_READ, bytes 4-7 */
	{.addr = 0x12345678, .be = 0x00, .control = 0x80}, /* I_FETCH, all 8 */
	{.addr = 0x00001000, .be = 0xff, .control = 0x50}, /* IO_READ: skipped */
	{.addr = 0x00002000, .be = 0xe7, .control = 0xe0}, /* WRITE_BACK, bytes 3-4 */
};
#define N_P6 G_N_ELEMENTS(p6_records)

static void cover_p6(const lp_format *row)
{
	/* addr (u32, big-endian), be, control */
	unsigned char bytes[N_P6 * LP_P6_RECORD_SIZE];
	for (size_t i = 0; i < N_P6; i++) {
		unsigned char *p = bytes + i * LP_P6_RECORD_SIZE;
		for (int b = 0; b < 4; b++)
			p[b] = (unsigned char)(p6_records[i].addr >> 8 * (3 - b));
		p[4] = p6_records[i].be;
		p[5] = p6_records[i].control;
	}
	char *path = scratch_file(dir, "t.p6", bytes, sizeof bytes);
	check_sniff(row, path, LP_SNIFF_NO);
	check_dump(row, path,
		   "0041f760 0f D_READ\n"
		   "12345678 00 I_FETCH\n"
		   "00001000 ff IO_READ\n"
		   "00002000 e7 WRITE_BACK\n");
	check_to_refs(row, path, true,
		      "r 0 4 0 41f764\n"
		      "i 1 8 0 12345678\n"
		      "w 3 2 0 2003\n");
	lp_p6_reader *r = lp_record_reader_new(open_source(path), row->byte_order);
	lp_p6_record got[N_P6 + 1];
	cr_assert_eq(lp_p6_reader_read(r, got, N_P6 + 1, &strict, &err), (ssize_t)N_P6, "%s",
		     err.msg);
	cr_assert_eq(lp_p6_reader_read(r, got, N_P6 + 1, &strict, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < N_P6; i++)
		cr_assert(got[i].addr == p6_records[i].addr && got[i].be == p6_records[i].be &&
				  got[i].control == p6_records[i].control,
			  "p6 record %zu", i);
	lp_record_reader_close(r);
	g_free(path);
}

/* ---- page-image: lp_pi_writer ---- */

static void cover_page_image(const lp_format *row)
{
	/* A one-page memory: a fill, then evictions of a written and a read
	 * page. Each image is a different byte throughout. */
	static unsigned char images[4][LP_PAGE_BYTES];
	for (size_t i = 0; i < G_N_ELEMENTS(images); i++)
		memset(images[i], 'a' + (int)i, LP_PAGE_BYTES);
	const lp_pi_record records[] = {
		{.tag = 'C', .fetched = 0x1a, .fetched_image = images[0], .dirt = 'N'},
		{.tag = 'C', .fetched = 0x3, .fetched_image = images[1], .dirt = 'W',
		 .evicted = 0x1a, .evicted_image = images[2]},
		{.tag = 'F', .fetched = 0x1a, .fetched_image = images[2], .dirt = 'R',
		 .evicted = 0x3, .evicted_image = images[3]},
	};
	const size_t n = G_N_ELEMENTS(records);
	const char *text = "C 1a N 0\nC 3 W 1a\nF 1a R 3\n";

	char *paths[2];
	for (int as_text = 0; as_text < 2; as_text++) {
		paths[as_text] = g_build_filename(dir, as_text ? "t.pi.txt" : "t.pi", NULL);
		lp_output *out = lp_output_open(paths[as_text], LP_COMPRESS_NONE, &err);
		cr_assert_not_null(out, "%s", err.msg);
		lp_pi_writer *w = lp_pi_writer_new(out, as_text);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(lp_pi_writer_write(w, &records[i], &err), 0, "%s", err.msg);
		lp_pi_writer_free(w);
		cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	}
	/* The writer's text form is the row's dump of its binary form. */
	char *written_text = file_contents(paths[1]);
	cr_assert_str_eq(written_text, text);
	g_free(written_text);

	const char *path = paths[0];
	check_sniff(row, path, LP_SNIFF_SURE);
	check_dump(row, path, text);
	check_to_refs(row, path, false, NULL);
	lp_pi_reader *r = lp_pi_reader_new(open_source(path));
	for (size_t i = 0; i < n; i++) {
		lp_pi_record got;
		cr_assert_eq(lp_pi_reader_next(r, &got, &strict, &err), 1, "record %zu: %s", i,
			     err.msg);
		const lp_pi_record *w = &records[i];
		cr_assert(got.tag == w->tag && got.dirt == w->dirt && got.fetched == w->fetched &&
				  got.evicted == w->evicted,
			  "page-image record %zu", i);
		cr_assert_arr_eq(got.fetched_image, w->fetched_image, LP_PAGE_BYTES, "record %zu", i);
		if (w->evicted_image)
			cr_assert_arr_eq(got.evicted_image, w->evicted_image, LP_PAGE_BYTES,
					 "record %zu", i);
		else
			cr_assert_null(got.evicted_image, "record %zu", i);
	}
	lp_pi_record end;
	cr_assert_eq(lp_pi_reader_next(r, &end, &strict, &err), 0, "%s", err.msg);
	lp_pi_reader_close(r);
	g_free(paths[0]);
	g_free(paths[1]);
}

/* ---- basic: the basic merge's sink, in each form a basic reader reads ---- */

static void cover_basic(const lp_format *row)
{
	const lp_basic_ref written[] = {{'r', 0x1a}, {'W', 0}, {'i', 0x123456789}, {'R', 1}};
	const size_t n = G_N_ELEMENTS(written);
	const char *text = "r 1a\nW 0\ni 123456789\nR 1\n";
	/* basic and bin; addr and din carry addresses a basic stream has not. */
	const enum lp_form forms[] = {LP_FORM_BASIC, LP_FORM_BIN};
	for (size_t f = 0; f < G_N_ELEMENTS(forms); f++) {
		char *path = g_build_filename(dir, lp_stream_forms[forms[f]].name, NULL);
		lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, &err);
		cr_assert_not_null(out, "%s", err.msg);
		lp_basic_sink *sink = lp_basic_sink_new(out, false, forms[f]);
		lp_ref refs[G_N_ELEMENTS(written)];
		uint64_t canon[G_N_ELEMENTS(written)];
		for (size_t i = 0; i < n; i++) {
			refs[i] = (lp_ref){.type = written[i].type, .timestamp = i, .length = 4,
					   .address = 0x1000 * (uint32_t)i};
			canon[i] = written[i].canonical;
		}
		cr_assert_eq(lp_basic_sink_ops.refs(sink, refs, canon, n, NULL, &err), 0, "%s",
			     err.msg);
		cr_assert_eq(lp_basic_sink_ops.finish(sink, NULL, &err), 0, "%s", err.msg);
		lp_basic_sink_free(sink);
		cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);

		check_sniff(row, path, LP_SNIFF_SURE);
		check_dump(row, path, text);
		check_to_refs(row, path, false, NULL);
		lp_basic_reader *r = lp_basic_open(path, &err);
		cr_assert_not_null(r, "%s", err.msg);
		lp_basic_ref got[G_N_ELEMENTS(written) + 1];
		cr_assert_eq(lp_basic_read(r, got, n + 1, &err), (ssize_t)n, "%s", err.msg);
		cr_assert_eq(lp_basic_read(r, got, n + 1, &err), 0, "%s", err.msg);
		for (size_t i = 0; i < n; i++)
			cr_assert(got[i].type == written[i].type &&
					  got[i].canonical == written[i].canonical,
				  "%s: reference %zu", lp_stream_forms[forms[f]].name, i);
		lp_basic_close(r);
		g_free(path);
	}
}

/* ---- task, task-bin: a per-process task file in its two forms, as the
 * per-process sink encodes its records ---- */

static const lp_ref task_refs[] = {
	{.type = 'r', .timestamp = 0x10, .length = 4, .address = 0x9a8b7c6d},
	/* A 64-bit capture's vpn, above 2^32. */
	{.type = 'W', .timestamp = 0x123456789abcdef0, .length = 0xff, .address = 0x7ffffffde123},
};
static const uint64_t task_canon[] = {0, 0xffffffffffffffff};
static const char task_event[] = "X 123456789abcdef0 40";
static const char task_text[] = "r 10 4 9a8b7 0\n"
				"W 123456789abcdef0 ff 7ffffffde ffffffffffffffff\n"
				"X 123456789abcdef0 40\n";

/* The file of task_refs then task_event in the binary form or as text. */
static char *write_task(const char *name, bool binary)
{
	char *path = g_build_filename(dir, name, NULL);
	GString *s = g_string_new(binary ? LP_TASK_BIN_HEADER : "");
	if (binary)
		g_string_set_size(s, LP_TASK_BIN_HEADER_SIZE);
	for (size_t i = 0; i < G_N_ELEMENTS(task_refs); i++) {
		char rec[LP_TASK_LINE_MAX];
		size_t len = LP_TASK_BIN_REF_SIZE;
		if (binary)
			lp_task_bin_encode((unsigned char *)rec, &task_refs[i], task_canon[i]);
		else
			len = lp_task_line_encode(rec, &task_refs[i], task_canon[i]);
		g_string_append_len(s, rec, (gssize)len);
	}
	char ev[LP_TASK_BIN_EVENT_HEAD + sizeof task_event];
	if (binary)
		g_string_append_len(s, ev, (gssize)lp_task_bin_encode_event((unsigned char *)ev, task_event,
									   strlen(task_event)));
	else
		g_string_append_printf(s, "%s\n", task_event);
	cr_assert(g_file_set_contents(path, s->str, (gssize)s->len, NULL));
	g_string_free(s, TRUE);
	return path;
}

/* lp_task_convert of the file at from into the other form: the file at to. */
static void check_task_convert(const char *from, const char *to, bool to_binary)
{
	char *out_path = g_build_filename(dir, "converted", NULL);
	lp_output *out = lp_output_open(out_path, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out, "%s", err.msg);
	lp_byte_source *src = open_source(from);
	cr_assert_eq(lp_task_convert(src, !to_binary, to_binary, NULL, out, &err), 0, "%s", err.msg);
	lp_byte_source_close(src);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	gchar *got, *want;
	gsize got_len, want_len;
	cr_assert(g_file_get_contents(out_path, &got, &got_len, NULL));
	cr_assert(g_file_get_contents(to, &want, &want_len, NULL));
	cr_assert(got_len == want_len && !memcmp(got, want, got_len), "%s to %s", from, to);
	g_free(got);
	g_free(want);
	g_free(out_path);
}

static void cover_task(const lp_format *row)
{
	bool binary = row->id == LP_FORMAT_TASK_BIN;
	char *path = write_task(row->name, binary), *other = write_task("other", !binary);
	check_sniff(row, path, binary ? LP_SNIFF_SURE : LP_SNIFF_NO);
	check_dump(row, path, task_text);
	check_to_refs(row, path, false, NULL);
	check_task_convert(path, other, !binary);
	lp_basic_reader *r = lp_basic_open(path, &err);
	cr_assert_not_null(r, "%s", err.msg);
	lp_basic_ref got[G_N_ELEMENTS(task_refs) + 1];
	cr_assert_eq(lp_basic_read(r, got, G_N_ELEMENTS(got), &err), (ssize_t)G_N_ELEMENTS(task_refs),
		     "%s", err.msg);
	cr_assert_eq(lp_basic_read(r, got, G_N_ELEMENTS(got), &err), 0, "%s", err.msg);
	for (size_t i = 0; i < G_N_ELEMENTS(task_refs); i++)
		cr_assert(got[i].type == task_refs[i].type && got[i].canonical == task_canon[i],
			  "%s: reference %zu", row->name, i);
	lp_basic_close(r);
	g_free(path);
	g_free(other);
}

/* ---- oracle-general: libCacheSim's oracleGeneral (policies.md §6), as
 * the basic sink writes it, byte for byte, then dumped and read back ---- */

static void cover_oracle(const lp_format *row)
{
	/* Pages 0, 1a, 0, 3, 1a, of every type (oracleGeneral has none). */
	const lp_ref refs[] = {{.type = 'r'}, {.type = 'w'}, {.type = 'R'}, {.type = 'i'},
			       {.type = 'W'}};
	const uint64_t canon[] = {0, 0x1a, 0, 3, 0x1a};
	const unsigned char want[] = {
		1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
		2, 0, 0, 0, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,
		3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		5, 0, 0, 0, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	char *path = g_build_filename(dir, "t.oracleGeneral", NULL);
	lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, &err);
	cr_assert_not_null(out, "%s", err.msg);
	lp_basic_sink *sink = lp_basic_sink_new(out, false, LP_FORM_ORACLE);
	cr_assert_eq(lp_basic_sink_ops.refs(sink, refs, canon, 5, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_basic_sink_ops.finish(sink, NULL, &err), 0, "%s", err.msg);
	lp_basic_sink_free(sink);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	gchar *data = NULL;
	gsize n = 0;
	cr_assert(g_file_get_contents(path, &data, &n, NULL));
	cr_assert_eq(n, sizeof want);
	cr_assert_eq(memcmp(data, want, n), 0);
	/* Found by its first records' times and sizes: not when a time or
	 * a size is off, nor before a whole record. */
	check_sniff(row, path, LP_SNIFF_SURE);
	char *off = g_build_filename(dir, "off.oracleGeneral", NULL);
	data[LP_ORACLE_RECORD_SIZE] = 3; /* the second record's time */
	cr_assert(g_file_set_contents(off, data, (gssize)n, NULL));
	check_sniff(row, off, LP_SNIFF_NO);
	data[LP_ORACLE_RECORD_SIZE] = 2;
	data[13] = 0; /* the first record's size, 4096 */
	cr_assert(g_file_set_contents(off, data, (gssize)n, NULL));
	check_sniff(row, off, LP_SNIFF_NO);
	cr_assert(g_file_set_contents(off, data, LP_ORACLE_RECORD_SIZE - 1, NULL));
	check_sniff(row, off, LP_SNIFF_NO);
	g_free(off);
	g_free(data);
	check_dump(row, path, "r 0\nr 1a\nr 0\nr 3\nr 1a\n");
	g_free(path);
}

Test(registry, every_row_round_trips)
{
	for (size_t i = 0; i < lp_nformats; i++) {
		const lp_format *row = &lp_formats[i];
		/* The first row of a format's forms stands for it. */
		cr_assert_str_eq(lp_format_find(row->name)->name, row->name);
		cr_assert_eq(lp_format_of(row->id)->id, row->id, "%s", row->name);
		cr_assert_eq(row->ref != NULL, row->id == LP_FORMAT_REF, "%s", row->name);
		cr_assert_eq(row->open_sink != NULL, row->id == LP_FORMAT_REF, "%s", row->name);
		switch (row->id) {
		case LP_FORMAT_REF: cover_ref(row); break;
		case LP_FORMAT_BYU: cover_byu(row); break;
		case LP_FORMAT_P6: cover_p6(row); break;
		case LP_FORMAT_PAGE_IMAGE: cover_page_image(row); break;
		case LP_FORMAT_BASIC: cover_basic(row); break;
		case LP_FORMAT_TASK:
		case LP_FORMAT_TASK_BIN: cover_task(row); break;
		case LP_FORMAT_ORACLE: cover_oracle(row); break;
		case LP_FORMAT_UNKNOWN: cr_assert_fail("row %s has no id", row->name);
		}
	}
	cr_assert_eq(lp_nformats, 11, "a new or removed row needs its round trip here");
	/* Every form of the raw reference trace is a row's, in the same order. */
	size_t forms = 0;
	for (size_t i = 0; i < lp_nformats; i++)
		if (lp_formats[i].ref)
			cr_assert_eq(lp_formats[i].ref, &lp_ref_forms[forms++]);
	cr_assert_eq(forms, lp_nref_forms);
}
