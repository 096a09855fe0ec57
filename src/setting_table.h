/*-------------------------------------------------------------------------
 *
 * setting_table.h
 *	  Settings given as rows of a table (setting_table.c): a row's
 *	  configured value checked as the GUC machinery would check it, before
 *	  the setting is defined, and then its definition.
 *
 * The GUC machinery only warns about a bad value it finds for a custom
 * setting and then uses the default; snowid_setting_check_start() refuses
 * it instead, by the row's type, range and check hook, the rules ALTER
 * SYSTEM and a reload apply: what ALTER SYSTEM accepts, the next start
 * accepts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_SETTING_TABLE_H
#define SNOWID_SETTING_TABLE_H

#include "utils/guc.h"

typedef enum SnowidSettingType
{
	SNOWID_SETTING_INT,
	SNOWID_SETTING_BOOL,
	SNOWID_SETTING_STRING
} SnowidSettingType;

/* One setting, as the table gives it */
typedef struct SnowidSetting
{
	const char *name;
	SnowidSettingType type;
	void	   *variable;		/* int *, bool * or char ** */
	int			boot;			/* int and bool: the default */
	int			min;			/* int: the range */
	int			max;
	const char *boot_string;	/* string: the default */
	const char *(*boot_string_of) (void);	/* string: the default, where it
											 * is known only at run time */
	GucContext	context;		/* PGC_POSTMASTER, or PGC_SIGHUP */
	int			flags;			/* GUC_UNIT_MS, GUC_SUPERUSER_ONLY */
	bool		secret;			/* never shown in a message */
	bool		preloaded_only; /* defined only while preloading */
	GucIntCheckHook int_check;	/* rules min and max cannot express */
	GucStringCheckHook string_check;
	GucStringAssignHook string_assign;
	size_t		extra_size;		/* secret: the check hook's extra, wiped
								 * before it is freed */
	const char *range_detail;	/* int: detail of an out-of-range value at
								 * start, for ranges with a hole */
	void		(*before) (void);	/* start: cross-setting checks to make
									 * before it is defined */
	const char *description;
	const char *long_description;
} SnowidSetting;

extern const char *snowid_configured_value(const char *name);
extern const char *snowid_setting_check_start(const SnowidSetting *setting,
											  int *number, void **extra);
extern void snowid_setting_define(const SnowidSetting *setting);

#endif							/* SNOWID_SETTING_TABLE_H */
