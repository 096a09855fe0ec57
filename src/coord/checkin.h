/*-------------------------------------------------------------------------
 *
 * checkin.h
 *	  The forgetting rule, the holder's side (checkin.c): the snowid
 *	  check-in worker that re-asserts a permanent claim, and the fence below
 *	  which the holder issues until its next check-in.  The store's side
 *	  is coord/store.h; a claim refused in a quiet period, coord/quiet.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_CHECKIN_H
#define SNOWID_COORD_CHECKIN_H

extern void snowid_checkin_register(void);
extern int64 snowid_checkin_fence(int64 from_ms);

#endif							/* SNOWID_COORD_CHECKIN_H */
