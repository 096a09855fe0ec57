/*-------------------------------------------------------------------------
 *
 * store.c
 *	  What every claim store shares (coord/store.h): a report of how a
 *	  call ended sent where it may go.  Nothing here talks to a store;
 *	  no locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "coord/store.h"

static void snowid_store_send(int elevel, const SnowidStoreReport *report);

/*
 * snowid_store_emit
 *		Sends a report at elevel (with ERROR, does not return).  What a
 *		report says of a store (its hosts and ports, its keys, the
 *		identities of servers, its replies) reaches a client only if
 *		client_sees_store: a role that may read the store's URL.  For any
 *		other client full goes to the server log only, and an error reaches
 *		the client as brief: its SQLSTATE and a message that names no host,
 *		port, key or identity, with a detail that sends it to the server
 *		log.  A role without privileges that happens to run the first claim
 *		after a start learns the outcome, not the topology.
 */
void
snowid_store_emit(int elevel, bool client_sees_store,
				  const SnowidStoreReport *full,
				  const SnowidStoreReport *brief)
{
	if (client_sees_store)
	{
		snowid_store_send(elevel, full);
		return;
	}
	snowid_store_send(LOG_SERVER_ONLY, full);
	if (elevel >= ERROR)
		snowid_store_send(elevel, brief);
}

/*
 * snowid_store_send
 *		Sends one report at elevel.
 */
static void
snowid_store_send(int elevel, const SnowidStoreReport *report)
{
	ereport(elevel,
			(errcode(report->sqlstate),
			 errmsg_internal("%s", report->message),
			 report->detail ? errdetail_internal("%s", report->detail) : 0,
			 report->hint ? errhint("%s", report->hint) : 0));
}
