/* lp_fmt_hex against printf's %x, on edge values and a million others. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>

#include "laplace/refio.h"

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
