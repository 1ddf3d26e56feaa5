/* The plain way to print a Pentium bus trace, as the format's original
 * decoder does it: one fread per field, one printf per record. The
 * baseline that bench/legacy measures `laplace dump --from p6` against.
 * Reads standard input (big-endian addresses), writes standard output. */
#include <stdint.h>
#include <stdio.h>

static const char *const operations[16] = {
	"INVALID", "INT_ACK", "INVALID", "SPECIAL", "INVALID", "IO_READ", "INVALID", "IO_WRITE",
	"I_FETCH", "NC_I_FETCH", "INVALID", "INVALID", "D_READ", "NC_D_READ", "WRITE_BACK", "D_WRITE",
};

int main(void)
{
	unsigned char addr[4], be, control;
	while (fread(addr, 4, 1, stdin) == 1 && fread(&be, 1, 1, stdin) == 1 &&
	       fread(&control, 1, 1, stdin) == 1) {
		uint32_t a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
			     (uint32_t)addr[2] << 8 | addr[3];
		printf("%08x %02x %s\n", (unsigned)a, be, operations[control >> 4]);
	}
	return ferror(stdout) ? 1 : 0;
}
