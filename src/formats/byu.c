/* BYU address traces: 12-byte records (laplace-formats(5), "BYU address
 * trace"). */
#include "formats/byu.h"
#include "formats/padname.h"

#include "core/byteorder.h"
#include "core/numbers.h"

#include <string.h>

/* Names by request type, padded for lp_put_name (and NUL-terminated by
 * the padding); len 0 where a type has no name. */
static const lp_padded_name reqtype_names[256] = {
	[0x00] = {"FETCH", 5},       [0x01] = {"MEMREAD", 7},     [0x02] = {"MEMREADINV", 10},
	[0x03] = {"MEMWRITE", 8},    [0x10] = {"IOREAD", 6},      [0x11] = {"IOWRITE", 7},
	[0x20] = {"DEFERREPLY", 10}, [0x21] = {"INTA", 4},        [0x22] = {"CNTRLAGNTRES", 12},
	[0x23] = {"BRTRACEREC", 10}, [0x31] = {"SHUTDOWN", 8},    [0x32] = {"FLUSH", 5},
	[0x33] = {"HALT", 4},        [0x34] = {"SYNC", 4},        [0x35] = {"FLUSHACK", 8},
	[0x36] = {"STOPCLKACK", 10}, [0x37] = {"SMIACK", 6},
};

const char *lp_byu_reqtype_name(uint8_t reqtype)
{
	return reqtype_names[reqtype].len ? reqtype_names[reqtype].text : NULL;
}

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

size_t lp_byu_format(char *dst, const lp_byu_record *recs, size_t n)
{
	char *p = dst;
	for (size_t i = 0; i < n; i++) {
		const lp_byu_record *rec = &recs[i];
		p = lp_put_hex8(p, rec->addr);
		*p++ = ' ';
		if (reqtype_names[rec->reqtype].len) {
			p = lp_put_name(p, &reqtype_names[rec->reqtype]);
		} else {
			memcpy(p, "UNKNOWN_", 8);
			p = lp_put_hex2(p + 8, rec->reqtype);
		}
		*p++ = ' ';
		p = lp_put_hex_byte(p, rec->size);
		*p++ = ' ';
		p = lp_put_hex_byte(p, rec->attr);
		*p++ = ' ';
		p = lp_put_hex_byte(p, rec->proc);
		*p++ = ' ';
		p += lp_fmt_hex(p, rec->time);
		*p++ = '\n';
	}
	return (size_t)(p - dst);
}

ssize_t lp_byu_reader_read(lp_byu_reader *r, lp_byu_record *out, size_t cap,
			   const lp_torn_policy *policy, lp_error *err)
{
	const unsigned char *p = NULL;
	ssize_t n = lp_record_reader_next(r, LP_BYU_RECORD_SIZE, cap, policy, &p, err);
	for (ssize_t i = 0; i < n; i++, p += LP_BYU_RECORD_SIZE) {
		out[i].addr = lp_load_u32(p, r->endian == LP_BIG);
		out[i].reqtype = p[4];
		out[i].size = p[5];
		out[i].attr = p[6];
		out[i].proc = p[7];
		out[i].time = lp_load_u32(p + 8, r->endian == LP_BIG);
	}
	return n;
}
