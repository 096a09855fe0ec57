/*-------------------------------------------------------------------------
 *
 * resolve.c
 *	  A coordinator's host name resolved to its addresses within the
 *	  deadline of the call: the lookup runs in glibc's getaddrinfo_a()
 *	  while the backend waits on its latch, checking for interrupts, and
 *	  is given up at the deadline or at a cancel.
 *
 * The system's resolver (getaddrinfo(): /etc/hosts, DNS, whatever
 * nsswitch.conf names) cannot be interrupted, and waits for a name server
 * as long as resolv.conf lets it (5 s x 2 tries per server by default).
 * getaddrinfo_a() runs it in a helper thread of glibc's, and this file
 * polls for its end in naps of at most SNOWID_LOOKUP_NAP_MS.  A name is
 * looked up as libpq and most clients do it: its IPv4 and IPv6 addresses
 * at once (AF_UNSPEC), in the order the system sorts them (RFC 6724 and
 * gai.conf), at most SNOWID_RESOLVE_MAX_ADDRESSES of them; the callers try
 * each in turn, so that a server that listens on only one of a name's
 * addresses (on 127.0.0.1 while ::1 comes first, one node of several
 * behind a name) is still reached.  Redis' connections (redis/conn.c) and
 * a coordination database's (pgcoord/conn.c, which hands libpq the
 * addresses as hostaddr) resolve through here.
 *
 * A thread in a backend: the helper thread runs nothing but getaddrinfo()
 * on the memory of its own request (never palloc, ereport, a latch or
 * shared memory), and glibc starts it with every signal blocked, so the
 * signals that PostgreSQL cancels, terminates and wakes a backend with
 * (SIGINT, SIGTERM, SIGUSR1, SIGURG) still reach the backend's own thread,
 * where their handlers expect to run.  The postmaster, which forks the
 * backends, never claims, and a child that a backend forks (popen() of
 * COPY ... PROGRAM) execs at once, so no process runs on with a copy of a
 * half-done lookup.
 *
 * A lookup given up while the helper thread runs it cannot be cancelled
 * (gai_cancel() only takes back a queued one), and the thread will still
 * write its result: such a lookup goes on the backend's list of abandoned
 * lookups and is freed by a later call once the thread is done with it
 * (or goes with the process).  The list is this process's own (a static);
 * nothing here is shared with other processes or takes a lock.
 *
 * Without getaddrinfo_a() (a C library other than glibc) a lookup is a
 * plain getaddrinfo(), as hiredis does it: bounded only by the resolver's
 * own timeout.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/timestamp.h"

#include "util/resolve.h"

#if defined(__GLIBC__) && defined(GAI_NOWAIT)
#define SNOWID_HAVE_GETADDRINFO_A
#endif

/* The longest nap between two looks at a lookup under way, in ms */
#define SNOWID_LOOKUP_NAP_MS	10

/* One lookup of a name, for one address family */
struct SnowidLookup
{
#ifdef SNOWID_HAVE_GETADDRINFO_A
	struct gaicb request;		/* read and written by the helper thread;
								 * ar_name and ar_request point below */
#endif
	struct addrinfo hints;
	char		name[SNOWID_RESOLVE_HOST_LEN];
	/* set once the lookup is done (snowid_lookup_done): */
	int			error;			/* 0, or getaddrinfo()'s error */
	struct addrinfo *addresses; /* without error: the addresses */
	/* never touched by the helper thread: */
	struct SnowidLookup *next;	/* on the list of abandoned lookups */
};

/* Lookups given up while the helper thread ran them */
static SnowidLookup *snowid_abandoned = NULL;

static SnowidLookup *snowid_lookup_start(const char *name, int *error);
static bool snowid_lookup_done(SnowidLookup *lookup);
static void snowid_lookup_free(SnowidLookup *lookup);
static void snowid_lookup_reap(void);

/*
 * snowid_host_is_address
 *		Whether host is an IPv4 or IPv6 address, which needs no lookup:
 *		getaddrinfo() with AI_NUMERICHOST only parses, and never asks a
 *		resolver.
 */
bool
snowid_host_is_address(const char *host)
{
	struct addrinfo hints;
	struct addrinfo *addresses = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST;
	if (getaddrinfo(host, NULL, &hints, &addresses) != 0)
		return false;
	freeaddrinfo(addresses);
	return true;
}

/*
 * snowid_resolve_all
 *		Resolves n host names at once, each to its addresses, and waits until every lookup has ended, or wait_ms have passed, or the
 *		deadline: so that a name that does not answer takes no more than
 *		wait_ms from the others.  errors[i] is then 0 with lookups[i]
 *		holding the addresses of hosts[i], else getaddrinfo()'s error, or
 *		EAI_INPROGRESS for a lookup not done by then.  Each lookups[i] is
 *		set as its lookup starts (NULL if it could not), so that the caller
 *		ends them all with snowid_lookup_end(), done or not, however the
 *		wait ends, a cancel raising its error included.
 */
void
snowid_resolve_all(const char *const *hosts, int n,
				   const SnowidDeadline *deadline, long wait_ms,
				   SnowidLookup **lookups, int *errors)
{
	TimestampTz until = GetCurrentTimestamp();
	long		nap = 1;

	Assert(n <= SNOWID_RESOLVE_MAX_HOSTS);
	snowid_lookup_reap();
	until = TimestampTzPlusMilliseconds(until, Max(wait_ms, 0));
	for (int i = 0; i < n; i++)
		lookups[i] = snowid_lookup_start(hosts[i], &errors[i]);
	for (;;)
	{
		bool		running = false;
		long		remaining;

		for (int i = 0; i < n; i++)
		{
			if (lookups[i] == NULL || errors[i] != EAI_INPROGRESS ||
				!snowid_lookup_done(lookups[i]))
			{
				running |= lookups[i] != NULL && errors[i] == EAI_INPROGRESS;
				continue;
			}
			errors[i] = lookups[i]->error;
		}
		if (!running)
			return;
		CHECK_FOR_INTERRUPTS();
		remaining = Min(snowid_deadline_remaining(deadline),
						TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
														until));
		if (remaining <= 0)
			return;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(nap, remaining), deadline->wait_event_info);
		ResetLatch(MyLatch);
		/* a name in /etc/hosts takes well under a millisecond */
		nap = Min(nap * 2, SNOWID_LOOKUP_NAP_MS);
	}
}

/*
 * snowid_lookup_count
 *		How many addresses of a lookup that snowid_resolve_all() completed
 *		are to be tried: at most SNOWID_RESOLVE_MAX_ADDRESSES.
 */
int
snowid_lookup_count(const SnowidLookup *lookup)
{
	int			n = 0;

	for (const struct addrinfo *a = lookup->addresses;
		 a != NULL && n < SNOWID_RESOLVE_MAX_ADDRESSES; a = a->ai_next)
		n++;
	return n;
}

/*
 * snowid_lookup_address
 *		The n-th address of a lookup (from 0, below snowid_lookup_count())
 *		as the text of a numeric address ("192.0.2.1", "::1") in text;
 *		false if there is no such address or it cannot be written so.
 */
bool
snowid_lookup_address(const SnowidLookup *lookup, int n, char *text,
					  size_t len)
{
	const struct addrinfo *a = lookup->addresses;

	while (a != NULL && n-- > 0)
		a = a->ai_next;
	return a != NULL &&
		getnameinfo(a->ai_addr, a->ai_addrlen, text, len, NULL, 0,
					NI_NUMERICHOST) == 0;
}

/*
 * snowid_resolve_problem
 *		A sentence, into buf, that says why host did not resolve (error as
 *		snowid_resolve_all() set it): a lookup that did not end names the
 *		setting whose half of timeout_ms it ran out of.  host NULL: "the
 *		host name", the one the caller's message names already.
 */
void
snowid_resolve_problem(char *buf, size_t len, const char *host, int error,
					   const char *setting, int timeout_ms)
{
	char		what[SNOWID_RESOLVE_HOST_LEN + 2];

	if (host != NULL)
		snprintf(what, sizeof(what), "\"%s\"", host);
	else
		strlcpy(what, "the host name", sizeof(what));
	if (error == EAI_INPROGRESS)
		snprintf(buf, len,
				 "Resolving %s did not complete within half of %s (%d ms).",
				 what, setting, timeout_ms);
	else if (host != NULL)
		snprintf(buf, len, "Resolving %s: %s.", what, gai_strerror(error));
	else
		snprintf(buf, len, "%s.", gai_strerror(error));
}

/*
 * snowid_lookup_end
 *		Ends a lookup, done or not: frees it, or leaves it on the list of
 *		abandoned lookups if the helper thread is still running it.  NULL is
 *		ignored.
 */
void
snowid_lookup_end(SnowidLookup *lookup)
{
	if (lookup == NULL)
		return;
#ifdef SNOWID_HAVE_GETADDRINFO_A
	if (gai_cancel(&lookup->request) == EAI_NOTCANCELED)
	{
		lookup->next = snowid_abandoned;
		snowid_abandoned = lookup;
		return;
	}
#endif
	snowid_lookup_free(lookup);
}

/*
 * snowid_lookup_start
 *		Starts looking up the addresses of name, of every family.  NULL
 *		with *error set if it could not be started; else *error is
 *		EAI_INPROGRESS.
 */
static SnowidLookup *
snowid_lookup_start(const char *name, int *error)
{
	SnowidLookup *lookup;

	/* malloc, not palloc: the helper thread may outlive any context */
	lookup = calloc(1, sizeof(SnowidLookup));
	if (lookup == NULL)
	{
		*error = EAI_MEMORY;
		return NULL;
	}
	strlcpy(lookup->name, name, sizeof(lookup->name));
	lookup->hints.ai_family = AF_UNSPEC;
	lookup->hints.ai_socktype = SOCK_STREAM;

#ifdef SNOWID_HAVE_GETADDRINFO_A
	{
		struct gaicb *list[1];
		struct sigevent none;

		lookup->request.ar_name = lookup->name;
		lookup->request.ar_request = &lookup->hints;
		list[0] = &lookup->request;
		memset(&none, 0, sizeof(none));
		none.sigev_notify = SIGEV_NONE;
		*error = getaddrinfo_a(GAI_NOWAIT, list, 1, &none);
		if (*error != 0)
		{
			/* nothing was queued: the helper thread never saw it */
			free(lookup);
			return NULL;
		}
	}
#else
	lookup->error = getaddrinfo(lookup->name, NULL, &lookup->hints,
								&lookup->addresses);
#endif
	*error = EAI_INPROGRESS;
	return lookup;
}

/*
 * snowid_lookup_done
 *		Whether the lookup has ended; if so, its error and addresses are
 *		set, and the helper thread no longer touches it.
 */
static bool
snowid_lookup_done(SnowidLookup *lookup)
{
#ifdef SNOWID_HAVE_GETADDRINFO_A
	int			error = gai_error(&lookup->request);

	if (error == EAI_INPROGRESS)
		return false;
	lookup->error = error;
	lookup->addresses = lookup->request.ar_result;
#endif
	return true;
}

/*
 * snowid_lookup_free
 *		Frees a lookup that the helper thread is done with, or never had.
 */
static void
snowid_lookup_free(SnowidLookup *lookup)
{
	(void) snowid_lookup_done(lookup);
	if (lookup->addresses != NULL)
		freeaddrinfo(lookup->addresses);
	free(lookup);
}

/*
 * snowid_lookup_reap
 *		Frees the abandoned lookups that the helper thread has finished.
 */
static void
snowid_lookup_reap(void)
{
	SnowidLookup **link = &snowid_abandoned;

	while (*link != NULL)
	{
		SnowidLookup *lookup = *link;

		if (snowid_lookup_done(lookup))
		{
			*link = lookup->next;
			snowid_lookup_free(lookup);
		}
		else
			link = &lookup->next;
	}
}
