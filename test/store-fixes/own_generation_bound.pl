# own_generation_bound: a generation seen past the store's clock plus the
# widest clock margin is refused, even if the store's record holds it, and
# the store never makes one past that bound.  Off, a generation up to the
# record's passes, and a loss makes one past the caller's however far.
{
	redis => [ sub {
		$_[0] =~ s/^(\s*)(local gen_max = .*\n)/$1$2${1}gen_max = math.max(tonumber(string.match(st.state or '', '^(%x+) ') or '0', 16) or 0, gen_max)\n/m;
	}, sub {
		$_[0] =~ s/^\s*g = math\.min\(g, st\.now \+ MARGIN_MAX\)\n//m;
	} ],
	postgresql => [ sub {
		$_[0] =~ s/(check_ms\('seen_generation',\n\s*coalesce\(seen_generation, 0\), 0,\n\s*)([^\n]*),\n/${1}greatest(d.generation, $2),\n/;
	}, sub {
		$_[0] =~ s/^\s*d\.generation := least\(d\.generation, now_ms \+ \d+\);\n//m;
	} ],
}
