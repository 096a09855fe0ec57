# Makefile for snowid (PGXS)

EXTENSION = snowid snowid_coordinator snowid_sql
MODULE_big = snowid
# Every C file of src/ and its folders: a new folder (a claim store, say)
# needs no line here.  The order does not matter.  A build without Redis
# support (below) leaves out src/redis.
OBJS = $(patsubst $(srcdir)/%.c,%.o,$(filter-out $(SNOWID_LEFT_OUT),$(sort $(wildcard $(srcdir)/src/*.c $(srcdir)/src/*/*.c))))

DATA = sql/snowid--1.0.sql \
	sql/snowid--1.0--1.1.sql sql/snowid--1.1--1.2.sql \
	sql/snowid--1.2--1.3.sql
# The scripts kept in parts by concern (sql/EXTENSION/VERSION/PART.sql),
# which the Makefile makes (below)
SQL_BUILT = sql/snowid_coordinator--1.1.sql sql/snowid_coordinator--1.0--1.1.sql \
	sql/snowid_sql--1.0.sql sql/snowid_sql--1.0--1.1.sql \
	sql/snowid_sql--1.1--1.2.sql sql/snowid_sql--1.2--1.4.sql \
	sql/snowid_sql--1.3--1.4.sql sql/snowid_sql--1.4.sql
DATA_built = $(SQL_BUILT)
# the SQL edition: every version's script and update script, those made
# from parts and those kept whole (any other sql/snowid_sql--*.sql: 1.3's
# install and its update from 1.2, as 1.3.0 made them from its parts,
# which 1.4 changed)
SNOWID_SQL_WHOLE = $(filter-out $(addprefix $(srcdir)/,$(SQL_BUILT)),$(sort $(wildcard $(srcdir)/sql/snowid_sql--*.sql)))
SNOWID_SQL_SCRIPTS = $(filter sql/snowid_sql--%,$(SQL_BUILT)) $(SNOWID_SQL_WHOLE)
DATA += $(patsubst $(srcdir)/%,%,$(SNOWID_SQL_WHOLE))
# and the parameters of its versions before 1.2, which ran as the role that
# installed them (snowid_sql.control)
DATA += sql/snowid_sql--1.0.control sql/snowid_sql--1.1.control
# and the install script of 1.2, which has none of its own, made from
# those scripts (test/tools/sql-edition install), so that CREATE EXTENSION
# ... VERSION '1.2' runs all of it as the bootstrap superuser, not the
# scripts of 1.0 and 1.1 as the installing role on the way (1.3 has its
# own, kept whole; 1.4 its own, made from its parts)
SNOWID_SQL_VERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(dir $(firstword $(MAKEFILE_LIST)))snowid_sql.control)
DATA_built += snowid_sql--1.2.sql
PGFILEDESC = "snowid - Snowflake-style id generator"

# The version the library reports (pg_get_loaded_modules() on 18 and later)
EXTVERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(dir $(firstword $(MAKEFILE_LIST)))snowid.control)

# Redis support: src/redis, which speaks to Redis through hiredis (with
# OpenSSL for TLS), found with pkg-config, so that PKG_CONFIG_PATH selects
# another one.  with_hiredis=no builds snowid without it, and
# with_hiredis=yes stops where hiredis is not found (a packager's build
# that must have it); by default Redis support is built wherever hiredis
# is found.  Without it, worker ids are set by hand or claimed from a
# PostgreSQL coordination database, and a Redis URL is refused (src/stores.c,
# the one file that knows, through SNOWID_WITH_REDIS).  The switch is
# spelt as PostgreSQL's own build options that PGXS passes on (with_llvm,
# with_icu), and named after the library, as theirs are.
PKG_CONFIG ?= pkg-config
ifneq ($(filter-out yes no,$(with_hiredis)),)
$(error with_hiredis must be yes or no, not "$(with_hiredis)")
endif
ifneq ($(with_hiredis),no)
HIREDIS_LIBS := $(shell $(PKG_CONFIG) --libs-only-l hiredis 2>/dev/null)
endif
ifeq ($(with_hiredis),no)
SNOWID_REDIS := off: with_hiredis=no
else ifeq ($(HIREDIS_LIBS),)
ifeq ($(with_hiredis),yes)
$(error hiredis not found by $(PKG_CONFIG): install libhiredis-dev, or set PKG_CONFIG_PATH to the directory of hiredis.pc)
endif
SNOWID_REDIS := off: hiredis not found by $(PKG_CONFIG) (install libhiredis-dev, or set PKG_CONFIG_PATH to the directory of hiredis.pc)
else
SNOWID_REDIS := on
endif

ifeq ($(SNOWID_REDIS),on)
PG_CPPFLAGS += -DSNOWID_WITH_REDIS
# A hiredis outside the system's library directories is found at run time
# through an rpath, without LD_LIBRARY_PATH.
HIREDIS_CFLAGS := $(shell $(PKG_CONFIG) --cflags hiredis 2>/dev/null)
HIREDIS_LDFLAGS := $(shell $(PKG_CONFIG) --libs-only-L hiredis 2>/dev/null)
HIREDIS_LIBDIR := $(shell $(PKG_CONFIG) --variable=libdir hiredis 2>/dev/null)
ifeq ($(filter /usr/lib /usr/lib64 /lib /lib64 /usr/lib/%-linux-gnu /lib/%-linux-gnu,$(HIREDIS_LIBDIR)),)
HIREDIS_LDFLAGS += -Wl,-rpath,$(HIREDIS_LIBDIR)
endif

# TLS (rediss://) when hiredis comes with hiredis_ssl (hiredis 1.x built
# with TLS); snowid calls OpenSSL itself for the handshake.
HIREDIS_SSL_LIBS := $(shell $(PKG_CONFIG) --libs-only-l hiredis_ssl openssl 2>/dev/null)
ifneq ($(HIREDIS_SSL_LIBS),)
HIREDIS_CFLAGS += -DSNOWID_HAVE_HIREDIS_SSL $(shell $(PKG_CONFIG) --cflags hiredis_ssl openssl 2>/dev/null)
HIREDIS_LIBS := $(HIREDIS_SSL_LIBS) $(HIREDIS_LIBS)
endif

# The Redis function library, for FUNCTION LOAD (doc/redis.md), made from
# src/redis/snowid.lua (below)
DATA_built += snowid.lua
else
SNOWID_LEFT_OUT = $(srcdir)/src/redis/% $(srcdir)/src/settings_redis.c
HIREDIS_LIBS :=
$(info snowid: Redis support $(SNOWID_REDIS))
endif

# Host names are resolved with glibc's getaddrinfo_a(), in libc since glibc
# 2.34 and in libanl before (which 2.34 and later keep as an empty stub).
ifneq ($(shell $(CC) -print-file-name=libanl.so),libanl.so)
SHLIB_LINK += -lanl
endif

# libpq, for a PostgreSQL coordination database (src/pgcoord), from the
# installation PG_CONFIG names; found at run time through an rpath when it
# lies outside the system's library directories (a build from source).
PG_CONFIG ?= pg_config
LIBPQ_INCLUDEDIR := $(shell $(PG_CONFIG) --includedir 2>/dev/null)
LIBPQ_LIBDIR := $(shell $(PG_CONFIG) --libdir 2>/dev/null)
ifeq ($(wildcard $(LIBPQ_INCLUDEDIR)/libpq-fe.h),)
$(error libpq-fe.h not found in $(LIBPQ_INCLUDEDIR): install libpq-dev)
endif
LIBPQ_CFLAGS := -I$(LIBPQ_INCLUDEDIR)
SHLIB_LINK += -L$(LIBPQ_LIBDIR) -lpq
ifeq ($(filter /usr/lib /usr/lib64 /lib /lib64 /usr/lib/%-linux-gnu /lib/%-linux-gnu,$(LIBPQ_LIBDIR)),)
SHLIB_LINK += -Wl,-rpath,$(LIBPQ_LIBDIR)
endif

# headers name each other from src/: #include "core/generator.h"; the
# generated src/redis/snowid_lua.h lies in the build tree
PG_CPPFLAGS += -I$(srcdir)/src -Isrc $(HIREDIS_CFLAGS) $(LIBPQ_CFLAGS) -DSNOWID_VERSION='"$(EXTVERSION)"'
# PG_LDFLAGS comes before the server's own -L options
PG_LDFLAGS += $(HIREDIS_LDFLAGS)
SHLIB_LINK += $(HIREDIS_LIBS)
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
# WERROR=1 (test/run sets it) makes every warning an error
ifeq ($(WERROR),1)
PG_CFLAGS += -Werror
endif

# After make install, two targets test the installed snowid:
#   make installcheck        the regression tests (pg_regress) and the
#                            isolation tests (pg_isolation_regress): only
#                            PostgreSQL and the build dependencies needed
#   make prove_installcheck  the TAP tests (test/t/*/*.pl, in folders by
#                            concern, the modules in test/t/lib; PROVE_TESTS picks
#                            some, PROVE_FLAGS adds prove's options): each
#                            starts its own servers, and one that needs a
#                            tool beyond PostgreSQL (Redis, libfaketime,
#                            node-postgres, ...) skips itself naming the
#                            Debian package where it is missing, or fails
#                            with SNOWID_REQUIRE_TOOLS=1 (doc/development.md
#                            lists them)
# test/run runs both, with every tool, on every version.
#
# make installcheck brings its own server with snowid preloaded.
# SNOWID_TEMP_INSTANCE=no tests the running server that PGHOST and PGPORT
# name instead, which must be set up as test/snowid.conf says: the Debian
# package's tests do so on a throwaway cluster (debian/tests/installcheck).
# The regression tests are test/regress/sql/NAME.sql, their expected output
# test/regress/expected/NAME.out; pg_regress writes results/,
# regression.diffs and log/ here, as PGXS's clean expects.
SNOWID_TEMP_INSTANCE ?= yes
REGRESS = next batch decode from_time status errors master_detail \
	serial layout_status convert public upgrade time_range far_ends
REGRESS_OPTS = --inputdir=$(srcdir)/test/regress
ISOLATION = ordering convert
ISOLATION_OPTS = --inputdir=$(srcdir)/test/isolation \
	--outputdir=$(CURDIR)/output_iso
# The databases of the temp instance are UTF8 (the expected output holds
# UTF-8) whatever the caller's locale: pg_regress drops LC_ALL, so with
# only LC_ALL set, or none, initdb would make them SQL_ASCII.
# The temp instance gets test/snowid.conf's settings and
# regress_keys.conf's: the key file by its absolute path.
ifeq ($(SNOWID_TEMP_INSTANCE),yes)
REGRESS_OPTS += --temp-config=$(srcdir)/test/snowid.conf \
	--temp-config=$(CURDIR)/regress_keys.conf \
	--temp-instance=$(CURDIR)/tmp_check_regress --encoding=UTF8
ISOLATION_OPTS += --temp-config=$(srcdir)/test/snowid.conf \
	--temp-config=$(CURDIR)/regress_keys.conf \
	--temp-instance=$(CURDIR)/tmp_check_iso --encoding=UTF8
endif

# The TAP tests are make prove_installcheck's, not make installcheck's (no
# TAP_TESTS: PGXS would run them there): test/t/CONCERN/BEHAVIOUR.pl, and a
# file at the top of test/t too (one written before the folders: test/run
# names it, to be moved); the modules they share are in test/t/lib
PROVE_TESTS = $(sort $(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/test/t/*.pl $(srcdir)/test/t/*/*.pl)))

EXTRA_CLEAN = tmp_check tmp_check_regress tmp_check_iso output_iso results \
	regression.diffs regression.out regress_keys.conf \
	snowid.lua src/redis/snowid_lua.body src/redis/snowid_lua.h src/stores.redis \
	snowid_sql.sql snowid_sql.schema snowid_sql-update.sql snowid_sql-pg_tle.sql

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The scripts of SQL_BUILT, each made in the build directory from the
# parts listed here, in this order (the script's: an object after those it
# uses), each part after a comment line that names it; test/tools/sql-parts
# refuses a part of the directory that the list leaves out
# snowid_coordinator 1.1 is made from its parts, and its update from 1.0
# (what 1.3.0 installed) takes the functions and their settings from them
# (written once) between its head, which changes the tables and drops what
# 1.1 has no more, and its privileges, which are those of what 1.1 added
# (what 1.0 had keeps the grants an administrator made)
sql/snowid_coordinator--1.1.sql: $(addprefix $(srcdir)/sql/snowid_coordinator/1.1/, \
	schema.sql tables.sql helpers.sql fence.sql quiet.sql claim.sql \
	lease.sql free.sql procedures.sql reset_secret.sql ranges.sql settings.sql \
	privileges.sql)
sql/snowid_coordinator--1.0--1.1.sql: $(addprefix $(srcdir)/sql/snowid_coordinator/, \
	1.0--1.1/head.sql 1.1/helpers.sql 1.1/fence.sql 1.1/quiet.sql 1.1/claim.sql \
	1.1/lease.sql 1.1/free.sql 1.1/procedures.sql 1.1/reset_secret.sql \
	1.1/ranges.sql 1.1/settings.sql 1.0--1.1/privileges.sql)
sql/snowid_sql--1.0.sql: $(addprefix $(srcdir)/sql/snowid_sql/1.0/, \
	objects.sql config.sql claim.sql generator.sql decode.sql serial.sql \
	status.sql public_ids.sql version.sql)
# The updates from 1.0 and 1.1 first hold off the writes that take ids
# (1.1--1.2/writes.sql, written once), before anything a call in flight
# could wait for
sql/snowid_sql--1.0--1.1.sql: $(addprefix $(srcdir)/sql/snowid_sql/, \
	1.0--1.1/head.sql 1.1--1.2/writes.sql 1.0--1.1/quiet.sql 1.0--1.1/claim.sql \
	1.0--1.1/status.sql 1.0--1.1/version.sql 1.0--1.1/privileges.sql)
sql/snowid_sql--1.1--1.2.sql: $(addprefix $(srcdir)/sql/snowid_sql/1.1--1.2/, \
	head.sql owner.sql writes.sql locks.sql server.sql fixed.sql generator.sql claim.sql \
	public_ids.sql version.sql private.sql dumps.sql privileges.sql)
# 1.4 is made from its own parts, and its updates from 1.2 and 1.3 take the
# functions, comments and privileges from them (written once).  The update
# from 1.2 goes to 1.4 at once (PostgreSQL takes the shortest path): 1.3.0's
# update from 1.2 (kept whole, with 1.3) lacks what 1.4's fixes of it do.
sql/snowid_sql--1.4.sql: $(addprefix $(srcdir)/sql/snowid_sql/1.4/, \
	head.sql objects.sql pending.sql kept.sql config.sql server.sql generator.sql decode.sql serial.sql \
	status.sql public_ids.sql dumps.sql version.sql triggers.sql comments.sql \
	privileges.sql)
sql/snowid_sql--1.2--1.4.sql: $(addprefix $(srcdir)/sql/snowid_sql/, \
	1.2--1.4/head.sql 1.3--1.4/locks.sql 1.2--1.4/claim.sql \
	1.4/pending.sql 1.4/kept.sql 1.4/config.sql 1.4/server.sql 1.4/generator.sql 1.4/decode.sql \
	1.4/serial.sql 1.4/status.sql 1.4/public_ids.sql 1.4/dumps.sql 1.4/version.sql \
	1.3--1.4/retire.sql 1.2--1.4/drop.sql 1.4/comments.sql 1.4/privileges.sql)
sql/snowid_sql--1.3--1.4.sql: $(addprefix $(srcdir)/sql/snowid_sql/, \
	1.3--1.4/head.sql 1.3--1.4/locks.sql 1.3--1.4/retire.sql 1.3--1.4/changed.sql \
	1.4/pending.sql 1.4/kept.sql 1.4/config.sql 1.4/server.sql 1.4/generator.sql 1.4/decode.sql \
	1.4/serial.sql 1.4/status.sql 1.4/public_ids.sql 1.4/dumps.sql 1.4/version.sql \
	1.4/comments.sql 1.4/privileges.sql)

# The numbers of the worker-id protocol, and its words (string defines:
# the prefix of a lease holder's name), are written once, in these C
# headers; the parts of it in other languages (the Redis function library,
# the coordination database's extension) name them by their C names
# between two @ (@SNOWID_MAX_ID@), which
# test/tools/protocol replaces with their values as it makes what is
# installed
PROTOCOL_HEADERS = $(addprefix $(srcdir)/,src/core/layout.h src/core/mark.h \
	src/coord/store.h src/coord/request.h src/coord/holder_secret.h)

$(SQL_BUILT): $(PROTOCOL_HEADERS)
	@mkdir -p sql
	$(srcdir)/test/tools/sql-parts cat $(srcdir) $(patsubst $(srcdir)/%,%,$(filter %.sql,$^)) > $@.parts
	$(srcdir)/test/tools/protocol subst $(PROTOCOL_HEADERS) < $@.parts > $@.tmp && rm $@.parts && mv $@.tmp $@

# The Redis function library is one file, src/redis/snowid.lua, made into
# snowid.lua with the protocol's numbers: installed (DATA_built, for
# FUNCTION LOAD), and compiled in for the EVALSHA/EVAL fallback as
# snowid_lua.h: the file without its #! line and its comment lines
# (snowid_lua.body), as a C string, with its SHA1 for EVALSHA and the
# prefix of its function names.
snowid.lua: $(srcdir)/src/redis/snowid.lua $(PROTOCOL_HEADERS)
	$(srcdir)/test/tools/protocol subst $(PROTOCOL_HEADERS) < $< > $@.tmp && mv $@.tmp $@

src/redis/snowid_lua.body: snowid.lua
	@mkdir -p src/redis
	sed -e '1{/^#!/d;}' -e '/^ *--/d' $< > $@.tmp && mv $@.tmp $@

src/redis/snowid_lua.h: src/redis/snowid_lua.body snowid.lua
	{ echo '/* Generated from src/redis/snowid.lua by the Makefile: do not edit */'; \
	  printf '#define SNOWID_REDIS_FUNCTION_PREFIX "%s"\n' \
		"$$(sed -n "s/^local prefix = '\([a-z0-9_]*\)'$$/\1/p" $(word 2,$^))"; \
	  printf '#define SNOWID_REDIS_LIBRARY_SHA1 "%s"\n' \
		"$$(sha1sum < $< | cut -c1-40)"; \
	  echo '#define SNOWID_REDIS_LIBRARY \'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n" \\/' $<; \
	  echo '""'; } > $@.tmp && mv $@.tmp $@

src/redis/scripts.o src/redis/scripts.bc: src/redis/snowid_lua.h

# stores.c, the one file that knows whether Redis support is built, is
# compiled again when that changes, and so the library linked again with or
# without src/redis: src/stores.redis records it, rewritten only when it
# changes
src/stores.o src/stores.bc: src/stores.redis
src/stores.redis: FORCE
	@mkdir -p src
	@echo '$(SNOWID_REDIS)' | cmp -s - $@ || echo '$(SNOWID_REDIS)' > $@

# make uninstall removes, beside what this version installs, the scripts
# earlier versions installed that it does not (a make install of it over
# one of those leaves them in place): the whole install scripts of snowid
# 1.1 to 1.3, which sql/snowid--1.0.sql and its updates replaced, that
# of snowid_sql 1.2 once a later version's replaces it, and that of
# snowid_coordinator 1.0 (1.3.0's), which 1.1's replaced
DATA_EARLIER = snowid--1.1.sql snowid--1.2.sql snowid--1.3.sql snowid_sql--1.2.sql \
	snowid_coordinator--1.0.sql
uninstall: uninstall-earlier
.PHONY: uninstall-earlier
uninstall-earlier:
	rm -f $(addprefix '$(DESTDIR)$(datadir)/$(datamoduledir)'/, $(DATA_EARLIER))

# the key file of test/regress/sql/public.sql may be read only by the
# server's user, a mode git does not record; the temp instance finds it by
# its absolute path (regress_keys.conf)
installcheck: regress-key-file
.PHONY: regress-key-file
regress-key-file:
	chmod 600 $(srcdir)/test/regress_public_keys
	echo "snowid.public_key_file = '$(abspath $(srcdir))/test/regress_public_keys'" > regress_keys.conf

# The TAP tests against the installed snowid, with PGXS's prove command
# (it empties tmp_check/, where each test file logs); they need PostgreSQL
# built with --enable-tap-tests (Debian's is) and Perl's IPC::Run
# (libipc-run-perl).
.PHONY: prove_installcheck
prove_installcheck: PG_PROVE_FLAGS += -I $(abspath $(srcdir))/test/t/lib
prove_installcheck:
ifeq ($(enable_tap_tests),yes)
	$(prove_installcheck)
else
	@echo 'make prove_installcheck: $(PG_CONFIG) is of a PostgreSQL built without --enable-tap-tests' >&2; exit 1
endif

# The release archive snowid-VERSION.zip, in PGXN's layout (every file
# under snowid-VERSION/, META.json at its top), into DISTDIR (the current
# directory): git archive of REF (HEAD, or a release's tag) once
# test/tools/release has checked that snowid.control, META.json and
# debian/changelog name one version and that what META.json provides
# matches the control files and the files shipped (doc/install.md#releases).
# It ships the sources: make makes the SQL scripts kept in parts,
# snowid.lua and src/redis/snowid_lua.h from them, with sh, sed, awk and
# sha1sum.
REF ?= HEAD
DISTDIR ?= .
.PHONY: dist
dist:
	$(srcdir)/test/tools/release archive $(REF) $(DISTDIR)

# The SQL edition for hosts without the extension's files (doc/managed.md),
# made from its scripts (SNOWID_SQL_SCRIPTS: those made here from parts
# first, then those of the source tree) so that nothing is written twice:
#   make snowid_sql.sql         a plain script for psql, into the schema
#                               SNOWID_SQL_SCHEMA (public), owned and
#                               configured by the role that runs it
#   make snowid_sql-update.sql  the update of such a script from version
#                               SNOWID_SQL_FROM (1.0) to the newest, run by
#                               its owner
#   make snowid_sql-pg_tle.sql  pgtle.install_extension() of every version
#                               and pgtle.install_update_path() of every
#                               update script, for pg_tle (RDS, Aurora,
#                               Supabase's database.dev)
SNOWID_SQL_SCHEMA ?= public
SNOWID_SQL_FROM ?= 1.0
.PHONY: sql-edition
sql-edition: snowid_sql.sql snowid_sql-update.sql snowid_sql-pg_tle.sql

# The schema the plain script was last made for: rewritten (so newer than
# the script) only when SNOWID_SQL_SCHEMA changes, so that make
# snowid_sql.sql SNOWID_SQL_SCHEMA=other makes the script again
snowid_sql.schema: FORCE
	@echo '$(SNOWID_SQL_SCHEMA)' | cmp -s - $@ || echo '$(SNOWID_SQL_SCHEMA)' > $@
.PHONY: FORCE
FORCE:

snowid_sql.sql: $(SNOWID_SQL_SCRIPTS) snowid_sql.schema
	$(srcdir)/test/tools/sql-edition plain .:$(srcdir) $(SNOWID_SQL_VERSION) $(SNOWID_SQL_SCHEMA) > $@.tmp && mv $@.tmp $@

# made every time: SNOWID_SQL_FROM or the schema may change
.PHONY: snowid_sql-update.sql
snowid_sql-update.sql: $(SNOWID_SQL_SCRIPTS)
	$(srcdir)/test/tools/sql-edition plain .:$(srcdir) $(SNOWID_SQL_VERSION) $(SNOWID_SQL_SCHEMA) $(SNOWID_SQL_FROM) > $@.tmp && mv $@.tmp $@

snowid_sql--1.2.sql: $(SNOWID_SQL_SCRIPTS)
	$(srcdir)/test/tools/sql-edition install .:$(srcdir) 1.2 > $@.tmp && mv $@.tmp $@

snowid_sql-pg_tle.sql: $(srcdir)/snowid_sql.control $(SNOWID_SQL_SCRIPTS)
	$(srcdir)/test/tools/sql-edition pg_tle .:$(srcdir) $(SNOWID_SQL_VERSION) > $@.tmp && mv $@.tmp $@

all: sql-edition
