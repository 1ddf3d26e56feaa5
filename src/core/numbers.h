/* Numbers in text: the one hex formatter (variable width for the merge's
 * writers, fixed width for the legacy dumps) and the one parser of each
 * base, so that every format and option reads and writes numbers alike. */
#ifndef LAPLACE_NUMBERS_H
#define LAPLACE_NUMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Every byte's two lowercase hex digits. */
extern const char lp_hex_pairs[256][2];

/* Fast formatting shared by every text writer: lowercase hex, no leading
 * zeros; returns the number of characters written (at most 16). It may
 * store up to 16 bytes at dst whatever the length, so callers leave room
 * for the longest number. Inline: writers call it several times a record. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The two hex digits of a byte as they lie in memory, in a word. */
static inline uint64_t lp_hex_pair_word(uint8_t v)
{
	uint16_t w;
	memcpy(&w, lp_hex_pairs[v], 2);
	return w;
}

/* Eight hex digits of v as ASCII, most significant first in memory order:
 * a byte's two digits at a time, from a table (fewer instructions than
 * computing them, and the table's 512 bytes stay in the cache). */
static inline uint64_t lp_hex8(uint32_t v)
{
	return lp_hex_pair_word((uint8_t)(v >> 24)) | lp_hex_pair_word((uint8_t)(v >> 16)) << 16 |
	       lp_hex_pair_word((uint8_t)(v >> 8)) << 32 | lp_hex_pair_word((uint8_t)v) << 48;
}

static inline size_t lp_fmt_hex(char *dst, uint64_t v)
{
	size_t n = (size_t)(67 - __builtin_clzll(v | 1)) / 4; /* 1 for 0 */
	uint64_t lo = lp_hex8((uint32_t)v);
	if (n <= 8) {
		lo >>= 8 * (8 - n); /* shift the leading zeros out */
		memcpy(dst, &lo, 8);
		return n;
	}
	uint64_t hi = lp_hex8((uint32_t)(v >> 32));
	size_t skip = 16 - n;
	uint64_t first = skip ? (hi >> 8 * skip) | (lo << (64 - 8 * skip)) : hi;
	lo >>= 8 * skip;
	memcpy(dst, &first, 8);
	memcpy(dst + 8, &lo, 8);
	return n;
}
#else
static inline size_t lp_fmt_hex(char *dst, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
	char *p = dst + n;
	do {
		*--p = digits[v & 0xf];
		v >>= 4;
	} while (v);
	return n;
}
#endif

/* v in decimal without leading zeros: the characters written (at most
 * 20). */
static inline size_t lp_fmt_decimal(char *dst, uint64_t v)
{
	char back[20];
	size_t n = 0;
	do {
		back[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		dst[i] = back[n - 1 - i];
	return n;
}

/* Fixed-width lowercase hex for the text dumps' hot loops: every byte's
 * two digits, looked up rather than computed. */
static inline char *lp_put_hex2(char *p, uint8_t v)
{
	memcpy(p, lp_hex_pairs[v], 2);
	return p + 2;
}

static inline char *lp_put_hex8(char *p, uint32_t v)
{
	p = lp_put_hex2(p, (uint8_t)(v >> 24));
	p = lp_put_hex2(p, (uint8_t)(v >> 16));
	p = lp_put_hex2(p, (uint8_t)(v >> 8));
	return lp_put_hex2(p, (uint8_t)v);
}

/* A byte in hex without leading zeros (one or two digits). */
static inline char *lp_put_hex_byte(char *p, uint8_t v)
{
	if (v < 16) {
		*p = lp_hex_pairs[v][1];
		return p + 1;
	}
	return lp_put_hex2(p, v);
}

/* Each byte's value as a hex digit (either case), or -1: for parsers' own
 * hot loops. */
extern const int8_t lp_hex_value[256];

/* Parse hex (either case, leading zeros allowed) of [s, s+len) into *v;
 * returns 0, -1 when empty or not hex, or LP_HEX_OVERFLOW (also below 0)
 * when over 64 bits. */
#define LP_HEX_OVERFLOW (-2)
int lp_parse_hex(const char *s, size_t len, uint64_t *v);

/* Parse a whole string of decimal digits (no sign, no space) in
 * [min, max] into *v. */
bool lp_parse_decimal(const char *s, uint64_t min, uint64_t max, uint64_t *v);

/* Counts that can pass 2^64 - 1 (ticks x processors): 128 bits, exact. */
__extension__ typedef unsigned __int128 lp_u128;
/* The longest decimal of an lp_u128, with its NUL. */
#define LP_U128_DIGITS 40
/* v in decimal into buf (NUL-terminated); returns buf. */
char *lp_fmt_u128(char buf[LP_U128_DIGITS], lp_u128 v);
/* Parse a whole string of decimal digits (no sign, no space) no larger
 * than max into *v. */
bool lp_parse_decimal128(const char *s, lp_u128 max, lp_u128 *v);

/* Room for lp_fmt_fixed6's characters (no NUL is written). */
#define LP_FIXED6_DIGITS 32
/* x as printf's "%.6f" writes it, the same characters, without printf's
 * cost (laplace sim's miss ratios, a row each): the binary value rounded
 * exactly to 6 decimals, half to even, as glibc does. |x| < 10^24, or
 * not finite. Returns the characters written. */
size_t lp_fmt_fixed6(char dst[LP_FIXED6_DIGITS], double x);

/* splitmix64's finalizer: every bit of x moves about half the bits of the
 * result. The hash of open-addressing tables (small, clustered keys),
 * SHARDS' sampling hash (laplace-formats(5) 9.2) and, after its step,
 * splitmix64's generator. */
static inline uint64_t lp_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

#endif
