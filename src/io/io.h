/* Byte streams in and out: files or standard streams, compressed or not.
 * Nothing here knows a trace format. */
#ifndef LAPLACE_IO_H
#define LAPLACE_IO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "io/staging.h"

/* ---- input ---- */

typedef struct lp_input lp_input;

/* Open path for reading ("-" is standard input). gzip and zstd content is
 * decompressed transparently, detected by its magic bytes, never by name. */
lp_input *lp_input_open(const char *path, lp_error *err);
/* The same with a raw read buffer of buffer_size bytes rather than the
 * default 1 MiB, for readers that keep many inputs open. */
lp_input *lp_input_open_sized(const char *path, size_t buffer_size, lp_error *err);
/* Skip the next n bytes of (decompressed) input: a seek for a plain
 * file, decompressing them otherwise. Returns 0 or an lp_status. */
int lp_input_skip(lp_input *in, uint64_t n, lp_error *err);
/* Read up to n bytes; returns the count, 0 at end of input, -1 on error
 * (err set, LP_EIO or LP_EINPUT for corrupt compressed data). Short reads
 * happen only at end of input. */
ssize_t lp_input_read(lp_input *in, void *buf, size_t n, lp_error *err);
/* Name for messages: the path, or "<stdin>". */
const char *lp_input_name(const lp_input *in);
/* Size of the underlying file in bytes when it is a regular file, else -1;
 * and how many of those bytes have been consumed (for progress displays). */
int64_t lp_input_file_size(const lp_input *in);
uint64_t lp_input_file_offset(const lp_input *in);
void lp_input_close(lp_input *in);

/* ---- output ---- */

typedef struct lp_output lp_output;

enum lp_compress {
	LP_COMPRESS_AUTO, /* by the path's suffix: .gz, .zst, else none */
	LP_COMPRESS_NONE,
	LP_COMPRESS_GZIP,
	LP_COMPRESS_ZSTD,
};

/* Open path for writing (NULL or "-" is standard output). A regular file
 * (or a path that does not exist yet) is staged, and published when
 * committed; anything else (a pipe, a terminal, /dev/null, /dev/full) is
 * written directly and never replaced (staging invariants (1) and (9),
 * src/io/staging.c). */
lp_output *lp_output_open(const char *path, enum lp_compress compress, lp_error *err);
/* A staged output named by path's last component in directory dir_fd,
 * already resolved (see lp_stage_file): nothing at that name is followed or
 * written through, a symbolic link there is replaced. */
lp_output *lp_output_open_in(int dir_fd, const char *path, enum lp_compress compress,
			     lp_error *err);
/* The compression level the two above leave to the codec's default (chosen
 * for speed); the _level forms take one in lp_compress_levels's range
 * (zstd's fast modes are its negative levels). */
#define LP_LEVEL_DEFAULT INT_MIN
lp_output *lp_output_open_level(const char *path, enum lp_compress compress, int level,
				lp_error *err);
lp_output *lp_output_open_in_level(int dir_fd, const char *path, enum lp_compress compress,
				   int level, lp_error *err);
/* Buffered write; returns 0 or an lp_status with err set. */
int lp_output_write(lp_output *out, const void *buf, size_t n, lp_error *err);
/* Whether out can be written at any offset and read back: a staged,
 * uncompressed file (not a pipe, a device, a descriptor the shell opened,
 * or a compressed stream). Such an output also takes the two below, at
 * offsets from its start; what lp_output_write buffered is written first.
 * Positional writes start no writeback of their own (bytes written over
 * would go to disk twice): lp_output_settled says which bytes are final. */
bool lp_output_rereadable(const lp_output *out);
int lp_output_pwrite(lp_output *out, const void *buf, size_t n, uint64_t at, lp_error *err);
int lp_output_pread(lp_output *out, void *buf, size_t n, uint64_t at, lp_error *err);
void lp_output_settled(lp_output *out, uint64_t at, size_t n);
/* End an output once the run has written it (rc, the writing's status):
 * with rc 0, flush everything, end a compressed stream, flush a staged
 * file to disk, close it and hand it back in *staged, to be published with
 * the run's other outputs (NULL when written directly); otherwise, or if
 * that fails, remove it. Frees out; returns the status. */
int lp_output_stage(lp_output *out, int rc, lp_staged **staged, lp_error *err);
/* Stage and publish a run's only output; frees out. */
int lp_output_commit(lp_output *out, lp_error *err);
/* Give up: remove the temporary file (if any), close, free. */
void lp_output_abort(lp_output *out);
const char *lp_output_name(const lp_output *out);

/* Before a run writes anything: refuse (LP_EUSAGE) an output that names one
 * of its inputs, the same file through any path or link (compared by device
 * and inode; "-" is standard input or output), an output directory holding
 * an input, two outputs with the same name, and an empty name. Outputs that do not exist
 * yet, and those that are neither regular files nor directories (a pipe,
 * /dev/null), cannot overwrite anything. NULL entries are skipped. */
int lp_check_outputs(const char *const *inputs, size_t nin, const char *const *outputs,
		     size_t nout, lp_error *err);
/* The same for one output named by path's last component in the resolved
 * directory dir_fd (lp_output_open_in), never following it. */
int lp_check_output_in(int dir_fd, const char *output, const char *const *inputs, size_t nin,
		       lp_error *err);

/* Parse "gz"/"gzip", "zst"/"zstd", "none" for --compress; -1 if unknown. */
int lp_compress_parse(const char *s);
/* The codec an output named path (NULL: standard output) gets under
 * compress: compress itself, or under LP_COMPRESS_AUTO the suffix's. */
enum lp_compress lp_compress_for(const char *path, enum lp_compress compress);

#endif
