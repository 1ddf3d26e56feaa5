/* Short names (request types, operations) put into text dumps. */
#ifndef LAPLACE_PADNAME_H
#define LAPLACE_PADNAME_H

#include <stdint.h>
#include <string.h>

/* Names copied 16 bytes at a time (the destination needs that much room)
 * and then cut to their length: a fixed-size copy the compiler inlines. */
typedef struct lp_padded_name {
	char text[16];
	uint8_t len;
} lp_padded_name;

static inline char *lp_put_name(char *p, const lp_padded_name *name)
{
	memcpy(p, name->text, 16);
	return p + name->len;
}

#endif
