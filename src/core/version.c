/* lp_version: the version of the library loaded (laplace.h). */
#include "laplace/laplace.h"

unsigned lp_version(void)
{
	return LP_VERSION_NUMBER;
}
