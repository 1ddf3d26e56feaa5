/* The policy list laplace sim takes (--policy, policies.md §4), which
 * laplace report's --policies and lp_simulate (laplace.h) take too; the
 * size lists are sim.h's. */
#ifndef LAPLACE_SIMLIST_H
#define LAPLACE_SIMLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/policy.h"
#include "core/error.h"

/* Parse the policies of list (comma-separated names of lp_policies) into
 * a new array of *n rows, g_free'd by the caller: 0, or LP_EUSAGE naming
 * the policy unknown, the message beginning with "--policy: ". */
int lp_sim_parse_policies(const char *list, const lp_policy_info ***policies, size_t *n,
			  lp_error *err);
/* With --sample-rate or --sample-pages: 0, or LP_EUSAGE naming the first
 * of policies[0, n) that refuses sampling (lp_policy_refuses_sampling)
 * and the rows that run miniature simulations. */
int lp_sim_sampling_check(const lp_policy_info *const *policies, size_t n, lp_error *err);

/* The policies' options as given (laplace sim's --NAME VALUE, policy.h):
 * texts[row * LP_POLICY_OPTIONS_MAX + i] the value of the i-th option of
 * lp_policies[row], NULL when not given; LP_SIM_OPTION_TEXTS of them. */
#define LP_SIM_OPTION_TEXTS (lp_npolicies * LP_POLICY_OPTIONS_MAX)
/* The library's form of them (lp_sim_request.options): "NAME=VALUE"
 * items, comma-separated, NAME an option of --list-policies without its
 * dashes, each at most once; into texts (g_strdup'd: lp_sim_options_free).
 * 0, or LP_EUSAGE with err set naming the item. */
int lp_sim_options_split(const char *list, char **texts, lp_error *err);
void lp_sim_options_free(char **texts);
/* The first option given to a policy that policies[0, n) does not name:
 * its row's option (and *row its policy), or NULL when every one applies. */
const lp_policy_option *lp_sim_options_unwanted(char *const *texts,
						const lp_policy_info *const *policies, size_t n,
						const lp_policy_info **row);
/* The usage error of an option that applies to no policy asked (an
 * option no policy asked for would be ignored): LP_EUSAGE with err set.
 * defaulted: no --policy was given (lru). */
int lp_sim_options_unwanted_fail(const lp_policy_option *option, const lp_policy_info *row,
				 bool defaulted, lp_error *err);
/* Parse every text given by its row into settings[row] (lp_npolicies
 * of them, zeroed by the caller): 0, or LP_EUSAGE with err set. */
int lp_sim_options_parse(char *const *texts, lp_policy_settings *settings, lp_error *err);
/* The options given that depend on K, checked by the rows of
 * policies[0, n) at every size of ranges[0, m) (sim.h's, ascending): 0,
 * or LP_EUSAGE with err set. */
struct lp_sim_range;
int lp_sim_options_check(const lp_policy_settings *settings,
			 const lp_policy_info *const *policies, size_t n,
			 const struct lp_sim_range *ranges, size_t m, lp_error *err);

#endif
