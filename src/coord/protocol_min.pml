/*
 * protocol_min.pml
 *	  The worker-id protocol cut to its invariant (doc/internals.md, "The
 *	  worker-id protocol in brief"), as a model small enough that SPIN
 *	  searches its whole reachable state space: no depth bound, and no
 *	  bound on the number of faults, steps or calls.
 *
 *	  The invariant: per worker id, the ranges of the ids' own time that
 *	  holders may issue in never overlap.  Checked where it bites: no
 *	  server issues an id with a worker id in a millisecond another server
 *	  issued one with it.
 *
 *	  The model holds two servers and a copy of either's data directory,
 *	  two worker ids, a store that goes down and comes back with its data,
 *	  without it, or as an earlier backup (a restore, a failover to a
 *	  replica that missed writes), and that loses its data while it runs (a
 *	  FLUSHALL, an eviction); an administrator's free() of any id at any
 *	  time; clocks that step anywhere within the margin; and another member
 *	  of the fleet that calls every entry point under its own holder name
 *	  or a server's, with any bounded values.
 *
 *	  Time is relative to the store's clock: every time the model keeps (a
 *	  fence, a range's end, the end of a quiet period, a generator, what
 *	  was issued) is kept as its distance from the store's now, and stops
 *	  at the least value that any comparison still tells apart.  A
 *	  millisecond passing moves each down by one.  So the state space is
 *	  finite with time unbounded, and the search visits all of it.
 *
 *	  Each rule can be switched off with -DNO_<RULE>, and the search then
 *	  finds a duplicate; each assumption can be broken with -DOUT_<...>, and
 *	  the search then finds one too (test/t/coordinator/protocol_min_whole_space.pl).
 *
 *	  Run it (every rule on, the whole state space):
 *		spin -a src/coord/protocol_min.pml
 *		cc -O2 -DSAFETY -DCOLLAPSE -DBFS -DMEMLIM=6000 -o pan pan.c
 *		./pan -w24
 *	  -DNO_MEMBER, -DNO_COPY, -DNO_BACKUP, -DNO_ADMIN leave a kind of step
 *	  out (smaller searches).
 */

/* ---- the protocol's constants (abstract milliseconds) ---- */
#define M 1				/* clock margin: every clock within M of the store's */
#ifndef R
#define R 1				/* the longest range the store grants */
#endif
#define QL (R + 2 * M)	/* a possible loss: quiet until now + QL + M */
#define LONG (QL + 1)	/* a lease configured longer than the quiet
						 * period covers (-DNO_BOUND) */

/*
 * The drift budget is not modelled: a generator ahead of its clock issues
 * as a clock that far ahead would, and no rule reads the drift budget (a
 * range's end caps what a holder issues, whatever its generator).
 */

#define NS 3			/* servers 0 and 1, and slot 2 for a copy */
#define NW 2			/* worker ids */
#define NONE 2			/* no worker id */
#define MEMBER 4		/* the fleet member's holder name and secret */

/* -DOUT_CLOCK: a server's clock may fall one behind the margin */
#ifdef OUT_CLOCK
#define SKEW_MIN (-M - 1)
#else
#define SKEW_MIN (-M)
#endif

/* where each time stops going down: below it no comparison differs */
#define FENCE_MIN (-M)	/* read as fence + M <= 0, and in max() */
#define HI_MIN SKEW_MIN	/* read as clock < hi */
#define MARK_MIN (SKEW_MIN - 1)	/* read as mark + 1 against clocks */
#define SAT(v, lo) if :: (v) > (lo) -> v = (v) - 1 :: else -> v = (lo) fi

/* replies */
#define OK 0
#define REFUSED 1		/* the id is another's, not free yet, or quiet */
#define WRONG 2			/* wrong secret, or a value out of bounds */
#define NOANSWER 3		/* the store is down (-DOUT_PARTITION: cut off) */

/* server states */
#define UNBORN 0		/* slot 2 before the copy */
#define DOWN 1
#define RUN 2

/* ---- the store ---- */
bit down;				/* not answering */
short qend = FENCE_MIN;	/* a possible loss: no new grant while qend + M > 0 */
byte h[NW];				/* holder name (0: none) */
bit perm[NW];			/* held for good (else on lease) */
short fence[NW];		/* the end of every range granted for the id */
byte reg[5];			/* the secret registered for a holder name (0: none) */

/* a backup: an earlier state the store may come back as */
bit has_backup;
short s_qend = FENCE_MIN;
byte s_h[NW];
bit s_perm[NW];
short s_fence[NW];
byte s_reg[5];

/* ---- the servers ---- */
byte st[NS];
bit lease[NS];			/* it claims on lease (else for good) */
bit longl[NS];			/* on lease, configured longer than R */
byte name[NS];			/* holder name: 1, 2, and 3 for the copy */
byte sec[NS];			/* its secret (a copy keeps its original's) */
byte w[NS];				/* the worker id its data directory names, or NONE */
short hi[NS];			/* the end of its range, kept with w before it
						 * issues in it */
short mark[NS];			/* its generator: the last millisecond issued */
short skew[NS];			/* its clock less the store's */

/* bit x - SKEW_MIN of issued[v]: an id with worker id v was issued at x
 * (x from -M to M: below -M no clock reaches).  A server issues only above its
 * own generator, so an id found here is another server's */
byte issued[NW];

/* the secrets the fleet member learnt (-DNO_PROOF: from the store's logs) */
bit leaked[3];

/* a call's values and reply, reset at the end of every step */
byte c_name;
byte c_sec;
short c_hi;
byte c_len;
bit c_perm;
byte r;
byte r_w;
bit quiet;
byte i;
byte k;

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

/* a server holds its worker id (may issue with it): running, its range
 * not over by its own clock */
#define holding(s) (st[s] == RUN && w[s] != NONE && skew[s] < hi[s])

/* ---- the store's rules ---- */

/* SECRET: a holder name's first granted call registers its secret; a
 * call under the name with another is refused */
#ifdef NO_SECRET
#define secret_ok (1)
#else
#define secret_ok (reg[c_name] == 0 || reg[c_name] == c_sec)
#endif

/* BOUND: every value a caller sends is bounded at entry: a range no
 * longer than R, a range's end no later than now + R + M (a range granted
 * as long as R ends at the store's clock then plus R, and its clock may
 * since have stepped back by M) */
#ifdef NO_BOUND
#define bounded (1)
#else
#define bounded (c_len <= R && c_hi <= R + M)
#endif

/* QUIET: a store that may have forgotten (RESTART_LOSS: it restarted,
 * was restored or failed over; or its record is missing) grants nothing
 * new until every range it granted before, each ending no later than
 * now + R + M (BOUND) (+ M, its own clock's step), is over by every clock */
inline recall()
{
	quiet = (qend + M > 0)
}

/* the store notices it may have forgotten (at its first call after; the
 * model notices at once, which ends the quiet period no later) */
#ifdef NO_QUIET
#define forgot skip
#else
#define forgot qend = QL
#endif

/* FENCE, MARGIN: a new holder is granted an id only once every range
 * granted for it is over by every clock */
#if defined(NO_FENCE)
#define fenced_ok(v) (1)
#elif defined(NO_MARGIN)
#define fenced_ok(v) (fence[v] <= 0)
#else
#define fenced_ok(v) (fence[v] + M <= 0)
#endif
/* free: nobody holds it, or a lease holds it (its range over) */
#define free_for(v) ((h[v] == 0 || !perm[v]) && fenced_ok(v))

/* a range granted: [the holder's clock, now + c_len) */
inline grant(v)
{
	h[v] = c_name;
	perm[v] = c_perm;
	fence[v] = max(fence[v], c_len);
	if
	:: reg[c_name] == 0 -> reg[c_name] = c_sec
	:: else
	fi;
	r = OK;
	r_w = v
}

/* the check-in of a holder for good, a lease's renewal: "I hold v until
 * c_hi; extend it", for a live range only (OWN_END: c_hi not past by the
 * caller's clock, so not by now - M; a holder past its range is a new
 * claimant).  The holder the store shows is extended; during a quiet
 * period (CONTINUATION) so is a live range of an id nobody holds: only
 * the holder of the last range granted for an id can still hold a live
 * one (MARGIN) */
#ifdef NO_OWN_END
#define live_hi (1)
#else
#define live_hi (c_hi + M > 0)
#endif
inline extend(v)
{
	r = WRONG;
	if
	:: down -> r = NOANSWER
	:: !down && secret_ok && bounded ->
		recall();
		if
		:: live_hi && (h[v] == c_name || h[v] == 0 && quiet) ->
			grant(v); fence[v] = max(fence[v], c_hi)
		:: else -> r = REFUSED
		fi
	:: else
	fi
}

/* a new claim (a start, or a holder past its range's end): none during
 * a quiet period (-DNO_CONTINUATION: the id the store shows the caller
 * holds is granted in it); else the id the store shows it holds once its
 * last range is over (a restart keeps its id), or a free one, the one its
 * data directory names first */
#define holds_one (h[0] == c_name || h[1] == c_name)
#define held_one (h[0] == c_name -> 0 : 1)
inline claim(pref)
{
	r = WRONG;
	if
	:: down -> r = NOANSWER
	:: !down && secret_ok && bounded ->
		recall();
		r = REFUSED;
		if
#ifdef NO_CONTINUATION
		:: quiet && holds_one -> grant(held_one)
#endif
		:: quiet
		:: !quiet && holds_one ->
			k = held_one;
			if
			:: fenced_ok(k) -> grant(k)
			:: else
			fi
		:: !quiet && !holds_one && pref != NONE && free_for(pref) -> grant(pref)
		:: !quiet && !holds_one && (pref == NONE || !free_for(pref)) ->
			if
			:: free_for(0) -> grant(0)
			:: !free_for(0) && free_for(1) -> grant(1)
			:: else
			fi
		fi
	:: else
	fi
}

/* a lease given back at a clean stop: the holder removed, its fence
 * kept (no call lowers a fence) */
inline release(v)
{
	if
	:: !down && secret_ok && h[v] == c_name -> h[v] = 0
	:: else
	fi
}

/* ---- the servers' side ---- */

/* PROOF: a holder proves it knows its secret without sending it, so no
 * log of the store holds it; -DNO_PROOF: it sends it, and the fleet
 * member reads it in the store's logs */
#ifdef NO_PROOF
#define leak(s) leaked[sec[s]] = 1
#else
#define leak(s) skip
#endif

/* a server's values on a call */
#define request(s) \
	c_name = name[s]; c_sec = sec[s]; c_perm = !lease[s]; \
	c_len = (longl[s] -> LONG : R); leak(s)

/* REFUSAL_ENDS: a refusal is an answer: the holder drops the id at once
 * and extends nothing.  Only no answer at all (the store down) lets a
 * holder for good extend its own range, as snowid always did while Redis
 * is down */
#ifdef NO_REFUSAL_ENDS
#define unanswered (r != OK)
#else
#define unanswered (r == NOANSWER)
#endif

/* a copy made as operations.md says starts under a holder name of its
 * own, and takes no worker id from its original (-DOUT_COPY: under its
 * original's name, with its worker id and range) */
#ifdef OUT_COPY
#define COPY(s) \
	:: d_step { st[2] == UNBORN -> \
		st[2] = DOWN; name[2] = name[s]; sec[2] = sec[s]; w[2] = w[s]; \
		hi[2] = hi[s]; mark[2] = mark[s]; printf("STEP copy %d, same name\n", s); tidy() }
#else
#define COPY(s) \
	:: d_step { st[2] == UNBORN -> \
		st[2] = DOWN; name[2] = 3; sec[2] = sec[s]; printf("STEP copy %d\n", s); tidy() }
#endif


/* the end of every step: what no later step reads is reset */
inline tidy()
{
	i = 0;
	do
	:: i < NS ->
		if
		:: st[i] != RUN -> skew[i] = 0; lease[i] = 0; longl[i] = 0
		:: else
		fi;
		if
		:: w[i] == NONE -> hi[i] = HI_MIN
		:: else
		fi;
		i++
	:: else -> break
	od;
	c_name = 0; c_sec = 0; c_hi = 0; c_len = 0; c_perm = 0;
	r = 0; r_w = 0; quiet = 0; i = 0; k = 0
}

/* one millisecond later */
inline tick()
{
	SAT(qend, FENCE_MIN);
	SAT(s_qend, FENCE_MIN);
	i = 0;
	do
	:: i < NW ->
		SAT(fence[i], FENCE_MIN);
		SAT(s_fence[i], FENCE_MIN);
		issued[i] = issued[i] >> 1;
		i++
	:: else -> break
	od;
	i = 0;
	do
	:: i < NS ->
		SAT(hi[i], HI_MIN);
		SAT(mark[i], MARK_MIN);
		i++
	:: else -> break
	od
}

/* ---- one server's steps ---- */

/* it starts, its clock anywhere within the margin, for good or on lease;
 * within the range its data directory names, it issues on (a crash
 * restart); past it, it is a new claimant */
#define START(s, sk, l, ll) \
	:: d_step { st[s] == DOWN -> \
		st[s] = RUN; skew[s] = sk; lease[s] = l; longl[s] = ll; \
		printf("STEP start %d clock %d lease %d longer than R %d\n", s, sk, l, ll); tidy() }
#ifdef NO_BOUND
#define LONG_LEASE(s) START(s, -M, 1, 1) START(s, 0, 1, 1) START(s, M, 1, 1)
#else
/* a lease configured longer than R: every call refused, it never holds */
#define LONG_LEASE(s)
#endif

/* -DOUT_PARTITION: a holder for good's check-in goes unanswered while the
 * store answers others (a network that cuts off one server alone) */
#ifdef OUT_PARTITION
#define PARTITION(s) \
	:: d_step { holding(s) && !lease[s] && !down -> hi[s] = R; printf("STEP partition %d\n", s); tidy() }
#else
#define PARTITION(s)
#endif

/* -DNO_OWN_END: a server past its range asks to extend it */
#ifdef NO_OWN_END
#define OWN_END_CLAIM(s) \
	:: d_step { st[s] == RUN && !holding(s) && w[s] != NONE -> \
		request(s); c_hi = hi[s]; extend(w[s]); \
		printf("STEP extend past its end %d -> %d\n", s, r); \
		if \
		:: r == OK -> hi[s] = c_len \
		:: else \
		fi; \
		tidy() }
#else
#define OWN_END_CLAIM(s)
#endif

#define SERVER(s) \
	START(s, -M, 0, 0) START(s, 0, 0, 0) START(s, M, 0, 0) \
	START(s, -M, 1, 0) START(s, 0, 1, 0) START(s, M, 1, 0) \
	LONG_LEASE(s) \
	/* a new claim */ \
	:: d_step { st[s] == RUN && !holding(s) -> \
		request(s); claim(w[s]); \
		printf("STEP claim %d -> %d %d\n", s, r, r_w); \
		if \
		:: r == OK -> w[s] = r_w; hi[s] = c_len \
		:: else \
		fi; \
		tidy() } \
	OWN_END_CLAIM(s) \
	/* it issues above its generator, at or past its clock, below its \
	 * range's end */ \
	:: d_step { holding(s) && max(mark[s] + 1, skew[s]) < hi[s] -> \
		mark[s] = max(mark[s] + 1, skew[s]); \
		assert((issued[w[s]] & (1 << (mark[s] - SKEW_MIN))) == 0); \
		issued[w[s]] = issued[w[s]] | (1 << (mark[s] - SKEW_MIN)); \
		printf("STEP issue %d worker %d at %d\n", s, w[s], mark[s]); \
		tidy() } \
	/* a check-in, a renewal */ \
	:: d_step { holding(s) -> \
		request(s); c_hi = hi[s]; extend(w[s]); \
		printf("STEP extend %d -> %d\n", s, r); \
		if \
		:: r == OK -> hi[s] = max(hi[s], c_len) \
		:: r != OK && unanswered && !lease[s] -> hi[s] = max(hi[s], c_len) \
		:: r != OK && unanswered && lease[s] \
		:: r != OK && !unanswered -> w[s] = NONE \
		fi; \
		tidy() } \
	PARTITION(s) \
	/* a clean stop: a lease given back, its directory naming none */ \
	:: d_step { st[s] == RUN -> \
		if \
		:: lease[s] && holding(s) -> request(s); release(w[s]); w[s] = NONE \
		:: else \
		fi; \
		st[s] = DOWN; printf("STEP stop %d\n", s); tidy() } \
	/* a crash: its directory keeps what it names */ \
	:: d_step { holding(s) -> st[s] = DOWN; printf("STEP crash %d\n", s); tidy() } \
	/* its clock steps within the margin */ \
	:: d_step { st[s] == RUN && skew[s] < M -> skew[s]++; printf("STEP clock %d +\n", s); tidy() } \
	:: d_step { st[s] == RUN && skew[s] > SKEW_MIN -> skew[s]--; printf("STEP clock %d -\n", s); tidy() }

/* the fleet member: under holder name n with secret k, any bounded
 * values (the longest range, a live range's latest end) */
/* a step's line in a trail (spin -t): op 1 claim for good, 2 claim on
 * lease, 3 and 4 extend worker id 0 and 1, 5 and 6 release them;
 * replies 0 OK, 1 REFUSED, 2 WRONG, 3 NOANSWER */
#define MSTEP(op, n, s) printf("STEP member as %d (secret %d) op %d -> %d\n", n, s, op, r)
#define AS(n, s) c_name = n; c_sec = s; c_len = R; c_hi = R + M
#define MEMBER_AS(n, s) \
	:: d_step { AS(n, s); c_perm = 1; claim(NONE); MSTEP(1, n, s); tidy() } \
	:: d_step { AS(n, s); c_perm = 0; claim(NONE); MSTEP(2, n, s); tidy() } \
	:: d_step { AS(n, s); c_perm = 1; extend(0); MSTEP(3, n, s); tidy() } \
	:: d_step { AS(n, s); c_perm = 1; extend(1); MSTEP(4, n, s); tidy() } \
	:: d_step { AS(n, s); release(0); MSTEP(5, n, s); tidy() } \
	:: d_step { AS(n, s); release(1); MSTEP(6, n, s); tidy() }
#ifdef NO_PROOF
#define MEMBER_LEARNT(n) \
	:: d_step { leaked[n] -> AS(n, n); c_perm = 0; claim(NONE); MSTEP(2, n, n); tidy() } \
	:: d_step { leaked[n] -> AS(n, n); release(0); MSTEP(5, n, n); tidy() } \
	:: d_step { leaked[n] -> AS(n, n); release(1); MSTEP(6, n, n); tidy() }
#else
#define MEMBER_LEARNT(n)
#endif

inline save()
{
	has_backup = 1; s_qend = qend;
	s_h[0] = h[0]; s_h[1] = h[1]; s_perm[0] = perm[0]; s_perm[1] = perm[1];
	s_fence[0] = fence[0]; s_fence[1] = fence[1];
	s_reg[1] = reg[1]; s_reg[2] = reg[2]; s_reg[3] = reg[3]; s_reg[4] = reg[4]
}

inline load()
{
	qend = s_qend;
	h[0] = s_h[0]; h[1] = s_h[1]; perm[0] = s_perm[0]; perm[1] = s_perm[1];
	fence[0] = s_fence[0]; fence[1] = s_fence[1];
	reg[1] = s_reg[1]; reg[2] = s_reg[2]; reg[3] = s_reg[3]; reg[4] = s_reg[4]
}

inline wipe()
{
	forgot;
	h[0] = 0; h[1] = 0; perm[0] = 0; perm[1] = 0;
	fence[0] = FENCE_MIN; fence[1] = FENCE_MIN;
	reg[1] = 0; reg[2] = 0; reg[3] = 0; reg[4] = 0
}

/* RESTART_LOSS: every restart, restore and failover counts as a possible
 * loss (-DNO_RESTART_LOSS: only a missing record does) */
#ifdef NO_RESTART_LOSS
#define restarted skip
#else
#define restarted forgot
#endif

active proctype world()
{
	d_step {
		st[0] = DOWN; st[1] = DOWN;
		name[0] = 1; name[1] = 2; sec[0] = 1; sec[1] = 2;
		w[0] = NONE; w[1] = NONE; w[2] = NONE;
		hi[0] = HI_MIN; hi[1] = HI_MIN; hi[2] = HI_MIN;
		mark[0] = MARK_MIN; mark[1] = MARK_MIN; mark[2] = MARK_MIN;
		fence[0] = FENCE_MIN; fence[1] = FENCE_MIN;
		s_fence[0] = FENCE_MIN; s_fence[1] = FENCE_MIN
	};
end:
	do
	/* a millisecond passes */
	:: d_step { tick(); printf("STEP wait\n"); tidy() }

	SERVER(0)
	SERVER(1)
#ifndef NO_COPY
	SERVER(2)
	/* a copy of server 0's or server 1's data directory, in slot 2 */
	COPY(0)
	COPY(1)
#endif

	/* the store: a backup; down; back with its data, without it, or as the
	 * backup (a restore; a failover to a replica that missed writes); its
	 * data lost while it runs (a FLUSHALL, an eviction) */
#ifndef NO_BACKUP
	:: d_step { !down -> save(); printf("STEP store backup\n"); tidy() }
	:: d_step { down && has_backup -> down = 0; load(); restarted; printf("STEP store up as the backup\n"); tidy() }
#ifdef OUT_REWIND_SAME
	/* put back to the backup unseen: no restart, the record intact */
	:: d_step { !down && has_backup -> load(); printf("STEP store back to the backup unseen\n"); tidy() }
#endif
#endif
	:: d_step { !down -> down = 1; printf("STEP store down\n"); tidy() }
	:: d_step { down -> down = 0; restarted; printf("STEP store up with its data\n"); tidy() }
	:: d_step { down -> down = 0; wipe(); printf("STEP store up without its data\n"); tidy() }
	:: d_step { !down -> wipe(); printf("STEP store loses its data\n"); tidy() }

#ifndef NO_ADMIN
	/* the administrator frees an id, of a server gone or not */
	:: d_step { !down && h[0] != 0 -> h[0] = 0; printf("STEP admin free 0\n"); tidy() }
	:: d_step { !down && h[1] != 0 -> h[1] = 0; printf("STEP admin free 1\n"); tidy() }
#endif

#ifndef NO_MEMBER
	/* the fleet member, under its own name and each server's */
	MEMBER_AS(MEMBER, MEMBER)
	MEMBER_AS(1, MEMBER)
	MEMBER_AS(2, MEMBER)
	MEMBER_LEARNT(1)
	MEMBER_LEARNT(2)
#endif
	od
}
