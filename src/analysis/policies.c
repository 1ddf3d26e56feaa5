/* The table of page-replacement policies (policy.h): the only list of
 * them. A policy is its file, policy-NAME.c, holding its row
 * (lp_policy_NAME), and its line here; the rows are in the order
 * --list-policies and --help list them. */
#include "analysis/policy.h"

#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include "core/numbers.h"

#define LP_POLICY_ROWS \
	ROW(lru) ROW(opt) ROW(fifo) ROW(clock) ROW(segq) ROW(arc) ROW(eelru) ROW(ws) ROW(vmin)

#define ROW(name) extern const lp_policy_info lp_policy_##name;
LP_POLICY_ROWS
#undef ROW

#define ROW(name) &lp_policy_##name,
const lp_policy_info *const lp_policies[] = {LP_POLICY_ROWS};
#undef ROW

const size_t lp_npolicies = G_N_ELEMENTS(lp_policies);

const lp_policy_info *lp_policy_find(const char *name)
{
	for (size_t i = 0; i < lp_npolicies; i++)
		if (strcmp(lp_policies[i]->name, name) == 0)
			return lp_policies[i];
	return NULL;
}

int lp_policy_refuse_pages(const lp_policy_info *p, const char *name, uint64_t pages,
			   lp_error *err)
{
	return lp_fail(err, LP_EINPUT,
		       "%s%s%" PRIu64 " distinct pages, more than %s's whole curve holds (%" PRIu64
		       ")",
		       name ? name : "", name ? ": " : "", pages, p->name, p->curve_pages);
}

size_t lp_policy_index(const lp_policy_info *p)
{
	size_t i = 0;
	while (i < lp_npolicies && lp_policies[i] != p)
		i++;
	return i;
}

char *lp_policy_names(bool (*keep)(const lp_policy_info *), const char *sep, const char *last)
{
	GPtrArray *names = g_ptr_array_new();
	for (size_t i = 0; i < lp_npolicies; i++)
		if (!keep || keep(lp_policies[i]))
			g_ptr_array_add(names, (gpointer)lp_policies[i]->name);
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < names->len; i++) {
		if (i)
			g_string_append(s, i + 1 == names->len && last ? last : sep);
		g_string_append(s, g_ptr_array_index(names, i));
	}
	g_ptr_array_free(names, TRUE);
	return g_string_free(s, FALSE);
}

bool lp_policy_has_victim(const lp_policy_info *p)
{
	return p->ops && p->ops->victim;
}

bool lp_policy_refuses_sampling(const lp_policy_info *p)
{
	return p->space == LP_SPACE_FIXED && !p->curve && !p->miniature;
}

void lp_policy_params_at(const lp_policy_info *policy, const lp_policy_settings *s,
			 uint64_t frames, lp_pageno pages, const uint64_t *next_use,
			 lp_policy_params *p)
{
	/* With K >= D nothing is ever evicted, whatever the policy and its
	 * options: the policy gets D frames then (no room for pages that
	 * never come, no 2K to overflow), its options kept in range. */
	static const lp_policy_settings none;
	uint64_t k = MIN(frames, MAX((uint64_t)pages, 1));
	*p = (lp_policy_params){.frames = k, .pages = pages, .next_use = next_use};
	if (policy->resolve)
		policy->resolve(s ? s : &none, k, p);
}

int lp_policy_parse_count(const lp_policy_option *o, const char *text, uint64_t min,
			  uint64_t *value, lp_error *err)
{
	if (lp_parse_decimal(text, min, UINT64_MAX, value))
		return 0;
	/* Worded as the command line's other counts (cli.c). */
	const char *digits = text + (text[0] == '-');
	if (!g_ascii_isdigit(digits[0]) || digits[strspn(digits, "0123456789")])
		return lp_fail(err, LP_EUSAGE, "--%s must be a whole number, not '%s'", o->name, text);
	if (text[0] == '-' && min == 0)
		return lp_fail(err, LP_EUSAGE, "--%s must not be negative, not %s", o->name, text);
	if (min == 0)
		return lp_fail(err, LP_EUSAGE, "--%s is out of range (at most %" G_GUINT64_FORMAT
			       "), not %s", o->name, UINT64_MAX, text);
	return lp_fail(err, LP_EUSAGE, "--%s is out of range (at least %" G_GUINT64_FORMAT
		       "), not %s", o->name, min, text);
}
