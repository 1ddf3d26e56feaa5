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
