/*-------------------------------------------------------------------------
 *
 * topology.h
 *	  Sending commands on a datacenter's keys to the right Redis server:
 *	  what a call asks for (SnowidRedisRequest), a session that finds the
 *	  server and logs in, and the one function every such command goes
 *	  through.
 *
 * A session lives in the caller's frame:
 *
 *		PG_TRY();
 *		{
 *			if (snowid_redis_open(&session, target, request, result))
 *				reply = snowid_redis_command(&session, argc, argv, "command",
 *											 result);
 *		}
 *		PG_FINALLY();
 *		{
 *			snowid_redis_close(&session);
 *		}
 *
 * snowid_script_run() (scripts.h) does just that for a function of snowid's
 * library, then WAITs for replicas.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_TOPOLOGY_H
#define SNOWID_REDIS_TOPOLOGY_H

#include "redis/conn.h"
#include "redis/result.h"
#include "redis/url.h"

/* What a call to Redis asks for: where, as whom, within how long */
struct SnowidStoreRequest;

typedef struct SnowidRedisRequest
{
	const struct SnowidStoreRequest *store; /* the store's request this one
											 * is made from: what Redis'
											 * answers are checked against
											 * (coord/store.c) */
	const char *key_prefix;		/* snowid.redis_key_prefix; must pass
								 * snowid_redis_check_key_prefix() */
	int			datacenter_id;
	int			explicit_worker_id; /* snowid.worker_id, or -1 to take the
									 * lowest free id */
	int			preferred_worker_id;	/* with explicit_worker_id -1: the id
										 * to take if this identity holds
										 * none and it is free (this server's
										 * last claim), or -1 */
	int			max_worker_id;	/* highest worker id of the bit layout */
	const char *identity;		/* from snowid_redis_identity() */
	const char *secret;			/* the holder secret: 64 lower-case hex
								 * digits, sent with every call */
	int			timeout_ms;		/* the whole claim ends within it */
	int			min_replicas;	/* WAIT for this many replicas; 0: none */
	const char *tls_ca_file;	/* NULL or "": the system's CAs */
	const char *tls_cert_file;	/* NULL or "": no client certificate */
	const char *tls_key_file;
	const char *tls_key_passphrase_file;	/* NULL or "": the key is not
											 * encrypted */
	const char *password_file;	/* NULL or "": the URL's password */
	const char *sentinel_password_file; /* NULL or "": the URL's
										 * sentinel_password */
	const SnowidRedisHostList *redirect_hosts;	/* servers a sentinel's answer
												 * or a redirection may lead
												 * to, beside the URL's own;
												 * NULL for none */
	int64		client_ms;		/* where this server's generator is, Unix
								 * ms: a lease's fence goes a lease past it */
	int64		usable_ms;		/* the latest fence this server can start
								 * above now: its clock plus
								 * snowid.max_drift_ms, Unix ms */
	int64		plausible_ms;	/* the latest fence any snowid server can
								 * have written by now, Unix ms: a later
								 * one is refused as corrupt */
	int64		free_margin_ms; /* the margin a hint's free command names */
	int64		quiet_ms;		/* a quiet period's length, whether the id
								 * asked for is this server's own, and how
								 * far apart the fleet's clocks may lie (the
								 * forgetting rule, coord/store.h) */
	bool		reassert;
	int64		clock_margin_ms;
	bool		checkin;		/* a check-in: reads first (claim.c) */
	SnowidStoreSeen seen;		/* the state record this server saw last */
	int64		confirmed_ms;	/* a restart's re-assertion: when its last
								 * granted call was sent; -1: none sent */
	uint32		wait_event_info;	/* shown while waiting on Redis */
	bool		client_sees_redis;	/* whether a client that sees this
									 * process's messages may learn Redis'
									 * hosts, keys and the identities of
									 * servers (report.c) */
} SnowidRedisRequest;

/*
 * One call: the server found, logged in, under one deadline.  target points
 * at login, the URL's target with the passwords of the password files
 * filled in, wiped when the session closes.
 */
typedef struct SnowidRedisSession
{
	const SnowidRedisTarget *target;
	SnowidRedisTarget login;
	const SnowidRedisRequest *request;
	SnowidDeadline deadline;
	SnowidRedisConn conn;
	SnowidRedisNode node;		/* the server conn is logged in to */
} SnowidRedisSession;

struct redisReply;

extern bool snowid_redis_open(SnowidRedisSession *session,
							  const SnowidRedisTarget *target,
							  const SnowidRedisRequest *request,
							  SnowidRedisResult *result);
extern struct redisReply *snowid_redis_command(SnowidRedisSession *session,
											   int argc, const char **argv,
											   const char *what,
											   SnowidRedisResult *result);
extern bool snowid_redis_wait_replicas(SnowidRedisSession *session,
									   SnowidRedisResult *result);
extern void snowid_redis_close(SnowidRedisSession *session);

#endif							/* SNOWID_REDIS_TOPOLOGY_H */
