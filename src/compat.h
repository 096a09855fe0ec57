/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The one place where snowid's source differs between PostgreSQL major
 *	  versions (15 to 19).  Each shim gives an older version the newest API
 *	  under its new name, so that function bodies call one API; delete a
 *	  shim when its version leaves support.
 *
 * Include it after postgres.h and before snowid.h.  No state, no locks.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COMPAT_H
#define SNOWID_COMPAT_H

#include "utils/wait_event.h"

/* 16 moved the varlena macros (VARDATA_ANY and friends) out of postgres.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 16: a GUC check hook's "extra" is freed with guc_free(), so it must come
 * from guc_malloc(); 15 frees it with free().
 */
#if PG_VERSION_NUM < 160000
#define guc_malloc(elevel, size)	malloc(size)
#define guc_free(ptr)				free(ptr)
#endif

/*
 * 16: DecodeDateTime() returns DTERR_BAD_TIMEZONE for a time zone it does
 * not know (naming it through an extra argument) instead of raising an
 * error itself.  15's error is caught and turned into that code, so that a
 * GUC check hook can parse a date even in the postmaster, where an error is
 * fatal.  That is safe only because DecodeDateTime() does nothing but parse:
 * it holds no lock, buffer or file an error could leave behind, and what it
 * allocated for the error goes with FlushErrorState().  errfinish() zeroes
 * the interrupt holdoff counts before it jumps; they are put back.
 */
#if PG_VERSION_NUM < 160000
#include "miscadmin.h"
#include "utils/datetime.h"

#define DTERR_BAD_TIMEZONE		(-6)

typedef struct DateTimeErrorExtra
{
	const char *dtee_timezone;	/* 15 does not say which zone */
} DateTimeErrorExtra;

static inline int
snowid_decode_date_time_15(char **field, int *ftype, int nf, int *dtype,
						   struct pg_tm *tm, fsec_t *fsec, int *tzp,
						   DateTimeErrorExtra *extra)
{
	MemoryContext context = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	volatile int result = DTERR_BAD_TIMEZONE;

	extra->dtee_timezone = NULL;
	PG_TRY();
	{
		result = DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		result = DTERR_BAD_TIMEZONE;
	}
	PG_END_TRY();
	return result;
}

#define DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, extra) \
	snowid_decode_date_time_15((field), (ftype), (nf), (dtype), (tm), \
							   (fsec), (tzp), (extra))
#endif

/*
 * 16: find_option() is exported, to look up a setting or its placeholder.
 * 15 keeps it to itself but exports the list it searches; the shim only
 * finds, it never creates a placeholder.
 */
#if PG_VERSION_NUM < 160000
#include "utils/guc_tables.h"

static inline struct config_generic *
find_option(const char *name, bool create_placeholders, bool skip_errors,
			int elevel)
{
	struct config_generic **settings = get_guc_variables();
	int			n = GetNumConfigOptions();

	Assert(!create_placeholders);
	for (int i = 0; i < n; i++)
	{
		if (pg_strcasecmp(settings[i]->name, name) == 0)
			return settings[i];
	}
	return NULL;
}
#endif

/*
 * 17: wait events of an extension's own, named in pg_stat_activity; before
 * that every wait of an extension shows as "Extension".
 */
#if PG_VERSION_NUM < 170000
#define WaitEventExtensionNew(name)		((void) (name), PG_WAIT_EXTENSION)
#endif

/*
 * 17: a process's number, the index of its PGPROC, is
 * GetNumberFromPGProc(); before, the PGPROC's pgprocno.
 */
#if PG_VERSION_NUM >= 170000
#define snowid_proc_number(proc)	GetNumberFromPGProc(proc)
#else
#define snowid_proc_number(proc)	((proc)->pgprocno)
#endif

/*
 * 18: the module's name and version in pg_get_loaded_modules().
 */
#ifndef PG_MODULE_MAGIC_EXT
#define PG_MODULE_MAGIC_EXT(...)	PG_MODULE_MAGIC
#endif

#endif							/* SNOWID_COMPAT_H */
