// Runs the JavaScript recipes of doc/adopting.md, for test/t/integrations/node_frameworks.pl.
//
//   node check.js RECIPES pg|knex|typeorm|drizzle
//       saves orders of 1, 3 and 5 lines with the recipe's saveOrder and
//       reads them back through the framework, checking that every key is a
//       string or a BigInt equal to the server's text of it; then saves an
//       order whose key is 2^53 + 1 (and its line's 2^53 + 2), which a
//       Number cannot hold, and checks it exact through the framework and
//       through JSON.  Prints one line of JSON ({"order", "lines", "orders",
//       "checks"}: the first order).
//   node check.js RECIPES ids EPOCH_MS LAYOUT IDS TEXTS
//       prints "ms datacenter worker sequence" for each id of the file IDS,
//       then "t" or "f" for each text of the file TEXTS (publicIdChecks)
//
// RECIPES is the directory the test wrote the page's files into; the npm
// packages come from NODE_PATH.  Connects with the libpq environment.
// Exits 0, or prints what failed and exits 1.
'use strict';

const fs = require('fs');
const path = require('path');
const pg = require('pg');

const [recipes, what] = process.argv.slice(2);
const PRODUCTS = [['apple'], ['pear', 'plum', 'fig'], ['kiwi', 'lime', 'date', 'sloe', 'yuzu']];
const PAST = 9007199254740993n;   // 2^53 + 1: Number(PAST) is 2^53
let checks = 0;

function check(ok, what)
{
	if (!ok)
		throw new Error('check failed: ' + what);
	checks++;
}

// How each framework reads an order's lines: [{ id, product }], by key
const readers = {
	pg: (r, key) => r.db.query(
		'SELECT id, product FROM order_lines WHERE order_id = $1 ORDER BY id', [key])
		.then((res) => res.rows),
	knex: (r, key) => r.db('order_lines').where('order_id', key).orderBy('id')
		.select('id', 'product'),
	typeorm: (r, key) => r.db.getRepository(r.OrderLine)
		.find({ where: { orderId: key }, order: { id: 'ASC' } }),
	drizzle: (r, key) => {
		const { eq } = require('drizzle-orm');

		return r.db.select().from(r.orderLines).where(eq(r.orderLines.orderId, key))
			.orderBy(r.orderLines.id);
	}
};

function lines(file)
{
	return fs.readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
}

function ids(args)
{
	const { decode, publicIdChecks } = require(path.join(recipes, 'snowid-keys.js'));
	const [epochMs, layout, idFile, textFile] = args;
	const out = [];

	for (const id of lines(idFile))
	{
		const x = decode(id, BigInt(epochMs), layout);

		out.push(`${x.time.getTime()} ${x.datacenterId} ${x.workerId} ${x.sequence}`);
	}
	for (const text of lines(textFile))
		out.push(publicIdChecks(text) ? 't' : 'f');
	process.stdout.write(out.join('\n') + '\n');
}

const toText = (k, v) => (typeof v === 'bigint' ? v.toString() : v);

async function orders()
{
	const r = require(path.join(recipes, `orders-${what}.js`));
	const { KeyPool } = require(path.join(recipes, 'snowid-keys.js'));
	const server = new pg.Client();
	const keyType = what === 'drizzle' ? 'bigint' : 'string';
	let summary;

	if (!readers[what])
		throw new Error('unknown test ' + what);
	if (what === 'typeorm')
		await r.db.initialize();
	await server.connect();
	try
	{
		for (const [n, products] of PRODUCTS.entries())
		{
			const key = await r.saveOrder(r.keys, `customer ${n}`, products);
			const rows = await readers[what](r, key);
			const texts = (await server.query(
				'SELECT id::text AS t FROM order_lines WHERE order_id = $1 ORDER BY id',
				[key.toString()])).rows.map((x) => x.t);

			check(typeof key === keyType, `order ${n}: the key is a ${keyType}`);
			check(rows.length === products.length, `order ${n}: its lines read back`);
			rows.forEach((row, i) => {
				check(typeof row.id === keyType, `order ${n}: a line key is a ${keyType}`);
				check(row.id.toString() === texts[i], `order ${n}: line key exact`);
				check(row.product === products[i], `order ${n}: line product`);
			});
			summary ??= { order: key.toString(), lines: texts };
		}

		// one past 2^53, through the framework and JSON
		const past = new KeyPool(async (n) => Array.from({ length: n },
			(_, i) => (keyType === 'bigint' ? PAST + BigInt(i) : (PAST + BigInt(i)).toString())));
		const key = await r.saveOrder(past, 'past 2^53', ['one']);
		const rows = await readers[what](r, key);
		const json = JSON.stringify({ id: key, lines: rows }, toText);
		const back = JSON.parse(json);

		check(key.toString() === '9007199254740993', 'the key past 2^53 comes back exact');
		check(rows.length === 1 && rows[0].id.toString() === '9007199254740994',
			'its line key past 2^53 is read back exact');
		check(typeof rows[0].id !== 'number', 'and not as a Number');
		check(back.id === '9007199254740993' && back.lines[0].id === '9007199254740994',
			'both exact through JSON, as strings');
		check(json.includes('"9007199254740993"') && !/:\s*9007199254740992/.test(json),
			'JSON carries them as strings, never as a rounded number');
		summary.orders = PRODUCTS.length + 1;
		summary.checks = checks;
		console.log(JSON.stringify(summary));
	}
	finally
	{
		await server.end();
		await (r.db.destroy ?? r.db.end ?? (() => r.db.$client.end())).call(r.db);
	}
}

(what === 'ids' ? Promise.resolve().then(() => ids(process.argv.slice(4))) : orders())
	.catch((e) => {
		console.error(e.stack || e.message);
		process.exit(1);
	});
