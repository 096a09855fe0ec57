# new_proved: Redis' new_datacenter() refuses while any of the
# datacenter's three keys exists, or while its eviction policy may have
# evicted them.  Off, only a state record, a fence or a holder refuses it.
{
	redis => [ sub {
		$_[0] =~ s/redis\.call\('EXISTS', keys\[1\], keys\[2\], keys\[3\]\) > 0 then/false then/;
	}, sub {
		$_[0] =~ s/if not policy or string\.sub\(policy, 1, 8\) == 'allkeys-' then/if false then/;
	} ],
}
