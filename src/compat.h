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
#endif

/*
 * 16: DecodeDateTime() reports the details of a bad time zone through an
 * extra argument instead of raising an error itself.
 */
#if PG_VERSION_NUM < 160000
typedef struct DateTimeErrorExtra
{
	int			dtee_unused;
} DateTimeErrorExtra;

#define DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, extra) \
	((void) (extra), \
	 DecodeDateTime((field), (ftype), (nf), (dtype), (tm), (fsec), (tzp)))
#endif

/*
 * 17: wait events of an extension's own, named in pg_stat_activity; before
 * that every wait of an extension shows as "Extension".
 */
#if PG_VERSION_NUM < 170000
#define WaitEventExtensionNew(name)		((void) (name), PG_WAIT_EXTENSION)
#endif

/*
 * 18: the module's name and version in pg_get_loaded_modules().
 */
#ifndef PG_MODULE_MAGIC_EXT
#define PG_MODULE_MAGIC_EXT(...)	PG_MODULE_MAGIC
#endif

#endif							/* SNOWID_COMPAT_H */
