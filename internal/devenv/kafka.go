package devenv

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
)

// KafkaOptions configure StartKafka. The zero value starts an empty,
// in-memory single broker on a free port.
type KafkaOptions struct {
	// Port to listen on at 127.0.0.1; 0 picks a free one.
	Port int
	// Topics are created at start unless they already exist.
	Topics []string
	// Partitions per created topic (default 3).
	Partitions int32
	// DataDir, when set, keeps topics, records and committed offsets
	// across restarts, each write synced to disk before it is
	// acknowledged. Empty keeps everything in memory.
	DataDir string
	// AutoCreateTopics creates a topic the first time a client asks for it,
	// like a broker with auto.create.topics.enable: a developer can produce
	// to any topic without creating it first.
	AutoCreateTopics bool
}

// Kafka is a single-broker, in-process Kafka cluster (franz-go's kfake)
// listening on 127.0.0.1.
type Kafka struct {
	cluster *kfake.Cluster
	brokers []string
}

const defaultPartitions = 3

// StartKafka starts the broker and creates opts.Topics.
func StartKafka(opts KafkaOptions) (*Kafka, error) {
	partitions := opts.Partitions
	if partitions <= 0 {
		partitions = defaultPartitions
	}
	// kfake listens on 127.0.0.1 only. One broker is all a hub needs, and
	// it keeps group coordination and partition leadership on one node.
	kopts := []kfake.Opt{kfake.Ports(opts.Port), kfake.DefaultNumPartitions(int(partitions))}
	if opts.DataDir != "" {
		// Every acknowledged write reaches the disk before the answer:
		// without it a machine that stops uncleanly loses the log's
		// tail, records the hub may already have stored, and new
		// records then take their offsets.
		kopts = append(kopts, kfake.DataDir(opts.DataDir), kfake.SyncWrites())
	}
	if opts.AutoCreateTopics {
		kopts = append(kopts, kfake.AllowAutoTopicCreation())
	}
	if opts.Port != 0 {
		if err := CheckPortFree("Kafka", opts.Port); err != nil {
			return nil, err
		}
	}
	cluster, err := kfake.NewCluster(kopts...)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &PortInUseError{Service: "Kafka", Port: opts.Port}
	}
	if err != nil {
		return nil, fmt.Errorf("start Kafka: %w", err)
	}
	// Created one by one rather than seeded, so that topics added to the
	// options also appear in a cluster restored from DataDir.
	for _, topic := range opts.Topics {
		err := cluster.CreateTopic(topic, partitions, nil)
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			cluster.Close()
			return nil, fmt.Errorf("create topic %q: %w", topic, err)
		}
	}
	return &Kafka{cluster: cluster, brokers: cluster.ListenAddrs()}, nil
}

// Brokers are the seed addresses for clients (host:port).
func (k *Kafka) Brokers() []string { return append([]string(nil), k.brokers...) }

// Close stops the broker; with a DataDir its state is flushed there first.
// It may be called more than once.
func (k *Kafka) Close() { k.cluster.Close() }
