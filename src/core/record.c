#include "core/record.h"

const char lp_ref_types[7] = "rwiRWI";
const char lp_tag_chars[LP_TAG_COUNT + 1] = "FTESXMUBKGHDQCV";

const char *const lp_ref_type_words[6] = {
	"read", "write", "instruction fetch", "kernel read", "kernel write",
	"kernel instruction fetch",
};

const char *const lp_tag_words[LP_TAG_COUNT] = {
	"fork", "thread", "exec", "switch", "exit", "mmap", "munmap", "brk", "mremap", "shmget",
	"shmat", "shmdt", "shm remove", "page cache add", "page cache drop",
};

const lp_tag_info lp_tag_table[LP_TAG_COUNT] = {
	[LP_TAG_F] = {'F', 2, 0, {"parent", "child"}},
	[LP_TAG_T] = {'T', 2, 0, {"parent", "child"}},
	[LP_TAG_E] = {'E', 2, 1, {"task", "vas"}},
	[LP_TAG_S] = {'S', 2, 0, {"task", "vas"}},
	[LP_TAG_X] = {'X', 1, 0, {"task"}},
	[LP_TAG_M] = {'M', 7, 1, {"task", "start", "length", "pgoff", "flags", "prot", "file"}},
	[LP_TAG_U] = {'U', 3, 0, {"task", "start", "length"}},
	[LP_TAG_B] = {'B', 3, 0, {"task", "old", "new"}},
	[LP_TAG_K] = {'K', 5, 0, {"task", "old_start", "old_length", "new_start", "new_length"}},
	[LP_TAG_G] = {'G', 2, 0, {"shmid", "size"}},
	[LP_TAG_H] = {'H', 3, 0, {"task", "shmid", "start"}},
	[LP_TAG_D] = {'D', 2, 0, {"task", "start"}},
	[LP_TAG_Q] = {'Q', 1, 0, {"shmid"}},
	[LP_TAG_C] = {'C', 3, 0, {"frame", "file", "index"}},
	[LP_TAG_V] = {'V', 1, 0, {"frame"}},
};

int lp_ref_type_index(char type)
{
	switch (type) {
	case 'r': return 0;
	case 'w': return 1;
	case 'i': return 2;
	case 'R': return 3;
	case 'W': return 4;
	case 'I': return 5;
	default: return -1;
	}
}

int lp_tag_from_char(char c)
{
	for (int t = 0; t < LP_TAG_COUNT; t++)
		if (lp_tag_chars[t] == c)
			return t;
	return -1;
}
