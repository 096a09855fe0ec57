/*-------------------------------------------------------------------------
 *
 * secret_file.h
 *	  Reading a file that only the server's user may read (secret_file.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_SECRET_FILE_H
#define SNOWID_SECRET_FILE_H

extern char *snowid_read_secret_file(const char *path, const char *setting,
									 Size max_bytes, Size *len);

#endif							/* SNOWID_SECRET_FILE_H */
