// Package pubsubtest runs the Pub/Sub client library's in-process fake
// (pstest) for tests of the pubsub sink: a gRPC server on loopback that
// speaks the Publisher API without authentication, as the emulator does,
// and keeps every message published to it.
package pubsubtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
)

// Project is the project the fake's topics are created in.
const Project = "hubctl-test"

// Server is one fake Pub/Sub server, closed when the test ends.
type Server struct {
	fake *pstest.Server
}

// Start runs a fake server on a free loopback port.
func Start(t testing.TB) *Server {
	t.Helper()
	fake := pstest.NewServerWithAddress("127.0.0.1:0")
	t.Cleanup(func() { _ = fake.Close() })
	return &Server{fake: fake}
}

// Endpoint is the server's host:port, a sink's endpoint.
func (s *Server) Endpoint() string { return s.fake.Addr }

var topicSeq atomic.Int64

// UniqueTopic is a topic id no other test uses, not created.
func UniqueTopic() string { return fmt.Sprintf("hubctl-topic-%d", topicSeq.Add(1)) }

// NewTopic creates a topic in Project and returns its id.
func (s *Server) NewTopic(t testing.TB) string {
	t.Helper()
	topic := UniqueTopic()
	s.CreateTopic(t, topic)
	return topic
}

// CreateTopic creates the topic of Project with the given id.
func (s *Server) CreateTopic(t testing.TB, topic string) {
	t.Helper()
	if _, err := s.fake.GServer.CreateTopic(context.Background(), &pb.Topic{Name: TopicName(topic)}); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// DeleteTopic deletes a topic of Project.
func (s *Server) DeleteTopic(t testing.TB, topic string) {
	t.Helper()
	if _, err := s.fake.GServer.DeleteTopic(context.Background(), &pb.DeleteTopicRequest{Topic: TopicName(topic)}); err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
}

// TopicName is a topic id's full resource name in Project.
func TopicName(topic string) string { return "projects/" + Project + "/topics/" + topic }

// Messages are the messages published to a topic of Project, oldest first.
func (s *Server) Messages(topic string) []*pstest.Message {
	var msgs []*pstest.Message
	for _, m := range s.fake.Messages() {
		if m.Topic == TopicName(topic) {
			msgs = append(msgs, m)
		}
	}
	return msgs
}
