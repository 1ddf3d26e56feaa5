/* laplace sim's policy list and policy options (simlist.h). */
#include "analysis/simlist.h"

#include <glib.h>
#include <string.h>

#include "analysis/sim.h"

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

int lp_sim_sampling_check(const lp_policy_info *const *policies, size_t n, lp_error *err)
{
	for (size_t k = 0; k < n; k++)
		if (lp_policy_refuses_sampling(policies[k])) {
			char *mini = lp_policy_names(lp_sim_miniature, " ", NULL);
			lp_fail(err, LP_EUSAGE,
				"--sample-rate and --sample-pages do not go with %s (%s run miniature "
				"simulations)", policies[k]->name, mini);
			g_free(mini);
			return LP_EUSAGE;
		}
	return 0;
}

/* The row and index of the option named name (without dashes), or false. */
static bool find_option(const char *name, size_t *row, size_t *i)
{
	for (*row = 0; *row < lp_npolicies; (*row)++)
		for (*i = 0; *i < lp_policies[*row]->noptions; (*i)++)
			if (!strcmp(lp_policies[*row]->options[*i].name, name))
				return true;
	return false;
}

/* Every option's name, space-separated. */
static char *option_names(void)
{
	GString *s = g_string_new(NULL);
	for (size_t row = 0; row < lp_npolicies; row++)
		for (size_t i = 0; i < lp_policies[row]->noptions; i++)
			g_string_append_printf(s, "%s%s", s->len ? " " : "",
					       lp_policies[row]->options[i].name);
	return g_string_free(s, FALSE);
}

int lp_sim_options_split(const char *list, char **texts, lp_error *err)
{
	char **items = g_strsplit(list, ",", -1);
	int rc = 0;
	for (char **item = items; *item && !rc; item++) {
		char shown[LP_QUOTE_SIZE];
		const char *equals = strchr(*item, '=');
		char *name = g_strndup(*item, equals ? (size_t)(equals - *item) : strlen(*item));
		size_t row, i;
		if (!equals) {
			rc = lp_fail(err, LP_EUSAGE, "options: '%s' is not NAME=VALUE",
				     lp_quote(shown, *item, strlen(*item)));
		} else if (!find_option(name, &row, &i)) {
			char *known = option_names();
			rc = lp_fail(err, LP_EUSAGE, "options: unknown option '%s' (%s)",
				     lp_quote(shown, name, strlen(name)), known);
			g_free(known);
		} else if (texts[row * LP_POLICY_OPTIONS_MAX + i]) {
			rc = lp_fail(err, LP_EUSAGE, "options: %s given twice", name);
		} else {
			texts[row * LP_POLICY_OPTIONS_MAX + i] = g_strdup(equals + 1);
		}
		g_free(name);
	}
	g_strfreev(items);
	return rc;
}

void lp_sim_options_free(char **texts)
{
	for (size_t k = 0; k < LP_SIM_OPTION_TEXTS; k++)
		g_free(texts[k]);
}

const lp_policy_option *lp_sim_options_unwanted(char *const *texts,
						const lp_policy_info *const *policies, size_t n,
						const lp_policy_info **row)
{
	for (size_t r = 0; r < lp_npolicies; r++) {
		const lp_policy_info *p = lp_policies[r];
		bool wanted = false;
		for (size_t k = 0; k < n && !wanted; k++)
			wanted = policies[k] == p;
		for (size_t i = 0; i < p->noptions && !wanted; i++)
			if (texts[r * LP_POLICY_OPTIONS_MAX + i]) {
				*row = p;
				return &p->options[i];
			}
	}
	return NULL;
}

int lp_sim_options_unwanted_fail(const lp_policy_option *option, const lp_policy_info *row,
				 bool defaulted, lp_error *err)
{
	return lp_fail(err, LP_EUSAGE, "--%s applies only to %s, and --policy names none of "
		       "them%s", option->name, row->name, defaulted ? " (the default is lru)" : "");
}

int lp_sim_options_parse(char *const *texts, lp_policy_settings *settings, lp_error *err)
{
	for (size_t row = 0; row < lp_npolicies; row++) {
		const lp_policy_info *p = lp_policies[row];
		for (size_t i = 0; i < p->noptions; i++) {
			const char *text = texts[row * LP_POLICY_OPTIONS_MAX + i];
			if (!text)
				continue;
			int rc = p->parse(&settings[row], i, text, err);
			if (rc)
				return rc;
			settings[row].set[i] = true;
		}
	}
	return 0;
}

int lp_sim_options_check(const lp_policy_settings *settings,
			 const lp_policy_info *const *policies, size_t n,
			 const struct lp_sim_range *ranges, size_t m, lp_error *err)
{
	for (size_t k = 0; k < m; k++)
		for (size_t row = 0; row < lp_npolicies; row++) {
			const lp_policy_info *p = lp_policies[row];
			bool wanted = false;
			for (size_t j = 0; j < n && !wanted; j++)
				wanted = policies[j] == p;
			int rc;
			if (p->check && wanted &&
			    (rc = p->check(&settings[row], ranges[k].from, ranges[k].to, err)))
				return rc;
		}
	return 0;
}
