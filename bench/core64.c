/* The merge core alone on a capture of a 64-bit machine, for bench/core64:
 * this driver feeds lp_merge directly (lp_merge_event, lp_merge_refs) with
 * references it decodes itself from the 64-bit binary form (laplace-
 * formats(5) 10.1, uncompressed, as `laplace gen --wide` writes it), a
 * batch at a time in memory, interleaved by timestamp with the events of
 * the kernel trace (an event first at the same timestamp). No output is
 * written: what it costs is the core's, besides a decode of 26-byte
 * records. It prints the statistics that show the capture merged clean
 * (no unmapped page, orphan space, mismatch or warning, for a gen capture)
 * and a checksum of every canonical number, which must not depend on how
 * the core keeps its tables.
 *
 * Usage: core64 REF KERN [PAGE_OFFSET]   (REF - is standard input; the
 *                                        page offset in hex, by default
 *                                        ffff888000000000) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/merge.h"
#include "formats/kern.h"
#include "formats/refio.h"

#define BATCH 65536

static int fail(const char *what, const lp_error *err)
{
	fprintf(stderr, "core64: %s: %s\n", what, err->msg);
	return err->status ? err->status : 2;
}

/* Up to BATCH records of in into refs; the count. */
static size_t read_refs(FILE *in, lp_ref *refs)
{
	static unsigned char buf[BATCH * LP_REF64_RECORD_SIZE];
	size_t n = fread(buf, LP_REF64_RECORD_SIZE, BATCH, in);
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = buf + i * LP_REF64_RECORD_SIZE;
		refs[i] = (lp_ref){.type = (char)p[0], .timestamp = lp_load_u64(p + 1, false),
				   .length = p[9], .vas = lp_load_u64(p + 10, false),
				   .address = lp_load_u64(p + 18, false)};
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: core64 REF KERN [PAGE_OFFSET]\n");
		return 1;
	}
	lp_merge_config cfg = {.page_offset = argc > 3 ? strtoull(argv[3], NULL, 16)
						       : UINT64_C(0xffff888000000000)};
	FILE *in = strcmp(argv[1], "-") ? fopen(argv[1], "rb") : stdin;
	char header[LP_REF64_HEADER_SIZE];
	if (!in || fread(header, 1, sizeof header, in) != sizeof header ||
	    memcmp(header, LP_REF64_HEADER, LP_REF64_HEADER_SIZE)) {
		fprintf(stderr, "core64: %s: not the 64-bit binary form\n", argv[1]);
		return 2;
	}
	lp_error err = {0};
	lp_event_source *events = lp_kern_reader_open(argv[2], &err);
	if (!events)
		return fail(argv[2], &err);
	lp_merge *m = lp_merge_new(&cfg);
	lp_ref *refs = malloc(BATCH * sizeof *refs);
	uint64_t *canon = malloc(BATCH * sizeof *canon);
	uint64_t sum = 0, count = 0;
	lp_event ev;
	int more = lp_event_source_next(events, &ev, &err);
	size_t n = read_refs(in, refs), i = 0;
	while (more > 0 || i < n) {
		/* The references before the next event, or to the batch's end. */
		size_t j = i;
		while (j < n && (more <= 0 || refs[j].timestamp < ev.timestamp))
			j++;
		if (j > i) {
			if (lp_merge_refs(m, refs + i, j - i, canon, &err))
				return fail("references", &err);
			for (size_t k = 0; k < j - i; k++)
				sum = sum * 31 + canon[k];
			count += j - i;
			i = j;
		}
		if (i == n) {
			i = 0;
			if ((n = read_refs(in, refs)) > 0)
				continue;
		}
		if (more > 0) {
			if (lp_merge_event(m, &ev, NULL, &err))
				return fail(argv[2], &err);
			more = lp_event_source_next(events, &ev, &err);
		}
		if (more < 0)
			return fail(argv[2], &err);
	}
	const lp_stats *st = lp_merge_stats(m);
	printf("references %" PRIu64 " pages %" PRIu64 " unmapped %" PRIu64 " orphans %" PRIu64
	       " mismatches %" PRIu64 " warnings %" PRIu64 " checksum %016" PRIx64 "\n",
	       count, lp_stats_total_pages(st), st->unmapped_pages, st->orphan_spaces, st->mismatches,
	       st->warnings, sum);
	lp_merge_free(m);
	lp_event_source_close(events);
	fclose(in);
	free(refs);
	free(canon);
	return 0;
}
