/*-------------------------------------------------------------------------
 *
 * mark.c
 *	  The persisted high-water mark: a small file in the data directory that
 *	  says below which millisecond every id issued so far lies, together with
 *	  the layout and epoch those ids were made with.
 *
 * The file is one line of text, so that an operator can read it:
 *
 *		snowid 4 epoch_ms=1288834974657 layout=41/5/5/12 high_water_ms=...
 *			max_drift_ms=1000 system_identifier=... node=3/7
 *			instance=9f86d081884c7d65 takeover=0
 *
 * Versions 1 to 3 are still read: 1, written before the mark went into WAL
 * too, lacks max_drift_ms (read as unknown, 0); 2 lacks the system
 * identifier and the node; 3 lacks the instance (read as unknown, 0).
 * Release 1.0 wrote version 1 without takeover=, as it knew no takeover
 * (read as none pending).
 *
 * It is replaced atomically (a temporary file, then durable_rename(), which
 * fsyncs the file and the directory), so a crash leaves either the old or
 * the new mark.  Callers serialise writers with the generator's LWLock; the
 * postmaster reads the file while it initialises shared memory and writes it
 * at a clean exit, when no backend runs.  snowid_write_line_file() does the
 * atomic replacement for the worker id cache (worker.c) as well.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"

#include "core/mark.h"

#define SNOWID_MARK_VERSION		4
#define SNOWID_MARK_FORMAT \
	"snowid %d epoch_ms=%lld layout=%d/%d/%d/%d high_water_ms=%lld " \
	"max_drift_ms=%d system_identifier=%llu node=%d/%d instance=%llx " \
	"takeover=%d\n"
#define SNOWID_MARK_FORMAT_V3 \
	"snowid %d epoch_ms=%lld layout=%d/%d/%d/%d high_water_ms=%lld " \
	"max_drift_ms=%d system_identifier=%llu node=%d/%d takeover=%d\n"
#define SNOWID_MARK_FORMAT_V2 \
	"snowid %d epoch_ms=%lld layout=%d/%d/%d/%d high_water_ms=%lld " \
	"max_drift_ms=%d takeover=%d\n"
#define SNOWID_MARK_FORMAT_V1 \
	"snowid %d epoch_ms=%lld layout=%d/%d/%d/%d high_water_ms=%lld takeover=%d\n"
#define SNOWID_MARK_FORMAT_V1_0 \
	"snowid %d epoch_ms=%lld layout=%d/%d/%d/%d high_water_ms=%lld\n"

/*
 * A mark lies at most a lease and the largest drift budget past the last
 * time ids can hold; allow a day.
 */
#define SNOWID_MARK_MAX_MS		(SNOWID_END_UNIX_MS + SNOWID_MS_PER_DAY)

/*
 * snowid_mark_read
 *		Reads the mark from the data directory.
 */
SnowidMarkRead
snowid_mark_read(SnowidMark *mark)
{
	FILE	   *file;
	char		line[256];
	int			version;
	long long	epoch_ms;
	long long	high_water_ms;
	int			max_drift_ms = 0;
	unsigned long long system_identifier = 0;
	int			datacenter_id = 0;
	int			worker_id = -1;
	unsigned long long instance = 0;
	int			takeover;
	int			end = -1;
	SnowidLayout *l = &mark->layout;
	bool		ok;

	file = AllocateFile(SNOWID_MARK_FILE, "r");
	if (file == NULL)
	{
		if (errno == ENOENT)
			return SNOWID_MARK_MISSING;
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", SNOWID_MARK_FILE)));
		return SNOWID_MARK_UNREADABLE;
	}

	/* the whole line must match, up to its newline */
	ok = fgets(line, sizeof(line), file) != NULL &&
		sscanf(line, "snowid %d ", &version) == 1;
	if (ok && version == SNOWID_MARK_VERSION)
		ok = sscanf(line, SNOWID_MARK_FORMAT "%n", &version, &epoch_ms,
					&l->timestamp_bits, &l->datacenter_bits, &l->worker_bits,
					&l->sequence_bits, &high_water_ms, &max_drift_ms,
					&system_identifier, &datacenter_id, &worker_id,
					&instance, &takeover, &end) == 13;
	else if (ok && version == 3)
		ok = sscanf(line, SNOWID_MARK_FORMAT_V3 "%n", &version, &epoch_ms,
					&l->timestamp_bits, &l->datacenter_bits, &l->worker_bits,
					&l->sequence_bits, &high_water_ms, &max_drift_ms,
					&system_identifier, &datacenter_id, &worker_id,
					&takeover, &end) == 12;
	else if (ok && version == 2)
		ok = sscanf(line, SNOWID_MARK_FORMAT_V2 "%n", &version, &epoch_ms,
					&l->timestamp_bits, &l->datacenter_bits, &l->worker_bits,
					&l->sequence_bits, &high_water_ms, &max_drift_ms,
					&takeover, &end) == 9;
	else if (ok && version == 1)
	{
		ok = sscanf(line, SNOWID_MARK_FORMAT_V1 "%n", &version, &epoch_ms,
					&l->timestamp_bits, &l->datacenter_bits, &l->worker_bits,
					&l->sequence_bits, &high_water_ms, &takeover, &end) == 8;
		if (!ok)
		{
			/* release 1.0's, without takeover= */
			takeover = 0;
			end = -1;
			ok = sscanf(line, SNOWID_MARK_FORMAT_V1_0 "%n", &version,
						&epoch_ms, &l->timestamp_bits, &l->datacenter_bits,
						&l->worker_bits, &l->sequence_bits, &high_water_ms,
						&end) == 7;
		}
	}
	else
		ok = false;
	ok = ok && end == (int) strlen(line) && line[end - 1] == '\n' &&
		(takeover == 0 || takeover == 1);
	if (ferror(file))
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", SNOWID_MARK_FILE)));
		FreeFile(file);
		return SNOWID_MARK_UNREADABLE;
	}
	FreeFile(file);

	if (ok)
	{
		l->epoch_ms = (int64) epoch_ms;
		mark->high_water_ms = (int64) high_water_ms;
		mark->max_drift_ms = max_drift_ms;
		mark->system_identifier = (uint64) system_identifier;
		mark->datacenter_id = datacenter_id;
		mark->worker_id = worker_id;
		mark->instance = (uint64) instance;
		mark->takeover = (takeover == 1);
		ok = snowid_mark_valid(mark);
	}
	if (!ok)
	{
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid high-water mark file \"%s\" is corrupt",
						SNOWID_MARK_FILE)));
		return SNOWID_MARK_CORRUPT;
	}
	return SNOWID_MARK_OK;
}

/*
 * snowid_mark_valid
 *		Whether a mark read from disk or WAL describes a layout snowid could
 *		have run with, times it could have issued and a drift budget it
 *		allows, so that nothing computed from it can overflow.
 */
bool
snowid_mark_valid(const SnowidMark *mark)
{
	const SnowidLayout *l = &mark->layout;

	if (l->datacenter_bits < 0 || l->worker_bits < 0 || l->sequence_bits < 0 ||
		l->datacenter_bits + l->worker_bits + l->sequence_bits >
		SNOWID_MAX_NODE_SEQ_BITS ||
		l->timestamp_bits != SNOWID_ID_BITS - l->datacenter_bits -
		l->worker_bits - l->sequence_bits)
		return false;
	if (l->epoch_ms < 0 || l->epoch_ms >= SNOWID_END_UNIX_MS)
		return false;
	if (mark->max_drift_ms < 0 || mark->max_drift_ms > SNOWID_MAX_DRIFT_MS)
		return false;
	if (mark->datacenter_id < 0 ||
		mark->datacenter_id > SNOWID_FIELD_MAX(SNOWID_MAX_NODE_SEQ_BITS) ||
		mark->worker_id < -1 ||
		mark->worker_id > SNOWID_FIELD_MAX(SNOWID_MAX_NODE_SEQ_BITS))
		return false;
	return mark->high_water_ms >= 0 &&
		mark->high_water_ms <= SNOWID_MARK_MAX_MS;
}

/*
 * snowid_mark_write
 *		Durably replaces the mark.  Failures are reported at elevel; returns
 *		whether the new mark is on disk.
 */
bool
snowid_mark_write(const SnowidMark *mark, int elevel)
{
	const SnowidLayout *l = &mark->layout;
	char		line[256];

	snprintf(line, sizeof(line), SNOWID_MARK_FORMAT,
			 SNOWID_MARK_VERSION, (long long) l->epoch_ms,
			 l->timestamp_bits, l->datacenter_bits, l->worker_bits,
			 l->sequence_bits, (long long) mark->high_water_ms,
			 mark->max_drift_ms,
			 (unsigned long long) mark->system_identifier,
			 mark->datacenter_id, mark->worker_id,
			 (unsigned long long) mark->instance, mark->takeover ? 1 : 0);
	return snowid_write_line_file(SNOWID_MARK_FILE, line, elevel);
}

/*
 * snowid_write_line_file
 *		Durably replaces a small file of the data directory with the given
 *		text: written to "<path>.tmp", then renamed over path, so that a crash
 *		leaves the old or the new text.  Failures are reported at elevel;
 *		returns whether the new text is on disk.
 */
bool
snowid_write_line_file(const char *path, const char *line, int elevel)
{
	char		tmp[MAXPGPATH];
	int			len = strlen(line);
	int			fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
		return false;
	}
	errno = 0;
	if (write(fd, line, len) != len)
	{
		int			save_errno = errno ? errno : ENOSPC;

		CloseTransientFile(fd);
		errno = save_errno;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
		return false;
	}
	if (CloseTransientFile(fd) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
		return false;
	}

	/* fsyncs the new file, renames it, and fsyncs the directory */
	return durable_rename(tmp, path, elevel) == 0;
}

/*
 * snowid_mark_layout_matches
 *		Whether ids of the given layout and epoch continue those the mark was
 *		written for.
 */
bool
snowid_mark_layout_matches(const SnowidMark *mark, const SnowidLayout *layout)
{
	const SnowidLayout *m = &mark->layout;

	return m->epoch_ms == layout->epoch_ms &&
		m->timestamp_bits == layout->timestamp_bits &&
		m->datacenter_bits == layout->datacenter_bits &&
		m->worker_bits == layout->worker_bits &&
		m->sequence_bits == layout->sequence_bits;
}
