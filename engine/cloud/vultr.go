package cloud

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vultr/govultr/v3"
)

// VultrDefaultOS is Debian 12 x64, used when a CreateRequest names no image.
const VultrDefaultOS = 2136

// Vultr provisions through the Vultr API v2 with govultr.
type Vultr struct {
	client *govultr.Client
	red    redactor
	settle time.Duration
}

// NewVultr returns a provider for the Vultr API at baseURL ("" is the public API).
// httpClient may be nil; its Timeout bounds each call.
func NewVultr(apiKey, baseURL string, httpClient *http.Client) (*Vultr, error) {
	if apiKey == "" {
		return nil, fmt.Errorf("vultr: no API key")
	}
	c := govultr.NewClient(authedClient(httpClient, apiKey))
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("vultr: API URL %q needs a scheme and host", baseURL)
		}
		// govultr resolves absolute paths (/v2/...) against the base, so only the
		// scheme and host matter.
		if err := c.SetBaseURL(u.Scheme + "://" + u.Host); err != nil {
			return nil, fmt.Errorf("vultr: %w", err)
		}
	}
	// The provisioning queue owns retries and backoff.
	c.SetRetryLimit(0)
	return &Vultr{client: c, red: newRedactor(apiKey)}, nil
}

// Name is "vultr".
func (v *Vultr) Name() string { return "vultr" }

// Create asks for one instance tagged "hangar". Vultr chooses the root password
// itself; it comes back once, in Instance.RootPassword. req.RootPassword is not sent:
// the v2 API has no field for it.
func (v *Vultr) Create(ctx context.Context, req CreateRequest) (Instance, error) {
	osID := VultrDefaultOS
	if req.Image != "" {
		n, err := parseVultrOS(req.Image)
		if err != nil {
			return Instance{}, &Error{Op: "create", Provider: v.Name(), Err: err}
		}
		osID = n
	}
	cr := &govultr.InstanceCreateReq{
		Label:    req.Label,
		Hostname: req.Label,
		Region:   req.Region,
		Plan:     req.Plan,
		OsID:     osID,
		Tags:     []string{Tag},
	}
	if len(req.SSHKeys) > 0 {
		ids, err := v.sshKeyIDs(ctx, req.SSHKeys)
		if err != nil {
			return Instance{}, err
		}
		cr.SSHKeys = ids
	}
	cctx, x := withExchange(ctx)
	in, _, err := v.client.Instance.Create(cctx, cr)
	if err != nil {
		return Instance{}, classify(ctx, v.Name(), "create", x, err, append(newRedactor(req.RootPassword), v.red...))
	}
	if in == nil {
		return Instance{}, &Error{Op: "create", Provider: v.Name(), Retryable: true, Err: fmt.Errorf("empty answer")}
	}
	out := vultrInstance(in)
	out.RootPassword = in.DefaultPassword
	return out, nil
}

// sshKeyIDs finds each public key among the account's registered keys, registering
// the ones that are not there yet (Vultr installs keys by id only).
func (v *Vultr) sshKeyIDs(ctx context.Context, keys []string) ([]string, error) {
	have := map[string]string{} // key body -> id
	cctx, x := withExchange(ctx)
	opts := &govultr.ListOptions{PerPage: 100}
	for {
		list, meta, _, err := v.client.SSHKey.List(cctx, opts)
		if err != nil {
			return nil, classify(ctx, v.Name(), "sshkeys", x, err, v.red)
		}
		for _, k := range list {
			have[sshKeyBody(k.SSHKey)] = k.ID
		}
		if meta == nil || meta.Links == nil || meta.Links.Next == "" {
			break
		}
		opts.Cursor = meta.Links.Next
	}
	var ids []string
	for _, key := range keys {
		if id, ok := have[sshKeyBody(key)]; ok {
			ids = append(ids, id)
			continue
		}
		cctx, x := withExchange(ctx)
		k, _, err := v.client.SSHKey.Create(cctx, &govultr.SSHKeyReq{Name: "hangar-" + sshKeyName(key), SSHKey: key})
		if err != nil {
			return nil, classify(ctx, v.Name(), "sshkeys", x, err, v.red)
		}
		if k == nil || k.ID == "" {
			return nil, &Error{Op: "sshkeys", Provider: v.Name(), Retryable: true, Err: fmt.Errorf("empty answer")}
		}
		have[sshKeyBody(key)], ids = k.ID, append(ids, k.ID)
	}
	return ids, nil
}

// sshKeyBody is a key's type and base64 body, without its comment: the same key
// registered with another comment is the same key.
func sshKeyBody(line string) string {
	f := strings.Fields(line)
	if len(f) < 2 {
		return strings.TrimSpace(line)
	}
	return f[0] + " " + f[1]
}

// sshKeyName names a registered key by the tail of its body.
func sshKeyName(line string) string {
	body := sshKeyBody(line)
	return body[max(0, len(body)-12):]
}

// parseVultrOS accepts an os_id, the only image form hangar's catalogue uses for Vultr.
func parseVultrOS(image string) (int, error) {
	n, err := strconv.Atoi(image)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("vultr image %q is not an os_id", image)
	}
	return n, nil
}

// FindByLabel lists instances with the label; Vultr does not enforce unique labels,
// so the oldest match wins and any later duplicate is the caller's to clean up.
func (v *Vultr) FindByLabel(ctx context.Context, label string) (Instance, bool, error) {
	cctx, x := withExchange(ctx)
	opts := &govultr.ListOptions{Label: label, PerPage: 100}
	var oldest Instance
	found := false
	for {
		list, meta, _, err := v.client.Instance.List(cctx, opts)
		if err != nil {
			return Instance{}, false, classify(ctx, v.Name(), "find", x, err, v.red)
		}
		// Vultr's labels are not unique: of several, the oldest is the one kept (as
		// Keeper keeps it), whatever order the list comes in.
		for i := range list {
			if list[i].Label != label {
				continue
			}
			if in := vultrInstance(&list[i]); !found || in.Created.Before(oldest.Created) {
				oldest, found = in, true
			}
		}
		if meta == nil || meta.Links == nil || meta.Links.Next == "" {
			return oldest, found, nil
		}
		opts.Cursor = meta.Links.Next
	}
}

// Get reads one instance by id.
func (v *Vultr) Get(ctx context.Context, id string) (Instance, error) {
	cctx, x := withExchange(ctx)
	in, _, err := v.client.Instance.Get(cctx, id)
	if err != nil {
		return Instance{}, classify(ctx, v.Name(), "get", x, err, v.red)
	}
	if in == nil {
		return Instance{}, &Error{Op: "get", Provider: v.Name(), Retryable: true, Err: fmt.Errorf("empty answer")}
	}
	return vultrInstance(in), nil
}

// Delete removes one instance; one that is already gone counts as deleted.
func (v *Vultr) Delete(ctx context.Context, id string) error {
	cctx, x := withExchange(ctx)
	if err := v.client.Instance.Delete(cctx, id); err != nil {
		cerr := classify(ctx, v.Name(), "delete", x, err, v.red)
		if IsNotFound(cerr) {
			return nil
		}
		return cerr
	}
	return nil
}

func vultrInstance(in *govultr.Instance) Instance {
	out := Instance{
		ID:     in.ID,
		Label:  in.Label,
		Status: in.Status,
		Region: in.Region,
		Plan:   in.Plan,
		IPv4:   in.MainIP,
	}
	out.Created, _ = time.Parse(time.RFC3339, in.DateCreated)
	// A halted server stays "active" (its subscription); its power says it is off.
	if in.Status == "active" && in.PowerStatus == "stopped" {
		out.Status = "stopped"
	}
	// Vultr reports 0.0.0.0 until the address is assigned.
	if out.IPv4 == "0.0.0.0" {
		out.IPv4 = ""
	}
	return out
}

// ChoosesRootPassword reports that Vultr, not hangar, picks the root password (it is
// only in the create response), so a server found again by label has an unknown one.
func (v *Vultr) ChoosesRootPassword() bool { return true }

// PowerOff halts the instance (POST /v2/instances/{id}/halt).
func (v *Vultr) PowerOff(ctx context.Context, id string) error {
	cctx, x := withExchange(ctx)
	if err := v.client.Instance.Halt(cctx, id); err != nil {
		return classify(ctx, v.Name(), "power_off", x, err, v.red)
	}
	return nil
}

// PowerOn starts a halted instance (POST /v2/instances/{id}/start).
func (v *Vultr) PowerOn(ctx context.Context, id string) error {
	cctx, x := withExchange(ctx)
	if err := v.client.Instance.Start(cctx, id); err != nil {
		return classify(ctx, v.Name(), "power_on", x, err, v.red)
	}
	return nil
}
