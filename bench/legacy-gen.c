/* Generate N pseudo-random records of a p6 or BYU trace for bench/legacy:
 *   legacy-gen p6|byu N FILE
 * Addresses wander through a few regions; request types follow a mix like
 * that of real traces (mostly fetches and reads). Deterministic. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9e3779b97f4a7c15u;

static uint32_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (uint32_t)(state >> 16);
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "p6") && strcmp(argv[1], "byu"))) {
		fprintf(stderr, "usage: legacy-gen p6|byu N FILE\n");
		return 1;
	}
	int p6 = !strcmp(argv[1], "p6");
	unsigned long long n = strtoull(argv[2], NULL, 10);
	FILE *f = fopen(argv[3], "wb");
	if (!f) {
		perror(argv[3]);
		return 1;
	}
	static unsigned char buf[1 << 16];
	size_t len = 0, size = p6 ? 6 : 12;
	static const unsigned char byu_types[16] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 3, 3, 3, 0x10, 0x20};
	static const unsigned char p6_controls[16] = {0x80, 0x80, 0x80, 0x90, 0xc0, 0xc0, 0xc0, 0xd0,
						      0xf0, 0xf0, 0xe0, 0x50, 0x70, 0x10, 0x30, 0x80};
	uint32_t addr = 0x00400000;
	for (unsigned long long i = 0; i < n; i++) {
		uint32_t r = next();
		addr = (r & 0xff) < 8 ? r & 0x0ffffff8u : addr + 8;
		unsigned char *p = buf + len;
		if (p6) {
			p[0] = (unsigned char)(addr >> 24);
			p[1] = (unsigned char)(addr >> 16);
			p[2] = (unsigned char)(addr >> 8);
			p[3] = (unsigned char)addr;
			p[4] = (r >> 8 & 3) ? 0x00 : (unsigned char)(r >> 12);
			p[5] = p6_controls[r >> 20 & 15];
		} else {
			uint32_t time = r >> 24;
			memcpy(p, (unsigned char[]){(unsigned char)addr, (unsigned char)(addr >> 8),
						    (unsigned char)(addr >> 16), (unsigned char)(addr >> 24)}, 4);
			p[4] = byu_types[r >> 20 & 15];
			p[5] = 8;
			p[6] = 0;
			p[7] = 0;
			memcpy(p + 8, (unsigned char[]){(unsigned char)time, 0, 0, 0}, 4);
		}
		len += size;
		if (len + size > sizeof buf) {
			if (fwrite(buf, 1, len, f) != len)
				break;
			len = 0;
		}
	}
	if (fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(argv[3]);
		return 1;
	}
	return 0;
}
