/* Raw reference traces (laplace-formats(5), "RAW REFERENCE TRACE"): 18-byte
 * binary records in either byte order, or their text form; and the 64-bit
 * forms (section 10.1), the LPREF64 header and 26-byte little-endian
 * records, or text after its "#laplace-ref 64" line. The forms share
 * their decoding loops, made for each form with its sizes as constants
 * (ALWAYS_INLINE), so that the 32-bit forms run the code they ran before
 * the 64-bit ones came. Each form's reader and writer are here; copying a
 * trace from one form into another (convert, dump) is refcopy.c's. */
#include "formats/refio.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <glib.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "io/bytesrc.h"
#include "core/numbers.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

int lp_endian_parse(const char *s)
{
	if (!strcmp(s, "little"))
		return LP_LITTLE;
	if (!strcmp(s, "big"))
		return LP_BIG;
	return -1;
}

/* ---- reader ---- */

typedef struct lp_ref_reader {
	lp_ref_source base; /* first: the source is the reader */
	lp_byte_source src;
	enum lp_endian endian;
	uint64_t index;
	unsigned header_lines; /* text: lines before the first record */
	size_t torn;
	bool handoff; /* lp_ref_source_ops.set_handoff */
	uint64_t last_timestamp; /* of the last binary record decoded */
	uint64_t order_breaks;   /* lp_ref_source_ops.order_breaks */
} lp_ref_reader;

static const lp_ref_source_ops bin_ops, text_ops, bin64_ops, text64_ops;

/* A reader of src's records through ops, src's input and buffer moved in. */
static lp_ref_source *reader_new(lp_byte_source *src, const lp_ref_source_ops *ops,
				 enum lp_endian endian)
{
	lp_ref_reader *r = g_new0(lp_ref_reader, 1);
	r->base.ops = ops;
	r->src = *src;
	*src = (lp_byte_source){0};
	r->endian = endian;
	return &r->base;
}

static lp_ref_source *bin_open(lp_byte_source *src, enum lp_endian endian, lp_error *err)
{
	(void)err;
	return reader_new(src, &bin_ops, endian);
}

static lp_ref_source *text_open(lp_byte_source *src, enum lp_endian endian, lp_error *err)
{
	(void)err;
	return reader_new(src, &text_ops, endian);
}

/* The header's version byte checked and passed; src starts with the
 * magic (its sniff was sure). The form is little-endian whatever endian. */
static lp_ref_source *bin64_open(lp_byte_source *src, enum lp_endian endian, lp_error *err)
{
	(void)endian;
	ssize_t avail = lp_inbuf_fill(&src->b, LP_REF64_HEADER_SIZE, err);
	if (avail < 0)
		return NULL;
	const char *name = lp_byte_source_name(src);
	const unsigned char version = (unsigned char)LP_REF64_HEADER[LP_REF64_MAGIC_SIZE];
	if (avail < LP_REF64_HEADER_SIZE)
		return lp_fail(err, LP_EINPUT, "%s: header (byte %d): field version: missing", name,
			       LP_REF64_MAGIC_SIZE), NULL;
	unsigned char got = lp_byte_source_data(src)[LP_REF64_MAGIC_SIZE];
	if (got != version)
		return lp_fail(err, LP_EINPUT, "%s: header (byte %d): field version: %u is not %u",
			       name, LP_REF64_MAGIC_SIZE, got, version), NULL;
	src->b.pos += LP_REF64_HEADER_SIZE;
	return reader_new(src, &bin64_ops, LP_LITTLE);
}

/* Its first line, "#laplace-ref 64" (its sniff was sure), passed. */
static lp_ref_source *text64_open(lp_byte_source *src, enum lp_endian endian, lp_error *err)
{
	char *line;
	size_t len;
	int got = lp_inbuf_line(&src->b, &line, &len, err);
	if (got == LP_INBUF_LONG_LINE)
		return lp_inbuf_long_line(err, lp_byte_source_name(src), 1), NULL;
	if (got < 0)
		return NULL;
	lp_ref_source *s = reader_new(src, &text64_ops, endian);
	((lp_ref_reader *)s)->header_lines = 1;
	return s;
}

static const bool valid_type[256] = {
	['r'] = true, ['w'] = true, ['i'] = true, ['R'] = true, ['W'] = true, ['I'] = true,
};

/* A record stored for another thread (lp_ref_source_ops.set_handoff). The
 * buffers handed between threads come back to be filled again while the
 * other processor still holds their lines from its last reading: ordinary
 * stores would each wait to take a line back, and the decoding ran six
 * times slower than in one thread. Non-temporal stores write whole lines
 * without taking them. The words are put together in registers: built in
 * memory, a word read back over narrower stores stalls every record. */
static inline void store_handed_off(lp_ref *to, uint64_t timestamp, uint64_t vas, uint64_t address,
				    uint8_t length, char type)
{
#if defined(__x86_64__)
	_Static_assert(offsetof(lp_ref, timestamp) == 0 && offsetof(lp_ref, vas) == 8 &&
			       offsetof(lp_ref, address) == 16 && offsetof(lp_ref, length) == 24 &&
			       offsetof(lp_ref, type) == 25 && sizeof(lp_ref) == 32,
		       "lp_ref is stored as these four words");
	long long *w = (long long *)to;
	_mm_stream_si64(w, (long long)timestamp);
	_mm_stream_si64(w + 1, (long long)vas);
	_mm_stream_si64(w + 2, (long long)address);
	_mm_stream_si64(w + 3, (long long)(length | (uint64_t)(unsigned char)type << 8));
#else
	*to = (lp_ref){.timestamp = timestamp, .vas = vas, .address = address, .length = length,
		       .type = type};
#endif
}

/* The binary forms' records: size bytes each, vas and address of 32 bits
 * in the reader's byte order, or of 64 (wide) little-endian. */
ALWAYS_INLINE ssize_t read_records(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err,
				   const size_t size, const bool wide)
{
	lp_ref_reader *r = (lp_ref_reader *)s;
	bool big = r->endian == LP_BIG;
	size_t count = 0;
	while (count < cap) {
		ssize_t avail = lp_inbuf_fill(&r->src.b, size, err);
		if (avail < 0)
			return -1;
		if ((size_t)avail < size) {
			/* The end of input: what is left is a torn record. */
			if (avail > 0)
				r->torn = (size_t)avail;
			r->src.b.pos += (size_t)avail;
			break;
		}
		size_t n = MIN(cap - count, (size_t)avail / size);
		const unsigned char *p = (const unsigned char *)r->src.b.data + r->src.b.pos;
		uint64_t last = r->last_timestamp, breaks = 0;
		for (size_t i = 0; i < n; i++, p += size) {
			lp_ref *ref = &out[count + i];
			if (!valid_type[p[0]])
				return lp_fail(err, LP_EINPUT,
					       "%s: record %" G_GUINT64_FORMAT ": field type: bad reference type 0x%02x",
					       lp_input_name(r->src.in), r->index + i, p[0]), -1;
			uint64_t timestamp = lp_load_u64(p + 1, big);
			breaks += timestamp < last;
			last = timestamp;
			uint64_t vas = wide ? lp_load_u64(p + 10, false) : lp_load_u32(p + 10, big);
			uint64_t address = wide ? lp_load_u64(p + 18, false) : lp_load_u32(p + 14, big);
			if (r->handoff) {
				store_handed_off(ref, timestamp, vas, address, p[9], (char)p[0]);
				continue;
			}
			ref->type = (char)p[0];
			ref->timestamp = timestamp;
			ref->length = p[9];
			ref->vas = vas;
			ref->address = address;
		}
		r->last_timestamp = last;
		r->order_breaks += breaks;
		r->src.b.pos += n * size;
		r->index += n;
		count += n;
	}
#if defined(__x86_64__)
	if (r->handoff)
		_mm_sfence(); /* the stores above are seen before the handing over */
#endif
	return (ssize_t)count;
}

static ssize_t read_binary(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err)
{
	return read_records(s, out, cap, err, LP_REF_RECORD_SIZE, false);
}

static ssize_t read_binary64(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err)
{
	return read_records(s, out, cap, err, LP_REF64_RECORD_SIZE, true);
}

static const char *const text_fields[5] = {"type", "timestamp", "length", "vas", "address"};
/* The fields' widths in bits, of the 32-bit and the 64-bit text form. */
static const int text_field_bits[5] = {8, 64, 8, 32, 32};
static const int text64_field_bits[5] = {8, 64, 8, 64, 64};

/* Parse one text record whose fields have those widths; on error the
 * message lacks the "FILE:LINE: ". Fields are separated by exactly one
 * space (laplace-formats(5)): a second space, or a leading one, makes an
 * empty field. */
static int parse_text_record(const char *line, size_t len, const int *field_bits, lp_ref *ref,
			     lp_error *err)
{
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	const char *tok[5];
	size_t tok_len[5];
	char q[LP_QUOTE_SIZE];
	if (len == 0)
		return lp_fail(err, LP_EINPUT, "field type: missing");
	size_t i = 0;
	for (int f = 0; f < 5; f++) {
		if (f > 0 && i++ == len) /* past the space that ends the field before */
			return lp_fail(err, LP_EINPUT, "field %s: missing", text_fields[f]);
		size_t start = i;
		while (i < len && line[i] != ' ')
			i++;
		if (i == start)
			return lp_fail(err, LP_EINPUT, "field %s: empty (one space separates fields)",
				       text_fields[f]);
		tok[f] = line + start;
		tok_len[f] = i - start;
	}
	if (i < len) {
		while (line[i] == ' ')
			i++;
		size_t start = i;
		while (i < len && line[i] != ' ')
			i++;
		return lp_fail(err, LP_EINPUT, "extra field '%s' after address",
			       lp_quote(q, line + start, i - start));
	}
	if (tok_len[0] != 1 || lp_ref_type_index(tok[0][0]) < 0)
		return lp_fail(err, LP_EINPUT, "field type: bad reference type '%s'",
			       lp_quote(q, tok[0], tok_len[0]));
	uint64_t v[5];
	for (int f = 1; f < 5; f++) {
		int h = lp_parse_hex(tok[f], tok_len[f], &v[f]);
		lp_quote(q, tok[f], tok_len[f]);
		if (h == -1)
			return lp_fail(err, LP_EINPUT, "field %s: bad hex number '%s'",
				       text_fields[f], q);
		int bits = field_bits[f];
		if (h == LP_HEX_OVERFLOW || (bits < 64 && v[f] >> bits))
			return lp_fail(err, LP_EINPUT, "field %s: %s does not fit %d bits",
				       text_fields[f], q, bits);
	}
	ref->type = tok[0][0];
	ref->timestamp = v[1];
	ref->length = (uint8_t)v[2];
	ref->vas = v[3];
	ref->address = v[4];
	return 0;
}

bool lp_ref_starts_as_text(const char *data, size_t n)
{
	size_t len = MIN(n, (size_t)LP_REF_SNIFF_BYTES);
	const char *nl = memchr(data, '\n', len);
	if (nl)
		len = (size_t)(nl - data);
	lp_ref ref;
	return parse_text_record(data, len, text_field_bits, &ref, NULL) == 0;
}

/* A binary raw reference trace, little-endian, starts at p (n bytes
 * available): every whole record there, and there is one, has a type byte
 * and a timestamp no smaller than the one before, and some byte is 0, as
 * in no text (a timestamp's top byte, a small vas). BYU and p6 records
 * pass by chance about never: a type byte is 6 values of 256. */
static bool looks_binary(const unsigned char *p, size_t n)
{
	size_t records = n / LP_REF_RECORD_SIZE;
	if (records == 0 || !memchr(p, 0, records * LP_REF_RECORD_SIZE))
		return false;
	uint64_t before = 0;
	for (size_t i = 0; i < records; i++, p += LP_REF_RECORD_SIZE) {
		uint64_t timestamp = lp_load_u64(p + 1, false);
		if (!valid_type[p[0]] || timestamp < before)
			return false;
		before = timestamp;
	}
	return true;
}

/* Binary records are only plausible: any bytes are a binary trace, read
 * when no other form is sure of them (lp_ref_open). */
static enum lp_sniff bin_sniff(const unsigned char *data, size_t n)
{
	return looks_binary(data, n) ? LP_SNIFF_LIKELY : LP_SNIFF_NO;
}

static enum lp_sniff text_sniff(const unsigned char *data, size_t n)
{
	return lp_ref_starts_as_text((const char *)data, n) ? LP_SNIFF_SURE : LP_SNIFF_NO;
}

static enum lp_sniff bin64_sniff(const unsigned char *data, size_t n)
{
	return n >= LP_REF64_MAGIC_SIZE && !memcmp(data, LP_REF64_MAGIC, LP_REF64_MAGIC_SIZE)
		? LP_SNIFF_SURE : LP_SNIFF_NO;
}

/* Its first line, trailing '\r's and spaces aside, is the header. */
static enum lp_sniff text64_sniff(const unsigned char *data, size_t n)
{
	const unsigned char *nl = memchr(data, '\n', n);
	size_t len = nl ? (size_t)(nl - data) : n;
	while (len > 0 && (data[len - 1] == ' ' || data[len - 1] == '\r'))
		len--;
	return len == strlen(LP_REF64_TEXT_HEADER) && !memcmp(data, LP_REF64_TEXT_HEADER, len)
		? LP_SNIFF_SURE : LP_SNIFF_NO;
}

/* One hex field of at most max_digits digits ended by the byte end; the
 * position after end, or NULL for anything else. */
static inline const unsigned char *plain_hex_field(const unsigned char *p, unsigned max_digits,
						   unsigned char end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned n = 0;
	int d;
	while (n < max_digits && (d = lp_hex_value[p[n]]) >= 0) {
		x = x << 4 | (unsigned)d;
		n++;
	}
	if (n == 0 || p[n] != end)
		return NULL;
	*v = x;
	return p + n + 1;
}

/* The text record as writers write it, "t TS LEN VAS ADDR\n" with single
 * spaces and no digits beyond each field's width (vas and address of 64
 * bits when wide), parsed in one pass without first finding the line's
 * end: the general parser costs about three times as much, and this is
 * every line of a converted trace. Returns the bytes taken, or 0 for any
 * other line, which the general parser then takes (and names what is
 * wrong with it). Reads at most LP_REF_TEXT_RECORD_MAX bytes of p, or
 * LP_REF64_TEXT_RECORD_MAX when wide. */
ALWAYS_INLINE size_t parse_plain_text_record(const unsigned char *p, lp_ref *ref, const bool wide)
{
	uint64_t timestamp, length, vas, address;
	const unsigned char *q = p + 2;
	if (!valid_type[p[0]] || p[1] != ' ' ||
	    !(q = plain_hex_field(q, 16, ' ', &timestamp)) ||
	    !(q = plain_hex_field(q, 2, ' ', &length)) ||
	    !(q = plain_hex_field(q, wide ? 16 : 8, ' ', &vas)) ||
	    !(q = plain_hex_field(q, wide ? 16 : 8, '\n', &address)))
		return 0;
	ref->type = (char)p[0];
	ref->timestamp = timestamp;
	ref->length = (uint8_t)length;
	ref->vas = wide ? vas : (uint32_t)vas;
	ref->address = wide ? address : (uint32_t)address;
	return (size_t)(q - p);
}

ALWAYS_INLINE ssize_t read_lines(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err,
				 const bool wide)
{
	lp_ref_reader *r = (lp_ref_reader *)s;
	const size_t longest = wide ? LP_REF64_TEXT_RECORD_MAX : LP_REF_TEXT_RECORD_MAX;
	lp_inbuf *b = &r->src.b;
	size_t count = 0;
	while (count < cap) {
		if (b->len - b->pos < longest && lp_inbuf_fill(b, longest, err) < 0)
			return -1;
		if (b->len - b->pos >= longest) {
			size_t used = parse_plain_text_record((const unsigned char *)b->data + b->pos,
							      &out[count], wide);
			if (used) {
				b->pos += used;
				r->index++;
				count++;
				continue;
			}
		}
		char *line;
		size_t len;
		int got = lp_inbuf_line(b, &line, &len, err);
		if (got == LP_INBUF_LONG_LINE)
			return lp_inbuf_long_line(err, lp_input_name(r->src.in),
						  r->index + 1 + r->header_lines);
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		lp_error why;
		if (parse_text_record(line, len, wide ? text64_field_bits : text_field_bits,
				      &out[count], &why))
			return lp_fail(err, LP_EINPUT, "%s:%" G_GUINT64_FORMAT ": %s",
				       lp_input_name(r->src.in), r->index + 1 + r->header_lines,
				       why.msg), -1;
		r->index++;
		count++;
	}
	return (ssize_t)count;
}

static ssize_t read_text(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err)
{
	return read_lines(s, out, cap, err, false);
}

static ssize_t read_text64(lp_ref_source *s, lp_ref *out, size_t cap, lp_error *err)
{
	return read_lines(s, out, cap, err, true);
}

void lp_text_chunk_free(lp_text_chunk *c)
{
	g_free(c->text);
	*c = (lp_text_chunk){0};
}

/* Room for size more bytes, and for the fast parser's look past the last
 * line (zeroed, so it never reads uninitialised bytes). */
static void chunk_reserve(lp_text_chunk *c, size_t size)
{
	if (c->len + size + LP_REF64_TEXT_RECORD_MAX <= c->cap)
		return;
	size_t old = c->cap;
	c->cap = MAX(2 * c->cap, c->len + size + LP_REF64_TEXT_RECORD_MAX);
	c->text = g_realloc(c->text, c->cap);
	memset(c->text + old, 0, c->cap - old);
}

/* Move the next lines, at most max_lines, into c (replacing what it held). */
static ssize_t take_lines(lp_ref_source *s, lp_text_chunk *c, size_t max_lines, lp_error *err)
{
	lp_ref_reader *r = (lp_ref_reader *)s;
	c->len = 0;
	c->lines = 0;
	c->long_line = false;
	c->first_line = r->index + 1 + r->header_lines;
	while (c->lines < max_lines) {
		char *line;
		size_t len;
		int got = lp_inbuf_line(&r->src.b, &line, &len, err);
		if (got == LP_INBUF_LONG_LINE) {
			c->long_line = true;
			break;
		}
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		chunk_reserve(c, len + 1);
		memcpy(c->text + c->len, line, len);
		c->text[c->len + len] = '\n';
		c->len += len + 1;
		c->lines++;
		r->index++;
	}
	if (c->cap > c->len)
		memset(c->text + c->len, 0, MIN(c->cap - c->len, (size_t)LP_REF64_TEXT_RECORD_MAX));
	return (ssize_t)c->lines;
}

ALWAYS_INLINE ssize_t decode_lines(const lp_ref_source *s, const lp_text_chunk *c, lp_ref *refs,
				   lp_error *err, const bool wide)
{
	const char *name = s->ops->name(s);
	const char *p = c->text;
	for (size_t i = 0; i < c->lines; i++) {
		size_t used = parse_plain_text_record((const unsigned char *)p, &refs[i], wide);
		if (used) {
			p += used;
			continue;
		}
		const char *nl = memchr(p, '\n', (size_t)(c->text + c->len - p));
		lp_error why;
		if (parse_text_record(p, (size_t)(nl - p), wide ? text64_field_bits : text_field_bits,
				      &refs[i], &why))
			return lp_fail(err, LP_EINPUT, "%s:%" G_GUINT64_FORMAT ": %s", name,
				       c->first_line + i, why.msg), -1;
		p = nl + 1;
	}
	if (c->long_line)
		return lp_inbuf_long_line(err, name, c->first_line + c->lines);
	return (ssize_t)c->lines;
}

static ssize_t parse_lines(const lp_ref_source *s, const lp_text_chunk *c, lp_ref *refs,
			   lp_error *err)
{
	return decode_lines(s, c, refs, err, false);
}

static ssize_t parse_lines64(const lp_ref_source *s, const lp_text_chunk *c, lp_ref *refs,
			     lp_error *err)
{
	return decode_lines(s, c, refs, err, true);
}

static const lp_ref_reader *reader_of(const lp_ref_source *s) { return (const lp_ref_reader *)s; }

static void set_handoff(lp_ref_source *s, bool handoff) { ((lp_ref_reader *)s)->handoff = handoff; }
static uint64_t order_breaks(const lp_ref_source *s) { return reader_of(s)->order_breaks; }
static uint64_t reader_index(const lp_ref_source *s) { return reader_of(s)->index; }
static size_t torn_bytes(const lp_ref_source *s) { return reader_of(s)->torn; }
static const char *reader_name(const lp_ref_source *s) { return lp_input_name(reader_of(s)->src.in); }

static double reader_fraction(const lp_ref_source *s)
{
	const lp_input *in = reader_of(s)->src.in;
	int64_t size = lp_input_file_size(in);
	return size > 0 ? (double)lp_input_file_offset(in) / (double)size : -1;
}

static char *record_where(const lp_ref_source *s, uint64_t i)
{
	return g_strdup_printf("%s: record %" G_GUINT64_FORMAT, reader_name(s), i);
}

static char *line_where(const lp_ref_source *s, uint64_t i)
{
	return g_strdup_printf("%s:%" G_GUINT64_FORMAT, reader_name(s),
			       i + 1 + reader_of(s)->header_lines);
}

static void reader_close(lp_ref_source *s)
{
	lp_ref_reader *r = (lp_ref_reader *)s;
	lp_byte_source_clear(&r->src);
	g_free(r);
}

/* What every form's reader does alike. */
#define READER_OPS                                                                                 \
	.index = reader_index, .torn_bytes = torn_bytes, .fraction = reader_fraction,              \
	.name = reader_name, .close = reader_close

static const lp_ref_source_ops bin_ops = {
	.read = read_binary,
	.where = record_where,
	READER_OPS,
	.order_breaks = order_breaks,
	.set_handoff = set_handoff,
	.width = 32,
};

/* Text costs more to parse than the merge: it is cut and decoded apart. */
static const lp_ref_source_ops text_ops = {
	.read = read_text,
	.where = line_where,
	READER_OPS,
	.cut = take_lines,
	.decode = parse_lines,
	.width = 32,
};

static const lp_ref_source_ops bin64_ops = {
	.read = read_binary64,
	.where = record_where,
	READER_OPS,
	.order_breaks = order_breaks,
	.set_handoff = set_handoff,
	.width = 64,
};

static const lp_ref_source_ops text64_ops = {
	.read = read_text64,
	.where = line_where,
	READER_OPS,
	.cut = take_lines,
	.decode = parse_lines64,
	.width = 64,
};

enum lp_ref_format lp_ref_reader_format(const lp_ref_source *s)
{
	return s->ops->cut ? LP_REF_TEXT : LP_REF_BIN;
}

/* ---- the forms, and opening a trace in its form ---- */

const lp_ref_form lp_ref_forms[] = {
	{LP_REF_BIN, "bin", 64, bin64_sniff, bin64_open},
	{LP_REF_TEXT, "text", 64, text64_sniff, text64_open},
	{LP_REF_TEXT, "text", 32, text_sniff, text_open},
	{LP_REF_BIN, "bin", 32, bin_sniff, bin_open},
};
const size_t lp_nref_forms = sizeof lp_ref_forms / sizeof lp_ref_forms[0];

#define AUTO_NAME "auto"

/* The name of an encoding; NULL when no form has it. */
static const char *encoding_name(int encoding)
{
	if (encoding == LP_REF_AUTO)
		return AUTO_NAME;
	for (size_t i = 0; i < lp_nref_forms; i++)
		if ((int)lp_ref_forms[i].encoding == encoding)
			return lp_ref_forms[i].encoding_name;
	return NULL;
}

int lp_ref_format_parse(const char *s)
{
	const char *name;
	for (int e = LP_REF_AUTO; (name = encoding_name(e)); e++)
		if (!strcmp(s, name))
			return e;
	return -1;
}

const char *lp_ref_format_name(int format)
{
	return format >= LP_REF_AUTO ? encoding_name(format) : NULL;
}

/* The encodings are enum lp_ref_format's values from LP_REF_AUTO on,
 * each named by its forms. */
char *lp_ref_format_names(void)
{
	GString *names = g_string_new(NULL);
	const char *name;
	for (int e = LP_REF_AUTO + 1; (name = encoding_name(e)); e++)
		g_string_append_printf(names, "%s%s", names->len ? ", " : "", name);
	g_string_append(names, " or " AUTO_NAME);
	return g_string_free(names, FALSE);
}

int lp_ref_format_check(int format, const char *field, lp_error *err)
{
	if (format >= LP_REF_AUTO && encoding_name(format))
		return 0;
	GString *names = g_string_new(NULL);
	const char *name;
	for (int e = LP_REF_AUTO; (name = encoding_name(e)); e++) {
		char *upper = g_ascii_strup(name, -1);
		bool last = !encoding_name(e + 1);
		g_string_append_printf(names, "%sLP_REF_%s", e == LP_REF_AUTO ? "" : last ? " or " : ", ",
				       upper);
		g_free(upper);
	}
	lp_fail(err, LP_EUSAGE, "%s: %d is not %s", field, format, names->str);
	g_string_free(names, TRUE);
	return LP_EUSAGE;
}

lp_ref_source *lp_ref_open_source(lp_byte_source *src, enum lp_ref_format encoding,
				  enum lp_endian endian, lp_error *err)
{
	if (lp_ref_format_check((int)encoding, "reference trace form", err)) {
		lp_byte_source_close(src);
		return NULL;
	}
	/* Enough for every form's sniff(): the longest first line, and its newline. */
	ssize_t n = lp_inbuf_fill(&src->b, LP_LINE_MAX + 1, err);
	if (n < 0) {
		lp_byte_source_close(src);
		return NULL;
	}
	const unsigned char *p = lp_byte_source_data(src);
	const lp_ref_form *form = NULL; /* the last of encoding's forms, at worst */
	for (size_t i = 0; i < lp_nref_forms; i++) {
		const lp_ref_form *f = &lp_ref_forms[i];
		if (encoding != LP_REF_AUTO && f->encoding != encoding)
			continue;
		form = f;
		if (f->sniff(p, (size_t)n) == LP_SNIFF_SURE)
			break;
	}
	lp_ref_source *s = form->open_source(src, endian, err);
	lp_byte_source_close(src); /* what the source did not take */
	return s;
}

lp_ref_source *lp_ref_open(const char *path, enum lp_ref_format encoding, enum lp_endian endian,
			   lp_error *err)
{
	if (lp_ref_format_check((int)encoding, "reference trace form", err))
		return NULL;
	lp_byte_source *src = lp_byte_source_open(path, err);
	return src ? lp_ref_open_source(src, encoding, endian, err) : NULL;
}

/* ---- writing: the forms' writers (registry rows' open_sink) ---- */

#define WRITER_BUFFER_SIZE (256u << 10)

struct lp_ref_writer {
	lp_output *out;
	enum lp_ref_format format;
	bool wide; /* the 64-bit form */
	bool big;
	size_t used;
	char buf[WRITER_BUFFER_SIZE];
};

/* A writer whose output starts with header (NULL: none). */
static lp_ref_writer *writer_new(lp_output *out, enum lp_ref_format format, bool wide, bool big,
				 const char *header, size_t header_size)
{
	lp_ref_writer *w = g_new(lp_ref_writer, 1);
	w->out = out;
	w->format = format;
	w->wide = wide;
	w->big = big;
	w->used = header_size;
	memcpy(w->buf, header, header_size);
	return w;
}

lp_ref_writer *lp_ref_bin_writer_new(lp_output *out, enum lp_endian endian)
{
	return writer_new(out, LP_REF_BIN, false, endian == LP_BIG, "", 0);
}

lp_ref_writer *lp_ref_text_writer_new(lp_output *out, enum lp_endian endian)
{
	(void)endian;
	return writer_new(out, LP_REF_TEXT, false, false, "", 0);
}

lp_ref_writer *lp_ref64_bin_writer_new(lp_output *out, enum lp_endian endian)
{
	(void)endian;
	return writer_new(out, LP_REF_BIN, true, false, LP_REF64_HEADER, LP_REF64_HEADER_SIZE);
}

lp_ref_writer *lp_ref64_text_writer_new(lp_output *out, enum lp_endian endian)
{
	(void)endian;
	static const char header[] = LP_REF64_TEXT_HEADER "\n";
	return writer_new(out, LP_REF_TEXT, true, false, header, sizeof header - 1);
}

static size_t encode_text(char *p, const lp_ref *ref)
{
	char *q = p;
	*q++ = ref->type;
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->timestamp);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->length);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->vas);
	*q++ = ' ';
	q += lp_fmt_hex(q, ref->address);
	*q++ = '\n';
	return (size_t)(q - p);
}

static int flush_writer(lp_ref_writer *w, lp_error *err)
{
	int r = lp_output_write(w->out, w->buf, w->used, err);
	w->used = 0;
	return r;
}

int lp_ref_writer_write(lp_ref_writer *w, const lp_ref *refs, size_t n, lp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (w->used + LP_REF64_TEXT_RECORD_MAX > sizeof w->buf) {
			int r = flush_writer(w, err);
			if (r)
				return r;
		}
		unsigned char *p = (unsigned char *)w->buf + w->used;
		if (w->format == LP_REF_TEXT)
			w->used += encode_text((char *)p, &refs[i]);
		else if (w->wide)
			w->used += lp_ref_encode_bin64(p, &refs[i]);
		else
			w->used += lp_ref_encode_bin(p, &refs[i], w->big);
	}
	return 0;
}

int lp_ref_writer_finish(lp_ref_writer *w, lp_error *err)
{
	int r = flush_writer(w, err);
	g_free(w);
	return r;
}

void lp_ref_writer_free(lp_ref_writer *w) { g_free(w); }
