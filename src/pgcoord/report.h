/*-------------------------------------------------------------------------
 *
 * report.h
 *	  The account a call of the coordination database leaves in its result
 *	  (SnowidPgDetail, filled by store.c), and report.c's reports of it:
 *	  snowid_pg_report() turns a call that did not end well into an ereport
 *	  at the given level, snowid_pg_refused_fence() warns of a fence a
 *	  renewal does not take.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_PGCOORD_REPORT_H
#define SNOWID_PGCOORD_REPORT_H

#include "coord/store.h"
#include "pgcoord/target.h"

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
	SNOWID_PG_REGISTER,			/* no key registered: send it under the
								 * pad answered */
	SNOWID_PG_BAD_REPLY			/* a row of unexpected shape */
} SnowidPgOutcome;

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
 * snowid_pg_detail
 *		The store's account kept with a result.
 */
static inline SnowidPgDetail *
snowid_pg_detail(const SnowidStoreResult *result)
{
	Assert(result->detail != NULL);
	return (SnowidPgDetail *) result->detail;
}

extern void snowid_pg_report(int elevel, const SnowidStoreRequest *request,
							 const SnowidStoreResult *result);
extern void snowid_pg_refused_fence(const SnowidStoreRequest *request,
									const SnowidLeaseGrant *grant);

#endif							/* SNOWID_PGCOORD_REPORT_H */
