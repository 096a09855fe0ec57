/*-------------------------------------------------------------------------
 *
 * clock_offset.c
 *		An LD_PRELOAD library that sets a process's wall clock from a file
 *		read on every call: an offset from the real time, or an absolute time
 *		that stands still.  For the TAP tests' SnowidTest::Clock and the
 *		stores of test/protocol-search.
 *
 * The tests step a running server's wall clock (forward, back, by a
 * fraction of a second) by rewriting a small file.  Its content is either
 *
 *	 an offset: a signed decimal number of seconds with an optional fraction
 *	 ("+0", "-0.8", "+12.345678"); clock_gettime() for CLOCK_REALTIME and
 *	 CLOCK_REALTIME_COARSE, gettimeofday() and time() return the real time
 *	 plus that offset; or
 *
 *	 an absolute time: "@" and the seconds since the epoch with an optional
 *	 fraction ("@1900000000.0005"); those calls return that time as it is,
 *	 however much real time passes, until the file says otherwise
 *	 (test/protocol-search moves its stores' clocks with the model's time).
 *
 * Every other clock (MONOTONIC, BOOTTIME, MONOTONIC_RAW, the CPU clocks) is
 * returned untouched, as an NTP step would leave it.
 *
 * Why not libfaketime's file mode (FAKETIME_TIMESTAMP_FILE with
 * FAKETIME_NO_CACHE=1), which the tests used before: it rereads the file with
 * fopen() and fgets() on every clock call, and those allocate.  PostgreSQL
 * reads the clock in signal handlers (15 and later keep
 * IDLE_STATS_UPDATE_TIMEOUT armed while a query runs, and handle_sig_alarm()
 * calls GetCurrentTimestamp()), so a SIGALRM that interrupted malloc() ran
 * malloc() again inside the handler: a CI run's coordination server died of
 * "malloc assertion failure in sysmalloc".  Everything here is
 * async-signal-safe: the real time comes from the clock_gettime system call
 * (no dlsym(), which may allocate), the file is read with open(), read() and
 * close() into a buffer on the stack and parsed by hand (no stdio, no
 * malloc, no locale), and errno is left as the caller had it.  Nor does
 * loading it allocate, so a program linked with jemalloc (Debian's
 * redis-server) starts under it as under no preload at all.
 *
 * The file's path is SNOWID_CLOCK_FILE, copied at load time: PostgreSQL
 * overwrites its original environment to show its status in ps.  A file
 * that cannot be read or parsed keeps the last setting read well (the
 * writer replaces the file by rename(), so this should never happen); the
 * process reports it once on stderr (the server's log) per run of failures,
 * so a broken test shows rather than silently running at offset 0.  If the
 * file cannot be read when the library is loaded, the process reports it and
 * exits with status 70: a server under a clock it cannot read does not start.
 *
 * State: setting, the last setting read well (its kind and nanoseconds in
 * one word, see clock_offset_parse), and failing are written and read whole
 * (64-bit and int stores on the 64-bit platforms the tests run on), by the
 * process's one thread or a signal handler interrupting it; a handler that
 * rereads the file while the interrupted code was doing so stores a setting
 * as good as the other's.
 *
 * Built by SnowidTest::need_clock() and test/protocol-search with the
 * system's C compiler.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC INT64_C(1000000000)

/*
 * The largest number of seconds a file may give, either way: setting holds
 * twice the nanoseconds (year 2116, far past any time the tests set).
 */
#define MAX_SECONDS (INT64_MAX / NS_PER_SEC / 2 - 1)

/* the file's path, copied from the environment at load time */
static char offset_path[4096];

/*
 * The last setting read well: an offset of n nanoseconds is 2 * n, an
 * absolute time of n nanoseconds since the epoch 2 * n + 1.
 */
static volatile int64_t setting = 0;

/* whether the last read failed (reported once per run of failures) */
static volatile int failing = 0;

/*
 * Writes a message to stderr with write(), which is async-signal-safe.
 */
static void
clock_offset_report(const char *message)
{
	static const char prefix[] = "clock_offset: ";
	ssize_t		rc;

	rc = write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
	rc = write(STDERR_FILENO, message, strlen(message));
	rc = write(STDERR_FILENO, offset_path, strlen(offset_path));
	rc = write(STDERR_FILENO, "\n", 1);
	(void) rc;
}

/*
 * Parses the file's content, "[space][+|-]digits[.digits][space]" (an
 * offset) or "[space]@digits[.digits][space]" (an absolute time), into a
 * setting (see setting above); digits past the ninth of the fraction are
 * ignored.  Returns false for anything else, an empty number or one of more
 * than MAX_SECONDS included.
 */
static bool
clock_offset_parse(const char *s, size_t len, int64_t *result)
{
	size_t		i = 0;
	bool		absolute = false;
	bool		negative = false;
	int64_t		seconds = 0;
	int64_t		fraction = 0;
	int64_t		scale = NS_PER_SEC;
	int64_t		ns;
	int			digits = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < len && s[i] == '@')
	{
		absolute = true;
		i++;
	}
	else if (i < len && (s[i] == '+' || s[i] == '-'))
		negative = (s[i++] == '-');
	while (i < len && s[i] >= '0' && s[i] <= '9')
	{
		digits++;
		seconds = seconds * 10 + (s[i++] - '0');
		if (seconds > MAX_SECONDS)
			return false;
	}
	if (i < len && s[i] == '.')
	{
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
		{
			digits++;
			if (scale > 1)
			{
				scale /= 10;
				fraction += (s[i] - '0') * scale;
			}
			i++;
		}
	}
	if (digits == 0)
		return false;
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
					   s[i] == '\r'))
		i++;
	if (i != len)
		return false;

	ns = seconds * NS_PER_SEC + fraction;
	if (negative)
		ns = -ns;
	*result = 2 * ns + (absolute ? 1 : 0);
	return true;
}

/*
 * Reads the file; true and its setting in *result if it holds one.
 */
static bool
clock_offset_read(int64_t *result)
{
	char		buf[64];
	size_t		len = 0;
	ssize_t		n;
	int			fd;

	fd = open(offset_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (len < sizeof(buf) &&
		   (n = read(fd, buf + len, sizeof(buf) - len)) != 0)
	{
		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			close(fd);
			return false;
		}
		len += n;
	}
	close(fd);
	/* a file that fills the buffer is longer than any setting */
	if (len == sizeof(buf))
		return false;
	return clock_offset_parse(buf, len, result);
}

/*
 * The setting now: the file's, else the last one read well.
 */
static int64_t
clock_offset_now(void)
{
	int64_t		now;

	if (clock_offset_read(&now))
	{
		setting = now;
		failing = 0;
	}
	else
	{
		now = setting;
		if (!failing)
		{
			failing = 1;
			clock_offset_report("could not read a clock setting, keeping the last one: ");
		}
	}
	return now;
}

/*
 * Reads the clock clk through the system call; a wall clock then as the
 * setting says, the real time plus an offset or an absolute time.  Leaves
 * errno alone unless the system call fails.
 */
static int
clock_offset_gettime(clockid_t clk, struct timespec *tp)
{
	int			saved_errno = errno;
	int64_t		now;
	int64_t		ns;

	if (syscall(SYS_clock_gettime, clk, tp) != 0)
		return -1;
	if (clk != CLOCK_REALTIME && clk != CLOCK_REALTIME_COARSE)
		return 0;

	now = clock_offset_now();
	if (now % 2 != 0)
		ns = (now - 1) / 2;
	else
		ns = (int64_t) tp->tv_sec * NS_PER_SEC + tp->tv_nsec + now / 2;
	tp->tv_sec = ns / NS_PER_SEC;
	tp->tv_nsec = ns % NS_PER_SEC;
	if (tp->tv_nsec < 0)
	{
		tp->tv_sec--;
		tp->tv_nsec += NS_PER_SEC;
	}
	errno = saved_errno;
	return 0;
}

/*
 * Copies the file's path and reads it once: a process that cannot read its
 * clock exits here rather than run at a time nobody set.
 */
__attribute__((constructor))
static void
clock_offset_init(void)
{
	const char *path = getenv("SNOWID_CLOCK_FILE");
	int64_t		now;

	if (path == NULL || path[0] == '\0' ||
		strlen(path) >= sizeof(offset_path))
	{
		clock_offset_report("SNOWID_CLOCK_FILE is not set, or too long");
		_exit(70);
	}
	strcpy(offset_path, path);
	if (!clock_offset_read(&now))
	{
		clock_offset_report("could not read a clock setting at start: ");
		_exit(70);
	}
	setting = now;
}

int
clock_gettime(clockid_t clk, struct timespec *tp)
{
	return clock_offset_gettime(clk, tp);
}

int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	if (clock_offset_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	if (tz != NULL)
		memset(tz, 0, sizeof(struct timezone));
	return 0;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	if (clock_offset_gettime(CLOCK_REALTIME, &ts) != 0)
		return (time_t) -1;
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
