/* BYU address traces: 12-byte records (legacy-formats, section 1). */
#include "bytesrc.h"

#include <string.h>

static const char *const reqtype_names[256] = {
	[0x00] = "FETCH",      [0x01] = "MEMREAD",      [0x02] = "MEMREADINV",
	[0x03] = "MEMWRITE",   [0x10] = "IOREAD",       [0x11] = "IOWRITE",
	[0x20] = "DEFERREPLY", [0x21] = "INTA",         [0x22] = "CNTRLAGNTRES",
	[0x23] = "BRTRACEREC", [0x31] = "SHUTDOWN",     [0x32] = "FLUSH",
	[0x33] = "HALT",       [0x34] = "SYNC",         [0x35] = "FLUSHACK",
	[0x36] = "STOPCLKACK", [0x37] = "SMIACK",
};

const char *lp_byu_reqtype_name(uint8_t reqtype) { return reqtype_names[reqtype]; }

char lp_byu_ref_type(uint8_t reqtype)
{
	switch (reqtype) {
	case 0x00: return 'i';
	case 0x01:
	case 0x02: return 'r';
	case 0x03: return 'w';
	default: return 0;
	}
}

static const char hexdigits[] = "0123456789abcdef";

size_t lp_byu_format(char *dst, const lp_byu_record *rec)
{
	char *p = dst;
	for (int shift = 28; shift >= 0; shift -= 4)
		*p++ = hexdigits[(rec->addr >> shift) & 0xf];
	*p++ = ' ';
	const char *name = reqtype_names[rec->reqtype];
	if (name) {
		size_t len = strlen(name);
		memcpy(p, name, len);
		p += len;
	} else {
		memcpy(p, "UNKNOWN_", 8);
		p[8] = hexdigits[rec->reqtype >> 4];
		p[9] = hexdigits[rec->reqtype & 0xf];
		p += 10;
	}
	*p++ = ' ';
	p += lp_fmt_hex(p, rec->size);
	*p++ = ' ';
	p += lp_fmt_hex(p, rec->attr);
	*p++ = ' ';
	p += lp_fmt_hex(p, rec->proc);
	*p++ = ' ';
	p += lp_fmt_hex(p, rec->time);
	*p++ = '\n';
	return (size_t)(p - dst);
}

struct lp_byu_reader {
	lp_byte_source *src;
	enum lp_endian endian;
	uint64_t index; /* records decoded so far */
	bool done;
};

lp_byu_reader *lp_byu_reader_new(lp_byte_source *src, enum lp_endian endian)
{
	lp_byu_reader *r = g_new0(lp_byu_reader, 1);
	r->src = src;
	r->endian = endian;
	return r;
}

static inline uint32_t u32_at(const unsigned char *p, enum lp_endian endian)
{
	if (endian == LP_BIG)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

ssize_t lp_byu_reader_read(lp_byu_reader *r, lp_byu_record *out, size_t cap,
			   const lp_torn_policy *policy, lp_error *err)
{
	if (r->done)
		return 0;
	ssize_t avail = lp_byte_source_fill(r->src, LP_BYU_RECORD_SIZE, err);
	if (avail < 0)
		return -1;
	size_t n = (size_t)avail / LP_BYU_RECORD_SIZE;
	if (n == 0) {
		r->done = true;
		if (avail > 0 && lp_torn_record(policy, lp_byte_source_name(r->src), r->index,
						(size_t)avail, err))
			return -1;
		return 0;
	}
	if (n > cap)
		n = cap;
	const unsigned char *p = r->src->buf + r->src->pos;
	for (size_t i = 0; i < n; i++, p += LP_BYU_RECORD_SIZE) {
		out[i].addr = u32_at(p, r->endian);
		out[i].reqtype = p[4];
		out[i].size = p[5];
		out[i].attr = p[6];
		out[i].proc = p[7];
		out[i].time = u32_at(p + 8, r->endian);
	}
	r->src->pos += n * LP_BYU_RECORD_SIZE;
	r->index += n;
	return (ssize_t)n;
}

void lp_byu_reader_close(lp_byu_reader *r)
{
	if (!r)
		return;
	lp_byte_source_close(r->src);
	g_free(r);
}
