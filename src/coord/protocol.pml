/*
 * protocol.pml
 *	  The worker-id protocol of snowid as a model for the SPIN model checker
 *	  (Promela): servers that claim worker ids for good or on lease, renew,
 *	  release, check in and re-assert, stop, crash, freeze and thaw, and are
 *	  copied; a store (the Redis library src/redis/snowid.lua, or the
 *	  coordination database sql/snowid_coordinator--1.1.sql: both keep the
 *	  same rules) that loses its data, rolls back to an earlier state, or
 *	  fails over to a replica that missed writes; clocks that differ within
 *	  the declared margin and step; and another member of the fleet that
 *	  calls the store's entry points under any holder name with any values.
 *
 *	  Checked: no two servers issue with one worker id in overlapping
 *	  milliseconds.  Each rule names the function it stands for.  Every fix
 *	  of the past is on; each can be switched off with -DNO_FIX_... to show
 *	  that the checker finds the path it closed (test/t/coordinator/protocol_model.pl,
 *	  doc/internals.md "The protocol, model checked").
 *
 *	  Run it (every fix on; the configurations and depths searched to
 *	  their end are in doc/internals.md):
 *		spin -a -DNO_IMP -DNO_OFFLINE -DNO_REWIND_SAME src/coord/protocol.pml
 *		cc -O2 -DSAFETY -DCOLLAPSE -DREACH -DMEMLIM=9500 -o pan pan.c
 *		./pan -E -m12 -w26
 *	  (10 steps: depth first, -m counts two more than the steps; breadth
 *	  first, -DBFS, one more); -DSYMMETRY (with every fix on) takes the
 *	  servers that have run as interchangeable, about half the states at
 *	  8 steps (doc/internals.md: how deep this reaches, and why 20 steps
 *	  do not fit)
 *	  and with a fix off, e.g. spin -a -DNO_FIX_COPY_INSTANCE ...; a trail
 *	  is shown with spin -t protocol.pml (its lines "STEP ..."), which
 *	  test/protocol-trail turns into test/protocol-search's steps.
 *
 * Time.  One clock, the store's, counts abstract milliseconds from 1 to
 * TMAX; a server's clock is the store's plus its skew (-1, 0 or +1: every
 * clock, the store's too, within the margin M = 1 of every other).  Ids are
 * compared by their millisecond: a server issues "at m".
 *
 * The invariant.  No two servers issue with one worker id in one
 * millisecond: when a server issues with w, none of the milliseconds it may
 * issue at now (past its generator, its floor and its clock, up to its
 * clock plus its drift budget, and on lease below its fence) holds an id
 * another server issued with w.  It issues at the lowest or the highest of
 * them (with a drift budget of 1, these are all).  (A stronger check, that
 * each issues above every millisecond another issued with w, is wrong: a
 * lease holder may go on below its fence after the next holder started
 * above it.)
 *
 * A second assertion, for what a fleet member may declare (issue 55,
 * finding 3): a quiet period lasts at most QLIM and its floor lies at most
 * MLIM + QLIM past its end.
 */

/* ---- sizes and settings (override with -D) ----
 * Small numbers of the model's own, in its abstract milliseconds: not the
 * protocol's, which snowid's C headers define and the stores take at
 * build (test/tools/protocol).  Where a bound stands for one of those, its
 * comment names the constant. */
#define NS 3			/* server slots: two, and a third or a copy */
#ifndef NW
#define NW 2			/* worker ids 0 .. NW-1 (the stores take up to
					 * SNOWID_MAX_ID) */
#endif
#ifndef TMAX
#define TMAX 9			/* the store's clock runs from 1 to TMAX */
#endif
#ifndef LEASE
#define LEASE 2			/* snowid.worker_lease (at most
					 * SNOWID_MAX_LEASE_MS) */
#endif
#ifndef DRIFT
#define DRIFT 1			/* snowid.max_drift_ms (at most
					 * SNOWID_MAX_DRIFT_MS) */
#endif
#ifndef CHECKIN
#define CHECKIN 1		/* snowid.checkin_interval (at most
					 * SNOWID_CHECKIN_INTERVAL_MAX_MS) */
#endif
#ifndef CMAX
#define CMAX 7			/* the state record's counter is bounded here
					 * (the stores' bound: SNOWID_STATE_MAX) */
#endif
#ifndef FMAX
#define FMAX 2			/* how often the store may forget in one run */
#endif
#define M 1				/* snowid.clock_margin, of every server */
#ifndef FAR
#define FAR 6			/* a clock step past the margin (-DNO_PAST_MARGIN:
					 * none) */
#endif
/* the quiet period a server declares: a check-in interval or a lease, plus
 * its drift budget, plus 1 (snowid.coordinator_timeout_ms is 0 here, the 1
 * stands for SNOWID_QUIET_MARGIN_MS); QPERM, the least of this fleet,
 * stands for SNOWID_QUIET_DECLARED_MIN_MS, QLIM, the most, for
 * SNOWID_QUIET_DECLARED_MAX_MS, and MLIM, the widest clock margin, for
 * SNOWID_CLOCK_MARGIN_MAX_MS (a generation seen is bounded by the store's
 * clock plus it) */
#define QPERM (CHECKIN + DRIFT + 1)
#define QLEASE (LEASE + DRIFT + 1)
#define QLIM (QLEASE > QPERM -> QLEASE : QPERM)
#define MLIM M
#define HUGE 60			/* what a fleet member may send out of bounds (a
					 * time up to SNOWID_END_UNIX_MS) */

#define NONE 255		/* no worker id, no server */
#define IMP (NS + 1)	/* the other fleet member's token and secret (a
					 * server's are 1 .. NS) */
#define IMPNAME (NS + 1)	/* the holder name it makes up */

/* server states */
#define UNBORN 0		/* a slot not used yet (a copy may start in it) */
#define NEW 1			/* made, never started (a fresh server, or a standby) */
#define RUN 2
#define FROZEN 3		/* SIGSTOP, a VM paused: neither renews nor issues */
#define DOWN 4			/* stopped cleanly or crashed */

/* replies of the store */
#define OK 0
#define REFUSED 1		/* SNOWID_FENCED, SNOWID_CONFLICT, _HOLDS_OTHER, _ALL_HELD */
#define QUIET 2			/* SNOWID_QUIET */
#define LOST 3			/* SNOWID_LOST (renewal) */
#define WRONG 4			/* SNOWID_WRONG_SECRET, SNOWID_USAGE */

/* ---- the store (one datacenter) ---- */
byte now = 1;
byte hold[NW];			/* holder name of w (0: none) */
bit hlease[NW];			/* held on lease ("lease <name>") */
byte lexp[NW];			/* the lease's expiry, the store's clock */
byte lfloor[NW];		/* the floor the lease was granted with */
byte ltok[NW];			/* the token of the claim that made the lease */
byte fence[NW];
byte reg[NS + 2];		/* the secret registered for a holder name (0: none) */
bit has_rec = 1;		/* the state record (new_datacenter() made it) */
bit rec_run = 1;		/* written under the store's run of now */
byte gen = 1;
byte counter;
byte qfrom;
byte qtil;
byte qfloor;
byte longest;
byte widest;

/* an earlier state of the store (a backup, a replica) */
bit snap_ok;
byte s_hold[NW];
bit s_hlease[NW];
byte s_lexp[NW];
byte s_lfloor[NW];
byte s_ltok[NW];
byte s_fence[NW];
byte s_reg[NS + 2];
bit s_has_rec;
bit s_rec_run;
byte s_gen;
byte s_counter;
byte s_qfrom;
byte s_qtil;
byte s_qfloor;
byte s_longest;
byte s_widest;
bit desynced;			/* the standby stopped: every answer warns */
byte forgets;

/* ---- the servers ---- */
byte sst[NS];			/* UNBORN, NEW, RUN, FROZEN, DOWN */
bit slease[NS];			/* claims on lease (snowid.worker_lease) */
byte sid[NS];			/* its holder name */
byte ssec[NS];			/* its holder secret (a copy keeps it) */
bit third;				/* the last slot holds a third server, not a copy */
bit sran[NS];			/* it ever ran */
byte sw[NS];			/* the worker id it issues with, or NONE */
byte sfloor[NS];		/* its ids start at or above this */
byte sfence[NS];		/* a lease holder issues below this */
byte sdead[NS];			/* its lease ends here by its own clock */
byte spos[NS];			/* the generator: the last millisecond issued */
byte sskew[NS];			/* clock - store clock + 1 */
bit sck[NS];			/* it checked in since the clock last moved */
byte scache[NS];		/* the worker id its cache file names, or NONE */
byte sgen[NS];			/* the state record it saw last (0: none) */
byte scnt[NS];
byte sconf[NS];		/* confirmed_ms: when it sent its last granted
				 * call, kept with its cache file */
bit sout[NS];			/* its clock stepped FAR forward, past the margin */
byte sleast[NS];		/* the least offset of its clock from the store's
				 * seen in this run, plus 1 (as sskew) */

/* ---- what was issued: bit m of issued[s * NW + w], server s issued
 *      with w at m ---- */
int issued[NS * NW];

/* ---- a call's numbers and reply: locals of world() (below), reset by
 *      scrub() at the end of every step ---- */

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))
#define clock(s) (now + sskew[s] - 1 + (sout[s] -> FAR : 0))
#define offset(s) (sskew[s] + (sout[s] -> FAR : 0))
#define anyout (sout[0] || sout[1] || sout[2])
#define live(w) (hold[w] != 0 && (hlease[w] == 0 || lexp[w] > now))

/* retire() of snowid.lua, retire() of snowid_coordinator: the fence raised
 * first, then the holder removed */
inline retire(w, v)
{
	fence[w] = max(fence[w], v);
	hold[w] = 0;
	hlease[w] = 0;
	lexp[w] = 0;
	lfloor[w] = 0;
	ltok[w] = 0
}

/* check_secret() and register_secret() of snowid.lua, check_holder() of
 * snowid_coordinator: a holder name's first granted call registers its
 * secret; a call with another is refused */
#ifdef NO_FIX_HOLDER_SECRET
#define secret_ok (1)
#else
#define secret_ok (reg[c_name] == 0 || reg[c_name] == c_sec)
#endif
#define register_secret reg[c_name] = (reg[c_name] == 0 -> c_sec : reg[c_name])

/* told() of snowid.lua, the checks of snowid_coordinator's arguments:
 * every number a caller declares is bounded (issue 55, finding 3) */
#ifdef NO_FIX_BOUNDS
#define told_ok (1)
#else
#define told_ok (c_q <= QLIM && c_m <= MLIM && c_sg <= now + MLIM + FMAX && \
	c_conf <= now + MLIM)
#endif

/* A quiet period lasts at least the least a real server declares (a
 * check-in interval, its drift budget and 1): a declared quiet_ms, however
 * short, cannot end or shorten one */
#ifdef NO_FIX_QUIET_LEAST
#define quiet_least(q) (q)
#else
#define quiet_least(q) max(q, QPERM)
#endif

/* recall() of snowid.lua, recall() of snowid_coordinator: whether the
 * store may have forgotten, the quiet period started or lengthened, its
 * floor raised; the counter moved up */
inline recall()
{
	longest = max(longest, quiet_least(c_q));
	widest = max(widest, c_m);
	forgot = 0;
	if
	:: !has_rec ->
#ifdef NO_FIX_RECALL_EMPTY
		/* no record taken as a brand-new datacenter */
		has_rec = 1; rec_run = 1; gen = max(gen + 1, now); counter = 0;
		qfrom = now; qtil = now; qfloor = 0
#else
		forgot = 1
#endif
	:: else
	fi;
#ifndef NO_FIX_RECALL_RUN
	if
	:: has_rec && !rec_run -> forgot = 1
	:: else
	fi;
#endif
	if
	:: has_rec && c_sg > gen -> forgot = 1
#ifndef NO_FIX_RECALL_COUNTER
	:: has_rec && c_sg != 0 && c_sg == gen && c_sc > counter -> forgot = 1
#endif
	:: else
	fi;
	if
	:: forgot ->
		gen = max(max(now, gen + 1), c_sg + 1);
		has_rec = 1; rec_run = 1;
		qfrom = now; qtil = now + longest; counter = 0
	:: else ->
		if
		:: qtil > now && qfrom + longest > qtil -> qtil = qfrom + longest
		:: else
		fi
	fi;
	if
	:: qtil > now -> qfloor = max(qfloor, qtil + widest + (qtil - qfrom))
	:: else
	fi;
	quiet = (qtil > now)
}

/* new_floor() of snowid.lua: the floor of a grant that is not a
 * re-assertion */
#define new_floor(w) max(fence[w], qfloor)

/* the reply's state record, and whether it warns (after desync) */
inline answer()
{
	r_warned = desynced
}

/* The shape of a call: refused for its secret or its numbers, else the
 * forgetting rule first.  The bound on the counter bounds the search. */
#define call_ok (secret_ok && told_ok)

/* pick() of snowid.lua, pick() of snowid_coordinator: the preferred id if
 * free, else the lowest free one; free is not live (or mine) and fenced no
 * later than usable.  NONE if there is none (refused). */
#ifdef NO_FIX_PERM_FENCE
#define perm_free(w) (!live(w))
#else
#define perm_free(w) (!live(w) && fence[w] <= c_usable)
#endif
inline pick_perm()
{
	keep = NONE;
	if
	:: c_prefer <= c_max && perm_free(c_prefer) -> keep = c_prefer
	:: else ->
		for (i : 0 .. NW - 1) {
			if
			:: keep == NONE && i <= c_max && perm_free(i) -> keep = i
			:: else
			fi
		}
	fi
}

/* A claim names the id it re-asserts: a check-in its want (the id it
 * issues with), a restart its cache file's id (prefer, with reassert) */
#define named (keep == c_want || c_reassert && keep == c_prefer)

/* stale() of snowid.lua and of snowid_coordinator, the confirmed
 * re-assertion: a restart's re-assertion sends confirmed_ms, its own clock
 * when it sent its last granted call (a check-in sends none).  After a
 * loss (the record's quiet period from qfrom to qtil, qtil > qfrom) it is
 * the holder's own only if
 *	confirmed_ms >= qfrom - min(qtil - qfrom, its quiet_ms) + widest
 * else a new claim: refused as quiet in the quiet period, above the floor
 * after it.  Before, a cache file's id the store held (gone back to a
 * backup) was the holder's own however long before the loss the holder
 * stopped, while another that took the id since issued with it */
#ifdef NO_FIX_CONFIRMED_REASSERT
#define confirmed (1)
#else
#define confirmed (c_want != NONE || qtil <= qfrom || \
	c_conf >= qfrom - min(qtil - qfrom, c_q) + widest)
#endif

/* claim() of snowid.lua, claim() of snowid_coordinator: a claim for good,
 * the check-in (c_want: the id it issues with, re-asserted) and the
 * re-assertion of the cached id (c_prefer) */
inline claim()
{
	r = OK;
	if
	:: !call_ok -> r = WRONG
	:: else ->
		recall();
		keep = NONE;
		for (i : 0 .. NW - 1) {
			if
			:: keep == NONE && i <= c_max && hold[i] == c_name && !hlease[i] -> keep = i
			:: else
			fi
		};
		if
		:: c_want != NONE ->
			if
			:: keep != NONE && keep != c_want -> r = REFUSED	/* HOLDS_OTHER */
			:: keep == NONE && live(c_want) ->
				r = (quiet && !c_reassert -> QUIET : REFUSED)	/* CONFLICT */
			:: else -> keep = c_want
			fi
		:: c_want == NONE && keep == NONE ->
			pick_perm();
			if
			:: keep == NONE -> r = REFUSED	/* ALL_HELD, FENCED */
			:: else
			fi
		:: else
		fi;
		if
		:: r == OK ->
			/* held: the store has this very claim; a check-in re-asserts
			 * the id it issues with; a restart its cached id */
			tmp = (hold[keep] == c_name && !hlease[keep]);
			if
			:: quiet && !(tmp && !named) && !(c_reassert && named && confirmed) ->
				r = QUIET
			:: else ->
#ifdef NO_FIX_PERM_FENCE
				r_floor = 0;
#else
				if
#ifndef NO_FIX_HELD_QUIET
				/* claim() of both stores (found by this model): during a
				 * quiet period, a claim of an id the store holds for the
				 * claimant that the claimant does not name (a check-in its
				 * want, a restart its cache file's id) is no re-assertion:
				 * what the store holds may be what it went back to.  The
				 * stores refuse it as quiet; the model grants it at the
				 * quiet floor, which the search shows is as safe */
				:: quiet && tmp && !named -> r_floor = new_floor(keep)
#endif
				/* a restart's re-assertion the store holds, confirmed too
				 * long before the loss: a new claim, above the floor */
				:: tmp && named && !confirmed -> r_floor = new_floor(keep)
				:: tmp || (c_reassert && keep == c_want) -> r_floor = fence[keep]
#ifdef NO_FIX_STALE_CACHE
				:: c_reassert && keep == c_prefer -> r_floor = fence[keep]
#else
				/* a restart's confirmed re-assertion of its cache file's
				 * id that the store no longer holds (it lost it): the id's
				 * fence, as both stores grant it (claim(): a re-assertion
				 * not stale() starts at fence(keep), held or not) */
				:: c_reassert && keep == c_prefer && confirmed -> r_floor = fence[keep]
#endif
				:: else -> r_floor = new_floor(keep)
				fi;
#endif
				if
				:: r_floor > c_usable ->
					r = (r_floor > fence[keep] -> QUIET : REFUSED)	/* too_far() */
				:: else ->
					/* give_up_others(): its other ids retired past usable */
					for (i : 0 .. NW - 1) {
						if
						:: i != keep && hold[i] == c_name && !hlease[i] ->
							retire(i, c_usable + 1)
						:: else
						fi
					};
					if
					:: hold[keep] != 0 && !tmp -> retire(keep, 0)
					:: else
					fi;
					if
					:: !tmp -> counter++
					:: else
					fi;
					hold[keep] = c_name;
					hlease[keep] = 0;
					register_secret;
					r_w = keep;
#ifndef NO_FIX_PERM_FENCE
					r_floor = max(r_floor, fence[keep])
#else
					skip
#endif
				fi
			fi
		:: else
		fi
	fi;
	answer()
}

/* lease_claim() of snowid.lua, lease_claim() of snowid_coordinator */
inline lease_claim()
{
	r = OK;
	if
	:: !call_ok -> r = WRONG
	:: else ->
		recall();
		keep = NONE;
		/* its own lease (even one run out), if it can start above */
		for (i : 0 .. NW - 1) {
			if
			:: keep == NONE && hold[i] == c_name && hlease[i] &&
			   new_floor(i) <= c_usable -> keep = i
			:: else
			fi
		};
		/* a server moved from a claim for good onto a lease */
		for (i : 0 .. NW - 1) {
			if
			:: keep == NONE && hold[i] == c_name && !hlease[i] &&
			   new_floor(i) <= c_usable -> keep = i
			:: else
			fi
		};
		if
		:: keep == NONE && quiet -> r = QUIET
		:: keep == NONE && !quiet ->
			for (i : 0 .. NW - 1) {
				if
				:: keep == NONE && (!live(i) || (hold[i] == c_name && hlease[i])) &&
				   fence[i] <= c_usable -> keep = i
				:: else
				fi
			};
			if
			:: keep == NONE -> r = REFUSED
			:: keep != NONE && new_floor(keep) > c_usable -> r = QUIET
			:: else
			fi
		:: else
		fi;
		if
		:: r == OK ->
			for (i : 0 .. NW - 1) {
				if
				:: i != keep && hold[i] == c_name && hlease[i] -> retire(i, 0)
				:: i != keep && hold[i] == c_name && !hlease[i] ->
					tmp = max(c_client, c_usable + 1);
					retire(i, tmp)
				:: else
				fi
			};
			if
			:: hold[keep] != 0 && !(hold[keep] == c_name && hlease[keep]) -> retire(keep, 0)
			:: else
			fi;
			r_floor = new_floor(keep);
			r_fence = max(c_client, r_floor) + LEASE;
			hold[keep] = c_name;
			hlease[keep] = 1;
			lexp[keep] = now + LEASE;
			lfloor[keep] = r_floor;
			ltok[keep] = c_tok;
			fence[keep] = max(fence[keep], r_fence);
			counter++;
			register_secret;
			r_w = keep
		:: else
		fi
	fi;
	answer()
}

/* lease_floor() of snowid.lua: the lease of w is this claim's */
#define mine(w) (hold[w] == c_name && hlease[w] && ltok[w] == c_tok)

/* lease_renew() of snowid.lua, lease_renew() of snowid_coordinator.  A
 * renewal of a lease the store does not hold as live is refused, in a
 * quiet period too (issue 55, finding 1); before, a lease run out was
 * renewed while the store still named its holder, and a forgotten one made
 * again in a quiet period, its floor least(client, want) (finding 4) */
inline lease_renew()
{
	r = OK;
	if
	:: !call_ok -> r = WRONG
	:: else ->
		recall();
#ifdef NO_FIX_RENEW_LIVE
		if
		:: mine(c_w) -> r_floor = lfloor[c_w]
		:: !mine(c_w) && quiet &&
		   (hold[c_w] == c_name && hlease[c_w] ||
		    !live(c_w) && fence[c_w] <= c_client) ->
			if
			:: hold[c_w] != 0 && !(hold[c_w] == c_name && hlease[c_w]) -> retire(c_w, 0)
			:: else
			fi;
#ifdef NO_FIX_FENCE_LOWER
			r_floor = min(c_client, c_usable);
#else
			r_floor = max(min(c_client, c_usable), fence[c_w]);
#endif
			/* no call lowers a fence: a lease made again starts at or
			 * above the id's fence, which its release goes back to
			 * (issue 55, finding 4) */
			assert(r_floor >= fence[c_w]);
			hold[c_w] = c_name;
			hlease[c_w] = 1
		:: else -> r = LOST
		fi;
#else
		if
		:: mine(c_w) && lexp[c_w] > now -> r_floor = lfloor[c_w]
		:: else -> r = LOST
		fi;
#endif
		if
		:: r == OK ->
			lexp[c_w] = now + LEASE;
			lfloor[c_w] = r_floor;
			ltok[c_w] = c_tok;
			fence[c_w] = max(fence[c_w], c_usable);	/* the fence wanted */
			r_fence = fence[c_w];
			counter++;
			register_secret
		:: else
		fi
	fi;
	answer()
}

/* lease_release() of snowid.lua, lease_release() of snowid_coordinator:
 * only that claim's holder lowers the fence, never below its floor */
inline lease_release()
{
	r = OK;
	if
	:: !secret_ok -> r = WRONG
	:: secret_ok && !mine(c_w) -> r = LOST
	:: else ->
		tmp = max(c_final, lfloor[c_w]);
		fence[c_w] = tmp;
		retire(c_w, tmp);
		register_secret
	fi;
	answer()
}

/* ---- the invariant ---- */
inline bounds_hold()
{
	assert(!(qtil > now) || (qtil - qfrom <= QLIM && qfloor <= qtil + MLIM + QLIM))
}

/* The generator (src/core/generator.c) issues with w at m, chosen in
 * lo .. hi, all of which it may issue at now: no other server may have
 * issued with w in any of them */
#define range(lo, hi) ((1 << ((hi) + 1)) - (1 << (lo)))
inline issue_at(s, lo, hi, m)
{
	for (i : 0 .. NS - 1) {
		assert(i == s || (issued[i * NW + sw[s]] & range(lo, hi)) == 0)
	};
	issued[s * NW + sw[s]] = issued[s * NW + sw[s]] | (1 << m);
	spos[s] = m
}

/* A server's numbers on a call (snowid_coord_request() of
 * src/coord/request.c, snowid_lease_request() of src/coord/lease.c) */
inline request(s)
{
	c_name = sid[s];
	c_sec = ssec[s];
	c_tok = s + 1;
	c_q = (slease[s] -> QLEASE : QPERM);
	c_m = M;
	c_sg = sgen[s];
	c_sc = scnt[s];
	c_max = NW - 1;
	c_usable = max(clock(s) + DRIFT, spos[s]);
	c_client = spos[s]
}

/* snowid_recall_note() of src/coord/recall.c: the state record seen */
#define note(s) if :: r == OK -> sgen[s] = gen; scnt[s] = counter :: else fi

/* A server's answer taken as granted.  An answer that warns (the store's
 * synchronous standby may not have it) is a failure (issue 42); before, it
 * was taken as granted. */
#ifdef NO_FIX_SYNC_WARN
#define granted (r == OK)
#else
#define granted (r == OK && !r_warned)
#endif

/* confirmed_ms kept (src/coord/recall.c): the store's time at the send
 * of a granted call (the monotonic clock, which no step of the wall clock
 * moves) plus the least offset of its clock from it seen in this run, at
 * its start and at each granted call's send; at a start, one past its
 * clock is sent as 0.  Before (the third attack on issue 55), the largest
 * clock any granted call was sent at, across stops and starts: a clock
 * stepped past the margin while one call was granted, then put right, left
 * it that far ahead, and a restart's re-assertion passed stale() long
 * after its holder stopped */
#ifdef NO_FIX_CONFIRMED_BOUNDED
#define confirm(s) if :: granted -> sconf[s] = max(sconf[s], clock(s)) :: else fi
#define confirm_start(s) skip
#else
#define confirm(s) \
	if \
	:: granted -> sleast[s] = min(sleast[s], offset(s)); \
		sconf[s] = now + sleast[s] - 1 \
	:: else \
	fi
#define confirm_start(s) \
	sleast[s] = offset(s); \
	if \
	:: sconf[s] > clock(s) -> sconf[s] = 0 \
	:: else \
	fi
#endif

/* Drops the worker id (a lost lease, a refused check-in) */
inline drop(s)
{
	sw[s] = NONE;
	sfence[s] = 0;
	sdead[s] = 0
}

/* ---- copies of the store's state ---- */
inline save_store()
{
	for (i : 0 .. NW - 1) {
		s_hold[i] = hold[i]; s_hlease[i] = hlease[i]; s_lexp[i] = lexp[i];
		s_lfloor[i] = lfloor[i]; s_ltok[i] = ltok[i]; s_fence[i] = fence[i]
	};
	for (i : 0 .. NS + 1) {
		s_reg[i] = reg[i]
	};
	s_has_rec = has_rec; s_rec_run = rec_run; s_gen = gen; s_counter = counter;
	s_qfrom = qfrom; s_qtil = qtil; s_qfloor = qfloor; s_longest = longest;
	s_widest = widest;
	snap_ok = 1
}

inline load_store()
{
	for (i : 0 .. NW - 1) {
		hold[i] = s_hold[i]; hlease[i] = s_hlease[i]; lexp[i] = s_lexp[i];
		lfloor[i] = s_lfloor[i]; ltok[i] = s_ltok[i]; fence[i] = s_fence[i]
	};
	for (i : 0 .. NS + 1) {
		reg[i] = s_reg[i]
	};
	has_rec = s_has_rec; rec_run = s_rec_run; gen = s_gen; counter = s_counter;
	qfrom = s_qfrom; qtil = s_qtil; qfloor = s_qfloor; longest = s_longest;
	widest = s_widest
}

inline clear_snapshot()
{
	for (i : 0 .. NW - 1) {
		s_hold[i] = 0; s_hlease[i] = 0; s_lexp[i] = 0;
		s_lfloor[i] = 0; s_ltok[i] = 0; s_fence[i] = 0
	};
	for (i : 0 .. NS + 1) {
		s_reg[i] = 0
	};
	s_has_rec = 0; s_rec_run = 0; s_gen = 0; s_counter = 0;
	s_qfrom = 0; s_qtil = 0; s_qfloor = 0; s_longest = 0; s_widest = 0;
	snap_ok = 0
}

/* A permanent holder checks in every CHECKIN (src/coord/checkin.c): the
 * clock does not move past a holder for good that has not (doc/internals.md:
 * a holder cut off longer is not covered).  A lease holder needs no such
 * rule: its fence covers what it issues. */
#define checked_in(s) (sw[s] == NONE || slease[s] || sck[s])

/* a lease holder past its own deadline holds no lease to give back */
#ifdef NO_FIX_OWN_DEADLINE
#define may_release(s) (1)
#else
#define may_release(s) (now < sdead[s])
#endif

/* Every clock within the margin of every other */
#define skew_ok(s, v) ((v) <= 2 && \
	(sst[((s) + 1) % NS] == UNBORN || (v) <= sskew[((s) + 1) % NS] + 1 && sskew[((s) + 1) % NS] <= (v) + 1) && \
	(sst[((s) + 2) % NS] == UNBORN || (v) <= sskew[((s) + 2) % NS] + 1 && sskew[((s) + 2) % NS] <= (v) + 1))

/* The lowest and highest millisecond server s may issue at now (snowid_next()
 * of src/core/generator.c): past its generator and its floor, up to its
 * clock plus its drift budget, and on lease below its fence */
#define issue_lo(s) max(max(spos[s] + 1, sfloor[s]), clock(s))
#define issue_hi(s) (slease[s] && clock(s) + DRIFT >= sfence[s] -> sfence[s] - 1 : clock(s) + DRIFT)
/* whether server s may issue now: running with a worker id, its clock
 * within the margin (one past it only checks in, stops or crashes, as
 * test/protocol-search's, so that only what its granted calls leave
 * behind counts), and a millisecond left to issue at */
#define issues(s) (sst[s] == RUN && sw[s] != NONE && !sout[s] && issue_lo(s) <= issue_hi(s))

#define trail(x) printf x

/* ---- the end of every step ----
 *
 * The invariant, one step ahead (no_overlap()): a server whose issue step
 * is enabled may issue at any millisecond from issue_lo to issue_hi (with
 * a drift budget of 1, the two the model's issue steps take).  If one of
 * them holds an id another server issued with its worker id, its next
 * step may issue there; if two such servers, with one worker id, may
 * issue at one millisecond, one issues there and then the other (an issue
 * changes no other server's range).  Either is the violation the issue
 * step's assertion checks, one or two steps later, so a search finds a
 * path one or two steps shorter: it is found in a state reached in fewer
 * steps, never in one from which it cannot be reached. */
inline no_overlap()
{
	for (i : 0 .. NS - 1) {
		if
		:: issues(i) ->
			lo = issue_lo(i);
			hi = issue_hi(i);
			for (j : 0 .. NS - 1) {
				assert(j == i || (issued[j * NW + sw[i]] & range(lo, hi)) == 0);
				assert(j == i || !(issues(j) && sw[j] == sw[i] &&
					issue_lo(j) <= hi && lo <= issue_hi(j)))
			}
		:: else
		fi
	}
}

/* Dead values reset (doc/internals.md, "The protocol, model checked", on
 * why each is sound): a value no later step can read, or can read only
 * through a comparison whose outcome the reset keeps, is set to 0, so that
 * states that differ only there are one.
 * - lexp[w], s_lexp[w] at or before now: read only as "lexp > now" (live(),
 *   lease_renew()), false from now on, for 0 too; a snapshot's after its
 *   load, when the clock is no earlier.
 * - sdead[s] at or before now: read only as now >= sdead, now < sdead.
 * - sfloor[s] without a worker id: each grant sets it before it is read.
 * - sck[s] without a worker id or on lease: read by checked_in() only of a
 *   holder for good, and set by each grant for good.
 * - sconf[s] while its cache file names no id: sent only with a cache
 *   file's id, and set by each grant that writes one (a copy takes both);
 *   not with NO_FIX_CONFIRMED_BOUNDED, which keeps the largest.
 * - sleast[s] of a server not running: each start sets it.
 * - issued[] before now - 1: every server's clock is at least now - 1, so
 *   no issue range reaches below it.
 * Then the call's scratch variables (scrub()), which every step writes
 * before it reads them. */
inline forget_dead()
{
	for (i : 0 .. NW - 1) {
		if
		:: lexp[i] <= now -> lexp[i] = 0
		:: else
		fi;
		if
		:: s_lexp[i] <= now -> s_lexp[i] = 0
		:: else
		fi
	};
	for (i : 0 .. NS - 1) {
		if
		:: sdead[i] <= now -> sdead[i] = 0
		:: else
		fi;
		if
		:: sw[i] == NONE -> sfloor[i] = 0
		:: else
		fi;
		if
		:: sw[i] == NONE || slease[i] -> sck[i] = 0
		:: else
		fi;
#ifndef NO_FIX_CONFIRMED_BOUNDED
		if
		:: scache[i] == NONE -> sconf[i] = 0
		:: else
		fi;
#endif
		if
		:: sst[i] != RUN -> sleast[i] = 0
		:: else
		fi;
		for (j : 0 .. NW - 1) {
			issued[i * NW + j] = issued[i * NW + j] & ~((1 << (now - 1)) - 1)
		}
	}
}

inline scrub()
{
	c_name = 0; c_sec = 0; c_tok = 0; c_max = 0; c_want = 0; c_prefer = 0;
	c_reassert = 0; c_usable = 0; c_client = 0; c_q = 0; c_m = 0; c_sg = 0;
	c_sc = 0; c_w = 0; c_final = 0; c_conf = 0; r = 0; r_w = 0; r_floor = 0;
	r_fence = 0; r_warned = 0; quiet = 0; forgot = 0; keep = 0; tmp = 0;
	m = 0; lo = 0; hi = 0; i = 0; j = 0
}

/* Symmetry, by canonical state (-DSYMMETRY, for the searches with every
 * fix on): the servers that have run are interchangeable, so at the end of
 * every step they are sorted into an order fixed by what each holds, and
 * states that differ only in which slot holds which server are one.
 *
 * Why it keeps the search exhaustive.  Swapping slots a and b, and with
 * them the names, secrets and tokens a + 1 and b + 1 wherever the store or
 * a server keeps one (hold, reg by index and by value, ltok, sid, ssec, and
 * their snapshot copies), maps every state onto one that takes the same
 * steps to the same outcomes: each server's steps are one macro
 * instantiated for each slot, a server's name, secret and token are its
 * slot plus 1 (or, for a copy, its original's secret, renamed with it),
 * the store compares names, secrets and tokens only for equality, the
 * other member calls under every server's name alike, skew_ok() and
 * checked_in() take all the others, and the invariant (issue_at(),
 * no_overlap()) is over every pair.  What is not symmetric is left out:
 * in_order() is a symmetry of its own (server 1 starts only after server
 * 0 first ran, the third only after server 1), so only servers that have
 * run are sorted (in_order() holds for each of them, and for the next,
 * either way); the last slot's copy (made only there, its name NS and its
 * token NS fixed) is never moved; -DPAST_ONCE (only the first server's
 * clock steps past the margin) and -DIMP_AS_0 (the other member under the
 * first server's name alone) are refused.  A violation is found in the
 * swapped state at the same depth as in the state itself, so a search
 * bounded by depth covers what it covered without.  The sort only needs
 * to pick one state of each class for the reduction; any choice is sound.
 *
 * A trail of such a search may name a server by another slot after a
 * step; the searches for a path (117's rows) run without it. */
#ifdef SYMMETRY
#if defined(PAST_ONCE) || defined(IMP_AS_0)
#error "-DSYMMETRY takes servers alike: not with -DPAST_ONCE or -DIMP_AS_0"
#endif
#define RHO(v, x, y) ((v) == (x) -> (y) : ((v) == (y) -> (x) : (v)))
#define XSWAP(f, a, b) f[a] = f[a] ^ f[b]; f[b] = f[a] ^ f[b]; f[a] = f[a] ^ f[b]
/* tmp: 0 while equal, 1 if slot a sorts after slot b, 2 before */
#define KEY(f, a, b) if :: tmp == 0 && f[a] != f[b] -> tmp = (f[a] > f[b] -> 1 : 2) :: else fi
inline order_slots(a, b)
{
	tmp = 0;
	KEY(sst, a, b); KEY(slease, a, b); KEY(sw, a, b); KEY(scache, a, b);
	KEY(spos, a, b); KEY(sfloor, a, b); KEY(sfence, a, b); KEY(sdead, a, b);
	KEY(sskew, a, b); KEY(sck, a, b); KEY(sout, a, b); KEY(sconf, a, b);
	KEY(sleast, a, b); KEY(sgen, a, b); KEY(scnt, a, b);
	for (j : 0 .. NW - 1) {
		if
		:: tmp == 0 && issued[a * NW + j] != issued[b * NW + j] ->
			tmp = (issued[a * NW + j] > issued[b * NW + j] -> 1 : 2)
		:: else
		fi
	};
	if
	:: tmp == 1 ->
		XSWAP(sst, a, b); XSWAP(slease, a, b); XSWAP(sid, a, b); XSWAP(ssec, a, b);
		XSWAP(sran, a, b); XSWAP(sw, a, b); XSWAP(sfloor, a, b); XSWAP(sfence, a, b);
		XSWAP(sdead, a, b); XSWAP(spos, a, b); XSWAP(sskew, a, b); XSWAP(sck, a, b);
		XSWAP(scache, a, b); XSWAP(sgen, a, b); XSWAP(scnt, a, b); XSWAP(sconf, a, b);
		XSWAP(sout, a, b); XSWAP(sleast, a, b);
		for (j : 0 .. NW - 1) {
			XSWAP(issued, a * NW + j, b * NW + j);
			hold[j] = RHO(hold[j], a + 1, b + 1);
			s_hold[j] = RHO(s_hold[j], a + 1, b + 1);
			ltok[j] = RHO(ltok[j], a + 1, b + 1);
			s_ltok[j] = RHO(s_ltok[j], a + 1, b + 1)
		};
		for (j : 0 .. NS - 1) {
			sid[j] = RHO(sid[j], a + 1, b + 1);
			ssec[j] = RHO(ssec[j], a + 1, b + 1)
		};
		XSWAP(reg, a + 1, b + 1);
		XSWAP(s_reg, a + 1, b + 1);
		for (j : 0 .. NS + 1) {
			reg[j] = RHO(reg[j], a + 1, b + 1);
			s_reg[j] = RHO(s_reg[j], a + 1, b + 1)
		}
	:: else
	fi
}
inline canon()
{
	if
	:: sran[1] -> order_slots(0, 1)
	:: else
	fi;
	if
	:: third && sran[2] -> order_slots(1, 2); order_slots(0, 1)
	:: else
	fi;
	tmp = 0; j = 0
}
#else
#define canon() skip
#endif

inline step_done()
{
	no_overlap();
	forget_dead();
	scrub();
	canon()
}

/* ---- one server's steps ---- */

/* it starts (snowid_coord_install(), the lease renewer), for good or on
 * lease */
#define START(s, mode) \
	:: d_step { (sst[s] == NEW || sst[s] == DOWN) && !sout[s] && in_order(s) -> \
		slease[s] = mode; sst[s] = RUN; sran[s] = 1; drop(s); confirm_start(s); \
		trail(("STEP start %d %d\n", s, mode)); step_done() }

/* Symmetry, by construction: the servers are interchangeable (the same
 * settings, clocks and store; the other fleet member calls under each
 * one's name alike), so a search in which server 1 starts before server 0
 * (or the third before server 1) is one in which they swapped names.  A
 * server starts only after the one before it first started; a copy in the
 * last slot starts when it is made. */
#define in_order(s) ((s) == 0 || (s) == 1 && sran[0] || (s) == 2 && (!third || sran[1]))

/* a claim for good: snowid_worker_claim() of src/coord/worker.c */
#define CLAIM(s) \
	:: d_step { sst[s] == RUN && !sout[s] && sw[s] == NONE && !slease[s] && counter < CMAX -> \
		request(s); c_want = NONE; c_prefer = scache[s]; \
		c_reassert = (scache[s] != NONE); c_conf = sconf[s]; \
		claim(); note(s); confirm(s); \
		trail(("STEP claim %d -> %d %d\n", s, r, r_w)); \
		bounds_hold(); \
		if \
		:: granted -> sw[s] = r_w; sfloor[s] = r_floor; floor_on_disk(s); \
			scache[s] = r_w; sck[s] = 1 \
		:: r == REFUSED -> forget_cache(s) \
		:: else \
		fi; step_done() }

/* the store cannot be reached: the cached id, unconfirmed
 * (snowid_worker_from_cache() of src/coord/worker.c) */
#define OFFLINE(s) \
	:: d_step { sst[s] == RUN && !sout[s] && sw[s] == NONE && !slease[s] && scache[s] != NONE -> \
		sw[s] = scache[s]; sfloor[s] = 0; sck[s] = 1; \
		trail(("STEP offline %d %d\n", s, sw[s])); step_done() }

/* a lease claim: snowid_lease_claim() of src/coord/lease.c */
#define LEASE_CLAIM(s) \
	:: d_step { sst[s] == RUN && !sout[s] && sw[s] == NONE && slease[s] && counter < CMAX -> \
		request(s); lease_claim(); note(s); confirm(s); \
		trail(("STEP lease_claim %d -> %d %d\n", s, r, r_w)); \
		bounds_hold(); \
		if \
		:: granted -> sw[s] = r_w; sfloor[s] = r_floor; sfence[s] = r_fence; \
			sdead[s] = now + LEASE; moved_to_lease(s) \
		:: else \
		fi; step_done() }

/* ids issued (snowid_next() of src/core/generator.c): at the lowest or
 * the highest millisecond it may now */
#define ISSUE(s) \
	:: d_step { issues(s) -> \
		lo = issue_lo(s); hi = issue_hi(s); m = lo; \
		trail(("STEP issue %d %d %d lo\n", s, sw[s], m)); issue_at(s, lo, hi, m); step_done() } \
	:: d_step { issues(s) && issue_lo(s) < issue_hi(s) -> \
		lo = issue_lo(s); hi = issue_hi(s); m = hi; \
		trail(("STEP issue %d %d %d hi\n", s, sw[s], m)); issue_at(s, lo, hi, m); step_done() }

/* a renewal: snowid_lease_renew() of src/coord/lease.c; past its own
 * deadline it holds no lease, and claims anew (issue 55, finding 1) */
#define RENEW(s) \
	:: d_step { sst[s] == RUN && !sout[s] && sw[s] != NONE && slease[s] && counter < CMAX -> \
		if \
		:: past_deadline(s) -> trail(("STEP lapse %d\n", s)); drop(s) \
		:: else -> \
			request(s); c_w = sw[s]; \
			c_usable = max(spos[s] + 1, sfloor[s]) + LEASE; \
			lease_renew(); note(s); confirm(s); \
			trail(("STEP renew %d -> %d\n", s, r)); \
			bounds_hold(); \
			if \
			:: granted -> sfence[s] = r_fence; sdead[s] = now + LEASE \
			:: r == LOST -> drop(s) \
			:: else \
			fi \
		fi; step_done() }

/* a check-in: snowid_checkin() of src/coord/checkin.c; refused (the id
 * another's, or its holder secret not the one the store has for its name),
 * it stops issuing with the id at once and its cache file no longer names
 * it */
#define CHECK_IN(s) \
	:: d_step { sst[s] == RUN && sw[s] != NONE && !slease[s] && counter < CMAX -> \
		request(s); c_want = sw[s]; c_prefer = NONE; c_reassert = 1; \
		c_usable = max(spos[s], sfloor[s]); \
		claim(); note(s); confirm(s); \
		trail(("STEP checkin %d -> %d\n", s, r)); \
		bounds_hold(); \
		sck[s] = 1; \
		if \
		:: checkin_stops(r) -> refused_stop(s) \
		:: else \
		fi; step_done() }

/* a clean stop: snowid_lease_give_back() of src/coord/lease.c */
#define STOP(s) \
	:: d_step { sst[s] == RUN -> \
		if \
		:: sw[s] != NONE && slease[s] && may_release(s) -> \
			request(s); c_w = sw[s]; c_final = spos[s] + 1; lease_release() \
		:: else \
		fi; \
		drop(s); sst[s] = DOWN; \
		trail(("STEP stop %d\n", s)); step_done() }

/* a crash (kill -9, power lost) of a lease holder (a holder for good that
 * crashes is one that stops); its clock steps.  A frozen server (SIGSTOP,
 * a VM paused, for any length) is one that takes no step: nothing makes a
 * server act but a holder for good's check-in, which holds the clock */
#define CRASH_FREEZE(s) \
	:: d_step { sst[s] == RUN && sw[s] != NONE && slease[s] -> \
		drop(s); sst[s] = DOWN; trail(("STEP crash %d\n", s)); step_done() } \
	:: d_step { sst[s] != UNBORN && !sout[s] && skew_ok(s, sskew[s] + 1) -> \
		sskew[s]++; trail(("STEP clock %d +\n", s)); step_done() } \
	:: d_step { sst[s] != UNBORN && !sout[s] && sskew[s] > 0 && skew_ok(s, sskew[s] - 1) -> \
		sskew[s]--; trail(("STEP clock %d -\n", s)); step_done() }

/* its clock stepped forward past the margin (FAR ms), one server's at a
 * time, and put right: while past it, the server only checks in, stops or
 * crashes (as test/protocol-search's --clock-past-margin yes), so that
 * what its granted calls leave behind (confirmed_ms) is what counts */
#ifdef NO_PAST_MARGIN
#define PAST_MARGIN(s)
#else
/* -DPAST_ONCE: only the first server's clock, and once (a search for one
 * path) */
#ifdef PAST_ONCE
bit went_out;
#define may_go_out(s) ((s) == 0 && !went_out)
#define mark_out went_out = 1
#else
/* (this once set went_out, defined as sout[0]: any server's step past
 * the margin took the first server's clock past it too, and no other
 * server's went past it alone) */
#define may_go_out(s) (1)
#define mark_out skip
#endif
#define PAST_MARGIN(s) \
	:: d_step { sst[s] == RUN && !anyout && may_go_out(s) -> \
		sout[s] = 1; mark_out; trail(("STEP clock %d far %d\n", s, FAR)); step_done() } \
	:: d_step { sout[s] -> \
		sout[s] = 0; trail(("STEP clock %d right %d\n", s, FAR)); step_done() }
#endif

/* a copy of server s's data directory starts in the last slot as a server
 * of its own: its mark, cache file, secret and state file are s's; its
 * holder name gets a new instance (src/core/mark.c) */
/* the cache file names the claim with the holder name it was made under,
 * and a server takes it as its own only under that name
 * (snowid_cache_is_ours() of src/coord/worker.c): a copy under a new
 * instance neither re-asserts nor falls back to it */
#define cache_of_copy(s) \
	if \
	:: sid[NS - 1] == sid[s] -> scache[NS - 1] = scache[s]; sconf[NS - 1] = sconf[s] \
	:: else \
	fi
#define COPY(s) \
	:: d_step { sst[NS - 1] == UNBORN && sst[s] != UNBORN -> \
		sst[NS - 1] = NEW; spos[NS - 1] = spos[s]; \
		ssec[NS - 1] = ssec[s]; sgen[NS - 1] = sgen[s]; scnt[NS - 1] = scnt[s]; \
		sskew[NS - 1] = sskew[s]; sid[NS - 1] = copy_name(s); \
		cache_of_copy(s); \
		trail(("STEP copy %d\n", s)); step_done() }

#define SERVER(s) START_PERM(s) START_LEASE(s) CLAIM(s) OFFLINE_(s) LEASE_CLAIM(s) \
	ISSUE_(s) RENEW(s) CHECK_IN(s) STOP(s) CRASH_FREEZE_(s) PAST_MARGIN(s)

/* The kinds of steps a search leaves out (-DNO_PERM: no server claims for
 * good, -DNO_LEASE, -DNO_OFFLINE, -DNO_CHAOS: no crash, freeze or clock
 * step, -DNO_COPY, -DNO_IMP, -DNO_LOSE, -DNO_REWIND, -DNO_DESYNC; -DNO_ISSUE:
 * no issue step, the invariant then checked one step ahead alone;
 * -DNO_THIRD: no third server, the last slot a copy's), so that a search
 * for one path finds it in small steps */
#ifdef NO_PERM
#define START_PERM(s)
#else
#define START_PERM(s) START(s, 0)
#endif
#ifdef NO_LEASE
#define START_LEASE(s)
#else
#define START_LEASE(s) START(s, 1)
#endif
#ifdef NO_OFFLINE
#define OFFLINE_(s)
#else
#define OFFLINE_(s) OFFLINE(s)
#endif
#ifdef NO_ISSUE
#define ISSUE_(s)
#else
#define ISSUE_(s) ISSUE(s)
#endif
#ifdef NO_CHAOS
#define CRASH_FREEZE_(s)
#else
#define CRASH_FREEZE_(s) CRASH_FREEZE(s)
#endif

/* The fix switches of the servers' side */
#ifdef NO_FIX_FLOOR_ON_DISK
#define floor_on_disk(s) skip
#else
/* snowid_reserve_floor(): the mark past the floor before the cache file
 * names the id (test/t/coordinator/floor_on_disk.pl) */
#define floor_on_disk(s) spos[s] = max(spos[s], sfloor[s] - 1)
#endif
#ifdef NO_FIX_OWN_DEADLINE
#define past_deadline(s) (0)
#else
#define past_deadline(s) (now >= sdead[s])
#endif
#ifdef NO_FIX_STALE_CACHE
#define forget_cache(s) skip
#define moved_to_lease(s) skip
#else
#define forget_cache(s) scache[s] = NONE
#define moved_to_lease(s) scache[s] = NONE
#endif
/* issue 55, the attack report's finding 1: a check-in refused for its
 * secret counted as a store that did not answer */
#ifdef NO_FIX_WRONG_SECRET
#define checkin_stops(r) (r == REFUSED)
#else
#define checkin_stops(r) (r == REFUSED || r == WRONG)
#endif
#ifdef NO_FIX_REFUSED_STOP
#define refused_stop(s) skip
#else
#define refused_stop(s) drop(s); scache[s] = NONE
#endif
#if defined(NO_FIX_COPY_INSTANCE) && defined(NO_FIX_STANDBY_INSTANCE)
#define copy_name(s) sid[s]
#elif defined(NO_FIX_COPY_INSTANCE)
#define copy_name(s) (sran[s] -> sid[s] : NS)
#elif defined(NO_FIX_STANDBY_INSTANCE)
#define copy_name(s) (sran[s] -> NS : sid[s])
#else
#define copy_name(s) NS
#endif

/* ---- the other member of the fleet: calls under holder name n (a
 *      server's, or one it makes up) with its own secret and token ---- */
#define IMP_CALL(n) \
	c_name = n; c_sec = IMP; c_tok = IMP; c_sg = 0; c_sc = 0; c_client = 0; \
	c_q = QLIM; c_m = M; c_usable = now + M + DRIFT; c_max = NW - 1; \
	c_want = NONE; c_prefer = NONE; c_reassert = 0; \
	/* any confirmed_ms: the stores refuse one past their clock and the \
	 * margin, and now + M passes stale() as any later would */ \
	c_conf = now + M

#define IMP_NAMED(n) \
	/* a claim that re-asserts w as if its cache named it */ \
	:: d_step { counter < CMAX -> IMP_CALL(n); c_prefer = 0; c_reassert = 1; claim(); \
		trail(("STEP imp_claim %d 0 -> %d\n", n, r)); bounds_hold(); step_done() } \
	:: d_step { counter < CMAX -> IMP_CALL(n); c_prefer = 1; c_reassert = 1; claim(); \
		trail(("STEP imp_claim %d 1 -> %d\n", n, r)); bounds_hold(); step_done() } \
	/* a claim with max below the id n holds: retires it */ \
	:: d_step { counter < CMAX -> IMP_CALL(n); c_max = 0; claim(); \
		trail(("STEP imp_claim_max %d -> %d\n", n, r)); bounds_hold(); step_done() } \
	:: d_step { counter < CMAX -> IMP_CALL(n); lease_claim(); \
		trail(("STEP imp_lease_claim %d -> %d %d\n", n, r, r_w)); bounds_hold(); step_done() } \
	/* a renewal with least(client, want) 0, and a release to 0 */ \
	:: d_step { counter < CMAX -> IMP_CALL(n); c_w = 0; c_client = HUGE; c_usable = 0; \
		lease_renew(); trail(("STEP imp_renew %d 0 -> %d\n", n, r)); bounds_hold(); step_done() } \
	:: d_step { counter < CMAX -> IMP_CALL(n); c_w = 1; c_client = HUGE; c_usable = 0; \
		lease_renew(); \
		trail(("STEP imp_renew %d 1 -> %d\n", n, r)); bounds_hold(); step_done() } \
	:: d_step { IMP_CALL(n); c_w = 0; c_final = 0; lease_release(); \
		trail(("STEP imp_release %d 0 -> %d\n", n, r)); step_done() } \
	:: d_step { IMP_CALL(n); c_w = 1; c_final = 0; lease_release(); \
		trail(("STEP imp_release %d 1 -> %d\n", n, r)); step_done() }

/* the fleet's servers, made and never started */
inline setup()
{
	for (i : 0 .. NS - 1) {
		sst[i] = (i < NS - 1 -> NEW : UNBORN);
		sid[i] = i + 1;
		ssec[i] = i + 1;
		sw[i] = NONE;
		scache[i] = NONE;
		sskew[i] = 1
	}
}

active proctype world()
{
	/* a call's numbers and reply, and the generator's choice: scratch of
	 * one step, reset by scrub() at its end */
	byte c_name;			/* holder name */
	byte c_sec;				/* secret */
	byte c_tok;				/* token of a lease call */
	byte c_max;			/* claim: the highest worker id */
	byte c_want;			/* claim: explicit worker id (check-in) or NONE */
	byte c_prefer;			/* claim: the cached worker id or NONE */
	bit c_reassert;
	byte c_usable;			/* latest fence it can start above */
	byte c_client;			/* its generator */
	byte c_q;				/* quiet period declared */
	byte c_m;				/* clock margin declared */
	byte c_sg;				/* generation and counter seen (c_sg 0: none) */
	byte c_sc;
	byte c_w;				/* renew, release: the worker id */
	byte c_final;			/* release: the final fence */
	byte c_conf;			/* claim: confirmed_ms, its clock when it sent
							 * its last granted call */
	byte r;					/* OK, REFUSED, QUIET, LOST, WRONG */
	byte r_w;
	byte r_floor;
	byte r_fence;
	bit r_warned;			/* the answer says it may not be on the standby */
	bit quiet;				/* recall(): in a quiet period */
	bit forgot;
	byte keep;
	byte tmp;
	byte i;
	byte j;
	byte m;
	byte lo;
	byte hi;

	/* the fleet: two servers and, in the last slot, a third server or a
	 * slot for a copy of another; one step */
	if
#ifndef NO_THIRD
	:: d_step { setup(); sst[NS - 1] = NEW; third = 1; scrub() }
#endif
	:: d_step { setup(); scrub() }
	fi;
end:
	do
	/* ---- time: every clock moves on ---- */
	:: d_step { now < TMAX && checked_in(0) && checked_in(1) && checked_in(2) ->
		now++; sck[0] = 0; sck[1] = 0; sck[2] = 0; trail(("STEP wait\n")); step_done() }

	SERVER(0)
	SERVER(1)
	SERVER(2)
#ifndef NO_COPY
	COPY(0)
	COPY(1)
#endif

	/* ---- the store keeps an earlier state (a backup; a standby or replica
	 *      that stops receiving: desync), goes back to it (a restore, a
	 *      failover, under a new run, or as an older copy of itself under
	 *      the same identity), or loses everything ---- */
#ifndef NO_REWIND
	:: d_step { forgets < FMAX && !desynced -> save_store(); trail(("STEP backup\n")); step_done() }
#endif
#ifndef NO_DESYNC
	:: d_step { forgets < FMAX && !desynced -> save_store(); desynced = 1; trail(("STEP desync\n")); step_done() }
#endif
	:: d_step { snap_ok && forgets < FMAX ->
		load_store(); clear_snapshot(); desynced = 0; forgets++; rec_run = 0;
		trail(("STEP rewind\n")); step_done() }
#ifndef NO_REWIND_SAME
	:: d_step { snap_ok && forgets < FMAX ->
		load_store(); clear_snapshot(); desynced = 0; forgets++;
		trail(("STEP rewind_same\n")); step_done() }
#endif
#ifndef NO_LOSE
	:: d_step { forgets < FMAX ->
		for (i : 0 .. NW - 1) {
			hold[i] = 0; hlease[i] = 0; lexp[i] = 0; lfloor[i] = 0; ltok[i] = 0;
			fence[i] = 0
		};
		for (i : 0 .. NS + 1) {
			reg[i] = 0
		};
		has_rec = 0; rec_run = 0; gen = 0; counter = 0; qfrom = 0; qtil = 0;
		qfloor = 0; longest = 0; widest = 0;
		/* a backup kept elsewhere outlives the loss (a store flushed, then
		 * restored from an older backup); a standby that stopped receiving
		 * is taken as gone with it */
		if
		:: desynced -> clear_snapshot(); desynced = 0
		:: else
		fi;
		forgets++;
		trail(("STEP lose\n")); step_done() }
#endif

#ifndef NO_IMP
	/* -DIMP_AS_0: under server 0's name alone; -DIMP_OWN: under its own */
#ifndef IMP_OWN
	IMP_NAMED(1)
#ifndef IMP_AS_0
	IMP_NAMED(2)
	IMP_NAMED(3)
#endif
#endif
#ifndef IMP_AS_0
	IMP_NAMED(IMPNAME)
	/* numbers out of bounds (issue 55, finding 3) */
	:: d_step { counter < CMAX -> IMP_CALL(IMPNAME); c_q = HUGE; c_m = HUGE; c_sg = HUGE;
		c_prefer = 0; c_reassert = 1; claim();
		trail(("STEP imp_huge -> %d\n", r)); bounds_hold(); step_done() }
	/* a claim declaring a quiet period of 0 (issue 55's bounds) */
	:: d_step { counter < CMAX -> IMP_CALL(IMPNAME); c_q = 0; claim();
		trail(("STEP imp_short -> %d\n", r)); bounds_hold(); step_done() }
	/* as if it saw a later state record: a quiet period starts */
	:: d_step { counter < CMAX -> IMP_CALL(IMPNAME); c_sg = gen; c_sc = counter + 1;
		claim(); trail(("STEP imp_later -> %d\n", r)); bounds_hold(); step_done() }
#endif
#endif
	od
}
