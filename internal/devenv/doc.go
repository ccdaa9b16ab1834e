// Package devenv runs the hub's backing services on the local machine, for
// `hubctl dev` and for tests: a real PostgreSQL server started from the
// installed binaries ([StartPostgres]) and an in-process Kafka cluster
// ([StartKafka], franz-go's kfake).
//
// # PostgreSQL
//
// The server is started directly (not through pg_ctl) so that this process
// owns it: it listens on 127.0.0.1 only, runs in its own process group, and on
// Linux the kernel kills it when this process dies (Pdeathsig), so a crashed
// `hubctl dev` or test binary leaves no server behind. Each server gets a
// short-named runtime directory under /tmp for its unix socket (socket paths
// are limited to about 100 bytes) and, when no data directory is given, its
// cluster; [Postgres.Stop] removes it, and the next start removes those of
// owners that died without stopping.
//
// A long-running caller should catch SIGINT and SIGTERM and call
// [Postgres.Stop]: dying by a signal takes the server down without a
// checkpoint, which costs a crash recovery at the next start.
//
// PostgreSQL refuses to run as root. When this process is root, initdb and
// postgres run as the "postgres" OS user, which must then be able to reach
// the data directory.
//
// A persistent data directory keeps its cluster across restarts: initdb runs
// only when the directory holds no cluster yet, into a staging directory that
// is renamed into place once complete, so an interrupted first start never
// leaves a half-made cluster behind.
package devenv
