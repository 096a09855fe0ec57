// Runs the Go recipes of doc/adopting.md (snowid.go, orders_pgx.go), for
// test/t/integrations/go_pgx.pl, which builds this file with them.
//
//	check_pgx orders
//	    saves orders of 1, 3 and 5 lines with SaveOrder, reads them back and
//	    checks every key; prints one line of JSON ({"order", "lines",
//	    "orders", "checks"}: the first order)
//	check_pgx ids EPOCH_MS LAYOUT IDS TEXTS
//	    prints "ms datacenter worker sequence" for each id of the file IDS,
//	    then "t" or "f" for each text of the file TEXTS (PublicIDChecks)
//
// Connects with the libpq environment.  Exits 0, or prints what failed and
// exits 1.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v4"
)

var checks int

func check(ok bool, what string) {
	if !ok {
		panic("check failed: " + what)
	}
	checks++
}

func lines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func ids(args []string) {
	epochMs, _ := strconv.ParseInt(args[0], 10, 64)
	var d, w, s uint
	if _, err := fmt.Sscanf(args[1], "%d/%d/%d/%d", new(uint), &d, &w, &s); err != nil {
		panic(err)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, line := range lines(args[2]) {
		id, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			panic(err)
		}
		t, dc, worker, seq := Decode(id, epochMs, d, w, s)
		fmt.Fprintf(out, "%d %d %d %d\n", t.UnixMilli(), dc, worker, seq)
	}
	for _, line := range lines(args[3]) {
		if PublicIDChecks(line) {
			fmt.Fprintln(out, "t")
		} else {
			fmt.Fprintln(out, "f")
		}
	}
}

func orders() {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "")
	if err != nil {
		panic(err)
	}
	defer conn.Close(ctx)
	keys := &KeyPool{DB: conn, Size: 100, MaxAge: time.Minute}
	products := [][]string{{"apple"}, {"pear", "plum", "fig"}, {"kiwi", "lime", "date", "sloe", "yuzu"}}
	var summary map[string]interface{}
	for n, list := range products {
		key, err := SaveOrder(ctx, conn, keys, fmt.Sprintf("customer %d", n), list)
		check(err == nil, fmt.Sprintf("order %d saved: %v", n, err))
		rows, err := conn.Query(ctx, "SELECT l.id, l.id::text, l.product FROM order_lines l "+
			"WHERE l.order_id = $1 ORDER BY l.id", key)
		check(err == nil, "lines read back")
		var texts, got []string
		for rows.Next() {
			var id int64
			var text, product string
			check(rows.Scan(&id, &text, &product) == nil, "a line scanned")
			check(strconv.FormatInt(id, 10) == text, fmt.Sprintf("order %d: line key exact", n))
			texts = append(texts, text)
			got = append(got, product)
		}
		check(rows.Err() == nil, "lines read")
		check(strings.Join(got, ",") == strings.Join(list, ","), fmt.Sprintf("order %d: its lines", n))
		if summary == nil {
			summary = map[string]interface{}{"order": strconv.FormatInt(key, 10), "lines": texts}
		}
	}
	summary["orders"] = len(products)
	summary["checks"] = checks
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
}

func main() {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, r)
			os.Exit(1)
		}
	}()
	switch os.Args[1] {
	case "orders":
		orders()
	case "ids":
		ids(os.Args[2:])
	default:
		panic("unknown test " + os.Args[1])
	}
}
