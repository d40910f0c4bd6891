// bench-tds-go: the driver half of bench/tds. bench-tds runs it once per server and
// measure, against the servers it started, and reads one JSON object from stdout.
//
//   - Mesquite through go-mssqldb (database/sql), PostgreSQL through pgx v5 (pgx.Conn).
//   - -measure roundtrips: "SELECT 1" as fast as -conns goroutines can send it for
//     -seconds, after an unmeasured warm-up (a tenth of that, at most 0.5 s) on the same
//     connections; each round trip scans its value into an int64.
//   - -measure stream: "SELECT id, name, ts" over the table bench-tds loaded, read row by
//     row, each value scanned into Go variables (int64, string, time.Time); one
//     unmeasured pass, then -runs measured ones. Rows, the sum of ids and the total name
//     length are reported so bench-tds can check them.
//
// Query shapes: a plain text query without parameters on both sides, each driver with its
// defaults, what an application gets. go-mssqldb's db.Query with no arguments sends a SQL
// batch (no sp_executesql); through database/sql's pool, every query after the first on a
// connection carries the RESETCONNECTION flag (database/sql resets a session it hands
// out again). pgx's default mode (QueryExecModeCacheStatement) prepares a statement once
// per connection and then sends Bind/Execute/Sync, results in binary: one round trip per
// query, as the batch is. -pgx-mode simple uses the simple query protocol instead (text
// results), and -mssql-conn pinned keeps one sql.Conn per goroutine (no reset), to see
// what either choice costs.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	mssql "github.com/microsoft/go-mssqldb"
)

type options struct {
	driver, dsn, measure, pgxMode, mssqlConn string
	conns, runs                              int
	seconds                                  float64
	rows                                     int64
}

func main() {
	var o options
	flag.StringVar(&o.driver, "driver", "", "mssql (go-mssqldb) or pgx")
	flag.StringVar(&o.dsn, "dsn", "", "connection string for the driver")
	flag.StringVar(&o.measure, "measure", "", "roundtrips or stream")
	flag.IntVar(&o.conns, "conns", 1, "connections (roundtrips)")
	flag.Float64Var(&o.seconds, "seconds", 5, "measured seconds (roundtrips)")
	flag.Int64Var(&o.rows, "rows", 1000000, "rows the stream table holds")
	flag.IntVar(&o.runs, "runs", 1, "measured passes (stream)")
	flag.StringVar(&o.pgxMode, "pgx-mode", "cache", "pgx query exec mode: cache (pgx's default) or simple")
	flag.StringVar(&o.mssqlConn, "mssql-conn", "pool", "go-mssqldb connections: pool (db.Query) or pinned (one sql.Conn per goroutine)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-tds-go: -cpuprofile: %v\n", err)
			os.Exit(1)
		}
	}
	out, err := run(o)
	pprof.StopCPUProfile()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-tds-go: %s %s: %v\n", o.driver, o.measure, err)
		os.Exit(1)
	}
	out["driver"] = driverVersion(o.driver)
	out["go"] = runtime.Version()
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		os.Exit(1)
	}
}

func run(o options) (map[string]any, error) {
	if o.conns < 1 || o.seconds <= 0 || o.rows < 1 || o.runs < 1 {
		return nil, fmt.Errorf("invalid -conns, -seconds, -rows or -runs")
	}
	if o.pgxMode != "cache" && o.pgxMode != "simple" {
		return nil, fmt.Errorf("-pgx-mode must be cache or simple")
	}
	if o.mssqlConn != "pool" && o.mssqlConn != "pinned" {
		return nil, fmt.Errorf("-mssql-conn must be pool or pinned")
	}
	ctx := context.Background()
	var open func() (querier, error)
	var closeAll func()
	var stream string
	switch o.driver {
	case "mssql":
		connector, err := mssql.NewConnector(o.dsn)
		if err != nil {
			return nil, err
		}
		db := sql.OpenDB(connector)
		db.SetMaxOpenConns(o.conns)
		db.SetMaxIdleConns(o.conns)
		closeAll = func() { db.Close() }
		open = func() (querier, error) {
			if o.mssqlConn == "pool" {
				return sqlQuerier{db.QueryContext}, nil
			}
			c, err := db.Conn(ctx)
			if err != nil {
				return nil, err
			}
			return sqlQuerier{c.QueryContext}, nil
		}
		stream = "SELECT id, name, ts FROM dbo.stream_t"
	case "pgx":
		cfg, err := pgx.ParseConfig(o.dsn)
		if err != nil {
			return nil, err
		}
		if o.pgxMode == "simple" {
			cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		}
		var mu sync.Mutex
		var conns []*pgx.Conn
		closeAll = func() {
			for _, c := range conns {
				c.Close(ctx)
			}
		}
		open = func() (querier, error) {
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			return pgxQuerier{c}, nil
		}
		stream = "SELECT id, name, ts FROM stream_t"
	default:
		return nil, fmt.Errorf("-driver must be mssql or pgx")
	}
	defer closeAll()
	switch o.measure {
	case "roundtrips":
		return roundTrips(ctx, open, o.conns, o.seconds)
	case "stream":
		q, err := open()
		if err != nil {
			return nil, err
		}
		return streamPasses(ctx, q, stream, o.rows, o.runs)
	}
	return nil, fmt.Errorf("-measure must be roundtrips or stream")
}

// rowSource is what both drivers' results offer (sql.Rows and pgx.Rows).
type rowSource interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// querier runs one query and hands its rows to f.
type querier interface {
	query(ctx context.Context, sql string, f func(rowSource) error) error
}

type sqlQuerier struct {
	q func(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s sqlQuerier) query(ctx context.Context, text string, f func(rowSource) error) error {
	rows, err := s.q(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := f(rows); err != nil {
		return err
	}
	return rows.Close()
}

type pgxQuerier struct{ c *pgx.Conn }

func (p pgxQuerier) query(ctx context.Context, text string, f func(rowSource) error) error {
	rows, err := p.c.Query(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := f(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

func selectOne(ctx context.Context, q querier) error {
	return q.query(ctx, "SELECT 1", func(r rowSource) error {
		var v int64
		n := 0
		for r.Next() {
			if err := r.Scan(&v); err != nil {
				return err
			}
			n++
		}
		if err := r.Err(); err != nil {
			return err
		}
		if n != 1 || v != 1 {
			return fmt.Errorf("SELECT 1 gave %d rows, value %d", n, v)
		}
		return nil
	})
}

// roundTrips: one goroutine per connection, all released together, each counting its
// round trips until the stop flag; a warm-up pass on the same connections first.
func roundTrips(ctx context.Context, open func() (querier, error), conns int, seconds float64) (map[string]any, error) {
	qs := make([]querier, conns)
	for i := range qs {
		q, err := open()
		if err != nil {
			return nil, err
		}
		qs[i] = q
	}
	pass := func(d time.Duration) (int64, time.Duration, error) {
		var stop atomic.Bool
		var total atomic.Int64
		var firstErr error
		var errOnce sync.Once
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, q := range qs {
			wg.Add(1)
			go func(q querier) {
				defer wg.Done()
				<-start
				var n int64
				for !stop.Load() {
					if err := selectOne(ctx, q); err != nil {
						errOnce.Do(func() { firstErr = err })
						stop.Store(true)
						break
					}
					n++
				}
				total.Add(n)
			}(q)
		}
		t := time.Now()
		close(start)
		time.Sleep(d)
		stop.Store(true)
		wg.Wait()
		return total.Load(), time.Since(t), firstErr
	}
	warm := time.Duration(min(seconds/10, 0.5) * float64(time.Second))
	warmOps, _, err := pass(warm)
	if err != nil {
		return nil, err
	}
	cpu0 := selfCPU()
	ops, elapsed, err := pass(time.Duration(seconds * float64(time.Second)))
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"conns":        conns,
		"ops":          ops,
		"warmup_ops":   warmOps,
		"seconds":      elapsed.Seconds(),
		"per_sec":      float64(ops) / elapsed.Seconds(),
		"client_cpu_s": (selfCPU() - cpu0).Seconds(),
	}, nil
}

type checksum struct{ rows, idSum, nameLen int64 }

func streamOnce(ctx context.Context, q querier, text string) (checksum, error) {
	var s checksum
	err := q.query(ctx, text, func(r rowSource) error {
		var id int64
		var name string
		var ts time.Time
		for r.Next() {
			if err := r.Scan(&id, &name, &ts); err != nil {
				return err
			}
			s.rows++
			s.idSum += id
			s.nameLen += int64(len(name))
		}
		return r.Err()
	})
	return s, err
}

func streamPasses(ctx context.Context, q querier, text string, n int64, runs int) (map[string]any, error) {
	check := func(s checksum) error {
		if s.rows != n || s.idSum != n*(n-1)/2 {
			return fmt.Errorf("streamed %d rows with id sum %d, expected %d and %d", s.rows, s.idSum, n, n*(n-1)/2)
		}
		return nil
	}
	s, err := streamOnce(ctx, q, text)
	if err != nil {
		return nil, err
	}
	if err := check(s); err != nil {
		return nil, err
	}
	var times, cpus []float64
	for i := 0; i < runs; i++ {
		cpu0 := selfCPU()
		t := time.Now()
		s, err = streamOnce(ctx, q, text)
		elapsed := time.Since(t)
		if err != nil {
			return nil, err
		}
		if err := check(s); err != nil {
			return nil, err
		}
		times = append(times, elapsed.Seconds())
		cpus = append(cpus, (selfCPU() - cpu0).Seconds())
	}
	return map[string]any{
		"rows":         s.rows,
		"id_sum":       s.idSum,
		"name_len":     s.nameLen,
		"passes_s":     times,
		"client_cpu_s": cpus,
	}, nil
}

// selfCPU is this process's user and system time (all goroutines).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// driverVersion names the driver module and its version, from the build's module list.
func driverVersion(driver string) string {
	name, path := "pgx", "github.com/jackc/pgx/v5"
	if driver == "mssql" {
		name, path = "go-mssqldb", "github.com/microsoft/go-mssqldb"
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return name + " " + m.Version
			}
		}
	}
	return name
}
