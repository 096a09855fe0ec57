// test/clients/orders.js: an order and its lines through node-postgres (the
// npm "pg" package), run by test/t/integrations/node_postgres.pl.
//
// Takes the keys of an order and its three lines first (snowid_next_batch),
// inserts them in one transaction, reads them back, and checks that every
// key came back exactly: compared with the server's own text of it.
//
//   node orders.js string   default layout: bigint read as a string (pg's default)
//   node orders.js bigint   default layout: bigint read as a JavaScript BigInt
//   node orders.js number   a layout that keeps ids below 2^53: bigint read
//                           as a Number, and through JSON.stringify/parse
//
// Connects with the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER).
// Prints one line of JSON ({"order": "<id>", "lines": [...], "checks": n})
// and exits 0, or prints what failed and exits 1.
'use strict';

const pg = require('pg');

const INT8_OID = 20;
const mode = process.argv[2];
let checks = 0;

function check(ok, what)
{
	if (!ok)
		throw new Error('check failed: ' + what);
	checks++;
}

// How each mode reads a bigint: the recipes the README shows.
const types = {
	getTypeParser(oid, format)
	{
		if (oid === INT8_OID && mode === 'bigint')
			return (text) => BigInt(text);
		if (oid === INT8_OID && mode === 'number')
			return (text) => {
				const n = Number(text);

				if (!Number.isSafeInteger(n))
					throw new Error(`id ${text} does not fit a JavaScript Number`);
				return n;
			};
		return pg.types.getTypeParser(oid, format);
	}
};

// The key as the server printed it, from the key as this client holds it.
function keyText(key)
{
	return typeof key === 'string' ? key : key.toString();
}

async function main()
{
	const client = new pg.Client({ types });
	const products = ['apple', 'pear', 'plum'];

	if (!['string', 'bigint', 'number'].includes(mode))
		throw new Error('usage: node orders.js string|bigint|number');
	await client.connect();
	try
	{
		// the keys first: the order's and one per line, ascending
		const taken = await client.query(
			'SELECT id, id::text AS id_text FROM snowid_next_batch(4) AS id ORDER BY id');
		const keys = taken.rows.map((r) => r.id);

		check(keys.length === 4, 'four keys taken');
		for (const r of taken.rows)
		{
			check(typeof r.id === { string: 'string', bigint: 'bigint', number: 'number' }[mode],
				`key ${r.id_text} read as a ${mode}`);
			check(keyText(r.id) === r.id_text, `key ${r.id_text} read exactly`);
		}
		for (let i = 1; i < keys.length; i++)
			check(BigInt(keyText(keys[i])) > BigInt(keyText(keys[i - 1])), 'keys ascend');
		if (mode === 'number')
			check(keys.every((k) => k <= Number.MAX_SAFE_INTEGER), 'keys below 2^53');
		else
			check(keys.every((k) => BigInt(keyText(k)) > BigInt(Number.MAX_SAFE_INTEGER)),
				'keys above 2^53: a Number could not hold them');

		// the order and its lines in one transaction, keys sent back as taken
		const [orderKey, ...lineKeys] = keys;

		await client.query('BEGIN');
		await client.query('INSERT INTO orders (id, customer) VALUES ($1, $2)',
			[orderKey, 'alice']);
		for (let i = 0; i < lineKeys.length; i++)
			await client.query(
				'INSERT INTO order_lines (id, order_id, product) VALUES ($1, $2, $3)',
				[lineKeys[i], orderKey, products[i]]);
		await client.query('COMMIT');

		// read back by the order's key
		const back = await client.query(
			`SELECT o.id AS order_id, o.id::text AS order_text, l.id AS line_id,
				l.id::text AS line_text, l.product
			 FROM orders o JOIN order_lines l ON l.order_id = o.id
			 WHERE o.id = $1 ORDER BY l.id`, [orderKey]);

		check(back.rows.length === 3, 'three lines read back');
		back.rows.forEach((r, i) => {
			check(r.order_id === orderKey, 'order key read back equal');
			check(keyText(r.order_id) === r.order_text, 'order key read back exactly');
			check(r.line_id === lineKeys[i], `line ${i} key read back equal`);
			check(keyText(r.line_id) === r.line_text, `line ${i} key read back exactly`);
			check(r.product === products[i], `line ${i} product`);
		});

		// JSON built by the server, ids as text: exact in every mode
		const doc = await client.query(
			`SELECT json_build_object('id', o.id::text,
				'lines', (SELECT json_agg(l.id::text ORDER BY l.id)
						  FROM order_lines l WHERE l.order_id = o.id)) AS doc
			 FROM orders o WHERE o.id = $1`, [orderKey]);

		check(doc.rows[0].doc.id === back.rows[0].order_text,
			'order key exact in server-built JSON');
		check(JSON.stringify(doc.rows[0].doc.lines) ===
			JSON.stringify(back.rows.map((r) => r.line_text)),
			'line keys exact in server-built JSON');

		// as an API would send it: the order as JSON
		const order = {
			id: back.rows[0].order_id,
			lines: back.rows.map((r) => ({ id: r.line_id, product: r.product }))
		};
		let json;

		if (mode === 'bigint')
		{
			// JSON.stringify refuses a BigInt: send it as text
			let refused = false;

			try
			{
				JSON.stringify(order);
			}
			catch (e)
			{
				refused = e instanceof TypeError;
			}
			check(refused, 'JSON.stringify refuses a BigInt');
			json = JSON.stringify(order, (k, v) => (typeof v === 'bigint' ? v.toString() : v));
		}
		else
			json = JSON.stringify(order);

		const parsed = JSON.parse(json);

		check(keyText(parsed.id) === back.rows[0].order_text, 'order key exact through JSON');
		parsed.lines.forEach((l, i) => {
			check(keyText(l.id) === back.rows[i].line_text, `line ${i} key exact through JSON`);
		});
		if (mode === 'number')
			check(typeof parsed.id === 'number', 'JSON carries the key as a number');
		else
			check(typeof parsed.id === 'string', 'JSON carries the key as a string');

		console.log(JSON.stringify({
			order: back.rows[0].order_text,
			lines: back.rows.map((r) => r.line_text),
			checks
		}));
	}
	finally
	{
		await client.end();
	}
}

main().catch((e) => {
	console.error(e.message);
	process.exit(1);
});
