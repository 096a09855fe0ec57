# Both stores take and refuse the same holder identities, by one rule
# (src/coord/store.h, whose bound and prefix both stores take from it at
# build): 1 to SNOWID_IDENTITY_MAX bytes, no control character, and not
# beginning with "lease ", which the stores' answers put before an
# identity to name the holder of a lease (issue 67: snowid.lua took an
# identity "lease x", which the coordination database refused, so that an
# answer naming the holder "lease x" could not tell a claim for good of
# "lease x" from a lease of "x").  Each function a server calls (the claim,
# the lease claim) refuses an identity the rule refuses before anything is
# written, as the administrator's reset_secret() does; identities at the
# edges of the rule are taken.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMember;
use Test::More;

my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $dc = 16;
my $usage = SnowidCoord::refused_as('usage');

# An administrator's reset_secret() of identity: the refusal ("SQLSTATE:
# message", "SNOWID_... message") or "ok"
sub reset_secret
{
	my ($member) = @_;

	if ($pg)
	{
		my ($ret, $out, $err) = $coord->node->psql('coord',
			"SELECT snowid_coordinator.reset_secret($dc, '" . $member->identity . "')",
			extra_params => [ '-U', 'coord_admin', '-v', 'VERBOSITY=verbose' ]);
		return $err =~ /ERROR:  (\w{5}: [^\n]*)/ ? $1 : $err if $ret != 0;
		return 'ok';
	}
	eval {
		$coord->cli('FCALL', 'snowid_3_reset_secret', 3, $member->keys,
			$member->identity);
	};
	return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
	return 'ok';
}

my $e_acute = "\xc3\xa9";    # two bytes
my %refused = (
	'an empty identity' => '',
	'an identity of 513 bytes' => 'x' x 513,
	'an identity of 514 bytes in 257 two-byte characters' => $e_acute x 257,
	'an identity with a tab' => "dc=$dc host=a\tb port=1 sysid=1",
	'an identity with DEL' => "dc=$dc host=a\x7fb port=1 sysid=1",
	'an identity "lease x"' => 'lease x',
	'an identity "lease " alone' => 'lease ',
	'an identity "lease " and a server\'s name' => "lease dc=$dc host=a port=1 sysid=1");

my $probe = SnowidMember->new($coord, $dc, 'probe');
my $now = $probe->store_now;
my $before = $probe->state;
for my $what (sort keys %refused)
{
	my $member = SnowidMember->named($coord, $dc, $refused{$what});
	like($member->claim(quiet => 9000, margin => 1000), $usage,
		"$what: the claim is refused");
	like($member->lease_claim(max => 31, lease => 60000, client => $now,
			token => 'ab' x 8),
		$usage, "$what: the lease claim is refused");
	like(reset_secret($member), $usage, "$what: reset_secret() is refused");
}
is($probe->state, $before, 'and none of them changed anything');

# at the edges of the rule: taken
my %taken = (
	'an identity of 512 bytes' => 'x' x 512,
	'an identity of 512 bytes in 256 two-byte characters' => $e_acute x 256,
	'an identity of one byte' => 'y',
	'an identity "leasex"' => 'leasex',
	'an identity "Lease x"' => 'Lease x',
	'an identity " lease x"' => ' lease x',
	'an identity "lease" alone' => 'lease');
for my $what (sort keys %taken)
{
	my $member = SnowidMember->named($coord, $dc, $taken{$what});
	like($member->claim(quiet => 9000, margin => 1000), qr/^ok \d+\b/,
		"$what: the claim is granted");
	is(reset_secret($member), 'ok', "$what: reset_secret() takes it");
}

done_testing();
