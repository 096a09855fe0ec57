-- The lock of each datacenter: every call takes its row FOR UPDATE, having
-- inserted it if need be.
CREATE TABLE snowid_coordinator.datacenters (
	datacenter integer PRIMARY KEY
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@)
);

COMMENT ON TABLE snowid_coordinator.datacenters IS
'One row per datacenter, locked by every call on its worker ids';

-- The record of the forgetting rule (quiet.sql, recall())
-- This install of the extension: one row, made by CREATE EXTENSION and not
-- dumped, so that a restore from a dump is another install
CREATE TABLE snowid_coordinator.install (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	install_id text NOT NULL
);

-- When this install was made (Unix microseconds): every holder proof of an
-- earlier n counts as taken (helpers.sql, proofs_taken_until()), so that a
-- restore from a dump takes back none the log shows
ALTER TABLE snowid_coordinator.install
	ADD COLUMN installed_us bigint NOT NULL
		DEFAULT (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000000)::bigint;

INSERT INTO snowid_coordinator.install (install_id)
VALUES (md5(random()::text || clock_timestamp()::text || pg_backend_pid()));

COMMENT ON TABLE snowid_coordinator.install IS
'This install of snowid_coordinator (CREATE EXTENSION makes it, pg_dump does not dump it)';

ALTER TABLE snowid_coordinator.datacenters
	ADD COLUMN written_under text,
	ADD COLUMN quiet_from_ms bigint,
	ADD COLUMN quiet_until_ms bigint,
	ADD COLUMN generation bigint NOT NULL DEFAULT 0
		CHECK (generation >= 0),
	ADD COLUMN counter bigint NOT NULL DEFAULT 0
		CHECK (counter >= 0),
	-- every grant that is not a re-assertion starts at or above it: the
	-- end of the last quiet period plus the fleet's clocks (see recall())
	ADD COLUMN forgot_floor_ms bigint NOT NULL DEFAULT 0
		CHECK (forgot_floor_ms >= 0),
	-- the longest quiet_ms any caller declared: every quiet period lasts
	-- at least that
	ADD COLUMN longest_quiet_ms bigint NOT NULL DEFAULT 0
		CHECK (longest_quiet_ms >= 0),
	-- the widest clock_margin_ms any caller declared (how far apart the
	-- fleet's clocks, and this server's, may lie): the floor lies past the
	-- end of a quiet period by at least that
	ADD COLUMN widest_margin_ms bigint NOT NULL DEFAULT 0
		CHECK (widest_margin_ms >= 0);

-- The layout of the datacenter (claim.sql, check_layout())
ALTER TABLE snowid_coordinator.datacenters
	ADD COLUMN max_worker_id integer
		CHECK (max_worker_id BETWEEN 0 AND @SNOWID_MAX_ID@);

-- Every worker id ever held or fenced.  An id without a row is free, with
-- no fence.  holder is the identity of its server: for good, or on lease
-- (on_lease) until lease_expires_ms by this server's clock.  A lease names
-- the fence it was taken above (lease_floor_ms) and the token of the claim
-- that made it, which its renewals and its release name.
CREATE TABLE snowid_coordinator.worker_ids (
	datacenter integer NOT NULL
		REFERENCES snowid_coordinator.datacenters,
	worker_id integer NOT NULL
		CHECK (worker_id BETWEEN 0 AND @SNOWID_MAX_ID@),
	holder text
		CHECK (octet_length(holder) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	on_lease boolean NOT NULL DEFAULT false,
	lease_expires_ms bigint,
	lease_floor_ms bigint
		CHECK (lease_floor_ms >= 0),
	lease_token text
		CHECK (lease_token ~ '^[0-9a-f]{16}$'),
	fence_ms bigint NOT NULL DEFAULT 0
		CHECK (fence_ms >= 0),
	PRIMARY KEY (datacenter, worker_id),
	CHECK (NOT on_lease OR (holder IS NOT NULL AND
							lease_expires_ms IS NOT NULL AND
							lease_floor_ms IS NOT NULL AND
							lease_token IS NOT NULL))
);

COMMENT ON TABLE snowid_coordinator.worker_ids IS
'Who holds each worker id, for good or on lease, and its fence (Unix ms): never delete a row, nor lower a fence';

-- pg_dump dumps the claims and the fences with the database
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.datacenters', '');
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.worker_ids', '');

-- The hash (SHA-256) of each holder's secret, per datacenter and identity:
-- set by the identity's first call that is granted, compared by every
-- later call, never the secret itself.  reset_secret() (an
-- administrator's) removes one, so that a server that lost its secret file
-- registers a new one.
CREATE TABLE snowid_coordinator.holders (
	datacenter integer NOT NULL
		REFERENCES snowid_coordinator.datacenters,
	identity text NOT NULL
		CHECK (octet_length(identity) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	secret_sha256 bytea NOT NULL
		CHECK (octet_length(secret_sha256) = 32),
	PRIMARY KEY (datacenter, identity)
);

COMMENT ON TABLE snowid_coordinator.holders IS
'The SHA-256 of each holder''s secret: only a caller with that secret acts as that holder';

SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.holders', '');

-- The holder's proof (doc/security.md, "Holder secrets"): a server of
-- this release never sends its secret, only "<n>:<proof>", proof the
-- SHA-256 of its key (secret_sha256 in hexadecimal), n and the call
-- (helpers.sql).  The n taken, each once: the procedure prove() inserts
-- it, and commits, before the call does anything else, and refuses an n
-- no larger than the largest committed for its holder.  Insert-only, so
-- that no caller can keep a lock another call waits for: an insert waits
-- only for an uncommitted insert of the very same row, a replay of that
-- proof.  prove() removes a holder's rows below its newest, and rows too
-- old for any proof still good (check_proof_time()), skipping any row
-- another call locks.  Not dumped: a restore is a new install, before
-- which every n counts as taken (proofs_taken_until()).
CREATE TABLE snowid_coordinator.proofs_taken (
	datacenter integer NOT NULL
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@),
	identity text NOT NULL
		CHECK (octet_length(identity) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	n bigint NOT NULL
		CHECK (n > 0),
	PRIMARY KEY (datacenter, identity, n)
);

COMMENT ON TABLE snowid_coordinator.proofs_taken IS
'The n of each holder proof taken: a proof makes its call once';

-- A pad per identity that has no key registered yet: its first call is
-- answered 'register' with the pad (an answer, which no log shows), and the
-- next sends its key XORed with the pad's SHA-256, so that the key never
-- appears in a log.  Made at made_ms (Unix ms), taken by that next call
-- whatever it answers, else gone after a while, and a datacenter has no
-- more than its layout has worker ids (check_proof()).  Not dumped: a
-- restored database hands out new pads.
CREATE TABLE snowid_coordinator.pads (
	datacenter integer NOT NULL
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@),
	identity text NOT NULL
		CHECK (octet_length(identity) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	pad text NOT NULL
		CHECK (pad ~ '^[0-9a-f]{64}$'),
	made_ms bigint NOT NULL,
	PRIMARY KEY (datacenter, identity)
);

COMMENT ON TABLE snowid_coordinator.pads IS
'A one-time pad for each identity that has no holder key registered yet';

-- What every function returns: outcome is one of
--	 ok			   the call did what it was asked; worker_id, and for a claim
--				   floor_ms, the id's fence when taken (0 for none): every id
--				   issued with it must lie at or above floor_ms; for a lease
--				   fence_ms, below which its holder issues, and lease_ms
--	 all_held	   every worker id in 0..max is held
--	 fenced		   every free id (or the configured or kept one) is fenced
--				   past usable_ms: worker_id is the one fenced least far,
--				   fence_ms its fence
--	 conflict	   the configured id (worker_id) is held by holder
--	 holds_other   this identity holds worker_id, not the configured id
--	 lost		   a renewal or release of an id that is no longer this
--				   claim's lease: holder holds it now, or no one (NULL)
--	 quiet		   the database may have forgotten claims (see recall()):
--				   no id is granted but to a server re-asserting its own
--				   until fence_ms, when this claim can be granted: the
--				   end of the quiet period or, past it, the floor it left
--	 register	   the caller's identity has no key registered: holder is
--				   a pad, under which the caller sends its key (see
--				   check_proof())
-- holder names a lease holder as 'lease ' || identity, as Redis does.
-- generation and counter are the datacenter's state record after the call
-- of a holder (see recall()), which the holder remembers and sends with
-- its next call; NULL for a call that gives no quiet_ms.
CREATE TYPE snowid_coordinator.outcome AS (
	outcome text,
	worker_id integer,
	floor_ms bigint,
	fence_ms bigint,
	lease_ms bigint,
	holder text,
	generation bigint,
	counter bigint
);

-- Administrators' view: who holds what, until when, and each id's fence
CREATE VIEW snowid_coordinator.workers AS
SELECT w.datacenter,
	   w.worker_id,
	   w.holder,
	   w.on_lease,
	   CASE WHEN w.on_lease
		   THEN pg_catalog.to_timestamp(w.lease_expires_ms / 1000.0) END
		   AS lease_expires,
	   w.holder IS NOT NULL AND
	   (NOT w.on_lease OR
		w.lease_expires_ms >
		pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000))
		   AS live,
	   CASE WHEN w.fence_ms > 0
		   THEN pg_catalog.to_timestamp(w.fence_ms / 1000.0) END AS fence,
	   w.fence_ms
FROM snowid_coordinator.worker_ids w;

COMMENT ON VIEW snowid_coordinator.workers IS
'Who holds each worker id (live: for good, or on a lease that has not run out), and its fence';

