/*-------------------------------------------------------------------------
 *
 * bgworker.h
 *	  snowid's background workers (bgworker.c): registering the check-in or
 *	  the lease renewer, each started once recovery has ended and again a
 *	  second after it ends for any reason but a shutdown of the server;
 *	  whether the postmaster registered it; its signals and its exit; and
 *	  what shared memory knows of it (whether it runs, how often it was
 *	  started again), for snowid_status() and for a caller that needs it
 *	  now.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_UTIL_BGWORKER_H
#define SNOWID_UTIL_BGWORKER_H

extern void snowid_bgworker_register(const char *function_name,
									 const char *name, int flags);
extern const char *snowid_bgworker_missing(void);

extern Size snowid_bgworker_shmem_size(void);
extern void snowid_bgworker_shmem_init(void);

/* In the worker */
extern void snowid_bgworker_begin(void);
extern bool snowid_bgworker_stopping(void);
extern bool snowid_bgworker_at_shutdown(void);
extern void snowid_bgworker_exit(void);

/* In any process */
extern void snowid_bgworker_wake(void);
extern void snowid_bgworker_status(int *pid, int64 *restarts);

#endif							/* SNOWID_UTIL_BGWORKER_H */
