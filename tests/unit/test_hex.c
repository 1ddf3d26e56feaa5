/* lp_fmt_hex against printf's %x, on edge values and a million others. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>

#include "formats/refio.h"
#include "core/numbers.h"

static void check(uint64_t v)
{
	char got[32], want[32];
	memset(got, '#', sizeof got);
	size_t n = lp_fmt_hex(got, v);
	got[n] = '\0';
	snprintf(want, sizeof want, "%" PRIx64, v);
	cr_assert_str_eq(got, want);
}

Test(hex, edges)
{
	const uint64_t edges[] = {0, 1, 9, 0xa, 0xf, 0x10, 0xff, 0x100, 0xfff, 0x1000, 0xffffffff,
				  0x100000000, 0x0123456789abcdef, 0x8000000000000000, UINT64_MAX};
	for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
		check(edges[i]);
}

Test(hex, every_length)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check(x >> (x & 63));
	}
}

/* The one decimal parser: digits only, within the bounds. */
Test(numbers, parse_decimal)
{
	uint64_t v = 0;
	cr_assert(lp_parse_decimal("0", 0, 10, &v) && v == 0);
	cr_assert(lp_parse_decimal("18446744073709551615", 0, UINT64_MAX, &v) && v == UINT64_MAX);
	cr_assert(lp_parse_decimal("007", 1, 7, &v) && v == 7);
	v = 42;
	cr_assert_not(lp_parse_decimal("18446744073709551616", 0, UINT64_MAX, &v));
	cr_assert_not(lp_parse_decimal("8", 1, 7, &v));
	cr_assert_not(lp_parse_decimal("0", 1, 7, &v));
	cr_assert_not(lp_parse_decimal("", 0, 7, &v));
	cr_assert_not(lp_parse_decimal("+1", 0, 7, &v));
	cr_assert_not(lp_parse_decimal("-1", 0, 7, &v));
	cr_assert_not(lp_parse_decimal(" 1", 0, 7, &v));
	cr_assert_not(lp_parse_decimal("1 ", 0, 7, &v));
	cr_assert_not(lp_parse_decimal("0x1", 0, 7, &v));
	cr_assert_eq(v, 42, "a refused number leaves *v alone");
}

/* Hex: a bad digit and an overflow are told apart. */
Test(numbers, parse_hex_overflow)
{
	uint64_t v;
	cr_assert_eq(lp_parse_hex("10000000000000000", 17, &v), LP_HEX_OVERFLOW);
	cr_assert_eq(lp_parse_hex("1g", 2, &v), -1);
	cr_assert_eq(lp_parse_hex("ffffffffffffffff", 16, &v), 0);
}

/* 128-bit counts in decimal, both ways. */
Test(numbers, u128_decimal)
{
	char buf[LP_U128_DIGITS];
	cr_assert_str_eq(lp_fmt_u128(buf, 0), "0");
	cr_assert_str_eq(lp_fmt_u128(buf, UINT64_MAX), "18446744073709551615");
	cr_assert_str_eq(lp_fmt_u128(buf, (lp_u128)UINT64_MAX + 1), "18446744073709551616");
	cr_assert_str_eq(lp_fmt_u128(buf, ~(lp_u128)0), "340282366920938463463374607431768211455");
	lp_u128 v = 7;
	cr_assert(lp_parse_decimal128("340282366920938463463374607431768211455", ~(lp_u128)0, &v));
	cr_assert(v == ~(lp_u128)0);
	cr_assert(lp_parse_decimal128("00021990232555515000000", ~(lp_u128)0, &v));
	cr_assert_str_eq(lp_fmt_u128(buf, v), "21990232555515000000");
	cr_assert_not(lp_parse_decimal128("340282366920938463463374607431768211456", ~(lp_u128)0, &v));
	cr_assert_not(lp_parse_decimal128("18446744073709551616", UINT64_MAX, &v));
	cr_assert(lp_parse_decimal128("18446744073709551615", UINT64_MAX, &v));
	cr_assert_not(lp_parse_decimal128("", ~(lp_u128)0, &v));
	cr_assert_not(lp_parse_decimal128("+1", ~(lp_u128)0, &v));
	cr_assert_not(lp_parse_decimal128("1 ", ~(lp_u128)0, &v));
	cr_assert_not(lp_parse_decimal128("5", 4, &v));
}
