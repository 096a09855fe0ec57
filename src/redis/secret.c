/*-------------------------------------------------------------------------
 *
 * secret.c
 *	  Files that hold a secret: checking that only the server's user (or
 *	  root) can read one, and reading a password or passphrase from its
 *	  first line.  See secret.h for the rule.
 *
 * A failure fills the result with SNOWID_REDIS_SECRET_FILE, the setting
 * that names the file, a detail that names the file and a hint; never
 * anything the file holds.  No shared state, no locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "redis/secret.h"

/*
 * A secret file is read this far: a first line of at most
 * SNOWID_REDIS_PASSWORD_LEN - 1 bytes, its line end, and a byte more.
 */
#define SNOWID_SECRET_READ_LEN		(SNOWID_REDIS_PASSWORD_LEN + 2)

static void snowid_secret_fail(SnowidRedisResult *result, const char *setting,
							   const char *hint, const char *fmt,...)
			pg_attribute_printf(4, 5);

#define SNOWID_SECRET_MODE_HINT \
	"Make the file owned by the server's operating system user with no access for group or others (chmod 0600), or owned by root and readable by its group at most (chmod 0640)."
#define SNOWID_SECRET_OPEN_HINT \
	"Check the path in the setting; a relative path is taken from the data directory."
#define SNOWID_SECRET_LINE_HINT \
	"Write the secret alone on the first line of the file, at most 511 bytes."

/*
 * Fill result with a failure about the file a setting names.
 */
static void
snowid_secret_fail(SnowidRedisResult *result, const char *setting,
				   const char *hint, const char *fmt,...)
{
	char		detail[SNOWID_REDIS_MESSAGE_LEN];
	va_list		args;

	va_start(args, fmt);
	vsnprintf(detail, sizeof(detail), fmt, args);
	va_end(args);
	snowid_redis_fail(result, SNOWID_REDIS_SECRET_FILE, "%s", detail);
	result->secret_setting = setting;
	result->secret_hint = hint;
}

/*
 * Whether the file of st may hold a secret: a regular file owned by the
 * server's user with no group or other access, or owned by root with at
 * most group read.  If not, fills result.
 */
static bool
snowid_secret_mode_ok(const struct stat *st, const char *path,
					  const char *setting, SnowidRedisResult *result)
{
	char		mode[16];

	if (!S_ISREG(st->st_mode))
	{
		snowid_secret_fail(result, setting, SNOWID_SECRET_MODE_HINT,
						   "\"%s\" is not a regular file.", path);
		return false;
	}
	snprintf(mode, sizeof(mode), "%04o", (unsigned) (st->st_mode & 07777));
	if (st->st_uid != geteuid() && st->st_uid != 0)
	{
		snowid_secret_fail(result, setting, SNOWID_SECRET_MODE_HINT,
						   "The file \"%s\" is owned neither by the server's user nor by root (its mode is %s).",
						   path, mode);
		return false;
	}
	if ((st->st_uid == geteuid() && (st->st_mode & (S_IRWXG | S_IRWXO))) ||
		(st->st_uid != geteuid() &&
		 (st->st_mode & (S_IWGRP | S_IXGRP | S_IRWXO))))
	{
		snowid_secret_fail(result, setting, SNOWID_SECRET_MODE_HINT,
						   "The file \"%s\" has mode %s: others than its owner may read it.",
						   path, mode);
		return false;
	}
	return true;
}

/*
 * snowid_secret_file_check
 *		Whether the file that setting names may hold a secret (see
 *		secret.h); false with result filled if not.  For a file that
 *		another library reads, the TLS key.
 */
bool
snowid_secret_file_check(const char *path, const char *setting,
						 SnowidRedisResult *result)
{
	struct stat st;

	if (stat(path, &st) != 0)
	{
		snowid_secret_fail(result, setting, SNOWID_SECRET_OPEN_HINT,
						   "Could not read \"%s\": %s.", path,
						   strerror(errno));
		return false;
	}
	return snowid_secret_mode_ok(&st, path, setting, result);
}

/*
 * snowid_secret_file_read
 *		Reads the first line of the secret file that setting names into buf
 *		(len bytes, NUL included), without its line end.  False with result
 *		filled if the file is not fit for a secret, cannot be read, or its
 *		first line is empty or too long.  What was read is wiped but for
 *		buf, which the caller wipes after use.
 */
bool
snowid_secret_file_read(const char *path, const char *setting, char *buf,
						size_t len, SnowidRedisResult *result)
{
	char		data[SNOWID_SECRET_READ_LEN];
	struct stat st;
	ssize_t		n = 0;
	size_t		line;
	int			fd;
	int			save_errno;
	bool		ok;

	Assert(len <= SNOWID_REDIS_PASSWORD_LEN);
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
	{
		snowid_secret_fail(result, setting, SNOWID_SECRET_OPEN_HINT,
						   "Could not open \"%s\": %s.", path,
						   strerror(errno));
		return false;
	}
	/* the file opened is the file checked */
	ok = fstat(fd, &st) == 0;
	save_errno = errno;
	if (ok)
		ok = snowid_secret_mode_ok(&st, path, setting, result);
	else
		snowid_secret_fail(result, setting, SNOWID_SECRET_OPEN_HINT,
						   "Could not read \"%s\": %s.", path,
						   strerror(save_errno));
	if (ok)
	{
		do
			n = read(fd, data, sizeof(data) - 1);
		while (n < 0 && errno == EINTR);
		save_errno = errno;
		ok = n >= 0;
		if (!ok)
			snowid_secret_fail(result, setting, SNOWID_SECRET_OPEN_HINT,
							   "Could not read \"%s\": %s.", path,
							   strerror(save_errno));
	}
	close(fd);
	if (!ok)
		return false;

	data[n] = '\0';
	line = strcspn(data, "\r\n");
	if (line == 0 || line >= len)
	{
		explicit_bzero(data, sizeof(data));
		snowid_secret_fail(result, setting, SNOWID_SECRET_LINE_HINT,
						   "The first line of \"%s\" is %s.", path,
						   line == 0 ? "empty" : "too long");
		return false;
	}
	memcpy(buf, data, line);
	buf[line] = '\0';
	explicit_bzero(data, sizeof(data));
	return true;
}
