package ports

import (
	"sync"
)

// OutboxSignals wakes this process's relays once a message of their topic is
// appended (after its unit of work commits): one channel per topic, made on
// first use, holding at most one waiting signal. A store implementing
// Outbox embeds it for Appended and calls Notify after each append.
// The zero value is ready to use; it is safe for concurrent use.
type OutboxSignals struct {
	mu    sync.Mutex
	chans map[OutboxTopic]chan struct{}
}

// Appended implements Outbox's Appended.
func (s *OutboxSignals) Appended(topic OutboxTopic) <-chan struct{} { return s.signal(topic) }

// Notify signals topic's channel unless a signal already waits there.
func (s *OutboxSignals) Notify(topic OutboxTopic) {
	select {
	case s.signal(topic) <- struct{}{}:
	default:
	}
}

// signal returns topic's channel, made on first use.
func (s *OutboxSignals) signal(topic OutboxTopic) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chans == nil {
		s.chans = map[OutboxTopic]chan struct{}{}
	}
	ch, ok := s.chans[topic]
	if !ok {
		ch = make(chan struct{}, 1)
		s.chans[topic] = ch
	}
	return ch
}
