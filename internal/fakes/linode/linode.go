package linodefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
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
	// AuthorizedKeys are the public keys the create installed for root.
	AuthorizedKeys []string
	// Off is set by a shutdown and cleared by a boot: the API shows it "offline".
	Off bool
}

func (in Instance) clone() Instance {
	in.Tags = slices.Clone(in.Tags)
	in.AuthorizedKeys = slices.Clone(in.AuthorizedKeys)
	return in
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

// Server is a fake Linode API. Close it when done. URL, Seed, Instances, Count and the
// fault and wait methods are fakeapi's, through the embedded Fake.
type Server struct {
	*fakeapi.Fake[Request, int, Instance]
}

// Linode words the shared answers this way; linodego shows the reason to the caller.
var apiErrors = fakeapi.Errors{
	Write:        func(w http.ResponseWriter, status int, msg string) { writeError(w, status, "", msg) },
	Unauthorized: "Invalid Token",
	NotFound:     "Not found",
	Reasons: map[int]string{
		http.StatusTooManyRequests:    "Too many requests",
		http.StatusPaymentRequired:    "Payment required",
		http.StatusForbidden:          "You do not have permission to access this resource",
		http.StatusServiceUnavailable: "Service unavailable",
	},
	ServerError: "Please try again",
}

// New starts a fake that accepts only the given API token.
func New(token string, opts ...fakeapi.Option) *Server {
	s := &Server{fakeapi.NewFake(fakeapi.Spec[Request, Instance]{
		Secret:   token,
		Record:   func(r *http.Request) Request { return Request{Method: r.Method, Path: r.URL.Path} },
		Errors:   apiErrors,
		Plans:    DefaultPlans,
		Regions:  DefaultRegions,
		PageSize: 100,
		Seed: func(label, region, plan string, created time.Time) func(int) Instance {
			return newInstance(label, region, plan, "linode/debian12", []string{"hangar"}, created)
		},
	}, fakeapi.NewStore(
		func(in Instance) int { return in.ID },
		func(in Instance) string { return in.Label },
		Instance.clone,
	), opts...)}
	s.Serve(map[string]http.HandlerFunc{
		"POST /v4/linode/instances":               s.create,
		"GET /v4/linode/instances":                s.list,
		"GET /v4/linode/instances/{id}":           s.get,
		"DELETE /v4/linode/instances/{id}":        s.delete,
		"POST /v4/linode/instances/{id}/shutdown": s.power(true),
		"POST /v4/linode/instances/{id}/boot":     s.power(false),
	})
	return s
}

// RootPass is the root_pass the instance with this label was created with.
func (s *Server) RootPass(label string) (string, bool) { return s.Store.Secret(label) }

type apiReason struct {
	Reason string `json:"reason"`
	Field  string `json:"field,omitempty"`
}

func writeError(w http.ResponseWriter, status int, field, reason string) {
	fakeapi.WriteJSON(w, status, map[string]any{"errors": []apiReason{{Reason: reason, Field: field}}})
}

type createBody struct {
	Label    string   `json:"label"`
	Region   string   `json:"region"`
	Type     string   `json:"type"`
	Image    string   `json:"image"`
	RootPass string   `json:"root_pass"`
	Tags     []string `json:"tags"`
	// AuthorizedKeys are public keys for root, as Linode takes them.
	AuthorizedKeys []string `json:"authorized_keys"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "", "Malformed JSON")
		return
	}
	if field, reason := s.validate(b); reason != "" {
		writeError(w, http.StatusBadRequest, field, reason)
		return
	}
	labelTaken := func(held Instance) bool { return b.Label != "" && held.Label == b.Label }
	if s.Settings.DuplicateLabels {
		labelTaken = nil
	}
	// The provider works on the create whether or not the caller is still there.
	time.Sleep(s.Settings.CreateDelay)
	build := newInstance(b.Label, b.Region, b.Type, b.Image, b.Tags, time.Now())
	in, ok := s.Store.Add(b.RootPass, labelTaken, func(seq int) Instance {
		in := build(seq)
		in.AuthorizedKeys = b.AuthorizedKeys
		return in
	})
	if !ok {
		writeError(w, http.StatusBadRequest, "label", "Label must be unique among your Linodes")
		return
	}
	body := s.render(in)
	body["status"] = "provisioning" // Linode's answer to a create, whatever the boot delay
	if s.TakeCreateHang() {
		s.Hang(r)
	}
	fakeapi.WriteJSON(w, http.StatusOK, body)
}

// validate answers as Linode does for the mistakes hangar could make; a label already
// in use is the Store's to catch, in the same step as the add.
func (s *Server) validate(b createBody) (field, reason string) {
	switch {
	case b.Region == "":
		return "region", "region is required"
	case !s.Settings.Regions[b.Region]:
		return "region", "region is not valid"
	case b.Type == "":
		return "type", "type is required"
	case !s.Settings.Plans[b.Type]:
		return "type", "A valid plan type by that ID was not found"
	case b.Label != "" && (len(b.Label) < 3 || len(b.Label) > 64):
		return "label", "Length must be 3-64 characters"
	case b.Image != "" && !strings.HasPrefix(b.Image, "linode/") && !strings.HasPrefix(b.Image, "private/"):
		return "image", "image is not valid"
	case b.Image != "" && b.RootPass == "":
		return "root_pass", "root_pass is required"
	}
	return "", ""
}

// newInstance builds the seq'th instance with Linode's look: ids in the 40-millions and
// a default label made from the id, as Linode gives a create without one.
func newInstance(label, region, plan, image string, tags []string, created time.Time) func(seq int) Instance {
	return func(seq int) Instance {
		id, name := 40000000+seq, label
		if name == "" {
			name = "linode" + strconv.Itoa(id)
		}
		return Instance{
			ID: id, Label: name, Region: region, Type: plan, Image: image,
			IPv4:    fmt.Sprintf("198.51.100.%d", (seq-1)%254+1),
			Tags:    tags,
			Created: created,
		}
	}
}

// render is the instance as the API shows it.
func (s *Server) render(in Instance) map[string]any {
	status := "running"
	switch {
	case s.Settings.Booting(in.Created):
		status = "provisioning"
	case in.Off:
		status = "offline"
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

var filterable = map[string]func(Instance) string{
	"label":  func(in Instance) string { return in.Label },
	"region": func(in Instance) string { return in.Region },
	"type":   func(in Instance) string { return in.Type },
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
	size, err := positive(r.URL.Query().Get("page_size"), s.Settings.PageSize)
	if err != nil || size > 500 {
		writeError(w, http.StatusBadRequest, "page_size", "Must be 25-500")
		return
	}
	matched := s.Store.Select(func(in Instance) bool { return matches(in, filter) })
	data := []map[string]any{}
	for _, in := range fakeapi.Window(matched, (page-1)*size, size) {
		data = append(data, s.render(in))
	}
	pages := max(1, (len(matched)+size-1)/size)
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "page": page, "pages": pages, "results": len(matched)})
}

func matches(in Instance, filter map[string]any) bool {
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
	in, ok := s.Store.Lookup(id)
	if !ok {
		writeError(w, http.StatusNotFound, "", "Not found")
		return
	}
	fakeapi.WriteJSON(w, http.StatusOK, s.render(in))
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	if _, ok := s.Store.Remove(id); !ok {
		writeError(w, http.StatusNotFound, "", "Not found")
		return
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{})
}

// power answers a shutdown or a boot as Linode does: {} at once (the job runs in the
// background), also when the instance is already in that state.
func (s *Server) power(off bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.PathValue("id"))
		if !s.Store.Change(id, func(in Instance) Instance { in.Off = off; return in }) {
			writeError(w, http.StatusNotFound, "", "Not found")
			return
		}
		fakeapi.WriteJSON(w, http.StatusOK, map[string]any{})
	}
}
