/* libFuzzer target: basic merge streams read back ("type canonical" lines,
 * section 4, or the binary form of section 8), task files read as such
 * streams (section 5: "type timestamp length vpn canonical" lines between
 * kernel event lines, or the binary task form: an LPTASK header, then
 * 26-byte reference records and 'K' event records), and the LRU behaviour
 * sequence of one. Checks: each reference has a valid type and the number
 * its line, word or record spells; a plain stream read to the end has one
 * reference per line and no line over 4096 bytes, or one per 8-byte word
 * after the header, or one per reference record; the lines and event
 * records a task file's reader skips are event lines the kernel trace's
 * reader takes. The input's size picks the memory size of the LRU run. */
#include "fuzz_input.h"

#include <stdbool.h>

#include "io/inbuf.h"
#include "formats/kern.h"
#include "formats/legacy.h"
#include "analysis/lru.h"

#define BIN_HEADER "LPBASIC\x01"
/* The binary task form, parsed here independently of formats/taskline.h. */
#define TASK_HEADER "LPTASK\x01\x00"
#define TASK_MAGIC_SIZE 6
#define TASK_HEADER_SIZE 8
#define TASK_REF_SIZE 26
#define TASK_EVENT_MAX 4096

/* The line at data[at, size): its length, without the '\n'. */
static size_t line_length(const uint8_t *data, size_t size, size_t at)
{
	const uint8_t *nl = memchr(data + at, '\n', size - at);
	return (nl ? (size_t)(nl - data) : size) - at;
}

/* The value of the hex digits s[0, len), parsed here independently;
 * false if there are none, another byte, or more than 64 bits. */
static bool hex_value(const uint8_t *s, size_t len, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		int c = s[i] | 0x20;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0 || *v >> 60)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	return len > 0;
}

static size_t trim(const uint8_t *line, size_t len)
{
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	return len;
}

/* Whether line[0, len) is a basic line "type canonical"; its reference. */
static bool basic_line(const uint8_t *line, size_t len, lp_basic_ref *ref)
{
	len = trim(line, len);
	if (len < 3 || line[1] != ' ' || lp_ref_type_index((char)line[0]) < 0)
		return false;
	ref->type = (char)line[0];
	return hex_value(line + 2, len - 2, &ref->canonical);
}

/* Whether line[0, len) is a task file's reference line, "type timestamp
 * length vpn canonical" (fields of at most 64, 8, 52 and 64 bits: a vpn
 * is a 64-bit address's page); its reference. */
static bool task_line(const uint8_t *line, size_t len, lp_basic_ref *ref)
{
	static const int bits[] = {64, 8, 52, 64};
	len = trim(line, len);
	if (len < 2 || line[1] != ' ' || lp_ref_type_index((char)line[0]) < 0)
		return false;
	size_t at = 2;
	uint64_t v = 0;
	for (int f = 0; f < 4; f++) {
		const uint8_t *sp = memchr(line + at, ' ', len - at);
		size_t end = f < 3 ? (sp ? (size_t)(sp - line) : len) : len;
		if (!hex_value(line + at, end - at, &v) || (bits[f] < 64 && v >> bits[f]))
			return false;
		if (f < 3 && end >= len)
			return false;
		at = end + 1;
	}
	ref->type = (char)line[0];
	ref->canonical = v;
	return true;
}

/* Step over the event lines at data[*at, size) of a task file: each must
 * be one the kernel trace's reader takes. */
static void skip_events(const uint8_t *data, size_t size, size_t *at)
{
	static char line[LP_LINE_MAX + 1];
	while (*at < size && lp_ref_type_index((char)data[*at]) < 0) {
		size_t len = line_length(data, size, *at);
		FUZZ_CHECK(len <= LP_LINE_MAX);
		memcpy(line, data + *at, len);
		line[len] = '\0';
		lp_event ev;
		FUZZ_CHECK(lp_tag_from_char(line[0]) >= 0 && lp_kern_parse_line(line, len, &ev, NULL) == 1);
		*at += len + 1;
	}
}

/* The reference a word of the binary form spells. */
static void check_word(const uint8_t *p, const lp_basic_ref *ref)
{
	uint64_t w = 0;
	for (int k = 7; k >= 0; k--)
		w = w << 8 | p[k];
	FUZZ_CHECK(w >> 61 < 6 && "rwiRWI"[w >> 61] == ref->type);
	FUZZ_CHECK((w & ((UINT64_C(1) << 61) - 1)) == ref->canonical);
}

/* Step over the event records at data[*at, size) of the binary task form
 * ('K', a length n of 2 bytes little-endian, n bytes of an event line):
 * each must hold a line the kernel trace's reader takes. */
static void skip_event_records(const uint8_t *data, size_t size, size_t *at)
{
	static char line[TASK_EVENT_MAX + 1];
	while (*at < size && data[*at] == 'K') {
		FUZZ_CHECK(*at + 3 <= size);
		size_t len = data[*at + 1] | (size_t)data[*at + 2] << 8;
		FUZZ_CHECK(len <= TASK_EVENT_MAX && *at + 3 + len <= size);
		memcpy(line, data + *at + 3, len);
		line[len] = '\0';
		lp_event ev;
		FUZZ_CHECK(lp_tag_from_char(line[0]) >= 0 && lp_kern_parse_line(line, len, &ev, NULL) == 1);
		*at += 3 + len;
	}
}

/* The reference a record of the binary task form spells: its type byte,
 * its canonical page in bytes 18 to 25 (little-endian), and a vpn of at
 * most 52 bits in bytes 10 to 17. */
static void check_task_record(const uint8_t *p, const lp_basic_ref *ref)
{
	uint64_t vpn = 0, canonical = 0;
	for (int k = 7; k >= 0; k--) {
		vpn = vpn << 8 | p[10 + k];
		canonical = canonical << 8 | p[18 + k];
	}
	FUZZ_CHECK(p[0] == (uint8_t)ref->type && canonical == ref->canonical && vpn >> 52 == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	bool plain = !fuzz_compressed(data, size);
	bool binary = size >= 7 && !memcmp(data, BIN_HEADER, 7);
	bool task_bin = size >= TASK_MAGIC_SIZE && !memcmp(data, TASK_HEADER, TASK_MAGIC_SIZE);
	lp_error err;
	uint64_t frames = 1 + size % 5;
	lp_basic_reader *r = lp_basic_open(path, &err);
	/* Only a header cut short or of another version, or corrupt
	 * compressed data, is refused at once. */
	bool bad_header = (binary && (size < 8 || data[7] != 1)) ||
			  (task_bin && (size < TASK_HEADER_SIZE ||
					memcmp(data + TASK_MAGIC_SIZE, &TASK_HEADER[TASK_MAGIC_SIZE], 2)));
	FUZZ_CHECK(!r == (plain && bad_header) || (!r && !plain));
	if (!r) {
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
		FUZZ_CHECK(lp_lru_basic_trace(path, frames, fuzz_sink(), &err) != 0);
		return 0;
	}
	static lp_basic_ref refs[333];
	ssize_t n;
	size_t at = binary ? 8 : task_bin ? TASK_HEADER_SIZE : 0;
	/* The first line tells a task file from a basic stream. */
	lp_basic_ref first;
	bool task = !binary && !task_bin && !basic_line(data, line_length(data, size, 0), &first);
	while ((n = lp_basic_read(r, refs, 333, &err)) > 0) {
		FUZZ_CHECK(n <= 333);
		for (ssize_t i = 0; i < n; i++) {
			FUZZ_CHECK(lp_ref_type_index(refs[i].type) >= 0);
			if (!plain)
				continue;
			if (binary) {
				FUZZ_CHECK(at + 8 <= size);
				check_word(data + at, &refs[i]);
				at += 8;
				continue;
			}
			if (task_bin) {
				skip_event_records(data, size, &at);
				FUZZ_CHECK(at + TASK_REF_SIZE <= size);
				check_task_record(data + at, &refs[i]);
				at += TASK_REF_SIZE;
				continue;
			}
			/* Basic streams have no blank or comment lines. */
			if (task)
				skip_events(data, size, &at);
			FUZZ_CHECK(at < size);
			size_t len = line_length(data, size, at);
			lp_basic_ref want;
			FUZZ_CHECK(len <= LP_LINE_MAX);
			FUZZ_CHECK(task ? task_line(data + at, len, &want) : basic_line(data + at, len, &want));
			FUZZ_CHECK(want.type == refs[i].type && want.canonical == refs[i].canonical);
			at += len + 1;
		}
	}
	lp_basic_close(r);
	if (n < 0)
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
	else if (plain) {
		if (task)
			skip_events(data, size, &at);
		if (task_bin)
			skip_event_records(data, size, &at);
		FUZZ_CHECK(at >= size);
	}

	int rc = lp_lru_basic_trace(path, frames, fuzz_sink(), &err);
	FUZZ_CHECK((rc == 0) == (n == 0));
	return 0;
}
