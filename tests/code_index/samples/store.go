package store

import (
	"errors"
	"sync"
)

// ErrNotFound is returned when a key has no value.
var ErrNotFound = errors.New("store: key not found")

// Store is a map safe for concurrent use, with a hit counter per key.
type Store struct {
	mu     sync.RWMutex
	values map[string]string
	hits   map[string]int
}

// Get returns the value stored under key and counts the hit.
func (s *Store) Get(key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	value, ok := s.values[key]
	if !ok {
		return "", ErrNotFound
	}
	s.hits[key]++
	return value, nil
}

// New makes an empty store ready for use by many goroutines.
func New() *Store {
	return &Store{values: make(map[string]string), hits: make(map[string]int)}
}
