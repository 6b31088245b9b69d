// Package ratelimit implements per-key token-bucket rate limiting for the
// order API, with an in-memory store and a pluggable Store interface.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Key identifies a rate-limited client, usually "tenant:apiKey".
type Key string

// Clock is swappable in tests.
type Clock func() time.Time

const DefaultBurst = 20

var ErrClosed = errors.New("ratelimit: limiter is closed")

// Store persists bucket state so several server instances share limits.
type Store interface {
	Load(ctx context.Context, key Key) (Bucket, bool, error)
	Save(ctx context.Context, key Key, b Bucket) error
	Close() error
}

// Bucket is the state of one token bucket.
type Bucket struct {
	Tokens   float64
	LastFill time.Time
}

// Config holds the refill rate and the bucket capacity.
type Config struct {
	RatePerSecond float64
	Burst         int
	IdleTTL       time.Duration
}

// Validate checks that the limiter configuration is usable.
func (c Config) Validate() error {
	if c.RatePerSecond <= 0 {
		return fmt.Errorf("ratelimit: rate must be positive, got %v", c.RatePerSecond)
	}
	if c.Burst < 1 {
		return fmt.Errorf("ratelimit: burst must be >= 1, got %d", c.Burst)
	}
	if c.IdleTTL < 0 {
		return errors.New("ratelimit: negative idle TTL")
	}
	return nil
}

// Limiter is a token-bucket limiter keyed by client.
type Limiter struct {
	cfg    Config
	store  Store
	clock  Clock
	mu     sync.Mutex
	closed bool
}

// New builds a Limiter; a nil store means an in-memory store.
func New(cfg Config, store Store) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil {
		store = NewMemoryStore()
	}
	return &Limiter{cfg: cfg, store: store, clock: time.Now}, nil
}

// refill adds the tokens earned since the last fill, capped at the burst size.
func refill(b Bucket, now time.Time, rate float64, burst int) Bucket {
	elapsed := now.Sub(b.LastFill).Seconds()
	if elapsed > 0 {
		b.Tokens += elapsed * rate
		if b.Tokens > float64(burst) {
			b.Tokens = float64(burst)
		}
		b.LastFill = now
	}
	return b
}

// Allow reports whether n requests for key may proceed now and consumes the tokens.
func (l *Limiter) Allow(ctx context.Context, key Key, n int) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false, ErrClosed
	}
	now := l.clock()
	b, ok, err := l.store.Load(ctx, key)
	if err != nil {
		return false, fmt.Errorf("ratelimit: load %s: %w", key, err)
	}
	if !ok {
		b = Bucket{Tokens: float64(l.cfg.Burst), LastFill: now}
	}
	b = refill(b, now, l.cfg.RatePerSecond, l.cfg.Burst)
	allowed := b.Tokens >= float64(n)
	if allowed {
		b.Tokens -= float64(n)
	}
	if err := l.store.Save(ctx, key, b); err != nil {
		return false, fmt.Errorf("ratelimit: save %s: %w", key, err)
	}
	return allowed, nil
}

// RetryAfter estimates how long key must wait before one more request is allowed.
func (l *Limiter) RetryAfter(ctx context.Context, key Key) (time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok, err := l.store.Load(ctx, key)
	if err != nil || !ok {
		return 0, err
	}
	b = refill(b, l.clock(), l.cfg.RatePerSecond, l.cfg.Burst)
	if b.Tokens >= 1 {
		return 0, nil
	}
	missing := 1 - b.Tokens
	return time.Duration(missing / l.cfg.RatePerSecond * float64(time.Second)), nil
}

// Close releases the store; later calls to Allow return ErrClosed.
func (l *Limiter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.store.Close()
}

// MemoryStore keeps buckets in a map and evicts idle ones.
type MemoryStore struct {
	mu      sync.RWMutex
	buckets map[Key]Bucket
}

// NewMemoryStore returns an empty in-memory Store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{buckets: make(map[Key]Bucket)}
}

func (m *MemoryStore) Load(_ context.Context, key Key) (Bucket, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, ok := m.buckets[key]
	return b, ok, nil
}

func (m *MemoryStore) Save(_ context.Context, key Key, b Bucket) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buckets[key] = b
	return nil
}

// Evict drops buckets that have not been touched for longer than ttl.
func (m *MemoryStore) Evict(now time.Time, ttl time.Duration) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	removed := 0
	for k, b := range m.buckets {
		if now.Sub(b.LastFill) > ttl {
			delete(m.buckets, k)
			removed++
		}
	}
	return removed
}

func (m *MemoryStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buckets = nil
	return nil
}
