# quiet_min: a quiet period declared shorter than any server declares
# (SNOWID_QUIET_DECLARED_MIN_MS) is refused.  Off, any from 0 passes (the
# model's NO_FIX_QUIET_LEAST).
{
	redis => [ sub {
		$_[0] =~ s/\{'quiet_ms', quiet_ms or QUIET_MIN, QUIET_MIN,/{'quiet_ms', quiet_ms or 0, 0,/;
	} ],
	postgresql => [ sub {
		$_[0] =~ s/(check_ms\('quiet_ms', quiet_ms,\n\s*)\d+,/${1}0,/;
	} ],
}
