/*
 * protocol_min.pml
 *	  The worker-id protocol cut to its invariant (doc/internals.md, "The
 *	  worker-id protocol in brief"), as a model small enough that SPIN
 *	  searches its whole reachable state space: no depth bound, no
 *	  bound on the number of faults, steps or calls.
 *
 *	  The invariant: per worker id, the ranges of the ids' own time that
 *	  holders may issue in never overlap.  Checked where it bites: no two
 *	  servers issue an id with one worker id in one millisecond.
 *
 *	  The model holds two servers and a copy of either's data directory,
 *	  two worker ids, a store that goes down and comes back with its data,
 *	  without it or from an earlier backup (a restore, a failover to a
 *	  replica that missed writes), that loses its data while it runs (a
 *	  FLUSHALL, an eviction), an administrator's free() at any time, clocks
 *	  that step anywhere within the margin, and another member of the
 *	  fleet that calls every entry point under any holder name with any
 *	  bounded values.
 *
 *	  Time is relative to the store's clock: every time the model keeps
 *	  (a fence, a range's end, a quiet period's end, a generator, what was
 *	  issued) is kept as its distance from the store's "now" and saturates
 *	  at the least value any comparison can still tell apart (below).  A
 *	  millisecond passing moves every one of them down by one.  So the state
 *	  space is finite without a bound on time, and a search visits it all.
 *
 *	  Each rule of the design can be switched off with -DNO_<RULE>, and the
 *	  search then finds a path to a duplicate (test/t/153_protocol_min.pl);
 *	  each assumption can be broken with -DOUT_<ASSUMPTION>, and the search
 *	  then finds one too.
 *
 *	  Run it:
 *		spin -a src/coord/protocol_min.pml
 *		cc -O2 -DSAFETY -DCOLLAPSE -DMEMLIM=6000 -o pan pan.c
 *		./pan -m100000 -w24
 */

/* ---- constants (the one source the stores take theirs from; abstract
 *      milliseconds) ---- */
#define M 1				/* clock margin: every clock within M of the store's */
#define D 1				/* drift budget: a generator runs at most D ahead of
						 * its clock */
#define R 2				/* the longest range the store grants (RANGE_MAX) */
#define LONG 3			/* a setting past it (a lease configured too long) */
#define QL (R + M)		/* a possible loss: no new grant until now + QL + M */

#define NS 3			/* servers 0 and 1, and slot 2 for a copy */
#define NW 2			/* worker ids */
#define NONE 2			/* no worker id */
#define MEMBER 4		/* the fleet member's holder name and secret */

/* saturation: the least value each time can take that any comparison
 * still tells apart */
#define FENCE_MIN (-M)	/* fence + M <= 0 is all that is read */
#define HI_MIN (-M)		/* skew < hi, skew >= -M */
#define MARK_MIN (-M - 1)	/* mark + 1 against clocks >= -M */
#define SAT(v, lo) if :: (v) > (lo) -> v = (v) - 1 :: else -> v = (lo) fi

/* replies */
#define OK 0
#define REFUSED 1		/* the id is another's, or not free yet */
#define QUIET 2			/* a possible loss: no new grant yet */
#define WRONG 3			/* wrong secret, or a value out of bounds */
#define NOANSWER 4		/* the store is down (or, -DOUT_PARTITION, cut off) */

/* server states */
#define UNBORN 0
#define NEW 1
#define RUN 2
#define DOWN 3

/* ---- the store ---- */
bit down;				/* not answering */
bit rec = 1;			/* its record of the run that wrote its data holds:
						 * 0 after a restart, a restore, a failover or a
						 * loss, until the next call */
short qend = FENCE_MIN;	/* a possible loss: no new grant while qend + M > 0 */
byte h[NW];				/* holder name (0: none) */
bit perm[NW];			/* held for good (else on lease) */
short fence[NW];		/* the end of every range granted for the id */
byte reg[5];			/* the secret registered for a holder name (0: none) */

/* a backup: an earlier state the store may come back as */
bit snap;
bit s_rec;
short s_qend;
byte s_h[NW];
bit s_perm[NW];
short s_fence[NW];
byte s_reg[5];

/* ---- the servers ---- */
byte st[NS];			/* UNBORN, NEW, RUN, DOWN */
bit lease[NS];			/* it claims on lease (else for good) */
bit longl[NS];			/* on lease, configured longer than R (-DNO_BOUND) */
byte name[NS];			/* holder name: 1, 2, and 3 for the copy */
byte sec[NS];			/* its secret (a copy keeps its original's) */
bit holding[NS];		/* it issues with w[s] within its range */
bit refused[NS];		/* its range was refused: it extends nothing */
byte w[NS];				/* the worker id its data directory names, or NONE */
short hi[NS];			/* the end of its range, kept with w (written before
						 * it issues in it) */
short mark[NS];			/* the generator: the last millisecond issued */
short skew[NS];			/* its clock, less the store's: -M .. M */

/* what was issued: bit x + M of issued[v], an id with worker id v at x
 * (x from -M to M + D; below -M no clock reaches).  A server's own ids
 * lie at or below its generator (mark), and it issues only above it: an
 * id found here is another server's */
byte issued[NW];

/* the fleet member has learnt these secrets (-DNO_PROOF: from the
 * store's logs) */
bit leaked[5];

/* a call's values and reply */
byte c_name;
byte c_sec;
byte c_w;
short c_hi;
byte c_len;
bit c_perm;
byte r;
byte r_w;
bit quiet;
byte i;
byte k;
short x;

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

/* ---- the rules of the store ---- */

/* SECRET: a holder name's first granted call registers its secret; a
 * call under it with another is refused */
#ifdef NO_SECRET
#define secret_ok (1)
#else
#define secret_ok (reg[c_name] == 0 || reg[c_name] == c_sec)
#endif

/* BOUND: every value a caller sends is bounded at entry: a range no
 * longer than R, a range end it says it holds no later than now + R */
#ifdef NO_BOUND
#define bounded (1)
#else
#define bounded (c_len <= R && c_hi <= R)
#endif

/* RESTART_LOSS, QUIET: a store that restarted, was restored or failed
 * over, or lost its record, may have forgotten ranges it granted, each
 * ending before now + R (+ M, its own clock's step): no new grant until
 * every clock is past that */
inline recall()
{
	if
	:: !rec ->
#ifndef NO_QUIET
		qend = QL;
#endif
		rec = 1
	:: else
	fi;
	quiet = (qend + M > 0)
}

/* FENCE, MARGIN: a new holder starts past every range granted for the id
 * and only once every clock is past its end */
#if defined(NO_FENCE)
#define fenced_ok(v) (1)
#elif defined(NO_MARGIN)
#define fenced_ok(v) (fence[v] <= 0)
#else
#define fenced_ok(v) (fence[v] + M <= 0)
#endif
/* free for a new holder: nobody holds it, or a lease that ran out */
#define free_for(v) ((h[v] == 0 || h[v] == c_name || !perm[v]) && fenced_ok(v))

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

/* the check-in of a holder for good, the renewal of a lease, and a
 * restart within its range: "I hold c_w until c_hi, extend it".  The
 * holder the store shows is extended; during a possible loss
 * (CONTINUATION) a live range of an id nobody holds is taken as the
 * caller's own: only the holder of the last range granted can still have
 * one live (MARGIN) */
#ifdef NO_OWN_END
#define live_hi (1)
#else
#define live_hi (c_hi + M > 0)
#endif
inline extend()
{
	r = WRONG;
	if
	:: down -> r = NOANSWER
	:: !down && secret_ok && bounded ->
		recall();
		if
		:: h[c_w] == c_name -> grant(c_w); fence[c_w] = max(fence[c_w], c_hi)
		:: h[c_w] == 0 && quiet && live_hi ->
			grant(c_w); fence[c_w] = max(fence[c_w], c_hi)
		:: else -> r = REFUSED
		fi
	:: else
	fi
}

/* a new claim (a start, or a holder past its range): during a possible
 * loss none; else the id the store shows it holds if its last range is
 * over (a restart keeps its id), or a free one, the one its data
 * directory names first */
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
		/* a held claim taken as its holder's own during a possible loss */
		:: quiet && (h[0] == c_name || h[1] == c_name) ->
			k = (h[0] == c_name -> 0 : 1); grant(k)
#endif
		:: quiet -> r = QUIET
		:: else ->
			if
			:: h[0] == c_name || h[1] == c_name ->
				k = (h[0] == c_name -> 0 : 1);
				if
				:: fenced_ok(k) -> grant(k)
				:: else
				fi
			:: else ->
				if
				:: pref != NONE && free_for(pref) -> grant(pref)
				:: else ->
					if
					:: free_for(0) -> grant(0)
					:: !free_for(0) && free_for(1) -> grant(1)
					:: else
					fi
				fi
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

/* a server's values on a call */
#define request(s) \
	c_name = name[s]; c_sec = sec[s]; c_perm = !lease[s]; \
	c_len = (longl[s] -> LONG : R); \
	if :: leaked[sec[s]] == 0 -> leak(s) :: else fi

/* PROOF: a holder proves it knows its secret and never sends it, so no
 * log of the store holds it; -DNO_PROOF: it sends it, and the fleet
 * member reads it from the store's logs */
#ifdef NO_PROOF
#define leak(s) leaked[sec[s]] = 1
#else
#define leak(s) skip
#endif

/* REFUSAL_ENDS: a refusal is an answer: the holder extends nothing and
 * stops at its range's end.  Only no answer at all (the store down) lets
 * a holder for good extend its own range, as snowid always did while
 * Redis is down */
#ifdef NO_REFUSAL_ENDS
#define unanswered(r) (r == NOANSWER || r == REFUSED || r == WRONG)
#else
#define unanswered(r) (r == NOANSWER)
#endif

/* The copy: a data directory copied as operations.md says starts under a
 * holder name of its own and takes no worker id from its original;
 * -DOUT_COPY breaks that */
#ifdef OUT_COPY
#define copy_name(s) name[s]
#define copy_w(s) w[s]
#define copy_hi(s) hi[s]
#else
#define copy_name(s) 3
#define copy_w(s) NONE
#define copy_hi(s) HI_MIN
#endif

/* its clock: the store's plus skew, within M (-DOUT_CLOCK: one step
 * past the margin, one server, which the issue range then covers) */
#ifdef OUT_CLOCK
#define SKEW_MAX (M + 1)
#else
#define SKEW_MAX M
#endif

/* the milliseconds server s may issue at: past its generator, at or past
 * its clock, up to its clock plus its drift budget, below its range's end */
#define lo(s) max(mark[s] + 1, skew[s])
#define top(s) min(skew[s] + D, hi[s] - 1)
#define bitof(v) (1 << ((v) + M))

inline issue_at(s, v)
{
	assert((issued[w[s]] & bitof(v)) == 0);
	issued[w[s]] = issued[w[s]] | bitof(v);
	mark[s] = v
}

/* the end of every step: a holder past its range's end holds none (it
 * is a new claimant); values no later step reads are reset */
inline tidy()
{
	i = 0;
	do
	:: i < NS ->
		if
		:: holding[i] && skew[i] >= hi[i] -> holding[i] = 0
		:: else
		fi;
		if
		:: !holding[i] -> refused[i] = 0
		:: else
		fi;
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
	c_name = 0; c_sec = 0; c_w = 0; c_hi = 0; c_len = 0; c_perm = 0;
	r = 0; r_w = 0; quiet = 0; i = 0; k = 0; x = 0
}

/* the distances from now, one millisecond later */
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

/* it starts, its clock anywhere within the margin, for good or on lease
 * (longer than R: -DNO_BOUND); within the range its data directory names,
 * it goes on issuing in it (a crash restart) */
#define START(s, sk, l, ll) \
	:: d_step { (st[s] == NEW || st[s] == DOWN) -> \
		st[s] = RUN; skew[s] = sk; lease[s] = l; longl[s] = ll; \
		holding[s] = (w[s] != NONE && skew[s] < hi[s]); \
		tidy() }

#define SERVER(s) \
	START(s, -M, 0, 0) START(s, 0, 0, 0) START(s, M, 0, 0) \
	START(s, -M, 1, 0) START(s, 0, 1, 0) START(s, M, 1, 0) \
	LONG_LEASE(s) \
	/* a new claim */ \
	:: d_step { st[s] == RUN && !holding[s] -> \
		request(s); claim(w[s]); \
		if \
		:: r == OK -> w[s] = r_w; hi[s] = c_len; holding[s] = 1 \
		:: else \
		fi; \
		tidy() } \
	/* it issues, at the lowest or the highest millisecond it may */ \
	:: d_step { st[s] == RUN && holding[s] && lo(s) <= top(s) -> \
		x = lo(s); issue_at(s, x); tidy() } \
	:: d_step { st[s] == RUN && holding[s] && lo(s) < top(s) -> \
		x = top(s); issue_at(s, x); tidy() } \
	/* a check-in or a renewal */ \
	:: d_step { st[s] == RUN && holding[s] && !refused[s] -> \
		request(s); c_w = w[s]; c_hi = hi[s]; extend(); \
		if \
		:: r == OK -> hi[s] = max(hi[s], c_len) \
		:: unanswered(r) && !lease[s] -> hi[s] = max(hi[s], c_len) \
		:: unanswered(r) && lease[s] \
		:: else -> refused[s] = 1 \
		fi; \
		tidy() } \
	/* a clean stop: a lease given back, its directory naming none */ \
	:: d_step { st[s] == RUN -> \
		if \
		:: lease[s] && holding[s] -> request(s); release(w[s]); w[s] = NONE \
		:: else \
		fi; \
		st[s] = DOWN; holding[s] = 0; tidy() } \
	/* a crash: the directory keeps what it names */ \
	:: d_step { st[s] == RUN && holding[s] -> st[s] = DOWN; holding[s] = 0; tidy() } \
	PARTITION(s) \
	/* its clock steps, anywhere within the margin */ \
	:: d_step { st[s] == RUN && skew[s] < SKEW_MAX -> skew[s]++; tidy() } \
	:: d_step { st[s] == RUN && skew[s] > -M -> skew[s]--; tidy() }

/* -DOUT_PARTITION: a holder for good's check-in goes unanswered while
 * the store answers others (a network that cuts off one server), and it
 * extends its range as if the store were down */
#ifdef OUT_PARTITION
#define PARTITION(s) \
	:: d_step { st[s] == RUN && holding[s] && !refused[s] && !lease[s] && !down -> \
		hi[s] = max(hi[s], R); tidy() }
#else
#define PARTITION(s)
#endif

#ifdef NO_BOUND
#define LONG_LEASE(s) START(s, -M, 1, 1) START(s, 0, 1, 1) START(s, M, 1, 1)
#else
/* a lease configured past R: the store refuses it (WRONG) whatever
 * else; left out of the search with the bound on, as it never holds */
#define LONG_LEASE(s)
#endif

/* the fleet member: under holder name n, with its own secret (or one it
 * learnt), any bounded values */
#define AS(n, s) c_name = n; c_sec = s; c_len = R
#define MEMBER_AS(n, s) \
	:: d_step { AS(n, s); c_perm = 1; claim(NONE); tidy() } \
	:: d_step { AS(n, s); c_perm = 0; claim(NONE); tidy() } \
	:: d_step { AS(n, s); c_perm = 1; c_w = 0; c_hi = R; extend(); tidy() } \
	:: d_step { AS(n, s); c_perm = 1; c_w = 1; c_hi = R; extend(); tidy() } \
	:: d_step { AS(n, s); release(0); tidy() } \
	:: d_step { AS(n, s); release(1); tidy() }

inline save()
{
	snap = 1; s_rec = rec; s_qend = qend;
	s_h[0] = h[0]; s_h[1] = h[1]; s_perm[0] = perm[0]; s_perm[1] = perm[1];
	s_fence[0] = fence[0]; s_fence[1] = fence[1];
	i = 0;
	do
	:: i < 5 -> s_reg[i] = reg[i]; i++
	:: else -> break
	od
}

inline load()
{
	rec = s_rec; qend = s_qend;
	h[0] = s_h[0]; h[1] = s_h[1]; perm[0] = s_perm[0]; perm[1] = s_perm[1];
	fence[0] = s_fence[0]; fence[1] = s_fence[1];
	i = 0;
	do
	:: i < 5 -> reg[i] = s_reg[i]; i++
	:: else -> break
	od
}

inline wipe()
{
	rec = 0; qend = FENCE_MIN;
	h[0] = 0; h[1] = 0; perm[0] = 0; perm[1] = 0;
	fence[0] = FENCE_MIN; fence[1] = FENCE_MIN;
	i = 0;
	do
	:: i < 5 -> reg[i] = 0; i++
	:: else -> break
	od
}

/* RESTART_LOSS: every restart, restore and failover counts as a possible
 * loss (-DNO_RESTART_LOSS: only a record that is missing does) */
#ifdef NO_RESTART_LOSS
#define restarted skip
#else
#define restarted rec = 0
#endif

active proctype world()
{
	d_step {
		i = 0;
		do
		:: i < NS ->
			st[i] = (i < 2 -> NEW : UNBORN);
			name[i] = i + 1;
			sec[i] = i + 1;
			w[i] = NONE;
			hi[i] = HI_MIN;
			mark[i] = MARK_MIN;
			i++
		:: else -> break
		od;
		fence[0] = FENCE_MIN; fence[1] = FENCE_MIN;
		qend = FENCE_MIN; s_qend = FENCE_MIN;
		s_fence[0] = FENCE_MIN; s_fence[1] = FENCE_MIN;
		i = 0
	};
end:
	do
	/* a millisecond passes */
	:: d_step { tick(); tidy() }

	SERVER(0)
	SERVER(1)
	SERVER(2)

#ifndef NO_COPY
	/* a copy of server 0's or 1's data directory starts in slot 2 */
	:: d_step { st[2] == UNBORN && st[0] != NEW ->
		st[2] = NEW; name[2] = copy_name(0); sec[2] = sec[0]; w[2] = copy_w(0);
		hi[2] = copy_hi(0); mark[2] = mark[0]; tidy() }
	:: d_step { st[2] == UNBORN && st[1] != NEW ->
		st[2] = NEW; name[2] = copy_name(1); sec[2] = sec[1]; w[2] = copy_w(1);
		hi[2] = copy_hi(1); mark[2] = mark[1]; tidy() }

#endif

	/* the store: a backup; down; back with its data, without it, or as
	 * the backup (a restore, a failover to a replica that missed writes);
	 * its data lost while it runs (a FLUSHALL, an eviction) */
#ifndef NO_BACKUP
	:: d_step { !down -> save(); tidy() }
#endif
	:: d_step { !down -> down = 1; tidy() }
	:: d_step { down -> down = 0; restarted; tidy() }
	:: d_step { down -> down = 0; wipe(); tidy() }
	:: d_step { down && snap -> down = 0; load(); restarted; tidy() }
#ifdef OUT_REWIND_SAME
	/* the store put back to the backup under the same run, unseen */
	:: d_step { !down && snap -> load(); rec = 1; tidy() }
#endif
	:: d_step { !down -> wipe(); tidy() }

#ifndef NO_ADMIN
	/* the administrator frees an id, of a server gone or not */
	:: d_step { !down && h[0] != 0 -> h[0] = 0; tidy() }
	:: d_step { !down && h[1] != 0 -> h[1] = 0; tidy() }

#endif

#ifndef NO_MEMBER
	/* the fleet member: its own name, and each server's, with its own
	 * secret or one it learnt */
	MEMBER_AS(MEMBER, MEMBER)
	MEMBER_AS(1, MEMBER)
	MEMBER_AS(2, MEMBER)
	MEMBER_AS(3, MEMBER)
	:: d_step { leaked[1] -> AS(1, 1); c_perm = 0; claim(NONE); tidy() }
	:: d_step { leaked[1] -> AS(1, 1); release(0); tidy() }
	:: d_step { leaked[1] -> AS(1, 1); release(1); tidy() }
	:: d_step { leaked[2] -> AS(2, 2); c_perm = 0; claim(NONE); tidy() }
	:: d_step { leaked[2] -> AS(2, 2); release(0); tidy() }
	:: d_step { leaked[2] -> AS(2, 2); release(1); tidy() }
#endif
	od
}
