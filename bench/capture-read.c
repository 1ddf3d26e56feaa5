/* A basic merge read through the library instead of from a file: the
 * capture merged with lp_capture_read, 65536 references at a time, each
 * folded into a checksum so that none is skipped. What the pull-style
 * interface costs beside `laplace merge -o /dev/null`.
 *
 * Usage: capture-read REF KERN   (prints references and checksum) */
#include <inttypes.h>
#include <laplace/laplace.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 65536

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: capture-read REF KERN\n");
		return 1;
	}
	lp_error err = {0};
	lp_capture *c = lp_capture_open(argv[1], argv[2], NULL, &err);
	if (!c) {
		fprintf(stderr, "capture-read: %s\n", err.msg);
		return err.status;
	}
	lp_merged_ref *refs = malloc(BATCH * sizeof *refs);
	uint64_t count = 0, sum = 0;
	ssize_t n;
	while ((n = lp_capture_read(c, refs, BATCH, &err)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			sum = sum * 31 + refs[i].canonical + (uint64_t)refs[i].type;
		count += (uint64_t)n;
	}
	free(refs);
	lp_capture_close(c);
	if (n < 0) {
		fprintf(stderr, "capture-read: %s\n", err.msg);
		return err.status;
	}
	printf("%" PRIu64 " references, checksum %016" PRIx64 "\n", count, sum);
	return 0;
}
