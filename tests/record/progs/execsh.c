/* Exec through the shell: sh -c runs true, then exits 3. */
#include <unistd.h>

int main(void)
{
	execl("/bin/sh", "sh", "-c", "/bin/true; exit 3", (char *)NULL);
	return 1;
}
