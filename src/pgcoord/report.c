/*-------------------------------------------------------------------------
 *
 * report.c
 *	  How a call of the coordination database ended, told: the ereports of
 *	  pgcoord/store.c's calls, from the account each call leaves in its
 *	  result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "core/layout.h"
#include "pgcoord/report.h"

/*
 * snowid_pg_report
 *		Reports how a call ended at elevel (see coord/store.h).  A success
 *		reports nothing.  What names the database (host, port, database,
 *		the identities of servers) reaches only a client that may read
 *		snowid.coordinator_url; any other gets the SQLSTATE and a message
 *		that sends it to the server log, which has the whole report.
 *
 * SQLSTATEs, as for Redis (redis/report.c): 08001 could not connect, 08006
 * connected and then failed or timed out, 53400 all held, 55006 fenced or
 * held by another server, 55000 holds another, XX001 an impossible fence,
 * 08P01 a reply of unexpected shape, 08007 an answer with a WARNING (what
 * it committed may not be on the standby); an error of the database keeps its own
 * SQLSTATE (42883 no snowid_coordinator, 42501 no privilege, ...).
 */
void
snowid_pg_report(int elevel, const SnowidStoreRequest *request,
				 const SnowidStoreResult *result)
{
	const SnowidPgDetail *detail = snowid_pg_detail(result);
	const char *where = detail->target->describe;
	int			sqlstate;
	char	   *message;
	char	   *text = NULL;
	char	   *hint = NULL;
	SnowidStoreReport full;
	SnowidStoreReport brief;

	if (result->status == SNOWID_STORE_OK)
		return;

	switch (detail->outcome)
	{
		case SNOWID_PG_ALL_HELD:
			sqlstate = ERRCODE_CONFIGURATION_LIMIT_EXCEEDED;
			message = psprintf("all %d worker ids of datacenter %d are held",
							   request->max_worker_id + 1,
							   request->datacenter_id);
			text = psprintf("The coordination database at %s has every worker id from 0 to %d registered to a server.",
							where, request->max_worker_id);
			hint = psprintf("List the holders with SELECT * FROM snowid_coordinator.workers WHERE datacenter = %d; once a server is stopped for good, free its id with SELECT snowid_coordinator.free(%d, <worker id>, %lld).",
							request->datacenter_id, request->datacenter_id,
							(long long) request->free_margin_ms);
			break;

		case SNOWID_PG_FENCED:
			sqlstate = ERRCODE_OBJECT_IN_USE;
			if (request->explicit_worker_id >= 0)
			{
				message = psprintf("worker id %d of datacenter %d cannot be taken until %s",
								   detail->worker_id, request->datacenter_id,
								   snowid_unix_ms_text(detail->fence_ms));
				text = psprintf("It was on lease, and the ids its last holder issued reach up to then: %lld ms past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms).",
								(long long) (detail->fence_ms - request->usable_ms));
				hint = psprintf("Wait until then and call again, or set snowid.worker_id to another free id.  If no server issued ids with worker id %d past the coordination server's clock (a fence a fleet member set), an administrator lowers it with SELECT snowid_coordinator.lower_fence(%d, %d, %lld) (doc/troubleshooting.md).",
								detail->worker_id, request->datacenter_id,
								detail->worker_id,
								(long long) request->free_margin_ms);
				break;
			}
			message = psprintf("no worker id of datacenter %d can be taken until %s",
							   request->datacenter_id,
							   snowid_unix_ms_text(detail->fence_ms));
			text = psprintf("Every worker id not held by a server was on lease, and the ids of its last holder reach past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms); worker id %d is free first, %lld ms past it.",
							detail->worker_id,
							(long long) (detail->fence_ms - request->usable_ms));
			hint = psprintf("Wait until then and try again, or free the worker id of a decommissioned server.  If no server issued ids with worker id %d past the coordination server's clock (a fence a fleet member set), an administrator lowers it with SELECT snowid_coordinator.lower_fence(%d, %d, %lld) (doc/troubleshooting.md).",
							detail->worker_id, request->datacenter_id,
							detail->worker_id,
							(long long) request->free_margin_ms);
			break;

		case SNOWID_PG_IMPLAUSIBLE:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			message = psprintf("the coordination database holds an impossible fence for worker id %d of datacenter %d",
							   detail->worker_id, request->datacenter_id);
			text = psprintf("The fence is %s, %lld ms past the latest one a snowid server can have written by now; snowid takes no worker id on the word of one that far ahead.",
							snowid_unix_ms_text(detail->fence_ms),
							(long long) (detail->fence_ms - request->plausible_ms));
			hint = psprintf("Find out who else writes snowid_coordinator's tables; then, once no server holds worker id %d and none issued ids with it past the coordination server's clock, an administrator lowers the fence with SELECT snowid_coordinator.lower_fence(%d, %d, %lld) (doc/troubleshooting.md).",
							detail->worker_id, request->datacenter_id,
							detail->worker_id,
							(long long) request->free_margin_ms);
			break;

		case SNOWID_PG_CONFLICT:
			sqlstate = ERRCODE_OBJECT_IN_USE;
			message = psprintf("worker id %d of datacenter %d is held by another server",
							   request->explicit_worker_id,
							   request->datacenter_id);
			text = psprintf("This server is \"%s\"; the coordination database has worker id %d registered to \"%s\".",
							request->identity, request->explicit_worker_id,
							result->holder);
			hint = SNOWID_HOLDER_ON_LEASE(result->holder) ?
				"Set snowid.worker_id to a free id, or wait until that lease runs out (at most snowid.worker_lease after its holder stopped)." :
				psprintf("Set snowid.worker_id to a free id or, once that server is stopped for good, free its id with SELECT snowid_coordinator.free(%d, %d, %lld).",
						 request->datacenter_id, request->explicit_worker_id,
						 (long long) request->free_margin_ms);
			break;

		case SNOWID_PG_HOLDS_OTHER:
			sqlstate = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
			message = psprintf("this server holds worker id %d of datacenter %d in the coordination database, not the configured worker id %d",
							   detail->worker_id, request->datacenter_id,
							   request->explicit_worker_id);
			text = psprintf("The coordination database has worker id %d registered to \"%s\".",
							detail->worker_id, request->identity);
			hint = psprintf("Set snowid.worker_id to %d, or free the old id with SELECT snowid_coordinator.free(%d, %d, %lld).",
							detail->worker_id, request->datacenter_id,
							detail->worker_id,
							(long long) request->free_margin_ms);
			break;

		case SNOWID_PG_BAD_REPLY:
			sqlstate = ERRCODE_PROTOCOL_VIOLATION;
			message = psprintf("unexpected reply from the coordination database at %s",
							   where);
			hint = "Check that the coordination database has the extension snowid_coordinator of this release (ALTER EXTENSION snowid_coordinator UPDATE).";
			break;

		default:
			if (detail->warned && detail->sqlstate[0] == '\0' &&
				result->status == SNOWID_STORE_FAILED)
			{
				sqlstate = ERRCODE_TRANSACTION_RESOLUTION_UNKNOWN;
				message = psprintf("the coordination database at %s may not have replicated the call",
								   where);
				text = psprintf("%s  What it committed may not be on its standby and would be lost at a failover, so snowid takes nothing from this answer: a claim's worker id is not used, a renewal counts as failed.",
								result->message);
				hint = "Check that the coordination database's synchronous standbys (synchronous_standby_names) are up and streaming, and do not cancel its sessions waiting for them (wait event SyncRep); snowid tries again at the next call or renewal.";
			}
			else if (detail->sqlstate[0] != '\0' &&
				result->status != SNOWID_STORE_UNREACHABLE)
			{
				const char *s = detail->sqlstate;

				sqlstate = MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4]);
				message = psprintf("the coordination database at %s refused the call",
								   where);
				if (strcmp(s, "42883") == 0 || strcmp(s, "3F000") == 0)
					hint = "Run CREATE EXTENSION snowid_coordinator in the coordination database.";
				else if (result->not_holder)
				{
					message = psprintf("the coordination database at %s refused this server's holder secret",
									   where);
					hint = "Another secret was registered for this server's holder name: another server claims under its name, or this server lost its file snowid_holder_secret.  Once sure that this server is the one of that name, an administrator calls snowid_coordinator.reset_secret() (doc/security.md).";
				}
				else if (strcmp(s, "42501") == 0)
					hint = "Grant the role of snowid.coordinator_url EXECUTE on the functions of snowid_coordinator (doc/coordinator.md).";
				else if (strcmp(s, "22023") == 0 &&
						 strstr(result->message, "invalid holder secret") != NULL)
				{
					/*
					 * This server sends only well-formed holder proofs: one
					 * refused so is taken for a secret by snowid_coordinator
					 * 1.0 (snowid 1.3.0's), which knows no proof.
					 */
					message = psprintf("the coordination database at %s has snowid_coordinator of an earlier release",
									   where);
					text = "It refused this server's holder proof as a malformed holder secret: its snowid_coordinator takes the secret itself (version 1.0, of snowid 1.3.0), and a server of this release sends only a proof of it.";
					hint = "Update the extension first, as its owner, with the grants it needs: ALTER EXTENSION snowid_coordinator UPDATE (doc/install.md, \"From 1.3\").";
				}
			}
			else if (detail->connected &&
					 strcmp(detail->sqlstate, "55P03") == 0)
			{
				sqlstate = ERRCODE_LOCK_NOT_AVAILABLE;
				message = psprintf("the coordination database at %s did not lock datacenter %d in time",
								   where, request->datacenter_id);
				text = "Another session of the coordination database holds the datacenter's row locked: most likely an administrator's call left in an open transaction.";
				hint = "Find that session in pg_stat_activity of the coordination database (wait_event_type Lock) and end its transaction; snowid tries again at the next call or renewal.";
			}
			else if (detail->connected)
			{
				sqlstate = ERRCODE_CONNECTION_FAILURE;
				message = psprintf("the coordination database at %s did not complete the call",
								   where);
				hint = psprintf("Check that the coordination database is a primary, is up and answers within snowid.coordinator_timeout_ms (%d ms).",
								request->timeout_ms);
			}
			else
			{
				sqlstate = ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION;
				message = psprintf("could not connect to the coordination database at %s",
								   where);
				if (detail->password_asked)
					hint = "The coordination database asked for a password.  libpq reads it from the file that passfile names in snowid.coordinator_url (or ~/.pgpass of the server's operating system user), and skips a file that user cannot read or that others may read: give that user the file, with mode 0600, and a line host:port:database:user:password for the role of the URL.";
				else
					hint = psprintf("Check that the coordination database is running, that snowid.coordinator_url names it, and that it answers within snowid.coordinator_timeout_ms (%d ms).",
									request->timeout_ms);
			}
			break;
	}
	if (text == NULL)
		text = pstrdup(result->message);

	full.sqlstate = sqlstate;
	full.message = message;
	full.detail = text;
	full.hint = hint;
	brief.sqlstate = sqlstate;
	brief.message = "snowid could not claim a worker id from its coordinator";
	brief.detail = "The server log says which coordination database and why.";
	brief.hint = NULL;
	snowid_store_emit(elevel, request->client_sees_store, &full, &brief);
}

/*
 * snowid_pg_refused_fence
 *		A renewal found a fence past the one this server asked for: no
 *		holder of this claim wrote it, so the generator does not take it.
 */
void
snowid_pg_refused_fence(const SnowidStoreRequest *request,
						const SnowidLeaseGrant *grant)
{
	char	   *fence = pstrdup(snowid_unix_ms_text(grant->fence_ms));

	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("snowid refused the fence the coordination database holds for worker id %d of datacenter %d",
					grant->worker_id, request->datacenter_id),
			 errdetail("The fence is " INT64_FORMAT " (%s), past the fence " INT64_FORMAT " (%s) this server renewed its lease with; no holder of this lease wrote it.",
					   grant->refused_fence_ms,
					   snowid_unix_ms_text(grant->refused_fence_ms),
					   grant->fence_ms, fence),
			 errhint("This server goes on with its own fence.  Find out who else writes snowid_coordinator's tables.")));
	pfree(fence);
}
