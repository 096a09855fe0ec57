/*-------------------------------------------------------------------------
 *
 * store.c
 *	  A PostgreSQL coordination database as a claim store: the functions of
 *	  coord/store.h as CALLs of the procedures of the extension
 *	  snowid_coordinator, one statement each (which commits its work), and
 *	  the reports of how they ended.
 *
 * Every call sends this server's holder name and secret; a secret other
 * than the one registered for the name is refused (SQLSTATE 42501).  Every
 * procedure of snowid_coordinator returns one row
 *
 *		(outcome, worker_id, floor_ms, fence_ms, lease_ms, holder)
 *
 * whose outcome is "ok", or a refusal that wrote nothing: "all_held",
 * "fenced" (worker_id the id fenced least far, fence_ms its fence),
 * "conflict" (holder holds the configured id), "holds_other" (this server
 * holds worker_id), "lost" (a renewal or release of a lease no longer this
 * server's; holder holds it now).  Nothing the database answers is taken on
 * its word: a worker id outside the layout, a fence no snowid server can
 * have written by now, or a grant the request did not ask for is refused
 * as a reply of unexpected shape.  No locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "libpq-fe.h"

#include "core/layout.h"
#include "pgcoord/conn.h"
#include "pgcoord/store.h"
#include "pgcoord/target.h"

StaticAssertDecl(sizeof(SnowidPgTarget) <= SNOWID_STORE_TARGET_MAX,
				 "a PostgreSQL URL must fit a store's target");

/* What the database answered, as far as a report needs it */
typedef enum SnowidPgOutcome
{
	SNOWID_PG_FAILED,			/* no answer: the result says why */
	SNOWID_PG_OK,
	SNOWID_PG_ALL_HELD,
	SNOWID_PG_FENCED,
	SNOWID_PG_IMPLAUSIBLE,		/* a fence past the plausible */
	SNOWID_PG_CONFLICT,
	SNOWID_PG_HOLDS_OTHER,
	SNOWID_PG_LOST,
	SNOWID_PG_QUIET,			/* no id until fence_ms (the forgetting
								 * rule) */
	SNOWID_PG_BAD_REPLY			/* a row of unexpected shape */
} SnowidPgOutcome;

/* One row of a function of snowid_coordinator; -1 for a NULL number */
typedef struct SnowidPgRow
{
	SnowidPgOutcome outcome;
	int64		worker_id;
	int64		floor_ms;
	int64		fence_ms;
	int64		lease_ms;
	char		holder[SNOWID_HOLDER_LEN];
	SnowidStoreSeen state;		/* the state record after the call; 0 for
								 * none */
} SnowidPgRow;

/* The store's own account of a call, for its report */
typedef struct SnowidPgDetail
{
	SnowidPgOutcome outcome;
	int			worker_id;
	int64		fence_ms;
	bool		connected;
	bool		warned;			/* the call ended with a WARNING or worse */
	bool		password_asked;
	char		sqlstate[6];
	const SnowidPgTarget *target;
} SnowidPgDetail;

/*
 * The servers' entry points are procedures, which commit right after their
 * work (no session keeps the datacenter's lock past its CALL) and return
 * their row in INOUT parameters that the call leaves out.
 */
static const char *const snowid_pg_claim_sql =
"CALL snowid_coordinator.claim("
"$1::int, $2::text, $3::text, $4::int, $5::int, $6::int, $7::bigint, "
"$8::bigint, $9::boolean, $10::bigint, $11::bigint)";
static const char *const snowid_pg_lease_claim_sql =
"CALL snowid_coordinator.lease_claim("
"$1::int, $2::text, $3::text, $4::int, $5::bigint, $6::bigint, $7::bigint, "
"$8::int, $9::bigint, $10::text, $11::bigint, $12::bigint, $13::bigint)";
static const char *const snowid_pg_lease_renew_sql =
"CALL snowid_coordinator.lease_renew("
"$1::int, $2::text, $3::text, $4::int, $5::bigint, $6::bigint, $7::text, "
"$8::bigint, $9::bigint, $10::bigint, $11::bigint)";
static const char *const snowid_pg_lease_release_sql =
"CALL snowid_coordinator.lease_release("
"$1::int, $2::text, $3::text, $4::int, $5::bigint, $6::boolean, $7::text)";

static bool snowid_pg_parse(const char *url, void *target,
							const char **problem);
static void snowid_pg_claim(const void *target,
							const SnowidStoreRequest *request,
							SnowidStoreResult *result);
static void snowid_pg_lease_claim(const void *target,
								  const SnowidLeaseRequest *request,
								  SnowidLeaseGrant *grant,
								  SnowidStoreResult *result);
static SnowidLeaseOutcome snowid_pg_lease_renew(const void *target,
												const SnowidLeaseRequest *request,
												SnowidLeaseGrant *grant,
												SnowidStoreResult *result);
static SnowidLeaseOutcome snowid_pg_lease_release(const void *target,
												  const SnowidLeaseRequest *request,
												  SnowidStoreResult *result);
static void snowid_pg_report(int elevel, const SnowidStoreRequest *request,
							 const SnowidStoreResult *result);
static void snowid_pg_refused_fence(const SnowidStoreRequest *request,
									const SnowidLeaseGrant *grant);
static bool snowid_pg_call(const SnowidPgTarget *target,
						   const SnowidStoreRequest *request, const char *sql,
						   int nparams, const char *const *values,
						   SnowidPgRow *row, SnowidStoreResult *result);
static bool snowid_pg_read_row(const PGresult *res, SnowidPgRow *row);
static bool snowid_pg_number(const PGresult *res, int column, int64 *value);
static bool snowid_pg_refusal(const SnowidStoreRequest *request,
							  const SnowidPgRow *row,
							  SnowidStoreResult *result);
static void snowid_pg_bad_reply(SnowidStoreResult *result, const char *what);
static void snowid_pg_grant(const SnowidPgRow *row, SnowidLeaseGrant *grant);
static SnowidPgDetail *snowid_pg_detail(const SnowidStoreResult *result);

const SnowidStore snowid_pg_store = {
	.name = "postgresql",
	.title = "the coordination database",
	.schemes = "postgresql://, postgres://",
	.accepts = snowid_pg_url_scheme,
	.parse = snowid_pg_parse,
	.claim = snowid_pg_claim,
	.lease_claim = snowid_pg_lease_claim,
	.lease_renew = snowid_pg_lease_renew,
	.lease_release = snowid_pg_lease_release,
	.report = snowid_pg_report,
	.report_refused_fence = snowid_pg_refused_fence,
};

/*
 * snowid_pg_parse
 *		A connection URI into a SnowidPgTarget.
 */
static bool
snowid_pg_parse(const char *url, void *target, const char **problem)
{
	return snowid_pg_parse_url(url, (SnowidPgTarget *) target, problem);
}

/*
 * snowid_pg_claim
 *		The claim for good: claim(datacenter, identity, secret, want, max,
 *		prefer, usable_ms, quiet_ms, reassert, seen_generation,
 *		seen_counter).
 */
static void
snowid_pg_claim(const void *target, const SnowidStoreRequest *request,
				SnowidStoreResult *result)
{
	char		numbers[8][24];
	const char *values[11];
	SnowidPgRow row;

	snprintf(numbers[0], 24, "%d", request->datacenter_id);
	snprintf(numbers[1], 24, "%d", request->explicit_worker_id);
	snprintf(numbers[2], 24, "%d", request->max_worker_id);
	snprintf(numbers[3], 24, "%d", request->preferred_worker_id);
	snprintf(numbers[4], 24, INT64_FORMAT, request->usable_ms);
	snprintf(numbers[5], 24, INT64_FORMAT, request->quiet_ms);
	snprintf(numbers[6], 24, INT64_FORMAT, request->seen.generation);
	snprintf(numbers[7], 24, INT64_FORMAT, request->seen.counter);
	values[0] = numbers[0];
	values[1] = request->identity;
	values[2] = request->secret;
	values[3] = numbers[1];
	values[4] = numbers[2];
	values[5] = numbers[3];
	values[6] = numbers[4];
	values[7] = numbers[5];
	values[8] = request->reassert ? "true" : "false";
	values[9] = numbers[6];
	values[10] = numbers[7];

	if (!snowid_pg_call(target, request, snowid_pg_claim_sql, 11, values, &row,
						result))
		return;
	if (row.outcome != SNOWID_PG_OK)
	{
		if (!snowid_pg_refusal(request, &row, result))
			snowid_pg_bad_reply(result, "The claim refused in a way no claim refuses.");
		return;
	}
	if (!snowid_store_claim_fits(request, row.worker_id, row.floor_ms))
	{
		snowid_pg_bad_reply(result, "The claim granted a worker id or fence that was not asked for.");
		return;
	}
	result->status = SNOWID_STORE_OK;
	result->worker_id = (int) row.worker_id;
	result->floor_ms = row.floor_ms;
	result->state = row.state;
	snowid_pg_detail(result)->outcome = SNOWID_PG_OK;
}

/*
 * snowid_pg_lease_claim
 *		A lease claim: lease_claim(datacenter, identity, secret, max,
 *		lease_ms, client_ms, usable_ms, prefer, wait_ms, token, quiet_ms,
 *		seen_generation, seen_counter).  The grant must start at or above its floor, within what the request can wait
 *		for, and reach no further than a lease past it or the generator.
 */
static void
snowid_pg_lease_claim(const void *target, const SnowidLeaseRequest *request,
					  SnowidLeaseGrant *grant, SnowidStoreResult *result)
{
	const SnowidStoreRequest *claim = request->claim;
	char		numbers[10][24];
	const char *values[13];
	SnowidPgRow row;

	snprintf(numbers[0], 24, "%d", claim->datacenter_id);
	snprintf(numbers[1], 24, "%d", claim->max_worker_id);
	snprintf(numbers[2], 24, INT64_FORMAT, request->lease_ms);
	snprintf(numbers[3], 24, INT64_FORMAT, claim->client_ms);
	snprintf(numbers[4], 24, INT64_FORMAT, claim->usable_ms);
	snprintf(numbers[5], 24, "%d", claim->preferred_worker_id);
	snprintf(numbers[6], 24, INT64_FORMAT, request->wait_ms);
	snprintf(numbers[7], 24, INT64_FORMAT, claim->quiet_ms);
	snprintf(numbers[8], 24, INT64_FORMAT, claim->seen.generation);
	snprintf(numbers[9], 24, INT64_FORMAT, claim->seen.counter);
	values[0] = numbers[0];
	values[1] = claim->identity;
	values[2] = claim->secret;
	values[3] = numbers[1];
	values[4] = numbers[2];
	values[5] = numbers[3];
	values[6] = numbers[4];
	values[7] = numbers[5];
	values[8] = numbers[6];
	values[9] = request->token;
	values[10] = numbers[7];
	values[11] = numbers[8];
	values[12] = numbers[9];

	memset(grant, 0, sizeof(*grant));
	if (!snowid_pg_call(target, claim, snowid_pg_lease_claim_sql, 13, values,
						&row, result))
		return;
	if (row.outcome != SNOWID_PG_OK)
	{
		if (!snowid_pg_refusal(claim, &row, result))
			snowid_pg_bad_reply(result, "The lease claim refused in a way no lease claim refuses.");
		return;
	}
	snowid_pg_grant(&row, grant);
	if (!snowid_store_lease_fits(request, grant))
	{
		memset(grant, 0, sizeof(*grant));
		snowid_pg_bad_reply(result, "The lease claim granted a lease that was not asked for.");
		return;
	}
	result->state = row.state;
	result->status = SNOWID_STORE_OK;
	result->worker_id = grant->worker_id;
	result->floor_ms = grant->floor_ms;
	snowid_pg_detail(result)->outcome = SNOWID_PG_OK;
}

/*
 * snowid_pg_lease_renew
 *		A renewal: lease_renew(datacenter, identity, secret, worker_id,
 *		lease_ms, want_ms, token, quiet_ms, client_ms, seen_generation,
 *		seen_counter).  A fence past the one asked for, which no
 *		holder of this claim wrote, is not taken: grant->refused_fence_ms
 *		keeps it for the caller to report.
 */
static SnowidLeaseOutcome
snowid_pg_lease_renew(const void *target, const SnowidLeaseRequest *request,
					  SnowidLeaseGrant *grant, SnowidStoreResult *result)
{
	const SnowidStoreRequest *claim = request->claim;
	char		numbers[8][24];
	const char *values[11];
	SnowidPgRow row;

	snprintf(numbers[0], 24, "%d", claim->datacenter_id);
	snprintf(numbers[1], 24, "%d", request->worker_id);
	snprintf(numbers[2], 24, INT64_FORMAT, request->lease_ms);
	snprintf(numbers[3], 24, INT64_FORMAT, request->fence_ms);
	/* what re-asserts the lease in a quiet period */
	snprintf(numbers[4], 24, INT64_FORMAT, claim->quiet_ms);
	snprintf(numbers[5], 24, INT64_FORMAT, claim->client_ms);
	snprintf(numbers[6], 24, INT64_FORMAT, claim->seen.generation);
	snprintf(numbers[7], 24, INT64_FORMAT, claim->seen.counter);
	values[0] = numbers[0];
	values[1] = claim->identity;
	values[2] = claim->secret;
	values[3] = numbers[1];
	values[4] = numbers[2];
	values[5] = numbers[3];
	values[6] = request->token;
	values[7] = numbers[4];
	values[8] = numbers[5];
	values[9] = numbers[6];
	values[10] = numbers[7];

	memset(grant, 0, sizeof(*grant));
	if (!snowid_pg_call(target, claim, snowid_pg_lease_renew_sql, 11, values,
						&row, result))
		return SNOWID_LEASE_FAILED;
	if (row.outcome == SNOWID_PG_LOST)
	{
		strlcpy(result->holder, row.holder, sizeof(result->holder));
		snowid_pg_detail(result)->outcome = SNOWID_PG_LOST;
		return SNOWID_LEASE_LOST;
	}
	snowid_pg_grant(&row, grant);
	if (row.outcome != SNOWID_PG_OK ||
		!snowid_store_renewal_fits(request, grant))
	{
		memset(grant, 0, sizeof(*grant));
		snowid_pg_bad_reply(result, "The renewal answered with a lease that was not asked for.");
		return SNOWID_LEASE_FAILED;
	}
	result->state = row.state;
	result->status = SNOWID_STORE_OK;
	snowid_pg_detail(result)->outcome = SNOWID_PG_OK;
	return SNOWID_LEASE_OK;
}

/*
 * snowid_pg_lease_release
 *		A release or a lease parked: lease_release(datacenter, identity,
 *		secret, worker_id, final_ms, park, token).
 */
static SnowidLeaseOutcome
snowid_pg_lease_release(const void *target, const SnowidLeaseRequest *request,
						SnowidStoreResult *result)
{
	const SnowidStoreRequest *claim = request->claim;
	char		numbers[3][24];
	const char *values[7];
	SnowidPgRow row;

	snprintf(numbers[0], 24, "%d", claim->datacenter_id);
	snprintf(numbers[1], 24, "%d", request->worker_id);
	snprintf(numbers[2], 24, INT64_FORMAT, request->fence_ms);
	values[0] = numbers[0];
	values[1] = claim->identity;
	values[2] = claim->secret;
	values[3] = numbers[1];
	values[4] = numbers[2];
	values[5] = request->park ? "true" : "false";
	values[6] = request->token;

	if (!snowid_pg_call(target, claim, snowid_pg_lease_release_sql, 7, values,
						&row, result))
		return SNOWID_LEASE_FAILED;
	snowid_pg_detail(result)->outcome = row.outcome;
	if (row.outcome == SNOWID_PG_LOST)
	{
		strlcpy(result->holder, row.holder, sizeof(result->holder));
		return SNOWID_LEASE_LOST;
	}
	if (row.outcome != SNOWID_PG_OK)
	{
		snowid_pg_bad_reply(result, "The release answered in a way no release answers.");
		return SNOWID_LEASE_FAILED;
	}
	result->status = SNOWID_STORE_OK;
	return SNOWID_LEASE_OK;
}

/*
 * snowid_pg_call
 *		Runs one function of snowid_coordinator in a session of its own and
 *		reads its row; false, with the result saying why, if there is none
 *		or it is of unexpected shape.  The result's detail holds the store's
 *		account for snowid_pg_report().
 */
static bool
snowid_pg_call(const SnowidPgTarget *target,
			   const SnowidStoreRequest *request, const char *sql,
			   int nparams, const char *const *values, SnowidPgRow *row,
			   SnowidStoreResult *result)
{
	SnowidPgDetail *detail = palloc0(sizeof(SnowidPgDetail));
	SnowidPgSession session;
	PGresult   *volatile res = NULL;
	bool		read = false;

	memset(result, 0, sizeof(*result));
	memset(row, 0, sizeof(*row));
	detail->target = target;
	detail->worker_id = -1;
	result->detail = detail;
	result->worker_id = -1;
	snprintf(result->where, sizeof(result->where), "postgresql at %s",
			 target->describe);

	snowid_pg_begin(&session, request, result);
	PG_TRY();
	{
		if (snowid_pg_connect(&session, target))
			res = snowid_pg_query(&session, sql, nparams, values);
		if (res != NULL)
			read = snowid_pg_read_row(res, row);
	}
	PG_FINALLY();
	{
		if (res != NULL)
			PQclear(res);
		snowid_pg_end(&session);
	}
	PG_END_TRY();

	detail->connected = session.connected;
	detail->warned = session.warned;
	detail->password_asked = session.password_asked;
	strlcpy(detail->sqlstate, session.sqlstate, sizeof(detail->sqlstate));
	if (res == NULL)
		return false;
	if (!read)
	{
		snowid_pg_bad_reply(result, "The coordination database answered with a row of unexpected shape.");
		return false;
	}
	return true;
}

/*
 * snowid_pg_read_row
 *		The one row of a function of snowid_coordinator; false if the
 *		result has another shape.
 */
static bool
snowid_pg_read_row(const PGresult *res, SnowidPgRow *row)
{
	static const struct
	{
		const char *name;
		SnowidPgOutcome outcome;
	}			outcomes[] = {
		{"ok", SNOWID_PG_OK},
		{"all_held", SNOWID_PG_ALL_HELD},
		{"fenced", SNOWID_PG_FENCED},
		{"conflict", SNOWID_PG_CONFLICT},
		{"holds_other", SNOWID_PG_HOLDS_OTHER},
		{"lost", SNOWID_PG_LOST},
		{"quiet", SNOWID_PG_QUIET},
	};
	const char *outcome;
	int			i;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
		PQnfields(res) != 8 || PQgetisnull(res, 0, 0))
		return false;
	outcome = PQgetvalue(res, 0, 0);
	row->outcome = SNOWID_PG_BAD_REPLY;
	for (i = 0; i < lengthof(outcomes); i++)
	{
		if (strcmp(outcome, outcomes[i].name) == 0)
			row->outcome = outcomes[i].outcome;
	}
	if (row->outcome == SNOWID_PG_BAD_REPLY ||
		!snowid_pg_number(res, 1, &row->worker_id) ||
		!snowid_pg_number(res, 2, &row->floor_ms) ||
		!snowid_pg_number(res, 3, &row->fence_ms) ||
		!snowid_pg_number(res, 4, &row->lease_ms) ||
		!snowid_pg_number(res, 6, &row->state.generation) ||
		!snowid_pg_number(res, 7, &row->state.counter))
		return false;
	/* a state record in range, or none (NULL: no quiet_ms was sent) */
	if (row->state.generation > SNOWID_STATE_MAX ||
		row->state.counter > SNOWID_STATE_MAX)
		return false;
	if (row->state.generation <= 0 || row->state.counter < 0)
		memset(&row->state, 0, sizeof(row->state));
	if (!PQgetisnull(res, 0, 5))
	{
		const char *holder = PQgetvalue(res, 0, 5);
		const char *p;

		if (strlen(holder) >= sizeof(row->holder))
			return false;
		for (p = holder; *p; p++)
		{
			if ((unsigned char) *p < ' ' || *p == 0x7f)
				return false;
		}
		strlcpy(row->holder, holder, sizeof(row->holder));
	}
	return true;
}

/*
 * snowid_pg_number
 *		A column of the row as a non-negative number, -1 if NULL; false if
 *		it is anything else.
 */
static bool
snowid_pg_number(const PGresult *res, int column, int64 *value)
{
	const char *text;
	char	   *end;
	long long	n;

	if (PQgetisnull(res, 0, column))
	{
		*value = -1;
		return true;
	}
	text = PQgetvalue(res, 0, column);
	errno = 0;
	n = strtoll(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || n < 0)
		return false;
	*value = n;
	return true;
}

/*
 * snowid_pg_refusal
 *		A claim's refusal into the result; false if it is not one a claim
 *		makes, or names what the request could not have caused.
 */
static bool
snowid_pg_refusal(const SnowidStoreRequest *request, const SnowidPgRow *row,
				  SnowidStoreResult *result)
{
	SnowidPgDetail *detail = snowid_pg_detail(result);

	result->status = SNOWID_STORE_FAILED;
	detail->outcome = row->outcome;
	detail->worker_id = (int) Min(row->worker_id, INT_MAX);
	detail->fence_ms = row->fence_ms;
	switch (row->outcome)
	{
		case SNOWID_PG_ALL_HELD:
			result->status = SNOWID_STORE_ALL_HELD;
			return true;
		case SNOWID_PG_QUIET:
			result->status = SNOWID_STORE_QUIET;
			result->retry_ms = row->fence_ms;
			return snowid_store_quiet_fits(request, row->fence_ms);
		case SNOWID_PG_FENCED:
			if (!snowid_store_fenced_fits(request, row->worker_id,
										  row->fence_ms))
				return false;
			if (row->fence_ms > request->plausible_ms)
				detail->outcome = SNOWID_PG_IMPLAUSIBLE;
			else
				result->status = SNOWID_STORE_REFUSED;
			return true;
		case SNOWID_PG_CONFLICT:
			result->status = SNOWID_STORE_REFUSED;
			strlcpy(result->holder, row->holder, sizeof(result->holder));
			return request->explicit_worker_id >= 0;
		case SNOWID_PG_HOLDS_OTHER:
			result->status = SNOWID_STORE_REFUSED;
			return request->explicit_worker_id >= 0 &&
				row->worker_id >= 0 && row->worker_id <= INT_MAX;
		default:
			return false;
	}
}

/*
 * snowid_pg_grant
 *		A row's lease into grant, for the store's checks (coord/store.c); a
 *		worker id past any int becomes -1, which no check takes.
 */
static void
snowid_pg_grant(const SnowidPgRow *row, SnowidLeaseGrant *grant)
{
	grant->worker_id = row->worker_id <= INT_MAX ? (int) row->worker_id : -1;
	grant->floor_ms = row->floor_ms;
	grant->fence_ms = row->fence_ms;
	grant->left_ms = row->lease_ms;
	grant->refused_fence_ms = 0;
}

/*
 * snowid_pg_bad_reply
 *		A reply no function of snowid_coordinator gives: a failure.
 */
static void
snowid_pg_bad_reply(SnowidStoreResult *result, const char *what)
{
	result->status = SNOWID_STORE_FAILED;
	snowid_pg_detail(result)->outcome = SNOWID_PG_BAD_REPLY;
	strlcpy(result->message, what, sizeof(result->message));
}

/*
 * snowid_pg_detail
 *		The store's account kept with a result.
 */
static SnowidPgDetail *
snowid_pg_detail(const SnowidStoreResult *result)
{
	Assert(result->detail != NULL);
	return (SnowidPgDetail *) result->detail;
}

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
static void
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
				hint = "Wait until then and call again, or set snowid.worker_id to another free id.";
				break;
			}
			message = psprintf("no worker id of datacenter %d can be taken until %s",
							   request->datacenter_id,
							   snowid_unix_ms_text(detail->fence_ms));
			text = psprintf("Every worker id not held by a server was on lease, and the ids of its last holder reach past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms); worker id %d is free first, %lld ms past it.",
							detail->worker_id,
							(long long) (detail->fence_ms - request->usable_ms));
			hint = "Wait until then and try again, or free the worker id of a decommissioned server.";
			break;

		case SNOWID_PG_IMPLAUSIBLE:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			message = psprintf("the coordination database holds an impossible fence for worker id %d of datacenter %d",
							   detail->worker_id, request->datacenter_id);
			text = psprintf("The fence is %s, %lld ms past the latest one a snowid server can have written by now; snowid takes no worker id on the word of one that far ahead.",
							snowid_unix_ms_text(detail->fence_ms),
							(long long) (detail->fence_ms - request->plausible_ms));
			hint = "Find out who else writes snowid_coordinator's tables, then set the fence to just past the last id any server issued with that worker id.";
			break;

		case SNOWID_PG_CONFLICT:
			sqlstate = ERRCODE_OBJECT_IN_USE;
			message = psprintf("worker id %d of datacenter %d is held by another server",
							   request->explicit_worker_id,
							   request->datacenter_id);
			text = psprintf("This server is \"%s\"; the coordination database has worker id %d registered to \"%s\".",
							request->identity, request->explicit_worker_id,
							result->holder);
			hint = strncmp(result->holder, "lease ", 6) == 0 ?
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
				else if (strcmp(s, "42501") == 0 &&
						 strstr(result->message, "wrong holder secret") != NULL)
				{
					message = psprintf("the coordination database at %s refused this server's holder secret",
									   where);
					hint = "Another secret was registered for this server's holder name: another server claims under its name, or this server lost its file snowid_holder_secret.  Once sure that this server is the one of that name, an administrator calls snowid_coordinator.reset_secret() (doc/security.md).";
				}
				else if (strcmp(s, "42501") == 0)
					hint = "Grant the role of snowid.coordinator_url EXECUTE on the functions of snowid_coordinator (doc/coordinator.md).";
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
static void
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
