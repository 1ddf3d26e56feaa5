/* An LRU page simulator over a basic merge stream read with liblaplace:
 * how many of the stream's references miss in a memory of FRAMES pages
 * (first references included), as many as `laplace lru --frames FRAMES`
 * has lines. A linear search of the frames: fine for a few hundred.
 *
 *   cc -o lru lru.c $(pkg-config --cflags --libs laplace)
 *   laplace merge REF KERN > trace.basic && ./lru 64 trace.basic
 */
#include <inttypes.h>
#include <laplace/laplace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t frames = argc == 3 ? strtoul(argv[1], NULL, 10) : 0;
	if (frames == 0) {
		fprintf(stderr, "usage: %s FRAMES STREAM\n", argv[0]);
		return 1;
	}
	lp_error err = {0};
	lp_basic_reader *r = lp_basic_open(argv[2], &err);
	if (!r) {
		fprintf(stderr, "%s\n", err.msg);
		return err.status;
	}
	uint64_t *memory = malloc(frames * sizeof *memory); /* most recent first */
	if (!memory) {
		fprintf(stderr, "%s: no memory for %zu frames\n", argv[0], frames);
		lp_basic_close(r);
		return 3;
	}
	size_t used = 0;
	uint64_t references = 0, misses = 0;
	lp_basic_ref refs[4096];
	ssize_t n;
	while ((n = lp_basic_read(r, refs, 4096, &err)) > 0) {
		for (ssize_t i = 0; i < n; i++, references++) {
			size_t at = 0;
			while (at < used && memory[at] != refs[i].canonical)
				at++;
			if (at == used) { /* a miss: take a free frame or the oldest */
				misses++;
				if (used < frames)
					used++;
				at = used - 1;
			}
			memmove(memory + 1, memory, at * sizeof *memory);
			memory[0] = refs[i].canonical;
		}
	}
	lp_basic_close(r);
	free(memory);
	if (n < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return err.status;
	}
	printf("%" PRIu64 " references, %" PRIu64 " misses\n", references, misses);
	return 0;
}
