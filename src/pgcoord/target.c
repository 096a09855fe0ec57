/*-------------------------------------------------------------------------
 *
 * target.c
 *	  snowid.coordinator_url for a PostgreSQL coordination database: a
 *	  libpq connection URI, checked with libpq's own parser.  See target.h.
 *	  No locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq-fe.h"

#include "pgcoord/target.h"

static const char *const snowid_pg_schemes[] = {
	"postgresql://",
	"postgres://",
};

/*
 * snowid_pg_url_scheme
 *		Whether url is a libpq connection URI.
 */
bool
snowid_pg_url_scheme(const char *url)
{
	int			i;

	for (i = 0; i < lengthof(snowid_pg_schemes); i++)
	{
		if (strncmp(url, snowid_pg_schemes[i],
					strlen(snowid_pg_schemes[i])) == 0)
			return true;
	}
	return false;
}

/*
 * snowid_pg_parse_url
 *		Checks url with libpq's parser and keeps it in target, with a short
 *		description for messages; false with *problem (a sentence that
 *		quotes nothing of the URL) if it is not one snowid can use.
 */
bool
snowid_pg_parse_url(const char *url, SnowidPgTarget *target,
					const char **problem)
{
	PQconninfoOption *options;
	PQconninfoOption *option;
	char	   *error = NULL;
	const char *host = NULL;
	const char *port = NULL;
	const char *dbname = NULL;

	memset(target, 0, sizeof(*target));
	if (!snowid_pg_url_scheme(url))
	{
		*problem = "The URL must start with postgresql:// or postgres://.";
		return false;
	}
	if (strlen(url) >= sizeof(target->url))
	{
		*problem = "The URL is too long.";
		return false;
	}
	options = PQconninfoParse(url, &error);
	if (options == NULL)
	{
		/* libpq's message may quote the URL, which may hold a password */
		if (error != NULL)
			PQfreemem(error);
		*problem = "libpq cannot parse the URL as a connection URI.";
		return false;
	}

	*problem = NULL;
	for (option = options; option->keyword != NULL; option++)
	{
		if (option->val == NULL || option->val[0] == '\0')
			continue;
		if (strcmp(option->keyword, "password") == 0)
			*problem = "The URL holds a password, which members of pg_read_all_settings can read.  Put it in the password file that the URL's passfile parameter names, or in ~/.pgpass of the server's user.";
		else if (strcmp(option->keyword, "sslpassword") == 0)
			*problem = "The URL holds sslpassword, the passphrase of the client key, which members of pg_read_all_settings can read.  Give the server a client key without a passphrase instead, in a file only the server's user may read (mode 0600), named by the URL's sslkey parameter.";
		else if (strcmp(option->keyword, "replication") == 0)
			*problem = "The URL asks for a replication connection; a coordination database takes ordinary ones.";
		else if (strcmp(option->keyword, "host") == 0)
			host = option->val;
		else if (strcmp(option->keyword, "hostaddr") == 0 && host == NULL)
			host = option->val;
		else if (strcmp(option->keyword, "port") == 0)
			port = option->val;
		else if (strcmp(option->keyword, "dbname") == 0)
			dbname = option->val;
	}
	if (*problem == NULL && dbname == NULL)
		*problem = "The URL names no database: give the coordination database after the host, as in postgresql://host/snowid.";
	if (*problem == NULL)
	{
		snprintf(target->describe, sizeof(target->describe), "%s%s%s/%s",
				 host != NULL ? host : "localhost",
				 port != NULL ? ":" : "", port != NULL ? port : "", dbname);
		strlcpy(target->url, url, sizeof(target->url));
	}
	PQconninfoFree(options);
	return *problem == NULL;
}
