/*-------------------------------------------------------------------------
 *
 * conn.h
 *	  One call to the coordination database (conn.c): a libpq connection
 *	  made, one statement run and the connection closed, all within one
 *	  deadline, every wait on the latch so that a cancel, a terminate or
 *	  the postmaster's death ends it.
 *
 * A session lives in the caller's frame:
 *
 *		snowid_pg_begin(&session, ...);
 *		PG_TRY();
 *		{
 *			if (snowid_pg_connect(&session, target))
 *				res = snowid_pg_query(&session, sql, nparams, values);
 *		}
 *		PG_FINALLY();
 *		{
 *			snowid_pg_end(&session);
 *		}
 *
 * Host names are resolved by snowid within the deadline, cancellably
 * (util/resolve.h), all at once and within half of what is left of it, and
 * libpq is handed the addresses (hostaddr), so that its own lookup, which
 * nothing can interrupt, never runs; a name that does not resolve is left
 * out of the hosts libpq tries, like a host that does not answer.  A statement
 * still running when the session ends (the deadline passed,
 * or an interrupt) is cancelled: with a cancel request where libpq can
 * send one without blocking (libpq 17 and later), and in any case by the
 * statement_timeout that each session sets to what is left of its
 * deadline, so that the coordination server never keeps a lock for a
 * caller that has gone.
 *
 * A statement that ends with a WARNING (or worse) fails, though it
 * committed: the coordination server warns when a wait for its synchronous
 * standby was cancelled (by an administrator, or a statement_timeout), and
 * then what it committed may not be on the standby that takes over at its
 * failover.  The session keeps the first such message.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_PGCOORD_CONN_H
#define SNOWID_PGCOORD_CONN_H

#include "libpq-fe.h"

#include "coord/store.h"
#include "pgcoord/target.h"
#include "util/deadline.h"
#include "util/resolve.h"

/* The files of the URL that libpq is handed as descriptors (conn.c) */
#define SNOWID_PG_FILES			4

typedef struct SnowidPgSession
{
	PGconn	   *conn;
	bool		busy;			/* a statement was sent and has not ended */
	SnowidDeadline deadline;
	SnowidLookup *lookups[SNOWID_RESOLVE_MAX_HOSTS];	/* the host names'
														 * lookups under way,
														 * or NULL */
	SnowidStoreResult *result;	/* where a failure is described */
	bool		connected;		/* a connection was made */
	bool		password_asked; /* no connection: the server asked for a
								 * password, and none or a wrong one was
								 * given */
	char		sqlstate[6];	/* the server's error, or "" */
	bool		warned;			/* the server sent a WARNING or worse */
	char		warning[SNOWID_STORE_MESSAGE_LEN];	/* its first one */
	int			files[SNOWID_PG_FILES]; /* the URL's TLS files, opened and
										 * checked, or -1 */
	char		file_names[SNOWID_PG_FILES][32];	/* /dev/fd/N of each, for
													 * libpq */
} SnowidPgSession;

extern void snowid_pg_begin(SnowidPgSession *session,
							const SnowidStoreRequest *request,
							SnowidStoreResult *result);
extern bool snowid_pg_connect(SnowidPgSession *session,
							  const SnowidPgTarget *target);
extern PGresult *snowid_pg_query(SnowidPgSession *session, const char *sql,
								 int nparams, const char *const *values);
extern void snowid_pg_end(SnowidPgSession *session);

#endif							/* SNOWID_PGCOORD_CONN_H */
