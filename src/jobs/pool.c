/* The runner of children N at a time (jobs/pool.h). */
#include "jobs/pool.h"

#include <signal.h>
#include <string.h>

#include <glib-unix.h>

#include "core/numbers.h"
#include "io/staging.h"

/* The signals that stop a pool, in the order of its signal_sources. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
G_STATIC_ASSERT(G_N_ELEMENTS(stop_signals) ==
		G_N_ELEMENTS(((lp_job_pool *)0)->signal_sources));

/* A positive whole number from the environment, or 0. */
static size_t env_count(const char *name)
{
	const char *text = g_getenv(name);
	uint64_t n;
	return text && lp_parse_decimal(text, 0, SIZE_MAX - 1, &n) ? (size_t)n : 0;
}

size_t lp_job_pool_default_max_running(void)
{
	size_t n = env_count("SLURM_CPUS_PER_TASK");
	if (!n)
		n = env_count("SLURM_CPUS_ON_NODE");
	return n ? n : (size_t)g_get_num_processors();
}

void lp_job_pool_init(lp_job_pool *pool, void (*start)(void *ctx), void *ctx)
{
	memset(pool, 0, sizeof *pool);
	pool->max_running = 1;
	pool->start = start;
	pool->ctx = ctx;
	pool->procs = g_ptr_array_new();
}

void lp_job_pool_clear(lp_job_pool *pool)
{
	lp_job_pool_release_signals(pool);
	g_clear_pointer(&pool->procs, g_ptr_array_unref);
}

static void on_stop_signal(lp_job_pool *pool, int sig)
{
	if (!pool->stopped_by)
		pool->stopped_by = sig;
	for (guint i = 0; i < pool->procs->len; i++)
		kill(lp_job_proc_pid(pool->procs->pdata[i]), sig);
	if (!pool->running && pool->loop)
		g_main_loop_quit(pool->loop);
}

static gboolean on_sigint(gpointer data) { on_stop_signal(data, SIGINT); return G_SOURCE_CONTINUE; }
static gboolean on_sigterm(gpointer data) { on_stop_signal(data, SIGTERM); return G_SOURCE_CONTINUE; }
static gboolean on_sighup(gpointer data) { on_stop_signal(data, SIGHUP); return G_SOURCE_CONTINUE; }

void lp_job_pool_catch_signals(lp_job_pool *pool)
{
	static const GSourceFunc handlers[] = {on_sigint, on_sigterm, on_sighup};
	for (size_t i = 0; i < G_N_ELEMENTS(stop_signals); i++)
		if (stop_signals[i] != SIGHUP || !lp_signal_ignored(SIGHUP))
			pool->signal_sources[i] = g_unix_signal_add(stop_signals[i], handlers[i], pool);
}

void lp_job_pool_release_signals(lp_job_pool *pool)
{
	for (size_t i = 0; i < G_N_ELEMENTS(pool->signal_sources); i++)
		if (pool->signal_sources[i])
			g_source_remove(pool->signal_sources[i]);
	memset(pool->signal_sources, 0, sizeof pool->signal_sources);
}

bool lp_job_pool_has_room(const lp_job_pool *pool)
{
	return !pool->stopped_by && pool->running < pool->max_running;
}

void lp_job_pool_started(lp_job_pool *pool, lp_job_proc *proc)
{
	g_ptr_array_add(pool->procs, proc);
	pool->running++;
}

void lp_job_pool_ended(lp_job_pool *pool, lp_job_proc *proc)
{
	g_ptr_array_remove_fast(pool->procs, proc);
	pool->running--;
	if (!pool->stopped_by)
		pool->start(pool->ctx);
	if (!pool->running && pool->loop)
		g_main_loop_quit(pool->loop);
}

void lp_job_pool_run(lp_job_pool *pool)
{
	pool->loop = g_main_loop_new(NULL, FALSE);
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (!pool->stopped_by)
		pool->start(pool->ctx);
	if (pool->running)
		g_main_loop_run(pool->loop);
	g_main_loop_unref(pool->loop);
	pool->loop = NULL;
}
