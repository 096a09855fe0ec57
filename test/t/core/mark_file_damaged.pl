# The high-water mark file: a corrupt or unreadable file stops generation
# with a clear error (the server keeps running), and snowid never computes
# anything from values no layout could have written; a data directory it
# cannot write to gives one warning, then a clear error.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('mark');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'snowid'
snowid.worker_id = 2
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $before = $node->safe_psql('postgres', 'SELECT snowid_next()');
my $sysid = $node->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
$node->stop;

my $file = $node->data_dir . '/snowid_state';
my $good = slurp_file($file);
like($good, qr/^snowid 4 epoch_ms=\d+ layout=41\/5\/5\/12 high_water_ms=\d+ max_drift_ms=1000 system_identifier=$sysid node=0\/2 instance=[0-9a-f]+ takeover=0\n\z/,
	'the mark file is one readable line, naming the cluster and the node');

sub write_mark
{
	my ($text) = @_;
	open(my $fh, '>', $file) or die $!;
	print $fh $text;
	close $fh;
}

sub next_fails
{
	my ($pattern, $name) = @_;
	$node->start;
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, $pattern, $name);
	is($node->safe_psql('postgres', 'SELECT (snowid_decode(42)).sequence'),
		'42', "$name: the server runs and decoding works");
	$node->stop;
}

(my $bad = $good) =~ s/layout=41\/5\/5\/12/layout=99\/-3\/0\/0/;
write_mark($bad);
next_fails(qr/ERROR:  XX001: snowid high-water mark file "snowid_state" is corrupt/,
	'impossible layout');

($bad = $good) =~ s/high_water_ms=(\d+)/high_water_ms=9${1}0000/;
write_mark($bad);
next_fails(qr/is corrupt/, 'mark beyond any time ids can hold');

($bad = $good) =~ s/\n\z//;
write_mark(substr($bad, 0, length($bad) - 3));
next_fails(qr/is corrupt/, 'truncated file');

($bad = $good) =~ s/max_drift_ms=1000/max_drift_ms=3600001/;
write_mark($bad);
next_fails(qr/is corrupt/, 'drift budget beyond the largest setting');

($bad = $good) =~ s/ node=0\/2 / node=0\/-2 /;
write_mark($bad);
next_fails(qr/is corrupt/, 'impossible worker id');

# Files of version 3 (before it named the instance), 2 (before it named
# the cluster and the node) and 1 (before the mark went into WAL; release
# 1.0's without the takeover) are still read; a file without an instance
# gets a new one.
(my $v3 = $good) =~ s/^snowid 4 (.*) instance=\S+ /snowid 3 $1 /;
(my $v2 = $v3) =~ s/^snowid 3 (.*) system_identifier=\d+ node=\S+ /snowid 2 $1 /;
(my $v1 = $v2) =~ s/^snowid 2 (.*) max_drift_ms=\d+ /snowid 1 $1 /;
(my $v1_0 = $v1) =~ s/ takeover=0\n\z/\n/
  or die "no takeover=0 at the end of $v1";
for my $old ([ 3, $v3 ], [ 2, $v2 ], [ 1, $v1 ], [ '1 of release 1.0', $v1_0 ])
{
	my ($version, $line) = @$old;

	write_mark($line);
	$node->start;
	cmp_ok($node->safe_psql('postgres', 'SELECT snowid_next()'), '>', $before,
		"a version $version file: ids continue above the earlier ones");
	$before = $node->safe_psql('postgres', 'SELECT snowid_next()');
	$node->stop;
	like(slurp_file($file), qr/^snowid 4 .* system_identifier=$sysid node=0\/2 instance=[0-9a-f]+ /,
		'and the file is written as version 4, with an instance');
}

write_mark($good);
chmod 0000, $file;
SKIP:
{
	skip 'running as root: the file stays readable', 2 if -r $file;
	next_fails(qr/ERROR:  58030: could not read snowid high-water mark file "snowid_state"/,
		'unreadable file');
}
chmod 0600, $file;

$node->start;
cmp_ok($node->safe_psql('postgres', 'SELECT snowid_next()'), '>', $before,
	'the good file back: ids continue above the earlier ones');

# A data directory the server cannot write to.  The mark is renewed early,
# half a lease (500 ms) before it runs out; when that fails it warns once
# and is not tried again until the mark is really needed, then the call
# fails with the error of the write.  Once the directory is writable again
# ids continue, and the next failure warns once again.
#
# The session takes ids until the mark has just been renewed, makes the
# directory read-only itself (COPY TO PROGRAM, no row written) and goes
# on: its early renewal, due half a lease later, must warn.  (Made
# read-only from outside, the directory could turn so a whole lease after
# the last renewal on a slow machine, and then no early renewal is due.)
my $dir = $node->data_dir;
my $ids_until_error = q{
	SET statement_timeout = '60s';
	DO $$
	DECLARE
		mark timestamptz := (SELECT high_water_time FROM snowid_status());
	BEGIN
		WHILE (SELECT high_water_time FROM snowid_status()) = mark LOOP
			PERFORM snowid_next();
		END LOOP;
		COPY (SELECT 1 WHERE false) TO PROGRAM 'chmod 0500 @DIR@';
		FOR i IN 1..100000000 LOOP PERFORM snowid_next(); END LOOP;
	END $$;};
$ids_until_error =~ s/\@DIR\@/$dir/;

sub read_only_episode
{
	my ($name) = @_;
	my $log_offset = -s $node->logfile;

	my ($ret, $out, $err) = $node->psql('postgres', $ids_until_error);
	my $warnings = () = $err =~ /WARNING:  could not create file/g;
	is($warnings, 1, "$name: one warning");
	like($err,
		qr/ERROR:  could not create file "snowid_state.tmp": Permission denied/,
		"$name: then the error of the write");

	($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()');
	like($err, qr/ERROR:  could not create file "snowid_state.tmp"/,
		"$name: the next call fails the same way");
	unlike($err, qr/WARNING/, "$name: without a warning");

	my $log = slurp_file($node->logfile, $log_offset);
	my $logged = () = $log =~ /WARNING:  could not create file/g;
	is($logged, 1, "$name: one warning in the log");

	chmod 0700, $dir or die "could not chmod $dir: $!";
	my $next = $node->safe_psql('postgres', 'SELECT snowid_next()');
	cmp_ok($next, '>', $before,
		"$name: writable again, ids continue above the earlier ones");
	$before = $next;
}

SKIP:
{
	skip 'running as root: the data directory stays writable', 12
	  if $> == 0;
	read_only_episode('read-only data directory');
	read_only_episode('read-only again');
}
$node->stop;
done_testing();
