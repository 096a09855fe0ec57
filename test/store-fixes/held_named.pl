# held_named: a claim of an id the store holds for the server, but that the
# claim does not name (neither its configured id nor the one its cache file
# names), is no re-assertion: it waits for the quiet period and its floor.
# Off, the store's holding counts as a re-assertion (the model's
# NO_FIX_HELD_QUIET).
{
	redis => [ sub {
		$_[0] =~ s/^(\s*)(local reasserts = reassert .*\n)/$1$2$1if held then reasserts = true end\n/m;
	} ],
	postgresql => [ sub {
		$_[0] =~ s/^(\treasserts := reassert AND keep IN \(want, prefer\);\n)/$1\tIF EXISTS (SELECT FROM snowid_coordinator.worker_ids x
				WHERE x.datacenter = dc AND x.worker_id = keep
				  AND x.holder = me AND NOT x.on_lease) THEN
		reasserts := true;
	END IF;\n/m;
	} ],
}
