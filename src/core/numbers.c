/* Numbers in text (core/numbers.h). */
#include "core/numbers.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>

#define HEX_ROW(h) \
	{h, '0'}, {h, '1'}, {h, '2'}, {h, '3'}, {h, '4'}, {h, '5'}, {h, '6'}, {h, '7'}, \
	{h, '8'}, {h, '9'}, {h, 'a'}, {h, 'b'}, {h, 'c'}, {h, 'd'}, {h, 'e'}, {h, 'f'}
const char lp_hex_pairs[256][2] = {
	HEX_ROW('0'), HEX_ROW('1'), HEX_ROW('2'), HEX_ROW('3'), HEX_ROW('4'), HEX_ROW('5'),
	HEX_ROW('6'), HEX_ROW('7'), HEX_ROW('8'), HEX_ROW('9'), HEX_ROW('a'), HEX_ROW('b'),
	HEX_ROW('c'), HEX_ROW('d'), HEX_ROW('e'), HEX_ROW('f'),
};

/* Each byte's value as a hex digit, or -1 (N). */
#define N (-1)
const int8_t lp_hex_value[256] = {
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, N, N, N, N, N, N,
	N, 10, 11, 12, 13, 14, 15, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, 10, 11, 12, 13, 14, 15, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
};
#undef N

int lp_parse_hex(const char *s, size_t len, uint64_t *v)
{
	if (len == 0)
		return -1;
	uint64_t x = 0;
	bool overflow = false;
	for (size_t i = 0; i < len; i++) {
		int d = lp_hex_value[(unsigned char)s[i]];
		if (d < 0)
			return -1;
		if (x >> 60)
			overflow = true;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return overflow ? LP_HEX_OVERFLOW : 0;
}

bool lp_parse_decimal(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	guint64 n;
	/* GLib's parser takes a sign; a count never has one. */
	if (!g_ascii_isdigit(s[0]) || !g_ascii_string_to_unsigned(s, 10, min, max, &n, NULL))
		return false;
	*v = n;
	return true;
}

char *lp_fmt_u128(char buf[LP_U128_DIGITS], lp_u128 v)
{
	char *p = buf + LP_U128_DIGITS - 1;
	*p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	return memmove(buf, p, (size_t)(buf + LP_U128_DIGITS - p));
}

bool lp_parse_decimal128(const char *s, lp_u128 max, lp_u128 *v)
{
	if (!*s)
		return false;
	lp_u128 n = 0;
	for (; *s; s++) {
		lp_u128 digit = (lp_u128)(*s - '0');
		if (!g_ascii_isdigit(*s) || digit > max || n > (max - digit) / 10)
			return false;
		n = n * 10 + digit;
	}
	*v = n;
	return true;
}

size_t lp_fmt_fixed6(char dst[LP_FIXED6_DIGITS], double x)
{
	if (!isfinite(x) || fabs(x) >= 0x1p40) {
		char buf[64];
		int n = snprintf(buf, sizeof buf, "%.6f", x);
		g_assert(n > 0 && n <= LP_FIXED6_DIGITS);
		memcpy(dst, buf, (size_t)n);
		return (size_t)n;
	}
	uint64_t bits;
	memcpy(&bits, &x, sizeof bits);
	size_t n = 0;
	if (bits >> 63)
		dst[n++] = '-'; /* -0.0 included, as printf */
	/* |x| = m * 2^-k, k > 0 since |x| < 2^40 < 2^52. */
	unsigned biased = (unsigned)(bits >> 52 & 0x7ff);
	uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
	unsigned k = biased ? 1075 - biased : 1074;
	if (biased)
		m |= UINT64_C(1) << 52;
	/* Its millionths, m * 10^6 < 2^73, divided by 2^k and rounded. */
	lp_u128 p = (lp_u128)m * 1000000;
	uint64_t q = 0;
	if (k < 128) {
		lp_u128 whole = p >> k, rest = p - (whole << k), half = (lp_u128)1 << (k - 1);
		if (rest > half || (rest == half && (whole & 1)))
			whole++;
		q = (uint64_t)whole;
	} /* else |x| < 2^-54: 0 */
	n += lp_fmt_decimal(dst + n, q / 1000000);
	dst[n++] = '.';
	uint32_t frac = (uint32_t)(q % 1000000);
	for (size_t i = 6; i-- > 0; frac /= 10)
		dst[n + i] = (char)('0' + frac % 10);
	return n + 6;
}
