/* A basic merge stream read through the library, nothing else done with
 * it: each reference folded into a checksum so that none is skipped. What
 * reading costs a simulator, text against bin (laplace-formats(5), "Output
 * forms for simulators").
 *
 * Usage: basic-read STREAM   (prints references and checksum) */
#include <inttypes.h>
#include <laplace/laplace.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 65536

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: basic-read STREAM\n");
		return 1;
	}
	lp_error err = {0};
	lp_basic_reader *r = lp_basic_open(argv[1], &err);
	if (!r) {
		fprintf(stderr, "basic-read: %s\n", err.msg);
		return err.status;
	}
	lp_basic_ref *refs = malloc(BATCH * sizeof *refs);
	uint64_t count = 0, sum = 0;
	ssize_t n;
	while ((n = lp_basic_read(r, refs, BATCH, &err)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			sum = sum * 31 + refs[i].canonical + (uint64_t)refs[i].type;
		count += (uint64_t)n;
	}
	free(refs);
	lp_basic_close(r);
	if (n < 0) {
		fprintf(stderr, "basic-read: %s\n", err.msg);
		return err.status;
	}
	printf("%" PRIu64 " references, checksum %016" PRIx64 "\n", count, sum);
	return 0;
}
