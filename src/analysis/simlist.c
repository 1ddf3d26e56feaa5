/* laplace sim's lists (simlist.h). */
#include "analysis/simlist.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int lp_sim_parse_policies(const char *list, const lp_policy_info ***policies, size_t *n,
			  lp_error *err)
{
	*policies = NULL;
	*n = 0;
	char **names = g_strsplit(list, ",", -1);
	size_t count = g_strv_length(names);
	const lp_policy_info **out = g_new(const lp_policy_info *, count ? count : 1);
	for (size_t i = 0; i < count; i++) {
		out[i] = lp_policy_find(names[i]);
		if (!out[i]) {
			char shown[LP_QUOTE_SIZE];
			lp_fail(err, LP_EUSAGE, "--policy: unknown policy '%s' (one of lru opt fifo "
				"clock segq arc eelru ws vmin)", lp_quote(shown, names[i],
									  strlen(names[i])));
			g_strfreev(names);
			g_free(out);
			return LP_EUSAGE;
		}
	}
	if (!count) {
		g_strfreev(names);
		g_free(out);
		return lp_fail(err, LP_EUSAGE, "--policy: no policy named");
	}
	g_strfreev(names);
	*policies = out;
	*n = count;
	return 0;
}

/* A decimal size >= 1 that is the whole of [s, end). */
static bool parse_size(const char *s, const char *end, uint64_t *v)
{
	if (s == end || end - s > 20)
		return false;
	uint64_t x = 0;
	for (const char *p = s; p < end; p++) {
		if (*p < '0' || *p > '9' || x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*v = x;
	return x >= 1;
}

int lp_sim_parse_sizes(const char *list, const char *option, lp_sim_list *l, lp_error *err)
{
	*l = (lp_sim_list){.ranges = g_array_new(FALSE, FALSE, sizeof(uint64_t))};
	char **items = g_strsplit(list, ",", -1);
	int rc = 0;
	if (!items[0])
		rc = lp_fail(err, LP_EUSAGE, "%s: no size given", option);
	for (size_t i = 0; items[i] && !rc; i++) {
		const char *s = items[i], *end = s + strlen(s), *dash = strchr(s, '-');
		uint64_t a, b;
		if (!strcmp(s, "pow2")) {
			l->pow2 = true;
		} else if (!strcmp(s, "all")) {
			l->all = true;
		} else if (!dash && parse_size(s, end, &a)) {
			g_array_append_val(l->ranges, a);
			g_array_append_val(l->ranges, a);
		} else if (dash && parse_size(s, dash, &a) && parse_size(dash + 1, end, &b) && a <= b) {
			g_array_append_val(l->ranges, a);
			g_array_append_val(l->ranges, b);
		} else {
			char shown[LP_QUOTE_SIZE];
			rc = lp_fail(err, LP_EUSAGE, "%s: '%s' is no size (N >= 1, A-B with 1 <= A <= "
				     "B, pow2 or all)", option, lp_quote(shown, s, strlen(s)));
		}
	}
	g_strfreev(items);
	return rc;
}

static int compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int lp_sim_expand(const lp_sim_list *l, uint64_t max, bool window, uint64_t **sizes, size_t *n,
		  lp_error *err)
{
	*sizes = NULL;
	*n = 0;
	/* Count first, so that a range of a trillion sizes is refused, not
	 * allocated. */
	uint64_t total = 0;
	const uint64_t *r = (const uint64_t *)l->ranges->data;
	size_t nranges = l->ranges->len / 2;
	for (size_t i = 0; i < nranges && total <= LP_SIM_MAX_SIZES; i++) {
		uint64_t span = r[2 * i + 1] - r[2 * i];
		total = span >= LP_SIM_MAX_SIZES ? LP_SIM_MAX_SIZES + 1 : total + span + 1;
	}
	if (l->all)
		total += max;
	if (l->pow2)
		total += 65;
	if (total > LP_SIM_MAX_SIZES)
		return lp_fail(err, LP_EUSAGE, "%s: more than %" PRIu64 " sizes",
			       window ? "--window" : "--frames", LP_SIM_MAX_SIZES);
	uint64_t *out = g_new(uint64_t, total ? total : 1);
	size_t k = 0;
	for (size_t i = 0; i < nranges; i++)
		for (uint64_t s = r[2 * i];; s++) {
			out[k++] = s;
			if (s == r[2 * i + 1])
				break;
		}
	for (uint64_t s = 1; l->all && s <= max; s++)
		out[k++] = s;
	if (l->pow2) {
		for (uint64_t s = 1; s < max; s *= 2)
			out[k++] = s;
		if (max)
			out[k++] = max;
		else if (window)
			out[k++] = 1;
	}
	qsort(out, k, sizeof *out, compare);
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (!m || out[i] != out[m - 1])
			out[m++] = out[i];
	if (!m) {
		g_free(out);
		return 0;
	}
	*sizes = out;
	*n = m;
	return 0;
}

void lp_sim_list_clear(lp_sim_list *l)
{
	if (l->ranges)
		g_array_free(l->ranges, TRUE);
	*l = (lp_sim_list){0};
}
