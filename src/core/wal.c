/*-------------------------------------------------------------------------
 *
 * wal.c
 *	  The high-water mark in WAL: snowid's own WAL resource manager, the
 *	  record a primary writes each time it moves its mark, and its replay
 *	  on standbys and in recovery.
 *
 * A primary writes the mark file first, then this record, and flushes it,
 * all before it issues an id at or past the old mark (generator.c,
 * snowid_advance_mark()).  Every later WAL record, among them those of
 * rows that store such ids, comes after it in WAL; so a server that has
 * replayed a row has also replayed a mark above the row's id, whatever the
 * clocks say.  Replay (snowid_redo()) hands the mark to the generator,
 * which keeps the largest and writes it to the mark file.
 *
 * No state and no locks of its own.  The resource manager must be
 * registered while shared_preload_libraries is loaded, on every server
 * that replays this WAL; PostgreSQL stops replay at the first record of an
 * unregistered one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "core/wal.h"

/*
 * The record types, in the rmgr's info bits: a mark, and (since 1.3) a mark
 * that names the node whose ids it covers.  Both are shown as MARK.
 */
#define XLOG_SNOWID_MARK		0x00
#define XLOG_SNOWID_MARK_NODE	0x10

/*
 * The record: a mark as the mark file holds it, without the takeover flag
 * (which belongs to the server that writes its file, not to its WAL) and
 * the instance (which belongs to the data directory), and for
 * XLOG_SNOWID_MARK_NODE with the datacenter and worker id of the writer,
 * so that a copy made from this WAL knows which worker id its origin
 * issued under.
 */
typedef struct SnowidMarkRecord
{
	int64		high_water_ms;	/* Unix ms: every id issued lies below it */
	int64		epoch_ms;		/* the layout's epoch, Unix ms */
	int32		max_drift_ms;	/* the writer's snowid.max_drift_ms */
	uint8		timestamp_bits;
	uint8		datacenter_bits;
	uint8		worker_bits;
	uint8		sequence_bits;
} SnowidMarkRecord;

typedef struct SnowidMarkNodeRecord
{
	SnowidMarkRecord mark;
	int32		datacenter_id;
	int32		worker_id;		/* -1 if unknown */
} SnowidMarkNodeRecord;

static void snowid_redo(XLogReaderState *record);
static void snowid_desc(StringInfo buf, XLogReaderState *record);
static const char *snowid_identify(uint8 info);
static bool snowid_record_mark(XLogReaderState *record, SnowidMark *mark);

static RmgrData snowid_rmgr = {
	.rm_name = SNOWID_RMGR_NAME,
	.rm_redo = snowid_redo,
	.rm_desc = snowid_desc,
	.rm_identify = snowid_identify
};

/* What replay does with a mark (the generator's, installed at start) */
static SnowidReplayMark snowid_replay = NULL;

/*
 * snowid_wal_register
 *		Registers the resource manager, whose replay hands each mark to
 *		replay; only while preloading.
 */
void
snowid_wal_register(SnowidReplayMark replay)
{
	snowid_replay = replay;
	RegisterCustomRmgr(SNOWID_RMGR_ID, &snowid_rmgr);
}

/*
 * snowid_wal_log_mark
 *		Writes a mark to WAL and flushes it, so that it is durable and may
 *		be streamed before the caller issues any id under it.  Needs no
 *		transaction; the caller is a backend of a primary.
 */
void
snowid_wal_log_mark(const SnowidMark *mark)
{
	SnowidMarkNodeRecord rec;
	XLogRecPtr	lsn;

	memset(&rec, 0, sizeof(rec));
	rec.mark.high_water_ms = mark->high_water_ms;
	rec.mark.epoch_ms = mark->layout.epoch_ms;
	rec.mark.max_drift_ms = mark->max_drift_ms;
	rec.mark.timestamp_bits = (uint8) mark->layout.timestamp_bits;
	rec.mark.datacenter_bits = (uint8) mark->layout.datacenter_bits;
	rec.mark.worker_bits = (uint8) mark->layout.worker_bits;
	rec.mark.sequence_bits = (uint8) mark->layout.sequence_bits;
	rec.datacenter_id = mark->datacenter_id;
	rec.worker_id = mark->worker_id;

	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	lsn = XLogInsert(SNOWID_RMGR_ID, XLOG_SNOWID_MARK_NODE);
	XLogFlush(lsn);
}

/*
 * snowid_record_mark
 *		The mark a record carries; false if it is not a mark record of
 *		this version of snowid, or carries values no mark can have.
 */
static bool
snowid_record_mark(XLogReaderState *record, SnowidMark *mark)
{
	SnowidMarkNodeRecord rec;
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	size_t		len = XLogRecGetDataLen(record);

	if (!(info == XLOG_SNOWID_MARK && len == sizeof(SnowidMarkRecord)) &&
		!(info == XLOG_SNOWID_MARK_NODE && len == sizeof(SnowidMarkNodeRecord)))
		return false;

	/* the data need not be aligned for an int64 */
	memset(&rec, 0, sizeof(rec));
	memcpy(&rec, XLogRecGetData(record), len);
	if (info == XLOG_SNOWID_MARK)
		rec.worker_id = -1;
	mark->high_water_ms = rec.mark.high_water_ms;
	mark->layout.epoch_ms = rec.mark.epoch_ms;
	mark->layout.timestamp_bits = rec.mark.timestamp_bits;
	mark->layout.datacenter_bits = rec.mark.datacenter_bits;
	mark->layout.worker_bits = rec.mark.worker_bits;
	mark->layout.sequence_bits = rec.mark.sequence_bits;
	mark->max_drift_ms = rec.mark.max_drift_ms;
	mark->system_identifier = 0;	/* the replaying cluster's own */
	mark->datacenter_id = rec.datacenter_id;
	mark->worker_id = rec.worker_id;
	mark->instance = 0;
	mark->takeover = false;
	return snowid_mark_valid(mark);
}

/*
 * snowid_redo
 *		Replays a mark record, in the startup process.  A record this
 *		version cannot read stops replay: skipping it could let the server
 *		repeat ids once promoted.
 */
static void
snowid_redo(XLogReaderState *record)
{
	SnowidMark	mark;

	if (!snowid_record_mark(record, &mark))
		ereport(FATAL,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid cannot replay WAL record with info %u and %u bytes of data",
						(unsigned int) (XLogRecGetInfo(record) & ~XLR_INFO_MASK),
						(unsigned int) XLogRecGetDataLen(record)),
				 errdetail("The record is not a high-water mark this version of snowid wrote."),
				 errhint("Install the snowid version of the server that wrote the WAL.")));
	snowid_replay(&mark);
}

/*
 * snowid_desc
 *		The record's contents as the mark file shows them, for pg_walinspect
 *		and the context of redo messages.
 */
static void
snowid_desc(StringInfo buf, XLogReaderState *record)
{
	SnowidMark	mark;

	if (!snowid_record_mark(record, &mark))
	{
		appendStringInfoString(buf, "unreadable");
		return;
	}
	appendStringInfo(buf,
					 "high_water_ms=%lld epoch_ms=%lld layout=%d/%d/%d/%d max_drift_ms=%d",
					 (long long) mark.high_water_ms,
					 (long long) mark.layout.epoch_ms,
					 mark.layout.timestamp_bits, mark.layout.datacenter_bits,
					 mark.layout.worker_bits, mark.layout.sequence_bits,
					 mark.max_drift_ms);
	if (mark.worker_id >= 0)
		appendStringInfo(buf, " node=%d/%d", mark.datacenter_id,
						 mark.worker_id);
}

/*
 * snowid_identify
 *		The name of a record type.
 */
static const char *
snowid_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_SNOWID_MARK ||
		(info & ~XLR_INFO_MASK) == XLOG_SNOWID_MARK_NODE)
		return "MARK";
	return NULL;
}
