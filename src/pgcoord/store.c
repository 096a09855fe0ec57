/*-------------------------------------------------------------------------
 *
 * store.c
 *	  A PostgreSQL coordination database as a claim store: the functions of
 *	  coord/store.h as CALLs of the procedures of the extension
 *	  snowid_coordinator, one statement each (which commits its work), each
 *	  leaving its account of how it ended for pgcoord/report.c.
 *
 * Every call sends this server's holder name and a proof of its secret
 * (coord/holder_secret.c), never the secret; a proof of another key than
 * the one registered for the name is refused (SQLSTATE 42501).  Every
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

#include "coord/holder_secret.h"
#include "pgcoord/conn.h"
#include "pgcoord/report.h"
#include "pgcoord/store.h"
#include "pgcoord/target.h"

StaticAssertDecl(sizeof(SnowidPgTarget) <= SNOWID_STORE_TARGET_MAX,
				 "a PostgreSQL URL must fit a store's target");

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

/* The most text parameters a CALL of snowid_coordinator is sent with */
#define SNOWID_PG_PARAMS_MAX	16

/*
 * The parameters of one CALL, in order, each a text or NULL; a number is
 * kept in its slot of numbers.  Start from {0}.
 */
typedef struct SnowidPgParams
{
	int			count;
	bool		overflow;		/* more were added than it holds: not sent */
	const char *values[SNOWID_PG_PARAMS_MAX];
	char		numbers[SNOWID_PG_PARAMS_MAX][24];
	int			proof_slot;		/* where the holder proof goes, made as the
								 * call is sent (snowid_pg_call) */
	char		proof[SNOWID_HOLDER_PROOF_LEN];
} SnowidPgParams;

/*
 * The servers' entry points are procedures, which commit right after their
 * work (no session keeps the datacenter's lock past its CALL) and return
 * their row in INOUT parameters that the call leaves out.
 */
static const char *const snowid_pg_claim_sql =
"CALL snowid_coordinator.claim("
"$1::int, $2::text, $3::text, $4::int, $5::int, $6::int, $7::bigint, "
"$8::bigint, $9::boolean, $10::bigint, $11::bigint, $12::bigint, "
"$13::bigint)";
static const char *const snowid_pg_lease_claim_sql =
"CALL snowid_coordinator.lease_claim("
"$1::int, $2::text, $3::text, $4::int, $5::bigint, $6::bigint, $7::bigint, "
"$8::int, $9::bigint, $10::text, $11::bigint, $12::bigint, $13::bigint, "
"$14::bigint)";
static const char *const snowid_pg_lease_renew_sql =
"CALL snowid_coordinator.lease_renew("
"$1::int, $2::text, $3::text, $4::int, $5::bigint, $6::bigint, $7::text, "
"$8::bigint, $9::bigint, $10::bigint, $11::bigint, $12::bigint)";
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
static int	snowid_pg_param_slot(SnowidPgParams *params);
static void snowid_pg_add_int(SnowidPgParams *params, int64 value);
static void snowid_pg_add_text(SnowidPgParams *params, const char *text);
static void snowid_pg_add_bool(SnowidPgParams *params, bool value);
static void snowid_pg_add_holder(SnowidPgParams *params,
								 const SnowidStoreRequest *request);
static void snowid_pg_add_seen(SnowidPgParams *params,
							   const SnowidStoreRequest *request);
static bool snowid_pg_call(const SnowidPgTarget *target,
						   const SnowidStoreRequest *request, const char *name,
						   const char *sql, const SnowidPgParams *params,
						   SnowidPgRow *row, SnowidStoreResult *result);
static bool snowid_pg_call_once(const SnowidPgTarget *target,
								const SnowidStoreRequest *request,
								const char *sql,
								const SnowidPgParams *params,
								SnowidPgRow *row, SnowidStoreResult *result);
static bool snowid_pg_read_row(const PGresult *res, SnowidPgRow *row);
static bool snowid_pg_number(const PGresult *res, int column, int64 *value);
static bool snowid_pg_refusal(const SnowidStoreRequest *request,
							  const SnowidPgRow *row,
							  SnowidStoreResult *result);
static void snowid_pg_bad_reply(SnowidStoreResult *result, const char *what);
static void snowid_pg_grant(const SnowidPgRow *row, SnowidLeaseGrant *grant);

/*
 * The coordination database's entries of the store interface
 * (coord/store.h).  They look like Redis' (redis/store.c), as two
 * implementations of one interface do: each sends its own procedure.
 */
const SnowidStore snowid_pg_store = {
	.name = "postgresql",
	.title = "the coordination database",
	.title_start = "The coordination database",
	.schemes = "postgresql://, postgres://",
	.accepts = snowid_pg_url_scheme,
	.parse = snowid_pg_parse,
	.claim = snowid_pg_claim,
	.lease_claim = snowid_pg_lease_claim,
	.lease_renew = snowid_pg_lease_renew,
	.lease_release = snowid_pg_lease_release,
	.report = snowid_pg_report,
	.report_refused_fence = snowid_pg_refused_fence,
	.quiet_doc = "doc/coordinator.md, \"When the coordination database forgets\"",
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
 *		seen_counter, clock_margin_ms, confirmed_ms): confirmed_ms NULL but
 *		for a restart's re-assertion.  Every parameter is sent, so that the
 *		proof covers the call the procedure sees.
 */
static void
snowid_pg_claim(const void *target, const SnowidStoreRequest *request,
				SnowidStoreResult *result)
{
	SnowidPgParams params = {0};
	SnowidPgRow row;

	snowid_pg_add_holder(&params, request);
	snowid_pg_add_int(&params, request->explicit_worker_id);
	snowid_pg_add_int(&params, request->max_worker_id);
	snowid_pg_add_int(&params, request->preferred_worker_id);
	snowid_pg_add_int(&params, request->usable_ms);
	snowid_pg_add_int(&params, request->quiet_ms);
	snowid_pg_add_bool(&params, request->reassert);
	snowid_pg_add_seen(&params, request);
	if (request->confirmed_ms >= 0)
		snowid_pg_add_int(&params, request->confirmed_ms);
	else
		snowid_pg_add_text(&params, NULL);

	if (!snowid_pg_call(target, request, "claim", snowid_pg_claim_sql,
						&params, &row, result))
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
 *		seen_generation, seen_counter, clock_margin_ms).  The grant must
 *		start at or above its floor, within what the request can wait for,
 *		and reach no further than a lease past it or the generator.
 */
static void
snowid_pg_lease_claim(const void *target, const SnowidLeaseRequest *request,
					  SnowidLeaseGrant *grant, SnowidStoreResult *result)
{
	const SnowidStoreRequest *claim = request->claim;
	SnowidPgParams params = {0};
	SnowidPgRow row;

	snowid_pg_add_holder(&params, claim);
	snowid_pg_add_int(&params, claim->max_worker_id);
	snowid_pg_add_int(&params, request->lease_ms);
	snowid_pg_add_int(&params, claim->client_ms);
	snowid_pg_add_int(&params, claim->usable_ms);
	snowid_pg_add_int(&params, claim->preferred_worker_id);
	snowid_pg_add_int(&params, request->wait_ms);
	snowid_pg_add_text(&params, request->token);
	snowid_pg_add_int(&params, claim->quiet_ms);
	snowid_pg_add_seen(&params, claim);

	memset(grant, 0, sizeof(*grant));
	if (!snowid_pg_call(target, claim, "lease_claim",
						snowid_pg_lease_claim_sql, &params, &row, result))
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
 *		seen_counter, clock_margin_ms).  A fence past the one asked for,
 *		which no holder of this claim wrote, is not taken:
 *		grant->refused_fence_ms keeps it for the caller to report.
 */
static SnowidLeaseOutcome
snowid_pg_lease_renew(const void *target, const SnowidLeaseRequest *request,
					  SnowidLeaseGrant *grant, SnowidStoreResult *result)
{
	const SnowidStoreRequest *claim = request->claim;
	SnowidPgParams params = {0};
	SnowidPgRow row;

	snowid_pg_add_holder(&params, claim);
	snowid_pg_add_int(&params, request->worker_id);
	snowid_pg_add_int(&params, request->lease_ms);
	snowid_pg_add_int(&params, request->fence_ms);
	snowid_pg_add_text(&params, request->token);
	/* what re-asserts the lease in a quiet period */
	snowid_pg_add_int(&params, claim->quiet_ms);
	snowid_pg_add_int(&params, claim->client_ms);
	snowid_pg_add_seen(&params, claim);

	memset(grant, 0, sizeof(*grant));
	if (!snowid_pg_call(target, claim, "lease_renew",
						snowid_pg_lease_renew_sql, &params, &row, result))
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
	SnowidPgParams params = {0};
	SnowidPgRow row;

	snowid_pg_add_holder(&params, claim);
	snowid_pg_add_int(&params, request->worker_id);
	snowid_pg_add_int(&params, request->fence_ms);
	snowid_pg_add_bool(&params, request->park);
	snowid_pg_add_text(&params, request->token);

	if (!snowid_pg_call(target, claim, "lease_release",
						snowid_pg_lease_release_sql, &params, &row, result))
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
 * snowid_pg_param_slot
 *		The index of the next parameter; -1, marking the parameters as not
 *		to be sent, if all SNOWID_PG_PARAMS_MAX are taken.
 */
static int
snowid_pg_param_slot(SnowidPgParams *params)
{
	Assert(params->count < SNOWID_PG_PARAMS_MAX);
	if (params->count >= SNOWID_PG_PARAMS_MAX)
	{
		params->overflow = true;
		return -1;
	}
	return params->count++;
}

/*
 * snowid_pg_add_int
 *		Appends a number (an int or a bigint of the CALL).
 */
static void
snowid_pg_add_int(SnowidPgParams *params, int64 value)
{
	int			i = snowid_pg_param_slot(params);

	if (i < 0)
		return;
	snprintf(params->numbers[i], sizeof(params->numbers[i]), INT64_FORMAT,
			 value);
	params->values[i] = params->numbers[i];
}

/*
 * snowid_pg_add_text
 *		Appends a text, or NULL for SQL's NULL; it must outlive the CALL.
 */
static void
snowid_pg_add_text(SnowidPgParams *params, const char *text)
{
	int			i = snowid_pg_param_slot(params);

	if (i >= 0)
		params->values[i] = text;
}

/*
 * snowid_pg_add_bool
 *		Appends a boolean.
 */
static void
snowid_pg_add_bool(SnowidPgParams *params, bool value)
{
	snowid_pg_add_text(params, value ? "true" : "false");
}

/*
 * snowid_pg_add_holder
 *		Appends what every call begins with: datacenter, identity, and the
 *		slot of the holder proof, which stands for the secret
 *		(coord/holder_secret.c): never the secret itself, which the
 *		database's log would show.
 */
static void
snowid_pg_add_holder(SnowidPgParams *params, const SnowidStoreRequest *request)
{
	snowid_pg_add_int(params, request->datacenter_id);
	snowid_pg_add_text(params, request->identity);
	params->proof_slot = snowid_pg_param_slot(params);
}

/*
 * snowid_pg_add_seen
 *		Appends what the forgetting rule reads, which the calls that grant
 *		end with: seen_generation, seen_counter, clock_margin_ms.
 */
static void
snowid_pg_add_seen(SnowidPgParams *params, const SnowidStoreRequest *request)
{
	snowid_pg_add_int(params, request->seen.generation);
	snowid_pg_add_int(params, request->seen.counter);
	snowid_pg_add_int(params, request->clock_margin_ms);
}

/*
 * snowid_pg_call
 *		Runs the procedure name of snowid_coordinator (sql) with a holder
 *		proof made for this call (its name and every parameter but the
 *		proof, as sent), and again, once each, with the key under the pad
 *		the database answered when it has none registered (outcome
 *		"register"), and with a larger n when it took a larger one already
 *		(SQLSTATE 28000, "the last n taken is N").  See
 *		snowid_pg_call_once().
 */
static bool
snowid_pg_call(const SnowidPgTarget *target,
			   const SnowidStoreRequest *request, const char *name,
			   const char *sql, const SnowidPgParams *params,
			   SnowidPgRow *row, SnowidStoreResult *result)
{
	SnowidPgParams sent = *params;
	const char *call[SNOWID_PG_PARAMS_MAX + 1];
	int			call_parts = 0;
	char		pad[SNOWID_HOLDER_LEN];
	bool		registering = false;
	bool		ok = false;

	call[call_parts++] = name;
	for (int i = 0; i < params->count; i++)
	{
		if (i != params->proof_slot)
			call[call_parts++] = params->values[i];
	}
	for (int attempt = 0; attempt < 3; attempt++)
	{
		const char *last;

		if (sent.proof_slot >= 0)
		{
			snowid_holder_proof(request->secret, SNOWID_PROOF_SHA256,
								registering ? pad : NULL, call, call_parts,
								sent.proof);
			sent.values[sent.proof_slot] = sent.proof;
		}
		ok = snowid_pg_call_once(target, request, sql, &sent, row, result);
		explicit_bzero(sent.proof, sizeof(sent.proof));
		if (ok && row->outcome == SNOWID_PG_REGISTER && !registering &&
			row->holder[0] != '\0')
		{
			strlcpy(pad, row->holder, sizeof(pad));
			registering = true;
		}
		else if (ok ||
				 strcmp(snowid_pg_detail(result)->sqlstate, "28000") != 0 ||
				 (last = strstr(result->message, "the last n taken is ")) == NULL ||
				 !snowid_holder_proof_after(last + 20))
			break;
	}
	return ok;
}

/*
 * snowid_pg_call_once
 *		Runs one function of snowid_coordinator in a session of its own and
 *		reads its row; false, with the result saying why, if there is none
 *		or it is of unexpected shape.  The result's detail holds the store's
 *		account for snowid_pg_report().  Parameters that overflowed are not
 *		sent: the call fails.
 */
static bool
snowid_pg_call_once(const SnowidPgTarget *target,
					const SnowidStoreRequest *request, const char *sql,
					const SnowidPgParams *params, SnowidPgRow *row,
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
	if (params->overflow)
	{
		result->status = SNOWID_STORE_FAILED;
		strlcpy(result->message,
				"snowid built a call of the coordination database with more parameters than it can send.",
				sizeof(result->message));
		return false;
	}

	snowid_pg_begin(&session, request, result);
	PG_TRY();
	{
		if (snowid_pg_connect(&session, target))
			res = snowid_pg_query(&session, sql, params->count,
									  params->values);
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
	/* check_secret()'s refusal */
	result->not_holder = strcmp(detail->sqlstate, "42501") == 0 &&
		strstr(result->message, "wrong holder secret") != NULL;
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
		{"register", SNOWID_PG_REGISTER},
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
			/* reported as it is, also if it ends impossibly far off */
			result->status = SNOWID_STORE_QUIET;
			result->retry_ms = row->fence_ms;
			return row->fence_ms > 0;
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
