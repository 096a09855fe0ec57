/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The bit layout of an id: putting fields together, taking an id apart,
 *	  and converting between the timestamp field and PostgreSQL time.
 *
 * Everything here is a pure function of its arguments (and of the layout
 * passed in), so it works in any backend, with or without the shared
 * generator.  No locks are involved.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "common/int.h"
#include "lib/stringinfo.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "core/layout.h"

/* Microseconds between the Unix epoch and PostgreSQL's (2000-01-01) */
#define SNOWID_PG_EPOCH_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/*
 * snowid_node_bits
 *		The datacenter and worker fields of an id, already in place, so that
 *		making an id costs one shift and two ors.
 */
int64
snowid_node_bits(const SnowidLayout *layout, int datacenter_id, int worker_id)
{
	int64		dc = datacenter_id;
	int64		w = worker_id;

	return (dc << (layout->worker_bits + layout->sequence_bits)) |
		(w << layout->sequence_bits);
}

/*
 * snowid_compose
 *		The id at a generator position, for the node given by node_bits.
 */
int64
snowid_compose(const SnowidLayout *layout, int64 position, int64 node_bits)
{
	int			node_width = layout->datacenter_bits + layout->worker_bits;
	int64		seq_mask = SNOWID_FIELD_MAX(layout->sequence_bits);

	return ((position >> layout->sequence_bits)
			<< (node_width + layout->sequence_bits)) |
		node_bits | (position & seq_mask);
}

/*
 * snowid_decompose
 *		Takes a non-negative id apart into its fields.
 */
void
snowid_decompose(const SnowidLayout *layout, int64 id, SnowidParts *parts)
{
	int			shift = layout->sequence_bits;

	Assert(id >= 0);
	parts->sequence = (int) (id & SNOWID_FIELD_MAX(layout->sequence_bits));
	parts->worker_id = (int) ((id >> shift) &
							  SNOWID_FIELD_MAX(layout->worker_bits));
	shift += layout->worker_bits;
	parts->datacenter_id = (int) ((id >> shift) &
								  SNOWID_FIELD_MAX(layout->datacenter_bits));
	shift += layout->datacenter_bits;
	parts->ms = id >> shift;
}

/*
 * snowid_decompose_checked
 *		Takes apart an id a user gave, reporting an error for one no server
 *		can issue: negative, or with a time after the last that ids hold.
 */
void
snowid_decompose_checked(const SnowidLayout *layout, int64 id,
						 SnowidParts *parts)
{
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid %lld", (long long) id),
				 errdetail("A snowid is never negative: its sign bit is always 0.")));

	snowid_decompose(layout, id, parts);
	if (parts->ms > snowid_max_ms(layout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid %lld", (long long) id),
				 errdetail("Its timestamp field lies after 9999-12-31 23:59:59.999 UTC, the last time snowids can hold.")));
}

/*
 * snowid_max_ms
 *		The last millisecond (since the epoch) ids can hold: the largest
 *		value of the timestamp field, or the last millisecond of year 9999
 *		if that comes first (only with 48 or more timestamp bits).
 */
int64
snowid_max_ms(const SnowidLayout *layout)
{
	return Min(SNOWID_FIELD_MAX(layout->timestamp_bits),
			   SNOWID_END_UNIX_MS - 1 - layout->epoch_ms);
}

/*
 * snowid_unix_ms_to_timestamptz
 *		Unix milliseconds as a timestamptz.
 */
TimestampTz
snowid_unix_ms_to_timestamptz(int64 unix_ms)
{
	return (TimestampTz) (unix_ms * 1000 - SNOWID_PG_EPOCH_US);
}

/*
 * snowid_unix_ms_text
 *		Unix milliseconds as a timestamptz for a message, in a static
 *		buffer.  Any value may be shown: one read from the coordinator may lie past
 *		what a timestamptz holds.
 */
const char *
snowid_unix_ms_text(int64 unix_ms)
{
	int64		us;

	if (pg_mul_s64_overflow(unix_ms, 1000, &us) ||
		pg_sub_s64_overflow(us, SNOWID_PG_EPOCH_US, &us) ||
		!IS_VALID_TIMESTAMP(us))
		return "(a time out of range)";
	return timestamptz_to_str((TimestampTz) us);
}

/*
 * snowid_timestamptz_to_unix_ms
 *		A timestamptz as Unix milliseconds, rounded down.  False for infinite
 *		timestamps, and for those so late (past the year 294000 or so) that
 *		their Unix microseconds do not fit 64 bits.
 */
bool
snowid_timestamptz_to_unix_ms(TimestampTz ts, int64 *unix_ms)
{
	int64		us;

	if (TIMESTAMP_NOT_FINITE(ts) ||
		pg_add_s64_overflow(ts, SNOWID_PG_EPOCH_US, &us))
		return false;
	/* floor division, also for times before 1970 */
	*unix_ms = us / 1000 - ((us % 1000 < 0) ? 1 : 0);
	return true;
}

/* The rule a malformed snowid.epoch broke */
#define SNOWID_EPOCH_FORMAT_PROBLEM \
	"snowid.epoch must be a fixed time: a timestamp such as '" \
	SNOWID_DEFAULT_EPOCH "' (read as UTC unless it names a time zone), " \
	"or Unix milliseconds."

/*
 * snowid_epoch_in_range
 *		Whether an epoch in Unix milliseconds is one ids can count from: not
 *		before 1970 (Unix milliseconds, and the mark file, are never
 *		negative), and before the year 10000, the end of the time ids hold.
 */
static bool
snowid_epoch_in_range(int64 unix_ms, const char **problem)
{
	if (unix_ms < 0)
	{
		*problem = "snowid.epoch must not lie before 1970-01-01 00:00:00 UTC.";
		return false;
	}
	if (unix_ms >= SNOWID_END_UNIX_MS)
	{
		*problem = "snowid.epoch must lie before the year 10000.";
		return false;
	}
	return true;
}

/*
 * snowid_names_current_time
 *		Whether a parsed date/time field is one of the words that mean a time
 *		relative to the present ('now', 'today', 'tomorrow', 'yesterday').
 *		An epoch must be fixed: these would resolve to whenever the value is
 *		read, and in the postmaster, which has no transaction, to 2000-01-01.
 */
static bool
snowid_names_current_time(char *field, int ftype, int index)
{
	int			val;

	if (ftype != DTK_STRING && ftype != DTK_SPECIAL)
		return false;
	if (DecodeSpecial(index, field, &val) != RESERV)
		return false;
	return val == DTK_NOW || val == DTK_TODAY || val == DTK_TOMORROW ||
		val == DTK_YESTERDAY;
}

/*
 * snowid_parse_epoch
 *		Reads a value of snowid.epoch: a timestamp such as
 *		'2010-11-04 01:42:54.657+00', or whole Unix milliseconds, from
 *		1970-01-01 up to the year 10000.  A timestamp without a time zone is
 *		UTC, whatever TimeZone the reading process has: the postmaster, a
 *		session loading the library later and a parallel worker (which loads
 *		it before taking on the leader's settings) must all read the same
 *		epoch.  Words for the present time are refused.  On failure sets
 *		*problem to a sentence saying which rule the value broke.  Never
 *		reports an error itself (compat.h makes 15's date parser behave), so
 *		GUC check hooks can use it, in the postmaster too.
 */
bool
snowid_parse_epoch(const char *value, int64 *unix_ms, const char **problem)
{
	char		workbuf[MAXDATELEN + 1];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	Timestamp	ts;
	char	   *end;
	long long	ms;
	pg_tz	   *utc;
	pg_tz	   *saved_timezone;
	int			decoded;
	DateTimeErrorExtra extra;

	*problem = SNOWID_EPOCH_FORMAT_PROBLEM;
	if (value == NULL || value[0] == '\0')
		return false;

	/* all digits: Unix milliseconds */
	errno = 0;
	ms = strtoll(value, &end, 10);
	if (*end == '\0')
	{
		if (errno != 0)
			return false;
		*unix_ms = (int64) ms;
		return snowid_epoch_in_range(*unix_ms, problem);
	}

	if (ParseDateTime(value, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	for (int i = 0; i < nf; i++)
	{
		if (snowid_names_current_time(field[i], ftype[i], i))
			return false;
	}

	/*
	 * DecodeDateTime() gives a value without a zone the session's time zone:
	 * make that UTC for the call, and put the session's back even if it
	 * fails.
	 */
	utc = pg_tzset("UTC");
	if (utc == NULL)
		return false;
	saved_timezone = session_timezone;
	session_timezone = utc;
	PG_TRY();
	{
		decoded = DecodeDateTime(field, ftype, nf, &dtype, &tm, &fsec, &tz,
								 &extra);
	}
	PG_FINALLY();
	{
		session_timezone = saved_timezone;
	}
	PG_END_TRY();
	if (decoded == DTERR_BAD_TIMEZONE)
		*problem = "The time zone in snowid.epoch is not recognized (pg_timezone_names lists those that are).";
	if (decoded != 0 || dtype != DTK_DATE)
		return false;
	if (tm2timestamp(&tm, fsec, &tz, &ts) != 0 ||
		!snowid_timestamptz_to_unix_ms(ts, unix_ms))
		return false;
	return snowid_epoch_in_range(*unix_ms, problem);
}

/*
 * snowid_layout_string
 *		The layout as "41/5/5/12" (timestamp/datacenter/worker/sequence bits),
 *		palloc'd.
 */
char *
snowid_layout_string(const SnowidLayout *layout)
{
	return psprintf("%d/%d/%d/%d", layout->timestamp_bits,
					layout->datacenter_bits, layout->worker_bits,
					layout->sequence_bits);
}
