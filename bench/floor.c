/* The floor of a basic merge: read binary raw reference records (18 bytes,
 * little-endian; with --wide, the 64-bit form's 8-byte header and 26-byte
 * records) and write one line per record, "type vpn", with no translation
 * at all. Whatever a merge costs beyond this is its own.
 *
 * Usage: floor [--wide] [FILE] > OUT   (standard input without FILE) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD 18
#define WIDE_HEADER 8
#define WIDE_RECORD 26
#define IN_RECORDS 65536
#define OUT_SIZE (1u << 20)

static char out[OUT_SIZE + 64];
static size_t out_len;

static void flush(void)
{
	if (fwrite(out, 1, out_len, stdout) != out_len) {
		perror("floor: write");
		exit(3);
	}
	out_len = 0;
}

int main(int argc, char **argv)
{
	int wide = argc > 1 && !strcmp(argv[1], "--wide");
	argc -= wide;
	argv += wide;
	FILE *in = argc > 1 ? fopen(argv[1], "rb") : stdin;
	if (!in) {
		perror(argv[1]);
		return 3;
	}
	size_t record = wide ? WIDE_RECORD : RECORD;
	static unsigned char buf[IN_RECORDS * WIDE_RECORD];
	if (wide && fread(buf, 1, WIDE_HEADER, in) != WIDE_HEADER) {
		fprintf(stderr, "floor: no 64-bit header\n");
		return 2;
	}
	static const char hex[] = "0123456789abcdef";
	size_t got;
	while ((got = fread(buf, record, IN_RECORDS, in)) > 0) {
		for (size_t i = 0; i < got; i++) {
			const unsigned char *r = buf + i * record;
			uint64_t vpn;
			if (wide) {
				uint64_t address = 0;
				for (int b = 7; b >= 0; b--)
					address = address << 8 | r[18 + b];
				vpn = address >> 12;
			} else {
				vpn = ((uint32_t)r[14] | (uint32_t)r[15] << 8 | (uint32_t)r[16] << 16 |
				       (uint32_t)r[17] << 24) >> 12;
			}
			char *p = out + out_len;
			*p++ = (char)r[0];
			*p++ = ' ';
			/* lowercase hex, no leading zeros, as the merge writes */
			char tmp[16];
			int n = 0;
			do {
				tmp[n++] = hex[vpn & 15];
				vpn >>= 4;
			} while (vpn);
			while (n)
				*p++ = tmp[--n];
			*p++ = '\n';
			out_len = (size_t)(p - out);
			if (out_len >= OUT_SIZE)
				flush();
		}
	}
	if (ferror(in)) {
		perror("floor: read");
		return 3;
	}
	flush();
	return 0;
}
