/*-------------------------------------------------------------------------
 *
 * secret_file.h
 *	  Files that hold a secret (secret_file.c): the Redis passwords, the TLS
 *	  key and its passphrase, the keys of public ids.  A setting names the
 *	  file and never holds the secret: even a GUC_SUPERUSER_ONLY setting is
 *	  readable by members of pg_read_all_settings.
 *
 * A secret file must be a regular file owned by the server's user with no
 * access for group or others (0600), or owned by root and readable by its
 * group at most (0640): PostgreSQL's own rule for ssl_key_file.  These
 * functions neither ereport nor palloc, so that every layer can use them
 * and say what went wrong its own way; a problem is one sentence that names
 * the file, never anything it holds.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_UTIL_SECRET_FILE_H
#define SNOWID_UTIL_SECRET_FILE_H

#include <sys/stat.h>

/* Room for a problem sentence, the file's path included */
#define SNOWID_SECRET_PROBLEM_LEN	(MAXPGPATH + 128)

/* The hint for a file that others may read */
#define SNOWID_SECRET_MODE_HINT \
	"Make the file owned by the server's operating system user with no access for group or others (chmod 0600), or owned by root and readable by its group at most (chmod 0640).  It must be a regular file, not a FIFO, a device, a socket or a directory."

extern bool snowid_secret_mode_ok(const struct stat *st, const char *path,
								  char *problem, size_t len);
extern int	snowid_file_open(const char *path, struct stat *st, char *problem,
							 size_t len);
extern int	snowid_secret_open(const char *path, char *problem, size_t len);
extern ssize_t snowid_secret_read(int fd, char *buf, size_t len);

#endif							/* SNOWID_UTIL_SECRET_FILE_H */
