/* The one byte-order codec: fixed-width integers loaded from and stored to
 * byte buffers in either order, at any alignment (memcpy, then GLib's
 * conversions, which compile to one instruction or none). */
#ifndef LAPLACE_BYTEORDER_H
#define LAPLACE_BYTEORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

static inline uint32_t lp_load_u32(const unsigned char *p, bool big)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return big ? GUINT32_FROM_BE(v) : GUINT32_FROM_LE(v);
}

static inline uint64_t lp_load_u64(const unsigned char *p, bool big)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return big ? GUINT64_FROM_BE(v) : GUINT64_FROM_LE(v);
}

static inline void lp_store_u32(unsigned char *p, uint32_t v, bool big)
{
	v = big ? GUINT32_TO_BE(v) : GUINT32_TO_LE(v);
	memcpy(p, &v, sizeof v);
}

static inline void lp_store_u64(unsigned char *p, uint64_t v, bool big)
{
	v = big ? GUINT64_TO_BE(v) : GUINT64_TO_LE(v);
	memcpy(p, &v, sizeof v);
}

#endif
