# What the tests of the SQL edition (snowid_sql, doc/managed.md) share: psql
# as a role, and the objects of an installation as a text, to compare an
# updated installation with a fresh one.
package SnowidSqlEdition;

use strict;
use warnings;

use IPC::Run ();

# psql as a role on a connection string, stopping at the first error, with
# verbose errors: (exit code, stdout, stderr)
sub psql_as
{
	my ($connstr, $sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v',
			'VERBOSITY=verbose', '-d', $connstr, '-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err) ? 0 : $? >> 8;
	chomp $out;
	return ($rc, $out, $err);
}

# Every object of the SQL edition in schema public and snowid_sql_private
# of a database (the names
# that begin with snowid: a test's own tables are left out), one line each:
# functions with their signatures, results, owners, privileges, settings,
# bodies (but that of snowid_sql_fixed(), which the configuration's
# triggers make from the row) and comments; tables and sequences with their owners, privileges
# and comments; columns in order with their types, defaults, privileges and
# comments; constraints and triggers; and whether each function or relation
# belongs to an extension.
sub objects
{
	my ($node, $db) = @_;

	return $node->safe_psql($db, q{
	WITH s AS (SELECT ns FROM unnest(ARRAY['public'::regnamespace,
										   to_regnamespace('snowid_sql_private')]) ns
			   WHERE ns IS NOT NULL)
	SELECT string_agg(line, E'\n' ORDER BY line) FROM (
		SELECT format('function %s returns %s owner %s acl %s security definer %s settings %s volatility %s parallel %s strict %s body %s comment %s member %s',
				p.oid::regprocedure, pg_get_function_result(p.oid),
				p.proowner::regrole, p.proacl, p.prosecdef, p.proconfig,
				p.provolatile, p.proparallel, p.proisstrict,
				CASE WHEN p.proname = 'snowid_sql_fixed' THEN 'made from the configuration'
					 ELSE md5(coalesce(p.prosrc, '') || coalesce(pg_get_function_sqlbody(p.oid), '')) END,
				obj_description(p.oid, 'pg_proc'),
				EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
						AND d.objid = p.oid AND d.deptype = 'e')) AS line
		FROM pg_proc p, s WHERE p.pronamespace = s.ns AND p.proname LIKE 'snowid%'
		UNION ALL
		SELECT format('relation %s kind %s owner %s acl %s comment %s member %s',
				c.relname, c.relkind, c.relowner::regrole, c.relacl,
				obj_description(c.oid, 'pg_class'),
				EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
						AND d.objid = c.oid AND d.deptype = 'e'))
		FROM pg_class c, s WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%'
		UNION ALL
		SELECT format('column %s.%s %s %s not null %s default %s acl %s comment %s',
				c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
				a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attacl,
				col_description(c.oid, a.attnum))
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%' AND c.relkind = 'r'
		  AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT format('constraint %s of %s: %s', co.conname, co.conrelid::regclass,
				pg_get_constraintdef(co.oid))
		FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%'
		UNION ALL
		SELECT format('trigger %s', pg_get_triggerdef(t.oid))
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%' AND NOT t.tgisinternal
	) x});
}

1;
