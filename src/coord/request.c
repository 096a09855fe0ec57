/*-------------------------------------------------------------------------
 *
 * request.c
 *	  The coordination layer's settings, the identity this server claims
 *	  under, and the request every call to the store starts from: a claim
 *	  for good (worker.c) and every step of a lease (lease.c).  No locking
 *	  applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"

#include "coord/holder_secret.h"
#include "coord/recall.h"
#include "coord/request.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/generator.h"
#include "core/mark.h"
#include "core/wait_events.h"

int			snowid_worker_id = -1;
int			snowid_coordinator_timeout_ms = SNOWID_COORDINATOR_TIMEOUT_DEFAULT_MS;
int			snowid_worker_lease_ms = 0;
int			snowid_checkin_interval_ms = SNOWID_CHECKIN_INTERVAL_DEFAULT_MS;
int			snowid_clock_margin_ms = SNOWID_CLOCK_MARGIN_DEFAULT_MS;
bool		snowid_release_on_shutdown = false;

/* This server's holder secret, read again for every request */
static char snowid_secret[SNOWID_HOLDER_SECRET_LEN + 1];

static bool snowid_identity_text(char *identity, size_t len, const char *host,
								 uint64 instance);

/*
 * snowid_worker_identity
 *		The holder name this server claims under in the store: its datacenter,
 *		host name, port, system identifier and the instance of its data
 *		directory, which a copy started as a server of its own does not keep.
 */
void
snowid_worker_identity(char *identity, size_t len)
{
	char		host[256];
	uint64		instance = snowid_instance();

	if (instance == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid has no instance id to claim a worker id under"),
				 errdetail("The mark file \"%s\", which names the instance of this data directory (a copy of it does not share it), could not be written.",
						   SNOWID_MARK_FILE),
				 errhint("The warning in the server log says why.  Fix that, then call again.")));

	if (gethostname(host, sizeof(host)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not get the host name: %m")));
	host[sizeof(host) - 1] = '\0';

	if (!snowid_identity_text(identity, len, host, instance))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the host name of this server cannot identify it to the coordinator"),
				 errdetail("The host name is empty, too long, or contains control characters.")));
}

/*
 * snowid_identity_text
 *		The identity a server claims under, "dc=… host=… port=… sysid=…
 *		instance=…": what tells two servers apart (two clusters on one host
 *		differ in port and system identifier; a copy of a data directory,
 *		which may share both, differs in its instance) and stays the same
 *		across a restart.  False if it does not fit or the host name has
 *		characters that a store's replies cannot carry.
 */
static bool
snowid_identity_text(char *identity, size_t len, const char *host,
					 uint64 instance)
{
	const char *p;
	int			n;

	if (host[0] == '\0')
		return false;
	for (p = host; *p; p++)
	{
		if ((unsigned char) *p < ' ' || *p == 0x7f)
			return false;
	}
	n = snprintf(identity, len, "dc=%d host=%s port=%d sysid=" UINT64_FORMAT
				 " instance=%016llx", snowid_datacenter_id, host,
				 PostPortNumber, GetSystemIdentifier(),
				 (unsigned long long) instance);
	return n > 0 && (size_t) n < len;
}

/*
 * snowid_coord_request
 *		What this server asks of the store, with its identity in the given
 *		buffer and its holder secret: no explicit or preferred worker id (a
 *		claim for good sets them), the generator's position and what it can
 *		start above now, and the state record of the store it saw last.
 */
void
snowid_coord_request(SnowidStoreRequest *request, char *identity, size_t len)
{
	snowid_worker_identity(identity, len);
	memset(request, 0, sizeof(*request));
	request->datacenter_id = snowid_datacenter_id;
	request->explicit_worker_id = -1;
	request->preferred_worker_id = -1;
	request->max_worker_id = (int) SNOWID_FIELD_MAX(snowid_layout.worker_bits);
	request->identity = identity;
	snowid_holder_secret(snowid_secret);
	request->secret = snowid_secret;
	request->timeout_ms = snowid_coordinator_timeout_ms;
	snowid_coord_request_times(request);
	request->free_margin_ms = (int64) snowid_clock_margin_ms +
		snowid_max_drift_ms + 1;
	request->quiet_ms = snowid_quiet_ms();
	request->clock_margin_ms = snowid_clock_margin_ms;
	snowid_recall_seen(&request->seen);
	request->confirmed_ms = -1;
	request->wait_event_info = snowid_wait_event(SNOWID_WAIT_COORDINATOR);
	request->client_sees_store = snowid_client_sees_store();
}

/*
 * snowid_coord_request_times
 *		The request's times as of now: the generator's position, what this
 *		server can start above, and the latest plausible fence (again after
 *		a wait).
 */
void
snowid_coord_request_times(SnowidStoreRequest *request)
{
	request->client_ms = snowid_generator_ms() + snowid_layout.epoch_ms;
	request->usable_ms = snowid_usable_ms() + snowid_layout.epoch_ms;
	request->plausible_ms = snowid_unix_ms() + SNOWID_FENCE_SLACK_MS;
	request->sent_ms = snowid_unix_ms();
	request->sent_mono_ms = snowid_monotonic_ms();
}

/*
 * snowid_client_sees_store
 *		Whether the client of this process, if it has one, may learn what
 *		messages say of the store: hosts and ports, keys, identities.  Only
 *		a role that may read the store's URL (a superuser, or a member of
 *		pg_read_all_settings) may; a claim runs in whichever session needs
 *		an id first, and any other role would learn the topology that way.
 *		A parallel worker's messages go to its leader's client.
 */
bool
snowid_client_sees_store(void)
{
	if (whereToSendOutput != DestRemote)
		return true;
	return superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_SETTINGS);
}

StaticAssertDecl(SNOWID_MIN_LEASE_MS <= 1000,
				 "the shortest quiet period is one of the shortest lease, not check-in interval (1 s)");
StaticAssertDecl(SNOWID_CHECKIN_INTERVAL_MAX_MS <= SNOWID_MAX_LEASE_MS,
				 "a quiet period declared after a check-in must not outlast one after a lease");

/*
 * snowid_quiet_ms
 *		How long a store that may have forgotten its claims grants no id, so
 *		that a holder like this server re-asserts its own first (the
 *		forgetting rule, coord/store.h): until its next check-in (a
 *		permanent holder) or, cut off, the end of its lease (a lease
 *		holder), and a call that takes the whole coordinator timeout, plus
 *		the drift budget (a holder that stopped may have issued that far
 *		ahead of its clock) and a margin.
 */
int64
snowid_quiet_ms(void)
{
	int64		holder_ms = snowid_worker_lease_ms > 0 ?
		snowid_worker_lease_ms : snowid_checkin_interval_ms;

	return holder_ms + snowid_coordinator_timeout_ms + snowid_max_drift_ms +
		SNOWID_QUIET_MARGIN_MS;
}

/*
 * snowid_checkin_fence
 *		The check-in fence of a claim for good whose claim or check-in was
 *		sent with the generator at from_ms (ms since the epoch, its next
 *		millisecond or the clock if later): a quiet period past it, which the
 *		next check-in reaches within a check-in interval and a timeout
 *		(coord/checkin.c says why).  Here, beside snowid_quiet_ms(), so that
 *		the claim (worker.c) and the check-in (checkin.c) share it.
 */
int64
snowid_checkin_fence(int64 from_ms)
{
	return from_ms + snowid_quiet_ms();
}
