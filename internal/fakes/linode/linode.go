package linodefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
)

// Instance is one server the fake holds.
type Instance struct {
	ID      int
	Label   string
	Region  string
	Type    string
	Image   string
	IPv4    string
	Tags    []string
	Created time.Time
}

// Request is one request the fake received: only its method and path, never its
// headers or body.
type Request struct {
	Method string
	Path   string
}

// DefaultPlans and DefaultRegions are the plan and region ids the fake accepts unless
// options add more.
var (
	DefaultPlans = []string{
		"g6-nanode-1", "g6-standard-1", "g6-standard-2", "g6-standard-4", "g6-standard-6",
		"g6-standard-8", "g6-dedicated-2", "g6-dedicated-4", "g6-dedicated-8",
	}
	DefaultRegions = []string{
		"ap-northeast", "jp-osa", "jp-tyo-3", "ap-south", "sg-sin-2", "ap-west", "ap-southeast",
		"us-east", "us-central", "us-west", "us-southeast", "us-ord", "ca-central",
		"eu-west", "eu-central", "fr-par", "nl-ams", "se-sto",
	}
)

// Option configures a Server.
type Option func(*Server)

// WithLatency delays every answer by d.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.SetLatency(d) } }

// WithBootDelay keeps new instances "provisioning" for d before they read "running".
func WithBootDelay(d time.Duration) Option { return func(s *Server) { s.bootDelay = d } }

// WithPlans accepts more plan (type) ids besides DefaultPlans.
func WithPlans(ids ...string) Option {
	return func(s *Server) {
		for _, id := range ids {
			s.plans[id] = true
		}
	}
}

// WithRegions accepts more region ids besides DefaultRegions.
func WithRegions(ids ...string) Option {
	return func(s *Server) {
		for _, id := range ids {
			s.regions[id] = true
		}
	}
}

// WithPageSize sets the page size used when a list request names none (Linode's is 100).
func WithPageSize(n int) Option { return func(s *Server) { s.pageSize = max(n, 1) } }

// Server is a fake Linode API. Close it when done.
type Server struct {
	*httptest.Server
	*fakeapi.Base[Request]
	token string

	mu        sync.Mutex
	bootDelay time.Duration
	plans     map[string]bool
	regions   map[string]bool
	pageSize  int
	instances map[int]*Instance
	rootPass  map[string]string // label -> root_pass
	nextID    int
}

// New starts a fake that accepts only the given API token.
func New(token string, opts ...Option) *Server {
	s := &Server{
		Base:      fakeapi.New(func(r *http.Request) Request { return Request{Method: r.Method, Path: r.URL.Path} }),
		token:     token,
		plans:     map[string]bool{},
		regions:   map[string]bool{},
		pageSize:  100,
		instances: map[int]*Instance{},
		rootPass:  map[string]string{},
		nextID:    40000001,
	}
	WithPlans(DefaultPlans...)(s)
	WithRegions(DefaultRegions...)(s)
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v4/linode/instances", s.create)
	mux.HandleFunc("GET /v4/linode/instances", s.list)
	mux.HandleFunc("GET /v4/linode/instances/{id}", s.get)
	mux.HandleFunc("DELETE /v4/linode/instances/{id}", s.delete)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "", "Not found")
	})
	s.Server = httptest.NewServer(s.Front(s.authorized(mux), writeFault))
	return s
}

// URL is the base URL to give hangar (--linode-api).
func (s *Server) URL() string { return s.Server.URL }

// Close releases hanging requests, then stops the server.
func (s *Server) Close() {
	s.Release()
	s.Server.Close()
}

// Seed adds an instance as if created earlier (status running), returning it.
func (s *Server) Seed(label, region, plan string) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.add(label, region, plan, "linode/debian12", []string{"hangar"})
	in.Created = time.Now().Add(-s.bootDelay - time.Second)
	s.Notify()
	return *in
}

// Instances returns a copy of the instances, ordered by id.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Instance, 0, len(s.instances))
	for _, in := range s.sorted() {
		c := *in
		c.Tags = slices.Clone(in.Tags)
		out = append(out, c)
	}
	return out
}

// Count is how many instances exist.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.instances)
}

// RootPass is the root_pass the instance with this label was created with.
func (s *Server) RootPass(label string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.rootPass[label]
	return p, ok
}

// authorized lets through only requests that carry the token.
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			writeError(w, http.StatusUnauthorized, "", "Invalid Token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeFault(w http.ResponseWriter, status int) { writeError(w, status, "", statusReason(status)) }

func statusReason(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "Too many requests"
	case http.StatusPaymentRequired:
		return "Payment required"
	case http.StatusForbidden:
		return "You do not have permission to access this resource"
	case http.StatusServiceUnavailable:
		return "Service unavailable"
	}
	if status >= 500 {
		return "Please try again"
	}
	return http.StatusText(status)
}

type apiReason struct {
	Reason string `json:"reason"`
	Field  string `json:"field,omitempty"`
}

func writeError(w http.ResponseWriter, status int, field, reason string) {
	writeJSON(w, status, map[string]any{"errors": []apiReason{{Reason: reason, Field: field}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type createBody struct {
	Label    string   `json:"label"`
	Region   string   `json:"region"`
	Type     string   `json:"type"`
	Image    string   `json:"image"`
	RootPass string   `json:"root_pass"`
	Tags     []string `json:"tags"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "", "Malformed JSON")
		return
	}
	s.mu.Lock()
	field, reason := s.validate(b)
	if reason != "" {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, field, reason)
		return
	}
	in := s.add(b.Label, b.Region, b.Type, b.Image, b.Tags)
	s.rootPass[in.Label] = b.RootPass
	hang := s.TakeCreateHang()
	body := s.render(in)
	body["status"] = "provisioning" // Linode's answer to a create, whatever the boot delay
	s.Notify()
	s.mu.Unlock()
	if hang {
		s.Hang(r)
	}
	writeJSON(w, http.StatusOK, body)
}

// validate answers as Linode does for the mistakes hangar could make; the caller holds mu.
func (s *Server) validate(b createBody) (field, reason string) {
	switch {
	case b.Region == "":
		return "region", "region is required"
	case !s.regions[b.Region]:
		return "region", "region is not valid"
	case b.Type == "":
		return "type", "type is required"
	case !s.plans[b.Type]:
		return "type", "A valid plan type by that ID was not found"
	case b.Label != "" && (len(b.Label) < 3 || len(b.Label) > 64):
		return "label", "Length must be 3-64 characters"
	case b.Image != "" && !strings.HasPrefix(b.Image, "linode/") && !strings.HasPrefix(b.Image, "private/"):
		return "image", "image is not valid"
	case b.Image != "" && b.RootPass == "":
		return "root_pass", "root_pass is required"
	}
	for _, in := range s.instances {
		if b.Label != "" && in.Label == b.Label {
			return "label", "Label must be unique among your Linodes"
		}
	}
	return "", ""
}

// add stores a new instance; the caller holds mu.
func (s *Server) add(label, region, plan, image string, tags []string) *Instance {
	id := s.nextID
	s.nextID++
	if label == "" {
		label = "linode" + strconv.Itoa(id)
	}
	n := id - 40000000
	in := &Instance{
		ID: id, Label: label, Region: region, Type: plan, Image: image,
		IPv4:    fmt.Sprintf("198.51.100.%d", (n-1)%254+1),
		Tags:    slices.Clone(tags),
		Created: time.Now(),
	}
	s.instances[id] = in
	return in
}

// render is the instance as the API shows it; the caller holds mu.
func (s *Server) render(in *Instance) map[string]any {
	status := "running"
	if time.Since(in.Created) < s.bootDelay {
		status = "provisioning"
	}
	created := in.Created.UTC().Format("2006-01-02T15:04:05")
	tags := in.Tags
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{
		"id": in.ID, "label": in.Label, "group": "", "status": status,
		"created": created, "updated": created,
		"type": in.Type, "region": in.Region, "image": in.Image,
		"ipv4": []string{in.IPv4}, "ipv6": fmt.Sprintf("2600:3c00::f03c:91ff:fe%02x:%04x/128", in.ID%256, in.ID%65536),
		"hypervisor": "kvm", "watchdog_enabled": true, "tags": tags,
		"specs":  map[string]int{"disk": 25600, "memory": 1024, "vcpus": 1, "gpus": 0, "transfer": 1000},
		"alerts": map[string]int{"cpu": 90, "io": 10000, "network_in": 10, "network_out": 10, "transfer_quota": 80},
		"backups": map[string]any{"enabled": false, "available": false,
			"schedule": map[string]any{"day": nil, "window": nil}, "last_successful": nil},
		"has_user_data": false, "lke_cluster_id": nil, "placement_group": nil,
	}
}

func (s *Server) sorted() []*Instance {
	out := make([]*Instance, 0, len(s.instances))
	for _, in := range s.instances {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b *Instance) int { return a.ID - b.ID })
	return out
}

var filterable = map[string]func(*Instance) string{
	"label":  func(in *Instance) string { return in.Label },
	"region": func(in *Instance) string { return in.Region },
	"type":   func(in *Instance) string { return in.Type },
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	filter := map[string]any{}
	if raw := r.Header.Get("X-Filter"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &filter); err != nil {
			writeError(w, http.StatusBadRequest, "X-Filter", "The filter is not valid JSON")
			return
		}
	}
	for k := range filter {
		if _, ok := filterable[k]; !ok {
			writeError(w, http.StatusBadRequest, "X-Filter", "Cannot filter on "+k)
			return
		}
	}
	page, err := positive(r.URL.Query().Get("page"), 1)
	if err != nil {
		writeError(w, http.StatusBadRequest, "page", "Must be a positive integer")
		return
	}
	s.mu.Lock()
	size, err := positive(r.URL.Query().Get("page_size"), s.pageSize)
	if err != nil || size > 500 {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "page_size", "Must be 25-500")
		return
	}
	var matched []map[string]any
	for _, in := range s.sorted() {
		if matches(in, filter) {
			matched = append(matched, s.render(in))
		}
	}
	s.mu.Unlock()
	pages := max(1, (len(matched)+size-1)/size)
	data := []map[string]any{}
	if lo := (page - 1) * size; lo < len(matched) {
		data = matched[lo:min(lo+size, len(matched))]
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "page": page, "pages": pages, "results": len(matched)})
}

func matches(in *Instance, filter map[string]any) bool {
	for k, want := range filter {
		if fmt.Sprint(want) != filterable[k](in) {
			return false
		}
	}
	return true
}

func positive(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("not a positive integer")
	}
	return n, nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	s.mu.Lock()
	in, ok := s.instances[id]
	var body map[string]any
	if ok {
		body = s.render(in)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "", "Not found")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	s.mu.Lock()
	in, ok := s.instances[id]
	if ok {
		delete(s.instances, id)
		delete(s.rootPass, in.Label)
		s.Notify()
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "", "Not found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
