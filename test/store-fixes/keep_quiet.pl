# keep_quiet: a quiet period started while one runs ends no earlier.  Off,
# it ends a quiet period's length after the new start, which may be
# earlier.
{
	redis => [ sub {
		$_[0] =~ s/^\s*if was\[1\] and was\[1\] > til then til = was\[1\] end\n//m;
	} ],
	postgresql => [ sub {
		$_[0] =~ s/greatest\(now_ms \+ len, was\.quiet_until_ms\)/now_ms + len/;
	} ],
}
