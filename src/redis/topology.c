/*-------------------------------------------------------------------------
 *
 * topology.c
 *	  Where a command goes: the server of the URL, the master that the
 *	  sentinels name, or the node a Redis Cluster redirects to.  Logging in
 *	  on every new connection, and snowid_redis_command(), the one function
 *	  through which every command on a datacenter's keys is sent (ASKING,
 *	  MOVED and ASK included), then WAIT for replicas.
 *
 * Nothing here touches shared memory or takes a lock.  The functions never
 * palloc, and ereport only through the CHECK_FOR_INTERRUPTS() of a wait;
 * the caller closes the session's connection in PG_FINALLY (or PG_CATCH),
 * so no hiredis object outlives a call.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include <hiredis/hiredis.h>

#include "redis/secret.h"
#include "redis/topology.h"

/* MOVED/ASK hops followed before giving up; a stable cluster needs one */
#define SNOWID_REDIS_MAX_REDIRECTS	3

/* How long to wait before sending again a command answered TRYAGAIN */
#define SNOWID_REDIS_TRYAGAIN_MS	20

/*
 * Send a command of our own (argv[0] is its name) and return its reply; an
 * error reply ends the call: NULL, with result quoting it as "Redis replied
 * to <command>: ...".
 */
static redisReply *
snowid_conn_ask(SnowidRedisConn *conn, const SnowidRedisTarget *target,
				int argc, const char **argv, SnowidRedisResult *result)
{
	redisReply *reply = snowid_conn_command(conn, argc, argv, result);
	char		lead[64];

	if (reply == NULL || reply->type != REDIS_REPLY_ERROR)
		return reply;
	snprintf(lead, sizeof(lead), "Redis replied to %s: ", argv[0]);
	snowid_redis_quote(result, target,
					   snowid_classify_error(reply->str, false), lead,
					   reply->str);
	freeReplyObject(reply);
	return NULL;
}

/*
 * Send AUTH with user (may be "") and password, unless both are "".
 * Redis' reply to it is never shown, only its error code: it may echo the
 * arguments, password included (as a renamed AUTH does: "unknown command
 * 'AUTH', with args beginning with: ...").  False with result filled on
 * failure.
 */
static bool
snowid_auth(SnowidRedisConn *conn, const SnowidRedisTarget *target,
			const char *user, const char *password,
			SnowidRedisResult *result)
{
	const char *argv[3];
	int			argc = 0;
	redisReply *reply;
	char		code[16];

	if (user[0] == '\0' && password[0] == '\0')
		return true;
	argv[argc++] = "AUTH";
	if (user[0] != '\0')
		argv[argc++] = user;
	argv[argc++] = password;
	reply = snowid_conn_command(conn, argc, argv, result);
	if (reply == NULL)
		return false;
	if (reply->type != REDIS_REPLY_ERROR)
	{
		freeReplyObject(reply);
		return true;
	}
	snowid_error_code(reply->str, target, code, sizeof(code));
	snowid_redis_fail(result, snowid_classify_error(reply->str, true),
					  "Redis refused AUTH%s%s%s; the rest of its reply is not shown because AUTH carried the password.",
					  code[0] ? " (" : "", code, code[0] ? ")" : "");
	freeReplyObject(reply);
	return false;
}

/*
 * Log in on a fresh connection: AUTH, then SELECT the database if it is not
 * 0.  False with result filled if either fails.
 */
static bool
snowid_login(SnowidRedisConn *conn, const SnowidRedisTarget *target,
			 SnowidRedisResult *result)
{
	const char *argv[2];
	redisReply *reply;
	char		db[16];

	if (!snowid_auth(conn, target, target->user, target->password, result))
		return false;
	if (target->db == 0)
		return true;

	snprintf(db, sizeof(db), "%d", target->db);
	argv[0] = "SELECT";
	argv[1] = db;
	reply = snowid_conn_ask(conn, target, 2, argv, result);
	if (reply == NULL)
		return false;
	freeReplyObject(reply);
	return true;
}

/*
 * If reply is a Redis Cluster redirection ("MOVED <slot> <host>:<port>" or
 * "ASK ..."), point node at the named server and return true.  An empty host
 * means the one already in use.
 */
static bool
snowid_parse_redirect(const redisReply *reply, SnowidRedisNode *node,
					  bool *asking)
{
	const char *p;
	const char *colon;
	int			port;

	if (reply->type != REDIS_REPLY_ERROR)
		return false;
	if (strncmp(reply->str, "MOVED ", 6) == 0)
		*asking = false;
	else if (strncmp(reply->str, "ASK ", 4) == 0)
		*asking = true;
	else
		return false;

	p = strchr(reply->str, ' ');
	p = p ? strchr(p + 1, ' ') : NULL;
	colon = p ? strrchr(p, ':') : NULL;
	if (colon == NULL ||
		!snowid_parse_number(colon + 1, strlen(colon + 1), 1, 65535, &port))
		return false;
	p++;
	if (colon > p)
	{
		if ((size_t) (colon - p) >= sizeof(node->host))
			return false;
		memcpy(node->host, p, colon - p);
		node->host[colon - p] = '\0';
	}
	else if (node->socket_path[0] != '\0')
		return false;			/* no host to reuse */
	node->port = port;
	node->socket_path[0] = '\0';
	return true;
}

/*
 * After a claim that wrote: WAIT until request->min_replicas replicas have
 * it, within what is left of the deadline.  False with result filled if
 * fewer acknowledged: the id must not be used, since a failover now could
 * lose the claim and give the id to another server.
 */
static bool
snowid_wait_replicas(SnowidRedisConn *conn, const SnowidRedisRequest *request,
					 const SnowidDeadline *deadline, SnowidRedisResult *result)
{
	char		replicas[16];
	char		timeout[24];
	const char *argv[3];
	redisReply *reply;
	long		remaining = snowid_deadline_remaining(deadline);

	/*
	 * Keep a quarter of what is left (at most half a second) for the reply,
	 * so that on a busy machine the count still arrives before the deadline;
	 * WAIT 0 would wait forever, so never ask for less than 1 ms.
	 */
	remaining -= Min(remaining / 4, 500);
	if (remaining < 1)
		remaining = 1;
	snprintf(replicas, sizeof(replicas), "%d", request->min_replicas);
	snprintf(timeout, sizeof(timeout), "%ld", remaining);
	argv[0] = "WAIT";
	argv[1] = replicas;
	argv[2] = timeout;
	reply = snowid_conn_command(conn, 3, argv, result);
	if (reply == NULL)
		return false;
	if (reply->type != REDIS_REPLY_INTEGER)
	{
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "Redis answered WAIT with a reply of type %d.",
						  reply->type);
		freeReplyObject(reply);
		return false;
	}
	result->replicas = (int) Min(reply->integer, INT_MAX);
	freeReplyObject(reply);
	if (result->replicas >= request->min_replicas)
		return true;
	snowid_redis_fail(result, SNOWID_REDIS_FEW_REPLICAS,
					  "WAIT %d %ld returned %d.", request->min_replicas,
					  remaining, result->replicas);
	return false;
}

/*
 * Open a connection to node, with TLS if the URL asks for it (rediss:// and
 * rediss-sentinel://, for every server, sentinel and redirection alike).
 * With TLS the handshake, which checks that node's certificate names node's
 * host, comes before anything is sent.
 */
static bool
snowid_open_node(SnowidRedisConn *conn, const SnowidRedisNode *node,
				 const SnowidRedisTarget *target,
				 const SnowidRedisRequest *request,
				 const SnowidDeadline *deadline, SnowidRedisResult *result)
{
	SnowidRedisTls tls;

	tls.ca_file = request->tls_ca_file;
	tls.cert_file = request->tls_cert_file;
	tls.key_file = request->tls_key_file;
	tls.key_passphrase_file = request->tls_key_passphrase_file;
	snowid_conn_close(conn);
	return snowid_conn_open(conn, node, target->tls ? &tls : NULL, deadline,
							result);
}

/*
 * Whether snowid may connect to node, which a sentinel or a Redis Cluster
 * redirection (by) named: one of the URL's servers (its host and port: a
 * host's other ports may be anyone's), or one that
 * snowid.redis_redirect_hosts lists, or any over TLS checked against
 * snowid.redis_tls_ca_file (a CA of the operator's, not the system's, which
 * would take any publicly valid certificate).  Anything else may be a
 * rogue's, which would collect the password (and answer claims as it
 * pleased): nothing is sent to it, and the result says why.
 */
static bool
snowid_may_follow(const SnowidRedisNode *node, const char *by,
				  const SnowidRedisTarget *target,
				  const SnowidRedisRequest *request, SnowidRedisResult *result)
{
	char		where[SNOWID_REDIS_DESCRIBE_LEN];

	if (target->tls && request->tls_ca_file != NULL &&
		request->tls_ca_file[0] != '\0')
		return true;
	if (node->socket_path[0] != '\0' ||
		(pg_strcasecmp(node->host, target->node.host) == 0 &&
		 node->port == target->node.port))
		return true;
	for (int i = 0; i < target->sentinel_count; i++)
	{
		if (pg_strcasecmp(node->host, target->sentinels[i].host) == 0 &&
			node->port == target->sentinels[i].port)
			return true;
	}
	if (snowid_redis_host_listed(request->redirect_hosts, node->host,
								 node->port))
		return true;
	snowid_redis_describe_node(node, where, sizeof(where));
	snowid_redis_fail(result, SNOWID_REDIS_REDIRECT_REFUSED,
					  "%s named the server %s, which is neither a host of the URL nor in snowid.redis_redirect_hosts; snowid sent it nothing.",
					  by, where);
	strlcpy(result->node, where, sizeof(result->node));
	return false;
}

/*
 * Open a connection to node and log in.
 */
static bool
snowid_connect_node(SnowidRedisConn *conn, const SnowidRedisNode *node,
					const SnowidRedisTarget *target,
					const SnowidRedisRequest *request,
					const SnowidDeadline *deadline, SnowidRedisResult *result)
{
	return snowid_open_node(conn, node, target, request, deadline, result) &&
		snowid_login(conn, target, result);
}

/*
 * Check with ROLE that the server the sentinels named is a master; during
 * a failover they may still name one that has become a replica.
 */
static bool
snowid_check_master_role(SnowidRedisConn *conn,
						 const SnowidRedisTarget *target,
						 SnowidRedisResult *result)
{
	const char *argv[] = {"ROLE"};
	redisReply *reply;
	bool		master;

	reply = snowid_conn_ask(conn, target, 1, argv, result);
	if (reply == NULL)
		return false;
	master = reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
		reply->element[0]->type == REDIS_REPLY_STRING &&
		strcmp(reply->element[0]->str, "master") == 0;
	if (!master)
		snowid_redis_fail(result, SNOWID_REDIS_NOT_MASTER,
						  "ROLE says the server is a %s.",
						  reply->type == REDIS_REPLY_ARRAY &&
						  reply->elements > 0 &&
						  reply->element[0]->type == REDIS_REPLY_STRING &&
						  strcmp(reply->element[0]->str, "slave") == 0 ?
						  "replica" : "not a master");
	freeReplyObject(reply);
	return master;
}

/*
 * Ask one sentinel for the address of the master.  True with *master set
 * if it named one; false with result filled otherwise (NO_MASTER if it
 * answered but knows none by that name).  Sentinels get their own
 * credentials (sentinel_user, sentinel_password), never the master's.
 */
static bool
snowid_ask_sentinel(SnowidRedisConn *conn, const SnowidRedisNode *sentinel,
					const SnowidRedisTarget *target,
					const SnowidRedisRequest *request,
					const SnowidDeadline *deadline, SnowidRedisNode *master,
					SnowidRedisResult *result)
{
	const char *argv[] = {"SENTINEL", "get-master-addr-by-name",
	target->master_name};
	redisReply *reply;
	bool		named;

	if (!snowid_open_node(conn, sentinel, target, request, deadline,
						  result) ||
		!snowid_auth(conn, target, target->sentinel_user,
					 target->sentinel_password, result))
		return false;
	reply = snowid_conn_command(conn, lengthof(argv), argv, result);
	if (reply == NULL)
		return false;
	named = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
		reply->element[0]->type == REDIS_REPLY_STRING &&
		reply->element[1]->type == REDIS_REPLY_STRING &&
		reply->element[0]->len < sizeof(master->host) &&
		snowid_parse_number(reply->element[1]->str, reply->element[1]->len,
							1, 65535, &master->port);
	if (named)
	{
		memset(master->host, 0, sizeof(master->host));
		memcpy(master->host, reply->element[0]->str, reply->element[0]->len);
		master->socket_path[0] = '\0';
	}
	else if (reply->type == REDIS_REPLY_NIL)
		snowid_redis_fail(result, SNOWID_REDIS_NO_MASTER,
						  "Sentinel %s knows no master named \"%s\".",
						  result->node, target->master_name);
	else if (reply->type == REDIS_REPLY_ERROR)
		snowid_redis_quote(result, target, SNOWID_REDIS_UNREACHABLE,
						   "The sentinel replied: ", reply->str);
	else
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The sentinel answered with a reply of type %d.",
						  reply->type);
	freeReplyObject(reply);
	return named;
}

/*
 * How telling a failure to find the master is: a named master snowid may
 * not follow to (a rogue sentinel, or a missing snowid.redis_redirect_hosts)
 * beats a named master that says it is a replica (a failover under way),
 * which beats a named master that is down,
 * which beats sentinels that know no such master, which beats no answer.
 */
static int
snowid_sentinel_rank(SnowidRedisStatus status)
{
	switch (status)
	{
		case SNOWID_REDIS_REDIRECT_REFUSED:
			return 4;
		case SNOWID_REDIS_NOT_MASTER:
			return 3;
		case SNOWID_REDIS_UNREACHABLE:
			return 2;
		case SNOWID_REDIS_NO_MASTER:
			return 1;
		default:
			return 0;
	}
}

/*
 * Connect to the master that the sentinels name, asking them in turn until
 * one names a server that ROLE confirms as master, and log in there; *master
 * is where.  If none does, result says the most telling failure (see
 * snowid_sentinel_rank()).  A failure at a master that answers (a wrong
 * password, an ACL) ends the search at once.
 */
static bool
snowid_connect_via_sentinels(SnowidRedisConn *conn,
							 const SnowidRedisTarget *target,
							 const SnowidRedisRequest *request,
							 const SnowidDeadline *deadline,
							 SnowidRedisNode *master,
							 SnowidRedisResult *result)
{
	SnowidRedisResult best;
	int			i;

	memset(&best, 0, sizeof(best));
	best.status = SNOWID_REDIS_NO_SENTINEL;
	best.worker_id = -1;
	for (i = 0; i < target->sentinel_count; i++)
	{
		if (!snowid_ask_sentinel(conn, &target->sentinels[i], target,
								 request, deadline, master, result))
		{
			if (result->status != SNOWID_REDIS_NO_MASTER)
			{
				/* this sentinel is down or said something odd */
				result->status = SNOWID_REDIS_NO_SENTINEL;
				result->connected = false;
			}
		}
		else if (!snowid_may_follow(master, "A sentinel", target, request,
									result))
		{
			/* a rogue sentinel: another may name the master we know */
		}
		else if (snowid_connect_node(conn, master, target, request, deadline,
									 result))
		{
			if (snowid_check_master_role(conn, target, result))
				return true;
			if (result->status != SNOWID_REDIS_NOT_MASTER)
				return false;
		}
		else if (result->status != SNOWID_REDIS_UNREACHABLE)
			return false;

		if (snowid_sentinel_rank(result->status) >=
			snowid_sentinel_rank(best.status))
			best = *result;
		if (snowid_deadline_remaining(deadline) == 0)
			break;
	}
	*result = best;
	return false;
}

/*
 * The session's copy of the target, with the passwords that the password
 * files hold (snowid.redis_password_file,
 * snowid.redis_sentinel_password_file, with sentinels only), read now so
 * that a changed file counts at the next call.  False with result filled
 * if a file is unfit.
 */
static bool
snowid_read_passwords(SnowidRedisSession *session,
					  const SnowidRedisTarget *target,
					  const SnowidRedisRequest *request,
					  SnowidRedisResult *result)
{
	SnowidRedisTarget *login = &session->login;

	memcpy(login, target, sizeof(*login));
	session->target = login;
	if (request->password_file != NULL && request->password_file[0] != '\0' &&
		!snowid_secret_file_read(request->password_file,
								 "snowid.redis_password_file",
								 login->password, sizeof(login->password),
								 result))
		return false;
	if (target->sentinel_count > 0 &&
		request->sentinel_password_file != NULL &&
		request->sentinel_password_file[0] != '\0' &&
		!snowid_secret_file_read(request->sentinel_password_file,
								 "snowid.redis_sentinel_password_file",
								 login->sentinel_password,
								 sizeof(login->sentinel_password), result))
		return false;
	return true;
}

/*
 * Start a call: clear result, start the deadline of request->timeout_ms,
 * read the password files and connect to the server (through the sentinels
 * if the URL names them), logged in.  False with result filled if that
 * fails.  The caller closes the session with snowid_redis_close() whatever
 * this returns.
 */
bool
snowid_redis_open(SnowidRedisSession *session,
				  const SnowidRedisTarget *target,
				  const SnowidRedisRequest *request,
				  SnowidRedisResult *result)
{
	memset(session, 0, sizeof(*session));
	memset(result, 0, sizeof(*result));
	session->target = target;
	session->request = request;
	result->worker_id = -1;
	strlcpy(result->master_name, target->master_name,
			sizeof(result->master_name));
	snowid_deadline_start(&session->deadline, request->timeout_ms,
						  request->wait_event_info);
	if (!snowid_read_passwords(session, target, request, result))
		return false;
	target = session->target;

	if (target->sentinel_count > 0)
		return snowid_connect_via_sentinels(&session->conn, target, request,
											&session->deadline,
											&session->node, result);
	session->node = target->node;
	return snowid_connect_node(&session->conn, &session->node, target,
							   request, &session->deadline, result);
}

/*
 * Whether a reply is Redis Cluster's TRYAGAIN: a command on several keys of
 * a slot being migrated, some moved and some not yet.  It is to be sent
 * again a moment later.
 */
static bool
snowid_slot_unstable(const redisReply *reply)
{
	return reply->type == REDIS_REPLY_ERROR &&
		strncmp(reply->str, "TRYAGAIN", 8) == 0 &&
		(reply->str[8] == ' ' || reply->str[8] == '\0');
}

/*
 * Send one command on the open session and return its reply, following
 * Redis Cluster redirections (after ASKING for an ASK) to another node, and
 * sending it again every SNOWID_REDIS_TRYAGAIN_MS while a migrating slot
 * answers TRYAGAIN, within the deadline; what names the command in the
 * message of too many hops.  The reply is the caller's to free with
 * freeReplyObject(); NULL with result filled if none came.
 */
redisReply *
snowid_redis_command(SnowidRedisSession *session, int argc, const char **argv,
					 const char *what, SnowidRedisResult *result)
{
	bool		asking = false;
	int			hop = 0;

	for (;;)
	{
		redisReply *reply;

		if (asking)
		{
			const char *asking_argv[] = {"ASKING"};

			/* refused (NOPERM): the target would send us back with MOVED */
			reply = snowid_conn_ask(&session->conn, session->target, 1,
									asking_argv, result);
			if (reply == NULL)
				return NULL;
			freeReplyObject(reply);
		}
		reply = snowid_conn_command(&session->conn, argc, argv, result);
		if (reply != NULL && snowid_slot_unstable(reply) &&
			snowid_deadline_nap(&session->deadline, SNOWID_REDIS_TRYAGAIN_MS))
		{
			freeReplyObject(reply);
			continue;
		}
		if (reply == NULL ||
			!snowid_parse_redirect(reply, &session->node, &asking))
			return reply;
		freeReplyObject(reply);
		if (hop++ == SNOWID_REDIS_MAX_REDIRECTS)
		{
			snowid_redis_fail(result, SNOWID_REDIS_ERROR,
							  "Redis Cluster redirected the %s more than %d times.",
							  what, SNOWID_REDIS_MAX_REDIRECTS);
			return NULL;
		}
		if (!snowid_may_follow(&session->node, "A Redis Cluster redirection",
							   session->target, session->request, result) ||
			!snowid_connect_node(&session->conn, &session->node,
								 session->target, session->request,
								 &session->deadline, result))
			return NULL;
	}
}

/*
 * After a command that wrote: WAIT for request->min_replicas replicas (none
 * asked: true at once).  False with result filled if fewer acknowledged.
 */
bool
snowid_redis_wait_replicas(SnowidRedisSession *session,
						   SnowidRedisResult *result)
{
	if (session->request->min_replicas <= 0)
		return true;
	return snowid_wait_replicas(&session->conn, session->request,
								&session->deadline, result);
}

/*
 * End a call: close its connection, if one is open, and wipe the
 * passwords.
 */
void
snowid_redis_close(SnowidRedisSession *session)
{
	snowid_conn_close(&session->conn);
	explicit_bzero(&session->login, sizeof(session->login));
}
