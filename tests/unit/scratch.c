#include "scratch.h"

#include <criterion/criterion.h>
#include <glib.h>
#include <glib/gstdio.h>

char *scratch_dir_new(void)
{
	char *dir = g_dir_make_tmp("laplace-test-XXXXXX", NULL);
	cr_assert_not_null(dir);
	return dir;
}

static void remove_tree(const char *path)
{
	GDir *d = g_file_test(path, G_FILE_TEST_IS_SYMLINK) ? NULL : g_dir_open(path, 0, NULL);
	if (d) {
		const char *name;
		while ((name = g_dir_read_name(d))) {
			char *p = g_build_filename(path, name, NULL);
			remove_tree(p);
			g_free(p);
		}
		g_dir_close(d);
	}
	g_remove(path);
}

void scratch_dir_free(char *dir)
{
	remove_tree(dir);
	g_free(dir);
}

char *scratch_file(const char *dir, const char *name, const void *data, size_t n)
{
	char *p = g_build_filename(dir, name, NULL);
	cr_assert(g_file_set_contents(p, data, (gssize)n, NULL));
	return p;
}
