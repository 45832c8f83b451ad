package vultrfake

import (
	"crypto/rand"
	"encoding/base64"
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
	ID       string
	Label    string
	Hostname string
	Region   string
	Plan     string
	OsID     int
	IPv4     string
	Tags     []string
	Created  time.Time
}

// Request is one request the fake received: only its method, path and query, never its
// headers or body.
type Request struct {
	Method string
	Path   string
	Query  string
}

// DefaultPlans, DefaultRegions and DefaultOS are the ids the fake accepts unless
// options add more.
var (
	DefaultPlans = []string{
		"vc2-1c-0.5gb", "vc2-1c-1gb", "vc2-1c-2gb", "vc2-2c-2gb", "vc2-2c-4gb", "vc2-4c-8gb",
		"vhf-1c-1gb", "vhf-1c-2gb", "vhf-2c-4gb", "vhp-1c-1gb-amd", "vhp-1c-2gb-amd", "vhp-2c-4gb-amd",
	}
	DefaultRegions = []string{
		"icn", "nrt", "itm", "sgp", "bom", "del", "blr", "syd", "mel",
		"ewr", "ord", "dfw", "sea", "lax", "atl", "mia", "sjc", "yto",
		"ams", "fra", "lhr", "cdg", "waw", "mad", "sto",
	}
	DefaultOS = []int{2136, 2284, 1743, 2076, 2104}
)

// Option configures a Server.
type Option func(*Server)

// WithLatency delays every answer by d.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.SetLatency(d) } }

// WithBootDelay keeps new instances "pending" without an address for d.
func WithBootDelay(d time.Duration) Option { return func(s *Server) { s.bootDelay = d } }

// WithPlans accepts more plan ids besides DefaultPlans.
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

// WithPageSize sets the page size used when a list request names no per_page (Vultr's
// is 100).
func WithPageSize(n int) Option { return func(s *Server) { s.pageSize = max(n, 1) } }

// Server is a fake Vultr API. Close it when done.
type Server struct {
	*httptest.Server
	*fakeapi.Base[Request]
	key string

	mu        sync.Mutex
	bootDelay time.Duration
	plans     map[string]bool
	regions   map[string]bool
	oses      map[int]bool
	pageSize  int
	instances map[string]*Instance
	passwords map[string]string // label -> default_password
	seq       int
}

// New starts a fake that accepts only the given API key.
func New(apiKey string, opts ...Option) *Server {
	s := &Server{
		Base: fakeapi.New(func(r *http.Request) Request {
			return Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
		}),
		key:       apiKey,
		plans:     map[string]bool{},
		regions:   map[string]bool{},
		oses:      map[int]bool{},
		pageSize:  100,
		instances: map[string]*Instance{},
		passwords: map[string]string{},
	}
	WithPlans(DefaultPlans...)(s)
	WithRegions(DefaultRegions...)(s)
	for _, id := range DefaultOS {
		s.oses[id] = true
	}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/instances", s.create)
	mux.HandleFunc("GET /v2/instances", s.list)
	mux.HandleFunc("GET /v2/instances/{id}", s.get)
	mux.HandleFunc("DELETE /v2/instances/{id}", s.delete)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "Invalid API endpoint.")
	})
	s.Server = httptest.NewServer(s.Front(s.authorized(mux), writeFault))
	return s
}

// URL is the base URL to give hangar (--vultr-api).
func (s *Server) URL() string { return s.Server.URL }

// Close releases hanging requests, then stops the server.
func (s *Server) Close() {
	s.Release()
	s.Server.Close()
}

// Seed adds an instance as if created earlier (active), returning it.
func (s *Server) Seed(label, region, plan string) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.add(label, label, region, plan, 2136, []string{"hangar"})
	in.Created = time.Now().Add(-s.bootDelay - time.Second)
	s.Notify()
	return *in
}

// Instances returns a copy of the instances, oldest first.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Instance
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

// Password is the default_password the fake generated for the instance with this label.
func (s *Server) Password(label string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.passwords[label]
	return p, ok
}

// authorized lets through only requests that carry the key.
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.key {
			writeError(w, http.StatusUnauthorized, "Invalid API token.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeFault(w http.ResponseWriter, status int) { writeError(w, status, statusReason(status)) }

func statusReason(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "Rate limit reached - please try your request again later."
	case http.StatusPaymentRequired:
		return "You must add a valid payment method to your account."
	case http.StatusForbidden:
		return "Unauthorized IP address."
	}
	if status >= 500 {
		return "An internal error occurred. Please try again."
	}
	return http.StatusText(status)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg, "status": status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	// govultr decodes only an exact "application/json".
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type createBody struct {
	Label    string   `json:"label"`
	Hostname string   `json:"hostname"`
	Region   string   `json:"region"`
	Plan     string   `json:"plan"`
	OsID     int      `json:"os_id"`
	Tags     []string `json:"tags"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON body.")
		return
	}
	s.mu.Lock()
	if msg := s.validate(b); msg != "" {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	in := s.add(b.Label, b.Hostname, b.Region, b.Plan, b.OsID, b.Tags)
	pass := password()
	s.passwords[in.Label] = pass
	hang := s.TakeCreateHang()
	body := s.render(in)
	// Vultr's answer to a create: pending, no address yet, and the only sight of the
	// password.
	body["status"], body["main_ip"], body["power_status"], body["server_status"] = "pending", "0.0.0.0", "stopped", "none"
	body["default_password"] = pass
	s.Notify()
	s.mu.Unlock()
	if hang {
		s.Hang(r)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"instance": body})
}

// validate answers as Vultr does for the mistakes hangar could make; the caller holds mu.
func (s *Server) validate(b createBody) string {
	switch {
	case b.Region == "":
		return "Missing required parameter: region"
	case !s.regions[b.Region]:
		return "Invalid region chosen."
	case b.Plan == "":
		return "Missing required parameter: plan"
	case !s.plans[b.Plan]:
		return "Invalid plan chosen."
	case b.OsID == 0:
		return "Missing required parameter: os_id"
	case !s.oses[b.OsID]:
		return "Invalid operating system."
	case len(b.Label) > 255:
		return "Label must be 255 characters or fewer."
	}
	return ""
}

// add stores a new instance; the caller holds mu.
func (s *Server) add(label, hostname, region, plan string, osID int, tags []string) *Instance {
	s.seq++
	in := &Instance{
		ID:       fmt.Sprintf("cb676a46-66fd-4dfb-b839-%012x", s.seq), // sorts by creation
		Label:    label,
		Hostname: hostname,
		Region:   region,
		Plan:     plan,
		OsID:     osID,
		IPv4:     fmt.Sprintf("203.0.113.%d", (s.seq-1)%254+1),
		Tags:     slices.Clone(tags),
		Created:  time.Now(),
	}
	s.instances[in.ID] = in
	return in
}

// password makes a Vultr-looking password, distinct per instance.
func password() string { return "V" + rand.Text()[:14] + "!x" }

// render is the instance as the API shows it; the caller holds mu.
func (s *Server) render(in *Instance) map[string]any {
	status, power, server, ip := "active", "running", "ok", in.IPv4
	if time.Since(in.Created) < s.bootDelay {
		status, power, server, ip = "pending", "stopped", "installingbooting", "0.0.0.0"
	}
	tags := in.Tags
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{
		"id": in.ID, "os": "Debian 12 x64 (bookworm)", "ram": 1024, "disk": 25, "plan": in.Plan,
		"main_ip": ip, "vcpu_count": 1, "region": in.Region,
		"date_created": in.Created.UTC().Format(time.RFC3339), "status": status,
		"allowed_bandwidth": 1, "netmask_v4": "255.255.254.0", "gateway_v4": "203.0.113.254",
		"power_status": power, "server_status": server,
		"v6_network": "", "v6_main_ip": "", "v6_network_size": 0,
		"label": in.Label, "internal_ip": "", "kvm": "", "hostname": in.Hostname,
		"os_id": in.OsID, "app_id": 0, "image_id": "", "firewall_group_id": "",
		"features": []string{}, "tags": tags, "user_scheme": "root",
	}
}

func (s *Server) sorted() []*Instance {
	out := make([]*Instance, 0, len(s.instances))
	for _, in := range s.instances {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b *Instance) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	size := s.pageSize
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			s.mu.Unlock()
			writeError(w, http.StatusBadRequest, "Invalid per_page value.")
			return
		}
		size = n
	}
	var matched []map[string]any
	for _, in := range s.sorted() {
		if (q.Get("label") == "" || in.Label == q.Get("label")) &&
			(q.Get("region") == "" || in.Region == q.Get("region")) &&
			(q.Get("tag") == "" || slices.Contains(in.Tags, q.Get("tag"))) {
			matched = append(matched, s.render(in))
		}
	}
	s.mu.Unlock()
	offset := 0
	if c := q.Get("cursor"); c != "" {
		n, err := decodeCursor(c)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Invalid cursor.")
			return
		}
		offset = n
	}
	page := []map[string]any{}
	next, prev := "", ""
	if offset < len(matched) {
		end := min(offset+size, len(matched))
		page = matched[offset:end]
		if end < len(matched) {
			next = encodeCursor(end)
		}
	}
	if offset > 0 {
		prev = encodeCursor(max(offset-size, 0))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"instances": page,
		"meta":      map[string]any{"total": len(matched), "links": map[string]string{"next": next, "prev": prev}},
	})
}

// Cursors are opaque to clients, as Vultr's are.
func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("next__" + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "next__"))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad cursor")
	}
	return n, nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	in, ok := s.instances[r.PathValue("id")]
	var body map[string]any
	if ok {
		body = s.render(in)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Invalid instance-id.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"instance": body})
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	in, ok := s.instances[r.PathValue("id")]
	if ok {
		delete(s.instances, in.ID)
		delete(s.passwords, in.Label)
		s.Notify()
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Invalid instance-id.")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
