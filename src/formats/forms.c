/* The forms of a merged reference stream (laplace-formats(5), "FORMS FOR
 * SIMULATORS"). */
#include "formats/forms.h"

#include <string.h>

const char *const lp_form_names[LP_FORM_COUNT] = {"basic", "addr", "din", "bin"};

int lp_form_parse(const char *name)
{
	for (int f = 0; f < LP_FORM_COUNT; f++)
		if (!strcmp(name, lp_form_names[f]))
			return f;
	return -1;
}
