/* Threads seen and refused: see threads.h. */
#include "threads.h"

#include <pthread.h>
#include <string.h>

#include <criterion/criterion.h>
#include <glib.h>

unsigned threads_named(const char *name)
{
	unsigned n = 0;
	GDir *tasks = g_dir_open("/proc/self/task", 0, NULL);
	cr_assert_not_null(tasks);
	for (const char *t; (t = g_dir_read_name(tasks));) {
		char *path = g_strdup_printf("/proc/self/task/%s/comm", t), *comm = NULL;
		if (g_file_get_contents(path, &comm, NULL, NULL) && !strcmp(g_strchomp(comm), name))
			n++;
		g_free(comm);
		g_free(path);
	}
	g_dir_close(tasks);
	return n;
}

void thread_stacks(size_t size)
{
	pthread_attr_t attr;
	cr_assert_eq(pthread_attr_init(&attr), 0);
	cr_assert_eq(pthread_attr_setstacksize(&attr, size), 0);
	cr_assert_eq(pthread_setattr_default_np(&attr), 0);
	pthread_attr_destroy(&attr);
}
