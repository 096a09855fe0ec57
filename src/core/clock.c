/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The wall clock and the monotonic clock, in milliseconds, and a quick
 *	  way to read the wall clock's millisecond on every id.
 *
 *	  Reading the wall clock costs more than everything else an id needs
 *	  (about 35 ns in a virtual machine, where the time stamp counter is
 *	  read in its serializing form).  snowid_unix_ms_quick() gives the same
 *	  millisecond for less: after each real reading, this process knows how
 *	  many ticks of the time stamp counter (TSC) are left of that
 *	  millisecond, counted at a rate no faster than the TSC's, and while
 *	  fewer have passed it answers that millisecond again, the real clock
 *	  being still inside it.  The rate is measured once, in the postmaster
 *	  (every process it starts inherits it), and is used only where the
 *	  kernel's own clock source is the TSC, whose rate it then keeps
 *	  constant and the same on every core, or kvm-clock over a TSC the
 *	  kernel holds reliable (kvm-clock scales the same counter); elsewhere,
 *	  and on other machines than x86-64, every reading is a real one.  A
 *	  wall clock stepped during the rest of a millisecond shows at the next
 *	  real reading, less than a millisecond later, as if the step had come
 *	  then; and a process whose TSC is seen to tick slower than counted, or
 *	  half as fast again (over 10 ms or more, against the real readings: a
 *	  virtual machine moved to another host), reads the clock every time.
 *
 *	  Only per-process state (the last reading), no locking.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#define SNOWID_HAVE_TSC 1
#endif

#include "core/clock.h"

#define NS_PER_MS	INT64CONST(1000000)
#define NS_PER_S	INT64CONST(1000000000)

#ifdef SNOWID_HAVE_TSC
/*
 * TSC ticks per ns of the wall clock, at most (the rate measured, less a
 * margin for the measure and for the slewing of the wall clock), or 0
 * where the quick reading is off
 */
static double tsc_ticks_per_ns = 0;

/* This process's last real reading: its millisecond, and its TSC window */
static int64 window_ms;
static uint64 window_start;
static uint64 window_ticks = 0;

/*
 * The real reading the TSC's rate is checked against: its ns, and the TSC
 * read before it and after it
 */
static uint64 check_tsc_before;
static uint64 check_tsc_after;
static int64 check_ns = -1;
#endif

static int64 timespec_ns(const struct timespec *ts);
#ifdef SNOWID_HAVE_TSC
static bool tsc_reliable_source(void);
static bool tsc_rate_holds(uint64 tsc_before, uint64 tsc_after, int64 ns);
#endif

/*
 * snowid_unix_ms
 *		This server's wall clock in Unix ms.
 */
int64
snowid_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / NS_PER_MS;
}

/*
 * snowid_monotonic_ms
 *		Milliseconds on a clock that never steps, to measure waits and
 *		leases with: a wall clock stepped back during a wait would stretch
 *		it.  On Linux the clock that also counts the time the host was
 *		suspended (CLOCK_BOOTTIME; CLOCK_MONOTONIC stands still then), so
 *		that a lease ends by its holder's clock when a sleep outlasted it.
 */
int64
snowid_monotonic_ms(void)
{
	struct timespec ts;

#ifdef CLOCK_BOOTTIME
	clock_gettime(CLOCK_BOOTTIME, &ts);
#else
	clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / NS_PER_MS;
}

/*
 * snowid_unix_ms_quick
 *		The millisecond snowid_unix_ms() reads, from the TSC while the one
 *		this process read last has not ended yet.
 */
int64
snowid_unix_ms_quick(void)
{
#ifdef SNOWID_HAVE_TSC
	struct timespec ts;
	uint64		tsc;
	int64		ns;

	if (tsc_ticks_per_ns == 0)
		return snowid_unix_ms();

	tsc = __rdtsc();
	if (likely(tsc - window_start < window_ticks))
		return window_ms;

	/*
	 * A real reading, after the TSC: the window is counted from before it,
	 * so that it ends no later than the millisecond
	 */
	clock_gettime(CLOCK_REALTIME, &ts);
	ns = timespec_ns(&ts);

	if (!tsc_rate_holds(tsc, __rdtsc(), ns))
	{
		tsc_ticks_per_ns = 0;
		elog(DEBUG1, "snowid reads the wall clock for every id from now on: the TSC no longer ticks at the rate measured");
		return ns / NS_PER_MS;
	}

	window_ms = ns / NS_PER_MS;
	window_start = tsc;
	window_ticks = (uint64) ((NS_PER_MS - ns % NS_PER_MS) * tsc_ticks_per_ns);
	return window_ms;
#else
	return snowid_unix_ms();
#endif
}

/*
 * snowid_clock_calibrate
 *		Measures, in the postmaster, the TSC's rate against the wall clock
 *		over 20 ms, and turns snowid_unix_ms_quick()'s TSC reading on if the
 *		kernel's clock source is the TSC and the wall clock kept the same
 *		rate as the clock that no one steps or slews meanwhile.
 */
void
snowid_clock_calibrate(void)
{
#ifdef SNOWID_HAVE_TSC
	FILE	   *f;
	char		source[32] = "";
	uint64		tsc[2];
	int64		wall_ns[2];
	int64		raw_ns[2];
	double		rate;
	double		raw_rate;

	tsc_ticks_per_ns = 0;
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f == NULL)
		return;
	if (fgets(source, sizeof(source), f) == NULL)
		source[0] = '\0';
	fclose(f);
	if (strcmp(source, "tsc\n") != 0 &&
		!(strcmp(source, "kvm-clock\n") == 0 && tsc_reliable_source()))
		return;

	for (int i = 0; i < 2; i++)
	{
		/* a pair read close together, not torn by the scheduler */
		for (int attempt = 0;; attempt++)
		{
			struct timespec wall;
			struct timespec raw;
			uint64		before = __rdtsc();

			clock_gettime(CLOCK_REALTIME, &wall);
			clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
			tsc[i] = __rdtsc();
			if (tsc[i] - before < 100000)
			{
				wall_ns[i] = timespec_ns(&wall);
				raw_ns[i] = timespec_ns(&raw);
				break;
			}
			if (attempt == 10)
				return;
		}
		if (i == 0)
			pg_usleep(20000);
	}
	if (wall_ns[1] <= wall_ns[0] || raw_ns[1] <= raw_ns[0])
		return;
	rate = (double) (tsc[1] - tsc[0]) / (wall_ns[1] - wall_ns[0]);
	raw_rate = (double) (tsc[1] - tsc[0]) / (raw_ns[1] - raw_ns[0]);

	/* a TSC of 100 MHz to 10 GHz, a wall clock neither stepped nor sped up */
	if (rate < 0.1 || rate > 10 || fabs(rate / raw_rate - 1) > 0.001)
		return;
	tsc_ticks_per_ns = rate * 0.99;
	elog(DEBUG1, "snowid reads the wall clock's millisecond from the TSC, at %.3f ticks a ns",
		 rate);
#endif
}

static int64
timespec_ns(const struct timespec *ts)
{
	return (int64) ts->tv_sec * NS_PER_S + ts->tv_nsec;
}

#ifdef SNOWID_HAVE_TSC
/*
 * tsc_reliable_source
 *		Whether, under kvm-clock, the TSC is one the kernel would itself keep
 *		time with: listed among the clock sources it may use (a TSC found
 *		unstable, or out of step between cores, is taken off that list) and
 *		flagged by the processor as of a constant rate that does not stop
 *		in deep sleep.
 */
static bool
tsc_reliable_source(void)
{
	FILE	   *f;
	char		line[4096];
	bool		listed = false;
	bool		constant = false;
	bool		nonstop = false;

	f = fopen("/sys/devices/system/clocksource/clocksource0/available_clocksource", "r");
	if (f == NULL)
		return false;
	if (fgets(line, sizeof(line), f) != NULL)
	{
		for (char *word = strtok(line, " \n"); word; word = strtok(NULL, " \n"))
			listed |= strcmp(word, "tsc") == 0;
	}
	fclose(f);
	if (!listed)
		return false;

	/* the first processor's flags: every core of one machine has the same */
	f = fopen("/proc/cpuinfo", "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (char *word = strtok(line, " \t\n"); word; word = strtok(NULL, " \t\n"))
		{
			constant |= strcmp(word, "constant_tsc") == 0;
			nonstop |= strcmp(word, "nonstop_tsc") == 0;
		}
		break;
	}
	fclose(f);
	return constant && nonstop;
}

/*
 * tsc_rate_holds
 *		Checks the TSC's rate against a real reading ns taken between the
 *		TSC readings tsc_before and tsc_after: over 10 ms or more since the
 *		last such check, the TSC must have ticked at least at the rate
 *		counted with (else the windows would outlast their milliseconds: a
 *		TSC that changed its rate, a wall clock stepped ahead), and less than
 *		half as fast again (a virtual machine moved to a host whose TSC runs
 *		faster: harmless for the answers, which then end early, but the rate
 *		describes this machine no more).  The slow check counts from before
 *		the last reading to after this one, the fast one from after the last
 *		to before this one, so that a process preempted around a reading
 *		fails neither.
 */
static bool
tsc_rate_holds(uint64 tsc_before, uint64 tsc_after, int64 ns)
{
	double		counted;

	if (check_ns >= 0 && ns >= check_ns)
	{
		if (ns - check_ns < 10 * NS_PER_MS)
			return true;
		counted = (ns - check_ns) * tsc_ticks_per_ns;
		if ((double) (tsc_after - check_tsc_before) < counted)
			return false;
		if ((double) (tsc_before - check_tsc_after) > counted * 1.5)
			return false;
	}
	check_tsc_before = tsc_before;
	check_tsc_after = tsc_after;
	check_ns = ns;
	return true;
}
#endif
