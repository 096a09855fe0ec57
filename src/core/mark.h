/*-------------------------------------------------------------------------
 *
 * mark.h
 *	  The persisted high-water mark (mark.c): a file in the data directory
 *	  below which every id issued lies, and the one-line files it is
 *	  written like.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_MARK_H
#define SNOWID_CORE_MARK_H

#include "core/layout.h"

typedef struct SnowidMark
{
	SnowidLayout layout;		/* layout and epoch the mark was written with */
	int64		high_water_ms;	/* Unix ms: every id issued lies below it */
	int			max_drift_ms;	/* snowid.max_drift_ms of the server whose
								 * ids the mark covers; 0 if unknown */
	uint64		system_identifier;	/* of the cluster whose ids the mark
									 * covers; 0 if unknown (version 1 and
									 * 2 files, and WAL records) */
	int			datacenter_id;	/* and the datacenter and worker id those */
	int			worker_id;		/* ids carry; -1 if unknown */
	uint64		instance;		/* this data directory's instance: random,
								 * new whenever it may have become a copy
								 * (a takeover, another system identifier);
								 * 0 if unknown (versions 1 to 3) */
	bool		takeover;		/* started as a copy of another server and
								 * has not yet skipped past its ids */
} SnowidMark;

typedef enum SnowidMarkRead
{
	SNOWID_MARK_OK,
	SNOWID_MARK_MISSING,
	SNOWID_MARK_UNREADABLE,		/* the file is there but cannot be read */
	SNOWID_MARK_CORRUPT
} SnowidMarkRead;

extern SnowidMarkRead snowid_mark_read(SnowidMark *mark);
extern bool snowid_mark_valid(const SnowidMark *mark);
extern bool snowid_mark_write(const SnowidMark *mark, int elevel);
extern bool snowid_mark_layout_matches(const SnowidMark *mark,
									   const SnowidLayout *layout);
extern bool snowid_write_line_file(const char *path, const char *line,
								   int elevel);

#define SNOWID_MARK_FILE		"snowid_state"

/* The largest snowid.max_drift_ms, one hour, and its default */
#define SNOWID_MAX_DRIFT_MS		3600000
#define SNOWID_MAX_DRIFT_DEFAULT_MS	1000

/* The largest snowid.max_wait_ms, one hour */
#define SNOWID_MAX_WAIT_MS		3600000

/* The longest snowid.worker_lease, one day */
#define SNOWID_MAX_LEASE_MS		86400000

/*
 * How far past this server's clock a fence read from the coordinator may lie: the
 * farthest any snowid server writes one (its clock plus the largest drift
 * budget and the longest lease), plus a day by which its clock may run
 * ahead of this one's.  Anything farther was not written by snowid.
 */
#define SNOWID_FENCE_SLACK_MS \
	(SNOWID_MAX_DRIFT_MS + SNOWID_MAX_LEASE_MS + INT64CONST(86400000))

#endif							/* SNOWID_CORE_MARK_H */
