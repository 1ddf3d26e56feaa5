/* laplace-record-decode [--follow] DIR PREFIX: merges the streams that the
   recorder wrote to DIR into PREFIX.ref and PREFIX.kern (decode.h),
   published together once both are whole (formats §7); a summary on
   stderr. With --follow, DIR is followed while the recording runs, as
   laplace record does, until DIR/ended exists (its tests compare the two
   ways). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "decode.h"
#include "io/staging.h"

static const char *prog = "laplace-record-decode";

static uint64_t user_refs(const lp_record_summary *sum)
{
	return sum->refs['i'] + sum->refs['r'] + sum->refs['w'];
}

static void print_summary(const lp_record_summary *sum)
{
	uint64_t user = user_refs(sum);
	fprintf(stderr,
		"%s: %" PRIu64 " streams, %" PRIu64 " tasks; references: i %" PRIu64
		" r %" PRIu64 " w %" PRIu64 " R %" PRIu64 " W %" PRIu64 "; events:",
		prog, sum->streams, sum->tasks, sum->refs['i'], sum->refs['r'], sum->refs['w'],
		sum->refs['R'], sum->refs['W']);
	for (int tag = 'A'; tag <= 'Z'; tag++)
		if (sum->events[tag])
			fprintf(stderr, " %c %" PRIu64, tag, sum->events[tag]);
	fprintf(stderr, "; %.2f stream bytes per user reference\n",
		user ? (double)sum->stream_bytes / (double)user : 0.0);
	for (guint k = 0; k < sum->torn->len; k++)
		fprintf(stderr, "%s: %s\n", prog, (char *)g_ptr_array_index(sum->torn, k));
}

static int follow_dir(const char *dir, lp_output *ref, lp_output *kern, lp_record_summary *sum,
		      lp_error *err)
{
	lp_record_decoder *dec = lp_record_decoder_new(dir, ref, kern, sum);
	char *ended = g_build_filename(dir, "ended", NULL);
	int rc = 0;
	bool last = false;
	while (!rc && !last) {
		last = g_file_test(ended, G_FILE_TEST_EXISTS);
		if (last)
			fprintf(stderr, "%s: %" PRIu64 " references merged while the recording ran\n",
				prog, user_refs(sum));
		bool progress = false;
		rc = lp_record_decoder_step(dec, last, &progress, err);
		if (!progress && !last)
			g_usleep(1000);
	}
	g_free(ended);
	lp_record_decoder_free(dec);
	return rc;
}

int main(int argc, char **argv)
{
	bool follow = argc == 4 && !strcmp(argv[1], "--follow");
	if (argc != 3 + follow) {
		fprintf(stderr, "Usage: %s [--follow] DIR PREFIX\n", prog);
		return 1;
	}
	argv += follow;
	lp_error err = {0};
	lp_record_summary sum = {0};
	char *ref_path = g_strconcat(argv[2], ".ref", NULL);
	char *kern_path = g_strconcat(argv[2], ".kern", NULL);
	lp_staged *staged[2] = {NULL, NULL};
	lp_output *ref = lp_output_open(ref_path, LP_COMPRESS_AUTO, &err);
	lp_output *kern = ref ? lp_output_open(kern_path, LP_COMPRESS_AUTO, &err) : NULL;
	int rc = err.status;
	if (kern) {
		rc = follow ? follow_dir(argv[1], ref, kern, &sum, &err)
			    : lp_record_decode(argv[1], ref, kern, &sum, &err);
		rc = lp_output_stage(ref, rc, &staged[0], &err);
		rc = lp_output_stage(kern, rc, &staged[1], &err);
		if (!rc)
			rc = lp_stage_publish(staged, 2, &err);
		else {
			lp_staged_discard(staged[0]);
			lp_staged_discard(staged[1]);
		}
	} else if (ref) {
		lp_output_abort(ref);
	}
	if (rc)
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	else
		print_summary(&sum);
	lp_record_summary_clear(&sum);
	g_free(ref_path);
	g_free(kern_path);
	return rc;
}
