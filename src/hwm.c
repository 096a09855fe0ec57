/*-------------------------------------------------------------------------
 *
 * hwm.c
 *	  The persisted high-water mark: a small file in the data directory that
 *	  says below which millisecond every id issued so far lies, together with
 *	  the layout and epoch those ids were made with.
 *
 * The file is one line of text, so that an operator can read it:
 *
 *		snowid 1 epoch_ms=1288834974657 layout=41/5/5/12 high_water_ms=...
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

#include "snowid.h"

#define SNOWID_MARK_VERSION		1
#define SNOWID_MARK_FORMAT \
	"snowid %d epoch_ms=%lld layout=%d/%d/%d/%d high_water_ms=%lld\n"

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
		return SNOWID_MARK_CORRUPT;
	}

	ok = fgets(line, sizeof(line), file) != NULL &&
		sscanf(line, SNOWID_MARK_FORMAT, &version, &epoch_ms,
			   &l->timestamp_bits, &l->datacenter_bits, &l->worker_bits,
			   &l->sequence_bits, &high_water_ms) == 7 &&
		version == SNOWID_MARK_VERSION &&
		epoch_ms >= 0 && high_water_ms >= 0;
	FreeFile(file);

	if (!ok)
	{
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid high-water mark file \"%s\" is corrupt",
						SNOWID_MARK_FILE)));
		return SNOWID_MARK_CORRUPT;
	}

	l->epoch_ms = (int64) epoch_ms;
	mark->high_water_ms = (int64) high_water_ms;
	return SNOWID_MARK_OK;
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
			 l->sequence_bits, (long long) mark->high_water_ms);
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
