/*-------------------------------------------------------------------------
 *
 * secret_file.c
 *	  Reading a file of secrets named by a setting: refused unless it is a
 *	  plain file owned by the server's user that no one else may read or
 *	  write (permissions u=rw, 0600, or less), the rule libpq applies to a
 *	  password file and the server to its TLS key.  The checks are made on
 *	  the file that was opened, so a file swapped in between is not read.
 *	  Errors name the file and the setting, never what the file holds.
 *
 * No state, no locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secret_file.h"

/*
 * snowid_secret_file_error
 *		Closes the file and reports that it cannot be used.
 */
static void
snowid_secret_file_error(int fd, const char *path, const char *setting,
						 const char *message, const char *detail)
{
	close(fd);
	ereport(ERROR,
			(errcode(ERRCODE_CONFIG_FILE_ERROR),
			 errmsg("%s \"%s\" %s", setting, path, message),
			 errdetail("%s", detail),
			 errhint("Make it a file of the server's user with permissions u=rw (0600) or less: chmod 600 \"%s\".",
					 path)));
}

/*
 * snowid_read_secret_file
 *		The contents of the file path named by setting, NUL-terminated, in
 *		the current memory context, and their length in *len.  The caller
 *		wipes them (explicit_bzero) when done, also before an error.
 */
char *
snowid_read_secret_file(const char *path, const char *setting,
						Size max_bytes, Size *len)
{
	int			fd;
	struct stat st;
	char	   *buf;
	Size		got = 0;
	int			save_errno;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open %s \"%s\": %m", setting, path)));
	if (fstat(fd, &st) != 0)
	{
		save_errno = errno;
		close(fd);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat %s \"%s\": %m", setting, path)));
	}
	if (!S_ISREG(st.st_mode))
		snowid_secret_file_error(fd, path, setting, "is not a plain file",
								 "It holds secrets, so it must be a plain file.");
	if (st.st_uid != geteuid())
		snowid_secret_file_error(fd, path, setting,
								 "is not owned by the server's user",
								 "It holds secrets, so only the user the server runs as may own it.");
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		snowid_secret_file_error(fd, path, setting,
								 "has group or world access",
								 "It holds secrets, so only the server's user may read it.");
	if (st.st_size > (off_t) max_bytes)
		snowid_secret_file_error(fd, path, setting, "is too large",
								 psprintf("It has %lld bytes; at most %lld are read.",
										  (long long) st.st_size,
										  (long long) max_bytes));

	buf = palloc(max_bytes + 1);
	for (;;)
	{
		ssize_t		n = read(fd, buf + got, max_bytes - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
		{
			save_errno = errno;
			explicit_bzero(buf, got);
			close(fd);
			errno = save_errno;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read %s \"%s\": %m", setting, path)));
		}
		if (n == 0 || got + n == max_bytes)
		{
			got += n;
			break;
		}
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}
