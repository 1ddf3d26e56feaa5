/* laplace convert and dump of a raw reference trace: a source copied
 * into a form of the registry (registry.h), narrowed only when every
 * record fits. Apart from ref.c, whose readers and writers the library
 * uses without the registry this needs. */
#include "formats/refio.h"

#include <glib.h>

#include "formats/registry.h"

/* References decoded and encoded per step: big enough to amortise calls. */
#define COPY_BATCH 65536

/* The first of refs[0, n) whose vas or address does not fit 32 bits,
 * named as the reference of index first + i of s; 0 when all fit. */
static int check_narrow(const lp_ref_source *s, uint64_t first, const lp_ref *refs, size_t n,
			lp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!((refs[i].vas | refs[i].address) >> 32))
			continue;
		bool vas = refs[i].vas >> 32;
		char *where = s->ops->where(s, first + i);
		lp_fail(err, LP_EINPUT, "%s: field %s: %" G_GINT64_MODIFIER "x does not fit 32 bits",
			where, vas ? "vas" : "address", vas ? refs[i].vas : refs[i].address);
		g_free(where);
		return LP_EINPUT;
	}
	return 0;
}

int lp_ref_copy(lp_ref_source *s, const lp_format *form, enum lp_endian endian,
		const lp_torn_policy *policy, const lp_progress *progress, lp_output *out,
		lp_error *err)
{
	bool narrow = form->ref->width < lp_ref_source_width(s);
	lp_ref_writer *w = form->open_sink(out, endian);
	lp_ref *batch = g_new(lp_ref, COPY_BATCH);
	ssize_t n;
	int rc = 0;
	while ((n = lp_ref_source_read(s, batch, COPY_BATCH, err)) > 0) {
		if (narrow && (rc = check_narrow(s, lp_ref_source_index(s) - (uint64_t)n, batch,
						 (size_t)n, err)))
			break;
		if ((rc = lp_ref_writer_write(w, batch, (size_t)n, err)))
			break;
		lp_progress_records(progress, lp_ref_source_index(s));
	}
	g_free(batch);
	if (!rc && n < 0)
		rc = err->status;
	if (rc) {
		lp_ref_writer_free(w);
		return rc;
	}
	if ((rc = lp_ref_writer_finish(w, err)))
		return rc;
	size_t torn = lp_ref_source_torn_bytes(s);
	if (torn) /* binary: text is never torn */
		rc = lp_torn_record(policy, lp_ref_source_name(s), lp_ref_source_index(s), torn, err);
	return rc;
}

int lp_ref_dump(const char *path, enum lp_endian endian, const lp_torn_policy *policy,
		lp_output *out, lp_error *err)
{
	lp_ref_source *s = lp_ref_open(path, LP_REF_AUTO, endian, err);
	if (!s)
		return err->status;
	int rc = lp_ref_copy(s, lp_ref_row(LP_REF_TEXT, lp_ref_source_width(s)), endian, policy,
			     NULL, out, err);
	lp_ref_source_close(s);
	return rc;
}
