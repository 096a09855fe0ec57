/*-------------------------------------------------------------------------
 *
 * public.h
 *	  Public ids (public.c): the keys of snowid.public_key_file (in shared
 *	  memory, when preloaded) and the SQL functions snowid_public(),
 *	  snowid_from_public(), snowid_public_is_valid(), snowid_scramble() and
 *	  snowid_unscramble().
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_FUNCTIONS_PUBLIC_H
#define SNOWID_FUNCTIONS_PUBLIC_H

extern char *snowid_public_key_file;

extern void snowid_public_key_file_assign(const char *newval, void *extra);
extern void snowid_public_register(void);
extern Size snowid_public_shmem_size(void);
extern void snowid_public_shmem_init(void);

#endif							/* SNOWID_FUNCTIONS_PUBLIC_H */
