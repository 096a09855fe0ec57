# bounds: the quiet period a call declares and the generation it saw are
# bounded by what a snowid server sends (SNOWID_QUIET_DECLARED_MAX_MS, the
# store's clock plus SNOWID_CLOCK_MARGIN_MAX_MS).  Off, both pass up to the
# year 10000 (the model's NO_FIX_BOUNDS).
{
	redis => [ sub {
		$_[0] =~ s/, QUIET_MAX\}/, 253402300800000}/;
	}, sub {
		$_[0] =~ s/^(\s*)local gen_max = .*$/${1}local gen_max = 253402300800000/m;
	} ],
	postgresql => [ sub {
		$_[0] =~ s/(check_ms\('quiet_ms', quiet_ms,\n\s*\d+,\n\s*)\d+,/${1}253402300800000,/;
	}, sub {
		$_[0] =~ s/(check_ms\('seen_generation',\n\s*coalesce\(seen_generation, 0\), 0,\n\s*)[^\n]*,\n/${1}253402300800000,\n/;
	} ],
}
