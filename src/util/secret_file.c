/*-------------------------------------------------------------------------
 *
 * secret_file.c
 *	  Opening a file that holds a secret, checked to be readable by the
 *	  server's user only (see secret_file.h), and reading it.  The checks
 *	  are made on the file opened, so a file swapped in between is not
 *	  read.  No state, no locks; nothing here ereports or pallocs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "util/secret_file.h"

/*
 * snowid_secret_mode_ok
 *		Whether the file of st (named path) may hold a secret: a regular file
 *		owned by the server's user with no group or other access, or owned by
 *		root with at most group read.  If not, a sentence saying why in
 *		problem.
 */
bool
snowid_secret_mode_ok(const struct stat *st, const char *path, char *problem,
					  size_t len)
{
	unsigned	mode = (unsigned) (st->st_mode & 07777);

	if (!S_ISREG(st->st_mode))
	{
		snprintf(problem, len, "\"%s\" is not a regular file.", path);
		return false;
	}
	if (st->st_uid != geteuid() && st->st_uid != 0)
	{
		snprintf(problem, len,
				 "The file \"%s\" is owned neither by the server's user nor by root (its mode is %04o).",
				 path, mode);
		return false;
	}
	if ((st->st_uid == geteuid() && (st->st_mode & (S_IRWXG | S_IRWXO))) ||
		(st->st_uid != geteuid() &&
		 (st->st_mode & (S_IWGRP | S_IXGRP | S_IRWXO))))
	{
		snprintf(problem, len,
				 "The file \"%s\" has mode %04o: others than its owner may read it.",
				 path, mode);
		return false;
	}
	return true;
}

/*
 * snowid_secret_failed
 *		A failed open (fd -1) or read of path: closes fd, says why in
 *		problem, and returns -1 with errno as the failure left it.
 */
static int
snowid_secret_failed(int fd, const char *what, const char *path,
					 char *problem, size_t len)
{
	int			save_errno = errno;

	if (fd >= 0)
		close(fd);
	snprintf(problem, len, "Could not %s \"%s\": %s.", what, path,
			 strerror(save_errno));
	errno = save_errno;
	return -1;
}

/*
 * snowid_file_open
 *		Opens path for reading if it is a regular file, with *st that of the
 *		file opened.  The descriptor, or -1 with a sentence saying why in
 *		problem (errno is that of a failed open, fstat or fcntl, 0 for a
 *		file that is not a regular one).
 *
 * The file is opened without blocking and its type checked on the
 * descriptor before anything is read: a FIFO, a device or a socket would
 * block open() or read() for good (PostgreSQL's signal handlers restart
 * both, so not even a terminate ends them).  A regular file is read in
 * blocking mode again.  For files that hold no secret (certificates) too.
 */
int
snowid_file_open(const char *path, struct stat *st, char *problem, size_t len)
{
	int			fd;
	int			flags;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return snowid_secret_failed(-1, "open", path, problem, len);
	if (fstat(fd, st) != 0)
		return snowid_secret_failed(fd, "read", path, problem, len);
	if (!S_ISREG(st->st_mode))
	{
		snprintf(problem, len, "\"%s\" is not a regular file.", path);
		close(fd);
		errno = 0;
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		return snowid_secret_failed(fd, "read", path, problem, len);
	return fd;
}

/*
 * snowid_secret_open
 *		Opens path for reading if it may hold a secret: as
 *		snowid_file_open(), the file opened also checked by
 *		snowid_secret_mode_ok() (errno 0 if it fails that).
 */
int
snowid_secret_open(const char *path, char *problem, size_t len)
{
	struct stat st;
	int			fd = snowid_file_open(path, &st, problem, len);

	if (fd >= 0 && !snowid_secret_mode_ok(&st, path, problem, len))
	{
		close(fd);
		errno = 0;
		return -1;
	}
	return fd;
}

/*
 * snowid_secret_read
 *		Reads up to len bytes of fd into buf: the bytes read, fewer only at
 *		the end of the file, or -1 with errno set.
 */
ssize_t
snowid_secret_read(int fd, char *buf, size_t len)
{
	size_t		got = 0;

	while (got < len)
	{
		ssize_t		n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += n;
	}
	return (ssize_t) got;
}
