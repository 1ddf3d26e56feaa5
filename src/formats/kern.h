/* Kernel event traces (laplace-formats(5), "KERNEL EVENT TRACE"). */
#ifndef LAPLACE_KERN_H
#define LAPLACE_KERN_H

#include "core/error.h"
#include "core/record.h"
#include "formats/stream.h"

/* Open a kernel event trace ("-" is standard input; compressed input is
 * read transparently) as an event source. Its next() fails naming file,
 * line and field (a line longer than LP_LINE_MAX bytes is one); blank and
 * '#' lines are skipped. */
lp_event_source *lp_kern_reader_open(const char *path, lp_error *err);

/* Parse one line (without its '\n'; trailing spaces and '\r' allowed, and
 * removed in place; line[len] must be '\0', as ev->name points into line) into
 * ev. Numbers may be separated by several spaces; an E or M name is all
 * that follows the one space after the last number, further spaces
 * included. Returns 1 for an event, 0 for a blank or comment line, -1 on error
 * with a message naming the field (no file or line: the caller adds them). */
int lp_kern_parse_line(char *line, size_t len, lp_event *ev, lp_error *err);

/* The writer's side: one event line at dst, '\n' included, as
 * lp_kern_parse_line reads it: the tag, the timestamp and the fields in hex,
 * then name (E, M; NULL for other tags). Returns its length; dst needs
 * 2 + 17 * (nfields + 1) + strlen(name) + 2 bytes (the hex formatter may
 * store a few bytes past what it returns). */
size_t lp_kern_format_line(char *dst, char tag, uint64_t timestamp, const uint64_t *fields,
			   int nfields, const char *name);

#endif
