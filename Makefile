# Makefile for snowid (PGXS)

EXTENSION = snowid
MODULE_big = snowid
OBJS = \
	src/snowid.o \
	src/settings.o \
	src/generator.o \
	src/layout.o \
	src/hwm.o \
	src/worker.o \
	src/redis_claim.o \
	src/serial.o

DATA = sql/snowid--1.0.sql sql/snowid--1.1.sql sql/snowid--1.0--1.1.sql
PGFILEDESC = "snowid - Snowflake-style id generator"

SHLIB_LINK += -lhiredis
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare

# make installcheck brings its own server with snowid preloaded.
REGRESS = next batch decode from_time status errors master_detail \
	serial layout_status upgrade
REGRESS_OPTS = --temp-config=$(srcdir)/test/snowid.conf \
	--temp-instance=$(CURDIR)/tmp_check_regress

ISOLATION = ordering
ISOLATION_OPTS = --inputdir=$(srcdir)/test/isolation \
	--outputdir=$(CURDIR)/output_iso \
	--temp-config=$(srcdir)/test/snowid.conf \
	--temp-instance=$(CURDIR)/tmp_check_iso

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

EXTRA_CLEAN = tmp_check_regress tmp_check_iso output_iso results \
	regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
