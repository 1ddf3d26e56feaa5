/* An open-addressing hash map from a 64-bit id to a pointer, for the
 * merge's live tasks, bindings and segments. Unlike GHashTable, whose
 * growth aborts when memory is short, growing can fail: idmap_put then
 * returns false and the map is as it was. Starts empty, with no memory. */
#ifndef LAPLACE_IDMAP_H
#define LAPLACE_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct idmap_slot {
	uint64_t key;
	void *value; /* NULL marks an empty slot */
} idmap_slot;

typedef struct idmap {
	idmap_slot *slots;
	size_t mask; /* capacity - 1 (capacity a power of two), when slots */
	size_t count;
} idmap;

void idmap_free(idmap *m);
/* The value of key, or NULL. */
void *idmap_get(const idmap *m, uint64_t key);
/* Map key to value (not NULL), replacing any value it had; false when the
 * map had to grow and could not. */
bool idmap_put(idmap *m, uint64_t key, void *value);
/* Remove key; returns the value it had, or NULL. */
void *idmap_remove(idmap *m, uint64_t key);
/* The next value from slot *pos on, advancing *pos past it; NULL at the
 * end. Start with *pos = 0; the map must not change during the walk. */
void *idmap_next(const idmap *m, size_t *pos);

#endif
