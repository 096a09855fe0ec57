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
 * polls for its end in naps of at most SNOWID_LOOKUP_NAP_MS.  The names
 * looked up, and the order, are hiredis' own: IPv4 addresses, and IPv6 ones
 * only when a name has no IPv4 address.  Redis' connections (redis/conn.c)
 * and a coordination database's (pgcoord/conn.c, which hands libpq the
 * address as hostaddr) resolve through here.
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

static SnowidLookup *snowid_lookup_start(const char *name, int family,
										 int *error);
static bool snowid_lookup_done(SnowidLookup *lookup);
static int	snowid_lookup_wait(SnowidLookup *lookup,
							   const SnowidDeadline *deadline);
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
 * snowid_resolve
 *		Resolves host before the deadline: its IPv4 addresses, or its IPv6
 *		ones if it has none, as hiredis does.  0 with *lookup holding the
 *		addresses; else getaddrinfo()'s error, or EAI_INPROGRESS if the
 *		deadline came first.  *lookup is set while the lookup runs, so that
 *		the caller ends it with snowid_lookup_end() also when a cancel
 *		raises its error from the wait.
 */
int
snowid_resolve(const char *host, const SnowidDeadline *deadline,
			   SnowidLookup **lookup)
{
	static const int families[] = {AF_INET, AF_INET6};
	int			error = EAI_FAIL;
	int			i;

	snowid_lookup_reap();
	for (i = 0; i < lengthof(families); i++)
	{
		*lookup = snowid_lookup_start(host, families[i], &error);
		if (*lookup == NULL)
			break;
		error = snowid_lookup_wait(*lookup, deadline);
		if (error == 0)
			return 0;
		snowid_lookup_end(*lookup);
		*lookup = NULL;
		if (error == EAI_INPROGRESS)
			break;
	}
	return error;
}

/*
 * snowid_resolve_all
 *		Resolves n host names at once, each as snowid_resolve() does, and
 *		waits until every lookup has ended, or wait_ms have passed, or the
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
	static const int families[] = {AF_INET, AF_INET6};
	int			family[SNOWID_RESOLVE_MAX_HOSTS];
	TimestampTz until = GetCurrentTimestamp();
	long		nap = 1;

	Assert(n <= SNOWID_RESOLVE_MAX_HOSTS);
	snowid_lookup_reap();
	until = TimestampTzPlusMilliseconds(until, Max(wait_ms, 0));
	for (int i = 0; i < n; i++)
	{
		family[i] = 0;
		lookups[i] = snowid_lookup_start(hosts[i], families[0], &errors[i]);
		if (lookups[i] != NULL)
			errors[i] = EAI_INPROGRESS;
	}
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
			if (errors[i] == 0 || family[i] + 1 >= lengthof(families))
				continue;
			/* no IPv4 address: its IPv6 ones, as hiredis does */
			snowid_lookup_end(lookups[i]);
			family[i]++;
			lookups[i] = snowid_lookup_start(hosts[i], families[family[i]],
											 &errors[i]);
			if (lookups[i] != NULL)
				errors[i] = EAI_INPROGRESS;
			running |= lookups[i] != NULL;
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
		nap = Min(nap * 2, SNOWID_LOOKUP_NAP_MS);
	}
}

/*
 * snowid_lookup_addresses
 *		The addresses of a lookup that snowid_resolve() completed.
 */
const struct addrinfo *
snowid_lookup_addresses(const SnowidLookup *lookup)
{
	return lookup->addresses;
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
 *		Starts looking up the addresses of one family of name.  NULL with
 *		*error set if it could not be started.
 */
static SnowidLookup *
snowid_lookup_start(const char *name, int family, int *error)
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
	lookup->hints.ai_family = family;
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
 * snowid_lookup_wait
 *		Waits for the lookup to end, until the deadline: its error (0 for
 *		addresses), or EAI_INPROGRESS at the deadline.  Naps on the latch,
 *		shown as the deadline's wait event; a cancel, terminate or shutdown
 *		raises its error here.
 */
static int
snowid_lookup_wait(SnowidLookup *lookup, const SnowidDeadline *deadline)
{
	long		nap = 1;

	for (;;)
	{
		long		remaining;

		if (snowid_lookup_done(lookup))
			return lookup->error;
		CHECK_FOR_INTERRUPTS();
		remaining = snowid_deadline_remaining(deadline);
		if (remaining <= 0)
			return EAI_INPROGRESS;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(nap, remaining), deadline->wait_event_info);
		ResetLatch(MyLatch);
		/* a name in /etc/hosts takes well under a millisecond */
		nap = Min(nap * 2, SNOWID_LOOKUP_NAP_MS);
	}
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
