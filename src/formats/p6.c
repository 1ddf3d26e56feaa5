/* Pentium bus traces: 6-byte records (laplace-formats(5), "Pentium bus trace
 * (p6)"). */
#include "formats/p6.h"
#include "formats/padname.h"

#include "core/byteorder.h"
#include "core/numbers.h"

#include <string.h>

const char *const lp_p6_op_names[16] = {
	"INVALID", "INT_ACK", "INVALID", "SPECIAL", "INVALID", "IO_READ", "INVALID", "IO_WRITE",
	"I_FETCH", "NC_I_FETCH", "INVALID", "INVALID", "D_READ", "NC_D_READ", "WRITE_BACK", "D_WRITE",
};

/* Operation -> reference type; 0 for operations that are skipped. */
static const char op_ref_type[16] = {
	[8] = 'i', [9] = 'i', [12] = 'r', [13] = 'r', [14] = 'w', [15] = 'w',
};

int lp_p6_to_ref(const lp_p6_record *rec, uint64_t index, lp_ref *ref)
{
	char type = op_ref_type[rec->control >> 4];
	if (!type)
		return 0;
	unsigned requested = (unsigned)(uint8_t)~rec->be;
	unsigned lowest = requested ? (unsigned)__builtin_ctz(requested) : 0;
	*ref = (lp_ref){.timestamp = index, .vas = 0, .address = rec->addr + lowest,
			.length = (uint8_t)__builtin_popcount(requested), .type = type};
	return 1;
}

static const lp_padded_name op_padded[16] = {
	{"INVALID", 7}, {"INT_ACK", 7}, {"INVALID", 7}, {"SPECIAL", 7},
	{"INVALID", 7}, {"IO_READ", 7}, {"INVALID", 7}, {"IO_WRITE", 8},
	{"I_FETCH", 7}, {"NC_I_FETCH", 10}, {"INVALID", 7}, {"INVALID", 7},
	{"D_READ", 6}, {"NC_D_READ", 9}, {"WRITE_BACK", 10}, {"D_WRITE", 7},
};

size_t lp_p6_format(char *dst, const lp_p6_record *recs, size_t n)
{
	char *p = dst;
	for (size_t i = 0; i < n; i++) {
		p = lp_put_hex8(p, recs[i].addr);
		*p++ = ' ';
		p = lp_put_hex2(p, recs[i].be);
		*p++ = ' ';
		p = lp_put_name(p, &op_padded[recs[i].control >> 4]);
		*p++ = '\n';
	}
	return (size_t)(p - dst);
}

ssize_t lp_p6_reader_read(lp_p6_reader *r, lp_p6_record *out, size_t cap,
			  const lp_torn_policy *policy, lp_error *err)
{
	/* The seed's loop prints nothing for a torn tail (its last fread hits
	 * the end, so feof() stops the loop first): the tail is only reported. */
	const unsigned char *p = NULL;
	ssize_t n = lp_record_reader_next(r, LP_P6_RECORD_SIZE, cap, policy, &p, err);
	for (ssize_t i = 0; i < n; i++, p += LP_P6_RECORD_SIZE) {
		out[i].addr = lp_load_u32(p, r->endian == LP_BIG);
		out[i].be = p[4];
		out[i].control = p[5];
	}
	return n;
}
