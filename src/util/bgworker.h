/*-------------------------------------------------------------------------
 *
 * bgworker.h
 *	  The registration of snowid's background workers (bgworker.c): the
 *	  check-in and the lease renewer, each started once recovery has ended
 *	  and again a second after it exits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_UTIL_BGWORKER_H
#define SNOWID_UTIL_BGWORKER_H

extern void snowid_bgworker_register(const char *function_name,
									 const char *name, int flags);

#endif							/* SNOWID_UTIL_BGWORKER_H */
