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
#include <unistd.h>

#include "util/secret_file.h"
#include "redis/secret.h"

/*
 * A secret file is read this far: a first line of at most
 * SNOWID_REDIS_PASSWORD_LEN - 1 bytes, its line end, and a byte more.
 */
#define SNOWID_SECRET_READ_LEN		(SNOWID_REDIS_PASSWORD_LEN + 2)

static void snowid_secret_fail(SnowidRedisResult *result, const char *setting,
							   const char *hint, const char *fmt,...)
			pg_attribute_printf(4, 5);

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
 * snowid_secret_file_open
 *		Opens the file that setting names if it may hold a secret (see
 *		secret.h), checked on the descriptor returned, which the caller
 *		reads and closes; -1 with result filled if not.  For a file read in
 *		full, the TLS key.
 */
int
snowid_secret_file_open(const char *path, const char *setting,
						SnowidRedisResult *result)
{
	char		problem[SNOWID_SECRET_PROBLEM_LEN];
	int			fd = snowid_secret_open(path, problem, sizeof(problem));

	if (fd < 0)
		snowid_secret_fail(result, setting,
						   errno != 0 ? SNOWID_SECRET_OPEN_HINT :
						   SNOWID_SECRET_MODE_HINT, "%s", problem);
	return fd;
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
	char		problem[SNOWID_SECRET_PROBLEM_LEN];
	ssize_t		n;
	size_t		line;
	int			fd;
	int			save_errno;

	Assert(len <= SNOWID_REDIS_PASSWORD_LEN);
	buf[0] = '\0';
	fd = snowid_secret_open(path, problem, sizeof(problem));
	if (fd < 0)
	{
		snowid_secret_fail(result, setting,
						   errno != 0 ? SNOWID_SECRET_OPEN_HINT :
						   SNOWID_SECRET_MODE_HINT, "%s", problem);
		return false;
	}
	n = snowid_secret_read(fd, data, sizeof(data) - 1);
	save_errno = errno;
	close(fd);
	if (n < 0)
	{
		snowid_secret_fail(result, setting, SNOWID_SECRET_OPEN_HINT,
						   "Could not read \"%s\": %s.", path,
						   strerror(save_errno));
		return false;
	}

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
