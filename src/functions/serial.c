/*-------------------------------------------------------------------------
 *
 * serial.c
 *	  Business serial numbers: an id printed as a prefix, its UTC time, and
 *	  its datacenter, worker and sequence fields as zero-padded decimals;
 *	  and such a serial read back into its id.  With the default layout:
 *
 *		ORD 20240229123456789 03 07 0042	(printed without the spaces)
 *		prefix, YYYYMMDDHHMMSSmmm, datacenter, worker, sequence
 *
 * Each field is as wide as the decimal digits of its largest value in the
 * layout (31 gives 2, 4095 gives 4), so the serials of one prefix all have
 * the same length and sort as their ids do.  Ids hold no time after year
 * 9999 (see snowid_max_ms()), so the year always has four digits.  A serial
 * is its id in another notation: turning one into the other and back gives
 * what was started with.
 *
 * Nothing here holds a lock: a fresh id comes from the generator
 * (generator.c) exactly as for snowid_next(), and the rest is arithmetic.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/datetime.h"

#include "core/generator.h"

#define SNOWID_PREFIX_MAX		16
#define SNOWID_TIME_DIGITS		17	/* YYYYMMDDHHMMSSmmm */

/* The rule for prefixes, as a sentence for hints */
#define SNOWID_PREFIX_RULE \
	"A serial prefix is 1 to 16 characters from A-Z, a-z, 0-9, \"_\" and \"-\"."

PG_FUNCTION_INFO_V1(snowid_serial);
PG_FUNCTION_INFO_V1(snowid_serial_of_id);
PG_FUNCTION_INFO_V1(snowid_from_serial);

/* How the digits of a serial are split up in the current layout */
typedef struct SnowidSerialWidths
{
	int			datacenter;
	int			worker;
	int			sequence;
	int			total;			/* all digits after the prefix */
} SnowidSerialWidths;

/*
 * snowid_decimal_width
 *		The number of decimal digits of a non-negative number.
 */
static int
snowid_decimal_width(int64 value)
{
	int			width = 1;

	while (value >= 10)
	{
		value /= 10;
		width++;
	}
	return width;
}

/*
 * snowid_serial_widths
 *		The field widths of serials in the given layout.
 */
static void
snowid_serial_widths(const SnowidLayout *layout, SnowidSerialWidths *w)
{
	w->datacenter = snowid_decimal_width(SNOWID_FIELD_MAX(layout->datacenter_bits));
	w->worker = snowid_decimal_width(SNOWID_FIELD_MAX(layout->worker_bits));
	w->sequence = snowid_decimal_width(SNOWID_FIELD_MAX(layout->sequence_bits));
	w->total = SNOWID_TIME_DIGITS + w->datacenter + w->worker + w->sequence;
}

/*
 * snowid_prefix_problem
 *		What is wrong with a prefix, as a sentence for an error detail, or
 *		NULL if it is a good one.
 */
static char *
snowid_prefix_problem(const char *prefix, int len)
{
	if (len == 0)
		return pstrdup("The prefix is empty.");

	for (int i = 0; i < len;)
	{
		char		c = prefix[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || c == '_' || c == '-')
		{
			i++;
			continue;
		}
		if (c == ' ')
			return pstrdup("The prefix contains a space.");
		if ((unsigned char) c < 0x20 || c == 0x7f)
			return psprintf("The prefix contains the control character 0x%02x.",
							(unsigned char) c);
		return psprintf("The prefix contains \"%.*s\".",
						pg_mblen(prefix + i), prefix + i);
	}

	/* only ASCII is left, one byte per character */
	if (len > SNOWID_PREFIX_MAX)
		return psprintf("The prefix has %d characters; at most %d are allowed.",
						len, SNOWID_PREFIX_MAX);
	return NULL;
}

/*
 * snowid_check_prefix
 *		Reports an error for a NULL or malformed prefix argument.
 */
static void
snowid_check_prefix(FunctionCallInfo fcinfo, int argno)
{
	text	   *prefix;
	char	   *problem;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("serial prefix must not be null"),
				 errhint(SNOWID_PREFIX_RULE)));

	prefix = PG_GETARG_TEXT_PP(argno);
	problem = snowid_prefix_problem(VARDATA_ANY(prefix),
									VARSIZE_ANY_EXHDR(prefix));
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid serial prefix \"%s\"",
						text_to_cstring(prefix)),
				 errdetail_internal("%s", problem),
				 errhint(SNOWID_PREFIX_RULE)));
}

/*
 * snowid_format_serial
 *		The serial of an id, with a prefix already checked.
 */
static text *
snowid_format_serial(text *prefix, int64 id)
{
	SnowidSerialWidths w;
	SnowidParts parts;
	int64		unix_ms;
	int64		ms_of_day;
	int			year;
	int			month;
	int			day;

	snowid_decompose_checked(&snowid_layout, id, &parts);
	snowid_serial_widths(&snowid_layout, &w);

	/* both are non-negative, so plain division rounds down */
	unix_ms = snowid_layout.epoch_ms + parts.ms;
	j2date((int) (unix_ms / SNOWID_MS_PER_DAY) + UNIX_EPOCH_JDATE,
		   &year, &month, &day);
	ms_of_day = unix_ms % SNOWID_MS_PER_DAY;

	return cstring_to_text(psprintf("%.*s%04d%02d%02d%02d%02d%02d%03d%0*d%0*d%0*d",
									(int) VARSIZE_ANY_EXHDR(prefix),
									VARDATA_ANY(prefix),
									year, month, day,
									(int) (ms_of_day / 3600000),
									(int) (ms_of_day / 60000 % 60),
									(int) (ms_of_day / 1000 % 60),
									(int) (ms_of_day % 1000),
									w.datacenter, parts.datacenter_id,
									w.worker, parts.worker_id,
									w.sequence, parts.sequence));
}

/*
 * snowid_serial
 *		snowid_serial(prefix): the serial of a fresh id.  The prefix is
 *		checked before the id is taken, so a bad prefix costs no id.
 */
Datum
snowid_serial(PG_FUNCTION_ARGS)
{
	int64		node_bits;
	int64		position;
	int			got;

	snowid_check_prefix(fcinfo, 0);

	snowid_prepare_backend("snowid_serial()");
	position = snowid_take(1, &got, &node_bits);
	PG_RETURN_TEXT_P(snowid_format_serial(PG_GETARG_TEXT_PP(0),
										  snowid_compose(&snowid_layout,
														 position,
														 node_bits)));
}

/*
 * snowid_serial_of_id
 *		snowid_serial(prefix, id): the serial of an existing id, so that a
 *		row's bigint key and its printed serial are the same id.  NULL for a
 *		NULL id, but a bad prefix is an error even then, and so is a NULL
 *		prefix with an id; both NULL give NULL.
 */
Datum
snowid_serial_of_id(PG_FUNCTION_ARGS)
{
	if (!PG_ARGISNULL(0) || !PG_ARGISNULL(1))
		snowid_check_prefix(fcinfo, 0);
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();

	PG_RETURN_TEXT_P(snowid_format_serial(PG_GETARG_TEXT_PP(0),
										  PG_GETARG_INT64(1)));
}

/*
 * snowid_parse_digits
 *		The number written by n decimal digits.
 */
static int64
snowid_parse_digits(const char *digits, int n)
{
	int64		value = 0;

	for (int i = 0; i < n; i++)
		value = value * 10 + (digits[i] - '0');
	return value;
}

/*
 * snowid_serial_problem
 *		Reads the digits of a serial into an id; returns what is wrong with
 *		them, as a sentence for an error detail, or NULL.
 */
static char *
snowid_serial_problem(const char *d, const SnowidSerialWidths *w, int64 *id)
{
	int			year = (int) snowid_parse_digits(d, 4);
	int			month = (int) snowid_parse_digits(d + 4, 2);
	int			day = (int) snowid_parse_digits(d + 6, 2);
	int			hour = (int) snowid_parse_digits(d + 8, 2);
	int			minute = (int) snowid_parse_digits(d + 10, 2);
	int			second = (int) snowid_parse_digits(d + 12, 2);
	int			milli = (int) snowid_parse_digits(d + 14, 3);
	int64		datacenter_id;
	int64		worker_id;
	int64		sequence;
	int64		unix_ms;
	int64		ms;
	const char *f = d + SNOWID_TIME_DIGITS;

	if (month < 1 || month > 12 || day < 1 ||
		day > day_tab[isleap(year) ? 1 : 0][month - 1])
		return psprintf("%.8s is not a date.", d);
	if (hour > 23 || minute > 59 || second > 59)
		return psprintf("%.6s is not a time of day.", d + 8);

	unix_ms = (int64) (date2j(year, month, day) - UNIX_EPOCH_JDATE) *
		SNOWID_MS_PER_DAY +
		((hour * 60 + minute) * 60 + second) * INT64CONST(1000) + milli;
	ms = unix_ms - snowid_layout.epoch_ms;
	if (ms < 0 || ms > snowid_max_ms(&snowid_layout))
		return psprintf("Its time %.17s lies outside the range of snowid timestamps.", d);

	datacenter_id = snowid_parse_digits(f, w->datacenter);
	f += w->datacenter;
	worker_id = snowid_parse_digits(f, w->worker);
	f += w->worker;
	sequence = snowid_parse_digits(f, w->sequence);

	if (datacenter_id > SNOWID_FIELD_MAX(snowid_layout.datacenter_bits))
		return psprintf("Its datacenter id %lld is larger than %lld, the largest snowid.datacenter_bits = %d can hold.",
						(long long) datacenter_id,
						(long long) SNOWID_FIELD_MAX(snowid_layout.datacenter_bits),
						snowid_layout.datacenter_bits);
	if (worker_id > SNOWID_FIELD_MAX(snowid_layout.worker_bits))
		return psprintf("Its worker id %lld is larger than %lld, the largest snowid.worker_bits = %d can hold.",
						(long long) worker_id,
						(long long) SNOWID_FIELD_MAX(snowid_layout.worker_bits),
						snowid_layout.worker_bits);
	if (sequence > SNOWID_FIELD_MAX(snowid_layout.sequence_bits))
		return psprintf("Its sequence %lld is larger than %lld, the largest snowid.sequence_bits = %d can hold.",
						(long long) sequence,
						(long long) SNOWID_FIELD_MAX(snowid_layout.sequence_bits),
						snowid_layout.sequence_bits);

	*id = snowid_compose(&snowid_layout,
						 (ms << snowid_layout.sequence_bits) | sequence,
						 snowid_node_bits(&snowid_layout, (int) datacenter_id,
										  (int) worker_id));
	return NULL;
}

/*
 * snowid_from_serial
 *		The id a serial was printed from.  Anything snowid_serial() could not
 *		have printed in the current layout is an error, so the result always
 *		prints back as the same serial.
 */
Datum
snowid_from_serial(PG_FUNCTION_ARGS)
{
	text	   *serial = PG_GETARG_TEXT_PP(0);
	const char *s = VARDATA_ANY(serial);
	int			len = VARSIZE_ANY_EXHDR(serial);
	SnowidSerialWidths w;
	int			prefix_len;
	char	   *problem = NULL;
	int64		id = 0;

	snowid_serial_widths(&snowid_layout, &w);
	prefix_len = len - w.total;

	if (prefix_len < 1)
		problem = psprintf("A serial is a prefix followed by %d digits; this one has only %d characters.",
						   w.total, len);
	else
	{
		for (int i = prefix_len; i < len && problem == NULL; i++)
		{
			if (s[i] < '0' || s[i] > '9')
				problem = psprintf("A serial ends in %d digits (%d for the time, then %d, %d and %d for the datacenter id, worker id and sequence).",
								   w.total, SNOWID_TIME_DIGITS,
								   w.datacenter, w.worker, w.sequence);
		}
		if (problem == NULL)
			problem = snowid_prefix_problem(s, prefix_len);
		if (problem == NULL)
			problem = snowid_serial_problem(s + prefix_len, &w, &id);
	}

	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid snowid serial \"%s\"", text_to_cstring(serial)),
				 errdetail_internal("%s", problem)));

	PG_RETURN_INT64(id);
}
