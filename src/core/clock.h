/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The two clocks snowid reads (clock.c): the wall clock in Unix ms,
 *	  and a clock that never steps, to measure waits and schedule with.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_CLOCK_H
#define SNOWID_CORE_CLOCK_H

extern int64 snowid_unix_ms(void);
extern int64 snowid_monotonic_ms(void);

#endif							/* SNOWID_CORE_CLOCK_H */
