/*-------------------------------------------------------------------------
 *
 * store.h
 *	  A PostgreSQL coordination database as a claim store (store.c): the
 *	  SnowidStore that src/stores.c registers.  The database holds the
 *	  extension snowid_coordinator (sql/snowid_coordinator/1.1/, its parts,
 *	  of which the Makefile makes its script), whose functions keep the
 *	  fence rule (fence.sql); each call is one transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_PGCOORD_STORE_H
#define SNOWID_PGCOORD_STORE_H

#include "coord/store.h"

extern const SnowidStore snowid_pg_store;

#endif							/* SNOWID_PGCOORD_STORE_H */
