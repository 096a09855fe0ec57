# test/lib.sh: set-up shared by test/run, test/demo, test/bench/ and
# test/tools/package (sourced, not run).
#
# snowid_setup installs the Debian packages, picks the user the server runs
# as and copies the source tree to a fresh temp dir owned by that user;
# snowid_build then builds there and installs as root.  initdb and postgres
# refuse to run as root, so as root everything runs as an unprivileged
# user ($SNOWID_USER) and the caller's clone is never written to.
# snowid_use_pg switches to another PostgreSQL version (test/tools/pgbuild
# builds all but Debian's once into a cache) and the hiredis tested with
# it; which versions, and which hiredis goes with each, is
# test/versions.sh.  The tools install packages but start no service and
# leave none running (see snowid_packages).
#
# snowid_valkey fetches Valkey for the TAP tests that run against it.
#
# Sets: SNOWID_TOP (the clone), SNOWID_NAME (the script), SNOWID_USER,
# SNOWID_TMP (temp dir, the caller removes it), SNOWID_SRC (the copy),
# PG_VERSION, PG_BINDIR, PG_CONFIG, PATH, PKG_CONFIG_PATH for another
# hiredis, and SNOWID_VALKEY_BIN.  The TAP tests see SNOWID_VALKEY_BIN,
# SNOWID_REDIS_SERVER and SNOWID_REDIS_CLI (test/t/lib/SnowidRedis.pm), and
# SNOWID_EXPECT_TLS (test/t/lib/SnowidTest.pm).
# Environment: SNOWID_SKIP_APT=1 skips the package check; PG_CONFIG points
# at another PostgreSQL installation (of any supported version);
# SNOWID_PG_RELEASE=1 uses builds without assertions (test/bench/run).

SNOWID_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The script's name in messages: its path in the clone (test/bench/run,
# not a bare "run" that test/run also is)
SNOWID_NAME=$(realpath -s --relative-to="$SNOWID_TOP" "$0" 2>/dev/null) ||
	SNOWID_NAME=${0##*/}
SNOWID_PG_CONFIG=${PG_CONFIG:-}
SNOWID_BASE_PATH=$PATH
SNOWID_TMP=
SNOWID_SRC=
# SNOWID_PG_VERSIONS, SNOWID_PG_DEBIAN, SNOWID_HIREDIS_<major> and
# SNOWID_HIREDIS_TLS: the versions, written once
# shellcheck source=test/versions.sh
source "$SNOWID_TOP/test/versions.sh"

# rsync is not needed: the tree is copied with tar.  The client tests
# (test/t/integrations/) run node-postgres, Knex, TypeORM and Drizzle (npm's,
# installed by snowid_node_modules), psycopg2, psycopg 3, SQLAlchemy and
# Django under Debian's python3, ActiveRecord under ruby, pgx v4 built
# offline with golang-go and JDBC under default-jdk-headless (both built
# once by snowid_client_builds), and pg_dump/pg_restore (in
# postgresql-client-15, pulled in by postgresql-15).
# Redis comes from redis-tools alone, not redis-server: see
# snowid_redis_programs.  iproute2's ip brings up loopback in the network
# namespace of test/t/redis/resolver_never_answers.pl; libredis-perl is the Redis
# client of test/protocol-search (test/t/coordinator/search_redis_library.pl).
# liblz4-dev and libzstd-dev build Citus (test/tools/pgbuild citus, for
# test/t/integrations/citus.pl), which is configured without libcurl.  curl
# downloads a source of test/sources.txt that no mirror holds.
# postgresql-15-partman is pg_partman for test/t/integrations/pg_partman.pl
# (test/tools/pgbuild --partman builds it into the other versions).  flex,
# bison and libkrb5-dev build pg_tle (test/tools/pgbuild --pg_tle) for
# test/t/sql-edition/pg_tle.pl.
# gnuplot-nox draws the charts of test/bench/run --plot
# (test/t/docs-and-packaging/bench_workload_runs.pl draws them too).  The production stacks'
# tests (test/t/integrations/) run Debian's patroni with etcd-server (etcdctl
# from etcd-client), pg-auto-failover-cli's pg_autoctl with
# postgresql-15-auto-failover, pgbouncer, prometheus-postgres-exporter and
# prometheus' promtool.  Installing them starts none of their services
# where policy-rc.d forbids it; where it does not, their packages start
# them on their standard ports, which the tests never use (they take
# free ports of their own).
# spin is the SPIN model checker of the protocol's model
# (src/coord/protocol.pml, test/t/coordinator/protocol_model.pl).  git and unzip
# make and unpack the release archive (test/tools/dist).  valgrind counts
# the instructions of test/bench/run --instructions
# (test/t/docs-and-packaging/bench_instructions_runs.pl) and test/bench/sql-edition
# --instructions.
SNOWID_PACKAGES=(
	"postgresql-$SNOWID_PG_DEBIAN" "postgresql-server-dev-$SNOWID_PG_DEBIAN"
	libhiredis-dev pkg-config
	redis-tools libfaketime faketime libipc-run-perl libredis-perl make gcc perl iproute2
	nodejs python3 python3-psycopg2 python3-sqlalchemy openssl
	python3-psycopg python3-django ruby ruby-activerecord ruby-pg
	golang-go golang-github-jackc-pgx-v4-dev default-jdk-headless libpostgresql-jdbc-java
	"postgresql-$SNOWID_PG_DEBIAN-partman" gnuplot-nox flex bison libkrb5-dev
	patroni python3-etcd etcd-server etcd-client pgbouncer
	"postgresql-$SNOWID_PG_DEBIAN-auto-failover" pg-auto-failover-cli
	prometheus-postgres-exporter prometheus liblz4-dev libzstd-dev curl spin
	git unzip valgrind
)
# What test/tools/package needs to build the Debian packages (dpkg-buildpackage,
# pg_buildext, debhelper's pgxs sequences), lint them and run their tests
# (pg_virtualenv, in postgresql-common)
SNOWID_DEB_PACKAGES=(
	dpkg-dev debhelper postgresql-server-dev-all postgresql-common lintian git unzip
)
# What test/tools/pgbuild needs to build PostgreSQL 16 to 19 and hiredis 1.2
# (curl downloads a source of test/sources.txt that no mirror holds)
SNOWID_BUILD_PACKAGES=(
	bison flex libssl-dev libreadline-dev zlib1g-dev libicu-dev dpkg-dev
	xz-utils ca-certificates curl
)
# What test/demo needs, and nothing more: Debian's PostgreSQL and what
# builds snowid (perl picks the demo server's port)
SNOWID_DEMO_PACKAGES=(
	"postgresql-$SNOWID_PG_DEBIAN" "postgresql-server-dev-$SNOWID_PG_DEBIAN"
	libhiredis-dev pkg-config make gcc perl
)

# Settings from the caller's environment would point psql, pg_regress and
# the TAP tests at some other server.
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGPASSWORD PGSERVICE \
	PGOPTIONS PGDATA PGAPPNAME PGSSLMODE

note()
{
	printf '\n==> %s\n' "$*"
}

die()
{
	printf '%s: error: %s\n' "$SNOWID_NAME" "$*" >&2
	exit 1
}

# Run a command as root: directly, through sudo, or not at all.
as_root()
{
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "need root for '$*': run as root or install sudo"
	fi
}

# Run a command as the user that owns the temp dir, with the PostgreSQL
# binaries first in PATH (PostgreSQL::Test::Cluster finds initdb there).
# As root, it runs in the temp dir: the clone may lie where that user
# cannot enter (root's home, mode 0700), and a program that looks at its
# working directory (lintian) would fail there.  Every path given to it is
# absolute.
as_user()
{
	if [[ $EUID -eq 0 ]]; then
		runuser -u "$SNOWID_USER" -- env -C "${SNOWID_TMP:-/}" \
			HOME="$SNOWID_TMP" TMPDIR=/tmp LC_ALL=C.UTF-8 \
			PATH="$PG_BINDIR:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
			${PKG_CONFIG_PATH:+PKG_CONFIG_PATH="$PKG_CONFIG_PATH"} \
			${SNOWID_NODE_PATH:+SNOWID_NODE_PATH="$SNOWID_NODE_PATH"} \
			${SNOWID_CLIENT_BUILDS:+SNOWID_CLIENT_BUILDS="$SNOWID_CLIENT_BUILDS"} \
			${SNOWID_EARLIER_RELEASES:+SNOWID_EARLIER_RELEASES="$SNOWID_EARLIER_RELEASES"} \
			${SNOWID_VALKEY_BIN:+SNOWID_VALKEY_BIN="$SNOWID_VALKEY_BIN"} \
			${SNOWID_REDIS_SERVER:+SNOWID_REDIS_SERVER="$SNOWID_REDIS_SERVER"} \
			${SNOWID_REDIS_CLI:+SNOWID_REDIS_CLI="$SNOWID_REDIS_CLI"} \
			${SNOWID_EXPECT_TLS:+SNOWID_EXPECT_TLS="$SNOWID_EXPECT_TLS"} \
			${PG_TEST_PORT_DIR:+PG_TEST_PORT_DIR="$PG_TEST_PORT_DIR"} \
			${SNOWID_CHAOS_SEED:+SNOWID_CHAOS_SEED="$SNOWID_CHAOS_SEED"} \
			${SNOWID_CHAOS_SECONDS:+SNOWID_CHAOS_SECONDS="$SNOWID_CHAOS_SECONDS"} \
			${SNOWID_CHAOS_UNCOVERED:+SNOWID_CHAOS_UNCOVERED="$SNOWID_CHAOS_UNCOVERED"} \
			${SNOWID_STORE:+SNOWID_STORE="$SNOWID_STORE"} \
			"$@"
	else
		env LC_ALL=C.UTF-8 PATH="$PG_BINDIR:$PATH" "$@"
	fi
}

is_installed()
{
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == 'install ok installed' ]]
}

# snowid_packages PACKAGE...: install those of the packages that are
# missing, and leave nothing running that was not running before: the test
# tools start their own servers and stop them, and change nothing else on
# the host.
#
# Redis: Debian 12's redis-server package holds only the service (unit,
# init script, /etc/redis) and /usr/bin/redis-server, a link to
# redis-check-rdb of redis-tools: the one Redis binary, which runs as the
# server unless the name it was started under says redis-check-rdb or
# redis-check-aof.  So only redis-tools is installed (it has no service),
# and snowid_redis_programs links redis-server to that binary in the temp
# dir.  A redis-server service the host already runs is left alone: the
# tests' servers listen on unix sockets in temp dirs and on free ports.
#
# PostgreSQL 15: installing postgresql-15 where no cluster of 15 exists
# creates the cluster 15/main (postgresql-common's configure_version, unless
# create_main_cluster = off in /etc/postgresql-common/createcluster.conf;
# --no-install-recommends makes no difference) and starts it (invoke-rc.d,
# with or without systemd), unless /usr/sbin/policy-rc.d forbids (Docker's
# Debian images ship one).  Both switches are host configuration, not ours
# to write; so when the install made 15/main, it is stopped and dropped
# again at once (pg_dropcluster --stop): the package stays, with no
# cluster, as if create_main_cluster were off.  A cluster that existed
# before is never touched.
snowid_packages()
{
	local missing=() pkg conf=/etc/postgresql/$SNOWID_PG_DEBIAN/main/postgresql.conf
	local had_cluster=

	if [[ ${SNOWID_SKIP_APT:-} == 1 ]]; then
		note "skipping the package check (SNOWID_SKIP_APT=1)"
		return 0
	fi
	command -v dpkg-query >/dev/null || die "not a Debian system: no dpkg-query"
	for pkg in "$@"; do
		is_installed "$pkg" || missing+=("$pkg")
	done
	# Debian's nodejs comes without npm (NodeSource's includes it)
	if [[ " $* " == *' nodejs '* ]] && ! command -v npm >/dev/null && ! is_installed npm; then
		missing+=(npm)
	fi
	[[ ${#missing[@]} -eq 0 ]] && return 0

	if [[ -e $conf ]]; then
		had_cluster=1
	fi
	note "installing ${missing[*]}"
	{
		as_root apt-get -q update &&
			as_root env DEBIAN_FRONTEND=noninteractive \
				apt-get -q install -y --no-install-recommends "${missing[@]}"
	} || die "apt-get failed installing ${missing[*]}"

	if [[ -z $had_cluster && -e $conf ]]; then
		note "dropping the cluster $SNOWID_PG_DEBIAN/main that installing postgresql-$SNOWID_PG_DEBIAN made"
		as_root pg_dropcluster --stop "$SNOWID_PG_DEBIAN" main ||
			die "could not drop the cluster $SNOWID_PG_DEBIAN/main the install made"
	fi
}

# The Redis programs for the TAP tests, both of redis-tools: redis-cli, and
# redis-server as a link of that name to the Redis binary, in the temp dir
# (see snowid_packages).  Exports SNOWID_REDIS_SERVER and
# SNOWID_REDIS_CLI (test/t/lib/SnowidRedis.pm); test/run --redis valkey
# replaces them.
snowid_redis_programs()
{
	local binary=/usr/bin/redis-check-rdb dir=$SNOWID_TMP/bin

	[[ -x $binary ]] || die "$binary not found: install redis-tools"
	as_user mkdir -p "$dir"
	as_user ln -sf "$binary" "$dir/redis-server"
	export SNOWID_REDIS_SERVER=$dir/redis-server
	export SNOWID_REDIS_CLI=/usr/bin/redis-cli
}

# As root, create the unprivileged user the servers run as.
snowid_user()
{
	if [[ $EUID -ne 0 ]]; then
		SNOWID_USER=$(id -un)
		return 0
	fi
	SNOWID_USER=snowid_test
	if ! id -u "$SNOWID_USER" >/dev/null 2>&1; then
		note "creating user $SNOWID_USER"
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$SNOWID_USER"
	fi
}

# The temp dir, made on first use (named after $1), owned by $SNOWID_USER.
snowid_tmp()
{
	local parent=${TMPDIR:-/tmp}

	[[ -z $SNOWID_TMP ]] || return 0
	if [[ $EUID -eq 0 ]]; then
		parent=/tmp
	fi
	SNOWID_TMP=$(mktemp -d "$parent/snowid-${1:-test}.XXXXXX")
	if [[ $EUID -eq 0 ]]; then
		chown "$SNOWID_USER:" "$SNOWID_TMP"
	fi
}

# Copy the sources, not the build products or test output, to the temp dir
# (snowid_tmp $1), into subdirectory ${2:-src}.
snowid_copy()
{
	snowid_tmp "${1:-test}"
	SNOWID_SRC=$SNOWID_TMP/${2:-src}
	as_user mkdir "$SNOWID_SRC"
	tar -C "$SNOWID_TOP" --exclude-vcs \
		--anchored --exclude=./results --exclude=./output_iso \
		--exclude='./tmp_check*' --exclude=./log --exclude='./regression.*' \
		--no-anchored --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=node_modules \
		-cf - . | as_user tar -C "$SNOWID_SRC" -xf -
}

# Whether VERSION is a supported PostgreSQL major (test/versions.sh).
snowid_pg_supported()
{
	[[ " $SNOWID_PG_VERSIONS " == *" $1 "* ]]
}

# The hiredis version a supported PostgreSQL major is tested with.
snowid_pg_hiredis()
{
	local var=SNOWID_HIREDIS_$1

	echo "${!var}"
}

# 1 if the build for a PostgreSQL major must have TLS, else 0.
snowid_pg_tls()
{
	if [[ " $SNOWID_HIREDIS_TLS " == *" $(snowid_pg_hiredis "$1") "* ]]; then
		echo 1
	else
		echo 0
	fi
}

# Whether valgrind can start a backend of PostgreSQL major $1 on this CPU:
# 19 and later calibrate their timing clock with RDTSCP at start wherever
# CPUID offers it, and valgrind 3.19 offers it on every CPU, so on a CPU
# without it the backend dies of SIGILL (test/bench/instructions).
snowid_valgrind_runs()
{
	[[ $1 -lt 19 ]] || grep -qw rdtscp /proc/cpuinfo
}

# The major version of the PostgreSQL a PG_CONFIG given in the environment
# belongs to, or Debian 12's.
snowid_default_pg()
{
	if [[ -n $SNOWID_PG_CONFIG ]]; then
		"$SNOWID_PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p'
	else
		echo "$SNOWID_PG_DEBIAN"
	fi
}

# snowid_use_pg VERSION: use that PostgreSQL major and the hiredis it is
# tested with (test/versions.sh): Debian's packages for
# $SNOWID_PG_DEBIAN, builds from the cache for the others (made by
# test/tools/pgbuild when missing); Debian's hiredis 0.14, or 1.2 from the
# cache.  A PG_CONFIG given in the environment replaces the build of its
# version.  Exports SNOWID_EXPECT_TLS for the TAP tests: 1 if the build
# must have TLS, else 0.
snowid_use_pg()
{
	local version=$1 prefix hiredis

	PG_VERSION=$version
	unset PKG_CONFIG_PATH
	if [[ -n $SNOWID_PG_CONFIG && $(snowid_default_pg) == "$version" ]]; then
		PG_CONFIG=$SNOWID_PG_CONFIG
	elif [[ $version == "$SNOWID_PG_DEBIAN" ]]; then
		PG_CONFIG=/usr/lib/postgresql/$version/bin/pg_config
	else
		# with pg_partman (test/t/integrations/pg_partman.pl) and pg_tle
		# (test/t/sql-edition/pg_tle.pl), but not in release builds
		if [[ -n ${SNOWID_PG_RELEASE:-} ]]; then
			prefix=$("$SNOWID_TOP/test/tools/pgbuild" --release "$version") || return 1
		else
			prefix=$("$SNOWID_TOP/test/tools/pgbuild" --partman --pg_tle "$version") || return 1
		fi
		PG_CONFIG=$prefix/bin/pg_config
	fi
	case $(snowid_pg_hiredis "$version") in
		0.14) ;;
		1.2)
			hiredis=$("$SNOWID_TOP/test/tools/pgbuild" hiredis) || return 1
			export PKG_CONFIG_PATH=$hiredis/lib/pkgconfig
			;;
		*) die "no hiredis for PostgreSQL $version in test/versions.sh" ;;
	esac
	SNOWID_EXPECT_TLS=$(snowid_pg_tls "$version")
	export SNOWID_EXPECT_TLS
	[[ -x $PG_CONFIG ]] || die "$PG_CONFIG not found"
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	export PATH="$PG_BINDIR:$SNOWID_BASE_PATH"
}

# The cache test/tools/pgbuild and snowid_node_modules keep their work in.
snowid_cache_dir()
{
	if [[ $EUID -eq 0 ]]; then
		echo "${SNOWID_CACHE:-/var/cache/snowid}"
	else
		echo "${SNOWID_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/snowid}"
	fi
}

# node-postgres for the client tests: npm ci of test/clients/package.json
# and its lock file, once per version of the two, into the cache (outside
# the clone, readable by $SNOWID_USER).  Sets and exports SNOWID_NODE_PATH,
# the node_modules directory.  Dies if npm is missing or fails: the client
# tests must run, not be skipped.
snowid_node_modules()
{
	local clients=$SNOWID_TOP/test/clients sum dir

	command -v npm >/dev/null ||
		die "npm is needed for the client tests: install nodejs and npm"
	sum=$(cat "$clients/package.json" "$clients/package-lock.json" |
		sha256sum | cut -c1-16)
	dir=$(snowid_cache_dir)/npm-$sum
	if [[ ! -e $dir/.snowid-done ]]; then
		note "npm ci of test/clients into $dir"
		rm -rf -- "$dir"
		mkdir -p "$dir"
		cp "$clients/package.json" "$clients/package-lock.json" "$dir/"
		(cd "$dir" && npm ci --omit=dev --no-audit --no-fund) ||
			die "npm ci failed in $dir"
		chmod -R a+rX "$dir"
		touch "$dir/.snowid-done"
	fi
	export SNOWID_NODE_PATH=$dir/node_modules
}

# The Go and Java recipes of doc/adopting.md with their test drivers, for
# test/t/integrations/go_pgx.pl and integrations/java_jdbc.pl: built once per version of
# their sources into the cache (SnowidClients::build: go offline from
# Debian's Go packages, javac), not once per PostgreSQL version.  Sets and
# exports SNOWID_CLIENT_BUILDS.  Dies if a build fails; a compiler that is
# missing builds nothing, and its test then fails naming the package.
snowid_client_builds()
{
	local sum dir

	sum=$(cat "$SNOWID_TOP/doc/adopting.md" "$SNOWID_TOP/test/t/lib/SnowidClients.pm" \
		"$SNOWID_TOP"/test/clients/frameworks/* | sha256sum | cut -c1-16)
	dir=$(snowid_cache_dir)/clients-$sum
	if [[ ! -e $dir/.snowid-done ]]; then
		note "building the Go and Java recipes of doc/adopting.md into $dir"
		rm -rf -- "$dir"
		mkdir -p "$dir"
		perl -I "$SNOWID_TOP/test/t/lib" -MSnowidClients \
			-e 'SnowidClients::build($ARGV[0])' "$dir" ||
			die "building the Go and Java recipes failed in $dir"
		chmod -R a+rX "$dir"
		touch "$dir/.snowid-done"
	fi
	export SNOWID_CLIENT_BUILDS=$dir
}

# The sources of the earlier releases (SNOWID_RELEASE_* of
# test/versions.sh), for test/t/docs-and-packaging/upgrading_as_documented.pl, which builds each and
# upgrades from it: git archive of each commit of the clone, unpacked
# under the temp dir as $SNOWID_USER (the copy of the sources the tests run
# in has no history); exports SNOWID_EARLIER_RELEASES, with a directory
# X.Y for each.  Nothing where the clone has no history of them (an
# archive of make dist): the test then skips, or fails in CI, naming why.
snowid_release_sources()
{
	local dir=$SNOWID_TMP/releases var version

	for var in ${!SNOWID_RELEASE_*}; do
		git -C "$SNOWID_TOP" cat-file -e "${!var}^{commit}" 2>/dev/null || return 0
	done
	as_user mkdir -p "$dir"
	for var in ${!SNOWID_RELEASE_*}; do
		version=${var#SNOWID_RELEASE_}
		version=${version/_/.}
		as_user mkdir "$dir/$version"
		git -C "$SNOWID_TOP" archive "${!var}" | as_user tar -C "$dir/$version" -xf - ||
			die "could not unpack release $version (${!var}) into $dir/$version"
	done
	export SNOWID_EARLIER_RELEASES=$dir
}

# Citus for test/t/integrations/citus.pl: test/tools/pgbuild citus builds it once
# for the PostgreSQL of PG_CONFIG into a staging directory of the cache;
# its files are then copied into that PostgreSQL (as root where need be),
# as make install puts snowid there, on every run (a PostgreSQL rebuilt
# into the cache gets them back).  Nothing where no Citus release supports
# the version (the test skips, naming why).  Returns non-zero if the build
# or the copy fails (the test then fails: Citus is missing).
snowid_citus()
{
	local stage dir run=()

	stage=$("$SNOWID_TOP/test/tools/pgbuild" citus "$PG_CONFIG") || return 1
	[[ -n $stage ]] || return 0
	if [[ ! -w $("$PG_CONFIG" --pkglibdir) ]]; then
		run=(as_root)
	fi
	"${run[@]}" rm -f "$("$PG_CONFIG" --sharedir)/.snowid-citus" || return 1
	# cp, not tar, leaves the modes of the directories there alone: tar
	# restricts them while it extracts, and a test of another version
	# running meanwhile could not read its own PostgreSQL
	for dir in "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)"; do
		if [[ -d $stage$dir ]]; then
			"${run[@]}" cp -R "$stage$dir/." "$dir/" || return 1
		fi
	done
}

# Valkey for the TAP tests (test/t/redis/valkey.pl, and the whole Redis
# suite with test/run --redis valkey): test/tools/pgbuild fetches it once into
# the cache; SNOWID_VALKEY_BIN is the directory holding valkey-server and
# valkey-cli.  Returns non-zero if it cannot be had.
snowid_valkey()
{
	SNOWID_VALKEY_BIN=$("$SNOWID_TOP/test/tools/pgbuild" valkey) || return 1
	export SNOWID_VALKEY_BIN
}

# Where the PostgreSQL of PG_CONFIG came from, for the log: Debian's
# package, or what test/tools/pgbuild kept beside its build (the release source
# of a Debian source package, or a branch point of test/sources.txt).
snowid_pg_origin()
{
	local origin

	origin=$("$PG_CONFIG" --bindir)/../.snowid-origin
	if [[ -f $origin ]]; then
		cat "$origin"
	elif [[ $PG_CONFIG == /usr/lib/postgresql/* ]]; then
		echo "Debian's package $(dpkg-query -W -f='${binary:Package} ${Version}' \
			"postgresql-$PG_VERSION" 2>/dev/null)"
	else
		echo "$PG_CONFIG"
	fi
}

# Which hiredis the build uses, for the log.
snowid_hiredis_version()
{
	pkg-config --modversion hiredis 2>/dev/null || echo unknown
}

# Everything up to the build; the caller should set its exit trap first.
# Arguments: the temp dir's name, then the PostgreSQL versions to come
# (default Debian's): packages to build the others are installed when
# needed.  The temp dir named demo (test/demo) gets only what the demo
# shows: SNOWID_DEMO_PACKAGES, and no Redis.
snowid_setup()
{
	local name=${1:-test} first v build=() packages=("${SNOWID_PACKAGES[@]}")

	shift || true
	first=${1:-$(snowid_default_pg)}
	for v in "$first" "$@"; do
		if [[ $v != "$SNOWID_PG_DEBIAN" ]]; then
			build=("${SNOWID_BUILD_PACKAGES[@]}")
		fi
	done
	if [[ $name == demo ]]; then
		packages=("${SNOWID_DEMO_PACKAGES[@]}")
	fi
	cd "$SNOWID_TOP" || die "cannot cd to $SNOWID_TOP"
	snowid_packages "${packages[@]}" "${build[@]}"
	snowid_user
	snowid_use_pg "$first" || die "PostgreSQL $first is not available"
	snowid_copy "$name"
	if [[ $name != demo ]]; then
		snowid_redis_programs
	fi
	note "working in $SNOWID_SRC as $SNOWID_USER"
}

# pg_tle for test/t/sql-edition/pg_tle.pl in Debian's PostgreSQL,
# which has no pg_tle package: as root, test/tools/pgbuild builds it into
# that PostgreSQL once, as make install puts snowid there (the builds of
# the other versions have it already).  Returns non-zero where it cannot
# (the test then fails, or skips without the test tools).
snowid_pg_tle()
{
	[[ $EUID -eq 0 && $PG_VERSION == "$SNOWID_PG_DEBIAN" && -z ${SNOWID_PG_RELEASE:-} ]] ||
		return 0
	"$SNOWID_TOP/test/tools/pgbuild" pg_tle "$PG_CONFIG"
}

# snowid_cannot_run PROGRAM: says why $SNOWID_USER cannot run PROGRAM: the
# first directory on its way (links followed) that user may not enter, or
# the program itself, with its mode and owner and what to do; or what
# running it printed.
snowid_cannot_run()
{
	local program=$1 path dir='' part parts what out

	path=$(realpath -e -- "$program" 2>/dev/null) || path=$program
	IFS=/ read -ra parts <<<"${path#/}"
	for part in "${parts[@]:0:${#parts[@]}-1}"; do
		dir=$dir/$part
		if ! as_user test -x "$dir"; then
			what="it may not enter the directory $dir ($(stat -c 'mode %a, owner %U' -- "$dir")): let it (chmod o+x $dir)"
			break
		fi
	done
	if [[ -z ${what:-} ]] && ! as_user test -x "$path"; then
		what="it may not run $path ($(stat -c 'mode %a, owner %U' -- "$path" 2>/dev/null || echo 'not found')): let it (chmod o+rx $path)"
	fi
	if [[ -z ${what:-} ]]; then
		out=$(as_user "$program" --version 2>&1 | head -n 3 | tr '\n' ' ')
		what="running it as $SNOWID_USER printed: ${out:-nothing}"
	elif [[ $EUID -eq 0 ]]; then
		what+=", or set PG_CONFIG to a PostgreSQL installed where $SNOWID_USER can reach it"
	fi
	echo "error: $SNOWID_USER, the user that builds snowid and runs the servers (initdb refuses root), cannot run $program: $what"
}

# Build in the copy, install as root.  Returns non-zero on failure (callers
# use it in a condition, where set -e does not apply).  WERROR=1: warnings
# are errors.  The extension's SQL scripts are replaced, not added to: an
# install script that an earlier make install left (snowid--1.3.sql of
# 1.3) would be run instead of sql/snowid--1.0.sql and its updates
# (test/t/docs-and-packaging/packaging_agrees.pl checks that none is left); and
# snowid_coordinator--1.0.sql of a build between 1.3.0 and its 1.1 is
# what no release installed.
snowid_build()
{
	local extdir run=()

	note "make (PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //'), from the $(snowid_pg_origin); hiredis $(snowid_hiredis_version))"
	# the build runs as $SNOWID_USER: a directory it may not enter (a cache
	# made 0700 by root with mktemp -d, root's home) would hide pg_config
	# from it, and make would then blame libpq-dev
	if ! as_user "$PG_CONFIG" --version >/dev/null 2>&1; then
		snowid_cannot_run "$PG_CONFIG" >&2
		return 1
	fi
	as_user make -C "$SNOWID_SRC" PG_CONFIG="$PG_CONFIG" WERROR=1 || return 1
	note "make install"
	extdir=$("$PG_CONFIG" --sharedir)/extension
	if [[ ! -w $("$PG_CONFIG" --pkglibdir) || ! -w $extdir ]]; then
		run=(as_root)
	fi
	"${run[@]}" rm -f -- "$extdir"/snowid--*.sql "$extdir"/snowid_coordinator--*.sql || return 1
	"${run[@]}" make -C "$SNOWID_SRC" PG_CONFIG="$PG_CONFIG" install || return 1
}

# Remove the temp dir (as root it holds files of $SNOWID_USER).
snowid_remove_tmp()
{
	if [[ -n $SNOWID_TMP && -d $SNOWID_TMP ]]; then
		rm -rf -- "$SNOWID_TMP"
	fi
}

# Whether the machine is quiet enough for a benchmark figure: prints
# "quiet", or "busy: " and what else ran.  Busy is: a process of another
# PostgreSQL, Redis, test run or build than the benchmark's own server
# (the postmaster of $SNOWID_BENCH_DATA and its children), or the machine's
# processors more than a tenth busy over the second it watches them (the
# benchmark's server idle meanwhile).  test/bench/run and
# test/bench/workload refuse a figure taken on a busy machine unless told
# --busy-ok, and record the check beside it.
snowid_bench_quiet()
{
	local own=0 others busy

	if [[ -n ${SNOWID_BENCH_DATA:-} && -s $SNOWID_BENCH_DATA/postmaster.pid ]]; then
		own=$(head -n 1 "$SNOWID_BENCH_DATA/postmaster.pid")
	fi
	others=$(ps -eo pid=,ppid=,comm= | awk -v own="$own" -v me="$$" '
		$1 == own || $2 == own || $1 == me { next }
		$3 ~ /^(postgres|postmaster|redis-server|valkey-server|prove|pg_regress|pgbench|cc1|make|etcd|patroni|pg_autoctl|pgbouncer)$/ {
			n[$3]++
		}
		END { for (c in n) printf "%s%d %s", (sep++ ? ", " : ""), n[c], c }')
	busy=$(
		read -r _ a1 b1 c1 d1 e1 f1 g1 h1 _ </proc/stat
		sleep 1
		read -r _ a2 b2 c2 d2 e2 f2 g2 h2 _ </proc/stat
		awk -v busy=$(((a2 + b2 + c2 + f2 + g2 + h2) - (a1 + b1 + c1 + f1 + g1 + h1))) \
			-v all=$(((a2 + b2 + c2 + d2 + e2 + f2 + g2 + h2) - (a1 + b1 + c1 + d1 + e1 + f1 + g1 + h1))) \
			'BEGIN { printf "%.0f", (all > 0 ? 100 * busy / all : 0) }'
	)
	if [[ -n $others || $busy -gt 10 ]]; then
		echo "busy: processors ${busy}% busy${others:+, also running $others}"
	else
		echo "quiet: processors ${busy}% busy"
	fi
}

# What a benchmark records beside its figures, for the line under each
# chart and table (test/bench/plot): the machine (CPU model, cores and
# memory), the kernel's clock source (on which the cost of reading the
# clock depends: doc/performance.md) and the command that made them, each
# without commas (a CSV field).
snowid_bench_machine()
{
	local model

	model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
	echo "${model:-unknown CPU} $(nproc) cores $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" |
		tr -s ',"' ' '
}

snowid_bench_clock()
{
	cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown
}

# snowid_bench_command COMMAND ARG...: COMMAND and its arguments as one
# line, but --csv and its file (a path of the machine's).
snowid_bench_command()
{
	local line=$1

	shift
	while [[ $# -gt 0 ]]; do
		case $1 in
			--csv) shift ;;
			*) line+=" $1" ;;
		esac
		shift || true
	done
	echo "${line//,/;}"
}

# The benchmarks' throwaway server (test/bench/run, test/bench/workload).
# snowid_bench_start [CONF-LINE...] runs initdb into $SNOWID_TMP/data and
# starts a server with snowid preloaded (datacenter 1, worker 1) that
# listens only on a unix socket in $SNOWID_TMP, with autovacuum, JIT and
# parallel query off and no checkpoint but those the benchmark asks for
# (max_wal_size = 20GB, checkpoint_timeout = 1h), then the given
# postgresql.conf lines; fsync, full_page_writes and synchronous_commit
# keep their defaults (on).  Its log is $SNOWID_TMP/server.log.  Sets
# SNOWID_BENCH_DATA and SNOWID_BENCH_PORT (a port no one listens on, which
# names the socket).
snowid_bench_start()
{
	SNOWID_BENCH_DATA=$SNOWID_TMP/data
	SNOWID_BENCH_PORT=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(
		Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0)->sockport')
	note "initdb and start a server on socket $SNOWID_TMP port $SNOWID_BENCH_PORT"
	as_user initdb -D "$SNOWID_BENCH_DATA" -U postgres -A trust --no-sync >/dev/null
	{
		cat <<EOC

# $SNOWID_NAME
listen_addresses = ''
port = $SNOWID_BENCH_PORT
unix_socket_directories = '$SNOWID_TMP'
shared_preload_libraries = 'snowid'
snowid.datacenter_id = 1
snowid.worker_id = 1
max_wal_size = 20GB
checkpoint_timeout = 1h
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
EOC
		printf '%s\n' "$@"
	} | as_user tee -a "$SNOWID_BENCH_DATA/postgresql.conf" >/dev/null
	as_user pg_ctl -D "$SNOWID_BENCH_DATA" -l "$SNOWID_TMP/server.log" -w start >/dev/null
}

# Stop it, if it runs (for an exit trap).
snowid_bench_stop()
{
	if [[ -n ${SNOWID_BENCH_DATA:-} && -f $SNOWID_BENCH_DATA/postmaster.pid ]]; then
		as_user pg_ctl -D "$SNOWID_BENCH_DATA" -m fast -w stop >/dev/null || true
	fi
}

# psql against it: quiet, unaligned, stopping at the first error; $APP
# names the session (default: the script's name).
snowid_bench_sql()
{
	as_user psql -X -q -At -v ON_ERROR_STOP=1 -d "host=$SNOWID_TMP port=$SNOWID_BENCH_PORT
		user=postgres dbname=postgres application_name=${APP:-$SNOWID_NAME}
		options='-c client_min_messages=warning'" "$@"
}
