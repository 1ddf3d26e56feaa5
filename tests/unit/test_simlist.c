/* laplace sim's policy list (analysis/simlist.h), which laplace report
 * and lp_simulate take too. */
#include <criterion/criterion.h>
#include <glib.h>

#include "analysis/simlist.h"

static lp_error err;

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
	cr_assert_str_eq(err.msg, "--policy: unknown policy '' (lru opt fifo clock segq arc eelru ws "
			 "vmin)");
	cr_assert_null(p);
	cr_assert_eq(lp_sim_parse_policies("", &p, &n, &err), LP_EUSAGE);
	cr_assert_str_eq(err.msg, "--policy: no policy named");
}
