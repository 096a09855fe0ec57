/*-------------------------------------------------------------------------
 *
 * public.c
 *	  Public ids: the keys of snowid.public_key_file and the SQL functions
 *	  that turn ids into public ids and back (the algorithm is in
 *	  public_id.c).
 *
 * The key file holds one key a line, "KEYID HEX": a key id of 1 to 8
 * letters and digits, and 128 bits as 32 hexadecimal digits; "#" starts a
 * comment.  The first key makes new public ids, every key reads them.  A
 * file that is missing, too widely readable or malformed is an error of
 * the function that needs it, never of loading the library or CREATE
 * EXTENSION.  No message shows a key; keys are wiped from memory when
 * replaced.
 *
 * When the keys change.  Every reload of the configuration (the
 * postmaster's assign hook counts it, and notes the path, in shared memory)
 * starts a new generation of keys: the file as the first process that needs
 * a key after the reload reads it, put in shared memory for every other
 * process to take as it is.  A transaction takes one generation at its
 * first call and keeps it to its end, and its parallel workers take the
 * leader's (published in shared memory per process), so one statement, one
 * transaction at most, sees one key set; a key removed from the file and
 * reloaded is gone for every transaction that starts after the reload.
 * Shared memory keeps the latest two generations; a parallel worker whose
 * leader's generation is gone (two reloads during its statement) fails
 * with 40001.  Without the library preloaded there is no shared memory:
 * each process then reads the file at first use after each reload.
 *
 * Locking: the generation count and the path are written by the
 * postmaster alone, which takes no lock in shared memory: it makes the
 * count of changes odd while it writes them and even again after, and a
 * reader copies them again until it saw one even count before and after
 * its copy.  The two key sets are under the LWLock of SnowidKeyShared,
 * taken only to copy a set in or out, never while the file is read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <unistd.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "compat.h"
#include "functions/public_id.h"
#include "util/secret_file.h"
#include "functions/public.h"

#define SNOWID_KEY_FILE_SETTING		"snowid.public_key_file"
#define SNOWID_KEY_FILE_MAX_BYTES	65536

/* The rule for a line of the key file, as a sentence for hints */
#define SNOWID_KEY_LINE_RULE \
	"A line of the key file is a key id of 1 to 8 letters and digits, a space, and a key of 32 hexadecimal digits (128 bits); \"#\" starts a comment."

/* Messages that show the input show at most this many bytes of it */
#define SNOWID_ECHO_MAX				64

/* One line of the key file */
typedef struct SnowidPublicKey
{
	char		id[SNOWID_PUBLIC_KEY_ID_MAX + 1];	/* in capitals */
	uint64		words[SNOWID_PUBLIC_KEY_WORDS]; /* the key, as SipHash takes it */
} SnowidPublicKey;

/* The most keys a file of SNOWID_KEY_FILE_MAX_BYTES holds: 35-byte lines */
#define SNOWID_KEYS_MAX			((SNOWID_KEY_FILE_MAX_BYTES + 1) / 35 + 1)

/* One generation of keys in shared memory */
typedef struct SnowidKeySet
{
	uint64		gen;			/* the reload it belongs to; 0: none */
	int			nkeys;
	SnowidPublicKey keys[SNOWID_KEYS_MAX];
} SnowidKeySet;

/* What every process shares of the key file (with the library preloaded) */
typedef struct SnowidKeyShared
{
	pg_atomic_uint64 changes;	/* odd while the postmaster writes
								 * reload_gen, path and path_too_long */
	uint64		reload_gen;		/* reloads of the postmaster, from 1 */
	char		path[MAXPGPATH];	/* snowid.public_key_file then; "" */
	bool		path_too_long;
	LWLock	   *lock;			/* protects sets */
	SnowidKeySet sets[2];		/* the latest two generations read */
	int			nprocs;			/* the size of in_use */
	pg_atomic_uint64 in_use[FLEXIBLE_ARRAY_MEMBER];	/* per process number:
													 * the generation its
													 * transaction uses, for
													 * its parallel workers */
} SnowidKeyShared;

char	   *snowid_public_key_file = NULL;

static SnowidKeyShared *snowid_key_shared = NULL;

/* The keys of the file, in its order, in TopMemoryContext */
static SnowidPublicKey *snowid_keys = NULL;
static int	snowid_nkeys = 0;
static bool snowid_keys_fresh = false;	/* without shared memory: read
										 * since the last reload */
static uint64 snowid_keys_gen = 0;	/* with it: their generation */
static bool snowid_keys_taken = false;	/* by this transaction */

PG_FUNCTION_INFO_V1(snowid_public);
PG_FUNCTION_INFO_V1(snowid_from_public);
PG_FUNCTION_INFO_V1(snowid_public_is_valid);
PG_FUNCTION_INFO_V1(snowid_scramble);
PG_FUNCTION_INFO_V1(snowid_unscramble);

/*
 * snowid_public_key_file_assign
 *		GUC assign hook for snowid.public_key_file: at start and at every
 *		reload, the keys are read again on next use.  In the postmaster,
 *		once shared memory exists, a reload starts a new generation (which
 *		the postmaster's reload precedes every other process's).
 */
void
snowid_public_key_file_assign(const char *newval, void *extra)
{
	SnowidKeyShared *shared = snowid_key_shared;

	snowid_keys_fresh = false;
	if (IsUnderPostmaster || shared == NULL)
		return;
	pg_atomic_fetch_add_u64(&shared->changes, 1);
	pg_write_barrier();
	shared->reload_gen++;
	shared->path_too_long = strlcpy(shared->path, newval ? newval : "",
									sizeof(shared->path)) >= sizeof(shared->path);
	pg_write_barrier();
	pg_atomic_fetch_add_u64(&shared->changes, 1);
}

/*
 * snowid_read_reload
 *		Copies what the postmaster's last reload wrote: its count, the path
 *		and whether it was too long, as one whole (see Locking above).
 */
static void
snowid_read_reload(SnowidKeyShared *shared, uint64 *reloaded, char *path,
				   bool *too_long)
{
	for (;;)
	{
		uint64		before = pg_atomic_read_u64(&shared->changes);

		if (before % 2 == 0)
		{
			pg_read_barrier();
			*reloaded = shared->reload_gen;
			*too_long = shared->path_too_long;
			memcpy(path, shared->path, MAXPGPATH);
			pg_read_barrier();
			if (pg_atomic_read_u64(&shared->changes) == before)
				return;
		}
		/* the postmaster is writing: a few words, a moment */
		CHECK_FOR_INTERRUPTS();
		pg_usleep(100);
	}
}

/*
 * snowid_public_shmem_size
 *		The shared memory of the key sets.
 */
Size
snowid_public_shmem_size(void)
{
	return add_size(offsetof(SnowidKeyShared, in_use),
					mul_size(MaxBackends, sizeof(pg_atomic_uint64)));
}

/*
 * snowid_public_shmem_init
 *		Creates or attaches to the key sets; the caller holds
 *		AddinShmemInitLock.  At creation (in the postmaster) the first
 *		generation is that of the setting at start.
 */
void
snowid_public_shmem_init(void)
{
	bool		found;
	SnowidKeyShared *shared;

	shared = ShmemInitStruct("snowid public keys", snowid_public_shmem_size(),
							 &found);
	if (!found)
	{
		memset(shared, 0, snowid_public_shmem_size());
		pg_atomic_init_u64(&shared->changes, 0);
		shared->reload_gen = 1;
		shared->path_too_long =
			strlcpy(shared->path,
					snowid_public_key_file ? snowid_public_key_file : "",
					sizeof(shared->path)) >= sizeof(shared->path);
		shared->lock = &(GetNamedLWLockTranche("snowid public keys"))->lock;
		shared->nprocs = MaxBackends;
		for (int i = 0; i < shared->nprocs; i++)
			pg_atomic_init_u64(&shared->in_use[i], 0);
	}
	snowid_key_shared = shared;
}

/*
 * snowid_key_line_problem
 *		Reads one line of the key file (comment removed, NUL-terminated)
 *		into *key; returns what is wrong with it, as a sentence that shows
 *		nothing of the line, or NULL.  *empty tells a line without a key.
 */
static const char *
snowid_key_line_problem(char *line, SnowidPublicKey *key, bool *empty)
{
	char	   *p = line;
	char	   *id;
	int			id_len;
	const char *problem;
	const char *hex;
	int			digits;
	uint8		bytes[SNOWID_PUBLIC_KEY_BYTES];

	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	*empty = (*p == '\0');
	if (*empty)
		return NULL;

	id = p;
	while (*p != '\0' && *p != ' ' && *p != '\t')
		p++;
	id_len = (int) (p - id);
	problem = snowid_public_key_id_problem(id, id_len);
	if (problem != NULL)
		return problem;
	for (int i = 0; i < id_len; i++)
		key->id[i] = pg_ascii_toupper((unsigned char) id[i]);
	key->id[id_len] = '\0';

	while (*p == ' ' || *p == '\t')
		p++;
	hex = p;
	digits = (int) strspn(hex, "0123456789abcdefABCDEF");
	p += digits;
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (digits != 2 * SNOWID_PUBLIC_KEY_BYTES || *p != '\0')
		return "The key is not 32 hexadecimal digits.";
	/* only hex digits, an even number: hex_decode() has nothing to refuse */
	hex_decode(hex, digits, (char *) bytes);
	snowid_public_key_words(bytes, key->words);
	explicit_bzero(bytes, sizeof(bytes));
	return NULL;
}

/*
 * snowid_key_ids_clash
 *		Why two key ids of one file cannot both be there, or NULL: the same
 *		id, or two that one wrong character count confuses (a public id
 *		made with one, a character typed or dropped, could read as made with
 *		the other; see snowid_public_key_ids_confusable()).
 */
static const char *
snowid_key_ids_clash(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return psprintf("Key id \"%s\" is there twice.", b);
	if (snowid_public_key_ids_confusable(a, b))
		return psprintf("Key ids \"%s\" and \"%s\" differ by one character that the check character may not see: with one character typed or dropped, a public id made with one could read as made with the other.  Rename one of them (key ids of one length never clash).",
						a, b);
	return NULL;
}

/*
 * snowid_parse_key_file
 *		The keys of the contents of the file at path, in a new array in TopMemoryContext,
 *		and their number in *nkeys.  On an error the contents and what was
 *		read of them are wiped first.
 */
static SnowidPublicKey *
snowid_parse_key_file(const char *path, char *contents, Size len, int *nkeys)
{
	int			max_keys = 1;
	SnowidPublicKey *keys;
	int			n = 0;
	int			line_no = 0;
	char	   *line = contents;
	const char *problem = NULL;

	for (Size i = 0; i < len; i++)
		max_keys += (contents[i] == '\n');
	if (memchr(contents, '\0', len) != NULL)
		problem = "It holds a NUL byte.";
	keys = MemoryContextAllocZero(TopMemoryContext,
								  max_keys * sizeof(SnowidPublicKey));

	while (problem == NULL && line != NULL)
	{
		char	   *next = strchr(line, '\n');
		char	   *comment;
		bool		empty;

		line_no++;
		if (next != NULL)
			*next++ = '\0';
		if ((comment = strchr(line, '#')) != NULL)
			*comment = '\0';
		problem = snowid_key_line_problem(line, &keys[n], &empty);
		if (problem == NULL && !empty)
		{
			for (int k = 0; k < n && problem == NULL; k++)
				problem = snowid_key_ids_clash(keys[k].id, keys[n].id);
			n++;
		}
		line = next;
	}
	if (problem != NULL || n == 0)
	{
		explicit_bzero(contents, len);
		explicit_bzero(keys, max_keys * sizeof(SnowidPublicKey));
		pfree(keys);
	}
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("invalid %s \"%s\"", SNOWID_KEY_FILE_SETTING, path),
				 line_no > 0 ? errdetail("Line %d: %s", line_no, problem) :
				 errdetail("%s", problem),
				 errhint(SNOWID_KEY_LINE_RULE)));
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("invalid %s \"%s\"", SNOWID_KEY_FILE_SETTING, path),
				 errdetail("It holds no key."),
				 errhint(SNOWID_KEY_LINE_RULE)));
	*nkeys = n;
	return keys;
}

/*
 * snowid_read_key_file
 *		The contents of the key file, NUL-terminated, in the current memory
 *		context, and their length in *len; refused unless only the server's
 *		user may read it (util/secret_file.h).  The caller wipes them
 *		(explicit_bzero) when done.
 */
static char *
snowid_read_key_file(const char *path, Size *len)
{
	char		problem[SNOWID_SECRET_PROBLEM_LEN];
	char	   *buf;
	ssize_t		got;
	int			save_errno;
	int			fd;

	fd = snowid_secret_open(path, problem, sizeof(problem));
	if (fd < 0)
	{
		save_errno = errno;
		errno = save_errno;
		ereport(ERROR,
				(save_errno != 0 ? errcode_for_file_access() :
				 errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not use the file named by %s",
						SNOWID_KEY_FILE_SETTING),
				 errdetail_internal("%s", problem),
				 errhint("%s", save_errno != 0 ?
						 "Check the path in the setting; a relative path is taken from the data directory." :
						 SNOWID_SECRET_MODE_HINT)));
	}

	/* one byte more than may be read tells a file that is too large */
	buf = palloc(SNOWID_KEY_FILE_MAX_BYTES + 2);
	got = snowid_secret_read(fd, buf, SNOWID_KEY_FILE_MAX_BYTES + 1);
	save_errno = errno;
	close(fd);
	if (got < 0 || got > SNOWID_KEY_FILE_MAX_BYTES)
	{
		explicit_bzero(buf, SNOWID_KEY_FILE_MAX_BYTES + 2);
		errno = save_errno;
		if (got < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read the file named by %s: %m",
							SNOWID_KEY_FILE_SETTING)));
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not use the file named by %s",
						SNOWID_KEY_FILE_SETTING),
				 errdetail("The file \"%s\" has more than %d bytes.", path,
						   (int) SNOWID_KEY_FILE_MAX_BYTES),
				 errhint("Keep only the keys still in use in the file.")));
	}
	buf[got] = '\0';
	*len = (Size) got;
	return buf;
}

/*
 * snowid_replace_keys
 *		Makes keys (in TopMemoryContext) this process's keys, wiping the
 *		ones they replace.
 */
static void
snowid_replace_keys(SnowidPublicKey *keys, int nkeys)
{
	if (snowid_keys != NULL)
	{
		explicit_bzero(snowid_keys, snowid_nkeys * sizeof(SnowidPublicKey));
		pfree(snowid_keys);
	}
	snowid_keys = keys;
	snowid_nkeys = nkeys;
}

/*
 * snowid_require_key_file
 *		Refuses an unset snowid.public_key_file.
 */
static void
snowid_require_key_file(const char *path)
{
	if (path == NULL || path[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s is not set", SNOWID_KEY_FILE_SETTING),
				 errdetail("Public ids are made with the keys of that file."),
				 errhint("Write a key file (see doc/public-ids.md), set %s to its path and reload the configuration.",
						 SNOWID_KEY_FILE_SETTING)));
}

/*
 * snowid_read_keys
 *		The keys of the file at path, in a new array in TopMemoryContext.
 */
static SnowidPublicKey *
snowid_read_keys(const char *path, int *nkeys)
{
	char	   *contents;
	Size		len;
	SnowidPublicKey *keys;

	snowid_require_key_file(path);
	contents = snowid_read_key_file(path, &len);
	keys = snowid_parse_key_file(path, contents, len, nkeys);
	explicit_bzero(contents, len);
	pfree(contents);
	return keys;
}

/*
 * snowid_keys_xact_end
 *		At the end of a transaction its keys are given up, and (but in a
 *		parallel worker) the generation its workers were to take: the next
 *		one takes the generation of the last reload.
 */
static void
snowid_keys_xact_end(XactEvent event, void *arg)
{
	SnowidKeyShared *shared = snowid_key_shared;
	int			me;

	snowid_keys_taken = false;
	if (shared == NULL || MyProc == NULL || IsParallelWorker())
		return;
	me = snowid_proc_number(MyProc);
	if (me >= 0 && me < shared->nprocs &&
		pg_atomic_read_u64(&shared->in_use[me]) != 0)
		pg_atomic_write_u64(&shared->in_use[me], 0);
}

/*
 * snowid_public_register
 *		From _PG_init: every transaction's end gives its keys up.
 */
void
snowid_public_register(void)
{
	RegisterXactCallback(snowid_keys_xact_end, NULL);
}

/*
 * snowid_keys_generation
 *		The generation this transaction uses: the one its leader's process
 *		(this process, or a parallel worker's leader) took in it already,
 *		else the last reload's, which it takes for the leader and every
 *		worker of its transaction.
 */
static uint64
snowid_keys_generation(SnowidKeyShared *shared, uint64 reloaded)
{
	PGPROC	   *leader = MyProc;
	int			n;
	uint64		taken = 0;

	if (IsParallelWorker() && MyProc->lockGroupLeader != NULL)
		leader = MyProc->lockGroupLeader;
	n = snowid_proc_number(leader);
	if (n < 0 || n >= shared->nprocs)
		return reloaded;
	if (pg_atomic_compare_exchange_u64(&shared->in_use[n], &taken, reloaded))
		return reloaded;
	return taken;
}

/*
 * snowid_take_set
 *		The set of generation gen, copied into this process's keys; false if
 *		shared memory has none.  The caller holds the sets' lock.
 */
static bool
snowid_take_set(SnowidKeyShared *shared, uint64 gen)
{
	for (int i = 0; i < lengthof(shared->sets); i++)
	{
		SnowidKeySet *set = &shared->sets[i];
		SnowidPublicKey *keys;

		if (set->gen != gen)
			continue;
		keys = MemoryContextAlloc(TopMemoryContext,
								  set->nkeys * sizeof(SnowidPublicKey));
		memcpy(keys, set->keys, set->nkeys * sizeof(SnowidPublicKey));
		snowid_replace_keys(keys, set->nkeys);
		snowid_keys_gen = gen;
		return true;
	}
	return false;
}

/*
 * snowid_load_keys_shared
 *		Makes sure this transaction holds one generation of keys: the one it
 *		took already, its leader's in a parallel worker, else the last
 *		reload's, read from the file by the first process that needs it.
 */
static void
snowid_load_keys_shared(SnowidKeyShared *shared)
{
	char		path[MAXPGPATH];
	bool		too_long;
	uint64		reloaded;
	uint64		gen;
	bool		found;

	if (snowid_keys_taken && snowid_keys != NULL)
		return;

	snowid_read_reload(shared, &reloaded, path, &too_long);
	gen = snowid_keys_generation(shared, reloaded);

	if (snowid_keys_gen != gen || snowid_keys == NULL)
	{
		LWLockAcquire(shared->lock, LW_SHARED);
		found = snowid_take_set(shared, gen);
		LWLockRelease(shared->lock);
		if (!found && gen != reloaded)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("the keys of %s were reloaded twice while this transaction ran",
							SNOWID_KEY_FILE_SETTING),
					 errdetail("The keys its transaction started with are gone from shared memory."),
					 errhint("Run the query again.")));
		if (!found)
		{
			SnowidPublicKey *keys;
			int			nkeys;

			if (too_long)
				ereport(ERROR,
						(errcode(ERRCODE_NAME_TOO_LONG),
						 errmsg("%s is too long", SNOWID_KEY_FILE_SETTING),
						 errdetail("A path has at most %d bytes.",
								   MAXPGPATH - 1)));
			keys = snowid_read_keys(path, &nkeys);
			if (nkeys > SNOWID_KEYS_MAX)
				elog(ERROR, "key file of %d keys", nkeys);

			/* the first to put a set of this generation in decides it */
			LWLockAcquire(shared->lock, LW_EXCLUSIVE);
			if (!snowid_take_set(shared, gen))
			{
				SnowidKeySet *set = &shared->sets[0];

				if (shared->sets[1].gen < set->gen)
					set = &shared->sets[1];
				explicit_bzero(set, sizeof(SnowidKeySet));
				set->gen = gen;
				set->nkeys = nkeys;
				memcpy(set->keys, keys, nkeys * sizeof(SnowidPublicKey));
				snowid_replace_keys(keys, nkeys);
				snowid_keys_gen = gen;
			}
			else
			{
				explicit_bzero(keys, nkeys * sizeof(SnowidPublicKey));
				pfree(keys);
			}
			LWLockRelease(shared->lock);
		}
	}

	snowid_keys_taken = true;
}

/*
 * snowid_load_keys
 *		Makes sure this process holds the keys its transaction uses: from
 *		shared memory when the library is preloaded, else read from the
 *		file at first use after each reload.
 */
static void
snowid_load_keys(void)
{
	SnowidPublicKey *keys;
	int			nkeys;

	if (snowid_key_shared != NULL)
	{
		snowid_load_keys_shared(snowid_key_shared);
		return;
	}
	if (snowid_keys_fresh)
		return;
	snowid_replace_keys(NULL, 0);
	keys = snowid_read_keys(snowid_public_key_file, &nkeys);
	snowid_replace_keys(keys, nkeys);
	snowid_keys_fresh = true;
}

/*
 * snowid_check_id
 *		Refuses a negative id or number: the permutation is of [0, 2^63).
 */
static void
snowid_check_id(int64 value, const char *function)
{
	if (value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s takes a non-negative number, not %lld",
						function, (long long) value),
				 errdetail("Ids and their public numbers lie from 0 to 9223372036854775807.")));
}

/*
 * snowid_public
 *		The public id of an id, made with the first key of the file.
 */
Datum
snowid_public(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	char		out[SNOWID_PUBLIC_TEXT_MAX + 1];
	int			len;

	snowid_check_id(id, "snowid_public()");
	snowid_load_keys();
	len = snowid_public_format(snowid_keys[0].id,
							   snowid_permute(snowid_keys[0].words, (uint64) id),
							   out);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out, len));
}

/*
 * snowid_invalid_public
 *		Reports a text that is not a public id, showing it only if short.
 */
static void
snowid_invalid_public(text *input, const char *problem)
{
	int			len = VARSIZE_ANY_EXHDR(input);

	if (len <= SNOWID_ECHO_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid public id \"%s\"", text_to_cstring(input)),
				 errdetail_internal("%s", problem)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid public id"),
			 errdetail("It has %d bytes; a public id has at most %d characters besides hyphens.",
					   len, SNOWID_PUBLIC_KEY_ID_MAX +
					   SNOWID_PUBLIC_BODY_SYMBOLS + 1)));
}

/*
 * snowid_decode_public
 *		Finds the id of a public id made with any key of the file.  If no key
 *		of the file can have made the text, returns false and sets *problem
 *		to why, or to NULL when the text is too long to show.
 */
static bool
snowid_decode_public(text *input, int64 *id, char **problem)
{
	char		key_id[SNOWID_PUBLIC_KEY_ID_MAX + 1];
	uint64		number;

	*problem = NULL;
	if (VARSIZE_ANY_EXHDR(input) > SNOWID_ECHO_MAX)
		return false;
	*problem = snowid_public_parse(VARDATA_ANY(input),
								   VARSIZE_ANY_EXHDR(input), key_id, &number);
	if (*problem != NULL)
		return false;

	snowid_load_keys();
	for (int k = 0; k < snowid_nkeys; k++)
	{
		if (strcmp(snowid_keys[k].id, key_id) == 0)
		{
			*id = (int64) snowid_unpermute(snowid_keys[k].words, number);
			return true;
		}
	}
	*problem = psprintf("No key of %s has the id \"%s\".",
						SNOWID_KEY_FILE_SETTING, key_id);
	return false;
}

/*
 * snowid_from_public
 *		The id of a public id, made with any key of the file.  A text that
 *		no key of the file can have made is an error, never another id.
 */
Datum
snowid_from_public(PG_FUNCTION_ARGS)
{
	text	   *input = PG_GETARG_TEXT_PP(0);
	int64		id = 0;
	char	   *problem;

	if (!snowid_decode_public(input, &id, &problem))
		snowid_invalid_public(input, problem);
	PG_RETURN_INT64(id);
}

/*
 * snowid_public_is_valid
 *		Whether snowid_from_public() takes a text: a lookup of a text that a
 *		customer typed can then find no row rather than fail.
 */
Datum
snowid_public_is_valid(PG_FUNCTION_ARGS)
{
	text	   *input = PG_GETARG_TEXT_PP(0);
	int64		id;
	char	   *problem;

	PG_RETURN_BOOL(snowid_decode_public(input, &id, &problem));
}

/*
 * snowid_scramble
 *		The public number of an id, made with the first key of the file.
 */
Datum
snowid_scramble(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);

	snowid_check_id(id, "snowid_scramble()");
	snowid_load_keys();
	PG_RETURN_INT64((int64) snowid_permute(snowid_keys[0].words, (uint64) id));
}

/*
 * snowid_unscramble
 *		The id of a public number made with the first key of the file.
 */
Datum
snowid_unscramble(PG_FUNCTION_ARGS)
{
	int64		number = PG_GETARG_INT64(0);

	snowid_check_id(number, "snowid_unscramble()");
	snowid_load_keys();
	PG_RETURN_INT64((int64) snowid_unpermute(snowid_keys[0].words,
											 (uint64) number));
}
