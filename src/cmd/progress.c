#include "cmd/progress.h"

#include <stdio.h>
#include <unistd.h>

#include <glib.h>

#define REDRAW_INTERVAL_US (G_USEC_PER_SEC / 4)

struct cli_progress {
	int64_t start_us;
	int64_t last_draw_us; /* 0 before the first drawing */
	bool drawn;
	const char *noun, *done;
};

cli_progress *cli_progress_new(bool quiet)
{
	if (quiet || !isatty(STDERR_FILENO))
		return NULL;
	cli_progress *pr = g_new0(cli_progress, 1);
	pr->start_us = g_get_monotonic_time();
	pr->noun = "record";
	return pr;
}

void cli_progress_set_work(cli_progress *pr, const char *noun, const char *done)
{
	if (pr) {
		pr->noun = noun;
		pr->done = done;
	}
}

lp_progress cli_progress_hook(cli_progress *pr)
{
	return (lp_progress){pr ? cli_progress_update : NULL, pr};
}

/* n with a metric suffix: "123", "45.6k", "7.89M", "1.23G". */
static void format_count(char *buf, size_t size, double n)
{
	static const char suffix[] = " kMGTP";
	int k = 0;
	while (n >= 1000 && k < 5) {
		n /= 1000;
		k++;
	}
	if (k == 0)
		snprintf(buf, size, "%.0f", n);
	else
		snprintf(buf, size, "%.*f%c", n < 10 ? 2 : n < 100 ? 1 : 0, n, suffix[k]);
}

void cli_progress_update(void *ctx, const lp_progress_info *info)
{
	cli_progress *pr = ctx;
	int64_t now = g_get_monotonic_time();
	if (pr->drawn && now - pr->last_draw_us < REDRAW_INTERVAL_US)
		return;
	pr->last_draw_us = now;
	pr->drawn = true;
	double seconds = (double)(now - pr->start_us) / G_USEC_PER_SEC;
	char done[16], rate[16];
	format_count(done, sizeof done, (double)info->records);
	format_count(rate, sizeof rate, seconds > 0 ? (double)info->records / seconds : 0);
	char line[128];
	int len = snprintf(line, sizeof line, "%s %s%s%s%s, %s/s", done, pr->noun,
			   info->records == 1 ? "" : "s", pr->done ? " " : "", pr->done ? pr->done : "",
			   rate);
	double f = info->fraction;
	if (f >= 0 && len < (int)sizeof line) {
		len += snprintf(line + len, sizeof line - (size_t)len, ", %.0f%%", f * 100);
		if (f > 0.001 && f < 1) {
			unsigned left = (unsigned)(seconds * (1 - f) / f + 0.5);
			snprintf(line + len, sizeof line - (size_t)len, ", %u:%02u:%02u left", left / 3600,
				 left / 60 % 60, left % 60);
		}
	}
	/* \r back to the start, then erase what a longer line left behind. */
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
}

void cli_progress_free(cli_progress *pr)
{
	if (!pr)
		return;
	if (pr->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	g_free(pr);
}
