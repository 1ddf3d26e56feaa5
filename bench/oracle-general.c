/* A basic merge stream in libCacheSim's oracleGeneral binary form
 * (policies.md §6), for bench/sim to hand libCacheSim the references
 * laplace simulates: one packed 24-byte little-endian record a reference,
 * uint32 t + 1, uint64 canonical + 1, uint32 4096, int64 next(t) + 1 or
 * -1. The whole stream is held (next(t) is found walking it backwards),
 * 8 bytes a reference and 16 a distinct page.
 *
 * Usage: oracle-general STREAM OUT   (prints references and distinct pages) */
#include <inttypes.h>
#include <laplace/laplace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 65536

typedef struct __attribute__((packed)) record {
	uint32_t time;
	uint64_t id;
	uint32_t size;
	int64_t next;
} record;

_Static_assert(sizeof(record) == 24, "oracleGeneral records are 24 bytes");

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, n * size);
	if (!p) {
		fprintf(stderr, "oracle-general: out of memory\n");
		exit(3);
	}
	return p;
}

/* Open addressing, canonical + 1 as key (0: empty), the last index seen
 * as value. */
typedef struct table {
	uint64_t *key, *value;
	size_t mask, used;
} table;

static size_t slot(const table *h, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15u) >> 20) & h->mask;
	while (h->key[i] && h->key[i] != key)
		i = (i + 1) & h->mask;
	return i;
}

static void rehash(table *h)
{
	table old = *h;
	h->mask = old.mask ? old.mask * 2 + 1 : 1023;
	h->key = calloc(h->mask + 1, sizeof *h->key);
	h->value = malloc((h->mask + 1) * sizeof *h->value);
	if (!h->key || !h->value) {
		fprintf(stderr, "oracle-general: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; old.key && i <= old.mask; i++)
		if (old.key[i]) {
			size_t j = slot(h, old.key[i]);
			h->key[j] = old.key[i];
			h->value[j] = old.value[i];
		}
	free(old.key);
	free(old.value);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: oracle-general STREAM OUT\n");
		return 1;
	}
	lp_error err = {0};
	lp_basic_reader *r = lp_basic_open(argv[1], &err);
	if (!r) {
		fprintf(stderr, "oracle-general: %s\n", err.msg);
		return err.status;
	}
	lp_basic_ref *batch = grow(NULL, BATCH, sizeof *batch);
	uint64_t *page = NULL;
	size_t n = 0, cap = 0;
	ssize_t got;
	while ((got = lp_basic_read(r, batch, BATCH, &err)) > 0) {
		if (n + (size_t)got > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			page = grow(page, cap, sizeof *page);
		}
		for (ssize_t i = 0; i < got; i++)
			page[n++] = batch[i].canonical;
	}
	free(batch);
	lp_basic_close(r);
	if (got < 0) {
		fprintf(stderr, "oracle-general: %s\n", err.msg);
		return err.status;
	}
	/* next(t), walking backwards: the table holds each page's reference
	 * seen last, which is its next one. */
	int64_t *next = grow(NULL, n ? n : 1, sizeof *next);
	table h = {0};
	rehash(&h);
	for (size_t t = n; t-- > 0;) {
		if (2 * (h.used + 1) > h.mask + 1)
			rehash(&h);
		size_t i = slot(&h, page[t] + 1);
		if (h.key[i]) {
			next[t] = (int64_t)h.value[i] + 1;
		} else {
			next[t] = -1;
			h.key[i] = page[t] + 1;
			h.used++;
		}
		h.value[i] = t;
	}
	FILE *out = fopen(argv[2], "wb");
	if (!out) {
		perror(argv[2]);
		return 3;
	}
	record *buf = grow(NULL, BATCH, sizeof *buf);
	for (size_t t = 0; t < n;) {
		size_t k = 0;
		for (; k < BATCH && t < n; k++, t++)
			buf[k] = (record){.time = (uint32_t)(t + 1), .id = page[t] + 1, .size = 4096,
					  .next = next[t]};
		if (fwrite(buf, sizeof *buf, k, out) != k) {
			perror(argv[2]);
			return 3;
		}
	}
	if (fclose(out)) {
		perror(argv[2]);
		return 3;
	}
	printf("%zu references, %zu distinct pages\n", n, h.used);
	free(buf);
	free(next);
	free(page);
	free(h.key);
	free(h.value);
	return 0;
}
