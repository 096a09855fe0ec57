/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The snowid.* settings (settings.c): defined from one table, which
 *	  also gives the checks a server start makes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_SETTINGS_H
#define SNOWID_SETTINGS_H

extern void snowid_define_settings(bool preloading);

#endif							/* SNOWID_SETTINGS_H */
