// Command server runs the order API: HTTP handlers behind the rate limiter,
// graceful shutdown on SIGINT/SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"example.com/orders/internal/ratelimit"
)

const shutdownGrace = 15 * time.Second

type Handler interface {
	Handle(w http.ResponseWriter, r *http.Request) error
	Close() error
}

type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// apiError is returned by handlers and rendered as a JSON body.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
}

func (e *apiError) Error() string { return e.Message }

// Server wires the HTTP mux, the limiter and the handlers together.
type Server struct {
	addr     string
	limiter  *ratelimit.Limiter
	handlers map[string]Handler
	http     *http.Server
	log      *slog.Logger
}

// NewServer builds a Server listening on addr.
func NewServer(addr string, limiter *ratelimit.Limiter, log *slog.Logger) *Server {
	return &Server{addr: addr, limiter: limiter, handlers: map[string]Handler{}, log: log}
}

// Register mounts a handler under a path prefix.
func (s *Server) Register(prefix string, h Handler) {
	s.handlers[prefix] = h
}

// clientKey derives the rate-limit key from the API key header, falling back to the remote address.
func clientKey(r *http.Request) ratelimit.Key {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return ratelimit.Key("key:" + k)
	}
	host := r.RemoteAddr
	if i := strings.LastIndex(host, ":"); i > 0 {
		host = host[:i]
	}
	return ratelimit.Key("ip:" + host)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// handle applies the rate limit, dispatches by longest prefix and renders errors.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	ok, err := s.limiter.Allow(r.Context(), clientKey(r), 1)
	if err != nil {
		s.log.Error("rate limiter failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "limiter unavailable"})
		return
	}
	if !ok {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate limit exceeded"})
		return
	}
	var best string
	for prefix := range s.handlers {
		if strings.HasPrefix(r.URL.Path, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	h, found := s.handlers[best]
	if !found {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	if err := h.Handle(w, r); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			writeJSON(w, ae.Status, ae)
			return
		}
		s.log.Error("handler failed", "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
	}
}

// Run serves until ctx is cancelled, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	s.http = &http.Server{
		Addr:              s.addr,
		Handler:           http.HandlerFunc(s.handle),
		ReadHeaderTimeout: 5 * time.Second,
	}
	errCh := make(chan error, 1)
	go func() {
		s.log.Info("listening", "addr", s.addr)
		if err := s.http.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errCh <- err
		}
		close(errCh)
	}()
	select {
	case <-ctx.Done():
		return s.Close()
	case err := <-errCh:
		return err
	}
}

// Close stops the HTTP server, then closes every handler and the limiter.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	if s.http != nil {
		errs = append(errs, s.http.Shutdown(ctx))
	}
	for _, h := range s.handlers {
		errs = append(errs, h.Close())
	}
	errs = append(errs, s.limiter.Close())
	return errors.Join(errs...)
}

// healthHandler answers GET /healthz.
type healthHandler struct {
	started time.Time
}

func (h *healthHandler) Handle(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return &apiError{Status: http.StatusMethodNotAllowed, Message: "use GET"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "uptime": time.Since(h.started).String()})
	return nil
}

func (h *healthHandler) Close() error { return nil }

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	rate := flag.Float64("rate", 10, "requests per second per client")
	burst := flag.Int("burst", ratelimit.DefaultBurst, "burst size per client")
	flag.Parse()

	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	limiter, err := ratelimit.New(ratelimit.Config{RatePerSecond: *rate, Burst: *burst, IdleTTL: 10 * time.Minute}, nil)
	if err != nil {
		log.Error("bad limiter config", "err", err)
		os.Exit(2)
	}
	srv := NewServer(*addr, limiter, log)
	srv.Register("/healthz", &healthHandler{started: time.Now()})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx); err != nil {
		log.Error("server stopped", "err", err)
		os.Exit(1)
	}
}
