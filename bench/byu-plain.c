/* The plain way to print a BYU address trace: one fread per field, one
 * printf per record, in the style of the format's original decoder. The
 * baseline that bench/legacy measures `laplace dump --from byu` against.
 * Reads standard input (little-endian), writes standard output. */
#include <stdint.h>
#include <stdio.h>

static const char *name_of(unsigned reqtype)
{
	switch (reqtype) {
	case 0x00: return "FETCH";
	case 0x01: return "MEMREAD";
	case 0x02: return "MEMREADINV";
	case 0x03: return "MEMWRITE";
	case 0x10: return "IOREAD";
	case 0x11: return "IOWRITE";
	case 0x20: return "DEFERREPLY";
	case 0x21: return "INTA";
	case 0x22: return "CNTRLAGNTRES";
	case 0x23: return "BRTRACEREC";
	case 0x31: return "SHUTDOWN";
	case 0x32: return "FLUSH";
	case 0x33: return "HALT";
	case 0x34: return "SYNC";
	case 0x35: return "FLUSHACK";
	case 0x36: return "STOPCLKACK";
	case 0x37: return "SMIACK";
	default: return NULL;
	}
}

static uint32_t little32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int main(void)
{
	unsigned char addr[4], reqtype, size, attr, proc, time[4];
	while (fread(addr, 4, 1, stdin) == 1 && fread(&reqtype, 1, 1, stdin) == 1 &&
	       fread(&size, 1, 1, stdin) == 1 && fread(&attr, 1, 1, stdin) == 1 &&
	       fread(&proc, 1, 1, stdin) == 1 && fread(time, 4, 1, stdin) == 1) {
		const char *name = name_of(reqtype);
		if (name)
			printf("%08x %s %x %x %x %x\n", (unsigned)little32(addr), name, size, attr,
			       proc, (unsigned)little32(time));
		else
			printf("%08x UNKNOWN_%02x %x %x %x %x\n", (unsigned)little32(addr), reqtype,
			       size, attr, proc, (unsigned)little32(time));
	}
	return ferror(stdout) ? 1 : 0;
}
