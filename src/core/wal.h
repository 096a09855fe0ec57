/*-------------------------------------------------------------------------
 *
 * wal.h
 *	  The high-water mark in WAL, through a resource manager of its own
 *	  (wal.c).  Its id is one PostgreSQL leaves to extensions (128 to 255),
 *	  chosen off the list at
 *	  https://wiki.postgresql.org/wiki/CustomWALResourceManagers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_WAL_H
#define SNOWID_CORE_WAL_H

#include "core/mark.h"

#define SNOWID_RMGR_ID			219
#define SNOWID_RMGR_NAME		"snowid"

/* What replay does with a mark it reads */
typedef void (*SnowidReplayMark) (const SnowidMark *mark);

extern void snowid_wal_register(SnowidReplayMark replay);
extern void snowid_wal_log_mark(const SnowidMark *mark);

#endif							/* SNOWID_CORE_WAL_H */
