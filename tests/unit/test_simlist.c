/* laplace sim's lists (analysis/simlist.h): policies.md §4's LIST. */
#include <criterion/criterion.h>
#include <glib.h>
#include <inttypes.h>

#include "analysis/simlist.h"

static lp_error err;

/* The sizes of list for max (a window's when window). */
static GString *expand(const char *list, uint64_t max, bool window)
{
	lp_sim_list l;
	cr_assert_eq(lp_sim_parse_sizes(list, "--frames", &l, &err), 0, "%s", err.msg);
	uint64_t *sizes;
	size_t n;
	cr_assert_eq(lp_sim_expand(&l, max, window, &sizes, &n, &err), 0, "%s", err.msg);
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < n; i++)
		g_string_append_printf(s, "%s%" PRIu64, i ? " " : "", sizes[i]);
	g_free(sizes);
	lp_sim_list_clear(&l);
	return s;
}

#define EXPECT(list, max, window, want)                                         \
	do {                                                                    \
		GString *got = expand(list, max, window);                       \
		cr_assert_str_eq(got->str, want, "%s with max %d", list, max);  \
		g_string_free(got, TRUE);                                       \
	} while (0)

Test(simlist, sizes)
{
	EXPECT("pow2", 5, false, "1 2 4 5");
	EXPECT("pow2", 8, false, "1 2 4 8");
	EXPECT("pow2", 1, false, "1");
	EXPECT("pow2", 0, false, "");
	EXPECT("pow2", 0, true, "1"); /* a window with no finite backward distance */
	EXPECT("all", 3, false, "1 2 3");
	EXPECT("all", 0, true, "");
	EXPECT("7,2-4,3,pow2", 5, false, "1 2 3 4 5 7");
	EXPECT("10-12", 2, false, "10 11 12");
	EXPECT("18446744073709551615", 2, false, "18446744073709551615");
}

Test(simlist, bad_sizes)
{
	static const char *bad[] = {"", "0", "-1", "1-", "-", "3-2", "1,,2", "x", "1.5", "+1",
				    "18446744073709551616", "pow2,", "All"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		lp_sim_list l;
		err = (lp_error){0};
		cr_assert_eq(lp_sim_parse_sizes(bad[i], "--window", &l, &err), LP_EUSAGE, "%s", bad[i]);
		lp_sim_list_clear(&l);
	}
	lp_sim_list l;
	cr_assert_eq(lp_sim_parse_sizes("2,0-3", "--window", &l, &err), LP_EUSAGE);
	cr_assert_str_eq(err.msg, "--window: '0-3' is no size (N >= 1, A-B with 1 <= A <= B, pow2 "
			 "or all)");
	lp_sim_list_clear(&l);
	/* Counted before anything is allocated. */
	cr_assert_eq(lp_sim_parse_sizes("1-18446744073709551615", "--frames", &l, &err), 0);
	uint64_t *sizes = (uint64_t *)&err;
	size_t n = 1;
	cr_assert_eq(lp_sim_expand(&l, 10, false, &sizes, &n, &err), LP_EUSAGE);
	cr_assert_null(sizes);
	cr_assert_eq(n, 0);
	cr_assert_str_eq(err.msg, "--frames: more than 67108864 sizes");
	lp_sim_list_clear(&l);
}

Test(simlist, policies)
{
	const lp_policy_info **p;
	size_t n;
	cr_assert_eq(lp_sim_parse_policies("vmin,lru,opt", &p, &n, &err), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(p[0]->name, "vmin");
	cr_assert_str_eq(p[2]->name, "opt");
	g_free(p);
	cr_assert_eq(lp_sim_parse_policies("lru,", &p, &n, &err), LP_EUSAGE);
	cr_assert_str_eq(err.msg, "--policy: unknown policy '' (one of lru opt fifo clock segq arc "
			 "eelru ws vmin)");
	cr_assert_null(p);
	cr_assert_eq(lp_sim_parse_policies("", &p, &n, &err), LP_EUSAGE);
	cr_assert_str_eq(err.msg, "--policy: no policy named");
}
