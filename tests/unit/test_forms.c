/* The forms of a merged reference stream (section 8): names, type codes,
 * the basic sink's batches, and its refusal of canonical numbers a form
 * cannot carry. */
#include <criterion/criterion.h>
#include <glib.h>

#include "formats/forms.h"
#include "formats/oracle.h"
#include "formats/registry.h"
#include "scratch.h"

Test(forms, names)
{
	cr_assert_eq(lp_form_parse("basic"), LP_FORM_BASIC);
	cr_assert_eq(lp_form_parse("addr"), LP_FORM_ADDR);
	cr_assert_eq(lp_form_parse("din"), LP_FORM_DIN);
	cr_assert_eq(lp_form_parse("bin"), LP_FORM_BIN);
	cr_assert_eq(lp_form_parse("oracle-general"), LP_FORM_ORACLE);
	/* The rows are indexed by their ids, each record within the room
	 * every buffer leaves. */
	for (int f = 0; f < LP_FORM_COUNT; f++) {
		cr_assert_eq(lp_stream_forms[f].id, (enum lp_form)f);
		cr_assert_eq(lp_form_parse(lp_stream_forms[f].name), f);
		cr_assert_leq(lp_stream_forms[f].record_max, LP_FORM_RECORD_MAX);
		cr_assert_not_null(lp_stream_forms[f].open_sink);
	}
	char *all = lp_form_names_list(true), *plain = lp_form_names_list(false);
	cr_assert_str_eq(all, "basic, addr, din, bin or oracle-general");
	cr_assert_str_eq(plain, "basic, bin or oracle-general");
	g_free(all);
	g_free(plain);
	cr_assert_eq(lp_form_parse("Bin"), -1);
	cr_assert_eq(lp_form_parse(""), -1);
}

Test(forms, codes_and_labels)
{
	const char *types = "rwiRWI";
	const char labels[] = "012012";
	for (unsigned code = 0; code < 6; code++) {
		cr_assert_eq(lp_ref_type_index(types[code]), (int)code, "%c", types[code]);
		cr_assert_eq(lp_din_label(types[code]), labels[code], "%c", types[code]);
	}
}

/* Run the basic sink in form over refs[0, n) and their canonical
 * numbers; returns the status, the file's bytes in *got. */
static int sink_run_refs(enum lp_form form, const lp_ref *refs, const uint64_t *canon, size_t n,
			 GString **got, lp_error *err)
{
	char *dir = scratch_dir_new();
	char *path = g_build_filename(dir, "out", NULL);
	lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, err);
	cr_assert(out, "%s", err->msg);
	lp_basic_sink *s = lp_basic_sink_new(out, false, form);
	int rc = lp_basic_sink_ops.refs(s, refs, canon, n, NULL, err);
	if (!rc)
		rc = lp_basic_sink_ops.finish(s, NULL, err);
	lp_basic_sink_free(s);
	rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
	gchar *text = NULL;
	gsize len = 0;
	*got = g_string_new(NULL);
	if (g_file_get_contents(path, &text, &len, NULL))
		g_string_append_len(*got, text, (gssize)len);
	g_free(text);
	g_free(path);
	scratch_dir_free(dir);
	return rc;
}

/* One user read per canonical number. */
static int sink_run(enum lp_form form, const uint64_t *canon, size_t n, GString **got,
		    lp_error *err)
{
	lp_ref refs[4];
	for (size_t i = 0; i < n; i++)
		refs[i] = (lp_ref){.type = 'r', .length = 4, .address = 0x123};
	return sink_run_refs(form, refs, canon, n, got, err);
}

Test(forms, bin_takes_61_bits)
{
	lp_error err = {0};
	GString *got;
	uint64_t fits[] = {LP_BIN_CANON_MAX};
	cr_assert_eq(sink_run(LP_FORM_BIN, fits, 1, &got, &err), 0, "%s", err.msg);
	cr_assert_eq(got->len, 16);
	cr_assert_eq(memcmp(got->str, "LPBASIC\x01\xff\xff\xff\xff\xff\xff\xff\x1f", 16), 0);
	g_string_free(got, TRUE);

	uint64_t too_big[] = {0, LP_BIN_CANON_MAX + 1};
	cr_assert_eq(sink_run(LP_FORM_BIN, too_big, 2, &got, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "reference 1: canonical number 2000000000000000 does not fit "
				  "the bin form");
	cr_assert_eq(got->len, 0, "a partial output was left");
	g_string_free(got, TRUE);
}

Test(forms, addr_and_din_take_52_bits)
{
	lp_error err = {0};
	GString *got;
	uint64_t fits[] = {LP_ADDR_CANON_MAX};
	cr_assert_eq(sink_run(LP_FORM_ADDR, fits, 1, &got, &err), 0, "%s", err.msg);
	cr_assert_str_eq(got->str, "r fffffffffffff123 4\n");
	g_string_free(got, TRUE);
	uint64_t too_big[] = {LP_ADDR_CANON_MAX + 1};
	for (enum lp_form f = LP_FORM_ADDR; f <= LP_FORM_DIN; f++) {
		cr_assert_eq(sink_run(f, too_big, 1, &got, &err), LP_EINPUT);
		char *want = g_strdup_printf("reference 0: canonical number 10000000000000 does not "
					     "fit the %s form", lp_stream_forms[f].name);
		cr_assert_str_eq(err.msg, want);
		g_free(want);
		g_string_free(got, TRUE);
	}
}

/* References of a 64-bit capture (laplace-formats(5), section 10): every
 * form has the same shape; addr and din take the offset in the page from
 * the raw address and nothing above it, whatever its width. */
Test(forms, references_of_a_64_bit_capture)
{
	const lp_ref refs[] = {
		/* through the direct map */
		{.type = 'R', .length = 8, .vas = UINT64_C(0x1234567800000000),
		 .address = UINT64_C(0xffff888000abc123)},
		/* the last word of a stack ending at 7ffffffff000 */
		{.type = 'w', .length = 4, .vas = UINT64_C(0x1234567800000000),
		 .address = UINT64_C(0x7fffffffeff8)},
		{.type = 'i', .length = 1, .vas = UINT64_C(0xffffffff00000001),
		 .address = UINT64_C(0x555555554fff)},
	};
	const uint64_t canon[] = {5, UINT64_C(0x10000000000), LP_ADDR_CANON_MAX};
	static const char *const want[] = {
		[LP_FORM_BASIC] = "R 5\nw 10000000000\ni fffffffffffff\n",
		[LP_FORM_ADDR] = "R 5123 8\nw 10000000000ff8 4\ni ffffffffffffffff 1\n",
		[LP_FORM_DIN] = "0 5123\n1 10000000000ff8\n2 ffffffffffffffff\n",
	};
	lp_error err = {0};
	GString *got;
	for (enum lp_form f = LP_FORM_BASIC; f <= LP_FORM_DIN; f++) {
		cr_assert_eq(sink_run_refs(f, refs, canon, 3, &got, &err), 0, "%s", err.msg);
		cr_assert_str_eq(got->str, want[f], "form %s", lp_stream_forms[f].name);
		g_string_free(got, TRUE);
	}
	cr_assert_eq(sink_run_refs(LP_FORM_BIN, refs, canon, 3, &got, &err), 0, "%s", err.msg);
	const unsigned char bin[] = "LPBASIC\x01"
		"\x05\x00\x00\x00\x00\x00\x00\x60"  /* R: code 3 */
		"\x00\x00\x00\x00\x00\x01\x00\x20"  /* w: code 1 */
		"\xff\xff\xff\xff\xff\xff\x0f\x40"; /* i: code 2 */
	cr_assert_eq(got->len, sizeof bin - 1);
	cr_assert_eq(memcmp(got->str, bin, sizeof bin - 1), 0);
	g_string_free(got, TRUE);
}

/* oracle-general's writer with its smallest window (1024 references):
 * next accesses within and past the window, against next uses found
 * forwards here; written in place (a plain file) or through temporary
 * files (a compressed one); then read back. */
static void check_oracle_writer(const char *name, enum lp_compress compress)
{
	enum { N = 20000, PAGES = 700 };
	static uint64_t canon[N];
	static int64_t next[N];
	uint64_t state = 35;
	for (size_t t = 0; t < N; t++) {
		state = state * 6364136223846793005u + 1442695040888963407u;
		/* Mostly near, now and then far: reuse within and past the window;
		 * canonical numbers dense and far apart (numbered both ways). */
		canon[t] = (state >> 33) % (t % 7 ? 40 : PAGES) + (t % 11 == 0 ? UINT64_C(1) << 62 : 0);
	}
	for (size_t t = N; t-- > 0;) {
		next[t] = -1;
		for (size_t u = t + 1; u < N; u++)
			if (canon[u] == canon[t]) {
				next[t] = (int64_t)u + 1;
				break;
			}
	}
	char *dir = scratch_dir_new();
	char *path = g_build_filename(dir, name, NULL);
	lp_error err = {0};
	lp_output *out = lp_output_open(path, compress, &err);
	cr_assert_not_null(out, "%s", err.msg);
	cr_assert_eq(lp_output_rereadable(out), compress == LP_COMPRESS_NONE);
	lp_oracle_writer *w = lp_oracle_writer_new(0, out);
	for (size_t t = 0; t < N; t++)
		cr_assert_eq(lp_oracle_put(w, canon[t], &err), 0, "%s", err.msg);
	cr_assert_eq(lp_oracle_finish(w, &err), 0, "%s", err.msg);
	lp_oracle_writer_free(w);
	cr_assert_eq(lp_output_commit(out, &err), 0, "%s", err.msg);
	lp_byte_source *src = lp_byte_source_open(path, &err);
	cr_assert_not_null(src, "%s", err.msg);
	const lp_torn_policy strict = {.strict = true};
	cr_assert_eq(lp_byte_source_records(src, LP_ORACLE_RECORD_SIZE, N + 1, 0, &strict, &err), N,
		     "%s", err.msg);
	for (size_t t = 0; t < N; t++) {
		const unsigned char *p = lp_byte_source_data(src) + t * LP_ORACLE_RECORD_SIZE;
		cr_assert_eq(lp_load_u32(p, false), (uint32_t)(t + 1), "record %zu", t);
		cr_assert_eq(lp_load_u64(p + 4, false), canon[t] + 1, "record %zu", t);
		cr_assert_eq(lp_load_u32(p + 12, false), 4096u, "record %zu", t);
		cr_assert_eq((int64_t)lp_load_u64(p + 16, false), next[t], "record %zu", t);
	}
	lp_byte_source_close(src);
	src = lp_byte_source_open(path, &err);
	cr_assert_not_null(src, "%s", err.msg);
	lp_oracle_reader *r = lp_oracle_reader_new(src);
	static lp_basic_ref got[N + 1];
	size_t have = 0;
	ssize_t k;
	while ((k = lp_oracle_read(r, got + have, N + 1 - have, &err)) > 0)
		have += (size_t)k;
	cr_assert_eq(k, 0, "%s", err.msg);
	cr_assert_eq(have, (size_t)N);
	for (size_t t = 0; t < N; t++)
		cr_assert(got[t].type == 'r' && got[t].canonical == canon[t], "reference %zu", t);
	lp_oracle_reader_close(r);
	g_free(path);
	scratch_dir_free(dir);
}

Test(forms, oracle_writes_in_place)
{
	check_oracle_writer("og", LP_COMPRESS_NONE);
}

Test(forms, oracle_writes_through_temporary_files)
{
	check_oracle_writer("og.zst", LP_COMPRESS_ZSTD);
}

/* The reader refuses an object id 0 and a record cut short, naming them. */
Test(forms, oracle_reader_errors)
{
	char *dir = scratch_dir_new();
	char *path = g_build_filename(dir, "bad", NULL);
	unsigned char rec[2 * LP_ORACLE_RECORD_SIZE] = {0};
	lp_oracle_encode(rec, 0, 5);
	lp_oracle_encode(rec + LP_ORACLE_RECORD_SIZE, 1, 5);
	memset(rec + LP_ORACLE_RECORD_SIZE + 4, 0, 8);
	lp_error err = {0};
	lp_basic_ref got[4];
	for (int torn = 0; torn < 2; torn++) {
		cr_assert(g_file_set_contents(path, (const char *)rec,
					      torn ? LP_ORACLE_RECORD_SIZE + 5 : (gssize)sizeof rec,
					      NULL));
		lp_byte_source *src = lp_byte_source_open(path, &err);
		cr_assert_not_null(src, "%s", err.msg);
		lp_oracle_reader *r = lp_oracle_reader_new(src);
		ssize_t k = lp_oracle_read(r, got, 4, &err);
		if (!torn) {
			cr_assert_eq(k, -1, "%zd %s", k, err.msg);
			char *want = g_strdup_printf("%s: record 1 (byte 28): field object id: 0, not "
						     "a canonical number + 1", path);
			cr_assert_str_eq(err.msg, want);
			g_free(want);
		} else {
			cr_assert_eq(k, 1, "%s", err.msg);
			cr_assert_eq(got[0].canonical, 5);
			cr_assert_eq(lp_oracle_read(r, got, 4, &err), -1);
			char *want = g_strdup_printf("%s: torn last record: 5 bytes left over after 1 "
						     "whole record", path);
			cr_assert_str_eq(err.msg, want);
			g_free(want);
		}
		lp_oracle_reader_close(r);
	}
	g_free(path);
	scratch_dir_free(dir);
}

/* A record of another layout than the merge's, as the schedule's: the
 * type after the number, in the same record. */
typedef struct held_ref {
	uint64_t canonical;
	uint32_t cpu;
	char type;
} held_ref;

/* refs[0, n) through lp_basic_sink_put in form, with buffer bytes of
 * room (lp_encoded_sink_new), read in place from held_ref records or from
 * the merge's raw references and canonical numbers. Returns the status,
 * the file's bytes in *got. */
static int sink_put(enum lp_form form, bool user_only, size_t buffer, bool held,
		    const held_ref *refs, size_t n, GString **got, lp_error *err)
{
	lp_ref *raw = g_new0(lp_ref, n);
	uint64_t *canon = g_new(uint64_t, n);
	for (size_t i = 0; i < n; i++) {
		raw[i].type = refs[i].type;
		canon[i] = refs[i].canonical;
	}
	lp_form_batch b = held ? (lp_form_batch){
		.type = &refs->type, .type_stride = sizeof *refs,
		.canon = (const char *)&refs->canonical, .canon_stride = sizeof *refs, .n = n,
	} : (lp_form_batch){
		.type = &raw->type, .type_stride = sizeof *raw,
		.canon = (const char *)canon, .canon_stride = sizeof *canon, .raw = raw, .n = n,
	};
	char *dir = scratch_dir_new();
	char *path = g_build_filename(dir, "out", NULL);
	lp_output *out = lp_output_open(path, LP_COMPRESS_NONE, err);
	cr_assert(out, "%s", err->msg);
	lp_basic_sink *s = lp_encoded_sink_new(out, user_only, form, buffer);
	int rc = lp_basic_sink_put(s, &b, err);
	if (!rc)
		rc = lp_basic_sink_ops.finish(s, NULL, err);
	lp_basic_sink_free(s);
	rc = rc ? (lp_output_abort(out), rc) : lp_output_commit(out, err);
	gchar *text = NULL;
	gsize len = 0;
	*got = g_string_new(NULL);
	if (g_file_get_contents(path, &text, &len, NULL))
		g_string_append_len(*got, text, (gssize)len);
	g_free(text);
	g_free(path);
	scratch_dir_free(dir);
	g_free(canon);
	g_free(raw);
	return rc;
}

/* A batch written by a sink whose buffer holds one record (flushed on
 * nearly every reference) or a thousand, read from either layout, is the
 * same bytes as the references written one by one here: basic's lines,
 * bin's words; user-only, without the kernel's. */
Test(forms, batch_put_in_pieces_and_layouts)
{
	enum { N = 1000 };
	static held_ref refs[N];
	uint64_t state = 41;
	for (size_t i = 0; i < N; i++) {
		state = state * 6364136223846793005u + 1442695040888963407u;
		refs[i] = (held_ref){.canonical = state >> (state % 64), .cpu = 7,
				     .type = lp_ref_types[(state >> 20) % 6]};
	}
	lp_error err = {0};
	for (int user_only = 0; user_only < 2; user_only++) {
		GString *text = g_string_new(NULL), *bin = g_string_new(LP_BIN_HEADER);
		for (size_t i = 0; i < N; i++) {
			if (user_only && lp_ref_is_kernel(refs[i].type))
				continue;
			g_string_append_printf(text, "%c %" G_GINT64_MODIFIER "x\n", refs[i].type,
					       refs[i].canonical);
			uint64_t word = (refs[i].canonical & LP_BIN_CANON_MAX) |
					(uint64_t)lp_ref_type_index(refs[i].type) << LP_BIN_TYPE_SHIFT;
			for (int k = 0; k < 8; k++)
				g_string_append_c(bin, (char)(word >> 8 * k));
		}
		for (int held = 0; held < 2; held++)
			for (size_t buffer = 0; buffer <= 24000; buffer += 24000) {
				GString *got;
				/* bin: the numbers it can carry */
				static held_ref fitting[N];
				for (size_t i = 0; i < N; i++)
					fitting[i] = (held_ref){refs[i].canonical & LP_BIN_CANON_MAX,
								refs[i].cpu, refs[i].type};
				cr_assert_eq(sink_put(LP_FORM_BASIC, user_only, buffer, held, refs, N,
						      &got, &err), 0, "%s", err.msg);
				cr_assert_str_eq(got->str, text->str, "held %d buffer %zu", held, buffer);
				g_string_free(got, TRUE);
				cr_assert_eq(sink_put(LP_FORM_BIN, user_only, buffer, held, fitting, N,
						      &got, &err), 0, "%s", err.msg);
				cr_assert_eq(got->len, bin->len);
				cr_assert_eq(memcmp(got->str, bin->str, bin->len), 0,
					     "held %d buffer %zu", held, buffer);
				g_string_free(got, TRUE);
			}
		g_string_free(text, TRUE);
		g_string_free(bin, TRUE);
	}
}

/* A number too large for the form stops the batch and is named by its
 * index among the references written; user-only, a kernel reference's
 * is not looked at, nor counted. */
Test(forms, batch_put_stops_at_a_number_too_large)
{
	const held_ref refs[] = {
		{1, 0, 'r'}, {LP_BIN_CANON_MAX + 1, 0, 'R'}, {2, 0, 'w'}, {3, 0, 'W'},
		{LP_BIN_CANON_MAX + 2, 0, 'i'}, {4, 0, 'r'},
	};
	lp_error err = {0};
	GString *got;
	for (int held = 0; held < 2; held++) {
		cr_assert_eq(sink_put(LP_FORM_BIN, false, 0, held, refs, 6, &got, &err), LP_EINPUT);
		cr_assert_str_eq(err.msg, "reference 1: canonical number 2000000000000000 does not "
					  "fit the bin form");
		g_string_free(got, TRUE);
		cr_assert_eq(sink_put(LP_FORM_BIN, true, 0, held, refs, 6, &got, &err), LP_EINPUT);
		cr_assert_str_eq(err.msg, "reference 2: canonical number 2000000000000001 does not "
					  "fit the bin form");
		g_string_free(got, TRUE);
		cr_assert_eq(sink_put(LP_FORM_BIN, true, 0, held, refs, 4, &got, &err), 0, "%s",
			     err.msg);
		cr_assert_eq(got->len, LP_BIN_HEADER_SIZE + 2 * LP_BIN_WORD_SIZE);
		g_string_free(got, TRUE);
	}
}
