/*-------------------------------------------------------------------------
 *
 * conn.c
 *	  The transport of a worker id claim: one connection to one Redis
 *	  server, opened without blocking and driven by PostgreSQL's
 *	  WaitLatchOrSocket(), so that every wait ends at the claim's deadline
 *	  or at a cancel, and pg_stat_activity shows it as the SnowidRedis wait
 *	  event.
 *
 * A host name is resolved first, under the same deadline and cancellable
 * (util/resolve.c), to every address it has, IPv4 and IPv6; hiredis is then
 * handed each of them in turn, which its own getaddrinfo() only parses,
 * never asks a resolver about.  hiredis
 * connects and buffers commands and replies; this file only decides when
 * to write and read.
 * TLS still checks the certificate against the name, not the address.
 * Nothing here touches shared memory or takes a lock.  A wait may raise an
 * error through CHECK_FOR_INTERRUPTS(): the caller closes the connection,
 * and with it a lookup under way, in PG_FINALLY.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include "miscadmin.h"
#include "storage/latch.h"

#include "redis/conn.h"
#include "redis/tls.h"
#include "util/resolve.h"

static bool snowid_conn_connect(SnowidRedisConn *conn,
								const SnowidRedisNode *node,
								SnowidRedisResult *result);
static bool snowid_conn_connect_name(SnowidRedisConn *conn,
									 const SnowidRedisNode *node,
									 SnowidRedisResult *result);
static bool snowid_conn_connect_to(SnowidRedisConn *conn, const char *host,
								   int port, const char *socket_path,
								   SnowidRedisResult *result);
static bool snowid_conn_send(SnowidRedisConn *conn,
							 SnowidRedisResult *result);
static redisReply *snowid_conn_receive(SnowidRedisConn *conn,
									   SnowidRedisResult *result);
static void snowid_conn_io_failure(SnowidRedisConn *conn,
								   SnowidRedisResult *result);

/*
 * snowid_conn_open
 *		Connects to node, with TLS if tls is not NULL, before the deadline.
 *		False with result filled on failure; the caller still closes conn.
 */
bool
snowid_conn_open(SnowidRedisConn *conn, const SnowidRedisNode *node,
				 const SnowidRedisTls *tls, const SnowidDeadline *deadline,
				 SnowidRedisResult *result)
{
	memset(conn, 0, sizeof(*conn));
	conn->deadline = deadline;
	snowid_redis_describe_node(node, result->node, sizeof(result->node));
	result->connected = false;

	if (!snowid_conn_connect(conn, node, result))
		return false;
	result->connected = true;
	if (tls != NULL && !snowid_tls_handshake(conn, node, tls, result))
		return false;
	return true;
}

/*
 * snowid_conn_connect
 *		Connects to node: to its unix socket, to its address, or to the
 *		addresses its host name resolves to.
 */
static bool
snowid_conn_connect(SnowidRedisConn *conn, const SnowidRedisNode *node,
					SnowidRedisResult *result)
{
	if (node->socket_path[0] != '\0')
		return snowid_conn_connect_to(conn, NULL, 0, node->socket_path,
									  result);
	if (snowid_host_is_address(node->host))
		return snowid_conn_connect_to(conn, node->host, node->port, NULL,
									  result);
	return snowid_conn_connect_name(conn, node, result);
}

/*
 * snowid_conn_connect_name
 *		Resolves node's host name before the deadline, then connects to its
 *		addresses in turn until one takes the connection or the deadline
 *		passes.  Each address but the last may take its share of what is
 *		left (what is left, over the addresses left to try), so that one
 *		that does not answer leaves time for the others; one that refuses
 *		takes none.  A failure reports the last address's.
 */
static bool
snowid_conn_connect_name(SnowidRedisConn *conn, const SnowidRedisNode *node,
						 SnowidRedisResult *result)
{
	const SnowidDeadline *deadline = conn->deadline;
	const char *host = node->host;
	bool		connected = false;
	int			error;
	int			count;

	/*
	 * The lookup may take half of what is left: a name that does not answer
	 * leaves the other half to the next sentinel or node.
	 */
	snowid_resolve_all(&host, 1, deadline,
					   snowid_deadline_remaining(deadline) / 2,
					   &conn->lookup, &error);
	if (error != 0)
	{
		char		problem[SNOWID_REDIS_MESSAGE_LEN];

		snowid_resolve_problem(problem, sizeof(problem), NULL, error,
							   "snowid.redis_timeout_ms", deadline->timeout_ms);
		snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE, "%s", problem);
		return false;
	}
	snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
					  "The host name has no address to connect to.");
	count = snowid_lookup_count(conn->lookup);
	for (int i = 0; i < count && !connected; i++)
	{
		char		address[SNOWID_RESOLVE_ADDRESS_LEN];
		SnowidDeadline share = *deadline;

		if (!snowid_lookup_address(conn->lookup, i, address, sizeof(address)))
			continue;
		if (snowid_deadline_remaining(deadline) <= 0)
			break;
		share.timeout_ms = (int)
			(snowid_deadline_elapsed(deadline) +
			 snowid_deadline_remaining(deadline) / (count - i));
		if (conn->context != NULL)
		{
			redisFree(conn->context);
			conn->context = NULL;
		}
		/* the last takes what is left, and names the whole timeout */
		if (i < count - 1)
			conn->deadline = &share;
		connected = snowid_conn_connect_to(conn, address, node->port, NULL,
										   result);
		conn->deadline = deadline;
	}
	snowid_lookup_end(conn->lookup);
	conn->lookup = NULL;
	return connected;
}

/*
 * snowid_conn_connect_to
 *		Starts a non-blocking connect to an address (host, never a name, and
 *		port) or a unix socket, and waits until the socket is writable,
 *		which is when the connect is complete or has failed.
 */
static bool
snowid_conn_connect_to(SnowidRedisConn *conn, const char *host, int port,
					   const char *socket_path, SnowidRedisResult *result)
{
	redisContext *c;
	int			error = 0;
	socklen_t	len = sizeof(error);

	errno = 0;
	if (socket_path != NULL)
		c = redisConnectUnixNonBlock(socket_path);
	else
		c = redisConnectNonBlock(host, port);
	conn->context = c;
	if (c == NULL)
	{
		snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
						  "Out of memory while creating the Redis connection.");
		return false;
	}
	if (c->err != 0)
	{
		snowid_conn_io_failure(conn, result);
		return false;
	}

	if (!snowid_conn_wait(conn, WL_SOCKET_WRITEABLE, result))
		return false;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
		error = errno;
	if (error != 0)
	{
		snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE, "%s.",
						  strerror(error));
		return false;
	}
	return true;
}

/*
 * snowid_conn_command
 *		Sends one command and reads its reply before the deadline.  On a
 *		failure that leaves no reply (I/O, a closed connection, the
 *		deadline) fills result and returns NULL; an error reply is returned
 *		for the caller to judge.  The reply is the caller's to free.
 */
redisReply *
snowid_conn_command(SnowidRedisConn *conn, int argc, const char **argv,
					SnowidRedisResult *result)
{
	size_t		argvlen[16];
	int			i;

	Assert(argc <= (int) lengthof(argvlen));
	for (i = 0; i < argc; i++)
		argvlen[i] = strlen(argv[i]);

	if (redisAppendCommandArgv(conn->context, argc, argv, argvlen) != REDIS_OK)
	{
		snowid_conn_io_failure(conn, result);
		return NULL;
	}
	if (!snowid_conn_send(conn, result))
		return NULL;
	return snowid_conn_receive(conn, result);
}

/*
 * snowid_conn_send
 *		Writes what hiredis has buffered, waiting while the socket is full.
 */
static bool
snowid_conn_send(SnowidRedisConn *conn, SnowidRedisResult *result)
{
	for (;;)
	{
		int			done = 0;

		errno = 0;
		if (redisBufferWrite(conn->context, &done) != REDIS_OK)
		{
			snowid_conn_io_failure(conn, result);
			return false;
		}
		if (done)
			return true;
		if (!snowid_conn_wait(conn, WL_SOCKET_WRITEABLE, result))
			return false;
	}
}

/*
 * snowid_conn_receive
 *		Reads until hiredis has one whole reply.  TLS may hold decrypted
 *		bytes that the socket no longer signals: read those before waiting.
 */
static redisReply *
snowid_conn_receive(SnowidRedisConn *conn, SnowidRedisResult *result)
{
	for (;;)
	{
		void	   *reply = NULL;

		if (redisGetReplyFromReader(conn->context, &reply) != REDIS_OK)
		{
			snowid_conn_io_failure(conn, result);
			return NULL;
		}
		if (reply != NULL)
			return (redisReply *) reply;

		if (!snowid_tls_pending(conn) &&
			!snowid_conn_wait(conn, WL_SOCKET_READABLE, result))
			return NULL;
		errno = 0;
		if (redisBufferRead(conn->context) != REDIS_OK)
		{
			snowid_conn_io_failure(conn, result);
			return NULL;
		}
	}
}

/*
 * snowid_conn_io_failure
 *		Records a failure that hiredis reports on the context: I/O, a closed
 *		connection, or a peer that does not speak Redis' protocol.  hiredis
 *		words these itself, from errno or the offending byte; none of them
 *		carries what was sent.
 */
static void
snowid_conn_io_failure(SnowidRedisConn *conn, SnowidRedisResult *result)
{
	redisContext *c = conn->context;

	if (snowid_tls_explain_failure(conn, result))
		return;
	if (c->err == REDIS_ERR_PROTOCOL)
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The server does not speak Redis' protocol: %s.",
						  c->errstr);
	else if (c->err == REDIS_ERR_EOF)
		snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
						  "The server closed the connection.");
	else if (c->err == REDIS_ERR_OOM)
		snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
						  "Out of memory while talking to Redis.");
	else
		snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE, "%s.",
						  c->errstr);
}

/*
 * snowid_conn_close
 *		Closes the connection, frees what hiredis and TLS hold and ends a
 *		lookup under way; safe to call on a connection that is closed or
 *		was never opened.
 */
void
snowid_conn_close(SnowidRedisConn *conn)
{
	snowid_lookup_end(conn->lookup);
	conn->lookup = NULL;
	snowid_tls_free(conn);
	if (conn->context != NULL)
		redisFree(conn->context);
	conn->context = NULL;
	conn->tls_on = false;
}
