/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The two clocks snowid reads (clock.c): the wall clock in Unix ms,
 *	  also in a quick form for the millisecond of every id, and a clock that
 *	  never steps, to measure waits and schedule with.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_CLOCK_H
#define SNOWID_CORE_CLOCK_H

extern int64 snowid_unix_ms(void);
extern int64 snowid_unix_ms_quick(void);
extern int64 snowid_monotonic_ms(void);
extern void snowid_clock_calibrate(void);

#endif							/* SNOWID_CORE_CLOCK_H */
