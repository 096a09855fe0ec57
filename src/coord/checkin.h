/*-------------------------------------------------------------------------
 *
 * checkin.h
 *	  The forgetting rule, the holder's side (checkin.c): the snowid
 *	  check-in worker that re-asserts a permanent claim (the fence below
 *	  which the holder issues until its next check-in is coord/request.h's
 *	  snowid_checkin_fence()).  The store's side
 *	  is coord/store.h; a claim refused in a quiet period, coord/quiet.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_CHECKIN_H
#define SNOWID_COORD_CHECKIN_H

extern void snowid_checkin_register(void);

#endif							/* SNOWID_COORD_CHECKIN_H */
