/*-------------------------------------------------------------------------
 *
 * target.h
 *	  Where the coordination database is (target.c): snowid.coordinator_url
 *	  as a libpq connection URI, checked and kept for connecting.  Nothing
 *	  here connects, allocates in a memory context or ereports, so it can
 *	  serve a GUC check hook.
 *
 * Accepted: postgresql://[user@]host[:port][,...]/database[?param=value&...]
 * (or postgres://), every parameter libpq takes but a password: the
 * password comes from the file that passfile names, or ~/.pgpass of the
 * server's user, since any member of pg_read_all_settings can read the
 * setting.  TLS is libpq's: sslmode, sslrootcert, sslcert, sslkey.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_PGCOORD_TARGET_H
#define SNOWID_PGCOORD_TARGET_H

#define SNOWID_PG_URL_LEN		2048
#define SNOWID_PG_DESCRIBE_LEN	256

typedef struct SnowidPgTarget
{
	char		url[SNOWID_PG_URL_LEN];
	char		describe[SNOWID_PG_DESCRIBE_LEN];	/* "host:port/database",
													 * for messages */
} SnowidPgTarget;

extern bool snowid_pg_url_scheme(const char *url);
extern bool snowid_pg_parse_url(const char *url, SnowidPgTarget *target,
								const char **problem);

#endif							/* SNOWID_PGCOORD_TARGET_H */
