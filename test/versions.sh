# test/versions.sh: the PostgreSQL majors snowid supports and the hiredis
# each is tested with, written once.  Sourced by test/lib.sh (so by
# test/run, test/bench/run and test/demo), by test/tools/pgbuild and
# .ci/run; read by the TAP tests (test/t/lib/SnowidTest.pm) too, so it holds
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

# The earlier releases of snowid: each the last commit of main at its
# version (snowid.control's default_version), none of them tagged up to
# 1.2; from 1.3 on, a release is a tag vX.Y.Z (doc/install.md), and its
# commit is named here too (1.3: v1.3.0), so that a tree without tags (a
# clone of a branch, an unpacked archive's history) finds it.
# test/t/docs-and-packaging/upgrading_as_documented.pl upgrades from each, test/tools/package packages
# 1.2, and test/t/coordinator/update_matches_install.pl updates 1.3.0's
# snowid_coordinator.
SNOWID_RELEASE_1_0="b7c571d249f16d23d820a8472531dd04f90de7f5"
SNOWID_RELEASE_1_1="316e69a1fd38dd6a3fe7a23e7b236eadb4ce27a8"
SNOWID_RELEASE_1_2="fa2c6180f429111880a33406b8970ee514159527"
SNOWID_RELEASE_1_3="126dbc6485657f0e550070bc590e70de887c6623"
