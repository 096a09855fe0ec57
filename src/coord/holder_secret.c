/*-------------------------------------------------------------------------
 *
 * holder_secret.c
 *	  This server's holder secret: what binds the holder name it claims
 *	  under to this server, so that no other server, knowing the name, can
 *	  take, move, renew or give back its claims.
 *
 * The secret is 32 random bytes (pg_strong_random), kept in the data
 * directory as one line of text in a file of mode 0600:
 *
 *		snowid_holder_secret 1 <64 lower-case hexadecimal digits>
 *
 * It is made before the first call to a store that needs it, and sent with
 * every call; the store keeps only a hash of it, registered for the holder
 * name at that name's first granted call, and refuses a call under that
 * name with another secret.  It never appears in a message, a log or a
 * setting.  A file others may read (a data directory copied with cp) is
 * made 0600 before it is read.  A copy of the data directory (a standby, a
 * restored backup)
 * carries the file, but claims under a holder name of its own (a new
 * instance).  A server that lost the file makes a new one, and is refused
 * until an administrator resets the secret of its name in the store
 * (doc/security.md).  No locking applies: the file is made with link(),
 * which fails if another process made it first, and then read by all.
 *
 * The secret itself is never sent: a store's logs (Redis' SLOWLOG and
 * MONITOR, a coordination database's log_min_duration_statement with its
 * parameters) show what a call sends.  The key of a holder is the hash the
 * store keeps of its secret (SHA-1 in Redis, SHA-256 in a coordination
 * database, in hexadecimal), and each call sends a proof: a number n
 * larger than any this process sent before (the clock in microseconds, or
 * one past the last), and the hash of the key, n and the call itself
 * (SNOWID_PROOF_SEPARATOR).  The store takes n before anything else,
 * refusal or not; it refuses an n no larger than the last it took, or made
 * before its own start (snowid_holder_proof_after() then moves this
 * process past it, once it checked that n as input: no later than a store
 * that keeps these rules can answer), and one further from its clock than
 * the widest clock margin.  So a proof read from a log can make only the call it was made
 * for, within that margin, and only until the store took a later one of
 * the holder's.  The key goes
 * once, when the store asks for it to register the name: to Redis as it
 * is, to a coordination database hidden by a pad the database made and
 * answered (the answer is not logged), XORed with the pad's SHA-256.
 * The last n is process-local: no lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cryptohash.h"
#include "common/sha1.h"
#include "common/sha2.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/resowner.h"

#include "coord/holder_secret.h"
#include "coord/request.h"
#include "util/secret_file.h"

/* The file, in the data directory */
#define SNOWID_SECRET_FILE		"snowid_holder_secret"
#define SNOWID_SECRET_PREFIX	"snowid_holder_secret 1 "

/* Length of the file's one line, its newline included */
#define SNOWID_SECRET_LINE_LEN \
	(sizeof(SNOWID_SECRET_PREFIX) - 1 + SNOWID_HOLDER_SECRET_LEN + 1)

/* The last n of a proof this process sent, or was told of */
static int64 snowid_proof_last_n = 0;

/* Whether the last n a store answered last was refused (logged once) */
static bool snowid_proof_after_refused = false;

static int	snowid_holder_secret_open(void);
static int64 snowid_proof_now_us(void);
static void snowid_proof_hash(SnowidProofHash hash, const char *const *parts,
							  int nparts, uint8 *digest, size_t *len);
static void snowid_hex(const uint8 *bytes, size_t len, char *hex);
static bool snowid_secret_make(void);
static bool snowid_secret_parse(const char *line, size_t len, char *secret);

/*
 * snowid_holder_secret
 *		Reads this server's holder secret into secret (SNOWID_HOLDER_SECRET_LEN
 *		hexadecimal digits and a NUL), making the file first if there is
 *		none.  Errors if it cannot be made or read, or is not as written.
 */
void
snowid_holder_secret(char *secret)
{
	char		line[SNOWID_SECRET_LINE_LEN + 1];
	ssize_t		got;
	int			fd;

	fd = snowid_holder_secret_open();
	if (fd < 0 && errno == ENOENT && snowid_secret_make())
		fd = snowid_holder_secret_open();
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", SNOWID_SECRET_FILE),
				 errdetail("The holder secret file must be a regular file of the server's operating system user.")));

	got = snowid_secret_read(fd, line, sizeof(line));
	close(fd);
	if (!snowid_secret_parse(line, got < 0 ? 0 : (size_t) got, secret))
	{
		explicit_bzero(line, sizeof(line));
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid holder secret file \"%s\" is corrupt",
						SNOWID_SECRET_FILE),
				 errhint("Remove the file: the server makes a new secret, which an administrator then lets the store accept for this server (doc/security.md, \"Holder secrets\").")));
	}
	explicit_bzero(line, sizeof(line));
}

/*
 * snowid_holder_secret_open
 *		Opens the secret file for reading, without blocking on what is not a
 *		regular file (util/secret_file.h); -1 with errno set if it cannot be
 *		opened, or is not a regular file of the server's user (EPERM).  A
 *		file others may read (a data directory copied with cp, or with group
 *		access) is made 0600 first: the data directory's own mode guards it
 *		too.
 */
static int
snowid_holder_secret_open(void)
{
	struct stat st;
	char		problem[SNOWID_SECRET_PROBLEM_LEN];
	int			fd;

	fd = snowid_file_open(SNOWID_SECRET_FILE, &st, problem, sizeof(problem));
	if (fd < 0)
	{
		if (errno == 0)
			errno = EPERM;
		return -1;
	}
	errno = 0;
	if (st.st_uid != geteuid() ||
		((st.st_mode & (S_IRWXG | S_IRWXO)) != 0 &&
		 fchmod(fd, S_IRUSR | S_IWUSR) != 0))
	{
		int			save_errno = errno;

		close(fd);
		errno = save_errno != 0 ? save_errno : EPERM;
		return -1;
	}
	return fd;
}

/*
 * snowid_secret_parse
 *		The secret out of the file's line; false if the line is not one
 *		this file writes.
 */
static bool
snowid_secret_parse(const char *line, size_t len, char *secret)
{
	size_t		prefix = sizeof(SNOWID_SECRET_PREFIX) - 1;
	const char *hex = line + prefix;

	if (len != SNOWID_SECRET_LINE_LEN ||
		memcmp(line, SNOWID_SECRET_PREFIX, prefix) != 0 ||
		hex[SNOWID_HOLDER_SECRET_LEN] != '\n')
		return false;
	for (int i = 0; i < SNOWID_HOLDER_SECRET_LEN; i++)
	{
		if (!((hex[i] >= '0' && hex[i] <= '9') ||
			  (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	}
	memcpy(secret, hex, SNOWID_HOLDER_SECRET_LEN);
	secret[SNOWID_HOLDER_SECRET_LEN] = '\0';
	return true;
}

/*
 * snowid_secret_make
 *		Makes the secret file: a new secret written to a file of this
 *		process's own (mode 0600) and synced, then linked to the file's
 *		name, which fails if another process made it first (its secret is
 *		kept), and the directory synced.  False, with a WARNING, if it could
 *		not be made.
 */
static bool
snowid_secret_make(void)
{
	uint8		bytes[SNOWID_HOLDER_SECRET_LEN / 2];
	char		line[SNOWID_SECRET_LINE_LEN + 1];
	char		tmp[MAXPGPATH];
	char	   *p;
	int			fd;
	bool		ok;

	if (!pg_strong_random(bytes, sizeof(bytes)))
	{
		ereport(WARNING,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random snowid holder secret")));
		return false;
	}
	p = line + strlcpy(line, SNOWID_SECRET_PREFIX, sizeof(line));
	for (int i = 0; i < lengthof(bytes); i++)
		p += sprintf(p, "%02x", bytes[i]);
	*p++ = '\n';
	*p = '\0';
	explicit_bzero(bytes, sizeof(bytes));

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", SNOWID_SECRET_FILE, MyProcPid);
	(void) unlink(tmp);
	fd = OpenTransientFilePerm(tmp, O_WRONLY | O_CREAT | O_EXCL,
							   S_IRUSR | S_IWUSR);
	ok = fd >= 0;
	if (ok)
	{
		ok = write(fd, line, p - line) == p - line && pg_fsync(fd) == 0;
		ok = CloseTransientFile(fd) == 0 && ok;
	}
	explicit_bzero(line, sizeof(line));
	if (ok && link(tmp, SNOWID_SECRET_FILE) != 0 && errno != EEXIST)
		ok = false;
	if (!ok)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m",
						SNOWID_SECRET_FILE)));
	(void) unlink(tmp);
	if (ok)
		fsync_fname(".", true);
	return ok;
}

/*
 * snowid_proof_now_us
 *		This server's clock in Unix microseconds: what a proof's n counts.
 */
static int64
snowid_proof_now_us(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (int64) now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

/*
 * snowid_holder_proof
 *		This server's proof for one call, made of its secret, into proof
 *		(SNOWID_HOLDER_PROOF_LEN bytes): "<n>:<hash of the key, n and the
 *		call>", the call_parts strings of call being the function's name and
 *		its arguments but the proof (a NULL one for SQL's NULL); with
 *		":<key>" after it if pad is not NULL, to register the key: for Redis
 *		(pad "") as it is; for a coordination database, XORed with the
 *		SHA-256 of the pad it answered.
 */
void
snowid_holder_proof(const char *secret, SnowidProofHash hash, const char *pad,
					const char *const *call, int call_parts, char *proof)
{
	uint8		key[PG_SHA256_DIGEST_LENGTH];
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	uint8		mask[PG_SHA256_DIGEST_LENGTH];
	char		key_hex[2 * PG_SHA256_DIGEST_LENGTH + 1];
	char		n_text[24];
	const char *parts[2 + SNOWID_PROOF_CALL_PARTS_MAX];
	size_t		key_len;
	size_t		len;
	int64		n;
	int			used;

	Assert(call_parts <= SNOWID_PROOF_CALL_PARTS_MAX);
	n = Max(snowid_proof_now_us(), snowid_proof_last_n + 1);
	snowid_proof_last_n = n;

	snowid_proof_hash(hash, &secret, 1, key, &key_len);
	snowid_hex(key, key_len, key_hex);
	snprintf(n_text, sizeof(n_text), INT64_FORMAT, n);
	parts[0] = key_hex;
	parts[1] = n_text;
	for (int i = 0; i < call_parts && i < SNOWID_PROOF_CALL_PARTS_MAX; i++)
		parts[2 + i] = call[i];
	snowid_proof_hash(hash, parts,
					  2 + Min(call_parts, SNOWID_PROOF_CALL_PARTS_MAX),
					  digest, &len);
	used = snprintf(proof, SNOWID_HOLDER_PROOF_LEN, "%s:", n_text);
	snowid_hex(digest, len, proof + used);
	if (pad != NULL)
	{
		used = strlen(proof);
		proof[used++] = ':';
		if (pad[0] != '\0')
		{
			snowid_proof_hash(SNOWID_PROOF_SHA256, &pad, 1, mask, &len);
			for (size_t i = 0; i < key_len; i++)
				key[i] ^= mask[i];
			snowid_hex(key, key_len, proof + used);
		}
		else
			strlcpy(proof + used, key_hex, SNOWID_HOLDER_PROOF_LEN - used);
	}
	explicit_bzero(key, sizeof(key));
	explicit_bzero(key_hex, sizeof(key_hex));
	explicit_bzero(mask, sizeof(mask));
}

/*
 * snowid_holder_proof_after
 *		The store refused a proof as no larger than the last n it took of
 *		this holder, which its answer gives at text (decimal digits; what
 *		follows them is not read): the next proof goes past it.  That n is
 *		input: a store that keeps the protocol takes no n further from its
 *		clock than the widest clock margin, and its clock lies within that
 *		margin of this server's, so an n past this server's clock by more
 *		than twice that margin (or no number) is refused, with a WARNING
 *		at the first of a row, and false returned: the call then fails as
 *		the store refused it.
 *		Taken, it would carry every later proof of this process where no
 *		store takes one.
 */
bool
snowid_holder_proof_after(const char *text)
{
	int64		bound;
	int64		last_n = 0;
	const char *p;

	bound = snowid_proof_now_us() +
		2 * (int64) SNOWID_CLOCK_MARGIN_MAX_MS * 1000;
	for (p = text; *p >= '0' && *p <= '9' && last_n <= bound; p++)
		last_n = last_n * 10 + (*p - '0');
	if (p == text || last_n > bound)
	{
		if (snowid_proof_after_refused)
			return false;
		snowid_proof_after_refused = true;
		ereport(WARNING,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("snowid refused the last n of a holder proof that its store answered"),
				 errdetail("The store answered a last n taken that is no number of microseconds up to %lld, this server's clock plus twice the widest clock margin: a store that keeps the protocol takes no n further from its clock than that margin.",
						   (long long) bound),
				 errhint("Check the clocks of this server and of its store, and that the store's record of this holder's proofs was not written by hand; until it answers a last n within bounds, every call of this server to it fails.")));
		return false;
	}
	snowid_proof_after_refused = false;
	snowid_proof_last_n = Max(snowid_proof_last_n, last_n);
	return true;
}

/*
 * snowid_proof_hash
 *		The hash of the nparts strings of parts, each but the last followed
 *		by SNOWID_PROOF_SEPARATOR (a NULL one as nothing), into digest (*len
 *		bytes).  A process without a resource owner (a background worker
 *		between transactions) lends the hash one of its own, which it keeps.
 */
static void
snowid_proof_hash(SnowidProofHash hash, const char *const *parts, int nparts,
				  uint8 *digest, size_t *len)
{
	static ResourceOwner owner = NULL;
	const uint8 separator = SNOWID_PROOF_SEPARATOR;
	ResourceOwner saved = CurrentResourceOwner;
	pg_cryptohash_ctx *ctx;
	bool		ok;

	*len = hash == SNOWID_PROOF_SHA1 ? SHA1_DIGEST_LENGTH :
		PG_SHA256_DIGEST_LENGTH;
	if (CurrentResourceOwner == NULL)
	{
		if (owner == NULL)
			owner = ResourceOwnerCreate(NULL, "snowid holder proof");
		CurrentResourceOwner = owner;
	}
	ctx = pg_cryptohash_create(hash == SNOWID_PROOF_SHA1 ? PG_SHA1 : PG_SHA256);
	ok = ctx != NULL && pg_cryptohash_init(ctx) == 0;
	for (int i = 0; ok && i < nparts; i++)
	{
		if (i > 0)
			ok = pg_cryptohash_update(ctx, &separator, 1) == 0;
		if (ok && parts[i] != NULL)
			ok = pg_cryptohash_update(ctx, (const uint8 *) parts[i],
									  strlen(parts[i])) == 0;
	}
	ok = ok && pg_cryptohash_final(ctx, digest, *len) == 0;
	pg_cryptohash_free(ctx);
	CurrentResourceOwner = saved;
	if (!ok)
		elog(ERROR, "could not compute a snowid holder proof");
}

/*
 * snowid_hex
 *		len bytes as lower-case hexadecimal digits and a NUL.
 */
static void
snowid_hex(const uint8 *bytes, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++)
	{
		hex[2 * i] = digits[bytes[i] >> 4];
		hex[2 * i + 1] = digits[bytes[i] & 0xf];
	}
	hex[2 * len] = '\0';
}
