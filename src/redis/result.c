/*-------------------------------------------------------------------------
 *
 * result.c
 *	  Filling a SnowidRedisResult: a failure in our own words, or one that
 *	  quotes Redis, and the status an error reply stands for.
 *
 * The password is read from SnowidRedisTarget.password only to send AUTH.
 * It never goes into a problem text, a result or a message: Redis' reply to
 * AUTH is never shown (it may echo the arguments), and any other text from
 * Redis is withheld if it holds four or more characters of the password in
 * a row, checked before it is cut to fit.  No locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "redis/result.h"

/* Text of Redis shown in a message must not share this many bytes in a row
 * with the password */
#define SNOWID_SECRET_WINDOW		4

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
void
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
snowid_redis_fail(SnowidRedisResult *result, SnowidRedisStatus status,
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
void
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
void
snowid_redis_quote(SnowidRedisResult *result, const SnowidRedisTarget *target,
				   SnowidRedisStatus status, const char *prefix,
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
 * count as unreachable, so that the caller tries again as it would for a
 * dead server.
 */
SnowidRedisStatus
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
			return SNOWID_REDIS_UNREACHABLE;
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
		return SNOWID_REDIS_NO_PERMISSION;
	if (strncmp(err, "SNOWID_WRONG_SECRET ", 20) == 0)
		return SNOWID_REDIS_WRONG_SECRET;
	if (during_auth ||
		strncmp(err, "NOAUTH", 6) == 0 || strncmp(err, "WRONGPASS", 9) == 0)
		return SNOWID_REDIS_AUTH_FAILED;
	return SNOWID_REDIS_ERROR;
}

/*
 * The first word of an error reply if it is an error code (capitals, as in
 * WRONGPASS or ERR), else "".  What may be said about a reply to AUTH.
 */
void
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
 * Fill result from an error reply that no caller recognised: its status
 * (unreachable for "not now" replies) and Redis' words as the message.
 */
void
snowid_redis_error_reply(const SnowidRedisTarget *target, const char *err,
						 SnowidRedisResult *result)
{
	snowid_redis_quote(result, target, snowid_classify_error(err, false),
					   "Redis replied: ", err);
}
