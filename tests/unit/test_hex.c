/* lp_fmt_hex against printf's %x, on edge values and a million others;
 * lp_fmt_fixed6 against its %.6f likewise. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <glib.h>
#include <math.h>
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

static void check_fixed6(double x)
{
	char got[LP_FIXED6_DIGITS + 1], want[64];
	size_t n = lp_fmt_fixed6(got, x);
	got[n] = '\0';
	snprintf(want, sizeof want, "%.6f", x);
	cr_assert_str_eq(got, want, "%a", x);
}

/* Ratios as laplace sim writes them, exact halves of a millionth (ties:
 * to even), their neighbours, and the edges. */
Test(numbers, fixed6_as_printf)
{
	double edges[] = {0.0, -0.0, 1.0, 0.5, 1e-7, 4.9999999e-7, 5e-7, 5.0000001e-7, 0x1p-1074,
			  0x1p-60, 0.0000015, 0.9999995, 0.99999949999, 123456.7890125, -2.5e-6,
			  0x1p40 - 1, 0x1p40, 1e20, INFINITY, -INFINITY, NAN};
	for (size_t i = 0; i < G_N_ELEMENTS(edges); i++)
		check_fixed6(edges[i]);
	for (uint64_t k = 0; k <= 1 << 12; k++) { /* k/2^12, k/128: many ties */
		check_fixed6((double)k / 4096);
		check_fixed6(nextafter((double)k / 4096, 0));
		check_fixed6(nextafter((double)k / 4096, 2));
		check_fixed6((double)k / 128);
	}
	GRand *rand = g_rand_new_with_seed(6);
	for (int i = 0; i < 1000000; i++) {
		uint64_t n = (uint64_t)g_rand_int(rand) << (i % 32) | 1;
		uint64_t faults = ((uint64_t)g_rand_int(rand) << 32 | g_rand_int(rand)) % (n + 1);
		check_fixed6((double)faults / (double)n);
	}
	g_rand_free(rand);
}
