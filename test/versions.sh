# test/versions.sh: the PostgreSQL majors snowid supports and the hiredis
# each is tested with, written once.  Sourced by test/lib.sh (so by
# test/run, test/bench/run and test/demo), by test/tools/pgbuild and
# .ci/run; read by the TAP tests (test/t/SnowidTest.pm) too, so it holds
# nothing but NAME="value" lines and comments.
#
# Debian 12's PostgreSQL 15 package is used as it is; the others are built
# by test/tools/pgbuild.  hiredis 0.14 is Debian 12's libhiredis-dev,
# without TLS; hiredis 1.2 is built by test/tools/pgbuild with TLS (Debian
# 13 pairs PostgreSQL 17 with it).  A build against a hiredis of
# SNOWID_HIREDIS_TLS must have TLS (rediss://), and the TLS tests fail if
# it has not; a build against any other must not.

# The supported PostgreSQL majors, oldest first
SNOWID_PG_VERSIONS="15 16 17 18 19"
# The one that comes from Debian's packages rather than test/tools/pgbuild
SNOWID_PG_DEBIAN="15"
# The hiredis each major is tested with
SNOWID_HIREDIS_15="0.14"
SNOWID_HIREDIS_16="0.14"
SNOWID_HIREDIS_17="1.2"
SNOWID_HIREDIS_18="1.2"
SNOWID_HIREDIS_19="1.2"
# The hiredis versions built with TLS (hiredis_ssl)
SNOWID_HIREDIS_TLS="1.2"
