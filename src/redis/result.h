/*-------------------------------------------------------------------------
 *
 * result.h
 *	  How a call to Redis ended: SnowidRedisResult, filled by every function
 *	  of src/redis that talks to Redis (a claim, a lease script, the
 *	  connection and its TLS handshake), and the helpers that fill it with a
 *	  sentence of our own or with Redis' words, never a password.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_RESULT_H
#define SNOWID_REDIS_RESULT_H

#include "coord/store.h"
#include "redis/url.h"

/* How a call to Redis ended; see snowid_redis_report() for the SQLSTATE of each */
typedef enum SnowidRedisStatus
{
	SNOWID_REDIS_OK,			/* worker_id is ours */
	SNOWID_REDIS_UNREACHABLE,	/* no connection, I/O error, timeout, or
								 * Redis busy/loading/cluster down */
	SNOWID_REDIS_AUTH_FAILED,	/* AUTH refused, or a password is needed
								 * and none was given (NOAUTH) */
	SNOWID_REDIS_NO_PERMISSION, /* logged in, but the ACL forbids the
								 * commands (NOPERM) */
	SNOWID_REDIS_ALL_HELD,		/* every id 0..max_worker_id is held */
	SNOWID_REDIS_FENCED,		/* the ids not held (or the explicit one)
								 * are fenced past usable_ms: worker_id is
								 * the one fenced least far, floor_ms its
								 * fence */
	SNOWID_REDIS_QUIET,			/* Redis may have forgotten claims: no id
								 * for this server until floor_ms, Redis'
								 * clock (the forgetting rule) */
	SNOWID_REDIS_IMPLAUSIBLE,	/* a fence in Redis lies past plausible_ms:
								 * worker_id's, floor_ms; the message names
								 * its key and field */
	SNOWID_REDIS_CONFLICT,		/* explicit id is held by holder */
	SNOWID_REDIS_WRONG_SECRET,	/* another holder secret is registered
								 * for this identity (SNOWID_WRONG_SECRET) */
	SNOWID_REDIS_HOLDS_OTHER,	/* this identity already holds worker_id,
								 * not the explicit id */
	SNOWID_REDIS_ERROR,	/* any other error reply (READONLY, OOM,
								 * SELECT out of range, ...) */
	SNOWID_REDIS_PROTOCOL_ERROR,	/* a reply of unexpected shape */
	SNOWID_REDIS_TLS_SETUP,		/* CA, certificate or key file unusable */
	SNOWID_REDIS_SECRET_FILE,	/* a file holding a secret (password, key,
								 * passphrase) is unusable or readable by
								 * others */
	SNOWID_REDIS_TLS_UNTRUSTED, /* server certificate not signed by a CA
								 * we trust */
	SNOWID_REDIS_TLS_HOSTNAME,	/* certificate is for another host name */
	SNOWID_REDIS_TLS_EXPIRED,	/* certificate expired or not yet valid */
	SNOWID_REDIS_TLS_CLIENT_CERT,	/* server wants a client certificate,
									 * or refused ours */
	SNOWID_REDIS_TLS_FAILED,	/* any other TLS handshake failure */
	SNOWID_REDIS_NO_SENTINEL,	/* no sentinel could be reached */
	SNOWID_REDIS_NO_MASTER,		/* the sentinels know no master by that
								 * name */
	SNOWID_REDIS_NOT_MASTER,	/* the named master says it is a replica */
	SNOWID_REDIS_FEW_REPLICAS,	/* WAIT: fewer replicas than
								 * snowid.redis_min_replicas have the claim */
	SNOWID_REDIS_REDIRECT_REFUSED,	/* a sentinel or a redirection named a
									 * server neither in the URL nor in
									 * snowid.redis_redirect_hosts */
	SNOWID_REDIS_NO_LIBRARY		/* snowid's function library is not loaded
								 * (or the user may not FCALL), and the
								 * user may not EVALSHA or EVAL instead */
} SnowidRedisStatus;

/* How a call ran a function of snowid's library (scripts.c) */
typedef enum SnowidScriptPath
{
	SNOWID_SCRIPT_FCALL,		/* FCALL of the loaded library */
	SNOWID_SCRIPT_EVAL_OLD_REDIS,	/* Redis knows no FCALL (before 7):
									 * EVALSHA or EVAL */
	SNOWID_SCRIPT_EVAL_NOT_LOADED,	/* FCALL found no such function:
									 * EVALSHA or EVAL */
	SNOWID_SCRIPT_EVAL_NO_FCALL /* the user may not FCALL: EVALSHA or EVAL */
} SnowidScriptPath;

typedef struct SnowidRedisResult
{
	SnowidRedisStatus status;
	int			worker_id;		/* OK: the claimed id; CONFLICT: the explicit
								 * id; HOLDS_OTHER: the id already held; else
								 * -1 */
	bool		connected;		/* UNREACHABLE: a connection was made, and
								 * lost, timed out or answered "not now" */
	bool		evictable;		/* OK: Redis reported an allkeys-* eviction
								 * policy, which may drop the claim */
	SnowidScriptPath script_path;	/* how the function was called */
	int			replicas;		/* FEW_REPLICAS: how many acknowledged */
	SnowidStoreSeen state;		/* OK: the state record after the call, if
								 * the function said (generation 0: not) */
	int64		floor_ms;		/* OK: the fence worker_id had, Unix ms:
								 * every id issued with it so far lies
								 * below, so this server's must start at
								 * or above it; FENCED: the fence */
	double		elapsed_ms;		/* how long the claim took */
	char		master_name[SNOWID_REDIS_MASTER_NAME_LEN];	/* of the URL's
															 * sentinels */
	char		node[SNOWID_REDIS_DESCRIBE_LEN];	/* server last talked to:
													 * host:port,
													 * [ipv6]:port or
													 * unix:/path */
	char		holder[SNOWID_HOLDER_LEN];	/* CONFLICT: identity holding
												 * the explicit id */
	const char *secret_setting; /* SECRET_FILE: the setting naming the
								 * file */
	const char *secret_hint;	/* SECRET_FILE: what to do */
	char		message[SNOWID_REDIS_MESSAGE_LEN];	/* a sentence for the
													 * detail, in hiredis' or
													 * Redis' own words; OK
													 * with evictable: the
													 * policy */
} SnowidRedisResult;

/* A failure in our own words */
extern void snowid_redis_fail(SnowidRedisResult *result,
							  SnowidRedisStatus status, const char *fmt,...)
			pg_attribute_printf(3, 4);

/* A failure that quotes Redis (never a password of target) */
extern void snowid_redis_quote(SnowidRedisResult *result,
							   const SnowidRedisTarget *target,
							   SnowidRedisStatus status, const char *lead,
							   const char *text);
extern SnowidRedisStatus snowid_classify_error(const char *err,
											   bool during_auth);
extern void snowid_error_code(const char *err, const SnowidRedisTarget *target,
							  char *buf, size_t len);
extern void snowid_end_sentence(char *msg, size_t size);
extern void snowid_redis_text(char *dst, size_t dstlen,
							  const SnowidRedisTarget *target,
							  const char *text);
extern void snowid_redis_error_reply(const SnowidRedisTarget *target,
									 const char *err,
									 SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_RESULT_H */
