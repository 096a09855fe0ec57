/*-------------------------------------------------------------------------
 *
 * redis_claim.c
 *	  All of snowid's hiredis code: parsing snowid.redis_url, the Lua script
 *	  that claims a worker id atomically, talking to Redis (following Redis
 *	  Cluster redirections), and the error messages a claim can end in.
 *
 * The claim runs once per server start, in whatever process the caller
 * chooses; nothing here touches shared memory or takes a lock, so the
 * caller's locking rule is the only one that applies.  The functions that
 * talk to Redis never ereport and never palloc: hiredis allocates with
 * malloc, and every hiredis object is freed before control returns, so a
 * later ereport(ERROR) cannot leak one.  All ereports live in
 * snowid_redis_report().
 *
 * The password is read from SnowidRedisTarget.password only to send AUTH;
 * it is never copied into a problem text, a result or a message.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <limits.h>

#include <hiredis/hiredis.h>

#include "redis_claim.h"

/* Most arguments of one command (EVAL, script, keys and script args) */
#define SNOWID_REDIS_MAX_ARGS		16

/* MOVED/ASK hops followed before giving up; a stable cluster needs one */
#define SNOWID_REDIS_MAX_REDIRECTS	3

/* Key buffer: braces, prefix, ":dc:", an int and ":owners" */
#define SNOWID_REDIS_KEY_LEN		(SNOWID_REDIS_KEY_PREFIX_LEN + 32)

/*
 * The claim, run atomically by EVAL.
 *
 * KEYS[1] is {prefix:dc:N}:owners, a hash from worker id to the identity
 * of the server holding it.  ARGV[1] is the claiming identity, ARGV[2] the
 * configured worker id or -1, ARGV[3] the highest worker id, ARGV[4] the
 * preferred worker id or -1.
 *
 * An identity keeps the id it holds.  Without one it takes the configured
 * id if free; with none configured, the preferred id if free, or else the
 * lowest free id in 0..max.  The preferred id is the one the server held
 * last: if Redis has lost the claims, the lowest free id may be one that
 * another server still uses, while the server's own last id is free unless
 * a server claimed it since.  Other entries of the same identity (an id
 * beyond max after a layout change, a duplicate written by hand) are
 * released so that an identity holds exactly one id.  A server
 * that already holds its id causes no write.  Refusals are error replies
 * whose first word says which, and they write nothing:
 *
 *	SNOWID_ALL_HELD <count>			no id in 0..max is free
 *	SNOWID_CONFLICT <identity>		the configured id is held by identity
 *	SNOWID_HOLDS_OTHER <id>			this identity holds id, not the configured
 *	SNOWID_RANGE ...				the configured id exceeds max (a caller bug)
 */
static const char *snowid_claim_script =
"local owners, me = KEYS[1], ARGV[1]\n"
"local want, max = tonumber(ARGV[2]), tonumber(ARGV[3])\n"
"local prefer = tonumber(ARGV[4])\n"
"if want > max then\n"
"  return redis.error_reply('SNOWID_RANGE worker id ' .. want .. ' exceeds ' .. max)\n"
"end\n"
"local function wid(field)\n"
"  local n = tonumber(field)\n"
"  if n and n >= 0 and n <= max and n % 1 == 0 then return n end\n"
"end\n"
"local taken, mine, keep = {}, {}, nil\n"
"local flat = redis.call('HGETALL', owners)\n"
"for i = 1, #flat, 2 do\n"
"  local id = wid(flat[i])\n"
"  if flat[i + 1] == me then\n"
"    mine[#mine + 1] = flat[i]\n"
"    if id and (keep == nil or id == want or (keep ~= want and id < keep)) then\n"
"      keep = id\n"
"    end\n"
"  elseif id then\n"
"    taken[id] = flat[i + 1]\n"
"  end\n"
"end\n"
"if want >= 0 then\n"
"  if keep ~= nil and keep ~= want then\n"
"    return redis.error_reply('SNOWID_HOLDS_OTHER ' .. keep)\n"
"  end\n"
"  if taken[want] then\n"
"    return redis.error_reply('SNOWID_CONFLICT ' .. taken[want])\n"
"  end\n"
"  keep = want\n"
"elseif keep == nil then\n"
"  if prefer >= 0 and prefer <= max and not taken[prefer] then\n"
"    keep = prefer\n"
"  else\n"
"    for id = 0, max do\n"
"      if not taken[id] then\n"
"        keep = id\n"
"        break\n"
"      end\n"
"    end\n"
"  end\n"
"  if keep == nil then\n"
"    return redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))\n"
"  end\n"
"end\n"
"local held = false\n"
"for _, field in ipairs(mine) do\n"
"  if tonumber(field) == keep then\n"
"    held = true\n"
"  else\n"
"    redis.call('HDEL', owners, field)\n"
"  end\n"
"end\n"
"if not held then\n"
"  redis.call('HSET', owners, tostring(keep), me)\n"
"end\n"
"return keep\n";

/* Where one connection goes; a cluster redirect changes it */
typedef struct SnowidRedisNode
{
	char		host[SNOWID_REDIS_HOST_LEN];
	int			port;
	char		socket_path[SNOWID_REDIS_PATH_LEN];
} SnowidRedisNode;


/*
 * Value of one hex digit, or -1.
 */
static int
snowid_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Percent-decode src[0..n) into dst, so that a password may contain "@",
 * ":" or "/".  False on a malformed escape, an encoded NUL or overflow.
 */
static bool
snowid_percent_decode(const char *src, size_t n, char *dst, size_t dstlen)
{
	size_t		i;
	size_t		o = 0;

	for (i = 0; i < n; i++)
	{
		char		c = src[i];

		if (c == '%')
		{
			int			hi;
			int			lo;

			if (i + 2 >= n)
				return false;
			hi = snowid_hex_value(src[i + 1]);
			lo = snowid_hex_value(src[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return false;
			c = (char) (hi * 16 + lo);
			i += 2;
		}
		if (o + 1 >= dstlen)
			return false;
		dst[o++] = c;
	}
	dst[o] = '\0';
	return true;
}

/*
 * Parse a decimal number in src[0..n) that must lie in min..max.  Only
 * digits are accepted: no sign, no spaces.
 */
static bool
snowid_parse_number(const char *src, size_t n, int64 min, int64 max, int *out)
{
	int64		value = 0;
	size_t		i;

	if (n == 0 || n > 10)
		return false;
	for (i = 0; i < n; i++)
	{
		if (src[i] < '0' || src[i] > '9')
			return false;
		value = value * 10 + (src[i] - '0');
	}
	if (value < min || value > max)
		return false;
	*out = (int) value;
	return true;
}

/*
 * Split user info "[user:]password" into the target, percent-decoding both.
 * Without a colon the whole is a password, as redis-cli reads it.
 */
static bool
snowid_parse_userinfo(const char *src, size_t n, SnowidRedisTarget *target,
					  const char **problem)
{
	const char *colon = memchr(src, ':', n);

	if (colon != NULL)
	{
		if (!snowid_percent_decode(src, colon - src, target->user,
								   sizeof(target->user)))
		{
			*problem = "The user name is too long or has a malformed percent escape.";
			return false;
		}
		n -= (colon - src) + 1;
		src = colon + 1;
	}
	if (!snowid_percent_decode(src, n, target->password,
							   sizeof(target->password)))
	{
		*problem = "The password is too long or has a malformed percent escape.";
		return false;
	}
	return true;
}

/*
 * Parse "host[:port]" or "[ipv6][:port]" of a redis:// URL.
 */
static bool
snowid_parse_hostport(const char *src, size_t n, SnowidRedisTarget *target,
					  const char **problem)
{
	const char *end = src + n;
	const char *host = src;
	const char *host_end;
	const char *p;

	if (n > 0 && src[0] == '[')
	{
		host = src + 1;
		host_end = memchr(host, ']', end - host);
		if (host_end == NULL)
		{
			*problem = "The IPv6 address has no closing bracket.";
			return false;
		}
		for (p = host; p < host_end; p++)
		{
			if (snowid_hex_value(*p) < 0 && *p != ':' && *p != '.')
			{
				*problem = "The IPv6 address in brackets may hold only hex digits, colons and dots.";
				return false;
			}
		}
		p = host_end + 1;
	}
	else
	{
		host_end = memchr(src, ':', n);
		if (host_end == NULL)
			host_end = end;
		for (p = host; p < host_end; p++)
		{
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				  (*p >= '0' && *p <= '9') ||
				  *p == '-' || *p == '.' || *p == '_'))
			{
				*problem = "The host name may hold only letters, digits, \"-\", \".\" and \"_\"; write an IPv6 address in brackets, and percent-encode \"@\", \":\" and \"/\" in the password.";
				return false;
			}
		}
		p = host_end;
	}

	if (host_end == host)
	{
		*problem = "The URL names no host.";
		return false;
	}
	if ((size_t) (host_end - host) >= sizeof(target->host))
	{
		*problem = "The host name is too long.";
		return false;
	}
	memcpy(target->host, host, host_end - host);
	target->host[host_end - host] = '\0';

	target->port = SNOWID_REDIS_DEFAULT_PORT;
	if (p < end)
	{
		if (*p != ':' ||
			!snowid_parse_number(p + 1, end - p - 1, 1, 65535, &target->port))
		{
			*problem = "The port must be a number from 1 to 65535.";
			return false;
		}
	}
	return true;
}

/*
 * Parse snowid.redis_url into *target; see snowid_redis_parse_url().
 */
static bool
snowid_parse_url_into(const char *url, SnowidRedisTarget *target,
					  const char **problem)
{
	const char *p;
	const char *authority_end;
	const char *at;
	const char *end;
	const char *q;
	bool		is_unix;

	if (url == NULL || url[0] == '\0')
	{
		*problem = "The URL is empty.";
		return false;
	}
	if (strncmp(url, "redis://", 8) == 0)
	{
		is_unix = false;
		p = url + 8;
	}
	else if (strncmp(url, "unix://", 7) == 0)
	{
		is_unix = true;
		p = url + 7;
	}
	else if (strncmp(url, "rediss://", 9) == 0)
	{
		*problem = "TLS (rediss://) is not supported by the hiredis library snowid is built with.";
		return false;
	}
	else
	{
		*problem = "The URL must start with redis:// or unix://.";
		return false;
	}

	/*
	 * The authority runs to the first "/"; user info, if any, to its last
	 * "@".  A raw "/" in a password would end the authority early, so it
	 * must be written %2F.
	 */
	end = p + strlen(p);
	authority_end = strchr(p, '/');
	if (authority_end == NULL)
		authority_end = end;
	at = NULL;
	for (q = p; q < authority_end; q++)
	{
		if (*q == '@')
			at = q;
	}
	if (at != NULL)
	{
		if (!snowid_parse_userinfo(p, at - p, target, problem))
			return false;
		p = at + 1;
	}

	if (is_unix)
	{
		const char *path_end;

		if (p != authority_end || *p != '/')
		{
			*problem = "A unix:// URL takes an absolute socket path, as in unix:///run/redis/redis.sock.";
			return false;
		}
		path_end = strchr(p, '?');
		if (path_end == NULL)
			path_end = end;
		if ((size_t) (path_end - p) >= sizeof(target->socket_path))
		{
			*problem = "The socket path is too long.";
			return false;
		}
		memcpy(target->socket_path, p, path_end - p);
		target->socket_path[path_end - p] = '\0';

		if (path_end < end)
		{
			if (strncmp(path_end, "?db=", 4) != 0 ||
				!snowid_parse_number(path_end + 4, end - path_end - 4,
									 0, INT_MAX, &target->db))
			{
				*problem = "The only parameter of a unix:// URL is db, a number, as in unix:///run/redis/redis.sock?db=0.";
				return false;
			}
		}
		return true;
	}

	if (!snowid_parse_hostport(p, authority_end - p, target, problem))
		return false;

	/* "/db", or a bare "/" meaning db 0 */
	if (authority_end < end && authority_end + 1 < end)
	{
		if (!snowid_parse_number(authority_end + 1, end - authority_end - 1,
								 0, INT_MAX, &target->db))
		{
			*problem = "The database after the host must be a number, as in redis://localhost:6379/0.";
			return false;
		}
	}
	return true;
}

/*
 * Parse snowid.redis_url into *target.  On failure *target is zeroed, so no
 * half-parsed password lingers, and *problem is a full sentence fit for
 * errdetail or GUC_check_errdetail; it is a constant, so it never contains
 * any part of the URL.  Never ereports, never allocates.
 */
bool
snowid_redis_parse_url(const char *url, SnowidRedisTarget *target,
					   const char **problem)
{
	memset(target, 0, sizeof(*target));
	*problem = NULL;
	if (snowid_parse_url_into(url, target, problem))
		return true;
	memset(target, 0, sizeof(*target));
	return false;
}

/*
 * Check snowid.redis_key_prefix: printable, no spaces, and no braces, which
 * would break the hash tag that keeps a datacenter's keys together.
 */
bool
snowid_redis_check_key_prefix(const char *prefix, const char **problem)
{
	size_t		len = prefix ? strlen(prefix) : 0;
	size_t		i;

	*problem = NULL;
	if (len == 0)
	{
		*problem = "The key prefix is empty.";
		return false;
	}
	if (len >= SNOWID_REDIS_KEY_PREFIX_LEN)
	{
		*problem = "The key prefix is longer than 64 bytes.";
		return false;
	}
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) prefix[i];

		if (c <= ' ' || c >= 0x7f || c == '{' || c == '}')
		{
			*problem = "The key prefix may hold only printable ASCII characters other than space, \"{\" and \"}\".";
			return false;
		}
	}
	return true;
}

/*
 * Render where a node is, for messages: "host:port", "[ipv6]:port" or
 * "unix:/path".  Never the user or password.
 */
static void
snowid_redis_describe_node(const SnowidRedisNode *node, char *buf, size_t len)
{
	if (node->socket_path[0] != '\0')
		snprintf(buf, len, "unix:%s", node->socket_path);
	else if (strchr(node->host, ':') != NULL)
		snprintf(buf, len, "[%s]:%d", node->host, node->port);
	else
		snprintf(buf, len, "%s:%d", node->host, node->port);
}

/*
 * Build the identity a server claims under: what tells two servers apart
 * (two clusters on one host differ in port and system identifier) and stays
 * the same across a restart.  False if it does not fit or the host name has
 * characters that Redis error replies cannot carry.
 */
bool
snowid_redis_identity(char *buf, size_t len, int datacenter_id,
					  const char *host, int port, uint64 sysid)
{
	const char *p;
	int			n;

	if (host == NULL || host[0] == '\0')
		return false;
	for (p = host; *p; p++)
	{
		if ((unsigned char) *p < ' ' || *p == 0x7f)
			return false;
	}
	n = snprintf(buf, len, "dc=%d host=%s port=%d sysid=" UINT64_FORMAT,
				 datacenter_id, host, port, sysid);
	return n > 0 && (size_t) n < len;
}

/*
 * Name of the hash holding a datacenter's worker ids.
 */
void
snowid_redis_owners_key(char *buf, size_t len, const char *key_prefix,
						int datacenter_id)
{
	snprintf(buf, len, "{%s:dc:%d}:owners", key_prefix, datacenter_id);
}

/*
 * Fill result->message with a sentence for the detail.  A defensive check
 * keeps the password out even if a server ever echoed it.
 */
static void
snowid_set_message(SnowidClaimResult *result, const SnowidRedisTarget *target,
				   const char *prefix, const char *text)
{
	size_t		n;

	snprintf(result->message, sizeof(result->message), "%s%s",
			 prefix, text);
	if (target->password[0] != '\0' &&
		strstr(result->message, target->password) != NULL)
		snprintf(result->message, sizeof(result->message),
				 "%sa message that is withheld because it contained the password",
				 prefix);

	/* end as a sentence: strip trailing blanks, add a period if needed */
	n = strlen(result->message);
	while (n > 0 && (result->message[n - 1] == ' ' ||
					 result->message[n - 1] == '\n' ||
					 result->message[n - 1] == '\r'))
		result->message[--n] = '\0';
	if (n > 0 && strchr(".?!", result->message[n - 1]) == NULL &&
		n + 1 < sizeof(result->message))
	{
		result->message[n] = '.';
		result->message[n + 1] = '\0';
	}
}

/*
 * Record a hiredis-level failure of context c: connect, I/O or timeout, or
 * a peer that does not speak Redis' protocol.
 */
static void
snowid_set_io_failure(SnowidClaimResult *result,
					  const SnowidRedisTarget *target,
					  const redisContext *c, int saved_errno,
					  int timeout_ms, bool connected)
{
	result->status = SNOWID_CLAIM_UNREACHABLE;
	result->connected = connected;
	if (c != NULL && c->err == REDIS_ERR_PROTOCOL)
	{
		/* something answered, but not in Redis' protocol */
		result->status = SNOWID_CLAIM_PROTOCOL_ERROR;
		snowid_set_message(result, target, "", c->errstr);
	}
	else if (c == NULL)
		snowid_set_message(result, target, "",
						   "Out of memory while creating the Redis connection");
	else if (connected && c->err == REDIS_ERR_IO &&
			 (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK))
	{
		char		text[64];

		snprintf(text, sizeof(text), "No reply within %d ms", timeout_ms);
		snowid_set_message(result, target, "", text);
	}
	else if (c->err == REDIS_ERR_EOF)
		snowid_set_message(result, target, "",
						   "The server closed the connection");
	else
		snowid_set_message(result, target, "", c->errstr);
}

/*
 * Sort a Redis error reply into a status.  Replies that mean "not now"
 * count as unreachable, so that the caller may fall back as it would for a
 * dead server.
 */
static SnowidClaimStatus
snowid_classify_error(const char *err, bool during_auth)
{
	static const char *const transient[] = {
		"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"
	};
	size_t		i;

	for (i = 0; i < lengthof(transient); i++)
	{
		size_t		n = strlen(transient[i]);

		if (strncmp(err, transient[i], n) == 0 &&
			(err[n] == ' ' || err[n] == '\0'))
			return SNOWID_CLAIM_UNREACHABLE;
	}
	/*
	 * NOPERM answers a command the ACL forbids; inside a script, Redis 7
	 * says instead that "the user executing the script can't run this
	 * command" (or access a key).
	 */
	if (strncmp(err, "NOPERM", 6) == 0 ||
		strstr(err, "user executing the script can't") != NULL)
		return SNOWID_CLAIM_NO_PERMISSION;
	if (during_auth ||
		strncmp(err, "NOAUTH", 6) == 0 || strncmp(err, "WRONGPASS", 9) == 0)
		return SNOWID_CLAIM_AUTH_FAILED;
	return SNOWID_CLAIM_REDIS_ERROR;
}

/*
 * Run one command.  On a failure that leaves no reply (I/O, timeout) fill
 * result and return NULL; an error reply is returned for the caller to
 * judge.
 */
static redisReply *
snowid_command(redisContext *c, int argc, const char **argv,
			   const SnowidRedisTarget *target, int timeout_ms,
			   SnowidClaimResult *result)
{
	size_t		argvlen[SNOWID_REDIS_MAX_ARGS];
	redisReply *reply;
	int			i;

	Assert(argc <= (int) lengthof(argvlen));
	for (i = 0; i < argc; i++)
		argvlen[i] = strlen(argv[i]);

	errno = 0;
	reply = redisCommandArgv(c, argc, argv, argvlen);
	if (reply == NULL)
		snowid_set_io_failure(result, target, c, errno, timeout_ms, true);
	return reply;
}

/*
 * Send AUTH and SELECT as the target asks.  False with result filled if
 * either fails.
 */
static bool
snowid_login(redisContext *c, const SnowidRedisTarget *target,
			 int timeout_ms, SnowidClaimResult *result)
{
	redisReply *reply;
	const char *argv[3];
	char		db[16];

	if (target->user[0] != '\0' || target->password[0] != '\0')
	{
		int			argc = 0;

		argv[argc++] = "AUTH";
		if (target->user[0] != '\0')
			argv[argc++] = target->user;
		argv[argc++] = target->password;
		reply = snowid_command(c, argc, argv, target, timeout_ms, result);
		if (reply == NULL)
			return false;
		if (reply->type == REDIS_REPLY_ERROR)
		{
			result->status = snowid_classify_error(reply->str, true);
			snowid_set_message(result, target, "Redis replied: ", reply->str);
			freeReplyObject(reply);
			return false;
		}
		freeReplyObject(reply);
	}

	if (target->db != 0)
	{
		snprintf(db, sizeof(db), "%d", target->db);
		argv[0] = "SELECT";
		argv[1] = db;
		reply = snowid_command(c, 2, argv, target, timeout_ms, result);
		if (reply == NULL)
			return false;
		if (reply->type == REDIS_REPLY_ERROR)
		{
			result->status = snowid_classify_error(reply->str, false);
			snowid_set_message(result, target, "Redis replied to SELECT: ",
							   reply->str);
			freeReplyObject(reply);
			return false;
		}
		freeReplyObject(reply);
	}
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
 * Read the script's answer into result.
 */
static void
snowid_read_claim_reply(const redisReply *reply,
						const SnowidRedisTarget *target,
						const SnowidClaimRequest *request,
						SnowidClaimResult *result)
{
	if (reply->type == REDIS_REPLY_INTEGER)
	{
		if (reply->integer < 0 || reply->integer > request->max_worker_id ||
			(request->explicit_worker_id >= 0 &&
			 reply->integer != request->explicit_worker_id))
		{
			result->status = SNOWID_CLAIM_PROTOCOL_ERROR;
			snowid_set_message(result, target, "",
							   "The claim script returned a worker id out of range");
			return;
		}
		result->status = SNOWID_CLAIM_OK;
		result->worker_id = (int) reply->integer;
	}
	else if (reply->type == REDIS_REPLY_ERROR)
	{
		const char *err = reply->str;

		if (strncmp(err, "SNOWID_ALL_HELD ", 16) == 0)
			result->status = SNOWID_CLAIM_ALL_HELD;
		else if (strncmp(err, "SNOWID_CONFLICT ", 16) == 0)
		{
			result->status = SNOWID_CLAIM_CONFLICT;
			result->worker_id = request->explicit_worker_id;
			strlcpy(result->holder, err + 16, sizeof(result->holder));
		}
		else if (strncmp(err, "SNOWID_HOLDS_OTHER ", 19) == 0 &&
				 snowid_parse_number(err + 19, strlen(err + 19), 0, INT_MAX,
									 &result->worker_id))
			result->status = SNOWID_CLAIM_HOLDS_OTHER;
		else
		{
			result->status = snowid_classify_error(err, false);
			snowid_set_message(result, target, "Redis replied: ", err);
		}
	}
	else
	{
		char		text[64];

		result->status = SNOWID_CLAIM_PROTOCOL_ERROR;
		snprintf(text, sizeof(text),
				 "The claim script returned a reply of type %d", reply->type);
		snowid_set_message(result, target, "", text);
	}
}

/*
 * Ask Redis for its eviction policy and note whether it may drop our keys,
 * which have no expiry: only the allkeys-* policies do.  Best effort: a
 * managed Redis or an ACL may refuse CONFIG, which is not an error.
 */
static void
snowid_check_eviction(redisContext *c, const SnowidRedisTarget *target,
					  int timeout_ms, SnowidClaimResult *result)
{
	const char *argv[] = {"CONFIG", "GET", "maxmemory-policy"};
	SnowidClaimResult scratch;
	redisReply *reply;

	reply = snowid_command(c, 3, argv, target, timeout_ms, &scratch);
	if (reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
		reply->element[1]->type == REDIS_REPLY_STRING &&
		strncmp(reply->element[1]->str, "allkeys-", 8) == 0)
	{
		result->evictable = true;
		snowid_set_message(result, target, "", reply->element[1]->str);
	}
	freeReplyObject(reply);
}

/*
 * Claim a worker id: connect, log in, run the claim script, and follow a
 * cluster redirection if the datacenter's slot lives elsewhere.  Fills
 * *result and returns; never ereports, never pallocs, and leaves no hiredis
 * object behind.
 */
void
snowid_redis_try_claim(const SnowidRedisTarget *target,
					   const SnowidClaimRequest *request,
					   SnowidClaimResult *result)
{
	SnowidRedisNode node;
	bool		asking = false;
	char		key[SNOWID_REDIS_KEY_LEN];
	char		want[16];
	char		max[16];
	char		prefer[16];
	int			hop;

	Assert(request->explicit_worker_id >= -1 &&
		   request->explicit_worker_id <= request->max_worker_id);
	Assert(request->preferred_worker_id >= -1 &&
		   request->preferred_worker_id <= request->max_worker_id);
	Assert(strlen(request->key_prefix) < SNOWID_REDIS_KEY_PREFIX_LEN);

	memset(result, 0, sizeof(*result));
	result->worker_id = -1;

	strlcpy(node.host, target->host, sizeof(node.host));
	node.port = target->port;
	strlcpy(node.socket_path, target->socket_path, sizeof(node.socket_path));

	snowid_redis_owners_key(key, sizeof(key), request->key_prefix,
							request->datacenter_id);
	snprintf(want, sizeof(want), "%d", request->explicit_worker_id);
	snprintf(max, sizeof(max), "%d", request->max_worker_id);
	snprintf(prefer, sizeof(prefer), "%d", request->preferred_worker_id);

	for (hop = 0; hop <= SNOWID_REDIS_MAX_REDIRECTS; hop++)
	{
		const char *argv[] = {"EVAL", snowid_claim_script, "1", key,
		request->identity, want, max, prefer};
		struct timeval tv;
		redisContext *c;
		redisReply *reply;
		bool		redirected;

		snowid_redis_describe_node(&node, result->node, sizeof(result->node));

		tv.tv_sec = request->timeout_ms / 1000;
		tv.tv_usec = (request->timeout_ms % 1000) * 1000;
		errno = 0;
		if (node.socket_path[0] != '\0')
			c = request->timeout_ms > 0 ?
				redisConnectUnixWithTimeout(node.socket_path, tv) :
				redisConnectUnix(node.socket_path);
		else
			c = request->timeout_ms > 0 ?
				redisConnectWithTimeout(node.host, node.port, tv) :
				redisConnect(node.host, node.port);

		/* the connect timeout does not cover replies: set that apart */
		if (c != NULL && c->err == 0 && request->timeout_ms > 0)
			redisSetTimeout(c, tv);
		if (c == NULL || c->err != 0)
		{
			snowid_set_io_failure(result, target, c, errno,
								  request->timeout_ms, false);
			if (c != NULL)
				redisFree(c);
			return;
		}

		if (!snowid_login(c, target, request->timeout_ms, result))
		{
			redisFree(c);
			return;
		}

		if (asking)
		{
			const char *asking_argv[] = {"ASKING"};

			reply = snowid_command(c, 1, asking_argv, target,
								   request->timeout_ms, result);
			if (reply == NULL)
			{
				redisFree(c);
				return;
			}
			freeReplyObject(reply);
		}

		reply = snowid_command(c, lengthof(argv), argv, target,
							   request->timeout_ms, result);
		if (reply == NULL)
		{
			redisFree(c);
			return;
		}

		redirected = snowid_parse_redirect(reply, &node, &asking);
		if (!redirected)
		{
			snowid_read_claim_reply(reply, target, request, result);
			if (result->status == SNOWID_CLAIM_OK)
				snowid_check_eviction(c, target, request->timeout_ms, result);
		}
		freeReplyObject(reply);
		redisFree(c);
		if (!redirected)
			return;
	}

	result->status = SNOWID_CLAIM_REDIS_ERROR;
	snowid_set_message(result, target, "",
					   "Redis Cluster redirected the claim more than 3 times");
}

/*
 * Report how a claim ended at elevel.  A successful claim reports nothing,
 * except a WARNING when Redis may evict it; a failed one reports at elevel,
 * so with ERROR this does not return.
 *
 * SQLSTATEs, chosen so that a client can tell "try again later" (class 08)
 * from "fix the configuration":
 *	unreachable		08001 before a connection, 08006 after (as postgres_fdw)
 *	auth failed		28P01, as for a wrong PostgreSQL password
 *	no permission	42501: logged in, but the ACL forbids the commands
 *	all held		53400: the datacenter's id space is a configured limit
 *	conflict		55006: the configured id is in use by another server
 *	holds other		55000: this server's registration does not match its
 *					configuration; nothing is in use by anyone else
 *	redis error		58000: an error outside PostgreSQL (READONLY, OOM, ...)
 *	protocol error	08P01
 */
void
snowid_redis_report(int elevel, const SnowidClaimRequest *request,
					const SnowidClaimResult *result)
{
	char		key[SNOWID_REDIS_KEY_LEN];

	snowid_redis_owners_key(key, sizeof(key), request->key_prefix,
							request->datacenter_id);

	switch (result->status)
	{
		case SNOWID_CLAIM_OK:
			if (result->evictable)
				ereport(WARNING,
						(errmsg("redis server at %s may evict snowid's worker id claims",
								result->node),
						 errdetail("Its maxmemory-policy is %s An evicted claim lets another server take the same worker id.",
								   result->message),
						 errhint("Set maxmemory-policy to noeviction or to a volatile-* policy.")));
			break;

		case SNOWID_CLAIM_UNREACHABLE:
			if (result->connected)
				ereport(elevel,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("redis server at %s did not complete the worker id claim",
								result->node),
						 errdetail("%s", result->message),
						 errhint("Check that Redis is up and answers within snowid.redis_timeout_ms (%d ms).",
								 request->timeout_ms)));
			else
				ereport(elevel,
						(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
						 errmsg("could not connect to redis server at %s",
								result->node),
						 errdetail("%s", result->message),
						 errhint("Check that Redis is running and that snowid.redis_url names it.")));
			break;

		case SNOWID_CLAIM_AUTH_FAILED:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_PASSWORD),
					 errmsg("authentication to redis server at %s failed",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Check the user name and password in snowid.redis_url.")));
			break;

		case SNOWID_CLAIM_NO_PERMISSION:
			ereport(elevel,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("redis user may not claim a worker id at %s",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Allow the Redis user the commands EVAL, HGETALL, HSET and HDEL on the key %s.",
							 key)));
			break;

		case SNOWID_CLAIM_ALL_HELD:
			ereport(elevel,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("all %d worker ids of datacenter %d are held",
							request->max_worker_id + 1,
							request->datacenter_id),
					 errdetail("Redis at %s has every worker id from 0 to %d registered to a server.",
							   result->node, request->max_worker_id),
					 errhint("List the holders with HGETALL %s and free the id of a decommissioned server with HDEL %s <worker id>.",
							 key, key)));
			break;

		case SNOWID_CLAIM_CONFLICT:
			ereport(elevel,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("worker id %d of datacenter %d is held by another server",
							result->worker_id, request->datacenter_id),
					 errdetail("This server is \"%s\"; Redis has worker id %d registered to \"%s\".",
							   request->identity, result->worker_id,
							   result->holder),
					 errhint("Set snowid.worker_id to a free id or, if that server is decommissioned, free its id with HDEL %s %d.",
							 key, result->worker_id)));
			break;

		case SNOWID_CLAIM_HOLDS_OTHER:
			ereport(elevel,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("this server holds worker id %d of datacenter %d in redis, not the configured worker id %d",
							result->worker_id, request->datacenter_id,
							request->explicit_worker_id),
					 errdetail("Redis has worker id %d registered to \"%s\".",
							   result->worker_id, request->identity),
					 errhint("Free the old id with HDEL %s %d, or set snowid.worker_id to %d.",
							 key, result->worker_id, result->worker_id)));
			break;

		case SNOWID_CLAIM_REDIS_ERROR:
			ereport(elevel,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("redis server at %s refused the worker id claim",
							result->node),
					 errdetail("%s", result->message),
					 strstr(result->message, "READONLY") != NULL ?
					 errhint("Point snowid.redis_url at the primary: the claim writes.") : 0));
			break;

		case SNOWID_CLAIM_PROTOCOL_ERROR:
			ereport(elevel,
					(errcode(ERRCODE_PROTOCOL_VIOLATION),
					 errmsg("unexpected reply from redis server at %s",
							result->node),
					 errdetail("%s", result->message)));
			break;
	}
}

/*
 * Run one command that touches one datacenter's keys (a script, for the
 * lease code in redis_lease.c) against the target: connect, log in, follow
 * cluster redirections.  Returns the reply, which the caller frees with
 * freeReplyObject(), or NULL with result filled (status and message).  An
 * error reply other than a redirection is returned for the caller to
 * judge with snowid_redis_error_reply().  Never ereports, never pallocs.
 */
redisReply *
snowid_redis_run(const SnowidRedisTarget *target, int timeout_ms,
				 int argc, const char **argv, SnowidClaimResult *result)
{
	SnowidRedisNode node;
	bool		asking = false;
	int			hop;

	Assert(argc <= SNOWID_REDIS_MAX_ARGS);
	memset(result, 0, sizeof(*result));
	result->worker_id = -1;

	strlcpy(node.host, target->host, sizeof(node.host));
	node.port = target->port;
	strlcpy(node.socket_path, target->socket_path, sizeof(node.socket_path));

	for (hop = 0; hop <= SNOWID_REDIS_MAX_REDIRECTS; hop++)
	{
		struct timeval tv;
		redisContext *c;
		redisReply *reply;

		snowid_redis_describe_node(&node, result->node, sizeof(result->node));
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
		errno = 0;
		if (node.socket_path[0] != '\0')
			c = redisConnectUnixWithTimeout(node.socket_path, tv);
		else
			c = redisConnectWithTimeout(node.host, node.port, tv);
		if (c != NULL && c->err == 0)
			redisSetTimeout(c, tv);
		if (c == NULL || c->err != 0)
		{
			snowid_set_io_failure(result, target, c, errno, timeout_ms, false);
			if (c != NULL)
				redisFree(c);
			return NULL;
		}
		if (!snowid_login(c, target, timeout_ms, result))
		{
			redisFree(c);
			return NULL;
		}
		if (asking)
		{
			const char *asking_argv[] = {"ASKING"};

			reply = snowid_command(c, 1, asking_argv, target, timeout_ms,
								   result);
			if (reply == NULL)
			{
				redisFree(c);
				return NULL;
			}
			freeReplyObject(reply);
		}

		reply = snowid_command(c, argc, argv, target, timeout_ms, result);
		redisFree(c);
		if (reply == NULL)
			return NULL;
		if (!snowid_parse_redirect(reply, &node, &asking))
			return reply;
		freeReplyObject(reply);
	}

	result->status = SNOWID_CLAIM_REDIS_ERROR;
	snowid_set_message(result, target, "",
					   "Redis Cluster redirected the command more than 3 times");
	return NULL;
}

/*
 * Fill result from an error reply that no caller recognised: its status
 * (unreachable for "not now" replies) and Redis' words as the message.
 */
void
snowid_redis_error_reply(const SnowidRedisTarget *target, const char *err,
						 SnowidClaimResult *result)
{
	result->status = snowid_classify_error(err, false);
	snowid_set_message(result, target, "Redis replied: ", err);
}

/*
 * Fill result with a protocol error: a reply of a shape the caller did not
 * expect.
 */
void
snowid_redis_bad_reply(const SnowidRedisTarget *target, const char *what,
					   SnowidClaimResult *result)
{
	result->status = SNOWID_CLAIM_PROTOCOL_ERROR;
	snowid_set_message(result, target, "", what);
}
