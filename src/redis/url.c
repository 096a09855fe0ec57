/*-------------------------------------------------------------------------
 *
 * url.c
 *	  snowid.redis_url, snowid.redis_key_prefix and the names that follow
 *	  from them: parsing the URL into a SnowidRedisTarget, and a
 *	  datacenter's keys.  See url.h.
 *
 * Nothing here talks to Redis, allocates or ereports, so every function can
 * serve a GUC check hook; no locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <arpa/inet.h>
#include <limits.h>
#include <sys/socket.h>

#include "redis/url.h"

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
bool
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

/* What a URL's scheme says: the kind of URL and whether it means TLS */
typedef enum SnowidUrlKind
{
	SNOWID_URL_TCP,
	SNOWID_URL_UNIX,
	SNOWID_URL_SENTINEL
} SnowidUrlKind;

typedef struct SnowidUrlScheme
{
	const char *prefix;
	SnowidUrlKind kind;
	bool		tls;
	const char *no_tls;			/* tls: the problem of a build without TLS */
} SnowidUrlScheme;

/* Each scheme of redis/schemes.h */
#define SNOWID_REDIS_SCHEME(prefix, kind, tls) \
	{prefix, SNOWID_URL_##kind, tls, \
	"TLS (" prefix ") needs snowid built with hiredis 1.x and its TLS library, hiredis_ssl; this build of snowid has no TLS."},
static const SnowidUrlScheme snowid_url_schemes[] = {
#include "redis/schemes.h"
};
#undef SNOWID_REDIS_SCHEME

/*
 * snowid_redis_url_scheme
 *		Whether url starts with a scheme of Redis' URLs.
 */
bool
snowid_redis_url_scheme(const char *url)
{
	int			i;

	for (i = 0; i < lengthof(snowid_url_schemes); i++)
	{
		if (strncmp(url, snowid_url_schemes[i].prefix,
					strlen(snowid_url_schemes[i].prefix)) == 0)
			return true;
	}
	return false;
}

/*
 * Parse snowid.redis_url into *target; see snowid_redis_parse_url().
 */
static bool
snowid_parse_url_into(const char *url, SnowidRedisTarget *target,
					  const char **problem)
{
	const SnowidUrlScheme *scheme = NULL;
	const char *p;
	const char *authority_end;
	const char *at;
	const char *end;
	const char *q;
	int			i;

	if (url == NULL || url[0] == '\0')
	{
		*problem = "The URL is empty.";
		return false;
	}
	for (i = 0; i < lengthof(snowid_url_schemes); i++)
	{
		if (strncmp(url, snowid_url_schemes[i].prefix,
					strlen(snowid_url_schemes[i].prefix)) == 0)
			scheme = &snowid_url_schemes[i];
	}
	if (scheme == NULL)
	{
		*problem = "The URL must start with redis://, rediss://, unix://, redis-sentinel:// or rediss-sentinel://.";
		return false;
	}
	if (scheme->tls && !SNOWID_REDIS_TLS_SUPPORTED)
	{
		*problem = scheme->no_tls;
		return false;
	}
	target->tls = scheme->tls;
	p = url + strlen(scheme->prefix);

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

	switch (scheme->kind)
	{
		case SNOWID_URL_UNIX:
			return snowid_parse_unix_path(p, authority_end, end, target,
										  problem);
		case SNOWID_URL_SENTINEL:
			return snowid_parse_sentinels(p, authority_end, end, target,
										  problem);
		case SNOWID_URL_TCP:
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
 * snowid_redis_parse_host_rule
 *		One entry of snowid.redis_redirect_hosts (len bytes at text): an
 *		IPv4 or IPv6 address, a network as address/bits, or a host name of
 *		letters, digits, dots, hyphens and underscores; followed by ":" and
 *		the one port followed there, an IPv6 address or network then in
 *		brackets ("[fd00::1]:6379").
 */
static bool
snowid_redis_parse_host_rule(const char *text, size_t len,
							 SnowidRedisHostRule *rule, const char **problem)
{
	char		buf[SNOWID_REDIS_HOST_LEN];
	char	   *slash;
	char	   *colon;
	int			max_bits;

	memset(rule, 0, sizeof(*rule));
	if (len == 0 || len >= sizeof(buf))
	{
		*problem = "An entry is empty or longer than 255 bytes.";
		return false;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	/* a port: after the "]" of a bracketed IPv6 entry, or after the one ":" */
	if (buf[0] == '[')
	{
		colon = strstr(buf, "]:");
		if (colon != NULL)
			colon++;
	}
	else
		colon = strchr(buf, ':') == strrchr(buf, ':') ? strchr(buf, ':') : NULL;
	if (colon != NULL)
	{
		*colon = '\0';
		if (!snowid_parse_number(colon + 1, strlen(colon + 1), 1, 65535,
								 &rule->port))
		{
			*problem = "A port after \":\" is a number from 1 to 65535.";
			return false;
		}
	}
	if (buf[0] == '[')
	{
		size_t		n = strlen(buf);

		if (n < 3 || buf[n - 1] != ']')
		{
			*problem = "An IPv6 entry with a port is written in brackets, as [fd00::1]:6379.";
			return false;
		}
		memmove(buf, buf + 1, n - 2);
		buf[n - 2] = '\0';
	}
	len = strlen(buf);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, rule->addr) == 1)
		rule->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, rule->addr) == 1)
		rule->family = AF_INET6;
	if (rule->family != 0)
	{
		max_bits = rule->family == AF_INET ? 32 : 128;
		rule->bits = max_bits;
		if (slash != NULL &&
			!snowid_parse_number(slash + 1, strlen(slash + 1), 0, max_bits,
								 &rule->bits))
		{
			*problem = "A network is an address, \"/\" and a prefix length of 0 to 32 (IPv4) or 128 (IPv6).";
			return false;
		}
		return true;
	}
	if (slash != NULL)
	{
		*problem = "A network is an IPv4 or IPv6 address, \"/\" and a prefix length, as 10.0.0.0/24.";
		return false;
	}
	for (size_t i = 0; i < len; i++)
	{
		char		c = buf[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
		{
			*problem = "An entry is a host name (letters, digits, \".\", \"-\" and \"_\"), an IP address or a network such as 10.0.0.0/24.";
			return false;
		}
		rule->name[i] = pg_ascii_tolower((unsigned char) c);
	}
	return true;
}

/*
 * snowid_redis_parse_host_list
 *		snowid.redis_redirect_hosts: entries separated by commas (and
 *		spaces), or "*" for every server, or "" for none.  Never ereports or
 *		allocates: a GUC check hook.
 */
bool
snowid_redis_parse_host_list(const char *list, SnowidRedisHostList *out,
							 const char **problem)
{
	const char *p = list ? list : "";

	memset(out, 0, sizeof(*out));
	for (;;)
	{
		size_t		len;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			return true;
		len = strcspn(p, ", \t");
		if (len == 1 && *p == '*')
			out->any = true;
		else
		{
			if (out->count == SNOWID_REDIS_MAX_REDIRECT_HOSTS)
			{
				*problem = "The list has more than 32 entries: give networks rather than hosts.";
				return false;
			}
			if (!snowid_redis_parse_host_rule(p, len, &out->rules[out->count],
											  problem))
				return false;
			out->count++;
		}
		p += len;
	}
}

/*
 * snowid_redis_host_listed
 *		Whether host and port (a name or an address, as a sentinel or a
 *		redirection names it) are in the list: the same name, in any case,
 *		or an address in a listed network, and the entry's port if it names
 *		one.  A name is never resolved to match a network.
 */
bool
snowid_redis_host_listed(const SnowidRedisHostList *list, const char *host,
						 int port)
{
	unsigned char addr[16];
	int			family = 0;

	if (list == NULL)
		return false;
	if (list->any)
		return true;
	if (inet_pton(AF_INET, host, addr) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, host, addr) == 1)
		family = AF_INET6;
	for (int i = 0; i < list->count; i++)
	{
		const SnowidRedisHostRule *rule = &list->rules[i];
		int			full = rule->bits / 8;
		int			rest = rule->bits % 8;

		if (rule->port != 0 && rule->port != port)
			continue;
		if (rule->family == 0)
		{
			if (family == 0 && pg_strcasecmp(rule->name, host) == 0)
				return true;
			continue;
		}
		if (rule->family != family ||
			memcmp(rule->addr, addr, full) != 0)
			continue;
		if (rest == 0 ||
			((rule->addr[full] ^ addr[full]) & (0xff << (8 - rest)) & 0xff) == 0)
			return true;
	}
	return false;
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
