/*-------------------------------------------------------------------------
 *
 * generator_mark.h
 *	  The generator and its high-water mark (generator_mark.c): the mark
 *	  read at start, takeovers, marks replayed from WAL, and advancing the
 *	  mark.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_GENERATOR_MARK_H
#define SNOWID_CORE_GENERATOR_MARK_H

#include "core/shared.h"

/* WAL replay hands each mark here (core/wal.h) */
extern void snowid_replay_mark(const SnowidMark *mark);

/* For the generator's other files */
extern int64 snowid_load_mark(SnowidShared *s);
extern void snowid_record_takeover(SnowidShared *s, int64 mark_ms);
extern uint64 snowid_new_instance(void);
extern void snowid_record_instance(SnowidShared *s, bool claim);
extern bool snowid_save_instance(SnowidShared *s);
extern void snowid_foreign_mark(const SnowidShared *s, SnowidMark *mark);
extern void snowid_mark_owner(const SnowidShared *s, bool takeover,
							  int worker_id, SnowidMark *mark);
extern void snowid_check_copy(SnowidShared *s);
extern char *snowid_layout_settings(const SnowidLayout *l);
extern int64 snowid_old_ids_bound(const SnowidShared *s);
extern void snowid_save_replayed_mark(SnowidShared *s);
extern void snowid_skip_after_takeover(SnowidShared *s);
extern int	snowid_takeover_drift_ms(const SnowidShared *s);
extern void snowid_advance_mark(int64 needed_ms, bool wait);


#endif							/* SNOWID_CORE_GENERATOR_MARK_H */
