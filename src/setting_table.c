/*-------------------------------------------------------------------------
 *
 * setting_table.c
 *	  A setting's row of a table: its configured value, read from the
 *	  placeholder before the setting is defined and checked as at start,
 *	  and its definition.  No state of its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#include "compat.h"
#include "setting_table.h"

static void snowid_refuse(const SnowidSetting *setting, const char *value,
						  const char *message, const char *detail,
						  const char *hint);

/*
 * snowid_configured_value
 *		The value a setting has in the server's configuration (postgresql.conf,
 *		ALTER SYSTEM, the command line), read from its placeholder before the
 *		setting is defined; NULL if it is not configured.  That is the
 *		placeholder's reset value, not its current one: loaded after server
 *		start, the library is loaded by a session, which may have SET the
 *		placeholder to anything (SET leaves the reset value alone).  A value
 *		given to the session itself (a connection option, ALTER ROLE or ALTER
 *		DATABASE) does replace the reset value, and hides the configured one:
 *		that is refused, as it is for a server-start setting when preloaded.
 */
const char *
snowid_configured_value(const char *name)
{
	struct config_generic *placeholder = find_option(name, false, true,
													 ERROR);

	/* a placeholder only a session SET created has no reset value */
	if (placeholder == NULL || placeholder->reset_source == PGC_S_DEFAULT)
		return NULL;
	if (placeholder->reset_source > PGC_S_ARGV)
		ereport(ERROR,
				(errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
				 errmsg("parameter \"%s\" cannot be changed without restarting the server",
						name),
				 errdetail("This session was given a value of its own (by a connection option, ALTER ROLE or ALTER DATABASE); snowid uses only the value the server was started with."),
				 errhint("Remove \"%s\" from the connection options and from the ALTER ROLE and ALTER DATABASE settings.",
						 name)));
	return GetConfigOptionResetString(name);
}

/*
 * snowid_refuse
 *		Stops the start over a configured value, with the message of its
 *		check hook, a detail and a hint (each NULL for none: the message
 *		then names the setting).  A secret value is not shown.
 */
static void
snowid_refuse(const SnowidSetting *setting, const char *value,
			  const char *message, const char *detail, const char *hint)
{
	if (setting->secret)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 message ? errmsg_internal("%s", message) :
				 errmsg("invalid value for parameter \"%s\"", setting->name),
				 detail ? errdetail("%s", detail) : 0,
				 hint ? errhint("%s", hint) :
				 errhint("The value is not shown because it may contain a password.")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 message ? errmsg_internal("%s", message) :
			 errmsg("invalid value for parameter \"%s\": \"%s\"",
					setting->name, value),
			 detail ? errdetail("%s", detail) : 0,
			 hint ? errhint("%s", hint) : 0));
}

/*
 * snowid_setting_check_start
 *		Refuses a bad configured value of a setting before it is defined, by
 *		its type, its range and its check hook: the rules the GUC machinery
 *		applies to ALTER SYSTEM and a reload.  An error here stops the
 *		postmaster.  Returns the configured value, or NULL if there is none;
 *		an int's or bool's in *number, a string's check hook's extra in
 *		*extra (NULL if none), for the caller to guc_free().
 */
const char *
snowid_setting_check_start(const SnowidSetting *setting, int *number, void **extra)
{
	const char *value = snowid_configured_value(setting->name);
	char	   *copy;
	bool		ok = true;
	bool		flag;

	*extra = NULL;
	if (value == NULL)
		return NULL;
	GUC_check_errmsg_string = NULL;
	GUC_check_errdetail_string = NULL;
	GUC_check_errhint_string = NULL;

	switch (setting->type)
	{
		case SNOWID_SETTING_INT:
			if (!parse_int(value, number, setting->flags, NULL) ||
				*number < setting->min || *number > setting->max)
			{
				char		detail[256];

				if (setting->range_detail)
					strlcpy(detail, setting->range_detail, sizeof(detail));
				else if (setting->flags & GUC_UNIT_MS)
					snprintf(detail, sizeof(detail),
							 "\"%s\" must be from %d to %d milliseconds.",
							 setting->name, setting->min, setting->max);
				else
					snprintf(detail, sizeof(detail),
							 "\"%s\" must be an integer from %d to %d.",
							 setting->name, setting->min, setting->max);
				snowid_refuse(setting, value, NULL, detail, NULL);
			}
			if (setting->int_check)
				ok = setting->int_check(number, extra, PGC_S_FILE);
			break;
		case SNOWID_SETTING_BOOL:
			if (!parse_bool(value, &flag))
				snowid_refuse(setting, value, NULL,
							  "It must be a Boolean value (on or off).", NULL);
			*number = flag;
			break;
		case SNOWID_SETTING_STRING:
			if (setting->string_check == NULL)
				break;
			copy = pstrdup(value);
			ok = setting->string_check(&copy, extra, PGC_S_FILE);
			pfree(copy);
			break;
	}
	if (!ok)
		snowid_refuse(setting, value, GUC_check_errmsg_string,
					  GUC_check_errdetail_string, GUC_check_errhint_string);
	return value;
}

/*
 * snowid_setting_define
 *		Defines one setting, as its row gives it.
 */
void
snowid_setting_define(const SnowidSetting *s)
{
	switch (s->type)
	{
		case SNOWID_SETTING_INT:
			DefineCustomIntVariable(s->name, s->description,
									s->long_description, (int *) s->variable,
									s->boot, s->min, s->max, s->context,
									s->flags, s->int_check, NULL, NULL);
			break;
		case SNOWID_SETTING_BOOL:
			DefineCustomBoolVariable(s->name, s->description,
									 s->long_description,
									 (bool *) s->variable, (bool) s->boot,
									 s->context, s->flags, NULL, NULL, NULL);
			break;
		case SNOWID_SETTING_STRING:
			DefineCustomStringVariable(s->name, s->description,
									   s->long_description,
									   (char **) s->variable,
									   s->boot_string_of ? s->boot_string_of() :
									   s->boot_string,
									   s->context, s->flags, s->string_check,
									   s->string_assign, NULL);
			break;
	}
}
