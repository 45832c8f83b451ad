package vultrfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
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
	// SSHKeyIDs are the registered keys (see SSHKey) the create installed for root.
	SSHKeyIDs []string
	// Off is set by a halt and cleared by a start: the API shows power_status "stopped".
	Off bool
}

func (in Instance) clone() Instance {
	in.Tags = slices.Clone(in.Tags)
	in.SSHKeyIDs = slices.Clone(in.SSHKeyIDs)
	return in
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

// Server is a fake Vultr API. Close it when done. URL, Seed, Instances, Count and the
// fault and wait methods are fakeapi's, through the embedded Fake.
type Server struct {
	*fakeapi.Fake[Request, string, Instance]
	// oses are the os_id values a create may name. os_id is Vultr's alone (Linode names
	// an image), so the set lives here rather than in the shared Settings.
	oses map[int]bool

	keyMu sync.Mutex
	keys  []sshKey // registered with POST /v2/ssh-keys, in order
}

type sshKey struct{ ID, Name, Key string }

// Vultr words the shared answers this way; govultr shows the "error" text to the caller.
var apiErrors = fakeapi.Errors{
	Write:        writeError,
	Unauthorized: "Invalid API token.",
	NotFound:     "Invalid API endpoint.",
	Reasons: map[int]string{
		http.StatusTooManyRequests: "Rate limit reached - please try your request again later.",
		http.StatusPaymentRequired: "You must add a valid payment method to your account.",
		http.StatusForbidden:       "Unauthorized IP address.",
	},
	ServerError: "An internal error occurred. Please try again.",
}

// New starts a fake that accepts only the given API key.
func New(apiKey string, opts ...fakeapi.Option) *Server {
	s := &Server{
		Fake: fakeapi.NewFake(fakeapi.Spec[Request, Instance]{
			Secret: apiKey,
			Record: func(r *http.Request) Request {
				return Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
			},
			Errors:   apiErrors,
			Plans:    DefaultPlans,
			Regions:  DefaultRegions,
			PageSize: 100,
			Seed: func(label, region, plan string, created time.Time) func(int) Instance {
				return newInstance(label, label, region, plan, 2136, []string{"hangar"}, created)
			},
		}, fakeapi.NewStore(
			func(in Instance) string { return in.ID },
			func(in Instance) string { return in.Label },
			Instance.clone,
		), opts...),
		oses: map[int]bool{},
	}
	for _, id := range DefaultOS {
		s.oses[id] = true
	}
	s.Serve(map[string]http.HandlerFunc{
		"POST /v2/instances":            s.create,
		"GET /v2/instances":             s.list,
		"GET /v2/instances/{id}":        s.get,
		"DELETE /v2/instances/{id}":     s.delete,
		"POST /v2/instances/{id}/halt":  s.power(true),
		"POST /v2/instances/{id}/start": s.power(false),
		"POST /v2/ssh-keys":             s.createSSHKey,
		"GET /v2/ssh-keys":              s.listSSHKeys,
	})
	return s
}

// SSHKey is the public key registered under id, as POST /v2/ssh-keys received it.
func (s *Server) SSHKey(id string) (string, bool) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	for _, k := range s.keys {
		if k.ID == id {
			return k.Key, true
		}
	}
	return "", false
}

func (s *Server) createSSHKey(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Name   string `json:"name"`
		SSHKey string `json:"ssh_key"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON body.")
		return
	}
	if b.Name == "" || !strings.HasPrefix(b.SSHKey, "ssh-") && !strings.HasPrefix(b.SSHKey, "ecdsa-") {
		writeError(w, http.StatusBadRequest, "Invalid SSH key.")
		return
	}
	s.keyMu.Lock()
	k := sshKey{ID: fmt.Sprintf("3b8066a7-b438-455a-9688-%012x", len(s.keys)+1), Name: b.Name, Key: b.SSHKey}
	s.keys = append(s.keys, k)
	s.keyMu.Unlock()
	fakeapi.WriteJSON(w, http.StatusCreated, map[string]any{"ssh_key": renderKey(k)})
}

func (s *Server) listSSHKeys(w http.ResponseWriter, _ *http.Request) {
	s.keyMu.Lock()
	page := []map[string]any{}
	for _, k := range s.keys {
		page = append(page, renderKey(k))
	}
	s.keyMu.Unlock()
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{
		"ssh_keys": page, "meta": map[string]any{"total": len(page), "links": map[string]string{"next": "", "prev": ""}},
	})
}

func renderKey(k sshKey) map[string]any {
	return map[string]any{"id": k.ID, "name": k.Name, "ssh_key": k.Key, "date_created": "2026-01-01T00:00:00+00:00"}
}

// Password is the default_password the fake generated for the instance with this label.
func (s *Server) Password(label string) (string, bool) { return s.Store.Secret(label) }

func writeError(w http.ResponseWriter, status int, msg string) {
	fakeapi.WriteJSON(w, status, map[string]any{"error": msg, "status": status})
}

type createBody struct {
	Label    string   `json:"label"`
	Hostname string   `json:"hostname"`
	Region   string   `json:"region"`
	Plan     string   `json:"plan"`
	OsID     int      `json:"os_id"`
	Tags     []string `json:"tags"`
	// SSHKeyIDs are ids of registered keys.
	SSHKeyIDs []string `json:"sshkey_id"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON body.")
		return
	}
	if msg := s.validate(b); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	for _, id := range b.SSHKeyIDs {
		if _, ok := s.SSHKey(id); !ok {
			writeError(w, http.StatusBadRequest, "Invalid SSH key ID: "+id)
			return
		}
	}
	pass := password()
	// The provider works on the create whether or not the caller is still there.
	time.Sleep(s.Settings.CreateDelay)
	// Labels are not unique at Vultr, so nothing can clash.
	build := newInstance(b.Label, b.Hostname, b.Region, b.Plan, b.OsID, b.Tags, time.Now())
	in, _ := s.Store.Add(pass, nil, func(seq int) Instance {
		in := build(seq)
		in.SSHKeyIDs = b.SSHKeyIDs
		return in
	})
	body := s.render(in)
	// Vultr's answer to a create: pending, no address yet, and the only sight of the
	// password.
	body["status"], body["main_ip"], body["power_status"], body["server_status"] = "pending", "0.0.0.0", "stopped", "none"
	body["default_password"] = pass
	if s.TakeCreateHang() {
		s.Hang(r)
	}
	fakeapi.WriteJSON(w, http.StatusAccepted, map[string]any{"instance": body})
}

// validate answers as Vultr does for the mistakes hangar could make.
func (s *Server) validate(b createBody) string {
	switch {
	case b.Region == "":
		return "Missing required parameter: region"
	case !s.Settings.Regions[b.Region]:
		return "Invalid region chosen."
	case b.Plan == "":
		return "Missing required parameter: plan"
	case !s.Settings.Plans[b.Plan]:
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

// newInstance builds the seq'th instance with Vultr's look: a UUID-shaped id whose
// tail is the sequence number, so that ids sort by creation as the Store lists them.
func newInstance(label, hostname, region, plan string, osID int, tags []string, created time.Time) func(seq int) Instance {
	return func(seq int) Instance {
		return Instance{
			ID:       fmt.Sprintf("cb676a46-66fd-4dfb-b839-%012x", seq),
			Label:    label,
			Hostname: hostname,
			Region:   region,
			Plan:     plan,
			OsID:     osID,
			IPv4:     fmt.Sprintf("203.0.113.%d", (seq-1)%254+1),
			Tags:     tags,
			Created:  created,
		}
	}
}

// password makes a Vultr-looking password, distinct per instance.
func password() string { return "V" + rand.Text()[:14] + "!x" }

// render is the instance as the API shows it.
func (s *Server) render(in Instance) map[string]any {
	status, power, server, ip := "active", "running", "ok", in.IPv4
	if s.Settings.Booting(in.Created) {
		status, power, server, ip = "pending", "stopped", "installingbooting", "0.0.0.0"
	} else if in.Off {
		power = "stopped"
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

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size := s.Settings.PageSize
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeError(w, http.StatusBadRequest, "Invalid per_page value.")
			return
		}
		size = n
	}
	offset := 0
	if c := q.Get("cursor"); c != "" {
		n, err := decodeCursor(c)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Invalid cursor.")
			return
		}
		offset = n
	}
	matched := s.Store.Select(func(in Instance) bool {
		return (q.Get("label") == "" || in.Label == q.Get("label")) &&
			(q.Get("region") == "" || in.Region == q.Get("region")) &&
			(q.Get("tag") == "" || slices.Contains(in.Tags, q.Get("tag")))
	})
	page := []map[string]any{}
	for _, in := range fakeapi.Window(matched, offset, size) {
		page = append(page, s.render(in))
	}
	next, prev := "", ""
	if end := offset + size; end < len(matched) {
		next = encodeCursor(end)
	}
	if offset > 0 {
		prev = encodeCursor(max(offset-size, 0))
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{
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
	in, ok := s.Store.Lookup(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "Invalid instance-id.")
		return
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"instance": s.render(in)})
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.Store.Remove(r.PathValue("id")); !ok {
		writeError(w, http.StatusNotFound, "Invalid instance-id.")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// power answers a halt or a start as Vultr does: 204 with no body, also when the
// instance is already in that state.
func (s *Server) power(off bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.Store.Change(r.PathValue("id"), func(in Instance) Instance { in.Off = off; return in }) {
			writeError(w, http.StatusNotFound, "Invalid instance-id.")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}
