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
 *	  constant and the same on every core; elsewhere, and on other
 *	  machines than x86-64, every reading is a real one.  A wall clock
 *	  stepped during the rest of a millisecond shows at the next real
 *	  reading, less than a millisecond later, as if the step had come then;
 *	  and a process whose TSC is seen to tick slower than counted (over 10
 *	  ms or more, against the real readings) reads the clock every time.
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

/* The real reading the TSC's rate is checked against: its TSC, its ns */
static uint64 check_tsc;
static int64 check_ns = -1;
#endif

static int64 timespec_ns(const struct timespec *ts);

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
 *		Milliseconds on a clock that never steps, to measure waits with: a
 *		wall clock stepped back during a wait would stretch it.
 */
int64
snowid_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
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

	/*
	 * Over 10 ms or more, the TSC must have ticked at least at the rate
	 * counted with; if it did not (the machine's TSC changed its rate, or
	 * the wall clock was stepped ahead), this process reads the clock for
	 * every id from now on.  The ticks are counted from before the last
	 * check's reading to after this one's, so that being preempted around
	 * a reading only adds to them.
	 */
	if (check_ns < 0 || ns < check_ns)
	{
		check_tsc = tsc;
		check_ns = ns;
	}
	else if (ns - check_ns >= 10 * NS_PER_MS)
	{
		if ((double) (__rdtsc() - check_tsc) < (ns - check_ns) * tsc_ticks_per_ns)
		{
			tsc_ticks_per_ns = 0;
			elog(DEBUG1, "snowid reads the wall clock for every id from now on: the TSC ticked slower than counted");
			return ns / NS_PER_MS;
		}
		check_tsc = tsc;
		check_ns = ns;
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
	if (strcmp(source, "tsc\n") != 0)
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
