/*-------------------------------------------------------------------------
 *
 * conn.c
 *	  A call to the coordination database with libpq: connecting, one
 *	  statement, and closing, under one deadline, as PostgreSQL's own
 *	  postgres_fdw and dblink wait: on the latch and the socket together,
 *	  so that a cancel or a terminate ends the wait at once (the caller's
 *	  PG_FINALLY closes the connection), and a statement left running is
 *	  cancelled.  See conn.h.  No lock is held while waiting.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "pgcoord/conn.h"
#include "util/secret_file.h"

/* How long a cancel request of a statement left running may take */
#define SNOWID_PG_CANCEL_MS		1000

/*
 * libpq's parameters that name a file it opens by name during the
 * handshake: snowid opens each first, checks on the descriptor that it is a
 * regular file (a FIFO would block libpq's open for good, deaf to a
 * cancel), and hands libpq /dev/fd/N of that descriptor, so that the file
 * checked is the one read.  (sslkey's mode libpq checks itself.)
 */
static const char *const snowid_pg_file_keywords[SNOWID_PG_FILES] = {
	"sslrootcert", "sslcrl", "sslcert", "sslkey"
};

/* The hosts libpq is to try: lists as its host, port and hostaddr take */
typedef struct SnowidPgHosts
{
	bool		named;			/* a name was resolved: pass these to libpq */
	StringInfoData host;
	StringInfoData port;		/* "" for the URL's, or none */
	StringInfoData hostaddr;
} SnowidPgHosts;

static bool snowid_pg_hosts(SnowidPgSession *session,
							const SnowidPgTarget *target,
							SnowidPgHosts *hosts);
static bool snowid_pg_files(SnowidPgSession *session,
							const SnowidPgTarget *target,
							const char **keywords, const char **values,
							int *n);
static bool snowid_pg_wait(SnowidPgSession *session, pgsocket sock,
						   int events);
static bool snowid_pg_fail(SnowidPgSession *session, SnowidStoreStatus status,
						   const char *what);
static void snowid_pg_cancel(SnowidPgSession *session);
static void snowid_pg_notice(void *arg, const PGresult *res);

/*
 * snowid_pg_begin
 *		Starts a session: its deadline runs from now.
 */
void
snowid_pg_begin(SnowidPgSession *session, const SnowidStoreRequest *request,
				SnowidStoreResult *result)
{
	memset(session, 0, sizeof(*session));
	for (int i = 0; i < SNOWID_PG_FILES; i++)
		session->files[i] = -1;
	snowid_deadline_start(&session->deadline, request->timeout_ms,
						  request->wait_event_info);
	session->result = result;
}

/*
 * snowid_pg_connect
 *		Connects, then bounds every statement and lock wait of the session
 *		on the server by what is left of the deadline.  False, with the
 *		result saying why, if that fails.
 */
bool
snowid_pg_connect(SnowidPgSession *session, const SnowidPgTarget *target)
{
	const char *keywords[7 + SNOWID_PG_FILES] = {
		"dbname", "fallback_application_name", "client_encoding"
	};
	const char *values[7 + SNOWID_PG_FILES] = {target->url, "snowid", "UTF8"};
	SnowidPgHosts hosts;
	int			n = 3;
	char		sql[320];
	PGresult   *res;
	long		left;

	if (!snowid_pg_hosts(session, target, &hosts))
		return false;
	if (hosts.named)
	{
		/* the hosts kept, each with its address: libpq resolves nothing */
		keywords[n] = "host";
		values[n++] = hosts.host.data;
		keywords[n] = "hostaddr";
		values[n++] = hosts.hostaddr.data;
		if (hosts.port.len > 0)
		{
			keywords[n] = "port";
			values[n++] = hosts.port.data;
		}
	}
	if (!snowid_pg_files(session, target, keywords, values, &n))
		return false;
	keywords[n] = NULL;
	values[n] = NULL;
	session->conn = PQconnectStartParams(keywords, values, 1);
	pfree(hosts.host.data);
	pfree(hosts.port.data);
	pfree(hosts.hostaddr.data);
	if (session->conn == NULL)
		return snowid_pg_fail(session, SNOWID_STORE_FAILED,
							  "libpq could not allocate a connection.");
	if (PQstatus(session->conn) == CONNECTION_BAD)
		return snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE, NULL);
	PQsetNoticeReceiver(session->conn, snowid_pg_notice, session);

	for (;;)
	{
		PostgresPollingStatusType poll = PQconnectPoll(session->conn);

		if (poll == PGRES_POLLING_OK)
		{
			session->connected = true;
			break;
		}
		if (poll == PGRES_POLLING_FAILED)
		{
			session->password_asked = PQconnectionUsedPassword(session->conn);
			return snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE, NULL);
		}
		if (!snowid_pg_wait(session, PQsocket(session->conn),
							poll == PGRES_POLLING_READING ?
							WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE))
			return false;
	}

	/*
	 * A lock wait ends first, with its own SQLSTATE (55P03), so that a
	 * datacenter locked by another session is told from a slow server.  The
	 * transactions' defaults are this session's own: the fleet's role may
	 * set its own defaults (ALTER ROLE CURRENT_USER SET), and a serializable
	 * or read-only default would fail every call of every server.
	 */
	left = Max(snowid_deadline_remaining(&session->deadline), 1);
	snprintf(sql, sizeof(sql),
			 "SET statement_timeout = %ld; SET lock_timeout = %ld; "
			 "SET default_transaction_isolation = 'read committed'; "
			 "SET default_transaction_read_only = off; "
			 "SET default_transaction_deferrable = off", left,
			 Max(left - left / 4, 1));
	res = snowid_pg_query(session, sql, 0, NULL);
	if (res == NULL)
		return false;
	PQclear(res);
	return true;
}

/*
 * snowid_pg_query
 *		Runs one statement (with parameters, or several without) and
 *		returns the last result, which the caller PQclear()s; NULL, with
 *		the session's result saying why, if it failed.  Replies of a
 *		coordination database that is not a primary are failures the store
 *		cannot pass (UNREACHABLE: try again, as during a failover).  A
 *		statement during which the server sent a WARNING or worse fails too
 *		(FAILED, session->warned), whatever it returned: see conn.h.
 */
PGresult *
snowid_pg_query(SnowidPgSession *session, const char *sql, int nparams,
				const char *const *values)
{
	PGconn	   *conn = session->conn;
	PGresult   *last = NULL;
	PGresult   *res;
	int			sent;

	sent = nparams > 0 ?
		PQsendQueryParams(conn, sql, nparams, NULL, values, NULL, NULL, 0) :
		PQsendQuery(conn, sql);
	if (!sent)
	{
		snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE, NULL);
		return NULL;
	}
	session->busy = true;

	/* send it all, reading meanwhile so that the server is never blocked */
	for (;;)
	{
		int			flushed = PQflush(conn);

		if (flushed == 0)
			break;
		if (flushed < 0 ||
			!snowid_pg_wait(session, PQsocket(conn),
							WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
			goto failed;
		if (!PQconsumeInput(conn))
			goto failed;
	}

	/* every result, until the statement has ended */
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!snowid_pg_wait(session, PQsocket(conn), WL_SOCKET_READABLE))
				goto failed_quietly;
			if (!PQconsumeInput(conn))
				goto failed;
		}
		res = PQgetResult(conn);
		if (res == NULL)
			break;
		if (last != NULL)
			PQclear(last);
		last = res;
	}
	session->busy = false;

	if (last == NULL)
	{
		snowid_pg_fail(session, SNOWID_STORE_FAILED,
					   "The coordination database sent no result.");
		return NULL;
	}
	if (PQresultStatus(last) != PGRES_COMMAND_OK &&
		PQresultStatus(last) != PGRES_TUPLES_OK)
	{
		const char *sqlstate = PQresultErrorField(last, PG_DIAG_SQLSTATE);
		const char *message = PQresultErrorField(last,
												 PG_DIAG_MESSAGE_PRIMARY);
		char		text[SNOWID_STORE_MESSAGE_LEN];
		SnowidStoreStatus status = SNOWID_STORE_FAILED;

		if (sqlstate != NULL)
			strlcpy(session->sqlstate, sqlstate, sizeof(session->sqlstate));
		/* read-only (a standby), shutting down, or cancelled: try again */
		if (sqlstate != NULL &&
			(strcmp(sqlstate, "25006") == 0 ||
			 strncmp(sqlstate, "57P", 3) == 0 ||
			 strcmp(sqlstate, "57014") == 0 ||
			 strcmp(sqlstate, "55P03") == 0 ||
			 strncmp(sqlstate, "08", 2) == 0))
			status = SNOWID_STORE_UNREACHABLE;
		snprintf(text, sizeof(text), "The coordination database answered: %s (SQLSTATE %s).",
				 message != NULL ? message : "an error",
				 sqlstate != NULL ? sqlstate : "none");
		PQclear(last);
		snowid_pg_fail(session, status, text);
		return NULL;
	}
	if (session->warned)
	{
		char		text[SNOWID_STORE_MESSAGE_LEN];

		snprintf(text, sizeof(text), "The coordination database answered with WARNING: %s",
				 session->warning);
		PQclear(last);
		snowid_pg_fail(session, SNOWID_STORE_FAILED, text);
		return NULL;
	}
	return last;

failed:
	if (last != NULL)
		PQclear(last);
	snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE, NULL);
	return NULL;

failed_quietly:
	if (last != NULL)
		PQclear(last);
	return NULL;
}

/*
 * snowid_pg_end
 *		Ends the session: a statement still running is cancelled, and the
 *		connection closed.  Safe to call at any point, and more than once;
 *		runs in error cleanup, so it never ereports.
 */
void
snowid_pg_end(SnowidPgSession *session)
{
	for (int i = 0; i < SNOWID_RESOLVE_MAX_HOSTS; i++)
	{
		snowid_lookup_end(session->lookups[i]);
		session->lookups[i] = NULL;
	}
	for (int i = 0; i < SNOWID_PG_FILES; i++)
	{
		if (session->files[i] >= 0)
			close(session->files[i]);
		session->files[i] = -1;
	}
	session->result->elapsed_ms = snowid_deadline_elapsed(&session->deadline);
	if (session->conn == NULL)
		return;
	if (session->busy)
		snowid_pg_cancel(session);
	PQfinish(session->conn);
	session->conn = NULL;
	session->busy = false;
}

/*
 * snowid_pg_hosts
 *		The URL's hosts as libpq is to try them, in lists as its host, port
 *		and hostaddr take them (SnowidPgHosts): each name resolved within
 *		the deadline, all at once, and kept once for each of its addresses,
 *		so that libpq tries every one as it would have itself; a name that
 *		has no address, or none within half of what is left of the
 *		deadline, left out like a host that does not answer, so that the
 *		others are still tried.  An address, a socket directory or an empty
 *		entry is kept, its hostaddr left empty for libpq.  hosts->named is
 *		false if there is no name to resolve, or the URL gives hostaddr
 *		itself, or ports that do not match its hosts: then libpq takes the
 *		URL's own (and says what is wrong with them).  False, with the result
 *		saying why, if no host is left.
 */
static bool
snowid_pg_hosts(SnowidPgSession *session, const SnowidPgTarget *target,
				SnowidPgHosts *hosts)
{
	PQconninfoOption *options = PQconninfoParse(target->url, NULL);
	const char *host_list = NULL;
	const char *port_list = NULL;
	char		names[SNOWID_RESOLVE_MAX_HOSTS][SNOWID_RESOLVE_HOST_LEN];
	const char *ports[SNOWID_RESOLVE_MAX_HOSTS];
	const char *lookup_names[SNOWID_RESOLVE_MAX_HOSTS];
	int			lookup_of[SNOWID_RESOLVE_MAX_HOSTS];
	int			errors[SNOWID_RESOLVE_MAX_HOSTS];
	int			nports = 0;
	int			count = 0;
	int			lookups = 0;
	int			kept = 0;
	int			first_failed = -1;
	bool		given = false;

	hosts->named = false;
	initStringInfo(&hosts->host);
	initStringInfo(&hosts->port);
	initStringInfo(&hosts->hostaddr);
	if (options == NULL)
		return true;			/* libpq says why when it connects */
	for (PQconninfoOption *o = options; o->keyword != NULL; o++)
	{
		if (strcmp(o->keyword, "host") == 0 && o->val != NULL)
			host_list = o->val;
		if (strcmp(o->keyword, "port") == 0 && o->val != NULL)
			port_list = o->val;
		if (strcmp(o->keyword, "hostaddr") == 0 && o->val != NULL &&
			o->val[0] != '\0')
			given = true;
	}
	for (const char *p = host_list; !given && p != NULL; count++)
	{
		size_t		n = strcspn(p, ",");

		if (count == SNOWID_RESOLVE_MAX_HOSTS)
		{
			PQconninfoFree(options);
			return snowid_pg_fail(session, SNOWID_STORE_FAILED,
								  "The URL names more than 16 hosts.");
		}
		snprintf(names[count], sizeof(names[count]), "%.*s", (int) n, p);
		lookup_of[count] = -1;
		if (names[count][0] != '\0' && names[count][0] != '/' &&
			names[count][0] != '@' && !snowid_host_is_address(names[count]))
		{
			lookup_of[count] = lookups;
			lookup_names[lookups++] = names[count];
		}
		p = p[n] == ',' ? p + n + 1 : NULL;
	}
	for (const char *p = port_list; p != NULL; nports++)
	{
		size_t		n = strcspn(p, ",");

		if (nports < SNOWID_RESOLVE_MAX_HOSTS)
			ports[nports] = p;
		p = p[n] == ',' ? p + n + 1 : NULL;
	}
	if (lookups == 0 || (nports > 1 && nports != count))
	{
		PQconninfoFree(options);
		return true;
	}
	hosts->named = true;

	snowid_resolve_all(lookup_names, lookups, &session->deadline,
					   snowid_deadline_remaining(&session->deadline) / 2,
					   session->lookups, errors);

	/* the lists of the hosts kept, in the URL's order */
	for (int i = 0; i < count; i++)
	{
		int			l = lookup_of[i];
		int			addresses = l >= 0 && errors[l] == 0 ?
			snowid_lookup_count(session->lookups[l]) : 1;

		for (int a = 0; a < addresses; a++)
		{
			char		address[SNOWID_RESOLVE_ADDRESS_LEN] = "";

			if (l >= 0 && errors[l] != 0)
			{
				if (first_failed < 0)
					first_failed = i;
				continue;
			}
			if (l >= 0 &&
				!snowid_lookup_address(session->lookups[l], a, address,
									   sizeof(address)))
				continue;
			if (kept++ > 0)
			{
				appendStringInfoChar(&hosts->host, ',');
				appendStringInfoChar(&hosts->hostaddr, ',');
				if (nports > 1)
					appendStringInfoChar(&hosts->port, ',');
			}
			appendStringInfoString(&hosts->host, names[i]);
			appendStringInfoString(&hosts->hostaddr, address);
			/* one port for each host: the i-th, for each of its addresses */
			if (nports > 1)
				appendBinaryStringInfo(&hosts->port, ports[i],
									   strcspn(ports[i], ","));
		}
	}
	if (nports == 1)
		appendStringInfoString(&hosts->port, port_list);
	for (int i = 0; i < lookups; i++)
	{
		snowid_lookup_end(session->lookups[i]);
		session->lookups[i] = NULL;
	}
	PQconninfoFree(options);

	if (kept == 0)
	{
		char		text[SNOWID_STORE_MESSAGE_LEN];

		if (first_failed < 0)
			return snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE,
								  "The host names have no address to connect to.");
		snowid_resolve_problem(text, sizeof(text), names[first_failed],
							   errors[lookup_of[first_failed]],
							   "snowid.coordinator_timeout_ms",
							   session->deadline.timeout_ms);
		return snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE, text);
	}
	return true;
}

/*
 * snowid_pg_files
 *		Opens the files the URL names for libpq to read during the handshake
 *		(snowid_pg_file_keywords), each checked on its descriptor to be a
 *		regular file, and adds /dev/fd/N of each to keywords and values
 *		after *n, which it advances; the session keeps the descriptors until
 *		it ends.  False, with the result saying why, if one is not a regular
 *		file or cannot be opened.
 */
static bool
snowid_pg_files(SnowidPgSession *session, const SnowidPgTarget *target,
				const char **keywords, const char **values, int *n)
{
	PQconninfoOption *options = PQconninfoParse(target->url, NULL);
	bool		ok = true;

	if (options == NULL)
		return true;			/* libpq says why when it connects */
	for (PQconninfoOption *o = options; ok && o->keyword != NULL; o++)
	{
		for (int i = 0; i < SNOWID_PG_FILES; i++)
		{
			char		problem[SNOWID_SECRET_PROBLEM_LEN];
			char		text[SNOWID_STORE_MESSAGE_LEN];
			struct stat st;

			if (strcmp(o->keyword, snowid_pg_file_keywords[i]) != 0 ||
				o->val == NULL || o->val[0] == '\0' ||
				strcmp(o->val, "system") == 0)
				continue;
			session->files[i] = snowid_file_open(o->val, &st, problem,
												 sizeof(problem));
			if (session->files[i] < 0)
			{
				snprintf(text, sizeof(text), "The file named by the URL's %s: %s",
						 o->keyword, problem);
				ok = snowid_pg_fail(session, SNOWID_STORE_FAILED, text);
				break;
			}
			snprintf(session->file_names[i], sizeof(session->file_names[i]),
					 "/dev/fd/%d", session->files[i]);
			keywords[*n] = snowid_pg_file_keywords[i];
			values[*n] = session->file_names[i];
			(*n)++;
		}
	}
	PQconninfoFree(options);
	return ok;
}

/*
 * snowid_pg_wait
 *		Waits for sock to be ready for events, or the latch.  An interrupt
 *		(a cancel, a terminate) is served at once and ereports, so the
 *		caller's PG_FINALLY ends the session.  False, with the result
 *		saying so, when the deadline passes first.
 */
static bool
snowid_pg_wait(SnowidPgSession *session, pgsocket sock, int events)
{
	char		text[SNOWID_STORE_MESSAGE_LEN];

	if (snowid_deadline_wait_socket(&session->deadline, sock, events))
		return true;
	snprintf(text, sizeof(text),
			 "The coordination database did not answer within %d ms.",
			 session->deadline.timeout_ms);
	return snowid_pg_fail(session, SNOWID_STORE_UNREACHABLE, text);
}

/*
 * snowid_pg_fail
 *		Says in the session's result why a call failed: what, or libpq's
 *		message (its first line: libpq never quotes a password).  Returns
 *		false.
 */
static bool
snowid_pg_fail(SnowidPgSession *session, SnowidStoreStatus status,
			   const char *what)
{
	SnowidStoreResult *result = session->result;

	result->status = status;
	if (what != NULL)
		strlcpy(result->message, what, sizeof(result->message));
	else
	{
		const char *error = session->conn != NULL ?
			PQerrorMessage(session->conn) : "";
		size_t		len = strcspn(error, "\n");

		if (len == 0)
			strlcpy(result->message, "libpq gave no reason.",
					sizeof(result->message));
		else
			snprintf(result->message, sizeof(result->message), "%.*s.",
					 (int) Min(len, sizeof(result->message) - 2), error);
	}
	return false;
}

/*
 * snowid_pg_cancel
 *		Asks the server to cancel the statement that the session left
 *		running, within SNOWID_PG_CANCEL_MS.  With a libpq older than 17,
 *		whose cancel request blocks, sends none: the session's
 *		statement_timeout ends the statement by the deadline.  Never
 *		ereports, never serves an interrupt (it runs in error cleanup).
 */
static void
snowid_pg_cancel(SnowidPgSession *session)
{
#ifdef LIBPQ_HAS_ASYNC_CANCEL
	PGcancelConn *cancel = PQcancelCreate(session->conn);
	instr_time	start;

	if (cancel == NULL)
		return;
	INSTR_TIME_SET_CURRENT(start);
	if (PQcancelStart(cancel))
	{
		for (;;)
		{
			PostgresPollingStatusType poll = PQcancelPoll(cancel);
			instr_time	now;
			long		left;
			int			events;

			if (poll == PGRES_POLLING_OK || poll == PGRES_POLLING_FAILED)
				break;
			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			left = SNOWID_PG_CANCEL_MS - (long) INSTR_TIME_GET_MILLISEC(now);
			if (left <= 0)
				break;
			events = poll == PGRES_POLLING_READING ?
				WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;
			(void) WaitLatchOrSocket(NULL, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH |
									 events, PQcancelSocket(cancel), left,
									 session->deadline.wait_event_info);
		}
	}
	PQcancelFinish(cancel);
#endif
}

/*
 * snowid_pg_notice
 *		libpq's notice receiver of a session: a WARNING or worse marks the
 *		session as warned and keeps the first one's message and detail.
 *		Runs inside libpq: copies into the session only, never ereports.
 */
static void
snowid_pg_notice(void *arg, const PGresult *res)
{
	SnowidPgSession *session = (SnowidPgSession *) arg;
	const char *severity = PQresultErrorField(res,
											  PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

	/* a server before 9.6 sends only the localized severity */
	if (severity == NULL)
		severity = PQresultErrorField(res, PG_DIAG_SEVERITY);
	if (severity == NULL ||
		(strcmp(severity, "WARNING") != 0 && strcmp(severity, "ERROR") != 0 &&
		 strcmp(severity, "FATAL") != 0 && strcmp(severity, "PANIC") != 0))
		return;
	if (session->warned)
		return;
	session->warned = true;
	snprintf(session->warning, sizeof(session->warning), "%s.%s%s",
			 message != NULL ? message : "no message",
			 detail != NULL ? " " : "", detail != NULL ? detail : "");
}
