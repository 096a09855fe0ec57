/*-------------------------------------------------------------------------
 *
 * redis_claim.c
 *	  The worker id claim: parsing snowid.redis_url, the Lua script that
 *	  claims a worker id atomically, the conversation with Redis (finding
 *	  the master through sentinels, logging in, following Redis Cluster
 *	  redirections, waiting for replicas), and the error messages a claim
 *	  can end in.  The bytes on the wire are redis_conn.c's.
 *
 * The claim runs once per server start, in whatever process the caller
 * chooses; nothing here touches shared memory or takes a lock, so the
 * caller's locking rule is the only one that applies.  The functions that
 * talk to Redis never palloc, and ereport only through the
 * CHECK_FOR_INTERRUPTS() of a wait; the open connection is closed in
 * PG_FINALLY, so no hiredis object outlives the claim.  All other ereports
 * live in snowid_redis_report().
 *
 * The password is read from SnowidRedisTarget.password only to send AUTH.
 * It never goes into a problem text, a result or a message: Redis' reply to
 * AUTH is never shown (it may echo the arguments), and any other text from
 * Redis is withheld if it holds four or more characters of the password in
 * a row, checked before it is cut to fit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include <hiredis/hiredis.h>

#include "mb/pg_wchar.h"
#include "utils/timestamp.h"

#include "redis_claim.h"
#include "redis_conn.h"

static void snowid_redis_report_fenced(int elevel,
									   const SnowidClaimRequest *request,
									   const SnowidClaimResult *result);
static void snowid_redis_report_more(int elevel,
									 const SnowidClaimRequest *request,
									 const SnowidClaimResult *result);

/* MOVED/ASK hops followed before giving up; a stable cluster needs one */
#define SNOWID_REDIS_MAX_REDIRECTS	3

/* Text of Redis shown in a message must not share this many bytes in a row
 * with the password */
#define SNOWID_SECRET_WINDOW		4

/*
 * The claim, run atomically by EVAL.
 *
 * KEYS[1] is the datacenter's owners hash: a worker id to the identity of
 * the server holding it, and "fence:<worker id>" to the fence a lease left
 * when it was given back, the time below which lie all ids its holders
 * issued (redis_claim.h).  ARGV[1] is the claiming identity; ARGV[2] holds five numbers: the
 * configured worker id or -1, the highest worker id, the preferred worker id
 * or -1, 1 to write the claim even if it is held already (so that a WAIT for
 * replicas covers it) or 0, and the latest fence the claiming server can
 * start above now (its clock plus its drift budget, Unix ms).  (Redis
 * refuses a command of more than ten words before AUTH, which would hide
 * why a claim without a password fails.)
 *
 * An identity keeps the id it holds.  Without one it takes the configured
 * id if free; with none configured, the preferred id if free, or else the
 * lowest free id in 0..max.  The preferred id is the one the server held
 * last: if Redis has lost the claims, the lowest free id may be one that
 * another server still uses, while the server's own last id is free unless
 * a server claimed it since.  An id fenced past that latest time is not
 * taken (an id on lease was given back, and its last holder's ids may run
 * ahead of this server's clock): the choice goes on to the next free id, and
 * a configured or kept id is refused until then.  Other entries of the same
 * identity (an id beyond max after a layout change, a duplicate written by
 * hand) are released so that an identity holds exactly one id.  A server
 * that already holds its id causes no write unless asked to write.
 * Replies {worker id, its fence or 0}: the claiming server's ids must start
 * at or above that fence.  Refusals are error replies whose first word says
 * which, and they write nothing:
 *
 *	SNOWID_ALL_HELD <count>			no id in 0..max is free
 *	SNOWID_FENCED <id> <fence>		every free id (or the configured or kept
 *									one) is fenced past that time; id is
 *									the one fenced least far
 *	SNOWID_CONFLICT <identity>		the configured id is held by identity
 *	SNOWID_HOLDS_OTHER <id>			this identity holds id, not the configured
 *	SNOWID_RANGE ...				the configured id exceeds max (a caller bug)
 */
static const char *snowid_claim_script =
"local owners, me = KEYS[1], ARGV[1]\n"
"local want, max, prefer, write, usable =\n"
"  string.match(ARGV[2], '^(-?%d+) (%d+) (-?%d+) ([01]) (%d+)$')\n"
"want, max, prefer, usable = tonumber(want), tonumber(max), tonumber(prefer), tonumber(usable)\n"
"if want > max then\n"
"  return redis.error_reply('SNOWID_RANGE worker id ' .. want .. ' exceeds ' .. max)\n"
"end\n"
SNOWID_REDIS_SCRIPT_WID
SNOWID_REDIS_SCRIPT_FENCES
"local taken, mine, keep = {}, {}, nil\n"
"local flat = redis.call('HGETALL', owners)\n"
"load_fences(flat, 'fence:')\n"
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
"  local function free(id) return not taken[id] and fenced(id) <= usable end\n"
"  if prefer >= 0 and prefer <= max and free(prefer) then\n"
"    keep = prefer\n"
"  else\n"
"    for id = 0, max do\n"
"      if free(id) then\n"
"        keep = id\n"
"        break\n"
"      end\n"
"    end\n"
"  end\n"
"  if keep == nil then\n"
"    local least = least_fenced(function(id) return not taken[id] end)\n"
"    if least == nil then\n"
"      return redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))\n"
"    end\n"
"    keep = least\n"
"  end\n"
"end\n"
"if fenced(keep) > usable then\n"
"  return redis.error_reply('SNOWID_FENCED ' .. keep .. ' ' .. ms(fenced(keep)))\n"
"end\n"
"local held = false\n"
"for _, field in ipairs(mine) do\n"
"  if tonumber(field) == keep then\n"
"    held = true\n"
"  else\n"
"    redis.call('HDEL', owners, field)\n"
"  end\n"
"end\n"
"if not held or write == '1' then\n"
"  redis.call('HSET', owners, tostring(keep), me)\n"
"end\n"
"return {keep, fenced(keep)}\n";

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
 * Whether c may appear in a host name.
 */
static bool
snowid_is_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

/*
 * Parse "host[:port]" or "[ipv6][:port]" into node; the port defaults to
 * default_port.
 */
static bool
snowid_parse_hostport(const char *src, size_t n, int default_port,
					  SnowidRedisNode *node, const char **problem)
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
			if (!snowid_is_host_char(*p))
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
	if ((size_t) (host_end - host) >= sizeof(node->host))
	{
		*problem = "The host name is too long.";
		return false;
	}
	memcpy(node->host, host, host_end - host);
	node->host[host_end - host] = '\0';

	node->port = default_port;
	if (p < end)
	{
		if (*p != ':' ||
			!snowid_parse_number(p + 1, end - p - 1, 1, 65535, &node->port))
		{
			*problem = "The port must be a number from 1 to 65535.";
			return false;
		}
	}
	return true;
}

/*
 * Parse what follows the user info of a unix:// URL: an absolute socket
 * path, and optionally "?db=N".
 */
static bool
snowid_parse_unix_path(const char *p, const char *authority_end,
					   const char *end, SnowidRedisTarget *target,
					   const char **problem)
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
	if ((size_t) (path_end - p) >= sizeof(target->node.socket_path))
	{
		*problem = "The socket path is too long.";
		return false;
	}
	memcpy(target->node.socket_path, p, path_end - p);
	target->node.socket_path[path_end - p] = '\0';

	if (path_end < end &&
		(strncmp(path_end, "?db=", 4) != 0 ||
		 !snowid_parse_number(path_end + 4, end - path_end - 4,
							  0, INT_MAX, &target->db)))
	{
		*problem = "The only parameter of a unix:// URL is db, a number, as in unix:///run/redis/redis.sock?db=0.";
		return false;
	}
	return true;
}

/*
 * Parse the database after the authority: "", "/" or "/N".
 */
static bool
snowid_parse_db(const char *p, const char *end, SnowidRedisTarget *target,
				const char **problem)
{
	if (p < end && p + 1 < end &&
		!snowid_parse_number(p + 1, end - p - 1, 0, INT_MAX, &target->db))
	{
		*problem = "The database after the host must be a number, as in redis://localhost:6379/0.";
		return false;
	}
	return true;
}

/*
 * Parse the parameters of a redis-sentinel:// URL, from after "?" to end:
 * "sentinel_user=name" and "sentinel_password=secret", joined by "&",
 * percent-decoded.
 */
static bool
snowid_parse_sentinel_query(const char *p, const char *end,
							SnowidRedisTarget *target, const char **problem)
{
	while (p < end)
	{
		const char *amp = memchr(p, '&', end - p);
		const char *item_end = amp ? amp : end;
		char	   *dst;
		size_t		dstlen;
		size_t		n;

		if (item_end - p > 14 && strncmp(p, "sentinel_user=", 14) == 0)
		{
			n = 14;
			dst = target->sentinel_user;
			dstlen = sizeof(target->sentinel_user);
		}
		else if (item_end - p > 18 &&
				 strncmp(p, "sentinel_password=", 18) == 0)
		{
			n = 18;
			dst = target->sentinel_password;
			dstlen = sizeof(target->sentinel_password);
		}
		else
		{
			*problem = "The only parameters of a redis-sentinel:// URL are sentinel_user and sentinel_password, as in redis-sentinel://host1,host2/mymaster?sentinel_password=secret.";
			return false;
		}
		if (!snowid_percent_decode(p + n, item_end - p - n, dst, dstlen))
		{
			*problem = "The sentinel user name or password is too long or has a malformed percent escape.";
			return false;
		}
		p = amp ? amp + 1 : end;
	}
	return true;
}

/*
 * Parse what follows the user info of a redis-sentinel:// URL: sentinels
 * "host[:port],host[:port]..." up to authority_end, then "/master[/db]".
 */
static bool
snowid_parse_sentinels(const char *p, const char *authority_end,
					   const char *end, SnowidRedisTarget *target,
					   const char **problem)
{
	const char *name;
	const char *name_end;
	const char *query;

	while (p < authority_end)
	{
		const char *comma = memchr(p, ',', authority_end - p);
		const char *item_end = comma ? comma : authority_end;

		if (target->sentinel_count == SNOWID_REDIS_MAX_SENTINELS)
		{
			*problem = "A redis-sentinel:// URL may name at most 8 sentinels.";
			return false;
		}
		if (!snowid_parse_hostport(p, item_end - p, SNOWID_REDIS_SENTINEL_PORT,
								   &target->sentinels[target->sentinel_count],
								   problem))
			return false;
		target->sentinel_count++;
		p = comma ? comma + 1 : authority_end;
	}
	if (target->sentinel_count == 0)
	{
		*problem = "The URL names no sentinel.";
		return false;
	}

	query = authority_end < end ? strchr(authority_end, '?') : NULL;
	if (query != NULL)
	{
		if (!snowid_parse_sentinel_query(query + 1, end, target, problem))
			return false;
		end = query;
	}

	name = authority_end + 1;
	name_end = authority_end < end ? memchr(name, '/', end - name) : NULL;
	if (name_end == NULL)
		name_end = end;
	if (authority_end >= end || name_end == name)
	{
		*problem = "A redis-sentinel:// URL names the master after the sentinels, as in redis-sentinel://sentinel1:26379,sentinel2:26379/mymaster.";
		return false;
	}
	if ((size_t) (name_end - name) >= sizeof(target->master_name))
	{
		*problem = "The master name is too long.";
		return false;
	}
	for (p = name; p < name_end; p++)
	{
		if (!snowid_is_host_char(*p))
		{
			*problem = "The master name may hold only letters, digits, \"-\", \".\" and \"_\".";
			return false;
		}
	}
	memcpy(target->master_name, name, name_end - name);
	target->master_name[name_end - name] = '\0';
	return snowid_parse_db(name_end, end, target, problem);
}

/*
 * Parse snowid.redis_url into *target; see snowid_redis_parse_url().
 */
static bool
snowid_parse_url_into(const char *url, SnowidRedisTarget *target,
					  const char **problem)
{
	enum
	{
		URL_TCP, URL_UNIX, URL_SENTINEL
	}			kind;
	const char *p;
	const char *authority_end;
	const char *at;
	const char *end;
	const char *q;

	if (url == NULL || url[0] == '\0')
	{
		*problem = "The URL is empty.";
		return false;
	}
	if (strncmp(url, "redis://", 8) == 0)
	{
		kind = URL_TCP;
		p = url + 8;
	}
	else if (strncmp(url, "rediss://", 9) == 0)
	{
		if (!SNOWID_REDIS_TLS_SUPPORTED)
		{
			*problem = "TLS (rediss://) needs snowid built with hiredis 1.x and its TLS library, hiredis_ssl; this build of snowid has no TLS.";
			return false;
		}
		kind = URL_TCP;
		target->tls = true;
		p = url + 9;
	}
	else if (strncmp(url, "unix://", 7) == 0)
	{
		kind = URL_UNIX;
		p = url + 7;
	}
	else if (strncmp(url, "redis-sentinel://", 17) == 0)
	{
		kind = URL_SENTINEL;
		p = url + 17;
	}
	else
	{
		*problem = "The URL must start with redis://, rediss://, unix:// or redis-sentinel://.";
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

	switch (kind)
	{
		case URL_UNIX:
			return snowid_parse_unix_path(p, authority_end, end, target,
										  problem);
		case URL_SENTINEL:
			return snowid_parse_sentinels(p, authority_end, end, target,
										  problem);
		case URL_TCP:
			break;
	}
	if (!snowid_parse_hostport(p, authority_end - p, SNOWID_REDIS_DEFAULT_PORT,
							   &target->node, problem))
		return false;
	return snowid_parse_db(authority_end, end, target, problem);
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
 * Names of a datacenter's keys: one hash tag, so that a script may touch
 * them all on a Redis Cluster.
 */
void
snowid_redis_keys(SnowidRedisKeys *keys, const char *key_prefix,
				  int datacenter_id)
{
	snprintf(keys->owners, sizeof(keys->owners), "{%s:dc:%d}:owners",
			 key_prefix, datacenter_id);
	snprintf(keys->leases, sizeof(keys->leases), "{%s:dc:%d}:leases",
			 key_prefix, datacenter_id);
	snprintf(keys->fences, sizeof(keys->fences), "{%s:dc:%d}:fences",
			 key_prefix, datacenter_id);
}

/*
 * Render where a node is, for messages: "host:port", "[ipv6]:port" or
 * "unix:/path".  Never the user or password.
 */
void
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
 * Copy text into dst (dstlen bytes, NUL included) so that it is valid in the
 * database encoding whatever it holds, and so that a cut never splits a
 * character: whole UTF-8 characters are kept in a UTF-8 database, any other
 * non-ASCII byte and every control character become "?".  Returns whether
 * all of text fit.
 */
static bool
snowid_copy_text(char *dst, size_t dstlen, const char *text)
{
	const unsigned char *p = (const unsigned char *) text;
	bool		utf8 = GetDatabaseEncoding() == PG_UTF8;
	size_t		o = 0;

	Assert(dstlen > 0);
	while (*p != '\0')
	{
		int			len = 1;
		bool		keep = *p >= 0x20 && *p < 0x7f;

		if (*p >= 0x80 && utf8)
		{
			len = pg_utf_mblen(p);
			keep = strnlen((const char *) p, len) == (size_t) len &&
				pg_utf8_islegal(p, len);
			if (!keep)
				len = 1;
		}
		if (o + len >= dstlen)
		{
			dst[o] = '\0';
			return false;
		}
		if (keep)
			memcpy(dst + o, p, len);
		else
			dst[o] = '?';
		o += keep ? len : 1;
		p += len;
	}
	dst[o] = '\0';
	return true;
}

/*
 * End a message as a sentence: no trailing blanks, and a period.
 */
static void
snowid_end_sentence(char *msg, size_t size)
{
	size_t		n = strlen(msg);

	while (n > 0 && (msg[n - 1] == ' ' || msg[n - 1] == '?'))
		msg[--n] = '\0';
	if (n > 0 && strchr(".?!", msg[n - 1]) == NULL && n + 1 < size)
	{
		msg[n] = '.';
		msg[n + 1] = '\0';
	}
}

/*
 * snowid_redis_fail
 *		Ends a claim with status and a message in our own words.  The
 *		arguments are hiredis' or OpenSSL's words or file names, never a
 *		reply of Redis and never a secret.
 */
void
snowid_redis_fail(SnowidClaimResult *result, SnowidClaimStatus status,
				  const char *fmt,...)
{
	char		text[SNOWID_REDIS_MESSAGE_LEN * 2];
	va_list		args;

	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	result->status = status;
	if (!snowid_copy_text(result->message, sizeof(result->message), text))
		snowid_end_sentence(result->message, sizeof(result->message));
}

/*
 * Whether text holds SNOWID_SECRET_WINDOW bytes in a row of secret (all of
 * it, if it is shorter).  Case matters, as it does for Redis passwords.
 */
static bool
snowid_shares_secret(const char *text, const char *secret)
{
	size_t		secret_len = strlen(secret);
	size_t		window = Min(secret_len, SNOWID_SECRET_WINDOW);
	size_t		text_len = strlen(text);
	size_t		i;

	if (secret_len == 0)
		return false;
	for (i = 0; i + window <= secret_len; i++)
	{
		if (memmem(text, text_len, secret + i, window) != NULL)
			return true;
	}
	return false;
}

/*
 * Whether text shares a run of bytes with either password of the target.
 */
static bool
snowid_shares_target_secret(const char *text, const SnowidRedisTarget *target)
{
	return snowid_shares_secret(text, target->password) ||
		snowid_shares_secret(text, target->sentinel_password);
}

/*
 * Copy text that Redis sent into dst for a message, whole and checked
 * before it is cut: withheld if it shares a run of bytes with the
 * password, and cut at a character boundary.
 */
static void
snowid_redis_text(char *dst, size_t dstlen, const SnowidRedisTarget *target,
				  const char *text)
{
	if (snowid_shares_target_secret(text, target))
		strlcpy(dst, "(not shown: it contains part of the password)",
				dstlen);
	else if (!snowid_copy_text(dst, dstlen, text) && dstlen > 4)
	{
		/* mark the cut; the copy left room for one more byte */
		size_t		n = strlen(dst);

		while (n > 0 && n + 4 > dstlen)
		{
			/* step back over a whole character */
			do
				n--;
			while (n > 0 && ((unsigned char) dst[n] & 0xC0) == 0x80);
		}
		strcpy(dst + n, "...");
	}
}

/*
 * Ends a claim with status and a message that quotes what Redis replied
 * (an error reply, an eviction policy) after prefix, filtered by
 * snowid_redis_text().  Never for a reply to a command that carried a
 * secret.
 */
static void
snowid_redis_quote(SnowidClaimResult *result, const SnowidRedisTarget *target,
				   SnowidClaimStatus status, const char *prefix,
				   const char *text)
{
	size_t		n = strlen(prefix);

	Assert(n < sizeof(result->message) / 2);
	result->status = status;
	memcpy(result->message, prefix, n);
	snowid_redis_text(result->message + n, sizeof(result->message) - n,
					  target, text);
	snowid_end_sentence(result->message, sizeof(result->message));
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
	 * NOPERM answers a command the ACL forbids; inside a script, Redis 7.0
	 * says instead that "the user executing the script can't run this
	 * command" (or access a key), Redis 7.2 and Valkey "ACL failure in
	 * script: ...".
	 */
	if (strncmp(err, "NOPERM", 6) == 0 ||
		strstr(err, "user executing the script can't") != NULL ||
		strstr(err, "ACL failure in script") != NULL)
		return SNOWID_CLAIM_NO_PERMISSION;
	if (during_auth ||
		strncmp(err, "NOAUTH", 6) == 0 || strncmp(err, "WRONGPASS", 9) == 0)
		return SNOWID_CLAIM_AUTH_FAILED;
	return SNOWID_CLAIM_REDIS_ERROR;
}

/*
 * The first word of an error reply if it is an error code (capitals, as in
 * WRONGPASS or ERR), else "".  What may be said about a reply to AUTH.
 */
static void
snowid_error_code(const char *err, const SnowidRedisTarget *target,
				  char *code, size_t len)
{
	size_t		n = 0;

	while (err[n] >= 'A' && err[n] <= 'Z' && n + 1 < len)
	{
		code[n] = err[n];
		n++;
	}
	code[n] = '\0';
	if ((err[n] != ' ' && err[n] != '\0') ||
		snowid_shares_target_secret(code, target))
		code[0] = '\0';
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
			SnowidClaimResult *result)
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
			 SnowidClaimResult *result)
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
	reply = snowid_conn_command(conn, 2, argv, result);
	if (reply == NULL)
		return false;
	if (reply->type == REDIS_REPLY_ERROR)
	{
		snowid_redis_quote(result, target,
						   snowid_classify_error(reply->str, false),
						   "Redis replied to SELECT: ", reply->str);
		freeReplyObject(reply);
		return false;
	}
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
 * Read a {worker id, fence} reply of the claim script into result; false
 * if it has another shape or a value out of range.
 */
static bool
snowid_read_claim_grant(const redisReply *reply,
						const SnowidClaimRequest *request,
						SnowidClaimResult *result)
{
	const redisReply *id;
	const redisReply *fence;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
		reply->element[0]->type != REDIS_REPLY_INTEGER ||
		reply->element[1]->type != REDIS_REPLY_INTEGER)
	{
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The claim script returned a reply of unexpected shape.");
		return false;
	}
	id = reply->element[0];
	fence = reply->element[1];
	if (id->integer < 0 || id->integer > request->max_worker_id ||
		(request->explicit_worker_id >= 0 &&
		 id->integer != request->explicit_worker_id))
	{
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The claim script returned worker id %lld, which is out of range.",
						  (long long) id->integer);
		return false;
	}
	if (fence->integer < 0 || fence->integer > request->usable_ms)
	{
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The claim script returned a fence of %lld ms for worker id %lld, which lies past what this server can start above.",
						  (long long) fence->integer, (long long) id->integer);
		return false;
	}
	result->worker_id = (int) id->integer;
	result->floor_ms = fence->integer;
	return true;
}

/*
 * Read "SNOWID_FENCED <id> <fence>" into result; false if malformed.
 */
bool
snowid_redis_read_fenced(const char *err, const SnowidClaimRequest *request,
						 SnowidClaimResult *result)
{
	long long	id;
	long long	fence;
	int			end = 0;

	if (sscanf(err, "SNOWID_FENCED %lld %lld%n", &id, &fence, &end) != 2 ||
		err[end] != '\0' || id < 0 || id > request->max_worker_id ||
		fence <= request->usable_ms)
		return false;
	result->status = SNOWID_CLAIM_FENCED;
	result->worker_id = (int) id;
	result->floor_ms = fence;
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
	const char *err = reply->type == REDIS_REPLY_ERROR ? reply->str : "";

	if (reply->type != REDIS_REPLY_ERROR)
	{
		if (snowid_read_claim_grant(reply, request, result))
			result->status = SNOWID_CLAIM_OK;
	}
	else if (strncmp(err, "SNOWID_ALL_HELD ", 16) == 0)
		result->status = SNOWID_CLAIM_ALL_HELD;
	else if (strncmp(err, "SNOWID_FENCED ", 14) == 0)
	{
		if (!snowid_redis_read_fenced(err, request, result))
			snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
							  "The claim script refused with a malformed fence.");
	}
	else if (strncmp(err, "SNOWID_CONFLICT ", 16) == 0)
	{
		result->status = SNOWID_CLAIM_CONFLICT;
		result->worker_id = request->explicit_worker_id;
		snowid_redis_text(result->holder, sizeof(result->holder), target,
						  err + 16);
	}
	else if (strncmp(err, "SNOWID_HOLDS_OTHER ", 19) == 0 &&
			 snowid_parse_number(err + 19, strlen(err + 19), 0, INT_MAX,
								 &result->worker_id))
	{
		/* the script says so only when a worker id is configured */
		if (request->explicit_worker_id >= 0)
			result->status = SNOWID_CLAIM_HOLDS_OTHER;
		else
			snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
							  "The claim script answered that this server holds worker id %d, which it answers only when snowid.worker_id is set; it is not.",
							  result->worker_id);
	}
	else
		snowid_redis_quote(result, target, snowid_classify_error(err, false),
						   "Redis replied: ", err);
}

/*
 * Ask Redis for its eviction policy and note whether it may drop our keys,
 * which have no expiry: only the allkeys-* policies do.  Best effort: a
 * managed Redis or an ACL may refuse CONFIG, which is not an error; only
 * the deadline or a cancel end the claim here.
 */
static bool
snowid_check_eviction(SnowidRedisConn *conn, const SnowidRedisTarget *target,
					  SnowidClaimResult *result)
{
	const char *argv[] = {"CONFIG", "GET", "maxmemory-policy"};
	SnowidClaimResult scratch;
	redisReply *reply;

	memset(&scratch, 0, sizeof(scratch));
	reply = snowid_conn_command(conn, 3, argv, &scratch);
	if (reply == NULL)
		return true;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
		reply->element[1]->type == REDIS_REPLY_STRING &&
		strncmp(reply->element[1]->str, "allkeys-", 8) == 0)
	{
		result->evictable = true;
		snowid_redis_text(result->message, sizeof(result->message), target,
						  reply->element[1]->str);
		snowid_end_sentence(result->message, sizeof(result->message));
	}
	freeReplyObject(reply);
	return true;
}

/*
 * After a claim that wrote: WAIT until request->min_replicas replicas have
 * it, within what is left of the deadline.  False with result filled if
 * fewer acknowledged: the id must not be used, since a failover now could
 * lose the claim and give the id to another server.
 */
static bool
snowid_wait_replicas(SnowidRedisConn *conn, const SnowidClaimRequest *request,
					 const SnowidDeadline *deadline, SnowidClaimResult *result)
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
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "Redis answered WAIT with a reply of type %d.",
						  reply->type);
		freeReplyObject(reply);
		return false;
	}
	result->replicas = (int) Min(reply->integer, INT_MAX);
	freeReplyObject(reply);
	if (result->replicas >= request->min_replicas)
		return true;
	snowid_redis_fail(result, SNOWID_CLAIM_FEW_REPLICAS,
					  "WAIT %d %ld returned %d.", request->min_replicas,
					  remaining, result->replicas);
	return false;
}

/*
 * Open a connection to node (with TLS if the URL asks for it) and log in.
 */
static bool
snowid_connect_node(SnowidRedisConn *conn, const SnowidRedisNode *node,
					const SnowidRedisTarget *target,
					const SnowidClaimRequest *request,
					const SnowidDeadline *deadline, SnowidClaimResult *result)
{
	SnowidRedisTls tls;

	tls.ca_file = request->tls_ca_file;
	tls.cert_file = request->tls_cert_file;
	tls.key_file = request->tls_key_file;
	snowid_conn_close(conn);
	return snowid_conn_open(conn, node, target->tls ? &tls : NULL, deadline,
							result) &&
		snowid_login(conn, target, result);
}

/*
 * Check with ROLE that the server the sentinels named is a master; during
 * a failover they may still name one that has become a replica.
 */
static bool
snowid_check_master_role(SnowidRedisConn *conn,
						 const SnowidRedisTarget *target,
						 SnowidClaimResult *result)
{
	const char *argv[] = {"ROLE"};
	redisReply *reply;
	bool		master;

	reply = snowid_conn_command(conn, 1, argv, result);
	if (reply == NULL)
		return false;
	if (reply->type == REDIS_REPLY_ERROR)
	{
		snowid_redis_quote(result, target,
						   snowid_classify_error(reply->str, false),
						   "Redis replied to ROLE: ", reply->str);
		freeReplyObject(reply);
		return false;
	}
	master = reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
		reply->element[0]->type == REDIS_REPLY_STRING &&
		strcmp(reply->element[0]->str, "master") == 0;
	if (!master)
		snowid_redis_fail(result, SNOWID_CLAIM_NOT_MASTER,
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
					const SnowidDeadline *deadline, SnowidRedisNode *master,
					SnowidClaimResult *result)
{
	const char *argv[] = {"SENTINEL", "get-master-addr-by-name",
	target->master_name};
	redisReply *reply;
	bool		named;

	snowid_conn_close(conn);
	if (!snowid_conn_open(conn, sentinel, NULL, deadline, result) ||
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
		snowid_redis_fail(result, SNOWID_CLAIM_NO_MASTER,
						  "Sentinel %s knows no master named \"%s\".",
						  result->node, target->master_name);
	else if (reply->type == REDIS_REPLY_ERROR)
		snowid_redis_quote(result, target, SNOWID_CLAIM_UNREACHABLE,
						   "The sentinel replied: ", reply->str);
	else
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The sentinel answered with a reply of type %d.",
						  reply->type);
	freeReplyObject(reply);
	return named;
}

/*
 * How telling a failure to find the master is: a named master that says it
 * is a replica (a failover under way) beats a named master that is down,
 * which beats sentinels that know no such master, which beats no answer.
 */
static int
snowid_sentinel_rank(SnowidClaimStatus status)
{
	switch (status)
	{
		case SNOWID_CLAIM_NOT_MASTER:
			return 3;
		case SNOWID_CLAIM_UNREACHABLE:
			return 2;
		case SNOWID_CLAIM_NO_MASTER:
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
							 const SnowidClaimRequest *request,
							 const SnowidDeadline *deadline,
							 SnowidRedisNode *master,
							 SnowidClaimResult *result)
{
	SnowidClaimResult best;
	int			i;

	memset(&best, 0, sizeof(best));
	best.status = SNOWID_CLAIM_NO_SENTINEL;
	best.worker_id = -1;
	for (i = 0; i < target->sentinel_count; i++)
	{
		if (!snowid_ask_sentinel(conn, &target->sentinels[i], target,
								 deadline, master, result))
		{
			if (result->status != SNOWID_CLAIM_NO_MASTER)
			{
				/* this sentinel is down or said something odd */
				result->status = SNOWID_CLAIM_NO_SENTINEL;
				result->connected = false;
			}
		}
		else if (snowid_connect_node(conn, master, target, request, deadline,
									 result))
		{
			if (snowid_check_master_role(conn, target, result))
				return true;
			if (result->status != SNOWID_CLAIM_NOT_MASTER)
				return false;
		}
		else if (result->status != SNOWID_CLAIM_UNREACHABLE)
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
 * The ASKING + EVAL round on an open connection: run the claim script,
 * after ASKING if a cluster's ASK redirection sent us here.
 */
static redisReply *
snowid_run_script(SnowidRedisConn *conn, const SnowidRedisTarget *target,
				  bool asking, int argc, const char **args,
				  SnowidClaimResult *result)
{
	if (asking)
	{
		const char *asking_argv[] = {"ASKING"};
		redisReply *reply = snowid_conn_command(conn, 1, asking_argv, result);

		if (reply == NULL)
			return NULL;
		/* refused (NOPERM): the target would send us back with MOVED */
		if (reply->type == REDIS_REPLY_ERROR)
		{
			snowid_redis_quote(result, target,
							   snowid_classify_error(reply->str, false),
							   "Redis replied to ASKING: ", reply->str);
			freeReplyObject(reply);
			return NULL;
		}
		freeReplyObject(reply);
	}
	return snowid_conn_command(conn, argc, args, result);
}

/*
 * The claim on an open connection conn, logged in to node: run the script,
 * follow redirections, then WAIT for replicas and check the eviction
 * policy.  Fills result.
 */
static void
snowid_claim_on(SnowidRedisConn *conn, SnowidRedisNode *node,
				const SnowidRedisTarget *target,
				const SnowidClaimRequest *request,
				const SnowidDeadline *deadline, SnowidClaimResult *result)
{
	SnowidRedisKeys keys;
	char		numbers[96];
	const char *args[6];
	bool		asking = false;
	int			hop;

	snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);
	snprintf(numbers, sizeof(numbers), "%d %d %d %d " INT64_FORMAT,
			 request->explicit_worker_id, request->max_worker_id,
			 request->preferred_worker_id, request->min_replicas > 0 ? 1 : 0,
			 request->usable_ms);
	args[0] = "EVAL";
	args[1] = snowid_claim_script;
	args[2] = "1";
	args[3] = keys.owners;
	args[4] = request->identity;
	args[5] = numbers;

	for (hop = 0;; hop++)
	{
		redisReply *reply = snowid_run_script(conn, target, asking,
											  lengthof(args), args, result);
		bool		redirected;

		if (reply == NULL)
			return;
		redirected = snowid_parse_redirect(reply, node, &asking);
		if (!redirected)
			snowid_read_claim_reply(reply, target, request, result);
		freeReplyObject(reply);
		if (!redirected)
			break;
		if (hop == SNOWID_REDIS_MAX_REDIRECTS)
		{
			snowid_redis_fail(result, SNOWID_CLAIM_REDIS_ERROR,
							  "Redis Cluster redirected the claim more than %d times.",
							  SNOWID_REDIS_MAX_REDIRECTS);
			return;
		}
		if (!snowid_connect_node(conn, node, target, request, deadline,
								 result))
			return;
	}

	if (result->status != SNOWID_CLAIM_OK)
		return;
	if (request->min_replicas > 0 &&
		!snowid_wait_replicas(conn, request, deadline, result))
		return;
	snowid_check_eviction(conn, target, result);
}

/*
 * Claim a worker id: find and connect to the server (through the sentinels
 * if the URL names them), log in, and claim there; the whole of it within
 * request->timeout_ms.  Fills *result and returns; a cancel raises its
 * error from a wait, and the connection is closed either way.
 */
void
snowid_redis_try_claim(const SnowidRedisTarget *target,
					   const SnowidClaimRequest *request,
					   SnowidClaimResult *result)
{
	SnowidDeadline deadline;
	SnowidRedisConn conn;
	SnowidRedisNode node;

	Assert(request->explicit_worker_id >= -1 &&
		   request->explicit_worker_id <= request->max_worker_id);
	Assert(request->preferred_worker_id >= -1 &&
		   request->preferred_worker_id <= request->max_worker_id);
	Assert(strlen(request->key_prefix) < SNOWID_REDIS_KEY_PREFIX_LEN);

	memset(result, 0, sizeof(*result));
	memset(&conn, 0, sizeof(conn));
	result->worker_id = -1;
	strlcpy(result->master_name, target->master_name,
			sizeof(result->master_name));
	snowid_deadline_start(&deadline, request->timeout_ms);

	PG_TRY();
	{
		bool		connected;

		if (target->sentinel_count > 0)
			connected = snowid_connect_via_sentinels(&conn, target, request,
													 &deadline, &node,
													 result);
		else
		{
			node = target->node;
			connected = snowid_connect_node(&conn, &node, target, request,
											&deadline, result);
		}
		if (connected)
			snowid_claim_on(&conn, &node, target, request, &deadline, result);
		result->elapsed_ms = snowid_deadline_elapsed(&deadline);
	}
	PG_FINALLY();
	{
		snowid_conn_close(&conn);
	}
	PG_END_TRY();
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
 *	TLS set-up		F0000: a TLS file setting names an unusable file
 *	TLS refused		28000: the server's certificate is not trusted, names
 *					another host or has expired, or the server refused our
 *					client certificate: the peer is not proven to be ours
 *	TLS failed		08001: any other handshake failure
 *	no sentinel		08001, as unreachable
 *	no master		42704: the sentinels know no master by that name
 *	not master		08006: a failover is under way; try again
 *	few replicas	53000: the claim may not survive a failover yet
 */
void
snowid_redis_report(int elevel, const SnowidClaimRequest *request,
					const SnowidClaimResult *result)
{
	SnowidRedisKeys keys;
	const char *key = keys.owners;

	snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);

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
					 errhint("Allow the Redis user the commands EVAL, HGETALL, HSET and HDEL on the key %s (on lease also HGET and TIME, and the keys %s and %s), and ASKING on a Redis Cluster.",
							 keys.owners, keys.leases, keys.fences)));
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

		case SNOWID_CLAIM_FENCED:
			snowid_redis_report_fenced(elevel, request, result);
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

		default:
			snowid_redis_report_more(elevel, request, result);
			break;
	}
}

/*
 * The report of a claim refused for a fence: the worker id (or every one
 * not held) was on lease to a server whose ids may run past where this one
 * can start, so taking it now could repeat them.  It can be taken once this
 * server's clock is within snowid.max_drift_ms of the fence.
 */
static void
snowid_redis_report_fenced(int elevel, const SnowidClaimRequest *request,
						   const SnowidClaimResult *result)
{
	TimestampTz at = (result->floor_ms -
					  (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
					  SECS_PER_DAY * 1000) * 1000;
	const char *fence = timestamptz_to_str(at);
	long long	ahead = (long long) (result->floor_ms - request->usable_ms);

	if (request->explicit_worker_id >= 0)
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("worker id %d of datacenter %d cannot be taken until %s",
						result->worker_id, request->datacenter_id, fence),
				 errdetail("It was on lease, and the ids its last holder issued reach up to then: %lld ms past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms).",
						   ahead),
				 errhint("Wait until then and call again, or set snowid.worker_id to another free id.")));
	else
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("no worker id of datacenter %d can be taken until %s",
						request->datacenter_id, fence),
				 errdetail("Every worker id not held by a server was on lease, and the ids of its last holder reach past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms); worker id %d is free first, %lld ms past it.",
						   result->worker_id, ahead),
				 errhint("Wait until then and try again, or free the worker id of a decommissioned server.")));
}

/*
 * The reports of TLS, Sentinel and replication failures; see
 * snowid_redis_report().
 */
static void
snowid_redis_report_more(int elevel, const SnowidClaimRequest *request,
						 const SnowidClaimResult *result)
{
	switch (result->status)
	{
		case SNOWID_CLAIM_TLS_SETUP:
			ereport(elevel,
					(errcode(ERRCODE_CONFIG_FILE_ERROR),
					 errmsg("could not set up TLS for redis server at %s",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Check snowid.redis_tls_ca_file, snowid.redis_tls_cert_file and snowid.redis_tls_key_file: the files must exist, be readable by the server's user and hold PEM data.")));
			break;

		case SNOWID_CLAIM_TLS_UNTRUSTED:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s presented a certificate that is not trusted",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Set snowid.redis_tls_ca_file to the CA certificate (or bundle) that signed the server's certificate; without it the system's CAs are used.")));
			break;

		case SNOWID_CLAIM_TLS_HOSTNAME:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s presented a certificate for another host name",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Name the server in snowid.redis_url as its certificate does (a subject alternative name), or have a certificate issued for the name you use.")));
			break;

		case SNOWID_CLAIM_TLS_EXPIRED:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s presented a certificate outside its validity period",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Renew the Redis server's certificate, and check that this server's clock is right.")));
			break;

		case SNOWID_CLAIM_TLS_CLIENT_CERT:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s refused this server's TLS client certificate",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Set snowid.redis_tls_cert_file and snowid.redis_tls_key_file to a certificate signed by a CA the Redis server trusts (its tls-ca-cert-file).")));
			break;

		case SNOWID_CLAIM_TLS_FAILED:
			ereport(elevel,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not establish TLS with redis server at %s",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Check that the port in snowid.redis_url is Redis' TLS port (tls-port).")));
			break;

		case SNOWID_CLAIM_NO_SENTINEL:
			ereport(elevel,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not reach any redis sentinel to find master \"%s\"",
							result->master_name),
					 errdetail("The last one tried, at %s: %s", result->node,
							   result->message),
					 errhint("Check that the sentinels named in snowid.redis_url are running and reachable, and that sentinel_password in the URL is set if they require a password.")));
			break;

		case SNOWID_CLAIM_NO_MASTER:
			ereport(elevel,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("redis sentinels know no master named \"%s\"",
							result->master_name),
					 errdetail("%s", result->message),
					 errhint("The name after the sentinels in snowid.redis_url must be one the sentinels monitor (sentinel monitor <name> ...).")));
			break;

		case SNOWID_CLAIM_NOT_MASTER:
			ereport(elevel,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("redis server at %s, named master by the sentinels, is not a master",
							result->node),
					 errdetail("%s", result->message),
					 errhint("A failover is probably under way; call again in a few seconds.")));
			break;

		case SNOWID_CLAIM_FEW_REPLICAS:
			ereport(elevel,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("only %d of the %d redis replicas required acknowledged the worker id claim at %s",
							result->replicas, request->min_replicas,
							result->node),
					 errdetail("The claimed worker id is not used: a failover now could lose the claim and give the id to another server. %s",
							   result->message),
					 errhint("Check that the replicas are up and connected, or lower snowid.redis_min_replicas.")));
			break;

		default:
			elog(ERROR, "unexpected snowid claim status %d",
				 (int) result->status);
	}
}


/*
 * Run one command on a datacenter's keys (a lease script of redis_lease.c)
 * where a claim runs: through the sentinels if the URL names them,
 * following cluster redirections, then WAIT for snowid.redis_min_replicas
 * unless Redis replied with an error; all within request->timeout_ms.
 * Returns the reply, which the caller frees with freeReplyObject(), or NULL
 * with result filled.  As in a claim, a cancel raises its error from a
 * wait, with nothing left open.
 */
redisReply *
snowid_redis_run(const SnowidRedisTarget *target,
				 const SnowidClaimRequest *request, int argc,
				 const char **argv, SnowidClaimResult *result)
{
	SnowidDeadline deadline;
	SnowidRedisConn conn;
	SnowidRedisNode node;
	redisReply *volatile reply = NULL;

	memset(result, 0, sizeof(*result));
	memset(&conn, 0, sizeof(conn));
	result->worker_id = -1;
	strlcpy(result->master_name, target->master_name,
			sizeof(result->master_name));
	snowid_deadline_start(&deadline, request->timeout_ms);

	PG_TRY();
	{
		bool		connected;
		bool		asking = false;
		int			hop;

		if (target->sentinel_count > 0)
			connected = snowid_connect_via_sentinels(&conn, target, request,
													 &deadline, &node,
													 result);
		else
		{
			node = target->node;
			connected = snowid_connect_node(&conn, &node, target, request,
											&deadline, result);
		}
		for (hop = 0; connected; hop++)
		{
			if (asking)
			{
				const char *asking_argv[] = {"ASKING"};
				redisReply *asked = snowid_conn_command(&conn, 1, asking_argv,
														result);

				if (asked == NULL)
					break;
				freeReplyObject(asked);
			}
			reply = snowid_conn_command(&conn, argc, argv, result);
			if (reply == NULL || !snowid_parse_redirect(reply, &node, &asking))
				break;
			freeReplyObject(reply);
			reply = NULL;
			if (hop == SNOWID_REDIS_MAX_REDIRECTS)
			{
				snowid_redis_fail(result, SNOWID_CLAIM_REDIS_ERROR,
								  "Redis Cluster redirected the command more than %d times.",
								  SNOWID_REDIS_MAX_REDIRECTS);
				break;
			}
			connected = snowid_connect_node(&conn, &node, target, request,
											&deadline, result);
		}
		if (reply != NULL && reply->type != REDIS_REPLY_ERROR &&
			request->min_replicas > 0 &&
			!snowid_wait_replicas(&conn, request, &deadline, result))
		{
			freeReplyObject(reply);
			reply = NULL;
		}
	}
	PG_CATCH();
	{
		if (reply != NULL)
			freeReplyObject(reply);
		snowid_conn_close(&conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	snowid_conn_close(&conn);
	return reply;
}

/*
 * Fill result from an error reply that no caller recognised: its status
 * (unreachable for "not now" replies) and Redis' words as the message.
 */
void
snowid_redis_error_reply(const SnowidRedisTarget *target, const char *err,
						 SnowidClaimResult *result)
{
	snowid_redis_quote(result, target, snowid_classify_error(err, false),
					   "Redis replied: ", err);
}
