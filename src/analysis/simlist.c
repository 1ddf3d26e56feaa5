/* laplace sim's policy list (simlist.h). */
#include "analysis/simlist.h"

#include <glib.h>
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
			char *known = lp_policy_names(NULL, " ", NULL);
			lp_fail(err, LP_EUSAGE, "--policy: unknown policy '%s' (%s)",
				lp_quote(shown, names[i], strlen(names[i])), known);
			g_free(known);
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
