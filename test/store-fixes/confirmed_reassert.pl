# confirmed_reassert: after a loss, a restart's re-assertion counts only if
# its last granted call lies late enough before the quiet period's start
# (stale()).  Off, every re-assertion counts (the model's
# NO_FIX_CONFIRMED_REASSERT).
{
	redis => [ sub {
		$_[0] =~ s/if confirmed == nil then return false end/if true then return false end/;
	} ],
	postgresql => [ sub {
		$_[0] =~ s/(SELECT confirmed_ms IS NOT NULL\n)/$1\t\tAND false\n/;
	} ],
}
